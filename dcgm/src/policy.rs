//! Policies: conditions and thresholds on a group, and violation callbacks that DCGM runs on
//! its own thread.
//!
//! The C callback gets a `u64` of user data. This module passes a key into a process-wide
//! registry instead of a pointer: a late callback for a registration that is gone finds no
//! entry and is counted, never dereferenced.
//!
//! DCGM 3.x has only `dcgmPolicyRegister`, whose callback gets no user data and a response
//! without the GPU. There each GPU of the group is registered through a one-GPU group of its
//! own, with a callback function of its own (one of a fixed set of slots): the function says
//! which registration and which GPU, so nothing is guessed.

use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use dcgm_sys::*;

use crate::error::{Error, Result};
use crate::field::FieldId;
use crate::flags::flag_set;
use crate::group::Group;
use crate::handle::Handle;
use crate::library::ffi;
use crate::status::Status;

flag_set! {
    /// Policy conditions (`DCGM_POLICY_COND_*`); combine them with `|`.
    ///
    /// ```
    /// use dcgm::PolicyCondition;
    /// let c = PolicyCondition::DBE | PolicyCondition::XID;
    /// assert_eq!(c.to_string(), "DBE|XID");
    /// assert_eq!(c.iter().count(), 2);
    /// ```
    pub struct PolicyCondition(u32) {
        /// Uncorrectable (double-bit) ECC errors.
        const DBE = DCGM_POLICY_COND_DBE;
        /// PCIe replay errors.
        const PCI = DCGM_POLICY_COND_PCI;
        /// Too many retired memory pages.
        const MAX_PAGES_RETIRED = DCGM_POLICY_COND_MAX_PAGES_RETIRED;
        /// Temperature above the threshold.
        const THERMAL = DCGM_POLICY_COND_THERMAL;
        /// Power above the threshold.
        const POWER = DCGM_POLICY_COND_POWER;
        /// NVLink errors.
        const NVLINK = DCGM_POLICY_COND_NVLINK;
        /// XID errors.
        const XID = DCGM_POLICY_COND_XID;
        /// Every condition.
        const ALL = DCGM_POLICY_COND_ALL;
    }
}

/// A group's policy: which conditions are violations, with their thresholds.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// use dcgm::{Group, Policy, PolicyCondition};
/// let gpus = Group::with_gpus(&handle, "doc-policy", &[0, 1])?;
/// let policy = Policy { dbe: true, thermal_max_c: Some(85), ..Policy::default() };
/// assert_eq!(policy.conditions(), PolicyCondition::DBE | PolicyCondition::THERMAL);
/// gpus.policy_set(&policy)?;
/// for (gpu, p) in gpus.policy_get()? {
///     assert_eq!(p, policy, "GPU {gpu}");
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Policy {
    /// Any uncorrectable ECC error is a violation.
    pub dbe: bool,
    /// PCIe replay errors are violations.
    pub pci: bool,
    /// This many retired pages is a violation.
    pub max_retired_pages: Option<u32>,
    /// A temperature above this many °C is a violation.
    pub thermal_max_c: Option<u32>,
    /// A power draw above this many watts is a violation.
    pub power_max_w: Option<u32>,
    /// NVLink errors are violations.
    pub nvlink: bool,
    /// XID errors are violations.
    pub xid: bool,
}

impl Policy {
    /// The conditions this policy watches.
    pub fn conditions(&self) -> PolicyCondition {
        let mut c = PolicyCondition::empty();
        let mut add = |on: bool, f: PolicyCondition| {
            if on {
                c |= f;
            }
        };
        add(self.dbe, PolicyCondition::DBE);
        add(self.pci, PolicyCondition::PCI);
        add(
            self.max_retired_pages.is_some(),
            PolicyCondition::MAX_PAGES_RETIRED,
        );
        add(self.thermal_max_c.is_some(), PolicyCondition::THERMAL);
        add(self.power_max_w.is_some(), PolicyCondition::POWER);
        add(self.nvlink, PolicyCondition::NVLINK);
        add(self.xid, PolicyCondition::XID);
        c
    }

