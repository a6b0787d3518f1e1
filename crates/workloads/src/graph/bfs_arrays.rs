//! The arrays a breadth-first search works in ([`super::bfs`]): the parent array,
//! the two frontier queues, the two frontier bitmaps, the visited bitmap and the
//! parent tree in original ids. They are kept between the searches of one input
//! ([`Arrays`], owned by the graph workload), so a warm trial works in pages already
//! faulted in instead of fresh ones: the first search pays the page faults of about
//! 16 bytes per vertex, as GAP's first trial does, and later ones pay none (GAP's
//! later trials get their arrays back from malloc the same way). Nothing here is
//! read before a search writes it (the visited bitmap and parents are set by the
//! search's first phase).

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU32, AtomicU64};

/// Every array one search needs, sized by `Arrays::fit`.
#[derive(Default)]
pub struct Arrays {
    pub(super) parent: Vec<AtomicU32>,
    /// Frontier queues, current and next, by parity.
    pub(super) queue: [Cells; 2],
    /// Frontier bitmaps of bottom-up steps, current and next, by parity.
    pub(super) bits: [Vec<AtomicU64>; 2],
    /// Visited vertices (and the padding past `n`).
    pub(super) visited: Vec<AtomicU64>,
    /// The parent tree in original ids (renumbered graphs only).
    pub(super) out: Cells,
}

impl Arrays {
    /// Sized for a search of `n` vertices, with the tree in original ids where
    /// `mapped`: arrays of the right size are kept as they are, others replaced.
    pub(super) fn fit(&mut self, n: usize, mapped: bool) {
        let words = n.div_ceil(64);
        if self.parent.len() != n {
            self.parent = atomics32(n);
        }
        for q in &mut self.queue {
            if q.len() != n.max(1) {
                *q = Cells::new(n.max(1));
            }
        }
        for b in self.bits.iter_mut().chain([&mut self.visited]) {
            if b.len() != words {
                *b = atomics64(words);
            }
        }
        let out = if mapped { n } else { 0 };
        if self.out.len() != out {
            self.out = Cells::new(out);
        }
    }

    /// Takes back the parent tree a search handed out (a trial's, once it has been
    /// checked), to be the next search's array of the same role: the tree in
    /// original ids where `mapped`, else the parent array.
    pub fn recycle(&mut self, tree: Vec<u32>, mapped: bool) {
        if mapped {
            self.out = Cells::from_vec(tree);
        } else {
            self.parent = from_u32s(tree);
        }
    }

    /// The parent array's values, handed out (the next search allocates anew
    /// unless it is recycled).
    pub(super) fn take_parent(&mut self) -> Vec<u32> {
        into_u32s(std::mem::take(&mut self.parent))
    }

    /// The tree in original ids, handed out.
    ///
    /// # Safety
    /// Every cell of `out` was set (by the search's last phase).
    pub(super) unsafe fn take_out(&mut self) -> Vec<u32> {
        // SAFETY: as the caller promises.
        unsafe { std::mem::take(&mut self.out).into_vec() }
    }
}

/// `n` zeroed atomics from a zeroed allocation: the system hands out zero pages, so
/// the parts never touched (most of a queue) cost nothing, and the rest no extra
/// pass of stores.
fn atomics32(n: usize) -> Vec<AtomicU32> {
    from_u32s(vec![0u32; n])
}

/// Atomics over a vector's values, without a pass over them.
fn from_u32s(v: Vec<u32>) -> Vec<AtomicU32> {
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: AtomicU32 has the size, alignment and bit validity of u32, and the
    // allocation is handed over whole (pointer, length and capacity), never freed twice.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast::<AtomicU32>(), v.len(), v.capacity()) }
}

