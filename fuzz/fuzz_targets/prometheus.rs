//! Prometheus text expositions: parse, assemble histograms, then the histogram math the
//! production tab runs on them (merge, increase, fraction under a target, quantiles).
#![no_main]

use libfuzzer_sys::fuzz_target;
use slo_core::prometheus;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let dump = prometheus::read_dump("fuzz", &text);
    assert!(dump.errors.len() <= prometheus::MAX_LISTED_ERRORS);
    assert!(dump.error_count >= dump.errors.len() as u64);
    for e in &dump.errors {
        assert!(e.line >= 1 && e.column >= 1, "unlocated: {e}");
    }
    let parts: Vec<&prometheus::Histogram> = dump.histograms.iter().collect();
    if let Some(m) = prometheus::merge(&parts) {
        let _ = prometheus::histogram_quantile(&m.histogram, 0.99);
    }
    for h in &dump.histograms {
        assert!(h.count.is_finite() && h.count >= 0.0);
        for target_ms in [0.0, 1.0, 250.0, 1e9] {
            if let Some(f) = prometheus::fraction_at_or_under(h, target_ms) {
                assert!(!f.value.is_nan(), "{f:?}");
            }
        }
        for q in [0.0, 0.5, 0.9, 1.0] {
            let _ = prometheus::histogram_quantile(h, q);
        }
        let _ = prometheus::increase(h, h);
        let _ = h.mean_ms();
    }
});
