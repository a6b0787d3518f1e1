//! The synchronisation microbenchmark as a [`Workload`]: every mechanism (coarse
//! lock, striped locks, atomics, RTM where it can commit) against every batch size,
//! for both kinds of update, with the exact-total check as its verification.

use serde_json::json;

use super::bench::{sweep, Curve, Op, Sizes};
use super::model::{claims, Claim};
use super::{rtm_available, Sync};
use crate::pool::Pool;
use crate::{Figure, Verification, Workload, WorkloadError};

/// Why RTM could not be measured here.
const RTM_MISSING: &str = "this CPU does not offer Intel RTM (TSX absent or disabled)";

/// The benchmark's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncSettings {
    /// Updates per critical section, one point of each curve per value.
    pub batches: Vec<usize>,
    /// Slots of the shared table (fewer = more contention).
    pub table: usize,
    /// Updates per thread per point.
    pub updates: usize,
    /// Locks of the striped mechanism.
    pub stripes: usize,
    /// Repetitions of every (mechanism, batch) point, in rounds.
    pub reps: usize,
}

/// The benchmark: curves once run, or the lost update that stopped it.
#[derive(Debug)]
pub struct SyncBench {
    settings: SyncSettings,
    curves: Result<Vec<Curve>, String>,
}

impl SyncBench {
    /// # Errors
    /// [`WorkloadError::BadParam`] naming a setting that is zero or empty.
    pub fn new(settings: SyncSettings) -> Result<SyncBench, WorkloadError> {
        let bad = |key: &str, detail: &str| WorkloadError::BadParam {
            key: key.into(),
            detail: detail.into(),
        };
        if settings.batches.is_empty() || settings.batches.contains(&0) {
            return Err(bad("batches", "needs positive batch sizes"));
        }
        for (key, v) in [
            ("table", settings.table),
            ("updates", settings.updates),
            ("stripes", settings.stripes),
            ("reps", settings.reps),
        ] {
            if v == 0 {
                return Err(bad(key, "must be positive"));
            }
        }
        Ok(SyncBench {
            settings,
            curves: Ok(Vec::new()),
        })
    }

    /// The measured curves (empty before the run or after a lost update).
    pub fn curves(&self) -> &[Curve] {
        self.curves.as_deref().unwrap_or(&[])
    }

    /// The study's predicted inequalities, tested on the fits' intervals.
    pub fn claims(&self) -> Vec<Claim> {
        claims(self.curves(), Self::htm_note().map(|_| RTM_MISSING))
    }

    /// Why RTM was left out, where it was.
    pub fn htm_note() -> Option<&'static str> {
        (!rtm_available()).then_some("htm: unavailable here: this CPU does not offer Intel RTM (TSX absent or disabled); not measured")
    }
}

impl Workload for SyncBench {
    fn name(&self) -> &'static str {
        "sync"
    }

    fn primary_figure(&self) -> &'static str {
        "best_updates_per_s"
    }

    fn prepare(&mut self, _pool: &Pool) -> Result<(), WorkloadError> {
        Ok(())
    }

    fn run(&mut self, pool: &Pool) -> (f64, Vec<Figure>) {
        let s = &self.settings;
        let mechanisms = [
            Sync::CoarseLock,
            Sync::StripedLocks(s.stripes),
            Sync::Atomic,
            Sync::Htm,
        ];
        let t = std::time::Instant::now();
        self.curves = [Op::MarkVisited, Op::Increment]
            .iter()
            .map(|&op| {
                let sizes = Sizes {
                    table: s.table,
                    updates: s.updates,
                    reps: s.reps,
                };
                sweep(&mechanisms, op, &s.batches, &sizes, pool)
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|c| c.into_iter().flatten().collect());
        let best_ns = self
            .curves()
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.ns_per_update))
            .fold(f64::INFINITY, f64::min);
        let figures = vec![Figure {
            name: "best_updates_per_s".into(),
            value: 1e9 / best_ns,
            unit: "updates/s",
        }];
        (t.elapsed().as_secs_f64(), figures)
    }

    fn verify(&self, _pool: &Pool) -> Verification {
        match &self.curves {
            Ok(c) if c.is_empty() => Verification::Failed("nothing ran".into()),
            Ok(c) => Verification::Passed(format!(
                "{} curves; every table total equals the updates made (no update lost)",
                c.len()
            )),
            Err(e) => Verification::Failed(e.clone()),
        }
    }

    fn detail(&self) -> serde_json::Value {
        json!({"table": self.settings.table, "reps": self.settings.reps, "curves": self.curves(), "claims": self.claims(), "note": SyncBench::htm_note()})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::test_pool as pool;

    #[test]
    fn every_mechanism_is_measured_and_checked() {
        let settings = SyncSettings {
            batches: vec![1, 4],
            table: 64,
            updates: 2000,
            stripes: 8,
            reps: 2,
        };
        let mut bench = SyncBench::new(settings.clone()).unwrap();
        let report = crate::execute(&mut bench, &pool(2)).unwrap();
        assert!(report.verification.passed(), "{}", report.verification);
        let expected = if rtm_available() { 8 } else { 6 };
        assert_eq!(bench.curves().len(), expected);
        let claims = bench.claims();
        assert_eq!(claims.len(), 4);
        if !rtm_available() {
            assert!(claims
                .iter()
                .all(|c| c.verdict.starts_with("unavailable here: ")));
        }
        let zero = SyncSettings {
            table: 0,
            ..settings
        };
        assert!(SyncBench::new(zero)
            .unwrap_err()
            .to_string()
            .contains("`table`"));
    }
}
