//! The per-request pass of an evaluation: every completed request checked against its cell's
//! targets, and the verdicts counted per cell.
//!
//! This is the loop a target change re-runs over every request (a million for a day's log),
//! so it is what a person tuning targets in the app waits for. It lives in a crate of its own
//! for the reason `slo-sort` does: the app's WebAssembly is built for size (`opt-level =
//! "z"`), and the workspace builds this crate at `opt-level = 3`
//! (`[profile.release.package.slo-tally]`). It reads plain columns rather than `slo-core`'s
//! types, so that none of its code is generated inside `slo-core` at that crate's
//! `opt-level`; keep [`tally`] non-generic and `#[inline(never)]`: inlined into its caller by
//! the link-time optimisation, it would be optimised for size with the caller's code (its pass
//! took 22 ms in the app's wasm so, against 18 ms not inlined, docs/performance.md, twentieth round).
//!
//! What a verdict means (which requests count, what passes) is `slo_core::evaluate::judge`'s
//! definition. [`tally`] computes the same verdict for a completed request (status ok), without
//! a branch on the comparisons; `slo-core` tests the two against each other.

use std::ops::Range;

/// The bits of a verdict, one per indicator: `slo_core::spec::Indicator::bit`.
pub const TTFT: u8 = 1;
pub const TPOT: u8 = 1 << 1;
pub const ITL: u8 = 1 << 2;
pub const E2E: u8 = 1 << 3;
pub const QUEUE: u8 = 1 << 4;

/// How many verdicts a cell can count: a verdict's code is `missed | missing << 5`
/// ([`code`]), below 1,024.
pub const CODES: usize = 1 << 10;

/// The code under which [`Tally::counts`] counts a verdict: the indicators missed, and those
/// missed for want of a value (a subset of them).
pub fn code(missed: u8, missing: u8) -> usize {
    usize::from(missed & 31) | usize::from(missing & 31) << 5
}

/// The verdict of a [`code`]: (missed, missing).
pub fn verdict(code: usize) -> (u8, u8) {
    ((code & 31) as u8, (code >> 5 & 31) as u8)
}

/// One cell's targets as the pass reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cell {
    /// The indicators with a target (the bits above); the other fields are read only for these.
    pub targeted: u8,
    /// TTFT: the target in ms, or, with `ttft_per_input_token_ms`, the base the allowance per
    /// input token is added to.
    pub ttft_ms: f64,
    pub ttft_per_input_token_ms: Option<f64>,
    pub tpot_ms: f64,
    pub itl_ms: f64,
    pub e2e_ms: f64,
    pub queue_ms: f64,
}

/// The columns the pass reads, one value per request. A latency is NaN where the request has
/// none; a count is `no_count` where it is unknown; a column shorter than the table (an
/// indicator no request has: empty) reads as absent past its end.
#[derive(Clone, Copy, Debug)]
pub struct Columns<'a> {
    /// Each request's cell, an index into the cells given to [`tally`]; a request whose index
    /// is past them (no class claims it) is left out.
    pub cell_of: &'a [u32],
    pub input_tokens: &'a [u32],
    pub output_tokens: &'a [u32],
    pub no_count: u32,
    pub ttft_ms: &'a [f64],
    pub tpot_ms: &'a [f64],
    pub itl_ms: &'a [f64],
    pub e2e_ms: &'a [f64],
    pub queue_ms: &'a [f64],
}

/// What [`tally`] counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tally {
    /// How many requests of each cell had each verdict: `counts[cell * CODES + code]`.
    pub counts: Vec<u64>,
    /// The first requests (at most the `limit` given) that missed a target, in row order.
    pub missed_rows: Vec<usize>,
}

