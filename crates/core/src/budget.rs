//! Error budget, burn rate and burn-rate alerts from per-request outcomes; and the queue-vs-TTFT
//! diagnosis of latency incidents.
//!
//! - [`events`] judges every request of a log against its cell's targets (with
//!   [`crate::evaluate::prepare`] and [`crate::evaluate::judge`]) and keeps one [`Event`]
//!   `(t_s, good)` per attempted request: the boolean per request that the guide asks for.
//!   Callers with their own booleans can build the events directly.
//! - [`error_budget`] is the arithmetic of the objective; [`budget`] spends it over time: consumed,
//!   remaining, burn rate per slice, time to exhaustion, and the multiwindow burn-rate alerts of
//!   the Google SRE workbook (ch. 5, "Alerting on SLOs") that would have fired, and when.
//! - [`diagnose`] tells, slice by slice, whether a TTFT rise came with queueing (short of
//!   capacity) or without (prefill got slower: longer prompts, or fewer prefix-cache hits).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::evaluate::{judge, prepare};
use crate::quantile::{percentile_sorted, Method};
use crate::spec::Spec;
use crate::table::{RequestTable, Status};

/// Seconds per day.
pub const DAY_S: f64 = 86_400.0;
/// Alerts are evaluated every minute, on one-minute bins (a common rule evaluation interval).
pub const ALERT_STEP_S: f64 = 60.0;
/// The most slices [`budget`] or [`diagnose`] will make; a finer slicing is refused.
pub const MAX_SLICES: usize = 1_000_000;

/// One attempted request: when it arrived and whether it was good.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Arrival time, seconds on the log's clock (epoch seconds for most logs).
    pub t_s: f64,
    pub good: bool,
}

/// The attempted requests of a log as events, and what was left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Events {
    /// Sorted by time.
    pub events: Vec<Event>,
    /// Cancelled requests excluded by the spec's cancellation policy.
    pub excluded: u64,
    /// Requests no class claimed.
    pub unassigned: u64,
    /// Attempted requests without a start (or end) timestamp: they cannot be placed in time.
    pub no_timestamp: u64,
    /// Of those, how many were bad (they still count in the log's totals, not in the windows).
    pub no_timestamp_bad: u64,
}

/// Judges every request against its class × bucket cell's targets and keeps the attempted ones.
///
/// # Formula
/// good_i = `judge(table, prepare(table, spec), i, targets of i's cell, spec.cancellations)`;
/// t_i = start time, or end time when the log has no start. Excluded cancellations are dropped.
/// # Edge cases
/// Requests without any timestamp are counted in `no_timestamp`; requests no class claims in
/// `unassigned`. A spec with no latency target makes only errors and timeouts bad.
/// # Example
/// ```
/// use slo_core::{budget::events, spec::{Spec, Targets, TtftTarget}, table::{RequestTable, Row}};
/// let mut t = RequestTable::default();
/// for (s, ttft) in [(10.0, 100.0), (5.0, 900.0)] {
///     t.push(Row { start_s: Some(s), ttft_ms: Some(ttft), ..Row::default() }, 0, 2, "a");
/// }
/// let spec = Spec::single(Targets { ttft: Some(TtftTarget::Fixed { ms: 500.0 }), ..Targets::default() });
/// let e = events(&t, &spec);
/// assert_eq!(e.events.iter().map(|e| (e.t_s, e.good)).collect::<Vec<_>>(), [(5.0, false), (10.0, true)]);
/// ```
pub fn events(table: &RequestTable, spec: &Spec) -> Events {
    let prepared = prepare(table, spec);
    let mut out = Events::default();
    for row in 0..table.len() {
        let Some(key) = prepared
            .cell_of
            .get(row)
            .and_then(|&c| prepared.cells.get(c as usize))
        else {
            out.unassigned += 1;
            continue;
        };
        let targets = spec
            .classes
            .get(key.class)
            .and_then(|c| c.targets.get(key.bucket.unwrap_or(0)).or(c.targets.first()))
            .copied()
            .unwrap_or_default();
        let verdict = judge(table, &prepared, row, &targets, spec.cancellations);
        if !verdict.attempted() {
            out.excluded += 1;
            continue;
        }
        match table.start_s(row).or_else(|| table.end_s(row)) {
            Some(t_s) => out.events.push(Event {
                t_s,
                good: verdict.good(),
            }),
            None => {
                out.no_timestamp += 1;
                if !verdict.good() {
                    out.no_timestamp_bad += 1;
                }
            }
        }
    }
    // One event per request with a timestamp, a million for a day's log: the standard sort,
    // about twice as fast here as `order::sort_by`'s sort of positions.
    out.events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    out
}

/// The budget an objective allows.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorBudget {
    /// 1 - objective.
    pub allowed_bad_fraction: f64,
    /// allowed_bad_fraction × requests per window, when the volume is known.
    pub allowed_bad_requests: Option<f64>,
}

