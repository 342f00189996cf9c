//! The load on real GPUs: the CUDA driver and cuBLAS loaded at run time through `cudarc`
//! (`dynamic-loading`: nothing of CUDA is needed to build or start burn), one thread per GPU
//! computing `C = A B` on square matrices again and again with `cublasGemmEx` (tensor cores for
//! bf16, fp16, tf32 and fp64), or with the PTX kernel of [`crate::ptx::MATMUL_F32`] where no
//! cuBLAS loads, and the results check of [`crate::check`].

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::panic::UnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use cudarc::cublas::sys as blas;

use crate::cublas::{self, Cublas};
use cudarc::driver::{
    CudaContext, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg, result, sys,
};

use crate::check::{CHECK_EVERY, Checker};
use crate::dtype::Dtype;
use crate::find;

/// Why the load cannot run on this machine.
#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// `libcuda.so.1` does not load: no NVIDIA driver.
    #[error(
        "no NVIDIA driver: libcuda.so.1 does not load (install the NVIDIA driver, or add \
         --simulate to model the load on dcgm-sim)"
    )]
    NoDriver,
    /// The driver loads but finds no GPU.
    #[error("the NVIDIA driver found no GPU: {0}")]
    NoGpu(String),
    /// A GPU asked for is not one CUDA sees.
    #[error("{0}")]
    NotVisible(String),
}

/// A GPU as the CUDA driver sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    /// Its CUDA ordinal (after `CUDA_VISIBLE_DEVICES`).
    pub ordinal: usize,
    /// Its name.
    pub name: String,
    /// Its PCI address, `dddd:bb:dd` (domain, bus, device; lower-case hex).
    pub pci: String,
}

/// Runs `f`, turning a panic into `None` without printing it: cudarc panics where a library
/// lacks a symbol its bindings expect, and burn says so in one line instead.
fn silently<T>(f: impl FnOnce() -> T + UnwindSafe) -> Option<T> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(f);
    std::panic::set_hook(hook);
    r.ok()
}

/// `dddd:bb:dd` from DCGM's `00000000:18:00.0` (or any `domain:bus:device.function`).
pub fn normalise_pci(id: &str) -> Option<String> {
    let mut parts = id.trim().split(':');
    let (d, b, rest) = (parts.next()?, parts.next()?, parts.next()?);
    let dev = rest.split('.').next()?;
    let hex = |s: &str| u32::from_str_radix(s, 16).ok();
    Some(format!("{:04x}:{:02x}:{:02x}", hex(d)?, hex(b)?, hex(dev)?))
}

/// The GPUs the driver sees, or why none can be used.
pub fn devices() -> Result<Vec<Device>, CudaError> {
    // SAFETY: loads libcuda (if present) and looks its symbols up; nothing is called.
    let present = silently(|| unsafe { sys::is_culib_present() }).unwrap_or(false);
    if !present {
        return Err(CudaError::NoDriver);
    }
    let listed = silently(|| -> Result<Vec<Device>, String> {
        result::init().map_err(|e| format!("{e:?}"))?;
        let n = result::device::get_count().map_err(|e| format!("{e:?}"))?;
        (0..n)
            .map(|i| {
                let dev = result::device::get(i).map_err(|e| format!("{e:?}"))?;
                // SAFETY: `dev` is a device handle the driver just gave.
                let attr = |a| unsafe { result::device::get_attribute(dev, a) };
                use sys::CUdevice_attribute_enum as A;
                let pci = format!(
                    "{:04x}:{:02x}:{:02x}",
                    attr(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID).unwrap_or(0),
                    attr(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID).unwrap_or(0),
                    attr(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID).unwrap_or(0)
                );
                let name = result::device::get_name(dev).unwrap_or_default();
                Ok(Device {
                    ordinal: i as usize,
                    name,
                    pci,
                })
            })
            .collect()
    });
    match listed {
        None => Err(CudaError::NoDriver),
        Some(Err(e)) => Err(CudaError::NoGpu(e)),
        Some(Ok(v)) if v.is_empty() => Err(CudaError::NoGpu("no device".into())),
        Some(Ok(v)) => Ok(v),
    }
}

