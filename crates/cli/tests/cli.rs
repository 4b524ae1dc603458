//! The `slo` binary as a user runs it: exit codes, standard output and standard error, checked
//! against the contract in docs/cli.md (and docs/sweep.md, docs/spec.md, docs/production.md).
//!
//! Every number asserted comes from a reference written here: a hand calculation in a comment,
//! a fixture's own summary fields (vLLM's `p90_ttft_ms` ...), or the generator-written
//! `expected.json` next to a fixture. Never from what the program printed before.
//!
//! Commands run from this crate's directory, so fixture paths are short relative paths, as a user
//! would type them; files are shared with slo-core's tests rather than copied.
//!
//! The worked example (crates/core/tests/fixtures/worked_example.csv), by hand. Ten requests,
//! 101 output tokens each, TPOT = (E2E - TTFT) / (101 - 1):
//!
//! | id | TTFT | E2E  | TPOT | TTFT <= 500 | TPOT <= 50 |
//! |----|-----:|-----:|-----:|---|---|
//! | 1  | 180  | 4010 | 38.3 | yes | yes |
//! | 2  | 220  | 4690 | 44.7 | yes | yes |
//! | 3  | 260  | 4860 | 46.0 | yes | yes |
//! | 4  | 310  | 5240 | 49.3 | yes | yes |
//! | 5  | 640  | 4420 | 37.8 | NO  | yes |
//! | 6  | 300  | 6900 | 66.0 | yes | NO  |
//! | 7  | 350  | 5230 | 48.8 | yes | yes |
//! | 8  | 240  | 4600 | 43.6 | yes | yes |
//! | 9  | 390  | 5220 | 48.3 | yes | yes |
//! | 10 | 410  | 5330 | 49.2 | yes | yes |
//!
//! Joint attainment at TTFT 500 ms and TPOT 50 ms: 8 of 10 = 80 % (request 5 misses TTFT, 6 TPOT).
//! Sorted TTFT: 180 220 240 260 300 310 350 390 410 640. Sorted TPOT: 37.8 38.3 43.6 44.7 46.0
//! 48.3 48.8 49.2 49.3 66.0. numpy linear p90: position (n - 1)·0.9 = 8.1 (0-based), so
//! TTFT 410 + 0.1·(640 - 410) = 433 and TPOT 49.3 + 0.1·(66 - 49.3) = 50.97. Nearest rank p90:
//! the ⌈0.9·10⌉ = 9th value: TTFT 410, TPOT 49.3.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

// ---------------------------------------------------------------- fixtures (relative to crates/cli)

const WORKED: &str = "../core/tests/fixtures/worked_example.csv";
/// The worked example in seconds, with unit-less column names (`ttft`, `e2e`).
const WORKED_SECONDS: &str = "tests/fixtures/worked_example_seconds.csv";
/// The worked example's SLO: TTFT 500 ms, TPOT 50 ms, nearest rank, 99 % over 28 days,
/// 1,000,000 requests a window.
const WORKED_SPEC: &str = "tests/fixtures/worked_example_spec.json";
/// 120 requests, one a minute from 2026-11-01 00:00 UTC; TTFT 200 ms except 900 ms at 01:05,
/// 01:15, 01:25, 01:35, 01:45 and 01:55.
const BUDGET_LOG: &str = "tests/fixtures/budget_log.csv";
/// One class with TPOT 50 ms and the stall rule "a gap over 400 ms".
const STALL_SPEC: &str = "tests/fixtures/stall_spec.json";
/// Three requests with a `team` column (which no alias names): TTFT 100, 200, 300 ms for teams
/// a, b, a; and a spec whose classes read `team` (a, and c, which no request has), `tenant`
/// (which the log lacks), and a default class.
const TEAM_LOG: &str = "tests/fixtures/team_log.csv";
const TEAM_SPEC: &str = "tests/fixtures/team_spec.json";
const SQL_REQUESTS: &str = "../core/tests/fixtures/sql_requests.csv";
const VLLM_NEW: &str = "../core/tests/fixtures/formats/vllm_new.json";
const VLLM_OLD: &str = "../core/tests/fixtures/formats/vllm_old.json";
const COMPARE_SPEC: &str = "../core/tests/fixtures/compare/spec.json";
const RUN_A: &str = "../core/tests/fixtures/compare/run_a.csv";
const RUN_B: &str = "../core/tests/fixtures/compare/run_b.csv";
const COMPARE_EXPECTED: &str = "../core/tests/fixtures/compare/expected.json";
const SWEEP: &str = "../core/tests/fixtures/sweep";
const SWEEP_RATES: [u32; 7] = [1, 2, 4, 6, 8, 10, 12];
const PROM: &str = "../core/tests/fixtures/prometheus";
const MALFORMED: &str = "../../tests/malformed";

// ---------------------------------------------------------------- helpers

/// What a user sees after one run of `slo`.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `slo ARGS` from this crate's directory and captures exit code, stdout and stderr.
fn slo(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_slo"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run the slo binary");
    Run {
        code: out
            .status
            .code()
            .expect("slo exited with a code, not a signal"),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

impl Run {
    /// Asserts the exit code, showing stderr when it is not the expected one.
    #[track_caller]
    fn expect_code(&self, code: i32) -> &Run {
        assert_eq!(
            self.code, code,
            "exit code\nstderr:\n{}\nstdout:\n{}",
            self.stderr, self.stdout
        );
        self
    }

    /// Standard output parsed as JSON, after asserting exit 0.
    #[track_caller]
    fn json(&self) -> Value {
        self.expect_code(0);
        serde_json::from_str(&self.stdout).expect("stdout is one JSON document")
    }
}

/// A fixture file parsed as JSON (the references: vLLM summaries, expected.json files).
fn read_json(path: &str) -> Value {
    let full = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want.abs().max(1.0)
}

#[track_caller]
fn assert_close(got: &Value, want: f64, what: &str) {
    let g = got
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: expected a number, found {got}"));
    assert!(close(g, want), "{what}: got {g}, want {want}");
}

#[track_caller]
fn number(v: &Value, what: &str) -> f64 {
    v.as_f64()
        .unwrap_or_else(|| panic!("{what}: expected a number, found {v}"))
}

#[track_caller]
fn array<'a>(v: &'a Value, what: &str) -> &'a Vec<Value> {
    v.as_array()
        .unwrap_or_else(|| panic!("{what}: expected an array, found {v}"))
}

/// The group of `groups` (an array) with this class and bucket.
#[track_caller]
fn group<'a>(groups: &'a Value, class: &str, bucket: &str) -> &'a Value {
    array(groups, "groups")
        .iter()
        .find(|g| g["class"] == class && g["bucket"] == bucket)
        .unwrap_or_else(|| panic!("no group {class} / {bucket} in {groups}"))
}

/// The Wilson score interval at 95 % (z = 1.959963984540054):
/// (p + z²/2n ± z·√(p(1-p)/n + z²/4n²)) / (1 + z²/n).
fn wilson(good: f64, n: f64) -> (f64, f64) {
    let z = 1.959963984540054_f64;
    let p = good / n;
    let denominator = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denominator;
    (centre - half, centre + half)
}

