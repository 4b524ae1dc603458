//! Load sweep: one result file per offered request rate, and what the SLO says about them.
//!
//! Each file of a sweep is one load level. [`sweep`] evaluates every level with
//! [`crate::evaluate`] (every count, attainment, percentile and rate comes from there) and
//! lines the results up against the offered rate:
//!
//! - per class and overall: joint attainment (good / attempted, failures in the denominator)
//!   with its 95 % Wilson interval, achieved throughput and goodput, and the spec's percentiles of
//!   TTFT, TPOT and E2E;
//! - [`Capacity`]: the highest measured rate that meets the objective (with every lower rate
//!   meeting it too), the first rate that fails, and the linear interpolation between them;
//! - [`ThroughputView`]: where achieved throughput stops growing, and how far a throughput-only
//!   benchmark overstates the SLO capacity;
//! - [`Lint`]s: closed-loop load, bursty arrivals, fixed lengths, a saturated client, small
//!   samples, and failures the file's own summary left out.
//!
//! Beside it: [`replicas_needed`] and [`provision`] (headroom for one failed replica, per-GPU
//! goodput as in DistServe), and [`scale_curve`] (DistServe's SLO-scale curve: attainment at one
//! rate as every target is multiplied by a factor).
//!
//! Work is split like evaluation: [`prepare_sweep`] does the target-independent part once per
//! file, [`evaluate_sweep`] re-judges every file after a target change.

use serde::{Deserialize, Serialize};

use crate::evaluate::{evaluate, fmt_pct, prepare, Duration, GroupReport, Prepared, Report};
use crate::ingest::{run_duration, Loaded, RequestRate, RunMeta};
use crate::order;
use crate::spec::{Indicator, Spec};
use crate::table::{RequestTable, Status};

/// The indicators whose percentiles a sweep lines up against the rate.
pub const SWEEP_INDICATORS: [Indicator; 3] = [Indicator::Ttft, Indicator::Tpot, Indicator::E2e];

/// Throughput "stops growing" between two rates when it gains less than this fraction of the
/// rate gain (see [`throughput_knee`]).
pub const THROUGHPUT_STALL_SLOPE: f64 = 0.05;

/// A client that sent at less than this fraction of the offered rate is flagged (see
/// [`LintKind::ClientSaturated`]).
pub const SEND_RATE_FLOOR: f64 = 0.98;

/// The factors of the SLO-scale curve: 0.5× to 3× in steps of 0.25.
pub const SCALE_FACTORS: [f64; 11] = [0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0];

/// One loaded result file, with the rate the user typed for it (if any).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepInput {
    pub loaded: Loaded,
    /// A rate typed by the user; it wins over the file's own and over its name.
    pub rate_override: Option<RequestRate>,
}

/// Where a point's offered rate came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateSource {
    /// Typed by the user.
    Typed,
    /// The file's `request_rate`.
    ResultFile,
    /// The file name (`sweep_8.json`, `rate-2.5.json`, `qps12.jsonl`).
    FileName,
}

impl RateSource {
    pub fn describe(self) -> &'static str {
        match self {
            RateSource::Typed => "typed",
            RateSource::ResultFile => "from the file",
            RateSource::FileName => "from the file name",
        }
    }
}

/// One load level of a sweep: a file's requests, what it says about the run, and its rate.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepPoint {
    /// File name, used in every message.
    pub name: String,
    pub table: RequestTable,
    pub meta: RunMeta,
    /// The offered rate; `Infinite` for a closed-loop point (placed by its achieved rate).
    pub rate: RequestRate,
    pub rate_source: RateSource,
    /// The run's duration for throughput and goodput ([`run_duration`]: the span of the request
    /// timestamps, else the duration the file states).
    pub duration: Duration,
}

impl SweepPoint {
    /// A point from a table and its run metadata; the duration is found as for `slo report`.
    pub fn new(
        name: &str,
        table: RequestTable,
        meta: RunMeta,
        rate: RequestRate,
        rate_source: RateSource,
    ) -> SweepPoint {
        let mut loaded = Loaded {
            table,
            meta,
            ..Loaded::default()
        };
        loaded.provenance.name = name.to_string();
        let duration = run_duration(&[&loaded], &loaded.table, None);
        SweepPoint {
            name: name.to_string(),
            table: loaded.table,
            meta: loaded.meta,
            rate,
            rate_source,
            duration,
        }
    }

    /// A point from a loaded file: the typed rate, else the file's `request_rate`, else a rate in
    /// the file name.
    ///
    /// # Edge cases
    /// No usable rate anywhere (missing, zero, negative): a [`RateError`] that says how to give one.
    pub fn from_input(input: SweepInput) -> Result<SweepPoint, RateError> {
        let SweepInput {
            loaded,
            rate_override,
        } = input;
        let name = loaded.provenance.name.clone();
        let valid = |r: RequestRate| match r {
            RequestRate::PerSecond(x) => (x.is_finite() && x > 0.0).then_some(r),
            RequestRate::Infinite => Some(r),
        };
        let (rate, source) = if let Some(typed) = rate_override {
            let rate = valid(typed).ok_or_else(|| RateError {
                file: name.clone(),
                message: format!(
                    "the typed rate {} is not a positive number of requests per second (or inf)",
                    rate_label(typed)
                ),
            })?;
            (rate, RateSource::Typed)
        } else if let Some(rate) = loaded.meta.request_rate.and_then(valid) {
            (rate, RateSource::ResultFile)
        } else if let Some(rate) = rate_from_name(&name) {
            (rate, RateSource::FileName)
        } else {
            let stated = match loaded.meta.request_rate {
                Some(r) => format!(
                    "the file's request_rate, {}, is not a positive rate",
                    rate_label(r)
                ),
                None => "the file states none".to_string(),
            };
            return Err(RateError {
                file: name.clone(),
                message: format!("no request rate: {stated} and its name holds none; type it (in the CLI: --rate FILE=RATE)"),
            });
        };
        let duration = run_duration(&[&loaded], &loaded.table, None);
        Ok(SweepPoint {
            name,
            table: loaded.table,
            meta: loaded.meta,
            rate,
            rate_source: source,
            duration,
        })
    }
}

/// A file whose rate could not be found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RateError {
    pub file: String,
    pub message: String,
}

impl std::fmt::Display for RateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file, self.message)
    }
}

