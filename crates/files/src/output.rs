//! Writing inside a directory the program owns.
//!
//! An [`OutDir`] is a directory the user named (links in that name are followed:
//! it is theirs), held open. Everything below it is reached from the open
//! descriptor one component at a time with `O_NOFOLLOW`, so a link planted
//! inside (`logs -> /etc`, `summary.csv -> ~/.bashrc`) is never followed:
//! files are created fresh after removing whatever entry had their name
//! (`O_CREAT|O_EXCL|O_NOFOLLOW`), or written to a fresh file beside them and
//! renamed over the name; a subdirectory that is a link is an error; a file
//! appended to must be a regular file with one link. Reads of paths named
//! inside results files go through [`OutDir::open_input`], confined the same way.
//! The writer's lock is an `flock` on the directory itself, so no file can be
//! deleted to get around it.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use crate::input::{self, Input, Kind};
use crate::FileError;

/// A directory the program writes in, held open.
#[derive(Debug, Clone)]
pub struct OutDir {
    path: PathBuf,
    fd: Arc<OwnedFd>,
}

/// An exclusive `flock` on an [`OutDir`], released when dropped (or when the
/// process ends, however it ends).
#[derive(Debug)]
pub struct DirLock {
    _fd: OwnedFd,
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

fn new_file_mode() -> Mode {
    Mode::from_raw_mode(0o666)
}

impl OutDir {
    /// Creates `path` (and its parents) if needed and opens it.
    ///
    /// # Errors
    /// [`FileError::Io`] naming the directory.
    pub fn create(path: &Path) -> Result<OutDir, FileError> {
        std::fs::create_dir_all(path).map_err(|e| FileError::io(path, e))?;
        OutDir::open(path)
    }

    /// Opens an existing directory.
    ///
    /// # Errors
    /// [`FileError::Io`] naming the directory (missing, not a directory).
    pub fn open(path: &Path) -> Result<OutDir, FileError> {
        let fd = rustix::fs::openat(rustix::fs::CWD, path, DIR_FLAGS, Mode::empty())
            .map_err(|e| FileError::io(path, e))?;
        Ok(OutDir {
            path: path.to_path_buf(),
            fd: Arc::new(fd),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of `rel` inside this directory, for messages and records.
    pub fn join(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.path.join(rel)
    }

    /// `rel`'s components: plain names only (no `..`, no root, not empty).
    fn parts<'a>(&self, rel: &'a Path) -> Result<Vec<&'a OsStr>, FileError> {
        let mut parts = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(name) => parts.push(name),
                Component::CurDir => {}
                _ => return Err(self.outside(rel)),
            }
        }
        if parts.is_empty() {
            return Err(self.outside(rel));
        }
        Ok(parts)
    }

    fn outside(&self, rel: &Path) -> FileError {
        FileError::Outside {
            dir: self.path.clone(),
            name: crate::excerpt::escaped(rel.as_os_str().as_encoded_bytes(), 200),
        }
    }

    /// Opens the directory `parts` names below this one, never through a link;
    /// with `create`, missing directories are made.
    fn walk(&self, parts: &[&OsStr], create: bool) -> Result<OwnedFd, FileError> {
        let mut fd = rustix::fs::openat(&*self.fd, ".", DIR_FLAGS, Mode::empty())
            .map_err(|e| FileError::io(&self.path, e))?;
        let mut path = self.path.clone();
        for name in parts {
            path.push(name);
            if create {
                match rustix::fs::mkdirat(&fd, *name, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(FileError::io(&path, e)),
                }
            }
            fd = match rustix::fs::openat(&fd, *name, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty()) {
                Ok(next) => next,
                // A link opened with O_DIRECTORY|O_NOFOLLOW reads as ENOTDIR.
                Err(Errno::NOTDIR) if is_link(&fd, name) => {
                    return Err(link_or_io(&path, Errno::LOOP, "write"))
                }
                Err(e) => return Err(link_or_io(&path, e, "write")),
            };
        }
        Ok(fd)
    }

