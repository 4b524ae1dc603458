//! Comparing two runs: did attainment change beyond chance, and how far did percentiles move?
//!
//! [`compare`] takes two [`Report`]s (run A, the baseline, and run B, the candidate) and matches
//! their groups by label: overall, each class, each class × bucket cell present in either run.
//! For each group it gives both attainments with their Wilson 95 % intervals, the difference
//! B − A, a pooled two-proportion z-test ([`two_proportion_test`]) and a [`Change`] verdict at
//! [`ALPHA`], and for each indicator the shift B − A of every percentile both runs report.

use serde::{Deserialize, Serialize};

use crate::evaluate::{GroupReport, Report};
use crate::quantile::Method;
use crate::spec::Indicator;
use crate::stats::two_proportion_test;

/// Significance level of the two-sided test: a change with p-value below it is significant.
pub const ALPHA: f64 = 0.05;

/// Below this many good (or bad) requests in a run, the z-test's normal approximation is rough
/// (the usual rule of thumb); the group gets a note.
const SMALL_COUNT: u64 = 5;

/// The verdict on one group's attainment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// B's attainment is higher, p-value < [`ALPHA`].
    Better,
    /// B's attainment is lower, p-value < [`ALPHA`].
    Worse,
    /// p-value >= [`ALPHA`], or both runs had every request good (or every one bad).
    NoSignificantChange,
    /// A run has no attempted requests in this group (or lacks the group): nothing to test.
    NotTested,
}

impl Change {
    /// "better", "worse", "no significant change", "not tested".
    pub fn label(self) -> &'static str {
        match self {
            Change::Better => "better",
            Change::Worse => "worse",
            Change::NoSignificantChange => "no significant change",
            Change::NotTested => "not tested",
        }
    }
}

/// One run's side of a group.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Side {
    pub attempted: u64,
    pub good: u64,
    /// good / attempted (`None` when nothing was attempted).
    pub attainment: Option<f64>,
    /// Wilson 95 % interval of `attainment`, as in the run's report.
    pub attainment_ci95: Option<(f64, f64)>,
}

/// Shift of one percentile between the runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PercentileShift {
    /// Percentile in percent (90, 99.9).
    pub q: f64,
    /// The percentile in run A and in run B, by each report's method.
    pub a_ms: Option<f64>,
    pub b_ms: Option<f64>,
    /// `b_ms - a_ms`: positive means B is slower.
    pub shift_ms: Option<f64>,
}

/// Percentile shifts of one indicator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndicatorShift {
    pub indicator: Indicator,
    /// One per percentile present in both reports, in run A's order.
    pub percentiles: Vec<PercentileShift>,
}

/// One group (overall, a class, or a class × bucket cell) in both runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupComparison {
    /// `None` for overall.
    pub class: Option<String>,
    /// `None` for overall and for classes.
    pub bucket: Option<String>,
    /// Run A's side; `None` when run A has no such group.
    pub a: Option<Side>,
    /// Run B's side; `None` when run B has no such group.
    pub b: Option<Side>,
    /// Attainment B − A (`None` unless both are known).
    pub diff: Option<f64>,
    /// Pooled z statistic; positive when B is better.
    pub z: Option<f64>,
    /// Two-sided p-value of the z-test.
    pub p_value: Option<f64>,
    pub change: Change,
    /// Indicators with values in at least one run.
    pub shifts: Vec<IndicatorShift>,
    /// Caveats in words (a group missing from a run, small counts).
    pub notes: Vec<String>,
}

/// The comparison of two runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub overall: GroupComparison,
    /// Classes of A in A's order, then classes only B has.
    pub classes: Vec<GroupComparison>,
    /// Cells of A in A's order, then cells only B has.
    pub cells: Vec<GroupComparison>,
    /// Percentile method of run A and of run B.
    pub method_a: Method,
    pub method_b: Method,
    /// The significance level used, [`ALPHA`].
    pub alpha: f64,
    pub warnings: Vec<String>,
}

impl Comparison {
    /// Every group (overall, classes, cells) whose attainment got significantly worse.
    pub fn worse(&self) -> impl Iterator<Item = &GroupComparison> {
        std::iter::once(&self.overall)
            .chain(&self.classes)
            .chain(&self.cells)
            .filter(|g| g.change == Change::Worse)
    }

