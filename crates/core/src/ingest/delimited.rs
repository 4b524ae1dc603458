//! CSV and TSV request logs: one request per row, a header naming the fields.

use std::ops::Range;

use super::fields::{self, word_at, Field, Resolved, TimeUnit};
use super::{Format, IngestOptions, Loaded, Location, MAX_LISTED_ERRORS};
use crate::table::{LabelColumn, LabelIndex, Row, Status};

/// The delimiter of the first line: the most frequent of `,` `\t` `;` `|` outside quotes.
///
/// # Example
/// ```
/// use slo_core::ingest::delimited::detect_delimiter;
/// assert_eq!(detect_delimiter("a\tb\tc\n1\t2\t3"), b'\t');
/// assert_eq!(detect_delimiter("a;b;c"), b';');
/// assert_eq!(detect_delimiter("\"x,y\";b"), b';');
/// assert_eq!(detect_delimiter("single"), b',');
/// ```
pub fn detect_delimiter(text: &str) -> u8 {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut counts = [(b',', 0usize), (b'\t', 0), (b';', 0), (b'|', 0)];
    let mut quoted = false;
    for b in first.bytes() {
        if b == b'"' {
            quoted = !quoted;
        } else if !quoted {
            for (d, n) in counts.iter_mut() {
                if *d == b {
                    *n += 1;
                }
            }
        }
    }
    counts
        .iter()
        .filter(|(_, n)| *n > 0)
        .max_by_key(|(_, n)| *n)
        .map_or(b',', |(d, _)| *d)
}

/// Headers for a message: quoted, at most 20 of them, each cut after 40 characters (a header line
/// of a million names, or one 10 MB name, stays a short sentence).
fn header_list<'a>(headers: impl ExactSizeIterator<Item = &'a String>) -> String {
    const SHOWN: usize = 20;
    let n = headers.len();
    let mut out: Vec<String> = headers.take(SHOWN).map(|h| fields::quoted(h)).collect();
    if n > SHOWN {
        out.push(format!("... ({} more)", n - SHOWN));
    }
    out.join(", ")
}

/// Rows between two progress reports of a large file.
pub const PROGRESS_ROWS: usize = 65_536;

/// Values of each latency column kept for the seconds-in-a-millisecond-column check.
const SAMPLE: usize = 10_000;

/// A body this large (bytes) is read on every core when it has no quotes.
const PARALLEL_FROM: usize = 1 << 20;

/// Bytes a scan of the whole body (quote check, line count) looks at per call (see
/// `crate::parallel` on long loops in the browser).
const SCAN_CALL: usize = 1 << 20;

/// How the rows under the header are read. Every way gives the same [`Loaded`]; the choice is
/// only speed. (Public for the tests and the fuzzer that check exactly that.)
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Splitter {
    /// The fastest that is correct for this text: [`Splitter::Plain`] when the body has no
    /// quotes and no carriage return outside a CRLF line end, in as many pieces as there are
    /// threads when it is large; else [`Splitter::Quoted`].
    Auto,
    /// The `csv` crate's reader, which understands quoted cells.
    Quoted,
    /// Lines split at `\n`, cells at the delimiter: for bodies without quotes, read in `pieces`
    /// pieces (one per thread where there are threads). Falls back to [`Splitter::Quoted`] on
    /// a body it cannot read.
    Plain { pieces: usize },
}

/// Reads a CSV or TSV log. The delimiter is detected from the header line. `progress` hears how
/// far through the text the reader is, every [`PROGRESS_ROWS`] rows.
pub fn parse(
    name: &str,
    text: &str,
    format: Format,
    options: &IngestOptions,
    progress: &mut dyn FnMut(f64),
) -> Loaded {
    parse_with(name, text, format, options, Splitter::Auto, progress)
}

/// [`parse`] with the rows read the way `splitter` says.
#[doc(hidden)]
pub fn parse_with(
    name: &str,
    text: &str,
    format: Format,
    options: &IngestOptions,
    splitter: Splitter,
    progress: &mut dyn FnMut(f64),
) -> Loaded {
    let mut loaded = Loaded::default();
    let Some(head) = read_head(&mut loaded, name, text, format, options) else {
        return loaded;
    };
    // The rows: from where the header ended, on the line the reader counted to there (in a
    // CRLF file that is the header's own `\n`, which the splitters read as an empty line).
    let body = text.as_bytes().get(head.body_start()..).unwrap_or_default();
    let Head {
        layout,
        delimiter,
        mut reader,
        record,
        start,
    } = head;
    let plain = matches!(splitter, Splitter::Auto | Splitter::Plain { .. }) && is_plain(body);
    let total = text.len().max(1) as f64;
    let at = start.byte() as f64;
    let mut pieces = if plain {
        let pieces = match splitter {
            Splitter::Plain { pieces } => pieces.max(1),
            _ if body.len() >= PARALLEL_FROM => crate::parallel::threads(),
            _ => 1,
        };
        let mut body_progress = |f: f64| progress((at + f * body.len() as f64) / total);
        read_plain(
            &layout,
            body,
            start.line(),
            delimiter,
            pieces,
            &mut body_progress,
        )
    } else {
        let mut piece = Piece::new(&layout, count_lines(text.as_bytes()) + 1);
        read_quoted(&layout, &mut piece, text, &mut reader, record, &mut |f| {
            progress(f / total)
        });
        vec![piece]
    }
    .into_iter();
    let Some(mut all) = pieces.next() else {
        return loaded;
    };
    for piece in pieces {
        all.append(piece);
    }
    all.finish(loaded, &layout)
}

/// The rows of one part of a file's body, read apart from the others (on another thread that
/// shares no memory with them, such as a second Web Worker). `table.labels` holds the file's
/// label columns for these rows. Lines are numbered as in the whole file, except in a part
/// [`second_slice`] read: there from 1, until [`Part::shift_lines`] moves them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Part {
    pub table: crate::table::RequestTable,
    /// The part's first [`MAX_LISTED_ERRORS`] bad rows.
    pub errors: Vec<super::RowError>,
    /// All the part's bad rows, listed or not.
    pub error_count: u64,
}

impl Part {
    /// Adds `by` to the line of every row and of every bad row (a line past `u32::MAX` in the
    /// table stays there, as the readers leave it).
    pub fn shift_lines(&mut self, by: u64) {
        self.table.line.shift(by);
        for error in &mut self.errors {
            if let Some(line) = &mut error.at.line {
                *line += by;
            }
        }
    }
}

/// The first reader's part of a file read in two slices (see [`crate::ingest::Slices`]):
/// `text` is the file up to the cut, its header and the first rows. Returns the part, its
/// lines numbered as in the file, the line the second part starts on, and the length of the
/// text's header (the lines before the rows, all that [`join_slices`] needs). `None` when the
/// part cannot be read alone: a header that cannot be read, holds a quote or ends past
/// `header_until`, a body with a quote or a carriage return that does not end a line.
pub(crate) fn first_slice(
    name: &str,
    text: &str,
    header_until: usize,
    format: Format,
    options: &IngestOptions,
    progress: &mut dyn FnMut(f64),
) -> Option<(Part, u64, usize)> {
    let head = read_plain_head(name, text, header_until, format, options)?;
    let body = text.as_bytes().get(head.body_start()..)?;
    if !is_plain(body) {
        return None;
    }
    let first_line = head.start.line();
    let lines = count_lines(body);
    // Room for the second part's rows too, about as many: they are appended to these without
    // the columns moving (room not written to costs no memory).
    let rows = 2 * lines + 1024;
    let piece = read_piece(
        &head.layout,
        (body, first_line, rows),
        head.delimiter,
        progress,
    );
    Some((
        piece.into_part(),
        first_line + lines as u64,
        head.body_start(),
    ))
}

/// The second reader's part of a file read in two slices (see [`crate::ingest::Slices`]):
/// `body`, the file's bytes after the cut to its end, read with the header of `head_text`
/// (the file's first lines), lines numbered from 1. `None` when the part cannot be read
/// alone, as for [`first_slice`], or `body` is not valid UTF-8.
pub(crate) fn second_slice(
    name: &str,
    head_text: &str,
    header_until: usize,
    body: &[u8],
    format: Format,
    options: &IngestOptions,
    progress: &mut dyn FnMut(f64),
) -> Option<Part> {
    let head = read_plain_head(name, head_text, header_until, format, options)?;
    if std::str::from_utf8(body).is_err() || !is_plain(body) {
        return None;
    }
    let rows = count_lines(body) + 1;
    let piece = read_piece(&head.layout, (body, 1, rows), head.delimiter, progress);
    Some(piece.into_part())
}

