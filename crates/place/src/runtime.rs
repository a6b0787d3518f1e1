//! Placements the program's own OpenMP runtime makes (`runtime:compact`,
//! `runtime:scatter`, `runtime:spread`): the portable settings that name a strategy
//! instead of CPU numbers, and the hardware-position plan each is compared with.
//!
//! The standard forms (OpenMP 4.0, read by libgomp, LLVM's and Intel's runtimes):
//! compact is `OMP_PLACES=threads OMP_PROC_BIND=close`, spread is
//! `OMP_PLACES=cores OMP_PROC_BIND=spread`. Scatter has no standard form; Intel's
//! and LLVM's runtimes read `KMP_AFFINITY=granularity=core,scatter` (which wins over
//! `OMP_PROC_BIND` there), and GNU's, which ignores `KMP_*`, gets the nearest
//! standard form, spread over cores. Runtimes order their places by OS number, not
//! by hardware position, so where the numbering interleaves packages the runtime's
//! answer can differ from the plan: the sweep's monitor checks it run by run.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{Granularity, PlaceError, Strategy};

/// A strategy the program's OpenMP runtime carries out itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum RuntimeBind {
    Compact,
    Scatter,
    Spread,
}

/// The names `runtime:NAME` takes.
pub const RUNTIME_NAMES: [&str; 3] = ["compact", "scatter", "spread"];

impl RuntimeBind {
    /// The hardware-position strategy whose plan the runtime's binding is compared with.
    pub fn plan(self) -> Strategy {
        match self {
            RuntimeBind::Compact => Strategy::Compact,
            RuntimeBind::Scatter => Strategy::Scatter,
            RuntimeBind::Spread => Strategy::Spread,
        }
    }

    /// What one thread is bound to: a hardware thread for `threads` places, a core
    /// for `cores` places (and KMP's `granularity=core`).
    pub fn granularity(self) -> Granularity {
        match self {
            RuntimeBind::Compact => Granularity::Thread,
            RuntimeBind::Scatter | RuntimeBind::Spread => Granularity::Core,
        }
    }

    /// `OMP_PLACES` and `OMP_PROC_BIND`: the standard form, or the nearest one.
    pub fn omp(self) -> (&'static str, &'static str) {
        match self {
            RuntimeBind::Compact => ("threads", "close"),
            RuntimeBind::Scatter | RuntimeBind::Spread => ("cores", "spread"),
        }
    }

    /// `KMP_AFFINITY` for Intel's and LLVM's runtimes, where they have the strategy.
    pub fn kmp(self) -> Option<&'static str> {
        match self {
            RuntimeBind::Compact => Some("granularity=fine,compact"),
            RuntimeBind::Scatter => Some("granularity=core,scatter"),
            RuntimeBind::Spread => None,
        }
    }

    /// Whether the standard form is the strategy itself or only the nearest one.
    pub fn omp_is_exact(self) -> bool {
        !matches!(self, RuntimeBind::Scatter)
    }

    /// The environment of a run the runtime places, `threads` threads.
    pub fn env(self, threads: usize) -> Vec<(String, String)> {
        let (places, bind) = self.omp();
        let mut env = vec![
            ("OMP_NUM_THREADS".to_string(), threads.to_string()),
            ("OMP_PLACES".to_string(), places.to_string()),
            ("OMP_PROC_BIND".to_string(), bind.to_string()),
        ];
        if let Some(k) = self.kmp() {
            env.push(("KMP_AFFINITY".to_string(), k.to_string()));
        }
        env
    }
}

impl fmt::Display for RuntimeBind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RuntimeBind::Compact => "compact",
            RuntimeBind::Scatter => "scatter",
            RuntimeBind::Spread => "spread",
        })
    }
}

impl FromStr for RuntimeBind {
    type Err = PlaceError;
    fn from_str(s: &str) -> Result<Self, PlaceError> {
        match s {
            "compact" => Ok(RuntimeBind::Compact),
            "scatter" => Ok(RuntimeBind::Scatter),
            "spread" => Ok(RuntimeBind::Spread),
            other => Err(PlaceError::BadValue {
                what: "runtime placement",
                value: other.into(),
                expected: "runtime:compact, runtime:scatter or runtime:spread",
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_portable_forms_of_each_strategy() {
        assert_eq!(RuntimeBind::Compact.omp(), ("threads", "close"));
        assert_eq!(RuntimeBind::Spread.omp(), ("cores", "spread"));
        assert_eq!(RuntimeBind::Scatter.kmp(), Some("granularity=core,scatter"));
        assert_eq!(RuntimeBind::Compact.kmp(), Some("granularity=fine,compact"));
        assert!(!RuntimeBind::Scatter.omp_is_exact());
        let env = RuntimeBind::Spread.env(4);
        assert!(env.contains(&("OMP_NUM_THREADS".into(), "4".into())));
        assert!(!env.iter().any(|(k, _)| k == "KMP_AFFINITY"));
    }

    #[test]
    fn runtime_names_parse_and_print_back() {
        for n in RUNTIME_NAMES {
            let s: Strategy = format!("runtime:{n}").parse().unwrap();
            assert_eq!(s.to_string(), format!("runtime:{n}"));
        }
        assert!("runtime:close".parse::<Strategy>().is_err());
    }
}
