//! Production measurement from Prometheus: the text exposition format (what `/metrics` serves),
//! histogram families, and histogram math for vLLM's latency metrics.
//!
//! - [`parse`] reads one exposition (`# HELP`, `# TYPE`, samples with labels, escaped label
//!   values, optional timestamps, `+Inf`, `NaN`, exponents). Bad lines become located errors
//!   (line, column, kind); good lines are kept. Nothing here panics on input.
//! - [`histograms`] assembles `_bucket{le=...}`, `_sum`, `_count` (and `_created`) into
//!   [`Histogram`]s; [`read_dump`] does both for one replica's dump.
//! - [`merge`] adds replicas, [`increase`] subtracts an earlier dump (with counter-reset
//!   detection), [`fraction_at_or_under`] and [`histogram_quantile`] answer "what fraction is
//!   under the target" and "what is p90", [`recommend_edges`] aligns buckets to targets.
//! - [`analyse`] does all of it for a set of dumps and targets.
//!
//! Histograms give one fraction per indicator. They cannot give joint attainment (the fraction
//! of requests that met every target at once): that needs per-request records.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::order;
use crate::spec::{Indicator, Spec, TtftTarget};

/// How many errors a [`Dump`] or an [`Exposition`] lists one by one; the rest are counted.
pub const MAX_LISTED_ERRORS: usize = 100;

/// Labels that tell replicas apart rather than traffic: series that differ only in these are
/// merged. (`engine` is vLLM V1's engine-core index under data parallelism.)
pub const REPLICA_LABELS: [&str; 8] = [
    "instance", "pod", "replica", "engine", "host", "hostname", "node", "server",
];

/// vLLM's latency histogram families and the indicator each measures. Names changed between
/// versions: `vllm:time_per_output_token_seconds` (older) observed every inter-token gap and was
/// renamed `vllm:inter_token_latency_seconds`; `vllm:request_time_per_output_token_seconds`
/// observes one TPOT per request. All are in seconds.
pub const VLLM_LATENCY_FAMILIES: [(&str, Indicator); 6] = [
    ("vllm:time_to_first_token_seconds", Indicator::Ttft),
    ("vllm:inter_token_latency_seconds", Indicator::Itl),
    ("vllm:time_per_output_token_seconds", Indicator::Itl),
    (
        "vllm:request_time_per_output_token_seconds",
        Indicator::Tpot,
    ),
    ("vllm:e2e_request_latency_seconds", Indicator::E2e),
    ("vllm:request_queue_time_seconds", Indicator::Queue),
];

/// Older family names and the newer name that replaced them (when a build exports both, the
/// newer one is read and the older one ignored, so that nothing is counted twice).
const RENAMED: [(&str, &str); 1] = [(
    "vllm:time_per_output_token_seconds",
    "vllm:inter_token_latency_seconds",
)];

/// Relative tolerance for "this target is a bucket edge" and for matching edges across replicas.
const EDGE_TOLERANCE: f64 = 1e-9;

/// The metric types of `# TYPE` lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricType {
    Counter,
    Gauge,
    Histogram,
    GaugeHistogram,
    Summary,
    Info,
    StateSet,
    /// `untyped` (Prometheus) or `unknown` (OpenMetrics).
    Untyped,
}

impl MetricType {
    /// Reads a `# TYPE` keyword (case-insensitive).
    pub fn from_name(s: &str) -> Option<MetricType> {
        Some(match s.to_ascii_lowercase().as_str() {
            "counter" => MetricType::Counter,
            "gauge" => MetricType::Gauge,
            "histogram" => MetricType::Histogram,
            "gaugehistogram" => MetricType::GaugeHistogram,
            "summary" => MetricType::Summary,
            "info" => MetricType::Info,
            "stateset" => MetricType::StateSet,
            "untyped" | "unknown" => MetricType::Untyped,
            _ => return None,
        })
    }
}

/// One sample line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub name: String,
    /// Labels in the order written, values unescaped.
    pub labels: Vec<(String, String)>,
    /// As written: may be NaN or ±Inf (gauges can be). Histogram counts are checked later.
    pub value: f64,
    /// As written: milliseconds in the Prometheus text format, seconds in OpenMetrics.
    pub timestamp: Option<f64>,
    /// 1-based line.
    pub line: u64,
}

impl Sample {
    /// The value of label `name`.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What is wrong with a line or a histogram.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PromErrorKind {
    /// Something else stood where `expected` should be (`found` is `None` at the end of the line).
    Expected {
        expected: String,
        found: Option<char>,
    },
    /// A backslash in a label value not followed by `\`, `"` or `n`.
    BadEscape {
        escape: char,
    },
    UnterminatedLabelValue {
        label: String,
    },
    DuplicateLabel {
        label: String,
    },
    BadValue {
        text: String,
    },
    BadTimestamp {
        text: String,
    },
    TrailingText {
        text: String,
    },
    UnknownType {
        text: String,
    },
    DuplicateType {
        name: String,
        first_line: u64,
    },
    /// A `le` label on a `_bucket` sample that is not a number.
    BadLe {
        text: String,
    },
    /// The same series twice in one exposition; the first is kept.
    DuplicateSample {
        first_line: u64,
    },
    /// A histogram count that is negative, NaN or infinite: the series is dropped.
    BadCount {
        series: String,
        value: f64,
    },
    /// No `le="+Inf"` bucket and no `_count`: the total is unknown, the series is dropped.
    MissingInfBucket {
        series: String,
    },
    /// Two buckets with the same `le`; the first is kept.
    DuplicateBucket {
        series: String,
        le: f64,
    },
}

impl fmt::Display for PromErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Quoted input text is cut after 40 characters: a 10 MB line stays a short message.
        use crate::ingest::fields::quoted;
        match self {
            PromErrorKind::Expected { expected, found } => match found {
                Some(c) => write!(f, "expected {expected}, found {c:?}"),
                None => write!(f, "expected {expected}, found the end of the line"),
            },
            PromErrorKind::BadEscape { escape } => write!(
                f,
                "\"\\{escape}\" is not an escape of the exposition format (use \\\\, \\\" or \\n)"
            ),
            PromErrorKind::UnterminatedLabelValue { label } => {
                write!(f, "the value of label {label:?} has no closing quote")
            }
            PromErrorKind::DuplicateLabel { label } => {
                write!(f, "label {label:?} appears twice in one sample")
            }
            PromErrorKind::BadValue { text } => write!(
                f,
                "{} is not a sample value (a number, +Inf, -Inf or NaN)",
                quoted(text)
            ),
            PromErrorKind::BadTimestamp { text } => write!(
                f,
                "{} is not a timestamp (an integer of milliseconds)",
                quoted(text)
            ),
            PromErrorKind::TrailingText { text } => {
                write!(f, "unexpected text {} after the sample", quoted(text))
            }
            PromErrorKind::UnknownType { text } => write!(
                f,
                "{} is not a metric type (counter, gauge, histogram, summary, untyped)",
                quoted(text)
            ),
            PromErrorKind::DuplicateType { name, first_line } => {
                write!(f, "a second # TYPE for {name} (the first, on line {first_line}, is kept)")
            }
            PromErrorKind::BadLe { text } => {
                write!(f, "le={} is not a bucket bound (a number or +Inf)", quoted(text))
            }
            PromErrorKind::DuplicateSample { first_line } => write!(
                f,
                "this series already appeared on line {first_line}; the first is kept"
            ),
            PromErrorKind::BadCount { series, value } => write!(
                f,
                "{series}: a count of {value} is not possible (counts are finite and not negative); the histogram is left out"
            ),
            PromErrorKind::MissingInfBucket { series } => write!(
                f,
                "{series}: no le=\"+Inf\" bucket and no _count, so the total is unknown; the histogram is left out"
            ),
            PromErrorKind::DuplicateBucket { series, le } => {
                write!(f, "{series}: a second bucket le=\"{le}\"; the first is kept")
            }
        }
    }
}

/// A located problem. Lines and columns are 1-based; the column counts characters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PromError {
    pub line: u64,
    pub column: u64,
    pub kind: PromErrorKind,
}

impl fmt::Display for PromError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.kind)
    }
}

/// One parsed exposition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Exposition {
    /// Every good sample, in order.
    pub samples: Vec<Sample>,
    /// `# TYPE` per metric family name.
    pub types: BTreeMap<String, MetricType>,
    /// `# HELP` per metric family name, unescaped.
    pub help: BTreeMap<String, String>,
    /// The first [`MAX_LISTED_ERRORS`] problems.
    pub errors: Vec<PromError>,
    /// All problems, listed or not.
    pub error_count: u64,
    /// The text ended with OpenMetrics' `# EOF`.
    pub open_metrics: bool,
}

impl Exposition {
    fn reject(&mut self, line: u64, column: u64, kind: PromErrorKind) {
        self.error_count += 1;
        if self.errors.len() < MAX_LISTED_ERRORS {
            self.errors.push(PromError { line, column, kind });
        }
    }
}

