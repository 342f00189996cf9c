//! Field metadata: `DcgmFieldGetById`, `DcgmFieldGetByTag` and friends, served from the
//! project's field table.

use std::ffi::{CStr, c_char, c_int};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use dcgm_sys::*;

use super::write_str;

struct MetaTable {
    by_id: Vec<Option<Box<dcgm_field_meta_t>>>,
    // Boxed so the addresses handed out in `valueFormat` stay put while the Vec grows.
    #[allow(clippy::vec_box)]
    _formats: Vec<Box<dcgm_field_output_format_t>>,
}

// SAFETY: the table is built once and never mutated; its raw pointers point into boxes it owns.
unsafe impl Sync for MetaTable {}
// SAFETY: as above.
unsafe impl Send for MetaTable {}

static TABLE: OnceLock<MetaTable> = OnceLock::new();
static INITIALIZED: AtomicBool = AtomicBool::new(false);

fn table() -> &'static MetaTable {
    TABLE.get_or_init(|| {
        let max = FIELD_TABLE.iter().map(|f| f.id).max().unwrap_or(0) as usize;
        let mut by_id: Vec<Option<Box<dcgm_field_meta_t>>> = (0..=max).map(|_| None).collect();
        let mut formats = Vec::new();
        for f in FIELD_TABLE {
            let mut fmt: Box<dcgm_field_output_format_t> = Box::new(zeroed());
            write_str(&mut fmt.shortName, f.short_name);
            write_str(&mut fmt.unit, f.unit);
            fmt.width = f.width;
            let mut m: Box<dcgm_field_meta_t> = Box::new(zeroed());
            m.fieldId = f.id;
            m.fieldType = f.field_type as c_char;
            m.size = f.size;
            write_str(&mut m.tag, f.tag);
            m.scope = f.scope;
            m.nvmlFieldId = f.nvml_field_id;
            m.entityLevel = f.entity_level;
            m.valueFormat = &mut *fmt;
            formats.push(fmt);
            by_id[f.id as usize] = Some(m);
        }
        MetaTable {
            by_id,
            _formats: formats,
        }
    })
}

/// Marks field metadata available (called by `dcgmInit` too).
#[unsafe(no_mangle)]
pub extern "C" fn DcgmFieldsInit() -> c_int {
    table();
    INITIALIZED.store(true, Ordering::SeqCst);
    0
}

/// Marks field metadata unavailable (called by `dcgmShutdown` too).
#[unsafe(no_mangle)]
pub extern "C" fn DcgmFieldsTerm() -> c_int {
    INITIALIZED.store(false, Ordering::SeqCst);
    0
}

/// Metadata of a field id, or NULL (unknown id, one the release the simulator speaks does not
/// have, or fields not initialised).
#[unsafe(no_mangle)]
pub extern "C" fn DcgmFieldGetById(fieldId: u16) -> dcgm_field_meta_p {
    if !INITIALIZED.load(Ordering::SeqCst) || !crate::personality::knows_field(fieldId) {
        return std::ptr::null();
    }
    match table().by_id.get(fieldId as usize) {
        Some(Some(m)) => &**m,
        _ => std::ptr::null(),
    }
}

/// Metadata of a field tag, or NULL.
///
/// # Safety
///
/// `tag` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn DcgmFieldGetByTag(tag: *const c_char) -> dcgm_field_meta_p {
    if tag.is_null() || !INITIALIZED.load(Ordering::SeqCst) {
        return std::ptr::null();
    }
    // SAFETY: non-null, NUL-terminated per the contract.
    let Ok(t) = (unsafe { CStr::from_ptr(tag) }).to_str() else {
        return std::ptr::null();
    };
    field_by_tag(t).map_or(std::ptr::null(), |f| DcgmFieldGetById(f.id))
}

/// Name of an entity group, as the library spells it.
#[unsafe(no_mangle)]
pub extern "C" fn DcgmFieldsGetEntityGroupString(
    entityGroupId: dcgm_field_entity_group_t,
) -> *const c_char {
    static NAMES: OnceLock<Vec<std::ffi::CString>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        (0..DCGM_FE_COUNT)
            .map(|g| std::ffi::CString::new(entity_group_name(g)).unwrap_or_default())
            .collect()
    });
    names
        .get(entityGroupId as usize)
        .unwrap_or(&names[0])
        .as_ptr()
}