/// The error budget of an objective.
///
/// # Formula
/// allowed bad fraction = 1 - objective; allowed bad requests = (1 - objective) × volume, where
/// volume is the number of requests in one SLO window.
/// # Edge cases
/// An objective outside (0, 1): `None`. A volume that is not a positive finite number: no count.
/// # Example
/// ```
/// let b = slo_core::budget::error_budget(0.99, Some(1_000_000.0)).unwrap();
/// assert!((b.allowed_bad_fraction - 0.01).abs() < 1e-12);
/// assert!((b.allowed_bad_requests.unwrap() - 10_000.0).abs() < 1e-6);
/// assert_eq!(slo_core::budget::error_budget(1.0, None), None);
/// ```
pub fn error_budget(objective: f64, volume: Option<f64>) -> Option<ErrorBudget> {
    if !(objective > 0.0 && objective < 1.0) {
        return None;
    }
    let allowed_bad_fraction = 1.0 - objective;
    Some(ErrorBudget {
        allowed_bad_fraction,
        allowed_bad_requests: volume
            .filter(|v| v.is_finite() && *v > 0.0)
            .map(|v| v * allowed_bad_fraction),
    })
}

/// Page or ticket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Page,
    Ticket,
}

/// A multiwindow burn-rate alert: it fires while the burn rate over both the long and the short
/// window is above `burn_rate`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BurnAlert {
    pub name: String,
    pub severity: Severity,
    /// The share of a 30-day budget this alert is meant to catch being spent in the long window.
    pub budget_fraction: f64,
    pub long_s: f64,
    pub short_s: f64,
    pub burn_rate: f64,
}

/// The three alerts the Google SRE workbook recommends (ch. 5, table 5-8): page on 2 % of the
/// budget in 1 h (5 min short window, burn rate 14.4), page on 5 % in 6 h (30 min, 6), ticket on
/// 10 % in 3 days (6 h, 1).
///
/// The burn rates are the workbook's, derived for a 30-day window; with another window the same
/// rates mean a slightly different share of the budget (reported by [`budget`] as
/// `budget_fraction_for_window`).
///
/// # Example
/// ```
/// let a = slo_core::budget::sre_workbook_alerts();
/// let rates: Vec<f64> = a.iter().map(|a| a.burn_rate).collect();
/// assert_eq!(rates, [14.4, 6.0, 1.0]);
/// // 14.4 = 2 % of a 30-day budget spent in 1 h: 0.02 · 720 h / 1 h.
/// assert!((a[0].budget_fraction * 30.0 * 24.0 * 3600.0 / a[0].long_s - 14.4).abs() < 1e-9);
/// ```
pub fn sre_workbook_alerts() -> Vec<BurnAlert> {
    let alert =
        |name: &str, severity, budget_fraction, long_h: f64, short_min: f64, burn_rate| BurnAlert {
            name: name.to_string(),
            severity,
            budget_fraction,
            long_s: long_h * 3600.0,
            short_s: short_min * 60.0,
            burn_rate,
        };
    vec![
        alert("2 % in 1 h", Severity::Page, 0.02, 1.0, 5.0, 14.4),
        alert("5 % in 6 h", Severity::Page, 0.05, 6.0, 30.0, 6.0),
        alert("10 % in 3 d", Severity::Ticket, 0.10, 72.0, 360.0, 1.0),
    ]
}

/// Settings of [`budget`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BudgetConfig {
    /// Joint-attainment objective, in (0, 1).
    pub objective: f64,
    pub window_days: f64,
    /// Requests per window. `None`: taken from the log (extrapolated when the log is shorter).
    pub volume: Option<f64>,
    /// Width of the burn-rate slices.
    pub slice_s: f64,
    /// The burn rate called "current" is the one over this last stretch of the log.
    pub current_s: f64,
    pub alerts: Vec<BurnAlert>,
}

impl BudgetConfig {
    /// Hourly slices, current burn over the last hour, the SRE workbook's alerts.
    pub fn new(objective: f64, window_days: f64) -> BudgetConfig {
        BudgetConfig {
            objective,
            window_days,
            volume: None,
            slice_s: 3600.0,
            current_s: 3600.0,
            alerts: sre_workbook_alerts(),
        }
    }
}

/// A setting [`budget`] or [`diagnose`] cannot work with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BudgetError {
    Objective { value: f64 },
    Window { days: f64 },
    Volume { value: f64 },
    Slice { seconds: f64 },
    TooManySlices { slices: f64 },
    Alert { name: String },
    Percentile { q: f64 },
    NoQueueTimes,
    NoTtft,
}

impl fmt::Display for BudgetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BudgetError::Objective { value } => write!(
                f,
                "the objective is a fraction strictly between 0 and 1 (0.99 for 99 %), not {value}"
            ),
            BudgetError::Window { days } => {
                write!(f, "the window must be between 1 minute and 10 years, not {days} days")
            }
            BudgetError::Volume { value } => {
                write!(f, "the volume must be a positive number of requests, not {value}")
            }
            BudgetError::Slice { seconds } => {
                write!(f, "a slice must be at least 1 second long, not {seconds} s")
            }
            BudgetError::TooManySlices { slices } => write!(
                f,
                "the log would make {slices:.0} slices (at most {MAX_SLICES}); use longer slices"
            ),
            BudgetError::Alert { name } => write!(
                f,
                "alert {name:?}: windows and burn rate must be positive, and the short window shorter than the long one"
            ),
            BudgetError::Percentile { q } => write!(f, "a percentile lies in 0..100, not {q}"),
            BudgetError::NoQueueTimes => write!(
                f,
                "the log has no queue times, so TTFT cannot be split into queueing and prefill"
            ),
            BudgetError::NoTtft => {
                write!(f, "the log has no completed requests with a TTFT and a timestamp")
            }
        }
    }
}