/// Every input as a point; every file without a rate is listed.
pub fn sweep_points(inputs: Vec<SweepInput>) -> Result<Vec<SweepPoint>, Vec<RateError>> {
    let mut points = Vec::new();
    let mut errors = Vec::new();
    for input in inputs {
        match SweepPoint::from_input(input) {
            Ok(p) => points.push(p),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(points)
    } else {
        Err(errors)
    }
}

/// "8 req/s" or "inf".
fn rate_label(rate: RequestRate) -> String {
    match rate {
        RequestRate::PerSecond(r) => format!("{} req/s", fmt_rate(r)),
        RequestRate::Infinite => "inf".to_string(),
    }
}

/// A rate with at most two decimals and no trailing zeros: 8 -> "8", 6.6667 -> "6.67".
pub fn fmt_rate(r: f64) -> String {
    let s = format!("{r:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The offered rate written in a file name.
///
/// # Formula
/// After the extensions are removed (`.json`, `.jsonl`, `.gz`: letters only), the first match of:
/// 1. a keyword (`rate`, `qps`, `rps`, `reqs`, `req`, `sweep`) at the start of a word,
///    optionally followed by `_`, `-`, `=` or `:`, then a number or `inf`;
/// 2. a number followed by `qps`, `rps`, `reqs` or `req` (optionally after `_` or `-`);
/// 3. the only number of the name that stands alone (not glued to letters, as in `llama70b`).
///
/// # Edge cases
/// No rate, several stand-alone numbers, or a rate that is not positive: `None`.
/// # Example
/// ```
/// use slo_core::{ingest::RequestRate, sweep::rate_from_name};
/// assert_eq!(rate_from_name("sweep_8.json"), Some(RequestRate::PerSecond(8.0)));
/// assert_eq!(rate_from_name("rate-2.5.json"), Some(RequestRate::PerSecond(2.5)));
/// assert_eq!(rate_from_name("qps12.jsonl"), Some(RequestRate::PerSecond(12.0)));
/// assert_eq!(rate_from_name("llama70b_4rps.json"), Some(RequestRate::PerSecond(4.0)));
/// assert_eq!(rate_from_name("rate_inf.json"), Some(RequestRate::Infinite));
/// assert_eq!(rate_from_name("results.json"), None);
/// assert_eq!(rate_from_name("2024-05-01_run.json"), None);
/// // `inf` only as a word, and no date taken for a rate.
/// assert_eq!(rate_from_name("sweep_inference_3rps.json"), Some(RequestRate::PerSecond(3.0)));
/// assert_eq!(rate_from_name("rate_info_5.json"), Some(RequestRate::PerSecond(5.0)));
/// assert_eq!(rate_from_name("sweep_20240607_8.json"), None);
/// ```
pub fn rate_from_name(name: &str) -> Option<RequestRate> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let mut stem = base;
    while let Some((head, ext)) = stem.rsplit_once('.') {
        let alphabetic = !ext.is_empty() && ext.chars().all(|c| c.is_ascii_alphabetic());
        if alphabetic && ext.len() <= 5 && !head.is_empty() {
            stem = head;
        } else {
            break;
        }
    }
    let s = stem.to_ascii_lowercase();
    let b = s.as_bytes();
    let at = |i: usize| b.get(i).copied();
    let word_start = |i: usize| i == 0 || at(i - 1).is_some_and(|c| !c.is_ascii_alphabetic());
    let positive = |r: RequestRate| match r {
        RequestRate::PerSecond(x) => (x.is_finite() && x > 0.0).then_some(r),
        RequestRate::Infinite => Some(r),
    };
    // 1. keyword, separator, number.
    for key in ["rate", "qps", "rps", "reqs", "req", "sweep"] {
        let mut from = 0;
        while let Some(found) = s.get(from..).and_then(|t| t.find(key)) {
            let start = from + found;
            from = start + 1;
            if !word_start(start) {
                continue;
            }
            let mut i = start + key.len();
            if at(i).is_some_and(|c| matches!(c, b'_' | b'-' | b'=' | b':')) {
                i += 1;
            }
            // `inf` as a word of its own (`rate_inf`), not the start of one (`sweep_inference`).
            let word: String = s
                .get(i..)
                .unwrap_or("")
                .chars()
                .take_while(char::is_ascii_alphabetic)
                .collect();
            if matches!(word.as_str(), "inf" | "infinite" | "infinity") {
                return Some(RequestRate::Infinite);
            }
            if let Some((x, end)) = number_at(&s, i) {
                // `sweep_20240607_8`: a number followed by another is a date or a run's
                // numbering, not a rate; the name is then left to the rules below.
                let another = at(end).is_some_and(|c| matches!(c, b'_' | b'-'))
                    && at(end + 1).is_some_and(|c| c.is_ascii_digit());
                if let Some(r) = positive(RequestRate::PerSecond(x)).filter(|_| !another) {
                    return Some(r);
                }
            }
        }
    }
    // 2 and 3: numbers, with what follows them.
    let mut alone = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let digit_start = at(i).is_some_and(|c| c.is_ascii_digit())
            && (i == 0 || at(i - 1).is_some_and(|c| !c.is_ascii_digit() && c != b'.'));
        if !digit_start {
            i += 1;
            continue;
        }
        let Some((x, end)) = number_at(&s, i) else {
            i += 1;
            continue;
        };
        let mut j = end;
        if at(j).is_some_and(|c| c == b'_' || c == b'-') {
            j += 1;
        }
        let rest = s.get(j..).unwrap_or("");
        let unit = ["qps", "rps", "reqs", "req"].iter().any(|u| {
            rest.starts_with(u)
                && rest
                    .as_bytes()
                    .get(u.len())
                    .is_none_or(|c| !c.is_ascii_alphabetic())
        });
        if unit {
            return positive(RequestRate::PerSecond(x));
        }
        let glued_before = i > 0 && at(i - 1).is_some_and(|c| c.is_ascii_alphabetic());
        let glued_after = at(end).is_some_and(|c| c.is_ascii_alphanumeric());
        if !glued_before && !glued_after {
            alone.push(x);
        }
        i = end;
    }
    match alone.as_slice() {
        [x] => positive(RequestRate::PerSecond(*x)),
        _ => None,
    }
}

/// The number starting at byte `i` (digits, then optionally `.` and digits), and where it ends.
fn number_at(s: &str, i: usize) -> Option<(f64, usize)> {
    let b = s.as_bytes();
    let digits = |from: usize| {
        b.get(from..)
            .map_or(0, |t| t.iter().take_while(|c| c.is_ascii_digit()).count())
    };
    let int = digits(i);
    if int == 0 {
        return None;
    }
    let mut end = i + int;
    if b.get(end) == Some(&b'.') {
        let frac = digits(end + 1);
        if frac > 0 {
            end += 1 + frac;
        }
    }
    let x: f64 = s.get(i..end)?.parse().ok()?;
    Some((x, end))
}

/// A percentile of one indicator at one rate, by the spec's method.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PercentileAt {
    pub indicator: Indicator,
    /// Percentile in percent (90, 99.9).
    pub q: f64,
    pub value_ms: Option<f64>,
}

/// One group (a class, or overall) at one rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// The file this rate was measured in.
    pub file: String,
    /// Where the point sits: the offered rate, or the achieved rate for a closed-loop point.
    pub rate_rps: f64,
    pub attempted: u64,
    pub completed: u64,
    pub failed: u64,
    pub good: u64,
    /// good / attempted.
    pub attainment: Option<f64>,
    pub attainment_ci95: Option<(f64, f64)>,
    /// good / completed: the convention that drops failures (vLLM's).
    pub attainment_of_completed: Option<f64>,
    /// completed / duration.
    pub throughput_rps: Option<f64>,
    /// good / duration.
    pub goodput_rps: Option<f64>,
    pub meets_objective: Option<bool>,
    /// The spec's percentiles of TTFT, TPOT and E2E (completed requests).
    pub percentiles: Vec<PercentileAt>,
}

impl CurvePoint {
    /// The value of percentile `q` of `indicator`, if measured.
    pub fn percentile(&self, indicator: Indicator, q: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|p| p.indicator == indicator && p.q == q)
            .and_then(|p| p.value_ms)
    }
}

/// What the capacity figure is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapacityKind {
    /// Some rates pass, then one fails: capacity lies between them.
    Crossing,
    /// Every measured rate meets the objective: capacity is at least the highest.
    AllPass,
    /// The lowest measured rate already fails: capacity is below it.
    NonePass,
    /// No rate has attempted requests in this group.
    NoData,
}

/// The SLO capacity of one group, read off its attainment curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    pub kind: CapacityKind,
    /// The capacity: the highest measured rate meeting the objective, every lower rate meeting it
    /// too (for `AllPass`, the highest rate measured: a lower bound).
    pub passing_rps: Option<f64>,
    /// The lowest measured rate that misses the objective.
    pub first_failing_rps: Option<f64>,
    /// Linear interpolation between (passing, its attainment) and (first failing, its
    /// attainment) at attainment = objective: an estimate, not a measurement.
    pub crossing_rps: Option<f64>,
    /// Rates above the first failing one at which attainment is higher than at the rate before.
    pub rises_again_rps: Vec<f64>,
    /// Rates above the first failing one that meet the objective again.
    pub passes_again_rps: Vec<f64>,
    /// The finding in one or two sentences.
    pub message: String,
}

