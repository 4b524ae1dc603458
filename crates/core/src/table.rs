//! The request table: every parsed request log ends up here, column by column.
//!
//! Columns are plain vectors (struct of arrays) so that evaluating a million requests is a few
//! linear passes over `f64` slices. A numeric cell that the log did not have is `f64::NAN`;
//! parsers reject NaN in input, so NaN here always means "absent". Token counts are `u32`
//! ([`NO_COUNT`] where absent), half the memory of an `f64` column. Read cells through the
//! accessors ([`RequestTable::ttft_ms`] and friends), which turn both marks into `None`.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// How a request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Completed: the full response was streamed.
    #[default]
    Ok,
    /// The server or the client reported an error. Counts as attempted and bad.
    Error,
    /// The request ran out of time. Counts as attempted and bad.
    Timeout,
    /// The client gave up. Excluded unless it waited past the TTFT target (see `evaluate`).
    Cancelled,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::Timeout => "timeout",
            Status::Cancelled => "cancelled",
        }
    }

    /// Reads a status cell. Empty means ok; common spellings of each state are accepted, in any
    /// case; other HTTP codes are ok when 2xx, else error.
    pub fn parse(text: &str) -> Option<Status> {
        // Compared without lower-casing into a new string: this runs once per row.
        const SPELLINGS: &[(&str, Status)] = &[
            ("", Status::Ok),
            ("ok", Status::Ok),
            ("success", Status::Ok),
            ("succeeded", Status::Ok),
            ("completed", Status::Ok),
            ("complete", Status::Ok),
            ("200", Status::Ok),
            ("true", Status::Ok),
            ("error", Status::Error),
            ("err", Status::Error),
            ("failed", Status::Error),
            ("failure", Status::Error),
            ("fail", Status::Error),
            ("false", Status::Error),
            ("timeout", Status::Timeout),
            ("timed_out", Status::Timeout),
            ("timed out", Status::Timeout),
            ("deadline_exceeded", Status::Timeout),
            ("504", Status::Timeout),
            ("408", Status::Timeout),
            ("cancelled", Status::Cancelled),
            ("canceled", Status::Cancelled),
            ("aborted", Status::Cancelled),
            ("abort", Status::Cancelled),
            ("client_cancelled", Status::Cancelled),
            ("499", Status::Cancelled),
        ];
        let t = text.trim();
        if let Some((_, status)) = SPELLINGS.iter().find(|(s, _)| s.eq_ignore_ascii_case(t)) {
            return Some(*status);
        }
        let code = t.parse::<u16>().ok()?;
        Some(if (200..300).contains(&code) {
            Status::Ok
        } else {
            Status::Error
        })
    }
}

/// A text column kept for class assignment (for example `class`, `model`, `tenant`), dictionary-encoded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LabelColumn {
    /// Canonical (lower-case) column name.
    pub name: String,
    /// Distinct values, in order of first appearance. Code `values.len()` never occurs.
    pub values: Vec<String>,
    /// One code per request; `u32::MAX` when the cell was empty.
    pub codes: Vec<u32>,
}

impl LabelColumn {
    pub const EMPTY: u32 = u32::MAX;

    pub fn new(name: &str) -> LabelColumn {
        LabelColumn {
            name: name.to_string(),
            values: Vec::new(),
            codes: Vec::new(),
        }
    }

    /// Appends one cell, interning its value.
    pub fn push(&mut self, value: &str) {
        let value = value.trim();
        if value.is_empty() {
            self.codes.push(Self::EMPTY);
            return;
        }
        let code = match self.values.iter().position(|v| v == value) {
            Some(code) => code,
            None => {
                self.values.push(value.to_string());
                self.values.len() - 1
            }
        };
        self.codes.push(code as u32);
    }

    /// Appends one cell like [`LabelColumn::push`] (same codes, same values), with `index`
    /// remembering the codes of values seen so far: a column with many distinct values (user
    /// or tenant names) then costs a hash look-up per row instead of a scan of every value.
    /// `index` must be used with this column only, from its first push on.
    ///
    /// # Example
    /// ```
    /// use slo_core::table::{LabelColumn, LabelIndex};
    /// let (mut col, mut index) = (LabelColumn::new("tenant"), LabelIndex::default());
    /// for v in ["a", "b", " a ", ""] {
    ///     col.push_indexed(v, &mut index);
    /// }
    /// assert_eq!(col.codes, [0, 1, 0, LabelColumn::EMPTY]);
    /// ```
    pub fn push_indexed(&mut self, value: &str, index: &mut LabelIndex) {
        let value = value.trim();
        if value.is_empty() {
            self.codes.push(Self::EMPTY);
            return;
        }
        // A few values (the usual class column) are found faster by comparing than by hashing.
        let found = if self.values.len() <= LabelIndex::SCAN_UP_TO {
            self.values
                .iter()
                .position(|v| v == value)
                .map(|c| c as u32)
        } else {
            for (code, v) in self.values.iter().enumerate().skip(index.codes.len()) {
                index.codes.insert(v.clone(), code as u32);
            }
            index.codes.get(value).copied()
        };
        let code = found.unwrap_or_else(|| {
            self.values.push(value.to_string());
            (self.values.len() - 1) as u32
        });
        self.codes.push(code);
    }

