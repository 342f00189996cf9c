//! Policy cases of the battery: set a policy on a group of one fake GPU, register for its
//! condition, inject values, and record the callbacks that arrive (condition, GPU, the
//! condition's values, whether the timestamp is the injected one).
//!
//! All cases use GPU 0 (libdcgm judges each new value against the GPU's current policy, the
//! last one set; counters compare the two latest samples, so each case injects a baseline
//! first). Each case waits until its callbacks came, at most [`WAIT`].

use std::ffi::{CString, c_int};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use dcgm_sys::*;

use crate::battery::Battery;

/// Longest wait for a case's callbacks (the whole wait only where none comes).
const WAIT: Duration = Duration::from_secs(3);

static SEEN: Mutex<Vec<dcgmPolicyCallbackResponse_v2>> = Mutex::new(Vec::new());

unsafe extern "C" fn on_violation(r: *mut dcgmPolicyCallbackResponse_t, _user: u64) -> c_int {
    if !r.is_null() {
        // SAFETY: the library passes a valid response for the duration of the call.
        let r = unsafe { *r };
        SEEN.lock().unwrap_or_else(|p| p.into_inner()).push(r);
    }
    0
}

/// A value to inject: field, int or double value, seconds after the case's base time.
#[derive(Clone, Copy)]
enum V {
    I(u16, i64, i64),
    D(u16, f64, i64),
}

struct Case {
    name: &'static str,
    condition: u32,
    /// (parameter index, limit) for conditions with a threshold.
    limit: Option<(u32, u64)>,
    values: Vec<V>,
    /// Callbacks expected (the wait ends when that many came).
    expect: usize,
}

fn cases() -> Vec<Case> {
    use V::{D, I};
    let c = |name, condition, limit, values, expect| Case {
        name,
        condition,
        limit,
        values,
        expect,
    };
    vec![
        c(
            "dbe",
            DCGM_POLICY_COND_DBE,
            None,
            vec![
                I(DCGM_FI_DEV_ECC_DBE_VOL_DEV, 0, 0),
                I(DCGM_FI_DEV_ECC_DBE_VOL_DEV, 1, 5),
            ],
            1,
        ),
        c(
            "pcie",
            DCGM_POLICY_COND_PCI,
            None,
            vec![
                I(DCGM_FI_DEV_PCIE_REPLAY_TOTAL, 0, 0),
                I(DCGM_FI_DEV_PCIE_REPLAY_TOTAL, 3, 5),
            ],
            1,
        ),
        c(
            "nvlink",
            DCGM_POLICY_COND_NVLINK,
            None,
            vec![
                I(DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL, 0, 0),
                I(DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL, 1, 5),
            ],
            1,
        ),
        c(
            "xid",
            DCGM_POLICY_COND_XID,
            None,
            vec![I(DCGM_FI_DEV_XID_ERROR, 16, 0)],
            1,
        ),
        c(
            "thermal",
            DCGM_POLICY_COND_THERMAL,
            Some((DCGM_POLICY_COND_IDX_THERMAL, 80)),
            vec![I(DCGM_FI_DEV_GPU_TEMP_CELSIUS, 95, 0)],
            1,
        ),
        c(
            "thermal_below",
            DCGM_POLICY_COND_THERMAL,
            Some((DCGM_POLICY_COND_IDX_THERMAL, 100)),
            vec![I(DCGM_FI_DEV_GPU_TEMP_CELSIUS, 95, 10)],
            0,
        ),
        c(
            "power",
            DCGM_POLICY_COND_POWER,
            Some((DCGM_POLICY_COND_IDX_POWER, 200)),
            vec![D(DCGM_FI_DEV_BOARD_POWER_WATTS, 210.0, 0)],
            1,
        ),
        c(
            "retired_pages",
            DCGM_POLICY_COND_MAX_PAGES_RETIRED,
            Some((DCGM_POLICY_COND_IDX_MAX_PAGES_RETIRED, 5)),
            vec![
                I(DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL, 10, 0),
                I(DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL, 10, 0),
            ],
            1,
        ),
    ]
}

fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64
}

/// What a callback says, with the timestamp compared to the injected ones.
fn shape(r: &dcgmPolicyCallbackResponse_v2, gpu: u32, stamps: &[i64]) -> String {
    let at = |ts: i64| {
        stamps
            .iter()
            .position(|s| *s == ts)
            .map_or(-1, |i| i as i64)
    };
    // SAFETY: the member read is the one the condition names.
    let detail = unsafe {
        match r.condition {
            DCGM_POLICY_COND_DBE => format!(
                "numerrors={} location={} ts@{}",
                r.val.dbe.numerrors,
                r.val.dbe.location,
                at(r.val.dbe.timestamp)
            ),
            DCGM_POLICY_COND_PCI => {
                format!(
                    "counter={} ts@{}",
                    r.val.pci.counter,
                    at(r.val.pci.timestamp)
                )
            }
            DCGM_POLICY_COND_NVLINK => format!(
                "field={} counter={} ts@{}",
                r.val.nvlink.fieldId,
                r.val.nvlink.counter,
                at(r.val.nvlink.timestamp)
            ),
            DCGM_POLICY_COND_XID => {
                format!("errnum={} ts@{}", r.val.xid.errnum, at(r.val.xid.timestamp))
            }
            DCGM_POLICY_COND_THERMAL => format!(
                "temp={} ts@{}",
                r.val.thermal.thermalViolation,
                at(r.val.thermal.timestamp)
            ),
            DCGM_POLICY_COND_POWER => format!(
                "power={} ts@{}",
                r.val.power.powerViolation,
                at(r.val.power.timestamp)
            ),
            DCGM_POLICY_COND_MAX_PAGES_RETIRED => format!(
                "sbe={} dbe={} ts@{}",
                r.val.mpr.sbepages,
                r.val.mpr.dbepages,
                at(r.val.mpr.timestamp)
            ),
            _ => String::new(),
        }
    };
    format!(
        "cond={} gpu={} {detail}",
        r.condition,
        if r.gpuId == gpu { "G0" } else { "other" }
    )
}

