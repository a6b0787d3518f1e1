//! `scalescope sweep`: options -> plan -> (dry run | results store -> engine) ->
//! summary table and CSV. Ctrl-C and SIGTERM stop the current run's whole process
//! group, keep every finished run on disk and exit 130.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};
use scalescope_analysis::summary::{self, Baseline};
use scalescope_place::{MemPolicy, Strategy};
use scalescope_report::Exporter;
use scalescope_results::fingerprint::Fingerprint;
use scalescope_results::plan::{parse_list, parse_threads, Job, Plan};
use scalescope_results::store::{
    CommandSpec, Header, MetricSpec, ResultsStore, RunRecord, RunStatus, RESULTS_SCHEMA_VERSION,
};
use scalescope_sweep::engine::{
    self, Clock, JobTemplate, PreparedPoint, Progress, SweepSetup, SystemClock,
};
use scalescope_sweep::exec::{Outcome, ProcessExecutor};
use scalescope_sweep::metric;
use scalescope_topo::Topology;

use crate::cli::SweepArgs;

/// Exit status when some runs failed (0: all ok, 130: interrupted).
pub const EXIT_RUNS_FAILED: u8 = 3;

/// `K=V` into a pair.
pub(crate) fn key_value(option: &str, text: &str) -> anyhow::Result<(String, String)> {
    match text.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => bail!("{option} `{text}`: expected KEY=VALUE"),
    }
}

/// The plan from the flags (defaults applied here, so resume can tell what was given).
fn plan_of(args: &SweepArgs, topo: &Topology) -> anyhow::Result<Plan> {
    let usable = topo.usable_cpus().len();
    let reps = args.reps.unwrap_or(5);
    if reps == 0 {
        bail!("--reps 0: at least one measured repetition is needed");
    }
    Ok(Plan {
        threads: parse_threads(args.threads.as_deref().unwrap_or("pow2"), usable)?,
        placements: parse_list(
            "--placement",
            args.placement.as_deref().unwrap_or("cores-first"),
            str::parse::<Strategy>,
        )?,
        mems: parse_list(
            "--mem",
            args.mem.as_deref().unwrap_or("first-touch"),
            str::parse::<MemPolicy>,
        )?,
        reps,
        warmup: args.warmup.unwrap_or(1),
    })
}

/// What is being swept, from the flags.
fn command_of(args: &SweepArgs) -> anyhow::Result<CommandSpec> {
    let metrics = args
        .metrics
        .iter()
        .map(|m| metric::parse_spec(m))
        .collect::<Result<Vec<_>, _>>()?;
    let env = args
        .env
        .iter()
        .map(|e| key_value("--env", e))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let params: BTreeMap<String, String> = args
        .params
        .iter()
        .map(|p| key_value("--param", p))
        .collect::<anyhow::Result<_>>()?;
    match (&args.workload, args.command.is_empty()) {
        (Some(_), false) => bail!("give either --workload NAME or a program after `--`, not both"),
        (None, true) => bail!("nothing to sweep: give a program after `--` (e.g. `-- ./app {{threads}}`) or --workload NAME"),
        _ => {}
    }
    Ok(CommandSpec {
        kind: if args.workload.is_some() {
            "workload"
        } else {
            "external"
        }
        .into(),
        argv: args.command.clone(),
        shell: args.shell,
        workload: args.workload.clone(),
        params,
        env,
        metrics,
    })
}

/// The per-run command line: the program as given, or this binary's workload child.
pub(crate) fn template_of(
    command: &CommandSpec,
    timeout: Option<f64>,
    grace: f64,
) -> anyhow::Result<JobTemplate> {
    let argv = match &command.workload {
        Some(name) => {
            let exe = std::env::current_exe().context("locating the scalescope executable")?;
            let mut v = vec![
                exe.display().to_string(),
                "__workload".into(),
                name.clone(),
                "--thread-cpus".into(),
                "{thread_cpus}".into(),
            ];
            for (k, val) in &command.params {
                v.push("--param".into());
                v.push(format!("{k}={val}"));
            }
            v
        }
        None => command.argv.clone(),
    };
    let timeout = timeout
        .map(|t| {
            if t > 0.0 && t.is_finite() {
                Ok(Duration::from_secs_f64(t))
            } else {
                Err(anyhow::anyhow!(
                    "--timeout {t}: must be a positive number of seconds"
                ))
            }
        })
        .transpose()?;
    Ok(JobTemplate {
        argv,
        shell: command.shell,
        env: command.env.clone(),
        timeout,
        grace: Duration::from_secs_f64(grace.max(0.0)),
        extra_threads: usize::from(command.workload.is_some()),
        workload: command.workload.is_some(),
    })
}