    /// Appends one raw cell (bytes of a CSV file) like [`LabelColumn::push_indexed`] on its text
    /// (invalid UTF-8 replaced). A cell equal byte for byte to a value seen before, the usual
    /// case, is found without decoding or trimming it: the values are trimmed texts already.
    pub fn push_cell(&mut self, cell: &[u8], index: &mut LabelIndex) {
        if self.values.len() <= LabelIndex::SCAN_UP_TO {
            // Compared byte by byte: a call to `memcmp` per value costs more for a few bytes.
            let same =
                |v: &String| v.len() == cell.len() && v.bytes().zip(cell).all(|(a, &b)| a == b);
            if let Some(code) = self.values.iter().position(same) {
                self.codes.push(code as u32);
                return;
            }
        }
        self.push_indexed(&String::from_utf8_lossy(cell), index);
    }

    /// Appends every cell of `other`, a column of the same name from the rows that follow: the
    /// same codes and values as pushing its cells one by one, for the cost of a look-up per
    /// distinct value.
    ///
    /// # Example
    /// ```
    /// use slo_core::table::LabelColumn;
    /// let (mut a, mut b) = (LabelColumn::new("class"), LabelColumn::new("class"));
    /// a.push("chat");
    /// for v in ["code", "", "chat"] {
    ///     b.push(v);
    /// }
    /// a.append(b);
    /// assert_eq!(a.values, ["chat", "code"]);
    /// assert_eq!(a.codes, [0, 1, LabelColumn::EMPTY, 0]);
    /// ```
    pub fn append(&mut self, other: LabelColumn) {
        let mut known: HashMap<String, u32> = self
            .values
            .iter()
            .enumerate()
            .map(|(code, v)| (v.clone(), code as u32))
            .collect();
        let renumbered: Vec<u32> = other
            .values
            .into_iter()
            .map(|v| {
                *known.entry(v).or_insert_with_key(|v| {
                    self.values.push(v.clone());
                    (self.values.len() - 1) as u32
                })
            })
            .collect();
        self.codes.extend(
            other
                .codes
                .iter()
                .map(|&c| renumbered.get(c as usize).copied().unwrap_or(Self::EMPTY)),
        );
    }

    /// The value of request `row`, if the cell was not empty.
    pub fn get(&self, row: usize) -> Option<&str> {
        let code = *self.codes.get(row)?;
        self.values.get(code as usize).map(String::as_str)
    }
}

/// The value-to-code map of one [`LabelColumn`] being filled (see [`LabelColumn::push_indexed`]).
#[derive(Clone, Debug, Default)]
pub struct LabelIndex {
    /// Holds the first `codes.len()` values of the column; filled only once the column has more
    /// than [`LabelIndex::SCAN_UP_TO`] values.
    codes: HashMap<String, u32>,
}

impl LabelIndex {
    /// Up to this many distinct values, a linear scan is used.
    pub const SCAN_UP_TO: usize = 16;
}

/// Inter-token gaps of every request, stored ragged: request `i` owns
/// `gaps_ms[offsets[i]..offsets[i + 1]]`. When no request has gaps, `offsets` is just `[0]`
/// (whatever the number of requests); otherwise it has one entry per request, plus one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gaps {
    pub offsets: Vec<usize>,
    pub gaps_ms: Vec<f64>,
}

impl Default for Gaps {
    fn default() -> Self {
        Gaps {
            offsets: vec![0],
            gaps_ms: Vec::new(),
        }
    }
}

impl Gaps {
    /// The gaps of request `row` (empty when the log had none).
    pub fn of(&self, row: usize) -> &[f64] {
        match (self.offsets.get(row), self.offsets.get(row + 1)) {
            (Some(&a), Some(&b)) if a <= b => self.gaps_ms.get(a..b).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// Appends the gaps of request `row` (the table's next row): none stays `[0]` while no
    /// request has any.
    fn push(&mut self, row: usize, gaps: Option<Vec<f64>>) {
        match gaps {
            Some(gaps) if !gaps.is_empty() => {
                self.spell_out(row);
                self.gaps_ms.extend(gaps);
                self.offsets.push(self.gaps_ms.len());
            }
            _ if self.offsets.len() > 1 => self.offsets.push(self.gaps_ms.len()),
            _ => {}
        }
    }

    /// Gives the first `rows` requests an offset each, if they have none yet.
    fn spell_out(&mut self, rows: usize) {
        if self.offsets.len() < rows + 1 {
            self.offsets.resize(rows + 1, self.gaps_ms.len());
        }
    }

    /// Appends `other`'s gaps after the first `rows` requests (`added` more requests).
    fn append(&mut self, rows: usize, other: Gaps, added: usize) {
        if other.offsets.len() > 1 {
            self.spell_out(rows);
            let base = self.gaps_ms.len();
            self.gaps_ms.extend(other.gaps_ms);
            self.offsets
                .extend(other.offsets.iter().skip(1).map(|o| o + base));
        } else if self.offsets.len() > 1 {
            self.spell_out(rows + added);
        }
    }
}

/// [`RequestTable::append`] copies half of the columns on another thread from this many rows on.
const APPEND_APART_FROM: usize = 1 << 16;

/// Appends `value` to a value column of a table of `rows` rows, keeping the column empty
/// while no request has a value (see [`RequestTable`]).
#[cfg_attr(target_arch = "wasm32", inline(always))]
fn push_value<T: Copy>(column: &mut Vec<T>, rows: usize, value: Option<T>, absent: T) {
    match value {
        Some(v) => {
            if column.len() < rows {
                column.resize(rows, absent);
            }
            column.push(v);
        }
        None if !column.is_empty() => column.push(absent),
        None => {}
    }
}

/// Appends the value column `theirs` of `added` rows to `mine`, of a table of `rows` rows.
fn append_values<T: Copy>(mine: &mut Vec<T>, rows: usize, theirs: Vec<T>, added: usize, absent: T) {
    if !theirs.is_empty() {
        mine.resize(rows, absent);
        mine.extend(theirs);
    } else if !mine.is_empty() {
        mine.resize(rows + added, absent);
    }
}

/// A column of one `u32` per row held as runs: a run is its first row and that row's value,
/// and each later row of the run holds the value before it plus `STEP`. The table's `source`
/// (`STEP` 0: rows of one file) and `line` (`STEP` 1: the next line) are such columns: a log
/// read top to bottom is one run per file, and one per stretch of lines between blank or bad
/// lines, a few numbers where plain columns took 8 bytes a request. (A run per row, in a log
/// whose every other line is bad, takes 16.) Runs are kept canonical (none continues the one
/// before it), so two columns of the same values are equal.
///
/// # Example
/// ```
/// use slo_core::table::Runs;
/// let lines: Runs<1> = [2, 3, 4, 7, 8].into_iter().collect();
/// assert_eq!((lines.len(), lines.runs().len()), (5, 2));
/// assert_eq!((lines.get(2), lines.get(3), lines.get(5)), (Some(4), Some(7), None));
/// assert_eq!(lines.iter().collect::<Vec<_>>(), [2, 3, 4, 7, 8]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Runs<const STEP: u32> {
    /// (first row, its value), rows ascending from 0.
    runs: Vec<(usize, u32)>,
    len: usize,
}

impl<const STEP: u32> Runs<STEP> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The runs: (first row, its value), rows ascending.
    pub fn runs(&self) -> &[(usize, u32)] {
        &self.runs
    }

