//! Running a ready sweep to its end: the engine (every run appended as it ends),
//! the per-point summaries and `summary.csv`, the analysis, and the report directory
//! beside the results. Also the dry-run description of a planned sweep.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use scalescope_analysis::basis_rule;
use scalescope_analysis::summary::{self, Baseline, PointSummary};
use scalescope_model::plan::Job;
use scalescope_model::store::{RunRecord, RESULTS_FILE};
use scalescope_report::ResultSet;
use scalescope_sweep::engine::{self, Progress, SweepSetup, SystemClock};
use scalescope_sweep::exec::ProcessExecutor;

use crate::prepare::{Planned, Ready};
use crate::SessionError;

/// What the person running the sweep sees and can do while it runs.
pub struct Hooks<'a> {
    pub progress: &'a mut dyn Progress,
    /// Set by Ctrl-C or SIGTERM: the current run is stopped and the session ends.
    pub interrupt: &'a AtomicBool,
}

/// How the finished runs are summarised and reported.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub baseline: Baseline,
    /// Write `report/` beside the results (the tour writes one report for all).
    pub write_report: bool,
}

/// A session's outcome and where it left its files.
pub struct Finished {
    pub dir: PathBuf,
    pub results: PathBuf,
    pub summary_csv: PathBuf,
    pub report_index: Option<PathBuf>,
    pub summaries: Vec<PointSummary>,
    /// The analysed results (every run in the file, earlier ones included).
    pub set: ResultSet,
    pub interrupted: bool,
    /// Measured runs that did not end `ok`, this session and before.
    pub failed_runs: usize,
    /// What preparing the workload's shared input once cost, before the runs.
    pub prepared: Option<scalescope_model::workload::SetupCosts>,
}

impl Finished {
    /// The run table on the analysis's basis, its first line naming it.
    pub fn table(&self) -> String {
        basis_rule::table(&self.summaries, &self.set.analysis.basis)
    }

    /// The `sweep --json` document: the basis and its sentence, every point.
    pub fn json(&self) -> serde_json::Value {
        let s = &self.set;
        let basis = basis_rule::Said::of(&s.analysis.basis, &s.header, &s.records);
        serde_json::json!({"schema_version": 1, "basis": basis, "points": self.summaries})
    }
}

/// Prepares a built-in workload's shared input (cache file and answers) once, on
/// every usable CPU, before the runs; `None` for programs and for workloads whose
/// runs share nothing.
///
/// # Errors
/// The workload's preparation failed.
pub fn prepare_inputs(
    planned: &Planned,
    inputs: &scalescope_workloads::Inputs,
) -> Result<Option<scalescope_workloads::Prepared>, SessionError> {
    let command = &planned.header.command;
    let Some(name) = &command.workload else {
        return Ok(None);
    };
    if inputs.cache.is_none() {
        return Ok(None);
    }
    let topo = &planned.header.machine.topology;
    let (pool, _) = scalescope_workloads::Pool::placed(
        topo,
        &crate::settings::default_placement(),
        None,
        None,
    )?;
    Ok(scalescope_workloads::prepare_inputs(
        name,
        &command.params,
        topo,
        inputs,
        &pool,
    )?)
}

/// Tells every workload run the token of the input its sweep just checked in full
/// (`--verified-input`), so a run that finds that same file unchanged skips the
/// checks that read all of it.
fn hand_over(planned: &mut Planned, prepared: Option<&scalescope_workloads::Prepared>) {
    if let (true, Some(token)) = (
        planned.template.workload,
        prepared.and_then(|p| p.verified.as_ref()),
    ) {
        planned
            .template
            .argv
            .extend(["--verified-input".into(), token.clone()]);
    }
}

/// Runs every job not yet in the results file, then summarises, analyses and
/// (if asked) writes the report.
///
/// # Errors
/// I/O on the results file, `summary.csv` or the report directory.
pub fn run(ready: Ready, hooks: Hooks, options: &Options) -> Result<Finished, SessionError> {
    let Ready {
        mut planned,
        mut store,
        earlier,
        inputs,
    } = ready;
    let prepared = prepare_inputs(&planned, &inputs)?;
    hand_over(&mut planned, prepared.as_ref());
    let prepared = prepared.map(|p| p.setup);
    let setup = SweepSetup {
        header: &planned.header,
        template: &planned.template,
        points: &planned.points,
    };
    let outcome = engine::run(
        &setup,
        &mut store,
        earlier,
        &mut ProcessExecutor,
        hooks.progress,
        hooks.interrupt,
        &SystemClock,
    )?;
    let ended = Ended {
        interrupted: outcome.interrupted,
        failed_runs: outcome.failed_runs,
        prepared,
    };
    conclude(planned.header, outcome.records, store.out(), options, ended)
}

