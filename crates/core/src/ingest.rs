//! Ingest: turn the bytes of a request log or a benchmark result file into a [`RequestTable`].
//!
//! Every parser keeps the good rows and reports each bad one with its location (file, line,
//! column or JSON path) and a reason; a problem with the whole file (empty, binary, not a log)
//! is one clear sentence in [`Loaded::fatal`]. Nothing here panics on input.
//!
//! - [`fields`]: canonical field names, header aliases, units and cell parsing.
//! - [`delimited`]: CSV and TSV (delimiter detected).
//! - [`records`]: JSON Lines and JSON arrays of flat objects (generic logs).
//! - [`bench`]: result files of benchmark tools (vLLM, SGLang, AIPerf, GenAI-Perf, GuideLLM, LLMPerf).

pub mod bench;
pub mod delimited;
pub mod fields;
pub mod records;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::evaluate::{timestamp_span_s, Duration};
use crate::table::RequestTable;
pub use fields::{ColumnMapping, Field, TimeUnit};

/// How many row errors a [`Loaded`] lists one by one; the rest are counted.
pub const MAX_LISTED_ERRORS: usize = 100;

/// The formats we read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Csv,
    Tsv,
    JsonLines,
    JsonArray,
    /// vLLM `bench serve` / `benchmark_serving.py --save-result` JSON.
    Vllm,
    /// SGLang `bench_serving --output-details` JSON Lines.
    Sglang,
    /// AIPerf `profile_export.jsonl`.
    Aiperf,
    /// GenAI-Perf `profile_export.json`.
    GenaiPerf,
    /// GuideLLM `benchmarks.json`.
    Guidellm,
    /// Ray LLMPerf `*_individual_responses.json`.
    Llmperf,
}

impl Format {
    pub const ALL: [Format; 10] = [
        Format::Csv,
        Format::Tsv,
        Format::JsonLines,
        Format::JsonArray,
        Format::Vllm,
        Format::Sglang,
        Format::Aiperf,
        Format::GenaiPerf,
        Format::Guidellm,
        Format::Llmperf,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::JsonLines => "jsonl",
            Format::JsonArray => "json",
            Format::Vllm => "vllm",
            Format::Sglang => "sglang",
            Format::Aiperf => "aiperf",
            Format::GenaiPerf => "genai-perf",
            Format::Guidellm => "guidellm",
            Format::Llmperf => "llmperf",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Format::Csv => "CSV request log",
            Format::Tsv => "TSV request log",
            Format::JsonLines => "JSON Lines request log",
            Format::JsonArray => "JSON array request log",
            Format::Vllm => "vLLM bench serve result",
            Format::Sglang => "SGLang bench_serving output",
            Format::Aiperf => "AIPerf profile export",
            Format::GenaiPerf => "GenAI-Perf profile export",
            Format::Guidellm => "GuideLLM benchmarks",
            Format::Llmperf => "LLMPerf individual responses",
        }
    }

    pub fn from_name(s: &str) -> Option<Format> {
        let s = s.trim().to_ascii_lowercase().replace('_', "-");
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s || (s == "json-lines" && *f == Format::JsonLines))
    }
}

/// Where a problem is. Lines and columns are 1-based.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    pub file: String,
    pub line: Option<u64>,
    pub column: Option<u64>,
    /// The column's header, or the JSON key.
    pub field: Option<String>,
    /// For JSON input: the path, e.g. `$.ttfts[17]`.
    pub json_path: Option<String>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        if let Some(path) = &self.json_path {
            write!(f, " at {path}")?;
        }
        Ok(())
    }
}

/// One bad row or cell: where, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowError {
    pub at: Location,
    pub message: String,
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.at.field {
            Some(field) => write!(f, "{}: column \"{}\": {}", self.at, field, self.message),
            None => write!(f, "{}: {}", self.at, self.message),
        }
    }
}

/// `request_rate` as benchmark tools write it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestRate {
    PerSecond(f64),
    /// "inf": every request sent at once (closed-loop when max_concurrency is set).
    Infinite,
}

