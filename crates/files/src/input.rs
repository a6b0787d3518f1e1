//! Reading what a user hands in, bounded.
//!
//! [`open`] accepts a regular file only: it opens with `O_NONBLOCK|O_NOCTTY` (so a
//! FIFO cannot stall the open itself) and checks the type on the open descriptor
//! (so nothing can be swapped in between), then refuses a file larger than its
//! [`Kind`]'s limit before reading a byte. `-` is standard input where a command
//! reads one document ([`open_arg`]), bounded the same way while it is read.
//! [`Lines`] reads line by line keeping at most the kind's line limit, so a 1 GiB
//! line is an error after its first bytes, quoted as a short escaped excerpt.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::excerpt;
use crate::FileError;

/// A kind of input: its name in messages, its size limit and its line limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    pub what: &'static str,
    pub max_bytes: u64,
    pub max_line_bytes: usize,
}

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;
const GIB: u64 = 1 << 30;

impl Kind {
    /// `results.jsonl`: a line per run (a few KiB), a header with the topology
    /// (about 1 MiB for 1,000 PUs).
    pub const RESULTS: Kind = Kind::new("results file", 64 * GIB, 64 * MIB);
    /// A JSON document read whole (`mem ... --json`, `analyze --json` output).
    pub const JSON: Kind = Kind::new("JSON document", 64 << 20, 64 * MIB);
    /// A curve measured elsewhere (`import`).
    pub const CSV: Kind = Kind::new("CSV file", 256 << 20, MIB);
    /// An edge list or Matrix Market file (SNAP graphs reach tens of GB).
    pub const GRAPH: Kind = Kind::new("graph file", u64::MAX, 64 * KIB);
    /// A TPC-H `lineitem.tbl` (7.6 GB at scale factor 10).
    pub const TBL: Kind = Kind::new("TPC-H .tbl file", u64::MAX, 64 * KIB);
    /// An MPI hostfile.
    pub const HOSTFILE: Kind = Kind::new("hostfile", 16 << 20, 64 * KIB);
    /// A run's evidence series, named by a results file.
    pub const SERIES: Kind = Kind::new("evidence series file", 256 << 20, 256 * MIB);
    /// A file of a sysfs or procfs tree (`/proc/cpuinfo` of 1,024 CPUs is 1.5 MB).
    pub const SYSFS: Kind = Kind::new("sysfs file", 16 << 20, 16 * MIB);
    /// `lstopo --of xml` output.
    pub const HWLOC_XML: Kind = Kind::new("hwloc XML file", 256 << 20, 256 * MIB);
    /// A cache file scalescope wrote (`.csr`, `.cols`): mapped, never read whole.
    pub const CACHE: Kind = Kind::new("scalescope cache file", u64::MAX, 0);

    pub const fn new(what: &'static str, max_bytes: u64, max_line_bytes: usize) -> Kind {
        Kind {
            what,
            max_bytes,
            max_line_bytes,
        }
    }
}

/// An open input: a regular file, or standard input.
pub struct Input {
    path: PathBuf,
    kind: Kind,
    source: Box<dyn Read + Send>,
    read: u64,
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// Opens a regular file (links followed: the user named it) no larger than
/// `kind.max_bytes`.
///
/// # Errors
/// [`FileError::Io`] (missing, no permission, a link loop), [`FileError::NotRegular`]
/// (a FIFO, a device, a directory, a socket) or [`FileError::TooLarge`].
pub fn open(path: &Path, kind: Kind) -> Result<Input, FileError> {
    let file = open_regular(path, kind)?;
    Ok(Input {
        path: path.to_path_buf(),
        kind,
        source: Box::new(file),
        read: 0,
    })
}

/// As [`open`], the checked file itself (for readers that map it or read at
/// offsets, such as the `.csr` and `.cols` caches).
///
/// # Errors
/// As [`open`].
pub fn open_regular(path: &Path, kind: Kind) -> Result<File, FileError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(
            rustix::fs::OFlags::NONBLOCK.bits() as i32 | rustix::fs::OFlags::NOCTTY.bits() as i32,
        )
        .open(path)
        .map_err(|e| FileError::io(path, e))?;
    check_file(file, path, kind)
}

