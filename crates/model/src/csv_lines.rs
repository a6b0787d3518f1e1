//! CSV text to records, each with the line it starts on: the reading half of
//! [`crate::import`]. Each record's cells come from the `csv` crate (RFC 4180 quoting);
//! the text is cut into records here so that messages can name lines.

use crate::import::{ImportError, MAX_ROWS};
use crate::tidy::Layout;

/// One data row: its 1-based line and its cells.
pub(crate) struct Line {
    pub(crate) line: usize,
    pub(crate) cells: Vec<String>,
}

impl Line {
    pub(crate) fn cell(&self, i: usize) -> &str {
        self.cells.get(i).map_or("", String::as_str)
    }
}

fn trimmed(cells: &[String]) -> Vec<String> {
    cells.iter().map(|c| c.trim().to_string()).collect()
}

/// A hand-made file's cells without the spaces around them (`1, 2.5`).
fn trim_cells(lines: &mut [Line]) {
    for c in lines.iter_mut().flat_map(|l| l.cells.iter_mut()) {
        *c = c.trim().to_string();
    }
}

/// The header's column names and the data rows. Each record is parsed by the `csv`
/// crate: quoted fields (RFC 4180: a quoted `cpus=0-3,8` is one cell, a quoted field
/// may hold line breaks), CRLF or LF line ends, rows of any length (a missing cell is
/// empty). A UTF-8 byte-order mark is dropped; blank lines
/// and lines starting with `#` (comments, but in scalescope's own files, whose labels
/// may start with one) are skipped. Records are cut here, at line ends outside quotes,
/// so each keeps the line it starts on for messages. scalescope's own files (told by
/// their exact column names) are read verbatim; in others every cell is trimmed.
pub(crate) fn records(text: &str, file: &str) -> Result<(Vec<String>, Vec<Line>), ImportError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines: Vec<Line> = Vec::new();
    let (mut chunk, mut start, mut own) = (String::new(), 0, false);
    // The quotes in `chunk`, counted line by line: a stray quote makes the rest
    // of the file one chunk, which must not be scanned again for every line.
    let mut quotes = 0usize;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        // In scalescope's own files a row is never a comment: a label may start with `#`.
        if chunk.is_empty() {
            if raw.trim().is_empty() || (raw.starts_with('#') && !own) {
                continue;
            }
            start = i + 1;
        }
        chunk.push_str(raw);
        quotes += raw.matches('"').count();
        if quotes.is_multiple_of(2) {
            // The header and at most MAX_ROWS data rows, counted before any is
            // kept: a file of short rows within its byte limit is tens of
            // millions of them.
            if lines.len() > MAX_ROWS {
                return Err(ImportError::TooManyRows {
                    file: file.into(),
                    line: start,
                    max: MAX_ROWS,
                });
            }
            lines.push(one_record(&chunk, file, start)?);
            chunk.clear();
            quotes = 0;
            own = own || Layout::of(&lines[0].cells).is_some();
        }
    }
    if !chunk.is_empty() {
        lines.push(one_record(&chunk, file, start)?);
    }
    lines.retain(|l| l.cells.iter().any(|c| !c.trim().is_empty()));
    if lines.is_empty() {
        return Err(ImportError::Empty { file: file.into() });
    }
    let mut head = lines.remove(0).cells;
    if Layout::of(&head).is_none() {
        head = trimmed(&head);
        trim_cells(&mut lines);
    }
    Ok((head, lines))
}

/// The cells of the one record in `chunk` (which starts on line `line`).
fn one_record(chunk: &str, file: &str, line: usize) -> Result<Line, ImportError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(chunk.as_bytes());
    let mut records = reader.records();
    let bad = |detail: String| ImportError::Row {
        file: file.into(),
        line,
        detail,
    };
    let record = match records.next() {
        Some(r) => r.map_err(|e| bad(e.to_string()))?,
        None => csv::StringRecord::new(),
    };
    if records.next().is_some() {
        return Err(bad(
            "a quote `\"` opens a field that is not closed on its line (quote a whole field, and write a quote inside one as `\"\"`)".into(),
        ));
    }
    Ok(Line {
        line,
        cells: record.iter().map(str::to_string).collect(),
    })
}
