//! The results check, as gpu-burn does it: the same product computed again must give the same
//! bits. The first product of a run is kept as the reference; every [`CHECK_EVERY`] products the
//! latest is compared with it on the device ([`crate::ptx::COMPARE`]), word by word, and the
//! words that differ are counted as compute errors of that GPU.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

/// Products computed between two checks: the compare reads two result matrices, about 1 % of
/// a bf16 product's time at 8192, so checking every 8th keeps its cost near 0.1 %.
pub const CHECK_EVERY: u64 = 8;

/// Threads per block of the compare kernel, and blocks at most (a grid-stride loop).
const THREADS: u32 = 256;
const MAX_BLOCKS: u32 = 2048;

/// The device side of the check on one GPU: the compare kernel and its running count.
pub struct Checker {
    compare: CudaFunction,
    count: CudaSlice<u64>,
}

impl Checker {
    /// Loads the compare kernel into the stream's context.
    pub fn new(stream: &Arc<CudaStream>) -> Result<Self, String> {
        let module = stream
            .context()
            .load_module(cudarc::nvrtc::Ptx::from_src(crate::ptx::COMPARE))
            .map_err(|e| format!("the driver refused the compare kernel's PTX: {e:?}"))?;
        let compare = module
            .load_function("burn_compare")
            .map_err(|e| format!("no burn_compare in the compare kernel: {e:?}"))?;
        let count = stream
            .alloc_zeros::<u64>(1)
            .map_err(|e| format!("cannot allocate the mismatch count: {e:?}"))?;
        Ok(Self { compare, count })
    }

    /// Compares `result` with `reference` (same length, a multiple of 4 bytes) and returns the
    /// mismatched words counted so far on this GPU (waits for the stream).
    pub fn compare(
        &mut self,
        stream: &Arc<CudaStream>,
        reference: &CudaSlice<u8>,
        result: &CudaSlice<u8>,
    ) -> Result<u64, String> {
        let words = (reference.len().min(result.len()) / 4) as u64;
        let blocks = (words.div_ceil(u64::from(THREADS)) as u32).clamp(1, MAX_BLOCKS);
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&self.compare);
        launch
            .arg(reference)
            .arg(result)
            .arg(&words)
            .arg(&mut self.count);
        // SAFETY: the kernel's four parameters are two device pointers to `words` 32-bit words
        // each (both buffers hold at least that), the word count, and a pointer to one u64.
        unsafe { launch.launch(cfg) }.map_err(|e| format!("compare launch: {e:?}"))?;
        let mut host = [0u64; 1];
        stream
            .memcpy_dtoh(&self.count, &mut host)
            .map_err(|e| format!("reading the mismatch count: {e:?}"))?;
        Ok(host[0])
    }
}
