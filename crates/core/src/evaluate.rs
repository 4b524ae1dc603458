//! Evaluation: from a request table and a spec to a report.
//!
//! Work is split in two so that changing a target is cheap:
//! - [`prepare`] assigns every request to a class × bucket cell, derives TPOT and the per-request
//!   ITL statistic, and computes every percentile (none of which depends on a target);
//! - [`evaluate`] judges every request against its cell's targets and counts.
//!
//! [`report`] does both.

use serde::{Deserialize, Serialize};

use crate::order;
use crate::parallel;
use crate::quantile::{
    percentile_ci95_ranked, percentile_ranked, percentile_sorted, select_at_ranks, values_at_ranks,
    Method, Ranked,
};
use crate::spec::{
    CancelPolicy, ClassRule, Indicator, ItlStatistic, Spec, StallRule, Targets, TtftTarget,
};
use crate::stats::{wilson_ci95, Sum};
use crate::table::{LabelColumn, RequestTable, Status};

/// How many points a CDF curve keeps (evenly spaced in probability).
const CDF_POINTS: usize = 300;
/// How many failing requests a report lists by name.
const MAX_LISTED: usize = 500;

/// TPOT of one request.
///
/// # Formula
/// TPOT = (E2E - TTFT) / (n - 1), for n > 1 output tokens (vLLM's benchmark definition: the mean
/// gap after the first token).
/// # Edge cases
/// n <= 1: undefined (`None`); such requests are left out of TPOT percentiles and pass any TPOT
/// target. Any input missing: `None`.
/// # Example
/// ```
/// // Request 6 of the guide's worked example: (6900 - 300) / 100 = 66 ms.
/// assert_eq!(slo_core::evaluate::tpot_ms(Some(300.0), Some(6900.0), Some(101.0)), Some(66.0));
/// assert_eq!(slo_core::evaluate::tpot_ms(Some(300.0), Some(900.0), Some(1.0)), None);
/// ```
pub fn tpot_ms(
    ttft_ms: Option<f64>,
    e2e_ms: Option<f64>,
    output_tokens: Option<f64>,
) -> Option<f64> {
    let (t, e, n) = (ttft_ms?, e2e_ms?, output_tokens?);
    (n > 1.0).then(|| (e - t) / (n - 1.0))
}

/// [`tpot_ms`] of every request, NaN where it is undefined or unknown: `Prepared::tpot_ms`.
pub fn tpot_column(table: &RequestTable) -> Vec<f64> {
    let mut tpot = vec![f64::NAN; table.len()];
    parallel::fill(&mut tpot, |row| {
        tpot_ms(
            table.ttft_ms(row),
            table.e2e_ms(row),
            table.output_tokens(row),
        )
        .unwrap_or(f64::NAN)
    });
    tpot
}

/// A class × bucket cell. `bucket` is `None` for requests of unknown input length when the spec
/// has bucket edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CellKey {
    pub class: usize,
    pub bucket: Option<usize>,
}

/// Percentile of one indicator in one group, by the spec's method and the two reference methods.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PercentileValue {
    /// Percentile in percent (90, 99.9).
    pub q: f64,
    /// By the spec's method.
    pub value: Option<f64>,
    /// numpy 'linear' (Hyndman & Fan type 7).
    pub linear: Option<f64>,
    /// numpy 'nearest' (the order statistic nearest the linear position, ties to even).
    pub nearest: Option<f64>,
    /// The smallest value with at least q % of values at or below it.
    pub nearest_rank: Option<f64>,
    /// Distribution-free 95 % interval (binomial order statistics).
    pub ci95: Option<(f64, f64)>,
}

/// Target-independent statistics of one indicator in one group.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndicatorStats {
    pub indicator: Indicator,
    /// Number of values (requests; gaps for ITL).
    pub n: u64,
    pub mean: Option<f64>,
    /// Population standard deviation (numpy's default `ddof=0`, as vLLM reports).
    pub std: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub percentiles: Vec<PercentileValue>,
    /// (value, fraction of values at or below it), for plotting.
    pub cdf: Vec<(f64, f64)>,
}

/// Everything about a request log that does not depend on targets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prepared {
    /// `Spec::grouping_key` of the spec this was prepared for.
    pub key: String,
    /// Cells: every class × bucket, then one "unknown length" cell per class that has such requests.
    pub cells: Vec<CellKey>,
    /// Cell index of each request; `u32::MAX` when no class claims it.
    pub cell_of: Vec<u32>,
    /// TPOT per request (NaN when undefined or unknown).
    pub tpot_ms: Vec<f64>,
    /// The spec's per-request ITL statistic (NaN when the request has no gaps); empty when no
    /// request has gaps.
    pub itl_stat_ms: Vec<f64>,
    /// Largest gap per request (NaN when none); empty when no request has gaps.
    pub max_gap_ms: Vec<f64>,
    /// Statistics per cell (same order as `cells`), per class, and overall.
    pub cell_stats: Vec<Vec<IndicatorStats>>,
    pub class_stats: Vec<Vec<IndicatorStats>>,
    pub overall_stats: Vec<IndicatorStats>,
    /// Requests that no class claimed.
    pub unassigned: u64,
}

/// Classifies every request and computes all percentiles for `spec`'s grouping and method.
pub fn prepare(table: &RequestTable, spec: &Spec) -> Prepared {
    prepare_in(table, spec, parallel::threads() > 1, Shape::WithCdf)
}

/// [`prepare`] without the CDFs: every statistic the same, each `cdf` empty, and no column
/// sorted (the percentiles, their intervals and the extremes are found by selection,
/// [`select_at_ranks`]). For a report that shows no distribution: the command line's
/// `slo report`, where sorting the columns was a fifth of its time.
pub fn prepare_without_cdf(table: &RequestTable, spec: &Spec) -> Prepared {
    prepare_in(table, spec, parallel::threads() > 1, Shape::WithoutCdf)
}

/// Whether [`prepare`] computes each sample's CDF.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// With the CDF's [`CDF_POINTS`] points: the columns are sorted.
    WithCdf,
    /// Without: the few order statistics are selected, no column is sorted.
    WithoutCdf,
}

/// [`prepare`], its statistics computed for every indicator at once, or one indicator at a
/// time (the same figures: see where `batches` is made).
fn prepare_in(table: &RequestTable, spec: &Spec, all_at_once: bool, shape: Shape) -> Prepared {
    let n = table.len();
    let n_buckets = spec.n_buckets();
    let n_classes = spec.classes.len();

    let classes = Classes::new(table, spec);

    let mut cells: Vec<CellKey> = (0..n_classes)
        .flat_map(|c| {
            (0..n_buckets).map(move |b| CellKey {
                class: c,
                bucket: Some(b),
            })
        })
        .collect();
    // A request of no known length gets a provisional cell, `unknown + class`, numbered below.
    let unknown = cells.len() as u32;
    let mut cell_of = vec![u32::MAX; n];
    parallel::fill(&mut cell_of, |row| match classes.of(row) {
        None => u32::MAX,
        Some(class) => match spec.bucket_of(table.input_tokens(row)) {
            Some(b) => (class * n_buckets + b.min(n_buckets - 1)) as u32,
            None => unknown + class as u32,
        },
    });
    let unassigned = cell_of.iter().filter(|&&c| c == u32::MAX).count() as u64;
    // "Unknown length" cells are numbered in the order their first requests come.
    if cell_of.iter().any(|&c| (unknown..u32::MAX).contains(&c)) {
        let mut numbered = vec![u32::MAX; n_classes];
        for c in cell_of.iter_mut() {
            // Known cells are below `unknown`; unassigned requests (u32::MAX) are past the classes.
            let Some(class) = c.checked_sub(unknown).map(|c| c as usize) else {
                continue;
            };
            let Some(number) = numbered.get_mut(class) else {
                continue;
            };
            if *number == u32::MAX {
                cells.push(CellKey {
                    class,
                    bucket: None,
                });
                *number = (cells.len() - 1) as u32;
            }
            *c = *number;
        }
    }

    let tpot = tpot_column(table);
    // Without gaps in the log, both per-request gap figures are absent for every request.
    let (itl_stat, max_gap) = if table.has_itl() {
        per_request_gaps(table, spec)
    } else {
        (Vec::new(), Vec::new())
    };

    // Values per cell and indicator, completed requests only.
    let n_cells = cells.len();
    // Sized first: growing a million-value column step by step copies it several times.
    let mut completed = vec![0usize; n_cells];
    for (&cell, &status) in cell_of.iter().zip(&table.status) {
        if let Some(c) = completed
            .get_mut(cell as usize)
            .filter(|_| status == Status::Ok)
        {
            *c += 1;
        }
    }
    let members: Vec<Vec<usize>> = (0..n_classes)
        .map(|c| (0..n_cells).filter(|&k| cells[k].class == c).collect())
        .collect();
    let groups = Groups {
        cells: n_cells,
        members: &members,
    };
    let sources = Sources {
        table,
        tpot: &tpot,
        cell_of: &cell_of,
        completed: &completed,
    };
    // With threads, every indicator at once, so that the cores share the gathering and the
    // sorts. On one thread (the browser), one indicator at a time: its values are gathered,
    // sorted, read and dropped before the next indicator's, so that the sorted copies of the
    // latencies take one column's memory (8 MB at a million requests) rather than three; the
    // loader worker's memory never shrinks, and this was most of its peak.
    let batches: Vec<Vec<Indicator>> = if all_at_once {
        vec![Indicator::ALL.to_vec()]
    } else {
        Indicator::ALL.iter().map(|&i| vec![i]).collect()
    };
    let mut cell_stats: Vec<Vec<IndicatorStats>> = vec![Vec::new(); n_cells];
    let mut class_stats: Vec<Vec<IndicatorStats>> = vec![Vec::new(); n_classes];
    let mut overall_stats = Vec::new();
    for batch in batches {
        let (cell, class, overall) = batch_stats(&sources, &groups, &batch, spec, shape);
        for (all, some) in cell_stats.iter_mut().zip(cell) {
            all.extend(some);
        }
        for (all, some) in class_stats.iter_mut().zip(class) {
            all.extend(some);
        }
        overall_stats.extend(overall);
    }

    Prepared {
        key: spec.grouping_key(),
        cells,
        cell_of,
        tpot_ms: tpot,
        itl_stat_ms: itl_stat,
        max_gap_ms: max_gap,
        cell_stats,
        class_stats,
        overall_stats,
        unassigned,
    }
}

