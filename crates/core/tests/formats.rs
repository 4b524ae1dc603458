//! Benchmark result formats: detection, field mapping and units, failed entries, located errors,
//! and parity with the tools' own summary numbers.
//!
//! The vLLM and SGLang fixtures come from tests/reference/vllm_fixtures.py, which computes each
//! file's summary fields with numpy exactly as the tool does; the others are hand-written from
//! the tools' schemas (see docs/formats.md).

use std::collections::BTreeMap;

use slo_core::ingest::{self, Format, IngestOptions, Loaded, RequestRate};
use slo_core::quantile::{percentile_sorted, Method};
use slo_core::table::{RequestTable, Status};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/formats/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn load(name: &str) -> Loaded {
    ingest::parse(name, &fixture(name), &IngestOptions::default())
}

fn load_text(name: &str, text: &str) -> Loaded {
    ingest::parse(name, text.as_bytes(), &IngestOptions::default())
}

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{what}: got {got}, want {want}"
    );
}

fn messages(l: &Loaded) -> Vec<String> {
    l.errors.iter().map(|e| e.to_string()).collect()
}

fn ok_rows(t: &RequestTable) -> impl Iterator<Item = usize> + '_ {
    (0..t.len()).filter(|&r| t.status[r] == Status::Ok)
}