    fn to_raw(self) -> dcgmPolicy_v1 {
        let mut p = dcgmPolicy_v1::new_versioned();
        p.condition = self.conditions().bits();
        p.mode = DCGM_POLICY_MODE_AUTOMATED;
        p.isolation = DCGM_POLICY_ISOLATION_NONE;
        p.action = DCGM_POLICY_ACTION_NONE;
        p.validation = DCGM_POLICY_VALID_NONE;
        p.response = DCGM_POLICY_FAILURE_NONE;
        let mut flag = |idx: dcgmPolicyConditionIdx_t, on: bool| {
            let c = &mut p.parms[idx as usize];
            c.tag = BOOL;
            c.val.boolean = u32::from(on);
        };
        flag(DCGM_POLICY_COND_IDX_DBE, self.dbe);
        flag(DCGM_POLICY_COND_IDX_PCI, self.pci);
        flag(DCGM_POLICY_COND_IDX_NVLINK, self.nvlink);
        flag(DCGM_POLICY_COND_IDX_XID, self.xid);
        let mut number = |idx: dcgmPolicyConditionIdx_t, v: Option<u32>| {
            let c = &mut p.parms[idx as usize];
            c.tag = LLONG;
            c.val.llval = v.map_or(0, u64::from);
        };
        number(
            DCGM_POLICY_COND_IDX_MAX_PAGES_RETIRED,
            self.max_retired_pages,
        );
        number(DCGM_POLICY_COND_IDX_THERMAL, self.thermal_max_c);
        number(DCGM_POLICY_COND_IDX_POWER, self.power_max_w);
        p
    }

    fn from_raw(p: &dcgmPolicy_v1) -> Self {
        let on = |bit: u32| p.condition & bit != 0;
        let value = |idx: dcgmPolicyConditionIdx_t| {
            let c = &p.parms[idx as usize];
            // SAFETY: both union members are plain integers; the tag says which was written.
            let v = unsafe {
                if c.tag == LLONG {
                    c.val.llval
                } else {
                    u64::from(c.val.boolean)
                }
            };
            u32::try_from(v).unwrap_or(u32::MAX)
        };
        let number = |bit, idx| on(bit).then(|| value(idx));
        Self {
            dbe: on(DCGM_POLICY_COND_DBE),
            pci: on(DCGM_POLICY_COND_PCI),
            max_retired_pages: number(
                DCGM_POLICY_COND_MAX_PAGES_RETIRED,
                DCGM_POLICY_COND_IDX_MAX_PAGES_RETIRED,
            ),
            thermal_max_c: number(DCGM_POLICY_COND_THERMAL, DCGM_POLICY_COND_IDX_THERMAL),
            power_max_w: number(DCGM_POLICY_COND_POWER, DCGM_POLICY_COND_IDX_POWER),
            nvlink: on(DCGM_POLICY_COND_NVLINK),
            xid: on(DCGM_POLICY_COND_XID),
        }
    }
}

/// Where an uncorrectable ECC error happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DbeLocation {
    /// L1 cache.
    L1,
    /// L2 cache.
    L2,
    /// Device memory.
    Device,
    /// Register file.
    Register,
    /// Texture memory.
    Texture,
    /// A location this crate does not know.
    Other(u32),
}

impl DbeLocation {
    fn from_raw(v: u32) -> Self {
        match v {
            L1 => Self::L1,
            L2 => Self::L2,
            DEVICE => Self::Device,
            REGISTER => Self::Register,
            TEXTURE => Self::Texture,
            o => Self::Other(o),
        }
    }
}

/// The details of a violation, per condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViolationDetail {
    /// Uncorrectable ECC errors.
    Dbe {
        /// Where.
        location: DbeLocation,
        /// How many.
        count: u32,
    },
    /// PCIe replays.
    Pci {
        /// The replay counter.
        counter: u32,
    },
    /// Pages pending retirement.
    RetiredPages {
        /// Pages retired for correctable (single-bit) errors.
        sbe: u32,
        /// Pages retired for uncorrectable (double-bit) errors.
        dbe: u32,
    },
    /// The temperature that crossed the threshold.
    Thermal {
        /// In °C.
        temperature_c: u32,
    },
    /// The power draw that crossed the threshold.
    Power {
        /// In watts.
        watts: u32,
    },
    /// The NVLink error counter that crossed the threshold.
    Nvlink {
        /// The counter's field.
        field: FieldId,
        /// Its value.
        counter: u32,
    },
    /// An XID error.
    Xid {
        /// The XID number.
        xid: u32,
    },
}