/// What computes the products.
#[derive(Clone)]
pub enum Engine {
    /// cuBLAS, loaded from this file.
    Cublas {
        /// Where it was loaded from.
        path: PathBuf,
        /// The library.
        lib: Arc<Cublas>,
    },
    /// The PTX kernel, because no cuBLAS loaded (why, per place tried).
    Ptx {
        /// Why no cuBLAS.
        why: String,
    },
}

impl Engine {
    /// cuBLAS from the first of [`find::candidates`] that loads, else the PTX kernel.
    pub fn find(explicit: Option<&Path>) -> Engine {
        let mut why = Vec::new();
        for c in find::candidates(explicit) {
            // cuBLAS needs cuBLASLt: load the one beside it first, so that the loader uses it
            // (a library already loaded is found by its soname).
            if let (Some(dir), Some(name)) = (
                c.parent().filter(|d| !d.as_os_str().is_empty()),
                c.file_name().and_then(|n| n.to_str()),
            ) {
                let lt = dir.join(name.replacen("libcublas", "libcublasLt", 1));
                // SAFETY: loading cuBLASLt runs its initialisers only.
                if let Ok(l) = unsafe { libloading::Library::new(&lt) } {
                    // Kept loaded for the life of the process, for cuBLAS.
                    std::mem::forget(l);
                }
            }
            match Cublas::load(&c) {
                Ok(lib) => {
                    return Engine::Cublas {
                        path: c,
                        lib: Arc::new(lib),
                    };
                }
                Err(e) => why.push(e),
            }
        }
        Engine::Ptx {
            why: why.join("; "),
        }
    }

    /// One line saying what computes the products.
    pub fn label(&self) -> String {
        match self {
            Engine::Cublas { path, .. } => format!("cuBLAS ({})", path.display()),
            Engine::Ptx { .. } => "PTX fallback kernel (no cuBLAS found; FP32, untuned: far \
                                   below cuBLAS's TFLOPS)"
                .into(),
        }
    }
}

/// What a GPU's worker has done so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Progress {
    /// Floating-point operations done (2 n³ per product).
    pub flops: f64,
    /// When the last batch of products finished.
    pub at: Option<Instant>,
    /// Products computed.
    pub products: u64,
    /// Results checks done.
    pub checks: u64,
    /// 32-bit words found different from the reference, over all checks.
    pub mismatches: u64,
    /// Why the worker stopped early.
    pub failed: Option<String>,
}

/// What each worker computes.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Precision (fp32 for the PTX kernel, whatever was asked).
    pub dtype: Dtype,
    /// Matrix side.
    pub size: usize,
}

/// A GPU's worker: its GPU, what it has done, and its thread.
type Worker = (u32, Arc<Mutex<Progress>>, Option<JoinHandle<()>>);

/// The load running on the GPUs.
pub struct CudaLoad {
    workers: Vec<Worker>,
    stop: Arc<AtomicBool>,
    last: BTreeMap<u32, (f64, Instant, Option<f64>)>,
}

