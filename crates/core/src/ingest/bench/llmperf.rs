//! Ray LLMPerf `*_individual_responses.json`: a JSON array with one object per request,
//! `ttft_s`, `end_to_end_latency_s`, `inter_token_latency_s`, `number_input_tokens`,
//! `number_output_tokens`, `error_code` (null on success) and `error_msg`.
//!
//! LLMPerf's `inter_token_latency_s` is one number per request: the sum of all gaps *including*
//! the TTFT, divided by the output tokens, so about E2E / n. We do not use it; TPOT is
//! recomputed from E2E, TTFT and n. LLMPerf keeps no timestamps and no individual gaps.

use serde_json::{Map, Value};

use super::json;
use crate::ingest::{Loaded, RunMeta, TimeUnit};
use crate::table::{Row, Status};

/// Reads LLMPerf's individual responses (or explains that a summary file is not them).
pub fn parse(name: &str, text: &json::Source) -> Loaded {
    let mut loaded = Loaded::default();
    let items = match json::whole(name, text) {
        Ok(Value::Array(items)) => items,
        Ok(Value::Object(obj)) if obj.keys().any(|k| k.starts_with("results_")) => {
            loaded.meta = RunMeta {
                summary: json::summary(&obj, &[]),
                ..RunMeta::default()
            };
            loaded.fatal = Some(format!(
                "{name}: this is LLMPerf's summary file: it holds only aggregate numbers, not one entry per request, so joint attainment cannot be computed from it; load the *_individual_responses.json written next to it instead"
            ));
            return loaded;
        }
        Ok(other) => {
            loaded.fatal = Some(format!(
                "{name}: expected LLMPerf's individual responses (a JSON array of objects), found {}",
                json::describe(&other)
            ));
            return loaded;
        }
        Err(fatal) => {
            loaded.fatal = Some(fatal);
            return loaded;
        }
    };
    for (k, item) in items.iter().enumerate() {
        let Value::Object(obj) = item else {
            loaded.reject(
                json::loc(name, None, "", format!("$[{k}]")),
                format!("expected a response object, found {}", json::describe(item)),
            );
            continue;
        };
        match response(obj) {
            Ok(row) => loaded.table.push(row, 0, k as u32 + 1, name),
            Err((field, reason)) => loaded.reject(
                json::loc(name, None, field, format!("$[{k}].{field}")),
                reason,
            ),
        }
    }
    loaded
}

fn response(obj: &Map<String, Value>) -> Result<Row, (&'static str, String)> {
    let read =
        |key: &'static str, f: &dyn Fn(&Value) -> Result<Option<f64>, String>| match obj.get(key) {
            None => Ok(None),
            Some(v) => f(v).map_err(|reason| (key, reason)),
        };
    let seconds = |v: &Value| json::duration_ms(v, TimeUnit::S);
    let mut row = Row::default();
    let ttft_ms = read("ttft_s", &seconds)?;
    let e2e_ms = read("end_to_end_latency_s", &seconds)?;
    row.input_tokens = read("number_input_tokens", &json::tokens)?;
    let output_tokens = read("number_output_tokens", &json::tokens)?;
    let code = match obj.get("error_code") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(s.trim().to_string()),
        Some(other) => {
            return Err((
                "error_code",
                format!(
                    "expected null or an error code, found {}",
                    json::describe(other)
                ),
            ));
        }
    };
    let message = obj
        .get("error_msg")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|m| !m.is_empty());
    if code.is_some() || message.is_some() {
        // LLMPerf writes ttft 0 and latency 0 for a failed request: they are not measurements.
        row.status = match code.as_deref() {
            Some("408" | "504") => Status::Timeout,
            _ => Status::Error,
        };
        row.error = Some(match (code, message) {
            (Some(c), Some(m)) => format!("error {c}: {}", json::short_error(m)),
            (Some(c), None) => format!("error {c}"),
            (None, Some(m)) => json::short_error(m),
            (None, None) => "error".to_string(),
        });
        return Ok(row);
    }
    if ttft_ms.is_none() && e2e_ms.is_none() {
        return Err((
            "ttft_s",
            "no latency in this response (neither ttft_s nor end_to_end_latency_s)".to_string(),
        ));
    }
    row.ttft_ms = ttft_ms;
    row.e2e_ms = e2e_ms;
    row.output_tokens = output_tokens;
    crate::ingest::fields::check_row(&row).map_err(|reason| ("end_to_end_latency_s", reason))?;
    Ok(row)
}
