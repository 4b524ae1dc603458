//! Canonical fields of a request log, the header aliases that name them, units, and cell parsing.

use serde::{Deserialize, Serialize};

use crate::table::{Row, Status};

/// A canonical field of a request log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    Id,
    InputTokens,
    OutputTokens,
    Ttft,
    E2e,
    /// A list of inter-token gaps.
    Itl,
    Queue,
    Start,
    End,
    Status,
    Error,
    /// A text column kept for class rules (class, model, tenant ...), under its own name.
    Label,
    /// Read but not used.
    Ignore,
}

impl Field {
    /// Whether values of this field are durations (and so have a unit).
    pub fn is_duration(&self) -> bool {
        matches!(self, Field::Ttft | Field::E2e | Field::Itl | Field::Queue)
    }
    pub fn is_timestamp(&self) -> bool {
        matches!(self, Field::Start | Field::End)
    }
    pub fn name(&self) -> &'static str {
        match self {
            Field::Id => "id",
            Field::InputTokens => "input_tokens",
            Field::OutputTokens => "output_tokens",
            Field::Ttft => "ttft",
            Field::E2e => "e2e",
            Field::Itl => "itl",
            Field::Queue => "queue",
            Field::Start => "start",
            Field::End => "end",
            Field::Status => "status",
            Field::Error => "error",
            Field::Label => "label",
            Field::Ignore => "ignore",
        }
    }
}

/// A unit of time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TimeUnit {
    S,
    #[default]
    Ms,
    Us,
    Ns,
}

impl TimeUnit {
    /// Multiply a value in this unit by this to get milliseconds.
    pub fn to_ms(self) -> f64 {
        match self {
            TimeUnit::S => 1000.0,
            TimeUnit::Ms => 1.0,
            TimeUnit::Us => 0.001,
            TimeUnit::Ns => 0.000_001,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::S => "s",
            TimeUnit::Ms => "ms",
            TimeUnit::Us => "us",
            TimeUnit::Ns => "ns",
        }
    }
    pub fn from_name(s: &str) -> Option<TimeUnit> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "s" | "sec" | "secs" | "second" | "seconds" => TimeUnit::S,
            "ms" | "msec" | "millis" | "milliseconds" => TimeUnit::Ms,
            "us" | "µs" | "usec" | "micros" | "microseconds" => TimeUnit::Us,
            "ns" | "nsec" | "nanos" | "nanoseconds" => TimeUnit::Ns,
            _ => return None,
        })
    }
}

/// The user's mapping of headers to fields, for headers the aliases do not know or get wrong.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnMapping {
    /// (header as written, field, unit for durations).
    pub columns: Vec<MappedColumn>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MappedColumn {
    pub header: String,
    pub field: Field,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<TimeUnit>,
}

/// How a header was understood.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub field: Field,
    /// Duration unit: from the suffix, the mapping, or the default.
    pub unit: TimeUnit,
    /// True when the unit came from the header or the mapping rather than the default.
    pub unit_stated: bool,
    /// Canonical name (for labels: the normalised header).
    pub name: String,
}

/// Normalises a header: lower case, spaces, dots and dashes to `_`, trimmed of quotes.
pub fn normalise(header: &str) -> String {
    header
        .trim()
        .trim_matches('"')
        .trim()
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c == ' ' || c == '-' || c == '.' || c == '/' {
                '_'
            } else {
                c
            }
        })
        .collect()
}

const ALIASES: &[(Field, &[&str])] = &[
    (
        Field::Id,
        &[
            "id",
            "request_id",
            "req_id",
            "requestid",
            "uuid",
            "trace_id",
        ],
    ),
    (
        Field::InputTokens,
        &[
            "input_tokens",
            "prompt_tokens",
            "input_len",
            "prompt_len",
            "input_length",
            "prompt_length",
            "num_input_tokens",
            "num_prompt_tokens",
            "isl",
            "tokens_in",
            "input_token_count",
            "prompt_token_count",
            "input_sequence_length",
        ],
    ),
    (
        Field::OutputTokens,
        &[
            "output_tokens",
            "completion_tokens",
            "output_len",
            "output_length",
            "generated_tokens",
            "num_output_tokens",
            "num_completion_tokens",
            "osl",
            "tokens_out",
            "output_token_count",
            "completion_token_count",
            "output_sequence_length",
        ],
    ),
    (
        Field::Ttft,
        &[
            "ttft",
            "time_to_first_token",
            "first_token_latency",
            "ttft_latency",
            "first_token_time",
        ],
    ),
    (
        Field::E2e,
        &[
            "e2e",
            "e2el",
            "e2e_latency",
            "latency",
            "end_to_end_latency",
            "request_latency",
            "total_latency",
            "e2e_request_latency",
            "response_time",
        ],
    ),
    (
        Field::Itl,
        &[
            "itl",
            "itls",
            "inter_token_latency",
            "inter_token_latencies",
            "token_gaps",
            "gaps",
        ],
    ),
    (
        Field::Queue,
        &[
            "queue",
            "queue_time",
            "queue_latency",
            "queueing_time",
            "queue_delay",
            "queued",
            "wait_time",
        ],
    ),
    (
        Field::Start,
        &[
            "start",
            "start_time",
            "started_at",
            "start_timestamp",
            "request_start",
            "send_time",
            "timestamp",
            "ts",
            "time",
        ],
    ),
    (
        Field::End,
        &[
            "end",
            "end_time",
            "finished_at",
            "end_timestamp",
            "completed_at",
            "request_end",
            "finish_time",
        ],
    ),
    (
        Field::Status,
        &[
            "status",
            "outcome",
            "result",
            "state",
            "status_code",
            "http_status",
            "code",
        ],
    ),
    (
        Field::Error,
        &[
            "error",
            "errors",
            "error_message",
            "error_msg",
            "err",
            "failure_reason",
        ],
    ),
    (
        Field::Label,
        &[
            "class",
            "traffic_class",
            "workload",
            "model",
            "model_id",
            "model_name",
            "tenant",
            "endpoint",
            "route",
            "priority",
            "tier",
            "user_tier",
            "dataset",
            "region",
            "replica",
            "deployment",
            "scenario",
        ],
    ),
];

