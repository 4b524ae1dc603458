//! Load sweep re-evaluation: 10 files × 1,000 requests, each with 32 inter-token gaps.
//!
//! The budget (issue "Load sweep and capacity"): after a target change, the whole sweep is
//! re-judged in under 200 ms natively. Preparation (classes, TPOT, percentiles) is done once per
//! point, as the app and the CLI do; each iteration evaluates every point with new targets.
//!
//! Run: `cargo bench -p slo-core --bench sweep`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use slo_core::ingest::{RequestRate, RunMeta};
use slo_core::spec::{Spec, Targets, TtftTarget};
use slo_core::sweep::{
    evaluate_sweep, prepare_sweep, scale_curve, sweep, RateSource, SweepPoint, SCALE_FACTORS,
};
use slo_core::table::{RequestTable, Row, Status};

const FILES: usize = 10;
const REQUESTS: usize = 1_000;
const GAPS: usize = 32;

/// A small deterministic generator (64-bit LCG, Knuth's MMIX constants), uniform in [0, 1).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One load level: latencies grow with the rate, a few requests fail at high rates.
fn point(k: usize) -> SweepPoint {
    let rate = 1.0 + 1.5 * k as f64;
    let load = rate / 16.0;
    let mut rng = Lcg(0x5eed + k as u64);
    let mut t = RequestTable::default();
    let mut start = 1000.0;
    for row in 0..REQUESTS {
        start += -(1.0 - rng.next()).ln() / rate;
        if rng.next() < 0.002 * k as f64 {
            let failed = Row {
                status: Status::Error,
                error: Some("Server disconnected".into()),
                start_s: Some(start),
                ..Row::default()
            };
            t.push(failed, 0, row as u32 + 1, "bench");
            continue;
        }
        let ttft = 40.0 + 400.0 * load * load * rng.next() / (1.0 - rng.next() * 0.9);
        let gaps: Vec<f64> = (0..GAPS)
            .map(|_| 15.0 + 35.0 * load * (0.5 + rng.next()))
            .collect();
        let e2e = ttft + gaps.iter().sum::<f64>();
        let r = Row {
            ttft_ms: Some(ttft),
            e2e_ms: Some(e2e),
            output_tokens: Some((GAPS + 1) as f64),
            input_tokens: Some((200.0 + 1800.0 * rng.next()).floor()),
            start_s: Some(start),
            end_s: Some(start + e2e / 1000.0),
            itl_ms: Some(gaps),
            ..Row::default()
        };
        t.push(r, 0, row as u32 + 1, "bench");
    }
    SweepPoint::new(
        &format!("sweep_{rate}.json"),
        t,
        RunMeta::default(),
        RequestRate::PerSecond(rate),
        RateSource::FileName,
    )
}

fn spec(ttft_ms: f64, tpot_ms: f64) -> Spec {
    Spec::single(Targets {
        ttft: Some(TtftTarget::Fixed { ms: ttft_ms }),
        tpot_ms: Some(tpot_ms),
        itl_ms: Some(200.0),
        ..Targets::default()
    })
}

fn bench(c: &mut Criterion) {
    let points: Vec<SweepPoint> = (0..FILES).map(point).collect();
    let specs = [spec(500.0, 50.0), spec(300.0, 40.0)];
    let prepared = prepare_sweep(&points, &specs[0]);
    let mut k = 0usize;
    c.bench_function("sweep 10x1000: re-evaluate after a target change", |b| {
        b.iter(|| {
            k += 1;
            let s = &specs[k % 2];
            black_box(evaluate_sweep(black_box(&points), &prepared, s))
        })
    });
    c.bench_function("sweep 10x1000: prepare and evaluate", |b| {
        b.iter(|| black_box(sweep(black_box(&points), &specs[0])))
    });
    let at = &points[FILES - 1];
    c.bench_function("SLO-scale curve: 1000 requests x 11 factors", |b| {
        b.iter(|| black_box(scale_curve(black_box(at), &specs[0], &SCALE_FACTORS)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
