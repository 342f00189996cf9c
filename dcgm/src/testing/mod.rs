//! Helpers for examples, doc tests and tests that run against dcgm-sim.

use std::path::PathBuf;

mod capture;
mod real_library;
mod shared;
pub use capture::{InjectedProcess, capture_with_processes};
pub use real_library::{REAL_RELEASES, h200_capture, real_library, run_release_child};
pub use shared::{shared_dir, shared_path, skip};

/// The dcgm-sim library: [`crate::find_simulator`], or, for doc tests that run from a temporary
/// directory, the library in this workspace's `target` directory.
///
/// # Panics
///
/// If the simulator has not been built (`cargo build -p dcgm-sim`); [`try_simulator_path`]
/// says so as an error instead.
pub fn simulator_path() -> PathBuf {
    match try_simulator_path() {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

/// Like [`simulator_path`], without panicking.
///
/// # Errors
///
/// `SimulatorNotFound` when dcgm-sim is not built (`cargo build -p dcgm-sim`).
pub fn try_simulator_path() -> crate::Result<PathBuf> {
    if let Ok(p) = crate::find_simulator() {
        return Ok(p);
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../target"));
    for profile in ["debug", "release"] {
        let p = target.join(profile).join("libdcgm_sim.so");
        if p.is_file() {
            return Ok(p);
        }
    }
    Err(crate::Error::SimulatorNotFound(format!(
        "dcgm-sim is not built: run `cargo build -p dcgm-sim` first (looked next to this \
         program and in {})",
        target.display()
    )))
}

/// Replaces the simulator's configuration (a dcgm-sim `SimConfig` as JSON; `None` returns to
/// `DCGM_SIM_CONFIG`/the default node) through its exported `dcgmSimConfigure`. It applies at
/// the next `dcgmInit`, that is when no handle on the simulator is open. The simulator library
/// stays loaded for the rest of the process so the configuration is not forgotten.
///
/// ```
/// dcgm::testing::configure_simulator(Some(r#"{"gpus":[{},{}]}"#)).unwrap();
/// let h = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded().unwrap();
/// assert_eq!(h.system().gpu_ids().unwrap().len(), 2);
/// # drop(h);
/// # dcgm::testing::configure_simulator(None).unwrap();
/// ```
///
/// # Errors
///
/// `SimulatorNotFound` when the simulator cannot be loaded or does not export
/// `dcgmSimConfigure`; `InvalidArgument` for JSON with a NUL byte or a configuration the
/// simulator rejects (it prints why on stderr).
pub fn configure_simulator(json: Option<&str>) -> crate::Result<()> {
    use std::ffi::{CString, c_char};
    use std::sync::OnceLock;
    type ConfigureFn = unsafe extern "C" fn(*const c_char) -> i32;
    // One handle on the library, kept for the whole process: the function pointer stays valid
    // and the simulator does not forget its configuration by being unloaded.
    static CONFIGURE: OnceLock<Result<(libloading::Library, ConfigureFn), String>> =
        OnceLock::new();
    let path = try_simulator_path()?;
    let loaded = CONFIGURE.get_or_init(|| {
        // SAFETY: dcgm-sim has no initialisers with preconditions.
        let lib = unsafe { libloading::Library::new(&path) }.map_err(|e| e.to_string())?;
        // SAFETY: dcgm-sim exports dcgmSimConfigure with this signature.
        let f = unsafe { lib.get::<ConfigureFn>(b"dcgmSimConfigure\0") }
            .map(|s| *s)
            .map_err(|_| {
                format!(
                    "{} does not export dcgmSimConfigure: it is not dcgm-sim",
                    path.display()
                )
            })?;
        Ok((lib, f))
    });
    let f = match loaded {
        Ok((_, f)) => *f,
        Err(e) => return Err(crate::Error::SimulatorNotFound(e.clone())),
    };
    let c = json
        .map(CString::new)
        .transpose()
        .map_err(|_| crate::Error::InvalidArgument("config contains a NUL byte".into()))?;
    // SAFETY: NULL or a NUL-terminated string, valid for the call.
    let rc = unsafe { f(c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())) };
    if rc != 0 {
        return Err(crate::Error::InvalidArgument(
            "the simulator rejected the configuration (its reason is on stderr)".into(),
        ));
    }
    Ok(())
}

/// Exclusive use of the simulator for one test: the simulator is process-global (as libdcgm
/// is), so tests that configure it must not overlap. Resets the configuration when dropped.
pub struct SimulatorLock {
    _guard: std::sync::MutexGuard<'static, ()>,
}

impl std::fmt::Debug for SimulatorLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SimulatorLock")
    }
}

impl SimulatorLock {
    /// Takes the lock and applies `json` (see [`configure_simulator`]).
    ///
    /// # Errors
    ///
    /// As [`configure_simulator`].
    pub fn new(json: Option<&str>) -> crate::Result<Self> {
        static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        configure_simulator(json)?;
        Ok(Self { _guard: g })
    }
}

impl Drop for SimulatorLock {
    fn drop(&mut self) {
        let _ = configure_simulator(None);
    }
}

