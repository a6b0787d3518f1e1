//! The arrays a breadth-first search works in ([`super::bfs`]): the parent tree
//! (indexed and labelled by original id where the graph was renumbered), the two
//! frontier queues, the two frontier bitmaps and the visited bitmap (which also
//! decides who claims a vertex). They are kept between the searches of one input
//! ([`Arrays`], owned by the graph workload), so a warm trial works in pages already
//! faulted in instead of fresh ones: the first search pays the page faults of about
//! 12 bytes per vertex, as GAP's first trial does, and later ones pay none (GAP's
//! later trials get their arrays back from malloc the same way). Nothing here is
//! read before a search writes it (the visited bitmap and the tree are set by the
//! search's first phase).

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::AtomicU64;

/// Every array one search needs, sized by `Arrays::fit`.
#[derive(Default)]
pub struct Arrays {
    /// The parent of every vertex, at its original id and as an original id.
    pub(super) tree: Cells,
    /// Frontier queues, current and next, by parity.
    pub(super) queue: [Cells; 2],
    /// Frontier bitmaps of bottom-up steps, current and next, by parity.
    pub(super) bits: [Vec<AtomicU64>; 2],
    /// Visited vertices (and the padding past `n`).
    pub(super) visited: Vec<AtomicU64>,
}

impl Arrays {
    /// Sized for a search of `n` vertices: arrays of the right size are kept as
    /// they are, others replaced.
    pub(super) fn fit(&mut self, n: usize) {
        let words = n.div_ceil(64);
        if self.tree.len() != n {
            self.tree = Cells::new(n);
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
    }

    /// Takes back the parent tree a search handed out (a trial's, once it has been
    /// checked), to be the next search's tree.
    pub fn recycle(&mut self, tree: Vec<u32>) {
        self.tree = Cells::from_vec(tree);
    }

    /// The parent tree, handed out (the next search allocates anew unless it is
    /// recycled).
    ///
    /// # Safety
    /// Every cell of the tree was set (by the search's first phase).
    pub(super) unsafe fn take_tree(&mut self) -> Vec<u32> {
        // SAFETY: as the caller promises.
        unsafe { std::mem::take(&mut self.tree).into_vec() }
    }
}

/// `n` zeroed words from a zeroed allocation: the system hands out zero pages, so
/// the parts never touched cost nothing, and the rest no extra pass of stores.
fn atomics64(n: usize) -> Vec<AtomicU64> {
    let mut v = std::mem::ManuallyDrop::new(vec![0u64; n]);
    // SAFETY: AtomicU64 has the size, alignment and bit validity of u64 (on every
    // target with 64-bit atomics, which this module needs), and the allocation is
    // handed over whole (pointer, length and capacity), never freed twice.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr().cast::<AtomicU64>(), v.len(), v.capacity()) }
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

    #[test]
    fn arrays_of_the_right_size_are_kept_and_a_recycled_tree_is_reused_in_place() {
        let mut a = Arrays::default();
        a.fit(100);
        assert_eq!(
            (a.tree.len(), a.visited.len(), a.queue[1].len()),
            (100, 2, 100)
        );
        for i in 0..100 {
            // SAFETY: this thread alone uses the arrays.
            unsafe { a.tree.set(i, i as u32 * 3) };
        }
        // SAFETY: every cell was set just above.
        let tree = unsafe { a.take_tree() };
        assert_eq!(tree[7], 21);
        let at = tree.as_ptr();
        a.recycle(tree);
        a.fit(100);
        // SAFETY: every cell holds the recycled tree's value.
        let (cell, kept) = unsafe { (a.tree.get(99), a.take_tree()) };
        assert_eq!((cell, kept.as_ptr()), (297, at), "the same allocation");
        a.recycle(kept);
        a.fit(130);
        assert_eq!((a.tree.len(), a.bits[1].len()), (130, 3));
        assert_ne!(a.tree.0.as_ptr().cast::<u32>(), at, "a new allocation");
    }
}