/// How the runs of a session ended, beside the runs themselves.
pub struct Ended {
    pub interrupted: bool,
    /// Measured runs that did not end `ok` (or never ran), this session and before.
    pub failed_runs: usize,
    pub prepared: Option<scalescope_model::workload::SetupCosts>,
}

/// Summarises, analyses and (if asked) reports the runs of the results in `out`
/// (the results directory, owned: nothing is written outside it).
///
/// # Errors
/// I/O on `summary.csv` or the report directory.
pub fn conclude(
    header: scalescope_model::store::Header,
    records: Vec<RunRecord>,
    out: &scalescope_files::OutDir,
    options: &Options,
    ended: Ended,
) -> Result<Finished, SessionError> {
    let dir = out.path().to_path_buf();
    let summaries = summary::summarize_points(
        &header.plan,
        &records,
        &header.command.metrics,
        &options.baseline,
    );
    let summary_csv = dir.join("summary.csv");
    out.write_file("summary.csv", summary::to_csv(&summaries).as_bytes())
        .map_err(|e| scalescope_report::html::WriteError {
            path: summary_csv.clone(),
            source: std::io::Error::other(e.to_string()),
        })?;
    let results = dir.join(RESULTS_FILE);
    // One basis for the run table, the analysis and the report (analysis::basis_rule).
    let basis = basis_rule::rule(&header);
    // A series file that cannot be read leaves its run without a chart line; the
    // run's totals are in the results file either way.
    let (series, _unreadable) = scalescope_model::evidence::read_all_series(&dir, &records);
    let analysis = scalescope_analysis::analyze(&header, &records, &basis);
    let set = ResultSet::new(results.display().to_string(), header, records, analysis)
        .with_series(series);
    let report_index = if options.write_report {
        let report = out
            .subdir("report")
            .map_err(|e| scalescope_report::html::WriteError {
                path: dir.join("report"),
                source: std::io::Error::other(e.to_string()),
            })?;
        Some(scalescope_report::html::write_into(
            std::slice::from_ref(&set),
            &[],
            &report,
        )?)
    } else {
        None
    };
    Ok(Finished {
        dir,
        results,
        summary_csv,
        report_index,
        summaries,
        set,
        interrupted: ended.interrupted,
        failed_runs: ended.failed_runs,
        prepared: ended.prepared,
    })
}

/// Failed runs and placement violations, one line each (at most 10 of each).
pub fn problems(records: &[RunRecord]) -> Vec<String> {
    let mut out = Vec::new();
    let failed = records
        .iter()
        .filter(|r| r.status != scalescope_model::store::RunStatus::Ok);
    for r in failed.take(10) {
        out.push(format!(
            "run {} rep {}{}: {}: {}",
            r.point,
            r.rep,
            if r.warmup { " (warm-up)" } else { "" },
            r.status.label(),
            r.error.as_deref().unwrap_or("")
        ));
    }
    let outside = records.iter().filter_map(|r| {
        r.placement_check
            .as_ref()
            .filter(|c| !c.inside_plan)
            .map(|c| (r, c))
    });
    for (r, c) in outside.take(10) {
        let v: Vec<String> = c
            .violations
            .iter()
            .map(|v| {
                let cpu = v.cpu.map_or("?".to_string(), |c| c.to_string());
                format!("thread {} on CPU {cpu} allowed {}", v.tid, v.allowed)
            })
            .collect();
        out.push(format!(
            "run {} rep {}: threads ran outside the planned CPUs: {}",
            r.point,
            r.rep,
            v.join("; ")
        ));
    }
    let crowded = records.iter().filter_map(|r| {
        r.placement_check
            .as_ref()
            .filter(|c| c.more_threads_than_planned)
            .map(|c| (r, c))
    });
    for (r, c) in crowded.take(3) {
        out.push(format!(
            "run {} rep {}: {} threads seen, {} planned",
            r.point, r.rep, c.max_threads, c.planned_threads
        ));
    }
    out
}

/// Every point's CPUs, memory policy, environment and command line, for a dry run.
pub fn dry_run_text(planned: &Planned) -> String {
    let plan = &planned.header.plan;
    let mut out = format!(
        "{} points x {} reps (+{} warm-up) = {} runs\n",
        planned.points.len(),
        plan.reps,
        plan.warmup,
        planned.points.len() * (plan.reps + plan.warmup)
    );
    for p in &planned.points {
        let job = Job {
            point: p.point.clone(),
            rep: 0,
            warmup: false,
        };
        let spec = planned.template.spec(&job, p, Path::new("logs"));
        let sets: Vec<String> = p.placement.threads.iter().map(|s| s.to_string()).collect();
        out += &format!("\n{}\n  cpus per thread: {}\n", p.point, sets.join(" | "));
        out += &format!(
            "  process affinity: {}\n  memory policy: {}\n",
            spec.cpus, p.point.mem
        );
        for (k, v) in &spec.env {
            out += &format!("  env {k}={v}\n");
        }
        let argv: Vec<String> = spec.argv.iter().map(|a| shell_quote(a)).collect();
        out += &format!("  command: {}\n", argv.join(" "));
    }
    out
}