/// The class of each request by the spec's rules: the first `equals` rule that matches, else
/// the default class (`None`: no rule matches and there is no default).
struct Classes<'t> {
    /// Each class's rule as the label column it reads and the code of its value there; `None`
    /// for a rule that cannot match (the default, a missing column, a value no request has).
    rules: Vec<Option<(&'t LabelColumn, u32)>>,
    default: Option<usize>,
    /// When every rule that can match reads one column (the usual spec), the class of each of
    /// its codes. Which rule a request matches is as unpredictable as its class: looking the
    /// code up instead of trying the rules in turn saves a mispredicted branch on most rows,
    /// which was most of the time this step took.
    by_code: Option<(&'t LabelColumn, Vec<Option<usize>>)>,
}

impl<'t> Classes<'t> {
    fn new(table: &'t RequestTable, spec: &Spec) -> Classes<'t> {
        let default = spec
            .classes
            .iter()
            .position(|c| c.rule == ClassRule::Default);
        let rules: Vec<Option<(&LabelColumn, u32)>> = spec
            .classes
            .iter()
            .map(|c| match &c.rule {
                ClassRule::Equals { column, value } => match rule_column(table, column, value) {
                    Some((col, Some(code))) => Some((col, code)),
                    _ => None,
                },
                ClassRule::Default => None,
            })
            .collect();
        let mut columns = rules.iter().flatten().map(|&(col, _)| col);
        let by_code = columns.next().and_then(|first| {
            if !columns.all(|col| std::ptr::eq(col, first)) {
                return None;
            }
            let mut class_of_code = vec![default; first.values.len()];
            // The last rule first, so that the first rule for a value is the one that stays.
            for (k, rule) in rules.iter().enumerate().rev() {
                if let Some(slot) = rule.and_then(|(_, code)| class_of_code.get_mut(code as usize))
                {
                    *slot = Some(k);
                }
            }
            Some((first, class_of_code))
        });
        Classes {
            rules,
            default,
            by_code,
        }
    }

    fn of(&self, row: usize) -> Option<usize> {
        if let Some((col, class_of_code)) = &self.by_code {
            // An empty cell (`LabelColumn::EMPTY`) is past the table: the default class.
            return col
                .codes
                .get(row)
                .and_then(|&code| class_of_code.get(code as usize))
                .copied()
                .unwrap_or(self.default);
        }
        for (k, rule) in self.rules.iter().enumerate() {
            if let Some((col, code)) = rule {
                if col.codes.get(row) == Some(code) {
                    return Some(k);
                }
            }
        }
        self.default
    }
}

/// The label column an `equals` rule reads (its name matched in lower case) and the code of its
/// value there (`None`: no request has that value); `None` when the table has no such column.
fn rule_column<'t>(
    table: &'t RequestTable,
    column: &str,
    value: &str,
) -> Option<(&'t LabelColumn, Option<u32>)> {
    let col = table.label(&column.trim().to_ascii_lowercase())?;
    let code = col
        .values
        .iter()
        .position(|v| v == value.trim())
        .map(|p| p as u32);
    Some((col, code))
}

/// What `prepare` gathers each indicator's values from.
struct Sources<'a> {
    table: &'a RequestTable,
    tpot: &'a [f64],
    cell_of: &'a [u32],
    /// Completed requests per cell.
    completed: &'a [usize],
}

/// The cells, and each class's cells.
struct Groups<'a> {
    cells: usize,
    members: &'a [Vec<usize>],
}

/// The statistics of `batch`'s indicators, in its order: per cell, per class and overall.
fn batch_stats(
    sources: &Sources,
    groups: &Groups,
    batch: &[Indicator],
    spec: &Spec,
    shape: Shape,
) -> (
    Vec<Vec<IndicatorStats>>,
    Vec<Vec<IndicatorStats>>,
    Vec<IndicatorStats>,
) {
    let Sources {
        table,
        tpot,
        cell_of,
        completed,
    } = *sources;
    let n = table.len();
    let n_cells = groups.cells;
    // Each indicator's values, a job per indicator: one per request from a column (an empty
    // column: none), or every gap of each request for ITL.
    let gathered = parallel::map(batch.to_vec(), |indicator| {
        let column: &[f64] = match indicator {
            Indicator::Ttft => &table.ttft_ms,
            Indicator::Tpot => tpot,
            Indicator::Itl => &[],
            Indicator::E2e => &table.e2e_ms,
            Indicator::Queue => &table.queue_ms,
        };
        let gaps = indicator == Indicator::Itl && table.has_itl();
        let mut per_cell: Vec<Vec<f64>> = completed
            .iter()
            .map(|&c| {
                if column.is_empty() {
                    Vec::new()
                } else {
                    Vec::with_capacity(c)
                }
            })
            .collect();
        if column.is_empty() && !gaps {
            return per_cell;
        }
        parallel::for_each_row(n, |row| {
            let Some(dst) = per_cell.get_mut(cell_of[row] as usize) else {
                return;
            };
            if !matches!(table.status.get(row), Some(Status::Ok)) {
                return;
            }
            if gaps {
                dst.extend_from_slice(table.itl.of(row));
            } else if let Some(&x) = column.get(row).filter(|x| !x.is_nan()) {
                dst.push(x);
            }
        });
        per_cell
    });
    // values[cell][k]: the cell's values of the batch's k-th indicator.
    let mut values: Vec<Vec<Vec<f64>>> = (0..n_cells)
        .map(|_| vec![Vec::new(); batch.len()])
        .collect();
    for (k, per_cell) in gathered.into_iter().enumerate() {
        for (cell, column) in values.iter_mut().zip(per_cell) {
            if let Some(slot) = cell.get_mut(k) {
                *slot = column;
            }
        }
    }
    // Each cell's count, sum and squared deviations, per indicator, in the log's order: a
    // group's mean and standard deviation are made of its cells', without another pass over
    // the values.
    let moments: Vec<Moments> = parallel::map(
        values.iter().flat_map(|cell| cell.iter()).collect(),
        |column: &Vec<f64>| Moments::of(column),
    );
    // With the CDF, every column of every cell sorted, the largest first so that the cores
    // finish together.
    let sorted = shape == Shape::WithCdf;
    if sorted {
        let mut columns: Vec<&mut Vec<f64>> = values.iter_mut().flatten().collect();
        order::sort_by_key(&mut columns, |c| std::cmp::Reverse(c.len()));
        parallel::map(columns, slo_sort::sort_total);
    }
    let moments_at = |cell: usize, k: usize| -> Moments {
        let at = cell * batch.len() + k;
        moments.get(at).copied().unwrap_or_default()
    };
    // The statistics of groups of cells, a job per group and indicator, read from the cells'
    // columns (a cell's own, a class's cells, or every cell for the overall figures) without
    // merging. Every group's jobs at once, the largest first, so that the cores finish
    // together: the overall figures are jobs as large as all the cells' together.
    let stats_of = |of: &[Vec<usize>]| -> Vec<Vec<IndicatorStats>> {
        let parts_of = |g: usize, k: usize| -> Vec<&[f64]> {
            let group = of.get(g).map_or(&[][..], Vec::as_slice);
            group
                .iter()
                .filter_map(|&cell| values.get(cell)?.get(k).map(Vec::as_slice))
                .collect()
        };
        let mut jobs: Vec<(usize, usize, Indicator)> = of
            .iter()
            .enumerate()
            .flat_map(|(g, _)| batch.iter().enumerate().map(move |(k, &ind)| (g, k, ind)))
            .collect();
        order::sort_by_key(&mut jobs, |&(g, k, _)| {
            std::cmp::Reverse(parts_of(g, k).iter().map(|p| p.len()).sum::<usize>())
        });
        let mut stats = parallel::map(jobs, |(g, k, ind)| {
            let group = of.get(g).map_or(&[][..], Vec::as_slice);
            let cells: Vec<Moments> = group.iter().map(|&cell| moments_at(cell, k)).collect();
            let moments = Moments::of_parts(&cells);
            (
                g,
                k,
                indicator_stats(ind, &parts_of(g, k), sorted, moments, spec),
            )
        });
        order::sort_by_key(&mut stats, |&(g, k, _)| (g, k));
        let mut out: Vec<Vec<IndicatorStats>> = of.iter().map(|_| Vec::new()).collect();
        for (g, _, stats) in stats {
            if let Some(group) = out.get_mut(g) {
                group.push(stats);
            }
        }
        out
    };
    // A group of one cell (a class without buckets, a spec of one class) has that cell's
    // statistics, copied rather than computed again; the overall figures of one class are
    // that class's.
    let members = groups.members;
    let several: Vec<Vec<usize>> = members.iter().filter(|m| m.len() != 1).cloned().collect();
    let overall: Option<Vec<usize>> = (members.len() != 1).then(|| members.concat());
    let of: Vec<Vec<usize>> = (0..n_cells)
        .map(|k| vec![k])
        .chain(several)
        .chain(overall)
        .collect();
    let mut all = stats_of(&of).into_iter();
    let cell_stats: Vec<Vec<IndicatorStats>> = all.by_ref().take(n_cells).collect();
    let class_stats: Vec<Vec<IndicatorStats>> = members
        .iter()
        .map(|m| match m.as_slice() {
            &[only] => cell_stats.get(only).cloned().unwrap_or_default(),
            _ => all.next().unwrap_or_default(),
        })
        .collect();
    let overall_stats = match class_stats.as_slice() {
        [only] => only.clone(),
        _ => all.next().unwrap_or_default(),
    };
    (cell_stats, class_stats, overall_stats)
}

/// The spec's ITL statistic and the largest gap of every request (NaN for a request without gaps).
fn per_request_gaps(table: &RequestTable, spec: &Spec) -> (Vec<f64>, Vec<f64>) {
    let n = table.len();
    let mut itl_stat = Vec::with_capacity(n);
    let mut max_gap = Vec::with_capacity(n);
    let mut scratch = Vec::new();
    for row in 0..n {
        let gaps = table.itl.of(row);
        max_gap.push(gaps.iter().copied().fold(f64::NAN, f64::max));
        itl_stat.push(match spec.itl_statistic {
            ItlStatistic::Max => gaps.iter().copied().fold(f64::NAN, f64::max),
            ItlStatistic::Percentile { q } => {
                scratch.clear();
                scratch.extend_from_slice(gaps);
                slo_sort::sort_total(&mut scratch);
                percentile_sorted(&scratch, q, spec.method).unwrap_or(f64::NAN)
            }
        });
    }
    (itl_stat, max_gap)
}

/// A sample's count, sum and sum of squared deviations from its mean: what its mean and
/// population standard deviation are made of. The sum is compensated ([`Sum`]): the mean is
/// the exact mean to within a unit or two in the last place, in any order of the values.
#[derive(Clone, Copy, Debug, Default)]
struct Moments {
    n: usize,
    sum: Sum,
    squares: f64,
}

impl Moments {
    /// One column's: the sum, then the squared deviations from its mean.
    fn of(column: &[f64]) -> Moments {
        let n = column.len();
        let sum = Sum::of(column);
        let mean = sum.value() / n as f64;
        let squares = column.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>();
        Moments { n, sum, squares }
    }