/// mean, median, population std and the given percentiles (numpy method="linear").
fn stats(mut xs: Vec<f64>, qs: &[f64]) -> (f64, f64, f64, Vec<f64>) {
    assert!(!xs.is_empty());
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let std = (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt();
    let pct = |q| percentile_sorted(&xs, q, Method::Linear).expect("percentile");
    (mean, pct(50.0), std, qs.iter().map(|&q| pct(q)).collect())
}

/// Checks mean/median/std/pQ of `values` against the file's `{prefix}_{metric}_ms` fields.
fn parity(summary: &BTreeMap<String, f64>, metric: &str, values: Vec<f64>, qs: &[f64]) {
    let want = |key: String| {
        *summary
            .get(&key)
            .unwrap_or_else(|| panic!("the file has no {key}"))
    };
    let (mean, median, std, pcts) = stats(values, qs);
    close(
        mean,
        want(format!("mean_{metric}_ms")),
        &format!("mean {metric}"),
    );
    close(
        median,
        want(format!("median_{metric}_ms")),
        &format!("median {metric}"),
    );
    close(
        std,
        want(format!("std_{metric}_ms")),
        &format!("std {metric}"),
    );
    for (q, got) in qs.iter().zip(pcts) {
        let word = if q.fract() == 0.0 {
            format!("{q:.0}")
        } else {
            q.to_string()
        };
        close(
            got,
            want(format!("p{word}_{metric}_ms")),
            &format!("p{word} {metric}"),
        );
    }
}

fn ttfts(t: &RequestTable) -> Vec<f64> {
    ok_rows(t).filter_map(|r| t.ttft_ms(r)).collect()
}
fn itls(t: &RequestTable) -> Vec<f64> {
    ok_rows(t).flat_map(|r| t.itl.of(r).to_vec()).collect()
}
fn e2els(t: &RequestTable) -> Vec<f64> {
    ok_rows(t).filter_map(|r| t.e2e_ms(r)).collect()
}
/// vLLM's TPOT: (E2E - TTFT) / (n - 1) for n > 1.
fn tpots(t: &RequestTable) -> Vec<f64> {
    ok_rows(t)
        .filter_map(|r| {
            let n = t.output_tokens(r).filter(|n| *n > 1.0)?;
            Some((t.e2e_ms(r)? - t.ttft_ms(r)?) / (n - 1.0))
        })
        .collect()
}

// ---------------------------------------------------------------- detection

fn check_detect(name: &str, want: Format) {
    let text = String::from_utf8(fixture(name)).expect("utf-8");
    assert_eq!(ingest::detect(&text), want, "{name}");
}

#[test]
fn detection_of_each_fixture() {
    check_detect("vllm_new.json", Format::Vllm);
    check_detect("vllm_old.json", Format::Vllm);
    check_detect("vllm_summary_only.json", Format::Vllm);
    check_detect("vllm_all_failed.json", Format::Vllm);
    check_detect("sglang.jsonl", Format::Sglang);
    check_detect("aiperf_profile_export.jsonl", Format::Aiperf);
    check_detect("genai_perf_profile_export.json", Format::GenaiPerf);
    check_detect("guidellm_benchmarks.json", Format::Guidellm);
    check_detect("llmperf_individual_responses.json", Format::Llmperf);
}

#[test]
fn detection_leaves_generic_logs_generic() {
    assert_eq!(
        ingest::detect(r#"{"ttft_ms": 120, "e2e_ms": 900, "duration": 2}"#),
        Format::JsonLines
    );
    assert_eq!(
        ingest::detect("[{\"ttft_ms\": 120}, {\"ttft_ms\": 130}]"),
        Format::JsonArray
    );
    assert_eq!(
        ingest::detect("[{\"ttft_s\": 0.1, \"end_to_end_latency_s\": 1.0}]"),
        Format::JsonArray
    );
    assert_eq!(
        ingest::detect("{\"metadata\": {\"a\": \"ttfts\"}, \"value\": 1}"),
        Format::JsonLines
    );
}

#[test]
fn detection_reads_only_the_head_of_a_big_file() {
    // A 40 MB-class vLLM file: its settings come first, the arrays after.
    let big = format!(
        "{{\"date\": \"20250101-000000\", \"model_id\": \"m\", \"duration\": 1.0, \"completed\": 1, \"input_lens\": [{}1]}}",
        "1, ".repeat(200_000)
    );
    assert_eq!(ingest::detect(&big), Format::Vllm);
    let sglang = "{\"backend\": \"sglang\", \"dataset_name\": \"random\", \"request_rate\": Infinity, \"completed\": 1, \"duration\": 1.0, \"mean_e2e_latency_ms\": 5.0}\n";
    assert_eq!(ingest::detect(sglang), Format::Sglang);
}

// ---------------------------------------------------------------- vLLM

#[test]
fn vllm_new_matches_the_files_own_summary() {
    let l = load("vllm_new.json");
    assert_eq!(l.fatal, None);
    assert_eq!(l.error_count, 0, "{:?}", messages(&l));
    let t = &l.table;
    let s = &l.meta.summary;
    let qs = [50.0, 90.0, 99.0, 99.9];
    parity(s, "ttft", ttfts(t), &qs);
    parity(s, "itl", itls(t), &qs);
    parity(s, "tpot", tpots(t), &qs);
    parity(s, "e2el", e2els(t), &qs);
    let queue: Vec<f64> = ok_rows(t).filter_map(|r| t.queue_ms(r)).collect();
    parity(s, "client_queue_time", queue, &qs);
}

#[test]
fn vllm_new_units_and_run_meta() {
    let l = load("vllm_new.json");
    let t = &l.table;
    assert_eq!(l.provenance.format, Some(Format::Vllm));
    assert_eq!(t.len(), 60);
    let m = &l.meta;
    assert_eq!(m.request_rate, Some(RequestRate::Infinite));
    assert_eq!(
        (m.max_concurrency, m.num_prompts, m.completed, m.failed),
        (Some(16), Some(60), Some(58), Some(2))
    );
    assert_eq!(m.burstiness, Some(1.0));
    assert_eq!(
        m.model_id.as_deref(),
        Some("meta-llama/Llama-3.1-8B-Instruct")
    );
    assert_eq!(m.date.as_deref(), Some("20251101-120000"));
    assert!(m.duration_s.is_some_and(|d| d > 0.0));
    assert!(!m.e2e_reconstructed);
    assert!(
        m.summary.contains_key("request_goodput") && m.summary.contains_key("request_throughput")
    );
    assert!(!m.summary.contains_key("request_rate") && !m.summary.contains_key("max_concurrency"));
    // Seconds in the file, ms in the table; start times in s; end = start + latency.
    let doc: serde_json::Value = serde_json::from_slice(&fixture("vllm_new.json")).expect("json");
    let at = |key: &str| doc[key][0].as_f64().expect("number");
    let got = |v: Option<f64>| v.expect("a value");
    close(got(t.ttft_ms(0)), at("ttfts") * 1000.0, "ttft s -> ms");
    close(got(t.start_s(0)), at("start_times"), "start in s");
    close(
        got(t.e2e_ms(0)),
        at("latencies") * 1000.0,
        "latency s -> ms",
    );
    close(
        got(t.end_s(0)),
        at("start_times") + at("latencies"),
        "end = start + latency",
    );
    close(
        got(t.queue_ms(0)),
        at("queue_times") * 1000.0,
        "queue s -> ms",
    );
    assert_eq!(t.input_tokens(0), doc["input_lens"][0].as_f64());
    assert_eq!(
        t.itl.of(0).len(),
        doc["itls"][0].as_array().map_or(0, Vec::len)
    );
    // A bundled stream: fewer gaps than output tokens - 1, and TPOT uses the tokens.
    assert!(t.itl.of(8).len() + 1 < t.output_tokens(8).map_or(0, |n| n as usize));
    // One-token outputs load, with no gaps.
    assert_eq!(t.output_tokens(5), Some(1.0));
    assert!(t.itl.of(5).is_empty());
    let model = t.label("model").expect("model label");
    assert_eq!(model.get(0), Some("meta-llama/Llama-3.1-8B-Instruct"));
    assert_eq!(model.codes.len(), 60);
}

#[test]
fn vllm_failed_entries_are_errors_not_fast_requests() {
    let l = load("vllm_new.json");
    let t = &l.table;
    for row in [11, 42] {
        assert_eq!(t.status[row], Status::Error, "row {row}");
        assert_eq!(
            t.ttft_ms(row),
            None,
            "ttft 0.0 of a failed request is not a measurement"
        );
        assert_eq!(t.e2e_ms(row), None);
        assert!(t.itl.of(row).is_empty());
        assert!(t.start_s(row).is_some(), "the send time is kept");
    }
    // A traceback is shortened to the exception it ends with.
    assert_eq!(
        t.error(11),
        Some("aiohttp.client_exceptions.ClientPayloadError: Response payload is not completed")
    );
    assert_eq!(t.error(42), Some("Bad Gateway"));
    assert_eq!(t.status.iter().filter(|s| **s == Status::Ok).count(), 58);
}

#[test]
fn vllm_old_rebuilds_e2e_and_says_so() {
    let l = load("vllm_old.json");
    assert_eq!(l.fatal, None);
    assert_eq!(l.error_count, 0, "{:?}", messages(&l));
    assert!(l.meta.e2e_reconstructed);
    assert!(
        l.warnings
            .iter()
            .any(|w| w.contains("rebuilt as TTFT + sum(ITL)")),
        "{:?}",
        l.warnings
    );
    let t = &l.table;
    let s = &l.meta.summary;
    // "request_goodput:" (with the colon) is stored under its name.
    assert!(
        s.contains_key("request_goodput"),
        "{:?}",
        s.keys().collect::<Vec<_>>()
    );
    assert_eq!(l.meta.request_rate, Some(RequestRate::PerSecond(4.0)));
    assert_eq!(l.meta.failed, None, "old files have no \"failed\" key");
    parity(s, "ttft", ttfts(t), &[99.0]);
    parity(s, "itl", itls(t), &[99.0]);
    // TPOT from the rebuilt E2E matches vLLM's TPOT from its own latency.
    parity(s, "tpot", tpots(t), &[99.0]);
    for row in ok_rows(t) {
        let rebuilt = t.ttft_ms(row).unwrap_or(0.0) + t.itl.of(row).iter().sum::<f64>();
        close(
            t.e2e_ms(row).unwrap_or(f64::NAN),
            rebuilt,
            "e2e = ttft + sum(itl)",
        );
    }
    assert_eq!(t.status[3], Status::Error);
    assert_eq!(t.error(3), Some("Internal Server Error"));
}

#[test]
fn vllm_summary_only_says_what_it_holds() {
    let l = load("vllm_summary_only.json");
    let fatal = l
        .fatal
        .as_deref()
        .expect("a summary-only file cannot give rows");
    assert!(fatal.contains("only the run's summary numbers"), "{fatal}");
    assert!(fatal.contains("20 completed"), "{fatal}");
    assert!(
        fatal.contains("Joint attainment needs per-request data"),
        "{fatal}"
    );
    assert!(fatal.contains("--save-detailed"), "{fatal}");
    assert!(!fatal.contains('\n'));
    assert!(l.table.is_empty());
    assert_eq!(l.provenance.format, Some(Format::Vllm));
    assert!(l.meta.summary.get("mean_ttft_ms").is_some_and(|x| *x > 0.0));
    assert_eq!(l.meta.completed, Some(20));
    assert_eq!(l.meta.request_rate, Some(RequestRate::PerSecond(8.0)));
}

#[test]
fn vllm_all_failed_still_loads() {
    let l = load("vllm_all_failed.json");
    assert_eq!(l.fatal, None);
    assert_eq!(l.table.len(), 6);
    assert!(l.table.status.iter().all(|s| *s == Status::Error));
    assert!((0..6).all(|r| l.table.ttft_ms(r).is_none()));
    assert_eq!((l.meta.completed, l.meta.failed), (Some(0), Some(6)));
    assert!(
        l.warnings
            .iter()
            .any(|w| w.contains("every one of the 6 requests failed")),
        "{:?}",
        l.warnings
    );
    assert!(l
        .table
        .error(0)
        .is_some_and(|e| e.starts_with("aiohttp.client_exceptions.ClientConnectorError")));
}

#[test]
fn vllm_unequal_arrays_are_a_located_error_and_complete_rows_are_kept() {
    let text = r#"{"duration": 1.0, "ttfts": [0.1, 0.2, 0.3, 0.4], "itls": [[0.01], [0.02], [0.03]],
        "output_lens": [2, 2, 2, 2], "errors": ["", "", "", ""]}"#;
    let l = load_text("short.json", text);
    assert_eq!(l.table.len(), 3);
    assert_eq!(l.error_count, 1);
    let e = &l.errors[0];
    assert_eq!(e.at.json_path.as_deref(), Some("$.itls"));
    assert_eq!(e.at.field.as_deref(), Some("itls"));
    assert!(
        e.message
            .contains("\"itls\" has 3 entries but \"ttfts\" has 4"),
        "{}",
        e.message
    );
}

#[test]
fn vllm_arrays_of_several_lengths_are_one_error_and_skipped_requests_are_counted() {
    // "ttfts" is the short one: 4 entries in every other array, 3 in it. One request is lost.
    let text = r#"{"duration": 1.0, "ttfts": [0.1, 0.2, 0.3], "itls": [[0.01], [0.02], [0.03], [0.04]],
        "output_lens": [2, 2, 2, 2], "errors": ["", "", "", ""]}"#;
    let l = load_text("short_ttfts.json", text);
    assert_eq!((l.table.len(), l.error_count), (3, 1));
    assert_eq!(l.errors.len(), 1);
    assert_eq!(l.errors[0].at.json_path.as_deref(), Some("$.ttfts"));
    assert!(
        l.errors[0].message.starts_with(
            "\"itls\", \"output_lens\" and \"errors\" have 4 entries but \"ttfts\" has 3"
        ),
        "{}",
        l.errors[0].message
    );
    // Two arrays short by different amounts: 5 requests, 2 read, so 3 skipped.
    let text = r#"{"duration": 1.0, "ttfts": [0.1, 0.2, 0.3, 0.4, 0.5], "itls": [[0.01], [0.02], [0.03]],
        "output_lens": [2, 2], "errors": ["", "", "", "", ""]}"#;
    let l = load_text("two_short.json", text);
    assert_eq!((l.table.len(), l.error_count), (2, 3));
    assert_eq!(l.errors.len(), 1);
    assert_eq!(l.errors[0].at.json_path.as_deref(), Some("$.output_lens"));
    assert!(
        l.errors[0].message.starts_with(
            "\"itls\" has 3 entries, \"output_lens\" has 2 entries but \"ttfts\" has 5"
        ),
        "{}",
        l.errors[0].message
    );
    assert!(
        l.errors[0]
            .message
            .contains("only the 2 requests that every array covers"),
        "{}",
        l.errors[0].message
    );
}