/// What a result file says about the run as a whole.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    pub duration_s: Option<f64>,
    pub request_rate: Option<RequestRate>,
    pub burstiness: Option<f64>,
    pub max_concurrency: Option<u64>,
    pub num_prompts: Option<u64>,
    pub completed: Option<u64>,
    pub failed: Option<u64>,
    pub model_id: Option<String>,
    pub date: Option<String>,
    /// The file's own summary numbers (`mean_ttft_ms`, `p99_itl_ms`, `request_goodput` ...).
    pub summary: BTreeMap<String, f64>,
    /// E2E was rebuilt as TTFT + sum(ITL) because the file has no per-request latencies.
    pub e2e_reconstructed: bool,
}

/// Provenance of one loaded file: what it was, and what we made of it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    pub name: String,
    pub size_bytes: u64,
    /// Lower-case hex SHA-256 of the bytes as given.
    pub sha256: String,
    pub format: Option<Format>,
    pub rows_read: u64,
    pub rows_skipped: u64,
}

/// The result of reading one file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Loaded {
    pub table: RequestTable,
    pub provenance: Provenance,
    pub meta: RunMeta,
    /// The first [`MAX_LISTED_ERRORS`] bad rows.
    pub errors: Vec<RowError>,
    /// All bad rows, listed or not.
    pub error_count: u64,
    /// Things the user should know that did not cost a row (units guessed, columns ignored ...).
    pub warnings: Vec<String>,
    /// A problem with the whole file; when set, the table is empty.
    pub fatal: Option<String>,
    /// Headers that mapped to no field (for the column-mapping step).
    pub unmapped_columns: Vec<String>,
}

impl Loaded {
    /// Records a bad row: listed while there is room, always counted.
    pub fn reject(&mut self, at: Location, message: impl Into<String>) {
        self.error_count += 1;
        if self.errors.len() < MAX_LISTED_ERRORS {
            self.errors.push(RowError {
                at,
                message: message.into(),
            });
        }
    }

    /// A whole-file failure.
    pub fn fail(
        name: &str,
        bytes: &[u8],
        format: Option<Format>,
        message: impl Into<String>,
    ) -> Loaded {
        Loaded {
            provenance: provenance(name, bytes, format),
            fatal: Some(message.into()),
            ..Loaded::default()
        }
    }
}

/// Options for [`parse`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IngestOptions {
    /// Force a format instead of detecting it.
    pub format: Option<Format>,
    /// Unit of time columns whose header has no unit suffix (default milliseconds).
    #[serde(default)]
    pub default_time_unit: TimeUnit,
    /// The user's column mapping: header -> field (and unit), overriding the aliases.
    #[serde(default)]
    pub mapping: ColumnMapping,
    /// Leave `Provenance::sha256` empty for the caller to fill in. The app's worker has the
    /// browser compute it (Web Crypto runs beside the parse, several times faster than this
    /// code in WebAssembly); see `transfer::Batch::fill_sha256`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sha256_elsewhere: bool,
}