    /// The directory holding `rel` (made if missing), and `rel`'s last name.
    fn parent_of<'a>(&self, rel: &'a Path) -> Result<(OwnedFd, &'a OsStr), FileError> {
        let parts = self.parts(rel)?;
        let (leaf, dirs) = parts.split_last().ok_or_else(|| self.outside(rel))?;
        Ok((self.walk(dirs, true)?, leaf))
    }

    /// The subdirectory `rel` (made if missing) as a directory of its own.
    ///
    /// # Errors
    /// [`FileError::Link`] where a component is a link, or I/O errors.
    pub fn subdir(&self, rel: impl AsRef<Path>) -> Result<OutDir, FileError> {
        let rel = rel.as_ref();
        let fd = self.walk(&self.parts(rel)?, true)?;
        Ok(OutDir {
            path: self.path.join(rel),
            fd: Arc::new(fd),
        })
    }

    /// A fresh, empty file at `rel`: whatever entry had that name (a file, a
    /// link) is removed first, and the new one is created with
    /// `O_CREAT|O_EXCL|O_NOFOLLOW`, so nothing is ever written through a link.
    ///
    /// # Errors
    /// A directory of that name, a link on the way, or I/O errors.
    pub fn create_file(&self, rel: impl AsRef<Path>) -> Result<File, FileError> {
        let rel = rel.as_ref();
        let (dir, leaf) = self.parent_of(rel)?;
        let path = self.path.join(rel);
        replaceable(&dir, leaf, &path)?;
        match rustix::fs::unlinkat(&dir, leaf, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(e) => return Err(FileError::io(&path, e)),
        }
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&dir, leaf, flags, new_file_mode())
            .map_err(|e| link_or_io(&path, e, "write"))?;
        Ok(File::from(fd))
    }

    /// Writes `bytes` to `rel` whole or not at all: into a fresh file beside it,
    /// synced, then renamed over the name (replacing a link, never following it).
    ///
    /// # Errors
    /// As [`OutDir::create_file`]; the file aside is removed on failure.
    pub fn write_file(&self, rel: impl AsRef<Path>, bytes: &[u8]) -> Result<(), FileError> {
        self.write_with(rel, |f| f.write_all(bytes))
    }

    /// As [`OutDir::write_file`], the content written by `fill`.
    ///
    /// # Errors
    /// As [`OutDir::write_file`], and `fill`'s error.
    pub fn write_with(
        &self,
        rel: impl AsRef<Path>,
        fill: impl FnOnce(&mut File) -> std::io::Result<()>,
    ) -> Result<(), FileError> {
        let rel = rel.as_ref();
        let (dir, leaf) = self.parent_of(rel)?;
        let path = self.path.join(rel);
        replaceable(&dir, leaf, &path)?;
        let aside = aside_name(leaf);
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&dir, &aside, flags, new_file_mode())
            .map_err(|e| link_or_io(&path, e, "write"))?;
        let mut file = File::from(fd);
        let written = fill(&mut file)
            .and_then(|()| file.sync_data())
            .map_err(|e| FileError::io(&path, e))
            .and_then(|()| {
                rustix::fs::renameat(&dir, &aside, &dir, leaf).map_err(|e| FileError::io(&path, e))
            });
        if written.is_err() {
            let _ = rustix::fs::unlinkat(&dir, &aside, AtFlags::empty());
        }
        written
    }

    /// An existing regular file with a single link, opened to read and append.
    ///
    /// # Errors
    /// [`FileError::Link`] for a link, an error for a file with other names (a
    /// hard link planted to a file elsewhere), or I/O errors.
    pub fn open_append(&self, rel: impl AsRef<Path>) -> Result<File, FileError> {
        let rel = rel.as_ref();
        let parts = self.parts(rel)?;
        let (leaf, dirs) = parts.split_last().ok_or_else(|| self.outside(rel))?;
        let dir = self.walk(dirs, false)?;
        let path = self.path.join(rel);
        let flags =
            OFlags::RDWR | OFlags::APPEND | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&dir, *leaf, flags, Mode::empty())
            .map_err(|e| link_or_io(&path, e, "write"))?;
        let st = rustix::fs::fstat(&fd).map_err(|e| FileError::io(&path, e))?;
        if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
            return Err(FileError::io(
                &path,
                std::io::Error::other("not a regular file"),
            ));
        }
        if st.st_nlink != 1 {
            return Err(FileError::io(
                &path,
                std::io::Error::other(format!(
                    "has {} names (hard links); refusing to append to a file shared with another place",
                    st.st_nlink
                )),
            ));
        }
        let file = File::from(fd);
        let flags = rustix::fs::fcntl_getfl(&file).map_err(|e| FileError::io(&path, e))?;
        rustix::fs::fcntl_setfl(&file, flags - OFlags::NONBLOCK)
            .map_err(|e| FileError::io(&path, e))?;
        Ok(file)
    }

    /// Opens `rel`, a path named inside a results file, to read it confined to
    /// this directory: plain names only, no link followed, a regular file of at
    /// most `kind.max_bytes`.
    ///
    /// # Errors
    /// [`FileError::Outside`] for `..` or an absolute path, [`FileError::Link`],
    /// and [`input::open`]'s errors.
    pub fn open_input(&self, rel: impl AsRef<Path>, kind: Kind) -> Result<Input, FileError> {
        let rel = rel.as_ref();
        let parts = self.parts(rel)?;
        let (leaf, dirs) = parts.split_last().ok_or_else(|| self.outside(rel))?;
        let path = self.path.join(rel);
        let dir = self.walk(dirs, false).map_err(|e| match e {
            FileError::Link { path, .. } => FileError::Link {
                path,
                action: "read",
            },
            e => e,
        })?;
        let flags =
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&dir, *leaf, flags, Mode::empty())
            .map_err(|e| link_or_io(&path, e, "read"))?;
        input::checked(File::from(fd), &path, kind)
    }

    /// Whether an entry named `rel` exists (a link counts, whatever it points to).
    pub fn exists(&self, rel: impl AsRef<Path>) -> bool {
        let Ok(parts) = self.parts(rel.as_ref()) else {
            return false;
        };
        let Some((leaf, dirs)) = parts.split_last() else {
            return false;
        };
        self.walk(dirs, false)
            .is_ok_and(|dir| rustix::fs::statat(&dir, *leaf, AtFlags::SYMLINK_NOFOLLOW).is_ok())
    }

    /// Removes the file (or link) `rel`; a missing one is not an error.
    ///
    /// # Errors
    /// I/O errors naming the file.
    pub fn remove_file(&self, rel: impl AsRef<Path>) -> Result<(), FileError> {
        let rel = rel.as_ref();
        let parts = self.parts(rel)?;
        let (leaf, dirs) = parts.split_last().ok_or_else(|| self.outside(rel))?;
        let dir = self.walk(dirs, false)?;
        match rustix::fs::unlinkat(&dir, *leaf, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(FileError::io(self.path.join(rel), e)),
        }
    }

    /// The names in this directory.
    ///
    /// # Errors
    /// I/O errors naming the directory.
    pub fn names(&self) -> Result<Vec<OsString>, FileError> {
        let fd = rustix::fs::openat(&*self.fd, ".", DIR_FLAGS, Mode::empty())
            .map_err(|e| FileError::io(&self.path, e))?;
        let dir = rustix::fs::Dir::read_from(&fd).map_err(|e| FileError::io(&self.path, e))?;
        let mut names = Vec::new();
        for entry in dir {
            let entry = entry.map_err(|e| FileError::io(&self.path, e))?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                use std::os::unix::ffi::OsStrExt;
                names.push(OsStr::from_bytes(name).to_os_string());
            }
        }
        Ok(names)
    }

    /// The process holding this directory's `flock`, as the kernel lists it
    /// (`/proc/locks`: the lock's own record, which no file can fake or lose);
    /// `None` where the kernel does not say (another PID namespace, a filesystem
    /// whose device the listing names differently).
    pub fn lock_holder(&self) -> Option<u32> {
        let st = rustix::fs::fstat(&*self.fd).ok()?;
        let dev = rustix::fs::major(st.st_dev);
        let want = format!(
            "{dev:02x}:{:02x}:{}",
            rustix::fs::minor(st.st_dev),
            st.st_ino
        );
        let text = crate::read_text(Path::new("/proc/locks"), Kind::SYSFS).ok()?;
        text.lines().find_map(|l| {
            // `N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE START END` (waiters read `N: -> FLOCK`).
            let f: Vec<&str> = l.split_whitespace().collect();
            let held = f.get(1) == Some(&"FLOCK") && f.get(5) == Some(&want.as_str());
            held.then(|| f.get(4)?.parse::<u32>().ok())
                .flatten()
                .filter(|p| *p > 0)
        })
    }

    /// Takes the directory's exclusive lock, or `Ok(None)` while another process
    /// holds it. The lock is on the directory itself: deleting any file in it
    /// does not release it.
    ///
    /// # Errors
    /// I/O errors naming the directory (a filesystem without `flock`).
    pub fn try_lock(&self) -> Result<Option<DirLock>, FileError> {
        let fd = rustix::fs::openat(&*self.fd, ".", DIR_FLAGS, Mode::empty())
            .map_err(|e| FileError::io(&self.path, e))?;
        match rustix::fs::flock(&fd, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(DirLock { _fd: fd })),
            Err(Errno::WOULDBLOCK) => Ok(None),
            Err(e) => Err(FileError::io(&self.path, e)),
        }
    }
}

