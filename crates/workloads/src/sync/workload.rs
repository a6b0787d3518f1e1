//! The synchronisation microbenchmark as a [`Workload`]: every mechanism (coarse
//! lock, striped locks, atomics, RTM where it can commit) against every batch size,
//! for both kinds of update, with the exact-total check as its verification.

use scalescope_model::detail::{Detail, SyncDetail};

use super::bench::{sweep, Curve, Op, Sizes};
use super::model::{claims, Claim};
use super::{rtm_available, Sync};
use crate::pool::Pool;
use crate::{Figure, Verification, Workload, WorkloadError};
use scalescope_model::value::Count;

/// Why RTM could not be measured here.
const RTM_MISSING: &str = "this CPU does not offer Intel RTM (TSX absent or disabled)";

/// Slots of the shared table: a slot is picked by a 32-bit index.
pub type Table = Count<1, 4_294_967_296>;
/// Updates per critical section: a threshold, not an allocation, so any count up
/// to 10^12 (every update of a worker in one section).
pub type Batch = Count<1, 1_000_000_000_000>;
/// Updates per thread per point.
pub type Updates = Count<1, 1_000_000_000_000>;
/// Locks of the striped mechanism.
pub type Stripes = Count<1, 16_777_216>;
/// Repetitions of every point.
pub type Reps = Count<1, 1000>;

/// Batch sizes when none are given.
pub const DEFAULT_BATCHES: [u64; 7] = [1, 2, 4, 8, 16, 32, 64];

/// The benchmark's settings (`sync` flags; `sweep --workload sync --param` keys:
/// `table`, `batches` (`1,2,4`), `updates`, `stripes`, `reps`, `force`).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct SyncSettings {
    /// Slots in the shared table (fewer = more contention).
    #[arg(long, default_value_t = Table::clamped(4096))]
    pub table: Table,
    /// Batch sizes (updates per critical section), one point of each curve per value.
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_BATCHES.map(Batch::clamped))]
    pub batches: Vec<Batch>,
    /// Updates per thread per measurement.
    #[arg(long, default_value_t = Updates::clamped(200_000))]
    pub updates: Updates,
    /// Stripes for striped locks.
    #[arg(long, default_value_t = Stripes::clamped(256))]
    pub stripes: Stripes,
    /// Repetitions of every (mechanism, batch) point, run in rounds; the fits use
    /// every repetition and give A and B 95% intervals.
    #[arg(long, default_value_t = Reps::clamped(3))]
    pub reps: Reps,
    /// Go ahead even when the memory estimate exceeds what is available.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
        default_value_t = false, action = clap::ArgAction::Set)]
    pub force: bool,
}

impl Default for SyncSettings {
    fn default() -> SyncSettings {
        SyncSettings {
            table: Table::clamped(4096),
            batches: DEFAULT_BATCHES.map(Batch::clamped).to_vec(),
            updates: Updates::clamped(200_000),
            stripes: Stripes::clamped(256),
            reps: Reps::clamped(3),
            force: false,
        }
    }
}

/// The benchmark: curves once run, or the lost update that stopped it.
#[derive(Debug)]
pub struct SyncBench {
    settings: SyncSettings,
    curves: Result<Vec<Curve>, String>,
}

impl SyncBench {
    /// # Errors
    /// [`WorkloadError::BadParam`] naming `batches` when there is none (every
    /// other setting's range is its type's).
    pub fn new(settings: SyncSettings) -> Result<SyncBench, WorkloadError> {
        if settings.batches.is_empty() {
            return Err(WorkloadError::param(
                "batches",
                "needs at least one batch size",
            ));
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

    /// Nothing is allocated before the run; the memory the run will take (the
    /// table, the stripes, every worker's list of slots) is estimated here and
    /// refused past what is available unless forced.
    fn prepare(&mut self, pool: &Pool) -> Result<(), WorkloadError> {
        let s = &self.settings;
        let need = crate::budget::sync_bytes(
            s.table.get(),
            s.stripes.get(),
            s.updates.get(),
            pool.threads() as u64,
        );
        let what = format!(
            "the sync study ({} slots, {} updates per thread on {} threads)",
            s.table,
            s.updates,
            pool.threads()
        );
        crate::budget::check(&what, need, s.force)
    }

    fn run(&mut self, pool: &Pool) -> (f64, Vec<Figure>) {
        let s = &self.settings;
        let mechanisms = [
            Sync::CoarseLock,
            Sync::StripedLocks(s.stripes.usize()),
            Sync::Atomic,
            Sync::Htm,
        ];
        let batches: Vec<usize> = s.batches.iter().map(|b| b.usize()).collect();
        let t = std::time::Instant::now();
        self.curves = [Op::MarkVisited, Op::Increment]
            .iter()
            .map(|&op| {
                let sizes = Sizes {
                    table: s.table.usize(),
                    updates: s.updates.usize(),
                    reps: s.reps.usize(),
                };
                sweep(&mechanisms, op, &batches, &sizes, pool)
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

    fn detail(&self) -> Detail {
        Detail::Sync(SyncDetail {
            table: self.settings.table.get(),
            updates: self.settings.updates.get(),
            reps: self.settings.reps.get(),
            curves: self.curves().to_vec(),
            claims: self.claims(),
            note: SyncBench::htm_note().map(str::to_string),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::test_pool as pool;

    #[test]
    fn every_mechanism_is_measured_and_checked() {
        let settings = SyncSettings {
            batches: vec![Batch::clamped(1), Batch::clamped(4)],
            table: Table::clamped(64),
            updates: Updates::clamped(2000),
            stripes: Stripes::clamped(8),
            reps: Reps::clamped(2),
            force: false,
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
        let none = SyncSettings {
            batches: Vec::new(),
            ..settings
        };
        assert!(SyncBench::new(none)
            .unwrap_err()
            .to_string()
            .contains("`batches`"));
    }
}
