//! The field cache through `dcgm-sys`: field summaries and sample ranges come from the cached
//! samples.

// Each unsafe call here carries its SAFETY comment above the assertion that makes it.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;

use std::ffi::c_int;
use std::time::Duration;

use common::*;
use dcgm_sys::*;

#[test]
fn field_summary_and_sample_ranges_come_from_the_cache() {
    let (_s, h) = Session::embedded(None, AUTO);
    let l = lib();
    let g = gpu_group(h, "summary", &[1]);
    let fg = field_group(
        h,
        "summary-fields",
        &[DCGM_FI_DEV_BOARD_POWER_WATTS, DCGM_FI_DEV_GPU_NAME],
    )
    .unwrap();
    assert_eq!(watch(h, g, fg, 10_000, 60.0, 0), DCGM_ST_OK);
    std::thread::sleep(Duration::from_millis(120));
    // SAFETY: versioned request; buffers of the announced sizes.
    unsafe {
        let mut req = dcgmFieldSummaryRequest_v1::new_versioned();
        req.fieldId = DCGM_FI_DEV_BOARD_POWER_WATTS;
        req.entityGroupId = DCGM_FE_GPU;
        req.entityId = 1;
        req.summaryTypeMask =
            DCGM_SUMMARY_MIN | DCGM_SUMMARY_MAX | DCGM_SUMMARY_AVG | DCGM_SUMMARY_COUNT;
        assert_eq!(l.dcgmGetFieldSummary().unwrap()(h, &mut req), DCGM_ST_OK);
        assert_eq!(req.response.summaryCount, 4);
        assert_eq!(req.response.fieldType, u32::from(DCGM_FT_DOUBLE));
        let v: Vec<f64> = req.response.values[..4].iter().map(|x| x.fp64).collect();
        assert!(v[0] <= v[2] && v[2] <= v[1], "{v:?}");
        assert!(v[3] >= 5.0, "{v:?}");

        req.fieldId = DCGM_FI_DEV_GPU_NAME;
        assert_eq!(
            l.dcgmGetFieldSummary().unwrap()(h, &mut req),
            DCGM_ST_FIELD_UNSUPPORTED_BY_API
        );
        req.fieldId = DCGM_FI_DEV_GPU_TEMP_CELSIUS;
        assert_eq!(
            l.dcgmGetFieldSummary().unwrap()(h, &mut req),
            DCGM_ST_NOT_WATCHED
        );

        let mut vals = vec![dcgm_sys::zeroed::<dcgmFieldValue_v1>(); 4];
        let mut n: c_int = 4;
        let f = l.dcgmGetMultipleValuesForField().unwrap();
        let rc = f(
            h,
            1,
            DCGM_FI_DEV_BOARD_POWER_WATTS,
            &mut n,
            0,
            0,
            DCGM_ORDER_ASCENDING,
            vals.as_mut_ptr(),
        );
        assert_eq!(rc, DCGM_ST_OK);
        assert_eq!(n, 4);
        assert!(vals.windows(2).all(|w| w[0].ts < w[1].ts));
        let oldest = vals[0].ts;
        n = 4;
        let rc = f(
            h,
            1,
            DCGM_FI_DEV_BOARD_POWER_WATTS,
            &mut n,
            0,
            0,
            DCGM_ORDER_DESCENDING,
            vals.as_mut_ptr(),
        );
        assert_eq!(rc, DCGM_ST_OK);
        assert!(vals.windows(2).all(|w| w[0].ts > w[1].ts));
        assert!(vals[3].ts > oldest);
        n = 4;
        let rc = f(
            h,
            1,
            DCGM_FI_DEV_GPU_TEMP_CELSIUS,
            &mut n,
            0,
            0,
            DCGM_ORDER_ASCENDING,
            vals.as_mut_ptr(),
        );
        assert_eq!(rc, DCGM_ST_NOT_WATCHED);
    }
}
