//! GenAI-Perf `profile_export.json` (written by perf_analyzer): `experiments[].requests[]`, each
//! with the request's `timestamp` and its `response_timestamps` (epoch ns) and
//! `response_outputs` (raw SSE chunks for OpenAI endpoints).
//!
//! As GenAI-Perf does, responses that carry no text (the role-only first chunk, an empty final
//! delta, `[DONE]`) are dropped before timing: TTFT is the first response with text minus the
//! request's timestamp, E2E the last one minus it, and the ITL gaps are the differences between
//! consecutive responses with text. GenAI-Perf counts output tokens by tokenizing the text; we
//! take `usage.completion_tokens` when the stream reports it, else the number of responses with
//! text (and say so in a warning).

use serde_json::{Map, Value};

use super::json;
use crate::ingest::{fields, Loaded, RequestRate, RunMeta};
use crate::table::{Row, Status};

/// A request that could not be read: (key, JSON path, reason).
type Bad = (String, String, String);

/// Reads a GenAI-Perf profile export.
pub fn parse(name: &str, text: &json::Source) -> Loaded {
    let mut loaded = Loaded::default();
    let obj = match json::whole(name, text) {
        Ok(Value::Object(obj)) => obj,
        Ok(other) => {
            loaded.fatal = Some(format!(
                "{name}: expected GenAI-Perf's profile export (a JSON object with \"experiments\"), found {}",
                json::describe(&other)
            ));
            return loaded;
        }
        Err(fatal) => {
            loaded.fatal = Some(fatal);
            return loaded;
        }
    };
    let Some(Value::Array(experiments)) = obj.get("experiments") else {
        loaded.fatal = Some(format!(
            "{name}: there is no \"experiments\" list, so this is not a GenAI-Perf profile export"
        ));
        return loaded;
    };
    let openai = json::str_of(&obj, "service_kind") == Some("openai");
    let multi = experiments.len() > 1;
    let mut record = 0u32;
    let mut counted_chunks = 0usize;
    let mut durations = Vec::new();
    let mut settings = Vec::new();
    for (e, exp) in experiments.iter().enumerate() {
        let mode = exp
            .get("experiment")
            .and_then(|x| x.get("mode"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let level = exp
            .get("experiment")
            .and_then(|x| x.get("value"))
            .and_then(Value::as_f64);
        settings.push((mode.to_string(), level));
        let run = match level {
            Some(v) => format!("{} {v}", mode.replace('_', " ")),
            None => format!("experiment {}", e + 1),
        };
        let Some(Value::Array(requests)) = exp.get("requests") else {
            loaded.reject(
                json::loc(
                    name,
                    None,
                    "requests",
                    format!("$.experiments[{e}].requests"),
                ),
                "expected the list of requests of this experiment",
            );
            continue;
        };
        let mut first_ns = u64::MAX;
        let mut last_ns = 0u64;
        for (k, req) in requests.iter().enumerate() {
            record += 1;
            let path = format!("$.experiments[{e}].requests[{k}]");
            match request(req, openai) {
                Ok(mut got) => {
                    // Ordered timestamps make this hold; checked like every other reader does.
                    if let Err(reason) = fields::check_row(&got.row) {
                        loaded.reject(
                            json::loc(name, None, "response_timestamps", path.clone()),
                            reason,
                        );
                        continue;
                    }
                    if got.tokens_counted {
                        counted_chunks += 1;
                    }
                    if let Some((a, b)) = got.span_ns {
                        first_ns = first_ns.min(a);
                        last_ns = last_ns.max(b);
                    }
                    if multi {
                        got.row.labels.push(("run".to_string(), run.clone()));
                    }
                    loaded.table.push(got.row, 0, record, name);
                }
                Err((field, sub, reason)) => loaded.reject(
                    json::loc(name, None, &field, format!("{path}{sub}")),
                    reason,
                ),
            }
        }
        if last_ns > first_ns {
            durations.push((last_ns - first_ns) as f64 / 1e9);
        }
    }
    if multi {
        loaded.warnings.push(format!(
            "{name} holds {} experiments; their requests were read into one table, with a label column \"run\" to tell them apart. The duration is the sum of the experiments'",
            experiments.len()
        ));
    }
    if counted_chunks > 0 {
        loaded.warnings.push(format!(
            "{counted_chunks} requests have no usage.completion_tokens in their stream: their output tokens are the number of responses that carried text (GenAI-Perf tokenizes the text instead), so their TPOT is per chunk if a chunk held several tokens"
        ));
    }
    let (mode, level) = json::common(settings.iter().map(|s| Some(s.clone()))).unwrap_or_default();
    loaded.meta = RunMeta {
        // GenAI-Perf's benchmark duration: last response minus first request, per experiment.
        duration_s: (!durations.is_empty()).then(|| durations.iter().sum()),
        request_rate: match (mode.as_str(), level) {
            ("request_rate", Some(r)) if r > 0.0 => Some(RequestRate::PerSecond(r)),
            _ => None,
        },
        max_concurrency: match (mode.as_str(), level) {
            ("concurrency", Some(c)) if c >= 1.0 && c.fract() == 0.0 => Some(c as u64),
            _ => None,
        },
        model_id: json::common(
            loaded
                .table
                .label("model")
                .map(|c| c.values.clone())
                .unwrap_or_default()
                .into_iter()
                .map(Some),
        ),
        ..RunMeta::default()
    };
    loaded
}

struct Request {
    row: Row,
    /// Output tokens were counted as responses with text (no usage in the stream).
    tokens_counted: bool,
    /// Request timestamp and last response timestamp, ns.
    span_ns: Option<(u64, u64)>,
}

fn bad(field: &str, sub: String, reason: String) -> Bad {
    (field.to_string(), sub, reason)
}

/// What one response carried.
#[derive(Default)]
struct Chunk {
    text: bool,
    error: Option<String>,
    completion_tokens: Option<f64>,
    prompt_tokens: Option<f64>,
    model: Option<String>,
}

fn request(req: &Value, openai: bool) -> Result<Request, Bad> {
    let ns = |v: &Value, field: &str, sub: String| -> Result<u64, Bad> {
        v.as_u64().ok_or_else(|| {
            bad(
                field,
                sub,
                format!(
                    "expected a timestamp in nanoseconds, found {}",
                    json::describe(v)
                ),
            )
        })
    };
    let ts = match req.get("timestamp") {
        Some(v) => ns(v, "timestamp", ".timestamp".to_string())?,
        None => {
            return Err(bad(
                "timestamp",
                ".timestamp".to_string(),
                "the request has no timestamp".to_string(),
            ))
        }
    };
    let stamps = match req.get("response_timestamps") {
        Some(Value::Array(a)) => a,
        None | Some(Value::Null) => &Vec::new(),
        Some(other) => {
            let reason = format!(
                "expected a list of timestamps, found {}",
                json::describe(other)
            );
            return Err(bad(
                "response_timestamps",
                ".response_timestamps".to_string(),
                reason,
            ));
        }
    };
    let empty = Vec::new();
    let outputs = match req.get("response_outputs") {
        Some(Value::Array(a)) => a,
        _ => &empty,
    };
    let mut row = Row {
        start_s: Some(ns_to_s(ts)),
        ..Row::default()
    };
    if let Some(model) = req
        .get("request_inputs")
        .and_then(|i| i.get("payload"))
        .and_then(Value::as_str)
        .and_then(|p| serde_json::from_str::<Value>(p).ok())
        .and_then(|p| p.get("model").and_then(Value::as_str).map(str::to_string))
    {
        row.labels.push(("model".to_string(), model));
    }
    if !outputs.is_empty() && outputs.len() != stamps.len() {
        let reason = format!(
            "{} response timestamps but {} response outputs: they must pair up",
            stamps.len(),
            outputs.len()
        );
        return Err(bad(
            "response_outputs",
            ".response_outputs".to_string(),
            reason,
        ));
    }
    let mut times = Vec::with_capacity(stamps.len());
    let mut completion = None;
    let mut prompt = None;
    let mut error = None;
    let mut previous_t = None;
    for (j, t) in stamps.iter().enumerate() {
        let t = ns(
            t,
            "response_timestamps",
            format!(".response_timestamps[{j}]"),
        )?;
        if t < ts {
            let reason = "this response is timestamped before its request".to_string();
            return Err(bad(
                "response_timestamps",
                format!(".response_timestamps[{j}]"),
                reason,
            ));
        }
        // Responses arrive in order: a timestamp before the previous one is a broken clock or a
        // damaged file, and would give a first token after the last (TTFT above E2E).
        if let Some(previous) = previous_t.replace(t) {
            if t < previous {
                let reason = "this response is timestamped before the response before it (response_timestamps must not go back in time)".to_string();
                return Err(bad(
                    "response_timestamps",
                    format!(".response_timestamps[{j}]"),
                    reason,
                ));
            }
        }
        let chunk = match outputs.get(j) {
            Some(out) if openai => sse_chunk(out),
            // Triton and other services: GenAI-Perf keeps every response.
            _ => Chunk {
                text: true,
                ..Chunk::default()
            },
        };
        completion = chunk.completion_tokens.or(completion);
        prompt = chunk.prompt_tokens.or(prompt);
        error = error.or(chunk.error);
        if let (Some(m), true) = (chunk.model, row.labels.is_empty()) {
            row.labels.push(("model".to_string(), m));
        }
        if chunk.text {
            times.push(t);
        }
    }
    row.input_tokens = prompt;
    let (Some(&first), Some(&last)) = (times.first(), times.last()) else {
        row.status = Status::Error;
        row.error = Some(error.unwrap_or_else(|| {
            "no response carried any text (GenAI-Perf leaves such requests out)".to_string()
        }));
        return Ok(Request {
            row,
            tokens_counted: false,
            span_ns: None,
        });
    };
    if let Some(e) = error {
        row.status = Status::Error;
        row.error = Some(e);
    }
    row.ttft_ms = Some((first - ts) as f64 / 1e6);
    row.e2e_ms = Some((last - ts) as f64 / 1e6);
    row.end_s = Some(ns_to_s(last));
    row.itl_ms = Some(
        times
            .windows(2)
            .map(|w| match w {
                [a, b] => b.saturating_sub(*a) as f64 / 1e6,
                _ => 0.0,
            })
            .collect(),
    );
    let tokens_counted = completion.is_none();
    row.output_tokens = completion.or(Some(times.len() as f64));
    Ok(Request {
        row,
        tokens_counted,
        span_ns: Some((ts, last)),
    })
}

fn ns_to_s(ns: u64) -> f64 {
    (ns / 1_000_000_000) as f64 + (ns % 1_000_000_000) as f64 / 1e9
}

/// Reads one OpenAI response as GenAI-Perf does: SSE events `data: {...}` (several may arrive
/// together), `[DONE]`, comments and `event:` lines; an `event: error` marks the request failed.
fn sse_chunk(out: &Value) -> Chunk {
    let mut chunk = Chunk::default();
    let Some(response) = out.get("response").and_then(Value::as_str) else {
        return chunk;
    };
    for event in response
        .split("\n\n")
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        if event.starts_with("event:") && event.to_ascii_lowercase().contains("error") {
            chunk.error = Some(json::short_error(event));
            continue;
        }
        if event.starts_with([':'])
            || event.starts_with("event:")
            || event.starts_with("id:")
            || event.starts_with("retry:")
        {
            continue;
        }
        let data = event.strip_prefix("data:").unwrap_or(event).trim();
        if data == "[DONE]" || data.is_empty() {
            continue;
        }
        let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        read_event(&obj, &mut chunk);
    }
    chunk
}

fn read_event(obj: &Map<String, Value>, chunk: &mut Chunk) {
    if let Some(err) = obj.get("error") {
        let message = err
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| err.to_string());
        chunk.error = Some(json::short_error(&message));
    }
    if let Some(usage) = obj.get("usage").and_then(Value::as_object) {
        // A usage count that is not a token count is passed over, as anything else that is
        // not a number here is.
        let tokens = |key| json::f64_of(usage, key).filter(|&v| fields::token_count(v).is_ok());
        chunk.completion_tokens = tokens("completion_tokens").or(chunk.completion_tokens);
        chunk.prompt_tokens = tokens("prompt_tokens").or(chunk.prompt_tokens);
    }
    if let Some(m) = json::str_of(obj, "model") {
        chunk.model = Some(m.to_string());
    }
    let choice = obj.get("choices").and_then(|c| c.get(0));
    let text = choice.and_then(|c| {
        c.get("text")
            .or_else(|| c.get("delta").and_then(|d| d.get("content")))
            .or_else(|| c.get("message").and_then(|m| m.get("content")))
            .and_then(Value::as_str)
    });
    if text.is_some_and(|t| !t.is_empty()) {
        chunk.text = true;
    }
}