/// A sample value or `le` bound as the exposition format writes it.
///
/// # Formula
/// Decimal floats with optional sign and exponent (`1.5e-3`), and `Inf`, `+Inf`, `-Inf`, `NaN`
/// in any case (Go's `strconv.ParseFloat`, which Prometheus uses, minus hexadecimal floats).
/// # Edge cases
/// Empty or anything else: `None`.
/// # Example
/// ```
/// use slo_core::prometheus::parse_float;
/// assert_eq!(parse_float("1.5e3"), Some(1500.0));
/// assert_eq!(parse_float("+Inf"), Some(f64::INFINITY));
/// assert!(parse_float("NaN").is_some_and(f64::is_nan));
/// assert_eq!(parse_float("0,5"), None);
/// ```
pub fn parse_float(text: &str) -> Option<f64> {
    if text.is_empty() || text.contains('_') {
        return None;
    }
    text.parse::<f64>().ok()
}

/// A cursor over one line.
struct Scanner<'a> {
    s: &'a str,
    pos: usize,
}

type LineError = (usize, PromErrorKind);

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<char> {
        self.s.get(self.pos..).and_then(|r| r.chars().next())
    }
    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }
    fn rest(&self) -> &'a str {
        self.s.get(self.pos..).unwrap_or("")
    }
    fn skip_blank(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
        self.pos - start
    }
    /// A run of non-blank characters.
    fn token(&mut self) -> &'a str {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c == ' ' || c == '\t' {
                break;
            }
            self.pos += c.len_utf8();
        }
        self.s.get(start..self.pos).unwrap_or("")
    }
    fn ident(&mut self, first: fn(char) -> bool, rest: fn(char) -> bool) -> Option<&'a str> {
        let start = self.pos;
        match self.peek() {
            Some(c) if first(c) => self.pos += c.len_utf8(),
            _ => return None,
        }
        while let Some(c) = self.peek() {
            if !rest(c) {
                break;
            }
            self.pos += c.len_utf8();
        }
        self.s.get(start..self.pos)
    }
    fn expected(&self, what: &str) -> LineError {
        (
            self.pos,
            PromErrorKind::Expected {
                expected: what.to_string(),
                found: self.peek(),
            },
        )
    }
    /// A quoted string starting at the opening quote, with `\\`, `\"`, `\n` escapes.
    fn quoted(&mut self, label: &str) -> Result<String, LineError> {
        let open = self.pos;
        if self.bump() != Some('"') {
            self.pos = open;
            return Err(self.expected("'\"'"));
        }
        let mut out = String::new();
        loop {
            let at = self.pos;
            match self.bump() {
                None => {
                    return Err((
                        open,
                        PromErrorKind::UnterminatedLabelValue {
                            label: label.to_string(),
                        },
                    ))
                }
                Some('"') => return Ok(out),
                Some('\\') => match self.bump() {
                    Some('\\') => out.push('\\'),
                    Some('"') => out.push('"'),
                    Some('n') => out.push('\n'),
                    Some(c) => return Err((at, PromErrorKind::BadEscape { escape: c })),
                    None => {
                        return Err((
                            open,
                            PromErrorKind::UnterminatedLabelValue {
                                label: label.to_string(),
                            },
                        ))
                    }
                },
                Some(c) => out.push(c),
            }
        }
    }
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':'
}
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}
fn is_label_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}
fn is_label_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// A parsed sample line before it gets its line number.
struct LineSample {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
    timestamp: Option<f64>,
}

/// `{a="x",b="y"}`, the cursor on `{`. A quoted string without `=` is the metric name
/// (Prometheus 3's UTF-8 names: `{"my.metric", a="x"}`).
fn parse_labels(
    sc: &mut Scanner<'_>,
    name: &mut Option<String>,
) -> Result<Vec<(String, String)>, LineError> {
    sc.bump();
    let mut labels: Vec<(String, String)> = Vec::new();
    loop {
        sc.skip_blank();
        let start = sc.pos;
        let label = match sc.peek() {
            Some('}') => {
                sc.bump();
                return Ok(labels);
            }
            Some('"') => {
                let q = sc.quoted("")?;
                sc.skip_blank();
                if sc.peek() != Some('=') && name.is_none() && labels.is_empty() {
                    *name = Some(q);
                    match sc.peek() {
                        Some(',') => {
                            sc.bump();
                            continue;
                        }
                        Some('}') => {
                            sc.bump();
                            return Ok(labels);
                        }
                        _ => return Err(sc.expected("',' or '}'")),
                    }
                }
                q
            }
            _ => match sc.ident(is_label_start, is_label_char) {
                Some(l) => l.to_string(),
                None => return Err(sc.expected("a label name or '}'")),
            },
        };
        sc.skip_blank();
        if sc.peek() != Some('=') {
            return Err(sc.expected(&format!("'=' after label {label:?}")));
        }
        sc.bump();
        sc.skip_blank();
        if sc.peek() != Some('"') {
            return Err(sc.expected(&format!("a quoted value for label {label:?}")));
        }
        let value_at = sc.pos;
        let value = sc.quoted(&label)?;
        if labels.iter().any(|(n, _)| *n == label) {
            return Err((start, PromErrorKind::DuplicateLabel { label }));
        }
        if label == "le"
            && name.as_deref().is_some_and(|n| n.ends_with("_bucket"))
            && parse_float(value.trim()).is_none_or(f64::is_nan)
        {
            return Err((value_at + 1, PromErrorKind::BadLe { text: value }));
        }
        labels.push((label, value));
        sc.skip_blank();
        match sc.peek() {
            Some(',') => {
                sc.bump();
            }
            Some('}') => {
                sc.bump();
                return Ok(labels);
            }
            _ => return Err(sc.expected("',' or '}'")),
        }
    }
}

fn parse_sample_line(line: &str) -> Result<LineSample, LineError> {
    let mut sc = Scanner { s: line, pos: 0 };
    sc.skip_blank();
    let mut name = match sc.peek() {
        Some('{') => None,
        _ => match sc.ident(is_name_start, is_name_char) {
            Some(n) => Some(n.to_string()),
            None => return Err(sc.expected("a metric name")),
        },
    };
    let mut labels = Vec::new();
    if sc.peek() == Some('{') {
        labels = parse_labels(&mut sc, &mut name)?;
    }
    let Some(name) = name else {
        return Err((
            0,
            PromErrorKind::Expected {
                expected: "a metric name".to_string(),
                found: line.chars().next(),
            },
        ));
    };
    if sc.skip_blank() == 0 {
        return Err(sc.expected("a space, then the sample value"));
    }
    let value_at = sc.pos;
    let text = sc.token();
    if text.is_empty() {
        return Err(sc.expected("a sample value"));
    }
    let value = parse_float(text).ok_or_else(|| {
        (
            value_at,
            PromErrorKind::BadValue {
                text: text.to_string(),
            },
        )
    })?;
    sc.skip_blank();
    let mut timestamp = None;
    if sc.peek().is_some_and(|c| c != '#') {
        let at = sc.pos;
        let text = sc.token();
        let ts = text
            .parse::<i64>()
            .ok()
            .map(|v| v as f64)
            .or_else(|| parse_float(text).filter(|v| v.is_finite()));
        match ts {
            Some(v) => timestamp = Some(v),
            None => {
                return Err((
                    at,
                    PromErrorKind::BadTimestamp {
                        text: text.to_string(),
                    },
                ))
            }
        }
        sc.skip_blank();
    }
    // OpenMetrics exemplars (`# {trace_id="..."} 0.5`) are allowed and ignored.
    let rest = sc.rest();
    if !rest.is_empty() && !rest.starts_with('#') {
        return Err((
            sc.pos,
            PromErrorKind::TrailingText {
                text: rest.to_string(),
            },
        ));
    }
    Ok(LineSample {
        name,
        labels,
        value,
        timestamp,
    })
}

