//! The topology's view of the bounded input layer (`scalescope-files`): sysfs
//! trees and hwloc XML files are read through it, regular files only and only up
//! to a size limit, so a FIFO, a device such as `/dev/zero` or a huge file in a
//! recorded tree or an XML path ends in an error naming it, never a hang.

use std::io;
use std::path::Path;

use scalescope_files::{FileError, Kind};

use crate::TopoError;

/// The largest file read from a sysfs root (`/proc/cpuinfo` of a 1,024-CPU machine is
/// about 1.5 MB).
pub const MAX_FILE_BYTES: u64 = Kind::SYSFS.max_bytes;

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

/// Reads a regular file of at most `limit` bytes through the input layer.
pub(crate) fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let kind = Kind::new("topology file", limit, usize::MAX);
    scalescope_files::read(path, kind).map_err(|e| match e {
        FileError::Io { cause, .. } => ReadError::Io(cause),
        FileError::NotRegular { what, .. } => ReadError::Refused(format!(
            "is {what}, not a regular file; refusing to read it"
        )),
        FileError::TooLarge { .. } => {
            ReadError::Refused(format!("larger than {limit} bytes, refusing to read it"))
        }
        e => ReadError::Refused(e.to_string()),
    })
}
