//! A sweep made ready to run: the plan and command from the settings (defaults
//! filled in), the per-run command template, every point's placement resolved, the
//! header, and the results store, new or reopened for a resume.

use std::path::{Path, PathBuf};

use scalescope_model::fingerprint::Fingerprint;
use scalescope_model::plan::{Plan, RunOrder, ThreadList};
use scalescope_model::store::{
    CommandSpec, Header, MetricSpec, ResultsStore, RunRecord, RESULTS_SCHEMA_VERSION,
};
use scalescope_sweep::engine::{Clock, JobTemplate, PreparedPoint, SystemClock};
use scalescope_topo::Topology;

use scalescope_workloads::Inputs;

use crate::settings::{self, KillGrace, SweepSettings, Target, Timeout};
use crate::SessionError;
use scalescope_model::setting::Setting;

/// A sweep planned against a machine, before anything is written.
#[derive(Debug)]
pub struct Planned {
    pub header: Header,
    pub template: JobTemplate,
    pub points: Vec<PreparedPoint>,
}

/// A planned sweep with its results store open, the runs a resume found, and where
/// a built-in workload's input is prepared once for all its runs.
pub struct Ready {
    pub planned: Planned,
    pub store: ResultsStore,
    pub earlier: Vec<RunRecord>,
    pub inputs: Inputs,
}

/// The sweep's input cache (given, else `OUT/inputs`, made absolute so the runs find
/// it wherever they start) and verification policy; a workload's child is told both.
fn inputs_of(
    s: &SweepSettings,
    store: &ResultsStore,
    template: &mut JobTemplate,
) -> Result<Inputs, SessionError> {
    let dir = match &s.input_cache {
        Some(dir) => dir.clone(),
        // The default cache is made inside the results directory, never through
        // a link planted under its name.
        None if template.workload => store
            .out()
            .subdir(settings::DEFAULT_INPUT_CACHE)?
            .path()
            .to_path_buf(),
        None => store.dir().join(settings::DEFAULT_INPUT_CACHE),
    };
    let dir = std::path::absolute(&dir).unwrap_or(dir);
    if template.workload {
        template.argv.extend([
            "--input-cache".into(),
            dir.display().to_string(),
            "--verify".into(),
            s.verify.to_string(),
        ]);
    }
    Ok(Inputs {
        cache: Some(dir),
        verify: s.verify,
        verified: None,
    })
}

fn bad(setting: Setting, detail: impl Into<String>) -> SessionError {
    SessionError::Setting {
        setting,
        detail: detail.into(),
    }
}

/// The plan from the settings, defaults filled in.
///
/// # Errors
/// A thread list that resolves to nothing, or a plan too large.
pub fn plan_of(s: &SweepSettings, topo: &Topology) -> Result<Plan, SessionError> {
    let reps = s.reps.map_or(settings::DEFAULT_REPS, |r| r.usize());
    let default_threads: ThreadList = settings::DEFAULT_THREADS.parse()?;
    let placements = s
        .placements
        .clone()
        .unwrap_or_else(|| vec![settings::default_placement()]);
    let usable = scalescope_place::every_usable_cpu(topo);
    let boundaries = scalescope_analysis::events::boundary_threads(topo, &placements, usable);
    let plan = Plan {
        launch: None,
        threads: s
            .threads
            .as_ref()
            .unwrap_or(&default_threads)
            .resolve_with(usable, &boundaries)?,
        placements,
        mems: s
            .mems
            .clone()
            .unwrap_or_else(|| vec![settings::default_mem()]),
        reps,
        warmup: s.warmup.map_or(settings::DEFAULT_WARMUP, |w| w.usize()),
        options: s.place_options.clone().unwrap_or_default(),
        order: RunOrder::Shuffled {
            seed: s.seed.unwrap_or_else(fresh_seed),
        },
    };
    let mut plan = plan;
    if let Some(l) = &s.launch {
        launched(s, l, topo, &mut plan)?;
    }
    runtime_placed(s, &plan)?;
    check_size(&plan)?;
    Ok(plan)
}