/// Unescapes a `# HELP` docstring (`\\` and `\n`).
fn unescape_help(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('\\') => out.push('\\'),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A comment line (`#` first). Returns an error for a malformed `# HELP` or `# TYPE`.
fn parse_comment(
    expo: &mut Exposition,
    type_lines: &mut HashMap<String, u64>,
    line: &str,
    line_no: u64,
) -> Result<(), LineError> {
    let mut sc = Scanner { s: line, pos: 0 };
    sc.skip_blank();
    sc.bump(); // '#'
    sc.skip_blank();
    let keyword = sc.token();
    match keyword {
        "HELP" | "TYPE" => {}
        "EOF" => {
            expo.open_metrics = true;
            return Ok(());
        }
        _ => return Ok(()), // a plain comment
    }
    sc.skip_blank();
    let name = match sc.ident(is_name_start, is_name_char) {
        Some(n) => n.to_string(),
        None => return Err(sc.expected(&format!("a metric name after # {keyword}"))),
    };
    if keyword == "HELP" {
        // One blank separates the name from the docstring; the docstring keeps its own spaces.
        if matches!(sc.peek(), Some(' ' | '\t')) {
            sc.bump();
        }
        expo.help
            .entry(name)
            .or_insert_with(|| unescape_help(sc.rest()));
        return Ok(());
    }
    sc.skip_blank();
    let at = sc.pos;
    let text = sc.token();
    let Some(kind) = MetricType::from_name(text) else {
        return Err((
            at,
            PromErrorKind::UnknownType {
                text: text.to_string(),
            },
        ));
    };
    if let Some(&first_line) = type_lines.get(&name) {
        return Err((0, PromErrorKind::DuplicateType { name, first_line }));
    }
    type_lines.insert(name.clone(), line_no);
    expo.types.insert(name, kind);
    Ok(())
}

/// The 1-based character column of byte offset `byte` in `line`.
fn column_of(line: &str, byte: usize) -> u64 {
    line.get(..byte).map_or(1, |s| s.chars().count() as u64 + 1)
}

/// Parses one Prometheus text exposition (what `/metrics` serves; format 0.0.4, and the
/// OpenMetrics text that Prometheus clients also serve).
///
/// # Formula
/// Per line: empty → skipped; `# HELP name doc`, `# TYPE name type` → metadata; other `#` lines →
/// comments; otherwise `name{label="value",...} value [timestamp] [# exemplar]`. Label values
/// unescape `\\`, `\"` and `\n`. CR-LF line ends are accepted.
/// # Edge cases
/// A bad line is reported (line, column, kind) and skipped; the other lines are kept. A series
/// that appears twice keeps its first sample. An `le` on a `_bucket` sample must be a number.
/// # Example
/// ```
/// let text = "# TYPE x counter\nx{a=\"q\\\"uote\"} 1.5e3 1700000000000\ny{ 1\n";
/// let e = slo_core::prometheus::parse(text);
/// assert_eq!(e.samples.len(), 1);
/// assert_eq!(e.samples[0].label("a"), Some("q\"uote"));
/// assert_eq!(e.samples[0].value, 1500.0);
/// assert_eq!(e.errors[0].to_string(), "3:4: expected a label name or '}', found '1'");
/// ```
pub fn parse(text: &str) -> Exposition {
    let mut expo = Exposition::default();
    let mut type_lines: HashMap<String, u64> = HashMap::new();
    let mut seen: HashMap<(String, Vec<(String, String)>), u64> = HashMap::new();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (k, raw) in text.split('\n').enumerate() {
        let line_no = k as u64 + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let trimmed = line.trim_start_matches([' ', '\t']);
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.starts_with('#') {
            if let Err((byte, kind)) = parse_comment(&mut expo, &mut type_lines, line, line_no) {
                expo.reject(line_no, column_of(line, byte), kind);
            }
            continue;
        }
        match parse_sample_line(line) {
            Ok(s) => {
                let mut key_labels = s.labels.clone();
                order::sort_by(&mut key_labels, Ord::cmp);
                let key = (s.name.clone(), key_labels);
                if let Some(&first_line) = seen.get(&key) {
                    expo.reject(line_no, 1, PromErrorKind::DuplicateSample { first_line });
                    continue;
                }
                seen.insert(key, line_no);
                expo.samples.push(Sample {
                    name: s.name,
                    labels: s.labels,
                    value: s.value,
                    timestamp: s.timestamp,
                    line: line_no,
                });
            }
            Err((byte, kind)) => expo.reject(line_no, column_of(line, byte), kind),
        }
    }
    expo
}

/// One histogram series: cumulative bucket counts, as Prometheus stores them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    /// Family name, without `_bucket`: `vllm:time_to_first_token_seconds`.
    pub family: String,
    /// The indicator, for vLLM's latency families.
    pub indicator: Option<Indicator>,
    /// Labels other than `le`, sorted by name.
    pub labels: Vec<(String, String)>,
    /// Finite upper bounds (`le`), ascending, in the family's unit (seconds for vLLM).
    pub edges_s: Vec<f64>,
    /// Observations at or under each edge (cumulative, non-decreasing).
    pub cumulative: Vec<f64>,
    /// All observations: the `le="+Inf"` bucket.
    pub count: f64,
    /// `_sum`, when present and finite.
    pub sum: Option<f64>,
    /// `_created` (when the series started counting), when present.
    pub created: Option<f64>,
    /// Line of the first sample of the series (0 for computed histograms).
    pub line: u64,
}

impl Histogram {
    /// The series as PromQL writes it: `family{a="x",b="y"}`.
    pub fn series_name(&self) -> String {
        series_name(&self.family, &self.labels)
    }

    /// The value of label `name`.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Mean observation in ms.
    ///
    /// # Formula
    /// mean_ms = `_sum` / count · 1000 (the family is in seconds).
    /// # Edge cases
    /// No `_sum`, or a count of 0: `None`.
    /// # Example
    /// ```
    /// let h = slo_core::prometheus::Histogram { family: "f".into(), indicator: None, labels: vec![],
    ///     edges_s: vec![1.0], cumulative: vec![3.0], count: 4.0, sum: Some(2.0), created: None, line: 0 };
    /// assert_eq!(h.mean_ms(), Some(500.0));
    /// ```
    pub fn mean_ms(&self) -> Option<f64> {
        let sum = self.sum?;
        (self.count > 0.0).then(|| sum / self.count * 1000.0)
    }
}

fn series_name(family: &str, labels: &[(String, String)]) -> String {
    if labels.is_empty() {
        return family.to_string();
    }
    let inner: Vec<String> = labels
        .iter()
        .map(|(n, v)| {
            format!(
                "{n}=\"{}\"",
                v.replace('\\', "\\\\")
                    .replace('"', "\\\"")
                    .replace('\n', "\\n")
            )
        })
        .collect();
    format!("{family}{{{}}}", inner.join(","))
}

/// Histograms read from one exposition, with the problems found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HistogramSet {
    pub histograms: Vec<Histogram>,
    /// Series dropped or buckets skipped, located at their line.
    pub errors: Vec<PromError>,
    /// Repairs that did not cost a series (non-monotonic buckets, `_count` ≠ `+Inf` bucket ...).
    pub warnings: Vec<String>,
}

/// The indicator a family measures, for vLLM's latency families (also under `vllm_` instead of
/// `vllm:`, as some exporters rename colons).
///
/// # Example
/// ```
/// use slo_core::{prometheus::indicator_of, spec::Indicator};
/// assert_eq!(indicator_of("vllm:time_per_output_token_seconds"), Some(Indicator::Itl));
/// assert_eq!(indicator_of("vllm_request_queue_time_seconds"), Some(Indicator::Queue));
/// assert_eq!(indicator_of("vllm:num_requests_running"), None);
/// ```
pub fn indicator_of(family: &str) -> Option<Indicator> {
    let canonical = canonical_family(family);
    VLLM_LATENCY_FAMILIES
        .iter()
        .find(|(name, _)| *name == canonical)
        .map(|(_, ind)| *ind)
}

fn canonical_family(family: &str) -> String {
    match family.strip_prefix("vllm_") {
        Some(rest) => format!("vllm:{rest}"),
        None => family.to_string(),
    }
}

#[derive(Default)]
struct Builder {
    buckets: Vec<(f64, f64, u64)>,
    sum: Option<(f64, u64)>,
    count: Option<(f64, u64)>,
    created: Option<f64>,
    first_line: u64,
}

/// Assembles histogram series from the `_bucket`, `_sum`, `_count` and `_created` samples.
///
/// # Formula
/// A family is every name `F` with `F_bucket` samples carrying `le`; a series is `F` plus one set
/// of labels other than `le`. Buckets are sorted by `le`; `le="+Inf"` is the total.
/// # Edge cases
/// - No `+Inf` bucket: `_count` is the total (warned); neither: the series is dropped (error).
/// - A count that is negative, NaN or infinite: the series is dropped (error at its line).
/// - Cumulative counts that go down from one bucket to the next (a non-atomic scrape) are raised
///   to the running maximum, as Prometheus' `histogram_quantile` does (warned).
/// - `_count` different from the `+Inf` bucket: the bucket wins (warned).
/// - `# TYPE` is not required: a family is recognised by its `_bucket{le}` samples.
/// # Example
/// ```
/// let text = "h_bucket{le=\"0.5\"} 3\nh_bucket{le=\"+Inf\"} 4\nh_sum 1.2\nh_count 4\n";
/// let set = slo_core::prometheus::histograms(&slo_core::prometheus::parse(text));
/// let h = &set.histograms[0];
/// assert_eq!((h.edges_s.clone(), h.cumulative.clone(), h.count), (vec![0.5], vec![3.0], 4.0));
/// ```
pub fn histograms(expo: &Exposition) -> HistogramSet {
    let families: BTreeSet<&str> = expo
        .samples
        .iter()
        .filter(|s| s.label("le").is_some())
        .filter_map(|s| s.name.strip_suffix("_bucket"))
        .collect();
    let mut builders: BTreeMap<(String, Vec<(String, String)>), Builder> = BTreeMap::new();
    let mut order: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for s in &expo.samples {
        let Some((family, part)) =
            ["_bucket", "_sum", "_count", "_created"]
                .iter()
                .find_map(|suffix| {
                    let f = s.name.strip_suffix(suffix)?;
                    families.contains(f).then_some((f, *suffix))
                })
        else {
            continue;
        };
        let mut labels: Vec<(String, String)> = s
            .labels
            .iter()
            .filter(|(n, _)| n != "le")
            .cloned()
            .collect();
        order::sort_by(&mut labels, Ord::cmp);
        let key = (family.to_string(), labels);
        let b = builders.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            Builder {
                first_line: s.line,
                ..Builder::default()
            }
        });
        match part {
            "_bucket" => {
                let Some(le) = s.label("le").and_then(|t| parse_float(t.trim())) else {
                    continue;
                };
                b.buckets.push((le, s.value, s.line));
            }
            "_sum" => b.sum = Some((s.value, s.line)),
            "_count" => b.count = Some((s.value, s.line)),
            _ => b.created = Some(s.value),
        }
    }
    let mut set = HistogramSet::default();
    for key in order {
        let Some(b) = builders.remove(&key) else {
            continue;
        };
        let (family, labels) = key;
        if let Some(h) = build_histogram(family, labels, b, &mut set) {
            set.histograms.push(h);
        }
    }
    set
}