    /// True when some class × bucket cell got significantly worse (the `--check` gate).
    pub fn any_cell_worse(&self) -> bool {
        self.cells.iter().any(|g| g.change == Change::Worse)
    }
}

/// Compares run B (the candidate) with run A (the baseline).
///
/// # Formula
/// Per group, with `s` good of `n` attempted requests in each run:
/// ```text
/// attainment = s/n,  Wilson 95 % interval (from each report)
/// diff       = s_B/n_B - s_A/n_A
/// pooled p   = (s_A + s_B)/(n_A + n_B)
/// z          = diff / sqrt(p(1-p)(1/n_A + 1/n_B)),   p_value = 2·Φ(-|z|)
/// change     = better if p_value < 0.05 and diff > 0; worse if p_value < 0.05 and diff < 0;
///              else no significant change
/// shift      = percentile_B(q) - percentile_A(q), for each indicator and each q in both reports,
///              by each report's own percentile method
/// ```
/// Groups are matched by their labels: a cell by (class name, bucket label), a class by its name.
///
/// # Edge cases
/// - A group only one run has: the other side is `None`, the change is `NotTested`, a note says
///   which run lacks it. The same when a run attempted no request in the group.
/// - Both runs all good (or all bad): the z statistic is undefined (`z`, `p_value` are `None`)
///   and the change is `NoSignificantChange`.
/// - Fewer than 5 good or 5 bad requests in a run: tested, with a note that the normal
///   approximation is rough there.
/// - Each group is tested on its own at 0.05, with no correction for testing many groups: with
///   20 groups and no real change, about one is expected to come out significant by chance.
/// - Different percentile methods in the two reports: shifts are still `B - A` of each report's
///   value, with a warning (compare runs evaluated with the same spec).
/// - A percentile that either run lacks (no data): its shift is `None`.
///
/// # Example
/// ```
/// use slo_core::compare::{compare, Change};
/// use slo_core::evaluate::{report, Duration};
/// use slo_core::spec::{Spec, Targets, TtftTarget};
/// use slo_core::table::{RequestTable, Row};
///
/// // 100 requests; the first `slow` miss the 500 ms TTFT target.
/// let run = |slow: usize| {
///     let mut t = RequestTable::default();
///     for k in 0..100 {
///         let ttft = if k < slow { 900.0 } else { 100.0 + k as f64 };
///         let row = Row { ttft_ms: Some(ttft), e2e_ms: Some(ttft + 1000.0), output_tokens: Some(11.0), ..Row::default() };
///         t.push(row, 0, k as u32 + 2, "run");
///     }
///     let spec = Spec::single(Targets { ttft: Some(TtftTarget::Fixed { ms: 500.0 }), ..Targets::default() });
///     report(&t, &spec, &Duration::unknown("no timestamps"))
/// };
/// let c = compare(&run(10), &run(20)); // 90 % -> 80 % good
/// assert!((c.overall.diff.unwrap() - (-0.1)).abs() < 1e-12);
/// // pooled p = 170/200: z = -0.1 / sqrt(0.85·0.15·(2/100)) = -1.98029508595...
/// assert!((c.overall.z.unwrap() - (-1.9802950859533481)).abs() < 1e-12);
/// assert!((c.overall.p_value.unwrap() - 0.047670380656161464).abs() < 1e-12);
/// assert_eq!(c.overall.change, Change::Worse);
/// assert!(c.any_cell_worse());
/// assert_eq!(compare(&run(10), &run(12)).overall.change, Change::NoSignificantChange);
/// ```
pub fn compare(a: &Report, b: &Report) -> Comparison {
    let mut warnings = Vec::new();
    if a.method != b.method {
        warnings.push(format!(
            "the runs use different percentile methods ({} in A, {} in B): each shift is B's \
             value by its method minus A's by its; evaluate both runs with the same spec",
            a.method.name(),
            b.method.name()
        ));
    }
    Comparison {
        overall: compare_group(Some(&a.overall), Some(&b.overall)),
        classes: matched(&a.classes, &b.classes),
        cells: matched(&a.cells, &b.cells),
        method_a: a.method,
        method_b: b.method,
        alpha: ALPHA,
        warnings,
    }
}

