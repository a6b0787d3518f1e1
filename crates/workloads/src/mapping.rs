//! Files read in place: a read-only private memory map of a whole file
//! ([`Mapping`]) and the columns of plain integers read from one or owned
//! ([`Column`]), with the release of a mapped column's pages that lets a large input
//! be read block by block without staying resident. `blob` makes them from its
//! checked files.

use std::ops::Range;

use crate::blob::Plain;

/// A read-only, private memory map of a whole file: its pages are the page cache's,
/// shared by every process that maps the file, so mapping costs page-table entries,
/// not copies.
#[derive(Debug)]
pub struct Mapping {
    pub(crate) ptr: *const u8,
    pub(crate) len: usize,
}

// SAFETY: the mapping is read-only and private: no thread writes through it, so
// shared references to it from several threads are reads only.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Drop for Mapping {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: `ptr..ptr+len` is the mapping `map` made; nothing borrows it
            // any more (every borrow goes through `&self`, which is ending).
            unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
        }
    }
}

impl Mapping {
    pub(crate) fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: the map is `len` readable bytes, valid until `self` is dropped,
        // and never written (PROT_READ, MAP_PRIVATE).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// A column of plain integers, owned or read in place from a mapped file.
#[derive(Debug, Clone)]
pub enum Column<T: Plain> {
    Owned(Vec<T>),
    Mapped {
        map: std::sync::Arc<Mapping>,
        offset: usize,
        len: usize,
    },
}

impl<T: Plain> std::ops::Deref for Column<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Column::Owned(v) => v,
            Column::Mapped { map, offset, len } => {
                let bytes = &map.bytes()[*offset..*offset + len * std::mem::size_of::<T>()];
                // SAFETY: `Blob::column` and `Blob::part` checked the range lies in the
                // map and that `offset` is a multiple of 4096 (sections are page-aligned,
                // parts start on a block), so the
                // pointer is aligned for any `Plain` type; every bit pattern is a value.
                unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast(), *len) }
            }
        }
    }
}

impl<T: Plain> Column<T> {
    /// Drops the pages wholly inside elements `r` from this process's memory where
    /// the column is read in place from a mapped file; returns whether it could. The
    /// column reads the same afterwards: the map is private, read-only and never
    /// written, so a later read maps the file's page again (from the page cache, a
    /// minor fault). An owned column keeps its memory (nothing else holds a copy).
    /// Used to read a large input once, block by block, without keeping all of it
    /// resident beside what is made from it.
    pub fn release(&self, r: Range<usize>) -> bool {
        let Column::Mapped { map, offset, len } = self else {
            return false;
        };
        let size = std::mem::size_of::<T>();
        let (r0, r1) = (r.start.min(*len), r.end.min(*len));
        let base = map.ptr as usize + offset;
        let start = (base + r0 * size).next_multiple_of(PAGE);
        let end = (base + r1 * size) / PAGE * PAGE;
        if end > start {
            // SAFETY: `start..end` lies inside the mapping (`offset + len * size` does,
            // checked when the column was made) and is page-aligned. MADV_DONTNEED on
            // a private file mapping this process never wrote (PROT_READ) only unmaps
            // the pages: the next read maps the same file page again, so every slice
            // borrowed from the column keeps reading the same values.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
        }
        true
    }
}

/// The page size `release` aligns to: x86-64's base page. Where pages are larger a
/// start off their boundary makes the advice fail (EINVAL), which changes nothing.
const PAGE: usize = 4096;

impl<T: Plain + PartialEq> PartialEq for Column<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Plain + Eq> Eq for Column<T> {}

impl<T: Plain> Default for Column<T> {
    fn default() -> Self {
        Column::Owned(Vec::new())
    }
}

impl<T: Plain> From<Vec<T>> for Column<T> {
    fn from(v: Vec<T>) -> Self {
        Column::Owned(v)
    }
}
