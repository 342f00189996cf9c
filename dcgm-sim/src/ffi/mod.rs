//! The exported C API, one file per area. Every function catches panics (returning
//! `DCGM_ST_GENERIC_ERROR`), checks its pointers and struct versions, and holds the simulator
//! lock only while it touches state: client callbacks always run unlocked.

pub mod config;
pub mod diag;
pub mod discovery;
pub mod driver_bind;
pub mod failure_reasons;
pub mod fields;
pub mod groups;
pub mod health;
pub mod hostengine_settings;
pub mod introspection;
pub mod lifecycle;
pub mod modules;
pub mod nvlink;
pub mod policy;
pub mod prof;
pub mod samples;
mod sigcheck;
pub mod sim_extensions;
pub mod stats;
pub mod test_api;
pub mod topology;
pub mod unsupported;
pub mod values;
pub mod vgpu;

use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use dcgm_sys::*;

/// Runs an API body, turning a panic into `DCGM_ST_GENERIC_ERROR`.
pub fn guard(f: impl FnOnce() -> Result<(), dcgmReturn_t>) -> dcgmReturn_t {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => DCGM_ST_OK,
        Ok(Err(e)) => e,
        Err(_) => DCGM_ST_GENERIC_ERROR,
    }
}

/// Runs the body of the exported function `symbol` as [`guard`] does, or answers
/// `DCGM_ST_FUNCTION_NOT_FOUND` when the release the simulator speaks does not export it
/// ([`crate::personality::SYMBOLS`]): the simulator cannot hide a symbol from `dlsym`.
pub fn guard_symbol(
    symbol: &'static str,
    f: impl FnOnce() -> Result<(), dcgmReturn_t>,
) -> dcgmReturn_t {
    if !crate::personality::has_symbol(symbol) {
        return DCGM_ST_FUNCTION_NOT_FOUND;
    }
    guard(f)
}

/// The version word of a versioned struct from a client pointer: `DCGM_ST_BADPARAM` for NULL,
/// `DCGM_ST_VER_MISMATCH` unless the release the simulator speaks accepts it for `s`. The
/// caller then reads the struct in the layout the word names.
///
/// # Safety
///
/// `p` must be NULL or valid for reads of the u32 version word every versioned struct starts
/// with.
pub unsafe fn version_word<T>(
    p: *const T,
    s: crate::personality::Struct,
) -> Result<u32, dcgmReturn_t> {
    if p.is_null() {
        return Err(DCGM_ST_BADPARAM);
    }
    // SAFETY: non-null, and valid for the version word per the contract.
    let word = unsafe { p.cast::<u32>().read() };
    if crate::personality::accepts(s, word) {
        Ok(word)
    } else {
        Err(DCGM_ST_VER_MISMATCH)
    }
}

/// A mutable reference from a client pointer, or `DCGM_ST_BADPARAM` for NULL.
///
/// # Safety
///
/// `p` must be NULL or valid for writes of `T` for the duration of the call.
pub unsafe fn out<'a, T>(p: *mut T) -> Result<&'a mut T, dcgmReturn_t> {
    // SAFETY: the caller guarantees validity when non-null.
    unsafe { p.as_mut() }.ok_or(DCGM_ST_BADPARAM)
}

/// A versioned struct from a client pointer: `DCGM_ST_BADPARAM` for NULL,
/// `DCGM_ST_VER_MISMATCH` unless its version word is one of `accepted`.
///
/// # Safety
///
/// As for [`out`].
pub unsafe fn versioned<'a, T>(p: *mut T, accepted: &[u32]) -> Result<&'a mut T, dcgmReturn_t> {
    // SAFETY: the caller guarantees validity when non-null.
    let r = unsafe { out(p) }?;
    // SAFETY: every versioned DCGM struct starts with its u32 version word.
    let v = unsafe { *(r as *mut T).cast::<u32>() };
    if accepted.contains(&v) {
        Ok(r)
    } else {
        Err(DCGM_ST_VER_MISMATCH)
    }
}

/// A string from a client pointer.
///
/// # Safety
///
/// `p` must be NULL or a NUL-terminated string valid for the call.
pub unsafe fn c_str<'a>(p: *const c_char) -> Result<&'a str, dcgmReturn_t> {
    if p.is_null() {
        return Err(DCGM_ST_BADPARAM);
    }
    // SAFETY: non-null and NUL-terminated per the caller.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| DCGM_ST_BADPARAM)
}

/// Copies `s` into a fixed C buffer, truncating and NUL-terminating.
pub fn write_str(dst: &mut [c_char], s: &str) {
    let n = s.len().min(dst.len().saturating_sub(1));
    for (d, b) in dst.iter_mut().zip(s.as_bytes()[..n].iter()) {
        *d = *b as c_char;
    }
    if let Some(d) = dst.get_mut(n) {
        *d = 0;
    }
}

/// Reads a fixed C buffer as a string.
pub fn read_str(src: &[c_char]) -> String {
    let bytes: Vec<u8> = src
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
