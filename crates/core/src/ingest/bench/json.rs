//! JSON helpers shared by the benchmark parsers: reading documents and lines, typed cell reads
//! with reasons, locations, Python's non-standard literals, and run summaries.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::ingest::fields::{self, TimeUnit};
use crate::ingest::records;
use crate::ingest::{Loaded, Location, RequestRate};

/// A benchmark file's text as the parsers read it: with Python's literals quoted (see
/// [`python_literals`]), and where each quoted literal starts, so that a position in the text
/// read is given in the file's own columns (each quoted literal is two bytes longer).
pub struct Source<'a> {
    text: std::borrow::Cow<'a, str>,
    /// Byte offsets in `text` of each quoted literal's opening quote, ascending.
    quoted: Vec<usize>,
}

impl<'a> Source<'a> {
    pub fn new(text: &'a str) -> Source<'a> {
        match python_literals(text) {
            Some((quoted_text, quoted)) => Source {
                text: std::borrow::Cow::Owned(quoted_text),
                quoted,
            },
            None => Source {
                text: std::borrow::Cow::Borrowed(text),
                quoted: Vec::new(),
            },
        }
    }

    /// The file's column (1-based, in bytes, as serde_json counts) of `column` on line `line`
    /// of the text read: less two for every literal quoted before it on that line.
    pub fn file_column(&self, line: usize, column: usize) -> usize {
        if self.quoted.is_empty() {
            return column;
        }
        let start = match line.checked_sub(2) {
            None => 0,
            Some(ends) => self
                .text
                .match_indices('\n')
                .nth(ends)
                .map_or(self.text.len(), |(at, _)| at + 1),
        };
        let at = start + column.saturating_sub(1);
        let before = self
            .quoted
            .iter()
            .filter(|&&q| q >= start && q < at)
            .count();
        column.saturating_sub(2 * before).max(1)
    }

    /// A serde_json error of the whole text as one located sentence, in the file's columns.
    pub fn error(&self, name: &str, e: &serde_json::Error) -> String {
        records::json_error_at(name, e, self.file_column(e.line(), e.column()))
    }
}

impl std::ops::Deref for Source<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.text
    }
}

/// Python's `json` module writes `NaN`, `Infinity` and `-Infinity`, which JSON does not allow.
/// Returns the text with each of them (outside strings) quoted, so that the document parses and
/// the value can be reported where it is, and the offset of each opening quote; `None` when
/// there is none (the usual case).
pub fn python_literals(text: &str) -> Option<(String, Vec<usize>)> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut in_string = false;
    let mut escaped = false;
    let mut quotes = Vec::new();
    let mut i = 0;
    while let Some(&c) = bytes.get(i) {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        if c == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        let rest = bytes.get(i..).unwrap_or(&[]);
        let literal = ["-Infinity", "Infinity", "NaN"]
            .into_iter()
            .find(|lit| rest.starts_with(lit.as_bytes()));
        match literal {
            Some(lit) => {
                // Every byte here is ASCII, so these are char boundaries.
                let buf = out.get_or_insert_with(|| String::with_capacity(text.len() + 64));
                buf.push_str(text.get(copied..i).unwrap_or(""));
                quotes.push(buf.len());
                buf.push('"');
                buf.push_str(lit);
                buf.push('"');
                i += lit.len();
                copied = i;
            }
            None => i += 1,
        }
    }
    let mut buf = out?;
    buf.push_str(text.get(copied..).unwrap_or(""));
    Some((buf, quotes))
}

/// The whole text as one JSON value, or the located sentence that says why not.
pub fn whole(name: &str, text: &Source) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| text.error(name, &e))
}