/// The file whose header is `header_text` (the lines before the rows, as [`first_slice`]
/// measured them), with its rows from the two parts [`first_slice`] and [`second_slice`] read
/// (the second's lines already shifted): what [`parse`] gives for the whole file, bit for bit.
/// `None` when a part was not read under this header (other label columns).
pub(crate) fn join_slices(
    name: &str,
    header_text: &str,
    format: Format,
    options: &IngestOptions,
    first: Part,
    second: Part,
) -> Option<Loaded> {
    let mut loaded = Loaded::default();
    let head = read_head(&mut loaded, name, header_text, format, options)?;
    let mut first = Piece::from_part(&head.layout, first)?;
    first.append(Piece::from_part(&head.layout, second)?);
    Some(first.finish(loaded, &head.layout))
}

/// What [`read_head`] read: the header's layout, the delimiter, and where the rows start (the
/// reader and its record, for the `csv` crate to read on from there).
struct Head<'a> {
    layout: Layout<'a>,
    delimiter: u8,
    reader: csv::Reader<&'a [u8]>,
    record: csv::ByteRecord,
    /// The reader's position after the header.
    start: csv::Position,
}

impl Head<'_> {
    fn body_start(&self) -> usize {
        usize::try_from(self.start.byte()).unwrap_or(usize::MAX)
    }
}

/// Reads the header of a CSV or TSV text (the delimiter detected from it). `None`, with
/// `loaded.fatal` set, when there is none or it names no latency column.
fn read_head<'a>(
    loaded: &mut Loaded,
    name: &'a str,
    text: &'a str,
    format: Format,
    options: &IngestOptions,
) -> Option<Head<'a>> {
    let delimiter = detect_delimiter(text);
    if format == Format::Tsv && delimiter != b'\t' {
        loaded
            .warnings
            .push("read as TSV, but the header has no tab; using the delimiter it has".to_string());
    }
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .flexible(true)
        .has_headers(false)
        .from_reader(text.as_bytes());
    // One record, reused for every row (`byte_records()` would allocate one per row).
    let mut record = csv::ByteRecord::new();
    let header = match reader.read_byte_record(&mut record) {
        Ok(true) => record.clone(),
        Err(e) => {
            loaded.fatal = Some(format!("{name}: the header line could not be read: {e}"));
            return None;
        }
        Ok(false) => {
            loaded.fatal = Some(format!(
                "{name}: the file is empty: there is nothing to read"
            ));
            return None;
        }
    };
    let headers: Vec<String> = header
        .iter()
        .map(|h| String::from_utf8_lossy(h).trim().to_string())
        .collect();
    let header_line = header.position().map_or(1, |p| record_line(text, p));
    let layout = read_header(loaded, name, headers, header_line, options)?;
    let start = reader.position().clone();
    Some(Head {
        layout,
        delimiter,
        reader,
        record,
        start,
    })
}

/// [`read_head`] for a reader of a slice of the file: `None` also when the header holds a
/// quote (its end might then lie past the slice) or ends past `header_until` (where the
/// other reader's bytes start).
fn read_plain_head<'a>(
    name: &'a str,
    text: &'a str,
    header_until: usize,
    format: Format,
    options: &IngestOptions,
) -> Option<Head<'a>> {
    let head = read_head(&mut Loaded::default(), name, text, format, options)?;
    let header = text.as_bytes().get(..head.body_start())?;
    (header.len() <= header_until && !header.contains(&b'"')).then_some(head)
}

/// The header's columns, resolved to fields; warnings for what the user should know about
/// them; `None` (with `loaded.fatal` set) when no latency column is there.
fn read_header<'a>(
    loaded: &mut Loaded,
    name: &'a str,
    headers: Vec<String>,
    header_line: u64,
    options: &IngestOptions,
) -> Option<Layout<'a>> {
    // Resolve every header; the first column wins when two name the same field.
    let mut columns: Vec<Option<Resolved>> = Vec::with_capacity(headers.len());
    for (k, h) in headers.iter().enumerate() {
        let resolved = fields::resolve(h, &options.mapping, options.default_time_unit);
        match resolved {
            Some(r)
                if r.field != Field::Label
                    && r.field != Field::Ignore
                    && columns.iter().flatten().any(|c| c.field == r.field) =>
            {
                loaded.warnings.push(format!(
                    "{name}:{header_line}:{}: column {} names the same field ({}) as an earlier column; the earlier one is used",
                    k + 1,
                    fields::quoted(h),
                    r.field.name()
                ));
                columns.push(None);
            }
            Some(r)
                if r.field == Field::Label
                    && columns.iter().flatten().any(|c| c.name == r.name) =>
            {
                loaded.warnings.push(format!(
                    "{name}:{header_line}:{}: duplicate column {}; the earlier one is used",
                    k + 1,
                    fields::quoted(h)
                ));
                columns.push(None);
            }
            Some(r) => columns.push(Some(r)),
            None => {
                if !h.is_empty() {
                    loaded.unmapped_columns.push(h.clone());
                }
                columns.push(None);
            }
        }
    }
    let has = |f: Field| columns.iter().flatten().any(|c| c.field == f);
    if !loaded.unmapped_columns.is_empty() {
        loaded.warnings.push(format!(
            "{name}: ignored columns the tool does not know: {} (map them in the column-mapping step if they matter)",
            header_list(loaded.unmapped_columns.iter())
        ));
    }
    if !has(Field::Ttft) && !has(Field::E2e) {
        loaded.fatal = Some(format!(
            "{name}:{header_line}: no latency column: the header has {}; expected a TTFT or E2E column such as ttft_ms, time_to_first_token, e2e_ms or latency_ms (or map one in the column-mapping step)",
            header_list(headers.iter())
        ));
        return None;
    }
    for (field, what) in [
        (Field::Ttft, "no TTFT column (ttft_ms, time_to_first_token ...): TTFT and TPOT cannot be computed"),
        (Field::E2e, "no E2E column (e2e_ms, latency_ms ...): E2E and TPOT cannot be computed"),
        (Field::OutputTokens, "no output token column (output_tokens, completion_tokens ...): TPOT cannot be computed"),
    ] {
        if !has(field) {
            loaded.warnings.push(format!("{name}:{header_line}: {what}"));
        }
    }
    for c in columns.iter().flatten() {
        if c.field.is_duration() && !c.unit_stated {
            loaded.warnings.push(format!(
                "{name}: column \"{}\" has no unit in its name; read as {} (change the default unit if that is wrong)",
                c.name,
                c.unit.name()
            ));
        }
    }
    let has_status = has(Field::Status);
    // Label columns are filled by column position, not through `Row::labels` (two strings and a
    // look-up by name per cell), and join the table at the end, in header order, as
    // `RequestTable::push` would give them.
    let labels = columns
        .iter()
        .enumerate()
        .filter_map(|(k, c)| {
            let c = c.as_ref().filter(|c| c.field == Field::Label)?;
            Some((k, c.name.clone()))
        })
        .collect();
    let cells = columns
        .iter()
        .enumerate()
        .filter_map(|(k, c)| Some((k, c.clone().filter(|c| c.field != Field::Label)?)))
        .collect();
    let takes = columns.iter().map(|c| Take::of(c.as_ref())).collect();
    Some(Layout {
        name,
        headers,
        columns,
        cells,
        has_status,
        labels,
        takes,
    })
}

/// Cell `k` of a row: its range in `cells` of the row's `bytes` (empty past the last cell).
/// Forced inline in the wasm: built for size, it kept the closure this replaces as a call per
/// cell. (Natively the compiler decides, as for the other helpers forced inline in the wasm.)
#[cfg_attr(target_arch = "wasm32", inline(always))]
fn cell_at<'b>(bytes: &'b [u8], cells: &[Range<usize>], k: usize) -> &'b [u8] {
    match cells.get(k) {
        Some(r) => bytes.get(r.start..r.end).unwrap_or_default(),
        None => &[],
    }
}

/// What the header says, shared by every piece of the body.
struct Layout<'a> {
    name: &'a str,
    headers: Vec<String>,
    /// The field of each column, `None` for columns not read.
    columns: Vec<Option<Resolved>>,
    /// Position and field of each column read into a row's fields (not labels).
    cells: Vec<(usize, Resolved)>,
    has_status: bool,
    /// Position and name of each label column.
    labels: Vec<(usize, String)>,
    /// How [`quick_row`] takes each column, by position.
    takes: Vec<Take>,
}

/// How [`quick_row`] takes one column of a row.
enum Take {
    /// A column not read: unknown, ignored, or naming a field an earlier column names.
    Skip,
    /// A token count (input or output), read while the cell's end is found.
    Count(Field),
    /// A duration in the column's unit (TTFT, E2E, queue), read while the cell's end is found.
    Duration(Field, TimeUnit),
    /// A label column, the next of the layout's labels.
    Label,
    /// The status or the error text: an empty cell (or `ok` for the status, in either case) is
    /// told at once, any other as [`Take::Other`].
    Usual(Resolved),
    /// Any other field, read as [`Piece::add_row`] reads it.
    Other(Resolved),
}

