//! Raw FFI to the NVIDIA DCGM 4.x C API, loaded at run time.
//!
//! Nothing here links against libdcgm. [`DcgmLibrary::open`] finds the library
//! (`DCGM_LIB_PATH`, an explicit path, the sonames `libdcgm.so.4` and `libdcgm.so.3`, then the
//! distribution directories) and resolves every function once into a [`DcgmApi`] table;
//! a function the library lacks is `None` and its accessor returns a [`SymbolError`].
//!
//! Types, constants and enum values keep their C names (`dcgmFieldValue_v1`,
//! `dcgmFieldValue_version1`, `DCGM_ST_BADPARAM`, `DCGM_FI_DEV_GPU_TEMP_CELSIUS`), so the DCGM
//! C documentation applies unchanged. Every struct has a compile-time size check and every
//! version constant is computed from the struct's size, as DCGM computes it.
//!
//! ```no_run
//! use dcgm_sys::*;
//! let lib = DcgmLibrary::open()?;
//! let init = lib.dcgmInit()?;
//! // SAFETY: dcgmInit takes no arguments.
//! let rc = unsafe { init() };
//! assert_eq!(rc, DCGM_ST_OK);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Most users want the safe `dcgm` crate instead.

#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals)]

mod blank;
mod fields;
mod functions;
#[cfg(feature = "layout")]
pub mod layout;
mod library;
mod raw_call;
mod return_codes;
// The C-mirroring structs keep DCGM's names and layouts; their fields are documented where
// DCGM's meaning is not obvious from the name, not everywhere.
#[allow(missing_docs)]
mod types;
mod version;
mod zeroed;

#[cfg(feature = "bindgen")]
#[allow(dead_code, clippy::all, unnecessary_transmutes)]
mod bindgen_layout {
    //! Layout checks of the hand-written structs against bindings generated from the installed
    //! DCGM headers (the `bindgen` feature).
    #[allow(unused_imports)]
    use crate::*;
    include!(concat!(env!("OUT_DIR"), "/bindgen_layout_checks.rs"));
}

pub use blank::*;
pub use fields::*;
pub use functions::*;
pub use library::{
    DCGM_LIB_PATH_ENV, DCGM_PACKAGE, DISTRIBUTION_DIRS, DcgmLibrary, LibraryLoader, LoadAttempt,
    LoadError, SONAMES, SymbolError,
};
pub use raw_call::{FromRawArg, IntoRawReturn, RawArg, RawCallError};
pub use return_codes::*;
pub use types::*;
pub use version::*;
pub use zeroed::*;

// The README's examples compile as doc tests (`cargo test --doc`).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