/// As [`open`], with `-` meaning standard input (for commands that read one
/// document).
///
/// # Errors
/// As [`open`].
pub fn open_arg(path: &Path, kind: Kind) -> Result<Input, FileError> {
    if path == Path::new("-") {
        return Ok(Input {
            path: PathBuf::from("<stdin>"),
            kind,
            source: Box::new(std::io::stdin()),
            read: 0,
        });
    }
    open(path, kind)
}

/// The type and size checks on an open file, as an input.
pub(crate) fn checked(file: File, path: &Path, kind: Kind) -> Result<Input, FileError> {
    let file = check_file(file, path, kind)?;
    Ok(Input {
        path: path.to_path_buf(),
        kind,
        source: Box::new(file),
        read: 0,
    })
}

/// The type and size checks on an open file, and the descriptor made blocking
/// again for reading.
fn check_file(file: File, path: &Path, kind: Kind) -> Result<File, FileError> {
    let meta = file.metadata().map_err(|e| FileError::io(path, e))?;
    if !meta.is_file() {
        return Err(FileError::NotRegular {
            path: path.to_path_buf(),
            what: file_kind(&meta),
            kind: kind.what,
        });
    }
    if meta.len() > kind.max_bytes {
        return Err(FileError::TooLarge {
            path: path.to_path_buf(),
            kind: kind.what,
            limit: kind.max_bytes,
        });
    }
    // A regular file never blocks; clearing O_NONBLOCK keeps reads plain.
    let flags = rustix::fs::fcntl_getfl(&file).map_err(|e| FileError::io(path, e))?;
    rustix::fs::fcntl_setfl(&file, flags - rustix::fs::OFlags::NONBLOCK)
        .map_err(|e| FileError::io(path, e))?;
    Ok(file)
}

/// What a file that is not a regular one is, for messages.
pub fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a plain file"
    }
}

impl Input {
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The whole input (at most the kind's limit).
    ///
    /// # Errors
    /// I/O errors, or [`FileError::TooLarge`] for input that grew past the limit
    /// (standard input, a file being written).
    pub fn read_all(mut self) -> Result<Vec<u8>, FileError> {
        let mut bytes = Vec::new();
        self.read_to_end(&mut bytes).map_err(|e| self.error_of(e))?;
        Ok(bytes)
    }

    /// The whole input as text: UTF-8 checked (the first bad line named, with an
    /// excerpt), a leading byte-order mark dropped.
    ///
    /// # Errors
    /// As [`Input::read_all`], and [`FileError::NotUtf8`].
    pub fn read_text(self) -> Result<String, FileError> {
        let path = self.path.clone();
        let mut bytes = self.read_all()?;
        if bytes.starts_with(b"\xef\xbb\xbf") {
            bytes.drain(..3);
        }
        String::from_utf8(bytes).map_err(|e| {
            let bytes = e.as_bytes();
            let at = e.utf8_error().valid_up_to();
            let start = bytes[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            FileError::NotUtf8 {
                path,
                line: bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1,
                excerpt: excerpt::of(&bytes[start..]),
            }
        })
    }

    /// Line by line, each at most the kind's line limit.
    pub fn lines(self) -> Lines {
        Lines {
            path: self.path.clone(),
            kind: self.kind,
            reader: BufReader::with_capacity(64 << 10, self),
            number: 0,
        }
    }

    /// The file error an I/O error from [`Read`] stands for (the size limit is
    /// reported through `io::ErrorKind::FileTooLarge`).
    pub fn error_of(&self, e: std::io::Error) -> FileError {
        error_of(&self.path, self.kind, e)
    }
}

fn error_of(path: &Path, kind: Kind, e: std::io::Error) -> FileError {
    if e.kind() == std::io::ErrorKind::FileTooLarge {
        FileError::TooLarge {
            path: path.to_path_buf(),
            kind: kind.what,
            limit: kind.max_bytes,
        }
    } else {
        FileError::io(path, e)
    }
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.kind.max_bytes.saturating_sub(self.read);
        if left == 0 {
            // One byte past the limit says whether there is more.
            let mut probe = [0u8; 1];
            return match self.source.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(std::io::ErrorKind::FileTooLarge.into()),
            };
        }
        let room = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = self.source.read(&mut buf[..room])?;
        self.read += n as u64;
        Ok(n)
    }
}