const SUFFIXES: &[(&str, TimeUnit)] = &[
    ("_ms", TimeUnit::Ms),
    ("_msec", TimeUnit::Ms),
    ("_millis", TimeUnit::Ms),
    ("_milliseconds", TimeUnit::Ms),
    ("_us", TimeUnit::Us),
    ("_usec", TimeUnit::Us),
    ("_micros", TimeUnit::Us),
    ("_ns", TimeUnit::Ns),
    ("_nanos", TimeUnit::Ns),
    ("_s", TimeUnit::S),
    ("_sec", TimeUnit::S),
    ("_secs", TimeUnit::S),
    ("_seconds", TimeUnit::S),
];

/// Understands one header: the user's mapping first, then the aliases (with a unit suffix).
///
/// # Example
/// ```
/// use slo_core::ingest::fields::{resolve, Field, TimeUnit};
/// let r = resolve("time_to_first_token_s", &Default::default(), TimeUnit::Ms).unwrap();
/// assert_eq!((r.field, r.unit), (Field::Ttft, TimeUnit::S));
/// let r = resolve("latency", &Default::default(), TimeUnit::Ms).unwrap();
/// assert_eq!((r.field, r.unit, r.unit_stated), (Field::E2e, TimeUnit::Ms, false));
/// assert!(resolve("banana", &Default::default(), TimeUnit::Ms).is_none());
/// ```
pub fn resolve(
    header: &str,
    mapping: &super::ColumnMapping,
    default_unit: TimeUnit,
) -> Option<Resolved> {
    let norm = normalise(header);
    if let Some(m) = mapping
        .columns
        .iter()
        .find(|m| normalise(&m.header) == norm)
    {
        let (_, suffix_unit) = split_unit(&norm);
        let unit = m.unit.or(suffix_unit);
        return Some(Resolved {
            field: m.field,
            unit: unit.unwrap_or(default_unit),
            unit_stated: unit.is_some(),
            name: if m.field == Field::Label {
                norm.clone()
            } else {
                m.field.name().to_string()
            },
        });
    }
    let lookup = |name: &str| {
        ALIASES
            .iter()
            .find(|(_, names)| names.contains(&name))
            .map(|(f, _)| *f)
    };
    if let Some(field) = lookup(&norm) {
        return Some(Resolved {
            name: if field == Field::Label {
                norm.clone()
            } else {
                field.name().to_string()
            },
            field,
            unit: default_unit,
            unit_stated: false,
        });
    }
    let (stem, unit) = split_unit(&norm);
    let unit = unit?;
    let field = lookup(stem)?;
    if !(field.is_duration() || field.is_timestamp()) {
        return None;
    }
    Some(Resolved {
        name: field.name().to_string(),
        field,
        unit,
        unit_stated: true,
    })
}

fn split_unit(norm: &str) -> (&str, Option<TimeUnit>) {
    for (suffix, unit) in SUFFIXES {
        if let Some(stem) = norm.strip_suffix(suffix) {
            if !stem.is_empty() {
                return (stem, Some(*unit));
            }
        }
    }
    (norm, None)
}

/// A cell's text as messages quote it: `Debug`-quoted, and cut after 40 characters, so that a
/// 10 MB cell does not become a 10 MB message.
///
/// # Example
/// ```
/// use slo_core::ingest::fields::quoted;
/// assert_eq!(quoted("fast"), "\"fast\"");
/// assert_eq!(quoted(&"9".repeat(100)), format!("\"{}\"... (100 characters)", "9".repeat(40)));
/// ```
pub fn quoted(text: &str) -> String {
    const SHOWN: usize = 40;
    match text.char_indices().nth(SHOWN) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!(
            "{:?}... ({} characters)",
            text.get(..cut).unwrap_or(""),
            text.chars().count()
        ),
    }
}

