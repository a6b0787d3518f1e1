//! The five published studies (docs/STUDIES.md), each one command: a plan built
//! from this machine's topology and a time budget ([`plan`], sized by short probes,
//! [`probe`]), run as steps that are scalescope's own sweeps and commands started as
//! children, each resumable ([`run`]), and one report that opens with every figure
//! the publication reports beside the value measured here, or why it cannot occur
//! here ([`published`], [`here`], [`report`]).
//!
//! A study is a larger tour: it adds nothing a user could not run by hand, it
//! decides which commands answer the paper's question on this machine.

use std::fmt;
use std::str::FromStr;

pub mod facts;
pub mod here;
mod here_kernels;
mod here_studies;
pub mod plan;
pub mod probe;
pub mod published;
pub mod report;
pub mod run;
mod studies;
mod studies_kernels;
mod studies_omp;

pub use facts::Facts;
pub use plan::{Step, StepKind, StudyPlan};

/// The studies, by the name `scalescope study NAME` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StudyName {
    GraphMining,
    NumaStructure,
    TpchNuma,
    Sync,
    SmtMpi,
}

impl StudyName {
    pub const ALL: [StudyName; 5] = [
        StudyName::GraphMining,
        StudyName::NumaStructure,
        StudyName::TpchNuma,
        StudyName::Sync,
        StudyName::SmtMpi,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StudyName::GraphMining => "graph-mining",
            StudyName::NumaStructure => "numa-structure",
            StudyName::TpchNuma => "tpch-numa",
            StudyName::Sync => "sync",
            StudyName::SmtMpi => "smt-mpi",
        }
    }

    /// What the study asks, in one line.
    pub fn question(self) -> &'static str {
        match self {
            StudyName::GraphMining => "speedup of diamond counting on a Kronecker graph; where it bends (second socket, shared cores); forced hyper-threading",
            StudyName::NumaStructure => "the NUMA structure measured (bandwidth matrix, hops) against the SLIT; numbering traps; compact and scatter as the OpenMP runtime's own settings, verified",
            StudyName::TpchNuma => "TPC-H Q1 and Q6 with a NUMA-aware layout and a naive one over the boundary thread counts",
            StudyName::Sync => "locks, atomics and HTM for BFS-style and PageRank-style updates over batch sizes: T(N) = A N + B, the best batch, the paper's inequalities",
            StudyName::SmtMpi => "NAS EP, IS and FT with threads and with MPI ranks (one and two per core): the hyper-threading doubling yield",
        }
    }

    /// The publication it reproduces.
    pub fn source(self) -> &'static str {
        match self {
            StudyName::GraphMining => "Peregrine on a 2 x 24 x 2 c5.metal (Jamshidi 2020)",
            StudyName::NumaStructure => {
                "an 8-socket Nehalem-EX and two 2-socket Nehalem-EP servers (Terboven 2009-2010)"
            }
            StudyName::TpchNuma => "Flare on a 4-socket, 72-core server (2016)",
            StudyName::Sync => "Besta and Hoefler, HPDC 2015 (Haswell RTM, BlueGene/Q)",
            StudyName::SmtMpi => "Leng et al. (Dell), 16-node Xeon MP cluster, three interconnects",
        }
    }
}

impl fmt::Display for StudyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for StudyName {
    type Err = StudyError;
    fn from_str(s: &str) -> Result<Self, StudyError> {
        StudyName::ALL
            .into_iter()
            .find(|n| n.name() == s)
            .ok_or_else(|| StudyError::UnknownStudy(s.to_string()))
    }
}

/// Why a study could not be planned, run or reported.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    #[error("no study named `{0}` (the studies: graph-mining, numa-structure, tpch-numa, sync, smt-mpi)")]
    UnknownStudy(String),
    #[error("`{0}`: not a duration (e.g. 90s, 10m, 1h, 2m30s)")]
    Duration(String),
    #[error("budget {secs} s: a study needs at least 10 s")]
    BudgetTooSmall { secs: f64 },
    #[error("probe `{command}`: {detail}")]
    Probe { command: String, detail: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {detail}")]
    Corrupt { path: String, detail: String },
    #[error(
        "{path}: holds a plan for study `{found}`, not `{wanted}`; give another output directory"
    )]
    OtherStudy {
        path: String,
        found: String,
        wanted: String,
    },
    #[error("step {step}: {detail}")]
    Step { step: String, detail: String },
}

impl StudyError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> StudyError {
        StudyError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// Writes `bytes` to `rel` inside the study directory `dir`, through the owned
/// output layer (written aside and renamed; no link below `dir` followed).
pub(crate) fn write_in(dir: &std::path::Path, rel: &str, bytes: &[u8]) -> Result<(), StudyError> {
    scalescope_files::OutDir::open(dir)
        .and_then(|d| d.write_file(rel, bytes))
        .map_err(|e| StudyError::io(&dir.join(rel), std::io::Error::other(e.to_string())))
}

/// `90s`, `10m`, `1h`, `2m30s` or plain seconds, into seconds.
///
/// # Errors
/// [`StudyError::Duration`] for anything else, zero, or more than a week.
pub fn parse_duration(text: &str) -> Result<f64, StudyError> {
    let bad = || StudyError::Duration(text.to_string());
    let mut total = 0.0;
    let mut number = String::new();
    for c in text.trim().chars() {
        if c.is_ascii_digit() || c == '.' {
            number.push(c);
            continue;
        }
        let unit = match c {
            's' => 1.0,
            'm' => 60.0,
            'h' => 3600.0,
            _ => return Err(bad()),
        };
        let v: f64 = number.parse().map_err(|_| bad())?;
        total += v * unit;
        number.clear();
    }
    if !number.is_empty() {
        total += number.parse::<f64>().map_err(|_| bad())?;
    }
    if !(total > 0.0 && total <= 7.0 * 86400.0) {
        return Err(bad());
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_the_forms_people_write() {
        assert_eq!(parse_duration("90s").ok(), Some(90.0));
        assert_eq!(parse_duration("10m").ok(), Some(600.0));
        assert_eq!(parse_duration("2m30s").ok(), Some(150.0));
        assert_eq!(parse_duration("1h").ok(), Some(3600.0));
        assert_eq!(parse_duration("45").ok(), Some(45.0));
        for bad in ["", "0s", "10x", "m", "-5s", "1000h"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_study_has_a_name_that_parses_back() {
        for s in StudyName::ALL {
            assert_eq!(s.name().parse::<StudyName>().ok(), Some(s));
        }
        assert!("graph".parse::<StudyName>().is_err());
    }
}
