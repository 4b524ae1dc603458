//! Display helpers: numbers with units. Formatting only; every figure comes from slo-core.

/// A measured figure: thousands separators, two decimals below 1,000 and none from there,
/// trailing zeros trimmed (433.0 -> "433", 50.97 -> "50.97", 5487.0 -> "5,487"), written by
/// the core as the SLO document writes it (`document::fmt_measured`); "—" when not finite.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "—".to_string();
    }
    slo_core::document::fmt_measured(v, None)
}

/// A number of the spec (a target, a slope, the objective), as the SLO document writes it: up
/// to six decimals, so that a target of 1234.5 ms does not show as "1,235" nor a slope of
/// 0.0125 ms per token as "0.01". (The fields read back what they show: commas are dropped.)
pub fn spec_number(v: f64) -> String {
    slo_core::document::fmt_number(v)
}

/// `num` of an optional value, "—" when absent.
pub fn opt(v: Option<f64>) -> String {
    v.map_or("—".to_string(), num)
}

/// A fraction as a percentage: 0.8 -> "80 %".
pub fn pct(v: Option<f64>) -> String {
    v.map_or("—".to_string(), slo_core::evaluate::fmt_pct)
}

/// A count with separators.
pub fn count(n: u64) -> String {
    num(n as f64)
}
