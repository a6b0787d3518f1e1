//! Files across the program's boundary, in one place so every reader and writer
//! keeps the same promises.
//!
//! - [`input`]: what a user hands in (results files, CSV, graphs, `.tbl`, JSON
//!   documents, hostfiles, sysfs trees, hwloc XML). Regular files only, opened
//!   non-blocking and checked on the open descriptor, so a FIFO, `/dev/zero`, a
//!   directory or a socket is an error naming it, never a hang; a size limit per
//!   kind of file, said in the error; lines read with a bounded length, so a 1 GiB
//!   line costs at most the limit; errors quote at most a short, escaped excerpt.
//! - [`output`]: what the program writes for a user, inside a directory it owns
//!   ([`output::OutDir`]): below the directory the user named, no link is ever
//!   followed; files are created fresh (`O_EXCL|O_NOFOLLOW`, an existing entry
//!   removed first) or written aside and renamed; a path named inside a results
//!   file is read confined to its directory; the writer's lock is an `flock` on
//!   the directory itself.
//! - [`excerpt`]: a short, printable rendering of untrusted bytes for messages.

pub mod input;
pub mod output;

use std::path::PathBuf;

pub use input::{open, read, read_text, Input, Kind, Lines};
pub use output::{DirLock, OutDir};

/// Why a file could not be read or written. Each names the path; the cause is
/// part of the message (not a `source`), so an error chain prints it once.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{}: {cause}", path.display())]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("{}: {what}, not a regular file; a {kind} must be a regular file", path.display())]
    NotRegular {
        path: PathBuf,
        what: &'static str,
        kind: &'static str,
    },
    #[error("{}: larger than {} (the limit for a {kind})", path.display(), bytes_text(*limit))]
    TooLarge {
        path: PathBuf,
        kind: &'static str,
        limit: u64,
    },
    #[error("{}:{line}: a line longer than {} (the limit for a {kind}), starting `{start}`", path.display(), bytes_text(*limit as u64))]
    LineTooLong {
        path: PathBuf,
        line: usize,
        kind: &'static str,
        limit: usize,
        start: String,
    },
    #[error("{}:{line}: not UTF-8 text: `{excerpt}`", path.display())]
    NotUtf8 {
        path: PathBuf,
        line: usize,
        excerpt: String,
    },
    #[error("{}: a symbolic link; refusing to {action} through it", path.display())]
    Link { path: PathBuf, action: &'static str },
    #[error("{}: `{name}` is not a plain relative path inside this directory", dir.display())]
    Outside { dir: PathBuf, name: String },
}

impl FileError {
    pub(crate) fn io(path: impl Into<PathBuf>, cause: impl Into<std::io::Error>) -> FileError {
        FileError::Io {
            path: path.into(),
            cause: cause.into(),
        }
    }
}

/// `64 MiB`, `16 KiB`, `1 GiB`, `100 bytes`: a limit as people read it.
pub fn bytes_text(n: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    for (size, unit) in UNITS {
        if n >= size && n.is_multiple_of(size) {
            return format!("{} {unit}", n / size);
        }
    }
    format!("{n} bytes")
}

pub mod excerpt {
    //! Untrusted bytes as a short line a terminal shows safely: at most a few
    //! dozen characters, control characters (terminal escapes included) and
    //! invalid UTF-8 written as escapes, never the raw bytes.

    /// The longest excerpt quoted in an error, in characters.
    pub const EXCERPT_CHARS: usize = 40;

    /// At most `max_chars` characters of `bytes`, escaped; `...` marks a cut.
    pub fn escaped(bytes: &[u8], max_chars: usize) -> String {
        let mut out = String::new();
        let mut shown = 0;
        for chunk in bytes.utf8_chunks() {
            for c in chunk.valid().chars() {
                if shown == max_chars {
                    return out + "...";
                }
                push_char(&mut out, c);
                shown += 1;
            }
            for b in chunk.invalid() {
                if shown == max_chars {
                    return out + "...";
                }
                out += &format!("\\x{b:02x}");
                shown += 1;
            }
        }
        out
    }

    /// The start of a line for a message: [`EXCERPT_CHARS`] characters, escaped.
    pub fn of(bytes: &[u8]) -> String {
        escaped(bytes, EXCERPT_CHARS)
    }

    fn push_char(out: &mut String, c: char) {
        // Bidirectional overrides reorder what a terminal shows: escaped too.
        let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if c.is_control() || bidi {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn terminal_escapes_and_bad_bytes_are_written_as_escapes() {
            assert_eq!(escaped(b"ok \x1b[31mred\xff", 40), "ok \\u{1b}[31mred\\xff");
            assert_eq!(escaped("\u{202e}abc".as_bytes(), 40), "\\u{202e}abc");
            assert_eq!(escaped(b"abcdef", 3), "abc...");
            assert_eq!(escaped(&[0u8; 1000], 2), "\\u{0}\\u{0}...");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_read_as_units() {
        assert_eq!(bytes_text(64 << 20), "64 MiB");
        assert_eq!(bytes_text(1 << 30), "1 GiB");
        assert_eq!(bytes_text(1000), "1000 bytes");
    }
}
