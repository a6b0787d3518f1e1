//! Checked binary files for prepared inputs (the `.csr` graph cache, the `.cols`
//! TPC-H column cache): sections of plain integers, a JSON description, and a
//! CRC-32 for every 16 KiB block of every section. A run maps the file read-only
//! ([`Blob::map`]) and its workers check the blocks they will read, each its own
//! range ([`Blob::column`], [`Blob::part`]): the input is read in place from the
//! page cache, never copied, and a corrupt file is refused.
//!
//! Layout (little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 16 | magic (the caller's) |
//! | 4 | format version (the caller's) |
//! | 4 | section count s |
//! | 8 | description length d |
//! | 16 x s | per section: byte offset in the file, byte length |
//! | d | description (JSON) |
//! | 4 x blocks | CRC-32 of each 16 KiB block of each section, section by section |
//! | 4 | CRC-32 of everything before it |
//! | ... | the sections, each at an offset that is a multiple of 4096 |

use std::fs::File;
use std::io::Write;
use std::ops::Range;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

pub use crate::mapping::{Column, Mapping};
use crate::pool::{chunk, Pool};

/// Bytes per checked block.
pub const BLOCK: usize = 16 * 1024;
const ALIGN: u64 = 4096;
/// Largest description or block table a file may claim (refused past it, before
/// allocating).
const MAX_HEADER: u64 = 1 << 30;

/// Why a cache file could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("{file}: {cause}")]
    Io {
        file: String,
        #[source]
        cause: std::io::Error,
    },
    #[error("{file}: {detail}")]
    Bad { file: String, detail: String },
    /// Not a regular file (a FIFO, a device), refused before reading.
    #[error(transparent)]
    File(#[from] scalescope_files::FileError),
}

/// Integers every bit pattern of which is a value, stored as their little-endian
/// bytes.
pub trait Plain: Copy + Default + Send + Sync + 'static {}
impl Plain for u8 {}
impl Plain for u32 {}
impl Plain for i32 {}
impl Plain for u64 {}

/// The bytes of a slice of plain integers.
pub fn bytes_of<T: Plain>(v: &[T]) -> &[u8] {
    // SAFETY: `Plain` types are integers without padding; any initialised integer
    // is readable as its bytes, and the length covers exactly the slice.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> BlobError + '_ {
    move |cause| BlobError::Io {
        file: path.display().to_string(),
        cause,
    }
}

/// Why a section lies outside the file (or over its header), if one does.
fn outside(sections: &[(u64, u64)], head_len: u64, size: u64) -> Option<String> {
    let (i, s) = sections
        .iter()
        .enumerate()
        .find(|(_, s)| s.0 < head_len || s.0.checked_add(s.1).is_none_or(|end| end > size))?;
    Some(format!(
        "section {i} ({} bytes at {}) lies outside the {size}-byte file: truncated or corrupted",
        s.1, s.0
    ))
}

/// `dev:ino:size:mtime_ns:ctime_ns` of an open file.
fn identity(m: &std::fs::Metadata) -> String {
    use std::os::unix::fs::MetadataExt;
    let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
    let (mtime, ctime) = (ns(m.mtime(), m.mtime_nsec()), ns(m.ctime(), m.ctime_nsec()));
    format!("{}:{}:{}:{mtime}:{ctime}", m.dev(), m.ino(), m.len())
}

fn pad_to(x: u64) -> u64 {
    x.div_ceil(ALIGN) * ALIGN
}

/// The CRC-32 of every [`BLOCK`] of the concatenation of `pieces`.
fn block_crcs(pieces: &[&[u8]]) -> Vec<u32> {
    let mut out = Vec::new();
    let (mut h, mut filled) = (crc32fast::Hasher::new(), 0usize);
    for piece in pieces {
        let mut rest = *piece;
        while !rest.is_empty() {
            let take = rest.len().min(BLOCK - filled);
            h.update(&rest[..take]);
            (filled, rest) = (filled + take, &rest[take..]);
            if filled == BLOCK {
                out.push(std::mem::take(&mut h).finalize());
                filled = 0;
            }
        }
    }
    if filled > 0 {
        out.push(h.finalize());
    }
    out
}