#[test]
fn truncated_json_is_one_sentence() {
    let bytes = fixture("vllm_new.json");
    let half = bytes.get(..bytes.len() / 2).expect("half");
    let l = ingest::parse("cut.json", half, &IngestOptions::default());
    let fatal = l.fatal.as_deref().expect("fatal");
    assert!(fatal.starts_with("cut.json:1:"), "{fatal}");
    assert!(
        fatal.contains("ends too early (truncated file?)"),
        "{fatal}"
    );
    assert!(!fatal.contains('\n'));
    assert!(l.table.is_empty());
}

#[test]
fn wrong_types_are_reported_with_their_json_path() {
    let text = r#"{"duration": 1.0, "ttfts": [0.1, 0.2, "fast", 0.4], "itls": [[0.01], [null], [0.03], [0.01, -0.5]],
        "output_lens": [2, 2, 2, 3], "input_lens": [5, 5, 5, 5.5], "errors": ["", "", "", ""]}"#;
    let l = load_text("types.json", text);
    let msgs = messages(&l);
    assert_eq!(l.table.len(), 1, "{msgs:?}");
    assert_eq!(
        msgs[0],
        "types.json at $.itls[1][0]: column \"itls\": a gap is null (seconds)"
    );
    assert_eq!(msgs[1], "types.json at $.ttfts[2]: column \"ttfts\": expected a number, found a string (\"fast\") (seconds)");
    assert_eq!(
        msgs[2],
        "types.json at $.input_lens[3]: column \"input_lens\": 5.5 is not a whole number of tokens"
    );
    assert_eq!(l.error_count, 3);
}

