//! The SLO spec: traffic classes, input-length buckets, targets and policies.
//!
//! A spec is versioned JSON (`"version": 1`). It is what the Targets form edits, what the CLI reads
//! with `--spec`, and what the written SLO document describes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::quantile::Method;

/// The spec format version this build writes and reads.
pub const SPEC_VERSION: u32 = 1;

/// The latency indicators a target can be set on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Indicator {
    /// Time to first token.
    Ttft,
    /// Time per output token: (E2E - TTFT) / (output tokens - 1).
    Tpot,
    /// Inter-token latency: the gaps between streamed chunks.
    Itl,
    /// End-to-end latency.
    E2e,
    /// Time spent queued before the engine started the request.
    Queue,
}

impl Indicator {
    pub const ALL: [Indicator; 5] = [
        Indicator::Ttft,
        Indicator::Tpot,
        Indicator::Itl,
        Indicator::E2e,
        Indicator::Queue,
    ];

    /// Short upper-case label, e.g. "TTFT".
    pub fn label(self) -> &'static str {
        match self {
            Indicator::Ttft => "TTFT",
            Indicator::Tpot => "TPOT",
            Indicator::Itl => "ITL",
            Indicator::E2e => "E2E",
            Indicator::Queue => "queue",
        }
    }

    /// Field key with unit, as in the JSON contract: "ttft_ms".
    pub fn key(self) -> &'static str {
        match self {
            Indicator::Ttft => "ttft_ms",
            Indicator::Tpot => "tpot_ms",
            Indicator::Itl => "itl_ms",
            Indicator::E2e => "e2e_ms",
            Indicator::Queue => "queue_ms",
        }
    }

    /// Bit used in failure sets.
    pub fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A TTFT target: fixed, or a base plus an allowance per input token.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TtftTarget {
    /// TTFT <= ms.
    Fixed { ms: f64 },
    /// TTFT <= base_ms + per_token_ms * input_tokens (queueing plus a prefill allowance).
    PerToken { base_ms: f64, per_token_ms: f64 },
}

impl TtftTarget {
    /// The threshold for a request with `input_tokens` prompt tokens (`None` when a per-token
    /// target meets a request of unknown length).
    pub fn threshold_ms(self, input_tokens: Option<f64>) -> Option<f64> {
        match self {
            TtftTarget::Fixed { ms } => Some(ms),
            TtftTarget::PerToken {
                base_ms,
                per_token_ms,
            } => input_tokens.map(|n| base_ms + per_token_ms * n),
        }
    }

    /// The fixed threshold, if this target is fixed.
    pub fn fixed_ms(self) -> Option<f64> {
        match self {
            TtftTarget::Fixed { ms } => Some(ms),
            TtftTarget::PerToken { .. } => None,
        }
    }
}

/// Targets of one class × bucket cell. `None` means "no target on this indicator".
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Targets {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft: Option<TtftTarget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_ms: Option<f64>,
}

impl Targets {
    /// Indicators that carry a target here.
    pub fn indicators(&self) -> Vec<Indicator> {
        Indicator::ALL
            .into_iter()
            .filter(|&i| self.has(i))
            .collect()
    }

    pub fn has(&self, indicator: Indicator) -> bool {
        match indicator {
            Indicator::Ttft => self.ttft.is_some(),
            Indicator::Tpot => self.tpot_ms.is_some(),
            Indicator::Itl => self.itl_ms.is_some(),
            Indicator::E2e => self.e2e_ms.is_some(),
            Indicator::Queue => self.queue_ms.is_some(),
        }
    }

    /// A fixed threshold for `indicator` (per-token TTFT targets have none).
    pub fn fixed_ms(&self, indicator: Indicator) -> Option<f64> {
        match indicator {
            Indicator::Ttft => self.ttft.and_then(TtftTarget::fixed_ms),
            Indicator::Tpot => self.tpot_ms,
            Indicator::Itl => self.itl_ms,
            Indicator::E2e => self.e2e_ms,
            Indicator::Queue => self.queue_ms,
        }
    }

