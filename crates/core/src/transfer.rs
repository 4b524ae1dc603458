//! One load of request logs, and a compact byte form of it for moving it between threads.
//!
//! The app reads and parses large files in a Web Worker. The worker runs [`Batch::load`] (parse
//! every file, combine the tables, prepare the grouping) and sends [`Batch::encode`]'s bytes to
//! the page, which rebuilds the batch with [`Batch::decode`]. A million requests make about
//! 80 MB of columns: as JSON that would take seconds to write and read, as raw little-endian
//! columns it is a copy. Small parts (provenance, messages, per-cell statistics) travel as JSON.
//!
//! The byte form is private to one build of the app (the worker and the page run the same wasm):
//! it has a version number but no promise of compatibility, and it is never stored.

use serde::{Deserialize, Serialize};

use crate::evaluate::{prepare, Prepared};
use crate::ingest::{self, IngestOptions, Loaded};
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
    let head = String::from_utf8_lossy(bytes.get(..256).unwrap_or(bytes));
    saved::looks_saved(&head)
        .then(|| std::str::from_utf8(bytes).ok())
        .flatten()
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
        if let Some(spec) = spec.filter(|s| s.validate().is_empty() && !batch.table.is_empty()) {
            progress("Grouping requests and sorting latencies", PARSE_SHARE);
            batch.prepared = Some(prepare(&batch.table, spec));
        }
        progress("Done", 1.0);
        batch
    }

    /// Fills in the SHA-256 of every file loaded with `IngestOptions::sha256_elsewhere`: from
    /// `digests` (lower-case hex, one per source, in the order of the `sources` given to
    /// [`Batch::load`]), or computed here where one is `None`.
    pub fn fill_sha256(&mut self, sources: &[(String, Vec<u8>)], digests: &[Option<String>]) {
        // Files are the sources that are not saved reports, in the same order.
        let logs = sources
            .iter()
            .zip(digests.iter().chain(std::iter::repeat(&None)))
            .filter(|((_, bytes), _)| saved_report(bytes).is_none());
        for (file, ((_, bytes), digest)) in self.files.iter_mut().zip(logs) {
            if file.provenance.sha256.is_empty() {
                file.provenance.sha256 =
                    digest.clone().unwrap_or_else(|| ingest::sha256_hex(bytes));
            }
        }
    }

    /// The batch as bytes: a JSON part for everything small, then the table's and the
    /// preparation's columns raw.
    pub fn encode(mut self) -> Vec<u8> {
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
        if self.prepared.is_some()
            && serde_json::from_slice::<Batch>(&json).ok().as_ref() != Some(&self)
        {
            self.prepared = None;
            json = serde_json::to_vec(&self).unwrap_or_default();
        }
        let per_request = per_request.filter(|_| self.prepared.is_some());
        let mut w = Writer(Vec::with_capacity(json.len() + 80 * table.len() + 64));
        w.0.extend_from_slice(MAGIC);
        w.bytes(&json);
        write_table(&mut w, &table);
        match per_request {
            Some((cell_of, tpot, itl, gap)) => {
                w.u8(1);
                w.u32s(&cell_of);
                w.f64s(&tpot);
                w.f64s(&itl);
                w.f64s(&gap);
            }
            None => w.u8(0),
        }
        w.0
    }

    /// Reads [`Batch::encode`]'s bytes back. Bytes from anything else give an error, not a panic.
    pub fn decode(bytes: &[u8]) -> Result<Batch, String> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(MAGIC.len())? != MAGIC {
            return Err("not a batch of this version of SLO Workbench".to_string());
        }
        let json = r.bytes()?;
        let mut batch: Batch =
            serde_json::from_slice(json).map_err(|e| format!("batch header: {e}"))?;
        batch.table = read_table(&mut r)?;
        let n = batch.table.len();
        match (r.u8()?, batch.prepared.as_mut()) {
            (1, Some(p)) => {
                p.cell_of = r.u32s()?;
                p.tpot_ms = r.f64s()?;
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
        if r.at != bytes.len() {
            return Err(format!("{} bytes after the end", bytes.len() - r.at));
        }
        Ok(batch)
    }
}