impl IngestOptions {
    /// These options with every column a class rule of `spec` reads added to the mapping as a
    /// label column, unless the mapping or the aliases already read it: a rule on `team` then
    /// reads the log's `team` column, which no alias names and which would otherwise be left
    /// out as a column the tool does not know.
    ///
    /// # Example
    /// ```
    /// use slo_core::ingest::{parse, IngestOptions};
    /// use slo_core::spec::{ClassRule, Spec, Targets};
    /// let mut spec = Spec::single(Targets::default());
    /// spec.classes[0].rule = ClassRule::Equals { column: "team".into(), value: "a".into() };
    /// let log = b"ttft_ms,team\n120,a\n";
    /// let plain = parse("log.csv", log, &IngestOptions::default());
    /// assert!(plain.table.label("team").is_none());
    /// let options = IngestOptions::default().reading_rule_columns(&spec);
    /// assert!(parse("log.csv", log, &options).table.label("team").is_some());
    /// ```
    pub fn reading_rule_columns(mut self, spec: &crate::spec::Spec) -> IngestOptions {
        for class in &spec.classes {
            if let crate::spec::ClassRule::Equals { column, .. } = &class.rule {
                let known = fields::resolve(column, &self.mapping, self.default_time_unit);
                if known.is_none() && !column.trim().is_empty() {
                    self.mapping.columns.push(fields::MappedColumn {
                        header: column.trim().to_string(),
                        field: Field::Label,
                        unit: None,
                    });
                }
            }
        }
        self
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The rows of `files` that could not be read (each file's `error_count`): what a report on
/// them leaves out.
pub fn rows_skipped<'a>(files: impl IntoIterator<Item = &'a Loaded>) -> u64 {
    files.into_iter().map(|f| f.error_count).sum()
}

/// Lower-case hex SHA-256 of `bytes`.
///
/// # Example
/// ```
/// assert_eq!(
///     slo_core::ingest::sha256_hex(b"abc"),
///     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// );
/// // Across the 256 KB steps it is fed in (the value from Python's hashlib):
/// let long: Vec<u8> = (0..(1 << 20) + 7).map(|i| (i % 251) as u8).collect();
/// assert_eq!(
///     slo_core::ingest::sha256_hex(&long),
///     "9e037498ddbb955fba0752812031c14ba299a4875cb400e8b8c1d77b3962c90e"
/// );
/// ```
pub fn sha256_hex(bytes: &[u8]) -> String {
    let mut digest = Sha256Digest::default();
    digest.update(bytes);
    digest.hex()
}

/// A SHA-256 digest computed over bytes given a piece at a time (a file read in chunks, so
/// that it is never all in memory at once), the same as [`sha256_hex`] of the pieces put
/// together.
///
/// # Example
/// ```
/// use slo_core::ingest::{sha256_hex, Sha256Digest};
/// let mut digest = Sha256Digest::default();
/// digest.update(b"ab");
/// digest.update(b"c");
/// assert_eq!(digest.hex(), sha256_hex(b"abc"));
/// // The long input of `sha256_hex`'s example, in pieces of 100,003 bytes (Python's hashlib):
/// let long: Vec<u8> = (0..(1 << 20) + 7).map(|i| (i % 251) as u8).collect();
/// let mut digest = Sha256Digest::default();
/// long.chunks(100_003).for_each(|piece| digest.update(piece));
/// assert_eq!(
///     digest.hex(),
///     "9e037498ddbb955fba0752812031c14ba299a4875cb400e8b8c1d77b3962c90e"
/// );
/// ```
#[derive(Clone, Default)]
pub struct Sha256Digest(Sha256);

impl Sha256Digest {
    pub fn update(&mut self, bytes: &[u8]) {
        // Fed 256 KB at a time, a call each: in one call over the whole file the compression
        // loop ran in baseline code in the browser, 5 times slower (see `crate::parallel`).
        for chunk in bytes.chunks(1 << 18) {
            self.0.update(chunk);
        }
    }

    /// The lower-case hex digest of every byte given.
    pub fn hex(self) -> String {
        self.0
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

fn provenance(name: &str, bytes: &[u8], format: Option<Format>) -> Provenance {
    provenance_with(name, bytes.len() as u64, sha256_hex(bytes), format)
}

/// [`provenance`] of a file of `size` bytes, with the digest already computed.
fn provenance_with(name: &str, size: u64, sha256: String, format: Option<Format>) -> Provenance {
    Provenance {
        name: name.to_string(),
        size_bytes: size,
        sha256,
        format,
        rows_read: 0,
        rows_skipped: 0,
    }
}

/// A file with a NUL byte in this many first bytes (after a byte-order mark) is binary.
const BINARY_CHECK: usize = 8192;

/// Turns raw bytes into text: strips a UTF-8 BOM, decodes UTF-16 with a BOM, refuses binary.
///
/// # Edge cases
/// Invalid UTF-8 is replaced (U+FFFD) and said in a warning, rather than refusing the file.
/// Valid UTF-8 (the usual case) is borrowed, not copied.
pub fn decode_text<'a>(
    bytes: &'a [u8],
    warnings: &mut Vec<String>,
) -> Result<Cow<'a, str>, String> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err("the file is empty: there is nothing to read".to_string());
    }
    let utf16 = |le: bool, body: &[u8]| -> String {
        let units = body.chunks_exact(2).map(|c| {
            let pair = [c[0], c[1]];
            if le {
                u16::from_le_bytes(pair)
            } else {
                u16::from_be_bytes(pair)
            }
        });
        char::decode_utf16(units)
            .map(|r| r.unwrap_or('\u{FFFD}'))
            .collect()
    };
    if let Some(body) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        warnings.push("the file is UTF-16 (little-endian); it was converted to UTF-8".to_string());
        return Ok(Cow::Owned(utf16(true, body)));
    }
    if let Some(body) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        warnings.push("the file is UTF-16 (big-endian); it was converted to UTF-8".to_string());
        return Ok(Cow::Owned(utf16(false, body)));
    }
    let body = match bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        Some(rest) => {
            warnings.push("the file starts with a byte-order mark; it was skipped".to_string());
            rest
        }
        None => bytes,
    };
    let head = body.get(..body.len().min(BINARY_CHECK)).unwrap_or(body);
    if head.contains(&0) {
        // UTF-16 without a BOM shows as every other byte NUL.
        return Err("this looks like a binary file (it contains NUL bytes), not a text log; if it is UTF-16 text, save it as UTF-8".to_string());
    }
    match std::str::from_utf8(body) {
        Ok(s) => Ok(Cow::Borrowed(s)),
        Err(e) => {
            let line = body
                .get(..e.valid_up_to())
                .map_or(1, |b| b.iter().filter(|&&c| c == b'\n').count() + 1);
            warnings.push(format!(
                "the file is not valid UTF-8 (first bad byte on line {line}); bad bytes were replaced with \u{FFFD}"
            ));
            Ok(String::from_utf8_lossy(body))
        }
    }
}