/// A fresh name beside `leaf` for a file being written: hidden, and unique to
/// this process and write.
fn aside_name(leaf: &OsStr) -> OsString {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut name = OsString::from(".");
    name.push(leaf);
    name.push(format!(
        ".{}-{}.partial",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    name
}

/// Whether `name` is a file [`OutDir::write_file`] left aside for `leaf` (a
/// writer killed before its rename).
pub fn is_aside_of(name: &OsStr, leaf: &str) -> bool {
    let name = name.to_string_lossy();
    name.strip_prefix('.')
        .and_then(|n| n.strip_prefix(leaf))
        .is_some_and(|rest| rest.starts_with('.') && rest.ends_with(".partial"))
}

/// Whether the entry `name` may be replaced by a file: absent, a regular file
/// or a link (removed, not followed). A device, FIFO, socket or directory of
/// that name is someone else's: refused, never replaced (`--out /dev/null`).
fn replaceable(dir: &OwnedFd, name: &OsStr, path: &Path) -> Result<(), FileError> {
    use rustix::fs::FileType;
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(FileError::io(path, e)),
        Ok(st) => match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile | FileType::Symlink => Ok(()),
            other => Err(FileError::io(
                path,
                std::io::Error::other(format!(
                    "exists and is {}; refusing to replace it with a file",
                    match other {
                        FileType::Directory => "a directory",
                        FileType::Fifo => "a FIFO",
                        FileType::CharacterDevice => "a character device",
                        FileType::BlockDevice => "a block device",
                        FileType::Socket => "a socket",
                        _ => "not a regular file",
                    }
                )),
            )),
        },
    }
}

fn is_link(dir: &OwnedFd, name: &OsStr) -> bool {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Symlink
    })
}

/// `ELOOP` from an `O_NOFOLLOW` open is a link where none may be.
fn link_or_io(path: &Path, e: Errno, action: &'static str) -> FileError {
    if e == Errno::LOOP {
        FileError::Link {
            path: path.to_path_buf(),
            action,
        }
    } else {
        FileError::io(path, e)
    }
}

#[cfg(test)]
mod tests;
