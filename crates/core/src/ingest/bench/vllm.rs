//! vLLM `bench serve` / `benchmark_serving.py --save-result` JSON, and SGLang `bench_serving`
//! output (a copy of vLLM's script: one JSON line per run).
//!
//! Both keep per-request values as parallel arrays: `ttfts[i]`, `itls[i]` (a list of gaps),
//! `input_lens[i]`, `output_lens[i]`, `errors[i]` (empty text = success), and in newer vLLM
//! `latencies[i]`, `start_times[i]`, `queue_times[i]`. Per-request values are seconds; the
//! summary fields `*_ms` are milliseconds, `duration` seconds.

use serde_json::{Map, Value};

use super::json;
use crate::ingest::fields::{self, TimeUnit};
use crate::ingest::{Loaded, RequestRate, RunMeta};
use crate::table::{Row, Status};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    Vllm,
    Sglang,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Vllm => "vLLM",
            Tool::Sglang => "SGLang",
        }
    }
    fn rerun(self) -> &'static str {
        match self {
            Tool::Vllm => "rerun vllm bench serve with --save-result --save-detailed",
            Tool::Sglang => "rerun python -m sglang.bench_serving with --output-details",
        }
    }
}

/// Top-level numbers that are settings of the run, not results: kept out of the summary.
const SETTINGS: &[&str] = &[
    "request_rate",
    "burstiness",
    "max_concurrency",
    "num_prompts",
    "ramp_up_start_rps",
    "ramp_up_end_rps",
    "sharegpt_output_len",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
    "seed",
];

/// The per-request arrays, in the order their cells are read.
const ARRAYS: &[&str] = &[
    "ttfts",
    "itls",
    "input_lens",
    "output_lens",
    "errors",
    "latencies",
    "start_times",
    "queue_times",
];

/// One run: a JSON object, and its line when the file holds one run per line.
struct Run {
    line: Option<u64>,
    obj: Map<String, Value>,
}

enum Outcome {
    /// No per-request arrays: the run holds only its summary.
    SummaryOnly,
    /// Per-request arrays were read. `reconstructed`: E2E rebuilt as TTFT + sum(ITL).
    Rows { reconstructed: bool },
}

/// Reads a vLLM result file or an SGLang output file.
pub fn parse(name: &str, text: &json::Source, tool: Tool) -> Loaded {
    let mut loaded = Loaded::default();
    let runs = match runs(name, text, tool, &mut loaded) {
        Ok(runs) => runs,
        Err(fatal) => {
            loaded.fatal = Some(fatal);
            return loaded;
        }
    };
    if runs.is_empty() {
        if loaded.error_count == 0 {
            loaded.fatal = Some(format!(
                "{name}: no {} result found in this file",
                tool.name()
            ));
        }
        return loaded;
    }
    let multi = runs.len() > 1;
    let mut metas: Vec<(RunMeta, bool)> = Vec::new();
    let mut reconstructed = false;
    for run in &runs {
        let meta = run_meta(&run.obj, tool);
        let mut labels = Vec::new();
        if let Some(model) = &meta.model_id {
            labels.push(("model".to_string(), model.clone()));
        }
        if multi {
            labels.push(("run".to_string(), run_label(run)));
        }
        let outcome = requests(&mut loaded, name, run, multi, &labels);
        let has_rows = matches!(outcome, Outcome::Rows { .. });
        reconstructed |= matches!(
            outcome,
            Outcome::Rows {
                reconstructed: true
            }
        );
        metas.push((meta, has_rows));
    }
    let with_rows = metas.iter().filter(|(_, rows)| *rows).count();
    loaded.meta = merge(&metas);
    loaded.meta.e2e_reconstructed = reconstructed;
    if with_rows == 0 {
        if loaded.error_count == 0 {
            loaded.fatal = Some(summary_only_message(
                name,
                tool,
                runs.first().map(|r| &r.obj),
            ));
        }
        return loaded;
    }
    if multi {
        loaded.warnings.push(format!(
            "{name} holds {} runs (one per line); their requests were read into one table, with a label column \"run\" to tell them apart. The duration is the sum of the runs', and the summary numbers are those of the first run with per-request data",
            runs.len()
        ));
    }
    let skipped = runs.len() - with_rows;
    if skipped > 0 {
        loaded.warnings.push(format!(
            "{skipped} of the {} runs in {name} hold only summary numbers (no per-request arrays) and gave no rows; {}",
            runs.len(),
            tool.rerun()
        ));
    }
    if reconstructed {
        loaded.warnings.push(match tool {
            Tool::Vllm => "E2E latency was rebuilt as TTFT + sum(ITL) for each request: this file has no per-request \"latencies\" (an older vLLM benchmark_serving.py wrote it). This is vLLM's own latency when the stream ends on a token; the time to a final chunk without a token is not counted".to_string(),
            Tool::Sglang => "E2E latency was rebuilt as TTFT + sum(ITL) for each request: SGLang's bench_serving saves no per-request latency. Its own latency also counts the wait for the final [DONE] chunk, so these E2E values can be slightly shorter than its mean_e2e_latency_ms suggests".to_string(),
        });
    }
    let failed = loaded
        .table
        .status
        .iter()
        .filter(|s| **s != Status::Ok)
        .count();
    if failed > 0 && failed == loaded.table.len() {
        loaded.warnings.push(format!(
            "every one of the {failed} requests failed (the first error: {}): check the benchmark's settings",
            loaded.table.errors.first().map(|(_, e)| e.as_str()).unwrap_or("no error text")
        ));
    }
    loaded
}