impl CudaLoad {
    /// Starts a worker per `(gpu, CUDA ordinal)`; `corrupt`: the GPU whose result buffer is
    /// overwritten before each check (a test of the check itself).
    pub fn start(
        targets: &[(u32, usize)],
        plan: Plan,
        engine: &Engine,
        corrupt: Option<u32>,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let elems = plan.size * plan.size;
        let a = Arc::new(matrix(plan.dtype, elems, 0x9e37_79b9_7f4a_7c15));
        let b = Arc::new(matrix(plan.dtype, elems, 0xd1b5_4a32_d192_ed03));
        let workers = targets
            .iter()
            .map(|&(gpu, ordinal)| {
                let progress = Arc::new(Mutex::new(Progress::default()));
                let (p, s, e, a, b) = (
                    Arc::clone(&progress),
                    Arc::clone(&stop),
                    engine.clone(),
                    Arc::clone(&a),
                    Arc::clone(&b),
                );
                let corrupt = corrupt == Some(gpu);
                let handle = std::thread::Builder::new()
                    .name(format!("burn-gpu{gpu}"))
                    .spawn(move || {
                        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            work(ordinal, plan, &e, &a, &b, corrupt, &p, &s)
                        }));
                        let failed = match run {
                            Ok(Ok(())) => None,
                            Ok(Err(e)) => Some(e),
                            Err(_) => Some("the worker panicked".into()),
                        };
                        if failed.is_some() {
                            lock(&p).failed = failed;
                        }
                    })
                    .ok();
                (gpu, progress, handle)
            })
            .collect();
        Self {
            workers,
            stop,
            last: BTreeMap::new(),
        }
    }

    /// What the worker of `gpu` has done so far.
    pub fn progress(&self, gpu: u32) -> Option<Progress> {
        self.workers
            .iter()
            .find(|w| w.0 == gpu)
            .map(|w| lock(&w.1).clone())
    }

    /// TFLOPS of `gpu` since the previous call: between the last batches each call saw (the
    /// previous rate while no batch finished in between; `None` before two batches).
    pub fn rate(&mut self, gpu: u32) -> Option<f64> {
        let p = self.progress(gpu)?;
        let at = p.at?;
        match self.last.get(&gpu).copied() {
            Some((flops, t, rate)) if t == at => {
                let _ = flops;
                rate
            }
            Some((flops, t, _)) => {
                let dt = at.duration_since(t).as_secs_f64();
                let r = (dt > 0.0).then(|| (p.flops - flops) / dt / 1e12);
                self.last.insert(gpu, (p.flops, at, r));
                r
            }
            None => {
                self.last.insert(gpu, (p.flops, at, None));
                None
            }
        }
    }

    /// Stops every worker and waits for them.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for w in &mut self.workers {
            if let Some(h) = w.2.take() {
                let _ = h.join();
            }
        }
    }
}

impl Drop for CudaLoad {
    fn drop(&mut self) {
        self.stop();
    }
}

fn lock(p: &Mutex<Progress>) -> std::sync::MutexGuard<'_, Progress> {
    p.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A matrix of `elems` values uniform in [-1, 1) in `dtype`'s bytes, the same for a seed.