impl Take {
    fn of(column: Option<&Resolved>) -> Take {
        let Some(c) = column else {
            return Take::Skip;
        };
        match c.field {
            Field::InputTokens | Field::OutputTokens => Take::Count(c.field),
            Field::Ttft | Field::E2e | Field::Queue => Take::Duration(c.field, c.unit),
            Field::Label => Take::Label,
            Field::Ignore => Take::Skip,
            Field::Status | Field::Error => Take::Usual(c.clone()),
            _ => Take::Other(c.clone()),
        }
    }
}

/// The rows of one piece of the body, as read so far.
struct Piece {
    /// The requests (without label columns) and the bad rows.
    loaded: Loaded,
    /// One per label column of the layout.
    labels: Vec<(LabelColumn, LabelIndex)>,
}

impl Piece {
    /// An empty piece with room for `rows` rows (at most: a count of line ends).
    fn new(layout: &Layout, rows: usize) -> Piece {
        let mut loaded = Loaded::default();
        loaded.table.reserve(rows);
        let labels = layout
            .labels
            .iter()
            .map(|(_, name)| {
                let mut column = LabelColumn::new(name);
                column.codes.reserve(rows);
                (column, LabelIndex::default())
            })
            .collect();
        Piece { loaded, labels }
    }

    /// This piece as a [`Part`] for another reader.
    fn into_part(self) -> Part {
        let Piece { loaded, labels } = self;
        let mut table = loaded.table;
        table.labels = labels.into_iter().map(|(column, _)| column).collect();
        Part {
            table,
            errors: loaded.errors,
            error_count: loaded.error_count,
        }
    }

    /// True when `part` was read with this layout's label columns.
    fn fits(layout: &Layout, part: &Part) -> bool {
        let names = part.table.labels.iter().map(|c| c.name.as_str());
        names.eq(layout.labels.iter().map(|(_, name)| name.as_str()))
    }

    /// The piece another reader read as `part`; `None` when its label columns are not the
    /// layout's (it was not read with this header).
    fn from_part(layout: &Layout, part: Part) -> Option<Piece> {
        if !Piece::fits(layout, &part) {
            return None;
        }
        let Part {
            mut table,
            errors,
            error_count,
        } = part;
        let labels = std::mem::take(&mut table.labels)
            .into_iter()
            .map(|column| (column, LabelIndex::default()))
            .collect();
        let loaded = Loaded {
            table,
            errors,
            error_count,
            ..Loaded::default()
        };
        Some(Piece { loaded, labels })
    }

    /// Reads one row: `cells` are ranges of `bytes`, the row's text as the splitter gave it.
    fn add_row(&mut self, layout: &Layout, line: u64, bytes: &[u8], cells: &[Range<usize>]) {
        let name = layout.name;
        let at = |column: Option<u64>, field: Option<String>| Location {
            file: name.to_string(),
            line: Some(line),
            column,
            field,
            json_path: None,
        };
        let width = layout.headers.len();
        if cells.len() != width {
            let what = if cells.len() < width {
                "is short"
            } else {
                "is long"
            };
            // A quote that is never closed takes the following lines into one cell (with the
            // file's last line end, which is not a line of its own).
            let swallowed: u64 = (0..cells.len())
                .map(|k| {
                    let cell = cell_at(bytes, cells, k);
                    let end = cell
                        .iter()
                        .rposition(|&b| b != b'\n' && b != b'\r')
                        .map_or(0, |p| p + 1);
                    let inner = cell.get(..end).unwrap_or(cell);
                    inner.iter().filter(|&&b| b == b'\n').count() as u64
                })
                .sum();
            let hint = if swallowed > 0 {
                format!(
                    "; a quoted cell opened on this line runs on to line {} (an unbalanced quote?)",
                    line + swallowed
                )
            } else {
                String::new()
            };
            self.loaded.reject(
                at(None, None),
                format!(
                    "the row {what}: it has {} fields, the header has {width}{hint}",
                    cells.len()
                ),
            );
            return;
        }
        let mut row = Row::default();
        for (k, column) in &layout.cells {
            if let Err(reason) = fields::set_cell(&mut row, column, cell_at(bytes, cells, *k)) {
                self.loaded.reject(
                    at(Some(*k as u64 + 1), layout.headers.get(*k).cloned()),
                    reason,
                );
                return;
            }
        }
        fields::finish_row(&mut row, layout.has_status);
        if let Err(reason) = fields::check_row(&row) {
            self.loaded.reject(at(None, None), reason);
            return;
        }
        for ((k, _), (column, index)) in layout.labels.iter().zip(&mut self.labels) {
            column.push_cell(cell_at(bytes, cells, *k), index);
        }
        self.keep(row, line, name);
    }

    /// Adds a checked row read from line `line` of the file `name` (its labels are added
    /// already).
    #[cfg_attr(target_arch = "wasm32", inline(always))]
    fn keep(&mut self, row: Row, line: u64, name: &str) {
        let source_line = u32::try_from(line).unwrap_or(u32::MAX);
        // Every row of a piece is from source 0, named by its first row without an id.
        let table = &mut self.loaded.table;
        if table.source_names.first().is_some_and(Option::is_some) {
            table.push_in_named_source(row, 0, source_line);
        } else {
            table.push(row, 0, source_line, name);
        }
    }

    /// Adds the rows of `next`, the piece of the body that follows this one.
    fn append(&mut self, next: Piece) {
        let Piece { loaded, labels } = next;
        for ((mine, _), (theirs, _)) in self.labels.iter_mut().zip(labels) {
            mine.append(theirs);
        }
        self.loaded.table.append(loaded.table, 0);
        let room = MAX_LISTED_ERRORS.saturating_sub(self.loaded.errors.len());
        self.loaded
            .errors
            .extend(loaded.errors.into_iter().take(room));
        self.loaded.error_count += loaded.error_count;
    }

    /// The file's result: this piece's requests and bad rows, with what the header said.
    fn finish(mut self, mut loaded: Loaded, layout: &Layout) -> Loaded {
        let name = layout.name;
        loaded.table = std::mem::take(&mut self.loaded.table);
        loaded.errors = std::mem::take(&mut self.loaded.errors);
        loaded.error_count = self.loaded.error_count;
        if loaded.table.is_empty() && loaded.error_count == 0 {
            // Not an empty table the app would show as "loaded 0 requests" in place of its data.
            loaded.fatal = Some(format!(
                "{name}: the file has a header line but no rows under it: there is nothing to read"
            ));
            return loaded;
        }
        if !loaded.table.is_empty() {
            loaded.table.labels = self.labels.into_iter().map(|(column, _)| column).collect();
        }
        // The first values of each latency column (requests without one hold NaN).
        let sample = |column: &[f64]| -> Vec<f64> {
            column
                .iter()
                .copied()
                .filter(|v| !v.is_nan())
                .take(SAMPLE)
                .collect()
        };
        for (field, mut sample) in [
            (Field::Ttft, sample(&loaded.table.ttft_ms)),
            (Field::E2e, sample(&loaded.table.e2e_ms)),
        ] {
            if let Some((k, c)) = layout
                .columns
                .iter()
                .enumerate()
                .find_map(|(k, c)| Some((k, c.as_ref().filter(|c| c.field == field)?)))
            {
                let header = layout.headers.get(k).unwrap_or(&c.name);
                if let Some(w) = fields::seconds_in_ms_warning(header, &mut sample, c.unit) {
                    loaded.warnings.push(format!("{name}: {w}"));
                }
            }
        }
        loaded
    }
}

/// The top bit of every byte of `word` that equals `byte`, and no other bit.
///
/// With `x = word ^ (byte in every byte)`, a byte of `x` is zero where `word` holds `byte`.
/// `(x & 0x7f..7f) + 0x7f..7f` sets a byte's top bit when its low seven bits are not all zero
/// (the sum of two 7-bit values cannot carry into the next byte), `| x` when its top bit is
/// set: what is left unset is exactly the zero bytes.
#[inline(always)]
fn bytes_equal(word: u64, byte: u8) -> u64 {
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let x = word ^ (0x0101_0101_0101_0101 * u64::from(byte));
    !(((x & LOW) + LOW) | x) & !LOW
}

/// True when the plain splitter reads `body` exactly as the `csv` crate would: no quote, and
/// every carriage return ends a line (`\r\n`, or the very end). Checked [`SCAN_CALL`] bytes
/// per call by [`plain_block`].
fn is_plain(body: &[u8]) -> bool {
    body.chunks(SCAN_CALL).enumerate().all(|(k, block)| {
        // The byte after the block, which a `\r` at its end may stand before.
        let next = body.get((k + 1) * SCAN_CALL).copied();
        plain_block(block, next)
    })
}