    /// Every threshold multiplied by `factor` (the SLO-scale curve).
    pub fn scaled(&self, factor: f64) -> Targets {
        Targets {
            ttft: self.ttft.map(|t| match t {
                TtftTarget::Fixed { ms } => TtftTarget::Fixed { ms: ms * factor },
                TtftTarget::PerToken {
                    base_ms,
                    per_token_ms,
                } => TtftTarget::PerToken {
                    base_ms: base_ms * factor,
                    per_token_ms: per_token_ms * factor,
                },
            }),
            tpot_ms: self.tpot_ms.map(|v| v * factor),
            itl_ms: self.itl_ms.map(|v| v * factor),
            e2e_ms: self.e2e_ms.map(|v| v * factor),
            queue_ms: self.queue_ms.map(|v| v * factor),
        }
    }
}

/// Adds an error for every key of `given` (a spec as written) that `read` (the spec read from
/// it, written out again) lacks: a field serde would ignore, most likely misspelt
/// (`"tpot": 50` for `"tpot_ms": 50`), which would otherwise drop a target without a word.
/// Keys whose value is `null` are left alone: an absent optional field is written that way.
///
/// # Edge cases
/// This relies on a spec writing out every field it read under the name it read it by: the
/// spec's types have no `alias` or `flatten`, and skip only `None` options when written (a
/// test below checks a spec with every field set).
fn unknown_fields(given: &Value, read: &Value, path: &str, errors: &mut Vec<SpecError>) {
    let at = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    match (given, read) {
        (Value::Object(given), Value::Object(read)) => {
            for (key, value) in given {
                match read.get(key) {
                    Some(known) => unknown_fields(value, known, &at(key), errors),
                    None if value.is_null() => {}
                    None => errors.push(SpecError {
                        path: at(key),
                        message:
                            "not a field the spec has here, so it would be ignored (a misspelling?)"
                                .into(),
                    }),
                }
            }
        }
        (Value::Array(given), Value::Array(read)) => {
            for (k, (value, known)) in given.iter().zip(read).enumerate() {
                unknown_fields(value, known, &format!("{path}[{k}]"), errors);
            }
        }
        _ => {}
    }
}

/// How a request is assigned to a class.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ClassRule {
    /// The request's `column` equals `value` (exact, case-sensitive, surrounding spaces ignored).
    Equals { column: String, value: String },
    /// Every request that no other class claims.
    Default,
}

/// A traffic class and its targets, one `Targets` per input-length bucket.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub rule: ClassRule,
    /// One entry per bucket, in bucket order.
    pub targets: Vec<Targets>,
}

/// The per-request statistic of inter-token gaps that the joint check compares with the ITL target.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ItlStatistic {
    /// The request's largest gap.
    Max,
    /// The q-th percentile (0..=100) of the request's gaps, by the spec's method.
    Percentile { q: f64 },
}

/// What counts as a stall in the stream.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StallRule {
    /// A gap above `ms`.
    AbsoluteMs { ms: f64 },
    /// A gap above `k` times the request's own TPOT.
    TimesTpot { k: f64 },
}

/// Where an indicator is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum MeasurementPoint {
    #[default]
    Gateway,
    Client,
    Engine,
}

impl MeasurementPoint {
    pub fn name(self) -> &'static str {
        match self {
            MeasurementPoint::Gateway => "gateway",
            MeasurementPoint::Client => "client",
            MeasurementPoint::Engine => "engine",
        }
    }
}

/// The measurement point of each indicator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct MeasurementPoints {
    #[serde(default)]
    pub ttft: MeasurementPoint,
    #[serde(default)]
    pub tpot: MeasurementPoint,
    #[serde(default)]
    pub itl: MeasurementPoint,
    #[serde(default)]
    pub e2e: MeasurementPoint,
    #[serde(default)]
    pub queue: MeasurementPoint,
}

impl MeasurementPoints {
    pub fn of(&self, indicator: Indicator) -> MeasurementPoint {
        match indicator {
            Indicator::Ttft => self.ttft,
            Indicator::Tpot => self.tpot,
            Indicator::Itl => self.itl,
            Indicator::E2e => self.e2e,
            Indicator::Queue => self.queue,
        }
    }
}

/// The SLO window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Window {
    Rolling {
        days: u32,
    },
    /// Calendar month.
    CalendarMonth,
}

impl Window {
    /// Length in days (a calendar month is taken as 30 days for budget arithmetic).
    pub fn days(self) -> f64 {
        match self {
            Window::Rolling { days } => f64::from(days),
            Window::CalendarMonth => 30.0,
        }
    }

