//! The written SLO document: a Markdown text someone else could implement without asking.
//!
//! [`document`] turns a spec (and, optionally, a measured report with its files) into Markdown. It
//! is deterministic: the same input gives the same bytes, with no dates or clocks. Every piece of
//! user text (service, class and file names, descriptions, the budget policy) goes through
//! [`escape`], which makes it inert in Markdown and in HTML, so the document can be rendered in a
//! browser without a sanitiser.

use crate::budget::{error_budget, sre_workbook_alerts, Severity};
use crate::evaluate::{fmt_pct, fmt_q, GroupReport, Report};
use crate::export::{budget_share, decimal, prom_duration};
use crate::ingest::Provenance;
use crate::quantile::Method;
use crate::spec::{
    CancelPolicy, ClassRule, Indicator, ItlStatistic, MeasurementPoint, Spec, StallRule, Targets,
    TtftTarget, Window,
};

/// Measured results to append to the document.
#[derive(Clone, Copy, Debug)]
pub struct Measured<'a> {
    pub report: &'a Report,
    /// The files the report was computed from (name, rows, SHA-256).
    pub files: &'a [Provenance],
}

/// The error budget as a fraction of attempted requests: 1 - objective (see
/// [`crate::budget::error_budget`]); 0 for an objective outside (0, 1).
fn allowed_bad_fraction(objective: f64) -> f64 {
    error_budget(objective, None).map_or(0.0, |b| b.allowed_bad_fraction)
}

/// How many of `expected_requests` may be bad in a window.
///
/// # Formula
/// allowed_bad = floor(expected_requests × (1 - objective))
/// # Edge cases
/// Float noise is absorbed before the floor (0.9 of 1,000,000 leaves 100,000, not 99,999).
/// # Example
/// ```
/// // The guide: 99 % over 28 days of 1,000,000 requests allows 10,000 bad ones.
/// assert_eq!(slo_core::document::allowed_bad_requests(0.99, 1_000_000), 10_000);
/// assert_eq!(slo_core::document::allowed_bad_requests(0.9, 1_000_000), 100_000);
/// assert_eq!(slo_core::document::allowed_bad_requests(0.999, 10), 0);
/// ```
pub fn allowed_bad_requests(objective: f64, expected_requests: u64) -> u64 {
    let x = error_budget(objective, Some(expected_requests as f64))
        .and_then(|b| b.allowed_bad_requests)
        .unwrap_or(0.0);
    if !(x.is_finite() && x > 0.0) {
        return 0;
    }
    (x + 1e-9 * x.max(1.0)).floor() as u64
}

/// How much of the error budget a measured attainment spends.
///
/// # Formula
/// budget_spent = (1 - attainment) / (1 - objective); 1.0 is exactly the whole budget.
/// # Edge cases
/// Objective not below 1: `None` (no budget to spend).
/// # Example
/// ```
/// let spent = slo_core::document::budget_spent(0.8, 0.99).unwrap();
/// assert!((spent - 20.0).abs() < 1e-9);
/// ```
pub fn budget_spent(attainment: f64, objective: f64) -> Option<f64> {
    let budget = allowed_bad_fraction(objective);
    (budget > 0.0 && attainment.is_finite()).then(|| (1.0 - attainment).max(0.0) / budget)
}

/// Escapes user text for one line of Markdown that may be rendered as HTML: `&`, `<`, `>` and `"`
/// become entities, Markdown's punctuation (`\ ` * _ [ ] | # ~ !` and friends) is
/// backslash-escaped, and line breaks become spaces (so the text cannot end a table row or start
/// a block).
///
/// # Example
/// ```
/// use slo_core::document::escape;
/// assert_eq!(escape("<img src=x onerror=alert(1)>"), "&lt;img src=x onerror=alert(1)&gt;");
/// assert_eq!(escape("a|b\nc*d"), "a\\|b c\\*d");
/// ```
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' | '!' | '{' | '}' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\u{2028}' | '\u{2029}' | '\u{85}' => out.push(' '),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Escapes a multi-paragraph user text: paragraphs are kept (split at blank lines), each one is
/// [`escape`]d, and a leading character that would start a list, heading or quote is escaped.
pub fn escape_paragraphs(text: &str) -> Vec<String> {
    let normalised = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut out = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in normalised.split('\n') {
        if line.trim().is_empty() {
            if !current.is_empty() {
                out.push(current.join(" "));
                current.clear();
            }
        } else {
            current.push(line.trim());
        }
    }
    if !current.is_empty() {
        out.push(current.join(" "));
    }
    out.iter()
        .map(|p| {
            let escaped = escape(p);
            let starts_block = escaped.starts_with(['-', '+', '=', ' '])
                || escaped
                    .find(|c: char| !c.is_ascii_digit())
                    .filter(|&i| i > 0)
                    .is_some_and(|i| escaped[i..].starts_with(['.', ')']));
            if starts_block {
                match escaped.find(|c: char| !c.is_ascii_digit()) {
                    Some(i) if i > 0 => format!("{}\\{}", &escaped[..i], &escaped[i..]),
                    _ => format!("\\{escaped}"),
                }
            } else {
                escaped
            }
        })
        .collect()
}

