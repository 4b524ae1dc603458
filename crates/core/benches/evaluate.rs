//! Evaluating 1,000,000 requests in 3 classes × 3 buckets, 4 indicators, 6 percentiles.
//!
//! `reevaluate` is what a target change costs (the grouping and percentiles are prepared once);
//! `prepare` is what a new file or a new grouping costs. Target (issue 3): re-evaluation <= 50 ms.
//! `decode` is what the app's page spends on a load its worker parsed and prepared, once its
//! columns are in wasm memory (putting the batch back together from its parts).

mod common;

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion};
use slo_core::evaluate::{evaluate, prepare, Duration};
use slo_core::spec::{Spec, TtftTarget};
use slo_core::table::{RequestTable, Row, Status};
use slo_core::transfer::Batch;

/// A deterministic synthetic log: heavy tails, 0/1-token outputs, a few failures.
pub fn synthetic(n: usize) -> RequestTable {
    let mut t = RequestTable::default();
    let mut next = common::uniform(0x2545_f491_4f6c_dd1d);
    let classes = ["chat", "code", "batch"];
    for i in 0..n {
        let u = next();
        let input = (50.0 + 30_000.0 * next().powi(3)).round();
        let output = (next() * 600.0).floor();
        let ttft = 80.0 + input * 0.02 + 200.0 * (-(1.0 - u).ln());
        let tpot = 25.0 + 30.0 * next().powi(4);
        let status = if next() < 0.005 {
            Status::Error
        } else {
            Status::Ok
        };
        let row = Row {
            status,
            input_tokens: Some(input),
            output_tokens: Some(output),
            ttft_ms: Some(ttft),
            e2e_ms: Some(ttft + tpot * (output - 1.0).max(0.0)),
            labels: vec![("class".to_string(), classes[i % 3].to_string())],
            ..Row::default()
        };
        t.push(row, 0, i as u32 + 2, "synthetic");
    }
    t
}

/// The spec the browser benchmark gives the app too (`bench/report_spec.json`: 3 classes × 3
/// input-length buckets, TTFT, TPOT and E2E targets, 6 percentiles).
fn spec() -> Spec {
    Spec::from_json(include_str!("../../../bench/report_spec.json"))
        .expect("bench/report_spec.json is a valid spec")
}

/// `spec` with every TTFT target set to `ms`.
fn with_ttft(spec: &Spec, ms: f64) -> Spec {
    let mut spec = spec.clone();
    for class in &mut spec.classes {
        for targets in &mut class.targets {
            targets.ttft = Some(TtftTarget::Fixed { ms });
        }
    }
    spec
}

fn bench(c: &mut Criterion) {
    let table = synthetic(1_000_000);
    let duration = Duration::known(3600.0, "bench");
    let base = spec();
    let prepared = prepare(&table, &base);
    let mut group = c.benchmark_group("1M requests");
    group.sample_size(10);
    let mut ttft = 400.0;
    group.bench_function("reevaluate after a target change", |b| {
        b.iter(|| {
            ttft = if ttft > 900.0 { 400.0 } else { ttft + 1.0 };
            let s = with_ttft(&base, ttft);
            black_box(evaluate(&table, &prepared, &s, &duration))
        })
    });
    group.bench_function("prepare (grouping, percentiles)", |b| {
        b.iter(|| black_box(prepare(&table, &base)))
    });
    // What the app's page does with a worker's load: put it back together from its parts
    // (slo_core::transfer; the copy of the columns into wasm memory is not counted).
    let batch = Batch {
        table: table.clone(),
        prepared: Some(prepared.clone()),
        ..Batch::default()
    };
    let parts = batch.into_parts();
    group.bench_function("decode a prepared load from the worker's parts", |b| {
        b.iter_batched(
            || parts.clone(),
            |parts| black_box(Batch::from_parts(parts)),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