    pub fn describe(self) -> String {
        match self {
            Window::Rolling { days } => format!("{days} days, rolling"),
            Window::CalendarMonth => "calendar month".to_string(),
        }
    }
}

/// How client cancellations are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CancelPolicy {
    /// Excluded, except that a cancellation after waiting at least the TTFT target for the first
    /// token counts as an attempted, bad request (a TTFT failure the user gave up on).
    #[default]
    ExcludeUnlessWaitedPastTtft,
    /// Always excluded.
    Exclude,
    /// Always attempted and bad.
    CountAsBad,
}

/// The whole SLO definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spec {
    pub version: u32,
    pub service: String,
    pub classes: Vec<ClassSpec>,
    /// Input-length bucket edges in tokens, ascending: `[2000, 16000]` gives <2000, 2000–15999, >=16000.
    /// Empty: one bucket for every length.
    #[serde(default)]
    pub bucket_edges: Vec<u64>,
    #[serde(default)]
    pub method: Method,
    /// Percentiles reported, in percent (50, 90, 99.9 ...).
    pub percentiles: Vec<f64>,
    /// Joint-attainment objective, a fraction in (0, 1).
    pub objective: f64,
    pub window: Window,
    #[serde(default)]
    pub measurement: MeasurementPoints,
    #[serde(default = "default_itl_statistic")]
    pub itl_statistic: ItlStatistic,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall: Option<StallRule>,
    #[serde(default)]
    pub cancellations: CancelPolicy,
    /// Cells with fewer attempted requests than this get a sample-size warning.
    #[serde(default = "default_min_requests")]
    pub min_requests: u64,
    /// Expected requests per window, for the error budget in numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_requests_per_window: Option<u64>,
    #[serde(default)]
    pub budget_policy: String,
}

fn default_itl_statistic() -> ItlStatistic {
    ItlStatistic::Max
}

fn default_min_requests() -> u64 {
    1000
}

/// A problem with a spec, with the path of the offending field.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SpecError {
    /// JSON-path-like location, e.g. `classes[1].targets[0].tpot_ms`.
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl Default for Spec {
    fn default() -> Self {
        Spec::single(Targets::default())
    }
}

impl Spec {
    /// One class ("all", the default rule), one bucket, the given targets: what the CLI's
    /// `--ttft/--tpot` flags mean without `--spec`.
    pub fn single(targets: Targets) -> Spec {
        Spec {
            version: SPEC_VERSION,
            service: "LLM service".to_string(),
            classes: vec![ClassSpec {
                name: "all".to_string(),
                description: "Every request.".to_string(),
                rule: ClassRule::Default,
                targets: vec![targets],
            }],
            bucket_edges: Vec::new(),
            method: Method::Linear,
            percentiles: vec![50.0, 90.0, 99.0],
            objective: 0.99,
            window: Window::Rolling { days: 28 },
            measurement: MeasurementPoints::default(),
            itl_statistic: ItlStatistic::Max,
            stall: None,
            cancellations: CancelPolicy::default(),
            min_requests: 1000,
            expected_requests_per_window: None,
            budget_policy: String::new(),
        }
    }

    /// Number of input-length buckets.
    pub fn n_buckets(&self) -> usize {
        self.bucket_edges.len() + 1
    }

    /// Sets new bucket edges, and gives each new bucket the targets of the old bucket its
    /// shortest prompts were in: the targets follow the input lengths, not the positions.
    ///
    /// # Example
    /// ```
    /// use slo_core::spec::{Spec, Targets, TtftTarget};
    /// let ttft = |ms| Targets { ttft: Some(TtftTarget::Fixed { ms }), ..Targets::default() };
    /// let mut spec = Spec::single(ttft(500.0));
    /// spec.bucket_edges = vec![2000, 16000];
    /// spec.classes[0].targets = vec![ttft(500.0), ttft(2500.0), ttft(10_000.0)];
    /// // An edge at 8k: 2k–8k and 8k–16k both had 2.5 s; 16k and more keep 10 s.
    /// spec.set_bucket_edges(vec![2000, 8000, 16000]);
    /// let ms: Vec<f64> = spec.classes[0].targets.iter().filter_map(|t| t.ttft?.fixed_ms()).collect();
    /// assert_eq!(ms, [500.0, 2500.0, 2500.0, 10_000.0]);
    /// ```
    pub fn set_bucket_edges(&mut self, edges: Vec<u64>) {
        // Each new bucket's shortest prompt (0, then each edge), in the old buckets.
        let from: Vec<usize> = std::iter::once(0)
            .chain(edges.iter().copied())
            .map(|lowest| self.bucket_of(Some(lowest as f64)).unwrap_or(0))
            .collect();
        self.bucket_edges = edges;
        for class in &mut self.classes {
            let first = class.targets.first().copied().unwrap_or_default();
            class.targets = from
                .iter()
                .map(|&b| class.targets.get(b).copied().unwrap_or(first))
                .collect();
        }
    }