    /// The union of samples', from theirs alone: the sums added, and each sample's squared
    /// deviations moved to the union's mean (`squares + n·(its mean − the mean)²`, an identity,
    /// numerically stable). One sample's moments come back as they are.
    fn of_parts(parts: &[Moments]) -> Moments {
        if let [one] = parts {
            return *one;
        }
        let n = parts.iter().map(|p| p.n).sum::<usize>();
        let mut sum = Sum::default();
        for p in parts {
            sum.add_sum(p.sum);
        }
        let mean = sum.value() / n as f64;
        let squares = parts
            .iter()
            .filter(|p| p.n > 0)
            .map(|p| {
                let off = p.sum.value() / p.n as f64 - mean;
                p.squares + p.n as f64 * off * off
            })
            .sum::<f64>();
        Moments { n, sum, squares }
    }

    fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum.value() / self.n as f64)
    }

    fn std(&self) -> Option<f64> {
        (self.n > 0).then(|| (self.squares / self.n as f64).sqrt())
    }
}

/// Summary statistics and percentiles of a sample given as parts (a cell's one column, or the
/// columns of a class's cells, or of every cell for the overall figures, which are never
/// merged) and its [`Moments`]. With `sorted` the parts are each sorted and the CDF is read
/// too; without, they are in the log's order and the CDF is left empty.
///
/// # Formula
/// Order statistics (percentiles, their intervals, the extremes, the CDF's points) are those
/// of the parts' union in [`f64::total_cmp`] order, read at the positions they need with
/// [`values_at_ranks`] (sorted parts) or [`select_at_ranks`] (parts in any order): the same
/// values, bit for bit, as from the merged column sorted. The mean is the parts' compensated
/// sums ([`Sum`]) added and divided by the count, within a unit or two in the last place of
/// the exact mean; the population standard deviation comes from the parts' squared deviations
/// ([`Moments`]): for one part the column's two-pass figure; for several, the same number up
/// to rounding in the last digits (a merged column's additions come in another order).
fn indicator_stats(
    indicator: Indicator,
    parts: &[&[f64]],
    sorted: bool,
    moments: Moments,
    spec: &Spec,
) -> IndicatorStats {
    let (qs, method) = (&spec.percentiles, spec.method);
    let n: usize = parts.iter().map(|p| p.len()).sum();
    let (mean, std) = (moments.mean(), moments.std());
    let read = |ranked: Ranked| IndicatorStats {
        indicator,
        n: n as u64,
        mean,
        std,
        min: (n > 0).then(|| ranked.at(0)),
        max: n.checked_sub(1).map(|last| ranked.at(last)),
        percentiles: qs
            .iter()
            .map(|&q| PercentileValue {
                q,
                value: percentile_ranked(ranked, q, method),
                linear: percentile_ranked(ranked, q, Method::Linear),
                nearest: percentile_ranked(ranked, q, Method::Nearest),
                nearest_rank: percentile_ranked(ranked, q, Method::NearestRank),
                ci95: percentile_ci95_ranked(ranked, q),
            })
            .collect(),
        cdf: cdf_positions(if sorted { n } else { 0 })
            .map(|idx| (ranked.at(idx), (idx + 1) as f64 / n as f64))
            .collect(),
    };
    match parts {
        [] => read(Ranked::Slice(&[])),
        [one] if sorted => read(Ranked::Slice(one)),
        _ => {
            // Which positions the figures read depends on the count alone: a first reading
            // notes them, then their values are found across the parts and read again.
            let wanted = std::cell::RefCell::new(Vec::new());
            read(Ranked::Read {
                len: n,
                at: &|i| {
                    wanted.borrow_mut().push(i);
                    0.0
                },
            });
            let mut positions = wanted.into_inner();
            positions.sort_unstable();
            positions.dedup();
            let values = if sorted {
                values_at_ranks(parts, &positions)
            } else {
                select_at_ranks(parts, &positions)
            };
            read(Ranked::Read {
                len: n,
                at: &|i| {
                    positions
                        .binary_search(&i)
                        .ok()
                        .and_then(|k| values.get(k).copied())
                        .unwrap_or(f64::NAN)
                },
            })
        }
    }
}

/// The positions of a sample of `n` sorted values that its CDF shows: [`CDF_POINTS`] of them
/// (every one, when there are fewer), evenly spaced from the smallest to the largest.
fn cdf_positions(n: usize) -> impl Iterator<Item = usize> {
    let points = CDF_POINTS.min(n);
    (0..points).map(move |k| {
        if points == 1 {
            n - 1
        } else {
            k * (n - 1) / (points - 1)
        }
    })
}

/// How one request fared against its targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Completed and met every target.
    Good,
    /// Completed but missed at least one target (or lacked the data to show it met one).
    Missed,
    Error,
    Timeout,
    /// Cancelled after waiting at least the TTFT target for a first token: attempted and bad.
    CancelledWaiting,
    /// Cancelled sooner, or in a cell without a TTFT target, and counted as attempted and bad
    /// all the same: the policy `count_as_bad`.
    CancelledCounted,
    /// Cancelled and excluded from the denominator.
    Excluded,
}

/// The verdict on one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub outcome: Outcome,
    /// Indicators whose target the request missed (bits of `Indicator::bit`).
    pub missed: u8,
    /// Indicators with a target but no value in the log for this request (also counted as missed).
    pub missing: u8,
}

impl Verdict {
    /// Counted in `attempted`.
    pub fn attempted(&self) -> bool {
        self.outcome != Outcome::Excluded
    }
    pub fn good(&self) -> bool {
        self.outcome == Outcome::Good
    }
}

/// Judges request `row` against `targets`.
///
/// # Formula
/// good = completed AND for every indicator with a target: value <= target (inclusive).
/// TPOT and ITL pass when the request has at most one output token (vLLM's rule).
/// # Edge cases
/// - error / timeout: attempted and bad, whatever their latencies.
/// - cancelled: excluded, unless (policy `ExcludeUnlessWaitedPastTtft`, the default) it waited at
///   least the TTFT target without a first token, or its first token came after the target: then
///   attempted and bad (a TTFT failure the user gave up on).
/// - a completed request with a target on an indicator the log lacks for it is bad, and the miss is
///   marked `missing` so reports can say "no data" rather than "too slow".
/// # Example
/// ```
/// use slo_core::evaluate::{judge, prepare, Outcome};
/// use slo_core::spec::{Indicator, Spec, Targets, TtftTarget};
/// use slo_core::table::{RequestTable, Row};
/// let mut t = RequestTable::default();
/// // TTFT 640 ms, TPOT (4420 - 640) / 100 = 37.8 ms: request 5 of the worked example.
/// t.push(Row { ttft_ms: Some(640.0), e2e_ms: Some(4420.0), output_tokens: Some(101.0), ..Row::default() }, 0, 6, "w");
/// let targets = Targets { ttft: Some(TtftTarget::Fixed { ms: 500.0 }), tpot_ms: Some(50.0), ..Targets::default() };
/// let spec = Spec::single(targets);
/// let v = judge(&t, &prepare(&t, &spec), 0, &targets, spec.cancellations);
/// assert_eq!(v.outcome, Outcome::Missed);
/// assert_eq!(v.missed, Indicator::Ttft.bit());
/// ```
// Once per request in every evaluation: inlined in the size-tuned wasm, where it would be a call.
#[cfg_attr(target_arch = "wasm32", inline(always))]
pub fn judge(
    table: &RequestTable,
    prepared: &Prepared,
    row: usize,
    targets: &Targets,
    policy: CancelPolicy,
) -> Verdict {
    let status = table.status.get(row).copied().unwrap_or_default();
    // (Matches rather than `and_then`, which the size-tuned wasm calls rather than inlines.)
    let ttft_thr = match targets.ttft {
        Some(t) => t.threshold_ms(table.input_tokens(row)),
        None => None,
    };
    match status {
        Status::Error => {
            return Verdict {
                outcome: Outcome::Error,
                missed: 0,
                missing: 0,
            }
        }
        Status::Timeout => {
            return Verdict {
                outcome: Outcome::Timeout,
                missed: 0,
                missing: 0,
            }
        }
        Status::Cancelled => {
            // Whether the user gave up on a first token that was already late.
            let gave_up = ttft_thr.is_some_and(|thr| match table.ttft_ms(row) {
                Some(ttft) => ttft > thr,
                None => cancel_wait_ms(table, row).is_some_and(|w| w >= thr),
            });
            let (outcome, missed) = match policy {
                CancelPolicy::Exclude => (Outcome::Excluded, 0),
                _ if gave_up => (Outcome::CancelledWaiting, Indicator::Ttft.bit()),
                CancelPolicy::CountAsBad => (Outcome::CancelledCounted, 0),
                CancelPolicy::ExcludeUnlessWaitedPastTtft => (Outcome::Excluded, 0),
            };
            return Verdict {
                outcome,
                missed,
                missing: 0,
            };
        }
        Status::Ok => {}
    }
    let mut missed = 0u8;
    let mut missing = 0u8;
    if targets.ttft.is_some() {
        // A per-token target on a request of unknown length cannot be checked: missing.
        match (table.ttft_ms(row), ttft_thr) {
            (Some(v), Some(t)) if v <= t => {}
            (Some(_), Some(_)) => missed |= Indicator::Ttft.bit(),
            _ => {
                missed |= Indicator::Ttft.bit();
                missing |= Indicator::Ttft.bit();
            }
        }
    }
    let mut check =
        |ind: Indicator, value: Option<f64>, target: Option<f64>, undefined_passes: bool| {
            let Some(target) = target else { return };
            match value {
                Some(v) if v <= target => {}
                Some(_) => missed |= ind.bit(),
                None if undefined_passes => {}
                None => {
                    missed |= ind.bit();
                    missing |= ind.bit();
                }
            }
        };
    let at_most_one_token = table.output_tokens(row).is_some_and(|n| n <= 1.0);
    let present = |column: &[f64]| match column.get(row) {
        Some(&v) if !v.is_nan() => Some(v),
        _ => None,
    };
    check(
        Indicator::Tpot,
        present(&prepared.tpot_ms),
        targets.tpot_ms,
        at_most_one_token,
    );
    check(
        Indicator::Itl,
        present(&prepared.itl_stat_ms),
        targets.itl_ms,
        at_most_one_token,
    );
    check(Indicator::E2e, table.e2e_ms(row), targets.e2e_ms, false);
    check(
        Indicator::Queue,
        table.queue_ms(row),
        targets.queue_ms,
        false,
    );
    let outcome = if missed == 0 {
        Outcome::Good
    } else {
        Outcome::Missed
    };
    Verdict {
        outcome,
        missed,
        missing,
    }
}

/// How long a cancelled request waited before the client gave up: E2E if logged, else end - start.
pub fn cancel_wait_ms(table: &RequestTable, row: usize) -> Option<f64> {
    table
        .e2e_ms(row)
        .or_else(|| Some((table.end_s(row)? - table.start_s(row)?) * 1000.0))
}