/// A whole number with thousands separators: 1000000 -> "1,000,000".
pub fn fmt_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).rem_euclid(3) == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A number of the spec (a target, a slope, an objective, a window), as people typed it:
/// thousands separators, up to six decimals, no trailing zeros (2500 -> "2,500", 0.2 -> "0.2",
/// 0.0125 -> "0.0125"). Six, so that a per-token allowance of 0.0125 ms is not written as 0.013,
/// while a target that came out of arithmetic (59.589999999999996) reads 59.59. Figures
/// measured from the data are written by [`fmt_measured`].
pub fn fmt_number(x: f64) -> String {
    fmt_decimals(x, 6)
}

/// A figure measured from the data (a percentile, a goodput, a wait), as the app's report and
/// this document both show it: thousands separators, two decimals below 1,000 and none from
/// there, no trailing zeros (48.716 -> "48.72", 22265.265 -> "22,265"). When `target` is given
/// and the figure differs from it, decimals are added (up to six) until the two do not read
/// the same, so that a p90 of 500.004 against a 500 ms target, which fails, never shows as
/// "500".
///
/// # Example
/// ```
/// use slo_core::document::fmt_measured;
/// assert_eq!(fmt_measured(48.716, None), "48.72");
/// assert_eq!(fmt_measured(22265.265, None), "22,265");
/// assert_eq!(fmt_measured(500.004, Some(500.0)), "500.004");
/// assert_eq!(fmt_measured(1000.4, Some(1000.0)), "1,000.4");
/// assert_eq!(fmt_measured(500.0, Some(500.0)), "500");
/// ```
pub fn fmt_measured(x: f64, target: Option<f64>) -> String {
    let mut decimals = if x.abs() >= 1000.0 { 0 } else { 2 };
    if let Some(t) = target.filter(|&t| t != x && t.is_finite()) {
        while decimals < 6 && format!("{x:.decimals$}") == format!("{t:.decimals$}") {
            decimals += 1;
        }
    }
    fmt_decimals(x, decimals)
}

/// `x` rounded to `decimals` decimals, with thousands separators and no trailing zeros.
fn fmt_decimals(x: f64, decimals: usize) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let rounded = format!("{:.decimals$}", x.abs());
    let (int, frac) = rounded.split_once('.').unwrap_or((&rounded, ""));
    let frac = frac.trim_end_matches('0');
    let int = int.parse::<u64>().map_or(int.to_string(), fmt_count);
    let sign = if x < 0.0 && (int != "0" || !frac.is_empty()) {
        "-"
    } else {
        ""
    };
    if frac.is_empty() {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    }
}

/// A TTFT target as text, in ms: "500 ms" or "500 ms + 0.2 ms × input tokens".
pub fn describe_ttft(t: TtftTarget) -> String {
    match t {
        TtftTarget::Fixed { ms } => format!("{} ms", fmt_number(ms)),
        TtftTarget::PerToken {
            base_ms,
            per_token_ms,
        } => format!(
            "{} ms + {} ms × input tokens",
            fmt_number(base_ms),
            fmt_number(per_token_ms)
        ),
    }
}

/// The targets of one cell in a line: "TTFT ≤ 500 ms, TPOT ≤ 50 ms" (with `le` as the
/// comparison sign, so exports can ask for an ASCII "<=").
pub fn describe_targets(t: &Targets, le: &str) -> String {
    let mut parts = Vec::new();
    for ind in t.indicators() {
        let value = match ind {
            Indicator::Ttft => t.ttft.map(describe_ttft),
            _ => t.fixed_ms(ind).map(|ms| format!("{} ms", fmt_number(ms))),
        };
        if let Some(v) = value {
            parts.push(format!("{} {le} {v}", ind.label()));
        }
    }
    if parts.is_empty() {
        "no target (every completed request is good)".to_string()
    } else {
        parts.join(", ")
    }
}

/// How a class claims requests, in words (user text escaped).
pub fn describe_rule(rule: &ClassRule) -> String {
    match rule {
        ClassRule::Equals { column, value } => format!(
            "the value in column “{}” is exactly “{}” (case-sensitive; surrounding spaces ignored)",
            escape(column.trim()),
            escape(value.trim())
        ),
        ClassRule::Default => "no other class claims it (the default class)".to_string(),
    }
}

/// What an indicator measures, for the spec's ITL statistic and method.
pub fn indicator_definition(indicator: Indicator, spec: &Spec) -> String {
    match indicator {
        Indicator::Ttft => "time from the request's arrival to its first output token".to_string(),
        Indicator::Tpot => "time per output token: (E2E − TTFT) / (output tokens − 1), the mean gap after the first token (vLLM's benchmark definition); a request with one output token passes any TPOT target".to_string(),
        Indicator::Itl => match spec.itl_statistic {
            ItlStatistic::Max => "inter-token latency: the request's largest gap between two streamed chunks; a request with one output token passes".to_string(),
            ItlStatistic::Percentile { q } => format!(
                "inter-token latency: the p{} of the request's gaps between streamed chunks (method {}); a request with one output token passes",
                fmt_q(q),
                spec.method.name()
            ),
        },
        Indicator::E2e => "end-to-end latency: time from the request's arrival to its last token".to_string(),
        Indicator::Queue => "time the request waited before the engine started it".to_string(),
    }
}