/// Two-sided p-value of a standard normal z: 2·∫_{|z|}^{∞} φ(t) dt, by Simpson's rule over
/// [|z|, |z| + 12] (the tail beyond is below 1e-30 of it).
fn two_sided_p(z: f64) -> f64 {
    let phi = |t: f64| (-t * t / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let (a, steps) = (z.abs(), 100_000);
    let h = 12.0 / f64::from(steps);
    let mut sum = phi(a) + phi(a + 12.0);
    for k in 1..steps {
        let weight = if k % 2 == 1 { 4.0 } else { 2.0 };
        sum += weight * phi(a + h * f64::from(k));
    }
    2.0 * sum * h / 3.0
}

/// A fresh directory under the system temp dir, removed on drop: the only place tests write.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("slo-cli-tests-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temp dir");
        TempDir(dir)
    }

    fn file(&self, name: &str) -> String {
        self.0
            .join(name)
            .to_str()
            .expect("temp path is UTF-8")
            .to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------- slo report

#[test]
fn report_json_gives_80_percent_joint_attainment_on_the_worked_example() {
    let r = slo(&[
        "report",
        WORKED,
        "--ttft",
        "500",
        "--tpot",
        "50",
        "--percentiles",
        "90",
        "--format",
        "json",
    ])
    .json();
    let o = &r["overall"];
    // Hand table above: 10 completed, 8 good.
    assert_eq!(o["attempted"], 10);
    assert_eq!(o["completed"], 10);
    assert_eq!(o["failed"], 0);
    assert_eq!(o["excluded"], 0);
    assert_eq!(o["good"], 8);
    assert_close(&o["attainment"], 0.8, "attainment");
    assert_close(&o["attainment_of_completed_vllm"], 0.8, "good / completed");
    let (lo, hi) = wilson(8.0, 10.0); // 0.4902, 0.9433
    assert_close(&o["attainment_ci95"][0], lo, "Wilson low");
    assert_close(&o["attainment_ci95"][1], hi, "Wilson high");
    // 80 % is below the default objective of 99 %.
    assert_eq!(o["meets_objective"], false);
    assert_eq!(r["objective"], 0.99);
    assert_eq!(r["method"], "linear");

    // Percentiles by vLLM's key, method linear (numpy's default): 433 and 50.97.
    assert_close(&o["percentiles"]["ttft_ms"]["90"], 433.0, "p90 TTFT");
    assert_close(&o["percentiles"]["tpot_ms"]["90"], 50.97, "p90 TPOT");
    // No ITL or queue column: absent values are null, never NaN.
    assert!(o["percentiles"]["itl_ms"]["90"].is_null());
    assert!(o["percentiles"]["queue_ms"]["90"].is_null());
    // Each indicator: request 5 is the only TTFT miss, request 6 the only TPOT miss.
    let ttft = &o["percentile_details"]["ttft_ms"];
    assert_eq!(ttft["n"], 10);
    assert_eq!(ttft["met"], 9);
    assert_eq!(ttft["missed"], 1);
    assert_eq!(ttft["target_ms"], 500.0);
    assert_close(&ttft["mean"], 330.0, "mean TTFT"); // 3300 / 10
    let tpot = &o["percentile_details"]["tpot_ms"];
    assert_eq!(tpot["met"], 9);
    assert_eq!(tpot["missed"], 1);
    assert_close(&tpot["mean"], 47.2, "mean TPOT"); // 472.0 / 10

    // One cell without --spec or --buckets.
    let groups = array(&r["groups"], "groups");
    assert_eq!(groups.len(), 1);
    assert_eq!(group(&r["groups"], "all", "all lengths")["good"], 8);

    // The failing requests, and why.
    assert_eq!(r["failing_total"], 2);
    let failing = array(&r["failing_requests"], "failing_requests");
    let summary: Vec<(String, Value)> = failing
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap_or("").to_string(),
                f["missed"].clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("5".to_string(), serde_json::json!(["ttft_ms"])),
            ("6".to_string(), serde_json::json!(["tpot_ms"]))
        ]
    );
    let failures: Vec<(Value, Value)> = array(&o["failures"], "failures")
        .iter()
        .map(|f| (f["label"].clone(), f["count"].clone()))
        .collect();
    assert!(failures.contains(&("TTFT only".into(), 1.into())));
    assert!(failures.contains(&("TPOT only".into(), 1.into())));

    // No timestamps and no stated duration: goodput is null, and duration_source says why.
    assert!(r["duration_s"].is_null());
    assert!(o["goodput_rps"].is_null());
    assert!(!r["duration_source"].as_str().unwrap_or("").is_empty());

    // Provenance of the one file.
    let file = &r["files"][0];
    let size = std::fs::metadata(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(WORKED))
        .expect("fixture")
        .len();
    assert_eq!(file["name"], "worked_example.csv");
    assert_eq!(file["size_bytes"], size);
    assert_eq!(file["format"], "csv");
    assert_eq!(file["rows_read"], 10);
    assert_eq!(file["rows_skipped"], 0);
    let sha = file["sha256"].as_str().unwrap_or("");
    assert!(sha.len() == 64 && sha.chars().all(|c| c.is_ascii_hexdigit()));
}

#[test]
fn report_percentiles_follow_the_method_flag() {
    // p90 of the sorted TTFTs x(1..10) = 180 220 240 260 300 310 350 390 410 640, by
    // Hyndman & Fan's definitions as numpy names them (n = 10, q = 0.9, 1-based positions):
    let cases: [(&str, f64); 14] = [
        ("inverted_cdf", 410.0),              // first k with k/n >= 0.9: x(9)
        ("averaged_inverted_cdf", 525.0),     // n·q = 9 is whole: (x(9) + x(10)) / 2
        ("closest_observation", 410.0),       // n·q - 1/2 = 8.5, not whole: x(9)
        ("interpolated_inverted_cdf", 410.0), // n·q = 9: x(9)
        ("hazen", 525.0),                     // n·q + 1/2 = 9.5: 410 + 0.5·230
        ("weibull", 617.0),                   // (n + 1)·q = 9.9: 410 + 0.9·230
        ("linear", 433.0),                    // (n - 1)·q + 1 = 9.1: 410 + 0.1·230
        ("median_unbiased", 410.0 + (9.3 + 1.0 / 3.0 - 9.0) * 230.0), // (n + 1/3)·q + 1/3
        ("normal_unbiased", 548.0),           // (n + 1/4)·q + 3/8 = 9.6: 410 + 0.6·230
        ("lower", 410.0),                     // floor(9.1): x(9)
        ("higher", 640.0),                    // ceil(9.1): x(10)
        ("midpoint", 525.0),                  // (x(9) + x(10)) / 2
        ("nearest", 410.0),                   // round(9.1): x(9)
        ("nearest_rank", 410.0),              // ⌈n·q⌉ = 9: x(9)
    ];
    for (method, want) in cases {
        let r = slo(&[
            "report",
            WORKED,
            "--ttft",
            "500",
            "--percentiles",
            "90",
            "--method",
            method,
            "--format",
            "json",
        ])
        .json();
        assert_eq!(r["method"], method);
        let o = &r["overall"];
        assert_close(&o["percentiles"]["ttft_ms"]["90"], want, method);
        // The reference methods are given whatever the chosen one.
        let p90 = &o["percentile_details"]["ttft_ms"]["by_percentile"]["90"];
        assert_close(&p90["value"], want, method);
        assert_close(&p90["linear"], 433.0, method);
        assert_close(&p90["nearest_rank"], 410.0, method);
    }
}

#[test]
fn report_notes_that_both_p90s_pass_while_only_80_percent_are_good() {
    // Nearest rank: p90 TTFT 410 <= 500 and p90 TPOT 49.3 <= 50 both pass, joint attainment 80 %.
    // Linear would give p90 TPOT 50.97 > 50: the verdict flips with the method.
    let r = slo(&[
        "report",
        WORKED,
        "--ttft",
        "500",
        "--tpot",
        "50",
        "--percentiles",
        "90",
        "--method",
        "nearest_rank",
        "--format",
        "json",
    ])
    .json();
    let o = &r["overall"];
    assert_close(&o["percentiles"]["ttft_ms"]["90"], 410.0, "p90 TTFT");
    assert_close(&o["percentiles"]["tpot_ms"]["90"], 49.3, "p90 TPOT");
    let tpot = &o["percentile_details"]["tpot_ms"]["by_percentile"]["90"];
    assert_eq!(tpot["pass"], true);
    assert_eq!(tpot["verdict_flips_with_method"], true);
    assert_close(&tpot["linear"], 50.97, "linear p90 TPOT");
    // The sentence docs/cli.md gives as its example of a note.
    assert_eq!(
        o["notes"],
        serde_json::json!([
            "p90 TTFT and p90 TPOT both pass, yet only 80 % of requests met every target at once"
        ])
    );
}

#[test]
fn report_check_exits_1_when_attainment_is_below_the_objective() {
    // 80 % good (hand table) against the default objective of 99 %.
    let run = slo(&["report", WORKED, "--ttft", "500", "--tpot", "50", "--check"]);
    run.expect_code(1);
    assert!(
        run.stderr.contains("check failed"),
        "stderr: {}",
        run.stderr
    );
    // The report is still printed.
    assert!(run
        .stdout
        .contains("80 % of 10 attempted requests met every target"));
    // 80 % is also below 81 %.
    slo(&[
        "report",
        WORKED,
        "--ttft",
        "500",
        "--tpot",
        "50",
        "--objective",
        "0.81",
        "--check",
    ])
    .expect_code(1);
}

#[test]
fn report_check_exits_0_when_the_objective_is_met() {
    // 80 % is not below an objective of 80 %: the gate is "below", not "at or below".
    slo(&[
        "report",
        WORKED,
        "--ttft",
        "500",
        "--tpot",
        "50",
        "--objective",
        "0.8",
        "--check",
    ])
    .expect_code(0);
    // The largest TTFT is 640 and the largest TPOT 66.0 (hand table); thresholds are inclusive,
    // so at --ttft 640 --tpot 66 every request is good: 100 % >= 99 %.
    let run = slo(&[
        "report", WORKED, "--ttft", "640", "--tpot", "66", "--check", "--format", "json",
    ]);
    assert_eq!(run.json()["overall"]["good"], 10);
    // Without --check a failing objective still exits 0: the command ran.
    slo(&["report", WORKED, "--ttft", "500", "--tpot", "50"]).expect_code(0);
}

/// Output is buffered (one system call per line made a million-row CSV twice as slow); an error
/// when the buffer is flushed must still reach the user. /dev/full refuses every write.
#[cfg(target_os = "linux")]
#[test]
fn a_report_that_cannot_be_written_exits_2_and_says_why() {
    for format in ["json", "csv", "text"] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("open /dev/full");
        let out = Command::new(env!("CARGO_BIN_EXE_slo"))
            .args(["report", WORKED, "--ttft", "500", "--format", format])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .stdout(full)
            .output()
            .expect("run the slo binary");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{format}: {stderr}");
        assert!(stderr.contains("writing the report"), "{format}: {stderr}");
    }
}

