//! The user's story, end to end on the default 8-GPU node: an NVLink CRC burst, an
//! uncontained XID and a PCIe replay storm injected into three GPUs, then one health check of
//! a group of the three watching every system. Each GPU must show exactly the incidents the
//! real libdcgm 4.6.0 gave for the same injections: the differential battery recorded them
//! (`health/case/story` in `tests/data/differential-real-4.6.0.tsv`, the same injections into
//! three fake GPUs of the real library), with the GPUs named `G0`, `G1`, `G2`.

// Each unsafe call here carries its SAFETY comment above the statement that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::ffi::{CString, c_char};

use common::*;
use dcgm_sys::*;

/// The GPUs of the default node the story happens on (GPU 7 is in MIG mode; any other
/// would do).
const GPUS: [u32; 3] = [1, 3, 5];

/// The story's injections per GPU, as the battery's `health_cases::story()` makes them:
/// (field, value, seconds before now).
fn story() -> [Vec<(u16, i64, i64)>; 3] {
    [
        vec![
            (DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL, 0, 50),
            (DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL, 1_000_000, 20),
        ],
        vec![(DCGM_FI_DEV_XID_ERROR, 95, 1)],
        vec![
            (DCGM_FI_DEV_PCIE_LINK_GEN, 5, 5),
            (DCGM_FI_DEV_PCIE_LINK_WIDTH, 16, 5),
            (DCGM_FI_DEV_PCIE_REPLAY_TOTAL, 0, 50),
            (DCGM_FI_DEV_PCIE_REPLAY_TOTAL, 500, 10),
        ],
    ]
}

fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64
}

fn text(s: &[c_char]) -> String {
    let b: Vec<u8> = s
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8_lossy(&b).into_owned()
}

/// The incidents the real library reported, per story GPU (`G0`, `G1`, `G2`), each as
/// `system:health:code:entity group:message` with the GPU named in the message.
fn recorded() -> Vec<Vec<String>> {
    let golden = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/data/differential-real-4.6.0.tsv"),
    )
    .expect("the differential golden file");
    let line = golden
        .lines()
        .find(|l| l.starts_with("health/case/story\t"))
        .expect("the story's record in the golden file");
    let shape = line.splitn(3, '\t').nth(2).unwrap();
    let list = shape
        .split_once('[')
        .and_then(|(_, r)| r.strip_suffix(']'))
        .expect("an incident list");
    let mut per_gpu = vec![Vec::new(); GPUS.len()];
    for inc in list.split('|') {
        let f: Vec<&str> = inc.splitn(6, ':').collect();
        let i: usize = f[4].strip_prefix('G').unwrap().parse().unwrap();
        per_gpu[i].push(format!("{}:{}:{}:{}:{}", f[0], f[1], f[2], f[3], f[5]));
    }
    per_gpu
}

#[test]
fn three_gpus_show_what_the_real_library_reported() {
    let (_s, h) = Session::embedded(None, DCGM_OPERATION_MODE_AUTO);
    let name = CString::new("story").unwrap();
    let mut g: dcgmGpuGrp_t = 0;
    unsafe {
        // SAFETY: valid pointers for the calls.
        assert_eq!(
            lib().dcgmGroupCreate().unwrap()(h, DCGM_GROUP_EMPTY, name.as_ptr(), &mut g),
            DCGM_ST_OK
        );
        for gpu in GPUS {
            // SAFETY: plain values.
            assert_eq!(lib().dcgmGroupAddDevice().unwrap()(h, g, gpu), DCGM_ST_OK);
        }
        // SAFETY: plain values.
        assert_eq!(
            lib().dcgmHealthSet().unwrap()(h, g, DCGM_HEALTH_WATCH_ALL),
            DCGM_ST_OK
        );
    }
    for (gpu, injections) in GPUS.iter().zip(story()) {
        for (field, value, ago) in injections {
            let mut v = dcgmInjectFieldValue_v1::new_versioned();
            v.fieldId = field;
            v.fieldType = u16::from(DCGM_FT_INT64);
            v.value.i64_ = value;
            v.ts = now_us() - ago * 1_000_000;
            // SAFETY: a versioned value.
            let rc = unsafe { lib().dcgmInjectFieldValue().unwrap()(h, *gpu, &mut v) };
            assert_eq!(rc, DCGM_ST_OK, "inject field {field} into GPU {gpu}");
        }
    }
    let mut r = dcgmHealthResponse_v5::boxed_versioned();
    // SAFETY: a versioned response.
    assert_eq!(
        unsafe { lib().dcgmHealthCheck().unwrap()(h, g, &mut *r) },
        DCGM_ST_OK
    );

    let mut got = vec![Vec::new(); GPUS.len()];
    for inc in r.incidents.iter().take(r.incidentCount as usize) {
        let i = GPUS
            .iter()
            .position(|g| *g == inc.entityInfo.entityId)
            .unwrap_or_else(|| panic!("an incident on GPU {}", inc.entityInfo.entityId));
        let msg = text(&inc.error.msg).replace(&format!("GPU {}", GPUS[i]), &format!("GPU G{i}"));
        got[i].push(format!(
            "{}:{}:{}:{}:{}",
            inc.system, inc.health, inc.error.code, inc.entityInfo.entityGroupId, msg
        ));
    }
    let want = recorded();
    for i in 0..GPUS.len() {
        assert_eq!(got[i], want[i], "GPU {} (G{i} of the record)", GPUS[i]);
    }
    // The recorded story: a CRC burst fails GPU 1's NVLink, the uncontained XID fails GPU 3
    // whatever is watched, the replay storm warns on GPU 5's PCIe.
    let codes: Vec<Vec<u32>> = want
        .iter()
        .map(|l| {
            l.iter()
                .map(|s| s.split(':').nth(2).unwrap().parse().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(
        codes,
        [
            vec![DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD],
            vec![DCGM_FR_UNCONTAINED_ERROR],
            vec![DCGM_FR_PCI_REPLAY_RATE]
        ]
    );
    assert_eq!(r.overallHealth, DCGM_HEALTH_RESULT_FAIL);
}