/// Where the request volume came from.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum VolumeSource {
    /// Given by the user.
    Typed,
    /// The log covers the whole window: its attempted requests.
    Log,
    /// The log covers `covered_s` of the window: attempted × window / covered.
    Extrapolated { covered_s: f64 },
}

/// One time slice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slice {
    pub start_s: f64,
    pub attempted: u64,
    pub bad: u64,
    /// bad / attempted; `None` when nothing was attempted.
    pub bad_fraction: Option<f64>,
    /// bad_fraction / allowed bad fraction.
    pub burn_rate: Option<f64>,
}

impl Slice {
    /// True when the slice spent its budget faster than the window allows: burn above 1 (see
    /// [`burns_faster`]).
    pub fn over_budget(&self) -> bool {
        self.burn_rate.is_some_and(|b| burns_faster(b, 1.0))
    }
}

/// Whether a burn rate is above `threshold`.
///
/// A burn rate is a quotient of fractions, so one that equals the threshold on paper can come out
/// a rounding error above it: 6 bad of 60 at objective 0.9 is 0.1 / (1 − 0.9) =
/// 1.0000000000000002, since 1 − 0.9 is 0.09999999999999998 in binary. A relative margin of
/// 10⁻⁹ keeps such a tie from firing an alert, as "above the threshold" promises; a difference
/// of one request in a billion still counts.
///
/// # Example
/// ```
/// use slo_core::budget::burns_faster;
/// let burn = (6.0 / 60.0) / (1.0 - 0.9);
/// assert!(burn > 1.0);                 // the rounding error
/// assert!(!burns_faster(burn, 1.0));   // a tie is not above
/// assert!(burns_faster((7.0 / 60.0) / (1.0 - 0.9), 1.0));
/// ```
pub fn burns_faster(burn: f64, threshold: f64) -> bool {
    burn > threshold * (1.0 + 1e-9)
}

/// A duration for people, shared by the CLI and the app: "1 d 19 h", "3 h 5 min", "42 min", "30 s".
///
/// # Example
/// ```
/// assert_eq!(slo_core::budget::fmt_span(155_000.0), "1 d 19 h");
/// assert_eq!(slo_core::budget::fmt_span(2520.0), "42 min");
/// assert_eq!(slo_core::budget::fmt_span(30.0), "30 s");
/// ```
pub fn fmt_span(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    let (d, h, m) = (s / 86_400, s % 86_400 / 3600, s % 3600 / 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s} s"),
        (0, 0, m) => format!("{m} min"),
        (0, h, 0) => format!("{h} h"),
        (0, h, m) => format!("{h} h {m} min"),
        (d, 0, _) => format!("{d} d"),
        (d, h, _) => format!("{d} d {h} h"),
    }
}

/// The budget left after each slice: the burn-down.
///
/// # Formula
/// remaining_k = 1 - (bad_1 + ... + bad_k) / allowed_bad_requests, at the end of slice k
/// (start_s + slice_s); it goes below 0 once the budget is overspent.
/// # Edge cases
/// No allowed number of bad requests (no volume known, or an objective of 1): empty.
/// Tested in `tests/budget.rs` over a synthetic 28-day log with a known incident.
pub fn burn_down(report: &BudgetReport) -> Vec<(f64, f64)> {
    let Some(allowed) = report.allowed_bad_requests.filter(|a| *a > 0.0) else {
        return Vec::new();
    };
    let mut bad = 0u64;
    report
        .slices
        .iter()
        .map(|s| {
            bad += s.bad;
            (s.start_s + report.slice_s, 1.0 - bad as f64 / allowed)
        })
        .collect()
}

/// A stretch of time during which an alert fired: `[start_s, end_s)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub start_s: f64,
    /// The first evaluation at which it no longer fired (or the log's end, when `ongoing`).
    pub end_s: f64,
    /// Still firing when the log ends.
    pub ongoing: bool,
}

impl Interval {
    /// How long the alert fired, in seconds (to the log's end when `ongoing`).
    pub fn duration_s(&self) -> f64 {
        self.end_s - self.start_s
    }
}

/// What one alert would have done over the log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AlertHistory {
    pub alert: BurnAlert,
    /// The share of this window's budget spent in one long window at exactly the alert's burn rate:
    /// burn_rate × long / window.
    pub budget_fraction_for_window: f64,
    pub first_fired_s: Option<f64>,
    pub intervals: Vec<Interval>,
}

/// The slice with the highest burn rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeakBurn {
    pub start_s: f64,
    pub burn_rate: f64,
    pub attempted: u64,
    pub bad: u64,
}