    /// The value of row `row` of the run that starts at `start` with `value` (never past
    /// `u32::MAX`: a run holds only values that `push` gave it).
    fn value_in(start: usize, value: u32, row: usize) -> u32 {
        let v = u64::from(value) + u64::from(STEP) * (row - start) as u64;
        u32::try_from(v).unwrap_or(u32::MAX)
    }

    /// The value a next row would hold to continue the last run. (Saturating: a damaged
    /// batch can claim a length near `usize::MAX`; such a value is past `u32::MAX` anyway.)
    fn next_value(&self) -> Option<u64> {
        let &(start, value) = self.runs.last()?;
        let rows = self.len.saturating_sub(start) as u64;
        Some(u64::from(value).saturating_add(u64::from(STEP).saturating_mul(rows)))
    }

    pub fn push(&mut self, value: u32) {
        if self.next_value() != Some(u64::from(value)) {
            self.runs.push((self.len, value));
        }
        self.len += 1;
    }

    pub fn get(&self, row: usize) -> Option<u32> {
        if row >= self.len {
            return None;
        }
        let k = self.runs.partition_point(|&(start, _)| start <= row);
        let &(start, value) = self.runs.get(k.checked_sub(1)?)?;
        Some(Self::value_in(start, value, row))
    }

    /// Each run as (first row, the row after its last, first value).
    fn spans(&self) -> impl Iterator<Item = (usize, usize, u32)> + '_ {
        self.runs
            .iter()
            .enumerate()
            .map(move |(k, &(start, value))| {
                let end = self.runs.get(k + 1).map_or(self.len, |&(next, _)| next);
                (start, end, value)
            })
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.spans().flat_map(|(start, end, value)| {
            (start..end).map(move |row| Self::value_in(start, value, row))
        })
    }

    /// The largest value (0 when empty).
    fn max(&self) -> u64 {
        self.spans()
            .map(|(start, end, value)| {
                let rows = end.saturating_sub(start).saturating_sub(1) as u64;
                u64::from(value).saturating_add(u64::from(STEP).saturating_mul(rows))
            })
            .max()
            .unwrap_or(0)
    }

    /// Appends `other`'s rows, each value plus `add` (at most `u32::MAX`).
    pub fn append(&mut self, other: &Runs<STEP>, add: u64) {
        if other.max().saturating_add(add) <= u64::from(u32::MAX) {
            for (start, end, value) in other.spans() {
                // The first row goes through `push`, which joins it to a run it continues.
                self.push((u64::from(value) + add) as u32);
                self.len += end - start - 1;
            }
        } else {
            for v in other.iter() {
                self.push(u32::try_from(u64::from(v) + add).unwrap_or(u32::MAX));
            }
        }
    }

    /// Every value plus `by` (at most `u32::MAX`).
    pub fn shift(&mut self, by: u64) {
        let old = std::mem::take(self);
        self.append(&old, by);
    }

    /// The column of `len` rows with these runs; `None` unless they are what `push` makes
    /// (rows ascending from 0 and below `len`, none continuing the one before, no run past
    /// `u32::MAX`): for a batch read back from another thread.
    pub fn from_runs(runs: Vec<(usize, u32)>, len: usize) -> Option<Runs<STEP>> {
        let mut column = Runs::default();
        for (k, &(start, value)) in runs.iter().enumerate() {
            let end = runs.get(k + 1).map_or(len, |&(next, _)| next);
            if start != column.len || end <= start {
                return None;
            }
            column.push(value);
            if column.runs.len() != k + 1 {
                return None;
            }
            column.len = end;
        }
        (column.len == len && column.max() <= u64::from(u32::MAX)).then_some(column)
    }
}

impl<const STEP: u32> FromIterator<u32> for Runs<STEP> {
    fn from_iter<I: IntoIterator<Item = u32>>(values: I) -> Self {
        let mut column = Runs::default();
        for v in values {
            column.push(v);
        }
        column
    }
}

/// A run column travels as its values, one per row, as the plain column it replaced did.
impl<const STEP: u32> Serialize for Runs<STEP> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de, const STEP: u32> Deserialize<'de> for Runs<STEP> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Vec::<u32>::deserialize(d)?.into_iter().collect())
    }
}