/// A runtime placement lets the program's OpenMP runtime bind its threads: a
/// built-in workload pins its own, and a launcher binds ranks, so both are refused.
fn runtime_placed(s: &SweepSettings, plan: &Plan) -> Result<(), SessionError> {
    let runtime = plan
        .placements
        .iter()
        .any(|p| matches!(p, scalescope_place::Strategy::Runtime(_)));
    if !runtime {
        return Ok(());
    }
    if s.target.workload.is_some() || s.launch.is_some() {
        return Err(bad(
            Setting::Placement,
            "runtime:NAME lets an OpenMP program's runtime place its threads; built-in workloads pin their own threads and launched ranks are bound by the launcher",
        ));
    }
    Ok(())
}

/// A launched sweep's plan: its points' total ranks instead of thread counts.
fn launched(
    s: &SweepSettings,
    l: &crate::launch::LaunchSettings,
    topo: &Topology,
    plan: &mut Plan,
) -> Result<(), SessionError> {
    let refuse = |setting, why: &str| Err(bad(setting, format!("{why} with a launcher")));
    if s.threads.is_some() {
        return refuse(
            Setting::Threads,
            "no thread counts (the points are the ranks per node)",
        );
    }
    if s.target.shell || s.target.workload.is_some() {
        return refuse(Setting::Target, "only an MPI program, run without a shell");
    }
    if plan.mems != [settings::default_mem()] {
        return refuse(
            Setting::Mem,
            "only first-touch (the launcher binds memory itself)",
        );
    }
    let (launch, totals) = crate::launch::launch_plan(l, topo)?;
    plan.threads = totals;
    plan.launch = Some(launch);
    Ok(())
}

/// A seed for the run order when none was given: the clock's nanoseconds and the
/// process id, mixed (recorded in the header, so `--seed` reproduces the order).
fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    nanos ^ (u64::from(std::process::id()) << 32) ^ 0x05ee_d0f5_ca1e
}

/// Most runs one sweep may plan (each is a process and a line in the results).
pub const MAX_RUNS: u64 = 1_000_000;
/// Most thread placements one sweep may hold in memory (threads summed over points).
pub const MAX_PLANNED_THREADS: u64 = 10_000_000;

/// Refuses plans whose size alone would exhaust memory or outlive the user, before
/// anything is allocated for them.
fn check_size(plan: &Plan) -> Result<(), SessionError> {
    let points = (plan.threads.len() * plan.placements.len() * plan.mems.len()) as u64;
    let per_point = (plan.reps as u64).saturating_add(plan.warmup as u64);
    let runs = points.saturating_mul(per_point);
    if runs > MAX_RUNS {
        return Err(bad(
            Setting::Reps,
            format!("{points} points x {per_point} runs each = {runs} runs, more than the {MAX_RUNS} one sweep may plan"),
        ));
    }
    let threads: u64 = plan.threads.iter().map(|&t| t as u64).sum::<u64>()
        * (plan.placements.len() * plan.mems.len()) as u64;
    if threads > MAX_PLANNED_THREADS {
        return Err(bad(
            Setting::Threads,
            format!("{} thread counts up to {} place {threads} threads in all, more than {MAX_PLANNED_THREADS}; use pow2 or a range with a step (1..N:S)",
                plan.threads.len(), plan.threads.last().copied().unwrap_or(0)),
        ));
    }
    Ok(())
}

/// What is swept; a built-in workload is built once here, so bad parameters fail
/// before anything runs, and its primary figure becomes the figure of merit.
///
/// # Errors
/// Neither or both of a program and a workload; a workload that does not build.
pub fn command_of(t: &Target, topo: &Topology) -> Result<CommandSpec, SessionError> {
    match (&t.workload, t.program.is_empty()) {
        (Some(_), false) => {
            return Err(bad(
                Setting::Target,
                "give either a workload or a program, not both",
            ))
        }
        (None, true) => {
            return Err(bad(
                Setting::Target,
                "nothing to sweep: no program and no workload",
            ))
        }
        _ => {}
    }
    let mut metrics = t.metrics.clone();
    if let Some(name) = &t.workload {
        let w = scalescope_workloads::build(name, &t.params, topo)?;
        metrics.insert(
            0,
            MetricSpec {
                name: w.primary_figure().into(),
                regex: None,
                higher_is_better: true,
            },
        );
    }
    Ok(CommandSpec {
        kind: if t.workload.is_some() {
            "workload"
        } else {
            "external"
        }
        .into(),
        argv: t.program.clone(),
        shell: t.shell,
        workload: t.workload.clone(),
        params: t.params.clone(),
        env: t.env.clone(),
        metrics,
        trials: trials_of(t)?,
    })
}