/// Bad requests grouped by what they missed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailureCount {
    /// "TTFT only", "TTFT + TPOT", "error", "timeout", "cancelled after waiting", "no TPOT data".
    pub label: String,
    pub outcome: Outcome,
    /// Indicators missed (for `Missed` and `CancelledWaiting`).
    pub missed: Vec<Indicator>,
    pub count: u64,
}

/// An indicator in a group: statistics, target and verdicts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndicatorReport {
    pub indicator: Indicator,
    /// The fixed threshold shared by every cell of the group, if there is one.
    pub target_ms: Option<f64>,
    /// True when some cell of the group has a target on this indicator.
    pub targeted: bool,
    pub stats: IndicatorStats,
    /// Per percentile: does it pass the target by the spec's method, by linear, by nearest-rank?
    pub verdicts: Vec<PercentileVerdict>,
    /// Completed requests that met this indicator's target (when targeted).
    pub met: u64,
    /// Attempted requests that missed it (slow, no data, or cancelled waiting for TTFT).
    pub missed: u64,
}

/// Pass/fail of one percentile by three methods.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PercentileVerdict {
    pub q: f64,
    pub pass: Option<bool>,
    pub pass_linear: Option<bool>,
    pub pass_nearest_rank: Option<bool>,
    /// The verdict differs between the methods.
    pub flipped: bool,
}

/// Counts and figures for one group: a cell, a class, or overall.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupReport {
    pub class: Option<String>,
    pub bucket: Option<String>,
    /// The cell's targets (cells only).
    pub targets: Option<Targets>,
    /// ok + error + timeout (+ cancellations counted as bad).
    pub attempted: u64,
    /// Status ok.
    pub completed: u64,
    /// Errors and timeouts.
    pub failed: u64,
    pub errors: u64,
    pub timeouts: u64,
    /// Cancelled requests left out of the denominator.
    pub excluded: u64,
    /// Cancelled requests counted as attempted and bad (TTFT failures the user gave up on, and
    /// under `count_as_bad` every cancellation).
    pub cancelled_counted: u64,
    pub good: u64,
    /// good / attempted.
    pub attainment: Option<f64>,
    pub attainment_ci95: Option<(f64, f64)>,
    /// good / completed: vLLM's benchmark convention (drops failures from the denominator).
    pub attainment_of_completed: Option<f64>,
    /// good / duration.
    pub goodput_rps: Option<f64>,
    /// completed / duration.
    pub throughput_rps: Option<f64>,
    pub indicators: Vec<IndicatorReport>,
    pub failures: Vec<FailureCount>,
    /// The target that fails the most requests here.
    pub binding: Option<Indicator>,
    /// Requests whose TPOT met its target but which had a stall (see `Spec::stall`).
    pub hidden_stalls: u64,
    pub meets_objective: Option<bool>,
    pub warnings: Vec<String>,
    /// Plain-language findings, such as "p90 TTFT and p90 TPOT both pass, yet only 80 % ...".
    pub notes: Vec<String>,
}

/// A bad request, by name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailingRequest {
    pub row: usize,
    pub id: String,
    pub class: Option<String>,
    pub bucket: Option<String>,
    pub outcome: Outcome,
    pub missed: Vec<Indicator>,
    pub missing: Vec<Indicator>,
}

/// A request whose TPOT looked fine but whose stream stalled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StalledRequest {
    pub row: usize,
    pub id: String,
    pub tpot_ms: Option<f64>,
    pub max_gap_ms: f64,
}

/// How long the measured run lasted, and how we know.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Duration {
    pub seconds: Option<f64>,
    /// Where the figure came from, or why there is none.
    pub how: String,
}

impl Duration {
    pub fn known(seconds: f64, how: &str) -> Duration {
        Duration {
            seconds: Some(seconds),
            how: how.to_string(),
        }
    }
    pub fn unknown(why: &str) -> Duration {
        Duration {
            seconds: None,
            how: why.to_string(),
        }
    }
}

/// The run's duration from request timestamps: last end (or start + E2E) minus first start.
///
/// # Formula
/// span_s = max_i(end_i, or start_i + e2e_i / 1000) - min_i(start_i)
/// # Edge cases
/// No start timestamps, or a span that is not positive: `None`.
/// # Example
/// ```
/// use slo_core::table::{RequestTable, Row};
/// let mut t = RequestTable::default();
/// t.push(Row { start_s: Some(10.0), e2e_ms: Some(500.0), ..Row::default() }, 0, 2, "a");
/// t.push(Row { start_s: Some(12.0), end_s: Some(14.0), ..Row::default() }, 0, 3, "a");
/// assert_eq!(slo_core::evaluate::timestamp_span_s(&t), Some(4.0));
/// ```
pub fn timestamp_span_s(table: &RequestTable) -> Option<f64> {
    let mut first = f64::INFINITY;
    let mut last = f64::NEG_INFINITY;
    for row in 0..table.len() {
        let Some(start) = table.start_s(row) else {
            continue;
        };
        first = first.min(start);
        let end = table
            .end_s(row)
            .or_else(|| table.e2e_ms(row).map(|e| start + e / 1000.0));
        last = last.max(end.unwrap_or(start));
    }
    let span = last - first;
    (span.is_finite() && span > 0.0).then_some(span)
}

/// Cancelled requests: how many, how long they waited, how many were counted as TTFT failures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CancelSummary {
    pub cancelled: u64,
    pub counted_as_ttft_failure: u64,
    /// Wait before cancelling, median and max, in ms.
    pub wait_p50_ms: Option<f64>,
    pub wait_max_ms: Option<f64>,
}

/// The full result of evaluating a log against a spec.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub overall: GroupReport,
    pub classes: Vec<GroupReport>,
    /// One per class × bucket cell (plus "unknown length" cells where needed).
    pub cells: Vec<GroupReport>,
    pub method: Method,
    pub objective: f64,
    pub duration: Duration,
    /// Requests no class claimed (left out of every figure).
    pub unassigned: u64,
    pub cancellations: CancelSummary,
    /// The first `MAX_LISTED` bad requests.
    pub failing: Vec<FailingRequest>,
    pub failing_total: u64,
    /// Requests with a fine TPOT but a stall (first `MAX_LISTED`).
    pub stalled: Vec<StalledRequest>,
    pub warnings: Vec<String>,
}

#[derive(Clone, Default)]
struct Counts {
    attempted: u64,
    completed: u64,
    errors: u64,
    timeouts: u64,
    excluded: u64,
    cancelled_counted: u64,
    good: u64,
    met: [u64; 5],
    missed: [u64; 5],
    hidden_stalls: u64,
    /// (outcome, missed bits, missing bits) -> count
    failures: Vec<((Outcome, u8, u8), u64)>,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        self.attempted += other.attempted;
        self.completed += other.completed;
        self.errors += other.errors;
        self.timeouts += other.timeouts;
        self.excluded += other.excluded;
        self.cancelled_counted += other.cancelled_counted;
        self.good += other.good;
        for k in 0..5 {
            self.met[k] += other.met[k];
            self.missed[k] += other.missed[k];
        }
        self.hidden_stalls += other.hidden_stalls;
        for (key, count) in &other.failures {
            self.bump(*key, *count);
        }
    }

    /// Counts `n` requests against each target of `targeted` (bits): missed where `missed`
    /// has its bit, else met if they completed.
    fn count_targets(&mut self, targeted: u8, missed: u8, completed: bool, n: u64) {
        // (Indexed rather than zipped: the size-tuned wasm does not inline the zip, a call per
        // request.)
        for k in 0..self.met.len().min(self.missed.len()) {
            let bit = 1u8 << k;
            if targeted & bit == 0 {
                continue;
            }
            if missed & bit != 0 {
                self.missed[k] += n;
            } else if completed {
                self.met[k] += n;
            }
        }
    }

    fn bump(&mut self, key: (Outcome, u8, u8), by: u64) {
        match self.failures.iter_mut().find(|(k, _)| *k == key) {
            Some((_, c)) => *c += by,
            None => self.failures.push((key, by)),
        }
    }
}

/// Each cell's targets, and the indicators they target as bits (worked out once per cell rather
/// than per request), and the same targets as [`slo_tally`]'s pass reads them.
struct CellTargets {
    targets: Vec<Targets>,
    targeted: Vec<u8>,
    limits: Vec<slo_tally::Cell>,
}

impl CellTargets {
    fn of(prepared: &Prepared, spec: &Spec) -> CellTargets {
        let targets: Vec<Targets> = prepared
            .cells
            .iter()
            .map(|k| {
                let class = spec.classes.get(k.class);
                let bucket = k.bucket.unwrap_or(0);
                class
                    .and_then(|c| c.targets.get(bucket).or(c.targets.first()))
                    .copied()
                    .unwrap_or_default()
            })
            .collect();
        let targeted: Vec<u8> = targets
            .iter()
            .map(|t| {
                Indicator::ALL
                    .iter()
                    .filter(|&&i| t.has(i))
                    .fold(0, |bits, i| bits | i.bit())
            })
            .collect();
        let limits = targets
            .iter()
            .zip(&targeted)
            .map(|(t, &targeted)| {
                let (ttft_ms, ttft_per_input_token_ms) = match t.ttft {
                    Some(TtftTarget::Fixed { ms }) => (ms, None),
                    Some(TtftTarget::PerToken {
                        base_ms,
                        per_token_ms,
                    }) => (base_ms, Some(per_token_ms)),
                    None => (f64::NAN, None),
                };
                let ms = |target: Option<f64>| target.unwrap_or(f64::NAN);
                slo_tally::Cell {
                    targeted,
                    ttft_ms,
                    ttft_per_input_token_ms,
                    tpot_ms: ms(t.tpot_ms),
                    itl_ms: ms(t.itl_ms),
                    e2e_ms: ms(t.e2e_ms),
                    queue_ms: ms(t.queue_ms),
                }
            })
            .collect();
        CellTargets {
            targets,
            targeted,
            limits,
        }
    }
}

/// What [`evaluate`]'s pass over a block of requests adds up. Blocks are tallied apart (on
/// several threads where there are some) and added in the order of their rows, so the sum is
/// what one pass in order would give.
#[derive(Default)]
struct Tally {
    counts: Vec<Counts>,
    /// Row and verdict of the first `MAX_LISTED` bad requests; listed once the blocks are added.
    failing: Vec<(usize, Verdict)>,
    failing_total: u64,
    /// Row and largest gap of the first `MAX_LISTED` hidden stalls.
    stalled: Vec<(usize, f64)>,
    /// How long each cancelled request waited.
    waits: Vec<f64>,
    cancel: CancelSummary,
}

impl Tally {
    fn new(cells: usize) -> Tally {
        Tally {
            counts: vec![Counts::default(); cells],
            ..Tally::default()
        }
    }