/// One policy violation, as delivered to a callback or channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PolicyViolation {
    /// The GPU.
    pub gpu: u32,
    /// The condition violated (one bit).
    pub condition: PolicyCondition,
    /// When it happened, in microseconds since the Unix epoch.
    pub timestamp_us: i64,
    /// What happened.
    pub detail: ViolationDetail,
}

impl PolicyViolation {
    /// When it happened.
    pub fn time(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_micros(self.timestamp_us.max(0) as u64)
    }

    /// Decodes a callback response; `None` for a condition this crate does not know or a
    /// version word other than 2.
    fn from_raw(r: &dcgmPolicyCallbackResponse_v2) -> Option<Self> {
        if r.version != dcgmPolicyCallbackResponse_version2 {
            return None;
        }
        Self::decode(r.condition, &r.val, r.gpuId)
    }

    /// Decodes a DCGM 3.x callback response, which does not name the GPU; `None` for a
    /// condition this crate does not know or a version word other than 1.
    fn from_raw_v1(r: &dcgmPolicyCallbackResponse_v1, gpu: u32) -> Option<Self> {
        if r.version != dcgmPolicyCallbackResponse_version1 {
            return None;
        }
        Self::decode(r.condition, &r.val, gpu)
    }

    fn decode(
        condition: u32,
        v: &dcgmPolicyCallbackResponse_v2__bindgen_ty_1,
        gpu: u32,
    ) -> Option<Self> {
        // SAFETY: (each arm) the condition says which union member the library wrote; all
        // members are plain integers, so any bytes are valid.
        let (ts, detail) = unsafe {
            match condition {
                DCGM_POLICY_COND_DBE => (
                    v.dbe.timestamp,
                    ViolationDetail::Dbe {
                        location: DbeLocation::from_raw(v.dbe.location),
                        count: v.dbe.numerrors,
                    },
                ),
                DCGM_POLICY_COND_PCI => (
                    v.pci.timestamp,
                    ViolationDetail::Pci {
                        counter: v.pci.counter,
                    },
                ),
                DCGM_POLICY_COND_MAX_PAGES_RETIRED => (
                    v.mpr.timestamp,
                    ViolationDetail::RetiredPages {
                        sbe: v.mpr.sbepages,
                        dbe: v.mpr.dbepages,
                    },
                ),
                DCGM_POLICY_COND_THERMAL => (
                    v.thermal.timestamp,
                    ViolationDetail::Thermal {
                        temperature_c: v.thermal.thermalViolation,
                    },
                ),
                DCGM_POLICY_COND_POWER => (
                    v.power.timestamp,
                    ViolationDetail::Power {
                        watts: v.power.powerViolation,
                    },
                ),
                DCGM_POLICY_COND_NVLINK => (
                    v.nvlink.timestamp,
                    ViolationDetail::Nvlink {
                        field: FieldId(v.nvlink.fieldId),
                        counter: v.nvlink.counter,
                    },
                ),
                DCGM_POLICY_COND_XID => {
                    (v.xid.timestamp, ViolationDetail::Xid { xid: v.xid.errnum })
                }
                _ => return None,
            }
        };
        Some(Self {
            gpu,
            condition: PolicyCondition::from_bits_retain(condition),
            timestamp_us: ts,
            detail,
        })
    }
}

impl fmt::Display for PolicyViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GPU {} {}: ", self.gpu, self.condition)?;
        match self.detail {
            ViolationDetail::Dbe { location, count } => {
                write!(f, "{count} uncorrectable ECC error(s) in {location:?}")
            }
            ViolationDetail::Pci { counter } => write!(f, "PCIe replay counter at {counter}"),
            ViolationDetail::RetiredPages { sbe, dbe } => {
                write!(
                    f,
                    "{sbe} page(s) retired for correctable, {dbe} for uncorrectable errors"
                )
            }
            ViolationDetail::Thermal { temperature_c } => write!(f, "{temperature_c} °C"),
            ViolationDetail::Power { watts } => write!(f, "{watts} W"),
            ViolationDetail::Nvlink { field, counter } => write!(f, "{field} at {counter}"),
            ViolationDetail::Xid { xid } => write!(f, "XID {xid}"),
        }
    }
}

/// Capacity of the channel of [`Group::policy_subscribe`].
pub const DEFAULT_POLICY_CHANNEL_CAPACITY: usize = 1024;

type Callback = Box<dyn Fn(PolicyViolation) + Send + Sync>;

