//! GuideLLM `benchmarks.json`: `benchmarks[].requests.{successful, errored, incomplete}`, one
//! object per request. Two schemas are read: v0.2 (`start_time`, `first_token_time`,
//! `end_time`, `prompt_tokens` on the request) and v0.3 and later (`info.timings.request_start`,
//! `first_token_iteration`, `request_end`, `input_metrics`/`output_metrics`), plus the computed
//! fields both write (`time_to_first_token_ms`, `request_latency` in seconds).
//!
//! GuideLLM's `time_per_output_token_ms` divides by the output tokens n, not n - 1, and its
//! `inter_token_latency_ms` is one mean per request; we keep neither and recompute TPOT from
//! E2E, TTFT and n. GuideLLM records no individual gaps, so there is no ITL list.

use serde_json::{Map, Value};

use super::json;
use crate::ingest::{Loaded, RequestRate, RunMeta};
use crate::table::{Row, Status};

/// A request that could not be read: (key, JSON path below the request, reason).
type Bad = (String, String, String);

/// Reads a GuideLLM report.
pub fn parse(name: &str, text: &json::Source) -> Loaded {
    let mut loaded = Loaded::default();
    let report = match json::whole(name, text) {
        Ok(report @ Value::Object(_)) => report,
        Ok(other) => {
            loaded.fatal = Some(format!(
                "{name}: expected GuideLLM's report (a JSON object with \"benchmarks\"), found {}",
                json::describe(&other)
            ));
            return loaded;
        }
        Err(fatal) => {
            loaded.fatal = Some(fatal);
            return loaded;
        }
    };
    let benchmarks = match report.get("benchmarks") {
        Some(Value::Array(b)) if !b.is_empty() => b,
        Some(Value::Array(_)) => {
            loaded.fatal = Some(format!("{name}: this GuideLLM report holds no benchmarks"));
            return loaded;
        }
        _ => {
            loaded.fatal = Some(format!("{name}: there is no \"benchmarks\" list, so this is not a GuideLLM benchmarks.json"));
            return loaded;
        }
    };
    let report_model = model_of(&report);
    let multi = benchmarks.len() > 1;
    let mut record = 0u32;
    let mut metas = Vec::new();
    let mut sampled = Vec::new();
    for (b, bench) in benchmarks.iter().enumerate() {
        let meta = bench_meta(bench, report_model.as_deref());
        let mut labels = Vec::new();
        if let Some(m) = &meta.model_id {
            labels.push(("model".to_string(), m.clone()));
        }
        if multi {
            labels.push(("run".to_string(), run_label(bench, b)));
        }
        let mut rows_here = 0u64;
        for (group, status) in [
            ("successful", Status::Ok),
            ("errored", Status::Error),
            ("incomplete", Status::Cancelled),
        ] {
            let list = match bench.get("requests").and_then(|r| r.get(group)) {
                Some(Value::Array(list)) => list,
                None | Some(Value::Null) => continue,
                Some(other) => {
                    loaded.reject(
                        json::loc(
                            name,
                            None,
                            group,
                            format!("$.benchmarks[{b}].requests.{group}"),
                        ),
                        format!(
                            "expected a list of requests, found {}",
                            json::describe(other)
                        ),
                    );
                    continue;
                }
            };
            for (k, req) in list.iter().enumerate() {
                record += 1;
                let path = format!("$.benchmarks[{b}].requests.{group}[{k}]");
                match request(req, status) {
                    Ok(mut row) => {
                        row.labels = labels.clone();
                        loaded.table.push(row, 0, record, name);
                        rows_here += 1;
                    }
                    Err((field, sub, reason)) => loaded.reject(
                        json::loc(name, None, &field, format!("{path}{sub}")),
                        reason,
                    ),
                }
            }
        }
        let total = [
            "request_totals",
            "run_stats.requests_made",
            "scheduler_metrics.requests_made",
        ]
        .iter()
        .find_map(|p| {
            json::dig(bench, &p.split('.').chain(["total"]).collect::<Vec<_>>())
                .and_then(Value::as_u64)
        });
        if let Some(total) = total {
            if total > rows_here {
                sampled.push((b, rows_here, total));
            }
        }
        metas.push(meta);
    }
    if !sampled.is_empty() {
        let list: Vec<String> = sampled
            .iter()
            .map(|(b, got, total)| format!("benchmark {}: {got} of {total}", b + 1))
            .collect();
        loaded.warnings.push(format!(
            "GuideLLM kept only a sample of the requests ({}): attainment is computed on the sample; rerun without a request sample size to keep them all",
            list.join(", ")
        ));
    }
    if multi {
        loaded.warnings.push(format!(
            "{name} holds {} benchmarks (a sweep); their requests were read into one table, with a label column \"run\" to tell them apart. The duration is the sum of the benchmarks'",
            benchmarks.len()
        ));
    }
    loaded.meta = merge(&metas);
    loaded
}