#[test]
fn report_csv_has_one_row_per_request_with_its_tpot_and_verdict() {
    let run = slo(&[
        "report", WORKED, "--ttft", "500", "--tpot", "50", "--format", "csv",
    ]);
    run.expect_code(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some("id,class,bucket,status,ttft_ms,tpot_ms,itl_ms,e2e_ms,queue_ms,good,missed")
    );
    assert_eq!(lines.len(), 11, "a header and 10 requests");
    // (id, TPOT, good, missed) from the hand table.
    let want = [
        ("1", 38.3, "true", ""),
        ("2", 44.7, "true", ""),
        ("3", 46.0, "true", ""),
        ("4", 49.3, "true", ""),
        ("5", 37.8, "false", "ttft_ms"),
        ("6", 66.0, "false", "tpot_ms"),
        ("7", 48.8, "true", ""),
        ("8", 43.6, "true", ""),
        ("9", 48.3, "true", ""),
        ("10", 49.2, "true", ""),
    ];
    for (line, (id, tpot, good, missed)) in lines.iter().skip(1).zip(want) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), 11, "{line}");
        assert_eq!(cells[0], id, "{line}");
        let got: f64 = cells[5].parse().expect("tpot_ms is a number");
        assert!(close(got, tpot), "{line}: TPOT {got}, want {tpot}");
        assert_eq!((cells[9], cells[10]), (good, missed), "{line}");
    }
    // Request 4 (TTFT 310, TPOT 49.3) misses both targets at --ttft 300 --tpot 45: its `missed`
    // cell lists both keys, separated by ";".
    let run = slo(&[
        "report", WORKED, "--ttft", "300", "--tpot", "45", "--format", "csv",
    ]);
    run.expect_code(0);
    let row = run
        .stdout
        .lines()
        .find(|l| l.starts_with("4,"))
        .expect("request 4");
    let mut missed: Vec<&str> = row.rsplit(',').next().unwrap_or("").split(';').collect();
    missed.sort_unstable();
    assert_eq!(missed, ["tpot_ms", "ttft_ms"], "{row}");
}

#[test]
fn report_text_and_markdown_state_the_joint_attainment() {
    let text = slo(&["report", WORKED, "--ttft", "500", "--tpot", "50"]);
    text.expect_code(0);
    assert!(text
        .stdout
        .starts_with("overall: 80 % of 10 attempted requests met every target"));
    assert!(text.stdout.contains("request 5 missed TTFT"));
    assert!(text.stdout.contains("request 6 missed TPOT"));
    let md = slo(&[
        "report", WORKED, "--ttft", "500", "--tpot", "50", "--format", "markdown",
    ]);
    md.expect_code(0);
    assert!(md.stdout.starts_with("# SLO report"));
    // overall: 10 attempted, 8 good, 80 %.
    assert!(
        md.stdout.contains("| overall | 10 | 8 | 80 % |"),
        "{}",
        md.stdout
    );
}

#[test]
fn report_of_a_vllm_result_matches_vllms_own_summary() {
    // vLLM's summary fields are its own numpy (linear) percentiles over completed requests.
    let file = read_json(VLLM_NEW);
    let r = slo(&[
        "report",
        VLLM_NEW,
        "--percentiles",
        "50,90,99,99.9",
        "--format",
        "json",
    ])
    .json();
    let o = &r["overall"];
    assert_eq!(o["attempted"], file["num_prompts"]); // 60
    assert_eq!(o["completed"], file["completed"]); // 58
    assert_eq!(o["failed"], file["failed"]); // 2
    assert_eq!(r["files"][0]["format"], "vllm");
    for (key, vllm) in [
        ("ttft_ms", "ttft"),
        ("tpot_ms", "tpot"),
        ("itl_ms", "itl"),
        ("e2e_ms", "e2el"),
        ("queue_ms", "client_queue_time"),
    ] {
        for q in ["50", "90", "99", "99.9"] {
            let want = number(&file[format!("p{q}_{vllm}_ms")], "vLLM summary");
            assert_close(&o["percentiles"][key][q], want, &format!("p{q} {key}"));
        }
        let mean = number(&file[format!("mean_{vllm}_ms")], "vLLM mean");
        assert_close(
            &o["percentile_details"][key]["mean"],
            mean,
            &format!("mean {key}"),
        );
    }

    // The older file has no start times: the run's duration is the one it states, so
    // throughput = completed / duration is vLLM's request_throughput.
    let old = read_json(VLLM_OLD);
    let r = slo(&[
        "report",
        VLLM_OLD,
        "--percentiles",
        "50,99",
        "--format",
        "json",
    ])
    .json();
    let o = &r["overall"];
    assert_eq!(o["completed"], old["completed"]); // 54
    assert_close(
        &r["duration_s"],
        number(&old["duration"], "duration"),
        "duration",
    );
    assert_close(
        &o["throughput_rps"],
        number(&old["request_throughput"], "request_throughput"),
        "throughput",
    );
    for (key, vllm) in [("ttft_ms", "ttft"), ("tpot_ms", "tpot"), ("itl_ms", "itl")] {
        let p99 = number(&old[format!("p99_{vllm}_ms")], "p99");
        let p50 = number(&old[format!("median_{vllm}_ms")], "median");
        assert_close(&o["percentiles"][key]["99"], p99, &format!("p99 {key}"));
        assert_close(&o["percentiles"][key]["50"], p50, &format!("p50 {key}"));
    }
}

#[test]
fn report_duration_flag_sets_goodput_and_throughput() {
    // 8 good and 10 completed requests over a typed 20 s: goodput 0.4 req/s, throughput 0.5.
    let r = slo(&[
        "report",
        WORKED,
        "--ttft",
        "500",
        "--tpot",
        "50",
        "--duration-s",
        "20",
        "--format",
        "json",
    ])
    .json();
    assert_close(&r["duration_s"], 20.0, "duration");
    assert_close(&r["overall"]["goodput_rps"], 0.4, "goodput");
    assert_close(&r["overall"]["throughput_rps"], 0.5, "throughput");
    // The typed duration wins over the span of timestamps: with vLLM's own duration, throughput
    // is vLLM's request_throughput (58 completed / 1.905 s).
    let file = read_json(VLLM_NEW);
    let duration = number(&file["duration"], "duration");
    let r = slo(&[
        "report",
        VLLM_NEW,
        "--duration-s",
        &format!("{duration}"),
        "--format",
        "json",
    ])
    .json();
    assert_close(
        &r["overall"]["throughput_rps"],
        number(&file["request_throughput"], "request_throughput"),
        "throughput",
    );
}

#[test]
fn report_reads_unit_less_columns_in_the_default_unit() {
    // The worked example written in seconds under the names "ttft" and "e2e".
    let run = slo(&[
        "report",
        WORKED_SECONDS,
        "--default-unit",
        "s",
        "--ttft",
        "500",
        "--tpot",
        "50",
        "--percentiles",
        "90",
        "--format",
        "json",
    ]);
    let r = run.json();
    assert_eq!(r["overall"]["good"], 8);
    assert_close(
        &r["overall"]["percentiles"]["ttft_ms"]["90"],
        433.0,
        "p90 TTFT",
    );
    assert_close(
        &r["overall"]["percentiles"]["tpot_ms"]["90"],
        50.97,
        "p90 TPOT",
    );
    // The guess is said on stderr, after the file's path as it was typed.
    assert!(
        run.stderr.contains(&format!(
            "warning: {WORKED_SECONDS}: column \"ttft\" has no unit in its name"
        )),
        "{}",
        run.stderr
    );
}

#[test]
fn report_with_a_spec_gives_one_group_per_class_and_bucket() {
    // expected.json (tests/reference/make_compare.py) holds each cell's counts and percentiles.
    let expected = read_json(COMPARE_EXPECTED);
    let r = slo(&["report", RUN_A, "--spec", COMPARE_SPEC, "--format", "json"]).json();
    assert_eq!(array(&r["groups"], "groups").len(), 4);
    for (class, bucket) in [
        ("chat", "<2k"),
        ("chat", ">=2k"),
        ("batch", "<2k"),
        ("batch", ">=2k"),
    ] {
        let want = &expected["a"][format!("{class} / {bucket}")];
        let got = group(&r["groups"], class, bucket);
        assert_eq!(got["attempted"], want["attempted"], "{class} / {bucket}");
        assert_eq!(got["good"], want["good"], "{class} / {bucket}");
        for ind in ["ttft_ms", "tpot_ms"] {
            for q in ["50", "90", "99"] {
                let w = number(&want[ind][q], "expected percentile");
                assert_close(
                    &got["percentiles"][ind][q],
                    w,
                    &format!("{class} / {bucket} p{q} {ind}"),
                );
            }
        }
    }
    // Run A: every cell 990 of 1000 = 99 %, not below the spec's 99 %, so --check passes.
    slo(&["report", RUN_A, "--spec", COMPARE_SPEC, "--check"]).expect_code(0);
    // Run B: chat / >=2k is 900 of 1000 = 90 %, below 99 %.
    slo(&["report", RUN_B, "--spec", COMPARE_SPEC, "--check"]).expect_code(1);
}

#[test]
fn report_target_flags_override_the_spec_in_every_cell() {
    // Run B's latencies are all far below 100 s: at --ttft 100000 --tpot 100000 every request of
    // every cell is good (the file has no status column, so nothing failed).
    let r = slo(&[
        "report",
        RUN_B,
        "--spec",
        COMPARE_SPEC,
        "--ttft",
        "100000",
        "--tpot",
        "100000",
        "--format",
        "json",
    ])
    .json();
    for g in array(&r["groups"], "groups") {
        assert_eq!(g["percentile_details"]["ttft_ms"]["target_ms"], 100000.0);
        assert_eq!(g["percentile_details"]["tpot_ms"]["target_ms"], 100000.0);
        assert_eq!(g["good"], g["attempted"], "{}", g["bucket"]);
    }
}