    /// Adds the tally of the rows that follow this one's.
    fn add(&mut self, later: Tally) {
        for (mine, theirs) in self.counts.iter_mut().zip(&later.counts) {
            mine.add(theirs);
        }
        let room = MAX_LISTED.saturating_sub(self.failing.len());
        self.failing.extend(later.failing.into_iter().take(room));
        self.failing_total += later.failing_total;
        let room = MAX_LISTED.saturating_sub(self.stalled.len());
        self.stalled.extend(later.stalled.into_iter().take(room));
        self.waits.extend(later.waits);
        self.cancel.cancelled += later.cancel.cancelled;
        self.cancel.counted_as_ttft_failure += later.cancel.counted_as_ttft_failure;
    }
}

/// How [`tally_rows`] judges the requests that completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass {
    /// By [`slo_tally::tally`], a pass over the columns built for speed.
    Columns,
    /// One by one, by [`judge`] (what the pass over the columns is tested against).
    PerRequest,
}

/// Judges the requests in `rows` and adds them to `tally`.
///
/// Requests that completed (nearly all of them) are judged by [`slo_tally`]'s pass over the
/// columns and counted per verdict; the others (errors, timeouts, cancellations) one by one
/// here. So are all of them where a stall rule meets a log with gaps: the pass does not look
/// for hidden stalls.
fn tally_rows(
    table: &RequestTable,
    prepared: &Prepared,
    spec: &Spec,
    per_cell: &CellTargets,
    rows: std::ops::Range<usize>,
    tally: &mut Tally,
    pass: Pass,
) {
    let stalls = spec.stall.is_some() && !prepared.max_gap_ms.is_empty();
    if stalls || pass == Pass::PerRequest {
        for row in rows {
            tally_row(table, prepared, spec, per_cell, row, tally);
        }
        return;
    }
    let statuses = table.status.get(rows.clone()).unwrap_or_default();
    let mut unfinished = Vec::new();
    for (k, status) in statuses.iter().enumerate() {
        if *status != Status::Ok {
            unfinished.push(rows.start + k);
        }
    }
    for &row in &unfinished {
        tally_row(table, prepared, spec, per_cell, row, tally);
    }
    let columns = slo_tally::Columns {
        cell_of: &prepared.cell_of,
        input_tokens: &table.input_tokens,
        output_tokens: &table.output_tokens,
        no_count: crate::table::NO_COUNT,
        ttft_ms: &table.ttft_ms,
        tpot_ms: &prepared.tpot_ms,
        itl_ms: &prepared.itl_stat_ms,
        e2e_ms: &table.e2e_ms,
        queue_ms: &table.queue_ms,
    };
    let done = slo_tally::tally(&columns, &per_cell.limits, rows, &unfinished, MAX_LISTED);
    let cells = done.counts.chunks(slo_tally::CODES);
    for ((c, &bits), counts) in tally.counts.iter_mut().zip(&per_cell.targeted).zip(cells) {
        for (code, &n) in counts.iter().enumerate().filter(|(_, &n)| n > 0) {
            let (missed, missing) = slo_tally::verdict(code);
            c.attempted += n;
            c.completed += n;
            c.count_targets(bits, missed, true, n);
            if missed == 0 {
                c.good += n;
            } else {
                c.bump((Outcome::Missed, missed, missing), n);
                tally.failing_total += n;
            }
        }
    }
    // The first bad requests in row order, of both kinds.
    for row in done.missed_rows {
        let cell = prepared.cell_of.get(row).copied().unwrap_or(u32::MAX) as usize;
        if let Some(targets) = per_cell.targets.get(cell) {
            let v = judge(table, prepared, row, targets, spec.cancellations);
            tally.failing.push((row, v));
        }
    }
    order::sort_by_key(&mut tally.failing, |&(row, _)| row);
    tally.failing.truncate(MAX_LISTED);
}

/// Judges request `row` and adds it to `tally`.
fn tally_row(
    table: &RequestTable,
    prepared: &Prepared,
    spec: &Spec,
    per_cell: &CellTargets,
    row: usize,
    tally: &mut Tally,
) {
    let (cell_targets, targeted) = (&per_cell.targets, &per_cell.targeted);
    let cell = prepared.cell_of.get(row).copied().unwrap_or(u32::MAX) as usize;
    let (Some(targets), Some(&bits), Some(c)) = (
        cell_targets.get(cell),
        targeted.get(cell),
        tally.counts.get_mut(cell),
    ) else {
        return;
    };
    let v = judge(table, prepared, row, targets, spec.cancellations);
    if matches!(table.status.get(row), Some(Status::Cancelled)) {
        tally.cancel.cancelled += 1;
        if let Some(w) = cancel_wait_ms(table, row) {
            tally.waits.push(w);
        }
    }
    match v.outcome {
        Outcome::Excluded => {
            c.excluded += 1;
            return;
        }
        Outcome::Good => c.good += 1,
        Outcome::Error => c.errors += 1,
        Outcome::Timeout => c.timeouts += 1,
        Outcome::CancelledWaiting => {
            c.cancelled_counted += 1;
            tally.cancel.counted_as_ttft_failure += 1;
        }
        Outcome::CancelledCounted => c.cancelled_counted += 1,
        Outcome::Missed => {}
    }
    c.attempted += 1;
    let completed = matches!(v.outcome, Outcome::Good | Outcome::Missed);
    if completed {
        c.completed += 1;
    }
    c.count_targets(bits, v.missed, completed, 1);
    if !v.good() {
        c.bump((v.outcome, v.missed, v.missing), 1);
        tally.failing_total += 1;
        if tally.failing.len() < MAX_LISTED {
            tally.failing.push((row, v));
        }
    }
    // A stall the TPOT target did not see.
    if completed && v.missed & Indicator::Tpot.bit() == 0 {
        if let Some(max_gap) = stall_gap(prepared, spec, row) {
            c.hidden_stalls += 1;
            if tally.stalled.len() < MAX_LISTED {
                tally.stalled.push((row, max_gap));
            }
        }
    }
}

/// Evaluates with targets, reusing `prepared` (which must come from [`prepare`] with a spec of the
/// same `grouping_key`; if it does not, this prepares afresh).
pub fn evaluate(
    table: &RequestTable,
    prepared: &Prepared,
    spec: &Spec,
    duration: &Duration,
) -> Report {
    evaluate_by(table, prepared, spec, duration, Pass::Columns)
}

/// [`evaluate`], the completed requests judged as `pass` says.
fn evaluate_by(
    table: &RequestTable,
    prepared: &Prepared,
    spec: &Spec,
    duration: &Duration,
    pass: Pass,
) -> Report {
    if prepared.key != spec.grouping_key() || prepared.cell_of.len() != table.len() {
        return evaluate_by(table, &prepare(table, spec), spec, duration, pass);
    }
    let per_cell = CellTargets::of(prepared, spec);
    let n_cells = prepared.cells.len();
    let blocks = parallel::map(parallel::row_blocks(table.len()).collect(), |rows| {
        let mut tally = Tally::new(n_cells);
        tally_rows(table, prepared, spec, &per_cell, rows, &mut tally, pass);
        tally
    });
    let mut tally = Tally::new(n_cells);
    for block in blocks {
        tally.add(block);
    }
    report_from(table, prepared, spec, duration, &per_cell, tally)
}

/// The report of `tally`, the requests' verdicts added up.
fn report_from(
    table: &RequestTable,
    prepared: &Prepared,
    spec: &Spec,
    duration: &Duration,
    per_cell: &CellTargets,
    tally: Tally,
) -> Report {
    let cell_targets = per_cell.targets.as_slice();
    let Tally {
        counts,
        failing,
        failing_total,
        stalled,
        mut waits,
        mut cancel,
    } = tally;
    let failing = failing
        .iter()
        .map(|(row, v)| failing_request(table, prepared, spec, *row, v))
        .collect();
    let stalled = stalled
        .into_iter()
        .map(|(row, max_gap_ms)| StalledRequest {
            row,
            id: table.id(row).into_owned(),
            tpot_ms: prepared.tpot_ms.get(row).copied().filter(|t| !t.is_nan()),
            max_gap_ms,
        })
        .collect();
    waits.sort_by(f64::total_cmp);
    cancel.wait_p50_ms = percentile_sorted(&waits, 50.0, Method::Linear);
    cancel.wait_max_ms = waits.last().copied();

    let group = |class: Option<String>,
                 bucket: Option<String>,
                 targets: Option<Targets>,
                 shared: Option<Targets>,
                 counts: &Counts,
                 stats: &[IndicatorStats]| {
        group_report(
            spec, duration, class, bucket, targets, shared, counts, stats,
        )
    };
    let mut cells = Vec::new();
    for (k, key) in prepared.cells.iter().enumerate() {
        let class_name = spec.classes.get(key.class).map(|c| c.name.clone());
        let bucket = match key.bucket {
            Some(b) => spec.bucket_label(b),
            None => "unknown length".to_string(),
        };
        let t = cell_targets.get(k).copied();
        let (Some(c), Some(stats)) = (counts.get(k), prepared.cell_stats.get(k)) else {
            continue;
        };
        cells.push(group(class_name, Some(bucket), t, t, c, stats));
    }
    let mut classes = Vec::new();
    let mut total = Counts::default();
    for (ci, class) in spec.classes.iter().enumerate() {
        let mut c = Counts::default();
        let members: Vec<usize> = prepared
            .cells
            .iter()
            .enumerate()
            .filter(|(_, k)| k.class == ci)
            .map(|(i, _)| i)
            .collect();
        for &i in &members {
            if let Some(x) = counts.get(i) {
                c.add(x);
            }
        }
        total.add(&c);
        let shared = shared_targets(members.iter().filter_map(|&i| cell_targets.get(i)));
        let Some(stats) = prepared.class_stats.get(ci) else {
            continue;
        };
        classes.push(group(
            Some(class.name.clone()),
            None,
            None,
            shared,
            &c,
            stats,
        ));
    }
    let shared = shared_targets(cell_targets.iter());
    let mut overall = group(None, None, None, shared, &total, &prepared.overall_stats);

    let mut warnings = Vec::new();
    if prepared.unassigned > 0 {
        warnings.push(format!(
            "{} requests matched no class and are left out of every figure; add a default class to include them",
            prepared.unassigned
        ));
    }
    if prepared.cells.iter().any(|k| k.bucket.is_none()) {
        warnings.push(
            "some requests have no input length, so they could not be put in a length bucket; they are reported in \"unknown length\" cells".to_string(),
        );
    }
    // A rule that can match nothing empties its class without a word otherwise: a misspelt
    // column or value, or a column the files do not have.
    for class in &spec.classes {
        let ClassRule::Equals { column, value } = &class.rule else {
            continue;
        };
        let name = &class.name;
        match rule_column(table, column, value) {
            None => warnings.push(format!(
                "class \"{name}\" matches no request: its rule reads the column \"{}\", which the data does not have",
                column.trim()
            )),
            Some((_, None)) => warnings.push(format!(
                "class \"{name}\" matches no request: no request has {} = \"{}\"",
                column.trim(),
                value.trim()
            )),
            Some(_) => {}
        }
    }
    if spec.stall.is_some() && !table.has_itl() {
        warnings.push(
            "a stall rule is set but the log has no inter-token gaps, so stalls cannot be seen"
                .to_string(),
        );
    }
    overall.warnings.extend(warnings.iter().cloned());
    Report {
        overall,
        classes,
        cells,
        method: spec.method,
        objective: spec.objective,
        duration: duration.clone(),
        unassigned: prepared.unassigned,
        cancellations: cancel,
        failing,
        failing_total,
        stalled,
        warnings,
    }
}

