//! `dcgmReturn_t`: the status every DCGM call returns.

/// The C enum behind [`dcgmReturn_t`].
pub type dcgmReturn_enum = i32;
/// Status returned by every DCGM function: [`DCGM_ST_OK`] or a negative error code.
pub type dcgmReturn_t = dcgmReturn_enum;

macro_rules! return_codes {
    ($( $name:ident = $value:literal, $text:literal; )*) => {
        $(
            #[doc = $text]
            pub const $name: dcgmReturn_t = $value;
        )*

        /// Every `dcgmReturn_t` value DCGM 4.6 defines: `(code, C name, description)`.
        pub static RETURN_CODES: &[(dcgmReturn_t, &str, &str)] = &[
            $( ($value, stringify!($name), $text), )*
        ];
    };
}

return_codes! {
    DCGM_ST_OK = 0, "Success.";
    DCGM_ST_BADPARAM = -1, "A parameter passed to the function is invalid.";
    DCGM_ST_GENERIC_ERROR = -3, "An unspecified error occurred.";
    DCGM_ST_MEMORY = -4, "Out of memory.";
    DCGM_ST_NOT_CONFIGURED = -5, "The setting has not been configured.";
    DCGM_ST_NOT_SUPPORTED = -6, "The feature is not supported.";
    DCGM_ST_INIT_ERROR = -7, "DCGM failed to initialise.";
    DCGM_ST_NVML_ERROR = -8, "NVML returned an error.";
    DCGM_ST_PENDING = -9, "The object is busy with another operation.";
    DCGM_ST_UNINITIALIZED = -10, "DCGM (or the object) is not initialised.";
    DCGM_ST_TIMEOUT = -11, "The operation timed out.";
    DCGM_ST_VER_MISMATCH = -12, "The struct version does not match what the library understands.";
    DCGM_ST_UNKNOWN_FIELD = -13, "The field id is not known to DCGM.";
    DCGM_ST_NO_DATA = -14, "No data is available yet.";
    DCGM_ST_STALE_DATA = -15, "The data is stale.";
    DCGM_ST_NOT_WATCHED = -16, "The field is not being watched.";
    DCGM_ST_NO_PERMISSION = -17, "Permission denied for this action.";
    DCGM_ST_GPU_IS_LOST = -18, "The GPU is no longer reachable.";
    DCGM_ST_RESET_REQUIRED = -19, "The GPU needs a reset.";
    DCGM_ST_FUNCTION_NOT_FOUND = -20, "The requested function was not found in the library.";
    DCGM_ST_CONNECTION_NOT_VALID = -21, "The connection to the host engine is no longer valid.";
    DCGM_ST_GPU_NOT_SUPPORTED = -22, "This GPU is not supported by DCGM.";
    DCGM_ST_GROUP_INCOMPATIBLE = -23, "The GPUs of the group are not compatible with each other for this operation.";
    DCGM_ST_MAX_LIMIT = -24, "The maximum number of objects has been reached.";
    DCGM_ST_LIBRARY_NOT_FOUND = -25, "The DCGM library could not be found.";
    DCGM_ST_DUPLICATE_KEY = -26, "The key already exists.";
    DCGM_ST_GPU_IN_SYNC_BOOST_GROUP = -27, "The GPU already belongs to a sync boost group.";
    DCGM_ST_GPU_NOT_IN_SYNC_BOOST_GROUP = -28, "The GPU does not belong to a sync boost group.";
    DCGM_ST_REQUIRES_ROOT = -29, "The host engine must run as root for this operation.";
    DCGM_ST_NVVS_ERROR = -30, "The diagnostic ran and reported an error.";
    DCGM_ST_INSUFFICIENT_SIZE = -31, "An argument is too small for the result.";
    DCGM_ST_FIELD_UNSUPPORTED_BY_API = -32, "This API does not support the given field id.";
    DCGM_ST_MODULE_NOT_LOADED = -33, "The DCGM module serving this request is not loaded.";
    DCGM_ST_IN_USE = -34, "The resource is in use.";
    DCGM_ST_GROUP_IS_EMPTY = -35, "The group is empty.";
    DCGM_ST_PROFILING_NOT_SUPPORTED = -36, "Profiling is not supported for this GPU or group.";
    DCGM_ST_PROFILING_LIBRARY_ERROR = -37, "The profiling library returned an unrecoverable error.";
    DCGM_ST_PROFILING_MULTI_PASS = -38, "The requested profiling metrics need more than one pass.";
    DCGM_ST_DIAG_ALREADY_RUNNING = -39, "A diagnostic is already running.";
    DCGM_ST_DIAG_BAD_JSON = -40, "The diagnostic returned unparsable JSON.";
    DCGM_ST_DIAG_BAD_LAUNCH = -41, "The diagnostic could not be launched.";
    DCGM_ST_DIAG_UNUSED = -42, "Unused.";
    DCGM_ST_DIAG_THRESHOLD_EXCEEDED = -43, "A field value reached the error threshold.";
    DCGM_ST_INSUFFICIENT_DRIVER_VERSION = -44, "The installed driver is too old for this API.";
    DCGM_ST_INSTANCE_NOT_FOUND = -45, "The GPU instance does not exist.";
    DCGM_ST_COMPUTE_INSTANCE_NOT_FOUND = -46, "The compute instance does not exist.";
    DCGM_ST_CHILD_NOT_KILLED = -47, "A child process could not be stopped.";
    DCGM_ST_3RD_PARTY_LIBRARY_ERROR = -48, "A third-party library reported an error.";
    DCGM_ST_INSUFFICIENT_RESOURCES = -49, "Not enough resources are available.";
    DCGM_ST_PLUGIN_EXCEPTION = -50, "A diagnostic plugin raised an exception.";
    DCGM_ST_NVVS_ISOLATE_ERROR = -51, "The diagnostic found an error that calls for isolating the GPU.";
    DCGM_ST_NVVS_BINARY_NOT_FOUND = -52, "The diagnostic binary was not found.";
    DCGM_ST_NVVS_KILLED = -53, "The diagnostic process was killed by a signal.";
    DCGM_ST_PAUSED = -54, "The host engine and its modules are paused.";
    DCGM_ST_ALREADY_INITIALIZED = -55, "Already initialised.";
    DCGM_ST_NVML_NOT_LOADED = -56, "NVML is not loaded.";
    DCGM_ST_NVML_DRIVER_TIMEOUT = -57, "NVML reported a driver timeout.";
    DCGM_ST_NVVS_NO_AVAILABLE_TEST = -58, "The diagnostic has no test to run.";
    DCGM_ST_MNDIAG_CONNECTION_NOT_AVAILABLE = -59, "No connection is authorised for multi-node diagnostics.";
    DCGM_ST_MNDIAG_CONNECTION_UNAUTHORIZED = -60, "The connection is not authorised for multi-node diagnostics.";
    DCGM_ST_REMOTE_SSH_CONNECTION_FAILED = -61, "An SSH connection to a remote host engine failed.";
    DCGM_ST_CHILD_SPAWN_FAILED = -62, "A child process could not be started.";
    DCGM_ST_FILE_IO_ERROR = -63, "A file operation failed.";
    DCGM_ST_CHILD_SIGNAL_RECEIVED = -64, "A child process received a signal.";
    DCGM_ST_CALLER_ALREADY_STOPPED = -65, "The caller has already stopped.";
    DCGM_ST_DIAG_STOPPED = -66, "The diagnostic was stopped.";
    DCGM_ST_GPUS_DETACHED = -67, "The GPUs are detached.";
}