/// The trials each run's process makes of a built-in workload's kernel, where more
/// than one (a program given after `--` times itself: it cannot be asked to).
///
/// # Errors
/// Trials asked of a program.
fn trials_of(t: &Target) -> Result<Option<usize>, SessionError> {
    match (t.trials.map(|n| n.usize()).filter(|n| *n > 1), &t.workload) {
        (Some(_), None) => Err(bad(
            Setting::Trials,
            "trials repeat a built-in workload's kernel inside each run; a program times itself (repeat whole runs instead)",
        )),
        (trials, _) => Ok(trials),
    }
}

/// The per-run command line: the program as given, or this binary's workload child.
///
/// # Errors
/// No path to this executable.
pub fn template_of(
    command: &CommandSpec,
    timeout: Option<Timeout>,
    grace: KillGrace,
) -> Result<JobTemplate, SessionError> {
    let argv = match &command.workload {
        Some(name) => workload_child_argv(name, command)?,
        None => command.argv.clone(),
    };
    Ok(JobTemplate {
        argv,
        shell: command.shell,
        env: command.env.clone(),
        timeout: timeout.map(Timeout::duration),
        grace: grace.duration(),
        extra_threads: usize::from(command.workload.is_some()),
        workload: command.workload.is_some(),
        sample_interval: Some(scalescope_sampler::DEFAULT_INTERVAL),
        node_sampler: None,
    })
}

/// `scalescope __workload NAME --thread-cpus {thread_cpus} --param K=V ...`.
fn workload_child_argv(name: &str, command: &CommandSpec) -> Result<Vec<String>, SessionError> {
    let exe = std::env::current_exe().map_err(SessionError::CurrentExe)?;
    let mut v = vec![
        exe.display().to_string(),
        "__workload".into(),
        name.to_string(),
        "--thread-cpus".into(),
        "{thread_cpus}".into(),
    ];
    for (k, val) in &command.params {
        v.push("--param".into());
        v.push(format!("{k}={val}"));
    }
    if let Some(n) = command.trials {
        v.extend(["--trials".into(), n.to_string()]);
    }
    Ok(v)
}

/// Fails early when the program cannot be found, instead of recording N errors.
///
/// # Errors
/// [`SessionError::ProgramNotFound`].
pub fn check_program(command: &CommandSpec) -> Result<(), SessionError> {
    if command.shell || command.workload.is_some() {
        return Ok(());
    }
    let Some(program) = command.argv.first() else {
        return Err(bad(Setting::Target, "no program"));
    };
    let found = if program.contains('/') {
        Path::new(program).is_file()
    } else {
        std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
    };
    if found {
        Ok(())
    } else {
        Err(SessionError::ProgramNotFound(program.clone()))
    }
}

/// The header of a new sweep on this machine.
pub fn new_header(
    command: CommandSpec,
    plan: Plan,
    timeout_secs: Option<f64>,
    topo: &Topology,
) -> Header {
    Header {
        schema: "scalescope.results".into(),
        schema_version: RESULTS_SCHEMA_VERSION,
        scalescope_version: env!("CARGO_PKG_VERSION").into(),
        started_unix_secs: SystemClock.unix_secs(),
        command,
        plan,
        timeout_secs,
        kill_grace_secs: None,
        machine: Fingerprint::read(Path::new("/"), topo),
    }
}

/// A launched sweep's node sampler (evidence from every node of a run).
fn node_sampler(plan: &Plan) -> Result<Option<Vec<String>>, SessionError> {
    plan.launch
        .as_ref()
        .map(|_| crate::launch::node_sampler_argv())
        .transpose()
}

/// Plans a new sweep from its settings (nothing is written).
///
/// # Errors
/// Bad settings, a workload that does not build, a point the machine cannot host.
pub fn plan_new(s: &SweepSettings, topo: &Topology) -> Result<Planned, SessionError> {
    let plan = plan_of(s, topo)?;
    let command = command_of(&s.target, topo)?;
    let grace = s.kill_grace.unwrap_or_else(settings::default_kill_grace);
    let mut template = template_of(&command, s.timeout, grace)?;
    template.sample_interval = s.sample_interval();
    template.node_sampler = node_sampler(&plan)?;
    let timeout_secs = s.timeout.map(Timeout::get);
    let mut header = new_header(command, plan, timeout_secs, topo);
    header.kill_grace_secs = Some(grace.get());
    let out = out_dir(s, &header);
    let points = crate::launch::points_of(topo, &header.plan, timeout_secs, &out, false)?;
    Ok(Planned {
        header,
        template,
        points,
    })
}