fn build_histogram(
    family: String,
    labels: Vec<(String, String)>,
    mut b: Builder,
    set: &mut HistogramSet,
) -> Option<Histogram> {
    let name = series_name(&family, &labels);
    let bad_count = |value: f64| !(value.is_finite() && value >= 0.0);
    let mut error = |line: u64, kind: PromErrorKind| {
        set.errors.push(PromError {
            line,
            column: 1,
            kind,
        })
    };
    for &(le, value, line) in &b.buckets {
        if bad_count(value) {
            error(
                line,
                PromErrorKind::BadCount {
                    series: name.clone(),
                    value,
                },
            );
            return None;
        }
        if le == f64::NEG_INFINITY {
            error(
                line,
                PromErrorKind::BadLe {
                    text: "-Inf".to_string(),
                },
            );
            return None;
        }
    }
    if let Some((value, line)) = b.count.filter(|(v, _)| bad_count(*v)) {
        error(
            line,
            PromErrorKind::BadCount {
                series: name.clone(),
                value,
            },
        );
        return None;
    }
    order::sort_by(&mut b.buckets, |x, y| {
        x.0.total_cmp(&y.0).then(x.2.cmp(&y.2))
    });
    let mut buckets: Vec<(f64, f64, u64)> = Vec::with_capacity(b.buckets.len());
    for bucket in b.buckets {
        if buckets.last().is_some_and(|last| last.0 == bucket.0) {
            error(
                bucket.2,
                PromErrorKind::DuplicateBucket {
                    series: name.clone(),
                    le: bucket.0,
                },
            );
            continue;
        }
        buckets.push(bucket);
    }
    let inf = buckets
        .iter()
        .find(|(le, _, _)| *le == f64::INFINITY)
        .map(|(_, c, _)| *c);
    let finite: Vec<(f64, f64)> = buckets
        .iter()
        .filter(|(le, _, _)| le.is_finite())
        .map(|(le, c, _)| (*le, *c))
        .collect();
    let mut total = match (inf, b.count) {
        (Some(c), Some((n, _))) => {
            if c != n {
                set.warnings.push(format!(
                    "{name}: _count is {n} but the le=\"+Inf\" bucket is {c} (a scrape taken while requests finished); the bucket is used"
                ));
            }
            c
        }
        (Some(c), None) => c,
        (None, Some((n, _))) => {
            set.warnings.push(format!(
                "{name}: no le=\"+Inf\" bucket; _count ({n}) is used as the total"
            ));
            n
        }
        (None, None) => {
            error(
                b.first_line,
                PromErrorKind::MissingInfBucket {
                    series: name.clone(),
                },
            );
            return None;
        }
    };
    let mut edges_s = Vec::with_capacity(finite.len());
    let mut cumulative = Vec::with_capacity(finite.len());
    let mut running = 0.0_f64;
    let mut repaired = false;
    for (le, c) in finite {
        if c < running {
            repaired = true;
        }
        running = running.max(c);
        edges_s.push(le);
        cumulative.push(running);
    }
    if total < running {
        repaired = true;
        total = running;
    }
    if repaired {
        set.warnings.push(format!(
            "{name}: bucket counts go down from one bucket to the next; they were raised to the running maximum, as Prometheus does"
        ));
    }
    Some(Histogram {
        indicator: indicator_of(&family),
        family,
        labels,
        edges_s,
        cumulative,
        count: total,
        sum: b.sum.map(|(v, _)| v).filter(|v| v.is_finite()),
        created: b.created,
        line: b.first_line,
    })
}

/// One replica's `/metrics` dump, parsed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Dump {
    /// The replica's name (file name or `--replica-names`).
    pub replica: String,
    /// Every histogram series in the dump (vLLM latency families have `indicator` set).
    pub histograms: Vec<Histogram>,
    /// Bad lines and dropped series, the first [`MAX_LISTED_ERRORS`], sorted by line.
    pub errors: Vec<PromError>,
    pub error_count: u64,
    pub warnings: Vec<String>,
    /// Good sample lines.
    pub n_samples: u64,
}

/// Parses one replica's dump and assembles its histograms.
///
/// # Example
/// ```
/// let text = "vllm:e2e_request_latency_seconds_bucket{le=\"1.0\"} 2\nvllm:e2e_request_latency_seconds_bucket{le=\"+Inf\"} 2\n";
/// let d = slo_core::prometheus::read_dump("a", text);
/// assert_eq!(d.histograms[0].indicator, Some(slo_core::spec::Indicator::E2e));
/// ```
pub fn read_dump(replica: &str, text: &str) -> Dump {
    let expo = parse(text);
    let set = histograms(&expo);
    let mut errors = expo.errors;
    let error_count = expo.error_count + set.errors.len() as u64;
    errors.extend(set.errors);
    order::sort_by_key(&mut errors, |e| (e.line, e.column));
    errors.truncate(MAX_LISTED_ERRORS);
    Dump {
        replica: replica.to_string(),
        histograms: set.histograms,
        errors,
        error_count,
        warnings: set.warnings,
        n_samples: expo.samples.len() as u64,
    }
}

fn same_edge(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= EDGE_TOLERANCE * a.abs().max(b.abs())
}

/// Cumulative count at `edge` (an edge of `h`), if `h` has it.
fn cumulative_at(h: &Histogram, edge: f64) -> Option<f64> {
    h.edges_s
        .iter()
        .position(|&e| same_edge(e, edge))
        .and_then(|k| h.cumulative.get(k).copied())
}

/// The result of [`merge`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Merged {
    pub histogram: Histogram,
    /// Edges that only some parts had, left out of the merge (empty when all edges agreed).
    pub dropped_edges_s: Vec<f64>,
}

/// Adds histograms of several replicas (or windows) bucket by bucket.
///
/// # Formula
/// merged(le) = Σ_r cumulative_r(le) for every edge `le` that every part has (relative tolerance
/// 1e-9); count = Σ count_r; sum = Σ sum_r (when every part has one). Labels are those all
/// parts share.
/// # Edge cases
/// No parts: `None`. Parts with different edges merge on their common edges, and the edges left
/// out are listed in `dropped_edges_s` (cumulative counts at a shared edge are exact, so nothing is
/// approximated; only resolution is lost).
/// # Example
/// ```
/// use slo_core::prometheus::{merge, Histogram};
/// let h = |edges: Vec<f64>, cum: Vec<f64>, count: f64| Histogram {
///     family: "f".into(), indicator: None, labels: vec![], edges_s: edges, cumulative: cum,
///     count, sum: None, created: None, line: 0 };
/// let a = h(vec![0.1, 0.5, 1.0], vec![1.0, 4.0, 5.0], 6.0);
/// let b = h(vec![0.1, 1.0], vec![2.0, 2.0], 3.0);
/// let m = merge(&[&a, &b]).unwrap();
/// assert_eq!(m.histogram.edges_s, vec![0.1, 1.0]);
/// assert_eq!(m.histogram.cumulative, vec![3.0, 7.0]);
/// assert_eq!(m.histogram.count, 9.0);
/// assert_eq!(m.dropped_edges_s, vec![0.5]);
/// ```
pub fn merge(parts: &[&Histogram]) -> Option<Merged> {
    let first = parts.first()?;
    let common: Vec<f64> = first
        .edges_s
        .iter()
        .copied()
        .filter(|&e| parts.iter().all(|p| cumulative_at(p, e).is_some()))
        .collect();
    let mut all: Vec<f64> = parts
        .iter()
        .flat_map(|p| p.edges_s.iter().copied())
        .collect();
    all.sort_by(f64::total_cmp);
    all.dedup_by(|a, b| same_edge(*a, *b));
    let dropped_edges_s = all
        .into_iter()
        .filter(|&e| !common.iter().any(|&c| same_edge(c, e)))
        .collect();
    let cumulative = common
        .iter()
        .map(|&e| parts.iter().filter_map(|p| cumulative_at(p, e)).sum())
        .collect();
    let sum = parts
        .iter()
        .map(|p| p.sum)
        .try_fold(0.0, |acc, s| s.map(|s| acc + s));
    let labels = first
        .labels
        .iter()
        .filter(|l| parts.iter().all(|p| p.labels.contains(l)))
        .cloned()
        .collect();
    Some(Merged {
        histogram: Histogram {
            family: first.family.clone(),
            indicator: first.indicator,
            labels,
            edges_s: common,
            cumulative,
            count: parts.iter().map(|p| p.count).sum(),
            sum,
            created: None,
            line: first.line,
        },
        dropped_edges_s,
    })
}