#[test]
fn python_nan_and_infinity_are_read() {
    // Python's json writes NaN and Infinity; request_rate Infinity means "inf".
    let text = r#"{"request_rate": Infinity, "burstiness": 1.0, "duration": 1.0, "ttfts": [0.1, NaN],
        "itls": [[0.01], [0.01]], "output_lens": [2, 2], "errors": ["", ""]}"#;
    let l = load_text("nan.json", text);
    assert_eq!(l.meta.request_rate, Some(RequestRate::Infinite));
    assert_eq!(l.table.len(), 1);
    assert_eq!(
        messages(&l),
        vec!["nan.json at $.ttfts[1]: column \"ttfts\": NaN is not a finite number (seconds)"]
    );
}

#[test]
fn vllm_ttft_zero_without_error_text_is_a_failure() {
    // vLLM writes `response.reason or ""`: a failed request can have an empty error text.
    let text = r#"{"duration": 1.0, "ttfts": [0.2, 0.0], "itls": [[0.01], []], "output_lens": [2, 0], "errors": ["", ""]}"#;
    let l = load_text("reason.json", text);
    assert_eq!(l.table.status, vec![Status::Ok, Status::Error]);
    assert!(l.table.error(1).is_some_and(|e| e.contains("ttft is 0.0")));
}

#[test]
fn vllm_append_result_lines_are_runs() {
    let run = |rate: &str| {
        format!(
            r#"{{"date": "d", "model_id": "m", "request_rate": {rate}, "duration": 2.0, "completed": 1, "ttfts": [0.1], "itls": [[0.02]], "latencies": [0.12], "output_lens": [2], "errors": [""]}}"#
        )
    };
    let text = format!("{}\n{}\n", run("1.0"), run("\"inf\""));
    let l = load_text("appended.json", &text);
    assert_eq!(l.table.len(), 2);
    assert_eq!(l.meta.duration_s, Some(4.0));
    assert_eq!(l.meta.request_rate, None, "the runs differ");
    let run_label = l.table.label("run").expect("run label");
    assert_eq!(run_label.get(0), Some("line 1, 1 req/s"));
    assert_eq!(run_label.get(1), Some("line 2, rate inf"));
    assert_eq!(
        (l.table.id(0), l.table.id(1)),
        ("appended.json:1#1".into(), "appended.json:2#1".into())
    );
}

// ---------------------------------------------------------------- SGLang