/// Judges the requests of `rows`, except those in `skip` (ascending; the caller judges them
/// itself: requests that did not complete), as completed requests against their cell's
/// targets, and counts their verdicts per cell.
///
/// A request meets a target when its value is at most the target. It misses it when the value
/// is larger, and misses it for want of a value (`missing` too) when it has none: TTFT absent,
/// or its input length unknown for a per-token target; E2E or queue time absent; TPOT or ITL
/// absent from a request that has more than one output token (or an unknown count). TPOT and
/// ITL without a value pass for a request of at most one output token.
#[inline(never)]
pub fn tally(
    columns: &Columns,
    cells: &[Cell],
    rows: Range<usize>,
    skip: &[usize],
    limit: usize,
) -> Tally {
    let mut out = Tally {
        counts: vec![0; cells.len() * CODES],
        missed_rows: Vec::new(),
    };
    let mut from = rows.start;
    for &skipped in skip.iter().chain(std::iter::once(&rows.end)) {
        let to = skipped.min(rows.end).max(from);
        tally_run(columns, cells, from..to, limit, &mut out);
        from = (skipped + 1).max(from);
    }
    out
}

/// Whether `v` is at most `target`: false when either is NaN (an absent value).
#[inline(always)]
fn at_most(v: f64, target: f64) -> bool {
    v <= target
}