    /// The target every cell has on `indicator`, `Some(None)` when no cell has one; `None` when
    /// the cells' targets differ or one is per token: what a single field for the whole spec
    /// can show and set.
    pub fn uniform_target(&self, indicator: Indicator) -> Option<Option<f64>> {
        let mut cells = self.classes.iter().flat_map(|c| c.targets.iter());
        let first = cells.next()?;
        let value = |t: &Targets| match (indicator, t.ttft) {
            (Indicator::Ttft, Some(TtftTarget::PerToken { .. })) => Err(()),
            _ => Ok(t.fixed_ms(indicator)),
        };
        let v = value(first).ok()?;
        cells.all(|t| value(t) == Ok(v)).then_some(v)
    }

    /// The bucket of a request with `input_tokens` prompt tokens.
    ///
    /// # Formula
    /// bucket = number of edges <= input_tokens (edges ascending, so `[2000, 16000]` puts 1999 in 0,
    /// 2000 in 1 and 16000 in 2).
    /// # Edge cases
    /// No edges: always 0. Unknown length with edges: `None` (reported as its own "unknown length" cell).
    /// # Example
    /// ```
    /// let mut spec = slo_core::spec::Spec::default();
    /// spec.bucket_edges = vec![2000, 16000];
    /// assert_eq!(spec.bucket_of(Some(1999.0)), Some(0));
    /// assert_eq!(spec.bucket_of(Some(2000.0)), Some(1));
    /// assert_eq!(spec.bucket_of(Some(20000.0)), Some(2));
    /// assert_eq!(spec.bucket_of(None), None);
    /// ```
    pub fn bucket_of(&self, input_tokens: Option<f64>) -> Option<usize> {
        if self.bucket_edges.is_empty() {
            return Some(0);
        }
        let n = input_tokens?;
        Some(self.bucket_edges.iter().filter(|&&e| e as f64 <= n).count())
    }

    /// Human label of bucket `b`: "<2k", "2k–16k", ">=16k", or "all lengths".
    pub fn bucket_label(&self, b: usize) -> String {
        let edges = &self.bucket_edges;
        if edges.is_empty() {
            return "all lengths".to_string();
        }
        match (b.checked_sub(1).and_then(|p| edges.get(p)), edges.get(b)) {
            (None, Some(hi)) => format!("<{}", tokens(*hi)),
            (Some(lo), Some(hi)) => format!("{}–{}", tokens(*lo), tokens(*hi)),
            (Some(lo), None) => format!(">={}", tokens(*lo)),
            (None, None) => "unknown length".to_string(),
        }
    }

