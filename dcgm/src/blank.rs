//! One rule for the blank sentinels DCGM leaves in struct-shaped answers (attributes, config,
//! topology, stats, policy, diagnostics, health, MIG, CPU, NVLink): every such field decodes
//! through [`NonBlank`] into an `Option`, so no sentinel number reaches a user.

use dcgm_sys::{fp64_blank_kind, int32_blank_kind, int64_blank_kind, str_blank_kind};

/// Which kind of "no value" a blank stands for: DCGM marks a value it does not have with a
/// sentinel number, which this crate never shows as data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BlankKind {
    /// No value.
    Blank,
    /// The entity was not found.
    NotFound,
    /// The field is not supported on this entity.
    NotSupported,
    /// The caller may not read this field.
    NotPermissioned,
}

// The C-side kind converts only inside the crate and through `raw::Binding`, so the safe API
// names no type of the C bindings.
impl BlankKind {
    pub(crate) fn from_raw(k: dcgm_sys::BlankKind) -> Self {
        match k {
            dcgm_sys::BlankKind::Blank => Self::Blank,
            dcgm_sys::BlankKind::NotFound => Self::NotFound,
            dcgm_sys::BlankKind::NotSupported => Self::NotSupported,
            dcgm_sys::BlankKind::NotPermissioned => Self::NotPermissioned,
        }
    }

    pub(crate) fn raw(self) -> dcgm_sys::BlankKind {
        match self {
            Self::Blank => dcgm_sys::BlankKind::Blank,
            Self::NotFound => dcgm_sys::BlankKind::NotFound,
            Self::NotSupported => dcgm_sys::BlankKind::NotSupported,
            Self::NotPermissioned => dcgm_sys::BlankKind::NotPermissioned,
        }
    }
}

/// A value that DCGM can leave blank.
pub(crate) trait NonBlank: Sized {
    /// The value, or `None` for any of DCGM's blank sentinels.
    fn non_blank(self) -> Option<Self>;
}

impl NonBlank for i32 {
    fn non_blank(self) -> Option<Self> {
        int32_blank_kind(self).is_none().then_some(self)
    }
}

impl NonBlank for u32 {
    /// Unsigned struct members hold the 32-bit sentinels (`0x7fff_fff0..`), the low half of the
    /// 64-bit ones (`0xffff_fff0..`, seen in the real library's memory sizes) or `u32::MAX`.
    fn non_blank(self) -> Option<Self> {
        let blank = int32_blank_kind(self as i32).is_some() || self >= 0xffff_fff0;
        (!blank).then_some(self)
    }
}

impl NonBlank for i64 {
    fn non_blank(self) -> Option<Self> {
        int64_blank_kind(self).is_none().then_some(self)
    }
}

impl NonBlank for u64 {
    fn non_blank(self) -> Option<Self> {
        let blank = int64_blank_kind(self as i64).is_some() || self >= 0xffff_ffff_ffff_fff0;
        (!blank).then_some(self)
    }
}

impl NonBlank for f64 {
    fn non_blank(self) -> Option<Self> {
        (fp64_blank_kind(self).is_none() && self.is_finite()).then_some(self)
    }
}

impl NonBlank for String {
    /// Empty strings and the `<<<NULL>>>`-style sentinels are blank.
    fn non_blank(self) -> Option<Self> {
        (!self.is_empty() && str_blank_kind(&self).is_none()).then_some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::NonBlank;

    #[test]
    fn every_sentinel_form_is_blank() {
        for v in [
            2_147_483_632u32,
            2_147_483_635,
            4_294_967_280,
            4_294_967_295,
        ] {
            assert_eq!(v.non_blank(), None, "{v}");
        }
        assert_eq!(0x7fff_ffff_ffff_fff0i64.non_blank(), None);
        assert_eq!(9_223_372_036_854_775_792u64.non_blank(), None);
        assert_eq!(140_737_488_355_328.0f64.non_blank(), None);
        assert_eq!(f64::NAN.non_blank(), None);
        assert_eq!("<<<NULL>>>".to_string().non_blank(), None);
        assert_eq!(String::new().non_blank(), None);
    }

    #[test]
    fn blank_kinds_convert_both_ways_through_raw_binding() {
        use crate::raw::Binding;
        use dcgm_sys::BlankKind as Raw;
        let pairs = [
            (Raw::Blank, super::BlankKind::Blank),
            (Raw::NotFound, super::BlankKind::NotFound),
            (Raw::NotSupported, super::BlankKind::NotSupported),
            (Raw::NotPermissioned, super::BlankKind::NotPermissioned),
        ];
        for (raw, safe) in pairs {
            assert_eq!(<super::BlankKind as Binding>::from_raw(raw), safe);
            assert_eq!(Binding::raw(&safe), raw);
        }
    }

    #[test]
    fn ordinary_values_pass() {
        assert_eq!(700u32.non_blank(), Some(700));
        assert_eq!(143_771u32.non_blank(), Some(143_771));
        assert_eq!(2_147_483_631u32.non_blank(), Some(2_147_483_631));
        assert_eq!((-5i32).non_blank(), Some(-5));
        assert_eq!(1.5f64.non_blank(), Some(1.5));
        assert_eq!("H200".to_string().non_blank().as_deref(), Some("H200"));
    }
}