/// Parses a number cell. Empty is `Ok(None)`.
pub fn number(text: &str) -> Result<Option<f64>, String> {
    let t = text.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("null") || t.eq_ignore_ascii_case("none") || t == "-"
    {
        return Ok(None);
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_nan() => Err(format!("{} is not a number (NaN)", quoted(t))),
        Ok(v) if v.is_infinite() => Err(format!("{} is infinite", quoted(t))),
        Ok(v) => Ok(Some(v)),
        Err(_) => Err(format!("{} is not a number", quoted(t))),
    }
}

/// A duration in ms, checked: finite, not negative.
///
/// # Edge cases
/// A value whose milliseconds overflow to infinity (`1e306` seconds) is refused, not stored as
/// an infinite latency.
#[cfg_attr(target_arch = "wasm32", inline(always))]
pub fn duration_ms(value: f64, unit: TimeUnit) -> Result<f64, String> {
    if value < 0.0 {
        return Err(format!("{value} is negative: a latency cannot be"));
    }
    let ms = value * unit.to_ms();
    if !ms.is_finite() {
        return Err(format!(
            "{value:e} {} is too large: in milliseconds it is not a finite number",
            unit.name()
        ));
    }
    Ok(ms)
}

/// A token count: a whole, non-negative number, at most `table::MAX_COUNT` (4,294,967,294:
/// far past any model's context, and what the table's 4-byte count columns hold).
pub fn token_count(value: f64) -> Result<f64, String> {
    if value < 0.0 {
        Err(format!("{value} is negative: a token count cannot be"))
    } else if value.fract() != 0.0 {
        Err(format!("{value} is not a whole number of tokens"))
    } else if value > f64::from(crate::table::MAX_COUNT) {
        Err(format!(
            "{value} tokens is more than any request holds (at most {} are read)",
            crate::table::MAX_COUNT
        ))
    } else {
        Ok(value)
    }
}

/// A timestamp in seconds: a number (epoch seconds, or epoch ms/us/ns told apart by size) or
/// an RFC 3339 date-time ("2026-11-01T12:00:00.250Z").
pub fn timestamp_s(text: &str, unit: Option<TimeUnit>) -> Result<Option<f64>, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    if let Ok(v) = t.parse::<f64>() {
        if !v.is_finite() {
            return Err(format!("{} is not a finite timestamp", quoted(t)));
        }
        let unit = unit.unwrap_or(if v > 1e17 {
            TimeUnit::Ns
        } else if v > 1e14 {
            TimeUnit::Us
        } else if v > 1e11 {
            TimeUnit::Ms
        } else {
            TimeUnit::S
        });
        let s = v * unit.to_ms() / 1000.0;
        if !s.is_finite() {
            return Err(format!("{} is not a finite timestamp", quoted(t)));
        }
        return Ok(Some(s));
    }
    rfc3339_s(t).map(Some).ok_or_else(|| {
        format!(
            "{} is not a timestamp (expected epoch seconds or 2026-11-01T12:00:00Z)",
            quoted(t)
        )
    })
}

/// Seconds since 1970 of an RFC 3339 / ISO 8601 date-time; a missing offset means UTC.
///
/// # Edge cases
/// Years outside 0..=9999 (RFC 3339 has four digits; a longer year overflowed the day count) and
/// results that are not finite (`T1e400:00`) are not timestamps.
fn rfc3339_s(t: &str) -> Option<f64> {
    let t = t.replace(' ', "T");
    let (date, rest) = t.split_once('T')?;
    let mut d = date.split('-');
    let (y, m, day): (i64, i64, i64) = (
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
        d.next()?.parse().ok()?,
    );
    if !(0..=9999).contains(&y) || !(1..=12).contains(&m) || !(1..=31).contains(&day) {
        return None;
    }
    let (time, offset_s) =
        if let Some(stripped) = rest.strip_suffix('Z').or_else(|| rest.strip_suffix('z')) {
            (stripped.to_string(), 0.0)
        } else if let Some(pos) = rest.rfind(['+', '-']).filter(|&p| p >= 5) {
            let (time, off) = rest.split_at(pos);
            let sign = if off.starts_with('-') { -1.0 } else { 1.0 };
            let mut hm = off.get(1..)?.split(':');
            let h: f64 = hm.next()?.parse().ok()?;
            let mi: f64 = hm.next().unwrap_or("0").parse().ok()?;
            (time.to_string(), sign * (h * 3600.0 + mi * 60.0))
        } else {
            (rest.to_string(), 0.0)
        };
    let mut parts = time.split(':');
    let h: f64 = parts.next()?.parse().ok()?;
    let mi: f64 = parts.next()?.parse().ok()?;
    let s: f64 = parts.next().unwrap_or("0").parse().ok()?;
    // Days from civil (Howard Hinnant's algorithm).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = if y2 >= 0 { y2 } else { y2 - 399 } / 400;
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days as f64 * 86_400.0 + h * 3600.0 + mi * 60.0 + s - offset_s).filter(|v| v.is_finite())
}