#[test]
fn report_buckets_flag_splits_by_input_length() {
    // Without --spec, --buckets 2000 gives <2k and >=2k cells of the one class "all". Each holds
    // a chat and a batch cell of expected.json: 1000 + 1000 attempted, 990 + 990 good.
    let r = slo(&[
        "report",
        RUN_A,
        "--ttft",
        "500",
        "--tpot",
        "50",
        "--buckets",
        "2000",
        "--format",
        "json",
    ])
    .json();
    let expected = read_json(COMPARE_EXPECTED);
    for bucket in ["<2k", ">=2k"] {
        let g = group(&r["groups"], "all", bucket);
        let chat = &expected["a"][format!("chat / {bucket}")];
        let batch = &expected["a"][format!("batch / {bucket}")];
        let sum = |k: &str| chat[k].as_u64().unwrap_or(0) + batch[k].as_u64().unwrap_or(0);
        assert_eq!(g["attempted"], sum("attempted"), "{bucket}");
        assert_eq!(g["good"], sum("good"), "{bucket}");
    }
}

#[test]
fn report_merges_several_files() {
    // The worked example twice: 20 requests, 16 good, two provenance entries.
    let r = slo(&[
        "report", WORKED, WORKED, "--ttft", "500", "--tpot", "50", "--format", "json",
    ])
    .json();
    assert_eq!(r["overall"]["attempted"], 20);
    assert_eq!(r["overall"]["good"], 16);
    assert_eq!(array(&r["files"], "files").len(), 2);
}

#[test]
fn report_counts_cancellations_by_the_default_policy() {
    // sql_requests.csv with only --ttft 500 (one class, the class column is not used). Its 8
    // cancelled rows, by the default policy (bad when it waited >= 500 ms or its first token
    // came after 500 ms, else left out):
    //   c10 TTFT 900 bad; c11 waited 650 bad; c12 waited 300 out; c13 TTFT 200 out;
    //   c23 TTFT 600 bad; c24 waited 400 out; b06 waited 6000 bad; b10 waited 40000 bad.
    // Waits (E2E; c23 has none): 300 400 650 1000 1500 6000 40000: median 1000, max 40000.
    let r = slo(&["report", SQL_REQUESTS, "--ttft", "500", "--format", "json"]).json();
    let c = &r["cancelled"];
    assert_eq!(c["cancelled"], 8);
    assert_eq!(c["counted_as_ttft_failure"], 5);
    assert_close(&c["wait_p50_ms"], 1000.0, "median wait");
    assert_close(&c["wait_max_ms"], 40000.0, "longest wait");
    assert_eq!(r["overall"]["excluded"], 3);
    // Of the 38 rows: 25 completed (status ok, OK or 200), 5 failed (c08 error, c09 timeout,
    // c25 504, b08 error, b13 failed); attempted = 25 + 5 + the 5 cancellations counted bad.
    assert_eq!(r["overall"]["completed"], 25);
    assert_eq!(r["overall"]["failed"], 5);
    assert_eq!(r["overall"]["attempted"], 35);
    // Duration: first start 12:00:00 to the last end, b10's 12:02:50 + 40 s = 12:03:30: 210 s.
    assert_close(&r["duration_s"], 210.0, "span of the timestamps");
    // In the per-request CSV, the three left out are "excluded".
    let csv = slo(&["report", SQL_REQUESTS, "--ttft", "500", "--format", "csv"]);
    csv.expect_code(0);
    let excluded: Vec<&str> = csv
        .stdout
        .lines()
        .filter(|l| l.split(',').nth(9) == Some("excluded"))
        .filter_map(|l| l.split(',').next())
        .collect();
    assert_eq!(excluded, ["c12", "c13", "c24"]);
}

#[test]
fn report_lists_hidden_stalls_whose_tpot_passed() {
    // Counted here from vllm_new.json's arrays: completed requests whose largest gap is over
    // 400 ms while TPOT = (latency - TTFT) / (output_len - 1) is at most 50 ms. (Requests 8, 22
    // and 29 also have a gap over 400 ms, but their TPOT fails, so the stall is not hidden.)
    let file = read_json(VLLM_NEW);
    let mut want = Vec::new();
    let rows = array(&file["ttfts"], "ttfts").len();
    for i in 0..rows {
        if !file["errors"][i].as_str().unwrap_or("").is_empty() {
            continue;
        }
        let ttft = number(&file["ttfts"][i], "ttft");
        let latency = number(&file["latencies"][i], "latency");
        let n = number(&file["output_lens"][i], "output_len");
        let gaps = array(&file["itls"][i], "itls");
        let max_gap_ms = gaps
            .iter()
            .map(|g| number(g, "gap") * 1000.0)
            .fold(0.0, f64::max);
        let tpot_ms = (latency - ttft) * 1000.0 / (n - 1.0);
        if n > 1.0 && tpot_ms <= 50.0 && max_gap_ms > 400.0 {
            // Request ids of a vLLM file: file name and 1-based position.
            want.push((format!("vllm_new.json:{}", i + 1), max_gap_ms));
        }
    }
    assert_eq!(want.len(), 5, "the fixture's hidden stalls: {want:?}");
    let r = slo(&["report", VLLM_NEW, "--spec", STALL_SPEC, "--format", "json"]).json();
    let got = array(&r["hidden_stalls"], "hidden_stalls");
    assert_eq!(got.len(), want.len());
    for (g, (id, gap)) in got.iter().zip(&want) {
        assert_eq!(g["id"], id.as_str());
        assert_close(&g["max_gap_ms"], *gap, id);
    }
    assert_eq!(r["overall"]["hidden_stalls"], 5);
}

// ---------------------------------------------------------------- unreadable files and bad rows

#[test]
fn an_empty_file_exits_2_with_its_path_and_the_reason_on_stderr() {
    let path = format!("{MALFORMED}/csv_empty.csv");
    let run = slo(&["report", &path, "--ttft", "500"]);
    run.expect_code(2);
    assert!(run.stdout.is_empty(), "no report: {}", run.stdout);
    // "slo: " (the program's name, as Unix tools write it), then the path as typed, then why.
    let message = run
        .stderr
        .strip_prefix("slo: ")
        .unwrap_or_else(|| panic!("stderr: {}", run.stderr));
    assert!(
        message.starts_with(&format!("{path}: ")),
        "stderr: {}",
        run.stderr
    );
    assert!(
        message.contains("the file is empty"),
        "stderr: {}",
        run.stderr
    );

    let missing = format!("{MALFORMED}/no_such_file.csv");
    let run = slo(&["report", &missing]);
    run.expect_code(2);
    assert!(
        run.stderr
            .starts_with(&format!("slo: {missing}: cannot read")),
        "stderr: {}",
        run.stderr
    );
}

/// The cases of tests/malformed/expected.json that `slo report` can read (ingest cases with a
/// committed file), with the `--input-format` a case forces.
fn malformed_ingest_cases() -> Vec<(Value, Vec<String>)> {
    let expected = read_json(&format!("{MALFORMED}/expected.json"));
    array(&expected["cases"], "cases")
        .iter()
        .filter(|c| c["parser"] == "ingest" && c["generated"].is_null())
        .map(|c| {
            let file = c["file"].as_str().expect("file name");
            let mut args = vec![format!("{MALFORMED}/{file}")];
            if let Some(format) = c["format"].as_str() {
                args.extend(["--input-format".to_string(), format.to_string()]);
            }
            (c.clone(), args)
        })
        .collect()
}

#[test]
fn every_unreadable_file_of_the_malformed_corpus_exits_2_naming_its_path() {
    let mut checked = 0;
    for (case, args) in malformed_ingest_cases() {
        let Some(fatal) = case["fatal"].as_str() else {
            continue;
        };
        let mut full = vec!["report"];
        full.extend(args.iter().map(String::as_str));
        let run = slo(&full);
        let path = &args[0];
        assert_eq!(run.code, 2, "{path}: stderr {}", run.stderr);
        assert!(
            run.stderr.starts_with(&format!("slo: {path}")),
            "{path}: stderr {}",
            run.stderr
        );
        assert!(run.stderr.contains(fatal), "{path}: stderr {}", run.stderr);
        checked += 1;
    }
    // 18 cases today; the guard catches a filter that silently matches nothing.
    assert!(checked >= 10, "only {checked} fatal cases found");
}

#[test]
fn bad_rows_of_the_malformed_corpus_are_skipped_located_and_counted() {
    let mut checked = 0;
    for (case, args) in malformed_ingest_cases() {
        if !case["fatal"].is_null() {
            continue;
        }
        let mut full = vec!["report", "--format", "json"];
        full.extend(args.iter().map(String::as_str));
        let run = slo(&full);
        let path = &args[0];
        assert_eq!(run.code, 0, "{path}: stderr {}", run.stderr);
        let file = &run.json()["files"][0];
        if !case["rows_read"].is_null() {
            assert_eq!(file["rows_read"], case["rows_read"], "{path}");
        }
        if !case["error_count"].is_null() {
            assert_eq!(file["rows_skipped"], case["error_count"], "{path}");
        }
        if let Some(first) = case["first_error"].as_str() {
            // "path:line[:column]: reason", one line per skipped row: the manifest's message,
            // with the path as typed where it names the file.
            let file = case["file"].as_str().unwrap_or_default();
            let first = first.replacen(file, path, 1);
            assert!(
                run.stderr.contains(&format!("skipped: {first}")),
                "{path}: stderr {}",
                run.stderr
            );
        }
        if let Some(warning) = case["warning"].as_str() {
            assert!(
                run.stderr.contains(warning),
                "{path}: stderr {}",
                run.stderr
            );
        }
        checked += 1;
    }
    // 38 cases today; the guard catches a filter that silently matches nothing.
    assert!(checked >= 10, "only {checked} row-error cases found");
}