/// Fails early when the program cannot be found, instead of recording N errors.
fn check_program(command: &CommandSpec) -> anyhow::Result<()> {
    if command.shell || command.workload.is_some() {
        return Ok(());
    }
    let program = &command.argv[0];
    let found = if program.contains('/') {
        Path::new(program).is_file()
    } else {
        std::env::var_os("PATH")
            .map(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
            .unwrap_or(false)
    };
    if !found {
        bail!("program `{program}` not found (not a file, and not on PATH)");
    }
    Ok(())
}

pub fn run(args: &SweepArgs) -> anyhow::Result<ExitCode> {
    let dry = args.dry_run;
    let source_given = args.source.sysfs_root.is_some()
        || args.source.hwloc_xml.is_some()
        || args.source.synthetic.is_some();
    if source_given && !dry {
        bail!("--sysfs-root/--hwloc-xml/--synthetic only plan a sweep (--dry-run); real runs use this machine");
    }
    let topo = super::load_topology(&args.source)?;
    if args.resume {
        return resume(args, &topo);
    }
    let plan = plan_of(args, &topo)?;
    let mut command = command_of(args)?;
    if let Some(name) = &command.workload {
        // Checked now (bad parameters fail before anything runs), and its primary
        // figure becomes the sweep's figure of merit.
        let w = scalescope_workloads::build(name, &command.params, &topo)?;
        command.metrics.insert(
            0,
            MetricSpec {
                name: w.primary_figure().into(),
                regex: None,
                higher_is_better: true,
            },
        );
    }
    let template = template_of(&command, args.timeout, args.kill_grace)?;
    let points = engine::prepare_points(&topo, &plan.points())?;
    if dry {
        print!("{}", dry_run_text(&plan, &template, &points));
        return Ok(ExitCode::SUCCESS);
    }
    check_program(&command)?;
    let header = new_header(command, plan, args.timeout, &topo);
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "scalescope-results/sweep-{}",
            header.started_unix_secs as u64
        ))
    });
    let mut store = ResultsStore::create(&out, &header)?;
    execute(args, &header, &template, &points, &mut store, Vec::new())
}

/// The header of a new sweep on this machine.
pub(crate) fn new_header(
    command: CommandSpec,
    plan: Plan,
    timeout: Option<f64>,
    topo: &Topology,
) -> Header {
    Header {
        schema: "scalescope.results".into(),
        schema_version: RESULTS_SCHEMA_VERSION,
        scalescope_version: env!("CARGO_PKG_VERSION").into(),
        started_unix_secs: SystemClock.unix_secs(),
        command,
        plan,
        timeout_secs: timeout,
        machine: Fingerprint::read(Path::new("/"), topo),
    }
}

/// Finishes a sweep from its header; flags that would change it are refused.
fn resume(args: &SweepArgs, topo: &Topology) -> anyhow::Result<ExitCode> {
    let out = args
        .out
        .as_ref()
        .expect("clap requires --out with --resume");
    let (mut store, header, earlier) = ResultsStore::resume(out)?;
    let changed: Vec<&str> = [
        ("--threads", args.threads.is_some()),
        ("--placement", args.placement.is_some()),
        ("--mem", args.mem.is_some()),
        ("--reps", args.reps.is_some()),
        ("--warmup", args.warmup.is_some()),
        ("--workload", args.workload.is_some()),
        ("--metric", !args.metrics.is_empty()),
        ("a program", !args.command.is_empty()),
    ]
    .into_iter()
    .filter_map(|(name, given)| given.then_some(name))
    .collect();
    if !changed.is_empty() {
        bail!(
            "--resume continues the sweep recorded in {}; drop {} (the plan and command come from its header)",
            out.display(),
            changed.join(", ")
        );
    }
    if header.machine.topology.summary() != topo.summary() {
        bail!(
            "--resume: {} was recorded on a different machine ({}); this one is {}",
            out.display(),
            header.machine.topology.summary(),
            topo.summary()
        );
    }
    let template = template_of(&header.command, header.timeout_secs, args.kill_grace)?;
    let points = engine::prepare_points(topo, &header.plan.points())?;
    execute(args, &header, &template, &points, &mut store, earlier)
}