    /// Checks the spec; every problem is listed with its path.
    pub fn validate(&self) -> Vec<SpecError> {
        let mut errors = Vec::new();
        let mut err = |path: String, message: String| errors.push(SpecError { path, message });
        if self.version != SPEC_VERSION {
            err(
                "version".into(),
                format!(
                    "this build reads spec version {SPEC_VERSION}, not {}",
                    self.version
                ),
            );
        }
        if !(self.objective > 0.0 && self.objective < 1.0) {
            err(
                "objective".into(),
                format!(
                    "the objective is a fraction strictly between 0 and 1 (0.99 for 99 %), not {}",
                    self.objective
                ),
            );
        }
        if self.classes.is_empty() {
            err("classes".into(), "define at least one traffic class".into());
        }
        for (k, w) in self.bucket_edges.windows(2).enumerate() {
            if let [a, b] = w {
                if a >= b {
                    err(
                        format!("bucket_edges[{}]", k + 1),
                        format!(
                            "bucket edges must increase: {b} follows {a}, so the buckets overlap"
                        ),
                    );
                }
            }
        }
        if self.bucket_edges.first() == Some(&0) {
            err(
                "bucket_edges[0]".into(),
                "an edge of 0 tokens makes an empty bucket".into(),
            );
        }
        for (k, q) in self.percentiles.iter().enumerate() {
            if !(q.is_finite() && (0.0..=100.0).contains(q)) {
                err(
                    format!("percentiles[{k}]"),
                    format!("a percentile lies in 0..100, not {q}"),
                );
            }
        }
        let mut defaults = 0;
        for (c, class) in self.classes.iter().enumerate() {
            let at = format!("classes[{c}]");
            if class.name.trim().is_empty() {
                err(format!("{at}.name"), "a class needs a name".into());
            }
            if self.classes[..c].iter().any(|o| o.name == class.name) {
                err(
                    format!("{at}.name"),
                    format!("the class name {:?} is used twice", class.name),
                );
            }
            match &class.rule {
                ClassRule::Default => defaults += 1,
                ClassRule::Equals { column, .. } if column.trim().is_empty() => err(
                    format!("{at}.rule.column"),
                    "name the column the rule reads".into(),
                ),
                ClassRule::Equals { .. } => {}
            }
            if class.targets.len() != self.n_buckets() {
                err(
                    format!("{at}.targets"),
                    format!(
                        "{} has targets for {} buckets but the spec has {}",
                        class.name,
                        class.targets.len(),
                        self.n_buckets()
                    ),
                );
            }
            for (b, t) in class.targets.iter().enumerate() {
                let mut check = |field: &str, v: Option<f64>| {
                    if let Some(v) = v {
                        if !(v.is_finite() && v > 0.0) {
                            err(
                                format!("{at}.targets[{b}].{field}"),
                                format!(
                                    "a target must be a positive number of milliseconds, not {v}"
                                ),
                            );
                        }
                    }
                };
                match t.ttft {
                    Some(TtftTarget::Fixed { ms }) => check("ttft.ms", Some(ms)),
                    Some(TtftTarget::PerToken { base_ms, .. }) => {
                        check("ttft.base_ms", Some(base_ms))
                    }
                    None => {}
                }
                check("tpot_ms", t.tpot_ms);
                check("itl_ms", t.itl_ms);
                check("e2e_ms", t.e2e_ms);
                check("queue_ms", t.queue_ms);
                // A slope of 0 is a fixed target written the long way: allowed.
                if let Some(TtftTarget::PerToken { per_token_ms, .. }) = t.ttft {
                    if !(per_token_ms.is_finite() && per_token_ms >= 0.0) {
                        err(
                            format!("{at}.targets[{b}].ttft.per_token_ms"),
                            format!(
                                "the time per input token is 0 or more milliseconds, not {per_token_ms}"
                            ),
                        );
                    }
                }
            }
        }
        if defaults > 1 {
            err(
                "classes".into(),
                "only one class can be the default class".into(),
            );
        }
        if self.window == (Window::Rolling { days: 0 }) {
            err(
                "window.days".into(),
                "a rolling window is at least 1 day long, not 0".into(),
            );
        }
        match self.stall {
            Some(StallRule::AbsoluteMs { ms }) if !(ms.is_finite() && ms > 0.0) => err(
                "stall.ms".into(),
                format!("a stall is a gap above a positive number of milliseconds, not {ms}"),
            ),
            Some(StallRule::TimesTpot { k }) if !(k.is_finite() && k > 0.0) => err(
                "stall.k".into(),
                format!(
                    "a stall is a gap above a positive multiple of the request's TPOT, not {k}"
                ),
            ),
            _ => {}
        }
        if let ItlStatistic::Percentile { q } = self.itl_statistic {
            if !(q.is_finite() && (0.0..=100.0).contains(&q)) {
                err(
                    "itl_statistic.q".into(),
                    format!("a percentile lies in 0..100, not {q}"),
                );
            }
        }
        errors
    }