/// Writes a checked file: each section is the concatenation of its pieces. The file
/// appears under `path` only once complete and on disk (written beside it, synced,
/// then renamed), so no run that maps it waits on its write-back.
///
/// # Errors
/// [`BlobError::Io`] naming the file.
pub fn write(
    path: &Path,
    magic: &[u8; 16],
    version: u32,
    description: &serde_json::Value,
    sections: &[Vec<&[u8]>],
) -> Result<(), BlobError> {
    let desc = description.to_string().into_bytes();
    let lens: Vec<u64> = sections
        .iter()
        .map(|s| s.iter().map(|p| p.len() as u64).sum())
        .collect();
    let crcs: Vec<u32> = sections.iter().flat_map(|s| block_crcs(s)).collect();
    let header_len =
        32 + 16 * sections.len() as u64 + desc.len() as u64 + 4 * crcs.len() as u64 + 4;
    let mut offsets = Vec::with_capacity(lens.len());
    let mut at = pad_to(header_len);
    for len in &lens {
        offsets.push(at);
        at = pad_to(at + len);
    }
    let mut head = Vec::with_capacity(header_len as usize);
    head.extend_from_slice(magic);
    head.extend_from_slice(&version.to_le_bytes());
    head.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    head.extend_from_slice(&(desc.len() as u64).to_le_bytes());
    for (o, l) in offsets.iter().zip(&lens) {
        head.extend_from_slice(&o.to_le_bytes());
        head.extend_from_slice(&l.to_le_bytes());
    }
    head.extend_from_slice(&desc);
    crcs.iter()
        .for_each(|c| head.extend_from_slice(&c.to_le_bytes()));
    let sum = crc32fast::hash(&head);
    head.extend_from_slice(&sum.to_le_bytes());
    // A device, FIFO or directory of that name is not ours to replace.
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if !(m.is_file() || m.is_symlink()) {
            return Err(BlobError::Bad {
                file: path.display().to_string(),
                detail: "exists and is not a regular file; refusing to replace it".into(),
            });
        }
    }
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    // Created fresh: an entry of that name (a link planted there) is removed, never
    // written through.
    let _ = std::fs::remove_file(&tmp);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)
        .map_err(io(&tmp))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let mut written = head.len() as u64;
    w.write_all(&head).map_err(io(&tmp))?;
    for (section, offset) in sections.iter().zip(&offsets) {
        w.write_all(&vec![0u8; (offset - written) as usize])
            .map_err(io(&tmp))?;
        written = *offset;
        for piece in section {
            w.write_all(piece).map_err(io(&tmp))?;
            written += piece.len() as u64;
        }
    }
    w.flush().map_err(io(&tmp))?;
    w.get_ref().sync_all().map_err(io(&tmp))?;
    drop(w);
    std::fs::rename(&tmp, path).map_err(io(path))
}

/// An open checked file: its description and sections, each read on demand.
#[derive(Debug)]
pub struct Blob {
    file: File,
    name: String,
    version: u32,
    pub description: serde_json::Value,
    sections: Vec<(u64, u64)>,
    /// Per section, the CRC-32 of each block.
    crcs: Vec<Vec<u32>>,
    header_crc: u32,
    /// The open file's device, inode, size, mtime and ctime (ns), taken at open.
    identity: String,
    /// Block checks skipped: a token named this very file as checked in full.
    trusted: bool,
}

/// A cache format version this scalescope reads, else why not.
fn known_version(version: u32, versions: &[u32]) -> Result<(), String> {
    if versions.contains(&version) {
        return Ok(());
    }
    let known: Vec<String> = versions.iter().map(|v| v.to_string()).collect();
    Err(format!(
        "cache format version {version}, this scalescope reads {}",
        known.join(" and ")
    ))
}

