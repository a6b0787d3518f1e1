//! NAS Parallel Benchmarks IS, integer sort (NPB 3.4.1 is.c): 2^N keys, each
//! floor(MAX_KEY/4 x the sum of four NPB deviates), ranked ten times; in iteration
//! `it` two keys are overwritten (`key[it] = it`, `key[it + 10] = MAX_KEY - it`) and the
//! ranks of five test keys are checked against the official values with the class's
//! adjustment rule (partial verification). A final full verification places every
//! key by its rank and checks the result is sorted. Ranking is a parallel counting
//! sort: per-worker histograms over their slice of keys, merged and prefix-summed
//! (rank of key k = number of keys below k). Mop/s = 10 x keys / t / 1e6, t the ten
//! rankings. The keys are generated once per input and, where the runs share an
//! input cache, read from it ([`super::keys`]): a sweep's runs after its preparation
//! spend no time generating them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::Instant;

use scalescope_model::detail::{Detail, IsDetail};
use serde::Deserialize;

use super::keys::Keys;
use super::rand::{jump, next, A, R46};
use super::{Class, NpbSettings};
use crate::inputs::Inputs;
use crate::pool::{chunk, Pool, SpinBarrier};
use crate::{Figure, SetupCosts, Verification, Workload, WorkloadError};

const ITERATIONS: usize = 10;
const SEED: u64 = 314_159_265;

#[derive(Deserialize)]
struct IsReference {
    params: BTreeMap<String, (u32, u32, u32)>,
    test_index: BTreeMap<String, Vec<usize>>,
    test_rank: BTreeMap<String, Vec<i64>>,
}

/// The official values of IS, from the embedded npb.json.
///
/// # Errors
/// [`WorkloadError::Reference`] if the embedded file lacks them (a build with a
/// broken fixture).
fn reference() -> Result<IsReference, WorkloadError> {
    super::reference_section("IS")
}

/// The expected rank of test key `i` in iteration `it` (is.c's per-class switch).
fn expected_rank(class: &str, i: usize, it: i64, r: i64) -> i64 {
    match class {
        // NPB's is.c gives S and C the same rule.
        "S" | "C" => {
            if i <= 2 {
                r + it
            } else {
                r - it
            }
        }
        "W" => {
            if i < 2 {
                r + (it - 2)
            } else {
                r - it
            }
        }
        "A" => {
            if i <= 2 {
                r + (it - 1)
            } else {
                r - (it - 1)
            }
        }
        _ => {
            if [1, 2, 4].contains(&i) {
                r + it
            } else {
                r - it
            }
        }
    }
}

/// The IS workload at one class.
pub struct Is {
    class: Class,
    total_keys: usize,
    max_key: usize,
    keys: Keys,
    /// One histogram of key values per worker, allocated by `prepare`.
    hists: Vec<RwLock<Histogram>>,
    test_index: Vec<usize>,
    test_rank: Vec<i64>,
    passed: usize,
    /// The last run's ranks (`below`), kept for the full check in `verify`.
    below: Vec<u32>,
    /// The full check's answer where it was made elsewhere (the MPI ranks' gather).
    sorted: Option<bool>,
    seconds: f64,
    inputs: Inputs,
    setup: SetupCosts,
    /// The token of the keys file this prepare checked in full or wrote.
    verified: Option<String>,
}

impl Is {
    /// IS at the class `class` names (`S`, `W`, `A`, `B`, `C`); errors as [`NpbSettings::of`].
    pub fn new(class: &str) -> Result<Is, WorkloadError> {
        Is::with(&NpbSettings::of(class)?)
    }

    /// IS with its settings.
    ///
    /// # Errors
    /// [`WorkloadError::Reference`] where the embedded values lack the class.
    pub fn with(settings: &NpbSettings) -> Result<Is, WorkloadError> {
        let r = reference()?;
        let class = settings.class;
        let (keys_log2, max_key_log2, _) = *super::official(&r.params, class, "IS")?;
        let test_index = super::official(&r.test_index, class, "IS")?.clone();
        let test_rank = super::official(&r.test_rank, class, "IS")?.clone();
        Ok(Is {
            class,
            total_keys: 1 << keys_log2,
            max_key: 1 << max_key_log2,
            keys: Keys::default(),
            hists: Vec::new(),
            test_index,
            test_rank,
            passed: 0,
            below: Vec::new(),
            sorted: None,
            seconds: 0.0,
            inputs: Inputs::default(),
            setup: SetupCosts::default(),
            verified: None,
        })
    }