#[test]
fn sglang_runs_match_their_summaries() {
    let l = load("sglang.jsonl");
    assert_eq!(l.fatal, None);
    assert_eq!(l.error_count, 0, "{:?}", messages(&l));
    let t = &l.table;
    assert_eq!(t.len(), 16);
    assert!(l.meta.e2e_reconstructed);
    assert!(
        l.warnings.iter().any(|w| w.contains("holds 2 runs")),
        "{:?}",
        l.warnings
    );
    assert_eq!(l.meta.model_id.as_deref(), Some("Qwen/Qwen2.5-7B-Instruct"));
    assert_eq!(l.meta.request_rate, None, "inf and 2 req/s");
    let text = String::from_utf8(fixture("sglang.jsonl"))
        .expect("utf-8")
        .replace("Infinity", "\"inf\"");
    let runs = t.label("run").expect("run label");
    for (k, line) in text.lines().enumerate() {
        let doc: serde_json::Value = serde_json::from_str(line).expect("json");
        let summary: BTreeMap<String, f64> = doc
            .as_object()
            .expect("object")
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
            .collect();
        let rows: Vec<usize> = (0..t.len())
            .filter(|&r| runs.codes[r] == runs.codes[k * 8])
            .collect();
        assert_eq!(rows.len(), 8);
        let ok: Vec<usize> = rows
            .iter()
            .copied()
            .filter(|&r| t.status[r] == Status::Ok)
            .collect();
        let ttft: Vec<f64> = ok.iter().filter_map(|&r| t.ttft_ms(r)).collect();
        let itl: Vec<f64> = ok.iter().flat_map(|&r| t.itl.of(r).to_vec()).collect();
        parity(&summary, "ttft", ttft, &[99.0]);
        parity(&summary, "itl", itl, &[95.0, 99.0]);
    }
    assert_eq!(runs.get(0), Some("line 1, rate inf, concurrency 4"));
    assert_eq!(t.status[14], Status::Error);
    assert_eq!(t.id(14), "sglang.jsonl:2#7");
}

#[test]
fn sglang_single_run_with_infinity() {
    let text = "{\"backend\": \"sglang\", \"dataset_name\": \"random\", \"request_rate\": Infinity, \"max_concurrency\": 8, \"duration\": 1.5, \"completed\": 2, \"mean_e2e_latency_ms\": 100.0, \"ttfts\": [0.05, 0.06], \"itls\": [[0.02, 0.03], [0.02]], \"input_lens\": [10, 12], \"output_lens\": [3, 2], \"errors\": [\"\", \"\"]}\n";
    let l = load_text("one.jsonl", text);
    assert_eq!(l.provenance.format, Some(Format::Sglang));
    assert_eq!(l.meta.request_rate, Some(RequestRate::Infinite));
    assert_eq!(l.meta.max_concurrency, Some(8));
    assert_eq!(l.table.len(), 2);
    assert!(l.table.label("run").is_none());
    close(
        l.table.e2e_ms(0).unwrap_or(0.0),
        100.0,
        "0.05 + 0.02 + 0.03 s",
    );
}

#[test]
fn sglang_without_details_is_summary_only() {
    let text = "{\"backend\": \"sglang\", \"dataset_name\": \"random\", \"request_rate\": 4.0, \"duration\": 10.0, \"completed\": 40, \"mean_ttft_ms\": 80.5, \"mean_e2e_latency_ms\": 900.0}\n";
    let l = load_text("sum.jsonl", text);
    let fatal = l.fatal.as_deref().expect("fatal");
    assert!(
        fatal.contains("SGLang result holds only the run's summary numbers (40 completed"),
        "{fatal}"
    );
    assert!(fatal.contains("--output-details"), "{fatal}");
    assert_eq!(l.meta.summary.get("mean_ttft_ms"), Some(&80.5));
}

// ---------------------------------------------------------------- AIPerf

#[test]
fn aiperf_records_map_to_rows() {
    let l = load("aiperf_profile_export.jsonl");
    assert_eq!(l.fatal, None);
    assert_eq!(l.error_count, 0, "{:?}", messages(&l));
    let t = &l.table;
    assert_eq!(
        t.status,
        vec![
            Status::Ok,
            Status::Ok,
            Status::Error,
            Status::Cancelled,
            Status::Ok
        ]
    );
    assert_eq!(t.ttft_ms(0), Some(255.886568));
    assert_eq!(t.e2e_ms(0), Some(297.525228));
    assert_eq!(
        t.itl.of(0),
        &[4.898437, 5.316006, 4.801489, 5.674918, 4.811467, 5.097998, 5.504797, 5.533548]
    );
    assert_eq!(
        (t.input_tokens(0), t.output_tokens(0)),
        (Some(550.0), Some(9.0))
    );
    assert_eq!(t.id(0), "7609a2e7-aa53-4ab1-98f4-f35ecafefd25");
    close(
        t.start_s(0).unwrap_or(0.0),
        1_759_813_207.532_900_4,
        "request_start_ns in s",
    );
    // AIPerf's inter_token_latency (17.01 ms) is a per-request TPOT; the gaps are inter_chunk_latency.
    assert_eq!(t.itl.of(1), &[12.5, 14.25, 21.0, 18.3, 19.0]);
    assert_eq!(
        t.error(2),
        Some("InternalServerError (500): Internal Server Error")
    );
    assert_eq!(t.input_tokens(2), Some(612.0), "error_isl");
    // A cancelled request keeps how long it waited.
    close(
        t.end_s(3).unwrap_or(0.0) - t.start_s(3).unwrap_or(0.0),
        2.0,
        "cancel wait",
    );
    assert_eq!(t.output_tokens(4), Some(1.0));
    assert_eq!(t.line.iter().collect::<Vec<_>>(), [1, 2, 3, 4, 5]);
}

