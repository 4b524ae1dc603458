//! One load of request logs, and the form in which it moves between threads.
//!
//! The app reads and parses large files in a Web Worker. The worker runs [`Batch::load`] (parse
//! every file, combine the tables, prepare the grouping), takes the batch apart with
//! [`Batch::into_parts`] and sends the [`Parts`] to the page, which puts the batch back together
//! with [`Batch::from_parts`]. A million requests make about 80 MB of columns: as JSON that would
//! take seconds to write and read. The large columns (the table's f64 and u32 columns, the
//! preparation's per-request ones) therefore travel as they are in memory, each on its own, so
//! that the app can move each as a typed array: one copy out of the worker's wasm memory and one
//! into the page's, with no byte buffer to write and read in between. At a million requests that
//! is about 50 ms less in the worker and 50 ms less on the page than one buffer of every column
//! (docs/performance.md, fourth round). Everything else (provenance, messages, per-cell
//! statistics, ids, statuses) is a small header of bytes.
//!
//! Ahead of the parts the worker sends the batch's report ([`Batch::report`], as JSON by
//! [`report_to_json`]: a few hundred kilobytes), so that the page can show it while the columns
//! are still on their way.
//!
//! The parts are private to one build of the app (the worker and the page run the same wasm):
//! the header has a version number but no promise of compatibility, and parts are never stored.

use serde::{Deserialize, Serialize};

use crate::evaluate::{evaluate, prepare, Prepared, Report};
use crate::ingest::{self, IngestOptions, Loaded, Part};
use crate::saved;
use crate::spec::Spec;
use crate::table::{Gaps, LabelColumn, RequestTable, Status};

/// What one load produced.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Batch {
    /// Each file's result in load order. Their tables are empty: the requests were moved into
    /// `table`. A file that could not be read has `fatal` set.
    pub files: Vec<Loaded>,
    /// Files that are saved reports (`saved::looks_saved`), as (name, text): they open as a
    /// report, not as a log.
    pub saved: Vec<(String, String)>,
    /// The requests of every readable file, one source per file (`ingest::combine`).
    pub table: RequestTable,
    /// `table` prepared for the spec given to [`Batch::load`], when it was valid.
    pub prepared: Option<Prepared>,
}

/// The text of a saved report, `None` for anything else. A saved report says so in its first
/// bytes; only then is the whole file checked.
fn saved_report(bytes: &[u8]) -> Option<&str> {
    looks_saved(bytes)
        .then(|| std::str::from_utf8(bytes).ok())
        .flatten()
}

/// True when the first bytes of a file say it is a saved report ([`saved::looks_saved`]).
fn looks_saved(bytes: &[u8]) -> bool {
    saved::looks_saved(&String::from_utf8_lossy(bytes.get(..256).unwrap_or(bytes)))
}

/// Share of a load's progress spent parsing (the rest is preparing the grouping).
const PARSE_SHARE: f64 = 0.8;

impl Batch {
    /// Parses `sources` (name, bytes), combines the readable ones and prepares them for `spec`.
    /// `progress` is told what is happening and how far along (0 to 1) the load is.
    pub fn load(
        sources: &[(String, Vec<u8>)],
        options: &IngestOptions,
        spec: Option<&Spec>,
        progress: &mut dyn FnMut(&str, f64),
    ) -> Batch {
        let mut batch = Batch::read(sources, options, progress);
        batch.prepare_for(spec, progress);
        batch
    }

    /// The first half of [`Batch::load`]: every source parsed and the files combined, nothing
    /// prepared yet. The sources are not needed after this, so a caller short of memory can
    /// free them before [`Batch::prepare_for`] (the app's loader worker does: `prepare`'s
    /// columns then reuse the file's memory).
    pub fn read(
        sources: &[(String, Vec<u8>)],
        options: &IngestOptions,
        progress: &mut dyn FnMut(&str, f64),
    ) -> Batch {
        let total: usize = sources.iter().map(|(_, b)| b.len()).sum::<usize>().max(1);
        let mut done = 0usize;
        let mut batch = Batch::default();
        for (name, bytes) in sources {
            let phase = format!("Parsing {name}");
            let (before, size) = (done as f64, bytes.len() as f64);
            let mut within = |f: f64| {
                progress(&phase, PARSE_SHARE * (before + f * size) / total as f64);
            };
            within(0.0);
            done += bytes.len();
            if let Some(text) = saved_report(bytes) {
                batch.saved.push((name.clone(), text.to_string()));
                continue;
            }
            batch.files.push(ingest::parse_with_progress(
                name,
                bytes,
                options,
                &mut within,
            ));
        }
        batch.table = ingest::take_combined(&mut batch.files);
        batch
    }