/// A live registration in the process-wide registry.
struct Entry {
    callback: Callback,
    panics: AtomicU64,
    dropped: Arc<AtomicU64>,
    /// Which library, engine and group the registration is on, with its conditions: DCGM
    /// unregisters per group and condition, so two overlapping registrations cannot coexist.
    lib: usize,
    handle: dcgmHandle_t,
    group: dcgmGpuGrp_t,
    conditions: u32,
}

static REGISTRY: Mutex<BTreeMap<u64, Arc<Entry>>> = Mutex::new(BTreeMap::new());
static NEXT_KEY: AtomicU64 = AtomicU64::new(1);
static ORPHANED: AtomicU64 = AtomicU64::new(0);

fn registry() -> MutexGuard<'static, BTreeMap<u64, Arc<Entry>>> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Receives violations on DCGM's thread. Never unwinds into C.
unsafe extern "C" fn on_violation(response: *mut dcgmPolicyCallbackResponse_v2, key: u64) -> c_int {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let entry = registry().get(&key).cloned();
        let Some(entry) = entry else {
            ORPHANED.fetch_add(1, Ordering::Relaxed);
            return;
        };
        // SAFETY: the library passes NULL or a response valid for the duration of this call.
        let decoded = unsafe { response.as_ref() }.and_then(PolicyViolation::from_raw);
        deliver(&entry, decoded);
    }));
    0
}

/// Hands a decoded violation to its registration's callback; an undecodable one is counted.
fn deliver(entry: &Entry, decoded: Option<PolicyViolation>) {
    let Some(v) = decoded else {
        entry.dropped.fetch_add(1, Ordering::Relaxed);
        return;
    };
    if catch_unwind(AssertUnwindSafe(|| (entry.callback)(v))).is_err() {
        entry.panics.fetch_add(1, Ordering::Relaxed);
    }
}

/// How many one-GPU registrations on DCGM 3.x the process can hold at once.
const LEGACY_SLOTS: usize = 32;

/// The registration key and GPU of each slot of DCGM 3.x callbacks.
static LEGACY: Mutex<[Option<(u64, u32)>; LEGACY_SLOTS]> = Mutex::new([None; LEGACY_SLOTS]);

fn legacy_slots() -> MutexGuard<'static, [Option<(u64, u32)>; LEGACY_SLOTS]> {
    LEGACY.lock().unwrap_or_else(|p| p.into_inner())
}

type LegacyFn = unsafe extern "C" fn(*mut c_void) -> c_int;

/// Receives the start of a violation of the one-GPU registration in slot `S` on DCGM 3.x
/// (whose callback carries no user data) on DCGM's thread. Never unwinds into C.
unsafe extern "C" fn on_violation_v1<const S: usize>(response: *mut c_void) -> c_int {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let slot = legacy_slots().get(S).copied().flatten();
        let entry = slot.and_then(|(key, gpu)| Some((registry().get(&key).cloned()?, gpu)));
        let Some((entry, gpu)) = entry else {
            ORPHANED.fetch_add(1, Ordering::Relaxed);
            return;
        };
        // SAFETY: DCGM 3.x passes NULL or a version-1 response valid for the duration of this
        // call; its version word is checked before anything else is read.
        let response = unsafe { response.cast::<dcgmPolicyCallbackResponse_v1>().as_ref() };
        deliver(
            &entry,
            response.and_then(|r| PolicyViolation::from_raw_v1(r, gpu)),
        );
    }));
    0
}

/// DCGM 3.x calls a second callback when a violation ends with the same response; the
/// violation was delivered at its start, so this one does nothing (DCGM requires it).
unsafe extern "C" fn on_violation_end_v1(_response: *mut c_void) -> c_int {
    0
}

macro_rules! legacy_fns {
    ($($n:literal)*) => { [$(on_violation_v1::<$n> as LegacyFn),*] };
}

/// One callback function per slot.
static LEGACY_FNS: [LegacyFn; LEGACY_SLOTS] = legacy_fns!(
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
);

/// Takes a free slot for `(key, gpu)`.
fn claim_slot(key: u64, gpu: u32) -> Option<usize> {
    let mut slots = legacy_slots();
    let i = slots.iter().position(Option::is_none)?;
    slots[i] = Some((key, gpu));
    Some(i)
}

fn free_slot(i: usize) {
    if let Some(s) = legacy_slots().get_mut(i) {
        *s = None;
    }
}

