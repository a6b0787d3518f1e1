//! A run's stdout and stderr, streamed: each pipe is copied into its log file up to
//! [`LOG_CAP_BYTES`] (a note at the end says how much more there was), and stdout is
//! scanned for the figures of merit line by line as it passes, so 1 GiB of output
//! costs neither 1 GiB of memory nor 1 GiB of disk, and metrics printed after the
//! cap are still found. Bytes that are not UTF-8 are read as U+FFFD, so one bad
//! byte does not hide the rest of the output.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};

use regex::Regex;

use scalescope_model::store::MetricSpec;

/// The most bytes kept in one log file.
pub const LOG_CAP_BYTES: u64 = 64 << 20;
/// The longest line scanned for metrics (the rest of a longer line is not scanned).
pub const SCAN_LINE_BYTES: usize = 1 << 20;

/// What the stream held: each metric's last match, and the last non-empty line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scan {
    pub found: BTreeMap<String, f64>,
    /// The last non-empty line (cut at [`SCAN_LINE_BYTES`]), where a workload
    /// prints its JSON report.
    pub last_line: String,
    /// Bytes the stream held, logged or not.
    pub total_bytes: u64,
    /// Why a log was cut short (a full disk, say): the run's record notes it.
    pub log_errors: Vec<String>,
}

/// Compiled metric patterns; a pattern matches within one line.
pub struct Scanner {
    patterns: Vec<(String, Regex)>,
    scan: Scan,
}

impl Scanner {
    pub fn new(specs: &[MetricSpec]) -> Scanner {
        let patterns = specs
            .iter()
            .filter_map(|s| Some((s.name.clone(), Regex::new(s.regex.as_deref()?).ok()?)))
            .collect();
        Scanner {
            patterns,
            scan: Scan::default(),
        }
    }

    /// Scans one line (without its newline).
    fn line(&mut self, bytes: &[u8]) {
        let bytes = &bytes[..bytes.len().min(SCAN_LINE_BYTES)];
        let text = String::from_utf8_lossy(bytes);
        for (name, re) in &self.patterns {
            let value = re.captures_iter(&text).filter_map(|c| {
                let m = c.get(1).or_else(|| c.get(0))?;
                m.as_str().trim().parse::<f64>().ok()
            });
            if let Some(v) = value.last() {
                self.scan.found.insert(name.clone(), v);
            }
        }
        if !text.trim().is_empty() {
            self.scan.last_line = text.into_owned();
        }
    }

    /// Scans a whole stream (a log file written by someone else, as fakes do).
    pub fn scan_reader(mut self, reader: impl Read) -> Scan {
        let mut reader = BufReader::new(reader);
        let mut line = Vec::new();
        loop {
            let n = read_line_capped(&mut reader, &mut line).unwrap_or(0);
            if n == 0 {
                break;
            }
            self.scan.total_bytes += n as u64;
            self.line(trim_newline(&line));
        }
        self.scan
    }
}

/// Reads up to and including the next `\n`, keeping at most [`SCAN_LINE_BYTES`] of
/// it in `line` (the rest is consumed and dropped). Returns the bytes consumed.
fn read_line_capped(reader: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<usize> {
    line.clear();
    let mut consumed = 0;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(consumed);
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..=i], true),
            None => (buf, false),
        };
        let room = SCAN_LINE_BYTES.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let n = chunk.len();
        reader.consume(n);
        consumed += n;
        if done {
            return Ok(consumed);
        }
    }
}

fn trim_newline(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\n").unwrap_or(line)
}

/// Copies `pipe` into `log` (at most `cap` bytes, then a note of what was left out),
/// scanning every line with `scanner` when one is given. Runs until the pipe ends.
pub fn copy_capped(pipe: impl Read, mut log: File, cap: u64, scanner: Option<Scanner>) -> Scan {
    let mut reader = BufReader::with_capacity(64 << 10, pipe);
    let mut scanner = scanner.unwrap_or_else(|| Scanner::new(&[]));
    let (mut written, mut dropped, mut log_ok) = (0u64, 0u64, true);
    let mut line = Vec::new();
    loop {
        // Reading line by line would keep a newline-free 1 GiB stream in memory;
        // read_line_capped keeps at most SCAN_LINE_BYTES of it, so copy what passes
        // through the buffer chunk by chunk instead.
        let buf = match reader.fill_buf() {
            Ok([]) | Err(_) => break,
            Ok(buf) => buf,
        };
        let n = buf.len();
        let room = cap.saturating_sub(written).min(n as u64) as usize;
        if log_ok && room > 0 {
            if let Err(e) = log.write_all(&buf[..room]) {
                log_ok = false;
                scanner.scan.log_errors.push(format!(
                    "log cut short after {written} bytes: {e}; the output past it was scanned but not kept"
                ));
            }
            written += room as u64;
        }
        dropped += (n - room) as u64;
        for piece in buf.split_inclusive(|&b| b == b'\n') {
            let room = SCAN_LINE_BYTES.saturating_sub(line.len());
            line.extend_from_slice(&piece[..piece.len().min(room)]);
            if piece.ends_with(b"\n") {
                scanner.line(trim_newline(&line));
                line.clear();
            }
        }
        reader.consume(n);
        scanner.scan.total_bytes += n as u64;
    }
    if !line.is_empty() {
        scanner.line(&line);
    }
    if dropped > 0 && log_ok {
        let _ = writeln!(
            log,
            "\n[scalescope: log capped at {cap} bytes; {dropped} more bytes not kept]"
        );
    }
    scanner.scan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, re: &str) -> MetricSpec {
        MetricSpec {
            name: name.into(),
            regex: Some(re.into()),
            higher_is_better: true,
        }
    }

    #[test]
    fn a_log_cut_short_by_a_full_disk_is_noted_and_the_scan_goes_on() {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let scanner = Scanner::new(&[spec("rate", r"rate ([0-9.]+)")]);
        let scan = copy_capped(&b"hello\nrate 2.5\n"[..], full, 100, Some(scanner));
        assert_eq!(scan.found["rate"], 2.5);
        assert_eq!(scan.log_errors.len(), 1, "{:?}", scan.log_errors);
        assert!(
            scan.log_errors[0].starts_with("log cut short after 0 bytes: No space left on device"),
            "{:?}",
            scan.log_errors
        );
    }

    #[test]
    fn metrics_survive_bad_bytes_and_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let mut input = b"rate 1.5\n\xff\xfe garbage\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 10_000));
        input.extend(b"\nrate 2.5 \xc3\n{\"verified\":true}");
        let scanner = Scanner::new(&[spec("rate", r"rate ([0-9.]+)")]);
        let scan = copy_capped(&input[..], File::create(&path).unwrap(), 100, Some(scanner));
        assert_eq!(scan.found["rate"], 2.5);
        assert_eq!(scan.last_line, "{\"verified\":true}");
        assert_eq!(scan.total_bytes, input.len() as u64);
        let log = std::fs::read(&path).unwrap();
        assert!(log.starts_with(b"rate 1.5\n\xff"));
        let note = String::from_utf8_lossy(&log[100..]).to_string();
        assert!(note.contains("capped at 100 bytes"), "{note}");
    }

    #[test]
    fn a_huge_line_is_scanned_only_in_part() {
        let mut input = vec![b'y'; 3 * SCAN_LINE_BYTES];
        input.extend(b"\nrate 7\n");
        let scan = Scanner::new(&[spec("rate", r"rate ([0-9]+)")]).scan_reader(&input[..]);
        assert_eq!(scan.found["rate"], 7.0);
        assert_eq!(scan.total_bytes, input.len() as u64);
    }
}
