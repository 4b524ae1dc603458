//! CSV and TSV request logs: one request per row, a header naming the fields.

use super::fields::{self, Field, Resolved};
use super::{Format, IngestOptions, Loaded, Location};
use crate::table::{LabelColumn, LabelIndex, Row};

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

/// Reads a CSV or TSV log. The delimiter is detected from the header line. `progress` hears how
/// far through the text the reader is, every [`PROGRESS_ROWS`] rows.
pub fn parse(
    name: &str,
    text: &str,
    format: Format,
    options: &IngestOptions,
    progress: &mut dyn FnMut(f64),
) -> Loaded {
    let mut loaded = Loaded::default();
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
            return loaded;
        }
        Ok(false) => {
            loaded.fatal = Some(format!(
                "{name}: the file is empty: there is nothing to read"
            ));
            return loaded;
        }
    };
    let headers: Vec<String> = header
        .iter()
        .map(|h| String::from_utf8_lossy(h).trim().to_string())
        .collect();
    let header_line = header.position().map_or(1, |p| p.line());

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
        return loaded;
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
    // Label columns are filled here by column position, not through `Row::labels` (two strings
    // and a look-up by name per cell), and join the table at the end. Every row has a cell in
    // each, so the table gets them in header order, as `RequestTable::push` would give them.
    let mut labels: Vec<(usize, LabelColumn, LabelIndex)> = columns
        .iter()
        .enumerate()
        .filter_map(|(k, c)| {
            let c = c.as_ref().filter(|c| c.field == Field::Label)?;
            Some((k, LabelColumn::new(&c.name), LabelIndex::default()))
        })
        .collect();

    // At most one row per line end (and a last line without one). Counted in blocks of 255
    // bytes into a byte-wide sum, which compilers vectorise far better than a `usize` count.
    let rows = text
        .as_bytes()
        .chunks(255)
        .map(|block| usize::from(block.iter().map(|&b| u8::from(b == b'\n')).sum::<u8>()))
        .sum::<usize>()
        + 1;
    loaded.table.reserve(rows);
    for (_, column, _) in &mut labels {
        column.codes.reserve(rows);
    }

    let mut ttft_sample = Vec::new();
    let mut e2e_sample = Vec::new();
    let mut records = 0usize;
    loop {
        records += 1;
        if records.is_multiple_of(PROGRESS_ROWS) {
            progress(reader.position().byte() as f64 / text.len().max(1) as f64);
        }
        match reader.read_byte_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let line = e.position().map(|p| p.line());
                loaded.reject(
                    Location {
                        file: name.to_string(),
                        line,
                        ..Location::default()
                    },
                    format!("unreadable row: {e}"),
                );
                continue;
            }
        };
        let line = record.position().map_or(0, |p| p.line());
        let at = |column: Option<u64>, field: Option<String>| Location {
            file: name.to_string(),
            line: Some(line),
            column,
            field,
            json_path: None,
        };
        if record.len() != headers.len() {
            let what = if record.len() < headers.len() {
                "is short"
            } else {
                "is long"
            };
            // A quote that is never closed takes the following lines into one cell (with the
            // file's last line end, which is not a line of its own).
            let swallowed: u64 = record
                .iter()
                .map(|cell| {
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
            loaded.reject(
                at(None, None),
                format!(
                    "the row {what}: it has {} fields, the header has {}{hint}",
                    record.len(),
                    headers.len()
                ),
            );
            continue;
        }
        let mut row = Row::default();
        let mut bad = None;
        for (k, (cell, column)) in record.iter().zip(&columns).enumerate() {
            let Some(column) = column else { continue };
            if column.field == Field::Label {
                continue;
            }
            if let Err(reason) = fields::set_cell(&mut row, column, cell) {
                bad = Some((k, reason));
                break;
            }
        }
        if let Some((k, reason)) = bad {
            loaded.reject(at(Some(k as u64 + 1), headers.get(k).cloned()), reason);
            continue;
        }
        fields::finish_row(&mut row, has_status);
        if let Err(reason) = fields::check_row(&row) {
            loaded.reject(at(None, None), reason);
            continue;
        }
        if ttft_sample.len() < 10_000 {
            ttft_sample.extend(row.ttft_ms);
            e2e_sample.extend(row.e2e_ms);
        }
        for (k, column, index) in &mut labels {
            let cell = record.get(*k).unwrap_or_default();
            column.push_indexed(&fields::cell_text(cell), index);
        }
        let source_line = u32::try_from(line).unwrap_or(u32::MAX);
        loaded.table.push(row, 0, source_line, name);
    }
    if loaded.table.is_empty() && loaded.error_count == 0 {
        // Not an empty table the app would show as "loaded 0 requests" in place of its data.
        loaded.fatal = Some(format!(
            "{name}: the file has a header line but no rows under it: there is nothing to read"
        ));
        return loaded;
    }
    if !loaded.table.is_empty() {
        loaded.table.labels = labels.into_iter().map(|(_, column, _)| column).collect();
    }
    for (field, sample) in [
        (Field::Ttft, &mut ttft_sample),
        (Field::E2e, &mut e2e_sample),
    ] {
        if let Some(c) = columns.iter().flatten().find(|c| c.field == field) {
            let header = headers
                .iter()
                .zip(&columns)
                .find(|(_, r)| r.as_ref() == Some(c))
                .map_or(c.name.clone(), |(h, _)| h.clone());
            if let Some(w) = fields::seconds_in_ms_warning(&header, sample, c.unit) {
                loaded.warnings.push(format!("{name}: {w}"));
            }
        }
    }
    loaded
}

#[cfg(test)]
mod tests {
    use crate::ingest::{parse, IngestOptions};
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
}
