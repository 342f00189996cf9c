//! How a latest-values read grows with entities × fields, up to 1024 entities × 127 fields
//! (the most one group and one field group can hold), on the simulator.
//!
//! `cargo bench --bench scaling`

// criterion_group! defines a public function it cannot document.
#![allow(missing_docs)]

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use dcgm::raw::sys::FIELD_TABLE;
use dcgm::{Entity, EntityGroup, FieldGroup, FieldId, Group, Handle, OperationMode, WatchOptions};

fn bench(c: &mut Criterion) {
    // 8 CPU sockets × 128 cores = 1024 core entities.
    let cfg = serde_json::json!({
        "cpus": (0..8).map(|_| serde_json::json!({"cores": 128})).collect::<Vec<_>>(),
    });
    dcgm::testing::configure_simulator(Some(&cfg.to_string())).unwrap();
    let handle = Handle::builder()
        .library_path(dcgm::testing::simulator_path())
        .operation_mode(OperationMode::Manual)
        .embedded()
        .unwrap();
    let all_fields: Vec<FieldId> = FIELD_TABLE
        .iter()
        .filter(|f| !f.internal)
        .take(127)
        .map(|f| FieldId(f.id))
        .collect();
    let mut g = c.benchmark_group("latest_values_scaling");
    g.sample_size(10);
    let mut buf = Vec::new();
    for &(n_entities, n_fields) in &[(8usize, 30usize), (64, 30), (256, 64), (1024, 127)] {
        let ents: Vec<Entity> = (0..n_entities as u32)
            .map(|i| Entity::new(EntityGroup::CpuCore, i))
            .collect();
        let group = Group::with_entities(&handle, &format!("scale-{n_entities}-{n_fields}"), &ents)
            .unwrap();
        let fg = FieldGroup::create(
            &handle,
            &format!("scale-f-{n_entities}-{n_fields}"),
            &all_fields[..n_fields],
        )
        .unwrap();
        let w = group.watch(&fg, WatchOptions::default()).unwrap();
        handle.update_all_fields(true).unwrap();
        g.bench_with_input(
            BenchmarkId::from_parameter(format!("{n_entities}x{n_fields}")),
            &(),
            |b, _| {
                b.iter(|| {
                    group.latest_values_into(&fg, &mut buf).unwrap();
                    black_box(buf.len());
                })
            },
        );
        drop(w);
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