/// The mark of an absent count in a count column (`input_tokens`, `output_tokens`).
pub const NO_COUNT: u32 = u32::MAX;

/// The largest token count a table holds: every count below [`NO_COUNT`]. Ingest refuses
/// larger ones (`ingest::fields::token_count`).
pub const MAX_COUNT: u32 = NO_COUNT - 1;

/// `value` as a count, when it is one the table can hold: whole, from 0 to [`MAX_COUNT`].
pub fn count_of(value: f64) -> Option<u32> {
    (value >= 0.0 && value.fract() == 0.0 && value <= f64::from(MAX_COUNT)).then_some(value as u32)
}

/// One row as a parser hands it over, before it is appended to the table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    pub id: Option<String>,
    pub status: Status,
    pub error: Option<String>,
    pub input_tokens: Option<f64>,
    pub output_tokens: Option<f64>,
    pub ttft_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
    pub queue_ms: Option<f64>,
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
    pub itl_ms: Option<Vec<f64>>,
    /// (column name, value) pairs for label columns such as `class`.
    pub labels: Vec<(String, String)>,
}

/// Parsed requests, column by column. `source`, `line`, `status` and the label columns have
/// `len()` entries. A value column (`input_tokens` … `end_s`, NaN or [`NO_COUNT`] where a
/// request has no value) is either `len()` long or empty, when no request has a value in it: a
/// log without queue times or timestamps (most) then carries no million NaNs through parsing,
/// copies and transfers. Read values through the accessors ([`RequestTable::ttft_ms`] …),
/// which give `None` either way.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestTable {
    /// Request ids the log gave, sparse: (row, id), rows ascending. Read ids through
    /// [`RequestTable::id`], which names a request without one `"<file>:<line>"`. (Not building
    /// that text for every row saves a formatted string per request: a tenth of the time it
    /// takes to read a large log.)
    pub ids: Vec<(usize, String)>,
    /// Name of each source (file) by `source` index, once a row from it was added.
    pub source_names: Vec<Option<String>>,
    /// Index into the list of sources (files) the request came from.
    pub source: Runs<0>,
    /// 1-based line (or record number in a JSON array) in its source.
    pub line: Runs<1>,
    pub status: Vec<Status>,
    /// Error texts, sparse: (row, message), rows ascending.
    pub errors: Vec<(usize, String)>,
    /// Token counts, [`NO_COUNT`] where a request has none: 4 bytes a request, not 8.
    #[serde(with = "counts_as_numbers")]
    pub input_tokens: Vec<u32>,
    #[serde(with = "counts_as_numbers")]
    pub output_tokens: Vec<u32>,
    #[serde(with = "nan_as_null")]
    pub ttft_ms: Vec<f64>,
    #[serde(with = "nan_as_null")]
    pub e2e_ms: Vec<f64>,
    #[serde(with = "nan_as_null")]
    pub queue_ms: Vec<f64>,
    /// Request start, seconds on any clock shared by the whole log.
    #[serde(with = "nan_as_null")]
    pub start_s: Vec<f64>,
    #[serde(with = "nan_as_null")]
    pub end_s: Vec<f64>,
    pub itl: Gaps,
    pub labels: Vec<LabelColumn>,
}

/// JSON has no NaN: absent cells travel as `null` (saved reports carry tables).
mod nan_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(column: &[f64], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(column.iter().map(|v| (!v.is_nan()).then_some(*v)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        let cells: Vec<Option<f64>> = Vec::deserialize(d)?;
        Ok(cells.into_iter().map(|c| c.unwrap_or(f64::NAN)).collect())
    }
}

/// Count columns travel as numbers, `null` where absent, as they did when they were `f64`
/// columns: reports saved before then read the same.
mod counts_as_numbers {
    use super::{count_of, MAX_COUNT, NO_COUNT};
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(column: &[u32], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(column.iter().map(|&c| (c != NO_COUNT).then_some(c)))
    }

    /// A whole count past [`MAX_COUNT`], which reports saved before counts took 4 bytes could
    /// hold, reads as `MAX_COUNT`: the report still opens, the request stays in the same
    /// input-length bucket (every edge is far below) and still has more than one output token;
    /// only a TPOT made of such a count moves, in digits far past any target.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u32>, D::Error> {
        let cells: Vec<Option<f64>> = Vec::deserialize(d)?;
        cells
            .into_iter()
            .map(|c| match c {
                None => Ok(NO_COUNT),
                Some(v) if v > f64::from(MAX_COUNT) && v.fract() == 0.0 => Ok(MAX_COUNT),
                Some(v) => {
                    count_of(v).ok_or_else(|| D::Error::custom(format!("{v} is not a token count")))
                }
            })
            .collect()
    }
}

fn count(column: &[u32], row: usize) -> Option<f64> {
    column
        .get(row)
        .copied()
        .filter(|&c| c != NO_COUNT)
        .map(f64::from)
}

fn cell(column: &[f64], row: usize) -> Option<f64> {
    column.get(row).copied().filter(|v| !v.is_nan())
}

impl RequestTable {
    pub fn len(&self) -> usize {
        self.status.len()
    }

    pub fn is_empty(&self) -> bool {
        self.status.is_empty()
    }