/// Whether `block` (followed by the byte `next`, if any) has no quote and no `\r` but before
/// `\n` or at the very end. Blocks of 64 bytes without either byte, the usual case, are passed
/// over in one test each, which native compilers vectorise.
#[cfg(not(target_arch = "wasm32"))]
#[inline(never)]
fn plain_block(block: &[u8], next: Option<u8>) -> bool {
    block.chunks(64).enumerate().all(|(k, chunk)| {
        let special = chunk.iter().fold(0u8, |any, &b| {
            any | u8::from(b == b'"') | u8::from(b == b'\r')
        });
        special == 0 || plain_bytes(block, k * 64, k * 64 + chunk.len(), next)
    })
}

/// [`plain_block`] for WebAssembly, which has no vectors here: eight bytes at a time.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
#[inline(never)]
fn plain_block_words(block: &[u8], next: Option<u8>) -> bool {
    let mut at = 0;
    while let Some(word) = word_at(block, at) {
        if bytes_equal(word, b'"') | bytes_equal(word, b'\r') != 0
            && !plain_bytes(block, at, at + 8, next)
        {
            return false;
        }
        at += 8;
    }
    plain_bytes(block, at, block.len(), next)
}

#[cfg(target_arch = "wasm32")]
use plain_block_words as plain_block;

/// Bytes `from..to` of `block`: no quote, and a `\r` only before `\n` (`next` after the
/// block's last byte) or at the very end.
fn plain_bytes(block: &[u8], from: usize, to: usize, next: Option<u8>) -> bool {
    (from..to).all(|i| match block.get(i) {
        Some(b'"') => false,
        Some(b'\r') => matches!(block.get(i + 1).copied().or(next), None | Some(b'\n')),
        _ => true,
    })
}

/// The number of `\n` in `bytes`, [`SCAN_CALL`] bytes per call.
fn count_lines(bytes: &[u8]) -> usize {
    bytes.chunks(SCAN_CALL).map(count_line_ends).sum()
}

/// The `\n` of one block, counted in runs of 255 bytes into a byte-wide sum, which native
/// compilers vectorise far better than a `usize` count.
#[cfg(not(target_arch = "wasm32"))]
#[inline(never)]
fn count_line_ends(bytes: &[u8]) -> usize {
    bytes
        .chunks(255)
        .map(|run| usize::from(run.iter().map(|&b| u8::from(b == b'\n')).sum::<u8>()))
        .sum()
}

/// [`count_line_ends`] for WebAssembly: eight bytes at a time.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
#[inline(never)]
fn count_line_ends_words(bytes: &[u8]) -> usize {
    let mut n = 0;
    let mut at = 0;
    while let Some(word) = word_at(bytes, at) {
        n += bytes_equal(word, b'\n').count_ones() as usize;
        at += 8;
    }
    let rest = bytes.get(at..).unwrap_or_default();
    n + rest.iter().filter(|&&b| b == b'\n').count()
}

#[cfg(target_arch = "wasm32")]
use count_line_ends_words as count_line_ends;

/// The line a record starts on. The `csv` crate's position for a record is where it started
/// looking for it: before the blank lines it skipped and, in a CRLF file, on the `\n` that
/// ended the line before. The record's first byte is the first that is neither.
fn record_line(text: &str, at: &csv::Position) -> u64 {
    let from = usize::try_from(at.byte()).unwrap_or(usize::MAX);
    let skipped = text
        .as_bytes()
        .get(from..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&b| b == b'\n' || b == b'\r')
        .filter(|&&b| b == b'\n')
        .count();
    at.line() + skipped as u64
}

/// Reads the rows with the `csv` crate (quoted cells, cells across lines).
fn read_quoted(
    layout: &Layout,
    piece: &mut Piece,
    text: &str,
    reader: &mut csv::Reader<&[u8]>,
    mut record: csv::ByteRecord,
    progress: &mut dyn FnMut(f64),
) {
    let mut cells: Vec<Range<usize>> = Vec::with_capacity(layout.headers.len());
    while read_records(layout, piece, text, reader, &mut record, &mut cells) {
        progress(reader.position().byte() as f64);
    }
}

/// Reads up to [`PROGRESS_ROWS`] records (a call each, as in [`read_lines`]); false at the end.
#[inline(never)]
fn read_records(
    layout: &Layout,
    piece: &mut Piece,
    text: &str,
    reader: &mut csv::Reader<&[u8]>,
    record: &mut csv::ByteRecord,
    cells: &mut Vec<Range<usize>>,
) -> bool {
    for _ in 0..PROGRESS_ROWS {
        match reader.read_byte_record(record) {
            Ok(true) => {}
            Ok(false) => return false,
            Err(e) => {
                let line = e.position().map(|p| record_line(text, p));
                piece.loaded.reject(
                    Location {
                        file: layout.name.to_string(),
                        line,
                        ..Location::default()
                    },
                    format!("unreadable row: {e}"),
                );
                continue;
            }
        };
        let line = record.position().map_or(0, |p| record_line(text, p));
        cells.clear();
        cells.extend((0..record.len()).filter_map(|k| record.range(k)));
        piece.add_row(layout, line, record.as_slice(), cells);
    }
    true
}

/// A piece of a body to read: its bytes, the line it starts on, the rows to make room for.
type Job<'b> = (&'b [u8], u64, usize);

/// Reads a body without quotes (see [`is_plain`]) that starts on line `first_line`, cut into
/// `pieces` pieces at line ends, each read on a thread of its own where there are threads.
/// `progress` hears the fraction of the body read, from the first piece only when there are
/// several.
fn read_plain(
    layout: &Layout,
    body: &[u8],
    first_line: u64,
    delimiter: u8,
    pieces: usize,
    progress: &mut dyn FnMut(f64),
) -> Vec<Piece> {
    let pieces = pieces.max(1);
    // Cut after the first `\n` at or past each even share of the bytes.
    let mut cuts = vec![0];
    for k in 1..pieces {
        let from = (body.len() * k / pieces).max(cuts.last().copied().unwrap_or(0));
        let cut = body
            .get(from..)
            .unwrap_or_default()
            .iter()
            .position(|&b| b == b'\n')
            .map_or(body.len(), |p| from + p + 1);
        cuts.push(cut);
    }
    cuts.push(body.len());
    let mut jobs = Vec::new();
    let mut line = first_line;
    for pair in cuts.windows(2) {
        let &[from, to] = pair else { continue };
        let part = body.get(from..to).unwrap_or_default();
        let lines = count_lines(part);
        jobs.push((part, line, lines + 1));
        line += lines as u64;
    }
    // The first piece has room for every row: the others are appended to it without its
    // columns moving (room not written to costs no memory).
    let all_rows = (line - first_line) as usize + jobs.len();
    if let Some((.., rows)) = jobs.first_mut() {
        *rows = all_rows;
    }
    let mut jobs = jobs.into_iter();
    let Some(first) = jobs.next() else {
        return Vec::new();
    };
    let rest: Vec<Job> = jobs.collect();
    if rest.is_empty() {
        return vec![read_piece(layout, first, delimiter, progress)];
    }
    let share = first.0.len() as f64 / body.len().max(1) as f64;
    let (rest, first) = crate::parallel::join(
        || crate::parallel::map(rest, |job| read_piece(layout, job, delimiter, &mut |_| {})),
        || read_piece(layout, first, delimiter, &mut |f| progress(f * share)),
    );
    std::iter::once(first).chain(rest).collect()
}

/// Reads the rows of one piece of a body without quotes, [`PROGRESS_ROWS`] rows per call: for
/// the progress reports, and for the browser (see `crate::parallel` on long loops).
fn read_piece(
    layout: &Layout,
    (part, mut line, rows): Job,
    delimiter: u8,
    progress: &mut dyn FnMut(f64),
) -> Piece {
    let mut piece = Piece::new(layout, rows);
    let mut from = 0;
    while from < part.len() {
        (from, line) = read_lines(layout, &mut piece, part, from, line, delimiter);
        if from < part.len() {
            progress(from as f64 / part.len() as f64);
        }
    }
    piece
}

/// Reads up to [`PROGRESS_ROWS`] rows of `part` from byte `from` on, the first on line `line`:
/// `\n` ends a line (a `\r` before it is dropped), the delimiter ends a cell, and blank lines
/// are skipped, as the `csv` crate does. Returns where it stopped and the line there.
///
/// Each row is first tried by [`quick_row`], which reads the usual row in one pass; the rows it
/// declines are read by [`read_row`], cells first and then their values.
#[inline(never)]
fn read_lines(
    layout: &Layout,
    piece: &mut Piece,
    part: &[u8],
    from: usize,
    mut line: u64,
    delimiter: u8,
) -> (usize, u64) {
    let mut cells: Vec<Range<usize>> = Vec::with_capacity(layout.headers.len());
    // `quick_row` reads the bytes of numbers and statuses itself: none can be a delimiter.
    let quick = matches!(delimiter, b',' | b'\t' | b';' | b'|');
    let mut at = from;
    for _ in 0..PROGRESS_ROWS {
        if at >= part.len() {
            break;
        }
        at = match quick
            .then(|| quick_row(layout, piece, part, at, line, delimiter, &mut cells))
            .flatten()
        {
            Some(next) => next,
            None => read_row(layout, piece, part, at, line, delimiter, &mut cells),
        };
        line += 1;
    }
    (at.min(part.len()), line)
}

