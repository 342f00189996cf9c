//! Status objects: the per-GPU errors that configuration and policy calls collect, turned
//! into one [`Error`].

use dcgm_sys::*;

use crate::error::{Error, Result, ReturnCode};
use crate::field::FieldId;
use crate::library::{Lib, ffi};

/// One per-GPU error popped from a status object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StatusError {
    pub gpu: u32,
    pub field: Option<FieldId>,
    pub code: ReturnCode,
}

impl std::fmt::Display for StatusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GPU {}", self.gpu)?;
        if let Some(field) = self.field {
            write!(f, " {field}")?;
        }
        write!(f, ": {} ({})", self.code.name(), self.code.description())
    }
}

/// A `dcgmStatus_t`, destroyed on drop.
pub(crate) struct Status<'a> {
    lib: &'a Lib,
    raw: dcgmStatus_t,
}

impl<'a> Status<'a> {
    #[doc(alias = "dcgmStatusCreate")]
    pub fn new(lib: &'a Lib) -> Result<Self> {
        let mut raw: dcgmStatus_t = 0;
        // SAFETY: a valid out-pointer.
        unsafe { ffi!(lib, dcgmStatusCreate(&mut raw)) }?;
        Ok(Self { lib, raw })
    }

    /// The C handle, for the calls that fill it (inside the crate only: the type is not
    /// public).
    pub(crate) fn raw(&self) -> dcgmStatus_t {
        self.raw
    }

    /// Pops every error (at most 1024, as a guard against a library that never empties).
    #[doc(alias = "dcgmStatusPopError")]
    pub fn drain(&self) -> Vec<StatusError> {
        let mut out = Vec::new();
        let Ok(pop) = self.lib.sym(self.lib.raw.dcgmStatusPopError()) else {
            return out;
        };
        for _ in 0..1024 {
            let mut e: dcgmErrorInfo_t = zeroed();
            // SAFETY: a live status handle and a valid out-pointer.
            if unsafe { pop(self.raw, &mut e) } != DCGM_ST_OK {
                break;
            }
            out.push(StatusError {
                gpu: e.gpuId,
                field: u16::try_from(e.fieldId)
                    .ok()
                    .filter(|f| *f != 0)
                    .map(FieldId),
                code: ReturnCode::from_raw(e.status),
            });
        }
        out
    }

    /// Combines the call's result with the errors collected: a failed call gets the per-GPU
    /// errors in its message; a successful call with per-GPU errors fails with the first one.
    pub fn finish(&self, call: &'static str, r: Result<()>) -> Result<()> {
        let errors = self.drain();
        if errors.is_empty() {
            return r;
        }
        let list = errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        match r {
            Err(Error::Dcgm {
                code,
                call,
                message,
            }) => Err(Error::Dcgm {
                code,
                call,
                message: Some(match message {
                    Some(m) => format!("{m}; per GPU: {list}"),
                    None => format!("{}; per GPU: {list}", code.description()),
                }),
            }),
            Err(e) => Err(e),
            Ok(()) => Err(Error::Dcgm {
                code: errors[0].code,
                call,
                message: Some(format!(
                    "the call succeeded for some GPUs only; per GPU: {list}"
                )),
            }),
        }
    }
}

impl Drop for Status<'_> {
    fn drop(&mut self) {
        let lib = self.lib;
        // SAFETY: the status handle was created by this object and is destroyed once.
        let _ = unsafe { ffi!(lib, dcgmStatusDestroy(self.raw)) };
    }
}