/// The formula of a percentile method, for the document.
pub fn method_definition(method: Method) -> &'static str {
    match method {
        Method::Linear => "with the n values sorted, x[0] ≤ … ≤ x[n−1], and h = (n − 1) · q / 100, the q-th percentile is x[⌊h⌋] + (h − ⌊h⌋) · (x[⌊h⌋ + 1] − x[⌊h⌋]): linear interpolation between the two nearest order statistics. This is what vLLM's benchmark reports.",
        Method::NearestRank => "the smallest value with at least q % of the values at or below it: x[⌈n · q / 100⌉ − 1] for values sorted x[0] ≤ … ≤ x[n−1]. It is always one of the measured values.",
        Method::InvertedCdf => "the inverse of the empirical distribution function: x[⌈n · q / 100⌉ − 1] for values sorted x[0] ≤ … ≤ x[n−1].",
        Method::AveragedInvertedCdf => "like inverted_cdf, x[⌈n · q / 100⌉ − 1] for values sorted x[0] ≤ … ≤ x[n−1], except that where n · q / 100 is a whole number k it is the mean of x[k − 1] and x[k].",
        Method::ClosestObservation => "the order statistic nearest to n · q / 100 − 1/2 (1-based), ties going to the even index.",
        Method::InterpolatedInvertedCdf => "linear interpolation of the empirical distribution function at the 0-based virtual index v = n · p − 1, with p = q / 100 (α = 0, β = 1).",
        Method::Hazen => "linear interpolation at the 0-based virtual index v = n · p − 1/2, with p = q / 100 (α = β = 1/2).",
        Method::Weibull => "linear interpolation at the 0-based virtual index v = (n + 1) · p − 1, with p = q / 100 (α = β = 0).",
        Method::MedianUnbiased => "linear interpolation at the 0-based virtual index v = (n + 1/3) · p − 2/3, with p = q / 100 (α = β = 1/3).",
        Method::NormalUnbiased => "linear interpolation at the 0-based virtual index v = (n + 1/4) · p − 5/8, with p = q / 100 (α = β = 3/8).",
        Method::Lower => "x[⌊(n − 1) · q / 100⌋] for values sorted x[0] ≤ … ≤ x[n−1].",
        Method::Higher => "x[⌈(n − 1) · q / 100⌉] for values sorted x[0] ≤ … ≤ x[n−1].",
        Method::Midpoint => "the mean of x[⌊h⌋] and x[⌈h⌉], h = (n − 1) · q / 100, for values sorted x[0] ≤ … ≤ x[n−1].",
        Method::Nearest => "x[h rounded half to even], h = (n − 1) · q / 100, for values sorted x[0] ≤ … ≤ x[n−1].",
    }
}

/// How cancellations are counted under `policy`, in words.
pub fn describe_cancellations(policy: CancelPolicy) -> &'static str {
    match policy {
        CancelPolicy::ExcludeUnlessWaitedPastTtft => "a request the client cancelled is left out (neither good nor attempted), unless it had waited at least its TTFT target without a first token, or its first token came after the target: then it counts as attempted and bad, a TTFT failure the user gave up on. A cancelled request in a cell without a TTFT target is always left out.",
        CancelPolicy::Exclude => "a request the client cancelled is always left out: neither good nor attempted.",
        CancelPolicy::CountAsBad => "a request the client cancelled always counts as attempted and bad.",
    }
}

/// Indicators that carry a target in some cell of the spec, in `Indicator::ALL` order.
fn targeted_indicators(spec: &Spec) -> Vec<Indicator> {
    Indicator::ALL
        .into_iter()
        .filter(|&i| {
            spec.classes
                .iter()
                .any(|c| c.targets.iter().any(|t| t.has(i)))
        })
        .collect()
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", fmt_count(n), if n == 1 { one } else { many })
}

fn bucket_range(spec: &Spec, b: usize) -> String {
    let edges = &spec.bucket_edges;
    match (b.checked_sub(1).and_then(|p| edges.get(p)), edges.get(b)) {
        (None, Some(hi)) => format!("fewer than {}", fmt_count(*hi)),
        (Some(lo), Some(hi)) => {
            format!("{} to {}", fmt_count(*lo), fmt_count(hi.saturating_sub(1)))
        }
        (Some(lo), None) => format!("{} or more", fmt_count(*lo)),
        (None, None) => "any".to_string(),
    }
}

/// "a 28-day rolling window" or "a calendar month", for "over ...".
pub fn window_phrase(window: Window) -> String {
    match window {
        Window::Rolling { days } => format!("a {days}-day rolling window"),
        Window::CalendarMonth => "a calendar month".to_string(),
    }
}

fn pct_points(f: f64) -> String {
    fmt_pct(f)
}