/// Why [`increase`] decided a counter had been reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reset {
    /// The total count went down.
    CountWentDown,
    /// A bucket count went down.
    BucketWentDown,
    /// `_created` changed: the series was recreated (the process restarted).
    CreatedChanged,
    /// The bucket edges changed, which takes a restart.
    EdgesChanged,
}

impl Reset {
    pub fn describe(self) -> &'static str {
        match self {
            Reset::CountWentDown => "the total count went down",
            Reset::BucketWentDown => "a bucket count went down",
            Reset::CreatedChanged => "its _created time changed",
            Reset::EdgesChanged => "its bucket edges changed",
        }
    }
}

/// The result of [`increase`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Increase {
    /// The observations made between the two dumps.
    pub histogram: Histogram,
    /// Set when the counters were reset between the dumps (the later values were used).
    pub reset: Option<Reset>,
}

/// The observations between two dumps of the same series.
///
/// # Formula
/// increase(le) = after(le) - before(le) for every bucket, and likewise for count and sum.
/// # Edge cases
/// A counter reset (the process restarted between the dumps) shows as a count or a bucket that
/// went down, a changed `_created`, or changed edges: then the later values are the increase,
/// as Prometheus' `increase()` takes them (observations before the restart, after the earlier
/// dump, are lost), and `reset` says why.
/// # Example
/// ```
/// use slo_core::prometheus::{increase, Histogram, Reset};
/// let h = |cum: Vec<f64>, count: f64| Histogram {
///     family: "f".into(), indicator: None, labels: vec![], edges_s: vec![0.5, 1.0],
///     cumulative: cum, count, sum: None, created: None, line: 0 };
/// let w = increase(&h(vec![10.0, 20.0], 25.0), &h(vec![15.0, 30.0], 40.0));
/// assert_eq!((w.histogram.cumulative, w.histogram.count, w.reset), (vec![5.0, 10.0], 15.0, None));
/// let r = increase(&h(vec![10.0, 20.0], 25.0), &h(vec![1.0, 2.0], 3.0));
/// assert_eq!((r.histogram.count, r.reset), (3.0, Some(Reset::CountWentDown)));
/// ```
pub fn increase(before: &Histogram, after: &Histogram) -> Increase {
    let edges_equal = before.edges_s.len() == after.edges_s.len()
        && before
            .edges_s
            .iter()
            .zip(&after.edges_s)
            .all(|(a, b)| same_edge(*a, *b));
    let reset = if matches!((before.created, after.created), (Some(a), Some(b)) if a != b) {
        Some(Reset::CreatedChanged)
    } else if !edges_equal {
        Some(Reset::EdgesChanged)
    } else if after.count < before.count {
        Some(Reset::CountWentDown)
    } else if after
        .cumulative
        .iter()
        .zip(&before.cumulative)
        .any(|(a, b)| a < b)
    {
        Some(Reset::BucketWentDown)
    } else {
        None
    };
    if reset.is_some() {
        return Increase {
            histogram: after.clone(),
            reset,
        };
    }
    let mut histogram = after.clone();
    histogram.cumulative = after
        .cumulative
        .iter()
        .zip(&before.cumulative)
        .map(|(a, b)| a - b)
        .collect();
    histogram.count = after.count - before.count;
    histogram.sum = match (after.sum, before.sum) {
        (Some(a), Some(b)) => Some(a - b),
        _ => None,
    };
    Increase {
        histogram,
        reset: None,
    }
}

/// How a [`FractionUnder`] was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FractionKind {
    /// The target is a bucket edge: the count is exact.
    Exact,
    /// The target lies inside a bucket: linear interpolation, bounded by the bucket's edges.
    Interpolated,
    /// The target lies above the last finite edge: only a lower bound is known.
    LowerBoundOnly,
}

/// The fraction of observations at or under a target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FractionUnder {
    pub target_ms: f64,
    pub kind: FractionKind,
    /// The exact fraction, the interpolated estimate, or (above the last edge) the lower bound.
    pub value: f64,
    /// The fraction at or under the edge at or below the target.
    pub lower: f64,
    /// The fraction at or under the edge at or above the target (1 above the last edge).
    pub upper: f64,
    /// The bucket the target falls in, in seconds: lower edge and upper edge (`None`: `+Inf`).
    /// For an exact target both are the target's edge.
    pub bucket_s: (f64, Option<f64>),
    /// Observations in the histogram.
    pub count: f64,
}

/// The fraction of observations at or under `target_ms`.
///
/// # Formula
/// With finite edges e_1 < … < e_k (seconds), cumulative counts c_j and total N (the `+Inf`
/// bucket), t = target_ms / 1000:
/// - t = e_j (relative tolerance 1e-9): exact, c_j / N;
/// - e_{j-1} < t < e_j: bounded by [c_{j-1} / N, c_j / N], estimated by linear interpolation
///   (c_{j-1} + (c_j - c_{j-1}) (t - e_{j-1}) / (e_j - e_{j-1})) / N, the same assumption
///   `histogram_quantile` makes (observations spread evenly inside a bucket); below e_1 the
///   bucket starts at e_0 = 0, c_0 = 0;
/// - t > e_k: only the lower bound c_k / N is known (upper bound 1).
/// # Edge cases
/// Empty histogram (N = 0), or a target that is not a positive finite number: `None`.
/// # Example
/// ```
/// use slo_core::prometheus::{fraction_at_or_under, FractionKind, Histogram};
/// let h = Histogram { family: "f".into(), indicator: None, labels: vec![],
///     edges_s: vec![0.25, 0.5, 1.0], cumulative: vec![50.0, 80.0, 95.0], count: 100.0,
///     sum: None, created: None, line: 0 };
/// let exact = fraction_at_or_under(&h, 500.0).unwrap();
/// assert_eq!((exact.kind, exact.value), (FractionKind::Exact, 0.8));
/// let mid = fraction_at_or_under(&h, 300.0).unwrap();
/// assert_eq!((mid.kind, mid.lower, mid.upper), (FractionKind::Interpolated, 0.5, 0.8));
/// assert!((mid.value - 0.56).abs() < 1e-12);
/// let above = fraction_at_or_under(&h, 2000.0).unwrap();
/// assert_eq!((above.kind, above.value, above.upper), (FractionKind::LowerBoundOnly, 0.95, 1.0));
/// ```
pub fn fraction_at_or_under(h: &Histogram, target_ms: f64) -> Option<FractionUnder> {
    let n = h.count;
    if !(n > 0.0 && target_ms.is_finite() && target_ms > 0.0) {
        return None;
    }
    let t = target_ms / 1000.0;
    let edge = |k: usize| h.edges_s.get(k).copied();
    let cum = |k: usize| h.cumulative.get(k).copied();
    let result = |kind, value: f64, lower: f64, upper: f64, bucket_s| FractionUnder {
        target_ms,
        kind,
        value,
        lower,
        upper,
        bucket_s,
        count: n,
    };
    if let Some(k) = h.edges_s.iter().position(|&e| same_edge(e, t)) {
        let f = cum(k)? / n;
        return Some(result(FractionKind::Exact, f, f, f, (t, Some(t))));
    }
    match h.edges_s.iter().position(|&e| e > t) {
        Some(k) => {
            let (lo_e, lo_c) = match k.checked_sub(1) {
                Some(p) => (edge(p)?, cum(p)?),
                None => (0.0, 0.0),
            };
            let (hi_e, hi_c) = (edge(k)?, cum(k)?);
            let width = hi_e - lo_e;
            let inside = if width > 0.0 {
                ((t - lo_e) / width).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let estimate = (lo_c + (hi_c - lo_c) * inside) / n;
            Some(result(
                FractionKind::Interpolated,
                estimate,
                lo_c / n,
                hi_c / n,
                (lo_e, Some(hi_e)),
            ))
        }
        None => {
            let last = h.edges_s.len().checked_sub(1);
            let lo_c = last.and_then(cum).unwrap_or(0.0);
            let lo_e = last.and_then(edge).unwrap_or(0.0);
            let f = lo_c / n;
            Some(result(
                FractionKind::LowerBoundOnly,
                f,
                f,
                1.0,
                (lo_e, None),
            ))
        }
    }
}

/// A percentile read from a histogram.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuantileEstimate {
    /// Percentile in percent.
    pub q: f64,
    pub value_ms: f64,
    /// The bucket the rank falls in, in ms: lower edge, upper edge (`None`: the `+Inf` bucket).
    pub bucket_ms: (f64, Option<f64>),
    /// The rank fell in the `+Inf` bucket: `value_ms` is the largest finite edge, a lower bound.
    pub lower_bound_only: bool,
}