const MAGIC: &[u8] = b"SLO-WORKBENCH-BATCH-1\n";

/// How a column is stored: every value, one value for all (or all absent), or first + row.
const COLUMN_RAW: u8 = 0;
const COLUMN_CONSTANT: u8 = 1;
const COLUMN_COUNTING: u8 = 2;

fn write_table(w: &mut Writer, t: &RequestTable) {
    w.u64(t.ids.len() as u64);
    for (row, id) in &t.ids {
        w.u64(*row as u64);
        w.str(id);
    }
    w.u64(t.source_names.len() as u64);
    for name in &t.source_names {
        match name {
            Some(n) => {
                w.u8(1);
                w.str(n);
            }
            None => w.u8(0),
        }
    }
    w.u32s(&t.source);
    w.u32s(&t.line);
    let status: Vec<u8> = t.status.iter().map(|s| status_code(*s)).collect();
    w.bytes(&status);
    w.u64(t.errors.len() as u64);
    for (row, message) in &t.errors {
        w.u64(*row as u64);
        w.str(message);
    }
    for column in [
        &t.input_tokens,
        &t.output_tokens,
        &t.ttft_ms,
        &t.e2e_ms,
        &t.queue_ms,
        &t.start_s,
        &t.end_s,
    ] {
        w.f64s(column);
    }
    w.usizes(&t.itl.offsets);
    w.f64s(&t.itl.gaps_ms);
    w.u64(t.labels.len() as u64);
    for label in &t.labels {
        w.str(&label.name);
        w.u64(label.values.len() as u64);
        for v in &label.values {
            w.str(v);
        }
        w.u32s(&label.codes);
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
    t.source = r.u32s()?;
    t.line = r.u32s()?;
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
    t.input_tokens = r.f64s()?;
    t.output_tokens = r.f64s()?;
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

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    /// A u32 column: a constant or a counting column (a file's source and line numbers, often)
    /// as two numbers, any other raw.
    fn u32s(&mut self, v: &[u32]) {
        self.u64(v.len() as u64);
        let first = v.first().copied().unwrap_or(0);
        if v.iter().all(|&x| x == first) {
            self.u8(COLUMN_CONSTANT);
            self.0.extend_from_slice(&first.to_le_bytes());
        } else if v
            .iter()
            .enumerate()
            .all(|(k, &x)| u64::from(x) == u64::from(first) + k as u64)
        {
            self.u8(COLUMN_COUNTING);
            self.0.extend_from_slice(&first.to_le_bytes());
        } else {
            self.u8(COLUMN_RAW);
            for x in v {
                self.0.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    /// A usize column (gap offsets): all equal (no gaps at all) as one number, any other raw.
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
    /// An f64 column: a column of absent cells (NaN) as its length, any other raw.
    fn f64s(&mut self, v: &[f64]) {
        self.u64(v.len() as u64);
        if v.iter().all(|x| x.is_nan()) {
            self.u8(COLUMN_CONSTANT);
        } else {
            self.u8(COLUMN_RAW);
            for x in v {
                self.0.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
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
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(b))
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
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(b))
    }
    /// The length of a column that is not stored value by value. Every table also stores its
    /// status column byte by byte, so no real column is longer than the batch: a corrupt length
    /// is refused rather than allocated.
    fn implied(&self, n: usize) -> Result<usize, String> {
        if n > self.bytes.len() {
            return Err("a column is longer than the batch could hold".to_string());
        }
        Ok(n)
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
            COLUMN_RAW => Ok(self
                .take(n.checked_mul(4).ok_or("a column is too long")?)?
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()),
            other => Err(format!("unknown column kind {other}")),
        }
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
            COLUMN_RAW => Ok(self
                .take(n.checked_mul(8).ok_or("a column is too long")?)?
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(eight(c)))
                .collect()),
            other => Err(format!("unknown column kind {other}")),
        }
    }
}