pub fn matrix(dtype: Dtype, elems: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut next = || {
        // xorshift64*
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let r = x.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (r >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let mut out = Vec::with_capacity(elems * dtype.size());
    for _ in 0..elems {
        let v = next();
        match dtype {
            Dtype::Fp64 => out.extend_from_slice(&v.to_le_bytes()),
            Dtype::Fp32 | Dtype::Tf32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
            Dtype::Bf16 => {
                out.extend_from_slice(&(((v as f32).to_bits() >> 16) as u16).to_le_bytes())
            }
            Dtype::Fp16 => out.extend_from_slice(&f16_bits(v as f32).to_le_bytes()),
        }
    }
    out
}

/// IEEE half-precision bits of `v` (truncated; magnitudes below half's normal range become
/// zero, above it infinity): enough for values in [-1, 1).
pub fn f16_bits(v: f32) -> u16 {
    let b = v.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    let mant = ((b >> 13) & 0x3ff) as u16;
    if exp <= 0 {
        sign
    } else if exp >= 31 {
        sign | 0x7c00
    } else {
        sign | ((exp as u16) << 10) | mant
    }
}

/// One GPU's loop: the reference product, then batches of [`CHECK_EVERY`] products, each
/// batch's last compared with the reference, until `stop`.
#[allow(clippy::too_many_arguments)]
fn work(
    ordinal: usize,
    plan: Plan,
    engine: &Engine,
    a_host: &[u8],
    b_host: &[u8],
    corrupt: bool,
    progress: &Mutex<Progress>,
    stop: &AtomicBool,
) -> Result<(), String> {
    let cuda = |what: &'static str| {
        move |e: cudarc::driver::DriverError| format!("CUDA device {ordinal}: {what}: {e:?}")
    };
    let ctx = CudaContext::new(ordinal).map_err(cuda("cannot create a context"))?;
    // SAFETY: one stream per context: nothing to synchronise between streams.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.default_stream();
    let bytes = a_host.len();
    let alloc = |s: &Arc<CudaStream>| s.alloc_zeros::<u8>(bytes);
    let mut a = alloc(&stream).map_err(cuda("allocating A"))?;
    let mut b = alloc(&stream).map_err(cuda("allocating B"))?;
    let reference = alloc(&stream).map_err(cuda("allocating the reference C"))?;
    let mut c = alloc(&stream).map_err(cuda("allocating C"))?;
    stream
        .memcpy_htod(a_host, &mut a)
        .map_err(cuda("copying A"))?;
    stream
        .memcpy_htod(b_host, &mut b)
        .map_err(cuda("copying B"))?;
    let ptr = |s: &CudaSlice<u8>| s.device_ptr(&stream).0;
    let (pa, pb, pref, pc) = (ptr(&a), ptr(&b), ptr(&reference), ptr(&c));
    let product: Box<dyn Fn(u64) -> Result<(), String>> = match engine {
        Engine::Cublas { lib, .. } => {
            let blas = Blas::new(Arc::clone(lib), &stream, plan.dtype)?;
            let n = plan.size;
            Box::new(move |out| blas.gemm(plan.dtype, n, pa, pb, out))
        }
        Engine::Ptx { .. } => {
            let module = ctx
                .load_module(cudarc::nvrtc::Ptx::from_src(crate::ptx::MATMUL_F32))
                .map_err(cuda("the driver refused the matmul kernel's PTX"))?;
            let f = module
                .load_function("burn_matmul_f32")
                .map_err(cuda("no burn_matmul_f32"))?;
            let n = plan.size as u32;
            let blocks = n.div_ceil(16);
            let stream = Arc::clone(&stream);
            Box::new(move |out| {
                let cfg = LaunchConfig {
                    grid_dim: (blocks, blocks, 1),
                    block_dim: (16, 16, 1),
                    shared_mem_bytes: 0,
                };
                let mut l = stream.launch_builder(&f);
                l.arg(&pa).arg(&pb).arg(&out).arg(&n);
                // SAFETY: three device pointers to n x n FP32 matrices (each buffer holds
                // n² × 4 bytes: the fallback runs in FP32) and n.
                unsafe { l.launch(cfg) }
                    .map(drop)
                    .map_err(|e| format!("matmul launch: {e:?}"))
            })
        }
    };
    let mut checker = Checker::new(&stream)?;
    let flops = 2.0 * (plan.size as f64).powi(3);
    product(pref)?;
    stream
        .synchronize()
        .map_err(cuda("the reference product"))?;
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..CHECK_EVERY {
            product(pc)?;
        }
        if corrupt {
            let mut head = c.slice_mut(0..64.min(bytes));
            stream
                .memset_zeros(&mut head)
                .map_err(cuda("corrupting the result"))?;
        }
        let mismatches = checker.compare(&stream, &reference, &c)?;
        let mut p = lock(progress);
        p.flops += flops * CHECK_EVERY as f64;
        p.products += CHECK_EVERY;
        p.checks += 1;
        p.mismatches = mismatches;
        p.at = Some(Instant::now());
    }
    Ok(())
}

/// A cuBLAS handle on one stream.
struct Blas {
    lib: Arc<Cublas>,
    handle: blas::cublasHandle_t,
}

fn blas_ok(what: &str, s: std::ffi::c_int) -> Result<(), String> {
    if s == cublas::SUCCESS {
        Ok(())
    } else {
        Err(format!("cuBLAS {what}: status {s}"))
    }
}

impl Blas {
    fn new(lib: Arc<Cublas>, stream: &CudaStream, dtype: Dtype) -> Result<Self, String> {
        let mut handle = std::ptr::null_mut();
        // SAFETY: cublasCreate writes a handle into `handle`.
        blas_ok("create", unsafe { (lib.create)(&mut handle) })?;
        let b = Self { lib, handle };
        // SAFETY: a live handle and the stream of the context bound to this thread.
        blas_ok("set stream", unsafe {
            (b.lib.set_stream)(b.handle, stream.cu_stream() as _)
        })?;
        if dtype == Dtype::Tf32 {
            // SAFETY: a live handle.
            blas_ok("set math mode", unsafe {
                (b.lib.set_math_mode)(b.handle, blas::cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH)
            })?;
        }
        Ok(b)
    }