/// Whether a figure is a measurement or a bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// The figure as measured (or estimated) from the sweep.
    Estimate,
    /// The true value is at least this.
    AtLeast,
    /// The true value is at most this (for a capacity below the lowest rate: less than it).
    AtMost,
}

impl Capacity {
    /// The capacity figure and what kind of figure it is: the passing rate (`Estimate`), the
    /// highest rate when every rate passes (`AtLeast`), the lowest rate when none does (`AtMost`).
    pub fn figure(&self) -> Option<(f64, Bound)> {
        match self.kind {
            CapacityKind::Crossing => self.passing_rps.map(|r| (r, Bound::Estimate)),
            CapacityKind::AllPass => self.passing_rps.map(|r| (r, Bound::AtLeast)),
            CapacityKind::NonePass => self.first_failing_rps.map(|r| (r, Bound::AtMost)),
            CapacityKind::NoData => None,
        }
    }
}

/// The rate at which attainment crosses the objective, by linear interpolation between two
/// measured rates.
///
/// # Formula
/// r* = r0 + (a0 - objective) · (r1 - r0) / (a0 - a1), for a0 >= objective > a1.
/// # Edge cases
/// The objective not in [a1, a0], a0 == a1, or any input not finite: `None`. a0 == objective
/// gives r0.
/// # Example
/// ```
/// use slo_core::sweep::interpolate_crossing;
/// // 99.5 % at 6 req/s, 98 % at 8 req/s: 99 % is a third of the way.
/// let r = interpolate_crossing(6.0, 0.995, 8.0, 0.98, 0.99).unwrap();
/// assert!((r - 6.0 - 2.0 / 3.0).abs() < 1e-12);
/// assert_eq!(interpolate_crossing(6.0, 0.98, 8.0, 0.97, 0.99), None);
/// ```
pub fn interpolate_crossing(r0: f64, a0: f64, r1: f64, a1: f64, objective: f64) -> Option<f64> {
    if ![r0, a0, r1, a1, objective].iter().all(|x| x.is_finite()) {
        return None;
    }
    if !(a0 >= objective && objective > a1) {
        return None;
    }
    Some(r0 + (a0 - objective) * (r1 - r0) / (a0 - a1))
}

/// Capacity from an attainment curve: (rate, attainment) pairs.
///
/// # Formula
/// Sort by rate. The first failing rate is the lowest with attainment < objective; the capacity
/// (`passing_rps`) is the rate just below it, so every rate up to the capacity passes; the
/// crossing is [`interpolate_crossing`] between the two.
/// # Edge cases
/// - No pairs: `NoData`. Pairs with a non-finite rate or attainment are left out.
/// - Every rate passes: `AllPass`, capacity at least the highest rate.
/// - The lowest rate fails: `NonePass`, capacity below the lowest rate.
/// - Non-monotone: rates above the first failure where attainment rises again (and where it
///   passes again) are listed; a pass above a failure does not raise the capacity, since the
///   rates between did not hold.
/// - Rises below the first failure (99.5 % then 99.8 %) are ordinary noise and not listed.
/// # Example
/// ```
/// use slo_core::sweep::{capacity, CapacityKind};
/// let c = capacity(&[(4.0, 1.0), (6.0, 0.995), (8.0, 0.98)], 0.99);
/// assert_eq!(c.kind, CapacityKind::Crossing);
/// assert_eq!((c.passing_rps, c.first_failing_rps), (Some(6.0), Some(8.0)));
/// assert!((c.crossing_rps.unwrap() - 6.6666666666666667).abs() < 1e-9);
/// assert_eq!(capacity(&[(4.0, 1.0)], 0.99).kind, CapacityKind::AllPass);
/// ```
pub fn capacity(curve: &[(f64, f64)], objective: f64) -> Capacity {
    let mut pts: Vec<(f64, f64)> = curve
        .iter()
        .copied()
        .filter(|(r, a)| r.is_finite() && a.is_finite())
        .collect();
    // By rate, and at one rate the lowest attainment first: a rate passes only when every file
    // measured at it does, whatever the files are called.
    order::sort_by(&mut pts, |x, y| {
        x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1))
    });
    let obj = fmt_pct(objective);
    let Some(&(lowest, _)) = pts.first() else {
        return Capacity {
            kind: CapacityKind::NoData,
            passing_rps: None,
            first_failing_rps: None,
            crossing_rps: None,
            rises_again_rps: Vec::new(),
            passes_again_rps: Vec::new(),
            message: "no rate has attempted requests here, so there is no capacity to read"
                .to_string(),
        };
    };
    let first_fail = pts.iter().position(|(_, a)| *a < objective);
    let (mut rises, mut passes) = (Vec::new(), Vec::new());
    if let Some(f) = first_fail {
        for w in pts.get(f..).unwrap_or(&[]).windows(2) {
            if let [(_, a_prev), (r, a)] = w {
                if a > a_prev {
                    rises.push(*r);
                }
                if *a >= objective {
                    passes.push(*r);
                }
            }
        }
    }
    let mut cap = Capacity {
        kind: CapacityKind::NoData,
        passing_rps: None,
        first_failing_rps: None,
        crossing_rps: None,
        rises_again_rps: rises,
        passes_again_rps: passes,
        message: String::new(),
    };
    match first_fail {
        None => {
            let highest = pts.last().map_or(lowest, |p| p.0);
            cap.kind = CapacityKind::AllPass;
            cap.passing_rps = Some(highest);
            cap.message = format!(
                "every measured rate meets the objective {obj}: capacity is at least {} req/s, the highest rate measured; measure higher rates to find the limit",
                fmt_rate(highest)
            );
        }
        Some(0) => {
            cap.kind = CapacityKind::NonePass;
            cap.first_failing_rps = Some(lowest);
            cap.message = format!(
                "no measured rate meets the objective {obj}: capacity is below {} req/s, the lowest rate measured; measure lower rates",
                fmt_rate(lowest)
            );
        }
        Some(f) => {
            let (r0, a0) = pts.get(f - 1).copied().unwrap_or((lowest, 1.0));
            let (r1, a1) = pts.get(f).copied().unwrap_or((r0, a0));
            cap.kind = CapacityKind::Crossing;
            cap.passing_rps = Some(r0);
            cap.first_failing_rps = Some(r1);
            cap.crossing_rps = interpolate_crossing(r0, a0, r1, a1, objective);
            cap.message = format!(
                "{} req/s is the highest measured rate meeting the objective {obj} ({} there); {} req/s is the first that fails ({})",
                fmt_rate(r0),
                fmt_pct(a0),
                fmt_rate(r1),
                fmt_pct(a1)
            );
            if let Some(x) = cap.crossing_rps {
                cap.message.push_str(&format!(
                    "; linear interpolation between them puts the crossing at {} req/s",
                    fmt_rate(x)
                ));
            }
        }
    }
    if !cap.rises_again_rps.is_empty() {
        let list = |v: &[f64]| {
            v.iter()
                .map(|r| fmt_rate(*r))
                .collect::<Vec<_>>()
                .join(", ")
        };
        cap.message.push_str(&format!(
            ". The curve is not monotone: attainment rises again at {} req/s",
            list(&cap.rises_again_rps)
        ));
        if !cap.passes_again_rps.is_empty() {
            cap.message.push_str(&format!(
                " and meets the objective again at {} req/s",
                list(&cap.passes_again_rps)
            ));
        }
        cap.message.push_str(
            "; the capacity stays below the first failure. Re-measure those rates with more requests",
        );
    }
    cap
}