/// The q-th percentile of a histogram, by Prometheus' `histogram_quantile` rule.
///
/// # Formula
/// rank = q/100 · N; b = the first finite bucket with c_b >= rank;
/// value = e_{b-1} + (e_b - e_{b-1}) · (rank - c_{b-1}) / (c_b - c_{b-1}), with e_0 = 0, c_0 = 0
/// (linear interpolation inside the bucket: Prometheus `promql/quantile.go`, `BucketQuantile`).
/// # Edge cases
/// - q outside [0, 100] or NaN, an empty histogram, or no finite edge: `None`.
/// - rank above every finite bucket: the largest finite edge, marked `lower_bound_only`
///   (Prometheus returns that edge too).
/// - first bucket with an edge <= 0: that edge (as Prometheus).
/// - an empty bucket at rank 0 (q = 0): its lower edge (Prometheus gives NaN there).
///
/// q is in percent, like every percentile in this crate (`histogram_quantile` takes 0.9 for p90).
/// # Example
/// ```
/// use slo_core::prometheus::{histogram_quantile, Histogram};
/// let h = Histogram { family: "f".into(), indicator: None, labels: vec![],
///     edges_s: vec![0.25, 0.5, 1.0], cumulative: vec![50.0, 80.0, 95.0], count: 100.0,
///     sum: None, created: None, line: 0 };
/// let p90 = histogram_quantile(&h, 90.0).unwrap();
/// assert!((p90.value_ms - (500.0 + 500.0 * 10.0 / 15.0)).abs() < 1e-9);
/// let p99 = histogram_quantile(&h, 99.0).unwrap();
/// assert_eq!((p99.value_ms, p99.lower_bound_only), (1000.0, true));
/// ```
pub fn histogram_quantile(h: &Histogram, q: f64) -> Option<QuantileEstimate> {
    if !(0.0..=100.0).contains(&q) || h.count.is_nan() || h.count <= 0.0 {
        return None;
    }
    let last_edge = *h.edges_s.last()?;
    let rank = q / 100.0 * h.count;
    let Some(b) = h.cumulative.iter().position(|&c| c >= rank) else {
        return Some(QuantileEstimate {
            q,
            value_ms: last_edge * 1000.0,
            bucket_ms: (last_edge * 1000.0, None),
            lower_bound_only: true,
        });
    };
    let end = *h.edges_s.get(b)?;
    let c_b = *h.cumulative.get(b)?;
    if b == 0 && end <= 0.0 {
        return Some(QuantileEstimate {
            q,
            value_ms: end * 1000.0,
            bucket_ms: (end * 1000.0, Some(end * 1000.0)),
            lower_bound_only: false,
        });
    }
    let (start, c_prev) = match b.checked_sub(1) {
        Some(p) => (*h.edges_s.get(p)?, *h.cumulative.get(p)?),
        None => (0.0, 0.0),
    };
    let in_bucket = c_b - c_prev;
    let value = if in_bucket > 0.0 {
        start + (end - start) * ((rank - c_prev) / in_bucket)
    } else {
        start
    };
    Some(QuantileEstimate {
        q,
        value_ms: value * 1000.0,
        bucket_ms: (start * 1000.0, Some(end * 1000.0)),
        lower_bound_only: false,
    })
}

/// Bucket edges that make every target exact: the existing edges plus the targets.
///
/// # Formula
/// sort(dedup(edges_s ∪ { t / 1000 : t in targets_ms })), duplicates within relative 1e-9.
/// # Edge cases
/// Targets that are not positive finite numbers are ignored; so are non-finite edges.
/// # Example
/// ```
/// let e = slo_core::prometheus::recommend_edges(&[0.1, 0.25, 0.5, 1.0], &[300.0, 500.0]);
/// assert_eq!(e, vec![0.1, 0.25, 0.3, 0.5, 1.0]);
/// ```
pub fn recommend_edges(edges_s: &[f64], targets_ms: &[f64]) -> Vec<f64> {
    let mut out: Vec<f64> = edges_s
        .iter()
        .copied()
        .filter(|e| e.is_finite())
        .chain(
            targets_ms
                .iter()
                .filter(|t| t.is_finite() && **t > 0.0)
                .map(|t| t / 1000.0),
        )
        .collect();
    out.sort_by(f64::total_cmp);
    out.dedup_by(|a, b| same_edge(*a, *b));
    out
}

/// What [`analyse`] is asked.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HistogramQuery {
    /// Targets in ms, per indicator; an indicator may have several.
    pub targets_ms: Vec<(Indicator, f64)>,
    /// Percentiles to read, in percent.
    pub percentiles: Vec<f64>,
}

impl HistogramQuery {
    /// The distinct fixed targets of every cell of `spec`, and its percentiles. A per-token TTFT
    /// target has no single threshold, so it is left out and said in the returned notes.
    ///
    /// # Example
    /// ```
    /// use slo_core::{prometheus::HistogramQuery, spec::{Indicator, Spec, Targets, TtftTarget}};
    /// let spec = Spec::single(Targets { ttft: Some(TtftTarget::Fixed { ms: 500.0 }), tpot_ms: Some(50.0), ..Targets::default() });
    /// let (q, notes) = HistogramQuery::from_spec(&spec);
    /// assert_eq!(q.targets_ms, vec![(Indicator::Ttft, 500.0), (Indicator::Tpot, 50.0)]);
    /// assert!(notes.is_empty());
    /// ```
    pub fn from_spec(spec: &Spec) -> (HistogramQuery, Vec<String>) {
        let mut targets_ms: Vec<(Indicator, f64)> = Vec::new();
        let mut notes = Vec::new();
        for class in &spec.classes {
            for t in &class.targets {
                if let Some(TtftTarget::PerToken { .. }) = t.ttft {
                    let note = "a per-token TTFT target has no single threshold, so histograms cannot check it; give --ttft MS to read a fixed one".to_string();
                    if !notes.contains(&note) {
                        notes.push(note);
                    }
                }
                for ind in Indicator::ALL {
                    if let Some(ms) = t.fixed_ms(ind) {
                        if !targets_ms.contains(&(ind, ms)) {
                            targets_ms.push((ind, ms));
                        }
                    }
                }
            }
        }
        order::sort_by(&mut targets_ms, |a, b| {
            a.0.cmp(&b.0).then(a.1.total_cmp(&b.1))
        });
        (
            HistogramQuery {
                targets_ms,
                percentiles: spec.percentiles.clone(),
            },
            notes,
        )
    }
}

/// A percentile of a merged histogram next to the mean of the replicas' own percentiles.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PercentileComparison {
    pub q: f64,
    /// From the merged histogram: the right answer (to bucket resolution).
    pub merged: Option<QuantileEstimate>,
    /// Each replica's own percentile, ms.
    pub per_replica_ms: Vec<(String, Option<f64>)>,
    /// The mean of the replicas' percentiles: what averaging dashboards show.
    pub mean_of_replicas_ms: Option<f64>,
    /// mean_of_replicas - merged, ms (`None` when the merged percentile is only a lower bound).
    pub error_ms: Option<f64>,
    /// error / merged.
    pub relative_error: Option<f64>,
}

/// One indicator for one set of traffic labels (model ...), merged over replicas.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupAnalysis {
    pub indicator: Indicator,
    /// The family names read (more than one when replicas run different vLLM versions).
    pub families: Vec<String>,
    /// The labels that split traffic (everything but `le` and [`REPLICA_LABELS`]), sorted.
    pub labels: Vec<(String, String)>,
    /// The replicas merged: dump name, plus replica labels such as `[engine=0]`.
    pub replicas: Vec<String>,
    pub merged: Histogram,
    /// Edges not shared by every replica, left out of the merge.
    pub dropped_edges_s: Vec<f64>,
    pub count: f64,
    pub mean_ms: Option<f64>,
    /// One per target of this indicator.
    pub fractions: Vec<FractionUnder>,
    pub percentiles: Vec<PercentileComparison>,
    /// The replicas' edges plus this indicator's targets (see [`recommend_edges`]).
    pub recommended_edges_s: Vec<f64>,
    /// True when some target is not an edge of the merged histogram.
    pub edges_need_change: bool,
    pub notes: Vec<String>,
}

/// The result of [`analyse`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub groups: Vec<GroupAnalysis>,
    /// True when earlier dumps were given: counts are the window's increase, not totals since
    /// each process started.
    pub windowed: bool,
    /// Indicators with a target but no histogram in any dump.
    pub missing: Vec<Indicator>,
    /// Resets, renamed families, replicas without an earlier dump ...
    pub notes: Vec<String>,
}