/// Guesses the format from the content.
pub fn detect(text: &str) -> Format {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return bench::detect_json(trimmed);
    }
    match delimited::detect_delimiter(text) {
        b'\t' => Format::Tsv,
        _ => Format::Csv,
    }
}

/// Reads one file. `name` is used in every message.
///
/// # Example
/// ```
/// let text = "ttft_ms,e2e_ms,output_tokens\n180,4010,101\nx,1,2\n";
/// let loaded = slo_core::ingest::parse("a.csv", text.as_bytes(), &Default::default());
/// assert_eq!(loaded.table.len(), 1);
/// assert_eq!(loaded.errors[0].to_string(), "a.csv:3:1: column \"ttft_ms\": \"x\" is not a number");
/// ```
pub fn parse(name: &str, bytes: &[u8], options: &IngestOptions) -> Loaded {
    parse_with_progress(name, bytes, options, &mut |_| {})
}

pub use delimited::Part;

/// How one large CSV or TSV file is read by two readers that each hold only their own bytes of
/// it (the app's two loader workers, each on a core of its own): the first reads the bytes
/// `..first_end`, the second the bytes `..head_end` (for the header) and `middle..` (to the
/// end). Their rows are cut after the first line end at or past the middle byte, which both
/// look for in the bytes `middle..middle + SEARCH` that both read; a file with no line end
/// there, or whose header ends past the middle, is not read in slices.
///
/// # Example
/// ```
/// use slo_core::ingest::Slices;
/// let s = Slices::of(10_000_000);
/// assert_eq!((s.middle, s.first_end, s.head_end), (5_000_000, 5_000_000 + Slices::SEARCH, Slices::HEAD));
/// assert_eq!(Slices::of(100).first_end, 100);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slices {
    pub size: u64,
    pub middle: u64,
    pub first_end: u64,
    pub head_end: u64,
}

impl Slices {
    /// The cut's line end must come within this many bytes from the middle.
    pub const SEARCH: u64 = 1 << 20;
    /// The second reader reads the header from this many first bytes of the file.
    pub const HEAD: u64 = 1 << 16;