/// The rate after which achieved throughput stops growing.
///
/// # Formula
/// Over (rate, throughput) pairs sorted by rate, the slope between neighbours is
/// s_i = (T_i - T_{i-1}) / (r_i - r_{i-1}). Throughput stops growing at r_{i-1} for the first i
/// with s_i < [`THROUGHPUT_STALL_SLOPE`] (0.05: under 5 % of the added load comes out as added
/// throughput).
/// # Edge cases
/// Fewer than two rates, or a slope that never drops that low: `None` (still growing at the
/// highest rate). Neighbours at the same rate are skipped.
/// # Example
/// ```
/// use slo_core::sweep::throughput_knee;
/// let pts = [(6.0, 6.0), (8.0, 7.9), (10.0, 9.0), (12.0, 9.05)];
/// assert_eq!(throughput_knee(&pts), Some(10.0));
/// assert_eq!(throughput_knee(&pts[..3]), None);
/// ```
pub fn throughput_knee(points: &[(f64, f64)]) -> Option<f64> {
    let mut pts: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(r, t)| r.is_finite() && t.is_finite())
        .collect();
    order::sort_by(&mut pts, |x, y| x.0.total_cmp(&y.0));
    pts.windows(2).find_map(|w| match w {
        [(r0, t0), (r1, t1)] if r1 > r0 => {
            ((t1 - t0) / (r1 - r0) < THROUGHPUT_STALL_SLOPE).then_some(*r0)
        }
        _ => None,
    })
}

/// The capacity a throughput-only benchmark would claim, against the SLO capacity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThroughputView {
    /// The rate after which throughput stops growing ([`throughput_knee`]), over open-loop points.
    pub knee_rps: Option<f64>,
    /// The highest achieved throughput over open-loop points: what a throughput-only benchmark
    /// reports as capacity.
    pub max_throughput_rps: Option<f64>,
    /// True when throughput levelled off within the measured rates.
    pub levelled_off: bool,
    /// max throughput / SLO capacity.
    pub overstatement: Option<f64>,
    pub overstatement_bound: Bound,
    pub message: String,
}

fn throughput_view(curve: &[CurvePoint], open_loop: &[bool], cap: &Capacity) -> ThroughputView {
    let pts: Vec<(f64, f64)> = curve
        .iter()
        .zip(open_loop)
        .filter(|(_, open)| **open)
        .filter_map(|(p, _)| Some((p.rate_rps, p.throughput_rps?)))
        .collect();
    let knee = throughput_knee(&pts);
    let max_thr = pts.iter().map(|p| p.1).reduce(f64::max);
    let levelled = knee.is_some();
    let mut view = ThroughputView {
        knee_rps: knee,
        max_throughput_rps: max_thr,
        levelled_off: levelled,
        overstatement: None,
        overstatement_bound: Bound::Estimate,
        message: String::new(),
    };
    let Some(max_thr) = max_thr else {
        view.message = if pts.is_empty() && !curve.is_empty() {
            "no open-loop point with a known duration, so the throughput curve cannot be read"
                .to_string()
        } else {
            "no throughput was measured (the durations are unknown)".to_string()
        };
        return view;
    };
    let mut msg = match knee {
        Some(k) => format!(
            "achieved throughput stops growing after {} req/s (the next step adds under {} of its load as throughput); a throughput-only benchmark would claim about {} req/s",
            fmt_rate(k),
            fmt_pct(THROUGHPUT_STALL_SLOPE),
            fmt_rate(max_thr)
        ),
        None => format!(
            "achieved throughput is still growing at the highest rate; a throughput-only benchmark would claim at least {} req/s",
            fmt_rate(max_thr)
        ),
    };
    let bound = match (cap.kind, levelled) {
        (CapacityKind::Crossing, true) => Some(Bound::Estimate),
        (CapacityKind::Crossing, false) | (CapacityKind::NonePass, _) => Some(Bound::AtLeast),
        (CapacityKind::AllPass, true) => Some(Bound::AtMost),
        (CapacityKind::AllPass, false) | (CapacityKind::NoData, _) => None,
    };
    let ratio = cap
        .figure()
        .filter(|(c, _)| *c > 0.0)
        .map(|(c, _)| max_thr / c);
    match (ratio, bound) {
        (Some(x), Some(b)) => {
            view.overstatement = Some(x);
            view.overstatement_bound = b;
            let how = match b {
                Bound::Estimate => "",
                Bound::AtLeast => "at least ",
                Bound::AtMost => "at most ",
            };
            if x > 1.0 {
                msg.push_str(&format!(
                    ", which overstates the SLO capacity by {how}{x:.1}×"
                ));
            } else {
                msg.push_str(&format!(
                    ", no more than the SLO capacity ({how}{x:.2}×)"
                ));
            }
        }
        _ if cap.kind == CapacityKind::AllPass => msg.push_str(
            "; the ratio to the SLO capacity is unknown (every rate passes and throughput had not levelled off)",
        ),
        _ => msg.push_str("; no SLO capacity could be read to compare it with"),
    }
    view.message = msg;
    view
}

/// A group's curve: one point per rate, and its capacity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    /// The class, or `None` for all requests.
    pub class: Option<String>,
    /// By rate, ascending.
    pub points: Vec<CurvePoint>,
    pub capacity: Capacity,
}

/// A file of the sweep as placed on the curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointInfo {
    /// Index in the `points` slice given to [`sweep`].
    pub index: usize,
    pub name: String,
    pub offered: RequestRate,
    pub rate_source: RateSource,
    /// Where the point sits: the offered rate, or the achieved throughput for rate inf.
    pub rate_rps: f64,
    /// Rate inf: placed by its achieved rate.
    pub closed_loop: bool,
    pub duration: Duration,
    /// The rate requests were sent at, from their start times ([`send_rate_rps`]).
    pub send_rate_rps: Option<f64>,
}

/// What kind of problem a lint is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LintKind {
    /// max_concurrency set, or rate inf: the client waits for the server, which hides queueing.
    ClosedLoop,
    /// Arrivals not Poisson (burstiness != 1).
    Burstiness,
    /// Every request had the same input length, or the same output length.
    FixedLength,
    /// Requests were sent at under 98 % of the offered rate.
    ClientSaturated,
    /// Fewer attempted requests than the spec's `min_requests`.
    FewRequests,
    /// Failed requests that the file's own summary leaves out, and that count as bad here.
    HiddenFailures,
    /// The file counts more failures than it has failed requests we could read.
    MissingFailures,
    /// A typed rate differs from the file's own.
    RateOverridden,
    /// Two files at the same rate.
    DuplicateRate,
    /// A closed-loop point without a known duration: it cannot be placed, and is left out.
    Unplaced,
}

/// A problem with a sweep file, said in a sentence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lint {
    pub kind: LintKind,
    /// The file it is about (`None` for the sweep as a whole).
    pub file: Option<String>,
    pub message: String,
}

/// The full result of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    pub objective: f64,
    /// Placed files, by rate ascending (closed-loop points by achieved rate).
    pub points: Vec<PointInfo>,
    /// All requests first (`class: None`), then one curve per class of the spec.
    pub curves: Vec<Curve>,
    /// The capacity that binds: the lowest over the classes (every class must meet the objective).
    pub capacity: Capacity,
    /// The class whose capacity binds.
    pub binding_class: Option<String>,
    pub throughput: ThroughputView,
    pub lints: Vec<Lint>,
}

impl SweepReport {
    /// The curve of all requests.
    pub fn overall(&self) -> Option<&Curve> {
        self.curves.iter().find(|c| c.class.is_none())
    }