impl Blob {
    /// Opens `path`, checking the magic, the version (one of `versions`), the
    /// header's checksum and that every section lies inside the file.
    ///
    /// # Errors
    /// [`BlobError`] naming the file and what is wrong with it.
    pub fn open(path: &Path, magic: &[u8; 16], versions: &[u32]) -> Result<Blob, BlobError> {
        let name = path.display().to_string();
        let bad = |detail: String| BlobError::Bad {
            file: name.clone(),
            detail,
        };
        // A regular file only (a FIFO or a device named as a cache is refused,
        // never waited on).
        let file = scalescope_files::input::open_regular(path, scalescope_files::Kind::CACHE)?;
        let meta = file.metadata().map_err(io(path))?;
        let size = meta.len();
        let mut fixed = [0u8; 32];
        file.read_exact_at(&mut fixed, 0)
            .map_err(|_| bad("shorter than a header: not a scalescope cache".into()))?;
        if &fixed[..16] != magic {
            return Err(bad("not this kind of scalescope cache (bad magic)".into()));
        }
        let u32_at = |b: &[u8], o: usize| le_bytes(&b[o..o + 4]) as u32;
        let u64_at = |b: &[u8], o: usize| le_bytes(&b[o..o + 8]);
        let version = u32_at(&fixed, 16);
        known_version(version, versions).map_err(bad)?;
        let (count, dlen) = (u64::from(u32_at(&fixed, 20)), u64_at(&fixed, 24));
        if count > 64 || dlen > MAX_HEADER {
            return Err(bad(format!(
                "{count} sections, a {dlen}-byte description: corrupted"
            )));
        }
        let mut table = vec![0u8; (16 * count) as usize];
        file.read_exact_at(&mut table, 32)
            .map_err(|_| bad("truncated in its section table".into()))?;
        let sections: Vec<(u64, u64)> = (0..count as usize)
            .map(|i| (u64_at(&table, 16 * i), u64_at(&table, 16 * i + 8)))
            .collect();
        let blocks: u64 = sections.iter().map(|s| s.1.div_ceil(BLOCK as u64)).sum();
        if blocks * 4 > MAX_HEADER {
            return Err(bad(format!("{blocks} blocks claimed: corrupted")));
        }
        let head_len = 32 + 16 * count + dlen + 4 * blocks;
        let mut head = vec![0u8; head_len as usize + 4];
        file.read_exact_at(&mut head, 0)
            .map_err(|_| bad("truncated in its header".into()))?;
        let header_crc = u32_at(&head, head_len as usize);
        if crc32fast::hash(&head[..head_len as usize]) != header_crc {
            return Err(bad("header checksum mismatch: the file is corrupted".into()));
        }
        if let Some(why) = outside(&sections, head_len, size) {
            return Err(bad(why));
        }
        let d_at = (32 + 16 * count) as usize;
        let description = serde_json::from_slice(&head[d_at..d_at + dlen as usize])
            .map_err(|e| bad(format!("description is not JSON: {e}")))?;
        let mut at = d_at + dlen as usize;
        let crcs = sections
            .iter()
            .map(|s| {
                let n = s.1.div_ceil(BLOCK as u64) as usize;
                let v = (0..n).map(|k| u32_at(&head, at + 4 * k)).collect();
                at += 4 * n;
                v
            })
            .collect();
        Ok(Blob {
            file,
            name,
            version,
            description,
            sections,
            crcs,
            header_crc,
            identity: identity(&meta),
            trusted: false,
        })
    }

    /// A token naming this file as it was opened (device, inode, size, modification
    /// and change times) and its contents (format version, header checksum): what a
    /// sweep's preparation, having checked the file in full, hands its runs.
    pub fn token(&self) -> String {
        format!(
            "v{}:{}:{:08x}",
            self.version, self.identity, self.header_crc
        )
    }

    /// Skips the block checks of [`Blob::column`] and [`Blob::part`] when `token` is
    /// this file's [`Blob::token`]: the same file, unchanged since a check of every
    /// block. Any other token (another inode, a rewrite, another format or contents)
    /// leaves every check in place. Returns whether the token was taken.
    pub fn trust(&mut self, token: Option<&str>) -> bool {
        self.trusted = token.is_some_and(|t| t == self.token());
        self.trusted
    }

    pub fn version(&self) -> u32 {
        self.version
    }

