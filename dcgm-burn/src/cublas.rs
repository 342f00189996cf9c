//! The cuBLAS functions burn calls, resolved by name in the library found (cuBLAS 12 or 13),
//! with cudarc's types and enums. cudarc's own loader wants every symbol of the one CUDA
//! version it was built for, and PyTorch ships cuBLAS 13 as well as 12: resolving only these
//! five keeps any cuBLAS from 12.0 on usable.

use std::ffi::{c_int, c_void};
use std::path::Path;

use cudarc::cublas::sys::{
    cublasComputeType_t, cublasGemmAlgo_t, cublasHandle_t, cublasMath_t, cublasOperation_t,
    cudaDataType, cudaStream_t,
};

/// `cublasCreate_v2`.
pub type Create = unsafe extern "C" fn(*mut cublasHandle_t) -> c_int;
/// `cublasDestroy_v2`.
pub type Destroy = unsafe extern "C" fn(cublasHandle_t) -> c_int;
/// `cublasSetStream_v2`.
pub type SetStream = unsafe extern "C" fn(cublasHandle_t, cudaStream_t) -> c_int;
/// `cublasSetMathMode`.
pub type SetMathMode = unsafe extern "C" fn(cublasHandle_t, cublasMath_t) -> c_int;
/// `cublasGetVersion_v2`.
pub type GetVersion = unsafe extern "C" fn(cublasHandle_t, *mut c_int) -> c_int;
/// `cublasGemmEx`.
pub type GemmEx = unsafe extern "C" fn(
    cublasHandle_t,
    cublasOperation_t,
    cublasOperation_t,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    cudaDataType,
    c_int,
    *const c_void,
    cudaDataType,
    c_int,
    *const c_void,
    *mut c_void,
    cudaDataType,
    c_int,
    cublasComputeType_t,
    cublasGemmAlgo_t,
) -> c_int;

/// A loaded cuBLAS: the functions burn calls.
pub struct Cublas {
    /// Kept loaded while the functions are used.
    _lib: libloading::Library,
    /// `cublasCreate_v2`.
    pub create: Create,
    /// `cublasDestroy_v2`.
    pub destroy: Destroy,
    /// `cublasSetStream_v2`.
    pub set_stream: SetStream,
    /// `cublasSetMathMode`.
    pub set_math_mode: SetMathMode,
    /// `cublasGetVersion_v2`.
    pub get_version: GetVersion,
    /// `cublasGemmEx`.
    pub gemm_ex: GemmEx,
}

impl Cublas {
    /// Loads cuBLAS from `path` (a file, or a soname for the system loader) and resolves the
    /// functions; an error says which is missing.
    pub fn load(path: &Path) -> Result<Self, String> {
        // SAFETY: loading cuBLAS runs its initialisers only.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| e.to_string())?;
        // SAFETY: each symbol is looked up with the C signature cuBLAS's header gives it
        // (cublas_api.h, the same in CUDA 12 and 13).
        unsafe {
            Ok(Self {
                create: *lib
                    .get::<Create>(b"cublasCreate_v2\0")
                    .map_err(|e| e.to_string())?,
                destroy: *lib
                    .get::<Destroy>(b"cublasDestroy_v2\0")
                    .map_err(|e| e.to_string())?,
                set_stream: *lib
                    .get::<SetStream>(b"cublasSetStream_v2\0")
                    .map_err(|e| e.to_string())?,
                set_math_mode: *lib
                    .get::<SetMathMode>(b"cublasSetMathMode\0")
                    .map_err(|e| e.to_string())?,
                get_version: *lib
                    .get::<GetVersion>(b"cublasGetVersion_v2\0")
                    .map_err(|e| e.to_string())?,
                gemm_ex: *lib
                    .get::<GemmEx>(b"cublasGemmEx\0")
                    .map_err(|e| e.to_string())?,
                _lib: lib,
            })
        }
    }
}

/// cuBLAS's success status (`CUBLAS_STATUS_SUCCESS`).
pub const SUCCESS: c_int = 0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_an_error_naming_it() {
        let e = Cublas::load(Path::new("/nonexistent/libcublas.so.12"))
            .err()
            .unwrap();
        assert!(e.contains("/nonexistent/libcublas.so.12"), "{e}");
    }

    #[test]
    fn a_library_without_the_functions_is_an_error_naming_the_first_missing() {
        // libm loads everywhere and has no cuBLAS.
        let e = Cublas::load(Path::new("libm.so.6")).err().unwrap();
        assert!(e.contains("cublasCreate_v2"), "{e}");
    }
}
