//! Health cases of the battery: inject field values into a fresh fake GPU, run a health check
//! and record the whole incident list (system, severity, `DCGM_FR_*` code, entity, message).
//!
//! Each case uses GPUs of its own (created with `dcgmCreateFakeEntities`), because libdcgm
//! remembers every XID a GPU reported for the rest of the engine's life: a case on a shared
//! GPU would see the incidents of the cases before it. The last case is the user's story: an
//! NVLink CRC burst, an uncontained XID and a PCIe replay storm, one on each of three GPUs of
//! one group, in one check.

use std::ffi::CString;

use dcgm_sys::*;

use crate::battery::Battery;

/// One injected value: field, value, timestamp offset from now in seconds.
#[derive(Clone, Copy)]
pub enum Inj {
    /// An int64 field.
    I(u16, i64, i64),
    /// A double field.
    D(u16, f64, i64),
    /// The state of one NVLink of the GPU (`dcgmSetEntityNvLinkLinkState`).
    Link(u32, dcgmNvLinkLinkState_t),
}

/// One health case: its name, the watched systems, and per GPU the values injected into it.
pub struct Case {
    pub name: &'static str,
    pub systems: u32,
    pub gpus: Vec<Vec<Inj>>,
}

fn case(name: &'static str, systems: u32, inj: Vec<Inj>) -> Case {
    Case {
        name,
        systems,
        gpus: vec![inj],
    }
}

/// PCIe gen 5 x16: the replay budget is ceil(1.92 * 16) = 31 a minute.
fn pcie_link() -> Vec<Inj> {
    vec![
        Inj::I(DCGM_FI_DEV_PCIE_LINK_GEN, 5, -5),
        Inj::I(DCGM_FI_DEV_PCIE_LINK_WIDTH, 16, -5),
    ]
}

fn with(mut a: Vec<Inj>, b: &[Inj]) -> Vec<Inj> {
    a.extend_from_slice(b);
    a
}

/// The injections of the user's story, per GPU.
pub fn story() -> Vec<Vec<Inj>> {
    vec![
        // An NVLink CRC burst: a million flit CRC errors in the last minute.
        vec![
            Inj::I(DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL, 0, -50),
            Inj::I(DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL, 1_000_000, -20),
        ],
        // An uncontained memory error.
        vec![Inj::I(DCGM_FI_DEV_XID_ERROR, 95, -1)],
        // A PCIe replay storm: 500 replays in 40 s on a gen 5 x16 link.
        with(
            pcie_link(),
            &[
                Inj::I(DCGM_FI_DEV_PCIE_REPLAY_TOTAL, 0, -50),
                Inj::I(DCGM_FI_DEV_PCIE_REPLAY_TOTAL, 500, -10),
            ],
        ),
    ]
}