/// One GPU of a registration on DCGM 3.x: its one-GPU group and callback slot.
struct LegacyPart {
    group: Group,
    slot: usize,
}

impl LegacyPart {
    /// Unregisters the part's group, then frees its slot (a late callback finds it empty).
    fn release(self, conditions: u32) -> Result<()> {
        let (h, lib) = (self.group.handle(), self.group.handle().lib());
        // SAFETY: plain arguments on the live handle and the part's own group.
        let r = unsafe {
            ffi!(
                lib,
                dcgmPolicyUnregister(h.raw(), self.group.raw_id(), conditions)
            )
        };
        free_slot(self.slot);
        r
    }
}

/// A policy callback registration. Dropping it unregisters the conditions from the group and
/// stops delivery; [`PolicyRegistration::unregister`] does the same and reports errors.
///
/// ```
/// # fn main() -> dcgm::Result<()> {
/// # let handle = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded()?;
/// use dcgm::{Group, PolicyCondition};
/// let gpus = Group::all_gpus(&handle);
/// let (registration, violations) = gpus.policy_subscribe(PolicyCondition::DBE | PolicyCondition::XID)?;
/// // ... elsewhere: for v in violations.iter() { println!("{v}") }
/// while let Ok(v) = violations.recv_timeout(std::time::Duration::from_millis(50)) {
///     println!("{v}");
/// }
/// assert_eq!(registration.panics(), 0);
/// drop(registration); // unregisters
/// # Ok(()) }
/// ```
pub struct PolicyRegistration {
    group: Group,
    conditions: PolicyCondition,
    key: u64,
    entry: Arc<Entry>,
    active: bool,
    /// On DCGM 3.x: the one-GPU registrations that make it up.
    legacy: Vec<LegacyPart>,
}

impl fmt::Debug for PolicyRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicyRegistration")
            .field("group", &self.group)
            .field("conditions", &self.conditions)
            .field("panics", &self.panics())
            .field("dropped", &self.dropped())
            .finish()
    }
}

impl PolicyRegistration {
    /// The group.
    pub fn group(&self) -> &Group {
        &self.group
    }

    /// The conditions.
    pub fn conditions(&self) -> PolicyCondition {
        self.conditions
    }

    /// How many times the callback panicked (each panic was caught; delivery went on).
    pub fn panics(&self) -> u64 {
        self.entry.panics.load(Ordering::Relaxed)
    }

    /// How many violations were lost: the channel was full or its receiver gone, or the
    /// library sent a response this crate could not decode.
    pub fn dropped(&self) -> u64 {
        self.entry.dropped.load(Ordering::Relaxed)
    }

    /// Violations that arrived, process-wide, for registrations already dropped.
    pub fn orphaned_events() -> u64 {
        ORPHANED.load(Ordering::Relaxed)
    }

    /// Unregisters now and reports errors (dropping the registration swallows them).
    ///
    /// # Errors
    ///
    /// `DCGM_ST_IN_USE` while a policy callback is running; `ConnectionLost`. The registration
    /// leaves this crate's registry either way, so its callback is not called again.
    #[doc(alias = "dcgmPolicyUnregister")]
    pub fn unregister(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        if !self.active {
            return Ok(());
        }
        self.active = false;
        if !self.legacy.is_empty() {
            let mut r = Ok(());
            for part in self.legacy.drain(..) {
                let done = part.release(self.conditions.bits());
                r = r.and(done);
            }
            registry().remove(&self.key);
            return r;
        }
        let (h, lib) = (self.group.handle(), self.group.handle().lib());
        // SAFETY: plain arguments on the live handle and group this registration holds.
        let r = unsafe {
            ffi!(
                lib,
                dcgmPolicyUnregister(h.raw(), self.group.raw_id(), self.conditions.bits())
            )
        };
        registry().remove(&self.key);
        r
    }
}

impl Drop for PolicyRegistration {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

impl Group {
    /// Sets the group's policy. Errors for single GPUs are listed in the returned error.
    ///
    /// # Errors
    ///
    /// A GPU that refuses the policy fails the call with its code, every GPU's error listed in the
    /// message; `ConnectionLost`.
    #[doc(alias = "dcgmPolicySet")]
    pub fn policy_set(&self, policy: &Policy) -> Result<()> {
        let mut raw = policy.to_raw();
        let (h, lib) = (self.handle(), self.handle().lib());
        let status = Status::new(lib)?;
        // SAFETY: a versioned policy valid for the call and a live status handle.
        let r = unsafe {
            ffi!(
                lib,
                dcgmPolicySet(h.raw(), self.raw_id(), &mut raw, status.raw())
            )
        };
        status.finish("dcgmPolicySet", r)
    }

