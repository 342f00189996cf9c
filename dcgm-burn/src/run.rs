//! One burn: the load started on the GPUs, DCGM sampled every interval while it runs, each
//! sample with each GPU's TFLOPS, until the duration is over (or the caller stops it), then
//! the verdict.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use dcgm_reader::{Reader, ReaderBuilder};
use serde::Serialize;

use crate::cuda::{self, CudaError, CudaLoad, Engine, Plan};
use crate::dtype::Dtype;
use crate::sampler::{self, Reading, Sampler};
use crate::verdict::{self, ComputeErrors, Run, Verdict};

/// The default matrix side: an 8192 x 8192 product keeps an H100 or H200 at its peak (128 MiB
/// per bf16 matrix, 512 MiB in fp64).
pub const DEFAULT_SIZE: usize = 8192;

/// What to burn, and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// DCGM GPU ids (empty: every GPU CUDA sees, or every simulated GPU).
    pub gpus: Vec<u32>,
    /// How long.
    pub duration: Duration,
    /// Precision.
    pub dtype: Dtype,
    /// Matrix side.
    pub size: usize,
    /// DCGM sampling interval.
    pub interval: Duration,
    /// Model the load on dcgm-sim instead of running it.
    pub simulate: bool,
    /// cuBLAS to load (a file, or the directory holding `libcublas.so.13` or `.12`).
    pub cublas: Option<PathBuf>,
    /// Overwrite this GPU's result buffer before each check (tests the check; needs CUDA).
    pub corrupt_result: Option<u32>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            gpus: Vec::new(),
            duration: Duration::from_secs(60),
            dtype: Dtype::Bf16,
            size: DEFAULT_SIZE,
            interval: Duration::from_millis(500),
            simulate: false,
            cublas: None,
            corrupt_result: None,
        }
    }
}

/// Why a burn could not run.
#[derive(Debug, thiserror::Error)]
pub enum BurnError {
    /// No driver, or no GPU: burn's own exit status ([`crate::EXIT_NO_GPU`]).
    #[error(transparent)]
    NoGpu(CudaError),
    /// DCGM failed.
    #[error("DCGM: {0}")]
    Dcgm(#[from] dcgm::Error),
    /// Options that cannot work together, or GPUs that are not there.
    #[error("{0}")]
    Invalid(String),
}

/// What the live display shows of one GPU at a tick.
#[derive(Debug, Clone, Serialize)]
pub struct Live {
    /// The GPU.
    pub gpu: u32,
    /// TFLOPS since the last tick.
    pub tflops: Option<f64>,
    /// GPU temperature, °C.
    pub temp_c: Option<f64>,
    /// Board power, W.
    pub power_w: Option<f64>,
    /// SM clock, MHz.
    pub sm_clock_mhz: Option<f64>,
    /// Compute mismatches so far.
    pub mismatches: u64,
    /// New volatile ECC errors (single- plus double-bit) so far.
    pub ecc: f64,
    /// The readings come from the simulator (the TFLOPS are modelled).
    pub simulated: bool,
}

/// The record of a burn and its verdict.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// What was recorded.
    pub run: Run,
    /// The verdict.
    pub verdict: Verdict,
    /// The data came from the simulator.
    pub simulated: bool,
    /// What computed the products (`cuBLAS (path)`, the PTX kernel, or the simulated model).
    pub engine: String,
    /// Precision the products ran in (fp32 for the PTX kernel, whatever was asked).
    pub dtype: Dtype,
    /// Matrix side.
    pub size: usize,
    /// Seconds the load ran.
    pub seconds: f64,
    /// What the run met that the verdict does not say.
    pub notes: Vec<String>,
    /// Each GPU's name, as DCGM gives it.
    pub names: BTreeMap<u32, String>,
}

/// The load, real or modelled.
enum Load {
    Cuda(CudaLoad),
    Simulated(BTreeMap<u32, String>),
}