/// Quotes an argument for display so it can be pasted into a shell.
pub fn shell_quote(a: &str) -> String {
    if !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%{}".contains(c))
    {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

/// Medians over a sweep's measured runs of what each spent around its kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct SetupSummary {
    pub runs: usize,
    pub wall_secs: f64,
    pub kernel_secs: f64,
    pub prepare_secs: f64,
    pub first_touch_secs: Option<f64>,
    pub load_secs: Option<f64>,
    pub verify_secs: f64,
    /// Wall time beyond the kernel (everything else a run cost): median, largest.
    pub beyond_kernel_secs: (f64, f64),
}

fn median(v: Vec<f64>) -> Option<f64> {
    scalescope_stats::median_of(&v)
}

/// The per-run set-up medians of the measured runs after the first (the first may
/// build the input), or `None` where no run reported its set-up.
pub fn setup_summary(records: &[RunRecord]) -> Option<SetupSummary> {
    let runs: Vec<(&RunRecord, &scalescope_model::workload::SetupCosts)> = records
        .iter()
        .filter(|r| !r.warmup)
        .filter_map(|r| r.setup.as_ref().map(|s| (r, s)))
        .skip(1)
        .collect();
    let pick = |f: &dyn Fn(&scalescope_model::workload::SetupCosts) -> Option<f64>| {
        median(runs.iter().filter_map(|(_, s)| f(s)).collect())
    };
    Some(SetupSummary {
        runs: runs.len(),
        wall_secs: median(runs.iter().map(|(r, _)| r.wall_secs).collect())?,
        kernel_secs: pick(&|s| s.kernel_secs)?,
        prepare_secs: pick(&|s| Some(s.prepare_secs))?,
        first_touch_secs: pick(&|s| s.first_touch_secs),
        load_secs: pick(&|s| s.load_secs),
        verify_secs: pick(&|s| Some(s.verify_secs))?,
        beyond_kernel_secs: beyond_kernel(&runs)?,
    })
}

/// Median and largest wall time beyond the kernel over `runs` that report one.
fn beyond_kernel(
    runs: &[(&RunRecord, &scalescope_model::workload::SetupCosts)],
) -> Option<(f64, f64)> {
    let beyond: Vec<f64> = runs
        .iter()
        .filter_map(|(r, s)| Some(r.wall_secs - s.kernel_secs?))
        .collect();
    let largest = beyond.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((median(beyond)?, largest))
}

/// What the sweep's input and runs spent beside the kernels, for the terminal: the
/// input prepared once, then the per-run medians after the first run.
pub fn setup_lines(done: &Finished) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(p) = &done.prepared {
        out.push(format!(
            "input prepared once for every run: {:.3} s ({})",
            p.prepare_secs, p.input
        ));
    }
    if let Some(s) = setup_summary(&done.set.records) {
        let part = |name: &str, v: Option<f64>| {
            v.map(|v| format!(", {name} {v:.3} s")).unwrap_or_default()
        };
        out.push(format!(
            "per run after the first (median of {}): wall {:.3} s, kernel {:.3} s, preparing the input {:.3} s{}{}, verifying {:.3} s; beyond the kernel {:.4} s (largest {:.4} s)",
            s.runs, s.wall_secs, s.kernel_secs, s.prepare_secs,
            part("first-touch", s.first_touch_secs), part("load", s.load_secs), s.verify_secs,
            s.beyond_kernel_secs.0, s.beyond_kernel_secs.1
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(warmup: bool, wall: f64, kernel: f64) -> RunRecord {
        let line = format!(
            r#"{{"threads":1,"placement":"cores-first","mem":"first-touch","rep":0,"warmup":{warmup},"thread_cpus":[[0]],"metrics":{{}},"started_unix_secs":0.0,"wall_secs":{wall},"status":"ok","setup":{{"prepare_secs":0.001,"verify_secs":0.0,"kernel_secs":{kernel}}}}}"#
        );
        serde_json::from_str(&line).expect("a run record")
    }

    #[test]
    fn beyond_the_kernel_skips_warm_ups_and_the_first_run() {
        let records = [
            run(true, 9.0, 1.0),
            run(false, 5.0, 1.0),
            run(false, 1.010, 1.0),
            run(false, 2.030, 2.0),
            run(false, 1.020, 1.0),
        ];
        let s = setup_summary(&records).expect("runs with set-up");
        assert_eq!(s.runs, 3);
        let (median, largest) = s.beyond_kernel_secs;
        assert!((median - 0.020).abs() < 1e-9, "{median}");
        assert!((largest - 0.030).abs() < 1e-9, "{largest}");
    }
}