#[test]
fn a_bad_row_is_reported_with_file_and_line_and_the_good_rows_still_count() {
    // csv_truncated_row.csv: r1 TTFT 180, r2 210, r3 450, and r4 cut short on line 5.
    let path = format!("{MALFORMED}/csv_truncated_row.csv");
    let run = slo(&["report", &path, "--ttft", "200", "--format", "json"]);
    assert!(
        run.stderr
            .contains(&format!("skipped: {path}:5: the row is short")),
        "stderr: {}",
        run.stderr
    );
    let r = run.json();
    assert_eq!(r["files"][0]["rows_read"], 3);
    assert_eq!(r["files"][0]["rows_skipped"], 1);
    // At TTFT 200 ms only r1 (180) is good: 1 of the 3 readable rows.
    assert_eq!(r["overall"]["attempted"], 3);
    assert_eq!(r["overall"]["good"], 1);
    let ids: Vec<&str> = array(&r["failing_requests"], "failing")
        .iter()
        .filter_map(|f| f["id"].as_str())
        .collect();
    assert_eq!(ids, ["r2", "r3"]);
}

#[test]
fn bad_usage_exits_2_with_the_reason_on_stderr() {
    let cases: [(&[&str], &str); 6] = [
        (&["report", WORKED, "--no-such-flag"], "--no-such-flag"),
        (&["report", WORKED, "--format", "xml"], "--format \"xml\""),
        (&["report", WORKED, "--method", "median"], "unknown method"),
        (&["report", WORKED, "--objective", "1.5"], "objective"),
        (&["report"], "no input files"),
        (
            &["export", "--to", "yaml", "--spec", WORKED_SPEC],
            "--to \"yaml\"",
        ),
    ];
    for (args, says) in cases {
        let run = slo(args);
        assert_eq!(run.code, 2, "{args:?}: stderr {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: stderr {}", run.stderr);
    }
}

// ---------------------------------------------------------------- slo compare

#[test]
fn compare_finds_the_long_prompt_chat_regression_and_nothing_else() {
    let expected = read_json(COMPARE_EXPECTED);
    let r = slo(&[
        "compare",
        "--spec",
        COMPARE_SPEC,
        RUN_A,
        RUN_B,
        "--format",
        "json",
    ])
    .json();
    assert_eq!(r["alpha"], 0.05);
    assert_eq!(r["method_a"], "linear");
    assert_eq!(r["method_b"], "linear");
    assert_eq!(r["any_cell_worse"], true);
    assert_eq!(r["files_a"][0]["rows_read"], 4000);
    assert_eq!(r["files_b"][0]["rows_read"], 4000);
    for (class, bucket) in [
        ("chat", "<2k"),
        ("chat", ">=2k"),
        ("batch", "<2k"),
        ("batch", ">=2k"),
    ] {
        let name = format!("{class} / {bucket}");
        let g = group(&r["groups"], class, bucket);
        let (a, b) = (&expected["a"][&name], &expected["b"][&name]);
        let n_a = number(&a["attempted"], "attempted");
        let n_b = number(&b["attempted"], "attempted");
        let (g_a, g_b) = (number(&a["good"], "good"), number(&b["good"], "good"));
        assert_eq!(g["a"]["good"], a["good"], "{name}");
        assert_eq!(g["b"]["good"], b["good"], "{name}");
        assert_close(&g["diff"], g_b / n_b - g_a / n_a, &name);
        // Pooled two-proportion z: p = (g_a + g_b) / (n_a + n_b),
        // z = (g_b/n_b - g_a/n_a) / sqrt(p (1 - p) (1/n_a + 1/n_b)).
        // chat / >=2k: p = 1890/2000 = 0.945, z = -0.09 / 0.0101956 = -8.83.
        let p = (g_a + g_b) / (n_a + n_b);
        let z = (g_b / n_b - g_a / n_a) / (p * (1.0 - p) * (1.0 / n_a + 1.0 / n_b)).sqrt();
        assert_close(&g["z"], z, &format!("{name} z"));
        let p_value = number(&g["p_value"], "p_value");
        let want_p = two_sided_p(z);
        assert!(
            (p_value - want_p).abs() <= 1e-6 * want_p,
            "{name}: p {p_value}, want {want_p}"
        );
        let verdict = if name == "chat / >=2k" {
            "worse"
        } else {
            "no significant change"
        };
        assert_eq!(g["verdict"], verdict, "{name}");
        // Shifts B - A of every percentile, by numpy linear (expected.json).
        for ind in ["ttft_ms", "tpot_ms"] {
            for q in ["50", "90", "99"] {
                let shift = &g["percentile_shifts"][ind][q];
                let what = format!("{name} p{q} {ind}");
                assert_close(&shift["a"], number(&a[ind][q], &what), &what);
                assert_close(&shift["b"], number(&b[ind][q], &what), &what);
                let want = number(&expected["shift_b_minus_a"][&name][ind][q], &what);
                assert_close(&shift["shift"], want, &what);
            }
        }
    }
    // docs/cli.md's figures for chat / >=2k: z = -8.83, p = 1.1e-18.
    let worse = group(&r["groups"], "chat", ">=2k");
    let z = number(&worse["z"], "z");
    let p = number(&worse["p_value"], "p");
    assert!((z - -8.83).abs() < 0.005, "z {z}");
    assert!((p / 1e-18 - 1.1).abs() < 0.05, "p {p}");
}

#[test]
fn compare_check_exits_1_and_names_the_cell_that_got_worse() {
    let run = slo(&["compare", "--spec", COMPARE_SPEC, "--check", RUN_A, RUN_B]);
    run.expect_code(1);
    assert!(run.stderr.contains("chat / >=2k"), "stderr: {}", run.stderr);
    for other in ["chat / <2k", "batch / <2k", "batch / >=2k"] {
        assert!(!run.stderr.contains(other), "stderr: {}", run.stderr);
    }
    // The comparison itself is on stdout.
    assert!(run.stdout.contains("WORSE"));
}

#[test]
fn compare_check_exits_0_when_the_candidate_only_got_better() {
    // The same runs swapped: chat / >=2k goes from 90 % to 99 %, significantly better.
    let run = slo(&[
        "compare",
        "--spec",
        COMPARE_SPEC,
        "--check",
        RUN_B,
        RUN_A,
        "--format",
        "json",
    ]);
    let r = run.json();
    assert_eq!(group(&r["groups"], "chat", ">=2k")["verdict"], "better");
    assert_eq!(r["any_cell_worse"], false);
}

#[test]
fn compare_of_two_runs_all_good_or_all_bad_has_no_z_test() {
    // At TTFT 1000 ms and TPOT 100 ms all 10 worked-example requests are good (max 640 and
    // 66.0): both runs 100 %, "no significant change" with z and p_value null (docs/cli.md).
    let r = slo(&[
        "compare", WORKED, WORKED, "--ttft", "1000", "--tpot", "100", "--format", "json",
    ])
    .json();
    let o = &r["overall"];
    assert_eq!(o["verdict"], "no significant change");
    assert!(o["z"].is_null() && o["p_value"].is_null(), "{o}");
    assert_close(&o["diff"], 0.0, "diff");
    assert_eq!(o["a"]["good"], 10);
    // At TTFT 1 ms every request is bad (the smallest TTFT is 180): both runs 0 %.
    let r = slo(&["compare", WORKED, WORKED, "--ttft", "1", "--format", "json"]).json();
    let o = &r["overall"];
    assert_eq!(o["verdict"], "no significant change");
    assert!(o["z"].is_null() && o["p_value"].is_null(), "{o}");
    assert_eq!(o["b"]["good"], 0);
    // 8 good and 2 bad in each run: tested (z = 0), with the note that 2 < 5 bad requests make
    // the normal approximation rough.
    let r = slo(&[
        "compare", WORKED, WORKED, "--ttft", "500", "--tpot", "50", "--format", "json",
    ])
    .json();
    let o = &r["overall"];
    assert_close(&o["z"], 0.0, "z");
    assert!(
        o["notes"].to_string().contains("fewer than 5 good or bad"),
        "{o}"
    );
}

// ---------------------------------------------------------------- slo doc

#[test]
fn doc_names_the_targets_objective_method_and_budget() {
    let run = slo(&["doc", "--spec", WORKED_SPEC]);
    run.expect_code(0);
    let doc = &run.stdout;
    assert!(doc.starts_with("# SLO: Chat API\n"), "{doc}");
    assert!(doc.contains("**Targets:** TTFT ≤ 500 ms, TPOT ≤ 50 ms."));
    assert!(doc.contains("### TTFT (ms)") && doc.contains("| chat | ≤ 500 |"));
    assert!(doc.contains("### TPOT (ms)") && doc.contains("| chat | ≤ 50 |"));
    assert!(doc.contains("99 % of attempted requests good"));
    assert!(doc.contains("**nearest_rank**"));
    // (1 - 0.99) × 1,000,000 expected requests = 10,000.
    assert!(doc.contains("**10,000 bad requests per window**"));
    assert!(!doc.contains("## Measured results"));
}