/// Parses a list of gaps from one cell: `[1.5, 2]`, `1.5;2`, `1.5|2` or `1.5 2`.
pub fn gap_list(text: &str, unit: TimeUnit) -> Result<Option<Vec<f64>>, String> {
    let t = text
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim();
    if t.is_empty() {
        return Ok(None);
    }
    let sep: &[char] = if t.contains(';') {
        &[';']
    } else if t.contains('|') {
        &['|']
    } else if t.contains(',') {
        &[',']
    } else {
        &[' ', '\t']
    };
    let mut out = Vec::new();
    for (k, part) in t
        .split(sep)
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .enumerate()
    {
        let v = number(part)
            .map_err(|e| format!("gap {} of the list: {e}", k + 1))?
            .ok_or_else(|| format!("gap {} of the list is empty", k + 1))?;
        out.push(duration_ms(v, unit).map_err(|e| format!("gap {} of the list: {e}", k + 1))?);
    }
    Ok(Some(out))
}

/// Checks a finished row: E2E not below TTFT. Returns the reason when the row must be rejected.
pub fn check_row(row: &Row) -> Result<(), String> {
    if let (Some(t), Some(e)) = (row.ttft_ms, row.e2e_ms) {
        if row.status == Status::Ok && e < t {
            return Err(format!("E2E ({e} ms) is below TTFT ({t} ms): a request cannot finish before its first token"));
        }
    }
    Ok(())
}

/// Writes `value` (already parsed as text) into `row` as field `r`. Errors are reasons, without location.
pub fn set_text(row: &mut Row, r: &Resolved, text: &str) -> Result<(), String> {
    match r.field {
        Field::Id => {
            let t = text.trim();
            if !t.is_empty() {
                row.id = Some(t.to_string());
            }
        }
        Field::InputTokens => row.input_tokens = number(text)?.map(token_count).transpose()?,
        Field::OutputTokens => row.output_tokens = number(text)?.map(token_count).transpose()?,
        Field::Ttft => row.ttft_ms = number(text)?.map(|v| duration_ms(v, r.unit)).transpose()?,
        Field::E2e => row.e2e_ms = number(text)?.map(|v| duration_ms(v, r.unit)).transpose()?,
        Field::Queue => row.queue_ms = number(text)?.map(|v| duration_ms(v, r.unit)).transpose()?,
        Field::Itl => row.itl_ms = gap_list(text, r.unit)?,
        Field::Start => row.start_s = timestamp_s(text, r.unit_stated.then_some(r.unit))?,
        Field::End => row.end_s = timestamp_s(text, r.unit_stated.then_some(r.unit))?,
        Field::Status => {
            let t = text.trim();
            row.status = Status::parse(t).ok_or_else(|| {
                format!(
                    "{} is not a status (expected ok, error, timeout or cancelled, or an HTTP code)",
                    quoted(t)
                )
            })?;
        }
        Field::Error => {
            let t = text.trim();
            if !t.is_empty() {
                row.error = Some(t.to_string());
            }
        }
        Field::Label => row.labels.push((r.name.clone(), text.trim().to_string())),
        Field::Ignore => {}
    }
    Ok(())
}

/// Writes one raw CSV cell into `row` as field `r`: the same result, and the same errors, as
/// [`set_text`] on the cell's text. Numbers written as plain decimals, the bulk of any large
/// log, are read straight from the bytes (see [`plain_number`]); everything else goes through
/// [`set_text`].
///
/// The helpers of this path are forced inline in the wasm: it is built for size, and there
/// every small function left a call costs time per cell (a million rows have millions).
/// Natively the compiler decides.
pub fn set_cell(row: &mut Row, r: &Resolved, cell: &[u8]) -> Result<(), String> {
    match r.field {
        Field::InputTokens => row.input_tokens = cell_count(cell)?,
        Field::OutputTokens => row.output_tokens = cell_count(cell)?,
        Field::Ttft => row.ttft_ms = cell_duration(cell, r.unit)?,
        Field::E2e => row.e2e_ms = cell_duration(cell, r.unit)?,
        Field::Queue => row.queue_ms = cell_duration(cell, r.unit)?,
        // The usual status and error cells of a log, without decoding or trimming them.
        Field::Status if matches!(cell, [] | [b'o' | b'O', b'k' | b'K']) => row.status = Status::Ok,
        Field::Error if cell.is_empty() => {}
        _ => set_text(row, r, &cell_text(cell))?,
    }
    Ok(())
}

/// A number cell as [`number`] reads its text, plain decimals straight from the bytes.
#[cfg_attr(target_arch = "wasm32", inline(always))]
fn cell_number(cell: &[u8]) -> Result<Option<f64>, String> {
    match plain_number(cell) {
        Some(v) => Ok(Some(v)),
        None => number(&cell_text(cell)),
    }
}

/// A duration cell in `unit`, in ms, checked by [`duration_ms`].
#[cfg_attr(target_arch = "wasm32", inline(always))]
fn cell_duration(cell: &[u8], unit: TimeUnit) -> Result<Option<f64>, String> {
    match cell_number(cell)? {
        Some(v) => duration_ms(v, unit).map(Some),
        None => Ok(None),
    }
}

