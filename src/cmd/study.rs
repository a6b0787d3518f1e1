//! `scalescope study list` and `scalescope study NAME`: plan (or read back the
//! plan of an interrupted study), print it, run its steps, write and summarise its
//! report. The studies themselves live in `scalescope-study`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use scalescope_study::plan::{Ctx, StudyPlan};
use scalescope_study::probe::ChildProbe;
use scalescope_study::run::{Say, StepRecord};
use scalescope_study::{Facts, Step, StudyName};

use crate::cli::StudyArgs;

/// The budget when none is given.
const DEFAULT_BUDGET_SECS: f64 = 600.0;

fn list() -> ExitCode {
    println!("The five published studies (docs/STUDIES.md):\n");
    for s in StudyName::ALL {
        println!(
            "  {:<15} {}\n  {:<15} reproduces: {}\n",
            s.name(),
            s.question(),
            "",
            s.source()
        );
    }
    println!("Run one: scalescope study NAME [--budget 10m] [--out DIR]; see its plan first with --dry-run.");
    ExitCode::SUCCESS
}

fn exe() -> anyhow::Result<PathBuf> {
    std::env::current_exe().context("locating the scalescope executable")
}

fn sourced(args: &StudyArgs) -> bool {
    let s = &args.source;
    s.sysfs_root.is_some() || s.hwloc_xml.is_some() || s.synthetic.is_some()
}

/// A new plan for this machine (or the one the source flags describe).
fn new_plan(study: StudyName, args: &StudyArgs) -> anyhow::Result<StudyPlan> {
    let budget = match &args.budget {
        Some(b) => {
            scalescope_study::parse_duration(b).map_err(|e| anyhow::anyhow!("--budget {e}"))?
        }
        None => DEFAULT_BUDGET_SECS,
    };
    let topo = crate::shared::load_topology(&args.source)?;
    let exe = exe()?;
    let facts = Facts::of(&topo, &exe, std::env::var_os("PATH").as_deref());
    let mut probe = ChildProbe { exe };
    let mut ctx = Ctx {
        topo: &topo,
        facts,
        budget_secs: budget,
        probe: &mut probe,
    };
    eprintln!("planning {study}: timing short probes of its kernels ...");
    Ok(scalescope_study::plan::plan(study, &mut ctx)?)
}

/// The plan kept in `dir` (a study being finished), else a new one.
fn plan_for(study: StudyName, args: &StudyArgs) -> anyhow::Result<(StudyPlan, bool)> {
    let dir = args.out.as_deref();
    let (plan, kept) = scalescope_study::plan::kept_or_new(study, dir, || new_plan(study, args))?;
    if kept && (args.budget.is_some() || sourced(args)) {
        eprintln!("note: finishing the plan kept in the study directory (budget {:.0} s); --budget and topology flags are not applied", plan.budget_secs);
    }
    Ok((plan, kept))
}

struct Terminal;

impl Say for Terminal {
    fn step_start(&mut self, step: &Step, index: usize, of: usize, resuming: bool) {
        let how = if resuming { "resuming" } else { "running" };
        println!(
            "[{index}/{of}] {how} {}: {} (about {:.0} s)",
            step.name, step.what, step.estimate_secs
        );
    }
    fn step_end(&mut self, r: &StepRecord) {
        let code = r
            .exit_code
            .map_or("killed by a signal".to_string(), |c| format!("exit {c}"));
        println!(
            "      {}: {code}, {:.1} s (log: {}.log)",
            r.name, r.secs, r.name
        );
    }
}

pub fn run(args: &StudyArgs) -> anyhow::Result<ExitCode> {
    let Some(name) = args.study()? else {
        return Ok(list());
    };
    let study: StudyName = name.parse()?;
    if sourced(args) && !args.dry_run {
        bail!("--sysfs-root, --hwloc-xml and --synthetic plan for another machine: give them with --dry-run (a study runs on this machine)");
    }
    let (plan, resuming) = plan_for(study, args)?;
    if args.dry_run {
        print!("{}", plan.text());
        return Ok(ExitCode::SUCCESS);
    }
    let dir = args.out.clone().unwrap_or_else(|| {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        scalescope_session::names::fresh_dir(
            Path::new("scalescope-results"),
            &format!("study-{study}"),
            secs,
        )
    });
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    if !resuming {
        plan.save(&dir)?;
    }
    print!("{}", plan.text());
    println!(
        "\nstudy directory: {}{}\n",
        dir.display(),
        if resuming {
            " (finishing an interrupted study)"
        } else {
            ""
        }
    );
    let interrupt = crate::shared::interrupt_flag()?;
    let start = std::time::Instant::now();
    let outcome = scalescope_study::run::run(&plan, &dir, &exe()?, &interrupt, &mut Terminal)?;
    if outcome.interrupted {
        eprintln!(
            "interrupted: finished runs are kept; `scalescope study {study} --out {}` finishes it",
            dir.display()
        );
        return Ok(ExitCode::from(130));
    }
    let report = scalescope_study::report::build(&plan, &dir)?;
    let path =
        scalescope_study::report::write(&report, &plan, &dir, Some(start.elapsed().as_secs_f64()))?;
    print!("\n{}", scalescope_study::report::summary_text(&report));
    println!("\nReport: {}", path.display());
    let failed = outcome
        .ran
        .iter()
        .filter(|r| r.exit_code != Some(0))
        .count();
    Ok(if failed > 0 {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}