/// Reads the row of `part` that starts at byte `at` (line `line`): its cells, then
/// [`end_row`]. Returns where the next row starts.
#[cfg_attr(target_arch = "wasm32", inline(always))]
fn read_row(
    layout: &Layout,
    piece: &mut Piece,
    part: &[u8],
    at: usize,
    line: u64,
    delimiter: u8,
    cells: &mut Vec<Range<usize>>,
) -> usize {
    cells.clear();
    let mut cell_start = at;
    while let Some(k) = next_stop(part, cell_start, delimiter) {
        cells.push(cell_start..k);
        cell_start = k + 1;
        if matches!(part.get(k), Some(b'\n')) {
            end_row(layout, piece, line, part, at..k, cells);
            return k + 1;
        }
    }
    cells.push(cell_start..part.len());
    end_row(layout, piece, line, part, at..part.len(), cells);
    part.len()
}

/// Reads the row of `part` that starts at byte `at` (line `line`) in one pass, when it is a
/// usual row: as many cells as the header has, with counts written as plain digits, durations
/// as plain decimals ([`fields::plain_number_at`]), each number read while its end is found,
/// and a row the checks accept. Returns where the next row starts. Declines (`None`, having
/// added nothing to `piece`) every other row: blank, short or long, a number written another
/// way, a value or a row the checks refuse. [`read_row`] then reads it, with the messages for
/// what is wrong, so a row read here is what `read_row` would have made of it (tested by
/// `quick_rows_are_what_read_row_makes_of_them_and_the_rest_is_declined`, and with the whole
/// reader by the splitters' comparisons).
///
/// `labels` is room for the ranges of the row's label cells.
#[cfg_attr(target_arch = "wasm32", inline(always))]
fn quick_row(
    layout: &Layout,
    piece: &mut Piece,
    part: &[u8],
    at: usize,
    line: u64,
    delimiter: u8,
    labels: &mut Vec<Range<usize>>,
) -> Option<usize> {
    if matches!(part.get(at), Some(b'\n' | b'\r')) {
        return None; // a blank line
    }
    let last = layout.takes.len().checked_sub(1)?;
    // Where the cell from `from` on ends: at the next delimiter or line end, before the `\r`
    // of a CRLF after the row's last cell.
    let cell_end = |from: usize, last: bool| {
        let stop = next_stop(part, from, delimiter).unwrap_or(part.len());
        let crlf = last && stop > from && matches!(part.get(stop - 1), Some(b'\r'));
        stop - usize::from(crlf)
    };
    let mut row = Row::default();
    labels.clear();
    let mut from = at;
    for (k, take) in layout.takes.iter().enumerate() {
        // Where the cell ends: the delimiter after it, or the line end after the last.
        let end = match take {
            Take::Count(field) => {
                let (value, end) = fields::digits_at(part, from)?;
                let value = value.filter(|&v| v <= u64::from(crate::table::MAX_COUNT));
                if value.is_none() && end > from {
                    return None; // past what the table holds: `read_row` says so
                }
                set_number(&mut row, *field, value.map(fields::small_f64));
                end
            }
            Take::Duration(field, unit) => {
                let (value, end) = fields::plain_number_at(part, from)?;
                let ms = match value {
                    Some(v) => Some(fields::duration_ms(v, *unit).ok()?),
                    None => None,
                };
                set_number(&mut row, *field, ms);
                end
            }
            Take::Usual(r) => {
                let ends = |at: usize| match part.get(at) {
                    None => true,
                    Some(&b) => b == delimiter || b == b'\n' || b == b'\r',
                };
                let ok = matches!(part.get(from..from + 2), Some([b'o' | b'O', b'k' | b'K']));
                // An empty cell (no error text; a completed request) or the status `ok`.
                let usual = if ends(from) {
                    Some(from)
                } else if r.field == Field::Status && ok && ends(from + 2) {
                    Some(from + 2)
                } else {
                    None
                };
                match usual {
                    Some(end) => {
                        if r.field == Field::Status {
                            row.status = Status::Ok;
                        }
                        end
                    }
                    None => {
                        let end = cell_end(from, k == last);
                        fields::set_cell(&mut row, r, part.get(from..end)?).ok()?;
                        end
                    }
                }
            }
            Take::Skip | Take::Label | Take::Other(_) => {
                let end = cell_end(from, k == last);
                match take {
                    Take::Label => labels.push(from..end),
                    Take::Other(r) => fields::set_cell(&mut row, r, part.get(from..end)?).ok()?,
                    _ => {}
                }
                end
            }
        };
        from = match part.get(end) {
            Some(&b) if k < last && b == delimiter => end + 1,
            _ if k < last => return None,
            None => end,
            Some(b'\n') => end + 1,
            Some(b'\r') => match part.get(end + 1) {
                None => end + 1,
                Some(b'\n') => end + 2,
                Some(_) => return None,
            },
            Some(_) => return None,
        };
    }
    fields::finish_row(&mut row, layout.has_status);
    fields::check_row(&row).ok()?;
    for (cell, (column, index)) in labels.iter().zip(&mut piece.labels) {
        column.push_cell(part.get(cell.clone()).unwrap_or_default(), index);
    }
    piece.keep(row, line, layout.name);
    Some(from)
}

/// Writes a count or a duration read by [`quick_row`] into its field of `row`.
#[cfg_attr(target_arch = "wasm32", inline(always))]
fn set_number(row: &mut Row, field: Field, value: Option<f64>) {
    match field {
        Field::InputTokens => row.input_tokens = value,
        Field::OutputTokens => row.output_tokens = value,
        Field::Ttft => row.ttft_ms = value,
        Field::E2e => row.e2e_ms = value,
        _ => row.queue_ms = value,
    }
}