    /// The policy of each GPU of the group: `(gpu id, policy)`.
    ///
    /// # Errors
    ///
    /// `DCGM_ST_NOT_CONFIGURED` for a group the host engine no longer has (an empty group is `Ok`
    /// with no entry); a GPU whose policy cannot be read fails the call with its code;
    /// `ConnectionLost`.
    #[doc(alias = "dcgmPolicyGet")]
    pub fn policy_get(&self) -> Result<Vec<(u32, Policy)>> {
        let gpus = self.gpu_ids()?;
        if gpus.is_empty() {
            return Ok(Vec::new());
        }
        let mut list: Vec<dcgmPolicy_v1> = gpus
            .iter()
            .map(|_| dcgmPolicy_v1::new_versioned())
            .collect();
        let (h, lib) = (self.handle(), self.handle().lib());
        let status = Status::new(lib)?;
        // SAFETY: `list` holds `gpus.len()` versioned policies; the status handle is live.
        let r = unsafe {
            ffi!(
                lib,
                dcgmPolicyGet(
                    h.raw(),
                    self.raw_id(),
                    list.len() as c_int,
                    list.as_mut_ptr(),
                    status.raw()
                )
            )
        };
        status.finish("dcgmPolicyGet", r)?;
        Ok(gpus
            .into_iter()
            .zip(list.iter().map(Policy::from_raw))
            .collect())
    }

    /// Calls `callback` for each violation of `conditions` on the group's GPUs. It runs on a
    /// DCGM-owned thread: keep it short and never block on the thread that drops the
    /// registration. A panic in it is caught and counted ([`PolicyRegistration::panics`]).
    ///
    /// DCGM unregisters per group and condition, so a second registration on the same group
    /// with an overlapping condition is refused: register once with the union, or use
    /// another group.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for no condition, a bit DCGM does not define, or a condition this group
    /// already has a registration for on this handle; the library's code when DCGM refuses the
    /// registration; `ConnectionLost`.
    #[doc(alias = "dcgmPolicyRegister_v2")]
    pub fn policy_register<F>(
        &self,
        conditions: PolicyCondition,
        callback: F,
    ) -> Result<PolicyRegistration>
    where
        F: Fn(PolicyViolation) + Send + Sync + 'static,
    {
        self.register_entry(conditions, Box::new(callback), Arc::new(AtomicU64::new(0)))
    }

    /// Like [`Group::policy_register`], delivering into a bounded channel of
    /// [`DEFAULT_POLICY_CHANNEL_CAPACITY`] violations; when it is full, violations are dropped
    /// and counted ([`PolicyRegistration::dropped`]).
    ///
    /// # Errors
    ///
    /// As [`Group::policy_register`].
    #[doc(alias = "dcgmPolicyRegister_v2")]
    pub fn policy_subscribe(
        &self,
        conditions: PolicyCondition,
    ) -> Result<(PolicyRegistration, Receiver<PolicyViolation>)> {
        self.policy_subscribe_with_capacity(conditions, DEFAULT_POLICY_CHANNEL_CAPACITY)
    }

    /// Like [`Group::policy_subscribe`] with a channel of `capacity` violations.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` for a zero `capacity`; otherwise as [`Group::policy_register`].
    #[doc(alias = "dcgmPolicyRegister_v2")]
    pub fn policy_subscribe_with_capacity(
        &self,
        conditions: PolicyCondition,
        capacity: usize,
    ) -> Result<(PolicyRegistration, Receiver<PolicyViolation>)> {
        if capacity == 0 {
            return Err(Error::InvalidArgument(
                "the policy channel needs room for at least one violation".into(),
            ));
        }
        let (tx, rx) = sync_channel(capacity);
        let dropped = Arc::new(AtomicU64::new(0));
        let counter = dropped.clone();
        let callback = move |v| {
            if tx.try_send(v).is_err() {
                counter.fetch_add(1, Ordering::Relaxed);
            }
        };
        let reg = self.register_entry(conditions, Box::new(callback), dropped)?;
        Ok((reg, rx))
    }

