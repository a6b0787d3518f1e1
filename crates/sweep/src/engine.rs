//! The sweep loop: plan every point's placement up front (so a bad point fails
//! before anything runs), then run each job in order, skipping those a resumed
//! results file already holds, and append each run as it ends.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use scalescope_model::plan::PlaceOptions;
use scalescope_place::mempolicy::PreparedPolicy;
use scalescope_place::{place, render, Placement};
use scalescope_topo::Topology;

use crate::exec::{ExecSpec, Executor, Outcome, SampleSpec};
use crate::launch::nodes::NodeSampling;
use crate::SweepError;
use scalescope_model::evidence::SERIES_DIR;
use scalescope_model::plan::{Job, Point};
use scalescope_model::store::{Header, ResultsStore, RunRecord, RunStatus};
use scalescope_model::workload::{SetupCosts, Verification, WorkloadReport};
use scalescope_sampler::procfs::RUN_MARK_VARIABLE;

/// Wall-clock time for records (a seam so tests are deterministic).
pub trait Clock {
    fn unix_secs(&self) -> f64;
}

/// The system clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn unix_secs(&self) -> f64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0)
    }
}

/// Reports progress to a person (a progress bar in the binary; nothing in tests).
pub trait Progress {
    fn begin(&mut self, total_jobs: usize, already_done: usize);
    fn job_started(&mut self, job: &Job);
    fn job_finished(&mut self, job: &Job, outcome: &Outcome);
    fn finish(&mut self);
}

/// No progress output.
pub struct Silent;

impl Progress for Silent {
    fn begin(&mut self, _: usize, _: usize) {}
    fn job_started(&mut self, _: &Job) {}
    fn job_finished(&mut self, _: &Job, _: &Outcome) {}
    fn finish(&mut self) {}
}

/// A point's placement and memory policy, resolved against the machine.
#[derive(Debug, Clone)]
pub struct PreparedPoint {
    pub point: Point,
    /// For a launched point, each rank's CPUs on a node (one "thread" per rank).
    pub placement: Placement,
    pub mem: PreparedPolicy,
    /// The MPI launch of a launched sweep's point (`None`: started directly).
    pub launch: Option<crate::launch::PreparedLaunch>,
    /// A point whose threads the program's OpenMP runtime places (`runtime:NAME`):
    /// `placement` is then the plan the runtime is checked against.
    pub runtime: Option<RuntimeRun>,
}

/// How a runtime-placed point runs: on every usable CPU, with the runtime's own
/// portable settings in its environment.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeRun {
    pub bind: scalescope_place::RuntimeBind,
    /// The process's affinity: every CPU the placement options leave.
    pub cpus: scalescope_topo::CpuSet,
    pub env: Vec<(String, String)>,
}

/// The run of a `runtime:NAME` point: every usable CPU under `options`, and the
/// runtime's environment for `threads` threads.
fn runtime_run(
    topo: &Topology,
    options: &PlaceOptions,
    bind: scalescope_place::RuntimeBind,
    threads: usize,
) -> Result<RuntimeRun, scalescope_place::PlaceError> {
    let mut every = options.request(scalescope_place::Strategy::Compact, 1);
    every.threads = None;
    every.granularity = scalescope_place::Granularity::Thread;
    Ok(RuntimeRun {
        bind,
        cpus: place(topo, &every)?.all_cpus(),
        env: bind.env(threads),
    })
}

/// Resolves every point; errors name the point.
///
/// # Errors
/// [`SweepError::Placement`] for a point the machine cannot host (too many threads,
/// a missing memory node, smt-pairs without SMT).
pub fn prepare_points(topo: &Topology, points: &[Point]) -> Result<Vec<PreparedPoint>, SweepError> {
    prepare_points_with(topo, points, &PlaceOptions::default())
}

/// [`prepare_points`] with the sweep's placement options (restriction,
/// granularity, oversubscription).
///
/// # Errors
/// As [`prepare_points`].
pub fn prepare_points_with(
    topo: &Topology,
    points: &[Point],
    options: &PlaceOptions,
) -> Result<Vec<PreparedPoint>, SweepError> {
    points
        .iter()
        .map(|p| {
            let err = |e: scalescope_place::PlaceError| SweepError::Placement {
                point: p.to_string(),
                detail: e.to_string(),
            };
            let placement =
                place(topo, &options.request(p.placement.clone(), p.threads)).map_err(err)?;
            let mem = PreparedPolicy::new(&p.mem.resolve(topo).map_err(err)?);
            let runtime = match &p.placement {
                scalescope_place::Strategy::Runtime(b) => {
                    Some(runtime_run(topo, options, *b, p.threads).map_err(err)?)
                }
                _ => None,
            };
            Ok(PreparedPoint {
                point: p.clone(),
                placement,
                mem,
                launch: None,
                runtime,
            })
        })
        .collect()
}