    /// The first step of a load whose one file, a large CSV, is read in two slices by two
    /// workers that share no memory (see `ingest::Slices`): this one's part of the rows from
    /// `bytes`, the file's first bytes, of a file of `size` bytes (`ingest::first_slice`).
    /// `None` when the file is not read in slices: then read it whole ([`Batch::load`]). A
    /// file whose first bytes say it is a saved report is not: only the whole file tells
    /// whether it is one ([`Batch::read`] opens it as a report when it is valid UTF-8).
    pub fn first_slice(
        name: &str,
        bytes: &[u8],
        size: u64,
        options: &IngestOptions,
        progress: &mut dyn FnMut(&str, f64),
    ) -> Option<ingest::FirstSlice> {
        if looks_saved(bytes) {
            return None;
        }
        let phase = format!("Parsing {name}");
        // This worker's part is about half the parse.
        let share = PARSE_SHARE / 2.0;
        let first = ingest::first_slice(name, bytes, size, options, &mut |f| {
            progress(&phase, share * f)
        });
        progress(&phase, share);
        first
    }

    /// The load of one file of `size` bytes read in slices, not yet prepared: `first` as
    /// [`Batch::first_slice`] read it, `second` the other worker's part
    /// (`ingest::second_slice`). The same batch as [`Batch::read`] of the whole file, bit for
    /// bit, but for the file's SHA-256, left empty ([`Batch::fill_sha256`]). `None` when the
    /// parts do not fit together: then read the whole file.
    pub fn read_slices(
        name: &str,
        size: u64,
        options: &IngestOptions,
        first: ingest::FirstSlice,
        second: Part,
    ) -> Option<Batch> {
        let mut files = vec![ingest::join_slices(name, size, options, first, second)?];
        let table = ingest::take_combined(&mut files);
        Some(Batch {
            files,
            table,
            ..Batch::default()
        })
    }

    /// The second half of [`Batch::load`]: the table prepared for `spec` when the spec is
    /// valid and there are requests (else nothing is prepared), then "Done".
    pub fn prepare_for(&mut self, spec: Option<&Spec>, progress: &mut dyn FnMut(&str, f64)) {
        if let Some(spec) = spec.filter(|s| s.validate().is_empty() && !self.table.is_empty()) {
            progress("Grouping requests and sorting latencies", PARSE_SHARE);
            self.prepared = Some(prepare(&self.table, spec));
        }
        progress("Done", 1.0);
    }

    /// The report the app shows once this batch is its loaded data, for `spec` (the spec the
    /// batch was prepared for) and the duration the user typed, if any: the same
    /// [`evaluate`] of the same table, preparation and run duration (`ingest::run_duration`
    /// over the readable files) as the page computes after the batch has travelled. The app's
    /// loader computes it before taking the batch apart, so that the page can show the report
    /// while the columns are still on their way ([`report_to_json`]). `None` when the page
    /// would show no report of this batch: nothing prepared (or prepared for another grouping),
    /// an invalid spec, no requests; and whenever a saved report is among the files (the page
    /// opens it, or, if it cannot be read, computes the logs' report itself).
    pub fn report(&self, spec: &Spec, typed_duration_s: Option<f64>) -> Option<Report> {
        let prepared = self.prepared.as_ref()?;
        if !self.saved.is_empty()
            || self.table.is_empty()
            || !spec.validate().is_empty()
            || prepared.key != spec.grouping_key()
        {
            return None;
        }
        let readable: Vec<&Loaded> = self.files.iter().filter(|f| f.fatal.is_none()).collect();
        let duration = ingest::run_duration(&readable, &self.table, typed_duration_s);
        Some(evaluate(&self.table, prepared, spec, &duration))
    }