fn execute(
    args: &SweepArgs,
    header: &Header,
    template: &JobTemplate,
    points: &[PreparedPoint],
    store: &mut ResultsStore,
    earlier: Vec<RunRecord>,
) -> anyhow::Result<ExitCode> {
    let interrupt = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, interrupt.clone())
            .context("installing the Ctrl-C handler")?;
    }
    let setup = SweepSetup {
        header,
        template,
        points,
    };
    let mut progress = Bar::new(args.quiet || !std::io::stderr().is_terminal());
    let outcome = engine::run(
        &setup,
        store,
        earlier,
        &mut ProcessExecutor,
        &mut progress,
        &interrupt,
        &SystemClock,
    )?;
    let baseline: Baseline = args
        .baseline
        .as_deref()
        .unwrap_or("")
        .parse()
        .map_err(|e| anyhow::anyhow!("--baseline: {e}"))?;
    let summaries = summary::summarize_points(
        &header.plan,
        &outcome.records,
        &header.command.metrics,
        &baseline,
    );
    let csv = store.dir().join("summary.csv");
    std::fs::write(&csv, summary::to_csv(&summaries))
        .with_context(|| format!("writing {}", csv.display()))?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"schema_version": 1, "points": summaries})
            )?
        );
    } else {
        print!("{}", summary::table(&summaries));
    }
    report_problems(&outcome.records);
    // The analysis runs at the end of every sweep; the report goes beside the results.
    let report_dir = store.dir().join("report");
    let results_path = store.dir().join("results.jsonl");
    let set = super::analyze::analysed(
        results_path.display().to_string(),
        header.clone(),
        outcome.records.clone(),
        None,
    )?;
    if !args.json {
        print!(
            "\n{}",
            String::from_utf8_lossy(
                &scalescope_report::TextExporter.export(std::slice::from_ref(&set))
            )
        );
    }
    super::analyze::write_report(&[set], &report_dir)?;
    eprintln!(
        "results: {}  summary: {}  report: {}",
        results_path.display(),
        csv.display(),
        report_dir.join("index.html").display()
    );
    if outcome.interrupted {
        eprintln!(
            "interrupted: {} runs kept; finish with `scalescope sweep --resume --out {}`",
            outcome.records.len(),
            store.dir().display()
        );
        return Ok(ExitCode::from(130));
    }
    if outcome.failed_runs > 0 {
        eprintln!(
            "{} runs did not succeed (see the table and the logs)",
            outcome.failed_runs
        );
        return Ok(ExitCode::from(EXIT_RUNS_FAILED));
    }
    Ok(ExitCode::SUCCESS)
}

/// Failed runs and placement violations, one line each (at most 10 of each).
fn report_problems(records: &[RunRecord]) {
    for r in records
        .iter()
        .filter(|r| r.status != RunStatus::Ok)
        .take(10)
    {
        eprintln!(
            "run {} rep {}{}: {:?}: {}",
            r.point,
            r.rep,
            if r.warmup { " (warm-up)" } else { "" },
            r.status,
            r.error.as_deref().unwrap_or("")
        );
    }
    for r in records
        .iter()
        .filter(|r| r.placement_check.as_ref().is_some_and(|c| !c.inside_plan))
        .take(10)
    {
        let c = r.placement_check.as_ref().expect("filtered on Some");
        let v: Vec<String> = c
            .violations
            .iter()
            .map(|v| {
                format!(
                    "thread {} on CPU {} allowed {}",
                    v.tid,
                    v.cpu.map(|c| c.to_string()).unwrap_or("?".into()),
                    v.allowed
                )
            })
            .collect();
        eprintln!(
            "run {} rep {}: threads ran outside the planned CPUs: {}",
            r.point,
            r.rep,
            v.join("; ")
        );
    }
    for r in records
        .iter()
        .filter(|r| {
            r.placement_check
                .as_ref()
                .is_some_and(|c| c.more_threads_than_planned)
        })
        .take(3)
    {
        let c = r.placement_check.as_ref().expect("filtered on Some");
        eprintln!(
            "run {} rep {}: {} threads seen, {} planned",
            r.point, r.rep, c.max_threads, c.planned_threads
        );
    }
}

fn dry_run_text(plan: &Plan, template: &JobTemplate, points: &[PreparedPoint]) -> String {
    let mut out = format!(
        "{} points x {} reps (+{} warm-up) = {} runs\n",
        points.len(),
        plan.reps,
        plan.warmup,
        points.len() * (plan.reps + plan.warmup)
    );
    for p in points {
        let job = Job {
            point: p.point.clone(),
            rep: 0,
            warmup: false,
        };
        let spec = template.spec(&job, p, Path::new("logs"));
        out += &format!("\n{}\n", p.point);
        let sets: Vec<String> = p.placement.threads.iter().map(|s| s.to_string()).collect();
        out += &format!("  cpus per thread: {}\n", sets.join(" | "));
        out += &format!(
            "  process affinity: {}\n  memory policy: {}\n",
            spec.cpus, p.point.mem
        );
        for (k, v) in &spec.env {
            out += &format!("  env {k}={v}\n");
        }
        out += &format!(
            "  command: {}\n",
            spec.argv
                .iter()
                .map(|a| shell_quote(a))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    out
}

/// Quotes an argument for display so it can be pasted into a shell.
fn shell_quote(a: &str) -> String {
    if !a.is_empty()
        && a.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%{}".contains(c))
    {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

/// A progress bar with ETA on stderr; hidden when stderr is not a terminal or --quiet.
pub(crate) struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
    pub(crate) fn new(hidden: bool) -> Bar {
        Bar {
            bar: (!hidden).then(ProgressBar::hidden),
        }
    }
}

impl Progress for Bar {
    fn begin(&mut self, total: usize, done: usize) {
        if let Some(b) = &mut self.bar {
            *b = ProgressBar::new(total as u64);
            b.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} runs, ETA {eta} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.set_position(done as u64);
        }
    }
    fn job_started(&mut self, job: &Job) {
        if let Some(b) = &self.bar {
            b.set_message(format!(
                "{}{}",
                job.point,
                if job.warmup { " (warm-up)" } else { "" }
            ));
        }
    }
    fn job_finished(&mut self, _job: &Job, _outcome: &Outcome) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }
    fn finish(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