    /// Reads a spec from JSON, then validates it.
    pub fn from_json(text: &str) -> Result<Spec, Vec<SpecError>> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            vec![SpecError {
                path: format!("line {}, column {}", e.line(), e.column()),
                message: format!("not valid spec JSON: {e}"),
            }]
        })?;
        match value.get("version").and_then(|v| v.as_u64()) {
            Some(v) if v == u64::from(SPEC_VERSION) => {}
            Some(v) => {
                return Err(vec![SpecError {
                    path: "version".into(),
                    message: format!("this build reads spec version {SPEC_VERSION}, not {v}"),
                }])
            }
            None => {
                return Err(vec![SpecError {
                    path: "version".into(),
                    message: "a spec needs \"version\": 1".into(),
                }])
            }
        }
        let spec: Spec = serde_json::from_value(value.clone()).map_err(|e| {
            vec![SpecError {
                path: "spec".into(),
                message: format!("not a valid spec: {e}"),
            }]
        })?;
        let mut errors = Vec::new();
        // Through the text rather than `to_value`: the wasm has that serializer already.
        if let Ok(read) = serde_json::from_str::<Value>(&spec.to_json()) {
            unknown_fields(&value, &read, "", &mut errors);
        }
        errors.extend(spec.validate());
        if errors.is_empty() {
            Ok(spec)
        } else {
            Err(errors)
        }
    }

    /// Pretty JSON, deterministic (field order is the struct's).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The parts of the spec that decide grouping and percentiles but not pass/fail. Evaluation
    /// caches work on this key, so that a target change does not redo it.
    pub fn grouping_key(&self) -> String {
        let rules: Vec<(&str, &ClassRule)> = self
            .classes
            .iter()
            .map(|c| (c.name.as_str(), &c.rule))
            .collect();
        serde_json::to_string(&(
            rules,
            &self.bucket_edges,
            self.method,
            &self.percentiles,
            self.itl_statistic,
        ))
        .unwrap_or_default()
    }
}

/// The URL-fragment key of a share link: `#spec=<percent-encoded compact JSON>`.
pub const SHARE_KEY: &str = "spec=";