/// The budget spent by a log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BudgetReport {
    pub objective: f64,
    pub window_days: f64,
    pub allowed_bad_fraction: f64,
    /// The part of the log inside the window (the last `window_days` up to its last request).
    pub from_s: Option<f64>,
    pub to_s: Option<f64>,
    /// Whole alert bins covered by the log inside the window, seconds.
    pub covered_s: f64,
    pub attempted: u64,
    pub bad: u64,
    pub bad_fraction: Option<f64>,
    /// Requests left out because they came before the window.
    pub before_window: u64,
    /// Requests per window.
    pub volume: Option<f64>,
    pub volume_source: Option<VolumeSource>,
    pub allowed_bad_requests: Option<f64>,
    /// bad / allowed bad requests: the share of the budget spent (above 1 when overspent).
    pub consumed: Option<f64>,
    /// 1 - consumed.
    pub remaining: Option<f64>,
    /// allowed bad requests - bad.
    pub remaining_requests: Option<f64>,
    pub slice_s: f64,
    pub slices: Vec<Slice>,
    pub peak: Option<PeakBurn>,
    /// The burn rate over the last `current_s` of the log.
    pub current_burn: Option<f64>,
    pub current_s: f64,
    /// At the current burn, how long until the budget is gone (0 when it already is; `None` when
    /// nothing is being spent).
    pub time_to_exhaustion_s: Option<f64>,
    pub alerts: Vec<AlertHistory>,
    pub notes: Vec<String>,
}

fn validate(config: &BudgetConfig) -> Result<(), BudgetError> {
    if !(config.objective > 0.0 && config.objective < 1.0) {
        return Err(BudgetError::Objective {
            value: config.objective,
        });
    }
    let window_s = config.window_days * DAY_S;
    if !(window_s >= ALERT_STEP_S && config.window_days <= 3660.0) {
        return Err(BudgetError::Window {
            days: config.window_days,
        });
    }
    if let Some(v) = config.volume {
        if !(v.is_finite() && v > 0.0) {
            return Err(BudgetError::Volume { value: v });
        }
    }
    for s in [config.slice_s, config.current_s] {
        if !(s.is_finite() && s >= 1.0) {
            return Err(BudgetError::Slice { seconds: s });
        }
    }
    for a in &config.alerts {
        let ok = a.long_s.is_finite()
            && a.short_s > 0.0
            && a.short_s <= a.long_s
            && a.burn_rate.is_finite()
            && a.burn_rate >= 0.0;
        if !ok {
            return Err(BudgetError::Alert {
                name: a.name.clone(),
            });
        }
    }
    Ok(())
}

/// Whole bins in `seconds`, at least one.
fn bins_in(seconds: f64) -> usize {
    ((seconds / ALERT_STEP_S).round() as usize).max(1)
}