/// The C name of a return code (`"DCGM_ST_BADPARAM"`), or `None` for a value DCGM 4.6 does not
/// define.
pub fn return_code_name(code: dcgmReturn_t) -> Option<&'static str> {
    RETURN_CODES.iter().find(|r| r.0 == code).map(|r| r.1)
}

/// A one-line description of a return code, or `None` for an unknown value.
pub fn return_code_description(code: dcgmReturn_t) -> Option<&'static str> {
    RETURN_CODES.iter().find(|r| r.0 == code).map(|r| r.2)
}

/// The name pydcgm gives the exception class of a return code, without its `DCGMError_`
/// prefix: each `_`-separated word of the C name after `DCGM_ST_`, capitalised
/// (`DCGM_ST_NOT_SUPPORTED` → `NotSupported`, `DCGM_ST_3RD_PARTY_LIBRARY_ERROR` →
/// `3rdPartyLibraryError`).
///
/// ```
/// assert_eq!(dcgm_sys::python_error_suffix("DCGM_ST_BADPARAM"), "Badparam");
/// assert_eq!(dcgm_sys::python_error_suffix("DCGM_ST_DUPLICATE_KEY"), "DuplicateKey");
/// ```
pub fn python_error_suffix(c_name: &str) -> String {
    let rest = c_name.strip_prefix("DCGM_ST_").unwrap_or(c_name);
    rest.split('_')
        .map(|w| {
            let mut cs = w.chars();
            match cs.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + &cs.as_str().to_ascii_lowercase(),
                None => String::new(),
            }
        })
        .collect()
}
