//! A study's plan: the steps it runs (scalescope's own sweeps and commands, or a
//! compiler for the OpenMP probe), the sizing chosen for the budget and why, and
//! the time each step is expected to take. The plan is written to `OUT/study.json`
//! when a study starts, and a resumed study runs that plan, not a new one, so no
//! size or thread count changes halfway.

use std::path::Path;

use scalescope_topo::Topology;

use crate::{Facts, StudyError, StudyName};

/// The file in a study's directory that holds its plan.
pub const PLAN_FILE: &str = "study.json";
/// Schema of `study.json` (docs/json.md).
pub const PLAN_SCHEMA_VERSION: u32 = 1;

/// What a step is and where its result goes (relative to the study directory).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepKind {
    /// `scalescope sweep ... --out NAME`: a results directory, resumed with
    /// `sweep --resume --out NAME`.
    Sweep,
    /// A command whose JSON on stdout is kept as `NAME.json`.
    Document,
    /// A program built from source: the file `NAME` when it exits 0.
    Build,
}

/// One step of a study.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Step {
    pub name: String,
    pub what: String,
    pub kind: StepKind,
    /// `None`: this scalescope executable; otherwise the program to run.
    pub program: Option<String>,
    /// Arguments, run in the study directory.
    pub args: Vec<String>,
    pub estimate_secs: f64,
}

impl Step {
    pub fn scalescope(
        name: &str,
        what: &str,
        kind: StepKind,
        args: Vec<String>,
        estimate_secs: f64,
    ) -> Step {
        Step {
            name: name.into(),
            what: what.into(),
            kind,
            program: None,
            args,
            estimate_secs,
        }
    }

    /// The step's command line as a person would type it in the study directory.
    pub fn command_line(&self) -> String {
        let program = self.program.as_deref().unwrap_or("scalescope");
        let mut words = vec![quote(program)];
        words.extend(self.args.iter().map(|a| quote(a)));
        let line = words.join(" ");
        match self.kind {
            StepKind::Document => format!("{line} > {}.json", self.name),
            _ => line,
        }
    }
}

/// A word quoted for a shell where it needs it (for display only: steps run without one).
fn quote(a: &str) -> String {
    if !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

/// A study, sized for this machine and budget.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StudyPlan {
    pub kind: String,
    pub schema_version: u32,
    pub study: StudyName,
    pub budget_secs: f64,
    pub facts: Facts,
    /// How the inputs were sized, one sentence each (probe times, growth, the choice).
    pub sizing: Vec<String>,
    /// What this machine leaves out, and why.
    pub notes: Vec<String>,
    pub steps: Vec<Step>,
}

impl StudyPlan {
    pub fn new(study: StudyName, budget_secs: f64, facts: Facts) -> StudyPlan {
        StudyPlan {
            kind: "scalescope.study-plan".into(),
            schema_version: PLAN_SCHEMA_VERSION,
            study,
            budget_secs,
            facts,
            sizing: Vec::new(),
            notes: Vec::new(),
            steps: Vec::new(),
        }
    }

    pub fn estimate_secs(&self) -> f64 {
        self.steps.iter().map(|s| s.estimate_secs).sum()
    }

    /// The plan for a person: machine, sizing, every step's command, the estimate.
    pub fn text(&self) -> String {
        let mut out = format!(
            "study {}: {}\nreproduces: {}\nmachine: {}\nbudget: {:.0} s; estimated: {:.0} s\n",
            self.study,
            self.study.question(),
            self.study.source(),
            self.facts.machine,
            self.budget_secs,
            self.estimate_secs()
        );
        if !self.sizing.is_empty() {
            out += "\nsizing:\n";
            for s in &self.sizing {
                out += &format!("  {s}\n");
            }
        }
        if !self.notes.is_empty() {
            out += "\nnot on this machine:\n";
            for n in &self.notes {
                out += &format!("  {n}\n");
            }
        }
        out += "\nsteps (run in the study directory):\n";
        for (i, s) in self.steps.iter().enumerate() {
            out += &format!(
                "  {}. {} ({}, about {:.0} s)\n     {}\n",
                i + 1,
                s.name,
                s.what,
                s.estimate_secs,
                s.command_line()
            );
        }
        out
    }