/// A token count cell, checked by [`token_count`]. Plain digits are a whole, non-negative
/// count, which `token_count` would accept unchanged.
#[cfg_attr(target_arch = "wasm32", inline(always))]
fn cell_count(cell: &[u8]) -> Result<Option<f64>, String> {
    if let Some(v) = plain_digits(cell).filter(|&v| v <= u64::from(crate::table::MAX_COUNT)) {
        return Ok(Some(small_f64(v)));
    }
    match cell_number(cell)? {
        Some(v) => token_count(v).map(Some),
        None => Ok(None),
    }
}

/// The text of a raw cell; invalid UTF-8 is replaced (U+FFFD).
pub fn cell_text(cell: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(cell) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(cell),
    }
}

/// The value of a cell written as plain decimal digits (`812`, `-0.25`, `11307.126`: an
/// optional minus, digits, optionally a point and more digits, at most 15 digits in all);
/// `None` for anything else (blanks, exponents, `+`, `.5`, `1.`, longer numbers), which
/// [`number`] then reads. About twice as fast as `str::parse::<f64>`, which must first find
/// out which of its many forms a text is.
///
/// # Formula
/// value = m / 10^k, with m the digits as an integer and k the digits after the point. With at
/// most 15 digits both m and 10^k are exact in an `f64` and IEEE division rounds once, so this
/// is the correctly rounded value, the same as `str::parse::<f64>` gives (Clinger's fast path).
///
/// # Example
/// ```
/// use slo_core::ingest::fields::plain_number;
/// assert_eq!(plain_number(b"11307.126"), Some(11307.126));
/// assert_eq!(plain_number(b"-0.25"), Some(-0.25));
/// assert_eq!(plain_number(b"1e3"), None);
/// assert_eq!(plain_number(b" 5"), None);
/// ```
#[cfg_attr(target_arch = "wasm32", inline(always))]
pub fn plain_number(cell: &[u8]) -> Option<f64> {
    match plain_number_at(cell, 0)? {
        (Some(v), end) if end == cell.len() => Some(v),
        _ => None,
    }
}

/// The plain decimal (as [`plain_number`] reads it) that starts at `bytes[from]`, and where it
/// stops: the first byte that cannot continue it. `(None, from)` when none starts there (the
/// byte is not `-` or a digit); `None` when one starts but is not plain (a lone `-`, a point
/// without digits after it, more than 15 digits). Whoever reads a cell this way checks that the
/// byte where it stopped ends the cell.
///
/// # Example
/// ```
/// use slo_core::ingest::fields::plain_number_at;
/// assert_eq!(plain_number_at(b"x,11307.126,5", 2), Some((Some(11307.126), 11)));
/// assert_eq!(plain_number_at(b"x,,5", 2), Some((None, 2)));
/// assert_eq!(plain_number_at(b"1.,", 0), None);
/// ```
#[inline(always)]
pub fn plain_number_at(bytes: &[u8], from: usize) -> Option<(Option<f64>, usize)> {
    let negative = matches!(bytes.get(from), Some(b'-'));
    let start = from + usize::from(negative);
    // The usual number, up to 7 digits each side of the point, read a word at a time: the same
    // digits and scale as the loop below finds, so the same division.
    if let Some((int, k)) = word_at(bytes, start).map(leading_digits) {
        if (1..8).contains(&k) {
            let point = start + k;
            let value = if bytes.get(point) == Some(&b'.') {
                match word_at(bytes, point + 1).map(leading_digits) {
                    Some((frac, j)) if (1..8).contains(&j) => {
                        let mantissa = int * POW10_WHOLE[j] + frac;
                        Some((small_f64(mantissa) / POW10[j], point + 1 + j))
                    }
                    _ => None, // `5.`, or 8 digits or more: the loop reads it
                }
            } else {
                Some((small_f64(int), point))
            };
            if let Some((value, end)) = value {
                return Some((Some(if negative { -value } else { value }), end));
            }
        }
    }
    plain_number_bytewise(bytes, from)
}

/// [`plain_number_at`] one byte at a time: every number it reads, whatever its length.
#[inline(never)]
fn plain_number_bytewise(bytes: &[u8], from: usize) -> Option<(Option<f64>, usize)> {
    let negative = matches!(bytes.get(from), Some(b'-'));
    let mut at = from + usize::from(negative);
    let mut mantissa = 0u64;
    let mut digits = 0usize;
    let mut point = None;
    while let Some(&b) = bytes.get(at) {
        match b {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u64::from(b - b'0');
                digits += 1;
                if digits > 15 {
                    return None;
                }
            }
            b'.' if point.is_none() && digits > 0 => point = Some(digits),
            _ => break,
        }
        at += 1;
    }
    let scale = match point {
        None if digits > 0 => 0,
        None if !negative => return Some((None, from)),
        Some(at) if at < digits => digits - at,
        _ => return None,
    };
    let value = small_f64(mantissa) / POW10.get(scale).copied()?;
    Some((Some(if negative { -value } else { value }), at))
}

/// Powers of ten as floats, exact up to 10^15.
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// Powers of ten as integers, up to 10^7: what the whole part is shifted by before the digits
/// after the point are added.
const POW10_WHOLE: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];