/// The SLO document for `spec`, with a "Measured results" section when `measured` is given.
///
/// # Example
/// ```
/// let spec = slo_core::presets::presets()[0].spec.clone();
/// let md = slo_core::document::document(&spec, None);
/// assert!(md.starts_with("# SLO: Chat assistant\n"));
/// assert!(md.contains("99 %"));
/// assert_eq!(md, slo_core::document::document(&spec, None));
/// ```
pub fn document(spec: &Spec, measured: Option<&Measured>) -> String {
    let mut d = Doc::default();
    let service = escape(&spec.service);
    let objective = pct_points(spec.objective);
    let budget = allowed_bad_fraction(spec.objective);
    let window = window_phrase(spec.window);
    let indicators = targeted_indicators(spec);
    let default_class = spec.classes.iter().find(|c| c.rule == ClassRule::Default);

    d.line(&format!("# SLO: {service}"));
    d.blank();
    d.para(&format!(
        "This document defines the latency service-level objective (SLO) of **{service}**: which requests it covers, what is measured and where, the targets, the objective, and the error budget."
    ));
    d.para(&format!(
        "A request is **good** when it met every target of its class and input-length bucket at once. The objective is on **joint attainment**, the fraction of attempted requests that were good: **{objective} of attempted requests good, per class, over {window}**. Percentiles of each indicator are reported to diagnose, not to decide."
    ));

    // Summary.
    d.line("## Summary");
    d.blank();
    d.line("| Class | Assigned when | Indicators | Objective | Window |");
    d.line("|---|---|---|---|---|");
    for class in &spec.classes {
        let inds: Vec<&str> = Indicator::ALL
            .into_iter()
            .filter(|&i| class.targets.iter().any(|t| t.has(i)))
            .map(|i| i.label())
            .collect();
        d.line(&format!(
            "| {} | {} | {} | {} good | {} |",
            escape(&class.name),
            describe_rule(&class.rule),
            if inds.is_empty() {
                "none".to_string()
            } else {
                inds.join(", ")
            },
            objective,
            spec.window.describe()
        ));
    }
    d.blank();

    // Classes.
    d.line("## Traffic classes");
    d.blank();
    let mut assign = format!(
        "Each request belongs to {} class. The rules are checked in the order below and the first that matches wins; ",
        if default_class.is_some() { "exactly one" } else { "at most one" }
    );
    match default_class {
        Some(c) => assign.push_str(&format!(
            "a request that matches no rule belongs to the default class **{}**.",
            escape(&c.name)
        )),
        None => assign.push_str(
            "a request that matches no rule belongs to no class and is left out of every figure. There is no default class, so label all traffic or add one.",
        ),
    }
    d.para(&assign);
    for class in &spec.classes {
        d.line(&format!("### Class {}", escape(&class.name)));
        d.blank();
        if !class.description.trim().is_empty() {
            for p in escape_paragraphs(&class.description) {
                d.para(&p);
            }
        }
        d.line(&format!(
            "- **Assigned when:** {}.",
            describe_rule(&class.rule)
        ));
        for (b, t) in class.targets.iter().enumerate() {
            let label = if spec.bucket_edges.is_empty() {
                "Targets".to_string()
            } else {
                format!("Targets, input {}", escape(&spec.bucket_label(b)))
            };
            d.line(&format!("- **{label}:** {}.", describe_targets(t, "≤")));
        }
        d.line(&format!(
            "- **Objective:** at least {objective} of the class's attempted requests good over {window}; each input-length cell of the class is held to it too."
        ));
        d.line(&format!(
            "- **Error budget:** {} of the class's attempted requests may be bad per window.",
            pct_points(budget)
        ));
        d.blank();
    }

    // Buckets.
    d.line("## Input-length buckets");
    d.blank();
    if spec.bucket_edges.is_empty() {
        d.para("There is one bucket: every input length is held to the same targets.");
    } else {
        d.para("A request's bucket is set by its prompt (input) length in tokens. Requests whose log has no input length are reported in an \"unknown length\" cell and held to the targets of the first bucket.");
        d.line("| Bucket | Input tokens |");
        d.line("|---|---|");
        for b in 0..spec.n_buckets() {
            d.line(&format!(
                "| {} | {} |",
                escape(&spec.bucket_label(b)),
                bucket_range(spec, b)
            ));
        }
        d.blank();
    }

    // Indicators.
    d.line("## Indicators and where they are measured");
    d.blank();
    if indicators.is_empty() {
        d.para("No class has a target yet, so every completed request is good.");
    } else {
        d.line("| Indicator | Definition | Measured at |");
        d.line("|---|---|---|");
        for &ind in &indicators {
            d.line(&format!(
                "| {} | {} | {} |",
                ind.label(),
                indicator_definition(ind, spec),
                spec.measurement.of(ind).name()
            ));
        }
        d.blank();
        let engine: Vec<&str> = indicators
            .iter()
            .filter(|&&i| spec.measurement.of(i) == MeasurementPoint::Engine)
            .map(|i| i.label())
            .collect();
        if engine.is_empty() {
            d.para("Timing is taken where the user is (gateway or client): engine metrics leave out the load balancer, the network and any queue in front of the engine, so they serve diagnosis, not this SLO.");
        } else {
            d.para(&format!(
                "Note: {} {} measured at the engine, which leaves out the load balancer, the network and any queue in front of the engine. Measure at the gateway or the client to define the SLO; use engine metrics to diagnose.",
                engine.join(", "),
                if engine.len() == 1 { "is" } else { "are" }
            ));
        }
        if let Some(stall) = spec.stall {
            let rule = match stall {
                StallRule::AbsoluteMs { ms } => format!("a gap longer than {} ms", fmt_number(ms)),
                StallRule::TimesTpot { k } => {
                    format!(
                        "a gap longer than {} times the request's own TPOT",
                        fmt_number(k)
                    )
                }
            };
            d.para(&format!(
                "Stalls: {rule} is reported as a stall when the request's TPOT met its target (a stall TPOT hides). Stalls are reported, not counted against the objective."
            ));
        }
    }

    // Targets.
    d.line("## Targets");
    d.blank();
    d.para("Thresholds are inclusive: a request whose value equals the threshold meets it. \"—\" means no target on that indicator in that cell.");
    for &ind in &indicators {
        d.line(&format!("### {} (ms)", ind.label()));
        d.blank();
        let mut header = String::from("| Class |");
        let mut rule = String::from("|---|");
        for b in 0..spec.n_buckets() {
            header.push_str(&format!(" {} |", escape(&spec.bucket_label(b))));
            rule.push_str("---|");
        }
        d.line(&header);
        d.line(&rule);
        for class in &spec.classes {
            let mut row = format!("| {} |", escape(&class.name));
            for b in 0..spec.n_buckets() {
                let t = class.targets.get(b);
                let cell = match ind {
                    Indicator::Ttft => t.and_then(|t| t.ttft).map(|t| match t {
                        TtftTarget::Fixed { ms } => format!("≤ {}", fmt_number(ms)),
                        TtftTarget::PerToken {
                            base_ms,
                            per_token_ms,
                        } => format!(
                            "≤ {} + {} × input tokens",
                            fmt_number(base_ms),
                            fmt_number(per_token_ms)
                        ),
                    }),
                    _ => t
                        .and_then(|t| t.fixed_ms(ind))
                        .map(|ms| format!("≤ {}", fmt_number(ms))),
                };
                row.push_str(&format!(" {} |", cell.unwrap_or_else(|| "—".to_string())));
            }
            d.line(&row);
        }
        d.blank();
    }

    // Objective and method.
    d.line("## Objective and percentile method");
    d.blank();
    d.line(&format!(
        "- **Objective:** joint attainment = good requests ÷ attempted requests ≥ {} ({objective}), for each class over {window}, and for each class × input-length cell so that long prompts cannot hide behind short ones. It is reported with a 95 % Wilson score interval.",
        decimal(spec.objective)
    ));
    let qs: Vec<String> = spec
        .percentiles
        .iter()
        .map(|q| format!("p{}", fmt_q(*q)))
        .collect();
    d.line(&format!(
        "- **Percentiles:** {} of each indicator are reported for diagnosis, by the method **{}**: {}. Definition: {}",
        if qs.is_empty() {
            "none".to_string()
        } else {
            qs.join(", ")
        },
        spec.method.name(),
        spec.method.describe(),
        method_definition(spec.method)
    ));
    d.line("- **Percentiles are not the objective.** Marginal percentiles that pass do not mean users were served: the requests that were slow to start and the requests that were slow to stream can be different ones, so \"p90 TTFT and p90 TPOT both pass\" can hold while only 80 % of requests met both. With few samples the method can also flip a verdict, which is why it is named here.");
    d.line(&format!(
        "- **Sample size:** a class or cell with fewer than {} attempted requests in a window gets a sample-size warning: its interval is too wide to decide on.",
        fmt_count(spec.min_requests)
    ));
    d.blank();

    // Window.
    d.line("## Window");
    d.blank();
    d.para(&match spec.window {
        Window::Rolling { days } => format!(
            "Rolling, {}: at any time the SLO covers the requests that started in the last {}.",
            plural(u64::from(days), "day", "days"),
            plural(u64::from(days), "day", "days")
        ),
        Window::CalendarMonth => "Calendar month: each month starts with a full error budget. Budget arithmetic (alert burn rates, requests per window) takes a month as 30 days.".to_string(),
    });

    // Errors, timeouts, cancellations.
    d.line("## Errors, timeouts and cancellations");
    d.blank();
    d.line("- **Attempted** requests are the completed ones plus errors and timeouts (plus cancellations counted as bad). Attainment divides by attempted requests, never by completed ones: dropping failures from the denominator hides them exactly where they are most common, under overload.");
    d.line("- **Errors and timeouts** count as attempted and bad, whatever their latencies. A truncated stream is an error: it has no TPOT, and it is bad, not missing.");
    d.line(&format!(
        "- **Client cancellations:** {}",
        describe_cancellations(spec.cancellations)
    ));
    d.line("- **Wait time is recorded** for every cancelled request, whatever the policy: its E2E time, or end − start when E2E is not logged. Reports give the median and the longest wait, so a policy change can be judged on data.");
    d.line("- **Missing data is not a pass:** a completed request whose record lacks a value for an indicator its cell targets is bad (\"no data\"). The exception is TPOT and ITL for a request with one output token, which pass.");
    if default_class.is_none() {
        d.line("- **Unassigned requests** (no class rule matches and there is no default class) are left out of every figure, and reports count them.");
    }
    d.blank();

    // Error budget.
    d.line("## Error budget");
    d.blank();
    let mut budget_text = format!(
        "With an objective of {objective} over {window}, **{} of each class's attempted requests may be bad** in the window (allowed bad fraction = 1 − {} = {}).",
        pct_points(budget),
        decimal(spec.objective),
        decimal(budget)
    );
    if let Some(n) = spec.expected_requests_per_window {
        let allowed = allowed_bad_requests(spec.objective, n);
        if spec.classes.len() == 1 {
            budget_text.push_str(&format!(
                " At the expected {} per window, that is **{} bad requests per window**.",
                plural(n, "request", "requests"),
                fmt_count(allowed)
            ));
        } else {
            budget_text.push_str(&format!(
                " At the expected {} per window for the whole service, that is **{} bad requests per window** across all classes; each class's share is {} of its own requests.",
                plural(n, "request", "requests"),
                fmt_count(allowed),
                pct_points(budget)
            ));
        }
    } else {
        budget_text.push_str(" Set `expected_requests_per_window` in the spec to state the budget as a number of requests.");
    }
    d.para(&budget_text);
    d.para(&format!(
        "The budget is spent by bad requests, one at a time, so it is a count: alert on how fast it burns (burn rate = bad fraction ÷ allowed bad fraction; a burn rate of 1 spends exactly the budget over the window). Multiwindow, multi-burn-rate alerts (Google SRE workbook), which fire while the burn rate over both windows is above the threshold; the share of the budget is for {window}:"
    ));
    d.line("| Severity | Burn rate above | Long window | Short window | Budget spent in the long window | Bad fraction above |");
    d.line("|---|---:|---|---|---:|---:|");
    for a in &sre_workbook_alerts() {
        d.line(&format!(
            "| {} | {} | {} | {} | {} | {} |",
            match a.severity {
                Severity::Page => "page",
                Severity::Ticket => "ticket",
            },
            fmt_number(a.burn_rate),
            prom_duration(a.long_s),
            prom_duration(a.short_s),
            pct_points(budget_share(a, spec.window)),
            pct_points(a.burn_rate * budget)
        ));
    }
    d.blank();

    // Policy.
    d.line("## Error-budget policy");
    d.blank();
    let policy = escape_paragraphs(&spec.budget_policy);
    if policy.is_empty() {
        d.para("No error-budget policy is written yet. Say what happens when a class's budget runs low and when it is exhausted (for example: releases that touch the serving path stop until attainment recovers), who decides, and when an incident needs a postmortem.");
    } else {
        for p in policy {
            d.para(&p);
        }
    }

    if let Some(m) = measured {
        measured_section(&mut d, spec, m);
    }
    d.finish()
}