    pub fn mops(&self) -> f64 {
        (ITERATIONS * self.total_keys) as f64 / self.seconds / 1e6
    }

    /// Number of keys below each key value, `below[k]` = #{keys < k}, written into
    /// `below` (length max_key + 1). One broadcast, three phases split by a spinning
    /// barrier (no worker sleeps between them): each worker counts its slice of the
    /// keys into its own one-byte-per-value histogram (a quarter of the cache a
    /// 4-byte count would take: 2 MB per worker at class B, where 8 MB per worker
    /// spilled out of the shared L3 at two workers), noting each value whose count
    /// wraps past 255; then each prefix-sums the merged histograms over its own key
    /// range, adding 256 per noted wrap; then each adds the totals of the ranges
    /// before its own. The histograms are kept from one ranking to the next, so no
    /// allocation, page fault or unmapping happens in the timed loop.
    fn ranks(&self, pool: &Pool, below: &mut [u32]) {
        let (n, t, m) = (self.keys.len(), pool.threads(), self.max_key);
        let (keys, hists) = (&self.keys, &self.hists);
        let barrier = SpinBarrier::new(t);
        let totals: Vec<AtomicU32> = (0..t).map(|_| AtomicU32::new(0)).collect();
        let (head, last) = below.split_at_mut(m);
        let mut rest = head;
        let mut parts = Vec::with_capacity(t);
        for i in 0..t {
            let (part, tail) = rest.split_at_mut(chunk(m, t, i, 64).len());
            parts.push(Mutex::new(part));
            rest = tail;
        }
        pool.broadcast(|i| {
            {
                let mut guard = hists[i].write().unwrap_or_else(|e| e.into_inner());
                guard.count(keys.range(chunk(n, t, i, 16)));
            }
            barrier.wait();
            let r = chunk(m, t, i, 64);
            let guards: Vec<_> = hists
                .iter()
                .map(|h| h.read().unwrap_or_else(|e| e.into_inner()))
                .collect();
            let all: Vec<&[u8]> = guards.iter().map(|g| &g.counts[r.clone()]).collect();
            let mut wraps: Vec<usize> = guards
                .iter()
                .flat_map(|g| g.wraps.iter().map(|&k| k as usize))
                .filter(|k| r.contains(k))
                .map(|k| k - r.start)
                .collect();
            wraps.sort_unstable();
            let mut part = parts[i].lock().unwrap_or_else(|e| e.into_inner());
            let run = prefix(&mut part, &all, &wraps);
            drop(all);
            drop(guards);
            totals[i].store(run, Ordering::Release);
            barrier.wait();
            let offset: u32 = totals[..i].iter().map(|x| x.load(Ordering::Acquire)).sum();
            if offset > 0 {
                part.iter_mut().for_each(|v| *v += offset);
            }
        });
        last[0] = totals.iter().map(|x| x.load(Ordering::Acquire)).sum();
    }
}

/// One worker's histogram of key values: a byte per value, counting modulo 256,
/// and the values whose count wrapped (once per wrap), so that the true count of
/// `k` is `counts[k]` + 256 x the times `k` is in `wraps`.
struct Histogram {
    counts: Vec<u8>,
    wraps: Vec<u32>,
}

impl Histogram {
    fn new(values: usize) -> Histogram {
        Histogram {
            counts: vec![0; values],
            wraps: Vec::new(),
        }
    }

    /// Counts the keys of both slices from zero. A histogram larger than
    /// [`PREFETCH_ABOVE`] is counted with each key's counter prefetched
    /// [`PREFETCH_AHEAD`] keys early (see there).
    fn count(&mut self, (head, rest): (&[u32], &[u32])) {
        self.counts.fill(0);
        self.wraps.clear();
        let ahead = match self.counts.len() > PREFETCH_ABOVE {
            true => PREFETCH_AHEAD,
            false => 0,
        };
        // One plain loop per slice: a chained iterator costs the hot loop a branch
        // per key.
        for part in [head, rest] {
            // The keys whose counter a later key's prefetch can still precede.
            let split = match ahead {
                0 => 0,
                a => part.len().saturating_sub(a),
            };
            let base = self.counts.as_ptr();
            for (&k, &next) in part[..split]
                .iter()
                .zip(part.get(ahead..).unwrap_or_default())
            {
                crate::prefetch(base.wrapping_add(next as usize));
                self.add(k);
            }
            for &k in &part[split..] {
                self.add(k);
            }
        }
    }

