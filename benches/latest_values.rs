//! Latest values of the 30 default DcgmReader fields on 8 simulated GPUs, read three ways in
//! one run: the raw `dcgm-sys` call, the safe `dcgm` layer, and `dcgm-reader`. The simulator's
//! own cost is the floor; the layers' overhead is what this measures.
//!
//! `cargo bench --bench latest_values`

// criterion_group! defines a public function it cannot document.
#![allow(missing_docs)]

use std::ffi::{c_int, c_void};
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dcgm::raw::sys::*;
use dcgm::{FieldGroup, FieldId, Group, Handle, OperationMode, WatchOptions};
use dcgm_reader::{Connection, DEFAULT_FIELD_IDS, Reader};

/// What the raw baseline keeps of each value: enough to be a fair comparison with the safe
/// layer, which decodes every value.
#[derive(Clone, Copy)]
struct RawOut {
    entity: u32,
    field: u16,
    ts: i64,
    bits: i64,
}

unsafe extern "C" fn raw_cb(
    _group: u32,
    entity: u32,
    values: *mut dcgmFieldValue_v1,
    n: c_int,
    user: *mut c_void,
) -> c_int {
    // SAFETY: `user` is the Vec passed below; `values` holds `n` records during the call.
    let out = unsafe { &mut *user.cast::<Vec<RawOut>>() };
    // SAFETY: as above.
    let vals = unsafe { std::slice::from_raw_parts(values, n as usize) };
    for v in vals {
        out.push(RawOut {
            entity,
            field: v.fieldId,
            ts: v.ts,
            // SAFETY: reading the union's integer view of plain data.
            bits: unsafe { v.value.i64_ },
        });
    }
    0
}

fn bench(c: &mut Criterion) {
    let sim = dcgm::testing::simulator_path();
    let handle = Handle::builder()
        .library_path(&sim)
        .operation_mode(OperationMode::Manual)
        .embedded()
        .expect("simulator handle");
    let fields: Vec<FieldId> = DEFAULT_FIELD_IDS.iter().map(|f| FieldId(*f)).collect();
    let fg = FieldGroup::create(&handle, "bench-latest", &fields).unwrap();
    let gpus = Group::all_gpus(&handle);
    let _w = gpus.watch(&fg, WatchOptions::default()).unwrap();
    handle.update_all_fields(true).unwrap();

    let mut g = c.benchmark_group("latest_30_fields_8_gpus");

    let lib = dcgm::raw::library(&handle);
    let f = lib.dcgmGetLatestValues_v2().unwrap();
    let mut raw: Vec<RawOut> = Vec::with_capacity(240);
    g.bench_function("raw_dcgm_sys", |b| {
        b.iter(|| {
            raw.clear();
            // SAFETY: the callback matches the type; `raw` outlives the call.
            let rc = unsafe {
                f(
                    dcgm::raw::handle(&handle),
                    DCGM_GROUP_ALL_GPUS,
                    dcgm::raw::field_group_id(&fg),
                    Some(raw_cb),
                    (&mut raw as *mut Vec<RawOut>).cast(),
                )
            };
            assert_eq!(rc, DCGM_ST_OK);
            black_box(raw.len());
        })
    });

    let mut buf = Vec::with_capacity(240);
    g.bench_function("safe_dcgm", |b| {
        b.iter(|| {
            gpus.latest_values_into(&fg, &mut buf).unwrap();
            black_box(buf.len());
        })
    });

    let mut reader = Reader::builder()
        .library_path(&sim)
        .connection(Connection::Embedded)
        .operation_mode(OperationMode::Manual)
        .build()
        .unwrap();
    reader.connect().unwrap();
    let mut snap = dcgm_reader::Snapshot::new();
    g.bench_function("dcgm_reader", |b| {
        b.iter(|| {
            reader.latest_into(&mut snap).unwrap();
            black_box(snap.len());
        })
    });
    g.bench_function("dcgm_reader_fresh_snapshot", |b| {
        b.iter(|| {
            black_box(reader.latest().unwrap().len());
        })
    });

    let entities: Vec<dcgm::Entity> = (0..8).map(dcgm::Entity::gpu).collect();
    let mut ebuf = Vec::with_capacity(240);
    let sys = handle.system();
    g.bench_function("safe_dcgm_entities", |b| {
        b.iter(|| {
            sys.entities_latest_values_into(&entities, &fields, &mut ebuf)
                .unwrap();
            black_box(ebuf.len());
        })
    });
    g.finish();
    let _ = (raw.first().map(|r| (r.entity, r.field, r.ts, r.bits)),);
}

criterion_group!(benches, bench);
criterion_main!(benches);