/// The runs in the file: one JSON object, or (vLLM `--append-result`, SGLang) one per line.
fn runs(
    name: &str,
    text: &json::Source,
    tool: Tool,
    loaded: &mut Loaded,
) -> Result<Vec<Run>, String> {
    let as_object = |v: Value| -> Result<Map<String, Value>, String> {
        match v {
            Value::Object(obj) => Ok(obj),
            other => Err(format!(
                "expected a JSON object ({} result), found {}",
                tool.name(),
                crate::ingest::records::kind(&other)
            )),
        }
    };
    let whole = json::whole(name, text);
    let one_line = text.lines().filter(|l| !l.trim().is_empty()).count() <= 1;
    let first_line_parses = || {
        text.lines()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| serde_json::from_str::<Value>(l).is_ok_and(|v| v.is_object()))
    };
    match whole {
        Ok(v) => {
            // SGLang's output is JSON Lines: its single run is line 1.
            let line = (tool == Tool::Sglang && one_line).then_some(1);
            as_object(v)
                .map(|obj| vec![Run { line, obj }])
                .map_err(|e| format!("{name}: {e}"))
        }
        Err(fatal) if one_line || !first_line_parses() => Err(fatal),
        Err(_) => {
            let mut out = Vec::new();
            json::each_line(name, text, loaded, |loaded, line, v| match as_object(v) {
                Ok(obj) => out.push(Run {
                    line: Some(line),
                    obj,
                }),
                Err(e) => loaded.reject(
                    crate::ingest::Location {
                        file: name.to_string(),
                        line: Some(line),
                        ..Default::default()
                    },
                    e,
                ),
            });
            Ok(out)
        }
    }
}

fn run_label(run: &Run) -> String {
    if let Some(tag) = json::str_of(&run.obj, "tag") {
        return tag.to_string();
    }
    let mut label = match run.line {
        Some(line) => format!("line {line}"),
        None => "run".to_string(),
    };
    match run.obj.get("request_rate").and_then(json::request_rate) {
        Some(RequestRate::PerSecond(r)) => label.push_str(&format!(", {r} req/s")),
        Some(RequestRate::Infinite) => label.push_str(", rate inf"),
        None => {}
    }
    if let Some(c) = json::u64_of(&run.obj, "max_concurrency") {
        label.push_str(&format!(", concurrency {c}"));
    }
    label
}

