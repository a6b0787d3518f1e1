//! The value measured here for every published figure, or why it cannot occur
//! here: each study's outputs (its sweeps analysed as `analyze` does, its JSON
//! documents) read back from the study directory, and one row per figure.

use std::collections::BTreeMap;
use std::path::Path;

use scalescope_analysis::{Boundary, Curve};
use scalescope_place::Strategy;
use scalescope_report::ResultSet;

use crate::published::Figure;
use crate::{Facts, StudyName};

/// What this machine says about one figure.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case", tag = "verdict")]
pub enum Here {
    /// Measured here, with the comparison in words.
    Measured { value: String, comparison: String },
    /// The condition of the figure does not exist on this machine.
    CannotOccur { why: String },
    /// It could occur, but was not measured (a step failed or was left out).
    Unavailable { why: String },
}

impl Here {
    pub fn measured(value: impl Into<String>, comparison: impl Into<String>) -> Here {
        Here::Measured {
            value: value.into(),
            comparison: comparison.into(),
        }
    }
    pub fn cannot(why: impl Into<String>) -> Here {
        Here::CannotOccur { why: why.into() }
    }
    pub fn unavailable(why: impl Into<String>) -> Here {
        Here::Unavailable { why: why.into() }
    }
}

/// One row of the published-vs-here table.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Row {
    pub figure: Figure,
    pub here: Here,
}

/// A study's outputs, read back from its directory.
pub struct Outputs {
    pub facts: Facts,
    pub sets: BTreeMap<String, ResultSet>,
    pub docs: BTreeMap<String, serde_json::Value>,
    /// Steps whose output is missing or unreadable, with why.
    pub missing: BTreeMap<String, String>,
}

impl Outputs {
    /// Reads every step's output in `dir`.
    pub fn read(plan: &crate::StudyPlan, dir: &Path) -> Outputs {
        let mut o = Outputs {
            facts: plan.facts.clone(),
            sets: BTreeMap::new(),
            docs: BTreeMap::new(),
            missing: BTreeMap::new(),
        };
        for step in &plan.steps {
            let read = match step.kind {
                crate::StepKind::Sweep => read_set(&dir.join(&step.name)).map(|s| {
                    o.sets.insert(step.name.clone(), s);
                }),
                crate::StepKind::Document => read_doc(&dir.join(format!("{}.json", step.name)))
                    .map(|d| {
                        o.docs.insert(step.name.clone(), d);
                    }),
                crate::StepKind::Build => Ok(()),
            };
            if let Err(e) = read {
                o.missing.insert(step.name.clone(), e);
            }
        }
        o
    }

    pub fn missing(&self, step: &str) -> Here {
        Here::unavailable(
            self.missing
                .get(step)
                .cloned()
                .unwrap_or_else(|| format!("step {step} was not run")),
        )
    }
}

fn read_set(dir: &Path) -> Result<ResultSet, String> {
    let path = dir.join("results.jsonl");
    let (h, r, _) = scalescope_model::store::read_results(&path).map_err(|e| e.to_string())?;
    // One basis for the study's rows as for the sweep's own report.
    let basis = scalescope_analysis::basis_rule::rule(&h);
    let (series, _unreadable) = scalescope_model::evidence::read_all_series(dir, &r);
    let analysis = scalescope_analysis::analyze(&h, &r, &basis);
    Ok(ResultSet::new(path.display().to_string(), h, r, analysis).with_series(series))
}

fn read_doc(path: &Path) -> Result<serde_json::Value, String> {
    scalescope_model::load::json(path).map_err(|e| e.to_string())
}

/// The curve of `placement` in `set`.
pub fn curve<'a>(set: &'a ResultSet, placement: &Strategy) -> Option<&'a Curve> {
    set.analysis
        .curves
        .iter()
        .find(|c| &c.placement == placement)
}

/// Speedup at `threads` with its interval, as text.
pub fn speedup_text(c: &Curve, threads: usize) -> Option<(f64, String)> {
    let p = c.points.iter().find(|p| p.threads == threads)?;
    let ci = p
        .speedup_ci95
        .map(|(a, b)| format!(" (95% CI {a:.2}-{b:.2})"))
        .unwrap_or_default();
    Some((
        p.speedup,
        format!("{:.2}x at {threads} threads{ci}", p.speedup),
    ))
}

/// The knees of `c` found at a boundary of `kind`, as text; `None` when none.
pub fn knee_at(c: &Curve, kind: Boundary) -> Option<String> {
    let k = c.knees.iter().find(|k| k.boundary == kind)?;
    Some(format!(
        "bend after {} threads (slope {:.2} -> {:.2} per thread)",
        k.knee.threads, k.knee.slope_before, k.knee.slope_after
    ))
}

/// The rows of `study` from its outputs.
pub fn rows(study: StudyName, figures: &[Figure], o: &Outputs) -> Vec<Row> {
    figures
        .iter()
        .map(|f| Row {
            figure: f.clone(),
            here: match study {
                StudyName::GraphMining => crate::here_studies::graph_mining(f, o),
                StudyName::NumaStructure => crate::here_studies::numa_structure(f, o),
                StudyName::TpchNuma => crate::here_studies::tpch(f, o),
                StudyName::Sync => crate::here_kernels::sync(f, o),
                StudyName::SmtMpi => crate::here_kernels::smt_mpi(f, o),
            },
        })
        .collect()
}
