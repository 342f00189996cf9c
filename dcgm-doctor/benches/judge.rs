//! Judging a one-hour trace at 100 ms for 8 GPUs (288,000 samples): the workloads change
//! every minute, so that the segmentation and every rule have work to do.

// criterion_group! defines an undocumented public function.
#![allow(missing_docs)]

use criterion::{Criterion, criterion_group, criterion_main};
use dcgm_doctor::{Field, Sample, Window};

/// One GPU's sample `i` (100 ms apart): a minute each of steady compute, a periodic stall,
/// pageable copies, tiny kernels and idle memory, in turn, and GPU 7 a little slower.
fn sample(gpu: u32, i: i64) -> Sample {
    let t = i * 100;
    let s = Sample::new(t, gpu)
        .with(Field::SmMaxClock, 1980.0)
        .with(Field::PowerLimit, 700.0)
        .with(Field::FbTotal, 143_771.0)
        .with(Field::SmClock, if gpu == 7 { 1300.0 } else { 1480.0 })
        .with(Field::Power, 600.0)
        .with(Field::PowerViolation, t as f64 * 1e6)
        .with(Field::Xid, 0.0)
        .with(Field::EccDbe, 0.0);
    let (util, sm, gr, pcie, fb, reasons) = match (i / 600) % 5 {
        0 => (99.0, 0.96, 0.99, 1.5e7, 2_000.0, 4.0),
        1 if i % 12 < 4 => (99.0, 0.95, 0.99, 1.0e7, 2_000.0, 4.0),
        1 => (0.0, 0.0, 0.0, 1.0e6, 2_000.0, 0.0),
        2 => (46.0, 0.0, 0.0001, 2.3e10, 3_000.0, 0.0),
        3 => (35.0, 0.0005, 0.35, 3.0e8, 3_000.0, 0.0),
        _ => (0.0, 0.0, 0.0, 1.0e6, 100_000.0, 0.0),
    };
    s.with(Field::GpuUtil, util)
        .with(Field::SmActive, sm)
        .with(Field::GrActive, gr)
        .with(Field::TensorActive, sm * 0.9)
        .with(Field::DramActive, sm * 0.2)
        .with(Field::PcieRxBytes, pcie)
        .with(Field::PcieTxBytes, pcie / 10.0)
        .with(Field::FbUsed, fb)
        .with(Field::ClockEventReasons, reasons)
}

fn bench(c: &mut Criterion) {
    let per_gpu = 3600 * 10;
    let window =
        Window::from_samples((0..8u32).flat_map(|g| (0..per_gpu).map(move |i| sample(g, i))));
    assert_eq!(window.len(), 288_000);
    let mut group = c.benchmark_group("judge");
    group.sample_size(10);
    group.bench_function("one_hour_100ms_8_gpus", |b| {
        b.iter(|| dcgm_doctor::judge(std::hint::black_box(&window)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