    pub fn of(size: u64) -> Slices {
        let middle = size / 2;
        Slices {
            size,
            middle,
            first_end: middle.saturating_add(Slices::SEARCH).min(size),
            head_end: Slices::HEAD.min(size),
        }
    }
}

/// The first reader's part of a file read in slices ([`first_slice`]): all that
/// [`join_slices`] needs, so that the first slice's bytes can go before the join.
#[derive(Clone, Debug, PartialEq)]
pub struct FirstSlice {
    pub part: Part,
    /// The file's bytes before its rows (a byte-order mark, blank lines, the header line).
    pub header: Vec<u8>,
    /// The line the second reader's first row is on (its lines are numbered from 1).
    pub next_line: u64,
}

/// Where a file read in slices is cut, as an offset from its middle: after the first line end
/// in `search` (the file's bytes from the middle on) within [`Slices::SEARCH`] bytes.
fn cut_after_middle(search: &[u8]) -> Option<usize> {
    let within = search.get(..search.len().min(Slices::SEARCH as usize))?;
    Some(within.iter().position(|&b| b == b'\n')? + 1)
}

/// `bytes` as UTF-8 text and the length of the byte-order mark before it, when they are plain
/// UTF-8 (with or without a mark): a slice read alone must be exactly the file's bytes.
fn plain_text(bytes: &[u8]) -> Option<(&str, usize)> {
    match decode_text(bytes, &mut Vec::new()).ok()? {
        Cow::Borrowed(text) => Some((text, bytes.len() - text.len())),
        Cow::Owned(_) => None,
    }
}

/// The format of a slice's text: CSV or TSV, else `None` (the file is not read in slices).
fn sliced_format(text: &str, options: &IngestOptions) -> Option<Format> {
    let format = options.format.unwrap_or_else(|| detect(text));
    matches!(format, Format::Csv | Format::Tsv).then_some(format)
}

/// The first reader's part of a file of `size` bytes read in slices (see [`Slices`]): `bytes`
/// are the file's first bytes, at least up to `Slices::of(size).first_end`. `None` when the
/// file is not read in slices (not a CSV or TSV log; its header or its part of the rows has a
/// quote or is not plain UTF-8; no line end near the middle): then read the whole file.
pub fn first_slice(
    name: &str,
    bytes: &[u8],
    size: u64,
    options: &IngestOptions,
    progress: &mut dyn FnMut(f64),
) -> Option<FirstSlice> {
    let middle = usize::try_from(Slices::of(size).middle).ok()?;
    let cut = middle + cut_after_middle(bytes.get(middle..)?)?;
    let (text, mark) = plain_text(bytes.get(..cut)?)?;
    // The whole-file reader takes a NUL in the first 8 KiB for a binary file, past the cut too.
    if bytes.iter().skip(mark).take(BINARY_CHECK).any(|&b| b == 0) {
        return None;
    }
    let format = sliced_format(text, options)?;
    let header_until = middle.checked_sub(mark)?;
    let (part, next_line, header_len) =
        delimited::first_slice(name, text, header_until, format, options, progress)?;
    Some(FirstSlice {
        part,
        header: bytes.get(..mark + header_len)?.to_vec(),
        next_line,
    })
}

/// The second reader's part of a file of `size` bytes read in slices (see [`Slices`]): `head`
/// is the file's first bytes (`..Slices::of(size).head_end`), `tail` its bytes from the middle
/// to the end. The part's lines are numbered from 1; [`join_slices`] moves them. `None` when
/// its part is not read in slices, as for [`first_slice`].
pub fn second_slice(
    name: &str,
    head: &[u8],
    tail: &[u8],
    size: u64,
    options: &IngestOptions,
    progress: &mut dyn FnMut(f64),
) -> Option<Part> {
    let middle = usize::try_from(Slices::of(size).middle).ok()?;
    // The header is read from the head's whole lines.
    let lines = head.iter().rposition(|&b| b == b'\n')? + 1;
    let (head_text, mark) = plain_text(head.get(..lines)?)?;
    let format = sliced_format(head_text, options)?;
    let body = tail.get(cut_after_middle(tail)?..)?;
    let header_until = middle.checked_sub(mark)?;
    delimited::second_slice(
        name,
        head_text,
        header_until,
        body,
        format,
        options,
        progress,
    )
}

