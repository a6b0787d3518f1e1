//! Synchronisation: the mechanisms that make concurrent updates to shared data safe
//! ([`Sync`]: coarse lock, striped locks, atomics, hardware transactions), the Intel
//! RTM primitives behind the transactional one ([`rtm`]), and the microbenchmark
//! that measures the cost of each per critical section ([`mod@bench`], run as a
//! workload by [`workload`]). PageRank's push
//! form uses the same mechanisms.

pub mod bench;
pub mod model;
pub mod rtm;
pub mod workload;

pub use rtm::{rtm_available, transaction_status, Aborts, ElidedLock};

/// How concurrent pushes into one score are made safe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sync {
    /// Pull PageRank: no shared writes.
    Pull,
    CoarseLock,
    StripedLocks(usize),
    Atomic,
    /// Hardware transactional memory (Intel RTM), with a lock fallback.
    Htm,
}

impl std::str::FromStr for Sync {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "pull" => Sync::Pull,
            "coarse-lock" => Sync::CoarseLock,
            "atomic" => Sync::Atomic,
            "htm" => Sync::Htm,
            _ => match s.strip_prefix("striped-locks:").map(str::parse::<usize>) {
                Some(Ok(k)) if k > 0 => Sync::StripedLocks(k),
                _ => {
                    return Err(format!(
                        "unknown sync `{s}` (pull, coarse-lock, striped-locks:K, atomic, htm)"
                    ))
                }
            },
        })
    }
}

impl std::fmt::Display for Sync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sync::Pull => f.write_str("pull"),
            Sync::CoarseLock => f.write_str("coarse-lock"),
            Sync::StripedLocks(k) => write!(f, "striped-locks:{k}"),
            Sync::Atomic => f.write_str("atomic"),
            Sync::Htm => f.write_str("htm"),
        }
    }
}
