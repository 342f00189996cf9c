//! The field table generated from data/fields.tsv, and the blank-sentinel helpers.

use std::collections::HashSet;

use dcgm_sys::*;

#[test]
fn the_field_table_holds_every_field_libdcgm_4_6_registers() {
    assert_eq!(
        FIELD_TABLE.len(),
        643,
        "639 public fields + 4 internal ones"
    );
    assert_eq!(FIELD_TABLE.iter().filter(|f| f.internal).count(), 4);
    let ids: HashSet<u16> = FIELD_TABLE.iter().map(|f| f.id).collect();
    assert_eq!(ids.len(), FIELD_TABLE.len(), "no duplicate ids");
    assert!(
        FIELD_TABLE.windows(2).all(|w| w[0].id < w[1].id),
        "sorted by id"
    );
    let mut names = HashSet::new();
    for f in FIELD_TABLE {
        assert!(names.insert(f.name), "duplicate name {}", f.name);
        for a in f.deprecated_aliases {
            assert!(names.insert(a), "duplicate alias {a}");
        }
        assert!(f.name.starts_with("DCGM_FI_"));
        assert!(
            b"bdist".contains(&f.field_type),
            "{} has type {}",
            f.name,
            f.field_type
        );
        assert!(f.entity_level < DCGM_FE_COUNT);
        assert!(!f.tag.is_empty());
        assert!(f.id < DCGM_FI_MAX_FIELDS);
    }
    let aliases: usize = FIELD_TABLE.iter().map(|f| f.deprecated_aliases.len()).sum();
    // The 4.6 header has 326 deprecated aliases: these 325, plus DCGM_FI_UNKNOWN for the
    // unregistered null field 0, which is a constant of its own.
    assert_eq!(aliases, 325);
    assert_eq!(DCGM_FI_UNKNOWN, DCGM_FI_SYSTEM_FIELD_UNKNOWN);
}

#[test]
fn names_aliases_and_tags_resolve_to_the_same_field() {
    assert_eq!(DCGM_FI_DEV_GPU_TEMP_CELSIUS, 150);
    #[allow(deprecated)]
    let old = DCGM_FI_DEV_GPU_TEMP;
    assert_eq!(old, 150);
    assert_eq!(field_by_name("DCGM_FI_DEV_GPU_TEMP").unwrap().id, 150);
    assert_eq!(
        field_by_name("DCGM_FI_DEV_GPU_TEMP_CELSIUS").unwrap().id,
        150
    );
    assert_eq!(field_by_tag("gpu_temp").unwrap().id, 150);
    assert_eq!(
        field_by_name("DCGM_FI_DEV_POWER_USAGE").unwrap().name,
        "DCGM_FI_DEV_BOARD_POWER_WATTS"
    );
    assert_eq!(field_by_id(155).unwrap().unit, "W");
    assert!(field_by_name("DCGM_FI_NOT_A_FIELD").is_none());
    assert!(field_by_id(600).is_none(), "range markers are not fields");
    assert_eq!(entity_group_name(DCGM_FE_GPU_I), "GPU_I");
    assert_eq!(entity_group_name(99), "None");
}