/// How each job's command line and environment are made.
#[derive(Debug, Clone)]
pub struct JobTemplate {
    /// Program and arguments with `{threads}`, `{cpus}`, `{places}` placeholders.
    pub argv: Vec<String>,
    pub shell: bool,
    pub env: Vec<(String, String)>,
    pub timeout: Option<Duration>,
    pub grace: Duration,
    /// Built-in workloads run with one main thread besides the workers.
    pub extra_threads: usize,
    /// Whether stdout ends with a workload's JSON report.
    pub workload: bool,
    /// Interval of the evidence sampler beside each run; `None` turns it off.
    pub sample_interval: Option<Duration>,
    /// The node sampler's command (`scalescope __node-sampler`), started on every
    /// node of a launched run when sampling is on; `None`: only this machine's
    /// evidence.
    pub node_sampler: Option<Vec<String>>,
}

/// The environment every run gets: OpenMP and Intel OpenMP told the placement.
pub fn placement_env(p: &Placement) -> Vec<(String, String)> {
    vec![
        ("OMP_NUM_THREADS".into(), p.threads.len().to_string()),
        ("OMP_PLACES".into(), render::omp_places(p)),
        ("OMP_PROC_BIND".into(), "true".into()),
        ("GOMP_CPU_AFFINITY".into(), render::gomp_cpu_affinity(p)),
        ("KMP_AFFINITY".into(), render::kmp_affinity(p)),
    ]
}

/// Replaces `{threads}`, `{cpus}` (all CPUs, a cpulist), `{places}` (OMP_PLACES
/// form) and `{thread_cpus}` (each thread's set, `;`-separated) in an argument.
pub fn substitute(arg: &str, p: &Placement) -> String {
    substitute_with(arg, p, |v| v.to_string())
}

/// As [`substitute`], each value shell-quoted where it holds a character the shell
/// would read (`{thread_cpus}` is `0;1`, which would end the command), for `--shell`.
pub fn substitute_quoted(arg: &str, p: &Placement) -> String {
    substitute_with(arg, p, shell_quote)
}

fn substitute_with(arg: &str, p: &Placement, quote: impl Fn(&str) -> String) -> String {
    let thread_cpus: Vec<String> = p.threads.iter().map(|s| s.to_string()).collect();
    arg.replace("{threads}", &quote(&p.threads.len().to_string()))
        .replace("{cpus}", &quote(&p.all_cpus().to_string()))
        .replace("{places}", &quote(&render::omp_places(p)))
        .replace("{thread_cpus}", &quote(&thread_cpus.join(";")))
}

/// `value` as one shell word: unchanged when it is only letters, digits and
/// `,._+:@%/=-`, else in single quotes (a `'` inside written `'\''`).
pub fn shell_quote(value: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || ",._+:@%/=-".contains(c);
    if !value.is_empty() && value.chars().all(plain) {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', "'\\''"))
    }
}

/// A file-name-safe label for a job's logs.
fn log_stem(job: &Job) -> String {
    let clean = |s: String| {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect::<String>()
    };
    format!(
        "t{}{}-{}-{}-{}{}",
        job.point.threads,
        job.point
            .nodes
            .map(|n| format!("-n{n}"))
            .unwrap_or_default(),
        clean(job.point.placement.to_string()),
        clean(job.point.mem.to_string()),
        if job.warmup { "warmup" } else { "rep" },
        job.rep
    )
}

impl JobTemplate {
    /// The full specification of one job.
    pub fn spec(&self, job: &Job, prepared: &PreparedPoint, logs: &Path) -> ExecSpec {
        let p = &prepared.placement;
        let argv = if self.shell {
            let line: Vec<String> = self.argv.iter().map(|a| substitute_quoted(a, p)).collect();
            vec!["/bin/sh".into(), "-c".into(), line.join(" ")]
        } else {
            self.argv.iter().map(|a| substitute(a, p)).collect()
        };
        let stem = log_stem(job);
        let (argv, mut env) = match &prepared.launch {
            Some(l) => {
                let mut env = l.env();
                env.push((RUN_MARK_VARIABLE.into(), run_mark(&stem)));
                (l.argv(argv), env)
            }
            None => match &prepared.runtime {
                Some(r) => (argv, r.env.clone()),
                None => (argv, placement_env(p)),
            },
        };
        env.extend(self.env.iter().cloned());
        ExecSpec {
            argv,
            env,
            cpus: prepared
                .runtime
                .as_ref()
                .map_or_else(|| p.all_cpus(), |r| r.cpus.clone()),
            runtime_plan: prepared
                .runtime
                .as_ref()
                .map(|r| crate::monitor::RuntimePlan {
                    plan: r.bind.plan().to_string(),
                    sets: p.threads.clone(),
                }),
            mem: prepared.mem.clone(),
            timeout: self.timeout,
            grace: self.grace,
            stdout_path: logs.join(format!("{stem}.out")),
            stderr_path: logs.join(format!("{stem}.err")),
            planned_threads: job.point.threads + self.extra_threads,
            metrics: Vec::new(),
            // A launched run is sampled on every node it runs on (the launcher here
            // is not where its ranks are), not in this process's tree.
            sample: self
                .sample_interval
                .filter(|_| prepared.launch.is_none() || self.node_sampler.is_none())
                .map(|interval| {
                    let name = format!("{SERIES_DIR}/{stem}.json");
                    let dir = logs.parent().unwrap_or(logs);
                    SampleSpec {
                        interval,
                        results_dir: dir.to_path_buf(),
                        series_name: name,
                    }
                }),
        }
    }
}