/// Where a new sweep's results go: the given directory, or a fresh one under
/// `scalescope-results/`.
pub fn out_dir(s: &SweepSettings, header: &Header) -> PathBuf {
    s.out.clone().unwrap_or_else(|| {
        crate::names::fresh_dir(
            Path::new("scalescope-results"),
            "sweep",
            header.started_unix_secs,
        )
    })
}

/// Plans a new sweep and creates its results directory.
///
/// # Errors
/// As [`plan_new`], a program that cannot be found, or a directory that already
/// holds results.
pub fn start(s: &SweepSettings, topo: &Topology) -> Result<Ready, SessionError> {
    let mut planned = plan_new(s, topo)?;
    check_program(&planned.header.command)?;
    let out = out_dir(s, &planned.header);
    let store = ResultsStore::create(&out, &planned.header)?;
    if planned.header.plan.launch.is_some() {
        let (plan, timeout) = (&planned.header.plan, planned.header.timeout_secs);
        planned.points = crate::launch::points_of(topo, plan, timeout, &out, true)?;
    }
    let inputs = inputs_of(s, &store, &mut planned.template)?;
    Ok(Ready {
        planned,
        store,
        earlier: Vec::new(),
        inputs,
    })
}

/// The timeout and kill grace a header recorded, checked as the flags are: a header
/// with a value out of range (edited, or written by something else) is refused,
/// never turned into a panic or a silent zero.
///
/// # Errors
/// [`SessionError::Resume`] naming the value and its range.
fn recorded_times(
    dir: &Path,
    header: &Header,
) -> Result<(Option<Timeout>, KillGrace), SessionError> {
    let refused = |what: &str, e: String| {
        SessionError::Resume(format!(
            "{}: the header records a {what} of {e}; it cannot be resumed",
            dir.display()
        ))
    };
    let timeout = header
        .timeout_secs
        .map(Timeout::checked)
        .transpose()
        .map_err(|e| refused("timeout", e))?;
    let grace = match header.kill_grace_secs {
        Some(g) => KillGrace::checked(g).map_err(|e| refused("kill grace", e))?,
        None => settings::default_kill_grace(),
    };
    Ok((timeout, grace))
}

/// Reopens the sweep in `s.out` to finish it; settings its header fixes are refused.
///
/// # Errors
/// No output directory, a plan setting given, a different machine, an unreadable
/// results file.
pub fn resume(s: &SweepSettings, topo: &Topology) -> Result<Ready, SessionError> {
    let out = s
        .out
        .as_ref()
        .ok_or_else(|| bad(Setting::Out, "a resume needs the results directory"))?;
    let given = s.plan_fields_given();
    if !given.is_empty() {
        return Err(SessionError::ResumeFixed {
            dir: out.clone(),
            given,
        });
    }
    let (store, mut header, earlier) = ResultsStore::resume(out)?;
    crate::launch::rebind_hosts(&mut header.plan);
    let differing = settings::run_settings_differing(s, &header);
    if !differing.is_empty() {
        return Err(SessionError::ResumeDiffers {
            dir: out.clone(),
            differing,
        });
    }
    check_size(&header.plan)?;
    if header.machine.topology.summary() != topo.summary() {
        return Err(SessionError::Resume(format!(
            "{} was recorded on a different machine ({}); this one is {}",
            out.display(),
            header.machine.topology.summary(),
            topo.summary()
        )));
    }
    let (timeout, grace) = recorded_times(out, &header)?;
    let mut template = template_of(&header.command, timeout, grace)?;
    template.sample_interval = s.sample_interval();
    template.node_sampler = node_sampler(&header.plan)?;
    let points = crate::launch::points_of(topo, &header.plan, header.timeout_secs, out, true)?;
    let inputs = inputs_of(s, &store, &mut template)?;
    Ok(Ready {
        planned: Planned {
            header,
            template,
            points,
        },
        store,
        earlier,
        inputs,
    })
}
