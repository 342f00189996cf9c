//! `dcgm-burn`: gpu-burn's stress test with DCGM watching, and a verdict per GPU.
//!
//! It runs dense matrix products on every selected GPU for a while, in the precision chosen
//! (cuBLAS's `GemmEx`, tensor cores for bf16, fp16, tf32 and fp64; a PTX kernel where no cuBLAS
//! is found), and checks the results as gpu-burn does: the same product computed again must
//! give the same bits. Meanwhile it samples DCGM in the same process (SM clock and its
//! clock-event reasons, power against the limit, temperature and memory temperature,
//! throttle counters, ECC, XID, PCIe replays) and, at the end, judges each GPU: sustained
//! TFLOPS and their stability, peak temperature and when it settled, time at the power cap
//! and thermally throttled, errors, and a comparison with its siblings (a card 10 % or more
//! below the median is named, with the evidence), using `dcgm-doctor`'s rules where they fit.
//!
//! CUDA is loaded at run time (`cudarc` with dynamic loading): burn builds and starts without
//! it, and says in one line when there is no driver or GPU ([`EXIT_NO_GPU`]). Without a GPU,
//! [`Options::simulate`] models the load on dcgm-sim (labelled simulated everywhere):
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let sim = dcgm::testing::simulator_path();
//! use std::time::Duration;
//! use dcgm_burn::{Options, Status};
//! // Eight simulated H200s under the `burn` workload profile, none weak.
//! dcgm_burn::use_burn_preset();
//! let opts = Options {
//!     duration: Duration::from_millis(1500),
//!     interval: Duration::from_millis(100),
//!     simulate: true,
//!     ..Options::default()
//! };
//! let stop = std::sync::atomic::AtomicBool::new(false);
//! let outcome = dcgm_burn::run(
//!     &opts,
//!     |b| {
//!         let mut r = b.library_path(&sim).build()?;
//!         r.connect()?;
//!         Ok(r)
//!     },
//!     |_, _| {},
//!     &stop,
//! )?;
//! assert!(outcome.simulated);
//! assert_eq!(outcome.verdict.gpus.len(), 8);
//! assert_eq!(outcome.verdict.status, Status::Healthy);
//! # Ok(()) }
//! ```

pub mod check;
pub mod cublas;
pub mod cuda;
pub mod dtype;
pub mod duration;
pub mod find;
pub mod ptx;
pub mod report;
pub mod run;
pub mod sampler;
pub mod simulate;
pub mod verdict;

pub use dtype::Dtype;
pub use run::{BurnError, Live, Options, Outcome, run};
pub use verdict::{GpuVerdict, Status, Verdict};

/// Exit status when there is no NVIDIA driver or no GPU to burn (4 is the tools' "not in this
/// DCGM release").
pub const EXIT_NO_GPU: u8 = 5;

/// Makes dcgm-sim simulate the `burn` preset (eight H200s under a stress test) unless
/// `DCGM_SIM_CONFIG` already names a node. Call it before the simulator starts, while the
/// process has one thread (it sets an environment variable).
pub fn use_burn_preset() {
    use dcgm_sim::config::CONFIG_ENV;
    if std::env::var_os(CONFIG_ENV).is_none_or(|v| v.is_empty()) {
        // SAFETY: documented as called before other threads start; nothing reads the
        // environment concurrently then.
        unsafe { std::env::set_var(CONFIG_ENV, "burn") };
    }
}