/// The file of `size` bytes read in slices: `first` from the first reader ([`first_slice`]),
/// `second` from the second ([`second_slice`]). What [`parse`] gives for the whole file, bit
/// for bit, except that the SHA-256 is left empty (no reader had every byte: compute it from
/// the file, see `transfer::Batch::fill_sha256`). `None` when the parts do not fit together
/// (read under another header): then read the whole file.
pub fn join_slices(
    name: &str,
    size: u64,
    options: &IngestOptions,
    first: FirstSlice,
    mut second: Part,
) -> Option<Loaded> {
    // The header's bytes say what the whole file's decoding says: the first reader checked
    // that its slice is plain UTF-8, and a byte-order mark is among them.
    let mut warnings = Vec::new();
    let text = decode_text(&first.header, &mut warnings).ok()?;
    let format = sliced_format(&text, options)?;
    second.shift_lines(first.next_line.checked_sub(1)?);
    let loaded = delimited::join_slices(name, &text, format, options, first.part, second)?;
    Some(name_fatal(
        name,
        finish_loaded(name, size, String::new(), Some(format), warnings, loaded),
    ))
}

/// `bytes`, a whole file, read in two slices as two readers that each hold only their own
/// bytes read it ([`first_slice`], [`second_slice`], [`join_slices`]); `None` where either
/// declines. (For the tests and the fuzzer that check it against [`parse`].)
#[doc(hidden)]
pub fn parse_in_slices(name: &str, bytes: &[u8], options: &IngestOptions) -> Option<Loaded> {
    let size = bytes.len() as u64;
    let s = Slices::of(size);
    let first = first_slice(
        name,
        bytes.get(..s.first_end as usize)?,
        size,
        options,
        &mut |_| {},
    )?;
    let head = bytes.get(..s.head_end as usize)?;
    let tail = bytes.get(s.middle as usize..)?;
    let second = second_slice(name, head, tail, size, options, &mut |_| {})?;
    join_slices(name, size, options, first, second)
}

/// [`parse`], telling `progress` how far through the file it is (0 to 1) every 65,536 rows of a
/// CSV, TSV or JSON Lines log; other formats are read in one go and say nothing.
pub fn parse_with_progress(
    name: &str,
    bytes: &[u8],
    options: &IngestOptions,
    progress: &mut dyn FnMut(f64),
) -> Loaded {
    name_fatal(name, parse_unnamed(name, bytes, options, progress))
}

/// Every whole-file message starts with the file's name, like a row error's location does
/// (some already do: `a.json:1:104: the JSON ends too early`).
fn name_fatal(name: &str, mut loaded: Loaded) -> Loaded {
    if let Some(fatal) = &mut loaded.fatal {
        // Located already: `a.json:1:104: ...` or `a.json at $.ttfts: ...`.
        let named = [":", " at "]
            .iter()
            .any(|sep| fatal.starts_with(&format!("{name}{sep}")));
        if !name.is_empty() && !named {
            *fatal = format!("{name}: {fatal}");
        }
    }
    loaded
}