/// Spends the error budget over a log of events.
///
/// # Formula
/// Only the last window of the log counts: events in the `window_days` that end with the
/// one-minute bin of the last event. With a = 1 - objective:
/// - volume V: typed; else the attempted requests when the log covers the window; else
///   attempted × window / covered (extrapolated).
/// - consumed = bad / (a · V); remaining = 1 - consumed.
/// - burn rate of a slice = (bad / attempted) / a. Slices are `slice_s` wide, aligned to
///   multiples of `slice_s` on the log's clock (so hourly slices start on the hour).
/// - current burn b = the burn rate over the last `current_s`; time to exhaustion =
///   remaining · window / b (budget left divided by the rate it is spent at, with traffic at its
///   average rate V / window).
/// - alerts (SRE workbook, multiwindow): evaluated at the end of every one-minute bin; an alert
///   fires while burn(long window) > rate AND burn(short window) > rate (strictly, as the
///   workbook's rules write `>`). A window with no attempted request does not fire.
/// # Edge cases
/// - No events: counts are 0 and every figure is `None`.
/// - Early in the log, windows reach back before its first request and are computed over the
///   data there is (as Prometheus does over a range with partial data).
/// - Invalid settings: `Err` naming the setting.
/// # Example
/// ```
/// use slo_core::budget::{budget, BudgetConfig, Event};
/// // One day, one request a minute, the first 30 bad.
/// let events: Vec<Event> = (0..1440).map(|i| Event { t_s: i as f64 * 60.0, good: i >= 30 }).collect();
/// let config = BudgetConfig::new(0.99, 1.0);
/// let r = budget(&events, &config).unwrap();
/// assert_eq!((r.attempted, r.bad), (1440, 30));
/// assert!((r.consumed.unwrap() - 30.0 / 14.4).abs() < 1e-9); // the day's budget is 14.4 bad
/// assert!((r.peak.unwrap().burn_rate - 50.0).abs() < 1e-9);   // 30 of 60 bad in the first hour
/// ```
pub fn budget(events: &[Event], config: &BudgetConfig) -> Result<BudgetReport, BudgetError> {
    validate(config)?;
    let a = 1.0 - config.objective;
    let window_bins = bins_in(config.window_days * DAY_S);
    let window_s = window_bins as f64 * ALERT_STEP_S;
    let mut report = BudgetReport {
        objective: config.objective,
        window_days: config.window_days,
        allowed_bad_fraction: a,
        from_s: None,
        to_s: None,
        covered_s: 0.0,
        attempted: 0,
        bad: 0,
        bad_fraction: None,
        before_window: 0,
        volume: config.volume,
        volume_source: config.volume.map(|_| VolumeSource::Typed),
        allowed_bad_requests: config.volume.map(|v| v * a),
        consumed: None,
        remaining: None,
        remaining_requests: None,
        slice_s: config.slice_s,
        slices: Vec::new(),
        peak: None,
        current_burn: None,
        current_s: config.current_s,
        time_to_exhaustion_s: None,
        alerts: Vec::new(),
        notes: Vec::new(),
    };
    let last = events
        .iter()
        .map(|e| e.t_s)
        .filter(|t| t.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    if !last.is_finite() {
        report.alerts = config
            .alerts
            .iter()
            .map(|alert| AlertHistory {
                alert: alert.clone(),
                budget_fraction_for_window: alert.burn_rate * alert.long_s / window_s,
                first_fired_s: None,
                intervals: Vec::new(),
            })
            .collect();
        return Ok(report);
    }
    let end_s = ((last / ALERT_STEP_S).floor() + 1.0) * ALERT_STEP_S;
    let window_start = end_s - window_s;
    let inside: Vec<Event> = events
        .iter()
        .copied()
        .filter(|e| e.t_s.is_finite() && e.t_s >= window_start)
        .collect();
    report.before_window = events
        .iter()
        .filter(|e| e.t_s.is_finite() && e.t_s < window_start)
        .count() as u64;
    let first = inside.iter().map(|e| e.t_s).fold(last, f64::min);
    let start_s = (first / ALERT_STEP_S).floor() * ALERT_STEP_S;
    let n_bins = (((end_s - start_s) / ALERT_STEP_S).round() as usize).clamp(1, window_bins);
    report.from_s = Some(first);
    report.to_s = Some(last);
    report.covered_s = n_bins as f64 * ALERT_STEP_S;

    // One-minute bins for the alerts and the current burn.
    let mut attempted_bins = vec![0u64; n_bins];
    let mut bad_bins = vec![0u64; n_bins];
    let bin_of =
        |t: f64| (((t - start_s) / ALERT_STEP_S).floor().max(0.0) as usize).min(n_bins - 1);
    for e in &inside {
        let k = bin_of(e.t_s);
        if let (Some(att), Some(bad)) = (attempted_bins.get_mut(k), bad_bins.get_mut(k)) {
            *att += 1;
            if !e.good {
                *bad += 1;
            }
        }
    }
    report.attempted = inside.len() as u64;
    report.bad = inside.iter().filter(|e| !e.good).count() as u64;
    report.bad_fraction =
        (report.attempted > 0).then(|| report.bad as f64 / report.attempted as f64);
    if report.before_window > 0 {
        report.notes.push(format!(
            "{} requests before the window (the last {} days of the log) are left out",
            report.before_window, config.window_days
        ));
    }

    if config.volume.is_none() && report.attempted > 0 {
        let (volume, source) = if n_bins >= window_bins {
            (report.attempted as f64, VolumeSource::Log)
        } else {
            (
                report.attempted as f64 * window_s / report.covered_s,
                VolumeSource::Extrapolated {
                    covered_s: report.covered_s,
                },
            )
        };
        report.volume = Some(volume);
        report.volume_source = Some(source);
        report.allowed_bad_requests = Some(volume * a);
        if matches!(source, VolumeSource::Extrapolated { .. }) {
            report.notes.push(format!(
                "the log covers {:.2} of the {} days of the window; the volume is extrapolated from its request rate (type --volume for the real one)",
                report.covered_s / DAY_S,
                config.window_days
            ));
        }
    }
    if let Some(allowed) = report.allowed_bad_requests.filter(|x| *x > 0.0) {
        let consumed = report.bad as f64 / allowed;
        report.consumed = Some(consumed);
        report.remaining = Some(1.0 - consumed);
        report.remaining_requests = Some(allowed - report.bad as f64);
    }

    // Slices.
    let slice_first = (first / config.slice_s).floor();
    let slice_last = (last / config.slice_s).floor();
    let n_slices = slice_last - slice_first + 1.0;
    if !(n_slices >= 1.0 && n_slices <= MAX_SLICES as f64) {
        return Err(BudgetError::TooManySlices { slices: n_slices });
    }
    let n_slices = n_slices as usize;
    let mut slice_counts = vec![(0u64, 0u64); n_slices];
    for e in &inside {
        let k = ((e.t_s / config.slice_s).floor() - slice_first).max(0.0) as usize;
        if let Some(c) = slice_counts.get_mut(k.min(n_slices - 1)) {
            c.0 += 1;
            if !e.good {
                c.1 += 1;
            }
        }
    }
    let burn =
        |attempted: u64, bad: u64| (attempted > 0).then(|| (bad as f64 / attempted as f64) / a);
    report.slices = slice_counts
        .iter()
        .enumerate()
        .map(|(k, &(attempted, bad))| Slice {
            start_s: (slice_first + k as f64) * config.slice_s,
            attempted,
            bad,
            bad_fraction: (attempted > 0).then(|| bad as f64 / attempted as f64),
            burn_rate: burn(attempted, bad),
        })
        .collect();
    report.peak = report
        .slices
        .iter()
        .filter_map(|s| Some((s, s.burn_rate?)))
        .fold(None, |best: Option<(&Slice, f64)>, (s, b)| match best {
            Some((_, bb)) if bb >= b => best,
            _ => Some((s, b)),
        })
        .map(|(s, b)| PeakBurn {
            start_s: s.start_s,
            burn_rate: b,
            attempted: s.attempted,
            bad: s.bad,
        });

    // Prefix sums over the bins.
    let mut p_att = Vec::with_capacity(n_bins + 1);
    let mut p_bad = Vec::with_capacity(n_bins + 1);
    p_att.push(0u64);
    p_bad.push(0u64);
    for (att, bad) in attempted_bins.iter().zip(&bad_bins) {
        p_att.push(p_att.last().copied().unwrap_or(0) + att);
        p_bad.push(p_bad.last().copied().unwrap_or(0) + bad);
    }
    // Burn over the `w` bins ending with bin k.
    let burn_over = |k: usize, w: usize| {
        let hi = k + 1;
        let lo = hi.saturating_sub(w);
        let att = p_att.get(hi).copied().unwrap_or(0) - p_att.get(lo).copied().unwrap_or(0);
        let bad = p_bad.get(hi).copied().unwrap_or(0) - p_bad.get(lo).copied().unwrap_or(0);
        burn(att, bad)
    };
    report.current_burn = burn_over(n_bins - 1, bins_in(config.current_s));
    report.time_to_exhaustion_s = match (report.remaining, report.current_burn) {
        (Some(r), _) if r <= 0.0 => Some(0.0),
        (Some(r), Some(b)) if b > 0.0 => Some(r * window_s / b),
        _ => None,
    };
    let eval_time = |k: usize| start_s + (k + 1) as f64 * ALERT_STEP_S;
    for alert in &config.alerts {
        let (long, short) = (bins_in(alert.long_s), bins_in(alert.short_s));
        let mut intervals: Vec<Interval> = Vec::new();
        let mut open: Option<f64> = None;
        for k in 0..n_bins {
            let over = |w| burn_over(k, w).is_some_and(|b| burns_faster(b, alert.burn_rate));
            let firing = over(long) && over(short);
            match (firing, open) {
                (true, None) => open = Some(eval_time(k)),
                (false, Some(s)) => {
                    intervals.push(Interval {
                        start_s: s,
                        end_s: eval_time(k),
                        ongoing: false,
                    });
                    open = None;
                }
                _ => {}
            }
        }
        if let Some(s) = open {
            intervals.push(Interval {
                start_s: s,
                end_s: eval_time(n_bins - 1),
                ongoing: true,
            });
        }
        report.alerts.push(AlertHistory {
            alert: alert.clone(),
            budget_fraction_for_window: alert.burn_rate * alert.long_s / window_s,
            first_fired_s: intervals.first().map(|i| i.start_s),
            intervals,
        });
    }
    if let Some(longest) = config.alerts.iter().map(|a| a.long_s).reduce(f64::max) {
        if report.covered_s < longest {
            report.notes.push(format!(
                "the data in the window spans {}, less than the longest alert window ({}): early windows are computed over the data there is",
                fmt_span(report.covered_s),
                fmt_span(longest)
            ));
        }
    }
    Ok(report)
}

/// Settings of [`diagnose`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiagnosisConfig {
    pub slice_s: f64,
    /// The per-slice statistic: this percentile (numpy linear) of TTFT, queue time and prompt
    /// length. 50: the median.
    pub q: f64,
    /// TTFT is "up" when it exceeds the baseline by this fraction (0.5: +50 %) ...
    pub ttft_rise: f64,
    /// ... and by at least this many ms.
    pub min_ttft_rise_ms: f64,
    /// Queueing explains the rise when queue time rose by at least this share of the TTFT rise.
    pub queue_share: f64,
    /// Prompts "got longer" when their length exceeds the baseline by this fraction.
    pub prompt_rise: f64,
    /// Slices with fewer completed requests are not judged.
    pub min_requests: u64,
}

