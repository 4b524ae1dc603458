//! Reading a request log: `ingest::parse` on a 300,000-row CSV (about 10 MB) of the columns
//! `bench/gen_requests.py` writes (class, input_tokens, ttft_ms, e2e_ms, output_tokens,
//! status, error), on every core there is, as `slo report` reads a file.
//!
//! What it covers: the UTF-8 check, the SHA-256 beside the reading, the quote check and line
//! count, the splitter, the number readers, the table's columns and joining the pieces. The
//! whole-process figures against the reference are `bench/compare_cli.py`'s.

mod common;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use slo_core::ingest::{parse, IngestOptions};

/// A deterministic log of `n` rows, numbers written as a log writes them (three decimals for
/// latencies), with the generator's heavy tails, 0- and 1-token outputs and a few errors.
fn log(n: usize) -> String {
    let mut next = common::uniform(0x9e37_79b9_7f4a_7c15);
    let mut text = String::from("class,input_tokens,ttft_ms,e2e_ms,output_tokens,status,error\n");
    let classes = ["chat", "chat", "chat", "code", "batch"];
    for i in 0..n {
        let class = classes[i % classes.len()];
        let input = (50.0 + 8_000.0 * next().powi(3)).round();
        let output = match next() {
            u if u < 0.01 => 0.0,
            u if u < 0.02 => 1.0,
            u => (u * 900.0).floor(),
        };
        let ttft = 60.0 + input * 0.02 + 150.0 * (-(1.0 - next()).ln());
        let e2e = ttft + (20.0 + 40.0 * next().powi(4)) * (output - 1.0_f64).max(0.0);
        let row = if next() < 0.005 {
            format!("{class},{input},,,0,error,upstream reset\n")
        } else {
            format!("{class},{input},{ttft:.3},{e2e:.3},{output},ok,\n")
        };
        text.push_str(&row);
    }
    text
}

fn bench(c: &mut Criterion) {
    let text = log(300_000);
    let options = IngestOptions::default();
    let mut group = c.benchmark_group("ingest 300k-row CSV");
    group.sample_size(20);
    group.bench_function("parse (all cores)", |b| {
        b.iter(|| {
            let loaded = parse("bench.csv", black_box(text.as_bytes()), &options);
            assert_eq!(loaded.table.len(), 300_000);
            loaded
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