impl Battery<'_> {
    fn policy_case(&mut self, gpu: u32, c: &Case) {
        let id = format!("policy/case/{}", c.name);
        let name = CString::new(format!("pc-{}", c.name)).unwrap();
        let mut g: dcgmGpuGrp_t = 0;
        let mut p = dcgmPolicy_v1::boxed_versioned();
        p.condition = c.condition;
        if let Some((idx, v)) = c.limit {
            p.parms[idx as usize].tag = LLONG;
            p.parms[idx as usize].val.llval = v;
        } else {
            let idx = c.condition.trailing_zeros() as usize;
            p.parms[idx].tag = BOOL;
            p.parms[idx].val.boolean = 1;
        }
        SEEN.lock().unwrap_or_else(|e| e.into_inner()).clear();
        // Releases before 4.0 have no dcgmPolicyRegister_v2 (the simulator's 3.x personality
        // answers FUNCTION_NOT_FOUND): the case is recorded without its callbacks.
        if self.lib.dcgmPolicyRegister_v2().is_err() {
            self.rec(id, None, "");
            return;
        }
        // SAFETY: valid pointers and values for the calls.
        let (set, reg) = unsafe {
            self.lib.dcgmGroupCreate().unwrap()(self.h, DCGM_GROUP_EMPTY, name.as_ptr(), &mut g);
            self.lib.dcgmGroupAddDevice().unwrap()(self.h, g, gpu);
            let set = self.lib.dcgmPolicySet().unwrap()(self.h, g, &mut *p, 0 as dcgmStatus_t);
            let reg = self.lib.dcgmPolicyRegister_v2().unwrap()(
                self.h,
                g,
                c.condition,
                Some(on_violation),
                7,
            );
            (set, reg)
        };
        if reg == DCGM_ST_FUNCTION_NOT_FOUND {
            self.rec(id, Some(reg), "");
            // SAFETY: plain values.
            unsafe { self.lib.dcgmGroupDestroy().unwrap()(self.h, g) };
            return;
        }
        // Values a minute ahead, as NVIDIA's policy tests inject them.
        let base = now_us() + 60_000_000;
        let mut stamps = Vec::new();
        for v in &c.values {
            let mut f = dcgmInjectFieldValue_v1::new_versioned();
            let off = match *v {
                V::I(field, val, off) => {
                    f.fieldId = field;
                    f.fieldType = u16::from(DCGM_FT_INT64);
                    f.value.i64_ = val;
                    off
                }
                V::D(field, val, off) => {
                    f.fieldId = field;
                    f.fieldType = u16::from(DCGM_FT_DOUBLE);
                    f.value.dbl = val;
                    off
                }
            };
            f.ts = base + off * 1_000_000;
            stamps.push(f.ts);
            // SAFETY: a versioned value.
            unsafe { self.lib.dcgmInjectFieldValue().unwrap()(self.h, gpu, &mut f) };
        }
        let deadline = Instant::now() + WAIT;
        loop {
            // SAFETY: plain values.
            unsafe {
                self.lib.dcgmUpdateAllFields().unwrap()(self.h, 1);
                self.lib.dcgmPolicyTrigger().unwrap()(self.h);
            }
            let n = SEEN.lock().unwrap_or_else(|e| e.into_inner()).len();
            if (c.expect > 0 && n >= c.expect) || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: plain values.
        let unreg = unsafe { self.lib.dcgmPolicyUnregister().unwrap()(self.h, g, c.condition) };
        let seen: Vec<String> = SEEN
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|r| shape(r, gpu, &stamps))
            .collect();
        self.rec(
            id,
            Some(reg),
            format!(
                "set={set} unregister={unreg} n={} [{}]",
                seen.len(),
                seen.join("|")
            ),
        );
        // SAFETY: plain values.
        unsafe { self.lib.dcgmGroupDestroy().unwrap()(self.h, g) };
    }

    /// All policy cases, on GPU 0 (libdcgm 4.6.0 refuses a policy on a fake GPU with
    /// `DCGM_ST_GPU_IS_LOST`).
    pub fn policy_cases(&mut self) {
        for case in cases() {
            self.policy_case(0, &case);
        }
    }
}