    /// For each of `sources`, whether it becomes a file of the batch (a log) rather than a
    /// saved report: what [`Batch::fill_sha256`] matches digests with, once the sources' bytes
    /// are gone.
    pub fn logs_of(sources: &[(String, Vec<u8>)]) -> Vec<bool> {
        sources
            .iter()
            .map(|(_, bytes)| saved_report(bytes).is_none())
            .collect()
    }

    /// Fills in the SHA-256 of every file loaded with `IngestOptions::sha256_elsewhere`, from
    /// `digests`: lower-case hex, one per source in the order of the sources given to
    /// [`Batch::load`], saved reports included; `is_log` says which sources are files
    /// ([`Batch::logs_of`]). A file whose digest is `None` keeps an empty one: where the bytes
    /// are at hand, compute it first (`ingest::sha256_hex`). A file that has its digest already
    /// (computed while parsing) keeps it.
    pub fn fill_sha256(&mut self, is_log: &[bool], digests: &[Option<String>]) {
        let logs = is_log
            .iter()
            .zip(digests.iter().chain(std::iter::repeat(&None)))
            .filter(|(&log, _)| log);
        for (file, (_, digest)) in self.files.iter_mut().zip(logs) {
            if file.provenance.sha256.is_empty() {
                if let Some(digest) = digest {
                    file.provenance.sha256 = digest.clone();
                }
            }
        }
    }

    /// A part of a file's rows (`ingest::second_slice`) taken apart for the trip to the worker that
    /// loads the file, as a batch of one file (its bad rows) and the part's table; see
    /// [`Batch::part_from_parts`].
    pub fn part_into_parts(part: Part) -> Parts {
        let file = Loaded {
            errors: part.errors,
            error_count: part.error_count,
            ..Loaded::default()
        };
        let batch = Batch {
            files: vec![file],
            table: part.table,
            ..Batch::default()
        };
        batch.into_parts()
    }

    /// The part [`Batch::part_into_parts`] took apart. Damaged parts give an error, not a panic.
    pub fn part_from_parts(parts: Parts) -> Result<Part, String> {
        let batch = Batch::from_parts(parts)?;
        let file = batch
            .files
            .into_iter()
            .next()
            .ok_or("the part has no file")?;
        Ok(Part {
            table: batch.table,
            errors: file.errors,
            error_count: file.error_count,
        })
    }

    /// Takes the batch apart for the trip to another thread: the large columns as they are in
    /// memory (moved, not copied) and everything else in a small header of bytes.
    /// [`Batch::from_parts`] puts it back together exactly, absent cells (NaN) included.
    pub fn into_parts(mut self) -> Parts {
        let table = std::mem::take(&mut self.table);
        let per_request = self.prepared.as_mut().map(|p| {
            (
                std::mem::take(&mut p.cell_of),
                std::mem::take(&mut p.tpot_ms),
                std::mem::take(&mut p.itl_stat_ms),
                std::mem::take(&mut p.max_gap_ms),
            )
        });
        // A derived Serialize of plain data cannot fail.
        let mut json = serde_json::to_vec(&self).unwrap_or_default();
        // JSON has no NaN or infinity (serde_json writes null), so statistics that overflowed
        // (latencies near f64::MAX) would come back changed. Then no preparation is sent and
        // the page prepares the table itself, with the same result as a load on the page.
        if self.prepared.is_some() && read_json::<Batch>(&json).ok().as_ref() != Some(&self) {
            self.prepared = None;
            json = serde_json::to_vec(&self).unwrap_or_default();
        }
        let per_request = per_request.filter(|_| self.prepared.is_some());
        let mut w = Writer {
            header: Vec::with_capacity(MAGIC.len() + json.len() + table.len() + 256),
            columns: Vec::new(),
        };
        w.header.extend_from_slice(MAGIC);
        w.bytes(&json);
        write_table(&mut w, table);
        match per_request {
            // TPOT is not sent: the reader computes it again from the table (`tpot_column`,
            // the same bits), so that 8 MB fewer at a million requests are in transit at the
            // hand-over to the page, the browser's peak.
            Some((cell_of, _tpot, itl, gap)) => {
                w.u8(1);
                w.u32s(cell_of);
                w.f64s(itl);
                w.f64s(gap);
            }
            None => w.u8(0),
        }
        Parts {
            header: w.header,
            columns: w.columns,
        }
    }