    /// A short identity of the contents (the header checksum covers every block's).
    pub fn fingerprint(&self) -> String {
        format!("{:08x}", self.header_crc)
    }

    fn bad(&self, detail: String) -> BlobError {
        BlobError::Bad {
            file: self.name.clone(),
            detail,
        }
    }

    /// Elements of `T` in section `s`.
    ///
    /// # Errors
    /// No such section, or a length that is not a whole number of elements.
    pub fn len_of<T: Plain>(&self, s: usize) -> Result<usize, BlobError> {
        let size = std::mem::size_of::<T>() as u64;
        match self.sections.get(s) {
            Some(&(_, len)) if len % size == 0 => Ok((len / size) as usize),
            Some(&(_, len)) => Err(self.bad(format!(
                "section {s} holds {len} bytes, not whole {size}-byte values"
            ))),
            None => Err(self.bad(format!("no section {s}"))),
        }
    }
}

impl Blob {
    /// Maps the whole file read-only, its pages populated from the page cache now
    /// (`populate`) or as they are first read.
    ///
    /// # Errors
    /// [`BlobError::Io`] when the map fails.
    pub fn map(&self, populate: bool) -> Result<std::sync::Arc<Mapping>, BlobError> {
        use std::os::fd::AsRawFd;
        let len = self
            .file
            .metadata()
            .map(|m| m.len() as usize)
            .map_err(|cause| BlobError::Io {
                file: self.name.clone(),
                cause,
            })?;
        if len == 0 {
            return Ok(std::sync::Arc::new(Mapping {
                ptr: std::ptr::null(),
                len: 0,
            }));
        }
        // SAFETY: a fresh read-only private mapping of an open file descriptor; the
        // result is checked before use and unmapped once, in `Drop`.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | if populate { libc::MAP_POPULATE } else { 0 },
                self.file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(BlobError::Io {
                file: self.name.clone(),
                cause: std::io::Error::last_os_error(),
            });
        }
        Ok(std::sync::Arc::new(Mapping {
            ptr: ptr.cast(),
            len,
        }))
    }

    /// Section `s` of the mapped file as a column, every block checked on the
    /// pool's workers (each its share of the blocks).
    ///
    /// # Errors
    /// A section off the map or a checksum mismatch.
    pub fn column<T: Plain>(
        &self,
        map: &std::sync::Arc<Mapping>,
        s: usize,
        pool: &Pool,
    ) -> Result<Column<T>, BlobError> {
        let len = self.len_of::<T>(s)?;
        let (offset, bytes) = (self.sections[s].0 as usize, self.sections[s].1 as usize);
        if !offset.is_multiple_of(ALIGN as usize) || offset + bytes > map.len {
            return Err(self.bad(format!("section {s} is not page-aligned inside the file")));
        }
        let data = &map.bytes()[offset..offset + bytes];
        let blocks = if self.trusted {
            0
        } else {
            bytes.div_ceil(BLOCK)
        };
        let t = pool.threads();
        let bad: Vec<usize> = pool
            .broadcast(|i| {
                chunk(blocks, t, i, 1)
                    .filter(|&b| {
                        let block = &data[b * BLOCK..((b + 1) * BLOCK).min(bytes)];
                        crc32fast::hash(block) != self.crcs[s][b]
                    })
                    .collect::<Vec<_>>()
            })
            .concat();
        if let Some(b) = bad.first() {
            return Err(self.bad(format!(
                "checksum mismatch in block {b} of section {s}: the file is corrupted"
            )));
        }
        Ok(Column::Mapped {
            map: map.clone(),
            offset,
            len,
        })
    }
}