/// Every case, in the order they run.
pub fn cases() -> Vec<Case> {
    use Inj::{D, I};
    const PCIE: u32 = DCGM_HEALTH_WATCH_PCIE;
    const MEM: u32 = DCGM_HEALTH_WATCH_MEM;
    const NVL: u32 = DCGM_HEALTH_WATCH_NVLINK;
    const THERM: u32 = DCGM_HEALTH_WATCH_THERMAL;
    const POW: u32 = DCGM_HEALTH_WATCH_POWER;
    const DRV: u32 = DCGM_HEALTH_WATCH_DRIVER;
    const INFO: u32 = DCGM_HEALTH_WATCH_INFOROM;
    let replay = DCGM_FI_DEV_PCIE_REPLAY_TOTAL;
    let crc = DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL;
    let xid = DCGM_FI_DEV_XID_ERROR;
    let mut v = vec![
        case(
            "pcie_storm",
            PCIE,
            with(pcie_link(), &[I(replay, 0, -50), I(replay, 100, -10)]),
        ),
        case(
            "pcie_within_budget",
            PCIE,
            with(pcie_link(), &[I(replay, 0, -50), I(replay, 31, -10)]),
        ),
        case(
            "pcie_gen3_x8",
            PCIE,
            vec![
                I(DCGM_FI_DEV_PCIE_LINK_GEN, 3, -5),
                I(DCGM_FI_DEV_PCIE_LINK_WIDTH, 8, -5),
                I(replay, 0, -50),
                I(replay, 5, -10),
            ],
        ),
        case(
            "pcie_replays_without_link",
            PCIE,
            vec![I(replay, 0, -50), I(replay, 1000, -10)],
        ),
        case(
            "nvlink_crc_slow",
            NVL,
            vec![I(crc, 0, -50), I(crc, 100, -10)],
        ),
        case(
            "nvlink_crc_burst",
            NVL,
            vec![I(crc, 0, -50), I(crc, 1_000_000, -20)],
        ),
        case(
            "nvlink_data_crc",
            NVL,
            vec![
                I(DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_TOTAL, 0, -50),
                I(DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_TOTAL, 7, -10),
            ],
        ),
        case(
            "nvlink_recovery",
            NVL,
            vec![
                I(DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_TOTAL, 0, -50),
                I(DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_TOTAL, 1, -40),
            ],
        ),
        case(
            "nvlink_replay",
            NVL,
            vec![
                I(DCGM_FI_DEV_NVLINK_REPLAY_ERROR_TOTAL, 0, -50),
                I(DCGM_FI_DEV_NVLINK_REPLAY_ERROR_TOTAL, 3, -40),
            ],
        ),
        case(
            "nvlink_old_errors",
            NVL,
            vec![I(crc, 0, -300), I(crc, 500, -200)],
        ),
        case(
            "mem_dbe",
            MEM,
            vec![I(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, 5, -5)],
        ),
        case(
            "mem_dbe_old",
            MEM,
            vec![I(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, 5, -120)],
        ),
        case(
            "mem_retired_limit",
            MEM,
            vec![
                I(DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL, 30, -5),
                I(DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL, 33, -5),
            ],
        ),
        case(
            "mem_retired_below",
            MEM,
            vec![
                I(DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL, 30, -5),
                I(DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL, 10, -5),
            ],
        ),
        case(
            "mem_retired_dbe_soft_limit",
            MEM,
            vec![
                I(DCGM_FI_DEV_PAGE_RETIRED_SBE_TOTAL, 30, -30),
                I(DCGM_FI_DEV_PAGE_RETIRED_DBE_TOTAL, 30, -30),
            ],
        ),
        case(
            "mem_retired_pending",
            MEM,
            vec![I(DCGM_FI_DEV_PAGE_RETIRED_PENDING, 1, -5)],
        ),
        case(
            "mem_row_remap_failed",
            MEM,
            vec![I(DCGM_FI_DEV_ROW_REMAP_FAILED, 1, -5)],
        ),
        case(
            "mem_row_remap_uncorrectable",
            MEM,
            vec![I(DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL, 600, -5)],
        ),
        case(
            "mem_unrepairable",
            MEM,
            vec![I(DCGM_FI_DEV_MEMORY_UNREPAIRABLE, 1, -5)],
        ),
        case(
            "thermal_violation",
            THERM,
            vec![
                I(DCGM_FI_DEV_THERMAL_VIOLATION, 0, -50),
                I(DCGM_FI_DEV_THERMAL_VIOLATION, 1000, -10),
            ],
        ),
        case(
            "thermal_flat",
            THERM,
            vec![
                I(DCGM_FI_DEV_THERMAL_VIOLATION, 1000, -50),
                I(DCGM_FI_DEV_THERMAL_VIOLATION, 1000, -10),
            ],
        ),
        case(
            "power_violation",
            POW,
            vec![
                I(DCGM_FI_DEV_POWER_VIOLATION, 0, -50),
                I(DCGM_FI_DEV_POWER_VIOLATION, 1000, -10),
            ],
        ),
        case(
            "power_unreadable",
            POW,
            vec![D(DCGM_FI_DEV_BOARD_POWER_WATTS, DCGM_FP64_BLANK, -5)],
        ),
        case(
            "inforom_corrupt",
            INFO,
            vec![I(DCGM_FI_DEV_INFOROM_VALID, 0, -5)],
        ),
        case(
            "inforom_valid",
            INFO,
            vec![I(DCGM_FI_DEV_INFOROM_VALID, 1, -5)],
        ),
        case(
            "nvlink_link_down",
            NVL,
            (0..18)
                .map(|l| Inj::Link(l, DcgmNvLinkLinkStateUp))
                .chain([Inj::Link(3, DcgmNvLinkLinkStateDown)])
                .collect(),
        ),
        case(
            "nvlink_link_down_in_mig_mode",
            NVL,
            [I(DCGM_FI_DEV_MIG_MODE, 1, -5)]
                .into_iter()
                .chain((0..18).map(|l| Inj::Link(l, DcgmNvLinkLinkStateUp)))
                .chain([Inj::Link(3, DcgmNvLinkLinkStateDown)])
                .collect(),
        ),
        case(
            "nvlink_links_up",
            NVL,
            (0..18)
                .map(|l| Inj::Link(l, DcgmNvLinkLinkStateUp))
                .collect(),
        ),
    ];
    for (name, action) in [
        ("recovery_none", 0),
        ("recovery_reset", 1),
        ("recovery_reboot", 2),
        ("recovery_drain_p2p", 3),
        ("recovery_drain_reset", 4),
        ("recovery_unknown", 9),
    ] {
        v.push(case(
            name,
            DRV,
            vec![I(DCGM_FI_DEV_GPU_RECOVERY_ACTION, action, -5)],
        ));
    }
    for (name, systems, x) in [
        ("xid_13_app", MEM | PCIE, 13),
        ("xid_31_mmu_mem", MEM, 31),
        ("xid_31_not_watched", PCIE, 31),
        ("xid_38_pcie", PCIE, 38),
        ("xid_43_mem", MEM, 43),
        ("xid_48_dbe", PCIE, 48),
        ("xid_54_power", POW, 54),
        ("xid_57_power", POW, 57),
        ("xid_60_thermal", THERM, 60),
        ("xid_62_thermal", THERM, 62),
        ("xid_63_pending", MEM, 63),
        ("xid_64_remap", MEM, 64),
        ("xid_74_nvlink", NVL, 74),
        ("xid_79_off_bus", MEM, 79),
        ("xid_93_inforom", INFO, 93),
        ("xid_94_contained", MEM, 94),
        ("xid_95_uncontained", MEM, 95),
        ("xid_95_other_system", THERM, 95),
        ("xid_119_gsp", DRV, 119),
        ("xid_121_c2c", NVL, 121),
        ("xid_140_ecc", MEM, 140),
    ] {
        v.push(case(name, systems, vec![I(xid, x, -1)]));
    }
    v.push(case(
        "mem_and_pcie",
        MEM | PCIE,
        with(
            pcie_link(),
            &[
                I(replay, 0, -50),
                I(replay, 100, -10),
                I(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, 2, -5),
            ],
        ),
    ));
    // NVLink5 (after the cases above, so that they keep their GPUs; few, so that the pool
    // of fake GPUs lasts): counters fail from the first error in the window, bit error rates
    // (packed as mantissa << 8 | exponent, 4095 meaning none) by their latest sample.
    v.push(case(
        "nvlink5_counters",
        NVL,
        vec![
            I(DCGM_FI_DEV_NVLINK_RX_PACKET_MALFORMED_TOTAL, 0, -50),
            I(DCGM_FI_DEV_NVLINK_RX_PACKET_MALFORMED_TOTAL, 1, -40),
            I(DCGM_FI_DEV_NVLINK_RX_SYMBOL_ERROR_TOTAL, 0, -50),
            I(DCGM_FI_DEV_NVLINK_RX_SYMBOL_ERROR_TOTAL, 1, -20),
            I(DCGM_FI_DEV_NVLINK_RX_ERROR_TOTAL, 0, -50),
            I(DCGM_FI_DEV_NVLINK_RX_ERROR_TOTAL, 1000, -20),
            I(DCGM_FI_DEV_NVLINK_ECC_ERROR_TOTAL, 5, -50),
            I(DCGM_FI_DEV_NVLINK_ECC_ERROR_TOTAL, 7, -20),
        ],
    ));
    v.push(case(
        "nvlink5_ber_healthy",
        NVL,
        vec![
            I(DCGM_FI_DEV_NVLINK_EFFECTIVE_BER_RAW, 4095, -50),
            I(DCGM_FI_DEV_NVLINK_EFFECTIVE_BER_RAW, (10 << 8) | 13, -20),
            I(DCGM_FI_DEV_NVLINK_SYMBOL_BER_RAW, 0, -40),
            I(DCGM_FI_DEV_NVLINK_SYMBOL_BER_RAW, 5, -30),
        ],
    ));
    v.push(case(
        "nvlink5_effective_ber_over",
        NVL,
        vec![
            I(DCGM_FI_DEV_NVLINK_EFFECTIVE_BER_RAW, 4095, -50),
            I(DCGM_FI_DEV_NVLINK_EFFECTIVE_BER_RAW, (11 << 8) | 13, -20),
        ],
    ));
    v.push(case(
        "nvlink5_ber_high",
        NVL,
        vec![
            I(DCGM_FI_DEV_NVLINK_EFFECTIVE_BER_RAW, 4095, -50),
            I(DCGM_FI_DEV_NVLINK_EFFECTIVE_BER_RAW, (3 << 8) | 5, -20),
            I(DCGM_FI_DEV_NVLINK_SYMBOL_BER_RAW, 4095, -60),
            I(DCGM_FI_DEV_NVLINK_SYMBOL_BER_RAW, 1000, -50),
        ],
    ));
    // The data-link layer totals (before Blackwell), by their latest value.
    v.push(case(
        "nvlink_dl_totals",
        NVL,
        vec![
            I(DCGM_FI_DEV_NVLINK_CRC_ERROR_TOTAL, 3, -5),
            I(DCGM_FI_DEV_NVLINK_REPLAY_TOTAL, 2, -5),
        ],
    ));
    v.push(Case {
        name: "story",
        systems: DCGM_HEALTH_WATCH_ALL,
        gpus: story(),
    });
    v
}

fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64
}

/// The text of a C string buffer.
pub fn text(s: &[std::ffi::c_char]) -> String {
    let b: Vec<u8> = s
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8_lossy(&b).into_owned()
}

/// An incident list as one record shape: `sys:health:code:group:id:message`, `|`-separated,
/// in the library's order, with the GPUs of the case named `G0`, `G1`, … (in messages too) so
/// that the shape does not depend on which ids the GPUs got.
pub fn incidents_shape(r: &dcgmHealthResponse_v5, gpus: &[u32]) -> String {
    let name = |id: u32| {
        gpus.iter()
            .position(|g| *g == id)
            .map_or_else(|| format!("?{id}"), |i| format!("G{i}"))
    };
    let mut parts = Vec::new();
    for inc in r.incidents.iter().take(r.incidentCount as usize) {
        let mut msg = text(&inc.error.msg).replace(['\t', '\n'], " ");
        // Longest ids first, so that "GPU 12" is not read as "GPU 1" followed by "2".
        let mut ids: Vec<u32> = gpus.to_vec();
        ids.sort_by_key(|g| std::cmp::Reverse(*g));
        for g in ids {
            msg = replace_id(&msg, g, &name(g));
        }
        parts.push(format!(
            "{}:{}:{}:{}:{}:{}",
            inc.system,
            inc.health,
            inc.error.code,
            inc.entityInfo.entityGroupId,
            name(inc.entityInfo.entityId),
            msg
        ));
    }
    format!(
        "overall={} n={} [{}]",
        r.overallHealth,
        r.incidentCount,
        parts.join("|")
    )
}