#[test]
fn doc_with_a_log_adds_the_measured_results() {
    let run = slo(&["doc", "--spec", WORKED_SPEC, WORKED]);
    run.expect_code(0);
    let doc = &run.stdout;
    assert!(doc.contains("## Measured results"));
    assert!(doc.contains("**80 % of 10 attempted requests met every target**"));
    // Nearest rank (the spec's method) then linear, hand table: 410 / 433 and 49.3 / 50.97.
    assert!(
        doc.contains("| TTFT | p90 | 410 | 433 | 500 | pass |"),
        "{doc}"
    );
    assert!(doc.contains("| TPOT | p90 | 49.3 | 50.97 | 50 | pass (flips with the method) |"));
    assert!(doc.contains("p90 TTFT and p90 TPOT both pass, yet only 80 %"));
    // Budget spent: bad fraction 0.2 / allowed 0.01 = 20 ×.
    assert!(doc.contains("| chat | 10 | 8 | 80 % |") && doc.contains("| 20 × |"));
}

#[test]
fn doc_and_export_out_write_the_same_text_to_a_file() {
    let dir = TempDir::new("out");
    let doc_path = dir.file("slo.md");
    slo(&["doc", "--spec", WORKED_SPEC, "--out", &doc_path]).expect_code(0);
    let stdout = slo(&["doc", "--spec", WORKED_SPEC]).stdout;
    assert_eq!(
        std::fs::read_to_string(&doc_path).expect("doc written"),
        stdout
    );

    let sql_path = dir.file("slo.sql");
    let written = slo(&[
        "export",
        "--to",
        "sql",
        "--spec",
        WORKED_SPEC,
        "--out",
        &sql_path,
    ]);
    written.expect_code(0);
    assert!(written.stdout.is_empty());
    let stdout = slo(&["export", "--to", "sql", "--spec", WORKED_SPEC]).stdout;
    assert_eq!(
        std::fs::read_to_string(&sql_path).expect("sql written"),
        stdout
    );
}

// ---------------------------------------------------------------- slo export

#[test]
fn export_openslo_and_sloth_carry_the_objective_window_and_targets() {
    let openslo = slo(&["export", "--to", "openslo", "--spec", WORKED_SPEC]);
    openslo.expect_code(0);
    let y = &openslo.stdout;
    assert!(y.contains("apiVersion: openslo/v1") && y.contains("kind: SLO"));
    assert!(y.contains("TTFT <= 500 ms, TPOT <= 50 ms"), "{y}");
    assert!(y.contains("duration: \"28d\""));
    assert!(y.contains("target: 0.99"));

    let sloth = slo(&["export", "--to", "sloth", "--spec", WORKED_SPEC]);
    sloth.expect_code(0);
    // Sloth writes the objective in percent: 0.99 -> 99.
    assert!(sloth.stdout.contains("objective: 99\n"), "{}", sloth.stdout);
    assert!(sloth.stdout.contains("--default-slo-period=28d"));
}

#[test]
fn export_prometheus_and_sql_use_the_targets() {
    let prom = slo(&["export", "--to", "prometheus", "--spec", WORKED_SPEC]);
    prom.expect_code(0);
    // vLLM's histograms are in seconds: 500 ms -> le="0.5", 50 ms -> le="0.05".
    assert!(prom
        .stdout
        .contains("vllm:time_to_first_token_seconds_bucket{le=\"0.5\"}"));
    assert!(prom
        .stdout
        .contains("vllm:request_time_per_output_token_seconds_bucket{le=\"0.05\"}"));
    // Page at burn rate 14.4 of the budget 1 - 0.99 = 0.01.
    assert!(prom.stdout.contains("> (14.4 * 0.01)"));

    let sql = slo(&[
        "export",
        "--to",
        "sql",
        "--spec",
        WORKED_SPEC,
        "--table",
        "logs.requests",
    ]);
    sql.expect_code(0);
    assert!(sql.stdout.contains("FROM \"logs\".\"requests\""));
    // The cell's TTFT and TPOT thresholds, in ms.
    assert!(sql.stdout.contains("(0, 'chat', 0, 'all lengths', 500E0,"));
    assert!(sql.stdout.contains(", 50E0,"));
}

// ---------------------------------------------------------------- slo sweep

/// Good and attempted requests of one vLLM result file, counted from its per-request arrays by
/// the rules of docs/sweep.md: a request with an error is attempted and bad; any other is good
/// when TTFT <= 500 ms and TPOT = (latency - TTFT) / (output_len - 1) <= 50 ms (one output
/// token passes TPOT). Times in the file are seconds.
fn good_of(file: &Value) -> (u64, u64) {
    let ttfts = array(&file["ttfts"], "ttfts");
    let latencies = array(&file["latencies"], "latencies");
    let outputs = array(&file["output_lens"], "output_lens");
    let errors = array(&file["errors"], "errors");
    let mut good = 0;
    for (((t, l), n), e) in ttfts.iter().zip(latencies).zip(outputs).zip(errors) {
        if !e.as_str().unwrap_or("").is_empty() {
            continue;
        }
        let (ttft_ms, e2e_ms) = (number(t, "ttft") * 1000.0, number(l, "latency") * 1000.0);
        let n = number(n, "output_len");
        let tpot_ok = n <= 1.0 || (e2e_ms - ttft_ms) / (n - 1.0) <= 50.0;
        if ttft_ms <= 500.0 && tpot_ok {
            good += 1;
        }
    }
    (good, ttfts.len() as u64)
}

fn sweep_files() -> Vec<String> {
    SWEEP_RATES
        .iter()
        .map(|r| format!("{SWEEP}/sweep_{r}.json"))
        .collect()
}

fn sweep_args<'a>(files: &'a [String], extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["sweep"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--ttft", "500", "--tpot", "50", "--objective", "0.99"]);
    args.extend(extra);
    args
}

#[test]
fn sweep_capacity_matches_the_attainment_counted_from_the_files() {
    let files = sweep_files();
    let r = slo(&sweep_args(&files, &["--format", "json"])).json();
    let points = array(&r["curves"][0]["points"], "points");
    assert!(r["curves"][0]["class"].is_null());
    assert_eq!(points.len(), files.len());

    // Per file: (offered rate from its request_rate, attainment counted here).
    let mut curve = Vec::new();
    for (path, point) in files.iter().zip(points) {
        let file = read_json(path);
        let rate = number(&file["request_rate"], "request_rate");
        let (good, attempted) = good_of(&file);
        assert_eq!(point["rate_rps"], rate, "{path}");
        assert_eq!(point["good"], good, "{path}");
        assert_eq!(point["attempted"], attempted, "{path}");
        let attainment = good as f64 / attempted as f64;
        assert_close(&point["attainment"], attainment, path);
        // The file's own summary percentiles (completed requests, numpy linear).
        for (key, vllm) in [("ttft_ms", "ttft"), ("tpot_ms", "tpot"), ("e2e_ms", "e2el")] {
            for q in ["50", "90", "99"] {
                let want = number(&file[format!("p{q}_{vllm}_ms")], "summary");
                assert_close(
                    &point["percentiles"][key][q],
                    want,
                    &format!("{path} p{q} {key}"),
                );
            }
        }
        curve.push((rate, attainment));
    }
    // Counted: 200/200 good at 1, 2, 4 and 6 req/s, 195/200 at 8, 94/200 at 10, 53/200 at 12.
    // Capacity: the highest rate meeting 99 % with every lower rate meeting it too.
    let first_fail = curve
        .iter()
        .position(|&(_, a)| a < 0.99)
        .expect("some rate fails");
    let (r_pass, a_pass) = curve[first_fail - 1];
    let (r_fail, a_fail) = curve[first_fail];
    assert_eq!((r_pass, r_fail), (6.0, 8.0));
    let cap = &r["capacity"];
    assert_eq!(cap["kind"], "crossing");
    assert_close(&cap["capacity_rps"], r_pass, "capacity");
    assert_close(&cap["first_failing_rps"], r_fail, "first failing rate");
    // r* = r_pass + (a_pass - 0.99)·(r_fail - r_pass)/(a_pass - a_fail) = 6 + 0.01·2/0.025 = 6.8.
    let crossing = r_pass + (a_pass - 0.99) * (r_fail - r_pass) / (a_pass - a_fail);
    assert_close(&cap["crossing_rps_linear"], crossing, "crossing");
    // The generator's own record agrees.
    let expected = read_json(&format!("{SWEEP}/expected.json"));
    assert_eq!(expected["capacity_rps"], r_pass);
    assert_close(
        &expected["crossing_rps"],
        crossing,
        "expected.json crossing",
    );
}

#[test]
fn sweep_text_states_the_capacity_and_the_provisioning() {
    let files = sweep_files();
    let run = slo(&sweep_args(
        &files,
        &["--peak-rps", "40", "--gpus-per-replica", "2"],
    ));
    run.expect_code(0);
    let t = &run.stdout;
    // Capacity 6 req/s (previous test), first failure at 8 (195/200 = 97.5 %).
    assert!(
        t.contains("capacity: 6 req/s is the highest measured rate"),
        "{t}"
    );
    assert!(t.contains("8 req/s is the first that fails (97.5 %)"));
    // 40 req/s at 6 per replica: ceil(40 / 6) = 7 carry it, plus a spare = 8; at 2 GPUs each
    // that is 16 GPUs, and per-GPU goodput is 6 / 2 = 3 req/s.
    assert!(t.contains("a peak of 40 req/s needs 8 replicas"));
    assert!(t.contains("16 GPUs"));
    assert!(t.contains("per-GPU goodput (DistServe: capacity / 2 GPUs) 3 req/s"));
    let r = slo(&sweep_args(
        &files,
        &[
            "--peak-rps",
            "40",
            "--gpus-per-replica",
            "2",
            "--format",
            "json",
        ],
    ))
    .json();
    let p = &r["provisioning"];
    assert_eq!(p["replicas"], 8);
    assert_eq!(p["gpus"], 16);
    assert_close(&p["per_gpu_goodput_rps"], 3.0, "per-GPU goodput");
}

