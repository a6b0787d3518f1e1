//! Reading `results.jsonl` back, through the bounded input layer, with recovery:
//! the header must be whole, and any later line that is not a run record (torn by
//! a crash, NUL bytes where a crash left a hole, not UTF-8, a second header, a
//! byte-for-byte copy of an earlier record) is set aside with a warning naming
//! it, and the rest is kept. A NUL hole followed
//! by a record on the same line (a writer that appended after the hole) keeps
//! the record. What is set aside is reported ([`SetAside`]); a resume moves it
//! to `results.jsonl.set-aside` and rewrites the file without it.

use std::path::{Path, PathBuf};

use scalescope_files::{excerpt, Input, Kind};

use crate::store::{Header, Record, RunRecord, RESULTS_SCHEMA_VERSION};
use crate::ResultsError;

/// A line that is not a run record, set aside.
#[derive(Debug, Clone, PartialEq)]
pub struct SetAside {
    /// 1-based line number in the file.
    pub line: usize,
    pub why: String,
    /// The line's bytes as read (its newline, if any, included).
    pub bytes: Vec<u8>,
}

impl std::fmt::Display for SetAside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {} set aside: {} (`{}`)",
            self.line,
            self.why,
            excerpt::of(&self.bytes)
        )
    }
}

/// A results file as read: the header, its runs, what was set aside, and where
/// the kept records are.
#[derive(Debug, Clone)]
pub struct ResultsRead {
    pub path: PathBuf,
    pub header: Header,
    pub runs: Vec<RunRecord>,
    pub set_aside: Vec<SetAside>,
    /// Byte ranges (offset, length, no newline) of the header and each run kept.
    pub kept: Vec<(u64, u64)>,
    /// The end of the last line before which every line was one whole record.
    pub clean_prefix: u64,
}

impl ResultsRead {
    /// Whether a kept record lies past the clean prefix: then cutting the file
    /// there would lose it, and the file is rewritten from the kept records.
    pub fn needs_rewrite(&self) -> bool {
        self.kept
            .last()
            .is_some_and(|&(at, len)| at + len > self.clean_prefix)
    }
}

/// Reads a results file (a regular file of at most [`Kind::RESULTS`]), keeping
/// what can be kept.
///
/// # Errors
/// [`ResultsError::Malformed`] for a first line that is not a header, a newer
/// schema, or a line past the length limit; I/O and file-type errors.
pub fn read_results_checked(path: &Path) -> Result<ResultsRead, ResultsError> {
    read_input(scalescope_files::open(path, Kind::RESULTS)?)
}

/// Reads a results file, its runs and the length of its clean prefix; lines set
/// aside are dropped silently (use [`read_results_checked`] to report them).
///
/// # Errors
/// As [`read_results_checked`].
pub fn read_results(path: &Path) -> Result<(Header, Vec<RunRecord>, u64), ResultsError> {
    let r = read_results_checked(path)?;
    Ok((r.header, r.runs, r.clean_prefix))
}

/// As [`read_results_checked`], from an input already opened (confined to a
/// results directory, say).
///
/// # Errors
/// As [`read_results_checked`].
pub fn read_input(input: Input) -> Result<ResultsRead, ResultsError> {
    let path = input.path().to_path_buf();
    let mut lines = input.lines();
    let mut buf = Vec::new();
    let header = first_line(&mut lines, &mut buf, &path)?;
    check_version(&header, &path)?;
    let body = buf.strip_suffix(b"\n").unwrap_or(&buf).len() as u64;
    let mut read = ResultsRead {
        path,
        header,
        runs: Vec::new(),
        set_aside: Vec::new(),
        kept: vec![(0, body)],
        clean_prefix: buf.len() as u64,
    };
    let mut at = buf.len() as u64;
    let mut clean = true;
    let mut seen = Seen::default();
    while lines.next_raw(&mut buf)? {
        let whole = read_line(&mut read, &mut seen, &buf, at, lines.number());
        at += buf.len() as u64;
        clean &= whole;
        if clean {
            read.clean_prefix = at;
        }
    }
    Ok(read)
}