impl Blob {
    /// Elements `r` of section `s` of the mapped file as a column read in place:
    /// `prepare` first gets its bytes (to fault them in, move them), then every block
    /// of it is checked on the calling thread. `r` must begin on a block and end on
    /// one or at the section's end (ranges from [`split`] do).
    ///
    /// # Errors
    /// A range off the blocks or the map, or a checksum mismatch.
    pub fn part<T: Plain>(
        &self,
        map: &std::sync::Arc<Mapping>,
        s: usize,
        r: Range<usize>,
        prepare: impl FnOnce(&[u8]),
    ) -> Result<Column<T>, BlobError> {
        let size = std::mem::size_of::<T>();
        let (offset, len) = (self.sections[s].0 as usize, self.sections[s].1 as usize);
        let (begin, end) = (r.start * size, r.end * size);
        if !offset.is_multiple_of(ALIGN as usize)
            || !begin.is_multiple_of(BLOCK)
            || (!end.is_multiple_of(BLOCK) && end != len)
            || begin > end
            || end > len
            || offset + len > map.len
        {
            return Err(self.bad(format!(
                "bytes {begin}..{end} of section {s} do not lie on its {BLOCK}-byte blocks"
            )));
        }
        let data = &map.bytes()[offset + begin..offset + end];
        prepare(data);
        let checked = if self.trusted { &[][..] } else { data };
        for (k, block) in checked.chunks(BLOCK).enumerate() {
            if crc32fast::hash(block) != self.crcs[s][begin / BLOCK + k] {
                return Err(self.bad(format!(
                    "checksum mismatch in block {} of section {s}: the file is corrupted",
                    begin / BLOCK + k
                )));
            }
        }
        Ok(Column::Mapped {
            map: map.clone(),
            offset: offset + begin,
            len: r.len(),
        })
    }
}

/// Worker `i` of `t`'s range of a section of `len` elements of `T`, on block
/// boundaries.
pub fn split<T>(len: usize, t: usize, i: usize) -> Range<usize> {
    chunk(len, t, i, (BLOCK / std::mem::size_of::<T>()).max(1))
}

/// A little-endian unsigned integer of up to 8 bytes (the caller slices exactly
/// the field's width).
pub(crate) fn le_bytes(b: &[u8]) -> u64 {
    b.iter().rev().fold(0, |v, &x| v << 8 | u64::from(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_in_parts_and_every_corruption_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.bin");
        let a: Vec<u32> = (0..40_000).collect();
        let b: Vec<u8> = (0..70_000u32).map(|x| x as u8).collect();
        let desc = serde_json::json!({"n": 40_000});
        let magic = b"SCALESCOPE-TEST\0";
        write(
            &path,
            magic,
            3,
            &desc,
            &[vec![&bytes_of(&a)[..8], &bytes_of(&a)[8..]], vec![&b]],
        )
        .unwrap();
        let blob = Blob::open(&path, magic, &[3]).unwrap();
        assert_eq!(blob.description, desc);
        assert_eq!(blob.len_of::<u32>(0).unwrap(), a.len());
        let map = blob.map(false).unwrap();
        for t in [1, 3] {
            let mut back = Vec::new();
            for i in 0..t {
                let mut seen = 0;
                let r = split::<u8>(b.len(), t, i);
                let col = blob.part::<u8>(&map, 1, r, |x| seen = x.len()).unwrap();
                assert_eq!(seen, col.len());
                back.extend_from_slice(&col);
            }
            assert_eq!(back, b);
        }
        assert_eq!(*blob.part::<u32>(&map, 0, 0..a.len(), |_| ()).unwrap(), a);
        assert!(blob.part::<u32>(&map, 0, 1..10, |_| ()).is_err());
        assert!(Blob::open(&path, magic, &[4])
            .unwrap_err()
            .to_string()
            .contains("version 3"));
        let good = std::fs::read(&path).unwrap();
        let mut bytes = good.clone();
        let at = bytes.len() - 1000;
        bytes[at] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let blob = Blob::open(&path, magic, &[3]).unwrap();
        let map = blob.map(false).unwrap();
        let e = blob.part::<u8>(&map, 1, 0..b.len(), |_| ()).unwrap_err();
        assert!(
            e.to_string()
                .contains("checksum mismatch in block 4 of section 1"),
            "{e}"
        );
        let mut bytes = good.clone();
        bytes[40] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(Blob::open(&path, magic, &[3]).is_err());
        std::fs::write(&path, &good[..good.len() - 5]).unwrap();
        assert!(Blob::open(&path, magic, &[3])
            .unwrap_err()
            .to_string()
            .contains("outside"));
    }
}
