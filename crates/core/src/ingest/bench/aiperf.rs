//! AIPerf `profile_export.jsonl`: one JSON record per request, `{"metadata": {...}, "metrics":
//! {"time_to_first_token": {"value": 255.9, "unit": "ms"}, ...}, "error": null | {...}}`.
//!
//! AIPerf's `inter_token_latency` is one number per request, (latency - TTFT) / (OSL - 1): what
//! vLLM calls TPOT, not a list of gaps. The gaps are `inter_chunk_latency` (a list).

use serde_json::{Map, Value};

use super::json;
use crate::ingest::fields::{self, TimeUnit};
use crate::ingest::{Loaded, Location};
use crate::table::{Row, Status};

/// A record that could not be read: (key, JSON path, reason).
type Bad = (String, String, String);

/// Reads an AIPerf profile export.
pub fn parse(name: &str, text: &json::Source) -> Loaded {
    let mut loaded = Loaded::default();
    let mut skipped_phases: Vec<String> = Vec::new();
    let mut skipped = 0usize;
    json::each_line(name, text, &mut loaded, |loaded, line, value| {
        let Value::Object(obj) = value else {
            loaded.reject(
                Location {
                    file: name.to_string(),
                    line: Some(line),
                    ..Location::default()
                },
                format!(
                    "expected an AIPerf record (a JSON object), found {}",
                    json::describe(&value)
                ),
            );
            return;
        };
        match record(&obj) {
            Ok(Record::Row(row)) => loaded.table.push(*row, 0, line as u32, name),
            Ok(Record::OtherPhase(phase)) => {
                skipped += 1;
                if !skipped_phases.contains(&phase) {
                    skipped_phases.push(phase);
                }
            }
            Err((field, path, reason)) => {
                loaded.reject(json::loc(name, Some(line), &field, path), reason)
            }
        }
    });
    if skipped > 0 {
        loaded.warnings.push(format!(
            "{skipped} records of phase {} were left out: only the \"profiling\" phase is measured",
            skipped_phases.join(", ")
        ));
    }
    loaded
}

enum Record {
    Row(Box<Row>),
    /// A record of a phase other than profiling (warm-up): not measured.
    OtherPhase(String),
}

fn record(obj: &Map<String, Value>) -> Result<Record, Bad> {
    let empty = Map::new();
    let metadata = match obj.get("metadata") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(bad(
                "metadata",
                "$.metadata",
                format!("expected an object, found {}", json::describe(other)),
            ))
        }
    };
    if let Some(phase) = json::str_of(metadata, "benchmark_phase") {
        if phase != "profiling" {
            return Ok(Record::OtherPhase(phase.to_string()));
        }
    }
    let metrics = match obj.get("metrics") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(bad(
                "metrics",
                "$.metrics",
                format!("expected an object, found {}", json::describe(other)),
            ))
        }
    };
    let mut row = Row {
        id: json::str_of(metadata, "x_request_id").map(str::to_string),
        ..Row::default()
    };
    row.ttft_ms = duration(metrics, "time_to_first_token")?;
    row.e2e_ms = duration(metrics, "request_latency")?;
    row.itl_ms = gaps(metrics, "inter_chunk_latency")?;
    row.input_tokens = match count(metrics, "input_sequence_length")? {
        Some(n) => Some(n),
        None => count(metrics, "error_isl")?,
    };
    row.output_tokens = match count(metrics, "output_sequence_length")? {
        Some(n) => Some(n),
        None => count(metrics, "output_token_count")?,
    };
    row.start_s = ns_timestamp(metadata, "request_start_ns")?;
    row.end_s = match ns_timestamp(metadata, "cancellation_time_ns")? {
        Some(t) => Some(t),
        None => ns_timestamp(metadata, "request_end_ns")?,
    };
    let cancelled = metadata
        .get("was_cancelled")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    match obj.get("error") {
        None | Some(Value::Null) => {
            if cancelled {
                row.status = Status::Cancelled;
            }
        }
        Some(Value::Object(err)) => {
            let code = json::u64_of(err, "code");
            let kind = json::str_of(err, "type").unwrap_or("");
            let message = json::str_of(err, "message").unwrap_or("");
            let lower = kind.to_ascii_lowercase();
            row.status = if cancelled || code == Some(499) || lower.contains("cancel") {
                Status::Cancelled
            } else if matches!(code, Some(408 | 504)) || lower.contains("timeout") {
                Status::Timeout
            } else {
                Status::Error
            };
            let mut text = String::from(kind);
            if let Some(code) = code {
                text.push_str(&format!(" ({code})"));
            }
            if !message.is_empty() {
                if !text.is_empty() {
                    text.push_str(": ");
                }
                text.push_str(&json::short_error(message));
            }
            row.error = Some(if text.is_empty() {
                "error".to_string()
            } else {
                text
            });
        }
        Some(Value::String(s)) => {
            row.status = if cancelled {
                Status::Cancelled
            } else {
                Status::Error
            };
            row.error = Some(json::short_error(s));
        }
        Some(other) => {
            return Err(bad(
                "error",
                "$.error",
                format!(
                    "expected null or an error object, found {}",
                    json::describe(other)
                ),
            ))
        }
    }
    if row.status == Status::Ok && row.ttft_ms.is_none() && row.e2e_ms.is_none() {
        return Err(bad(
            "metrics",
            "$.metrics",
            "no latency in this record (neither time_to_first_token nor request_latency)"
                .to_string(),
        ));
    }
    if let Err(reason) = fields::check_row(&row) {
        return Err(bad("request_latency", "$.metrics.request_latency", reason));
    }
    Ok(Record::Row(Box::new(row)))
}