fn group_name(g: &GroupReport) -> String {
    match (&g.class, &g.bucket) {
        (None, _) => "overall".to_string(),
        (Some(c), None) => escape(c),
        (Some(c), Some(b)) => format!("{} / {}", escape(c), escape(b)),
    }
}

fn ci_text(g: &GroupReport) -> String {
    g.attainment_ci95.map_or("—".to_string(), |(lo, hi)| {
        format!("{}–{}", fmt_pct(lo), fmt_pct(hi))
    })
}

fn verdict(g: &GroupReport) -> &'static str {
    match g.meets_objective {
        Some(true) => "met ✓",
        Some(false) => "NOT met ✗",
        None => "no requests",
    }
}

fn measured_section(d: &mut Doc, spec: &Spec, m: &Measured) {
    let r = m.report;
    d.line("## Measured results");
    d.blank();

    d.line("### Data");
    d.blank();
    if m.files.is_empty() {
        d.para("No file is recorded for these results.");
    } else {
        d.line("| File | Format | Rows read | Rows skipped | Bytes | SHA-256 |");
        d.line("|---|---|---:|---:|---:|---|");
        for f in m.files {
            d.line(&format!(
                "| {} | {} | {} | {} | {} | {} |",
                escape(&f.name),
                f.format.map_or("unknown", |x| x.describe()),
                fmt_count(f.rows_read),
                fmt_count(f.rows_skipped),
                fmt_count(f.size_bytes),
                escape(&f.sha256)
            ));
        }
        d.blank();
    }
    d.para(&match r.duration.seconds {
        Some(s) => format!(
            "Run duration: {} s ({}).",
            fmt_measured(s, None),
            escape(&r.duration.how)
        ),
        None => format!(
            "Run duration: unknown ({}), so goodput is not given.",
            escape(&r.duration.how)
        ),
    });

    let o = &r.overall;
    let headline = match (o.attainment, o.attainment_ci95) {
        (Some(a), Some((lo, hi))) => format!(
            "**{} of {} attempted requests met every target** (95 % CI {}–{}). Objective {}: **{}**.",
            fmt_pct(a),
            fmt_count(o.attempted),
            fmt_pct(lo),
            fmt_pct(hi),
            fmt_pct(spec.objective),
            if a >= spec.objective { "met" } else { "not met" }
        ),
        _ => "**No attempted requests**: there is nothing to judge.".to_string(),
    };
    d.para(&headline);

    d.line("### Joint attainment per class");
    d.blank();
    d.line(&format!(
        "| Class | Attempted | Good | Joint attainment | 95 % CI | Objective {} | Budget spent | Goodput |",
        fmt_pct(spec.objective)
    ));
    d.line("|---|---:|---:|---:|---|---|---:|---:|");
    for g in std::iter::once(o).chain(&r.classes) {
        d.line(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            group_name(g),
            fmt_count(g.attempted),
            fmt_count(g.good),
            g.attainment.map_or("—".to_string(), fmt_pct),
            ci_text(g),
            verdict(g),
            g.attainment
                .and_then(|a| budget_spent(a, spec.objective))
                .map_or("—".to_string(), |s| format!(
                    "{} ×",
                    fmt_measured(s, None)
                )),
            g.goodput_rps.map_or("—".to_string(), |x| format!(
                "{} req/s",
                fmt_measured(x, None)
            ))
        ));
    }
    d.blank();
    d.para("Budget spent: the bad fraction ÷ the allowed bad fraction; above 1 × the class is over its budget. Goodput: good requests per second of the run.");

    d.line("### Joint attainment per class × input length");
    d.blank();
    d.line("| Class | Input length | Attempted | Good | Joint attainment | 95 % CI | Objective | Binding target |");
    d.line("|---|---|---:|---:|---:|---|---|---|");
    for g in &r.cells {
        let binding = g.binding.map_or("—".to_string(), |b| {
            let missed = g
                .indicators
                .iter()
                .find(|i| i.indicator == b)
                .map_or(0, |i| i.missed);
            format!("{} ({} missed)", b.label(), fmt_count(missed))
        });
        d.line(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            g.class.as_deref().map_or("—".to_string(), escape),
            g.bucket.as_deref().map_or("—".to_string(), escape),
            fmt_count(g.attempted),
            fmt_count(g.good),
            g.attainment.map_or("—".to_string(), fmt_pct),
            ci_text(g),
            verdict(g),
            binding
        ));
    }
    d.blank();
    d.para("Binding target: the target that failed the most requests in the cell.");

    // Marginal percentiles of the whole run, for the targeted indicators.
    let targeted: Vec<_> = o
        .indicators
        .iter()
        .filter(|i| i.targeted && i.stats.n > 0)
        .collect();
    if !targeted.is_empty() {
        d.line("### Marginal percentiles (all requests)");
        d.blank();
        // The spec's method, then the two reference methods it is not.
        let linear = r.method != Method::Linear;
        let nearest = r.method != Method::NearestRank;
        let mut header = format!(
            "| Indicator | Percentile | {} (ms) |",
            escape(r.method.name())
        );
        let mut rule = String::from("|---|---|---:|");
        if linear {
            header.push_str(" linear (ms) |");
            rule.push_str("---:|");
        }
        if nearest {
            header.push_str(" nearest\\_rank (ms) |");
            rule.push_str("---:|");
        }
        header.push_str(" Target (ms) | Verdict |");
        rule.push_str("---:|---|");
        d.line(&header);
        d.line(&rule);
        for ind in targeted {
            for (p, v) in ind.stats.percentiles.iter().zip(&ind.verdicts) {
                let num = |x: Option<f64>| {
                    x.map_or("—".to_string(), |x| fmt_measured(x, ind.target_ms))
                };
                let verdict = match v.pass {
                    Some(true) => "pass",
                    Some(false) => "FAIL",
                    None => "—",
                };
                let flip = if v.flipped {
                    " (flips with the method)"
                } else {
                    ""
                };
                let mut row = format!(
                    "| {} | p{} | {} |",
                    ind.indicator.label(),
                    fmt_q(p.q),
                    num(p.value)
                );
                if linear {
                    row.push_str(&format!(" {} |", num(p.linear)));
                }
                if nearest {
                    row.push_str(&format!(" {} |", num(p.nearest_rank)));
                }
                row.push_str(&format!(
                    " {} | {verdict}{flip} |",
                    ind.target_ms.map_or("per cell".to_string(), fmt_number)
                ));
                d.line(&row);
            }
        }
        d.blank();
    }

    // A class that is the whole run, or a cell that is its whole class, repeats its parent's notes
    // and warnings: list them once.
    let same = |a: &GroupReport, b: &GroupReport| {
        a.attempted == b.attempted && a.good == b.good && a.excluded == b.excluded
    };
    let redundant = |g: &GroupReport| -> bool {
        match (&g.class, &g.bucket) {
            (None, _) => false,
            (Some(_), None) => r.classes.len() == 1 && same(g, o),
            (Some(c), Some(_)) => {
                r.cells
                    .iter()
                    .filter(|x| x.class.as_ref() == Some(c))
                    .count()
                    == 1
                    && r.classes
                        .iter()
                        .find(|x| x.class.as_ref() == Some(c))
                        .is_some_and(|x| same(g, x))
            }
        }
    };
    let groups: Vec<&GroupReport> = std::iter::once(o)
        .chain(&r.classes)
        .chain(&r.cells)
        .filter(|g| !redundant(g))
        .collect();

    // Findings: the marginal-vs-joint gap.
    let notes: Vec<String> = groups
        .iter()
        .flat_map(|g| {
            g.notes
                .iter()
                .map(move |n| format!("{}: {}", group_name(g), escape(n)))
        })
        .collect();
    d.line("### Marginal percentiles versus joint attainment");
    d.blank();
    if notes.is_empty() {
        d.para("No group has all its marginal percentiles passing while fewer requests than that percentile met every target at once.");
    } else {
        for n in notes {
            d.line(&format!("- ⚠ {n}."));
        }
        d.blank();
        d.para("Requests that were slow on one indicator were not the ones slow on another, so each percentile looks fine while users saw misses: judge the SLO on joint attainment.");
    }

    // Why requests failed.
    if !o.failures.is_empty() {
        d.line("### Why requests failed");
        d.blank();
        d.line("| Reason | Requests |");
        d.line("|---|---:|");
        for f in &o.failures {
            d.line(&format!(
                "| {} | {} |",
                escape(&f.label),
                fmt_count(f.count)
            ));
        }
        d.blank();
    }

    let c = &r.cancellations;
    if c.cancelled > 0 {
        d.line("### Cancellations");
        d.blank();
        d.para(&format!(
            "{} cancelled; {} counted as TTFT failures. Wait before cancelling: median {}, longest {}.",
            plural(c.cancelled, "request", "requests"),
            fmt_count(c.counted_as_ttft_failure),
            c.wait_p50_ms
                .map_or("unknown".to_string(), |w| format!("{} ms", fmt_measured(w, None))),
            c.wait_max_ms
                .map_or("unknown".to_string(), |w| format!("{} ms", fmt_measured(w, None)))
        ));
    }

    // Warnings: sample size and data.
    let mut warnings: Vec<String> = Vec::new();
    for g in &groups {
        for w in &g.warnings {
            let text = if g.class.is_none() && r.warnings.contains(w) {
                escape(w)
            } else {
                format!("{}: {}", group_name(g), escape(w))
            };
            if !warnings.contains(&text) {
                warnings.push(text);
            }
        }
    }
    d.line("### Warnings");
    d.blank();
    if warnings.is_empty() {
        d.para("None.");
    } else {
        for w in warnings {
            d.line(&format!("- {w}"));
        }
        d.blank();
    }
    let excluded: u64 = r.cells.iter().map(|g| g.excluded).sum();
    let mut left_out = Vec::new();
    if excluded > 0 {
        left_out.push(format!(
            "{} excluded by the cancellation policy",
            plural(excluded, "request", "requests")
        ));
    }
    if r.unassigned > 0 {
        left_out.push(format!(
            "{} in no class",
            plural(r.unassigned, "request", "requests")
        ));
    }
    if !left_out.is_empty() {
        d.para(&format!(
            "Left out of the figures: {}.",
            left_out.join("; ")
        ));
    }
}