#[test]
fn aiperf_units_phases_and_bad_lines() {
    let text = concat!(
        "{\"metadata\": {\"benchmark_phase\": \"warmup\", \"request_start_ns\": 1}, \"metrics\": {\"request_latency\": {\"value\": 1, \"unit\": \"ms\"}}, \"error\": null}\n",
        "{\"metadata\": {\"benchmark_phase\": \"profiling\", \"request_start_ns\": 2000000000}, \"metrics\": {\"time_to_first_token\": {\"value\": 150000000, \"unit\": \"ns\"}, \"request_latency\": {\"value\": 0.5, \"unit\": \"sec\"}}, \"error\": null}\n",
        "{\"metadata\": {}, \"metrics\": {\"time_to_first_token\": {\"value\": \"slow\", \"unit\": \"ms\"}}, \"error\": null}\n",
        "{\"metadata\": {}, \"metrics\": {\"time_to_first_token\": {\"value\": 3, \"unit\": \"tokens\"}}, \"error\": null}\n",
        "{\"metadata\": {}, \"metrics\": {\"time_to_fi\n",
    );
    let l = ingest::parse(
        "a.jsonl",
        text.as_bytes(),
        &IngestOptions {
            format: Some(Format::Aiperf),
            ..Default::default()
        },
    );
    assert_eq!(l.table.len(), 1);
    assert_eq!(l.table.ttft_ms(0), Some(150.0));
    assert_eq!(l.table.e2e_ms(0), Some(500.0));
    assert_eq!(l.table.start_s(0), Some(2.0));
    assert!(
        l.warnings
            .iter()
            .any(|w| w.contains("1 records of phase warmup were left out")),
        "{:?}",
        l.warnings
    );
    let msgs = messages(&l);
    assert_eq!(msgs[0], "a.jsonl:3 at $.metrics.time_to_first_token.value: column \"time_to_first_token\": expected a number, found a string (\"slow\") (milliseconds)");
    assert_eq!(msgs[1], "a.jsonl:4 at $.metrics.time_to_first_token.unit: column \"time_to_first_token\": \"tokens\" is not a unit of time (ns, us, ms, s)");
    assert!(msgs[2].starts_with("a.jsonl:5:"), "{}", msgs[2]);
    assert!(msgs[2].contains("truncated"), "{}", msgs[2]);
}

// ---------------------------------------------------------------- GenAI-Perf

#[test]
fn genai_perf_timestamps_give_ttft_itl_and_e2e() {
    let l = load("genai_perf_profile_export.json");
    assert_eq!(l.fatal, None);
    assert_eq!(l.error_count, 0, "{:?}", messages(&l));
    let t = &l.table;
    assert_eq!(t.len(), 4);
    // A: the role-only chunk, the empty final delta and [DONE] carry no text and are dropped.
    assert_eq!((t.ttft_ms(0), t.e2e_ms(0)), (Some(120.0), Some(163.0)));
    assert_eq!(t.itl.of(0), &[20.0, 23.0]);
    assert_eq!(
        t.output_tokens(0),
        Some(3.0),
        "responses with text, for lack of usage"
    );
    // B: usage in the stream gives the token counts.
    assert_eq!((t.ttft_ms(1), t.e2e_ms(1)), (Some(200.0), Some(262.0)));
    assert_eq!(
        (t.input_tokens(1), t.output_tokens(1)),
        (Some(14.0), Some(4.0))
    );
    // C: two events in one response are one timestamp.
    assert_eq!((t.ttft_ms(2), t.e2e_ms(2)), (Some(95.0), Some(95.0)));
    assert!(t.itl.of(2).is_empty());
    // D: an error event and no text.
    assert_eq!(t.status[3], Status::Error);
    assert!(
        t.error(3).is_some_and(|e| e.contains("overloaded")),
        "{:?}",
        t.error(3)
    );
    assert_eq!(t.ttft_ms(3), None);
    close(
        t.start_s(0).unwrap_or(0.0),
        1_730_000_000.0,
        "timestamp ns in s",
    );
    assert_eq!(l.meta.max_concurrency, Some(2));
    assert_eq!(
        l.meta.model_id.as_deref(),
        Some("meta-llama/Meta-Llama-3-8B-Instruct")
    );
    assert!(
        l.warnings
            .iter()
            .any(|w| w.contains("GenAI-Perf tokenizes")),
        "{:?}",
        l.warnings
    );
}

#[test]
fn genai_perf_experiments_are_runs_and_a_warning_says_so() {
    // The fixture's experiment (concurrency 2) and the same requests again at concurrency 4.
    let mut doc: serde_json::Value =
        serde_json::from_slice(&fixture("genai_perf_profile_export.json")).expect("JSON");
    let mut second = doc["experiments"][0].clone();
    second["experiment"]["value"] = 4.into();
    doc["experiments"]
        .as_array_mut()
        .expect("experiments")
        .push(second);
    let l = load_text("two.json", &doc.to_string());
    assert_eq!(l.table.len(), 8);
    let runs = l.table.label("run").expect("run label");
    assert_eq!(runs.values, ["concurrency 2", "concurrency 4"]);
    assert!(
        l.warnings
            .iter()
            .any(|w| w.starts_with("two.json holds 2 experiments;")),
        "{:?}",
        l.warnings
    );
    // One experiment: no such warning.
    let one = load("genai_perf_profile_export.json");
    assert!(!one.warnings.iter().any(|w| w.contains("experiments")));
}

// ---------------------------------------------------------------- GuideLLM