    /// Puts a batch back together from [`Batch::into_parts`]'s parts. Anything else (a damaged
    /// header; a column missing, left over, of the other type or of the wrong length) gives an
    /// error, not a panic.
    pub fn from_parts(parts: Parts) -> Result<Batch, String> {
        let Parts { header, columns } = parts;
        let mut r = Reader {
            bytes: &header,
            at: 0,
            columns: columns.into_iter(),
            next_column: 0,
        };
        if r.take(MAGIC.len())? != MAGIC {
            return Err("not a batch of this version of SLO Workbench".to_string());
        }
        let json = r.bytes()?;
        let mut batch: Batch = read_json(json).map_err(|e| format!("batch header: {e}"))?;
        batch.table = read_table(&mut r)?;
        let n = batch.table.len();
        match (r.u8()?, batch.prepared.as_mut()) {
            (1, Some(p)) => {
                p.cell_of = r.u32s()?;
                p.tpot_ms = crate::evaluate::tpot_column(&batch.table);
                p.itl_stat_ms = r.f64s()?;
                p.max_gap_ms = r.f64s()?;
                // The gap columns are empty when no request has gaps.
                let gaps = [p.itl_stat_ms.len(), p.max_gap_ms.len()];
                if p.cell_of.len() != n
                    || p.tpot_ms.len() != n
                    || gaps.iter().any(|&l| l != n && l != 0)
                {
                    return Err("the preparation does not match the table".to_string());
                }
            }
            (0, None) => {}
            _ => return Err("the preparation's columns are missing or unexpected".to_string()),
        }
        if r.at != header.len() {
            return Err(format!("{} bytes after the end", header.len() - r.at));
        }
        if r.columns.len() > 0 {
            return Err(format!(
                "{} columns more than the header names",
                r.columns.len()
            ));
        }
        Ok(batch)
    }
}

/// A report as JSON for the trip from the loader to the page ([`Batch::report`]), or `None`
/// when JSON cannot carry it exactly (a statistic that overflowed to infinity becomes null):
/// then the page computes the report itself once the batch has arrived.
pub fn report_to_json(report: &Report) -> Option<String> {
    let json = serde_json::to_string(report).ok()?;
    (report_from_json(&json).ok().as_ref() == Some(report)).then_some(json)
}

/// The report [`report_to_json`] wrote.
pub fn report_from_json(json: &str) -> Result<Report, String> {
    // Through a `Value` (`read_json`), as saved reports are read (`saved::from_json`): the same
    // generic code serves both, where reading a `Report` straight from text added about 20 KB
    // to the app's gzipped wasm.
    read_json(json.as_bytes()).map_err(|e| format!("report: {e}"))
}

/// Reads JSON into `T` through a `serde_json::Value`, as saved reports and specs are read (they
/// look at the `Value` first). Reading a type straight from the bytes compiles a second
/// deserializer for each of its fields, so everything the app reads goes this way: a batch's
/// header, the early report, the load options and the stored column mapping. Reading a batch
/// header straight from its bytes added 10 KB to the app's gzipped wasm (docs/performance.md,
/// fifteenth round). The cost is one more pass: the header of a million requests in 3 × 3
/// cells is 440 KB of JSON, read in 3.6 ms this way against 1.6 ms straight (natively).
pub fn read_json<T: serde::de::DeserializeOwned>(json: &[u8]) -> serde_json::Result<T> {
    serde_json::from_value(serde_json::from_slice(json)?)
}