fn run_label(bench: &Value, b: usize) -> String {
    let strategy = strategy_of(bench);
    let kind = strategy
        .and_then(|s| json::str_of(s, "type_"))
        .unwrap_or("benchmark");
    match strategy.and_then(|s| json::f64_of(s, "rate").or_else(|| json::f64_of(s, "streams"))) {
        Some(x) => format!("{} {kind}@{x}", b + 1),
        None => format!("{} {kind}", b + 1),
    }
}

fn strategy_of(bench: &Value) -> Option<&Map<String, Value>> {
    json::dig(bench, &["config", "strategy"])
        .or_else(|| json::dig(bench, &["args", "strategy"]))
        .and_then(Value::as_object)
}

/// The model name, wherever this version of GuideLLM keeps it.
fn model_of(v: &Value) -> Option<String> {
    [
        &["worker", "backend_model"][..],
        &["config", "backend", "model"],
        &["config", "backend_kwargs", "model"],
        &["args", "model"],
        &["config", "model"],
        &["spec", "model"],
    ]
    .iter()
    .find_map(|p| json::dig(v, p).and_then(Value::as_str))
    .map(str::trim)
    .filter(|m| !m.is_empty() && *m != "None")
    .map(str::to_string)
}

fn bench_meta(bench: &Value, report_model: Option<&str>) -> RunMeta {
    let empty = Map::new();
    let obj = bench.as_object().unwrap_or(&empty);
    let strategy = strategy_of(bench);
    let kind = strategy
        .and_then(|s| json::str_of(s, "type_"))
        .unwrap_or("");
    let rate = strategy.and_then(|s| json::f64_of(s, "rate"));
    let duration = json::f64_of(obj, "duration").or_else(|| {
        let start = json::f64_of(obj, "start_time")?;
        let end = json::f64_of(obj, "end_time")?;
        Some(end - start).filter(|d| *d > 0.0)
    });
    let totals = [
        "request_totals",
        "run_stats.requests_made",
        "scheduler_metrics.requests_made",
    ]
    .iter()
    .find_map(|p| json::dig(bench, &p.split('.').collect::<Vec<_>>()).and_then(Value::as_object));
    RunMeta {
        duration_s: duration,
        request_rate: match (kind, rate) {
            ("throughput", _) => Some(RequestRate::Infinite),
            ("synchronous" | "concurrent", _) => None,
            (_, Some(r)) if r > 0.0 => Some(RequestRate::PerSecond(r)),
            _ => None,
        },
        max_concurrency: match kind {
            "synchronous" => Some(1),
            "concurrent" => strategy.and_then(|s| json::u64_of(s, "streams")),
            _ => strategy.and_then(|s| json::u64_of(s, "max_concurrency")),
        },
        completed: totals.and_then(|t| json::u64_of(t, "successful")),
        failed: totals.and_then(|t| json::u64_of(t, "errored")),
        model_id: model_of(bench).or(report_model.map(str::to_string)),
        summary: summary(obj),
        ..RunMeta::default()
    }
}

/// The successful-request statistics of each metric: `time_to_first_token_ms.mean`,
/// `time_to_first_token_ms.p99` ...
fn summary(bench: &Map<String, Value>) -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    let Some(metrics) = bench.get("metrics").and_then(Value::as_object) else {
        return out;
    };
    for (metric, dist) in metrics {
        let Some(ok) = dist.get("successful").and_then(Value::as_object) else {
            continue;
        };
        for (stat, v) in ok {
            if let Some(x) = v.as_f64().filter(|x| x.is_finite()) {
                out.insert(format!("{metric}.{stat}"), x);
            }
        }
        if let Some(pcts) = ok.get("percentiles").and_then(Value::as_object) {
            for (p, v) in pcts {
                if let Some(x) = v.as_f64().filter(|x| x.is_finite()) {
                    out.insert(format!("{metric}.{p}"), x);
                }
            }
        }
    }
    out
}