#[test]
fn every_blank_sentinel_maps_to_its_kind_and_real_values_do_not() {
    let ints = [
        (DCGM_INT64_BLANK, BlankKind::Blank),
        (DCGM_INT64_NOT_FOUND, BlankKind::NotFound),
        (DCGM_INT64_NOT_SUPPORTED, BlankKind::NotSupported),
        (DCGM_INT64_NOT_PERMISSIONED, BlankKind::NotPermissioned),
    ];
    for (v, k) in ints {
        assert_eq!(int64_blank_kind(v), Some(k));
        assert!(dcgm_int64_is_blank(v));
    }
    let i32s = [
        (DCGM_INT32_BLANK, BlankKind::Blank),
        (DCGM_INT32_NOT_FOUND, BlankKind::NotFound),
        (DCGM_INT32_NOT_SUPPORTED, BlankKind::NotSupported),
        (DCGM_INT32_NOT_PERMISSIONED, BlankKind::NotPermissioned),
    ];
    for (v, k) in i32s {
        assert_eq!(int32_blank_kind(v), Some(k));
    }
    let dbls = [
        (DCGM_FP64_BLANK, BlankKind::Blank),
        (DCGM_FP64_NOT_FOUND, BlankKind::NotFound),
        (DCGM_FP64_NOT_SUPPORTED, BlankKind::NotSupported),
        (DCGM_FP64_NOT_PERMISSIONED, BlankKind::NotPermissioned),
    ];
    for (v, k) in dbls {
        assert_eq!(fp64_blank_kind(v), Some(k));
    }
    let strs = [
        (DCGM_STR_BLANK, BlankKind::Blank),
        (DCGM_STR_NOT_FOUND, BlankKind::NotFound),
        (DCGM_STR_NOT_SUPPORTED, BlankKind::NotSupported),
        (DCGM_STR_NOT_PERMISSIONED, BlankKind::NotPermissioned),
    ];
    for (v, k) in strs {
        assert_eq!(str_blank_kind(v), Some(k));
    }
    assert_eq!(
        int64_blank_kind(DCGM_INT64_BLANK + 9),
        Some(BlankKind::Blank)
    );
    assert_eq!(int64_blank_kind(1_000_000), None);
    assert_eq!(fp64_blank_kind(700.5), None);
    assert_eq!(str_blank_kind("NVIDIA H100"), None);
    assert_eq!(str_blank_kind("<<<open"), None);
    assert!(dcgm_int8_is_blank(DCGM_INT8_BLANK));
}

#[test]
fn every_return_code_has_a_name_and_pydcgm_class_suffix() {
    assert_eq!(RETURN_CODES.len(), 67);
    assert_eq!(
        return_code_name(DCGM_ST_CONNECTION_NOT_VALID),
        Some("DCGM_ST_CONNECTION_NOT_VALID")
    );
    assert_eq!(return_code_name(-2), None);
    assert_eq!(
        python_error_suffix("DCGM_ST_3RD_PARTY_LIBRARY_ERROR"),
        "3rdPartyLibraryError"
    );
    assert_eq!(python_error_suffix("DCGM_ST_NOT_SUPPORTED"), "NotSupported");
}

#[test]
fn dcgm_4_6_1_names_resolve_to_the_4_6_0_field() {
    // Facts of DCGM 4.6.1's dcgm_fields.h (its aliases from the old names to the new ones).
    assert_eq!(DCGM_FI_DEV_CPU_UTIL_RATIO, DCGM_FI_DEV_CPU_UTIL_TOTAL);
    assert_eq!(DCGM_FI_DEV_NVLINK_LINK_STATUS, 1508);
    for (new, old, id) in [
        (
            "DCGM_FI_DEV_CPU_UTIL_RATIO",
            "DCGM_FI_DEV_CPU_UTIL_TOTAL",
            1100,
        ),
        (
            "DCGM_FI_DEV_SYSIO_POWER_WATTS",
            "DCGM_FI_DEV_SYSIO_POWER_UTIL_CURRENT",
            1132,
        ),
        (
            "DCGM_FI_DEV_NVLINK_FEC_HISTORY_15_TOTAL",
            "DCGM_FI_DEV_NVLINK_COUNT_FEC_HISTORY_15",
            1419,
        ),
        (
            "DCGM_FI_DEV_NVLINK_PPCNT_IBPC_TX_WAIT_TOTAL",
            "DCGM_FI_DEV_NVLINK_PPCNT_IBPC_PORT_XMIT_WAIT",
            1509,
        ),
    ] {
        let f = field_by_name(new).unwrap();
        assert_eq!((f.id, f.name), (id, old), "{new}");
        assert!(f.newer_names.contains(&new));
        assert_eq!(field_by_name(old).unwrap().id, id);
    }
    let renamed: usize = FIELD_TABLE.iter().map(|f| f.newer_names.len()).sum();
    assert_eq!(renamed, 36);
    // A newer name never shadows another field's name or alias.
    for f in FIELD_TABLE {
        for n in f.newer_names {
            assert_eq!(field_by_name(n).unwrap().id, f.id, "{n}");
        }
    }
}
