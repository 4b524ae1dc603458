//! Exports of a spec to the formats monitoring stacks read: OpenSLO, Sloth, Prometheus rules, SQL.
//!
//! Every export is text built by hand (no YAML or SQL library), so every piece of user text is
//! quoted here, once: [`yaml_string`] for YAML scalars, [`promql_string`] for PromQL label values,
//! [`sql_string`] and [`sql_ident`] for SQL, [`comment`] for text inside `#` or `--` comments.
//!
//! - [`openslo`]: OpenSLO v1 `Service` and one `SLO` per class (joint attainment from gateway counters).
//! - [`sloth`]: a Sloth `prometheus/v1` spec, one SLO per class (gateway counters).
//! - [`prometheus`]: recording rules and multiwindow, multi-burn-rate alerts over vLLM's histograms.
//! - [`sql`]: the per-request joint check and attainment per class × bucket, in standard SQL.
//!
//! The joint check ("met every target at once") is per request, so it needs the request: the
//! OpenSLO and Sloth exports read two counters a gateway exports after judging each request,
//! [`GATEWAY_ATTEMPTED`] and [`GATEWAY_GOOD`], labelled `service`, `class` and `bucket`.

mod openslo;
mod prometheus;
mod sloth;
mod sql;

pub use openslo::openslo;
pub use prometheus::prometheus;
pub use sloth::sloth;
pub use sql::sql;

use crate::budget::BurnAlert;
use crate::spec::{Spec, Window};

/// Counter of attempted requests (cancellations the spec excludes are not counted), per
/// `service`, `class` and `bucket`, exported by the gateway that judges each request.
pub const GATEWAY_ATTEMPTED: &str = "llm_slo_requests_attempted_total";
/// Counter of attempted requests that met every target of their cell.
pub const GATEWAY_GOOD: &str = "llm_slo_requests_good_total";

/// The export formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    OpenSlo,
    Sloth,
    Prometheus,
    Sql,
}

impl ExportFormat {
    pub const ALL: [ExportFormat; 4] = [
        ExportFormat::OpenSlo,
        ExportFormat::Sloth,
        ExportFormat::Prometheus,
        ExportFormat::Sql,
    ];

    /// `openslo`, `sloth`, `prometheus`, `sql`.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::OpenSlo => "openslo",
            ExportFormat::Sloth => "sloth",
            ExportFormat::Prometheus => "prometheus",
            ExportFormat::Sql => "sql",
        }
    }

    /// File extension of the output, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Sql => "sql",
            _ => "yaml",
        }
    }

    /// Parses a [`ExportFormat::name`], ignoring case, `-` and `_` (`OpenSLO`, `open-slo`), and
    /// `prom` for Prometheus.
    ///
    /// # Example
    /// ```
    /// use slo_core::export::ExportFormat;
    /// assert_eq!(ExportFormat::from_name("OpenSLO"), Some(ExportFormat::OpenSlo));
    /// assert_eq!(ExportFormat::from_name("prom"), Some(ExportFormat::Prometheus));
    /// assert_eq!(ExportFormat::from_name("csv"), None);
    /// ```
    pub fn from_name(s: &str) -> Option<ExportFormat> {
        let wanted: String = s
            .trim()
            .to_ascii_lowercase()
            .chars()
            .filter(|c| *c != '-' && *c != '_')
            .collect();
        if wanted == "prom" {
            return Some(ExportFormat::Prometheus);
        }
        ExportFormat::ALL.into_iter().find(|f| f.name() == wanted)
    }
}

/// The spec in `format`; `table_name` is used by SQL only.
pub fn export(spec: &Spec, format: ExportFormat, table_name: &str) -> String {
    match format {
        ExportFormat::OpenSlo => openslo(spec),
        ExportFormat::Sloth => sloth(spec),
        ExportFormat::Prometheus => prometheus(spec),
        ExportFormat::Sql => sql(spec, table_name),
    }
}

/// The share of the window's error budget that `alert` (a burn rate held over its long window)
/// spends, for an SLO over `window`.
///
/// # Formula
/// share = burn_rate × long_window_s / window_s (a burn rate of 1 spends exactly the whole budget
/// over the window).
/// # Edge cases
/// A calendar month counts as 30 days ([`Window::days`]), for which the SRE workbook's alerts give
/// their nominal 2 %, 5 % and 10 %.
/// # Example
/// ```
/// use slo_core::budget::sre_workbook_alerts;
/// use slo_core::export::budget_share;
/// use slo_core::spec::Window;
/// let alerts = sre_workbook_alerts();
/// assert!((budget_share(&alerts[0], Window::Rolling { days: 30 }) - 0.02).abs() < 1e-12);
/// assert!((budget_share(&alerts[0], Window::Rolling { days: 28 }) - 0.0214285714).abs() < 1e-9);
/// ```
pub fn budget_share(alert: &BurnAlert, window: Window) -> f64 {
    alert.burn_rate * alert.long_s / (window.days() * 86_400.0)
}