/// Reads one line starting at byte `at` into `read`; whether it was one whole
/// record.
fn read_line(read: &mut ResultsRead, seen: &mut Seen, line: &[u8], at: u64, number: usize) -> bool {
    let complete = line.ends_with(b"\n");
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let pieces = pieces(body);
    if pieces.is_empty() {
        let why = if body.is_empty() {
            "an empty line".to_string()
        } else {
            format!("{} NUL bytes (what a crash can leave)", body.len())
        };
        read.set_aside.push(SetAside {
            line: number,
            why,
            bytes: line.to_vec(),
        });
        return false;
    }
    let mut whole = pieces.len() == 1 && pieces[0].1 == body.len();
    for (offset, len) in pieces {
        let piece = &body[offset..offset + len];
        match parse_piece(piece, complete).and_then(|run| seen.first(run, piece, number)) {
            Ok(run) => {
                read.runs.push(run);
                read.kept.push((at + offset as u64, len as u64));
            }
            Err(why) => {
                whole = false;
                read.set_aside.push(SetAside {
                    line: number,
                    why,
                    bytes: piece.to_vec(),
                });
            }
        }
    }
    // A record written whole without its newline is kept in place: the repair
    // only ends the line.
    whole
}

/// The measured runs read so far, by a 128-bit digest of their bytes, and the
/// line each was on: a measured run whose bytes repeat an earlier one's is the
/// same run written twice (a file concatenated, a line copied), never a second
/// run (a resume never repeats a measured repetition, and two runs differ in
/// their times), and counted twice it would pass for another repetition.
/// Warm-ups are not checked: a resume runs an unfinished point's warm-up again,
/// and they are no repetition.
#[derive(Default)]
struct Seen(std::collections::HashMap<(u64, u64), usize>);

impl Seen {
    /// `run` (read from `piece`) the first time a measured run's bytes are seen;
    /// else why it is set aside.
    fn first(&mut self, run: RunRecord, piece: &[u8], line: usize) -> Result<RunRecord, String> {
        if run.warmup {
            return Ok(run);
        }
        use std::hash::{Hash, Hasher};
        let digest = |salt: u8| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            salt.hash(&mut h);
            piece.hash(&mut h);
            h.finish()
        };
        match self.0.entry((digest(0), digest(1))) {
            std::collections::hash_map::Entry::Occupied(e) => Err(format!(
                "a copy of line {}: the same run written twice, counted once",
                e.get()
            )),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(line);
                Ok(run)
            }
        }
    }
}

/// The pieces of a line between NUL bytes (a hole a crash left, then a record
/// appended after it), blanks trimmed: offset and length of each.
fn pieces(body: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for part in body.split(|&b| b == 0) {
        let lead = part.len() - part.trim_ascii_start().len();
        let trimmed = part.trim_ascii();
        if !trimmed.is_empty() {
            out.push((start + lead, trimmed.len()));
        }
        start += part.len() + 1;
    }
    out
}

fn parse_piece(piece: &[u8], complete: bool) -> Result<RunRecord, String> {
    let text = std::str::from_utf8(piece).map_err(|_| "not UTF-8 text".to_string())?;
    match serde_json::from_str::<Record>(text) {
        Ok(Record::Run(r)) => Ok(*r),
        Ok(Record::Header(_)) => Err("a second header record".into()),
        Err(_) if !complete => Err("a last line cut short (no newline)".into()),
        Err(e) => Err(format!("not a run record: {e}")),
    }
}

/// The header: the first line, whole.
fn first_line(
    lines: &mut scalescope_files::Lines,
    buf: &mut Vec<u8>,
    path: &Path,
) -> Result<Header, ResultsError> {
    let malformed = |detail: String| ResultsError::Malformed {
        path: path.into(),
        line: 1,
        detail,
    };
    if !lines.next_raw(buf)? {
        return Err(malformed("no header record".into()));
    }
    let text = std::str::from_utf8(buf.strip_suffix(b"\n").unwrap_or(buf))
        .map_err(|_| malformed(format!("not UTF-8 text: `{}`", excerpt::of(buf))))?;
    match serde_json::from_str::<Record>(text) {
        Ok(Record::Header(h)) => Ok(*h),
        Ok(Record::Run(_)) => Err(malformed("a run record before the header".into())),
        Err(e) if !buf.ends_with(b"\n") => Err(malformed(format!("no header record ({e})"))),
        Err(e) => Err(malformed(format!(
            "{e} (the line starts `{}`)",
            excerpt::of(buf)
        ))),
    }
}

fn check_version(header: &Header, path: &Path) -> Result<(), ResultsError> {
    if header.schema_version > RESULTS_SCHEMA_VERSION {
        return Err(ResultsError::Malformed {
            path: path.into(),
            line: 1,
            detail: format!(
                "results schema version {} is newer than this scalescope understands ({RESULTS_SCHEMA_VERSION})",
                header.schema_version
            ),
        });
    }
    Ok(())
}