fn bad(field: &str, path: &str, reason: String) -> Bad {
    (field.to_string(), path.to_string(), reason)
}

/// A metric's value and unit: `{"value": x, "unit": "ms"}`, or a bare value.
fn metric<'a>(
    metrics: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<(&'a Value, Option<&'a str>)>, Bad> {
    match metrics.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => {
            let unit = m.get("unit").and_then(Value::as_str);
            match m.get("value") {
                None | Some(Value::Null) => Ok(None),
                Some(v) => Ok(Some((v, unit))),
            }
        }
        Some(v) => Ok(Some((v, None))),
    }
}

/// A time unit as AIPerf names it; none means ms (AIPerf's display unit).
fn unit_of(key: &str, unit: Option<&str>) -> Result<TimeUnit, Bad> {
    match unit {
        None => Ok(TimeUnit::Ms),
        Some(u) => TimeUnit::from_name(u).ok_or_else(|| {
            bad(
                key,
                &format!("$.metrics.{key}.unit"),
                format!("\"{u}\" is not a unit of time (ns, us, ms, s)"),
            )
        }),
    }
}

fn duration(metrics: &Map<String, Value>, key: &str) -> Result<Option<f64>, Bad> {
    let Some((v, unit)) = metric(metrics, key)? else {
        return Ok(None);
    };
    let unit = unit_of(key, unit)?;
    json::duration_ms(v, unit).map_err(|reason| bad(key, &format!("$.metrics.{key}.value"), reason))
}

fn gaps(metrics: &Map<String, Value>, key: &str) -> Result<Option<Vec<f64>>, Bad> {
    let Some((v, unit)) = metric(metrics, key)? else {
        return Ok(None);
    };
    let unit = unit_of(key, unit)?;
    let Value::Array(list) = v else {
        return Err(bad(
            key,
            &format!("$.metrics.{key}.value"),
            format!("expected a list of gaps, found {}", json::describe(v)),
        ));
    };
    let mut out = Vec::with_capacity(list.len());
    for (j, g) in list.iter().enumerate() {
        match json::duration_ms(g, unit) {
            Ok(Some(ms)) => out.push(ms),
            Ok(None) => {}
            Err(reason) => return Err(bad(key, &format!("$.metrics.{key}.value[{j}]"), reason)),
        }
    }
    Ok(Some(out))
}

fn count(metrics: &Map<String, Value>, key: &str) -> Result<Option<f64>, Bad> {
    let Some((v, _)) = metric(metrics, key)? else {
        return Ok(None);
    };
    json::tokens(v).map_err(|reason| bad(key, &format!("$.metrics.{key}.value"), reason))
}

/// Epoch nanoseconds (`time.time_ns()`) as seconds.
fn ns_timestamp(metadata: &Map<String, Value>, key: &str) -> Result<Option<f64>, Bad> {
    match metadata.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(ns) => Ok(Some(
                (ns / 1_000_000_000) as f64 + (ns % 1_000_000_000) as f64 / 1e9,
            )),
            None => json::number(v)
                .map(|x| x.map(|x| x / 1e9))
                .map_err(|reason| bad(key, &format!("$.metadata.{key}"), reason)),
        },
    }
}
