//! Invariants every fuzz target checks after the call under test returned (a panic inside the
//! call is already a crash for libFuzzer). They restate ARCHITECTURE.md's parser invariants.

use slo_core::ingest::{Loaded, MAX_LISTED_ERRORS};
use slo_core::table::{Status, NO_COUNT};

/// A [`Loaded`] keeps its promises: a fatal file has no rows, every listed error is located and
/// names the file, counts agree, and every duration in the table is finite and not negative.
pub fn check_loaded(name: &str, loaded: &Loaded) {
    let t = &loaded.table;
    if loaded.fatal.is_some() {
        assert!(t.is_empty(), "a fatal file kept {} rows", t.len());
    }
    assert_eq!(loaded.provenance.rows_read, t.len() as u64);
    assert!(loaded.errors.len() <= MAX_LISTED_ERRORS);
    assert!(loaded.error_count >= loaded.errors.len() as u64);
    for e in &loaded.errors {
        assert_eq!(e.at.file, name);
        assert!(
            e.at.line.is_some_and(|l| l >= 1) || e.at.json_path.is_some(),
            "an error without a line or a JSON path: {e}"
        );
        assert!(e.to_string().starts_with(name), "{e}");
    }
    for column in [&t.ttft_ms, &t.e2e_ms, &t.queue_ms] {
        // One entry per request, at least one a value; or empty when no request has a value.
        assert!(column.is_empty() || column.len() == t.len());
        assert!(column.is_empty() || column.iter().any(|v| !v.is_nan()));
        for v in column.iter().filter(|v| !v.is_nan()) {
            assert!(v.is_finite() && *v >= 0.0, "a duration of {v}");
        }
    }
    // Token counts: the same shape, absent counts being `NO_COUNT` (every other value is one).
    for column in [&t.input_tokens, &t.output_tokens] {
        assert!(column.is_empty() || column.len() == t.len());
        assert!(column.is_empty() || column.iter().any(|&c| c != NO_COUNT));
    }
    for g in &t.itl.gaps_ms {
        assert!(g.is_finite() && *g >= 0.0, "a gap of {g}");
    }
    // Request i owns gaps_ms[offsets[i]..offsets[i + 1]]; just [0] when no request has gaps.
    if t.itl.gaps_ms.is_empty() {
        assert!(t.itl.offsets.iter().all(|&o| o == 0));
    } else {
        assert_eq!(t.itl.offsets.len(), t.len() + 1);
    }
    for row in 0..t.len() {
        if let (Some(ttft), Some(e2e), Status::Ok) = (t.ttft_ms(row), t.e2e_ms(row), t.status[row])
        {
            assert!(e2e >= ttft, "row {row}: E2E {e2e} below TTFT {ttft}");
        }
    }
    for col in &t.labels {
        assert_eq!(col.codes.len(), t.len(), "label column {}", col.name);
    }
}