fn run_meta(obj: &Map<String, Value>, tool: Tool) -> RunMeta {
    let model_id = json::str_of(obj, "model_id")
        .or_else(|| json::str_of(obj, "model"))
        .or_else(|| match tool {
            Tool::Sglang => obj.get("server_info").and_then(|s| {
                ["served_model_name", "model_path"].iter().find_map(|k| {
                    s.get(k)
                        .and_then(Value::as_str)
                        .filter(|m| !m.trim().is_empty())
                })
            }),
            Tool::Vllm => None,
        })
        .map(str::to_string);
    RunMeta {
        duration_s: json::f64_of(obj, "duration"),
        request_rate: obj.get("request_rate").and_then(json::request_rate),
        burstiness: json::f64_of(obj, "burstiness"),
        max_concurrency: json::u64_of(obj, "max_concurrency"),
        num_prompts: json::u64_of(obj, "num_prompts"),
        completed: json::u64_of(obj, "completed"),
        failed: json::u64_of(obj, "failed"),
        model_id,
        date: json::str_of(obj, "date").map(str::to_string),
        summary: json::summary(obj, SETTINGS),
        e2e_reconstructed: false,
    }
}

/// One meta for the file: a single run's as it is; for several, sums of durations and counts,
/// settings when every run has the same, and the summary of the first run with rows.
fn merge(metas: &[(RunMeta, bool)]) -> RunMeta {
    if let [(only, _)] = metas {
        return only.clone();
    }
    let used: Vec<&RunMeta> = metas
        .iter()
        .filter(|(_, rows)| *rows)
        .map(|(m, _)| m)
        .collect();
    let used = if used.is_empty() {
        metas.iter().map(|(m, _)| m).collect()
    } else {
        used
    };
    let sum_f = |f: fn(&RunMeta) -> Option<f64>| used.iter().map(|m| f(m)).sum::<Option<f64>>();
    let sum_u = |f: fn(&RunMeta) -> Option<u64>| used.iter().map(|m| f(m)).sum::<Option<u64>>();
    RunMeta {
        duration_s: sum_f(|m| m.duration_s),
        request_rate: json::common(used.iter().map(|m| m.request_rate)),
        burstiness: json::common(used.iter().map(|m| m.burstiness)),
        max_concurrency: json::common(used.iter().map(|m| m.max_concurrency)),
        num_prompts: sum_u(|m| m.num_prompts),
        completed: sum_u(|m| m.completed),
        failed: sum_u(|m| m.failed),
        model_id: json::common(used.iter().map(|m| m.model_id.clone())),
        date: used.first().and_then(|m| m.date.clone()),
        summary: used.first().map(|m| m.summary.clone()).unwrap_or_default(),
        e2e_reconstructed: false,
    }
}

fn summary_only_message(name: &str, tool: Tool, obj: Option<&Map<String, Value>>) -> String {
    let mut held = Vec::new();
    if let Some(obj) = obj {
        if let Some(n) = json::u64_of(obj, "completed") {
            held.push(format!("{n} completed"));
        }
        if let Some(n) = json::u64_of(obj, "failed") {
            held.push(format!("{n} failed"));
        }
        if let Some(d) = json::f64_of(obj, "duration") {
            held.push(format!("over {d:.1} s"));
        }
        for (key, what) in [
            ("mean_ttft_ms", "mean TTFT"),
            ("p99_ttft_ms", "p99 TTFT"),
            ("mean_tpot_ms", "mean TPOT"),
        ] {
            if let Some(x) = json::f64_of(obj, key) {
                held.push(format!("{what} {x:.1} ms"));
            }
        }
    }
    let held = if held.is_empty() {
        String::new()
    } else {
        format!(" ({})", held.join(", "))
    };
    let latencies = obj.is_some_and(|o| o.contains_key("latencies"));
    let note = if latencies {
        "; its \"latencies\" list alone has no TTFT, no ITL and no error per request"
    } else {
        ""
    };
    format!(
        "{name}: this {} result holds only the run's summary numbers{held}, not one entry per request{note}. Joint attainment needs per-request data, so attainment, goodput at your targets and per-class results cannot be computed from it (the summary numbers are kept); {} to save per-request data",
        tool.name(),
        tool.rerun()
    )
}