impl Default for DiagnosisConfig {
    fn default() -> Self {
        DiagnosisConfig {
            slice_s: 3600.0,
            q: 50.0,
            ttft_rise: 0.5,
            min_ttft_rise_ms: 20.0,
            queue_share: 0.5,
            prompt_rise: 0.25,
            min_requests: 20,
        }
    }
}

/// Why prefill got slower.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrefillCause {
    /// The prompts got longer.
    LongerPrompts,
    /// The prompts did not get longer: the prefix-cache hit rate probably dropped (or something
    /// else slowed prefill: a noisy neighbour, a slower GPU).
    PrefixCacheProbablyDropped,
    /// The log has no prompt lengths.
    UnknownNoLengths,
}

/// The verdict on one slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "cause", rename_all = "snake_case")]
pub enum SliceVerdict {
    /// TTFT is not up.
    Normal,
    /// Fewer requests than `min_requests`.
    TooFewRequests,
    /// TTFT up, queue time up with it.
    ShortOfCapacity,
    /// TTFT up, queue time flat.
    PrefillSlower(PrefillCause),
    /// TTFT up, but the slice has no queue times.
    QueueUnknown,
}

impl SliceVerdict {
    /// A short explanation.
    pub fn describe(self) -> &'static str {
        match self {
            SliceVerdict::Normal => "normal",
            SliceVerdict::TooFewRequests => "too few requests to judge",
            SliceVerdict::ShortOfCapacity => {
                "short of capacity: TTFT rose and queue time rose with it"
            }
            SliceVerdict::PrefillSlower(PrefillCause::LongerPrompts) => {
                "prefill got slower: TTFT rose with queue time flat, and prompts got longer"
            }
            SliceVerdict::PrefillSlower(PrefillCause::PrefixCacheProbablyDropped) => {
                "prefill got slower: TTFT rose with queue time flat and prompts no longer; the prefix-cache hit rate probably dropped"
            }
            SliceVerdict::PrefillSlower(PrefillCause::UnknownNoLengths) => {
                "prefill got slower: TTFT rose with queue time flat (no prompt lengths to say why)"
            }
            SliceVerdict::QueueUnknown => "TTFT rose; no queue times in this slice to say why",
        }
    }

    /// True for the verdicts that flag a problem.
    pub fn is_incident(self) -> bool {
        !matches!(self, SliceVerdict::Normal | SliceVerdict::TooFewRequests)
    }
}

