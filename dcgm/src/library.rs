//! A loaded libdcgm shared by every handle on it, and the checked way to call into it.

use std::ffi::CStr;

use dcgm_sys::*;

use crate::error::{Error, Result, ReturnCode};
use crate::release::{Capability, DcgmVersion};

/// A loaded libdcgm.
#[derive(Debug)]
pub(crate) struct Lib {
    pub raw: DcgmLibrary,
    version: Option<String>,
    release: Option<DcgmVersion>,
}

impl Lib {
    pub fn new(raw: DcgmLibrary) -> Self {
        let version = raw.version_string();
        let release = version.as_deref().and_then(DcgmVersion::parse);
        Self {
            raw,
            version,
            release,
        }
    }

    /// The library's version string, if it reports one.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// The library's release, if it reports a version.
    pub fn release(&self) -> Option<DcgmVersion> {
        self.release
    }

    /// `NotInRelease` when `call` needs a newer release than the loaded one.
    fn not_in_release(&self, call: &str) -> Option<Error> {
        let capability = Capability::of_call(call)?;
        let have = self.release?;
        (have < capability.since()).then_some(Error::NotInRelease {
            capability,
            needs: capability.since(),
            have,
        })
    }

    /// A function pointer, or `SymbolNotAvailable` (`NotInRelease` for a function the loaded
    /// release is too old to have).
    pub fn sym<T>(&self, r: std::result::Result<T, SymbolError>) -> Result<T> {
        r.map_err(|e| {
            self.not_in_release(e.symbol)
                .unwrap_or_else(|| Error::SymbolNotAvailable {
                    symbol: e.symbol,
                    library_version: self.version.clone(),
                })
        })
    }

    /// Turns a return code into a `Result`, with the library's message for errors.
    pub fn check(&self, call: &'static str, rc: dcgmReturn_t) -> Result<()> {
        if rc == DCGM_ST_OK {
            return Ok(());
        }
        if rc == DCGM_ST_CONNECTION_NOT_VALID {
            return Err(Error::ConnectionLost { call });
        }
        // A struct version or a function the release is too old for (a release that exports
        // the symbol and answers FUNCTION_NOT_FOUND, as dcgm-sim's older personalities do).
        if (rc == DCGM_ST_VER_MISMATCH || rc == DCGM_ST_FUNCTION_NOT_FOUND)
            && let Some(e) = self.not_in_release(call)
        {
            return Err(e);
        }
        let message = self.raw.errorString().ok().and_then(|f| {
            // SAFETY: errorString takes a plain code and returns NULL or a static C string.
            let p = unsafe { f(rc) };
            // SAFETY: non-null pointers from errorString are NUL-terminated static strings.
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        });
        Err(Error::Dcgm {
            code: ReturnCode::from_raw(rc),
            call,
            message,
        })
    }
}

/// Calls a libdcgm function through a [`Lib`] and checks its return code:
/// `ffi!(lib, dcgmGroupDestroy(handle, id))` evaluates to `Result<()>`. The call itself is
/// unsafe, so the macro must be used inside an `unsafe` block whose SAFETY comment covers the
/// arguments.
macro_rules! ffi {
    ($lib:expr, $name:ident ( $($arg:expr),* $(,)? )) => {{
        match $lib.sym($lib.raw.$name()) {
            Ok(f) => {
                let rc = f($($arg),*);
                $lib.check(stringify!($name), rc)
            }
            Err(e) => Err(e),
        }
    }};
}
pub(crate) use ffi;

/// Reads a fixed C string buffer.
pub(crate) fn c_buf(buf: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Writes a string into a fixed C buffer (truncating, NUL-terminated).
pub(crate) fn write_c_buf(dst: &mut [std::ffi::c_char], s: &str) {
    let n = s.len().min(dst.len().saturating_sub(1));
    for (d, b) in dst.iter_mut().zip(&s.as_bytes()[..n]) {
        *d = *b as std::ffi::c_char;
    }
    if let Some(d) = dst.get_mut(n) {
        *d = 0;
    }
}
