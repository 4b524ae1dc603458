//! Generic JSON logs: JSON Lines (one object per line) or a JSON array of objects, with the same
//! field names and units as CSV headers.

use serde_json::{Map, Value};

use super::fields::{self, Field};
use super::{Format, IngestOptions, Loaded, Location};
use crate::table::Row;

/// Reads JSON Lines or a JSON array of flat objects.
pub fn parse(
    name: &str,
    text: &str,
    format: Format,
    options: &IngestOptions,
    progress: &mut dyn FnMut(f64),
) -> Loaded {
    let mut loaded = Loaded::default();
    let trimmed = text.trim_start();
    if format == Format::JsonArray || trimmed.starts_with('[') {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(items)) => {
                for (k, item) in items.iter().enumerate() {
                    let path = format!("$[{k}]");
                    let at = Location {
                        file: name.to_string(),
                        json_path: Some(path.clone()),
                        ..Location::default()
                    };
                    match item {
                        Value::Object(obj) => {
                            add_object(&mut loaded, name, obj, at, k as u32 + 1, options)
                        }
                        _ => loaded.reject(at, format!("expected an object, found {}", kind(item))),
                    }
                }
            }
            Ok(other) => {
                loaded.fatal = Some(format!(
                    "{name}: expected a JSON array of request objects, found {}",
                    kind(&other)
                ))
            }
            Err(e) => loaded.fatal = Some(json_error(name, &e)),
        }
    } else {
        let mut read = 0usize;
        for (k, line) in text.lines().enumerate() {
            let line_no = k as u64 + 1;
            read += line.len() + 1;
            if (k + 1).is_multiple_of(super::delimited::PROGRESS_ROWS) {
                progress(read as f64 / text.len().max(1) as f64);
            }
            if line.trim().is_empty() {
                continue;
            }
            let at = Location {
                file: name.to_string(),
                line: Some(line_no),
                ..Location::default()
            };
            match serde_json::from_str::<Value>(line) {
                Ok(Value::Object(obj)) => {
                    add_object(&mut loaded, name, &obj, at, line_no as u32, options)
                }
                Ok(other) => loaded.reject(
                    at,
                    format!("expected a JSON object, found {}", kind(&other)),
                ),
                Err(e) => loaded.reject(
                    Location {
                        column: Some(e.column() as u64),
                        ..at
                    },
                    line_error(&e),
                ),
            }
        }
    }
    if loaded.table.is_empty() && loaded.error_count == 0 && loaded.fatal.is_none() {
        loaded.fatal = Some(format!("{name}: no request objects found"));
    }
    loaded
}

/// Why a line of JSON Lines did not parse (its location is given apart).
pub fn line_error(e: &serde_json::Error) -> String {
    let what = if e.is_eof() {
        "the line ends too early (truncated file?)"
    } else {
        "not valid JSON"
    };
    format!("{what}: {}", serde_message(e))
}

/// A serde_json error as one located sentence.
pub fn json_error(name: &str, e: &serde_json::Error) -> String {
    json_error_at(name, e, e.column())
}

/// A serde_json error as one located sentence, at `column` of the error's line.
pub fn json_error_at(name: &str, e: &serde_json::Error, column: usize) -> String {
    let what = if e.is_eof() {
        "the JSON ends too early (truncated file?)"
    } else {
        "not valid JSON"
    };
    format!("{name}:{}:{column}: {what}: {}", e.line(), serde_message(e))
}

/// What serde_json says is wrong, without the " at line L column C" it ends with: the
/// location is given ahead of the message, in the file's terms.
pub fn serde_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&suffix) {
        Some(message) => message.to_string(),
        None => text,
    }
}

/// A JSON value's kind, for messages.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn as_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(as_text).collect::<Vec<_>>().join(";"),
        other => other.to_string(),
    }
}