    /// The rate of the SLO-scale curve when none is chosen: the first failing rate of the binding
    /// curve (how much looser the targets would have to be to hold there), else the highest rate.
    pub fn default_scale_rate(&self) -> Option<f64> {
        self.capacity
            .first_failing_rps
            .or_else(|| self.points.last().map(|p| p.rate_rps))
    }

    /// The index (into the `points` given to [`sweep`]) of the placed point nearest `rate_rps`.
    pub fn nearest_point(&self, rate_rps: f64) -> Option<usize> {
        self.points
            .iter()
            .min_by(|a, b| {
                (a.rate_rps - rate_rps)
                    .abs()
                    .total_cmp(&(b.rate_rps - rate_rps).abs())
            })
            .map(|p| p.index)
    }
}

/// The target-independent work of a sweep: [`prepare`] for every point.
pub fn prepare_sweep(points: &[SweepPoint], spec: &Spec) -> Vec<Prepared> {
    points.iter().map(|p| prepare(&p.table, spec)).collect()
}

/// Prepares and evaluates every point of a sweep.
///
/// # Formula
/// For each point, [`evaluate`] gives the counts, attainment = good / attempted (failures in the
/// denominator) with its 95 % Wilson interval, throughput = completed / duration, goodput =
/// good / duration, and the spec's percentiles; [`capacity`] and [`throughput_knee`] read the
/// curves.
/// # Edge cases
/// No points: empty curves, `NoData` capacity. A closed-loop point (rate inf) without a known
/// duration cannot be placed: it is left out with an `Unplaced` lint.
/// # Example
/// ```
/// use slo_core::{ingest::{RequestRate, RunMeta}, spec::{Spec, Targets, TtftTarget}};
/// use slo_core::sweep::{sweep, CapacityKind, RateSource, SweepPoint};
/// use slo_core::table::{RequestTable, Row};
/// let point = |rate: f64, slow: usize| {
///     let mut t = RequestTable::default();
///     for k in 0..10 {
///         let ttft = if k < slow { 900.0 } else { 100.0 };
///         let row = Row { ttft_ms: Some(ttft), e2e_ms: Some(1000.0), output_tokens: Some(10.0), ..Row::default() };
///         t.push(row, 0, k as u32 + 2, "x");
///     }
///     let meta = RunMeta { duration_s: Some(10.0 / rate), ..RunMeta::default() };
///     SweepPoint::new(&format!("rate_{rate}.json"), t, meta, RequestRate::PerSecond(rate), RateSource::FileName)
/// };
/// let spec = Spec::single(Targets { ttft: Some(TtftTarget::Fixed { ms: 500.0 }), ..Targets::default() });
/// let r = sweep(&[point(1.0, 0), point(2.0, 0), point(4.0, 3)], &spec);
/// assert_eq!(r.capacity.kind, CapacityKind::Crossing);
/// assert_eq!(r.capacity.passing_rps, Some(2.0));
/// assert_eq!(r.capacity.first_failing_rps, Some(4.0));
/// ```
pub fn sweep(points: &[SweepPoint], spec: &Spec) -> SweepReport {
    evaluate_sweep(points, &prepare_sweep(points, spec), spec)
}