/// A whole number of at most 15 digits (below 2^53) as the float that holds it exactly: through
/// `i64`, which x86-64 converts in one instruction where a `u64` takes several.
#[inline(always)]
pub(crate) fn small_f64(v: u64) -> f64 {
    debug_assert!(v < 1 << 53);
    v as i64 as f64
}

/// The word of `bytes` at `at` (eight bytes, little-endian), `None` past the last whole word.
/// Built from single bytes rather than `copy_from_slice`, which the app's size-tuned wasm calls
/// as a function for every word. (Eight indexings after one length check measured slower there
/// than this slice pattern.)
#[inline(always)]
pub(crate) fn word_at(bytes: &[u8], at: usize) -> Option<u64> {
    match *bytes.get(at..at.checked_add(8)?)? {
        [a, b, c, d, e, f, g, h] => Some(u64::from_le_bytes([a, b, c, d, e, f, g, h])),
        _ => None,
    }
}

/// The ASCII digits that begin `word` (its first byte the lowest): their value as a whole
/// number, the first digit the most significant, and how many there are (0 to 8).
///
/// # Formula
/// `x = word ^ 0x30..30` turns the digits `0`..`9` into the bytes 0..9. A byte is not a digit
/// when `x ≥ 0x80` or `(x & 0x7f) + 0x76 ≥ 0x80` (that is, `x ≥ 10`); the sum of two 7-bit
/// values cannot carry into the next byte, so the top bits of `((x & 0x7f..7f) + 0x76..76) | x`
/// mark exactly the bytes that are not digits, and the lowest marks where the digits stop.
/// Shifting `x` up by the bytes that are not the leading digits leaves those digits in the top
/// bytes with zeros (leading zeros) below them, and three multiplications combine neighbouring
/// bytes, pairs and quadruples (`10·a + b`, `100·ab + cd`, `10⁴·abcd + efgh`), each field
/// wide enough that no carry reaches the next.
///
/// # Example
/// ```text
/// "812,5..." -> (812, 3)    "ok,....." -> (0, 0)    "12345678" -> (12345678, 8)
/// ```
#[inline(always)]
fn leading_digits(word: u64) -> (u64, usize) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOW: u64 = ONES * 0x7f;
    let x = word ^ (ONES * 0x30);
    let not_digit = (((x & LOW) + ONES * 0x76) | x) & !LOW;
    let k = (not_digit.trailing_zeros() / 8) as usize;
    if k == 0 {
        return (0, 0);
    }
    let d = x << (64 - 8 * k as u32);
    let d = ((d & 0x0f0f_0f0f_0f0f_0f0f).wrapping_mul(10 << 8 | 1)) >> 8;
    let d = ((d & 0x00ff_00ff_00ff_00ff).wrapping_mul(100 << 16 | 1)) >> 16;
    let d = ((d & 0x0000_ffff_0000_ffff).wrapping_mul(10_000 << 32 | 1)) >> 32;
    (d, k)
}

/// The value of a cell of 1 to 15 ASCII digits and nothing else: a whole, non-negative count.
#[cfg_attr(target_arch = "wasm32", inline(always))]
fn plain_digits(cell: &[u8]) -> Option<u64> {
    match digits_at(cell, 0)? {
        (Some(v), end) if end == cell.len() => Some(v),
        _ => None,
    }
}

/// The whole number written as 1 to 15 ASCII digits from `bytes[from]` on, and where the
/// digits stop: `(None, from)` when no digit is there, `None` past 15 digits. As for
/// [`plain_number_at`], the caller checks that the digits end the cell.
///
/// # Example
/// ```
/// use slo_core::ingest::fields::digits_at;
/// assert_eq!(digits_at(b"chat,812,", 5), Some((Some(812), 8)));
/// assert_eq!(digits_at(b"-3", 0), Some((None, 0)));
/// ```
#[inline(always)]
pub fn digits_at(bytes: &[u8], from: usize) -> Option<(Option<u64>, usize)> {
    // Up to 7 digits read a word at a time (a count of tokens has fewer).
    match word_at(bytes, from).map(leading_digits) {
        Some((value, k)) if k < 8 => Some(((k > 0).then_some(value), from + k)),
        _ => digits_bytewise(bytes, from),
    }
}

/// [`digits_at`] one byte at a time.
#[inline(never)]
fn digits_bytewise(bytes: &[u8], from: usize) -> Option<(Option<u64>, usize)> {
    let mut at = from;
    let mut value = 0u64;
    while let Some(&b) = bytes.get(at).filter(|b| b.is_ascii_digit()) {
        if at - from == 15 {
            return None;
        }
        value = value * 10 + u64::from(b - b'0');
        at += 1;
    }
    Some(((at > from).then_some(value), at))
}

/// After all cells: a row with an error text but no status is an error.
pub fn finish_row(row: &mut Row, has_status_column: bool) {
    if !has_status_column && row.error.is_some() {
        row.status = Status::Error;
    }
}