fn add_object(
    loaded: &mut Loaded,
    name: &str,
    obj: &Map<String, Value>,
    at: Location,
    record: u32,
    options: &IngestOptions,
) {
    let mut row = Row::default();
    let mut seen: Vec<Field> = Vec::new();
    let mut has_status = false;
    for (key, value) in obj {
        let Some(r) = fields::resolve(key, &options.mapping, options.default_time_unit) else {
            if !loaded.unmapped_columns.contains(key) && loaded.unmapped_columns.len() < 50 {
                loaded.unmapped_columns.push(key.clone());
            }
            continue;
        };
        if r.field != Field::Label && seen.contains(&r.field) {
            continue;
        }
        seen.push(r.field);
        has_status |= r.field == Field::Status;
        if matches!(value, Value::Object(_))
            || (matches!(value, Value::Array(_)) && r.field != Field::Itl)
        {
            let path = format!(
                "{}.{key}",
                at.json_path.clone().unwrap_or_else(|| "$".into())
            );
            loaded.reject(
                Location {
                    field: Some(key.clone()),
                    json_path: Some(path),
                    ..at.clone()
                },
                format!(
                    "expected a {} value, found {}",
                    if r.field == Field::Label {
                        "text"
                    } else {
                        "number"
                    },
                    kind(value)
                ),
            );
            return;
        }
        if let Err(reason) = fields::set_text(&mut row, &r, &as_text(value)) {
            let path = format!(
                "{}.{key}",
                at.json_path.clone().unwrap_or_else(|| "$".into())
            );
            loaded.reject(
                Location {
                    field: Some(key.clone()),
                    json_path: Some(path),
                    ..at.clone()
                },
                reason,
            );
            return;
        }
    }
    if !seen.contains(&Field::Ttft) && !seen.contains(&Field::E2e) {
        loaded.reject(
            at,
            "no latency field (ttft_ms, e2e_ms, latency_ms ...) in this object",
        );
        return;
    }
    fields::finish_row(&mut row, has_status);
    if let Err(reason) = fields::check_row(&row) {
        loaded.reject(at, reason);
        return;
    }
    loaded.table.push(row, 0, record, name);
}

#[cfg(test)]
mod tests {
    use crate::ingest::{parse, Format, IngestOptions};

    #[test]
    fn json_lines_with_located_errors() {
        let text = "{\"ttft_ms\": 100, \"e2e_ms\": 300, \"output_tokens\": 3, \"itl_ms\": [100, 100]}\n{\"ttft_ms\": \"x\", \"e2e_ms\": 3}\nnot json\n";
        let l = parse("a.jsonl", text.as_bytes(), &IngestOptions::default());
        assert_eq!(l.provenance.format, Some(Format::JsonLines));
        assert_eq!(l.table.len(), 1);
        assert_eq!(l.table.itl.of(0), &[100.0, 100.0]);
        let msgs: Vec<String> = l.errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(
            msgs[0],
            "a.jsonl:2 at $.ttft_ms: column \"ttft_ms\": \"x\" is not a number"
        );
        assert!(
            msgs[1].starts_with("a.jsonl:3:2: not valid JSON"),
            "{}",
            msgs[1]
        );
    }

    #[test]
    fn json_array_paths() {
        let text = r#"[{"latency_s": 1.5, "ttft_s": 0.5}, {"latency_s": [1]}]"#;
        let l = parse("a.json", text.as_bytes(), &IngestOptions::default());
        assert_eq!(l.provenance.format, Some(Format::JsonArray));
        assert_eq!(l.table.e2e_ms(0), Some(1500.0));
        assert_eq!(l.errors[0].to_string(), "a.json at $[1].latency_s: column \"latency_s\": expected a number value, found an array");
    }

    #[test]
    fn truncated_json_is_one_sentence() {
        let l = parse("a.json", br#"[{"ttft_ms": 1"#, &IngestOptions::default());
        assert!(
            l.fatal.as_deref().unwrap_or("").contains("ends too early"),
            "{:?}",
            l.fatal
        );
    }
}