fn merge(metas: &[RunMeta]) -> RunMeta {
    if let [only] = metas {
        return only.clone();
    }
    RunMeta {
        duration_s: metas.iter().map(|m| m.duration_s).sum(),
        request_rate: json::common(metas.iter().map(|m| m.request_rate)),
        max_concurrency: json::common(metas.iter().map(|m| m.max_concurrency)),
        completed: metas.iter().map(|m| m.completed).sum(),
        failed: metas.iter().map(|m| m.failed).sum(),
        model_id: json::common(metas.iter().map(|m| m.model_id.clone())),
        ..RunMeta::default()
    }
}

fn bad(field: &str, sub: &str, reason: String) -> Bad {
    (field.to_string(), sub.to_string(), reason)
}

/// A timestamp (epoch seconds) from the first of `paths` that has one.
fn time(req: &Value, paths: &[&[&str]]) -> Result<Option<f64>, Bad> {
    for p in paths {
        if let Some(v) = json::dig(req, p).filter(|v| !v.is_null()) {
            let sub = format!(".{}", p.join("."));
            let field = p.last().copied().unwrap_or("");
            return json::number(v)
                .map_err(|reason| bad(field, &sub, reason))
                .map(|x| x.filter(|t| *t >= 0.0));
        }
    }
    Ok(None)
}

fn request(req: &Value, status: Status) -> Result<Row, Bad> {
    if !req.is_object() {
        return Err(bad(
            "",
            "",
            format!("expected a request object, found {}", json::describe(req)),
        ));
    }
    let mut row = Row {
        status,
        ..Row::default()
    };
    row.id = req
        .get("request_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    let start = time(
        req,
        &[
            &["start_time"],
            &["request_start_time"],
            &["info", "timings", "request_start"],
        ],
    )?;
    let first = time(
        req,
        &[
            &["first_token_time"],
            &["info", "timings", "first_token_iteration"],
        ],
    )?;
    let end = time(
        req,
        &[
            &["end_time"],
            &["request_end_time"],
            &["info", "timings", "request_end"],
        ],
    )?;
    row.start_s = start;
    row.end_s = end;
    row.ttft_ms = match req.get("time_to_first_token_ms").filter(|v| !v.is_null()) {
        Some(v) => json::duration_ms(v, crate::ingest::TimeUnit::Ms)
            .map_err(|reason| bad("time_to_first_token_ms", ".time_to_first_token_ms", reason))?,
        None => start
            .zip(first)
            .map(|(s, f)| (f - s) * 1000.0)
            .filter(|t| *t >= 0.0),
    };
    row.e2e_ms = match req.get("request_latency").filter(|v| !v.is_null()) {
        Some(v) => json::duration_ms(v, crate::ingest::TimeUnit::S)
            .map_err(|reason| bad("request_latency", ".request_latency", reason))?,
        None => start
            .zip(end)
            .map(|(s, e)| (e - s) * 1000.0)
            .filter(|t| *t >= 0.0),
    };
    let count = |paths: &[&[&str]]| -> Result<Option<f64>, Bad> {
        for p in paths {
            if let Some(v) = json::dig(req, p).filter(|v| !v.is_null()) {
                let sub = format!(".{}", p.join("."));
                return json::tokens(v)
                    .map_err(|reason| bad(p.last().copied().unwrap_or(""), &sub, reason));
            }
        }
        Ok(None)
    };
    row.input_tokens = count(&[
        &["prompt_tokens"],
        &["input_metrics", "total_tokens"],
        &["input_metrics", "text_tokens"],
    ])?;
    row.output_tokens = count(&[
        &["output_tokens"],
        &["output_metrics", "total_tokens"],
        &["output_metrics", "text_tokens"],
    ])?;
    let error = req
        .get("error")
        .and_then(Value::as_str)
        .or_else(|| json::dig(req, &["info", "error"]).and_then(Value::as_str))
        .map(str::trim)
        .filter(|e| !e.is_empty());
    if let Some(e) = error {
        row.error = Some(json::short_error(e));
    }
    if status == Status::Ok {
        if row.ttft_ms.is_none() && row.e2e_ms.is_none() {
            return Err(bad(
                "",
                "",
                "a successful request without timings (no TTFT, no latency)".to_string(),
            ));
        }
        if let Err(reason) = crate::ingest::fields::check_row(&row) {
            return Err(bad("request_latency", ".request_latency", reason));
        }
    }
    Ok(row)
}