/// Replaces `GPU <id>` by `GPU <name>` where the id stands alone (not part of a longer number).
fn replace_id(msg: &str, id: u32, with: &str) -> String {
    let pat = format!("GPU {id}");
    let mut out = String::new();
    let mut rest = msg;
    while let Some(i) = rest.find(&pat) {
        let end = i + pat.len();
        let after = rest[end..]
            .chars()
            .next()
            .is_none_or(|c| !c.is_ascii_digit());
        out.push_str(&rest[..i]);
        if after {
            out.push_str("GPU ");
            out.push_str(with);
        } else {
            out.push_str(&pat);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Fake GPUs shared by the cases: each GPU serves at most one case per watched system (its
/// injected values and XIDs stay), a GPU that saw an XID every check reports serves no other
/// case. libdcgm has room for 32 GPUs, too few for one per case.
#[derive(Default)]
pub struct Pool {
    gpus: Vec<(u32, u32)>,
}

/// XIDs that libdcgm reports on every health check of the GPU from then on.
const DEVASTATING: [i64; 8] = [48, 74, 79, 94, 95, 119, 120, 140];

/// The systems a GPU of a case is used for (every system when it gets a devastating XID).
fn use_mask(systems: u32, inj: &[Inj]) -> u32 {
    let devastating = inj
        .iter()
        .any(|i| matches!(i, Inj::I(DCGM_FI_DEV_XID_ERROR, x, _) if DEVASTATING.contains(x)));
    if devastating { u32::MAX } else { systems }
}

impl Battery<'_> {
    fn pooled_gpu(&mut self, pool: &mut Pool, mask: u32) -> Option<u32> {
        if let Some(slot) = pool.gpus.iter_mut().find(|(_, used)| *used & mask == 0) {
            slot.1 |= mask;
            return Some(slot.0);
        }
        let g = self.fake_gpu()?;
        pool.gpus.push((g, mask));
        Some(g)
    }

    fn fake_gpu(&mut self) -> Option<u32> {
        let mut c = dcgmCreateFakeEntities_v2::boxed_versioned();
        c.numToCreate = 1;
        c.entityList[0].entity.entityGroupId = DCGM_FE_GPU;
        let f = self.lib.dcgmCreateFakeEntities().ok()?;
        // SAFETY: a versioned struct valid for the call.
        let rc = unsafe { f(self.h, &mut *c) };
        (rc == DCGM_ST_OK).then_some(c.entityList[0].entity.entityId)
    }

    fn inject_one(&mut self, gpu: u32, inj: Inj) -> dcgmReturn_t {
        let mut v = dcgmInjectFieldValue_v1::new_versioned();
        let off = match inj {
            Inj::Link(link, state) => {
                let mut ls = dcgmSetNvLinkLinkState_v1::new_versioned();
                ls.entityGroupId = DCGM_FE_GPU;
                ls.entityId = gpu;
                ls.linkId = link;
                ls.linkState = state;
                let Ok(f) = self.lib.dcgmSetEntityNvLinkLinkState() else {
                    return DCGM_ST_FUNCTION_NOT_FOUND;
                };
                // SAFETY: a versioned struct valid for the call.
                return unsafe { f(self.h, &mut ls) };
            }
            Inj::I(field, val, off) => {
                v.fieldId = field;
                v.fieldType = u16::from(DCGM_FT_INT64);
                v.value.i64_ = val;
                off
            }
            Inj::D(field, val, off) => {
                v.fieldId = field;
                v.fieldType = u16::from(DCGM_FT_DOUBLE);
                v.value.dbl = val;
                off
            }
        };
        v.ts = now_us() + off * 1_000_000;
        let Ok(f) = self.lib.dcgmInjectFieldValue() else {
            return DCGM_ST_FUNCTION_NOT_FOUND;
        };
        // SAFETY: a versioned value valid for the call.
        unsafe { f(self.h, gpu, &mut v) }
    }

    /// Runs one case: fresh GPUs in a fresh group, the systems watched, the values injected,
    /// one health check. Records `health/case/NAME`.
    pub fn health_case(&mut self, pool: &mut Pool, c: &Case) {
        let id = format!("health/case/{}", c.name);
        let mut gpus = Vec::new();
        for inj in &c.gpus {
            match self.pooled_gpu(pool, use_mask(c.systems, inj)) {
                Some(g) => gpus.push(g),
                None => return self.rec(id, None, "no fake GPU"),
            }
        }
        let name = CString::new(format!("hc-{}", c.name)).unwrap();
        let mut g: dcgmGpuGrp_t = 0;
        // SAFETY: valid pointers for the calls.
        unsafe {
            let rc = self.lib.dcgmGroupCreate().unwrap()(
                self.h,
                DCGM_GROUP_EMPTY,
                name.as_ptr(),
                &mut g,
            );
            assert_eq!(rc, DCGM_ST_OK, "create the group of {id}");
            for &gpu in &gpus {
                let rc = self.lib.dcgmGroupAddDevice().unwrap()(self.h, g, gpu);
                assert_eq!(rc, DCGM_ST_OK, "add GPU {gpu} to the group of {id}");
            }
        }
        // SAFETY: plain values.
        let rc = unsafe { self.lib.dcgmHealthSet().unwrap()(self.h, g, c.systems) };
        if rc != DCGM_ST_OK {
            return self.rec(id, Some(rc), "health set failed");
        }
        let mut bad = Vec::new();
        for (i, injs) in c.gpus.iter().enumerate() {
            for &inj in injs {
                let rc = self.inject_one(gpus[i], inj);
                if rc != DCGM_ST_OK {
                    bad.push(format!("inject G{i}: {rc}"));
                }
            }
        }
        // SAFETY: plain values.
        unsafe { self.lib.dcgmUpdateAllFields().unwrap()(self.h, 1) };
        let mut r = dcgmHealthResponse_v5::boxed_versioned();
        // SAFETY: a versioned response valid for the call.
        let rc = unsafe { self.lib.dcgmHealthCheck().unwrap()(self.h, g, &mut *r) };
        let mut shape = incidents_shape(&r, &gpus);
        if !bad.is_empty() {
            shape = format!("{} {shape}", bad.join(","));
        }
        self.rec(id, Some(rc), shape);
        // SAFETY: plain values.
        unsafe { self.lib.dcgmGroupDestroy().unwrap()(self.h, g) };
    }

    /// `dcgmHealthSet_v2`: its update interval and max age are accepted or refused, and the
    /// systems read back.
    pub fn health_set_v2(&mut self) {
        let Some(gpu) = self.fake_gpu() else {
            return self.rec("health/set_v2/fake_gpu", None, "");
        };
        let name = CString::new("hc-set-v2").unwrap();
        let mut g: dcgmGpuGrp_t = 0;
        // SAFETY: valid pointers for the calls.
        unsafe {
            self.lib.dcgmGroupCreate().unwrap()(self.h, DCGM_GROUP_EMPTY, name.as_ptr(), &mut g);
            self.lib.dcgmGroupAddDevice().unwrap()(self.h, g, gpu);
        }
        for (name, interval, age) in [
            ("ok", 1_000_000i64, 60.0f64),
            ("zero", 0, 0.0),
            ("tiny_interval", 1, 1.0),
            ("negative_interval", -1, 60.0),
            ("negative_age", 1_000_000, -1.0),
        ] {
            let mut p = dcgmHealthSetParams_v2::new_versioned();
            p.groupId = g;
            p.systems = DCGM_HEALTH_WATCH_MEM | DCGM_HEALTH_WATCH_PCIE;
            p.updateInterval = interval;
            p.maxKeepAge = age;
            let Ok(f) = self.lib.dcgmHealthSet_v2() else {
                return self.rec("health/set_v2/ok", None, "");
            };
            // SAFETY: a versioned struct valid for the call.
            let rc = unsafe { f(self.h, &mut p) };
            let mut got = 0u32;
            // SAFETY: plain out-pointer.
            let grc = unsafe { self.lib.dcgmHealthGet().unwrap()(self.h, g, &mut got) };
            self.rec(
                format!("health/set_v2/{name}"),
                Some(rc),
                format!("get={grc} systems={got}"),
            );
        }
        // SAFETY: plain values.
        unsafe { self.lib.dcgmGroupDestroy().unwrap()(self.h, g) };
    }

    /// NvSwitches: a fatal SXID on one fake switch, a non-fatal one on another, one check of
    /// both. Records `health/case/nvswitch` (switches named `S0`, `S1` where the shape names
    /// GPUs).
    pub fn health_nvswitch(&mut self) {
        let id = "health/case/nvswitch";
        let mut c = dcgmCreateFakeEntities_v2::boxed_versioned();
        c.numToCreate = 2;
        for e in c.entityList.iter_mut().take(2) {
            e.entity.entityGroupId = DCGM_FE_SWITCH;
        }
        let Ok(create) = self.lib.dcgmCreateFakeEntities() else {
            return self.rec(id, None, "");
        };
        // SAFETY: a versioned struct valid for the call.
        let rc = unsafe { create(self.h, &mut *c) };
        if rc != DCGM_ST_OK {
            return self.rec(id, Some(rc), "no fake switches");
        }
        let sw = [
            c.entityList[0].entity.entityId,
            c.entityList[1].entity.entityId,
        ];
        let name = CString::new("hc-nvswitch").unwrap();
        let mut g: dcgmGpuGrp_t = 0;
        // SAFETY: valid pointers and values for the calls.
        let rc = unsafe {
            self.lib.dcgmGroupCreate().unwrap()(self.h, DCGM_GROUP_EMPTY, name.as_ptr(), &mut g);
            for s in sw {
                self.lib.dcgmGroupAddEntity().unwrap()(self.h, g, DCGM_FE_SWITCH, s);
            }
            self.lib.dcgmHealthSet().unwrap()(
                self.h,
                g,
                DCGM_HEALTH_WATCH_NVSWITCH_FATAL | DCGM_HEALTH_WATCH_NVSWITCH_NONFATAL,
            )
        };
        if rc != DCGM_ST_OK {
            return self.rec(id, Some(rc), "health set failed");
        }
        for (s, field) in [
            (sw[0], DCGM_FI_DEV_SXID_FATAL_ERROR),
            (sw[1], DCGM_FI_DEV_SXID_NON_FATAL_ERROR),
        ] {
            let mut v = dcgmInjectFieldValue_v1::new_versioned();
            v.fieldId = field;
            v.fieldType = u16::from(DCGM_FT_INT64);
            v.value.i64_ = 1;
            v.ts = now_us() - 5_000_000;
            // SAFETY: a versioned value valid for the call.
            unsafe {
                self.lib.dcgmInjectEntityFieldValue().unwrap()(self.h, DCGM_FE_SWITCH, s, &mut v)
            };
        }
        let mut r = dcgmHealthResponse_v5::boxed_versioned();
        // SAFETY: a versioned response valid for the call.
        let rc = unsafe { self.lib.dcgmHealthCheck().unwrap()(self.h, g, &mut *r) };
        let shape = incidents_shape(&r, &sw)
            .replace(":G0:", ":S0:")
            .replace(":G1:", ":S1:");
        self.rec(id, Some(rc), shape);
        // SAFETY: plain values.
        unsafe { self.lib.dcgmGroupDestroy().unwrap()(self.h, g) };
    }

    /// The fabric manager status of one GPU, one check per status: records
    /// `health/case/fabric_manager_status` with each check's shape, `/`-separated.
    pub fn health_fabric_manager(&mut self, pool: &mut Pool) {
        let id = "health/case/fabric_manager_status";
        let Some(gpu) = self.pooled_gpu(pool, DCGM_HEALTH_WATCH_NVLINK) else {
            return self.rec(id, None, "no fake GPU");
        };
        let name = CString::new("hc-fm").unwrap();
        let mut g: dcgmGpuGrp_t = 0;
        // SAFETY: valid pointers and values for the calls.
        unsafe {
            self.lib.dcgmGroupCreate().unwrap()(self.h, DCGM_GROUP_EMPTY, name.as_ptr(), &mut g);
            self.lib.dcgmGroupAddDevice().unwrap()(self.h, g, gpu);
            self.lib.dcgmHealthSet().unwrap()(self.h, g, DCGM_HEALTH_WATCH_NVLINK);
        }
        let mut shapes = Vec::new();
        for (i, status) in [1i64, 2, 4, 5, 6, 9, 0, 3].into_iter().enumerate() {
            // Each newer than the one before, all in the past.
            let rc = self.inject_one(
                gpu,
                Inj::I(DCGM_FI_DEV_FABRIC_MANAGER_STATUS, status, i as i64 - 20),
            );
            let mut r = dcgmHealthResponse_v5::boxed_versioned();
            // SAFETY: a versioned response valid for the call.
            let crc = unsafe { self.lib.dcgmHealthCheck().unwrap()(self.h, g, &mut *r) };
            shapes.push(format!(
                "status {status}: inject={rc} check={crc} {}",
                incidents_shape(&r, &[gpu])
            ));
        }
        self.rec(id, Some(DCGM_ST_OK), shapes.join(" / "));
        // The fabric health mask, on the same GPU (its fabric manager status is Success now).
        let mut shapes = Vec::new();
        for (i, mask) in [
            1i64 << 4,
            1 << 0,
            1 << 2,
            1 << 6,
            2 << 8,
            1 << 8,
            (1 << 4) | (1 << 6) | (1 << 8),
            0,
        ]
        .into_iter()
        .enumerate()
        {
            let rc = self.inject_one(
                gpu,
                Inj::I(DCGM_FI_DEV_FABRIC_HEALTH_MASK, mask, i as i64 - 10),
            );
            let mut r = dcgmHealthResponse_v5::boxed_versioned();
            // SAFETY: a versioned response valid for the call.
            let crc = unsafe { self.lib.dcgmHealthCheck().unwrap()(self.h, g, &mut *r) };
            shapes.push(format!(
                "mask {mask}: inject={rc} check={crc} {}",
                incidents_shape(&r, &[gpu])
            ));
        }
        self.rec(
            "health/case/fabric_health_mask",
            Some(DCGM_ST_OK),
            shapes.join(" / "),
        );
        // SAFETY: plain values.
        unsafe { self.lib.dcgmGroupDestroy().unwrap()(self.h, g) };
    }

    /// Injects an IMEX status into the node (entity `DCGM_FE_NONE` 0): the domain's string or
    /// the daemon's integer, `off` seconds from now.
    fn inject_imex(&mut self, domain: Option<&str>, daemon: Option<i64>, off: i64) -> dcgmReturn_t {
        let mut v = dcgmInjectFieldValue_v1::new_versioned();
        v.ts = now_us() + off * 1_000_000;
        if let Some(d) = domain {
            v.fieldId = DCGM_FI_IMEX_DOMAIN_STATUS;
            v.fieldType = u16::from(DCGM_FT_STRING);
            // SAFETY: the string member of the value union, written whole.
            let dst = unsafe { &mut v.value.str_ };
            for (i, b) in d.bytes().take(dst.len() - 1).enumerate() {
                dst[i] = b as std::ffi::c_char;
            }
        } else if let Some(n) = daemon {
            v.fieldId = DCGM_FI_IMEX_DAEMON_STATUS;
            v.fieldType = u16::from(DCGM_FT_INT64);
            v.value.i64_ = n;
        }
        let Ok(f) = self.lib.dcgmInjectEntityFieldValue() else {
            return DCGM_ST_FUNCTION_NOT_FOUND;
        };
        // SAFETY: a versioned value valid for the call.
        unsafe { f(self.h, DCGM_FE_NONE, 0, &mut v) }
    }

    /// IMEX: a GPU with its links up watched for NVLink, the node's domain and daemon status
    /// injected, one check per pair. Records `health/case/imex_status`, `/`-separated (the
    /// node's incidents name entity `?0`), and ends on a healthy pair.
    pub fn health_imex(&mut self, pool: &mut Pool) {
        let id = "health/case/imex_status";
        let Some(gpu) = self.pooled_gpu(pool, DCGM_HEALTH_WATCH_NVLINK) else {
            return self.rec(id, None, "no fake GPU");
        };
        for l in 0..18 {
            self.inject_one(gpu, Inj::Link(l, DcgmNvLinkLinkStateUp));
        }
        let name = CString::new("hc-imex").unwrap();
        let mut g: dcgmGpuGrp_t = 0;
        // SAFETY: valid pointers and values for the calls.
        unsafe {
            self.lib.dcgmGroupCreate().unwrap()(self.h, DCGM_GROUP_EMPTY, name.as_ptr(), &mut g);
            self.lib.dcgmGroupAddDevice().unwrap()(self.h, g, gpu);
            self.lib.dcgmHealthSet().unwrap()(self.h, g, DCGM_HEALTH_WATCH_NVLINK);
        }
        let mut shapes = Vec::new();
        for (i, (domain, daemon)) in [
            ("UP", 5i64),
            ("DOWN", 5),
            ("DEGRADED", 5),
            ("UP", 0),
            ("DOWN", 3),
            ("NOT_INSTALLED", -1),
            ("NOT_CONFIGURED", -2),
            ("UNAVAILABLE", 7),
            ("SOMETHING", -3),
            ("UP", 5),
        ]
        .into_iter()
        .enumerate()
        {
            let a = self.inject_imex(Some(domain), None, i as i64);
            let b = self.inject_imex(None, Some(daemon), i as i64);
            let mut r = dcgmHealthResponse_v5::boxed_versioned();
            // SAFETY: a versioned response valid for the call.
            let crc = unsafe { self.lib.dcgmHealthCheck().unwrap()(self.h, g, &mut *r) };
            shapes.push(format!(
                "{domain} {daemon}: inject={a},{b} check={crc} {}",
                incidents_shape(&r, &[gpu])
            ));
        }
        self.rec(id, Some(DCGM_ST_OK), shapes.join(" / "));
        // SAFETY: plain values.
        unsafe { self.lib.dcgmGroupDestroy().unwrap()(self.h, g) };
    }

    /// All health cases.
    pub fn health_cases(&mut self) {
        self.health_set_v2();
        self.health_nvswitch();
        let mut pool = Pool::default();
        for c in cases() {
            self.health_case(&mut pool, &c);
        }
        self.health_fabric_manager(&mut pool);
        self.health_imex(&mut pool);
        let mut ids = [0u32; DCGM_MAX_NUM_DEVICES];
        let mut n: std::ffi::c_int = 0;
        // SAFETY: out-pointers with room for every device.
        let rc = unsafe { self.lib.dcgmGetAllDevices().unwrap()(self.h, ids.as_mut_ptr(), &mut n) };
        self.rec(
            "health/cases/devices",
            Some(rc),
            format!("n={n} pool={}", pool.gpus.len()),
        );
    }
}