/// Runs a burn: `connect` connects a reader built from the given builder (the tools' engine
/// choice, or the simulator), `live` is called at every sample, and `stop` ends the run early
/// (what was sampled is judged).
pub fn run(
    opts: &Options,
    connect: impl FnOnce(ReaderBuilder) -> dcgm::Result<Reader>,
    mut live: impl FnMut(Duration, &[Live]),
    stop: &AtomicBool,
) -> Result<Outcome, BurnError> {
    if opts.size < 64 || opts.size > 65_536 {
        return Err(BurnError::Invalid(format!(
            "--size {}: give a matrix side from 64 to 65536",
            opts.size
        )));
    }
    if opts.interval.is_zero() {
        return Err(BurnError::Invalid(
            "the sampling delay must be at least 1 ms".into(),
        ));
    }
    if opts.simulate && opts.corrupt_result.is_some() {
        return Err(BurnError::Invalid(
            "--corrupt-result needs real GPUs: the simulated load computes nothing".into(),
        ));
    }
    let mut notes = Vec::new();
    // The driver first: without it there is nothing to burn, whatever DCGM says.
    let cuda_devices = if opts.simulate {
        Vec::new()
    } else {
        cuda::devices().map_err(BurnError::NoGpu)?
    };
    let reader = connect(sampler::reader_builder(opts.interval))?;
    let mut sampler = Sampler::new(reader);
    let simulated = sampler.simulated();
    let handle = sampler
        .handle()
        .ok_or_else(|| BurnError::Invalid("the DCGM reader has no handle".into()))?
        .clone();
    let dcgm_gpus = handle.system().gpu_ids()?;
    let mut names = BTreeMap::new();
    let mut pci = BTreeMap::new();
    for &g in &dcgm_gpus {
        if let Ok(a) = handle.system().device_attributes(g) {
            names.insert(g, a.name.clone());
            if let Some(p) = cuda::normalise_pci(&a.pci_bus_id) {
                pci.insert(p, g);
            }
        }
    }
    let given = if opts.gpus.is_empty() && opts.simulate {
        visible_devices().unwrap_or_default()
    } else {
        opts.gpus.clone()
    };
    for g in &given {
        if !dcgm_gpus.contains(g) {
            return Err(BurnError::Invalid(format!(
                "GPU {g} is not one DCGM knows (GPUs: {})",
                dcgm_gpus
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            )));
        }
    }
    let (gpus, load, engine, dtype) = if opts.simulate {
        let gpus = if given.is_empty() {
            dcgm_gpus.clone()
        } else {
            given
        };
        let models = gpus
            .iter()
            .map(|g| (*g, names.get(g).cloned().unwrap_or_default()))
            .collect();
        (
            gpus,
            Load::Simulated(models),
            format!(
                "simulated: TFLOPS modelled from DCGM's SM clock ({} peak x {} x clock share)",
                opts.dtype,
                crate::simulate::EFFICIENCY
            ),
            opts.dtype,
        )
    } else {
        // Each CUDA device is the DCGM GPU at the same PCI address.
        let mut targets: Vec<(u32, usize)> = cuda_devices
            .iter()
            .filter_map(|d| pci.get(&d.pci).map(|g| (*g, d.ordinal)))
            .collect();
        targets.sort();
        if !given.is_empty() {
            for g in &given {
                if !targets.iter().any(|t| t.0 == *g) {
                    return Err(BurnError::NoGpu(CudaError::NotVisible(format!(
                        "GPU {g} is not visible to CUDA (CUDA_VISIBLE_DEVICES={})",
                        std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_else(|_| "unset".into())
                    ))));
                }
            }
            targets.retain(|t| given.contains(&t.0));
        }
        if targets.is_empty() {
            return Err(BurnError::NoGpu(CudaError::NotVisible(
                "none of the GPUs CUDA sees is one DCGM knows (their PCI addresses differ)".into(),
            )));
        }
        if let Some(c) = opts.corrupt_result
            && !targets.iter().any(|t| t.0 == c)
        {
            return Err(BurnError::Invalid(format!(
                "--corrupt-result {c}: GPU {c} is not burned"
            )));
        }
        let engine = Engine::find(opts.cublas.as_deref());
        let dtype = match &engine {
            Engine::Ptx { why } => {
                notes.push(format!(
                    "no cuBLAS loaded ({why}): the PTX fallback kernel computes"
                ));
                if opts.dtype != Dtype::Fp32 {
                    notes.push(format!(
                        "the PTX fallback computes in fp32, not the {} asked for",
                        opts.dtype
                    ));
                }
                Dtype::Fp32
            }
            Engine::Cublas { .. } => opts.dtype,
        };
        let plan = Plan {
            dtype,
            size: opts.size,
        };
        let label = engine.label();
        let gpus = targets.iter().map(|t| t.0).collect();
        (
            gpus,
            Load::Cuda(CudaLoad::start(
                &targets,
                plan,
                &engine,
                opts.corrupt_result,
            )),
            label,
            dtype,
        )
    };
    let mut rec = Run {
        gpus: gpus.clone(),
        ..Run::default()
    };
    rec.window.simulated = simulated;
    let mut load = load;
    let start = Instant::now();
    let mut ecc_first: BTreeMap<u32, f64> = BTreeMap::new();
    while start.elapsed() < opts.duration && !stop.load(Ordering::Relaxed) {
        let tick = Instant::now();
        let now = sampler::now_ms();
        let readings = match sampler.read(now) {
            Ok(r) => r,
            Err(e) => {
                notes.push(format!(
                    "DCGM sampling stopped after {:.1} s: {e}",
                    start.elapsed().as_secs_f64()
                ));
                break;
            }
        };
        let mut shown = Vec::new();
        for &g in &gpus {
            let reading = readings.get(&g);
            let (tflops, mismatches) = match &mut load {
                Load::Cuda(c) => (c.rate(g), c.progress(g).map_or(0, |p| p.mismatches)),
                Load::Simulated(models) => (
                    reading.and_then(|r| {
                        crate::simulate::tflops(
                            dtype,
                            models.get(&g).map_or("", String::as_str),
                            &r.sample,
                        )
                    }),
                    0,
                ),
            };
            if let Some(t) = tflops {
                rec.tflops.entry(g).or_default().push((now, t));
            }
            let mut ecc = 0.0;
            if let Some(Reading {
                sample,
                memory_temp_c,
            }) = reading
            {
                if let Some(m) = memory_temp_c {
                    rec.memory_temp.entry(g).or_default().push((now, *m));
                }
                let total = sample.get(dcgm_doctor::Field::EccSbe).unwrap_or(0.0)
                    + sample.get(dcgm_doctor::Field::EccDbe).unwrap_or(0.0);
                ecc = total - *ecc_first.entry(g).or_insert(total);
                rec.window.push(sample.clone());
            }
            let get = |f| reading.and_then(|r| r.sample.get(f));
            shown.push(Live {
                gpu: g,
                tflops,
                temp_c: get(dcgm_doctor::Field::Temperature),
                power_w: get(dcgm_doctor::Field::Power),
                sm_clock_mhz: get(dcgm_doctor::Field::SmClock),
                mismatches,
                ecc,
                simulated,
            });
        }
        live(start.elapsed(), &shown);
        if let Some(rest) = opts.interval.checked_sub(tick.elapsed()) {
            std::thread::sleep(rest.min(opts.duration.saturating_sub(start.elapsed())));
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    if stop.load(Ordering::Relaxed) {
        notes.push(format!(
            "stopped after {seconds:.1} s: judged what was sampled"
        ));
    }
    if let Load::Cuda(c) = &mut load {
        c.stop();
        for &g in &gpus {
            if let Some(p) = c.progress(g) {
                rec.compute.insert(
                    g,
                    ComputeErrors {
                        products: p.products,
                        checks: p.checks,
                        mismatches: p.mismatches,
                        failed: p.failed,
                    },
                );
            }
        }
    }
    if rec.window.is_empty() {
        notes.push("DCGM sent no sample: temperatures, power and clocks unknown".into());
    }
    let verdict = verdict::judge(&rec, dtype);
    Ok(Outcome {
        run: rec,
        verdict,
        simulated,
        engine,
        dtype,
        size: opts.size,
        seconds,
        notes,
        names,
    })
}

/// `CUDA_VISIBLE_DEVICES` as GPU ids, where it is a list of numbers (the simulated load's
/// choice of GPUs when `-i` is not given).
pub fn visible_devices() -> Option<Vec<u32>> {
    let v = std::env::var("CUDA_VISIBLE_DEVICES").ok()?;
    v.split(',')
        .map(|s| s.trim().parse().ok())
        .collect::<Option<Vec<u32>>>()
        .filter(|v| !v.is_empty())
}

/// A stop flag that Ctrl-C sets (the binary's and the Python binding's).
pub fn stop_flag() -> Arc<AtomicBool> {
    Arc::new(AtomicBool::new(false))
}