/// Prepares and evaluates in one call.
///
/// # Example
/// ```
/// use slo_core::{evaluate::{report, Duration}, spec::{Spec, Targets, TtftTarget}, table::{RequestTable, Row}};
/// let mut t = RequestTable::default();
/// for (ttft, e2e) in [(100.0, 1100.0), (900.0, 1900.0)] {
///     t.push(Row { ttft_ms: Some(ttft), e2e_ms: Some(e2e), output_tokens: Some(11.0), ..Row::default() }, 0, 2, "a");
/// }
/// let spec = Spec::single(Targets { ttft: Some(TtftTarget::Fixed { ms: 500.0 }), ..Targets::default() });
/// let r = report(&t, &spec, &Duration::known(2.0, "typed"));
/// assert_eq!(r.overall.attainment, Some(0.5));
/// assert_eq!(r.overall.goodput_rps, Some(0.5));
/// ```
pub fn report(table: &RequestTable, spec: &Spec, duration: &Duration) -> Report {
    evaluate(table, &prepare(table, spec), spec, duration)
}

fn stall_gap(prepared: &Prepared, spec: &Spec, row: usize) -> Option<f64> {
    // The rule first: without one, a re-evaluation need not read a million gaps.
    let rule = spec.stall?;
    let max_gap = prepared
        .max_gap_ms
        .get(row)
        .copied()
        .filter(|g| !g.is_nan())?;
    let threshold = match rule {
        StallRule::AbsoluteMs { ms } => ms,
        StallRule::TimesTpot { k } => {
            k * prepared.tpot_ms.get(row).copied().filter(|t| !t.is_nan())?
        }
    };
    (max_gap > threshold).then_some(max_gap)
}

fn failing_request(
    table: &RequestTable,
    prepared: &Prepared,
    spec: &Spec,
    row: usize,
    v: &Verdict,
) -> FailingRequest {
    let key = prepared.cells.get(prepared.cell_of[row] as usize);
    FailingRequest {
        row,
        id: table.id(row).into_owned(),
        class: key
            .and_then(|k| spec.classes.get(k.class))
            .map(|c| c.name.clone()),
        bucket: key.map(|k| {
            k.bucket
                .map_or("unknown length".to_string(), |b| spec.bucket_label(b))
        }),
        outcome: v.outcome,
        missed: bits(v.missed),
        missing: bits(v.missing),
    }
}

fn bits(b: u8) -> Vec<Indicator> {
    Indicator::ALL
        .into_iter()
        .filter(|i| b & i.bit() != 0)
        .collect()
}

/// The targets every cell shares, indicator by indicator: a fixed threshold only where all cells
/// agree on it.
fn shared_targets<'a>(mut cells: impl Iterator<Item = &'a Targets>) -> Option<Targets> {
    let first = *cells.next()?;
    Some(cells.fold(first, |acc, t| {
        Targets {
            ttft: (acc.ttft == t.ttft).then_some(acc.ttft).flatten(),
            tpot_ms: (acc.tpot_ms == t.tpot_ms).then_some(acc.tpot_ms).flatten(),
            itl_ms: (acc.itl_ms == t.itl_ms).then_some(acc.itl_ms).flatten(),
            e2e_ms: (acc.e2e_ms == t.e2e_ms).then_some(acc.e2e_ms).flatten(),
            queue_ms: (acc.queue_ms == t.queue_ms)
                .then_some(acc.queue_ms)
                .flatten(),
        }
    }))
}

fn failure_label(outcome: Outcome, missed: u8, missing: u8) -> String {
    match outcome {
        Outcome::Error => "error".to_string(),
        Outcome::Timeout => "timeout".to_string(),
        Outcome::CancelledWaiting => "cancelled after waiting past the TTFT target".to_string(),
        Outcome::CancelledCounted => "cancelled (counted as bad)".to_string(),
        Outcome::Good | Outcome::Excluded => outcome_name(outcome).to_string(),
        Outcome::Missed => {
            let slow: Vec<&str> = bits(missed & !missing).iter().map(|i| i.label()).collect();
            let absent: Vec<String> = bits(missing)
                .iter()
                .map(|i| format!("no {} data", i.label()))
                .collect();
            let mut parts = Vec::new();
            match slow.len() {
                0 => {}
                1 => parts.push(format!("{} only", slow[0])),
                _ => parts.push(slow.join(" + ")),
            }
            parts.extend(absent);
            parts.join(", ")
        }
    }
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Good => "good",
        Outcome::Missed => "missed",
        Outcome::Error => "error",
        Outcome::Timeout => "timeout",
        Outcome::CancelledWaiting => "cancelled waiting",
        Outcome::CancelledCounted => "cancelled, counted",
        Outcome::Excluded => "excluded",
    }
}

/// Joint attainment with its interval.
///
/// # Formula
/// attainment = good / attempted, attempted = ok + error + timeout (+ cancellations counted as bad);
/// 95 % Wilson score interval.
/// # Edge cases
/// attempted = 0: `None` for both.
/// # Example
/// ```
/// let (a, ci) = slo_core::evaluate::attainment(8, 10);
/// assert_eq!(a, Some(0.8));
/// let (lo, hi) = ci.unwrap();
/// assert!(lo < 0.8 && hi > 0.8);
/// assert_eq!(slo_core::evaluate::attainment(0, 0), (None, None));
/// ```
pub fn attainment(good: u64, attempted: u64) -> (Option<f64>, Option<(f64, f64)>) {
    if attempted == 0 {
        return (None, None);
    }
    (
        Some(good as f64 / attempted as f64),
        wilson_ci95(good, attempted),
    )
}

#[allow(clippy::too_many_arguments)]
fn group_report(
    spec: &Spec,
    duration: &Duration,
    class: Option<String>,
    bucket: Option<String>,
    targets: Option<Targets>,
    shared: Option<Targets>,
    c: &Counts,
    stats: &[IndicatorStats],
) -> GroupReport {
    let (attainment, attainment_ci95) = attainment(c.good, c.attempted);
    let attainment_of_completed = (c.completed > 0).then(|| c.good as f64 / c.completed as f64);
    let per_s = |count: u64| {
        duration
            .seconds
            .filter(|d| *d > 0.0)
            .map(|d| count as f64 / d)
    };
    let targeted_anywhere = |ind: Indicator| {
        spec.classes
            .iter()
            .filter(|cl| class.as_ref().is_none_or(|name| *name == cl.name))
            .flat_map(|cl| cl.targets.iter())
            .any(|t| t.has(ind))
    };
    let indicators: Vec<IndicatorReport> = stats
        .iter()
        .map(|s| {
            let ind = s.indicator;
            let target_ms = shared.and_then(|t| t.fixed_ms(ind));
            let targeted = match targets {
                Some(t) => t.has(ind),
                None => targeted_anywhere(ind),
            };
            let verdicts = s
                .percentiles
                .iter()
                .map(|p| {
                    let pass = |v: Option<f64>| Some(v? <= target_ms?);
                    let (a, b, c) = (pass(p.value), pass(p.linear), pass(p.nearest_rank));
                    PercentileVerdict {
                        q: p.q,
                        pass: a,
                        pass_linear: b,
                        pass_nearest_rank: c,
                        flipped: a.is_some() && (a != b || a != c),
                    }
                })
                .collect();
            IndicatorReport {
                indicator: ind,
                target_ms,
                targeted,
                stats: s.clone(),
                verdicts,
                met: c.met[ind as usize],
                missed: c.missed[ind as usize],
            }
        })
        .collect();
    let mut failures: Vec<FailureCount> = c
        .failures
        .iter()
        .map(|&((outcome, missed, missing), count)| FailureCount {
            label: failure_label(outcome, missed, missing),
            outcome,
            missed: bits(missed),
            count,
        })
        .collect();
    order::sort_by(&mut failures, |a, b| {
        b.count.cmp(&a.count).then(a.label.cmp(&b.label))
    });
    let binding = Indicator::ALL
        .into_iter()
        .filter(|&i| c.missed[i as usize] > 0)
        .max_by(|a, b| {
            c.missed[*a as usize]
                .cmp(&c.missed[*b as usize])
                .then(b.cmp(a))
        });
    let mut warnings = Vec::new();
    // A group without requests has no attainment to be unsure of: it says "no requests" itself.
    if c.attempted > 0 && c.attempted < spec.min_requests {
        warnings.push(format!(
            "only {} attempted requests (fewer than {}): the attainment interval is wide and one request moves it by {:.2} points",
            c.attempted,
            spec.min_requests,
            100.0 / c.attempted as f64
        ));
    }
    let mut notes = Vec::new();
    if let Some(a) = attainment {
        // The trap: every marginal percentile passes, yet fewer requests than that percentile
        // met every target at once.
        let mut qs: Vec<f64> = spec.percentiles.clone();
        order::sort_by(&mut qs, |x, y| y.total_cmp(x));
        for q in qs {
            let targeted: Vec<&IndicatorReport> = indicators
                .iter()
                .filter(|r| r.targeted && r.target_ms.is_some())
                .collect();
            if targeted.is_empty() {
                break;
            }
            let all_pass = targeted
                .iter()
                .all(|r| r.verdicts.iter().any(|v| v.q == q && v.pass == Some(true)));
            if all_pass && a < q / 100.0 {
                let names: Vec<String> = targeted
                    .iter()
                    .map(|r| format!("p{} {}", fmt_q(q), r.indicator.label()))
                    .collect();
                let verb = if names.len() == 1 {
                    "passes"
                } else {
                    "all pass"
                };
                let names = if names.len() == 2 {
                    names.join(" and ")
                } else {
                    names.join(", ")
                };
                let verb = if targeted.len() == 2 {
                    "both pass"
                } else {
                    verb
                };
                notes.push(format!(
                    "{names} {verb}, yet only {} of requests met every target at once",
                    fmt_pct(a)
                ));
                break;
            }
        }
    }
    GroupReport {
        class,
        bucket,
        targets,
        attempted: c.attempted,
        completed: c.completed,
        failed: c.errors + c.timeouts,
        errors: c.errors,
        timeouts: c.timeouts,
        excluded: c.excluded,
        cancelled_counted: c.cancelled_counted,
        good: c.good,
        attainment,
        attainment_ci95,
        attainment_of_completed,
        goodput_rps: per_s(c.good),
        throughput_rps: per_s(c.completed),
        indicators,
        failures,
        binding,
        hidden_stalls: c.hidden_stalls,
        meets_objective: attainment.map(|a| a >= spec.objective),
        warnings,
        notes,
    }
}