    /// One more key of value `k`.
    #[inline(always)]
    fn add(&mut self, k: u32) {
        let c = &mut self.counts[k as usize];
        *c = c.wrapping_add(1);
        if *c == 0 {
            self.wraps.push(k);
        }
    }
}

/// Histograms (one byte per key value) larger than this are counted with
/// prefetches. Each key's increment is a read-modify-write of a random byte of the
/// histogram; once the histogram is far larger than a core's L2, the increments wait
/// on L3 or memory, and the out-of-order window alone overlaps too few of them.
/// Measured on the 2-vCPU EPYC guest (docs/PERFORMANCE.md, issue 36 fourth round):
/// at class C (8 MiB) the counting pass took 0.56-1.2 s without and 0.28-0.39 s with
/// the prefetch; at class B (2 MiB) it was level, at class A (512 KiB, L2-resident)
/// the prefetch cost 16-22%.
const PREFETCH_ABOVE: usize = 4 << 20;

/// How many keys ahead the counter is prefetched: far enough for the line to arrive
/// before its key is counted (at class C, 128 and 256 ahead measured no better and
/// 16 ahead little better than none).
const PREFETCH_AHEAD: usize = 64;

/// Writes into `part` the running total of the histograms `all` (the same range of
/// every worker's counts) before each value, starting at 0, with 256 more keys at
/// each offset listed in `wraps` (sorted); returns the range's total.
fn prefix(part: &mut [u32], all: &[&[u8]], wraps: &[usize]) -> u32 {
    let mut run = 0u32;
    let mut from = 0;
    for &w in wraps {
        run = running_total(part, all, from..w + 1, run);
        from = w + 1;
        run += 256;
    }
    running_total(part, all, from..part.len(), run)
}

/// `part[j]` = `run` + the counts of `all` before `j`, for `j` in `r`; returns the
/// total after `r`.
fn running_total(part: &mut [u32], all: &[&[u8]], r: std::ops::Range<usize>, mut run: u32) -> u32 {
    for (j, slot) in r.clone().zip(&mut part[r]) {
        *slot = run;
        run += all.iter().map(|h| u32::from(h[j])).sum::<u32>();
    }
    run
}

/// The pieces of IS for a run whose keys are split among MPI ranks: each rank
/// generates its block of the same key sequence, counts its keys, and the ranks'
/// counts are added up (MPI_Allreduce) into the one histogram every rank ranks by.
/// The test keys and the official values are the threaded version's.
impl Is {
    /// Indexes of the class's five test keys.
    pub fn test_index(&self) -> &[usize] {
        &self.test_index
    }

    /// Number of keys in the whole run.
    pub fn total_keys(&self) -> usize {
        self.total_keys
    }

    /// Keys `start..end` of the sequence (create_seq), for the rank holding them.
    pub fn keys_range(&self, r: std::ops::Range<usize>) -> Vec<u32> {
        let k = (self.max_key / 4) as f64;
        let mut s = jump(SEED, 4 * r.start as u64, A);
        r.map(|_| {
            let mut x = 0.0;
            for _ in 0..4 {
                s = next(s, A);
                x += s as f64 * R46;
            }
            (k * x) as u32
        })
        .collect()
    }

    /// The two keys iteration `it` overwrites: (index, value).
    pub fn iteration_edits(&self, it: usize) -> [(usize, u32); 2] {
        [
            (it, it as u32),
            (it + ITERATIONS, (self.max_key - it) as u32),
        ]
    }

    /// How many of one rank's keys have each value (length max_key).
    pub fn histogram(&self, keys: &[u32]) -> Vec<u32> {
        let mut h = vec![0u32; self.max_key];
        for &k in keys {
            h[k as usize] += 1;
        }
        h
    }

    /// `below[k]` = number of keys less than k, from the whole run's histogram
    /// (length max_key + 1).
    pub fn below(hist: &[u32]) -> Vec<u32> {
        let mut below = Vec::with_capacity(hist.len() + 1);
        let mut run = 0u32;
        for &c in hist {
            below.push(run);
            run += c;
        }
        below.push(run);
        below
    }