    /// Writes `dir/study.json`.
    ///
    /// # Errors
    /// I/O.
    pub fn save(&self, dir: &Path) -> Result<(), StudyError> {
        let path = dir.join(PLAN_FILE);
        let text = serde_json::to_string_pretty(self).map_err(|e| StudyError::Corrupt {
            path: path.display().to_string(),
            detail: e.to_string(),
        })?;
        crate::write_in(dir, PLAN_FILE, (text + "\n").as_bytes())
    }

    /// Reads `dir/study.json`, `None` where there is none.
    ///
    /// # Errors
    /// A file that is not a study plan of this schema.
    pub fn load(dir: &Path) -> Result<Option<StudyPlan>, StudyError> {
        let path = dir.join(PLAN_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StudyError::io(&path, e)),
        };
        let plan: StudyPlan = serde_json::from_str(&text).map_err(|e| StudyError::Corrupt {
            path: path.display().to_string(),
            detail: format!("not a study plan: {e}"),
        })?;
        if plan.schema_version != PLAN_SCHEMA_VERSION {
            return Err(StudyError::Corrupt {
                path: path.display().to_string(),
                detail: format!(
                    "plan schema {} (this scalescope reads {PLAN_SCHEMA_VERSION})",
                    plan.schema_version
                ),
            });
        }
        Ok(Some(plan))
    }
}

/// The plan kept in `dir` (a study being finished), else `new()`'s; whether it
/// was kept.
///
/// # Errors
/// A kept plan of another study or of another schema, or `new()`'s error.
pub fn kept_or_new<E: From<StudyError>>(
    study: StudyName,
    dir: Option<&Path>,
    new: impl FnOnce() -> Result<StudyPlan, E>,
) -> Result<(StudyPlan, bool), E> {
    if let Some(dir) = dir {
        if let Some(plan) = StudyPlan::load(dir)? {
            if plan.study != study {
                return Err(StudyError::OtherStudy {
                    path: dir.display().to_string(),
                    found: plan.study.to_string(),
                    wanted: study.to_string(),
                }
                .into());
            }
            return Ok((plan, true));
        }
    }
    Ok((new()?, false))
}

/// What planning needs: the machine, its facts, the budget, and a way to time a
/// probe (a short one-thread run of the study's kernel).
pub struct Ctx<'a> {
    pub topo: &'a Topology,
    pub facts: Facts,
    pub budget_secs: f64,
    pub probe: &'a mut dyn crate::probe::Probe,
}

/// The share of the budget the planned runs may take; the rest is left for input
/// preparation beyond the estimate, process starts, analysis and the report.
pub const BUDGET_SHARE: f64 = 0.6;

/// Plans `study` for the machine in `ctx`.
///
/// # Errors
/// A budget under 10 s, or a probe that failed.
pub fn plan(study: StudyName, ctx: &mut Ctx) -> Result<StudyPlan, StudyError> {
    if ctx.budget_secs < 10.0 {
        return Err(StudyError::BudgetTooSmall {
            secs: ctx.budget_secs,
        });
    }
    let mut p = StudyPlan::new(study, ctx.budget_secs, ctx.facts.clone());
    match study {
        StudyName::GraphMining => crate::studies::graph_mining(ctx, &mut p)?,
        StudyName::NumaStructure => crate::studies::numa_structure(ctx, &mut p)?,
        StudyName::TpchNuma => crate::studies::tpch_numa(ctx, &mut p)?,
        StudyName::Sync => crate::studies_kernels::sync(ctx, &mut p)?,
        StudyName::SmtMpi => crate::studies_kernels::smt_mpi(ctx, &mut p)?,
    }
    Ok(p)
}

/// A thread list as a sweep takes it.
pub fn thread_list(threads: &[usize]) -> String {
    threads
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The expected speed of `t` threads against one, for estimates only: 80% of one
/// per core used, never below one.
pub fn speed(t: usize, cores: usize) -> f64 {
    (0.8 * t.min(cores.max(1)) as f64).max(1.0)
}

/// Seconds a sweep of `one_thread_secs` runs takes over `threads` with `runs_per_point`
/// runs each (warm-ups included), `overhead_secs` per run.
pub fn sweep_secs(
    threads: &[usize],
    cores: usize,
    runs_per_point: usize,
    one_thread_secs: f64,
    overhead_secs: f64,
) -> f64 {
    threads
        .iter()
        .map(|&t| runs_per_point as f64 * (one_thread_secs / speed(t, cores) + overhead_secs))
        .sum()
}