#[test]
fn sweep_check_compares_the_capacity_with_the_peak() {
    // Capacity 6 req/s (counted above); docs/sweep.md's three gates.
    let files = sweep_files();
    let cases: [(&[&str], i32, &str); 5] = [
        (&[], 0, "some rate meets the objective"),
        (&["--peak-rps", "6"], 0, "capacity 6 carries a peak of 6"),
        (&["--peak-rps", "7"], 1, "capacity 6 is below a peak of 7"),
        (
            &["--peak-rps", "40", "--replicas", "8"],
            0,
            "40 / 6 -> 7 replicas + 1 spare = 8 deployed",
        ),
        (
            &["--peak-rps", "40", "--replicas", "7"],
            1,
            "8 needed, 7 deployed",
        ),
    ];
    for (extra, code, why) in cases {
        let mut args = sweep_args(&files, extra);
        args.push("--check");
        let run = slo(&args);
        assert_eq!(run.code, code, "{why}: stderr {}", run.stderr);
        if code == 1 {
            assert!(run.stderr.contains("check failed"), "{why}: {}", run.stderr);
        }
    }
    // Only the 10 and 12 req/s files: 47 % and 26.5 %, no rate meets 99 %.
    let failing: Vec<String> = [10, 12]
        .iter()
        .map(|r| format!("{SWEEP}/sweep_{r}.json"))
        .collect();
    let mut args = sweep_args(&failing, &[]);
    args.push("--check");
    slo(&args).expect_code(1);
}

#[test]
fn sweep_typed_rate_wins_over_the_files_own_and_is_linted() {
    // sweep_2.json states request_rate 2; --rate sweep_2.json=3 places it at 3 req/s.
    let (one, two) = (
        format!("{SWEEP}/sweep_1.json"),
        format!("{SWEEP}/sweep_2.json"),
    );
    let r = slo(&[
        "sweep",
        &one,
        &two,
        "--ttft",
        "500",
        "--tpot",
        "50",
        "--rate",
        "sweep_2.json=3",
        "--format",
        "json",
    ])
    .json();
    let point = &r["points"][1];
    assert_eq!(point["file"], "sweep_2.json");
    assert_eq!(point["rate_source"], "typed");
    assert_eq!(point["offered_rps"], 3.0);
    assert_eq!(r["points"][0]["rate_source"], "result_file");
    let lints = array(&r["lints"], "lints");
    assert!(lints
        .iter()
        .any(|l| l["kind"] == "rate_overridden" && l["file"] == "sweep_2.json"));
    // The text says where that rate came from: typed, though the file states one.
    let text = slo(&[
        "sweep",
        &one,
        &two,
        "--ttft",
        "500",
        "--rate",
        "sweep_2.json=3",
    ]);
    text.expect_code(0);
    assert!(
        text.stdout.starts_with("load sweep: 2 files; ")
            && text.stdout.contains(
                "rates typed or read from the file name, not from the file: sweep_2.json (typed)"
            ),
        "{}",
        text.stdout
    );
}

#[test]
fn sweep_of_a_file_without_a_rate_exits_2() {
    // worked_example.csv has no request_rate and no rate in its name.
    let run = slo(&["sweep", WORKED, "--ttft", "500"]);
    run.expect_code(2);
    assert!(run.stderr.contains("worked_example.csv"), "{}", run.stderr);
}

// ---------------------------------------------------------------- slo histogram

/// The histogram group of one indicator and model_name.
#[track_caller]
fn histogram_group<'a>(r: &'a Value, indicator: &str, model: &str) -> &'a Value {
    array(&r["analysis"]["groups"], "groups")
        .iter()
        .find(|g| {
            g["indicator"] == indicator
                && array(&g["labels"], "labels")
                    .iter()
                    .any(|l| l[0] == "model_name" && l[1] == model)
        })
        .unwrap_or_else(|| panic!("no {indicator} group for {model}"))
}

#[test]
fn histogram_merges_replicas_before_reading_fractions_and_percentiles() {
    let (a, b) = (
        format!("{PROM}/replica_a.prom"),
        format!("{PROM}/replica_b.prom"),
    );
    let r = slo(&[
        "histogram",
        &a,
        &b,
        "--replica-names",
        "a,b",
        "--ttft",
        "500",
        "--tpot",
        "50",
        "--percentiles",
        "90",
        "--format",
        "json",
    ])
    .json();
    let llama = "meta-llama/Llama-3.1-8B-Instruct";
    // TTFT, cumulative counts at 0.1 0.25 0.5 1 2.5 +Inf s:
    //   a 20 50 80 95 99 100, b 10 30 60 90 98 100, merged 30 80 140 185 197 200.
    // 500 ms is the 0.5 s edge: exactly 140 / 200 = 70 %.
    let ttft = histogram_group(&r, "ttft", llama);
    assert_close(&ttft["count"], 200.0, "TTFT count");
    assert_eq!(ttft["fractions"][0]["kind"], "exact");
    assert_close(&ttft["fractions"][0]["value"], 0.7, "TTFT <= 500 ms");
    // histogram_quantile p90: rank 180 falls in (0.5, 1] s (140 -> 185):
    // 0.5 + 0.5·(180 - 140)/(185 - 140) = 0.94444 s.
    let p90 = &ttft["percentiles"][0]["merged"]["value_ms"];
    assert_close(p90, 1000.0 * (0.5 + 0.5 * 40.0 / 45.0), "merged p90 TTFT");
    // Replica a's other model is a group of its own: 3 of 4 at 0.5 s.
    let other = histogram_group(&r, "ttft", "other");
    assert_close(
        &other["fractions"][0]["value"],
        0.75,
        "other TTFT <= 500 ms",
    );
    // TPOT at 0.05 s: a 90, b 85 of 100 each: 175 / 200 = 87.5 %.
    let tpot = histogram_group(&r, "tpot", llama);
    assert_close(&tpot["fractions"][0]["value"], 0.875, "TPOT <= 50 ms");
    assert_eq!(array(&r["dumps"], "dumps").len(), 2);
    assert_eq!(r["dumps"][0]["replica"], "a");
}

#[test]
fn histogram_window_subtracts_the_earlier_dump_and_reports_the_reset() {
    let (after, before) = (
        format!("{PROM}/window_after.prom"),
        format!("{PROM}/window_before.prom"),
    );
    let r = slo(&[
        "histogram",
        &after,
        "--before",
        &before,
        "--ttft",
        "500",
        "--e2e",
        "2000",
        "--format",
        "json",
    ])
    .json();
    assert_eq!(r["analysis"]["windowed"], true);
    // TTFT increase: after 70 150 230 270 290 300 minus before 20 50 80 95 99 100
    // = 50 100 150 175 191 200; at the 0.5 s edge 150 / 200 = 75 %.
    let ttft = histogram_group(&r, "ttft", "m");
    assert_close(&ttft["count"], 200.0, "TTFT increase");
    assert_close(&ttft["fractions"][0]["value"], 0.75, "TTFT <= 500 ms");
    // p90: rank 180 in (1, 2.5] s (175 -> 191): 1 + 1.5·5/16 = 1.46875 s.
    let p90 = array(&ttft["percentiles"], "percentiles")
        .iter()
        .find(|p| p["q"] == 90.0)
        .expect("p90");
    assert_close(&p90["merged"]["value_ms"], 1468.75, "p90 TTFT");
    // E2E went from 500 observations to 40: a reset, so the later counts are the increase:
    // 10 at 1 s, 30 at 5 s, 40 in all. 2 s is inside (1, 5]: bounds 10/40 and 30/40, linear
    // estimate 0.25 + 0.5·(2 - 1)/(5 - 1) = 0.375; the edges 1, 2, 5 would make it exact.
    let e2e = histogram_group(&r, "e2e", "m");
    let f = &e2e["fractions"][0];
    assert_eq!(f["kind"], "interpolated");
    assert_close(&f["value"], 0.375, "E2E estimate");
    assert_close(&f["lower"], 0.25, "E2E lower bound");
    assert_close(&f["upper"], 0.75, "E2E upper bound");
    assert_eq!(
        e2e["recommended_edges_s"],
        serde_json::json!([1.0, 2.0, 5.0])
    );
    let notes = r["analysis"]["notes"].to_string();
    assert!(notes.contains("counter reset"), "{notes}");
}

