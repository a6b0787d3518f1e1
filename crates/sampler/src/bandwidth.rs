//! Memory bandwidth sources, tried in order of how exactly they measure the run:
//! resctrl MBM (the run's own tasks, local and total), then uncore memory-controller
//! counters (the whole socket). Each is verified to exist and to give a reading
//! before it is used; when none works the reasons of all are kept.

use std::path::Path;

use scalescope_model::evidence::DomainRate;

/// The rate type a sample records.
pub type DomainRateOut = DomainRate;

/// A cumulative reading of one domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DomainReading {
    pub domain: u32,
    pub total_bytes: u64,
    pub local_bytes: Option<u64>,
}

/// A working bandwidth source.
pub trait BandwidthSource {
    /// `resctrl-mbm`, `perf-uncore-imc`, `perf-amd-umc`.
    fn name(&self) -> &str;
    /// What the counts cover.
    fn scope(&self) -> &str;
    /// Makes sure these tasks are counted (resctrl moves them into its group).
    fn follow(&mut self, _tids: &[u32]) {}
    /// Cumulative bytes per domain since an arbitrary origin.
    fn read(&mut self) -> Vec<DomainReading>;
}

/// The best working source for the run `pid`, or why there is none.
///
/// # Errors
/// One sentence per source tried, saying what stopped it.
pub fn open(root: &Path, pid: u32) -> Result<Box<dyn BandwidthSource>, String> {
    let resctrl_why = match crate::resctrl::Resctrl::open(root, pid) {
        Ok(r) => return Ok(Box::new(r)),
        Err(why) => why,
    };
    let uncore_why = match crate::uncore::Uncore::open(root) {
        Ok(u) => return Ok(Box::new(u)),
        Err(why) => why,
    };
    Err(format!(
        "resctrl MBM: {resctrl_why}; uncore memory-controller counters: {uncore_why}"
    ))
}

/// Rates between two readings `secs` apart (domains missing from either are left out).
pub fn rates(before: &[DomainReading], after: &[DomainReading], secs: f64) -> Vec<DomainRate> {
    if secs <= 0.0 {
        return Vec::new();
    }
    after
        .iter()
        .filter_map(|a| {
            let b = before.iter().find(|b| b.domain == a.domain)?;
            Some(DomainRate {
                domain: a.domain,
                bytes_per_sec: a.total_bytes.saturating_sub(b.total_bytes) as f64 / secs,
                local_bytes_per_sec: a
                    .local_bytes
                    .zip(b.local_bytes)
                    .map(|(x, y)| x.saturating_sub(y) as f64 / secs),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_per_domain() {
        let r = |d, t, l| DomainReading {
            domain: d,
            total_bytes: t,
            local_bytes: l,
        };
        let out = rates(
            &[r(0, 100, Some(50)), r(1, 0, None)],
            &[r(0, 300, Some(150)), r(1, 1000, None), r(2, 5, None)],
            0.5,
        );
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].bytes_per_sec, 400.0);
        assert_eq!(out[0].local_bytes_per_sec, Some(200.0));
        assert_eq!(out[1].local_bytes_per_sec, None);
    }
}
