//! The layout table (feature `layout`): every repr(C) type of the crate is in it, with the
//! compiler's size and offsets, and the version words are there with their values.
#![cfg(feature = "layout")]

use dcgm_sys::layout::{self, ConstValue};

#[test]
fn structs_carry_the_compilers_sizes_and_offsets() {
    let a = layout::struct_layout("dcgmDeviceAttributes_v3").expect("in the table");
    assert_eq!(
        a.size,
        std::mem::size_of::<dcgm_sys::dcgmDeviceAttributes_v3>()
    );
    assert!(!a.union && !a.packed);
    let ids = a.fields.iter().find(|f| f.name == "identifiers").unwrap();
    assert_eq!(
        ids.offset,
        std::mem::offset_of!(dcgm_sys::dcgmDeviceAttributes_v3, identifiers)
    );
    assert_eq!(ids.ty, "dcgmDeviceIdentifiers_t");
    let link = layout::struct_layout("dcgm_link_t").unwrap();
    assert!(link.packed);
    assert_eq!(link.align, 1);
    let u = layout::struct_layout("dcgmFieldValue_v1__bindgen_ty_1").unwrap();
    assert!(u.union);
    assert!(layout::STRUCT_LAYOUTS.len() > 150);
}

#[test]
fn constants_include_version_words_and_sentinels() {
    let get = |n: &str| {
        layout::CONSTANTS
            .iter()
            .find(|(k, _)| *k == n)
            .map(|(_, v)| *v)
    };
    assert_eq!(
        get("dcgmDeviceAttributes_version3"),
        Some(ConstValue::Int(
            dcgm_sys::dcgmDeviceAttributes_version3 as i128
        ))
    );
    assert_eq!(
        get("DCGM_INT32_BLANK"),
        Some(ConstValue::Int(dcgm_sys::DCGM_INT32_BLANK as i128))
    );
    assert!(matches!(get("DCGM_FP64_BLANK"), Some(ConstValue::Float(_))));
    assert!(
        layout::TYPE_ALIASES
            .iter()
            .any(|(a, t)| *a == "dcgmHandle_t" && *t == "usize")
    );
}
