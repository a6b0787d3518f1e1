//! The figures each publication reports, with its citation: one data file per
//! study in `crates/study/studies/NAME.json`, embedded at build time. The numbers
//! are the publications'; the wording is the project's.

use crate::{StudyError, StudyName};

/// Where the numbers come from.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Citation {
    /// The copy of the source the project holds.
    pub seed: String,
    /// The original publication.
    pub source: String,
    pub machine: String,
    pub workload: String,
}

/// One reported figure.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Figure {
    pub id: String,
    pub what: String,
    /// As the publication states it, with its unit and conditions.
    pub published: String,
    /// The number, where the publication gives one.
    pub value: Option<f64>,
    pub unit: String,
    /// Where on the publication's machine.
    pub at: String,
    /// TPC-H figures: the query and thread count.
    #[serde(default)]
    pub query: Option<String>,
    #[serde(default)]
    pub threads: Option<usize>,
    /// NAS figures: the kernel.
    #[serde(default)]
    pub kernel: Option<String>,
}

/// A study's published figures.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Published {
    pub study: StudyName,
    pub citation: Citation,
    pub figures: Vec<Figure>,
}

fn text(study: StudyName) -> &'static str {
    match study {
        StudyName::GraphMining => include_str!("../studies/graph-mining.json"),
        StudyName::NumaStructure => include_str!("../studies/numa-structure.json"),
        StudyName::TpchNuma => include_str!("../studies/tpch-numa.json"),
        StudyName::Sync => include_str!("../studies/sync.json"),
        StudyName::SmtMpi => include_str!("../studies/smt-mpi.json"),
    }
}

/// The published figures of `study`.
///
/// # Errors
/// A data file that does not parse (a build of this repository with a broken file;
/// the tests read every one).
pub fn of(study: StudyName) -> Result<Published, StudyError> {
    serde_json::from_str(text(study)).map_err(|e| StudyError::Corrupt {
        path: format!("crates/study/studies/{study}.json"),
        detail: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_data_file_parses_names_its_study_and_cites_a_seed() {
        for s in StudyName::ALL {
            let p = of(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(p.study, s);
            assert!(p.citation.seed.contains("/work/shared/seeds/"), "{s}");
            assert!(!p.figures.is_empty(), "{s}");
            let mut ids: Vec<&str> = p.figures.iter().map(|f| f.id.as_str()).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), p.figures.len(), "{s}: duplicate figure ids");
        }
    }

    #[test]
    fn the_tpch_table_is_the_published_one() {
        let p = of(StudyName::TpchNuma).unwrap();
        let q1: Vec<f64> = p
            .figures
            .iter()
            .filter(|f| f.query.as_deref() == Some("q1"))
            .filter_map(|f| f.value)
            .collect();
        assert_eq!(q1, [5300.0, 3545.0, 1981.0, 1065.0, 797.0, 490.0, 279.0]);
    }
}