    /// `C = A B`, square `n`, column-major, in `dtype`.
    fn gemm(&self, dtype: Dtype, n: usize, a: u64, b: u64, c: u64) -> Result<(), String> {
        use blas::cublasComputeType_t as C;
        use blas::cudaDataType as T;
        let (ty, compute) = match dtype {
            Dtype::Fp32 => (T::CUDA_R_32F, C::CUBLAS_COMPUTE_32F),
            Dtype::Tf32 => (T::CUDA_R_32F, C::CUBLAS_COMPUTE_32F_FAST_TF32),
            Dtype::Fp64 => (T::CUDA_R_64F, C::CUBLAS_COMPUTE_64F),
            Dtype::Bf16 => (T::CUDA_R_16BF, C::CUBLAS_COMPUTE_32F),
            Dtype::Fp16 => (T::CUDA_R_16F, C::CUBLAS_COMPUTE_32F),
        };
        let (one32, zero32, one64, zero64) = (1f32, 0f32, 1f64, 0f64);
        let (alpha, beta): (*const c_void, *const c_void) = if dtype == Dtype::Fp64 {
            (
                (&one64 as *const f64).cast(),
                (&zero64 as *const f64).cast(),
            )
        } else {
            (
                (&one32 as *const f32).cast(),
                (&zero32 as *const f32).cast(),
            )
        };
        let n = n as i32;
        // SAFETY: a, b and c are device buffers of n x n elements of `ty` on the handle's
        // context; alpha and beta point at scalars of the compute type, alive for the call.
        let s = unsafe {
            (self.lib.gemm_ex)(
                self.handle,
                blas::cublasOperation_t::CUBLAS_OP_N,
                blas::cublasOperation_t::CUBLAS_OP_N,
                n,
                n,
                n,
                alpha,
                a as *const c_void,
                ty,
                n,
                b as *const c_void,
                ty,
                n,
                beta,
                c as *mut c_void,
                ty,
                n,
                compute,
                blas::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        };
        blas_ok("GemmEx", s)
    }
}

impl Drop for Blas {
    fn drop(&mut self) {
        // SAFETY: the handle is live and dropped once.
        unsafe { (self.lib.destroy)(self.handle) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pci_addresses_compare_across_dcgm_and_cuda_spellings() {
        assert_eq!(
            normalise_pci("00000000:18:00.0").as_deref(),
            Some("0000:18:00")
        );
        assert_eq!(normalise_pci("0000:AB:00.0").as_deref(), Some("0000:ab:00"));
        assert_eq!(normalise_pci("nonsense"), None);
    }

    #[test]
    fn matrices_are_reproducible_bounded_and_sized_by_dtype() {
        let a = matrix(Dtype::Fp32, 1000, 7);
        assert_eq!(a, matrix(Dtype::Fp32, 1000, 7));
        assert_ne!(a, matrix(Dtype::Fp32, 1000, 8));
        assert_eq!(a.len(), 4000);
        assert!(a.chunks(4).all(|c| {
            let v = f32::from_le_bytes(c.try_into().unwrap());
            (-1.0..1.0).contains(&v)
        }));
        assert_eq!(matrix(Dtype::Bf16, 10, 1).len(), 20);
        assert_eq!(matrix(Dtype::Fp64, 10, 1).len(), 80);
    }

    #[test]
    fn half_precision_bits_match_ieee() {
        assert_eq!(f16_bits(1.0), 0x3c00);
        assert_eq!(f16_bits(-0.5), 0xb800);
        assert_eq!(f16_bits(0.0), 0);
        assert_eq!(f16_bits(1e-9), 0);
    }

    #[test]
    fn without_a_driver_the_error_says_so_and_names_the_way_out() {
        // This machine has no NVIDIA driver (CI's and the developers' have none either); on a
        // GPU node the list is not empty.
        match devices() {
            Err(CudaError::NoDriver) => {
                assert!(CudaError::NoDriver.to_string().contains("--simulate"));
            }
            Err(e) => panic!("unexpected: {e}"),
            Ok(d) => assert!(!d.is_empty()),
        }
    }
}
