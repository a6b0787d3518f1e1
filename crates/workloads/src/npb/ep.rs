//! NAS Parallel Benchmarks EP, "embarrassingly parallel" (Bailey et al., "The NAS
//! Parallel Benchmarks", RNR-94-007, 1994; NPB 3.4.1 ep.c): 2^(M+1) uniform
//! deviates from NPB's linear congruential generator (x <- 5^13 x mod 2^46) become
//! Gaussian pairs by the Marsaglia polar method; the sums of the pairs and the counts
//! per square annulus are verified against the official values for the class.
//!
//! The generator ([`super::rand`]) is bit-identical to NPB's `randlc`.
//!
//! Work is split like the reference OpenMP code: the 2^(M-16) batches of 2^16 pairs
//! are divided statically among the workers, each batch's seed found by jumping
//! ahead in the generator.

use std::collections::BTreeMap;
use std::time::Instant;

use scalescope_model::detail::{Detail, EpDetail};
use serde::Deserialize;

use crate::pool::{chunk, Pool};
use crate::{Figure, Verification, Workload, WorkloadError};

use super::rand::{jump, next, pow2k, A, R46};
use super::{Class, NpbSettings};

const MK: u32 = 16;
const NK: usize = 1 << MK;
const NQ: usize = 10;
const SEED: u64 = 271_828_183;

#[derive(Deserialize)]
struct EpReference {
    params: BTreeMap<String, EpParams>,
    epsilon_rel: f64,
    sx_sy: BTreeMap<String, (f64, f64)>,
    /// Recorded from runs for S-B (NPB publishes only sx and sy): where a class has
    /// none (C), the pairs are reported, not checked.
    gaussian_pairs_observed: BTreeMap<String, u64>,
}

#[derive(Deserialize)]
struct EpParams {
    #[serde(rename = "M")]
    m: u32,
}

/// The official values of EP, from the embedded npb.json.
///
/// # Errors
/// [`WorkloadError::Reference`] if the embedded file lacks them (a build with a
/// broken fixture).
fn reference() -> Result<EpReference, WorkloadError> {
    super::reference_section("EP")
}

/// Sums and annulus counts of one range of batches (one worker's, one rank's, or,
/// added up, the whole run's).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Partial {
    pub sx: f64,
    pub sy: f64,
    /// Gaussian pairs per square annulus l <= max(|X|, |Y|) < l + 1.
    pub q: [u64; NQ],
}

impl Partial {
    /// Adds another range's sums and counts.
    pub fn add(&mut self, other: &Partial) {
        self.sx += other.sx;
        self.sy += other.sy;
        for (a, b) in self.q.iter_mut().zip(other.q) {
            *a += b;
        }
    }
}

/// Batches `ks` (0-based), each 2^16 pairs from its own jumped-to seed.
fn batches(ks: std::ops::Range<u64>) -> Partial {
    let mut p = Partial::default();
    let mut x = vec![0f64; 2 * NK];
    // 2*NK deviates per batch: batch k starts 2*NK*k steps into the stream.
    let stride = pow2k(A, MK + 1);
    for k in ks {
        let mut s = jump(SEED, k, stride);
        for v in x.iter_mut() {
            s = next(s, A);
            *v = s as f64 * R46;
        }
        for pair in x.chunks_exact(2) {
            let (x1, x2) = (2.0 * pair[0] - 1.0, 2.0 * pair[1] - 1.0);
            let t1 = x1 * x1 + x2 * x2;
            if t1 <= 1.0 {
                let t2 = (-2.0 * t1.ln() / t1).sqrt();
                let (t3, t4) = (x1 * t2, x2 * t2);
                let l = t3.abs().max(t4.abs()) as usize;
                p.q[l.min(NQ - 1)] += 1;
                p.sx += t3;
                p.sy += t4;
            }
        }
    }
    p
}

/// The EP workload at one class.
pub struct Ep {
    class: Class,
    m: u32,
    result: Option<Partial>,
    seconds: f64,
}

impl Ep {
    /// EP at the class `class` names (`S`, `W`, `A`, `B`, `C`); errors as [`NpbSettings::of`].
    pub fn new(class: &str) -> Result<Ep, WorkloadError> {
        Ep::with(&NpbSettings::of(class)?)
    }

    /// EP with its settings.
    ///
    /// # Errors
    /// [`WorkloadError::Reference`] where the embedded values lack the class.
    pub fn with(settings: &NpbSettings) -> Result<Ep, WorkloadError> {
        let r = reference()?;
        let m = super::official(&r.params, settings.class, "EP")?.m;
        Ok(Ep {
            class: settings.class,
            m,
            result: None,
            seconds: 0.0,
        })
    }

    /// The sums of rank `rank` of `ranks` (an MPI run): the class's batches split
    /// statically among the ranks like NPB's MPI ep.f, this rank's share split
    /// among the pool's workers. Adding every rank's result gives the run's, to be
    /// checked with [`Ep::verify_total`].
    pub fn rank_share(&self, pool: &Pool, rank: usize, ranks: usize) -> Partial {
        let nn = 1usize << (self.m - MK);
        let mine = chunk(nn, ranks.max(1), rank, 1);
        let parts = pool.broadcast(|i| {
            let r = chunk(mine.len(), pool.threads(), i, 1);
            batches((mine.start + r.start) as u64..(mine.start + r.end) as u64)
        });
        let mut total = Partial::default();
        for p in parts {
            total.add(&p);
        }
        total
    }

