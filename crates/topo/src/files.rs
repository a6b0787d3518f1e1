//! Bounded reading of input files: only regular files (after following links), and
//! only up to a size limit, so a FIFO, a device such as `/dev/zero` or a huge file in
//! a recorded tree or an XML path ends in an error naming it, never a hang.

use std::fs;
use std::io;
use std::path::Path;

use crate::TopoError;

/// The largest file read from a sysfs root (`/proc/cpuinfo` of a 1,024-CPU machine is
/// about 1.5 MB).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Reads a regular file of at most `limit` bytes (following links).
///
/// # Errors
/// [`TopoError::Io`] when it cannot be read, [`TopoError::Parse`] when it is not a
/// regular file or is larger than `limit`.
pub fn read_file(path: &Path, limit: u64) -> Result<Vec<u8>, TopoError> {
    read_regular(path, limit).map_err(|e| match e {
        ReadError::Io(source) => TopoError::Io {
            path: path.to_path_buf(),
            source,
        },
        ReadError::Refused(detail) => TopoError::Parse {
            path: path.to_path_buf(),
            detail,
        },
    })
}

pub(crate) enum ReadError {
    Io(io::Error),
    Refused(String),
}

/// Reads a regular file of at most `limit` bytes. The type is checked on the opened
/// file (opened non-blocking, so a FIFO cannot stall the open itself).
pub(crate) fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if meta.is_dir() {
        return Err(ReadError::Refused("is a directory, expected a file".into()));
    }
    if !meta.is_file() {
        return Err(ReadError::Refused(format!(
            "is not a regular file ({}), refusing to read it",
            file_kind(&meta)
        )));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::Refused(format!(
            "larger than {limit} bytes, refusing to read it"
        )));
    }
    Ok(bytes)
}

fn file_kind(meta: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_fifo() {
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