/// A [`Batch`] taken apart for moving between threads ([`Batch::into_parts`]).
#[derive(Clone, Debug, Default)]
pub struct Parts {
    /// Everything but the large columns: a version mark, a JSON part (files, saved reports,
    /// per-cell statistics), the table's sparse and small columns, and the length of every
    /// large column in the order they come in `columns`.
    pub header: Vec<u8>,
    /// The large columns, in the order the header names them.
    pub columns: Vec<Column>,
}

/// One large column of a batch, as it is in memory (the app moves it as a `Float64Array` or a
/// `Uint32Array`).
#[derive(Clone, Debug)]
pub enum Column {
    F64(Vec<f64>),
    U32(Vec<u32>),
}

/// The type marks of [`Parts::to_bytes`].
const PART_F64: u8 = 0;
const PART_U32: u8 = 1;

impl Parts {
    /// The parts in one buffer: the header, then each column as a type mark, its length and its
    /// values (little-endian). The app moves the parts as they are; this is for tests and fuzzing,
    /// which want one input.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer {
            header: Vec::new(),
            columns: Vec::new(),
        };
        w.bytes(&self.header);
        w.u64(self.columns.len() as u64);
        for column in &self.columns {
            match column {
                Column::F64(v) => {
                    w.u8(PART_F64);
                    w.u64(v.len() as u64);
                    v.iter()
                        .for_each(|x| w.header.extend_from_slice(&x.to_le_bytes()));
                }
                Column::U32(v) => {
                    w.u8(PART_U32);
                    w.u64(v.len() as u64);
                    v.iter()
                        .for_each(|x| w.header.extend_from_slice(&x.to_le_bytes()));
                }
            }
        }
        w.header
    }

    /// Reads [`Parts::to_bytes`]'s buffer back. A damaged buffer gives an error, not a panic.
    pub fn from_bytes(bytes: &[u8]) -> Result<Parts, String> {
        let mut r = Reader {
            bytes,
            at: 0,
            columns: Vec::new().into_iter(),
            next_column: 0,
        };
        let header = r.bytes()?.to_vec();
        // A column takes at least its type mark and its length.
        let mut columns = Vec::new();
        for _ in 0..r.count(9)? {
            let kind = r.u8()?;
            let n = r.usize()?;
            columns.push(match kind {
                PART_F64 => Column::F64(
                    r.take(n.checked_mul(8).ok_or("a column is too long")?)?
                        .chunks_exact(8)
                        .map(|c| f64::from_le_bytes(eight(c)))
                        .collect(),
                ),
                PART_U32 => Column::U32(
                    r.take(n.checked_mul(4).ok_or("a column is too long")?)?
                        .chunks_exact(4)
                        .map(|c| u32::from_le_bytes(four(c)))
                        .collect(),
                ),
                other => return Err(format!("unknown column type {other}")),
            });
        }
        if r.at != bytes.len() {
            return Err(format!("{} bytes after the end", bytes.len() - r.at));
        }
        Ok(Parts { header, columns })
    }
}

/// Version 2: the large columns travel apart from the header (version 1 held them inline).
const MAGIC: &[u8] = b"SLO-WORKBENCH-BATCH-3\n";

/// How a column is stored: one value for all (or all absent), first + row, apart (in
/// [`Parts::columns`]), or every value in the header (gap offsets only: few, and neither f64
/// nor u32).
const COLUMN_CONSTANT: u8 = 1;
const COLUMN_COUNTING: u8 = 2;
const COLUMN_APART: u8 = 3;
const COLUMN_RAW: u8 = 0;

