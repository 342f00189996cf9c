//! Profiling fields a host engine cannot serve.
//!
//! DCGM's profiling fields (`DCGM_FI_PROF_*`, DCGM_FI_PROF_GR_ENGINE_ACTIVE and on) come from a
//! module of their own, which is absent where it is not installed or not supported (builds
//! without it, GPUs without profiling metrics, an engine that denylists it, a module another
//! client holds). `dcgmWatchFields` then refuses the whole field group. A reader asked for
//! profiling fields there reads the other fields without them, and says so once.

use dcgm::{Error, FieldId, ReturnCode};

/// Whether `field` is a profiling field.
pub(crate) fn is_profiling(field: FieldId) -> bool {
    field.is_known() && field.name().starts_with("DCGM_FI_PROF_")
}

/// Whether DCGM refused a watch the way it refuses profiling fields it cannot serve. Any
/// other failure (a lost connection, a timeout) is not a reason to drop them.
pub(crate) fn is_refusal(e: &Error) -> bool {
    matches!(
        e,
        Error::Dcgm {
            code: ReturnCode::NotSupported
                | ReturnCode::RequiresRoot
                | ReturnCode::NoPermission
                | ReturnCode::ModuleNotLoaded
                | ReturnCode::InUse
                | ReturnCode::ProfilingNotSupported
                | ReturnCode::ProfilingLibraryError
                | ReturnCode::ProfilingMultiPass
                | ReturnCode::GpuNotSupported
                | ReturnCode::InsufficientDriverVersion
                | ReturnCode::FieldUnsupportedByApi,
            ..
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiling_fields_are_the_prof_family_and_refusals_are_dcgms_codes() {
        assert!(is_profiling(
            FieldId::parse("DCGM_FI_PROF_SM_ACTIVE").unwrap()
        ));
        assert!(!is_profiling(
            FieldId::parse("DCGM_FI_DEV_GPU_TEMP").unwrap()
        ));
        assert!(!is_profiling(FieldId(65000)));
        let dcgm = |code| Error::Dcgm {
            code,
            call: "dcgmWatchFields",
            message: None,
        };
        assert!(is_refusal(&dcgm(ReturnCode::ModuleNotLoaded)));
        assert!(!is_refusal(&dcgm(ReturnCode::ConnectionNotValid)));
        assert!(!is_refusal(&dcgm(ReturnCode::Timeout)));
    }
}