/// A percentile level as vLLM writes it in keys: 90 -> "90", 99.9 -> "99.9".
pub fn fmt_q(q: f64) -> String {
    if q.fract() == 0.0 {
        format!("{q:.0}")
    } else {
        let s = format!("{q:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A fraction as a percentage with up to two decimals: 0.8 -> "80 %", 0.98765 -> "98.77 %".
pub fn fmt_pct(f: f64) -> String {
    let s = format!("{:.2}", f * 100.0);
    format!("{} %", s.trim_end_matches('0').trim_end_matches('.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::ClassSpec;
    use crate::table::Row;

    /// The pass over the columns (`slo_tally`) gives the report that judging each request
    /// by [`judge`] gives, to the byte: on 140,000 requests (three blocks of rows) of every
    /// status, with absent latencies and counts, 0 and 1 output tokens, values exactly at
    /// their target, requests no class claims, three classes with a target per length bucket
    /// (fixed and per-token TTFT, TPOT, ITL, E2E and queue time, each on some cells only),
    /// under each cancellation policy, and with no targets at all.
    #[test]
    fn the_pass_over_the_columns_gives_the_report_of_each_request_judged() {
        let mut next = crate::testing::sequence(0x2545_f491_4f6c_dd1d);
        let mut pick = move |n: u64| next() % n;
        let mut table = RequestTable::default();
        for i in 0..140_000u32 {
            let class = ["chat", "code", "batch", ""][pick(4) as usize];
            let ttft =
                (pick(20) > 0).then(|| [300.0, 250.5, 100.0 + pick(500) as f64][pick(3) as usize]);
            let output_tokens = match pick(20) {
                0 => None,
                1 => Some(0.0),
                2 => Some(1.0),
                _ => Some(2.0 + pick(500) as f64),
            };
            let row = Row {
                status: match pick(100) {
                    0..=2 => Status::Error,
                    3..=5 => Status::Timeout,
                    6..=9 => Status::Cancelled,
                    _ => Status::Ok,
                },
                ttft_ms: ttft,
                e2e_ms: (pick(20) > 0).then(|| ttft.unwrap_or(0.0) + pick(20_000) as f64),
                input_tokens: (pick(20) > 0).then(|| pick(3000) as f64),
                output_tokens,
                queue_ms: (pick(3) == 0).then(|| pick(100) as f64),
                itl_ms: (pick(20) == 0).then(|| vec![10.0, pick(60) as f64]),
                labels: if class.is_empty() {
                    Vec::new()
                } else {
                    vec![("class".to_string(), class.to_string())]
                },
                ..Row::default()
            };
            table.push(row, 0, i + 2, "pass.csv");
        }
        let class = |name: &str, targets: Vec<Targets>| ClassSpec {
            name: name.into(),
            description: String::new(),
            rule: ClassRule::Equals {
                column: "class".into(),
                value: name.into(),
            },
            targets,
        };
        let fixed = |ms: f64| Some(TtftTarget::Fixed { ms });
        let chat = |ttft: f64, tpot: f64| Targets {
            ttft: fixed(ttft),
            tpot_ms: Some(tpot),
            ..Targets::default()
        };
        let code = Targets {
            ttft: Some(TtftTarget::PerToken {
                base_ms: 100.0,
                per_token_ms: 0.2,
            }),
            e2e_ms: Some(10_000.0),
            ..Targets::default()
        };
        let batch = Targets {
            itl_ms: Some(30.0),
            queue_ms: Some(50.0),
            tpot_ms: Some(60.0),
            ..Targets::default()
        };
        let mut spec = Spec::single(Targets::default());
        spec.bucket_edges = vec![100, 1000];
        spec.classes = vec![
            class(
                "chat",
                vec![chat(300.0, 40.0), chat(250.5, 50.0), Targets::default()],
            ),
            class(
                "code",
                vec![
                    code,
                    code,
                    Targets {
                        tpot_ms: None,
                        ..code
                    },
                ],
            ),
            class("batch", vec![batch]),
        ];
        let duration = Duration::known(1000.0, "typed");
        let mut specs = Vec::new();
        for policy in [
            CancelPolicy::ExcludeUnlessWaitedPastTtft,
            CancelPolicy::Exclude,
            CancelPolicy::CountAsBad,
        ] {
            specs.push(Spec {
                cancellations: policy,
                ..spec.clone()
            });
        }
        specs.push(Spec::single(Targets::default()));
        for spec in &specs {
            let prepared = prepare(&table, spec);
            let by_columns = evaluate_by(&table, &prepared, spec, &duration, Pass::Columns);
            let one_by_one = evaluate_by(&table, &prepared, spec, &duration, Pass::PerRequest);
            let json = |r: &Report| serde_json::to_string(r).unwrap_or_default();
            assert_eq!(
                json(&by_columns),
                json(&one_by_one),
                "{:?}",
                spec.cancellations
            );
            if spec.classes.len() == 3 {
                assert!(by_columns.failing_total > MAX_LISTED as u64);
                let failures = &by_columns.overall.failures;
                assert!(failures.iter().any(|f| f.label.contains("no TTFT data")));
                assert!(failures.iter().any(|f| f.label == "error"));
            }
        }
    }

    /// Each request's class, looked up by its code when every rule reads one column, is the
    /// class the rules give tried one by one in the spec's order: the first that matches, else
    /// the default. With a value two rules name, a value no request has, a missing column,
    /// empty cells, the default class before others or absent, and rules on two columns.
    #[test]
    fn classes_looked_up_by_code_are_the_first_rule_that_matches() {
        let mut next = crate::testing::sequence(0x9e37_79b9_7f4a_7c15);
        let values = ["chat", "code", "batch", "", "tool"];
        let mut table = RequestTable::default();
        for i in 0..2_000u32 {
            let mut labels = Vec::new();
            for column in ["class", "tenant"] {
                let value = values[(next() % values.len() as u64) as usize];
                if !value.is_empty() {
                    labels.push((column.to_string(), value.to_string()));
                }
            }
            let row = Row {
                labels,
                ..Row::default()
            };
            table.push(row, 0, i + 2, "classes.csv");
        }
        let equals = |column: &str, value: &str| ClassSpec {
            name: format!("{column}={value}"),
            description: String::new(),
            rule: ClassRule::Equals {
                column: column.into(),
                value: value.into(),
            },
            targets: vec![Targets::default()],
        };
        let default = ClassSpec {
            name: "other".into(),
            description: String::new(),
            rule: ClassRule::Default,
            targets: vec![Targets::default()],
        };
        let one_column = vec![
            equals("class", "code"),
            equals("class", "chat"),
            equals("class", "code"),
            equals("class", "nobody"),
            equals("model", "chat"),
            equals("Class", "batch"),
        ];
        let mut with_default = one_column.clone();
        with_default.insert(2, default.clone());
        let mut two_columns = one_column.clone();
        two_columns.insert(1, equals("tenant", "tool"));
        two_columns.push(default);
        for (name, classes, looked_up) in [
            ("one column", one_column, true),
            ("one column and a default", with_default, true),
            ("two columns", two_columns, false),
        ] {
            let mut spec = Spec::single(Targets::default());
            spec.classes = classes;
            let got = Classes::new(&table, &spec);
            assert_eq!(got.by_code.is_some(), looked_up, "{name}");
            for row in 0..table.len() {
                let matches = |class: &ClassSpec| match &class.rule {
                    ClassRule::Equals { column, value } => {
                        let column = table.label(&column.to_ascii_lowercase());
                        column.and_then(|c| c.get(row)) == Some(value.as_str())
                    }
                    ClassRule::Default => false,
                };
                let want = spec.classes.iter().position(matches).or_else(|| {
                    spec.classes
                        .iter()
                        .position(|c| c.rule == ClassRule::Default)
                });
                assert_eq!(got.of(row), want, "{name}, row {row}");
            }
        }
    }

    /// The browser's way of preparing (one indicator at a time, to keep its memory low) gives
    /// what every indicator at once does, every figure and per-request column alike; and
    /// without the CDFs (the command line's report: selection instead of sorts), the same
    /// again but for the empty CDFs. For specs with and without buckets, classes of one cell
    /// and of several, requests of unknown length, failures, queue times and inter-token gaps.
    #[test]
    fn preparing_one_indicator_at_a_time_or_without_cdfs_gives_the_same_preparation() {
        let mut next = crate::testing::sequence(0x2545_f491_4f6c_dd1d);
        let mut table = RequestTable::default();
        for i in 0..20_000u32 {
            let ttft = (next() % 900_000) as f64 / 1000.0;
            let output = [0.0, 1.0, 2.0, 57.0, 300.0][(next() % 5) as usize];
            let gaps = (i % 3 == 0).then(|| {
                (0..next() % 6)
                    .map(|_| (next() % 90) as f64 / 3.0)
                    .collect()
            });
            let row = Row {
                status: match next() % 50 {
                    0 => Status::Error,
                    1 => Status::Timeout,
                    _ => Status::Ok,
                },
                input_tokens: (!next().is_multiple_of(40)).then(|| (next() % 8000) as f64),
                output_tokens: Some(output),
                ttft_ms: Some(ttft),
                e2e_ms: Some(ttft + output * (next() % 70) as f64),
                queue_ms: (i % 2 == 0).then(|| (next() % 5000) as f64 / 7.0),
                itl_ms: gaps,
                labels: vec![(
                    "class".into(),
                    ["chat", "code", "batch"][(next() % 3) as usize].into(),
                )],
                ..Row::default()
            };
            table.push(row, 0, i + 2, "mixed.csv");
        }
        let class = |name: &str| ClassSpec {
            name: name.into(),
            description: String::new(),
            rule: ClassRule::Equals {
                column: "class".into(),
                value: name.into(),
            },
            targets: vec![Targets::default()],
        };
        let mut one_class = Spec::single(Targets {
            ttft: Some(TtftTarget::Fixed { ms: 500.0 }),
            ..Targets::default()
        });
        one_class.percentiles = vec![50.0, 90.0, 99.0, 99.9];
        let mut buckets = one_class.clone();
        buckets.bucket_edges = vec![1000, 4000];
        buckets.classes = vec![class("chat"), class("code"), class("batch")];
        buckets.itl_statistic = ItlStatistic::Percentile { q: 90.0 };
        let mut no_buckets = buckets.clone();
        no_buckets.bucket_edges = Vec::new();
        no_buckets.method = Method::Nearest;
        for (name, spec) in [
            ("one class", one_class),
            ("buckets", buckets),
            ("no buckets", no_buckets),
        ] {
            // Debug prints each float exactly (NaN too), so equal texts are equal figures.
            let all = prepare_in(&table, &spec, true, Shape::WithCdf);
            let one_by_one = prepare_in(&table, &spec, false, Shape::WithCdf);
            assert!(
                format!("{all:?}") == format!("{one_by_one:?}"),
                "{name}: the two ways differ"
            );
            let mut no_cdf = all.clone();
            let stats = no_cdf.cell_stats.iter_mut().chain(&mut no_cdf.class_stats);
            for s in stats.flatten().chain(&mut no_cdf.overall_stats) {
                assert!(s.n == 0 || !s.cdf.is_empty(), "{name}: {s:?}");
                s.cdf.clear();
            }
            for all_at_once in [true, false] {
                let without = prepare_in(&table, &spec, all_at_once, Shape::WithoutCdf);
                assert!(
                    format!("{no_cdf:?}") == format!("{without:?}"),
                    "{name}: without the CDFs the figures differ"
                );
            }
            let all = format!("{all:?}");
            assert!(
                all.contains("Itl") && all.contains("Queue"),
                "{name}: {all:.300}"
            );
        }
    }

    /// A group's statistics read from its cells' sorted columns are those of the merged
    /// column: every order statistic (percentiles by each method, their intervals, the
    /// extremes, the CDF's points) bit for bit, and the mean and standard deviation, made of
    /// the cells' moments, to the last digits (two-pass sums of the merged column, written here).
    /// The same, but for the CDF, from the cells' columns in the log's order, by selection.
    #[test]
    fn a_groups_statistics_from_its_parts_are_the_merged_columns() {
        let mut next = crate::testing::sequence(0x9e37_79b9_7f4a_7c15);
        let qs = [50.0, 75.0, 90.0, 95.0, 99.0, 99.9];
        for (case, lens) in [
            [30_000, 45_000, 9_000],
            [1, 700, 0],
            [5, 5, 5],
            [0, 0, 250_001],
        ]
        .into_iter()
        .enumerate()
        {
            let mut parts: Vec<Vec<f64>> = lens
                .iter()
                .map(|&len| {
                    (0..len)
                        .map(|_| match next() % 20 {
                            0 => 1000.0, // the same value in every part
                            _ => (next() % 5_000_000) as f64 / 997.0,
                        })
                        .collect()
                })
                .collect();
            let unsorted = parts.clone();
            parts.iter_mut().for_each(slo_sort::sort_total);
            let mut merged = parts.concat();
            slo_sort::sort_total(&mut merged);
            let slices: Vec<&[f64]> = parts.iter().map(Vec::as_slice).collect();
            let spec = Spec {
                percentiles: qs.to_vec(),
                method: Method::MedianUnbiased,
                ..Spec::default()
            };
            let cells: Vec<Moments> = slices.iter().map(|p| Moments::of(p)).collect();
            let moments = Moments::of_parts(&cells);
            let got = indicator_stats(Indicator::Ttft, &slices, true, moments, &spec);
            let whole = Moments::of(&merged);
            let want = indicator_stats(Indicator::Ttft, &[&merged], true, whole, &spec);
            let in_order: Vec<&[f64]> = unsorted.iter().map(Vec::as_slice).collect();
            let mut selected = indicator_stats(Indicator::Ttft, &in_order, false, moments, &spec);
            assert!(selected.cdf.is_empty() && (want.n == 0 || !want.cdf.is_empty()));
            selected.cdf.clone_from(&want.cdf);
            let bits = |s: &IndicatorStats| {
                let mut b = vec![
                    s.n,
                    s.min.map_or(0, f64::to_bits),
                    s.max.map_or(0, f64::to_bits),
                ];
                for p in &s.percentiles {
                    for v in [p.value, p.linear, p.nearest, p.nearest_rank] {
                        b.push(v.map_or(1, f64::to_bits));
                    }
                    let (lo, hi) = p.ci95.unwrap_or((f64::NAN, f64::NAN));
                    b.extend([lo.to_bits(), hi.to_bits()]);
                }
                b.extend(s.cdf.iter().flat_map(|&(v, f)| [v.to_bits(), f.to_bits()]));
                b
            };
            assert_eq!(bits(&got), bits(&want), "case {case}");
            assert_eq!(bits(&selected), bits(&want), "case {case}, selected");
            let n = merged.len() as f64;
            let mean = merged.iter().sum::<f64>() / n;
            let std = (merged.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n).sqrt();
            let close =
                |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() <= 1e-12 * b.abs());
            assert!(
                close(got.mean, mean),
                "case {case}: mean {:?} against {mean}",
                got.mean
            );
            assert!(
                close(got.std, std),
                "case {case}: std {:?} against {std}",
                got.std
            );
        }
    }

    /// A mean is the exact mean of the values to within two units in the last place, in any
    /// order, from one column or from parts: checked against the exact sum (every value below
    /// 2^20 and at least 1 is a whole number of 2^-52, so an `i128` adds them exactly) for a
    /// million latency-like values in the log's order, sorted, reversed and in three parts.
    /// A plain running sum of the same values is further off than that, in every order.
    #[test]
    fn means_are_the_exact_mean_to_the_last_digits_in_any_order() {
        let mut next = crate::testing::sequence(0x1405_7b7e_f767_814f);
        let values: Vec<f64> = (0..1_000_000)
            .map(|_| {
                let heavy = next().is_multiple_of(100);
                let ms = 1000 + next() % if heavy { 900_000_000 } else { 400_000 };
                ms as f64 / 1000.0
            })
            .collect();
        let scale = 2f64.powi(52);
        let exact: i128 = values.iter().map(|&v| (v * scale) as i128).sum();
        let want = exact as f64 / scale / values.len() as f64;
        let ulps = |got: f64| (got - want).abs() / (f64::EPSILON * want);
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let reversed: Vec<f64> = sorted.iter().rev().copied().collect();
        for (order, column) in [
            ("log", &values),
            ("sorted", &sorted),
            ("reversed", &reversed),
        ] {
            let got = Moments::of(column).mean().unwrap_or(f64::NAN);
            assert!(ulps(got) <= 2.0, "{order}: {got} against {want}");
            let plain = column.iter().sum::<f64>() / column.len() as f64;
            assert!(ulps(plain) > 2.0, "{order}: the plain sum is {plain}");
            let parts: Vec<Moments> = column.chunks(400_000).map(Moments::of).collect();
            let got = Moments::of_parts(&parts).mean().unwrap_or(f64::NAN);
            assert!(ulps(got) <= 2.0, "{order}, in parts: {got} against {want}");
        }
    }

    /// `evaluate` tallies blocks of rows apart (on several threads where there are some) and
    /// adds them up: the report must be what one pass over the rows in order gives, down to
    /// which bad requests and stalls are listed first. Checked twice: against the whole report
    /// of one tally over every row, and against a pass in order written out here.
    #[test]
    fn blocks_tallied_apart_add_up_to_one_pass_in_row_order() {
        let n = 200_000; // four blocks of rows
        let mut table = RequestTable::default();
        for i in 0..n {
            let ttft = ((i * 7919) % 1000) as f64;
            let row = Row {
                status: match i {
                    _ if i % 601 == 0 => Status::Error,
                    _ if i % 389 == 0 => Status::Cancelled,
                    _ if i % 1999 == 0 => Status::Timeout,
                    _ => Status::Ok,
                },
                ttft_ms: Some(ttft),
                e2e_ms: Some(ttft + 1000.0 + (i % 50) as f64 * 20.0),
                output_tokens: Some(21.0),
                itl_ms: (i % 97 == 0).then(|| vec![10.0, (i % 300) as f64]),
                ..Row::default()
            };
            table.push(row, 0, i as u32 + 2, "a.csv");
        }
        let targets = Targets {
            ttft: Some(TtftTarget::Fixed { ms: 997.0 }),
            tpot_ms: Some(200.0),
            ..Targets::default()
        };
        let mut spec = Spec::single(targets);
        spec.stall = Some(StallRule::AbsoluteMs { ms: 200.0 });
        let prepared = prepare(&table, &spec);
        let duration = Duration::known(100.0, "typed");
        let report = evaluate(&table, &prepared, &spec, &duration);

        let per_cell = CellTargets::of(&prepared, &spec);
        let mut one = Tally::new(prepared.cells.len());
        tally_rows(
            &table,
            &prepared,
            &spec,
            &per_cell,
            0..n,
            &mut one,
            Pass::Columns,
        );
        assert_eq!(
            report,
            report_from(&table, &prepared, &spec, &duration, &per_cell, one)
        );
        assert!(report.cancellations.counted_as_ttft_failure > 0 && report.overall.timeouts > 0);

        let (mut attempted, mut good, mut cancelled) = (0, 0, 0);
        let (mut failing, mut stalled, mut waits) = (Vec::new(), Vec::new(), Vec::new());
        for row in 0..n {
            let v = judge(&table, &prepared, row, &targets, spec.cancellations);
            if table.status[row] == Status::Cancelled {
                cancelled += 1;
                waits.extend(cancel_wait_ms(&table, row));
            }
            if !v.attempted() {
                continue;
            }
            attempted += 1;
            if v.good() {
                good += 1;
            } else {
                failing.push(row);
            }
            let completed = matches!(v.outcome, Outcome::Good | Outcome::Missed);
            if completed && v.missed & Indicator::Tpot.bit() == 0 {
                stalled.extend(stall_gap(&prepared, &spec, row).map(|_| row));
            }
        }
        // Sparse enough that the first MAX_LISTED of each run past the first block.
        assert!(failing.len() > MAX_LISTED && stalled.len() > MAX_LISTED);
        assert!(failing[MAX_LISTED] > 65_536 && stalled[MAX_LISTED] > 65_536);
        assert_eq!(
            report.failing.iter().map(|f| f.row).collect::<Vec<_>>(),
            failing[..MAX_LISTED]
        );
        assert_eq!(report.failing_total, failing.len() as u64);
        assert_eq!(
            report.stalled.iter().map(|s| s.row).collect::<Vec<_>>(),
            stalled[..MAX_LISTED]
        );
        assert_eq!(
            (report.overall.attempted, report.overall.good),
            (attempted, good)
        );
        waits.sort_by(f64::total_cmp);
        assert_eq!(report.cancellations.cancelled, cancelled);
        assert_eq!(report.cancellations.wait_max_ms, waits.last().copied());
        assert_eq!(
            report.cancellations.wait_p50_ms,
            percentile_sorted(&waits, 50.0, Method::Linear)
        );
    }
}