/// One slice of the diagnosis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiagnosisSlice {
    pub start_s: f64,
    /// Completed requests with a TTFT.
    pub n: u64,
    pub ttft_ms: Option<f64>,
    pub queue_ms: Option<f64>,
    pub input_tokens: Option<f64>,
    pub verdict: SliceVerdict,
}

/// Consecutive slices with the same verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Incident {
    pub start_s: f64,
    /// End of its last slice.
    pub end_s: f64,
    pub verdict: SliceVerdict,
    pub peak_ttft_ms: f64,
    /// The queue statistic in the slice of the peak TTFT.
    pub queue_ms_at_peak: Option<f64>,
    pub input_tokens_at_peak: Option<f64>,
}

/// The queue-vs-TTFT diagnosis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    pub q: f64,
    pub slice_s: f64,
    /// The median over the judged slices of each slice statistic.
    pub baseline_ttft_ms: Option<f64>,
    pub baseline_queue_ms: Option<f64>,
    pub baseline_input_tokens: Option<f64>,
    pub slices: Vec<DiagnosisSlice>,
    pub incidents: Vec<Incident>,
    pub notes: Vec<String>,
}

fn validate_diagnosis(config: &DiagnosisConfig) -> Result<(), BudgetError> {
    if !(config.slice_s.is_finite() && config.slice_s >= 1.0) {
        return Err(BudgetError::Slice {
            seconds: config.slice_s,
        });
    }
    if !(0.0..=100.0).contains(&config.q) {
        return Err(BudgetError::Percentile { q: config.q });
    }
    Ok(())
}

fn stat(values: &mut [f64], q: f64) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    percentile_sorted(values, q, Method::Linear)
}