/// Writes every field of `t`. The table is taken apart field by field, so that a field added to
/// [`RequestTable`] does not compile until it travels too.
fn write_table(w: &mut Writer, t: RequestTable) {
    let RequestTable {
        ids,
        source_names,
        source,
        line,
        status,
        errors,
        input_tokens,
        output_tokens,
        ttft_ms,
        e2e_ms,
        queue_ms,
        start_s,
        end_s,
        itl,
        labels,
    } = t;
    w.u64(ids.len() as u64);
    for (row, id) in &ids {
        w.u64(*row as u64);
        w.str(id);
    }
    w.u64(source_names.len() as u64);
    for name in &source_names {
        match name {
            Some(n) => {
                w.u8(1);
                w.str(n);
            }
            None => w.u8(0),
        }
    }
    w.runs(&source);
    w.runs(&line);
    let status: Vec<u8> = status.iter().map(|s| status_code(*s)).collect();
    w.bytes(&status);
    w.u64(errors.len() as u64);
    for (row, message) in &errors {
        w.u64(*row as u64);
        w.str(message);
    }
    w.u32s(input_tokens);
    w.u32s(output_tokens);
    for column in [ttft_ms, e2e_ms, queue_ms, start_s, end_s] {
        w.f64s(column);
    }
    w.usizes(&itl.offsets);
    w.f64s(itl.gaps_ms);
    w.u64(labels.len() as u64);
    for label in labels {
        w.str(&label.name);
        w.u64(label.values.len() as u64);
        for v in &label.values {
            w.str(v);
        }
        w.u32s(label.codes);
    }
}

fn read_table(r: &mut Reader) -> Result<RequestTable, String> {
    let mut t = RequestTable::default();
    for _ in 0..r.count(16)? {
        t.ids.push((r.usize()?, r.string()?));
    }
    for _ in 0..r.count(1)? {
        t.source_names.push(match r.u8()? {
            0 => None,
            _ => Some(r.string()?),
        });
    }
    t.source = r.runs()?;
    t.line = r.runs()?;
    let status = r.bytes()?;
    if let Some(bad) = status.iter().find(|&&c| status_from_code(c).is_none()) {
        return Err(format!("unknown status code {bad}"));
    }
    t.status = status
        .iter()
        .map(|&c| status_from_code(c).unwrap_or_default())
        .collect();
    for _ in 0..r.count(16)? {
        t.errors.push((r.usize()?, r.string()?));
    }
    t.input_tokens = r.u32s()?;
    t.output_tokens = r.u32s()?;
    t.ttft_ms = r.f64s()?;
    t.e2e_ms = r.f64s()?;
    t.queue_ms = r.f64s()?;
    t.start_s = r.f64s()?;
    t.end_s = r.f64s()?;
    t.itl = Gaps {
        offsets: r.usizes()?,
        gaps_ms: r.f64s()?,
    };
    for _ in 0..r.count(8)? {
        let name = r.string()?;
        let values = (0..r.count(8)?)
            .map(|_| r.string())
            .collect::<Result<Vec<_>, _>>()?;
        t.labels.push(LabelColumn {
            name,
            values,
            codes: r.u32s()?,
        });
    }
    check_table(&t)?;
    Ok(t)
}

/// The invariants the evaluation relies on: every column as long as the table (a value column
/// may be empty, and the gap offsets just `[0]`, when no request has a value), gap offsets
/// ascending within the gaps, label codes within their dictionaries, sparse rows in range.
fn check_table(t: &RequestTable) -> Result<(), String> {
    let n = t.len();
    let values = [
        t.input_tokens.len(),
        t.output_tokens.len(),
        t.ttft_ms.len(),
        t.e2e_ms.len(),
        t.queue_ms.len(),
        t.start_s.len(),
        t.end_s.len(),
    ];
    if t.source.len() != n
        || t.line.len() != n
        || values.iter().any(|&l| l != n && l != 0)
        || (t.itl.offsets.len() != n + 1 && t.itl.offsets.len() != 1)
    {
        return Err("the table's columns differ in length".to_string());
    }
    let gaps_ok = t.itl.offsets.first() == Some(&0)
        && t.itl.offsets.windows(2).all(|w| w[0] <= w[1])
        && t.itl.offsets.last() == Some(&t.itl.gaps_ms.len());
    let labels_ok = t.labels.iter().all(|l| {
        l.codes.len() == n
            && l.codes
                .iter()
                .all(|&c| c == LabelColumn::EMPTY || (c as usize) < l.values.len())
    });
    let sparse_ok = t.ids.iter().chain(&t.errors).all(|(row, _)| *row < n);
    if !gaps_ok || !labels_ok || !sparse_ok {
        return Err("the table's columns are inconsistent".to_string());
    }
    Ok(())
}