/// A share link's fragment (without `#`) carrying the spec, never the data.
///
/// # Formula
/// `spec=` + the compact JSON with every byte outside `A-Z a-z 0-9 - _ . ~` percent-encoded.
/// # Example
/// ```
/// use slo_core::spec::{from_share_fragment, to_share_fragment, Spec};
/// let spec = Spec::default();
/// let fragment = to_share_fragment(&spec);
/// assert!(fragment.starts_with("spec=%7B%22version%22%3A1"));
/// assert_eq!(from_share_fragment(&fragment), Ok(spec));
/// ```
pub fn to_share_fragment(spec: &Spec) -> String {
    let json = serde_json::to_string(spec).unwrap_or_default();
    let mut out = String::from(SHARE_KEY);
    for b in json.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Reads a share link's fragment (with or without `#`).
///
/// # Edge cases
/// A fragment without `spec=`, bad percent-encoding, bad UTF-8 or an invalid spec: the problems,
/// never a panic.
pub fn from_share_fragment(fragment: &str) -> Result<Spec, Vec<SpecError>> {
    let fail = |message: &str| {
        vec![SpecError {
            path: "link".into(),
            message: message.into(),
        }]
    };
    let body = fragment.trim_start_matches('#');
    let encoded = body
        .split('&')
        .find_map(|part| part.strip_prefix(SHARE_KEY))
        .ok_or_else(|| fail("the link carries no spec"))?;
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut k = 0;
    while let Some(&b) = bytes.get(k) {
        if b == b'%' {
            let hex = bytes
                .get(k + 1..k + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            let value = hex
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| fail("the link is damaged (bad %-escape)"))?;
            out.push(value);
            k += 3;
        } else {
            out.push(b);
            k += 1;
        }
    }
    let text = String::from_utf8(out).map_err(|_| fail("the link is damaged (not UTF-8)"))?;
    Spec::from_json(&text)
}

fn tokens(n: u64) -> String {
    if n >= 1000 && n.is_multiple_of(1000) {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chat() -> Spec {
        let mut spec = Spec::single(Targets {
            ttft: Some(TtftTarget::Fixed { ms: 500.0 }),
            tpot_ms: Some(50.0),
            ..Targets::default()
        });
        spec.bucket_edges = vec![2000, 16000];
        spec.classes[0].targets = vec![spec.classes[0].targets[0]; 3];
        spec
    }

    #[test]
    fn bucket_labels() {
        let spec = chat();
        let labels: Vec<String> = (0..3).map(|b| spec.bucket_label(b)).collect();
        assert_eq!(labels, ["<2k", "2k–16k", ">=16k"]);
        assert_eq!(Spec::default().bucket_label(0), "all lengths");
    }

    #[test]
    fn json_round_trips() {
        let spec = chat();
        let back = Spec::from_json(&spec.to_json()).expect("valid");
        assert_eq!(back, spec);
    }

    fn check_invalid(edit: impl Fn(&mut Spec), want_path: &str, want_words: &str) {
        let mut spec = chat();
        edit(&mut spec);
        let errors = spec.validate();
        assert!(
            errors
                .iter()
                .any(|e| e.path == want_path && e.message.contains(want_words)),
            "want {want_path}: {want_words}; got {errors:?}"
        );
    }

    #[test]
    fn validation_names_the_field() {
        check_invalid(
            |s| s.objective = 1.0,
            "objective",
            "strictly between 0 and 1",
        );
        check_invalid(
            |s| s.objective = 0.0,
            "objective",
            "strictly between 0 and 1",
        );
        check_invalid(
            |s| s.bucket_edges = vec![16000, 2000],
            "bucket_edges[1]",
            "overlap",
        );
        check_invalid(
            |s| s.classes[0].targets[1].tpot_ms = Some(0.0),
            "classes[0].targets[1].tpot_ms",
            "positive",
        );
        check_invalid(
            |s| s.classes[0].targets[0].ttft = Some(TtftTarget::Fixed { ms: -5.0 }),
            "classes[0].targets[0].ttft.ms",
            "positive",
        );
        check_invalid(
            |s| {
                let c = s.classes[0].clone();
                s.classes.push(c);
            },
            "classes[1].name",
            "used twice",
        );
        check_invalid(
            |s| s.classes[0].targets.pop().map(|_| ()).unwrap_or(()),
            "classes[0].targets",
            "3",
        );
        check_invalid(
            |s| {
                s.classes[0].targets[0].ttft = Some(TtftTarget::PerToken {
                    base_ms: 500.0,
                    per_token_ms: -1.0,
                })
            },
            "classes[0].targets[0].ttft.per_token_ms",
            "0 or more",
        );
        check_invalid(
            |s| s.window = Window::Rolling { days: 0 },
            "window.days",
            "at least 1 day",
        );
        check_invalid(
            |s| s.stall = Some(StallRule::AbsoluteMs { ms: -1.0 }),
            "stall.ms",
            "positive",
        );
        check_invalid(
            |s| s.stall = Some(StallRule::TimesTpot { k: 0.0 }),
            "stall.k",
            "positive",
        );
        assert!(chat().validate().is_empty());
        // A per-token slope of 0 is a fixed target written the long way.
        let mut flat = chat();
        flat.classes[0].targets[0].ttft = Some(TtftTarget::PerToken {
            base_ms: 500.0,
            per_token_ms: 0.0,
        });
        assert!(flat.validate().is_empty());
    }

    /// A spec with every field set to something other than its default: what a spec can say.
    fn every_field() -> Spec {
        let mut spec = chat();
        spec.classes[0].description = "interactive".into();
        spec.classes[0].rule = ClassRule::Equals {
            column: "class".into(),
            value: "chat".into(),
        };
        spec.classes[0].targets[0] = Targets {
            ttft: Some(TtftTarget::PerToken {
                base_ms: 300.0,
                per_token_ms: 0.2,
            }),
            tpot_ms: Some(50.0),
            itl_ms: Some(200.0),
            e2e_ms: Some(20_000.0),
            queue_ms: Some(100.0),
        };
        spec.classes.push(ClassSpec {
            name: "rest".into(),
            description: String::new(),
            rule: ClassRule::Default,
            targets: spec.classes[0].targets.clone(),
        });
        spec.method = Method::Nearest;
        spec.window = Window::CalendarMonth;
        spec.measurement.queue = MeasurementPoint::Engine;
        spec.itl_statistic = ItlStatistic::Percentile { q: 99.0 };
        spec.stall = Some(StallRule::TimesTpot { k: 10.0 });
        spec.cancellations = CancelPolicy::CountAsBad;
        spec.min_requests = 50;
        spec.expected_requests_per_window = Some(1_000_000);
        spec.budget_policy = "freeze releases".into();
        spec
    }

    #[test]
    fn a_target_is_uniform_only_when_every_cell_has_it() {
        let mut spec = chat();
        assert_eq!(spec.uniform_target(Indicator::Ttft), Some(Some(500.0)));
        assert_eq!(spec.uniform_target(Indicator::E2e), Some(None));
        spec.classes[0].targets[2].ttft = Some(TtftTarget::Fixed { ms: 2500.0 });
        assert_eq!(spec.uniform_target(Indicator::Ttft), None);
        assert_eq!(spec.uniform_target(Indicator::Tpot), Some(Some(50.0)));
        spec.classes[0].targets[1].tpot_ms = None;
        assert_eq!(spec.uniform_target(Indicator::Tpot), None);
        let mut per_token = Spec::single(Targets {
            ttft: Some(TtftTarget::PerToken {
                base_ms: 500.0,
                per_token_ms: 0.2,
            }),
            ..Targets::default()
        });
        assert_eq!(per_token.uniform_target(Indicator::Ttft), None);
        per_token.classes.clear();
        assert_eq!(per_token.uniform_target(Indicator::Ttft), None);
    }

    #[test]
    fn new_bucket_edges_keep_each_length_s_targets() {
        let ttft = |ms| Targets {
            ttft: Some(TtftTarget::Fixed { ms }),
            ..Targets::default()
        };
        let mut spec = chat();
        spec.classes[0].targets = vec![ttft(500.0), ttft(2500.0), ttft(10_000.0)];
        let ms = |s: &Spec| -> Vec<f64> {
            s.classes[0]
                .targets
                .iter()
                .filter_map(|t| t.ttft?.fixed_ms())
                .collect()
        };
        // One edge removed: <2k and >=2k; the second bucket starts at 2000, in the old 2k–16k.
        let mut fewer = spec.clone();
        fewer.set_bucket_edges(vec![2000]);
        assert_eq!(ms(&fewer), [500.0, 2500.0]);
        // No edges: one bucket, the shortest prompts' targets.
        let mut none = spec.clone();
        none.set_bucket_edges(Vec::new());
        assert_eq!(ms(&none), [500.0]);
        // Edges moved: <4k starts in the old <2k, 4k–32k in 2k–16k, >=32k in >=16k.
        spec.set_bucket_edges(vec![4000, 32_000]);
        assert_eq!(ms(&spec), [500.0, 2500.0, 10_000.0]);
        assert!(spec.validate().is_empty());
    }

    #[test]
    fn a_spec_with_every_field_set_reads_back_without_unknown_fields() {
        // The check for unknown fields compares a spec as written with the spec read back:
        // every field must come back under the name it was read by.
        let spec = every_field();
        assert!(spec.validate().is_empty(), "{:?}", spec.validate());
        assert_eq!(Spec::from_json(&spec.to_json()), Ok(spec));
    }

    #[test]
    fn misspelt_fields_are_refused_with_their_path() {
        let mut value = serde_json::to_value(every_field()).expect("a spec writes out");
        value["classes"][0]["targets"][1]["tpot"] = 50.into();
        value["cancelation"] = "exclude".into();
        value["classes"][1]["rule"]["column"] = "class".into();
        // null is how an absent optional field may be written: not a misspelling.
        value["classes"][0]["targets"][2]["tpot_ms"] = Value::Null;
        value["stall"]["kk"] = Value::Null;
        let errors = Spec::from_json(&value.to_string()).expect_err("three unknown fields");
        let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "cancelation",
                "classes[0].targets[1].tpot",
                "classes[1].rule.column",
            ]
        );
        assert!(errors.iter().all(|e| e.message.contains("misspelling")));
    }

    #[test]
    fn share_fragments_round_trip_and_damage_is_reported() {
        let mut spec = chat();
        spec.service = "Chat <img src=x onerror=alert(1)> & co %".into();
        let fragment = to_share_fragment(&spec);
        assert_eq!(
            from_share_fragment(&format!("#targets&{fragment}")),
            Ok(spec)
        );
        for bad in ["", "#spec=%7", "#spec=%FF%FE", "#spec=%7B%7D", "#report"] {
            assert!(from_share_fragment(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn wrong_version_is_refused_with_a_sentence() {
        let text = chat().to_json().replace("\"version\": 1", "\"version\": 7");
        let errors = Spec::from_json(&text).expect_err("version 7");
        assert_eq!(errors[0].path, "version");
        assert!(errors[0].message.contains("not 7"));
    }
}