/// Calls `each` with every non-empty line as a JSON value and its 1-based line number, in
/// order; a line that is not JSON is rejected with its line and column.
pub fn each_line(
    name: &str,
    text: &Source,
    loaded: &mut Loaded,
    mut each: impl FnMut(&mut Loaded, u64, Value),
) {
    for (k, line) in text.lines().enumerate() {
        let line_no = k as u64 + 1;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v) => each(loaded, line_no, v),
            Err(e) => {
                loaded.reject(
                    Location {
                        file: name.to_string(),
                        line: Some(line_no),
                        column: Some(text.file_column(k + 1, e.column()) as u64),
                        ..Location::default()
                    },
                    records::line_error(&e),
                );
            }
        }
    }
}

/// A location inside a JSON document: `field` is the key, `path` the JSON path (`$.ttfts[17]`).
pub fn loc(name: &str, line: Option<u64>, field: &str, path: impl Into<String>) -> Location {
    Location {
        file: name.to_string(),
        line,
        column: None,
        field: Some(field.to_string()),
        json_path: Some(path.into()),
    }
}

/// A short description of a value for messages: its kind, and a string's text.
pub fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => {
            let short: String = s.chars().take(40).collect();
            let dots = if short.len() < s.len() { "..." } else { "" };
            format!("a string (\"{short}{dots}\")")
        }
        other => records::kind(other).to_string(),
    }
}

fn is_python_literal(s: &str) -> bool {
    matches!(s, "NaN" | "Infinity" | "-Infinity")
}

/// A finite number. `null` is `Ok(None)`; anything else is the reason it is not a number.
pub fn number(v: &Value) -> Result<Option<f64>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => match n.as_f64() {
            Some(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(format!("{n} is out of range")),
        },
        Value::String(s) if is_python_literal(s) => Err(format!("{s} is not a finite number")),
        other => Err(format!("expected a number, found {}", describe(other))),
    }
}

/// A duration in `unit`, as milliseconds: a finite, non-negative number.
pub fn duration_ms(v: &Value, unit: TimeUnit) -> Result<Option<f64>, String> {
    let what = match unit {
        TimeUnit::S => "seconds",
        TimeUnit::Ms => "milliseconds",
        TimeUnit::Us => "microseconds",
        TimeUnit::Ns => "nanoseconds",
    };
    number(v)
        .map_err(|e| format!("{e} ({what})"))?
        .map(|x| fields::duration_ms(x, unit))
        .transpose()
}

/// A token count: a whole, non-negative number.
pub fn tokens(v: &Value) -> Result<Option<f64>, String> {
    number(v)?.map(fields::token_count).transpose()
}

/// `obj[key]` as a number, ignoring anything that is not one (for run metadata).
pub fn f64_of(obj: &Map<String, Value>, key: &str) -> Option<f64> {
    obj.get(key)
        .and_then(Value::as_f64)
        .filter(|x| x.is_finite())
}

/// `obj[key]` as a whole non-negative number.
pub fn u64_of(obj: &Map<String, Value>, key: &str) -> Option<u64> {
    let v = obj.get(key)?;
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|x| x.is_finite() && *x >= 0.0 && x.fract() == 0.0 && *x < 9.0e15)
            .map(|x| x as u64)
    })
}

/// `obj[key]` as non-empty text.
pub fn str_of<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// Follows a path of object keys.
pub fn dig<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().try_fold(v, |v, k| v.get(k))
}

/// A request rate as the tools write it: a number, or "inf" (a string, or Python's `Infinity`).
pub fn request_rate(v: &Value) -> Option<RequestRate> {
    match v {
        Value::Number(n) => n
            .as_f64()
            .filter(|x| x.is_finite() && *x > 0.0)
            .map(RequestRate::PerSecond),
        Value::String(s) => {
            let s = s.trim().to_ascii_lowercase();
            match s.as_str() {
                "inf" | "infinity" | "+inf" => Some(RequestRate::Infinite),
                _ => s
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x > 0.0)
                    .map(RequestRate::PerSecond),
            }
        }
        _ => None,
    }
}