/// Pairs groups by (class, bucket) label: A's in order, then those only B has.
fn matched(a: &[GroupReport], b: &[GroupReport]) -> Vec<GroupComparison> {
    let same = |x: &GroupReport, y: &GroupReport| x.class == y.class && x.bucket == y.bucket;
    let mut out: Vec<GroupComparison> = a
        .iter()
        .map(|ga| compare_group(Some(ga), b.iter().find(|gb| same(ga, gb))))
        .collect();
    out.extend(
        b.iter()
            .filter(|gb| !a.iter().any(|ga| same(ga, gb)))
            .map(|gb| compare_group(None, Some(gb))),
    );
    out
}

fn side(g: &GroupReport) -> Side {
    Side {
        attempted: g.attempted,
        good: g.good,
        attainment: g.attainment,
        attainment_ci95: g.attainment_ci95,
    }
}

fn compare_group(a: Option<&GroupReport>, b: Option<&GroupReport>) -> GroupComparison {
    let Some(any) = a.or(b) else {
        // Unreachable by construction (one side always exists); an empty group, not a panic.
        return GroupComparison {
            class: None,
            bucket: None,
            a: None,
            b: None,
            diff: None,
            z: None,
            p_value: None,
            change: Change::NotTested,
            shifts: Vec::new(),
            notes: Vec::new(),
        };
    };
    let (mut diff, mut z, mut p_value, mut change) = (None, None, None, Change::NotTested);
    if let (Some(ga), Some(gb)) = (a, b) {
        if ga.attempted > 0 && gb.attempted > 0 {
            match two_proportion_test(ga.good, ga.attempted, gb.good, gb.attempted) {
                Some(t) => {
                    diff = Some(t.diff);
                    z = Some(t.z);
                    p_value = Some(t.p_value);
                    change = if t.p_value >= ALPHA {
                        Change::NoSignificantChange
                    } else if t.diff > 0.0 {
                        Change::Better
                    } else {
                        Change::Worse
                    };
                }
                None => {
                    // Both all good or both all bad: equal attainment, no variance to test.
                    diff = Some(0.0);
                    change = Change::NoSignificantChange;
                }
            }
        }
    }
    let mut notes = Vec::new();
    for (run, g) in [("A", a), ("B", b)] {
        match g {
            None => notes.push(format!("run {run} has no such group")),
            Some(g) if g.attempted == 0 => {
                notes.push(format!("run {run} attempted no request here"))
            }
            Some(g)
                if z.is_some() && g.good.min(g.attempted.saturating_sub(g.good)) < SMALL_COUNT =>
            {
                notes.push(format!(
                    "run {run} has fewer than {SMALL_COUNT} good or bad requests here: the \
                     z-test's normal approximation is rough"
                ))
            }
            Some(_) => {}
        }
    }
    GroupComparison {
        class: any.class.clone(),
        bucket: any.bucket.clone(),
        a: a.map(side),
        b: b.map(side),
        diff,
        z,
        p_value,
        change,
        shifts: shifts(a, b),
        notes,
    }
}

/// Percentile shifts for every indicator with data in either run.
fn shifts(a: Option<&GroupReport>, b: Option<&GroupReport>) -> Vec<IndicatorShift> {
    let (Some(a), Some(b)) = (a, b) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for ia in &a.indicators {
        let Some(ib) = b.indicators.iter().find(|i| i.indicator == ia.indicator) else {
            continue;
        };
        if ia.stats.n == 0 && ib.stats.n == 0 {
            continue;
        }
        let percentiles = ia
            .stats
            .percentiles
            .iter()
            .filter_map(|pa| {
                let pb = ib
                    .stats
                    .percentiles
                    .iter()
                    .find(|pb| (pb.q - pa.q).abs() <= 1e-9 * pa.q.abs().max(1.0))?;
                Some(PercentileShift {
                    q: pa.q,
                    a_ms: pa.value,
                    b_ms: pb.value,
                    shift_ms: pa.value.zip(pb.value).map(|(x, y)| y - x),
                })
            })
            .collect();
        out.push(IndicatorShift {
            indicator: ia.indicator,
            percentiles,
        });
    }
    out
}