/// The mark of one launched run's processes on every node: this scalescope's
/// process id and the run's log stem.
pub fn run_mark(stem: &str) -> String {
    format!("{}-{stem}", std::process::id())
}

/// Starts the samplers on every node of a launched run, when sampling is on and
/// the template names the node sampler.
fn start_node_sampling(
    template: &JobTemplate,
    prepared: &PreparedPoint,
    job: &Job,
    logs: &Path,
) -> Option<NodeSampling> {
    let (l, argv, interval) = (
        prepared.launch.as_ref()?,
        template.node_sampler.as_ref()?,
        template.sample_interval?,
    );
    let stem = log_stem(job);
    let dir = logs.join(format!("{stem}.nodes"));
    Some(NodeSampling::start(
        l,
        argv,
        interval,
        &run_mark(&stem),
        &dir,
    ))
}

/// What the sweep did.
#[derive(Debug)]
pub struct SweepOutcome {
    /// Every run in the results file, earlier ones included.
    pub records: Vec<RunRecord>,
    pub interrupted: bool,
    /// Measured runs (not warm-ups) that did not end `ok`, this session and before.
    pub failed_runs: usize,
    pub ran_now: usize,
}

/// Everything the loop needs besides the store and the executor.
pub struct SweepSetup<'a> {
    pub header: &'a Header,
    pub template: &'a JobTemplate,
    pub points: &'a [PreparedPoint],
}

/// The plan's jobs not yet in `earlier`, with warm-ups only for points that still
/// have measured runs to do.
fn jobs_left(setup: &SweepSetup, earlier: &[RunRecord]) -> Vec<Job> {
    let done: BTreeSet<(Point, usize)> = earlier
        .iter()
        .filter(|r| !r.warmup)
        .map(|r| (r.point.clone(), r.rep))
        .collect();
    let todo: Vec<Job> = setup
        .header
        .plan
        .jobs()
        .into_iter()
        .filter(|j| !done.contains(&(j.point.clone(), j.rep)) || j.warmup)
        .collect();
    // Warm-ups only for points that still have measured runs to do.
    let pending: BTreeSet<&Point> = todo
        .iter()
        .filter(|j| !j.warmup)
        .map(|j| &j.point)
        .collect();
    todo.iter()
        .filter(|j| pending.contains(&j.point))
        .cloned()
        .collect()
}

/// Runs every job not already recorded.
///
/// # Errors
/// Only I/O errors of the results store; failing runs are recorded, not errors.
pub fn run(
    setup: &SweepSetup,
    store: &mut ResultsStore,
    earlier: Vec<RunRecord>,
    executor: &mut dyn Executor,
    progress: &mut dyn Progress,
    interrupt: &AtomicBool,
    clock: &dyn Clock,
) -> Result<SweepOutcome, SweepError> {
    let by_point: BTreeMap<&Point, &PreparedPoint> =
        setup.points.iter().map(|p| (&p.point, p)).collect();
    let todo = jobs_left(setup, &earlier);
    let total = setup.header.plan.jobs().len();
    progress.begin(total, total - todo.len());
    let logs = store.dir().join("logs");
    let mut records = earlier;
    let mut interrupted = false;
    let mut ran_now = 0;
    for job in &todo {
        if interrupt.load(Ordering::SeqCst) {
            interrupted = true;
            break;
        }
        let prepared = by_point[&job.point];
        let mut spec = setup.template.spec(job, prepared, &logs);
        spec.metrics = setup.header.command.metrics.clone();
        progress.job_started(job);
        let started = clock.unix_secs();
        let nodes = start_node_sampling(setup.template, prepared, job, &logs);
        let outcome = executor.execute(&spec, interrupt);
        let node_evidence = nodes
            .map(|n| n.finish(store.dir(), &log_stem(job)))
            .unwrap_or_default();
        if outcome.interrupted {
            interrupted = true;
            break;
        }
        let mut record = record_of(
            job,
            prepared,
            &spec,
            outcome.clone(),
            started,
            setup,
            store.dir(),
        );
        record.node_evidence = node_evidence;
        store.append(&record)?;
        records.push(record);
        ran_now += 1;
        progress.job_finished(job, &outcome);
    }
    progress.finish();
    let failed_runs = records
        .iter()
        .filter(|r| !r.warmup && r.status != RunStatus::Ok)
        .count();
    Ok(SweepOutcome {
        records,
        interrupted,
        failed_runs,
        ran_now,
    })
}