/// Lines of an [`Input`], each at most `kind.max_line_bytes` long.
pub struct Lines {
    path: PathBuf,
    kind: Kind,
    reader: BufReader<Input>,
    number: usize,
}

impl Lines {
    /// The number of the line last read (1-based; 0 before the first).
    pub fn number(&self) -> usize {
        self.number
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next line's bytes into `line` (its `\n` kept, so a last line without
    /// one shows); `Ok(false)` at the end.
    ///
    /// # Errors
    /// I/O errors, the size limit, or [`FileError::LineTooLong`] as soon as a
    /// line passes the limit (the rest is not read).
    pub fn next_raw(&mut self, line: &mut Vec<u8>) -> Result<bool, FileError> {
        line.clear();
        let limit = self.kind.max_line_bytes;
        loop {
            let buf = self
                .reader
                .fill_buf()
                .map_err(|e| error_of(&self.path, self.kind, e))?;
            if buf.is_empty() {
                if !line.is_empty() {
                    self.number += 1;
                }
                return Ok(!line.is_empty());
            }
            let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..=i], true),
                None => (buf, false),
            };
            if line.len() + chunk.len() > limit.saturating_add(1) {
                return Err(too_long(
                    &self.path,
                    self.kind,
                    self.number + 1,
                    line,
                    chunk,
                ));
            }
            line.extend_from_slice(chunk);
            let n = chunk.len();
            self.reader.consume(n);
            if done {
                self.number += 1;
                return Ok(true);
            }
        }
    }

    /// The next line as text, without its line ending (`\n` or `\r\n`); a
    /// byte-order mark at the start of the first line is dropped.
    ///
    /// # Errors
    /// As [`Lines::next_raw`], and [`FileError::NotUtf8`] naming the line.
    pub fn next_text(&mut self, buf: &mut Vec<u8>) -> Result<Option<String>, FileError> {
        Ok(self.next_str(buf)?.map(str::to_string))
    }

    /// As [`Lines::next_text`], borrowing the text from `buf` (no allocation per
    /// line once `buf` has grown).
    ///
    /// # Errors
    /// As [`Lines::next_text`].
    pub fn next_str<'b>(&mut self, buf: &'b mut Vec<u8>) -> Result<Option<&'b str>, FileError> {
        if !self.next_raw(buf)? {
            return Ok(None);
        }
        let mut bytes: &[u8] = buf.strip_suffix(b"\n").unwrap_or(buf);
        bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if self.number == 1 {
            bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        }
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(Some(s)),
            Err(_) => Err(FileError::NotUtf8 {
                path: self.path.clone(),
                line: self.number,
                excerpt: excerpt::of(bytes),
            }),
        }
    }
}

fn too_long(path: &Path, kind: Kind, number: usize, line: &[u8], chunk: &[u8]) -> FileError {
    let start: Vec<u8> = line.iter().chain(chunk).take(64).copied().collect();
    FileError::LineTooLong {
        path: path.to_path_buf(),
        line: number,
        kind: kind.what,
        limit: kind.max_line_bytes,
        start: excerpt::of(&start),
    }
}

impl Iterator for Lines {
    /// Line number (1-based) and text.
    type Item = Result<(usize, String), FileError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut buf = Vec::new();
        match self.next_text(&mut buf) {
            Ok(Some(text)) => Some(Ok((self.number, text))),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// A whole regular file of at most `kind.max_bytes`.
///
/// # Errors
/// As [`open`] and [`Input::read_all`].
pub fn read(path: &Path, kind: Kind) -> Result<Vec<u8>, FileError> {
    open(path, kind)?.read_all()
}

/// A whole regular file as UTF-8 text (a byte-order mark dropped).
///
/// # Errors
/// As [`open`] and [`Input::read_text`].
pub fn read_text(path: &Path, kind: Kind) -> Result<String, FileError> {
    open(path, kind)?.read_text()
}

#[cfg(test)]
mod tests;