/// The blank sentinels DCGM uses, as they look when printed: 32-bit (`2147483632`), the low half
/// of the 64-bit one (`4294967280`), `u32::MAX`, 64-bit (`9223372036854775792`) and the float
/// blank (`140737488355328`, also as `1.40737488355328e14`). None of them may appear as data in
/// a decoded value, a Python value or a tool's output.
pub const SENTINEL_TEXTS: [&str; 6] = [
    "2147483632",
    "4294967280",
    "4294967295",
    "9223372036854775792",
    "140737488355328",
    "1.40737488355328e14",
];

/// The first blank sentinel found in `text` (see [`SENTINEL_TEXTS`]), if any.
///
/// ```
/// assert_eq!(dcgm::testing::find_sentinel("power 700 W"), None);
/// assert_eq!(dcgm::testing::find_sentinel("power 2147483632 W"), Some("2147483632"));
/// ```
pub fn find_sentinel(text: &str) -> Option<&'static str> {
    SENTINEL_TEXTS.into_iter().find(|s| text.contains(s))
}

/// Panics, showing `text`, if a blank sentinel appears in it.
///
/// # Panics
///
/// When [`find_sentinel`] finds one.
pub fn assert_no_sentinel(text: &str) {
    if let Some(s) = find_sentinel(text) {
        panic!("blank sentinel {s} shown as data in:\n{text}");
    }
}

/// Creates fake entities of one kind under `parent` through DCGM's test API
/// (`dcgmCreateFakeEntities`) and returns their new ids.
fn create_fake(
    handle: &crate::Handle,
    group: crate::EntityGroup,
    parent: Option<crate::Entity>,
    n: usize,
) -> crate::Result<Vec<u32>> {
    use crate::library::ffi;
    use dcgm_sys::*;
    let mut ids = Vec::with_capacity(n);
    let mut req: dcgmCreateFakeEntities_v2 = zeroed();
    // At most one request's worth of entities per call.
    let mut left = n;
    while left > 0 {
        let batch = left.min(req.entityList.len());
        req = zeroed();
        req.version = dcgmCreateFakeEntities_version2;
        req.numToCreate = batch as u32;
        for e in req.entityList.iter_mut().take(batch) {
            e.entity.entityGroupId = group.raw();
            if let Some(p) = parent {
                e.parent = p.raw();
            }
        }
        let lib = handle.lib();
        // SAFETY: a versioned request that lives for the call.
        unsafe { ffi!(lib, dcgmCreateFakeEntities(handle.raw(), &mut req)) }?;
        ids.extend(req.entityList[..batch].iter().map(|e| e.entity.entityId));
        left -= batch;
    }
    Ok(ids)
}

/// Creates `n` fake GPUs (DCGM's test API, `dcgmCreateFakeEntities`) and returns their ids.
/// A fake GPU takes the next free GPU id and is listed, grouped, watched and read like any
/// other GPU; on the simulator it reads like a configured GPU, on libdcgm most of its fields
/// are blank until a value is injected ([`inject_value`]).
///
/// ```
/// let h = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded().unwrap();
/// let before = h.system().gpu_ids().unwrap().len() as u32;
/// let ids = dcgm::testing::create_fake_gpus(&h, 2).unwrap();
/// assert_eq!(ids, vec![before, before + 1]);
/// assert!(h.system().gpu_ids().unwrap().contains(&ids[1]));
/// ```
///
/// # Errors
///
/// The library's code: `DCGM_ST_GENERIC_ERROR` when the node would have more than 32 GPUs,
/// `SymbolNotAvailable` for a library without the test API.
pub fn create_fake_gpus(handle: &crate::Handle, n: usize) -> crate::Result<Vec<u32>> {
    create_fake(handle, crate::EntityGroup::Gpu, None, n)
}

/// Creates `n` fake MIG GPU instances under `parent_gpu` and returns their ids (DCGM numbers
/// them from `parent_gpu * 8`). The GPU then reports MIG mode.
///
/// ```
/// use dcgm::{Entity, EntityGroup};
/// let h = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded().unwrap();
/// let gpu = dcgm::testing::create_fake_gpus(&h, 1).unwrap()[0];
/// let gis = dcgm::testing::create_fake_gpu_instances(&h, gpu, 2).unwrap();
/// assert_eq!(gis, vec![gpu * 8, gpu * 8 + 1]);
/// let listed = h.system().entities(EntityGroup::GpuInstance, false).unwrap();
/// assert!(listed.contains(&Entity::new(EntityGroup::GpuInstance, gis[1])));
/// ```
///
/// # Errors
///
/// The library's code; `DCGM_ST_GENERIC_ERROR` for a GPU that does not exist.
pub fn create_fake_gpu_instances(
    handle: &crate::Handle,
    parent_gpu: u32,
    n: usize,
) -> crate::Result<Vec<u32>> {
    create_fake(
        handle,
        crate::EntityGroup::GpuInstance,
        Some(crate::Entity::gpu(parent_gpu)),
        n,
    )
}