#[test]
fn guidellm_requests_by_status() {
    let l = load("guidellm_benchmarks.json");
    assert_eq!(l.fatal, None);
    assert_eq!(l.error_count, 0, "{:?}", messages(&l));
    let t = &l.table;
    assert_eq!(
        t.status,
        vec![
            Status::Ok,
            Status::Ok,
            Status::Ok,
            Status::Error,
            Status::Cancelled
        ]
    );
    assert_eq!(t.ttft_ms(0), Some(250.0));
    assert_eq!(t.e2e_ms(0), Some(1500.0));
    assert_eq!(
        (t.input_tokens(0), t.output_tokens(0)),
        (Some(512.0), Some(50.0))
    );
    assert_eq!(t.id(0), "3b6f0a");
    assert!(!t.has_itl(), "GuideLLM keeps no individual gaps");
    assert!(t
        .error(3)
        .is_some_and(|e| e.contains("503 Service Unavailable")));
    // The incomplete request was cut off: cancelled, with what it measured before.
    assert!(t.ttft_ms(4).is_some());
    assert_eq!(t.e2e_ms(4), None);
    let m = &l.meta;
    assert_eq!(m.request_rate, Some(RequestRate::PerSecond(2.0)));
    assert_eq!(m.duration_s, Some(4.0));
    assert_eq!((m.completed, m.failed), (Some(3), Some(1)));
    assert_eq!(m.model_id.as_deref(), Some("Qwen/Qwen3-8B"));
    assert!(
        m.summary.contains_key("time_to_first_token_ms.mean"),
        "{:?}",
        m.summary.keys().collect::<Vec<_>>()
    );
    assert_eq!(
        t.label("model").and_then(|c| c.get(4)),
        Some("Qwen/Qwen3-8B")
    );
}

#[test]
fn guidellm_v02_schema_and_sweeps() {
    // GuideLLM 0.2: timings on the request, requests_per_second sweep of two benchmarks.
    let req = |id: &str, start: f64, first: f64, end: f64| {
        format!(
            r#"{{"type_": "generative_text_response", "request_id": "{id}", "prompt_tokens": 100, "output_tokens": 11,
               "start_time": {start}, "first_token_time": {first}, "last_token_time": {end}, "end_time": {end},
               "request_latency": {lat}, "time_to_first_token_ms": {ttft}, "time_per_output_token_ms": 1.0}}"#,
            lat = end - start,
            ttft = (first - start) * 1000.0
        )
    };
    let bench = |rate: f64, ok: String| {
        format!(
            r#"{{"type_": "generative_benchmark", "args": {{"strategy": {{"type_": "poisson", "rate": {rate}}}}},
               "worker": {{"backend_model": "llama"}}, "start_time": 10.0, "end_time": 20.0, "duration": 10.0,
               "request_totals": {{"successful": 1, "incomplete": 0, "errored": 1, "total": 2}},
               "requests": {{"successful": [{ok}], "incomplete": [], "errored": [{{"request_id": "e", "error": "boom", "start_time": 11.0, "end_time": 11.5, "prompt_tokens": 100, "output_tokens": 0}}]}}}}"#
        )
    };
    let text = format!(
        r#"{{"benchmarks": [{}, {}]}}"#,
        bench(1.0, req("a", 10.0, 10.25, 11.0)),
        bench(2.0, req("b", 12.0, 12.5, 14.0))
    );
    let l = load_text("old.json", &text);
    assert_eq!(l.provenance.format, Some(Format::Guidellm));
    assert_eq!(l.error_count, 0, "{:?}", messages(&l));
    let t = &l.table;
    assert_eq!(t.len(), 4);
    assert_eq!(t.ttft_ms(0), Some(250.0));
    assert_eq!(t.e2e_ms(0), Some(1000.0));
    assert_eq!(t.status[1], Status::Error);
    assert_eq!(t.error(1), Some("boom"));
    assert_eq!(l.meta.duration_s, Some(20.0));
    assert_eq!(l.meta.request_rate, None);
    assert_eq!(l.meta.model_id.as_deref(), Some("llama"));
    let runs = t.label("run").expect("run label");
    assert_eq!(
        (runs.get(0), runs.get(2)),
        (Some("1 poisson@1"), Some("2 poisson@2"))
    );
}

// ---------------------------------------------------------------- LLMPerf

#[test]
fn llmperf_individual_responses() {
    let l = load("llmperf_individual_responses.json");
    assert_eq!(l.fatal, None);
    assert_eq!(l.error_count, 0, "{:?}", messages(&l));
    let t = &l.table;
    assert_eq!(
        t.status,
        vec![Status::Ok, Status::Ok, Status::Error, Status::Ok]
    );
    close(t.ttft_ms(0).unwrap_or(0.0), 312.45, "ttft_s in ms");
    close(
        t.e2e_ms(0).unwrap_or(0.0),
        1816.247,
        "end_to_end_latency_s in ms",
    );
    assert_eq!(
        (t.input_tokens(0), t.output_tokens(0)),
        (Some(550.0), Some(64.0))
    );
    // inter_token_latency_s (E2E / n, TTFT included) is not a gap list.
    assert!(!t.has_itl());
    assert_eq!(
        t.ttft_ms(2),
        None,
        "the 0 of a failed request is not a measurement"
    );
    assert!(
        t.error(2).is_some_and(|e| e.starts_with("error 429: ")),
        "{:?}",
        t.error(2)
    );
    assert_eq!(t.output_tokens(3), Some(1.0));
    assert_eq!(t.line.iter().collect::<Vec<_>>(), [1, 2, 3, 4]);
}