    /// How many of the test keys (their values `probes`, in test-index order) have
    /// the official rank in iteration `it`.
    pub fn probes_passed(&self, it: usize, probes: &[u32], below: &[u32]) -> usize {
        probes
            .iter()
            .enumerate()
            .filter(|(i, &key)| {
                let key = key as usize;
                key > 0
                    && key < self.total_keys
                    && i64::from(below[key])
                        == expected_rank(self.class.as_str(), *i, it as i64, self.test_rank[*i])
            })
            .count()
    }

    /// Full verification: every key placed by its rank, the result sorted.
    pub fn sorted_by(keys: &[u32], below: &[u32]) -> bool {
        Is::sorted_in_order(keys.iter().copied(), keys.len(), below)
    }

    /// [`Is::sorted_by`] over `n` keys given in order.
    fn sorted_in_order(keys: impl Iterator<Item = u32>, n: usize, below: &[u32]) -> bool {
        let mut next_slot = below.to_vec();
        let mut sorted = vec![0u32; n];
        for k in keys {
            let Some(slot) = next_slot.get_mut(k as usize) else {
                return false;
            };
            let Some(place) = sorted.get_mut(*slot as usize) else {
                return false;
            };
            *place = k;
            *slot += 1;
        }
        sorted.windows(2).all(|w| w[0] <= w[1])
    }

    /// The verdict of a distributed run: test ranks passed over the ten
    /// iterations, whether the gathered keys sorted, and the ten rankings' time.
    pub fn verify_distributed(
        &mut self,
        passed: usize,
        sorted: bool,
        seconds: f64,
        pool: &Pool,
    ) -> Verification {
        self.passed = passed;
        self.sorted = Some(sorted);
        self.seconds = seconds;
        self.verify(pool)
    }
}

impl Is {
    /// create_seq: `key[i]` uses deviates 4i+1..4i+4 of the stream from the seed,
    /// generated by the pool's workers, each its range; the seconds go to
    /// `setup.build_secs`.
    fn generate(&mut self, pool: &Pool) -> Vec<u32> {
        let t0 = Instant::now();
        let (n, t) = (self.total_keys, pool.threads());
        let keys = pool
            .broadcast(|i| self.keys_range(chunk(n, t, i, 1)))
            .concat();
        self.setup.build_secs = Some(t0.elapsed().as_secs_f64());
        keys
    }

    /// The keys of the cache file `path`, or generated and written there when it is
    /// missing, stale or corrupt (never used then).
    fn cached_keys(&mut self, path: &std::path::Path, pool: &Pool) -> Result<Keys, WorkloadError> {
        let class = self.class.as_str();
        let shape = (self.total_keys, self.max_key);
        let token = self.inputs.verified.as_deref();
        let shown = path.display();
        match super::keys::load(path, class, shape, pool, token) {
            Ok((keys, loaded)) => {
                self.setup.load_secs = Some(loaded.load_secs);
                self.setup.input = format!("cache {shown}");
                self.setup.input_check = Some(
                    if loaded.trusted {
                        "header; blocks and key ranges checked by the sweep (same file, unchanged)"
                    } else {
                        "full: every block's CRC and every key's range"
                    }
                    .into(),
                );
                self.verified = loaded.token;
                Ok(keys)
            }
            Err(e) => {
                self.setup.input = match path.exists() {
                    true => format!("rebuilt and cached {shown} (the cache was refused: {e})"),
                    false => format!("built and cached {shown}"),
                };
                self.inputs.create_dir()?;
                let keys = self.generate(pool);
                super::keys::save(&keys, path, class, self.max_key)?;
                self.verified = Some(super::keys::token_of(path)?.0);
                Ok(Keys::new(keys.into()))
            }
        }
    }
}