/// The file read.
fn parse_unnamed(
    name: &str,
    bytes: &[u8],
    options: &IngestOptions,
    progress: &mut dyn FnMut(f64),
) -> Loaded {
    // The file's digest is computed beside its decoding and parse where there is a core to
    // spare: from the start, so that the check that the text is UTF-8 (one pass over it)
    // does not leave that core idle.
    let (sha256, read) = crate::parallel::join(
        || {
            if options.sha256_elsewhere {
                String::new()
            } else {
                sha256_hex(bytes)
            }
        },
        || -> Result<(Format, Vec<String>, Loaded), String> {
            let mut warnings = Vec::new();
            let text = decode_text(bytes, &mut warnings)?;
            let format = options.format.unwrap_or_else(|| detect(&text));
            let loaded = match format {
                Format::Csv | Format::Tsv => {
                    delimited::parse(name, &text, format, options, progress)
                }
                Format::JsonLines | Format::JsonArray => {
                    records::parse(name, &text, format, options, progress)
                }
                _ => bench::parse(name, &text, format, options),
            };
            Ok((format, warnings, loaded))
        },
    );
    match read {
        Ok((format, warnings, loaded)) => finish_loaded(
            name,
            bytes.len() as u64,
            sha256,
            Some(format),
            warnings,
            loaded,
        ),
        // A file that is not text: its digest all the same, as for every file.
        Err(message) => {
            let sha256 = if sha256.is_empty() {
                sha256_hex(bytes)
            } else {
                sha256
            };
            Loaded {
                provenance: provenance_with(name, bytes.len() as u64, sha256, None),
                fatal: Some(message),
                ..Loaded::default()
            }
        }
    }
}

/// A file's result once its rows are read: its provenance (`size` bytes, the digest given),
/// the decoding's `warnings` ahead of the reader's, and a whole-file message when no row could
/// be read.
fn finish_loaded(
    name: &str,
    size: u64,
    sha256: String,
    format: Option<Format>,
    mut warnings: Vec<String>,
    mut loaded: Loaded,
) -> Loaded {
    let rows_read = loaded.table.len() as u64;
    let mut prov = provenance_with(name, size, sha256, format);
    prov.rows_read = rows_read;
    prov.rows_skipped = loaded.error_count;
    loaded.provenance = prov;
    warnings.append(&mut loaded.warnings);
    loaded.warnings = warnings;
    if loaded.fatal.is_none() && rows_read == 0 && loaded.error_count > 0 {
        let first = loaded
            .errors
            .first()
            .map(|e| e.to_string())
            .unwrap_or_default();
        loaded.fatal = Some(if loaded.error_count == 1 {
            format!("no row could be read: {first}")
        } else {
            format!(
                "no row could be read: all {} rows had errors (the first: {first})",
                loaded.error_count
            )
        });
    }
    loaded
}

/// Several loaded files as one table; each file becomes one source.
pub fn combine(files: &[&Loaded]) -> RequestTable {
    if let [one] = files {
        return one.table.clone();
    }
    let mut table = RequestTable::default();
    for (k, f) in files.iter().enumerate() {
        table.append(f.table.clone(), k as u32);
    }
    table
}

/// Like [`combine`], but moves each file's requests out instead of copying them (a million rows
/// are not copied twice); the files keep their provenance, metadata and messages. Files with
/// `fatal` set have no rows and are skipped, so sources are numbered over the readable files.
pub fn take_combined(files: &mut [Loaded]) -> RequestTable {
    let mut readable: Vec<&mut Loaded> = files.iter_mut().filter(|f| f.fatal.is_none()).collect();
    if let [one] = readable.as_mut_slice() {
        return std::mem::take(&mut one.table);
    }
    let mut table = RequestTable::default();
    for (k, f) in readable.into_iter().enumerate() {
        table.append(std::mem::take(&mut f.table), k as u32);
    }
    table
}

/// The run's duration for goodput: a typed value, else the span of request timestamps, else the
/// duration a single result file states.
///
/// # Edge cases
/// Several files without timestamps: unknown (they may be replicas running at once or runs one
/// after another; adding their durations would be a guess).
pub fn run_duration(files: &[&Loaded], table: &RequestTable, typed_s: Option<f64>) -> Duration {
    if let Some(s) = typed_s.filter(|s| s.is_finite() && *s > 0.0) {
        return Duration::known(s, "given by the user");
    }
    if let Some(span) = timestamp_span_s(table) {
        return Duration::known(span, "span of the request timestamps");
    }
    match files {
        [one] => match one.meta.duration_s {
            Some(d) if d > 0.0 => Duration::known(d, &format!("the duration stated in {}", one.provenance.name)),
            _ => Duration::unknown("the log states no duration and has no request timestamps; type the duration to get goodput"),
        },
        _ => Duration::unknown("several files without request timestamps; type the duration to get goodput"),
    }
}
