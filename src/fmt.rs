//! Display helpers: numbers with units. Formatting only; every figure comes from slo-core.

/// A number with thousands separators and at most two decimals, trailing zeros trimmed:
/// 433.0 -> "433", 50.97 -> "50.97", 5487.0 -> "5,487".
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "—".to_string();
    }
    let s = if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    let (sign, rest) = s.strip_prefix('-').map_or(("", s.as_str()), |r| ("-", r));
    let (int, frac) = rest
        .split_once('.')
        .map_or((rest, None), |(i, f)| (i, Some(f)));
    let mut grouped = String::new();
    for (k, c) in int.chars().enumerate() {
        if k > 0 && (int.len() - k) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
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