    pub(crate) fn register_entry(
        &self,
        conditions: PolicyCondition,
        callback: Callback,
        dropped: Arc<AtomicU64>,
    ) -> Result<PolicyRegistration> {
        if conditions.is_empty() {
            return Err(Error::InvalidArgument(
                "register for at least one policy condition".into(),
            ));
        }
        let unknown = conditions - PolicyCondition::ALL;
        if !unknown.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "unknown policy condition bits {:#x}",
                unknown.bits()
            )));
        }
        let (h, lib) = (self.handle(), self.handle().lib());
        let entry = Arc::new(Entry {
            callback,
            panics: AtomicU64::new(0),
            dropped,
            lib: std::ptr::from_ref(lib) as usize,
            handle: h.raw(),
            group: self.raw_id(),
            conditions: conditions.bits(),
        });
        let key = NEXT_KEY.fetch_add(1, Ordering::Relaxed);
        {
            let mut reg = registry();
            let clash = reg.values().find(|e| {
                e.lib == entry.lib
                    && e.handle == entry.handle
                    && e.group == entry.group
                    && e.conditions & entry.conditions != 0
            });
            if let Some(e) = clash {
                return Err(Error::InvalidArgument(format!(
                    "group {} already has a policy registration for {}: DCGM unregisters per group and \
                     condition, so register once with the union of the conditions, or use another group",
                    self.raw_id(),
                    PolicyCondition::from_bits_retain(e.conditions & entry.conditions)
                )));
            }
            // Inserted before registering, so that the first callback finds it.
            reg.insert(key, entry.clone());
        }
        let v1 = lib.raw.policy_register_v1();
        if lib.raw.dcgmPolicyRegister_v2().is_ok() || v1.is_none() {
            // SAFETY: the callback never unwinds and only uses `key` as a registry lookup.
            let r = unsafe {
                ffi!(
                    lib,
                    dcgmPolicyRegister_v2(
                        h.raw(),
                        self.raw_id(),
                        conditions.bits(),
                        Some(on_violation),
                        key
                    )
                )
            };
            match r {
                Ok(()) => {
                    return Ok(PolicyRegistration {
                        group: self.clone(),
                        conditions,
                        key,
                        entry,
                        active: true,
                        legacy: Vec::new(),
                    });
                }
                // A library that exports `_v2` but answers it as a function it lacks (a DCGM
                // 3.x personality of dcgm-sim does): the 3.x call below, where there is one.
                Err(e)
                    if v1.is_some()
                        && (matches!(e, Error::NotInRelease { .. })
                            || e.code().raw() == DCGM_ST_FUNCTION_NOT_FOUND) => {}
                Err(e) => {
                    registry().remove(&key);
                    return Err(e);
                }
            }
        }
        // The `_v2` path above returned unless there is a 3.x call.
        let Some(register) = v1 else {
            registry().remove(&key);
            return Err(Error::SymbolNotAvailable {
                symbol: "dcgmPolicyRegister",
                library_version: lib.version().map(str::to_owned),
            });
        };
        match self.register_v1(register, key, conditions) {
            Ok(legacy) => Ok(PolicyRegistration {
                group: self.clone(),
                conditions,
                key,
                entry,
                active: true,
                legacy,
            }),
            Err(e) => {
                registry().remove(&key);
                Err(e)
            }
        }
    }

    /// DCGM 3.x: registers each GPU of the group through a one-GPU group and a callback slot
    /// of its own; undoes what it did on an error.
    fn register_v1(
        &self,
        register: dcgmPolicyRegister_v1_t,
        key: u64,
        conditions: PolicyCondition,
    ) -> Result<Vec<LegacyPart>> {
        let gpus = self.gpu_ids()?;
        if gpus.is_empty() {
            return Err(Error::InvalidArgument(
                "policy callbacks on DCGM 3.x need a group with GPUs (its callbacks are \
                 registered per GPU)"
                    .into(),
            ));
        }
        let mut parts: Vec<LegacyPart> = Vec::new();
        let undo = |parts: Vec<LegacyPart>| {
            for p in parts {
                let _ = p.release(conditions.bits());
            }
        };
        let h = self.handle();
        for gpu in gpus {
            let Some(slot) = claim_slot(key, gpu) else {
                undo(parts);
                return Err(Error::InvalidArgument(format!(
                    "DCGM 3.x policy callbacks: this process already holds {LEGACY_SLOTS} \
                     one-GPU registrations; unregister some first"
                )));
            };
            let group = match Group::with_gpus(h, &format!("dcgm-rs-policy-{key}-{gpu}"), &[gpu]) {
                Ok(g) => g,
                Err(e) => {
                    free_slot(slot);
                    undo(parts);
                    return Err(e);
                }
            };
            // SAFETY: plain arguments on a live handle and group; both callbacks are
            // functions of the signature DCGM 3.x calls, never unwind, and only read the slot
            // table and the registry.
            let rc = unsafe {
                register(
                    h.raw(),
                    group.raw_id(),
                    conditions.bits(),
                    Some(LEGACY_FNS[slot]),
                    Some(on_violation_end_v1),
                )
            };
            if let Err(e) = h.lib().check("dcgmPolicyRegister", rc) {
                free_slot(slot);
                undo(parts);
                return Err(e);
            }
            parts.push(LegacyPart { group, slot });
        }
        Ok(parts)
    }
}