/// Evaluates every point of a sweep with `prepared` from [`prepare_sweep`] (a point whose
/// preparation is missing or stale is prepared afresh, as [`evaluate`] does).
pub fn evaluate_sweep(points: &[SweepPoint], prepared: &[Prepared], spec: &Spec) -> SweepReport {
    let mut lints = Vec::new();
    // Evaluate and place every point.
    let mut placed: Vec<(PointInfo, Report)> = Vec::new();
    for (index, p) in points.iter().enumerate() {
        let report = match prepared.get(index) {
            Some(prep) => evaluate(&p.table, prep, spec, &p.duration),
            None => evaluate(&p.table, &prepare(&p.table, spec), spec, &p.duration),
        };
        let (rate_rps, closed_loop) = match p.rate {
            RequestRate::PerSecond(r) => (Some(r), false),
            RequestRate::Infinite => (report.overall.throughput_rps, true),
        };
        let Some(rate_rps) = rate_rps.filter(|r| r.is_finite() && *r > 0.0) else {
            lints.push(Lint {
                kind: LintKind::Unplaced,
                file: Some(p.name.clone()),
                message: format!(
                    "rate inf and no known duration ({}): its achieved rate is unknown, so it cannot be placed on the curve and is left out; type a rate for it",
                    p.duration.how
                ),
            });
            continue;
        };
        let info = PointInfo {
            index,
            name: p.name.clone(),
            offered: p.rate,
            rate_source: p.rate_source,
            rate_rps,
            closed_loop,
            duration: p.duration.clone(),
            send_rate_rps: send_rate_rps(&p.table),
        };
        lint_point(p, &info, &report, spec, &mut lints);
        placed.push((info, report));
    }
    order::sort_by(&mut placed, |a, b| {
        a.0.rate_rps
            .total_cmp(&b.0.rate_rps)
            .then_with(|| a.0.name.cmp(&b.0.name))
    });
    for w in placed.windows(2) {
        if let [(a, _), (b, _)] = w {
            if a.rate_rps == b.rate_rps {
                lints.push(Lint {
                    kind: LintKind::DuplicateRate,
                    file: Some(b.name.clone()),
                    message: format!(
                        "{} and {} are both at {} req/s: both are plotted, and the capacity reads them in name order; merge or re-measure them",
                        a.name,
                        b.name,
                        fmt_rate(a.rate_rps)
                    ),
                });
            }
        }
    }

    let curve_of = |class: Option<&str>| -> Curve {
        let pts: Vec<CurvePoint> = placed
            .iter()
            .filter_map(|(info, report)| {
                let g = match class {
                    None => Some(&report.overall),
                    Some(name) => report
                        .classes
                        .iter()
                        .find(|g| g.class.as_deref() == Some(name)),
                }?;
                Some(curve_point(&info.name, info.rate_rps, g))
            })
            .collect();
        let pairs: Vec<(f64, f64)> = pts
            .iter()
            .filter_map(|p| Some((p.rate_rps, p.attainment?)))
            .collect();
        Curve {
            class: class.map(str::to_string),
            capacity: capacity(&pairs, spec.objective),
            points: pts,
        }
    };
    let mut curves = vec![curve_of(None)];
    for class in &spec.classes {
        curves.push(curve_of(Some(&class.name)));
    }
    // The binding capacity: the lowest over the classes.
    let rank = |c: &Capacity| -> Option<(u8, f64)> {
        match c.kind {
            CapacityKind::NonePass => Some((0, c.first_failing_rps?)),
            CapacityKind::Crossing => Some((1, c.passing_rps?)),
            CapacityKind::AllPass => Some((2, c.passing_rps?)),
            CapacityKind::NoData => None,
        }
    };
    let binding = curves
        .iter()
        .filter(|c| c.class.is_some())
        .filter_map(|c| Some((rank(&c.capacity)?, c)))
        .min_by(|(a, _), (b, _)| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
        .map(|(_, c)| c);
    let (cap, binding_class) = match binding {
        Some(c) => (c.capacity.clone(), c.class.clone()),
        None => (
            curves
                .first()
                .map(|c| c.capacity.clone())
                .unwrap_or_else(|| capacity(&[], spec.objective)),
            None,
        ),
    };
    // Lints in the order of the curve (unplaced files last).
    order::sort_by_key(&mut lints, |l| {
        placed
            .iter()
            .position(|(info, _)| Some(&info.name) == l.file.as_ref())
            .unwrap_or(usize::MAX)
    });
    let open_loop: Vec<bool> = placed.iter().map(|(i, _)| !i.closed_loop).collect();
    let throughput = match curves.first() {
        Some(overall) => throughput_view(&overall.points, &open_loop, &cap),
        None => throughput_view(&[], &[], &cap),
    };
    SweepReport {
        objective: spec.objective,
        points: placed.into_iter().map(|(info, _)| info).collect(),
        curves,
        capacity: cap,
        binding_class,
        throughput,
        lints,
    }
}

fn curve_point(file: &str, rate_rps: f64, g: &GroupReport) -> CurvePoint {
    let percentiles = SWEEP_INDICATORS
        .iter()
        .flat_map(|&ind| {
            g.indicators
                .iter()
                .filter(move |r| r.indicator == ind)
                .flat_map(move |r| {
                    r.stats.percentiles.iter().map(move |p| PercentileAt {
                        indicator: ind,
                        q: p.q,
                        value_ms: p.value,
                    })
                })
        })
        .collect();
    CurvePoint {
        file: file.to_string(),
        rate_rps,
        attempted: g.attempted,
        completed: g.completed,
        failed: g.failed,
        good: g.good,
        attainment: g.attainment,
        attainment_ci95: g.attainment_ci95,
        attainment_of_completed: g.attainment_of_completed,
        throughput_rps: g.throughput_rps,
        goodput_rps: g.goodput_rps,
        meets_objective: g.meets_objective,
        percentiles,
    }
}

/// The rate at which requests were sent, from their start times.
///
/// # Formula
/// send_rps = (n - 1) / (max start - min start) over the n requests with a start time: n - 1
/// gaps between first and last send.
/// # Edge cases
/// Fewer than two start times, or all at one instant: `None`.
/// # Example
/// ```
/// use slo_core::table::{RequestTable, Row};
/// let mut t = RequestTable::default();
/// for k in 0..5 {
///     t.push(Row { start_s: Some(100.0 + k as f64 * 0.25), ..Row::default() }, 0, k + 2, "x");
/// }
/// assert_eq!(slo_core::sweep::send_rate_rps(&t), Some(4.0));
/// ```
pub fn send_rate_rps(table: &RequestTable) -> Option<f64> {
    let (mut lo, mut hi, mut n) = (f64::INFINITY, f64::NEG_INFINITY, 0u64);
    for row in 0..table.len() {
        if let Some(s) = table.start_s(row) {
            lo = lo.min(s);
            hi = hi.max(s);
            n += 1;
        }
    }
    let span = hi - lo;
    (n >= 2 && span.is_finite() && span > 0.0).then(|| (n - 1) as f64 / span)
}

/// The lowest send rate, as a fraction of the offered rate, that chance alone explains.
///
/// # Formula
/// min(0.98, 1 - 2 / sqrt((n - 1) · k)): the send rate of n requests with gamma inter-arrival
/// times of shape k (k = burstiness, 1 = Poisson) has a relative standard error of about
/// 1 / sqrt((n - 1) k); below two standard errors and 98 % the client did not keep up.
fn send_rate_floor(n: u64, burstiness: f64) -> f64 {
    let k = if burstiness.is_finite() && burstiness > 0.0 {
        burstiness
    } else {
        1.0
    };
    let chance = 2.0 / (((n.saturating_sub(1)) as f64 * k).sqrt()).max(1.0);
    SEND_RATE_FLOOR.min(1.0 - chance)
}

fn lint_point(p: &SweepPoint, info: &PointInfo, report: &Report, spec: &Spec, out: &mut Vec<Lint>) {
    let mut lint = |kind: LintKind, message: String| {
        out.push(Lint {
            kind,
            file: Some(p.name.clone()),
            message,
        })
    };
    let g = &report.overall;
    // Closed loop.
    match (p.rate, p.meta.max_concurrency) {
        (RequestRate::Infinite, Some(c)) => lint(LintKind::ClosedLoop, format!(
            "rate inf with max concurrency {c}: closed-loop load, where the client waits for the server and so hides queueing; it is placed at its achieved rate {} req/s, not an offered one. Use open-loop arrivals (a finite --request-rate) for SLO sweeps",
            fmt_rate(info.rate_rps)
        )),
        (RequestRate::Infinite, None) => lint(LintKind::ClosedLoop, format!(
            "rate inf: every request was sent at once, which is a burst, not a steady load; it is placed at its achieved rate {} req/s, not an offered one. Use a finite --request-rate for SLO sweeps",
            fmt_rate(info.rate_rps)
        )),
        (RequestRate::PerSecond(r), Some(c)) => lint(LintKind::ClosedLoop, format!(
            "max concurrency {c} at {} req/s: when {c} requests are in flight the client waits for the server instead of sending, which hides queueing (closed-loop load); drop --max-concurrency for SLO sweeps",
            fmt_rate(r)
        )),
        (RequestRate::PerSecond(_), None) => {}
    }
    // Burstiness.
    if let Some(b) = p.meta.burstiness.filter(|b| (b - 1.0).abs() > 1e-9) {
        let how = if b < 1.0 {
            "burstier than Poisson arrivals"
        } else {
            "smoother than Poisson arrivals (real traffic is usually burstier, so this may overstate capacity)"
        };
        lint(LintKind::Burstiness, format!(
            "burstiness {b}: arrivals were {how}; the capacity holds for this arrival pattern only, so compare it with sweeps of the same burstiness"
        ));
    }
    // Fixed lengths.
    let same = |column: &dyn Fn(usize) -> Option<f64>,
                rows: &mut dyn Iterator<Item = usize>|
     -> Option<(f64, u64)> {
        let mut first = None;
        let mut n = 0u64;
        for row in rows {
            let Some(v) = column(row) else {
                continue;
            };
            match first {
                None => first = Some(v),
                Some(f) if f != v => return None,
                Some(_) => {}
            }
            n += 1;
        }
        first.filter(|_| n >= 2).map(|f| (f, n))
    };
    let t = &p.table;
    let input = same(&|r| t.input_tokens(r), &mut (0..t.len()));
    let output = same(
        &|r| t.output_tokens(r),
        &mut (0..t.len()).filter(|&r| t.status.get(r) == Some(&Status::Ok)),
    );
    let fixed = match (input, output) {
        (Some((i, n)), Some((o, _))) => Some(format!(
            "all {n} requests have {i} input and {o} output tokens"
        )),
        (Some((i, n)), None) => Some(format!("all {n} requests have {i} input tokens")),
        (None, Some((o, n))) => Some(format!("all {n} completed requests have {o} output tokens")),
        (None, None) => None,
    };
    if let Some(what) = fixed {
        lint(LintKind::FixedLength, format!(
            "{what}: a fixed-length benchmark; real lengths have long tails, so replay a sample of production lengths as well"
        ));
    }
    // Client saturation: requests sent slower than offered, beyond chance.
    if let (RequestRate::PerSecond(offered), Some(sent)) = (p.rate, info.send_rate_rps) {
        let n = (0..t.len()).filter(|&r| t.start_s(r).is_some()).count() as u64;
        let floor = send_rate_floor(n, p.meta.burstiness.unwrap_or(1.0));
        if sent < floor * offered {
            lint(LintKind::ClientSaturated, format!(
                "requests were sent at {} req/s, {} of the offered {} req/s (below {} and more than chance explains): the client or a concurrency cap did not keep up, so this point measured a lower load than its label",
                fmt_rate(sent),
                fmt_pct(sent / offered),
                fmt_rate(offered),
                fmt_pct(SEND_RATE_FLOOR)
            ));
        }
    }
    // Sample size.
    if g.attempted < spec.min_requests {
        lint(LintKind::FewRequests, format!(
            "{} attempted requests, fewer than the spec's {}: one request moves attainment by {} points, and the 95 % interval is wide",
            g.attempted,
            spec.min_requests,
            if g.attempted > 0 { format!("{:.2}", 100.0 / g.attempted as f64) } else { "100".to_string() }
        ));
    }
    // Failures the file's own summary drops.
    let stated_failed = p.meta.failed.unwrap_or(0);
    let goodput_key = p.meta.summary.contains_key("request_goodput");
    if g.failed > 0 && (stated_failed > 0 || goodput_key) {
        let mut message = format!(
            "{} of {} attempted requests failed; the file's own summary (its percentiles{}) covers completed requests only, while here every failure counts as attempted and bad",
            g.failed,
            g.attempted,
            if goodput_key { " and request_goodput" } else { "" }
        );
        if let (Some(a), Some(c)) = (g.attainment, g.attainment_of_completed) {
            message.push_str(&format!(
                ": attainment {} over attempted, {} over completed",
                fmt_pct(a),
                fmt_pct(c)
            ));
        }
        lint(LintKind::HiddenFailures, message);
    }
    if stated_failed > g.failed {
        lint(LintKind::MissingFailures, format!(
            "the file says {stated_failed} requests failed but only {} failed requests could be read: the missing ones are not in the denominator, so attainment here is overstated",
            g.failed
        ));
    }
    // A typed rate that differs from the file's own.
    if let (RateSource::Typed, Some(own)) = (p.rate_source, p.meta.request_rate) {
        if own != p.rate {
            lint(
                LintKind::RateOverridden,
                format!(
                    "the file says its rate is {}, but {} was typed and is used",
                    rate_label(own),
                    rate_label(p.rate)
                ),
            );
        }
    }
}

/// Replicas to provision for a peak, with headroom for one failed replica.
///
/// # Formula
/// N = ceil(peak / capacity) + 1: N - 1 replicas carry the peak, one more covers a failure.
/// The ratio is taken down by 1e-9 (relative) before `ceil`, so that float noise such as
/// 2.7 / 0.3 = 9.000000000000002 does not add a replica.
/// # Edge cases
/// Capacity not a positive finite number, or peak negative or not finite: `None`. Peak 0: 1.
/// # Example
/// ```
/// use slo_core::sweep::replicas_needed;
/// assert_eq!(replicas_needed(40.0, 6.0), Some(8)); // 7 carry 40 req/s, +1 spare
/// assert_eq!(replicas_needed(12.0, 6.0), Some(3));
/// assert_eq!(replicas_needed(1.1, 0.1), Some(12));
/// assert!(2.7 / 0.3 > 9.0); // the noise
/// assert_eq!(replicas_needed(2.7, 0.3), Some(10)); // 9 carry the peak, +1 spare
/// assert_eq!(replicas_needed(10.0, 0.0), None);
/// ```
pub fn replicas_needed(peak_rps: f64, capacity_rps_per_replica: f64) -> Option<u64> {
    if !(capacity_rps_per_replica.is_finite() && capacity_rps_per_replica > 0.0) {
        return None;
    }
    if !(peak_rps.is_finite() && peak_rps >= 0.0) {
        return None;
    }
    let ratio = peak_rps / capacity_rps_per_replica;
    let carry = (ratio - 1e-9 * ratio.max(1.0)).ceil().max(0.0);
    if carry >= u64::MAX as f64 {
        return None;
    }
    Some(carry as u64 + 1)
}

/// Per-GPU goodput as DistServe defines it: the highest rate served within the SLO attainment
/// goal, divided by the GPUs that serve it.
///
/// # Formula
/// per_gpu = capacity_rps_per_replica / gpus_per_replica.
/// # Edge cases
/// Zero GPUs, or a capacity that is negative or not finite: `None`.
/// # Example
/// ```
/// assert_eq!(slo_core::sweep::per_gpu_goodput(6.0, 4), Some(1.5));
/// assert_eq!(slo_core::sweep::per_gpu_goodput(6.0, 0), None);
/// ```
pub fn per_gpu_goodput(capacity_rps_per_replica: f64, gpus_per_replica: u32) -> Option<f64> {
    (gpus_per_replica > 0
        && capacity_rps_per_replica.is_finite()
        && capacity_rps_per_replica >= 0.0)
        .then(|| capacity_rps_per_replica / f64::from(gpus_per_replica))
}

/// How many replicas and GPUs a peak needs, from a sweep's capacity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provisioning {
    pub peak_rps: Option<f64>,
    /// The capacity per replica used (the sweep measured one replica).
    pub capacity_rps: Option<f64>,
    pub capacity_bound: Option<Bound>,
    /// [`replicas_needed`] at that capacity.
    pub replicas: Option<u64>,
    /// `AtMost` when every rate passed (capacity may be higher), `AtLeast` when none did.
    pub replicas_bound: Bound,
    pub gpus_per_replica: Option<u32>,
    pub gpus: Option<u64>,
    /// [`per_gpu_goodput`] at that capacity.
    pub per_gpu_goodput_rps: Option<f64>,
    pub per_gpu_goodput_bound: Bound,
    pub message: String,
}