#[test]
fn llmperf_summary_file_is_explained() {
    let text = r#"{"model": "m", "num_concurrent_requests": 4, "results_ttft_s_mean": 0.3, "results_ttft_s_quantiles_p99": 0.5}"#;
    let l = load_text("x_summary.json", text);
    assert_eq!(l.provenance.format, Some(Format::Llmperf));
    assert!(
        l.fatal
            .as_deref()
            .is_some_and(|f| f.contains("individual_responses")),
        "{:?}",
        l.fatal
    );
    assert_eq!(l.meta.summary.get("results_ttft_s_mean"), Some(&0.3));
}

#[test]
fn llmperf_wrong_types_have_paths() {
    let text = r#"[{"ttft_s": "0.1", "end_to_end_latency_s": 1.0, "number_input_tokens": 5, "number_output_tokens": 6, "error_code": null, "error_msg": ""}]"#;
    let l = ingest::parse(
        "r.json",
        text.as_bytes(),
        &IngestOptions {
            format: Some(Format::Llmperf),
            ..Default::default()
        },
    );
    assert_eq!(messages(&l), vec!["r.json at $[0].ttft_s: column \"ttft_s\": expected a number, found a string (\"0.1\") (seconds)"]);
    assert!(l
        .fatal
        .as_deref()
        .is_some_and(|f| f.starts_with("r.json: no row could be read")));
}

// ---------------------------------------------------------------- robustness

#[test]
fn forced_formats_on_the_wrong_file_fail_with_a_sentence() {
    let csv = b"ttft_ms,e2e_ms\n1,2\n";
    for format in [
        Format::Vllm,
        Format::Sglang,
        Format::Aiperf,
        Format::GenaiPerf,
        Format::Guidellm,
        Format::Llmperf,
    ] {
        let l = ingest::parse(
            "a.csv",
            csv,
            &IngestOptions {
                format: Some(format),
                ..Default::default()
            },
        );
        assert!(l.fatal.is_some() || l.error_count > 0, "{format:?}");
        assert!(l.table.is_empty(), "{format:?}");
    }
    let wrong = br#"{"experiments": 3, "benchmarks": {"a": 1}, "ttfts": {"x": 1}}"#;
    for format in [
        Format::Vllm,
        Format::GenaiPerf,
        Format::Guidellm,
        Format::Llmperf,
    ] {
        let l = ingest::parse(
            "w.json",
            wrong,
            &IngestOptions {
                format: Some(format),
                ..Default::default()
            },
        );
        assert!(l.fatal.is_some(), "{format:?}");
    }
}

#[test]
fn no_panic_on_cut_or_mislabelled_files() {
    let names = [
        "vllm_new.json",
        "vllm_old.json",
        "vllm_summary_only.json",
        "vllm_all_failed.json",
        "sglang.jsonl",
        "aiperf_profile_export.jsonl",
        "genai_perf_profile_export.json",
        "guidellm_benchmarks.json",
        "llmperf_individual_responses.json",
    ];
    let formats = [
        Format::Vllm,
        Format::Sglang,
        Format::Aiperf,
        Format::GenaiPerf,
        Format::Guidellm,
        Format::Llmperf,
    ];
    for name in names {
        let bytes = fixture(name);
        for k in 1..=16 {
            let cut = bytes.get(..bytes.len() * k / 16).unwrap_or(&[]);
            for format in formats {
                let l = ingest::parse(
                    name,
                    cut,
                    &IngestOptions {
                        format: Some(format),
                        ..Default::default()
                    },
                );
                assert!(
                    l.fatal.is_none() || l.table.is_empty(),
                    "{name} as {format:?}"
                );
            }
        }
    }
}

/// Every file's provenance carries its SHA-256, read or not (the digests are `hashlib`'s); with
/// `sha256_elsewhere`, a file that was read leaves it to the caller, and one that could not be
/// read still has it.
#[test]
fn a_files_digest_is_in_its_provenance_whether_it_was_read_or_not() {
    let text = b"ttft_ms\n1\n";
    let binary = b"\x00\x01binary\x00";
    const TEXT: &str = "3380ee072bc003d670a4cb0a6321b7bb87634c8fc82bba1129e60bc893e580d9";
    const BINARY: &str = "1bb1b44cd4480e9b18d6291e33bb53ce27db0d44b5bc42cd5d566d6afbecb647";
    let here = IngestOptions::default();
    let elsewhere = IngestOptions {
        sha256_elsewhere: true,
        ..IngestOptions::default()
    };
    let read = ingest::parse("a.csv", text, &here);
    assert!(read.fatal.is_none());
    assert_eq!(read.provenance.sha256, TEXT);
    assert_eq!(
        ingest::parse("a.csv", text, &elsewhere).provenance.sha256,
        ""
    );
    for options in [&here, &elsewhere] {
        let unread = ingest::parse("b.bin", binary, options);
        assert!(unread.fatal.is_some());
        assert_eq!(unread.provenance.sha256, BINARY);
        assert_eq!(unread.provenance.size_bytes, binary.len() as u64);
    }
}