/// The per-request arrays of one run: present (a list) or absent (missing or null).
struct Arrays<'a> {
    found: Vec<(&'static str, Option<&'a Vec<Value>>)>,
}

impl<'a> Arrays<'a> {
    fn get(&self, key: &str) -> Option<&'a Vec<Value>> {
        self.found
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, a)| *a)
    }
    fn cell(&self, key: &str, k: usize) -> Option<&'a Value> {
        self.get(key).and_then(|a| a.get(k))
    }
    /// A numeric cell through `f`; a bad one is (array, path, reason).
    fn read(
        &self,
        key: &'static str,
        k: usize,
        f: impl Fn(&Value) -> Result<Option<f64>, String>,
    ) -> Result<Option<f64>, Bad> {
        match self.cell(key, k).map(f).transpose() {
            Ok(v) => Ok(v.flatten()),
            Err(reason) => Err((key, format!("$.{key}[{k}]"), reason)),
        }
    }
}

/// A cell that could not be read: (array key, JSON path, reason).
type Bad = (&'static str, String, String);

/// Reads the per-request arrays of one run into rows.
fn requests(
    loaded: &mut Loaded,
    name: &str,
    run: &Run,
    multi: bool,
    labels: &[(String, String)],
) -> Outcome {
    let at = |field: &str, path: String| json::loc(name, run.line, field, path);
    let mut arrays = Arrays { found: Vec::new() };
    for key in ARRAYS {
        let found = match run.obj.get(*key) {
            None | Some(Value::Null) => None,
            Some(Value::Array(a)) => Some(a),
            Some(other) => {
                loaded.reject(
                    at(key, format!("$.{key}")),
                    format!(
                        "expected a list with one entry per request, found {}",
                        json::describe(other)
                    ),
                );
                None
            }
        };
        arrays.found.push((key, found));
    }
    let Some(ttfts) = arrays.get("ttfts") else {
        return Outcome::SummaryOnly;
    };
    let n_requests = ttfts.len();
    // Arrays of another length than `ttfts`: one error for them all, located at the shortest
    // array, and every request that not every array covers counted as skipped.
    let differing: Vec<(&str, usize)> = arrays
        .found
        .iter()
        .filter_map(|(key, arr)| Some((*key, arr.as_ref()?.len())))
        .filter(|&(_, len)| len != n_requests)
        .collect();
    let lengths = differing.iter().map(|&(_, len)| len);
    let n = lengths.clone().fold(n_requests, usize::min);
    let longest = lengths.fold(n_requests, usize::max);
    if !differing.is_empty() {
        let shortest = differing
            .iter()
            .find(|&&(_, len)| len == n)
            .map_or("ttfts", |&(key, _)| key);
        // `"itls" and "errors" have 4 entries, "output_lens" has 2`: the arrays by length.
        let mut by_length: Vec<(usize, Vec<String>)> = Vec::new();
        for &(key, len) in &differing {
            match by_length.iter_mut().find(|(l, _)| *l == len) {
                Some((_, keys)) => keys.push(format!("\"{key}\"")),
                None => by_length.push((len, vec![format!("\"{key}\"")])),
            }
        }
        let listed: Vec<String> = by_length
            .iter()
            .map(|(len, keys)| match keys.split_last() {
                Some((last, [])) => format!("{last} has {len} entries"),
                Some((last, rest)) => format!("{} and {last} have {len} entries", rest.join(", ")),
                None => String::new(),
            })
            .collect();
        loaded.reject(
            at(shortest, format!("$.{shortest}")),
            format!(
                "{} but \"ttfts\" has {n_requests}: the arrays must have one entry per request; only the {n} requests that every array covers were read",
                listed.join(", ")
            ),
        );
        loaded.error_count += (longest - n).saturating_sub(1) as u64;
    }
    let mut reconstructed = false;
    for k in 0..n {
        match row(&arrays, k) {
            Ok((mut row, rebuilt)) => {
                reconstructed |= rebuilt;
                row.labels = labels.to_vec();
                if multi {
                    row.id = Some(format!("{name}:{}#{}", run.line.unwrap_or(0), k + 1));
                }
                loaded.table.push(row, 0, k as u32 + 1, name);
            }
            Err((key, path, reason)) => loaded.reject(at(key, path), reason),
        }
    }
    Outcome::Rows { reconstructed }
}

/// Request `k`, and whether its E2E was rebuilt from TTFT and gaps.
fn row(arrays: &Arrays, k: usize) -> Result<(Row, bool), Bad> {
    let error = match arrays.cell("errors", k) {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.trim().to_string(),
        Some(other) => {
            let reason = format!(
                "expected the error text (empty for success), found {}",
                json::describe(other)
            );
            return Err(("errors", format!("$.errors[{k}]"), reason));
        }
    };
    let seconds = |v: &Value| json::duration_ms(v, TimeUnit::S);
    let mut row = Row::default();
    let ttft_ms = arrays.read("ttfts", k, seconds)?;
    row.input_tokens = arrays.read("input_lens", k, json::tokens)?;
    let output_tokens = arrays.read("output_lens", k, json::tokens)?;
    row.start_s = arrays.read("start_times", k, json::number)?;
    row.queue_ms = arrays.read("queue_times", k, seconds)?;
    let latency_ms = arrays.read("latencies", k, seconds)?;
    // A failed request has an error text, and vLLM writes ttft 0.0 for it. A request that never
    // got a token but has no error text (a server reply with an empty reason) is failed too.
    if !error.is_empty() || ttft_ms == Some(0.0) {
        row.status = Status::Error;
        row.error = Some(if error.is_empty() {
            "no token was received (ttft is 0.0) and the file gives no error text".to_string()
        } else {
            json::short_error(&error)
        });
        return Ok((row, false));
    }
    let Some(ttft_ms) = ttft_ms else {
        let reason = "the TTFT is missing for a request without an error".to_string();
        return Err(("ttfts", format!("$.ttfts[{k}]"), reason));
    };
    row.ttft_ms = Some(ttft_ms);
    row.output_tokens = output_tokens;
    // The gaps in seconds as written (for the E2E rebuild).
    let gaps_s = match arrays.cell("itls", k) {
        None | Some(Value::Null) => None,
        Some(Value::Array(list)) => {
            let mut out = Vec::with_capacity(list.len());
            for (j, g) in list.iter().enumerate() {
                let checked = json::duration_ms(g, TimeUnit::S).and_then(|ms| {
                    ms.ok_or_else(|| "a gap is null (seconds)".to_string())?;
                    g.as_f64().ok_or_else(|| "not a number".to_string())
                });
                match checked {
                    Ok(x) => out.push(x),
                    Err(reason) => return Err(("itls", format!("$.itls[{k}][{j}]"), reason)),
                }
            }
            Some(out)
        }
        Some(other) => {
            let reason = format!(
                "expected the list of this request's inter-token gaps, found {}",
                json::describe(other)
            );
            return Err(("itls", format!("$.itls[{k}]"), reason));
        }
    };
    let mut rebuilt = false;
    row.e2e_ms = match (latency_ms, &gaps_s) {
        (Some(ms), _) => Some(ms),
        (None, Some(gaps)) => {
            rebuilt = true;
            // ttft + sum(itl), summed in seconds in order, as vLLM's own timeline plot does.
            let ttft_s = arrays
                .cell("ttfts", k)
                .and_then(Value::as_f64)
                .unwrap_or(ttft_ms / 1000.0);
            Some((ttft_s + gaps.iter().sum::<f64>()) * 1000.0)
        }
        (None, None) => None,
    };
    let latency_s = arrays
        .cell("latencies", k)
        .and_then(Value::as_f64)
        .filter(|_| latency_ms.is_some());
    row.end_s = row.start_s.zip(latency_s).map(|(s, l)| s + l);
    row.itl_ms = gaps_s.map(|g| g.iter().map(|x| x * 1000.0).collect());
    if let Err(reason) = fields::check_row(&row) {
        let key = if latency_ms.is_some() {
            "latencies"
        } else {
            "itls"
        };
        return Err((key, format!("$.{key}[{k}]"), reason));
    }
    Ok((row, rebuilt))
}
