//! The process allocator: the system allocator, asking the kernel to back large
//! allocations (graphs, columns, rank vectors) with transparent huge pages. On a
//! kernel whose THP mode is `madvise` (the common default), first touch of a 7 MB
//! CSR otherwise takes ~1,800 page faults, a visible share of a 50 ms kernel, and
//! random reads over it miss the TLB. The advice is a hint: where THP is off it
//! changes nothing.

use std::alloc::{GlobalAlloc, Layout, System};

/// Allocations at least this large are advised.
const ADVISE_FROM: usize = 4 << 20;
const HUGE_PAGE: usize = 2 << 20;

pub struct HugePageAdvice;

/// Advises the whole 2 MiB pages inside `[p, p + size)`.
fn advise(p: *mut u8, size: usize) {
    if p.is_null() || size < ADVISE_FROM {
        return;
    }
    let start = (p as usize).next_multiple_of(HUGE_PAGE);
    let end = (p as usize + size) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        // SAFETY: the range lies inside an allocation the caller owns; MADV_HUGEPAGE
        // changes no contents and only hints how to back the pages. A failure
        // (THP unsupported) is harmless and ignored.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

// SAFETY: every call is forwarded to `System` with the same arguments; `advise`
// only adds a hint on memory the returned block owns.
unsafe impl GlobalAlloc for HugePageAdvice {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged (the caller upholds `alloc`'s contract).
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged.
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `ptr` came from `System` through this type.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged; `ptr` came from `System` through this type.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        advise(p, new_size);
        p
    }
}