/// Tells, slice by slice, whether a TTFT rise is queueing or prefill.
///
/// # Formula
/// Per slice (completed requests with a TTFT and a timestamp; slices aligned as in [`budget`]):
/// T, Q and L = the `q`-th percentile (numpy linear) of TTFT, queue time and input tokens.
/// Baselines T₀, Q₀, L₀ = the median of T, Q, L over the slices with at least `min_requests`
/// requests: robust to incidents that cover less than half of the log, and independent of
/// whether the log starts calm. Then, for each such slice:
/// - TTFT up ⇔ T > T₀ · (1 + ttft_rise) and T - T₀ >= min_ttft_rise_ms;
/// - if up: Q - Q₀ >= queue_share · (T - T₀) ⇒ short of capacity (queueing explains the rise);
///   otherwise prefill got slower, because prompts got longer (L > L₀ · (1 + prompt_rise)) or,
///   if not, probably because the prefix-cache hit rate dropped.
/// # Edge cases
/// No queue time anywhere: `Err(NoQueueTimes)`; no usable TTFT: `Err(NoTtft)`. Slices without
/// requests are left out; slices with fewer than `min_requests` are `TooFewRequests`.
/// # Example
/// ```
/// use slo_core::{budget::{diagnose, DiagnosisConfig, SliceVerdict}, table::{RequestTable, Row}};
/// let mut t = RequestTable::default();
/// for i in 0..300 {
///     let hour = i / 100;               // three hours, the last one queued
///     let queue = if hour == 2 { 800.0 } else { 10.0 };
///     let row = Row { start_s: Some(hour as f64 * 3600.0 + i as f64), ttft_ms: Some(200.0 + queue),
///         queue_ms: Some(queue), input_tokens: Some(1000.0), ..Row::default() };
///     t.push(row, 0, i + 2, "log");
/// }
/// let d = diagnose(&t, &DiagnosisConfig::default()).unwrap();
/// assert_eq!(d.slices[2].verdict, SliceVerdict::ShortOfCapacity);
/// assert_eq!(d.incidents.len(), 1);
/// ```
pub fn diagnose(table: &RequestTable, config: &DiagnosisConfig) -> Result<Diagnosis, BudgetError> {
    validate_diagnosis(config)?;
    if !RequestTable::has(&table.queue_ms) {
        return Err(BudgetError::NoQueueTimes);
    }
    // (slice index, ttft, queue, input tokens) per usable request.
    let mut rows: Vec<(i64, f64, Option<f64>, Option<f64>)> = Vec::new();
    for row in 0..table.len() {
        if table.status.get(row) != Some(&Status::Ok) {
            continue;
        }
        let (Some(t), Some(ttft)) = (
            table.start_s(row).or_else(|| table.end_s(row)),
            table.ttft_ms(row),
        ) else {
            continue;
        };
        let k = (t / config.slice_s).floor();
        if k.is_nan() || k.abs() >= 9e15 {
            continue;
        }
        rows.push((k as i64, ttft, table.queue_ms(row), table.input_tokens(row)));
    }
    if rows.is_empty() {
        return Err(BudgetError::NoTtft);
    }
    // One row per request (the standard sort: see `events`).
    rows.sort_by_key(|r| r.0);
    let mut slices = Vec::new();
    let mut start = 0;
    while let Some(&(k, ..)) = rows.get(start) {
        let end = rows
            .iter()
            .skip(start)
            .position(|r| r.0 != k)
            .map_or(rows.len(), |p| start + p);
        let part = rows.get(start..end).unwrap_or(&[]);
        let mut ttft: Vec<f64> = part.iter().map(|r| r.1).collect();
        let mut queue: Vec<f64> = part.iter().filter_map(|r| r.2).collect();
        let mut tokens: Vec<f64> = part.iter().filter_map(|r| r.3).collect();
        slices.push(DiagnosisSlice {
            start_s: k as f64 * config.slice_s,
            n: part.len() as u64,
            ttft_ms: stat(&mut ttft, config.q),
            queue_ms: stat(&mut queue, config.q),
            input_tokens: stat(&mut tokens, config.q),
            verdict: SliceVerdict::TooFewRequests,
        });
        start = end;
    }
    if slices.len() > MAX_SLICES {
        return Err(BudgetError::TooManySlices {
            slices: slices.len() as f64,
        });
    }
    let judged = |s: &&DiagnosisSlice| s.n >= config.min_requests;
    let median_of = |f: fn(&DiagnosisSlice) -> Option<f64>| {
        let mut v: Vec<f64> = slices.iter().filter(judged).filter_map(f).collect();
        stat(&mut v, 50.0)
    };
    let base_t = median_of(|s| s.ttft_ms);
    let base_q = median_of(|s| s.queue_ms);
    let base_l = median_of(|s| s.input_tokens);
    for s in &mut slices {
        if s.n < config.min_requests {
            continue;
        }
        let (Some(t), Some(t0)) = (s.ttft_ms, base_t) else {
            continue;
        };
        let rise = t - t0;
        let up = t > t0 * (1.0 + config.ttft_rise) && rise >= config.min_ttft_rise_ms;
        s.verdict = if !up {
            SliceVerdict::Normal
        } else {
            match (s.queue_ms, base_q) {
                (Some(q), Some(q0)) if q - q0 >= config.queue_share * rise => {
                    SliceVerdict::ShortOfCapacity
                }
                (Some(_), Some(_)) => SliceVerdict::PrefillSlower(match (s.input_tokens, base_l) {
                    (Some(l), Some(l0)) if l > l0 * (1.0 + config.prompt_rise) => {
                        PrefillCause::LongerPrompts
                    }
                    (Some(_), Some(_)) => PrefillCause::PrefixCacheProbablyDropped,
                    _ => PrefillCause::UnknownNoLengths,
                }),
                _ => SliceVerdict::QueueUnknown,
            }
        };
    }
    let mut incidents: Vec<Incident> = Vec::new();
    for s in slices.iter().filter(|s| s.verdict.is_incident()) {
        let peak = s.ttft_ms.unwrap_or(0.0);
        match incidents.last_mut() {
            Some(i)
                if i.verdict == s.verdict
                    && (i.end_s - s.start_s).abs() <= 1e-9 * config.slice_s =>
            {
                i.end_s = s.start_s + config.slice_s;
                if peak > i.peak_ttft_ms {
                    i.peak_ttft_ms = peak;
                    i.queue_ms_at_peak = s.queue_ms;
                    i.input_tokens_at_peak = s.input_tokens;
                }
            }
            _ => incidents.push(Incident {
                start_s: s.start_s,
                end_s: s.start_s + config.slice_s,
                verdict: s.verdict,
                peak_ttft_ms: peak,
                queue_ms_at_peak: s.queue_ms,
                input_tokens_at_peak: s.input_tokens,
            }),
        }
    }
    let mut notes = vec![
        "queue time as vLLM reports it is the wait inside the engine; a queue in front of it (gateway, load balancer) shows as TTFT with a flat engine queue".to_string(),
    ];
    if base_l.is_none() {
        notes.push(
            "the log has no prompt lengths, so a prefill slowdown cannot be blamed on longer prompts or on the prefix cache".to_string(),
        );
    }
    if slices.iter().filter(judged).count() < 3 {
        notes.push(format!(
            "fewer than 3 slices have {} requests or more, so the baseline is weak",
            config.min_requests
        ));
    }
    Ok(Diagnosis {
        q: config.q,
        slice_s: config.slice_s,
        baseline_ttft_ms: base_t,
        baseline_queue_ms: base_q,
        baseline_input_tokens: base_l,
        slices,
        incidents,
        notes,
    })
}