    /// Checks a whole run's sums (every rank's added) against the official values,
    /// with the run's time for the Mop/s in [`Workload::detail`].
    pub fn verify_total(&mut self, total: Partial, seconds: f64, pool: &Pool) -> Verification {
        self.result = Some(total);
        self.seconds = seconds;
        self.verify(pool)
    }

    /// Official Mop/s formula: 2^(M+1) / t / 1e6.
    pub fn mops(&self) -> f64 {
        (1u64 << (self.m + 1)) as f64 / self.seconds / 1e6
    }
}

impl Workload for Ep {
    fn name(&self) -> &'static str {
        "ep"
    }

    fn primary_figure(&self) -> &'static str {
        "mops"
    }

    fn prepare(&mut self, _pool: &Pool) -> Result<(), WorkloadError> {
        Ok(())
    }

    fn run(&mut self, pool: &Pool) -> (f64, Vec<Figure>) {
        let nn = 1usize << (self.m - MK);
        let t0 = Instant::now();
        let parts = pool.broadcast(|i| {
            let r = chunk(nn, pool.threads(), i, 1);
            batches(r.start as u64..r.end as u64)
        });
        self.seconds = t0.elapsed().as_secs_f64();
        let mut total = Partial::default();
        for p in parts {
            total.add(&p);
        }
        self.result = Some(total);
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
        let Some(p) = &self.result else {
            return Verification::Failed("nothing ran".into());
        };
        let r = match reference() {
            Ok(r) => r,
            Err(e) => return Verification::Unavailable(e.to_string()),
        };
        let (sx_ref, sy_ref) = match super::official(&r.sx_sy, self.class, "EP") {
            Ok(v) => *v,
            Err(e) => return Verification::Unavailable(e.to_string()),
        };
        let pairs_ref = r.gaussian_pairs_observed.get(self.class.as_str()).copied();
        let (ex, ey) = (
            ((p.sx - sx_ref) / sx_ref).abs(),
            ((p.sy - sy_ref) / sy_ref).abs(),
        );
        let pairs: u64 = p.q.iter().sum();
        let passed =
            ex <= r.epsilon_rel && ey <= r.epsilon_rel && pairs_ref.is_none_or(|w| pairs == w);
        let pairs_ref = match pairs_ref {
            Some(w) => format!("reference {w}"),
            None => "no recorded count for this class, not checked".into(),
        };
        Verification::check(
            passed,
            format!(
                "class {}: sx {:.15e} (reference {sx_ref:.15e}, rel. error {ex:.1e}), sy {:.15e} (reference {sy_ref:.15e}, rel. error {ey:.1e}), limit {:e}; Gaussian pairs {pairs} ({pairs_ref})",
                self.class, p.sx, p.sy, r.epsilon_rel
            ),
        )
    }

    fn detail(&self) -> Detail {
        let p = self.result.unwrap_or_default();
        Detail::Ep(EpDetail {
            class: self.class.to_string(),
            m: self.m,
            sx: p.sx,
            sy: p.sy,
            annulus_counts: p.q.to_vec(),
            seconds: self.seconds,
            mops: self.mops(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_s_verifies_on_one_and_two_workers() {
        let cpus: Vec<u32> = scalescope_topo::affinity::process_affinity()
            .unwrap()
            .iter()
            .collect();
        for threads in [1, 2] {
            let sets: Vec<scalescope_topo::CpuSet> = (0..threads)
                .map(|i| [cpus[i % cpus.len()]].into_iter().collect())
                .collect();
            let pool = Pool::new(&sets, None).unwrap();
            let mut ep = Ep::new("S").unwrap();
            let report = crate::execute(&mut ep, &pool).unwrap();
            assert!(report.verification.passed(), "{}", report.verification);
        }
    }

    #[test]
    fn rank_shares_add_up_to_the_verified_run() {
        let pool = Pool::new(
            &[scalescope_topo::affinity::process_affinity().unwrap()],
            None,
        )
        .unwrap();
        let mut ep = Ep::new("S").unwrap();
        let mut total = Partial::default();
        for rank in 0..3 {
            total.add(&ep.rank_share(&pool, rank, 3));
        }
        assert!(ep.verify_total(total, 1.0, &pool).passed());
        let mut one = ep.rank_share(&pool, 0, 3);
        one.add(&ep.rank_share(&pool, 1, 3));
        assert!(!ep.verify_total(one, 1.0, &pool).passed());
    }

    #[test]
    fn a_wrong_answer_fails() {
        let pool = Pool::new(
            &[scalescope_topo::affinity::process_affinity().unwrap()],
            None,
        )
        .unwrap();
        let mut ep = Ep::new("S").unwrap();
        ep.run(&pool);
        ep.result.as_mut().unwrap().sx += 1e-3;
        assert!(!ep.verify(&pool).passed());
        assert!(Ep::new("Z").is_err());
    }
}