/// A Markdown buffer: lines, with at most one blank line in a row and one final newline.
#[derive(Default)]
struct Doc {
    out: String,
}

impl Doc {
    fn line(&mut self, s: &str) {
        self.out.push_str(s);
        self.out.push('\n');
    }
    fn blank(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
    }
    fn para(&mut self, s: &str) {
        self.line(s);
        self.blank();
    }
    fn finish(mut self) -> String {
        while self.out.ends_with("\n\n") {
            self.out.pop();
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_makes_html_and_markdown_inert() {
        for (input, want) in [
            (
                "<img src=x onerror=alert(1)>",
                "&lt;img src=x onerror=alert(1)&gt;",
            ),
            ("</script>", "&lt;/script&gt;"),
            ("a & b", "a &amp; b"),
            ("[x](javascript:alert(1))", "\\[x\\](javascript:alert(1))"),
            ("`code` *em* _u_", "\\`code\\` \\*em\\* \\_u\\_"),
            ("a|b", "a\\|b"),
            ("line\nbreak\r\n", "line break  "),
            ("\\*", "\\\\\\*"),
        ] {
            assert_eq!(escape(input), want, "{input:?}");
        }
    }

    #[test]
    fn paragraphs_keep_blank_lines_and_defuse_block_starts() {
        let ps = escape_paragraphs("# Title\n\n- item\nmore\n\n1. first\n\nplain");
        assert_eq!(
            ps,
            vec!["\\# Title", "\\- item more", "1\\. first", "plain"]
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(fmt_count(0), "0");
        assert_eq!(fmt_count(999), "999");
        assert_eq!(fmt_count(1_000_000), "1,000,000");
        assert_eq!(fmt_number(2500.0), "2,500");
        assert_eq!(fmt_number(0.2), "0.2");
        assert_eq!(fmt_number(49.3333), "49.3333");
        assert_eq!(fmt_number(0.0125), "0.0125");
        assert_eq!(fmt_number(59.589999999999996), "59.59");
        assert_eq!(fmt_number(-0.0000001), "0");
        assert_eq!(fmt_number(13.44), "13.44");
        // Measured figures: as the app's report shows them, and never reading as their target
        // when they differ from it.
        assert_eq!(fmt_measured(999.999, None), "1,000");
        assert_eq!(fmt_measured(-0.001, None), "0");
        assert_eq!(fmt_measured(49.996, Some(50.0)), "49.996");
        assert_eq!(fmt_measured(49.9999999, Some(50.0)), "50");
        assert_eq!(fmt_measured(48.716, Some(50.0)), "48.72");
        assert_eq!(fmt_measured(f64::NAN, Some(50.0)), "NaN");
    }

    #[test]
    fn budget_in_numbers() {
        assert!((allowed_bad_fraction(0.999) - 0.001).abs() < 1e-12);
        assert_eq!(allowed_bad_requests(0.99, 1_000_000), 10_000);
        assert_eq!(allowed_bad_requests(0.995, 1_000), 5);
        assert_eq!(budget_spent(1.0, 0.99), Some(0.0));
        assert!(budget_spent(0.5, 1.0).is_none());
    }
}
