//! An anonymous mapping whose memory policy is set before any page exists, and the
//! page counts per NUMA node the kernel reports for it.

use std::collections::BTreeMap;
use std::io;

use scalescope_place::mempolicy::{bind_range, ResolvedPolicy};

/// Page-aligned anonymous memory.
pub struct MmapBuffer {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the buffer is plain memory; callers partition concurrent access.
unsafe impl Send for MmapBuffer {}
// SAFETY: as above.
unsafe impl Sync for MmapBuffer {}

impl MmapBuffer {
    /// Maps `len` bytes (rounded up to whole pages); no page is touched.
    ///
    /// # Errors
    /// The OS error from `mmap`.
    pub fn new(len: usize) -> io::Result<MmapBuffer> {
        let len = len.max(1).div_ceil(4096) * 4096;
        // SAFETY: an anonymous private mapping with no address hint has no preconditions.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(MmapBuffer {
            ptr: ptr as *mut u8,
            len,
        })
    }

    /// Sets where the pages will be allocated; call before touching them.
    ///
    /// # Errors
    /// The OS error from `mbind`.
    pub fn bind(&self, policy: &ResolvedPolicy) -> io::Result<()> {
        // SAFETY: the range is exactly this mapping.
        unsafe { bind_range(self.ptr, self.len, policy) }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn addr(&self) -> usize {
        self.ptr as usize
    }

    /// How many `T`s the buffer holds.
    pub fn count<T>(&self) -> usize {
        self.len / std::mem::size_of::<T>().max(1)
    }

    /// Elements `r` of the buffer as `T`s, for one worker to write: each worker gets
    /// only its own range, so no two `&mut` ever cover the same element.
    ///
    /// # Safety
    /// `T` must be valid for any bit pattern (the pages start zeroed); no other
    /// reference may read or write elements of `r` while the slice lives.
    ///
    /// # Panics
    /// If `r` reaches past the buffer (a caller bug, like slice indexing).
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn range_mut<T>(&self, r: std::ops::Range<usize>) -> &mut [T] {
        assert!(
            r.start <= r.end && r.end <= self.count::<T>(),
            "range outside the buffer"
        );
        // SAFETY: the mapping is page aligned and `len` bytes long, `r` lies inside it
        // (asserted); the caller guarantees exclusivity over `r` and validity.
        unsafe { std::slice::from_raw_parts_mut((self.ptr as *mut T).add(r.start), r.len()) }
    }

    /// Elements `r` of the buffer as `T`s, read-only.
    ///
    /// # Safety
    /// `T` must be valid for any bit pattern; no reference may write elements of `r`
    /// while the slice lives.
    ///
    /// # Panics
    /// If `r` reaches past the buffer.
    pub unsafe fn range<T>(&self, r: std::ops::Range<usize>) -> &[T] {
        assert!(
            r.start <= r.end && r.end <= self.count::<T>(),
            "range outside the buffer"
        );
        // SAFETY: as in `range_mut`, shared and read-only.
        unsafe { std::slice::from_raw_parts((self.ptr as *const T).add(r.start), r.len()) }
    }
}

impl Drop for MmapBuffer {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping made in `new`.
        unsafe {
            libc::munmap(self.ptr as *mut libc::c_void, self.len);
        }
    }
}

/// Pages of the mapping starting at `addr`, per NUMA node, from `numa_maps` text
/// (`7f12a000 bind:1 anon=256 dirty=256 N1=256 kernelpagesize_kB=4`).
pub fn pages_by_node_in(numa_maps: &str, addr: usize) -> Option<BTreeMap<u32, u64>> {
    let prefix = format!("{addr:x} ");
    let line = numa_maps.lines().find(|l| l.starts_with(&prefix))?;
    Some(
        line.split_whitespace()
            .filter_map(|f| {
                let (k, v) = f.split_once('=')?;
                Some((k.strip_prefix('N')?.parse().ok()?, v.parse().ok()?))
            })
            .collect(),
    )
}

/// Pages of this process's mapping at `addr` per NUMA node (`/proc/self/numa_maps`);
/// `None` where the kernel has no NUMA support or no such mapping.
pub fn pages_by_node(addr: usize) -> Option<BTreeMap<u32, u64>> {
    let text = std::fs::read_to_string("/proc/self/numa_maps").ok()?;
    pages_by_node_in(&text, addr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use scalescope_place::MemPolicy;

    #[test]
    fn parses_numa_maps_lines() {
        let text = "55d0 default file=/bin/x mapped=3 N0=3\n7f12a000 bind:1 anon=256 dirty=256 N1=200 N0=56 kernelpagesize_kB=4\n";
        let m = pages_by_node_in(text, 0x7f12a000).unwrap();
        assert_eq!(m.into_iter().collect::<Vec<_>>(), vec![(0, 56), (1, 200)]);
        assert!(pages_by_node_in(text, 0x1234).is_none());
    }

    #[test]
    fn bound_pages_land_on_their_node() {
        let topo = scalescope_topo::Source::Live.load().unwrap();
        let node = topo
            .numa_nodes
            .iter()
            .find(|n| n.allowed && n.memory_bytes != Some(0))
            .unwrap()
            .id;
        let buf = MmapBuffer::new(8 << 20).unwrap();
        buf.bind(&MemPolicy::Bind(vec![node]).resolve(&topo).unwrap())
            .unwrap();
        // SAFETY: single-threaded test; u64 is valid for zeroed pages.
        unsafe { buf.range_mut::<u64>(0..buf.count::<u64>()).fill(1) };
        let pages = pages_by_node(buf.addr()).expect("numa_maps lists the buffer");
        assert_eq!(
            pages.keys().copied().collect::<Vec<_>>(),
            vec![node],
            "{pages:?}"
        );
        assert_eq!(pages[&node], (8 << 20) / 4096);
    }
}
