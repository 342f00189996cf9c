//! How DCGM versions its structs: the byte size in bits 0–23, the version number in bits 24–31.

/// Builds a DCGM struct version word the way DCGM does: `size | (version << 24)`.
///
/// ```
/// use dcgm_sys::{make_version, dcgmFieldValue_v1, dcgmFieldValue_version1};
/// assert_eq!(make_version(size_of::<dcgmFieldValue_v1>(), 1), dcgmFieldValue_version1);
/// assert_eq!(dcgmFieldValue_version1, 0x0100_1018);
/// ```
pub const fn make_version(size: usize, version: u32) -> u32 {
    assert!(size < (1 << 24), "DCGM structs must stay below 16 MiB");
    (size as u32) | (version << 24)
}

/// The struct size encoded in a version word.
pub const fn version_size(version_word: u32) -> usize {
    (version_word & 0x00ff_ffff) as usize
}

/// The version number encoded in a version word.
pub const fn version_number(version_word: u32) -> u32 {
    version_word >> 24
}

/// A versioned DCGM struct: its first member is `unsigned int version`, which must hold
/// [`Versioned::VERSION`] before the struct is handed to the library.
///
/// # Safety
///
/// Implementors must be `#[repr(C)]` with a `u32` version word at offset 0, and valid when
/// all bytes are zero.
pub unsafe trait Versioned: crate::Zeroable {
    /// The version word the library expects for this struct.
    const VERSION: u32;

    /// A zeroed value with its version word set, ready to pass to the library.
    fn new_versioned() -> Self
    where
        Self: Sized,
    {
        let mut v = crate::zeroed::<Self>();
        v.set_version();
        v
    }

    /// A zeroed, heap-allocated value with its version word set. Use this for the large
    /// structs (health and diagnostic responses are over a megabyte).
    fn boxed_versioned() -> Box<Self>
    where
        Self: Sized,
    {
        let mut v = crate::boxed_zeroed::<Self>();
        v.set_version();
        v
    }

    /// Writes [`Versioned::VERSION`] into the version word.
    fn set_version(&mut self)
    where
        Self: Sized,
    {
        // SAFETY: the trait's contract puts a u32 version word at offset 0 of a repr(C) struct.
        unsafe { (self as *mut Self).cast::<u32>().write(Self::VERSION) }
    }
}

/// Declares a version constant for a struct, built from its size, with compile-time checks of
/// the size and of the resulting word against the numbers DCGM 4.6 uses.
#[macro_export]
macro_rules! versioned_struct {
    ($ty:ident, $constant:ident = $ver:literal, size = $size:literal, word = $word:literal) => {
        #[doc = concat!("Version word of [`", stringify!($ty), "`] (`", stringify!($word), "`).")]
        pub const $constant: u32 = $crate::make_version(::core::mem::size_of::<$ty>(), $ver);
        const _: () = assert!(::core::mem::size_of::<$ty>() == $size);
        const _: () = assert!($constant == $word);
        // SAFETY: the struct is repr(C), starts with the u32 version word and is plain data.
        unsafe impl $crate::Versioned for $ty {
            const VERSION: u32 = $constant;
        }
        // SAFETY: plain-old-data struct of integers, floats, arrays and raw pointers.
        unsafe impl $crate::Zeroable for $ty {}
    };
}

/// Declares a compile-time size (and optionally alignment) check for an unversioned struct and
/// marks it as valid when zeroed.
#[macro_export]
macro_rules! plain_struct {
    ($ty:ident, size = $size:literal, align = $align:literal) => {
        const _: () = assert!(::core::mem::size_of::<$ty>() == $size);
        const _: () = assert!(::core::mem::align_of::<$ty>() == $align);
        // SAFETY: plain-old-data struct of integers, floats, arrays and raw pointers.
        unsafe impl $crate::Zeroable for $ty {}
    };
}