/// The note every histogram answer carries.
pub const JOINT_CAVEAT: &str = "histograms give one fraction per indicator, not joint attainment: the requests slow on TTFT and those slow on TPOT can be different ones, so the share of requests that met every target can be lower than every fraction here; use per-request logs (slo report, slo budget) for that";

/// A series of one replica, ready to merge.
struct Member {
    replica: String,
    split: Vec<(String, String)>,
    histogram: Histogram,
}

/// Reads the latency histograms of every dump, subtracts the earlier dumps when given, merges
/// replicas, and answers the query for each indicator × traffic labels.
///
/// # Formula
/// Per replica and series: the histogram (or its [`increase`] since the earlier dump of the
/// same replica name); then per indicator and traffic labels: [`merge`] over replicas,
/// [`fraction_at_or_under`] each target, [`histogram_quantile`] each percentile, and the mean of
/// the replicas' own percentiles beside it.
/// # Edge cases
/// - A replica whose dump has both `vllm:time_per_output_token_seconds` and
///   `vllm:inter_token_latency_seconds` is read from the newer name only.
/// - A replica with no earlier dump, or a series missing from it, is taken whole (said).
/// - Repeated replica names get `#2`, `#3` ... (said).
/// # Example
/// ```
/// use slo_core::{prometheus::*, spec::Indicator};
/// let dump = |n: &str, a: u32, b: u32| read_dump(n, &format!(
///     "vllm:time_to_first_token_seconds_bucket{{le=\"0.5\"}} {a}\nvllm:time_to_first_token_seconds_bucket{{le=\"+Inf\"}} {b}\n"));
/// let q = HistogramQuery { targets_ms: vec![(Indicator::Ttft, 500.0)], percentiles: vec![] };
/// let a = analyse(&[dump("a", 9, 10), dump("b", 1, 10)], &[], &q);
/// assert_eq!(a.groups[0].fractions[0].value, 0.5);
/// ```
pub fn analyse(dumps: &[Dump], before: &[Dump], query: &HistogramQuery) -> Analysis {
    let mut analysis = Analysis {
        windowed: !before.is_empty(),
        ..Analysis::default()
    };
    let names = unique_names(
        dumps.iter().map(|d| d.replica.as_str()),
        &mut analysis.notes,
    );
    let before_names = unique_names(before.iter().map(|d| d.replica.as_str()), &mut Vec::new());
    let mut members: Vec<Member> = Vec::new();
    for (dump, name) in dumps.iter().zip(&names) {
        let earlier = if before.is_empty() {
            None
        } else {
            match before_names.iter().position(|n| n == name) {
                Some(k) => before.get(k),
                None => {
                    analysis.notes.push(format!(
                        "replica {name} has no earlier dump: its counts since the process started are used whole"
                    ));
                    None
                }
            }
        };
        for h in latency_histograms(dump, name, &mut analysis.notes) {
            let (replica, split) = replica_and_split(name, &h.labels);
            let h = match earlier {
                None => h.clone(),
                Some(e) => {
                    match e
                        .histograms
                        .iter()
                        .find(|b| b.family == h.family && b.labels == h.labels)
                    {
                        None => {
                            analysis.notes.push(format!(
                                "{} on replica {name} is not in the earlier dump: taken whole (it started counting in the window)",
                                h.series_name()
                            ));
                            h.clone()
                        }
                        Some(b) => {
                            let inc = increase(b, h);
                            if let Some(r) = inc.reset {
                                analysis.notes.push(format!(
                                    "counter reset on replica {name}: {} ({}); the later counts are used as the increase, as Prometheus' increase() does, so observations between the earlier dump and the restart are missing",
                                    h.series_name(),
                                    r.describe()
                                ));
                            }
                            inc.histogram
                        }
                    }
                }
            };
            members.push(Member {
                replica,
                split,
                histogram: h,
            });
        }
    }
    // Groups: indicator × traffic labels, in indicator order then label order.
    let mut keys: Vec<(Indicator, Vec<(String, String)>)> = Vec::new();
    for m in &members {
        if let Some(ind) = m.histogram.indicator {
            let key = (ind, m.split.clone());
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    order::sort_by(&mut keys, Ord::cmp);
    for (indicator, split) in keys {
        let group: Vec<&Member> = members
            .iter()
            .filter(|m| m.histogram.indicator == Some(indicator) && m.split == split)
            .collect();
        if let Some(g) = analyse_group(indicator, split, &group, query) {
            analysis.groups.push(g);
        }
    }
    for ind in Indicator::ALL {
        let targeted = query.targets_ms.iter().any(|(i, _)| *i == ind);
        if targeted && !analysis.groups.iter().any(|g| g.indicator == ind) {
            let names: Vec<&str> = VLLM_LATENCY_FAMILIES
                .iter()
                .filter(|(_, i)| *i == ind)
                .map(|(n, _)| *n)
                .collect();
            analysis.missing.push(ind);
            analysis.notes.push(format!(
                "{} has a target but no histogram in the dumps (looked for {})",
                ind.label(),
                names.join(", ")
            ));
        }
    }
    analysis
}

fn unique_names<'a>(names: impl Iterator<Item = &'a str>, notes: &mut Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        let mut candidate = name.to_string();
        let mut k = 1;
        while out.contains(&candidate) {
            k += 1;
            candidate = format!("{name}#{k}");
        }
        if k > 1 {
            notes.push(format!(
                "the replica name {name} is used twice; the second is called {candidate}"
            ));
        }
        out.push(candidate);
    }
    out
}

/// The vLLM latency histograms of a dump, without an older family where the newer one exists.
fn latency_histograms<'a>(
    dump: &'a Dump,
    name: &str,
    notes: &mut Vec<String>,
) -> Vec<&'a Histogram> {
    let has = |family: &str, labels: &[(String, String)]| {
        dump.histograms
            .iter()
            .any(|h| canonical_family(&h.family) == family && h.labels == labels)
    };
    let mut out = Vec::new();
    let mut superseded = BTreeSet::new();
    for h in &dump.histograms {
        if h.indicator.is_none() {
            continue;
        }
        let canonical = canonical_family(&h.family);
        if let Some((old, new)) = RENAMED.iter().find(|(old, _)| *old == canonical) {
            if has(new, &h.labels) {
                superseded.insert((*old, *new));
                continue;
            }
        }
        out.push(h);
    }
    for (old, new) in superseded {
        notes.push(format!(
            "replica {name} exports both {old} (older name) and {new}; {new} is read, so nothing is counted twice"
        ));
    }
    out
}

/// A label: (name, value).
type Label = (String, String);

/// The replica id (dump name plus replica labels) and the traffic labels of a series.
fn replica_and_split(name: &str, labels: &[(String, String)]) -> (String, Vec<(String, String)>) {
    let (replica_labels, split): (Vec<&Label>, Vec<&Label>) = labels
        .iter()
        .partition(|(n, _)| REPLICA_LABELS.contains(&n.as_str()));
    let replica = if replica_labels.is_empty() {
        name.to_string()
    } else {
        let inner: Vec<String> = replica_labels
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        format!("{name}[{}]", inner.join(","))
    };
    (replica, split.into_iter().cloned().collect())
}