fn status_code(s: Status) -> u8 {
    match s {
        Status::Ok => 0,
        Status::Error => 1,
        Status::Timeout => 2,
        Status::Cancelled => 3,
    }
}

fn status_from_code(c: u8) -> Option<Status> {
    Some(match c {
        0 => Status::Ok,
        1 => Status::Error,
        2 => Status::Timeout,
        3 => Status::Cancelled,
        _ => return None,
    })
}

/// The first eight bytes of `c` (always eight: it comes from `chunks_exact(8)`). Written out
/// element by element: in the size-tuned wasm build `copy_from_slice` is a `memcpy` call per
/// value (the page decoded a million requests in 158 ms with it, 127 ms without).
fn eight(c: &[u8]) -> [u8; 8] {
    match c {
        [a, b, c, d, e, f, g, h, ..] => [*a, *b, *c, *d, *e, *f, *g, *h],
        _ => [0; 8],
    }
}

/// The first four bytes of `c` (always four: it comes from `chunks_exact(4)`).
fn four(c: &[u8]) -> [u8; 4] {
    match c {
        [a, b, c, d, ..] => [*a, *b, *c, *d],
        _ => [0; 4],
    }
}

/// Writes a header; the large columns are set apart in `columns`, the header holding their
/// length only.
struct Writer {
    header: Vec<u8>,
    columns: Vec<Column>,
}

