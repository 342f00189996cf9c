//! The field table generated from data/fields.tsv, and the blank-sentinel helpers.

use std::collections::HashSet;

use dcgm_sys::*;

#[test]
fn the_field_table_holds_every_field_libdcgm_4_6_registers() {
    assert_eq!(
        FIELD_TABLE.len(),
        656,
        "4.6.0's 639 public fields + 4 internal ones, and 4.6.1's 13 base-unit fields"
    );
    assert_eq!(FIELD_TABLE.iter().filter(|f| f.internal).count(), 4);
    assert_eq!(
        FIELD_TABLE.iter().filter(|f| f.since.is_none()).count(),
        643
    );
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

#[test]
fn dcgm_4_6_1_base_unit_fields_are_marked_and_mirror_their_legacy_fields() {
    // Facts of DCGM 4.6.1's dcgm_fields.h: ids 1600-1612, each the base-unit twin of a legacy
    // field, in the legacy fields' order.
    let twins: [(&str, u16, &str); 13] = [
        ("DCGM_FI_DEV_BAR1_CAPACITY_BYTES", 90, "B"),
        ("DCGM_FI_DEV_BAR1_USED_BYTES", 92, "B"),
        ("DCGM_FI_DEV_BAR1_FREE_BYTES", 93, "B"),
        ("DCGM_FI_DEV_SM_CLOCK_HERTZ", 100, "Hz"),
        ("DCGM_FI_DEV_MEMORY_CLOCK_HERTZ", 101, "Hz"),
        ("DCGM_FI_DEV_VIDEO_CLOCK_HERTZ", 102, "Hz"),
        ("DCGM_FI_DEV_SM_APP_CLOCK_HERTZ", 110, "Hz"),
        ("DCGM_FI_DEV_MEMORY_APP_CLOCK_HERTZ", 111, "Hz"),
        ("DCGM_FI_DEV_SM_MAX_CLOCK_HERTZ", 113, "Hz"),
        ("DCGM_FI_DEV_MEMORY_MAX_CLOCK_HERTZ", 114, "Hz"),
        ("DCGM_FI_DEV_VIDEO_MAX_CLOCK_HERTZ", 115, "Hz"),
        ("DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL", 156, "J"),
        ("DCGM_FI_DEV_FAN_SPEED_RATIO", 191, ""),
    ];
    for (i, (name, legacy, unit)) in twins.into_iter().enumerate() {
        let f = field_by_name(name).unwrap_or_else(|| panic!("{name} is not in the table"));
        assert_eq!(f.id, 1600 + i as u16, "{name}");
        assert_eq!(f.since, Some((4, 6, 1)), "{name}");
        assert_eq!(f.unit, unit, "{name}");
        assert_eq!(f.tag, name["DCGM_FI_DEV_".len()..].to_lowercase(), "{name}");
        assert_eq!(field_by_tag(f.tag).unwrap().id, f.id);
        let old = field_by_id(legacy).unwrap();
        assert_eq!(old.since, None, "{}", old.name);
        assert_eq!(
            (f.entity_level, f.scope, f.width, f.internal),
            (old.entity_level, old.scope, old.width, false),
            "{name} against {}",
            old.name
        );
        let want = if unit == "J" || unit.is_empty() {
            DCGM_FT_DOUBLE
        } else {
            DCGM_FT_INT64
        };
        assert_eq!(f.field_type, want, "{name}");
        assert!(f.id < DCGM_FI_MAX_FIELDS);
    }
    assert_eq!(DCGM_FI_DEV_SM_CLOCK_HERTZ, 1603);
    assert_eq!(DCGM_FI_DEV_FAN_SPEED_RATIO, 1612);
    assert_eq!(
        DCGM_FI_MAX_FIELDS,
        DCGM_FI_DEV_FAN_SPEED_RATIO + 1,
        "4.6.1's value"
    );
    // Nothing else is marked: every other field is 4.6.0's.
    let later: Vec<u16> = FIELD_TABLE
        .iter()
        .filter(|f| f.since.is_some())
        .map(|f| f.id)
        .collect();
    assert_eq!(later, (1600..=1612).collect::<Vec<u16>>());
}