/// A duration in seconds as Prometheus writes it: 300 -> "5m", 3600 -> "1h", 259200 -> "3d".
///
/// # Example
/// ```
/// assert_eq!(slo_core::export::prom_duration(300.0), "5m");
/// assert_eq!(slo_core::export::prom_duration(21_600.0), "6h");
/// assert_eq!(slo_core::export::prom_duration(259_200.0), "3d");
/// assert_eq!(slo_core::export::prom_duration(90.0), "90s");
/// ```
pub fn prom_duration(seconds: f64) -> String {
    let s = seconds.round().max(0.0) as u64;
    if s > 0 && s.rem_euclid(86_400) == 0 {
        format!("{}d", s / 86_400)
    } else if s > 0 && s.rem_euclid(3600) == 0 {
        format!("{}h", s / 3600)
    } else if s > 0 && s.rem_euclid(60) == 0 {
        format!("{}m", s / 60)
    } else {
        format!("{s}s")
    }
}

/// A YAML double-quoted scalar: safe for any text (quotes, backslashes, newlines, control
/// characters, `: `, `#`, leading `-` or `*`, "yes"/"no" and numbers all stay strings).
///
/// # Example
/// ```
/// use slo_core::export::yaml_string;
/// assert_eq!(yaml_string("a \"b\"\nc"), r#""a \"b\"\nc""#);
/// assert_eq!(yaml_string("no"), "\"no\"");
/// ```
pub fn yaml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control()
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                out.push_str(&format!("\\u{:04X}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A PromQL double-quoted string (label values), Go escaping rules.
///
/// # Example
/// ```
/// assert_eq!(slo_core::export::promql_string(r#"a"b\c"#), r#""a\"b\\c""#);
/// ```
pub fn promql_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control()
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A SQL string literal: single quotes, with `'` doubled.
///
/// # Example
/// ```
/// assert_eq!(slo_core::export::sql_string("O'Brien"), "'O''Brien'");
/// ```
pub fn sql_string(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A SQL delimited identifier: double quotes, with `"` doubled.
///
/// # Example
/// ```
/// assert_eq!(slo_core::export::sql_ident("my \"t\""), "\"my \"\"t\"\"\"");
/// ```
pub fn sql_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// Text made safe for one comment line (`#` in YAML, `--` in SQL): line breaks and other control
/// characters become spaces, so the text cannot end the comment.
pub fn comment(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{85}') {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// A lower-case DNS-label-like name: ASCII letters and digits, runs of anything else as one `-`,
/// at most 63 characters; `fallback` when nothing is left.
///
/// # Example
/// ```
/// assert_eq!(slo_core::export::slug("Chat assistant (EU)", "x"), "chat-assistant-eu");
/// assert_eq!(slo_core::export::slug("<>", "class-1"), "class-1");
/// ```
pub fn slug(s: &str, fallback: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut out: String = out.trim_end_matches('-').chars().take(63).collect();
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        fallback.to_string()
    } else {
        out
    }
}

/// One slug per class, unique within the spec (a suffix `-2`, `-3` ... where two names collide).
pub(crate) fn class_slugs(spec: &Spec) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (k, class) in spec.classes.iter().enumerate() {
        let base = slug(&class.name, &format!("class-{}", k + 1));
        let mut candidate = base.clone();
        let mut n = 2;
        while out.contains(&candidate) {
            candidate = format!("{base}-{n}");
            n += 1;
        }
        out.push(candidate);
    }
    out
}

/// A number without trailing zeros and without float noise: up to 9 decimals.
///
/// # Example
/// ```
/// assert_eq!(slo_core::export::decimal(1.0 - 0.99), "0.01");
/// assert_eq!(slo_core::export::decimal(2500.0), "2500");
/// assert_eq!(slo_core::export::decimal(0.9333333333333), "0.933333333");
/// ```
pub fn decimal(x: f64) -> String {
    let s = format!("{x:.9}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".to_string()
    } else {
        s
    }
}

/// Gateway counter selector for one class of a spec: `{service="...", class="..."}`.
pub(crate) fn gateway_selector(spec: &Spec, class: &str) -> String {
    format!(
        "{{service={}, class={}}}",
        promql_string(&spec.service),
        promql_string(class)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_string_escapes_every_control_character() {
        let s = yaml_string("a\u{0}b\u{7f}c\u{85}d\u{2028}");
        assert_eq!(s, r#""a\u0000b\u007Fc\u0085d\u2028""#);
    }

    #[test]
    fn comment_cannot_break_out() {
        assert_eq!(comment("a\nb\r\nc"), "a b  c");
    }

    #[test]
    fn slugs_are_unique() {
        let mut spec = Spec::default();
        let mut c = spec.classes[0].clone();
        c.name = "All".into();
        spec.classes.push(c);
        assert_eq!(class_slugs(&spec), vec!["all", "all-2"]);
    }

    #[test]
    fn formats_have_names_and_parse_back() {
        for f in ExportFormat::ALL {
            assert_eq!(ExportFormat::from_name(f.name()), Some(f));
        }
        assert_eq!(
            ExportFormat::from_name("open_slo"),
            Some(ExportFormat::OpenSlo)
        );
    }
}