impl Handle {
    /// Runs the policy checks now (`dcgmPolicyTrigger`): needed in
    /// [`crate::OperationMode::Manual`], where DCGM does not check on its own.
    ///
    /// # Errors
    ///
    /// `ConnectionLost` when the host engine went away.
    #[doc(alias = "dcgmPolicyTrigger")]
    pub fn policy_trigger(&self) -> Result<()> {
        let lib = self.lib();
        // SAFETY: a plain argument on a live handle.
        unsafe { ffi!(lib, dcgmPolicyTrigger(self.raw())) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_round_trips_through_c() {
        let p = Policy {
            dbe: true,
            max_retired_pages: Some(60),
            thermal_max_c: Some(85),
            xid: true,
            ..Policy::default()
        };
        assert_eq!(Policy::from_raw(&p.to_raw()), p);
        assert_eq!(
            Policy::from_raw(&Policy::default().to_raw()),
            Policy::default()
        );
    }

    #[test]
    fn a_version_1_violation_decodes_with_the_gpu_of_its_slot() {
        // DCGM 3.3.9's callback response: no GPU id.
        let mut r: dcgmPolicyCallbackResponse_v1 = zeroed();
        r.version = dcgmPolicyCallbackResponse_version1;
        r.condition = DCGM_POLICY_COND_XID;
        r.val.xid = dcgmPolicyConditionXID_t {
            timestamp: 1_700_000_000_000_000,
            errnum: 79,
        };
        let v = PolicyViolation::from_raw_v1(&r, 5).unwrap();
        assert_eq!(v.gpu, 5);
        assert_eq!(v.condition, PolicyCondition::XID);
        assert_eq!(v.detail, ViolationDetail::Xid { xid: 79 });
        assert_eq!(v.timestamp_us, 1_700_000_000_000_000);
        // The same bytes under another version word are not data.
        r.version = dcgmPolicyCallbackResponse_version2;
        assert_eq!(PolicyViolation::from_raw_v1(&r, 5), None);
        let mut r2: dcgmPolicyCallbackResponse_v2 = zeroed();
        r2.condition = DCGM_POLICY_COND_XID;
        r2.version = dcgmPolicyCallbackResponse_version1;
        assert_eq!(PolicyViolation::from_raw(&r2), None);
        r2.version = dcgmPolicyCallbackResponse_version2;
        assert!(PolicyViolation::from_raw(&r2).is_some());
    }

    #[test]
    fn a_version_1_callback_of_an_empty_slot_is_counted_not_followed() {
        let before = PolicyRegistration::orphaned_events();
        let mut r: dcgmPolicyCallbackResponse_v1 = zeroed();
        r.version = dcgmPolicyCallbackResponse_version1;
        r.condition = DCGM_POLICY_COND_XID;
        // SAFETY: a valid response; slot 31 is not held by any test.
        unsafe { LEGACY_FNS[LEGACY_SLOTS - 1]((&raw mut r).cast()) };
        assert!(PolicyRegistration::orphaned_events() > before);
    }

    #[test]
    fn unknown_key_is_counted_not_followed() {
        let before = PolicyRegistration::orphaned_events();
        let mut r: dcgmPolicyCallbackResponse_v2 = zeroed();
        r.condition = DCGM_POLICY_COND_XID;
        // SAFETY: a valid response and a key that was never registered.
        unsafe { on_violation(&mut r, u64::MAX) };
        assert!(PolicyRegistration::orphaned_events() > before);
    }
}