impl Workload for Is {
    fn name(&self) -> &'static str {
        "is"
    }

    fn primary_figure(&self) -> &'static str {
        "mops"
    }

    fn use_inputs(&mut self, inputs: &Inputs) {
        self.inputs = inputs.clone();
    }

    /// The keys are an input of their own, cached once where the runs share a cache.
    fn shares_inputs(&self) -> bool {
        true
    }

    fn setup(&self) -> SetupCosts {
        self.setup.clone()
    }

    fn verified_input(&self) -> Option<String> {
        self.verified.clone()
    }

    /// The keys from the cache, or generated (create_seq) and cached; then one
    /// histogram per worker.
    fn prepare(&mut self, pool: &Pool) -> Result<(), WorkloadError> {
        // The keys (4 B each), the full check's sorted copy and ranks (as much
        // again), and a byte histogram of the key range per worker.
        let need = 8 * self.total_keys + (pool.threads() + 8) * self.max_key;
        super::fits("IS", self.class, need as u64)?;
        self.verified = None;
        self.setup = SetupCosts {
            input: "built in memory".into(),
            input_bytes: Some((self.total_keys * 4) as u64),
            ..SetupCosts::default()
        };
        let path = self
            .inputs
            .file(&super::keys::key(self.class.as_str()), "keys");
        self.keys = match path {
            Some(path) => self.cached_keys(&path, pool)?,
            None => Keys::new(self.generate(pool).into()),
        };
        let m = self.max_key;
        self.hists = pool.broadcast(|_| RwLock::new(Histogram::new(m)));
        Ok(())
    }

    fn run(&mut self, pool: &Pool) -> (f64, Vec<Figure>) {
        self.passed = 0;
        let t0 = Instant::now();
        let mut below = vec![0u32; self.max_key + 1];
        for it in 1..=ITERATIONS {
            self.keys.set(it, it as u32);
            self.keys.set(it + ITERATIONS, (self.max_key - it) as u32);
            let probes: Vec<u32> = self.test_index.iter().map(|&i| self.keys.get(i)).collect();
            self.ranks(pool, &mut below);
            self.passed += self.probes_passed(it, &probes, &below);
        }
        self.seconds = t0.elapsed().as_secs_f64();
        // The full check (each key placed by its rank) is serial and belongs to
        // `verify`: counted as verification, not as the run (on 16 cores it took
        // over 80% of a class B run).
        self.below = below;
        self.sorted = None;
        (
            self.seconds,
            vec![Figure {
                name: "mops".into(),
                value: self.mops(),
                unit: "Mop/s",
            }],
        )
    }

    fn verify(&self, _pool: &Pool) -> Verification {
        let full = self.sorted.unwrap_or_else(|| {
            self.below.len() == self.max_key + 1
                && Is::sorted_in_order(self.keys.iter(), self.keys.len(), &self.below)
        });
        let expected = 5 * ITERATIONS;
        Verification::check(
            self.passed == expected && full,
            format!(
                "class {}: partial verification {}/{expected} test ranks equal the official values; full verification {}",
                self.class,
                self.passed,
                if full { "sorted" } else { "NOT sorted" }
            ),
        )
    }

    fn detail(&self) -> Detail {
        Detail::Is(IsDetail {
            class: self.class.to_string(),
            total_keys: self.total_keys,
            max_key: self.max_key,
            iterations: ITERATIONS,
            seconds: self.seconds,
            mops: self.mops(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::pool::test_pool as pool;

    #[test]
    fn classes_s_and_w_verify_at_one_and_two_workers() {
        for (class, threads) in [("S", 1), ("S", 2), ("W", 2)] {
            let mut is = Is::new(class).unwrap();
            let r = crate::execute(&mut is, &pool(threads)).unwrap();
            assert!(
                r.verification.passed(),
                "{class} on {threads}: {}",
                r.verification
            );
        }
    }

    /// is.c's class C rule: the first three test keys rise by the iteration, the
    /// others fall; the sizes come from the fixture.
    #[test]
    fn class_c_ranks_move_as_is_c_says() {
        assert_eq!(expected_rank("C", 2, 3, 266290), 266293);
        assert_eq!(expected_rank("C", 3, 3, 133997595), 133997592);
        let c = Is::new("C").unwrap();
        assert_eq!((c.total_keys, c.max_key), (1 << 27, 1 << 23));
        assert_eq!(c.test_index[4], 21736814);
    }

    #[test]
    fn counts_past_255_of_one_value_rank_exactly() {
        for threads in [1, 2, 3] {
            let p = pool(threads);
            let mut is = Is::new("S").unwrap();
            is.prepare(&p).unwrap();
            // 1,000 keys of one value in every worker's slice, 600 of another:
            // several wraps of the one-byte counts per worker.
            let mut keys: Vec<u32> = is.keys.iter().collect();
            keys[..40_000].iter_mut().step_by(40).for_each(|k| *k = 7);
            keys[40_000..]
                .iter_mut()
                .step_by(40)
                .for_each(|k| *k = 2047);
            is.keys = Keys::new(keys.clone().into());
            let mut below = vec![0u32; is.max_key + 1];
            is.ranks(&p, &mut below);
            assert_eq!(below, Is::below(&is.histogram(&keys)), "{threads}");
            assert!(Is::sorted_by(&keys, &below));
        }
    }

    /// The prefetching count (histograms past PREFETCH_ABOVE, class C's) counts
    /// what a plain tally counts, for slices shorter and longer than the lookahead,
    /// with wraps, split anywhere between the two slices.
    #[test]
    fn a_prefetched_count_equals_a_plain_tally() {
        let values = PREFETCH_ABOVE + 4096;
        let keys: Vec<u32> = (0..5000u32)
            .map(|i| match i % 7 {
                0 => 3,
                _ => i.wrapping_mul(2_654_435_761) % values as u32,
            })
            .collect();
        for cut in [0, 10, PREFETCH_AHEAD + 1, 4999, 5000] {
            let mut h = Histogram::new(values);
            h.count((&keys[..cut], &keys[cut..]));
            let mut tally = vec![0u32; values];
            keys.iter().for_each(|&k| tally[k as usize] += 1);
            for (k, &n) in tally.iter().enumerate() {
                let wraps = h.wraps.iter().filter(|&&w| w as usize == k).count() as u32;
                assert_eq!(
                    u32::from(h.counts[k]) + 256 * wraps,
                    n,
                    "value {k}, cut {cut}"
                );
            }
        }
    }

    #[test]
    fn keys_are_generated_once_per_cache_and_mapped_by_later_runs() {
        let dir = tempfile::tempdir().unwrap();
        let p = pool(2);
        let inputs = Inputs {
            cache: Some(dir.path().to_path_buf()),
            ..Inputs::default()
        };
        // The sweep's preparation: generated, written, its token handed on.
        let mut first = Is::new("S").unwrap();
        first.use_inputs(&inputs);
        first.prepare(&p).unwrap();
        let setup = first.setup();
        assert!(
            setup.input.starts_with("built and cached"),
            "{}",
            setup.input
        );
        assert!(setup.build_secs.is_some());
        let token = first.verified_input().expect("the file written is named");
        // A run: the keys read back, nothing generated, only the header checked.
        let mut run = Is::new("S").unwrap();
        let with_token = Inputs {
            verified: Some(token),
            ..inputs.clone()
        };
        let r = crate::execute_with(&mut run, &p, &with_token).unwrap();
        assert!(r.verification.passed(), "{}", r.verification);
        let setup = r.setup.unwrap();
        assert_eq!(setup.build_secs, None, "no key generated");
        assert!(setup.input.starts_with("cache "), "{}", setup.input);
        assert!(setup.input_check.unwrap().starts_with("header"));
        let fresh = Is::new("S").unwrap().generate(&p);
        assert_eq!(run.keys.iter().skip(21).collect::<Vec<_>>(), fresh[21..]);
        // Without a token the run checks every block, and passes the same.
        let r = crate::execute_with(&mut Is::new("S").unwrap(), &p, &inputs).unwrap();
        let setup = r.setup.unwrap();
        assert!(setup.input_check.unwrap().starts_with("full"));
        assert!(r.verification.passed() && setup.build_secs.is_none());
    }

    #[test]
    fn the_full_check_is_made_by_verify_and_catches_wrong_ranks() {
        let p = pool(1);
        let mut is = Is::new("S").unwrap();
        is.prepare(&p).unwrap();
        is.run(&p);
        assert!(is.verify(&p).passed());
        // Ranks out of key order: the partial check (made in `run`) still passes,
        // the full one must not.
        let last = is.below.len() - 2;
        is.below.swap(1, last);
        let v = is.verify(&p);
        assert!(!v.passed() && v.to_string().contains("NOT sorted"), "{v}");
    }

    #[test]
    fn a_wrong_key_fails_partial_verification() {
        let p = pool(1);
        let mut is = Is::new("S").unwrap();
        is.prepare(&p).unwrap();
        is.keys
            .set(0, is.keys.get(0).wrapping_add(1) % is.max_key as u32);
        is.keys.set(5, 0);
        is.keys.set(7, 0);
        is.run(&p);
        let v = is.verify(&p);
        assert!(!v.passed(), "{v}");
        assert!(Is::new("Q").is_err());
    }
}