/// A workload run's status and note from the report it printed: passed is ok,
/// failed is failed, unavailable is ok with the reason noted (its numbers are real,
/// only unchecked); the report's figures join the metrics and its set-up costs are
/// kept in `setup`.
fn workload_verdict(
    stdout: &str,
    metrics: &mut BTreeMap<String, f64>,
    setup: &mut Option<SetupCosts>,
) -> (RunStatus, Option<String>) {
    let Some(report) = WorkloadReport::from_output(stdout) else {
        return (
            RunStatus::Failed,
            Some("the workload printed no report".into()),
        );
    };
    metrics.extend(report.figures);
    *setup = report.setup;
    match report.verification {
        Verification::Passed(_) => (RunStatus::Ok, None),
        Verification::Failed(why) => (
            RunStatus::Failed,
            Some(format!("verification failed: {why}")),
        ),
        Verification::Unavailable(why) => (
            RunStatus::Ok,
            Some(format!("verification unavailable: {why}")),
        ),
    }
}

/// Turns an outcome into the stored record: metrics from the log, a workload's
/// verification verdict, log paths relative to the results directory.
fn record_of(
    job: &Job,
    prepared: &PreparedPoint,
    spec: &ExecSpec,
    outcome: Outcome,
    started: f64,
    setup: &SweepSetup,
    dir: &Path,
) -> RunRecord {
    let specs = &setup.header.command.metrics;
    let scan = outcome.stdout_scan.clone().unwrap_or_else(|| {
        // Fakes write the log themselves; it is scanned as a stream all the same.
        std::fs::File::open(&spec.stdout_path)
            .map(|f| crate::output::Scanner::new(specs).scan_reader(f))
            .unwrap_or_default()
    });
    let mut status = outcome.status;
    let mut error = outcome.error;
    let mut metrics = scan.found.clone();
    let missing: Vec<String> = specs
        .iter()
        .filter(|m| m.regex.is_some() && !metrics.contains_key(&m.name))
        .map(|m| m.name.clone())
        .collect();
    // A workload child ends with its verdict's exit status (0, 4 or 5); its report
    // says the rest. Other failures (it could not start, crashed) keep their own.
    let verdict_exit = outcome.exit_code.and_then(Verification::verdict_of_exit);
    let mut costs = None;
    // A launched program may print a workload report last (scalescope-mpi-nas does).
    let launched_report =
        prepared.launch.is_some() && WorkloadReport::from_output(&scan.last_line).is_some();
    if (setup.template.workload || launched_report) && verdict_exit.is_some() {
        (status, error) = workload_verdict(&scan.last_line, &mut metrics, &mut costs);
    }
    // A run whose figure of merit is missing has no result to show: flagged as
    // failed, so no statistic silently falls back to its wall time.
    if status == RunStatus::Ok && !missing.is_empty() {
        status = RunStatus::Failed;
        error = Some(format!(
            "metric not found in the output: {}",
            missing.join(", ")
        ));
    }
    // A log cut short (a full disk) leaves the run's result standing, with a note.
    if !scan.log_errors.is_empty() {
        let note = scan.log_errors.join("; ");
        error = Some(match error {
            Some(e) => format!("{e}; {note}"),
            None => note,
        });
    }
    let rel = |p: &Path| p.strip_prefix(dir).unwrap_or(p).display().to_string();
    RunRecord {
        point: job.point.clone(),
        rep: job.rep,
        warmup: job.warmup,
        thread_cpus: prepared.placement.threads.clone(),
        started_unix_secs: started,
        wall_secs: outcome.wall_secs,
        user_secs: outcome.user_secs,
        sys_secs: outcome.sys_secs,
        max_rss_bytes: outcome.max_rss_bytes,
        status,
        exit_code: outcome.exit_code,
        signal: outcome.signal,
        error,
        metrics,
        placement_check: match &prepared.launch {
            Some(l) => l.ranks.check.as_ref().map(|c| c.as_placement_check()),
            None => outcome.check,
        },
        evidence: outcome.evidence,
        setup: costs,
        ranks: prepared.launch.as_ref().map(|l| l.ranks.clone()),
        node_evidence: Vec::new(),
        stdout_log: Some(rel(&spec.stdout_path)),
        stderr_log: Some(rel(&spec.stderr_path)),
    }
}