/// [`tally`] over `rows`, none skipped.
fn tally_run(columns: &Columns, cells: &[Cell], rows: Range<usize>, limit: usize, out: &mut Tally) {
    let value = |column: &[f64], row: usize| column.get(row).copied().unwrap_or(f64::NAN);
    for row in rows {
        let cell_index = columns.cell_of.get(row).map_or(usize::MAX, |&c| c as usize);
        let Some(cell) = cells.get(cell_index) else {
            continue;
        };
        let targeted = cell.targeted;
        // Each indicator: `slow`, the value is not at most the target (an absent value, NaN,
        // compares false); `absent`, there is no value to judge.
        let mut missed = 0u8;
        let mut missing = 0u8;
        let mut mark = |bit: u8, slow: bool, absent: bool| {
            missed |= bit & 0u8.wrapping_sub(u8::from(slow));
            missing |= bit & 0u8.wrapping_sub(u8::from(absent));
        };
        if targeted & TTFT != 0 {
            // The threshold, and whether there is one (not for a per-token target on a request
            // of unknown length).
            let (threshold, known) = match cell.ttft_per_input_token_ms {
                None => (cell.ttft_ms, true),
                Some(per_token) => match columns.input_tokens.get(row) {
                    Some(&n) if n != columns.no_count => {
                        (cell.ttft_ms + per_token * f64::from(n), true)
                    }
                    _ => (f64::NAN, false),
                },
            };
            let v = value(columns.ttft_ms, row);
            mark(TTFT, !at_most(v, threshold), v.is_nan() || !known);
        }
        let one_token = match columns.output_tokens.get(row) {
            Some(&n) => n != columns.no_count && n <= 1,
            None => false,
        };
        // An indicator whose value may be undefined: TPOT and ITL, for one output token.
        let mut check = |bit: u8, v: f64, target: f64, undefined_passes: bool| {
            let passes_undefined = v.is_nan() && undefined_passes;
            mark(
                bit,
                !at_most(v, target) && !passes_undefined,
                v.is_nan() && !undefined_passes,
            );
        };
        if targeted & TPOT != 0 {
            check(TPOT, value(columns.tpot_ms, row), cell.tpot_ms, one_token);
        }
        if targeted & ITL != 0 {
            check(ITL, value(columns.itl_ms, row), cell.itl_ms, one_token);
        }
        if targeted & E2E != 0 {
            check(E2E, value(columns.e2e_ms, row), cell.e2e_ms, false);
        }
        if targeted & QUEUE != 0 {
            check(QUEUE, value(columns.queue_ms, row), cell.queue_ms, false);
        }
        let code = code(missed, missing);
        if let Some(count) = out.counts.get_mut(cell_index * CODES + code) {
            *count += 1;
        }
        if out.missed_rows.len() < limit && missed != 0 {
            out.missed_rows.push(row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO: u32 = u32::MAX;
    const NAN: f64 = f64::NAN;

    /// Nine requests in two cells, each verdict worked out by hand from the rules above.
    #[test]
    fn each_request_is_counted_under_the_verdict_its_values_give() {
        let cells = [
            // TTFT at most 500 ms, TPOT at most 50 ms.
            Cell {
                targeted: TTFT | TPOT,
                ttft_ms: 500.0,
                tpot_ms: 50.0,
                ..Cell::default()
            },
            // TTFT at most 200 ms + 0.5 ms per input token, E2E at most 1 s.
            Cell {
                targeted: TTFT | E2E,
                ttft_ms: 200.0,
                ttft_per_input_token_ms: Some(0.5),
                e2e_ms: 1000.0,
                ..Cell::default()
            },
        ];
        let columns = Columns {
            cell_of: &[0, 0, 0, 0, 0, 1, 1, u32::MAX, 0],
            input_tokens: &[10, 10, 10, 10, 10, 1000, NO, 10, 10],
            output_tokens: &[100, 100, 100, 1, 5, 100, 100, 100, 100],
            no_count: NO,
            ttft_ms: &[400.0, 600.0, NAN, 500.0, 100.0, 650.0, 10.0, 9e9, 9e9],
            tpot_ms: &[40.0, 40.0, 60.0, NAN, NAN, 1.0, 1.0, 9e9, 9e9],
            itl_ms: &[],
            e2e_ms: &[1.0, 1.0, 1.0, 1.0, 1.0, 900.0, 2000.0, 9e9, 9e9],
            queue_ms: &[],
        };
        let got = tally(&columns, &cells, 0..9, &[8], 3);
        let mut want = vec![0u64; 2 * CODES];
        // Row 0 meets both; row 3 meets TTFT at exactly 500 and has one output token, so its
        // undefined TPOT passes.
        want[code(0, 0)] = 2;
        want[code(TTFT, 0)] = 1; // row 1: 600 > 500
        want[code(TTFT | TPOT, TTFT)] = 1; // row 2: no TTFT, TPOT 60 > 50
        want[code(TPOT, TPOT)] = 1; // row 4: no TPOT with 5 output tokens
                                    // Row 5: 650 <= 200 + 0.5 * 1000 and 900 <= 1000.
        want[CODES + code(0, 0)] = 1;
        // Row 6: a per-token target and no input length; E2E 2000 > 1000.
        want[CODES + code(TTFT | E2E, TTFT)] = 1;
        // Row 7 has no cell; row 8 is skipped.
        assert_eq!(got.counts, want);
        assert_eq!(got.missed_rows, vec![1, 2, 4]);
    }

    #[test]
    fn skipped_rows_and_ranges_split_the_pass_without_changing_it() {
        let cells = [Cell {
            targeted: TTFT,
            ttft_ms: 5.0,
            ..Cell::default()
        }];
        let ttft: Vec<f64> = (0..20).map(f64::from).collect();
        let cell_of = vec![0u32; 20];
        let columns = Columns {
            cell_of: &cell_of,
            input_tokens: &[],
            output_tokens: &[],
            no_count: NO,
            ttft_ms: &ttft,
            tpot_ms: &[],
            itl_ms: &[],
            e2e_ms: &[],
            queue_ms: &[],
        };
        // Rows 3..15 without 4, 9 and 10: 3 and 5 meet (at most 5), 6, 7, 8, 11..=14 miss.
        let got = tally(&columns, &cells, 3..15, &[4, 9, 10], 100);
        assert_eq!(got.counts[code(0, 0)], 2);
        assert_eq!(got.counts[code(TTFT, 0)], 7);
        assert_eq!(got.missed_rows, vec![6, 7, 8, 11, 12, 13, 14]);
        // Skipped rows outside the range change nothing.
        assert_eq!(tally(&columns, &cells, 3..15, &[1, 4, 9, 10, 17], 100), got);
        for c in 0..CODES {
            assert_eq!(verdict(c), ((c & 31) as u8, (c >> 5) as u8));
        }
    }
}