#[test]
fn histogram_reports_bad_lines_with_path_line_and_column_and_reads_the_rest() {
    let path = format!("{PROM}/bad_lines.prom");
    let run = slo(&["histogram", &path, "--e2e", "2000", "--format", "json"]);
    for located in [":4:56: ", ":6:67: ", ":8:82: ", ":9:1: ", ":12:54: "] {
        assert!(
            run.stderr.contains(&format!("skipped: {path}{located}")),
            "{located}: stderr {}",
            run.stderr
        );
    }
    let r = run.json();
    // The good lines: 10 at 1 s, 30 at 2.5 s, 40 at 5 s, 50 at +Inf (the first of the two), sum
    // 91.25 s. 2 s is inside (1, 2.5]: 10/50 + (30 - 10)/50 · (2 - 1)/(2.5 - 1) = 0.4667.
    let e2e = histogram_group(&r, "e2e", "m");
    assert_close(&e2e["count"], 50.0, "count");
    assert_close(&e2e["mean_ms"], 91.25 / 50.0 * 1000.0, "mean");
    assert_close(
        &e2e["fractions"][0]["value"],
        0.2 + 0.4 / 1.5,
        "E2E <= 2000 ms",
    );
}

// ---------------------------------------------------------------- slo budget

/// 2026-11-01 00:00:00 UTC in Unix seconds (`date -u -d 2026-11-01 +%s`).
const BUDGET_T0: f64 = 1_793_491_200.0;

#[test]
fn budget_spends_the_error_budget_of_the_log() {
    let r = slo(&[
        "budget",
        BUDGET_LOG,
        "--ttft",
        "500",
        "--objective",
        "0.99",
        "--window-days",
        "28",
        "--volume",
        "10000",
        "--format",
        "json",
    ])
    .json();
    let b = &r["budget"];
    // 120 requests, 6 of them at TTFT 900 > 500.
    assert_eq!(b["attempted"], 120);
    assert_eq!(b["bad"], 6);
    assert_eq!(r["requests"]["attempted_with_timestamp"], 120);
    // Allowed: (1 - 0.99) · 10,000 = 100 bad; consumed 6 / 100; remaining 94 %, 94 requests.
    assert_close(&b["allowed_bad_fraction"], 0.01, "allowed fraction");
    assert_close(&b["allowed_bad_requests"], 100.0, "allowed bad");
    assert_close(&b["consumed"], 0.06, "consumed");
    assert_close(&b["remaining"], 0.94, "remaining");
    assert_close(&b["remaining_requests"], 94.0, "remaining requests");
    // Hourly slices on the clock: 00:00 has 60 good; 01:00 has 6 bad of 60, burn 0.1 / 0.01 = 10.
    let slices = array(&b["slices"], "slices");
    assert_eq!(slices.len(), 2);
    assert_close(&slices[0]["start_s"], BUDGET_T0, "first slice");
    assert_close(&slices[0]["burn_rate"], 0.0, "first slice burn");
    assert_close(&slices[1]["start_s"], BUDGET_T0 + 3600.0, "second slice");
    assert_eq!(slices[1]["bad"], 6);
    assert_close(&slices[1]["burn_rate"], 10.0, "second slice burn");
    assert_close(&b["peak"]["burn_rate"], 10.0, "peak burn");
    // The last hour of the log is the second slice: current burn 10; the budget runs out in
    // remaining × window / burn = 0.94 · 28 d / 10 = 2.632 d = 227,404.8 s.
    assert_close(&b["current_burn"], 10.0, "current burn");
    assert_close(
        &b["time_to_exhaustion_s"],
        0.94 * 28.0 * 86_400.0 / 10.0,
        "time to exhaustion",
    );
    // No queue column: no diagnosis, and the reason.
    assert!(r["diagnosis"].is_null());
    assert!(r["diagnosis_unavailable"]
        .as_str()
        .is_some_and(|s| s.contains("queue")));
}

#[test]
fn budget_only_the_ticket_alert_would_have_fired() {
    let r = slo(&[
        "budget",
        BUDGET_LOG,
        "--ttft",
        "500",
        "--objective",
        "0.99",
        "--volume",
        "10000",
        "--format",
        "json",
    ])
    .json();
    let alerts = array(&r["budget"]["alerts"], "alerts");
    // The SRE workbook's three (docs/production.md): page 14.4 over 1 h / 5 min, page 6 over
    // 6 h / 30 min, ticket 1 over 3 d / 6 h.
    let rules: Vec<(Value, Value)> = alerts
        .iter()
        .map(|a| {
            (
                a["alert"]["severity"].clone(),
                a["alert"]["burn_rate"].clone(),
            )
        })
        .collect();
    assert_eq!(
        rules,
        [
            ("page".into(), 14.4.into()),
            ("page".into(), 6.0.into()),
            ("ticket".into(), 1.0.into())
        ]
    );
    // Page 1 h: at most 6 bad in any hour of 60 requests, burn <= 10 < 14.4: never.
    // Page 6 h: the window holds the whole log so far; the bad share peaks after 01:55 at
    // 6 of 116 (5.2 %), burn 5.2 < 6: never.
    assert!(alerts[0]["first_fired_s"].is_null());
    assert!(alerts[1]["first_fired_s"].is_null());
    // Ticket: the first bad request starts 01:05; at the end of that minute (01:06) both windows
    // hold 1 bad of 66, burn 1.5 > 1. The share never falls back to 1 % (k bad of at most
    // 65 + 10k requests), so it fires once, still firing at the end of the log.
    let ticket = &alerts[2];
    assert_close(
        &ticket["first_fired_s"],
        BUDGET_T0 + 66.0 * 60.0,
        "ticket fires at 01:06",
    );
    let intervals = array(&ticket["intervals"], "intervals");
    assert_eq!(intervals.len(), 1);
    assert_eq!(intervals[0]["ongoing"], true);
}

#[test]
fn budget_without_volume_extrapolates_the_log_to_the_window() {
    // The log covers 00:00 to the end of its last minute, 02:00: 7200 s. Volume = 120 ·
    // (28 · 86400) / 7200 = 40,320; allowed bad 403.2; consumed 6 / 403.2.
    let r = slo(&[
        "budget",
        BUDGET_LOG,
        "--ttft",
        "500",
        "--objective",
        "0.99",
        "--window-days",
        "28",
        "--format",
        "json",
    ])
    .json();
    let b = &r["budget"];
    assert_close(&b["volume"], 40_320.0, "volume");
    assert_close(&b["allowed_bad_requests"], 403.2, "allowed bad");
    assert_close(&b["consumed"], 6.0 / 403.2, "consumed");
}

#[test]
fn budget_of_a_log_without_timestamps_exits_2() {
    let run = slo(&["budget", WORKED, "--ttft", "500"]);
    run.expect_code(2);
    assert!(run.stderr.contains("timestamp"), "stderr: {}", run.stderr);
}

// ---------------------------------------------------------------- determinism

#[test]
fn the_same_input_gives_byte_identical_output() {
    let sweep = sweep_files();
    let mut sweep_json = sweep_args(&sweep, &["--format", "json"]);
    sweep_json.push("--check");
    let (a, b) = (
        format!("{PROM}/replica_a.prom"),
        format!("{PROM}/replica_b.prom"),
    );
    let commands: Vec<Vec<&str>> = vec![
        vec![
            "report", WORKED, "--ttft", "500", "--tpot", "50", "--format", "json",
        ],
        vec!["report", WORKED, "--ttft", "500", "--tpot", "50"],
        vec!["report", VLLM_NEW, "--format", "csv"],
        vec![
            "compare",
            "--spec",
            COMPARE_SPEC,
            RUN_A,
            RUN_B,
            "--format",
            "json",
        ],
        vec!["doc", "--spec", WORKED_SPEC, WORKED],
        vec!["export", "--to", "openslo", "--spec", COMPARE_SPEC],
        vec!["export", "--to", "sql", "--spec", COMPARE_SPEC],
        sweep_json,
        vec![
            "histogram",
            a.as_str(),
            b.as_str(),
            "--ttft",
            "500",
            "--format",
            "json",
        ],
        vec!["budget", BUDGET_LOG, "--ttft", "500", "--format", "json"],
    ];
    for args in commands {
        let (first, second) = (slo(&args), slo(&args));
        assert_eq!(first.code, 0, "{args:?}: stderr {}", first.stderr);
        assert!(!first.stdout.is_empty(), "{args:?}");
        assert!(first.stdout == second.stdout, "{args:?}: stdout differs");
        assert!(first.stderr == second.stderr, "{args:?}: stderr differs");
    }
}

#[test]
fn a_column_a_class_rule_reads_is_read_and_rules_that_match_nothing_are_said() {
    let run = slo(&["report", "--spec", TEAM_SPEC, "--format", "json", TEAM_LOG]);
    run.expect_code(0);
    let r = run.json();
    // Class A (team = a) holds lines 2 and 4: TTFT 100 and 300 ms against 250, so 1 good of 2.
    let a = group(&r["groups"], "A", "all lengths");
    assert_eq!(a["attempted"], 2);
    assert_eq!(a["good"], 1);
    // Team b goes to the default class; C and D match nothing.
    assert_eq!(group(&r["groups"], "rest", "all lengths")["attempted"], 1);
    assert_eq!(group(&r["groups"], "C", "all lengths")["attempted"], 0);
    let warnings: Vec<&str> = array(&r["warnings"], "warnings")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        warnings.contains(&"class \"C\" matches no request: no request has team = \"c\""),
        "{warnings:?}"
    );
    assert!(
        warnings.contains(
            &"class \"D\" matches no request: its rule reads the column \"tenant\", which the data does not have"
        ),
        "{warnings:?}"
    );
    // `team` is read, so it is no longer reported as an unknown column.
    assert!(!run.stderr.contains("ignored columns"), "{}", run.stderr);
}