/// Replicas for `peak_rps` and per-GPU goodput, from a sweep's capacity (the measured passing
/// rate, not the interpolated crossing: the conservative figure).
///
/// # Edge cases
/// Every rate passed: capacity is a lower bound, so replicas are at most the figure. None
/// passed: capacity is below the lowest rate, so replicas are at least the figure computed with
/// that rate, and per-GPU goodput less than its figure.
/// # Example
/// ```
/// use slo_core::sweep::{capacity, provision, Bound};
/// let cap = capacity(&[(4.0, 1.0), (6.0, 0.995), (8.0, 0.98)], 0.99);
/// let p = provision(&cap, Some(40.0), Some(2));
/// assert_eq!(p.replicas, Some(8));
/// assert_eq!(p.replicas_bound, Bound::Estimate);
/// assert_eq!(p.gpus, Some(16));
/// assert_eq!(p.per_gpu_goodput_rps, Some(3.0));
/// ```
pub fn provision(
    cap: &Capacity,
    peak_rps: Option<f64>,
    gpus_per_replica: Option<u32>,
) -> Provisioning {
    let figure = cap.figure().filter(|(c, _)| *c > 0.0);
    let capacity_rps = figure.map(|f| f.0);
    let capacity_bound = figure.map(|f| f.1);
    let replicas = match (peak_rps, capacity_rps) {
        (Some(peak), Some(c)) => replicas_needed(peak, c),
        _ => None,
    };
    let (replicas_bound, per_gpu_bound) = match capacity_bound {
        Some(Bound::AtLeast) => (Bound::AtMost, Bound::AtLeast),
        Some(Bound::AtMost) => (Bound::AtLeast, Bound::AtMost),
        _ => (Bound::Estimate, Bound::Estimate),
    };
    let gpus = replicas
        .zip(gpus_per_replica)
        .and_then(|(r, g)| r.checked_mul(u64::from(g)));
    let per_gpu = match (capacity_rps, gpus_per_replica) {
        (Some(c), Some(g)) => per_gpu_goodput(c, g),
        _ => None,
    };
    let word = |b: Bound| match b {
        Bound::Estimate => "",
        Bound::AtLeast => "at least ",
        Bound::AtMost => "at most ",
    };
    let mut parts = Vec::new();
    match (capacity_rps, capacity_bound) {
        (Some(c), Some(b)) => {
            let cap_text = match b {
                Bound::Estimate => format!(
                    "{} req/s per replica (the highest measured rate that meets the objective)",
                    fmt_rate(c)
                ),
                Bound::AtLeast => format!(
                    "at least {} req/s per replica (every measured rate met the objective)",
                    fmt_rate(c)
                ),
                Bound::AtMost => format!(
                    "below {} req/s per replica (no measured rate met the objective)",
                    fmt_rate(c)
                ),
            };
            parts.push(format!("capacity {cap_text}"));
        }
        _ => parts.push("no capacity could be read from the sweep".to_string()),
    }
    if let (Some(peak), Some(n)) = (peak_rps, replicas) {
        parts.push(format!(
            "a peak of {} req/s needs {}{n} replicas ({} carry the peak, 1 more covers a failed replica)",
            fmt_rate(peak),
            word(replicas_bound),
            n.saturating_sub(1)
        ));
    } else if let Some(peak) = peak_rps {
        parts.push(format!(
            "the replicas for a peak of {} req/s cannot be counted",
            fmt_rate(peak)
        ));
    }
    if let (Some(g), Some(n)) = (gpus_per_replica, gpus) {
        parts.push(format!(
            "at {g} GPUs per replica that is {}{n} GPUs",
            word(replicas_bound)
        ));
    }
    if let (Some(x), Some(g)) = (per_gpu, gpus_per_replica) {
        let w = match per_gpu_bound {
            Bound::AtMost => "less than ",
            b => word(b),
        };
        parts.push(format!(
            "per-GPU goodput (DistServe: capacity / {g} GPUs) {w}{} req/s",
            fmt_rate(x)
        ));
    }
    Provisioning {
        peak_rps,
        capacity_rps,
        capacity_bound,
        replicas,
        replicas_bound,
        gpus_per_replica,
        gpus,
        per_gpu_goodput_rps: per_gpu,
        per_gpu_goodput_bound: per_gpu_bound,
        message: parts.join("; "),
    }
}