impl Writer {
    fn u8(&mut self, v: u8) {
        self.header.push(v);
    }
    fn u64(&mut self, v: u64) {
        self.header.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.header.extend_from_slice(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    /// A u32 column: a constant or a counting column (a file's source and line numbers, often)
    /// as two numbers in the header, any other apart.
    fn u32s(&mut self, v: Vec<u32>) {
        self.u64(v.len() as u64);
        let first = v.first().copied().unwrap_or(0);
        if v.iter().all(|&x| x == first) {
            self.u8(COLUMN_CONSTANT);
            self.header.extend_from_slice(&first.to_le_bytes());
        } else if v
            .iter()
            .enumerate()
            .all(|(k, &x)| u64::from(x) == u64::from(first) + k as u64)
        {
            self.u8(COLUMN_COUNTING);
            self.header.extend_from_slice(&first.to_le_bytes());
        } else {
            self.u8(COLUMN_APART);
            self.columns.push(Column::U32(v));
        }
    }
    /// A run column (`table::Runs`): its length and its runs, in the header.
    fn runs<const STEP: u32>(&mut self, column: &crate::table::Runs<STEP>) {
        self.u64(column.len() as u64);
        self.u64(column.runs().len() as u64);
        for &(row, value) in column.runs() {
            self.u64(row as u64);
            self.header.extend_from_slice(&value.to_le_bytes());
        }
    }
    /// A usize column (gap offsets): all equal (no gaps at all) as one number, any other raw in
    /// the header.
    fn usizes(&mut self, v: &[usize]) {
        self.u64(v.len() as u64);
        let first = v.first().copied().unwrap_or(0);
        if v.iter().all(|&x| x == first) {
            self.u8(COLUMN_CONSTANT);
            self.u64(first as u64);
        } else {
            self.u8(COLUMN_RAW);
            for x in v {
                self.u64(*x as u64);
            }
        }
    }
    /// An f64 column: a column of absent cells (NaN) as its length, any other apart.
    fn f64s(&mut self, v: Vec<f64>) {
        self.u64(v.len() as u64);
        if v.iter().all(|x| x.is_nan()) {
            self.u8(COLUMN_CONSTANT);
        } else {
            self.u8(COLUMN_APART);
            self.columns.push(Column::F64(v));
        }
    }
}

/// Reads a header, taking the columns it names apart from `columns` in order.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    columns: std::vec::IntoIter<Column>,
    /// How many columns were taken, for messages.
    next_column: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err("the batch ends too early".to_string());
        };
        let out = self.bytes.get(self.at..end).unwrap_or_default();
        self.at = end;
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?.first().copied().unwrap_or_default())
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(eight(self.take(8)?)))
    }
    fn usize(&mut self) -> Result<usize, String> {
        usize::try_from(self.u64()?).map_err(|_| "a number is too large".to_string())
    }
    /// A count of items at least `min_size` bytes each: refused when the rest cannot hold them,
    /// so a corrupt count never reserves gigabytes.
    fn count(&mut self, min_size: usize) -> Result<usize, String> {
        let n = self.usize()?;
        if n.saturating_mul(min_size) > self.bytes.len() - self.at {
            return Err("the batch ends too early".to_string());
        }
        Ok(n)
    }
    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.count(1)?;
        self.take(n)
    }
    fn string(&mut self) -> Result<String, String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| "a text is not UTF-8".to_string())
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(four(self.take(4)?)))
    }
    /// The length of a column that is not stored value by value. Every table also stores its
    /// status column byte by byte, so no real column is longer than the header: a corrupt length
    /// is refused rather than allocated.
    fn implied(&self, n: usize) -> Result<usize, String> {
        if n > self.bytes.len() {
            return Err("a column is longer than the batch could hold".to_string());
        }
        Ok(n)
    }
    /// The next column apart, which the header says holds `n` values.
    fn apart(&mut self, n: usize) -> Result<Column, String> {
        let k = self.next_column;
        self.next_column += 1;
        let column = self
            .columns
            .next()
            .ok_or(format!("column {k} is missing"))?;
        let len = match &column {
            Column::F64(v) => v.len(),
            Column::U32(v) => v.len(),
        };
        if len != n {
            return Err(format!("column {k} has {len} values, not {n}"));
        }
        Ok(column)
    }
    fn u32s(&mut self) -> Result<Vec<u32>, String> {
        let n = self.usize()?;
        match self.u8()? {
            COLUMN_CONSTANT => Ok(vec![self.u32()?; self.implied(n)?]),
            COLUMN_COUNTING => {
                let first = self.u32()?;
                if u64::from(first) + n as u64 > u64::from(u32::MAX) + 1 {
                    return Err("a counting column overflows".to_string());
                }
                Ok((0..self.implied(n)? as u32).map(|k| first + k).collect())
            }
            COLUMN_APART => match self.apart(n)? {
                Column::U32(v) => Ok(v),
                Column::F64(_) => Err(format!(
                    "column {} holds f64 values, not u32",
                    self.next_column - 1
                )),
            },
            other => Err(format!("unknown column kind {other}")),
        }
    }
    fn runs<const STEP: u32>(&mut self) -> Result<crate::table::Runs<STEP>, String> {
        let len = self.usize()?;
        let runs = (0..self.count(12)?)
            .map(|_| Ok((self.usize()?, self.u32()?)))
            .collect::<Result<Vec<_>, String>>()?;
        crate::table::Runs::from_runs(runs, len)
            .ok_or_else(|| "a run column is damaged".to_string())
    }
    fn usizes(&mut self) -> Result<Vec<usize>, String> {
        let n = self.usize()?;
        match self.u8()? {
            COLUMN_CONSTANT => Ok(vec![self.usize()?; self.implied(n)?]),
            COLUMN_RAW => self
                .take(n.checked_mul(8).ok_or("a column is too long")?)?
                .chunks_exact(8)
                .map(|c| {
                    usize::try_from(u64::from_le_bytes(eight(c)))
                        .map_err(|_| "a number is too large".to_string())
                })
                .collect(),
            other => Err(format!("unknown column kind {other}")),
        }
    }
    fn f64s(&mut self) -> Result<Vec<f64>, String> {
        let n = self.usize()?;
        match self.u8()? {
            COLUMN_CONSTANT => Ok(vec![f64::NAN; self.implied(n)?]),
            COLUMN_APART => match self.apart(n)? {
                Column::F64(v) => Ok(v),
                Column::U32(_) => Err(format!(
                    "column {} holds u32 values, not f64",
                    self.next_column - 1
                )),
            },
            other => Err(format!("unknown column kind {other}")),
        }
    }
}