/// Warns when a millisecond column looks like it holds seconds (median below 1).
pub fn seconds_in_ms_warning(header: &str, values: &mut [f64], unit: TimeUnit) -> Option<String> {
    if unit != TimeUnit::Ms || values.len() < 3 {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let median = values.get(values.len() / 2).copied()?;
    (median > 0.0 && median < 1.0).then(|| {
        format!(
            "column \"{header}\" is read as milliseconds but its median is {median}: are these seconds? If so, map it with unit s (or rename it {}_s)",
            header.trim_end_matches("_ms")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(header: &str, want: Option<(Field, TimeUnit)>) {
        let got =
            resolve(header, &ColumnMapping::default(), TimeUnit::Ms).map(|r| (r.field, r.unit));
        assert_eq!(got, want, "{header}");
    }

    #[test]
    fn header_aliases_and_units() {
        check("ttft_ms", Some((Field::Ttft, TimeUnit::Ms)));
        check("TTFT (ms)", None);
        check("time_to_first_token", Some((Field::Ttft, TimeUnit::Ms)));
        check("time_to_first_token_s", Some((Field::Ttft, TimeUnit::S)));
        check("latency_ms", Some((Field::E2e, TimeUnit::Ms)));
        check("e2e_latency_us", Some((Field::E2e, TimeUnit::Us)));
        check("queue_time_ns", Some((Field::Queue, TimeUnit::Ns)));
        check("prompt_tokens", Some((Field::InputTokens, TimeUnit::Ms)));
        check(
            "completion_tokens",
            Some((Field::OutputTokens, TimeUnit::Ms)),
        );
        check("Request-ID", Some((Field::Id, TimeUnit::Ms)));
        check("class", Some((Field::Label, TimeUnit::Ms)));
        check("itl_ms", Some((Field::Itl, TimeUnit::Ms)));
        check("prompt_tokens_s", None);
    }

    #[test]
    fn mapping_overrides_aliases() {
        let mapping = ColumnMapping {
            columns: vec![MappedColumn {
                header: "first byte".into(),
                field: Field::Ttft,
                unit: Some(TimeUnit::S),
            }],
        };
        let r = resolve("First Byte", &mapping, TimeUnit::Ms).expect("mapped");
        assert_eq!(
            (r.field, r.unit, r.unit_stated),
            (Field::Ttft, TimeUnit::S, true)
        );
    }

    #[test]
    fn cells() {
        assert_eq!(number(" 12.5 "), Ok(Some(12.5)));
        assert_eq!(number(""), Ok(None));
        assert!(number("NaN").unwrap_err().contains("NaN"));
        assert!(number("inf").unwrap_err().contains("infinite"));
        assert!(token_count(1.5).unwrap_err().contains("whole"));
        assert_eq!(token_count(4_294_967_294.0), Ok(4_294_967_294.0));
        assert!(token_count(4_294_967_295.0)
            .unwrap_err()
            .contains("at most 4294967294"));
        assert!(duration_ms(-1.0, TimeUnit::Ms)
            .unwrap_err()
            .contains("negative"));
        assert_eq!(
            gap_list("[1, 2.5]", TimeUnit::S),
            Ok(Some(vec![1000.0, 2500.0]))
        );
        assert_eq!(
            gap_list("1;2;3", TimeUnit::Ms),
            Ok(Some(vec![1.0, 2.0, 3.0]))
        );
        assert!(gap_list("1;x", TimeUnit::Ms).unwrap_err().contains("gap 2"));
    }

    #[test]
    fn plain_numbers_read_like_the_general_parser() {
        for text in [
            "0",
            "-0",
            "7",
            "007",
            "812",
            "11307.126",
            "0.1",
            "0.3",
            "-0.25",
            "123456789012345",
            "1.00000000000001",
            "99999.9999999999",
            "60000.000",
            "4503599627370497",
        ] {
            let want = text.parse::<f64>().ok();
            match plain_number(text.as_bytes()) {
                Some(v) => assert_eq!(Some(v.to_bits()), want.map(f64::to_bits), "{text}"),
                None => assert!(text.len() > 15, "{text} should take the fast path"),
            }
        }
        for text in [
            "", "-", ".5", "1.", "1e3", "+1", " 1", "1 ", "1.2.3", "--1", "NaN", "0x1", "1/2",
            "1:2", "-.5", "١",
        ] {
            assert_eq!(plain_number(text.as_bytes()), None, "{text:?}");
        }
        // Every length and every digit position, against the general parser.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = 1 + (x % 15) as usize;
            let digits: String = (0..n)
                .map(|k| char::from(b'0' + ((x >> (4 * k)) % 10) as u8))
                .collect();
            let point = (x >> 60) as usize % (n + 1);
            let text = if point == 0 || point == n {
                digits
            } else {
                format!("{}.{}", &digits[..point], &digits[point..])
            };
            let want = text.parse::<f64>().ok().map(f64::to_bits);
            assert_eq!(
                plain_number(text.as_bytes()).map(f64::to_bits),
                want,
                "{text}"
            );
            assert_eq!(
                digits_of(&text),
                text.parse::<u64>().ok().filter(|_| !text.contains('.'))
            );
        }
        // A byte just outside '0'..='9' anywhere in a run of digits is refused.
        for bad in [b'/', b':', b' ', 0x80, 0xFF, 0] {
            for n in 1..=15 {
                for at in 0..n {
                    let mut cell = vec![b'7'; n];
                    cell[at] = bad;
                    assert_eq!(plain_number(&cell), None, "{cell:?}");
                }
            }
        }
    }

    fn digits_of(text: &str) -> Option<u64> {
        plain_digits(text.as_bytes())
    }

    #[test]
    fn set_cell_matches_set_text() {
        let cells = [
            "",
            " 12.5 ",
            "12.5",
            "-1",
            "-0",
            "abc",
            "NaN",
            "inf",
            "2.5",
            "1e3",
            "null",
            "-",
            "ok",
            "OK",
            " ok ",
            "oK",
            "timeout",
            "500",
            "x",
            "[1, 2]",
            "2026-11-01T00:00:00Z",
            "r1",
            "\u{fffd}",
        ];
        let fields = [
            Field::Id,
            Field::InputTokens,
            Field::OutputTokens,
            Field::Ttft,
            Field::E2e,
            Field::Itl,
            Field::Queue,
            Field::Start,
            Field::End,
            Field::Status,
            Field::Error,
            Field::Label,
            Field::Ignore,
        ];
        for field in fields {
            for unit in [TimeUnit::Ms, TimeUnit::S] {
                let r = Resolved {
                    field,
                    unit,
                    unit_stated: true,
                    name: "x".into(),
                };
                for cell in cells {
                    let (mut a, mut b) = (Row::default(), Row::default());
                    let got = set_cell(&mut a, &r, cell.as_bytes());
                    let want = set_text(&mut b, &r, cell);
                    assert_eq!((got, &a), (want, &b), "{field:?} {cell:?}");
                }
            }
        }
        let mut row = Row::default();
        let r = Resolved {
            field: Field::Error,
            unit: TimeUnit::Ms,
            unit_stated: false,
            name: "error".into(),
        };
        assert_eq!(set_cell(&mut row, &r, b"bad \xff byte"), Ok(()));
        assert_eq!(row.error.as_deref(), Some("bad \u{fffd} byte"));
    }

    #[test]
    fn timestamps() {
        assert_eq!(
            timestamp_s("2026-11-01T00:00:00Z", None),
            Ok(Some(1_793_491_200.0))
        );
        assert_eq!(
            timestamp_s("2026-11-01T01:00:00+01:00", None),
            Ok(Some(1_793_491_200.0))
        );
        assert_eq!(
            timestamp_s("1793491200000", None),
            Ok(Some(1_793_491_200.0))
        );
        assert_eq!(timestamp_s("12.5", None), Ok(Some(12.5)));
        assert!(timestamp_s("yesterday", None).is_err());
    }

    /// `plain_number_at` and `digits_at` read most numbers a word at a time: they must give
    /// exactly what reading one byte at a time gives (the same bits, the same end), from every
    /// start of random texts made to hit every case: 0 to 20 digits each side of a point, a
    /// sign, a second point, a text that ends inside the word, a digit and a `/` or `:` (the
    /// bytes just below and above the digits), a byte with the top bit set.
    #[test]
    fn numbers_read_a_word_at_a_time_are_the_numbers_read_a_byte_at_a_time() {
        let same = |text: &[u8], from: usize| {
            let (word, byte) = (
                plain_number_at(text, from),
                plain_number_bytewise(text, from),
            );
            let bits = |r: Option<(Option<f64>, usize)>| r.map(|(v, e)| (v.map(f64::to_bits), e));
            assert_eq!(
                bits(word),
                bits(byte),
                "{:?} from {from}",
                text.escape_ascii()
            );
            assert_eq!(
                digits_at(text, from),
                digits_bytewise(text, from),
                "{:?} from {from}",
                text.escape_ascii()
            );
        };
        for text in [
            &b"12345678,"[..],
            b"1234567.1234567,",
            b"1234567.12345678,",
            b"0.0000001,",
            b"-0,",
            b"-0.0,00000000",
            b"5.,00000000",
            b".5,00000000",
            b"-,000000000",
            b"1.2.3,000000",
            b"999999999999999,",
            b"9999999999999999,",
            b"0000000000000000001,",
            b"83.062,11307.126,463,ok,",
        ] {
            for from in 0..=text.len() {
                same(text, from);
            }
        }
        let mut next = crate::testing::sequence(0x9e37_79b9_7f4a_7c15);
        const OTHER: &[u8] = b"-.,\n/:e \xb0\x80";
        for _ in 0..100_000 {
            let len = (next() % 24) as usize;
            let text: Vec<u8> = (0..len)
                .map(|_| match next() % 4 {
                    0 => OTHER[(next() % OTHER.len() as u64) as usize],
                    _ => b'0' + (next() % 10) as u8,
                })
                .collect();
            for from in 0..=text.len() {
                same(&text, from);
            }
        }
    }
}