/// Attainment at one factor of the SLO-scale curve.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScalePoint {
    /// Every target multiplied by this.
    pub factor: f64,
    pub attempted: u64,
    pub good: u64,
    pub attainment: Option<f64>,
    pub attainment_ci95: Option<(f64, f64)>,
    pub meets_objective: Option<bool>,
}

/// DistServe's SLO-scale curve at one rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScaleCurve {
    pub file: String,
    /// Where the point sits (offered rate, or achieved rate for rate inf).
    pub rate_rps: Option<f64>,
    pub points: Vec<ScalePoint>,
    /// The smallest listed factor whose attainment meets the objective.
    pub passing_from_factor: Option<f64>,
    pub message: String,
}

/// `spec` with every target of every class and bucket multiplied by `factor` ([`crate::spec::Targets::scaled`]).
pub fn scaled_spec(spec: &Spec, factor: f64) -> Spec {
    let mut s = spec.clone();
    for class in &mut s.classes {
        for t in &mut class.targets {
            *t = t.scaled(factor);
        }
    }
    s
}

/// The SLO-scale curve (DistServe): attainment of all requests at one rate as every target is
/// multiplied by each factor.
///
/// # Formula
/// For each factor f: attainment (good / attempted) under `scaled_spec(spec, f)`, evaluated on one
/// [`prepare`] of the point (scaling changes no grouping).
/// # Edge cases
/// Factors that are not positive and finite are skipped. No factor passes: `passing_from_factor`
/// is `None`.
/// # Example
/// ```
/// use slo_core::{ingest::{RequestRate, RunMeta}, spec::{Spec, Targets, TtftTarget}};
/// use slo_core::sweep::{scale_curve, RateSource, SweepPoint};
/// use slo_core::table::{RequestTable, Row};
/// let mut t = RequestTable::default();
/// for (k, ttft) in [100.0, 200.0, 600.0, 900.0].into_iter().enumerate() {
///     t.push(Row { ttft_ms: Some(ttft), ..Row::default() }, 0, k as u32 + 2, "x");
/// }
/// let p = SweepPoint::new("rate_8.json", t, RunMeta::default(), RequestRate::PerSecond(8.0), RateSource::FileName);
/// let spec = Spec::single(Targets { ttft: Some(TtftTarget::Fixed { ms: 500.0 }), ..Targets::default() });
/// let c = scale_curve(&p, &spec, &[1.0, 1.5, 2.0]);
/// let att: Vec<Option<f64>> = c.points.iter().map(|s| s.attainment).collect();
/// assert_eq!(att, [Some(0.5), Some(0.75), Some(1.0)]); // 500, 750, 1000 ms
/// assert_eq!(c.passing_from_factor, Some(2.0));
/// ```
pub fn scale_curve(point: &SweepPoint, spec: &Spec, factors: &[f64]) -> ScaleCurve {
    scale_curve_prepared(point, &prepare(&point.table, spec), spec, factors)
}

/// [`scale_curve`] with the point already prepared for `spec`'s grouping.
pub fn scale_curve_prepared(
    point: &SweepPoint,
    prepared: &Prepared,
    spec: &Spec,
    factors: &[f64],
) -> ScaleCurve {
    let mut points = Vec::new();
    let mut achieved = None;
    for &f in factors.iter().filter(|f| f.is_finite() && **f > 0.0) {
        let r = evaluate(
            &point.table,
            prepared,
            &scaled_spec(spec, f),
            &point.duration,
        );
        achieved = achieved.or(r.overall.throughput_rps);
        let g = &r.overall;
        points.push(ScalePoint {
            factor: f,
            attempted: g.attempted,
            good: g.good,
            attainment: g.attainment,
            attainment_ci95: g.attainment_ci95,
            meets_objective: g.meets_objective,
        });
    }
    let rate_rps = match point.rate {
        RequestRate::PerSecond(r) => Some(r),
        RequestRate::Infinite => achieved,
    };
    let passing_from = points
        .iter()
        .filter(|p| p.meets_objective == Some(true))
        .map(|p| p.factor)
        .reduce(f64::min);
    let at = match rate_rps {
        Some(r) => format!("at {} req/s ({})", fmt_rate(r), point.name),
        None => format!("in {}", point.name),
    };
    let as_written = points
        .iter()
        .find(|p| p.factor == 1.0)
        .and_then(|p| p.attainment);
    let mut message = match as_written {
        Some(a) => format!(
            "{at}, attainment is {} with the targets as written",
            fmt_pct(a)
        ),
        None => at.clone(),
    };
    match passing_from {
        Some(f) if f < 1.0 => message.push_str(&format!(
            "; the objective {} still holds with every target multiplied by {f} (tighter)",
            fmt_pct(spec.objective)
        )),
        Some(f) if f > 1.0 => message.push_str(&format!(
            "; the objective {} is met once every target is multiplied by {f} (looser)",
            fmt_pct(spec.objective)
        )),
        Some(_) => message.push_str(&format!(
            "; the objective {} holds at the targets as written and not when they are tighter",
            fmt_pct(spec.objective)
        )),
        None => message.push_str(&format!(
            "; the objective {} is not met even with every target multiplied by {}",
            fmt_pct(spec.objective),
            points
                .last()
                .map_or("the largest factor".to_string(), |p| p.factor.to_string())
        )),
    }
    ScaleCurve {
        file: point.name.clone(),
        rate_rps,
        points,
        passing_from_factor: passing_from,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_rate_floor_allows_for_chance() {
        // 200 Poisson arrivals: 2 standard errors is about 14 %, more than the 2 % floor.
        assert!((send_rate_floor(200, 1.0) - (1.0 - 2.0 / 199f64.sqrt())).abs() < 1e-12);
        // Millions of arrivals: the 98 % floor binds.
        assert_eq!(send_rate_floor(4_000_000, 1.0), SEND_RATE_FLOOR);
        // Burstier arrivals are noisier.
        assert!(send_rate_floor(1000, 0.5) < send_rate_floor(1000, 1.0));
    }

    #[test]
    fn number_at_reads_decimals_but_not_a_trailing_dot() {
        assert_eq!(number_at("r2.5x", 1), Some((2.5, 4)));
        assert_eq!(number_at("r2.x", 1), Some((2.0, 2)));
        assert_eq!(number_at("rx", 1), None);
    }
}