/// Creates `n` fake MIG compute instances under the GPU instance `parent_instance` and
/// returns their ids.
///
/// # Errors
///
/// The library's code; `DCGM_ST_GENERIC_ERROR` for a GPU instance that does not exist.
pub fn create_fake_compute_instances(
    handle: &crate::Handle,
    parent_instance: u32,
    n: usize,
) -> crate::Result<Vec<u32>> {
    create_fake(
        handle,
        crate::EntityGroup::ComputeInstance,
        Some(crate::Entity::new(
            crate::EntityGroup::GpuInstance,
            parent_instance,
        )),
        n,
    )
}

/// Injects a value of a field of an entity (DCGM's test API, `dcgmInjectEntityFieldValue`).
/// The next latest-value read returns it with its timestamp (`None`: now), without a watch,
/// and since-reads include it. An injected XID (`DCGM_FI_DEV_XID_ERROR`) raises XID policy
/// violations and health incidents as a real one does.
///
/// ```
/// use dcgm::{Entity, FieldId, Value};
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
/// let h = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded().unwrap();
/// let gpu = dcgm::testing::create_fake_gpus(&h, 1).unwrap()[0];
/// let temp = FieldId(dcgm::raw::sys::DCGM_FI_DEV_GPU_TEMP_CELSIUS);
/// let at = SystemTime::now() - Duration::from_secs(1);
/// dcgm::testing::inject_value(&h, Entity::gpu(gpu), temp, 95i64, Some(at)).unwrap();
/// let v = &h.system().entities_latest_values(&[Entity::gpu(gpu)], &[temp]).unwrap()[0];
/// assert_eq!(v.value, Value::Int(95));
/// assert_eq!(v.timestamp_us, at.duration_since(UNIX_EPOCH).unwrap().as_micros() as i64);
/// ```
///
/// # Errors
///
/// `InvalidArgument` for a blank or bytes value; the library's code otherwise:
/// `DCGM_ST_BADPARAM` for an unknown field or entity, or a value whose type is not the
/// field's (an integer for a double field, for example).
#[doc(alias = "dcgmInjectEntityFieldValue")]
pub fn inject_value(
    handle: &crate::Handle,
    entity: crate::Entity,
    field: crate::FieldId,
    value: impl Into<crate::Value>,
    timestamp: Option<std::time::SystemTime>,
) -> crate::Result<()> {
    use crate::Value;
    use crate::library::ffi;
    use dcgm_sys::*;
    let mut v: dcgmInjectFieldValue_t = zeroed();
    v.version = dcgmInjectFieldValue_version1;
    v.fieldId = field.0;
    v.ts = match timestamp {
        None => 0,
        Some(t) => t
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|_| crate::Error::InvalidArgument("timestamp before 1970".into()))?
            .as_micros() as i64,
    };
    match value.into() {
        Value::Int(i) => {
            v.fieldType = u16::from(DCGM_FT_INT64);
            v.value.i64_ = i;
        }
        Value::Double(d) => {
            v.fieldType = u16::from(DCGM_FT_DOUBLE);
            v.value.dbl = d;
        }
        Value::String(s) => {
            v.fieldType = u16::from(DCGM_FT_STRING);
            // SAFETY: writing bytes into the union's byte array; every byte is valid there.
            let buf = unsafe { &mut v.value.blob };
            crate::library::write_c_buf(buf, &s);
        }
        other => {
            return Err(crate::Error::InvalidArgument(format!(
                "only numbers and strings can be injected, not {other:?}"
            )));
        }
    }
    let lib = handle.lib();
    let raw = entity.raw();
    // SAFETY: a versioned value that lives for the call; plain ids.
    unsafe {
        ffi!(
            lib,
            dcgmInjectEntityFieldValue(handle.raw(), raw.entityGroupId, raw.entityId, &mut v)
        )
    }
}

/// Drops every cached sample and every watch of the host engine (DCGM's test API,
/// `dcgmEmptyCache`): injected values are gone, and fields read "not watched" until watched
/// again. On libdcgm 4.6.0 this includes the watches the policy module keeps for itself: a
/// policy registered before the call no longer fires in that engine, so call it before
/// registering policies, or start a fresh engine.
///
/// ```
/// use dcgm::{Entity, FieldId};
/// let h = dcgm::Handle::builder().library_path(dcgm::testing::simulator_path()).embedded().unwrap();
/// let temp = FieldId(dcgm::raw::sys::DCGM_FI_DEV_GPU_TEMP_CELSIUS);
/// dcgm::testing::inject_value(&h, Entity::gpu(0), temp, 80i64, None).unwrap();
/// dcgm::testing::empty_cache(&h).unwrap();
/// let v = &h.system().entities_latest_values(&[Entity::gpu(0)], &[temp]).unwrap()[0];
/// assert!(v.value.is_blank());
/// ```
///
/// # Errors
///
/// The library's code.
#[doc(alias = "dcgmEmptyCache")]
pub fn empty_cache(handle: &crate::Handle) -> crate::Result<()> {
    use crate::library::ffi;
    let lib = handle.lib();
    // SAFETY: a plain handle.
    unsafe { ffi!(lib, dcgmEmptyCache(handle.raw())) }
}