    pub fn ttft_ms(&self, row: usize) -> Option<f64> {
        cell(&self.ttft_ms, row)
    }
    pub fn e2e_ms(&self, row: usize) -> Option<f64> {
        cell(&self.e2e_ms, row)
    }
    pub fn queue_ms(&self, row: usize) -> Option<f64> {
        cell(&self.queue_ms, row)
    }
    pub fn input_tokens(&self, row: usize) -> Option<f64> {
        count(&self.input_tokens, row)
    }
    pub fn output_tokens(&self, row: usize) -> Option<f64> {
        count(&self.output_tokens, row)
    }
    pub fn start_s(&self, row: usize) -> Option<f64> {
        cell(&self.start_s, row)
    }
    pub fn end_s(&self, row: usize) -> Option<f64> {
        cell(&self.end_s, row)
    }

    /// The id of request `row`: the log's, else `"<file>:<line>"`; empty past the end.
    ///
    /// # Example
    /// ```
    /// use slo_core::table::{RequestTable, Row};
    /// let mut t = RequestTable::default();
    /// t.push(Row { id: Some("r1".into()), ..Row::default() }, 0, 2, "a.csv");
    /// t.push(Row::default(), 0, 3, "a.csv");
    /// assert_eq!((t.id(0), t.id(1), t.id(2)), ("r1".into(), "a.csv:3".into(), "".into()));
    /// ```
    pub fn id(&self, row: usize) -> Cow<'_, str> {
        if let Ok(k) = self.ids.binary_search_by_key(&row, |(r, _)| *r) {
            if let Some((_, id)) = self.ids.get(k) {
                return Cow::Borrowed(id);
            }
        }
        match (self.source.get(row), self.line.get(row)) {
            (Some(source), Some(line)) => {
                let name = self
                    .source_names
                    .get(source as usize)
                    .and_then(Option::as_deref)
                    .unwrap_or("");
                Cow::Owned(format!("{name}:{line}"))
            }
            _ => Cow::Borrowed(""),
        }
    }

    /// Records that rows from `source` are named `name`. False when the source already has
    /// another name: the caller then stores the row's id explicitly.
    fn name_source(&mut self, source: u32, name: &str) -> bool {
        let k = source as usize;
        if self.source_names.len() <= k {
            self.source_names.resize(k + 1, None);
        }
        match self.source_names.get_mut(k) {
            Some(slot @ None) => {
                *slot = Some(name.to_string());
                true
            }
            Some(Some(known)) => known == name,
            None => false,
        }
    }

    /// The error text of `row`, if any.
    pub fn error(&self, row: usize) -> Option<&str> {
        self.errors
            .binary_search_by_key(&row, |(r, _)| *r)
            .ok()
            .and_then(|k| self.errors.get(k))
            .map(|(_, e)| e.as_str())
    }

    /// The label column with this canonical name.
    pub fn label(&self, name: &str) -> Option<&LabelColumn> {
        self.labels.iter().find(|c| c.name == name)
    }

    /// True when at least one request has a value in `column`.
    pub fn has(column: &[f64]) -> bool {
        column.iter().any(|v| !v.is_nan())
    }

    /// True when any request has inter-token gaps.
    pub fn has_itl(&self) -> bool {
        !self.itl.gaps_ms.is_empty()
    }

    /// Makes room for `additional` more rows in every column, so that a parser that can count
    /// its rows fills a million-row table without copying columns as they grow.
    pub fn reserve(&mut self, additional: usize) {
        self.status.reserve(additional);
        self.input_tokens.reserve(additional);
        self.output_tokens.reserve(additional);
        for column in [
            &mut self.ttft_ms,
            &mut self.e2e_ms,
            &mut self.queue_ms,
            &mut self.start_s,
            &mut self.end_s,
        ] {
            column.reserve(additional);
        }
        self.itl.offsets.reserve(additional);
        for label in &mut self.labels {
            label.codes.reserve(additional);
        }
    }

    /// Appends one row from source `source` at `line`.
    pub fn push(&mut self, row: Row, source: u32, line: u32, source_name: &str) {
        if row.id.is_none() && !self.name_source(source, source_name) {
            self.ids.push((self.len(), format!("{source_name}:{line}")));
        }
        self.push_in_named_source(row, source, line);
    }

    /// [`RequestTable::push`] for a row that has an id or whose source is named already (a row
    /// without an id came from it before): the same, without comparing the source's name once
    /// per row.
    pub(crate) fn push_in_named_source(&mut self, row: Row, source: u32, line: u32) {
        let index = self.len();
        if let Some(id) = row.id {
            self.ids.push((index, id));
        }
        self.source.push(source);
        self.line.push(line);
        self.status.push(row.status);
        if let Some(e) = row.error.filter(|e| !e.is_empty()) {
            self.errors.push((index, e));
        }
        // A count the table cannot hold is absent: ingest refuses such counts with a message.
        let counts = [row.input_tokens, row.output_tokens].map(|c| c.and_then(count_of));
        push_value(&mut self.input_tokens, index, counts[0], NO_COUNT);
        push_value(&mut self.output_tokens, index, counts[1], NO_COUNT);
        push_value(&mut self.ttft_ms, index, row.ttft_ms, f64::NAN);
        push_value(&mut self.e2e_ms, index, row.e2e_ms, f64::NAN);
        push_value(&mut self.queue_ms, index, row.queue_ms, f64::NAN);
        push_value(&mut self.start_s, index, row.start_s, f64::NAN);
        push_value(&mut self.end_s, index, row.end_s, f64::NAN);
        self.itl.push(index, row.itl_ms);
        // Every label column gets a cell for this row, empty unless the row names it.
        for (name, _) in &row.labels {
            if self.label(name).is_none() {
                let mut col = LabelColumn::new(name);
                col.codes.resize(index, LabelColumn::EMPTY);
                self.labels.push(col);
            }
        }
        for col in &mut self.labels {
            match row.labels.iter().find(|(n, _)| *n == col.name) {
                Some((_, v)) => col.push(v),
                None => col.codes.push(LabelColumn::EMPTY),
            }
        }
    }

    /// Appends every row of `other`, shifting its source indices by `source_offset`.
    pub fn append(&mut self, other: RequestTable, source_offset: u32) {
        let base = self.len();
        let added = other.len();
        // Sources of `other` that already have another name here keep their ids as text.
        let renamed: Vec<bool> = other
            .source_names
            .iter()
            .enumerate()
            .map(|(s, name)| match name {
                Some(name) => !self.name_source(s as u32 + source_offset, name),
                None => false,
            })
            .collect();
        if renamed.iter().any(|&r| r) {
            let mut explicit = other.ids.iter().peekable();
            for row in 0..other.len() {
                match explicit.next_if(|(r, _)| *r == row) {
                    Some((_, id)) => self.ids.push((base + row, id.clone())),
                    None => {
                        let s = other.source.get(row).unwrap_or(0) as usize;
                        if renamed.get(s).copied().unwrap_or(false) {
                            self.ids.push((base + row, other.id(row).into_owned()));
                        }
                    }
                }
            }
        } else {
            self.ids
                .extend(other.ids.into_iter().map(|(r, id)| (r + base, id)));
        }
        self.source.append(&other.source, u64::from(source_offset));
        self.line.append(&other.line, 0);
        self.errors
            .extend(other.errors.into_iter().map(|(r, e)| (r + base, e)));
        // The large columns, half on another core where there is one: appending the second
        // piece of a large file is a moment when the other core has nothing else to do.
        let first_half = || {
            append_values(&mut self.ttft_ms, base, other.ttft_ms, added, f64::NAN);
            append_values(
                &mut self.input_tokens,
                base,
                other.input_tokens,
                added,
                NO_COUNT,
            );
            self.status.extend(other.status);
        };
        let second_half = || {
            append_values(
                &mut self.output_tokens,
                base,
                other.output_tokens,
                added,
                NO_COUNT,
            );
            for (mine, theirs) in [
                (&mut self.e2e_ms, other.e2e_ms),
                (&mut self.queue_ms, other.queue_ms),
                (&mut self.start_s, other.start_s),
                (&mut self.end_s, other.end_s),
            ] {
                append_values(mine, base, theirs, added, f64::NAN);
            }
        };
        if added >= APPEND_APART_FROM {
            crate::parallel::join(first_half, second_half);
        } else {
            first_half();
            second_half();
        }
        self.itl.append(base, other.itl, added);
        let mut theirs = other.labels;
        for col in &theirs {
            if self.label(&col.name).is_none() {
                let mut mine = LabelColumn::new(&col.name);
                mine.codes.resize(base, LabelColumn::EMPTY);
                self.labels.push(mine);
            }
        }
        for mine in &mut self.labels {
            match theirs.iter().position(|c| c.name == mine.name) {
                Some(k) => mine.append(theirs.swap_remove(k)),
                None => mine.codes.resize(base + added, LabelColumn::EMPTY),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run columns against plain vectors of the same values: `get`, `iter`, `append` (with an
    /// offset, and past `u32::MAX`, where values stop there), `shift`, and `from_runs`, which
    /// takes what `push` made and refuses anything else; equal values, equal columns, however
    /// they were put together.
    #[test]
    fn run_columns_hold_what_plain_columns_hold() {
        fn check<const STEP: u32>(next: &mut impl FnMut() -> u64) {
            for case in 0..300 {
                let mut values: Vec<u32> = Vec::new();
                let near_top = case % 7 == 0;
                let mut v: u32 = if near_top {
                    u32::MAX - 40
                } else {
                    (next() % 50) as u32
                };
                for _ in 0..next() % 60 {
                    v = match next() % 4 {
                        0 => (next() % 100) as u32,
                        _ => v.saturating_add(STEP),
                    };
                    values.push(v);
                }
                let cut = (next() as usize) % (values.len() + 1);
                let add = [0, 1, 3, 30][(next() % 4) as usize];
                let whole: Runs<STEP> = values.iter().copied().collect();
                let (left, right) = values.split_at(cut);
                let mut joined: Runs<STEP> = left.iter().copied().collect();
                let mut shifted: Runs<STEP> = right.iter().copied().collect();
                shifted.shift(add);
                joined.append(&right.iter().copied().collect(), add);
                let sum = |v: u32| u32::try_from(u64::from(v) + add).unwrap_or(u32::MAX);
                let want: Vec<u32> = left
                    .iter()
                    .copied()
                    .chain(right.iter().map(|&v| sum(v)))
                    .collect();
                assert_eq!(joined.iter().collect::<Vec<_>>(), want, "case {case}");
                assert_eq!(
                    joined,
                    want.iter().copied().collect::<Runs<STEP>>(),
                    "case {case}"
                );
                assert_eq!(
                    shifted.iter().collect::<Vec<_>>(),
                    right.iter().map(|&v| sum(v)).collect::<Vec<_>>()
                );
                assert_eq!(whole.len(), values.len());
                for (row, &v) in values.iter().enumerate() {
                    assert_eq!(whole.get(row), Some(v), "case {case} row {row}");
                }
                assert_eq!(whole.get(values.len()), None);
                let back = Runs::<STEP>::from_runs(whole.runs().to_vec(), whole.len());
                assert_eq!(back.as_ref(), Some(&whole), "case {case}");
                if let [.., (last, _)] = whole.runs() {
                    assert_eq!(Runs::<STEP>::from_runs(whole.runs().to_vec(), *last), None);
                }
            }
        }
        let mut next = crate::testing::sequence(0x0bad_5eed_1234_5678);
        check::<0>(&mut next);
        check::<1>(&mut next);
        // Not what `push` makes: a run that continues the one before, rows out of order, a run
        // past u32::MAX.
        assert_eq!(Runs::<1>::from_runs(vec![(0, 5), (2, 7)], 4), None);
        assert_eq!(Runs::<1>::from_runs(vec![(0, 5), (0, 9)], 4), None);
        assert_eq!(Runs::<1>::from_runs(vec![(0, u32::MAX - 1)], 3), None);
        assert!(Runs::<1>::from_runs(vec![(0, 5), (2, 9)], 4).is_some());
        // Lengths a damaged batch can claim: refused, without an overflow (found in review:
        // a debug build panicked, a release build took the first).
        assert_eq!(Runs::<1>::from_runs(vec![(0, 7)], usize::MAX), None);
        assert_eq!(
            Runs::<1>::from_runs(vec![(0, 5), (usize::MAX - 1, 7)], usize::MAX),
            None
        );
        assert!(Runs::<0>::from_runs(vec![(0, 7)], usize::MAX).is_some());
    }

    /// Token counts were `f64` columns, and saved reports carry the table: counts written as
    /// `512.0` (or `null`) still read, the JSON written now is the same numbers, and a value
    /// that is no count is refused, not changed.
    #[test]
    fn count_columns_read_and_write_the_json_of_number_columns() {
        let mut t = RequestTable::default();
        t.push(
            Row {
                input_tokens: Some(512.0),
                output_tokens: Some(0.0),
                ..Row::default()
            },
            0,
            2,
            "a.csv",
        );
        t.push(
            Row {
                output_tokens: Some(1.0),
                ..Row::default()
            },
            0,
            3,
            "a.csv",
        );
        let json = serde_json::to_value(&t).expect("a table serialises");
        assert_eq!(json["input_tokens"], serde_json::json!([512, null]));
        assert_eq!(json["output_tokens"], serde_json::json!([0, 1]));
        let mut old = json.clone();
        old["input_tokens"] = serde_json::json!([512.0, null]);
        let back: RequestTable = serde_json::from_value(old).expect("an older table reads");
        assert_eq!(back, t);
        assert_eq!(
            (back.input_tokens(0), back.input_tokens(1)),
            (Some(512.0), None)
        );
        let mut bad = json;
        bad["output_tokens"] = serde_json::json!([0, 1.5]);
        let err = serde_json::from_value::<RequestTable>(bad).expect_err("1.5 is no count");
        assert!(
            err.to_string().contains("1.5 is not a token count"),
            "{err}"
        );
        // Reports saved before counts took 4 bytes could hold larger counts: they open, the
        // count read as the largest a table holds (found in review: such reports were refused).
        let mut older = serde_json::to_value(&t).expect("a table serialises");
        older["input_tokens"] = serde_json::json!([5_000_000_000.0, null]);
        let back: RequestTable = serde_json::from_value(older).expect("an older table reads");
        assert_eq!(back.input_tokens(0), Some(f64::from(MAX_COUNT)));
        let counts = [
            0.0,
            -0.0,
            7.0,
            4_294_967_294.0,
            4_294_967_295.0,
            0.5,
            -1.0,
            f64::NAN,
            f64::INFINITY,
        ];
        assert_eq!(
            counts.map(count_of),
            [
                Some(0),
                Some(0),
                Some(7),
                Some(MAX_COUNT),
                None,
                None,
                None,
                None,
                None
            ]
        );
    }

    #[test]
    fn push_cell_gives_the_codes_of_push_indexed_on_the_text() {
        // Padded and bare spellings of one value, invalid UTF-8, empty cells, and more values
        // than a scan covers (the hash index then takes over).
        let mut cells: Vec<Vec<u8>> = [
            &b"chat"[..],
            b" chat",
            b"chat ",
            b"",
            b" ",
            b"Chat",
            b"b\xffd",
        ]
        .iter()
        .map(|c| c.to_vec())
        .collect();
        cells.push("b\u{fffd}d".as_bytes().to_vec());
        cells.push(b"b\xffd".to_vec());
        cells.extend((0..40).map(|k| format!("t{}", k % 25).into_bytes()));
        cells.push(b" t3 ".to_vec());
        let (mut got, mut got_index) = (LabelColumn::new("class"), LabelIndex::default());
        let (mut want, mut want_index) = (LabelColumn::new("class"), LabelIndex::default());
        for cell in &cells {
            got.push_cell(cell, &mut got_index);
            want.push_indexed(&String::from_utf8_lossy(cell), &mut want_index);
        }
        assert_eq!(got, want);
        assert_eq!(
            got.codes[..6],
            [0, 0, 0, LabelColumn::EMPTY, LabelColumn::EMPTY, 1]
        );
        assert_eq!(got.values[2], "b\u{fffd}d");
        assert_eq!(got.codes[6..9], [2, 2, 2]);
    }

    fn row(ttft: f64, class: &str) -> Row {
        Row {
            ttft_ms: Some(ttft),
            labels: vec![("class".into(), class.into())],
            itl_ms: Some(vec![1.0, 2.0]),
            ..Row::default()
        }
    }

    #[test]
    fn push_keeps_columns_aligned_and_absent_cells_none() {
        let mut t = RequestTable::default();
        t.push(row(10.0, "chat"), 0, 2, "a.csv");
        t.push(
            Row {
                error: Some("boom".into()),
                status: Status::Error,
                ..Row::default()
            },
            0,
            3,
            "a.csv",
        );
        assert_eq!(t.len(), 2);
        assert_eq!(t.ttft_ms(0), Some(10.0));
        assert_eq!(t.ttft_ms(1), None);
        assert_eq!(t.id(1), "a.csv:3");
        assert_eq!(t.error(1), Some("boom"));
        assert_eq!(t.error(0), None);
        assert_eq!(t.label("class").and_then(|c| c.get(0)), Some("chat"));
        assert_eq!(t.label("class").and_then(|c| c.get(1)), None);
        assert_eq!(t.itl.of(0), &[1.0, 2.0]);
        assert_eq!(t.itl.of(1), &[] as &[f64]);
        assert_eq!(t.itl.of(7), &[] as &[f64]);
    }

    /// Rows with and without queue times and gaps, in every order, pushed one by one or in two
    /// tables appended: the same values, and columns empty exactly when no row has a value.
    #[test]
    fn value_columns_stay_empty_until_a_request_has_a_value() {
        let with = |queue: bool, gaps: bool| Row {
            ttft_ms: Some(5.0),
            queue_ms: queue.then_some(2.0),
            itl_ms: gaps.then(|| vec![1.0, 3.0]),
            ..Row::default()
        };
        let kinds = [(false, false), (true, false), (false, true), (true, true)];
        for a in kinds {
            for b in kinds {
                let rows = [with(a.0, a.1), with(a.0, a.1), with(b.0, b.1)];
                let mut one = RequestTable::default();
                for (k, r) in rows.iter().enumerate() {
                    one.push(r.clone(), 0, k as u32 + 2, "a.csv");
                }
                let (mut head, mut tail) = (RequestTable::default(), RequestTable::default());
                for (k, r) in rows.iter().enumerate() {
                    let t = if k < 2 { &mut head } else { &mut tail };
                    t.push(r.clone(), 0, k as u32 + 2, "a.csv");
                }
                head.append(tail, 0);
                for t in [&one, &head] {
                    let any_queue = a.0 || b.0;
                    let any_gaps = a.1 || b.1;
                    assert_eq!(
                        t.queue_ms.len(),
                        if any_queue { 3 } else { 0 },
                        "{a:?} {b:?}"
                    );
                    assert_eq!(t.start_s.len(), 0);
                    assert_eq!(t.ttft_ms, [5.0; 3]);
                    assert_eq!(t.itl.offsets.len(), if any_gaps { 4 } else { 1 });
                    for (k, r) in rows.iter().enumerate() {
                        assert_eq!(t.queue_ms(k), r.queue_ms, "{a:?} {b:?} row {k}");
                        assert_eq!(t.itl.of(k), r.itl_ms.as_deref().unwrap_or(&[]));
                    }
                }
                // (Compared as text: NaN is not equal to itself.)
                assert_eq!(format!("{one:?}"), format!("{head:?}"), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn append_shifts_rows_sources_and_gap_offsets() {
        let mut a = RequestTable::default();
        a.push(row(1.0, "chat"), 0, 2, "a");
        let mut b = RequestTable::default();
        b.push(
            Row {
                status: Status::Error,
                error: Some("x".into()),
                ..Row::default()
            },
            0,
            2,
            "b",
        );
        b.push(row(3.0, "batch"), 0, 3, "b");
        a.append(b, 1);
        assert_eq!(a.len(), 3);
        assert_eq!(a.source.iter().collect::<Vec<_>>(), [0, 1, 1]);
        assert_eq!(a.error(1), Some("x"));
        assert_eq!(a.itl.of(2), &[1.0, 2.0]);
        let class = a.label("class").expect("class column");
        assert_eq!(class.codes.len(), 3);
        assert_eq!(class.get(2), Some("batch"));
        assert_eq!(class.get(1), None);
    }

    #[test]
    fn ids_are_the_logs_or_file_and_line_after_push_and_append() {
        let mut a = RequestTable::default();
        a.push(
            Row {
                id: Some("r1".into()),
                ..Row::default()
            },
            0,
            2,
            "a.csv",
        );
        a.push(Row::default(), 0, 3, "a.csv");
        // The same source index under another name: that row keeps its own file name.
        a.push(Row::default(), 0, 4, "other.csv");
        let mut b = RequestTable::default();
        b.push(Row::default(), 0, 2, "b.csv");
        b.push(
            Row {
                id: Some("r9".into()),
                ..Row::default()
            },
            0,
            3,
            "b.csv",
        );
        let mut clash = a.clone();
        a.append(b.clone(), 1);
        let ids: Vec<String> = (0..6).map(|r| a.id(r).into_owned()).collect();
        assert_eq!(ids, ["r1", "a.csv:3", "other.csv:4", "b.csv:2", "r9", ""]);
        // Appended at a source index that already names another file.
        clash.append(b, 0);
        let ids: Vec<String> = (0..5).map(|r| clash.id(r).into_owned()).collect();
        assert_eq!(ids, ["r1", "a.csv:3", "other.csv:4", "b.csv:2", "r9"]);
    }

    #[test]
    fn status_spellings() {
        for (text, want) in [
            ("", Some(Status::Ok)),
            ("OK", Some(Status::Ok)),
            ("204", Some(Status::Ok)),
            ("500", Some(Status::Error)),
            ("timeout", Some(Status::Timeout)),
            ("canceled", Some(Status::Cancelled)),
            ("499", Some(Status::Cancelled)),
            ("banana", None),
        ] {
            assert_eq!(Status::parse(text), want, "{text:?}");
        }
    }
}