/// The position of the first `delimiter` or `\n` in `bytes` at or after `from`.
///
/// Eight bytes are tested at a time (a cell of a log is a few bytes long, so most cells end in
/// the first word looked at). For a word `w` and a byte `b`, `x = w ^ (b in every byte)` has a
/// zero byte where `w` holds `b`, and `(x - 0x01..01) & !x & 0x80..80` sets the top bit of the
/// lowest such byte (the borrow can mark bytes above it too, never below; [`bytes_equal`] is
/// exact, at two more operations), so the lowest set bit of either mask is the first stop.
#[inline]
fn next_stop(bytes: &[u8], from: usize, delimiter: u8) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let (delimiters, line_ends) = (ONES * u64::from(delimiter), ONES * u64::from(b'\n'));
    let mut at = from;
    while let Some(w) = word_at(bytes, at) {
        let stops = zero_byte(w ^ delimiters) | zero_byte(w ^ line_ends);
        if stops != 0 {
            return Some(at + (stops.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let rest = bytes.get(at..)?;
    rest.iter()
        .position(|&b| b == delimiter || b == b'\n')
        .map(|p| at + p)
}

/// Hands the line `row` of `part` to `piece`, its cells being `cells` (ranges of `part`). A
/// `\r` that ended the line is dropped; a blank line is skipped.
#[cfg_attr(target_arch = "wasm32", inline(always))]
fn end_row(
    layout: &Layout,
    piece: &mut Piece,
    line: u64,
    part: &[u8],
    row: Range<usize>,
    cells: &mut Vec<Range<usize>>,
) {
    let crlf = row.end > row.start && matches!(part.get(row.end - 1), Some(b'\r'));
    let end = row.end - usize::from(crlf);
    if let Some(last) = cells.last_mut() {
        last.end = last.end.min(end);
    }
    if end > row.start {
        piece.add_row(layout, line, part, cells);
    }
    cells.clear();
}

#[cfg(test)]
mod tests {
    use super::{parse_with, quick_row, read_head, read_row, Piece, Splitter};
    use crate::ingest::Format;
    use crate::ingest::{parse, IngestOptions};
    use crate::ingest::{parse_in_slices, Loaded};
    use crate::table::Status;

    fn load(text: &str) -> crate::ingest::Loaded {
        parse("t.csv", text.as_bytes(), &IngestOptions::default())
    }

    fn check_error(text: &str, want: &str) {
        let l = load(text);
        let all: Vec<String> = l
            .errors
            .iter()
            .map(|e| e.to_string())
            .chain(l.fatal.clone())
            .collect();
        assert!(
            all.iter().any(|e| e.contains(want)),
            "want {want:?} in {all:?}"
        );
    }

    #[test]
    fn reads_aliases_units_and_labels() {
        let l = load("request_id,class,prompt_tokens,completion_tokens,time_to_first_token_s,latency_ms,status\nr1,chat,100,11,0.25,1250,ok\nr2,batch,5000,1,0.5,900,timeout\n");
        assert_eq!(l.fatal, None);
        assert!(l.errors.is_empty(), "{:?}", l.errors);
        let t = &l.table;
        assert_eq!(t.len(), 2);
        assert_eq!((t.id(0), t.id(1)), ("r1".into(), "r2".into()));
        assert_eq!(t.ttft_ms(0), Some(250.0));
        assert_eq!(t.e2e_ms(0), Some(1250.0));
        assert_eq!(t.input_tokens(1), Some(5000.0));
        assert_eq!(t.status[1], Status::Timeout);
        assert_eq!(t.label("class").and_then(|c| c.get(1)), Some("batch"));
    }

    #[test]
    fn bad_rows_are_located_and_good_rows_kept() {
        let l = load("ttft_ms,e2e_ms,output_tokens\n100,200,3\nabc,200,3\n100,50,3\n100,200,2.5\n100,200\n-1,200,3\nNaN,1,1\n");
        assert_eq!(l.table.len(), 1);
        assert_eq!(l.error_count, 6);
        let msgs: Vec<String> = l.errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(
            msgs[0],
            "t.csv:3:1: column \"ttft_ms\": \"abc\" is not a number"
        );
        assert!(
            msgs[1].starts_with("t.csv:4: E2E (50 ms) is below TTFT"),
            "{}",
            msgs[1]
        );
        assert_eq!(
            msgs[2],
            "t.csv:5:3: column \"output_tokens\": 2.5 is not a whole number of tokens"
        );
        assert_eq!(
            msgs[3],
            "t.csv:6: the row is short: it has 2 fields, the header has 3"
        );
        assert!(msgs[4].contains("negative"));
        assert!(msgs[5].contains("NaN"));
    }

    /// The table holds counts in 4 bytes: the largest it holds is read, one past it is a bad
    /// row (as plain digits and as a decimal), and the rows around it are kept.
    #[test]
    fn a_token_count_past_what_the_table_holds_is_a_located_bad_row() {
        let l = load("ttft_ms,e2e_ms,input_tokens,output_tokens\n100,200,4294967294,3\n100,200,4294967295,3\n100,200,7,4294967295.0\n100,200,,0\n");
        assert_eq!(l.table.len(), 2);
        assert_eq!(l.table.input_tokens(0), Some(4_294_967_294.0));
        assert_eq!(
            (l.table.input_tokens(1), l.table.output_tokens(1)),
            (None, Some(0.0))
        );
        let msgs: Vec<String> = l.errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(
            msgs,
            [
                "t.csv:3:3: column \"input_tokens\": 4294967295 tokens is more than any request holds (at most 4294967294 are read)",
                "t.csv:4:4: column \"output_tokens\": 4294967295 tokens is more than any request holds (at most 4294967294 are read)",
            ]
        );
    }

    #[test]
    fn whole_file_problems() {
        check_error("", "empty");
        check_error("\n\n", "empty");
        check_error("a,b,c\n1,2,3\n", "no latency column");
        check_error("\0\0\0binary", "binary");
    }

    #[test]
    fn missing_ttft_column_is_said_at_line_1() {
        let l = load("e2e_ms,output_tokens\n100,3\n");
        assert!(
            l.warnings
                .iter()
                .any(|w| w.starts_with("t.csv:1: no TTFT column")),
            "{:?}",
            l.warnings
        );
        assert_eq!(l.table.len(), 1);
    }

    #[test]
    fn tsv_semicolon_bom_crlf() {
        let l = load("\u{feff}ttft_ms\te2e_ms\r\n1\t2\r\n");
        assert_eq!(l.table.len(), 1);
        assert_eq!(l.provenance.format, Some(crate::ingest::Format::Tsv));
        let l = load("ttft_ms;e2e_ms\n1;2\n");
        assert_eq!(l.table.e2e_ms(0), Some(2.0));
    }

    #[test]
    fn utf16_is_decoded() {
        let text = "ttft_ms,e2e_ms\n1,2\n";
        let mut bytes = vec![0xFF, 0xFE];
        for u in text.encode_utf16() {
            bytes.extend(u.to_le_bytes());
        }
        let l = parse("t.csv", &bytes, &IngestOptions::default());
        assert_eq!(l.table.len(), 1);
        assert!(l.warnings.iter().any(|w| w.contains("UTF-16")));
    }

    #[test]
    fn seconds_in_a_ms_column_are_flagged() {
        let l = load("ttft_ms,e2e_ms\n0.2,1.5\n0.3,1.6\n0.25,1.7\n");
        assert!(
            l.warnings.iter().any(|w| w.contains("are these seconds")),
            "{:?}",
            l.warnings
        );
    }

    #[test]
    fn error_text_without_status_means_error() {
        let l = load("ttft_ms,e2e_ms,error\n1,2,\n0,0,connection reset\n");
        assert_eq!(l.table.status, [Status::Ok, Status::Error]);
        assert_eq!(l.table.error(1), Some("connection reset"));
    }

    /// Every splitter on the same text, as `Debug` text (NaN, "absent", is not equal to itself).
    fn every_way(text: &str) -> Vec<(Splitter, String)> {
        let options = IngestOptions::default();
        [
            Splitter::Quoted,
            Splitter::Plain { pieces: 1 },
            Splitter::Plain { pieces: 2 },
            Splitter::Plain { pieces: 3 },
            Splitter::Plain { pieces: 7 },
            Splitter::Auto,
        ]
        .into_iter()
        .map(|s| {
            let loaded = parse_with(
                "t.csv",
                text,
                crate::ingest::Format::Csv,
                &options,
                s,
                &mut |_| {},
            );
            (s, format!("{loaded:?}"))
        })
        .collect()
    }

    #[test]
    fn the_plain_splitter_reads_every_quote_free_text_as_the_csv_crate_does() {
        // Random texts without quotes (a fixed xorshift sequence): ragged rows, blank lines,
        // CRLF and LF mixed, a last line with or without its end, bad cells, labels.
        const HEADERS: &[&str] = &[
            "ttft_ms,e2e_ms,output_tokens,class",
            "class,input_tokens,ttft_ms,e2e_ms,output_tokens,status,error",
            "request_id;latency_s;tenant",
            "e2e_ms",
        ];
        const CELLS: &[&str] = &[
            "1",
            "250",
            "12.5",
            "-3",
            "abc",
            "",
            " 7",
            "1e3",
            "0",
            "chat",
            "code",
            "ok",
            "timeout",
            "error",
            "x y",
            "9999999999999999",
            "\u{e9}t\u{e9}",
            "4.",
            ".5",
            "OK",
            "-0",
            "007",
            "12.0",
            "4294967295",
            "0.25",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..400 {
            let header = HEADERS[next(HEADERS.len())];
            let delimiter = if header.contains(';') { ";" } else { "," };
            let width = header.split(delimiter).count();
            let mut text = String::new();
            for _ in 0..next(3) {
                text.push_str(["\n", "\r\n"][next(2)]);
            }
            text.push_str(header);
            for _ in 0..next(40) {
                text.push_str(["\n", "\r\n", "\n\n", "\r\n\r\n"][next(4)]);
                let cells = width + [0, 0, 0, 0, 1].get(next(6)).copied().unwrap_or(0)
                    - usize::from(next(9) == 0);
                let row: Vec<&str> = (0..cells).map(|_| CELLS[next(CELLS.len())]).collect();
                text.push_str(&row.join(delimiter));
            }
            text.push_str(["", "\n", "\r\n", "\r"][next(4)]);
            let ways = every_way(&text);
            let (_, want) = &ways[0];
            for (splitter, got) in &ways[1..] {
                assert_eq!(got, want, "{splitter:?} on {text:?}");
            }
        }
    }

    #[test]
    fn quick_rows_are_what_read_row_makes_of_them_and_the_rest_is_declined() {
        let header = "class,input_tokens,ttft_ms,e2e_s,output_tokens,status,error,queue_ms,request_id,note\n";
        let mut loaded = Loaded::default();
        let head = read_head(
            &mut loaded,
            "t.csv",
            header,
            Format::Csv,
            &IngestOptions::default(),
        )
        .expect("a header with latency columns");
        let (layout, delimiter) = (head.layout, head.delimiter);
        let read = |row: &str, quick: bool| {
            let mut piece = Piece::new(&layout, 4);
            let mut cells = Vec::new();
            let next = if quick {
                quick_row(
                    &layout,
                    &mut piece,
                    row.as_bytes(),
                    0,
                    7,
                    delimiter,
                    &mut cells,
                )
            } else {
                Some(read_row(
                    &layout,
                    &mut piece,
                    row.as_bytes(),
                    0,
                    7,
                    delimiter,
                    &mut cells,
                ))
            };
            (next, format!("{:?} {:?}", piece.loaded, piece.labels))
        };
        // Rows the quick reader takes: each must come out as `read_row` makes it.
        let taken = [
            "chat,812,120.5,0.9,33,ok,,1.5,r1,x\n",
            "code,0,0,0,0,,,,,\n",
            "batch,4294967294,-0,5,1,OK,,0.000,r2,\r\n",
            "chat,007,99.999999999999,1234567.5,2,Ok,,,,last",
            "chat,1,2,3,4,error,boom,,r3,\n",
            "chat,1,2,3,4,timeout,,,,y\r",
            ",,,,,,,,,\n",
            "\u{e9}t\u{e9},1,2,3,4,ok,,,,\u{e9}\r\n",
            // (Not in a body without quotes, where a carriage return ends a line.)
            "chat,1,2,3,4,ok,,,,x\ry\n",
        ];
        for row in taken {
            let (next, got) = read(row, true);
            let (want_next, want) = read(row, false);
            assert_eq!(next, want_next, "{row:?}");
            assert_eq!(got, want, "{row:?}");
        }
        // Rows it declines, leaving the piece as it was: `read_row` reads or refuses them.
        let declined = [
            "\n",
            "\r\n",
            "chat,1e3,2,3,4,ok,,,,\n",
            "chat, 5,2,3,4,ok,,,,\n",
            "chat,5 ,2,3,4,ok,,,,\n",
            "chat,-3,2,3,4,ok,,,,\n",
            "chat,12.0,2,3,4,ok,,,,\n",
            "chat,4294967295,2,3,4,ok,,,,\n",
            "chat,1234567890123456,2,3,4,ok,,,,\n",
            "chat,1,1.,3,4,ok,,,,\n",
            "chat,1,.5,3,4,ok,,,,\n",
            "chat,1,-,3,4,ok,,,,\n",
            "chat,1,--1,3,4,ok,,,,\n",
            "chat,1,1.2.3,3,4,ok,,,,\n",
            "chat,1,-2,3,4,ok,,,,\n",
            "chat,1,1234567890123456,3,4,ok,,,,\n",
            "chat,1,NaN,3,4,ok,,,,\n",
            "chat,1,500,0.1,4,ok,,,,\n",
            "chat,1,2,3,4,okay,,,,\n",
            "chat,1,2,3,4,ok,,,\n",
            "chat,1,2,3,4,ok,,,,,\n",
            "chat,1,2,3\n",
        ];
        let (_, empty) = read("", false);
        for row in declined {
            assert_eq!(read(row, true), (None, empty.clone()), "{row:?}");
        }
    }

    /// A log of `rows` rows under the line `header` (ended by CRLF), row `i` being `row(i)`,
    /// its lines ended by LF and CRLF by turns.
    fn mixed_line_ends(header: &str, rows: u32, row: impl Fn(u32) -> String) -> String {
        let mut text = format!("{header}\r\n");
        for i in 0..rows {
            text.push_str(&row(i));
            text.push_str(if i % 2 == 0 { "\n" } else { "\r\n" });
        }
        text
    }

    #[test]
    fn the_splitters_agree_across_their_blocks_of_rows() {
        // More rows than one call reads (PROGRESS_ROWS), with blank lines, CRLF, bad rows and a
        // label column, so that every splitter stops and resumes mid-file.
        let text = mixed_line_ends("ttft_ms,e2e_ms,class", 150_000, |i| match i % 997 {
            0 => String::new(),
            1 => "abc,5,chat".to_string(),
            2 => "1,2".to_string(),
            _ => format!(
                "{},{},{}",
                i % 700,
                700 + i % 300,
                ["chat", "code", ""][(i % 3) as usize]
            ),
        });
        let ways = every_way(&text);
        let (_, want) = &ways[0];
        // Every bad row counted (the first 100 are listed), and the table's line column (in
        // the text compared) numbers every row past the blocks.
        let bad = (0..150_000).filter(|i| matches!(i % 997, 1 | 2)).count();
        assert!(
            want.contains(&format!("error_count: {bad},")),
            "{bad} bad rows"
        );
        for (splitter, got) in &ways[1..] {
            assert!(got == want, "{splitter:?} differs from the csv crate");
        }
    }

    /// The file read whole, as `parse_in_slices` should give it: with no digest (no reader of
    /// a slice has every byte).
    fn read_whole(name: &str, bytes: &[u8], options: &IngestOptions) -> Loaded {
        let options = IngestOptions {
            sha256_elsewhere: true,
            ..options.clone()
        };
        crate::ingest::parse(name, bytes, &options)
    }

    /// A large file read in two slices by readers that each hold only their own bytes, put
    /// together, is the file read at once: the same rows, lines (the second reader numbers
    /// its rows from 1), bad rows and their lines, labels (values first seen in the second
    /// part) and warnings (seconds in a ms column, judged on the first values of the file).
    #[test]
    fn a_file_read_in_slices_is_the_file_read_at_once() {
        let text = mixed_line_ends("ttft_ms,e2e_ms,class,tenant", 120_000, |i| {
            match i % 997 {
                0 => String::new(),
                1 => "abc,5,chat,a".to_string(),
                2 => "1,2".to_string(),
                // Few TTFT values early on, so that the seconds check needs the later parts.
                _ if i < 90_000 && i % 20 != 0 => format!(",{},chat,t{}", 9 + i % 5, i % 40),
                _ => format!(
                    "0.{},{},{},t{}",
                    i % 9 + 1,
                    9 + i % 5,
                    if i > 100_000 { "late" } else { "code" },
                    i % 50
                ),
            }
        });
        let options = IngestOptions::default();
        let want = read_whole("t.csv", text.as_bytes(), &options);
        assert!(
            want.warnings.iter().any(|w| w.contains("seconds")),
            "{:?}",
            want.warnings
        );
        let got = parse_in_slices("t.csv", text.as_bytes(), &options).expect("read in slices");
        assert!(format!("{got:?}") == format!("{want:?}"));
        // With a byte-order mark, as TSV.
        let tsv = format!("\u{feff}{}", text.replace(',', "\t"));
        let want = read_whole("t.tsv", tsv.as_bytes(), &options);
        let got = parse_in_slices("t.tsv", tsv.as_bytes(), &options).expect("TSV in slices");
        assert!(format!("{got:?}") == format!("{want:?}"));
    }

    /// Wherever the middle falls (on a line end, just before or after one, in a CRLF, in a
    /// blank line, in the header's line end), the two slices give the file read at once.
    #[test]
    fn slices_cut_anywhere_give_the_file_read_at_once() {
        let mut next = crate::testing::sequence(17);
        let options = IngestOptions::default();
        for case in 0..400 {
            let rows = (next() % 40) as usize;
            let mut text = String::from(if case % 7 == 0 {
                "\n\nttft_ms,e2e_ms,model"
            } else {
                "ttft_ms,e2e_ms,model"
            });
            text.push_str(if case % 2 == 0 { "\n" } else { "\r\n" });
            for _ in 0..rows {
                let row = match next() % 9 {
                    0 => String::new(),
                    1 => "x,1,m".to_string(),
                    2 => "1,2".to_string(),
                    k => format!("{},{},m{}", next() % 1000, next() % 100_000, k),
                };
                text.push_str(&row);
                text.push_str(if next().is_multiple_of(3) {
                    "\r\n"
                } else {
                    "\n"
                });
            }
            let bytes = text.as_bytes();
            let want = read_whole("c.csv", bytes, &options);
            match parse_in_slices("c.csv", bytes, &options) {
                Some(got) => assert!(
                    format!("{got:?}") == format!("{want:?}"),
                    "case {case}:\n{text}"
                ),
                // Declined only where the header reaches past the middle.
                None => assert!(
                    text.find("model").unwrap() >= text.len() / 2 - 8,
                    "case {case}:\n{text}"
                ),
            }
        }
    }

    /// Found by the `ingest_csv` fuzz target: a NUL byte in the first 8 KiB makes the whole
    /// file binary, even where it lies past the cut, in the second reader's half.
    #[test]
    fn a_nul_past_the_cut_of_a_small_file_is_still_a_binary_file() {
        let mut bytes = b"ms;e2e_ms;output_tokens\n180,5;4010,25;101\n210,0;3900,0;96\n".to_vec();
        bytes.extend_from_slice(&[0, 0, b'\'', 0, 0, 0]);
        let options = IngestOptions::default();
        assert!(read_whole("f.csv", &bytes, &options)
            .fatal
            .unwrap()
            .contains("binary"));
        assert_eq!(parse_in_slices("f.csv", &bytes, &options), None);
    }

    /// Found in review: a byte-order mark longer than the file's first half made the first
    /// reader's limit for its header (the middle, less the mark) underflow.
    #[test]
    fn a_mark_past_the_middle_of_a_tiny_file_is_declined_not_an_overflow() {
        let bytes = b"\xEF\xBB\xBF\na";
        let options = IngestOptions::default();
        assert_eq!(parse_in_slices("m.csv", bytes, &options), None);
    }

    /// What the readers of slices decline, so that the loader reads the whole file instead: a
    /// quote or a lone carriage return in either part or in the header, text that is not
    /// plain UTF-8 (UTF-16, a bad byte), not a delimited log, no line end near the middle, and
    /// parts read under another header.
    #[test]
    fn files_not_read_in_slices() {
        use crate::ingest::{first_slice, join_slices, second_slice, Slices};
        let options = IngestOptions::default();
        let rows = |n: usize| "1,2\n".repeat(n);
        let first_declines = |text: &[u8]| {
            let s = Slices::of(text.len() as u64);
            let bytes = &text[..s.first_end as usize];
            first_slice("t", bytes, s.size, &options, &mut |_| {}).is_none()
        };
        let second_declines = |text: &[u8]| {
            let s = Slices::of(text.len() as u64);
            let (head, tail) = (&text[..s.head_end as usize], &text[s.middle as usize..]);
            second_slice("t", head, tail, s.size, &options, &mut |_| {}).is_none()
        };
        let plain = format!("ttft_ms,e2e_ms\n{}", rows(1000));
        assert!(!first_declines(plain.as_bytes()) && !second_declines(plain.as_bytes()));
        let early_quote = format!("ttft_ms,e2e_ms\n\"3\",4\n{}", rows(1000));
        let late_quote = format!("ttft_ms,e2e_ms\n{}\"3\",4\n", rows(1000));
        let late_cr = format!("ttft_ms,e2e_ms\n{}3\r,4\n", rows(1000));
        assert!(first_declines(early_quote.as_bytes()) && !second_declines(early_quote.as_bytes()));
        assert!(!first_declines(late_quote.as_bytes()) && second_declines(late_quote.as_bytes()));
        assert!(second_declines(late_cr.as_bytes()));
        let mut bad_byte = plain.clone().into_bytes();
        bad_byte.splice(bad_byte.len() - 4..bad_byte.len() - 4, [0xff]);
        assert!(second_declines(&bad_byte));
        let quoted_header = format!("\"ttft_ms\",e2e_ms\n{}", rows(1000));
        let json = "{\"ttft_ms\": 1, \"e2e_ms\": 2}\n".repeat(300);
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(plain.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let long_line = format!(
            "ttft_ms,e2e_ms,note\n{}1,2,{}\n{}",
            rows(10),
            "x".repeat(3 << 20),
            rows(10)
        );
        for text in [
            quoted_header.as_bytes(),
            json.as_bytes(),
            &utf16,
            long_line.as_bytes(),
        ] {
            assert!(first_declines(text) && second_declines(text));
        }
        // A second part read under another header (other label columns) is not taken.
        let labelled = |label: &str| format!("ttft_ms,e2e_ms,{label}\n{}", "1,2,a\n".repeat(1000));
        let (ours, theirs) = (labelled("class"), labelled("model"));
        let s = Slices::of(ours.len() as u64);
        let bytes = &ours.as_bytes()[..s.first_end as usize];
        let first = first_slice("t", bytes, s.size, &options, &mut |_| {}).expect("first");
        let theirs = theirs.as_bytes();
        let (head, tail) = (&theirs[..s.head_end as usize], &theirs[s.middle as usize..]);
        let second = second_slice("t", head, tail, s.size, &options, &mut |_| {}).expect("second");
        assert_eq!(join_slices("t", s.size, &options, first, second), None);
    }

    /// The word-at-a-time scans against their definitions, byte by byte: every byte value in
    /// every position of a word, and random texts where a quote, a `\r` or a `\n` falls at
    /// every place, across word and block boundaries.
    #[test]
    fn scans_eight_bytes_at_a_time_match_their_byte_by_byte_definitions() {
        // Every pair of byte values side by side both ways (a byte just above a match is where
        // the usual zero-byte trick marks one too many).
        for (a, b) in (0..=255u8).flat_map(|a| (0..=255u8).map(move |b| (a, b))) {
            let w = [a, b, b, a, a, b, a, b];
            let word = u64::from_le_bytes(w);
            for target in [a, b, b'\n', b'"'] {
                let want: u64 = (0..8)
                    .filter(|&k| w[k] == target)
                    .map(|k| 0x80 << (8 * k))
                    .sum();
                assert_eq!(super::bytes_equal(word, target), want, "{w:?} {target}");
            }
        }
        let plain = |b: &[u8]| {
            b.iter().enumerate().all(|(i, &c)| match c {
                b'"' => false,
                b'\r' => matches!(b.get(i + 1), None | Some(b'\n')),
                _ => true,
            })
        };
        let mut next = crate::testing::sequence(0x2545_f491_4f6c_dd1d);
        // A `\r` last in a megabyte block: plain only when the next block starts with `\n`.
        for (after, want) in [(b'\n', true), (b'1', false)] {
            let mut text = vec![b'1'; (1 << 20) + 8];
            text[(1 << 20) - 1] = b'\r';
            text[1 << 20] = after;
            assert_eq!(super::is_plain(&text), want);
        }
        let alphabet = b"0123456789,.\n\r\"";
        for len in (0..70).chain([1 << 20, (1 << 20) + 13]) {
            for _ in 0..20 {
                // Digits, commas, points and line ends; then, half the time, one quote, `\r`
                // or `\n` somewhere, which decides whether it is plain.
                let mut text: Vec<u8> =
                    (0..len).map(|_| alphabet[(next() % 13) as usize]).collect();
                if len > 0 && next().is_multiple_of(2) {
                    let at = (next() as usize) % len;
                    text[at] = alphabet[12 + (next() % 3) as usize];
                }
                let lines = text.iter().filter(|&&b| b == b'\n').count();
                assert_eq!(super::count_lines(&text), lines, "{len}");
                assert_eq!(super::count_line_ends_words(&text), lines, "{len}");
                assert_eq!(super::is_plain(&text), plain(&text), "{len}");
                // The wasm form, on a block that ends at the text's end and on one that ends
                // before a `\n` (a `\r` last in a block is plain only before one).
                assert_eq!(super::plain_block_words(&text, None), plain(&text), "{len}");
                let mut followed = text.clone();
                followed.push(b'\n');
                assert_eq!(
                    super::plain_block_words(&text, Some(b'\n')),
                    plain(&followed)
                );
                for from in [0, len / 3, len.saturating_sub(9)] {
                    let want = text
                        .iter()
                        .skip(from)
                        .position(|&b| b == b',' || b == b'\n')
                        .map(|p| p + from);
                    assert_eq!(super::next_stop(&text, from, b','), want, "{len} {from}");
                }
            }
        }
    }

    #[test]
    fn bodies_with_quotes_or_lone_carriage_returns_go_to_the_csv_crate() {
        assert!(super::is_plain(b"1,2\r\n3,4\r"));
        assert!(!super::is_plain(b"1,\"2\"\n"));
        assert!(!super::is_plain(b"1,2\r3,4"));
        // And still give the same answer when the plain splitter is asked for.
        for text in [
            "ttft_ms,class\n1,\"a,b\"\n2,\"c\nd\"\n",
            "ttft_ms,e2e_ms\r1,2\r3,4\r",
        ] {
            let ways = every_way(text);
            assert!(ways.iter().all(|(_, got)| *got == ways[0].1), "{text:?}");
        }
    }

    #[test]
    fn lines_are_counted_in_crlf_files_and_after_blank_lines() {
        // The csv crate places a CRLF file's rows on the line before, and a header after blank
        // lines on line 1: both are the lines an editor shows now.
        for (text, want) in [
            ("ttft_ms,e2e_ms\r\n1,2\r\nabc,2\r\n", "t.csv:3:1:"),
            ("\n\nttft_ms,e2e_ms\n1,2\n\nabc,2\n", "t.csv:6:1:"),
            (
                "\r\n\r\nttft_ms,e2e_ms\r\n1,\"2\"\r\nabc,2\r\n",
                "t.csv:5:1:",
            ),
        ] {
            let l = load(text);
            let first = l.errors.first().map(|e| e.to_string()).unwrap_or_default();
            assert!(first.starts_with(want), "{text:?}: {first}");
        }
        let l = load("\n\nttft_ms,ttft_ms\n1,2\n");
        assert!(
            l.warnings.iter().any(|w| w.starts_with("t.csv:3:2:")),
            "{:?}",
            l.warnings
        );
    }
}