fn analyse_group(
    indicator: Indicator,
    labels: Vec<(String, String)>,
    group: &[&Member],
    query: &HistogramQuery,
) -> Option<GroupAnalysis> {
    let parts: Vec<&Histogram> = group.iter().map(|m| &m.histogram).collect();
    let merged = merge(&parts)?;
    let mut notes = Vec::new();
    if !merged.dropped_edges_s.is_empty() {
        let list: Vec<String> = merged
            .dropped_edges_s
            .iter()
            .map(|e| format!("{e}"))
            .collect();
        notes.push(format!(
            "the replicas do not all have the same bucket edges; merged on the {} edges they share, leaving out {} s",
            merged.histogram.edges_s.len(),
            list.join(", ")
        ));
    }
    let h = merged.histogram;
    let targets: Vec<f64> = query
        .targets_ms
        .iter()
        .filter(|(i, _)| *i == indicator)
        .map(|(_, t)| *t)
        .collect();
    let fractions: Vec<FractionUnder> = targets
        .iter()
        .filter_map(|&t| fraction_at_or_under(&h, t))
        .collect();
    if h.count == 0.0 {
        notes.push("no observations (in the window)".to_string());
    }
    let percentiles = query
        .percentiles
        .iter()
        .map(|&q| {
            let merged_q = histogram_quantile(&h, q);
            let estimates: Vec<Option<QuantileEstimate>> = group
                .iter()
                .map(|m| histogram_quantile(&m.histogram, q))
                .collect();
            let per_replica_ms: Vec<(String, Option<f64>)> = group
                .iter()
                .zip(&estimates)
                .map(|(m, e)| (m.replica.clone(), e.as_ref().map(|e| e.value_ms)))
                .collect();
            let values: Vec<f64> = per_replica_ms.iter().filter_map(|(_, v)| *v).collect();
            // A replica whose percentile lies above its last finite edge has only a lower bound
            // ("≥ 1,000 ms"): a mean with it in would be no figure at all.
            let bounded = estimates.iter().flatten().any(|e| e.lower_bound_only);
            let mean_of_replicas_ms = (group.len() > 1 && !values.is_empty() && !bounded)
                .then(|| values.iter().sum::<f64>() / values.len() as f64);
            let error_ms = match (mean_of_replicas_ms, &merged_q) {
                (Some(m), Some(e)) if !e.lower_bound_only => Some(m - e.value_ms),
                _ => None,
            };
            let relative_error = match (error_ms, &merged_q) {
                (Some(err), Some(e)) if e.value_ms != 0.0 => Some(err / e.value_ms),
                _ => None,
            };
            PercentileComparison {
                q,
                merged: merged_q,
                per_replica_ms,
                mean_of_replicas_ms,
                error_ms,
                relative_error,
            }
        })
        .collect();
    let all_edges: Vec<f64> = parts
        .iter()
        .flat_map(|p| p.edges_s.iter().copied())
        .collect();
    let recommended_edges_s = recommend_edges(&all_edges, &targets);
    let edges_need_change = fractions.iter().any(|f| f.kind != FractionKind::Exact);
    match indicator {
        Indicator::Itl if !targets.is_empty() => notes.push(
            "the ITL histogram counts gaps, not requests: its fraction is the share of gaps under the target, while an ITL target in the spec applies to each request's largest gap (or its percentile), which is stricter".to_string(),
        ),
        Indicator::Ttft | Indicator::E2e | Indicator::Queue => notes.push(
            "measured inside the engine: it leaves out the gateway, the network and any queue in front of vLLM".to_string(),
        ),
        _ => {}
    }
    let mut families: Vec<String> = parts.iter().map(|p| p.family.clone()).collect();
    order::sort_by(&mut families, Ord::cmp);
    families.dedup();
    Some(GroupAnalysis {
        indicator,
        families,
        labels,
        replicas: group.iter().map(|m| m.replica.clone()).collect(),
        count: h.count,
        mean_ms: h.mean_ms(),
        merged: h,
        dropped_edges_s: merged.dropped_edges_s,
        fractions,
        percentiles,
        recommended_edges_s,
        edges_need_change,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_error(line: &str, want: &str) {
        let e = parse(line);
        assert!(e.samples.is_empty(), "{line:?} parsed");
        let got = e.errors.first().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(got, want, "{line:?}");
    }

    #[test]
    fn bad_lines_are_located() {
        check_error("1abc 2", "1:1: expected a metric name, found '1'");
        check_error(
            "x{a=1} 2",
            "1:5: expected a quoted value for label \"a\", found '1'",
        );
        check_error(
            "x{a=\"1} 2",
            "1:5: the value of label \"a\" has no closing quote",
        );
        check_error(
            "x{a=\"\\t\"} 2",
            "1:6: \"\\t\" is not an escape of the exposition format (use \\\\, \\\" or \\n)",
        );
        check_error(
            "x{a=\"1\" b=\"2\"} 2",
            "1:9: expected ',' or '}', found 'b'",
        );
        check_error(
            "x{a=\"1\",a=\"2\"} 2",
            "1:9: label \"a\" appears twice in one sample",
        );
        check_error(
            "x",
            "1:2: expected a space, then the sample value, found the end of the line",
        );
        check_error(
            "x abc",
            "1:3: \"abc\" is not a sample value (a number, +Inf, -Inf or NaN)",
        );
        check_error(
            "x 1 12x",
            "1:5: \"12x\" is not a timestamp (an integer of milliseconds)",
        );
        check_error("x 1 2 3", "1:7: unexpected text \"3\" after the sample");
        check_error(
            "x_bucket{le=\"fast\"} 1",
            "1:14: le=\"fast\" is not a bucket bound (a number or +Inf)",
        );
        check_error(
            "# TYPE x countr",
            "1:10: \"countr\" is not a metric type (counter, gauge, histogram, summary, untyped)",
        );
        check_error(
            "# HELP",
            "1:7: expected a metric name after # HELP, found the end of the line",
        );
        check_error("é{a=\"1\"} 1", "1:1: expected a metric name, found 'é'");
    }

    #[test]
    fn good_lines_of_every_shape() {
        let text = "# HELP x A \\\"help\\\" line\\nwith two lines\n# TYPE x gauge\n# a comment\n\n\
                    x 1\n\
                    x{a=\"b\",} -Inf\n\
                    x{ a = \"multi\\nline\" , c=\"\\\\\" } NaN 1700000000000\r\n\
                    {\"dotted.name\", z=\"1\"} +Inf\n\
                    y{q=\"1\"} 1.5e-3 # {trace_id=\"abc\"} 0.5\n\
                    \t x{a=\"é\"} 2\n# EOF\n";
        let e = parse(text);
        assert!(e.errors.is_empty(), "{:?}", e.errors);
        assert!(e.open_metrics);
        assert_eq!(e.types.get("x"), Some(&MetricType::Gauge));
        assert_eq!(
            e.help.get("x").map(String::as_str),
            Some("A \\\"help\\\" line\nwith two lines")
        );
        let values: Vec<String> = e.samples.iter().map(|s| format!("{}", s.value)).collect();
        assert_eq!(values, ["1", "-inf", "NaN", "inf", "0.0015", "2"]);
        assert_eq!(e.samples[2].label("a"), Some("multi\nline"));
        assert_eq!(e.samples[2].label("c"), Some("\\"));
        assert_eq!(e.samples[2].timestamp, Some(1.7e12));
        assert_eq!(e.samples[3].name, "dotted.name");
        assert_eq!(e.samples[5].line, 10);
    }

    #[test]
    fn duplicate_series_keeps_the_first() {
        let e = parse("x{a=\"1\",b=\"2\"} 1\nx{b=\"2\",a=\"1\"} 5\n");
        assert_eq!(e.samples.len(), 1);
        assert_eq!(e.samples[0].value, 1.0);
        assert_eq!(
            e.errors[0].to_string(),
            "2:1: this series already appeared on line 1; the first is kept"
        );
    }

    #[test]
    fn garbage_never_panics() {
        for text in [
            "{",
            "x{",
            "x{\"",
            "x{\"a\"",
            "x{a",
            "x{a=",
            "x{a=\"\\",
            "\u{feff}",
            "#",
            "# TYPE",
            "# TYPE x",
            "\u{0}\u{1}",
            "x{}}",
            "x{,} 1",
        ] {
            let e = parse(text);
            let _ = histograms(&e);
        }
    }

    #[test]
    fn histogram_repairs_and_drops() {
        let text =
            "h_bucket{le=\"1\"} 5\nh_bucket{le=\"0.5\"} 6\nh_bucket{le=\"+Inf\"} 7\nh_count 8\n\
                    g_bucket{le=\"1\"} -1\ng_bucket{le=\"+Inf\"} 1\n\
                    k_bucket{le=\"1\"} 1\n";
        let set = histograms(&parse(text));
        assert_eq!(set.histograms.len(), 1);
        let h = &set.histograms[0];
        assert_eq!(h.edges_s, vec![0.5, 1.0]);
        assert_eq!(h.cumulative, vec![6.0, 6.0]);
        assert_eq!(h.count, 7.0);
        assert_eq!(set.warnings.len(), 2, "{:?}", set.warnings);
        let errors: Vec<String> = set.errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(errors, [
            "5:1: g: a count of -1 is not possible (counts are finite and not negative); the histogram is left out",
            "7:1: k: no le=\"+Inf\" bucket and no _count, so the total is unknown; the histogram is left out",
        ]);
    }

    #[test]
    fn quantile_edge_cases() {
        let h = Histogram {
            family: "f".into(),
            indicator: None,
            labels: vec![],
            edges_s: vec![0.1, 0.2],
            cumulative: vec![0.0, 10.0],
            count: 10.0,
            sum: None,
            created: None,
            line: 0,
        };
        assert_eq!(histogram_quantile(&h, 0.0).map(|e| e.value_ms), Some(0.0));
        assert_eq!(
            histogram_quantile(&h, 100.0).map(|e| e.value_ms),
            Some(200.0)
        );
        assert_eq!(histogram_quantile(&h, 101.0), None);
        assert_eq!(histogram_quantile(&h, f64::NAN), None);
        let empty = Histogram {
            count: 0.0,
            cumulative: vec![0.0, 0.0],
            ..h.clone()
        };
        assert_eq!(histogram_quantile(&empty, 50.0), None);
        assert_eq!(fraction_at_or_under(&empty, 100.0), None);
        // Below the first edge: the first bucket starts at 0.
        let f = fraction_at_or_under(
            &Histogram {
                cumulative: vec![4.0, 10.0],
                ..h
            },
            50.0,
        )
        .unwrap();
        assert_eq!(
            (f.lower, f.upper, f.value, f.bucket_s),
            (0.0, 0.4, 0.2, (0.0, Some(0.1)))
        );
    }
}
