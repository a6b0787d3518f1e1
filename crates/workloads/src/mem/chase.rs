//! Dependent loads over a random cyclic permutation of cache lines: each load's
//! address comes from the previous load, so neither the prefetchers nor out-of-order
//! execution can hide the latency. The cycle is built with Sattolo's algorithm
//! (a single cycle through every line), from a fixed seed.

use std::time::Instant;

/// u64s per 64-byte cache line.
pub const LINE_WORDS: usize = 8;

use scalescope_stats::Rng;

/// Writes a single random cycle through the first `lines` cache lines of `words`:
/// the first word of line k holds the word index of the next line.
pub fn build_cycle(words: &mut [u64], lines: usize, seed: u64) {
    let mut order: Vec<usize> = (0..lines).collect();
    let mut rng = Rng::new(seed);
    // Sattolo: a uniformly random cyclic permutation.
    for i in (1..lines).rev() {
        let j = rng.below(i);
        order.swap(i, j);
    }
    for k in 0..lines {
        let next = order[(k + 1) % lines];
        words[order[k] * LINE_WORDS] = (next * LINE_WORDS) as u64;
    }
}

/// Follows the cycle for `steps` loads; returns nanoseconds per load.
pub fn chase(words: &[u64], steps: usize) -> f64 {
    let mut i = 0usize;
    // One lap unmeasured brings the working set into the caches it fits in.
    for _ in 0..steps.min(words.len() / LINE_WORDS) {
        i = words[i] as usize;
    }
    let t = Instant::now();
    for _ in 0..steps {
        i = words[i] as usize;
    }
    let ns = t.elapsed().as_nanos() as f64 / steps as f64;
    std::hint::black_box(i);
    ns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_cycle_through_every_line() {
        let lines = 1000;
        let mut w = vec![0u64; lines * LINE_WORDS];
        build_cycle(&mut w, lines, 42);
        let mut seen = vec![false; lines];
        let mut i = 0usize;
        for _ in 0..lines {
            assert!(!seen[i / LINE_WORDS]);
            seen[i / LINE_WORDS] = true;
            i = w[i] as usize;
        }
        assert_eq!(i, 0, "back to the start after exactly `lines` steps");
        assert!(seen.iter().all(|s| *s));
    }
}