/// As [`atomics32`], for 64-bit words.
fn atomics64(n: usize) -> Vec<AtomicU64> {
    let mut v = std::mem::ManuallyDrop::new(vec![0u64; n]);
    // SAFETY: as in `from_u32s`: AtomicU64 has the size, alignment and bit validity
    // of u64 (on every target with 64-bit atomics, which this module needs).
    unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast::<AtomicU64>(), v.len(), v.capacity()) }
}

/// The values of atomics no thread uses any more, without a pass over them.
fn into_u32s(v: Vec<AtomicU32>) -> Vec<u32> {
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: u32 has the size, alignment and bit validity of AtomicU32; the vector is
    // owned (no thread holds a reference) and its allocation is handed over whole.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast::<u32>(), v.len(), v.capacity()) }
}

/// `u32` cells that start uninitialised (no pass of zeroes, and a queue's pages that
/// no step reaches are never touched), each set by one worker and read only after a
/// barrier (or the team's end) orders the read after the write.
#[derive(Default)]
pub(super) struct Cells(Vec<UnsafeCell<MaybeUninit<u32>>>);

// SAFETY: cells are accessed only as `set` and `get` require: no cell is written by
// one thread while another reads or writes it.
unsafe impl std::marker::Sync for Cells {}

impl Cells {
    fn new(n: usize) -> Cells {
        let mut v = Vec::with_capacity(n);
        // SAFETY: MaybeUninit needs no initialisation, and n fit the capacity.
        unsafe { v.set_len(n) };
        Cells(v)
    }

    /// Cells over a vector's values (set, though no search reads them before it
    /// sets them again).
    fn from_vec(v: Vec<u32>) -> Cells {
        let mut v = std::mem::ManuallyDrop::new(v);
        // SAFETY: UnsafeCell<MaybeUninit<u32>> has u32's layout and accepts any
        // value; the allocation is handed over whole.
        Cells(unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast(), v.len(), v.capacity()) })
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    /// # Safety
    /// No other thread reads or writes cell i until a barrier.
    #[inline]
    pub(super) unsafe fn set(&self, i: usize, x: u32) {
        // SAFETY: exclusive access to cell i, as the caller promises.
        unsafe { (*self.0[i].get()).write(x) };
    }

    /// # Safety
    /// Cell i was set before a barrier this thread passed, and nobody writes it now.
    #[inline]
    pub(super) unsafe fn get(&self, i: usize) -> u32 {
        // SAFETY: set and not being written, as the caller promises.
        unsafe { (*self.0[i].get()).assume_init() }
    }

    /// # Safety
    /// Every cell was set.
    unsafe fn into_vec(self) -> Vec<u32> {
        let mut v = std::mem::ManuallyDrop::new(self.0);
        // SAFETY: UnsafeCell<MaybeUninit<u32>> has u32's layout, every cell holds a
        // value (the caller promises), and the allocation is handed over whole.
        unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast::<u32>(), v.len(), v.capacity()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn arrays_of_the_right_size_are_kept_and_a_recycled_tree_is_reused_in_place() {
        let mut a = Arrays::default();
        a.fit(100, false);
        assert_eq!((a.parent.len(), a.visited.len(), a.out.len()), (100, 2, 0));
        a.parent[7].store(3, Ordering::Relaxed);
        let tree = a.take_parent();
        assert_eq!(tree[7], 3);
        let at = tree.as_ptr();
        a.recycle(tree, false);
        a.fit(100, false);
        assert_eq!(a.parent.as_ptr().cast::<u32>(), at, "the same allocation");
        a.fit(130, true);
        assert_eq!(
            (a.parent.len(), a.bits[1].len(), a.out.len()),
            (130, 3, 130)
        );
        let tree = vec![5u32; 130];
        let at = tree.as_ptr();
        a.recycle(tree, true);
        a.fit(130, true);
        // SAFETY: every cell holds the recycled tree's value.
        let (cell, out) = unsafe { (a.out.get(129), a.take_out()) };
        assert_eq!((cell, out.as_ptr()), (5, at));
    }
}