/// Every finite number at the top level of `obj`, except run settings named in `skip`. A key
/// written with a trailing colon (old vLLM's `"request_goodput:"`) is stored without it.
pub fn summary(obj: &Map<String, Value>, skip: &[&str]) -> BTreeMap<String, f64> {
    obj.iter()
        .filter_map(|(k, v)| {
            let key = k.trim().trim_end_matches(':').trim();
            if key.is_empty() || skip.contains(&key) {
                return None;
            }
            let x = v.as_f64().filter(|x| x.is_finite())?;
            Some((key.to_string(), x))
        })
        .collect()
}

/// Shortens a tool's error text for the table: the last non-empty line (a Python traceback
/// ends with the exception), at most 300 characters.
pub fn short_error(text: &str) -> String {
    let last = text
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("")
        .to_string();
    if last.chars().count() > 300 {
        let cut: String = last.chars().take(300).collect();
        format!("{cut}...")
    } else {
        last
    }
}

/// The same value of every item, or `None` when they differ or there is none.
pub fn common<T: PartialEq + Clone>(items: impl IntoIterator<Item = Option<T>>) -> Option<T> {
    let mut it = items.into_iter();
    let first = it.next()??;
    for x in it {
        if x.as_ref() != Some(&first) {
            return None;
        }
    }
    Some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_literals_are_quoted_outside_strings_only() {
        assert_eq!(python_literals(r#"{"a": 1}"#), None);
        let (quoted, at) =
            python_literals(r#"{"r": Infinity, "s": "NaN \" Infinity", "t": [-Infinity, NaN]}"#)
                .expect("literals");
        assert_eq!(
            quoted,
            r#"{"r": "Infinity", "s": "NaN \" Infinity", "t": ["-Infinity", "NaN"]}"#
        );
        assert_eq!(at, [6, 48, 61]);
    }

    #[test]
    fn errors_are_located_in_the_files_own_columns() {
        // The fault (`x`) is at column 24 of line 2 of the file; two literals come before it
        // on that line, and one on the line above.
        let file = "{\"a\": NaN,\n \"b\": [NaN, -Infinity, x]}";
        assert_eq!(file.lines().nth(1).and_then(|l| l.find('x')), Some(23));
        let source = Source::new(file);
        let e = serde_json::from_str::<Value>(&source).expect_err("not JSON");
        assert_eq!((e.line(), e.column()), (2, 28));
        assert!(source
            .error("r.json", &e)
            .starts_with("r.json:2:24: not valid JSON: "));
        // Without literals the text is the file's own.
        let plain = Source::new("[1, x]");
        let e = serde_json::from_str::<Value>(&plain).expect_err("not JSON");
        assert_eq!(
            plain.error("r.json", &e),
            "r.json:1:5: not valid JSON: expected value"
        );
    }

    #[test]
    fn numbers_and_reasons() {
        assert_eq!(number(&Value::Null), Ok(None));
        assert_eq!(number(&serde_json::json!(1.5)), Ok(Some(1.5)));
        assert_eq!(
            number(&serde_json::json!("NaN")),
            Err("NaN is not a finite number".to_string())
        );
        assert_eq!(
            number(&serde_json::json!("x")),
            Err("expected a number, found a string (\"x\")".to_string())
        );
        assert_eq!(
            duration_ms(&serde_json::json!(0.25), TimeUnit::S),
            Ok(Some(250.0))
        );
        assert!(duration_ms(&serde_json::json!(-1), TimeUnit::S)
            .unwrap_err()
            .contains("negative"));
        assert_eq!(
            request_rate(&serde_json::json!("inf")),
            Some(RequestRate::Infinite)
        );
        assert_eq!(
            request_rate(&serde_json::json!("Infinity")),
            Some(RequestRate::Infinite)
        );
        assert_eq!(
            request_rate(&serde_json::json!(4)),
            Some(RequestRate::PerSecond(4.0))
        );
        assert_eq!(
            short_error("Traceback:\n  File x\nValueError: boom\n"),
            "ValueError: boom"
        );
        assert_eq!(common([Some(1), Some(1)]), Some(1));
        assert_eq!(common([Some(1), None]), None);
    }
}
