//! A launched sweep submitted as Slurm batch jobs (`sweep --submit`): one job per
//! point, asking for exclusive use of as many nodes as the point spans; each job
//! runs its point as a sweep of its own inside its allocation (in
//! `OUT/jobs/<point>/`, resumed there if the job runs again), and the runs each
//! job appends are gathered into `OUT/results.jsonl` as they come, their node
//! names in each run's `ranks.hosts`, their log and series paths made relative to
//! `OUT`. A resume gathers what the jobs left, then submits only the points with
//! runs still missing and no job in the queue; a job cancelled half-way is
//! resumed where it stopped, so no run is repeated. A dry run prints the scripts.
//!
//! The points are planned with this machine's topology (`cores` ranks per node is
//! resolved here): submit from a machine like the compute nodes, or give counts.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use scalescope_model::launch::HostsFrom;
use scalescope_model::plan::Point;
use scalescope_model::store::{read_results, Header, ResultsStore, RunRecord, RESULTS_FILE};
use scalescope_topo::Topology;

use crate::prepare::{check_program, command_of, new_header, out_dir, plan_of};
use crate::run::{conclude, Ended, Finished, Options};
use crate::settings::SweepSettings;
use crate::SessionError;

mod script;
use scalescope_model::setting::Setting;
use script::script;

/// How jobs are submitted and watched.
#[derive(Debug, Clone)]
pub struct SubmitSettings {
    /// sbatch options for every job (`--account=x`, `--partition=y`).
    pub sbatch_args: Vec<String>,
    /// How often the queue and the jobs' results are looked at.
    pub poll: Duration,
    /// Finish the submitted sweep in `--out`: gather, then submit what is missing.
    pub resume: bool,
}

/// One point's batch job.
#[derive(Debug, Clone)]
pub struct PointJob {
    pub point: Point,
    /// `n2-r4-compact`: the job's directory under `OUT/jobs`.
    pub name: String,
    pub dir: PathBuf,
    pub script_path: PathBuf,
    pub script: String,
}

/// A submitted sweep: its results, its jobs and the ids of those in flight.
pub struct Submitted {
    pub store: ResultsStore,
    pub header: Header,
    pub jobs: Vec<PointJob>,
    /// Job ids submitted by this session.
    pub ids: Vec<String>,
    records: Vec<RunRecord>,
}

type Key = (Point, usize, bool);

fn key(r: &RunRecord) -> Key {
    (r.point.clone(), r.rep, r.warmup)
}

fn bad(detail: impl Into<String>) -> SessionError {
    SessionError::Setting {
        setting: Setting::Submit,
        detail: detail.into(),
    }
}

/// The header of a sweep to submit: its plan has a node axis, and its hosts are
/// each job's allocation.
///
/// # Errors
/// Bad settings, no launcher or no `--nodes`, a program that cannot be found.
pub fn header_of(s: &SweepSettings, topo: &Topology) -> Result<Header, SessionError> {
    if s.launch.is_none() {
        return Err(bad(
            "every submitted point runs through a launcher: name one (srun, mpirun or mpiexec)",
        ));
    }
    let mut plan = plan_of(s, topo)?;
    let launch = plan.launch.as_mut().ok_or_else(|| bad("no launch"))?;
    if launch.node_counts.is_empty() {
        return Err(bad(
            "each submitted job asks for its nodes: give the node counts (1,2,4)",
        ));
    }
    launch.hosts = Vec::new();
    launch.hosts_from = HostsFrom::Allocation;
    let command = command_of(&s.target, topo)?;
    check_program(&command)?;
    let mut header = new_header(command, plan, s.timeout.map(|t| t.get()), topo);
    header.kill_grace_secs = Some(
        s.kill_grace
            .unwrap_or_else(crate::settings::default_kill_grace)
            .get(),
    );
    Ok(header)
}

/// Every point's job for the sweep in `out` (absolute).
///
/// # Errors
/// [`SessionError::CurrentExe`].
pub fn jobs_of(
    header: &Header,
    out: &Path,
    sub: &SubmitSettings,
    sample_interval_ms: Option<u64>,
) -> Result<Vec<PointJob>, SessionError> {
    let exe = std::env::current_exe().map_err(SessionError::CurrentExe)?;
    let exe = exe.display().to_string();
    Ok(header
        .plan
        .points()
        .into_iter()
        .map(|point| {
            let nodes = point.nodes.unwrap_or(1).max(1);
            let name = format!("n{nodes}-r{}-{}", point.threads / nodes, point.placement)
                .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_");
            let dir = out.join("jobs").join(&name);
            let script_path = out.join("jobs").join(format!("{name}.sbatch"));
            let script = script(header, &point, &name, out, &exe, sub, sample_interval_ms);
            PointJob {
                point,
                name,
                dir,
                script_path,
                script,
            }
        })
        .collect())
}

/// Every job script, for `--dry-run` (nothing is written or submitted).
///
/// # Errors
/// As [`header_of`].
pub fn dry_run(
    s: &SweepSettings,
    sub: &SubmitSettings,
    topo: &Topology,
) -> Result<String, SessionError> {
    let header = header_of(s, topo)?;
    let out = absolute(&out_dir(s, &header))?;
    let jobs = jobs_of(&header, &out, sub, s.sample_interval_ms.map(|m| m.get()))?;
    Ok(jobs
        .iter()
        .map(|j| format!("# {}\n{}\n", j.script_path.display(), j.script))
        .collect())
}

/// Submits the sweep (or, resuming, what it misses), then waits for its jobs and
/// concludes ([`start`] or [`resume`], then [`wait`]); `say` hears of each
/// submission and gathering, and how to finish when runs are missing.
///
/// # Errors
/// As those.
pub fn run(
    s: &SweepSettings,
    sub: &SubmitSettings,
    topo: &Topology,
    interrupt: &AtomicBool,
    options: &Options,
    mut say: impl FnMut(&str),
) -> Result<Finished, SessionError> {
    let submitted = match sub.resume {
        true => resume(s, sub, &mut say)?,
        false => start(s, sub, topo, &mut say)?,
    };
    let done = wait(submitted, sub, interrupt, options, &mut say)?;
    Ok(done)
}

/// Plans the sweep, creates `OUT/results.jsonl` and submits every point's job;
/// `say` hears of each submission.
///
/// # Errors
/// As [`header_of`]; an existing sweep in `OUT`; a job sbatch refuses.
pub fn start(
    s: &SweepSettings,
    sub: &SubmitSettings,
    topo: &Topology,
    mut say: impl FnMut(&str),
) -> Result<Submitted, SessionError> {
    let header = header_of(s, topo)?;
    let out = absolute(&out_dir(s, &header))?;
    let store = ResultsStore::create(&out, &header)?;
    let jobs = jobs_of(&header, &out, sub, s.sample_interval_ms.map(|m| m.get()))?;
    let mut submitted = Submitted {
        store,
        header,
        jobs,
        ids: Vec::new(),
        records: Vec::new(),
    };
    let all: Vec<usize> = (0..submitted.jobs.len()).collect();
    submit_jobs(&mut submitted, &all, &mut say)?;
    Ok(submitted)
}

/// Reopens a submitted sweep: gathers what its jobs left, then submits the points
/// with measured runs still missing whose last job has left the queue.
///
/// # Errors
/// No results in `OUT`, not a submitted sweep, a job sbatch refuses.
pub fn resume(
    s: &SweepSettings,
    sub: &SubmitSettings,
    mut say: impl FnMut(&str),
) -> Result<Submitted, SessionError> {
    let out = s.out.as_ref().ok_or_else(|| SessionError::Setting {
        setting: Setting::Out,
        detail: "a resume of submitted jobs needs the results directory".into(),
    })?;
    let out = absolute(out)?;
    let (store, header, records) = ResultsStore::resume(&out)?;
    if header.plan.launch.as_ref().map(|l| l.hosts_from) != Some(HostsFrom::Allocation)
        || !out.join("jobs").is_dir()
    {
        return Err(bad(format!(
            "{} was not submitted as jobs: resume it as a plain sweep",
            out.display()
        )));
    }
    let jobs = jobs_of(&header, &out, sub, s.sample_interval_ms.map(|m| m.get()))?;
    let mut submitted = Submitted {
        store,
        header,
        jobs,
        ids: Vec::new(),
        records,
    };
    gather(&mut submitted, &mut say)?;
    let queued = scalescope_sweep::submit::queued(&last_ids(&submitted.jobs))?;
    let missing = missing_points(&submitted);
    let todo: Vec<usize> = (0..submitted.jobs.len())
        .filter(|&i| missing.contains(&submitted.jobs[i].point))
        .filter(|&i| last_id(&submitted.jobs[i]).is_none_or(|id| !queued.contains(&id)))
        .collect();
    submitted.ids = last_ids(&submitted.jobs)
        .into_iter()
        .filter(|id| queued.contains(id))
        .collect();
    submit_jobs(&mut submitted, &todo, &mut say)?;
    Ok(submitted)
}

fn absolute(p: &Path) -> Result<PathBuf, SessionError> {
    std::path::absolute(p).map_err(|source| SessionError::Read {
        path: p.display().to_string(),
        source,
    })
}

/// Writes and submits the jobs at `which`, recording each id beside its script.
fn submit_jobs(
    s: &mut Submitted,
    which: &[usize],
    say: &mut impl FnMut(&str),
) -> Result<(), SessionError> {
    for &i in which {
        let job = &s.jobs[i];
        let write = |path: &Path, text: &str| {
            path.parent()
                .map(std::fs::create_dir_all)
                .unwrap_or(Ok(()))
                .and_then(|()| std::fs::write(path, text))
                .map_err(|source| SessionError::Read {
                    path: path.display().to_string(),
                    source,
                })
        };
        write(&job.script_path, &job.script)?;
        let id = scalescope_sweep::submit::sbatch(&job.script_path, &[])?;
        let ids_file = job.script_path.with_extension("jobs");
        let mut ids = std::fs::read_to_string(&ids_file).unwrap_or_default();
        ids += &format!("{id}\n");
        write(&ids_file, &ids)?;
        say(&format!("submitted job {id}: {}", job.point));
        s.ids.push(id);
    }
    Ok(())
}

/// The id of a job's last submission, from `OUT/jobs/<name>.jobs`.
fn last_id(job: &PointJob) -> Option<String> {
    let text = std::fs::read_to_string(job.script_path.with_extension("jobs")).ok()?;
    text.lines().last().map(str::to_string)
}

fn last_ids(jobs: &[PointJob]) -> Vec<String> {
    jobs.iter().filter_map(last_id).collect()
}

/// The points with a measured run not in the results yet.
fn missing_points(s: &Submitted) -> BTreeSet<Point> {
    let have: BTreeSet<Key> = s.records.iter().map(key).collect();
    s.header
        .plan
        .jobs()
        .into_iter()
        .filter(|j| !j.warmup && !have.contains(&(j.point.clone(), j.rep, false)))
        .map(|j| j.point)
        .collect()
}

/// Copies every run the jobs appended and the results do not hold yet, its paths
/// made relative to the results directory; says how many came.
fn gather(s: &mut Submitted, say: &mut impl FnMut(&str)) -> Result<(), SessionError> {
    let mut have: BTreeSet<Key> = s.records.iter().map(key).collect();
    let mut new = 0;
    for job in &s.jobs {
        let Ok((_, runs, _)) = read_results(&job.dir.join(RESULTS_FILE)) else {
            continue;
        };
        for mut r in runs {
            if r.point != job.point || !have.insert(key(&r)) {
                continue;
            }
            relocate(&mut r, &format!("jobs/{}", job.name));
            s.store.append(&r)?;
            s.records.push(r);
            new += 1;
        }
    }
    if new > 0 {
        let wanted = s.header.plan.jobs().len();
        say(&format!(
            "gathered {new} run{} ({} of {wanted})",
            if new == 1 { "" } else { "s" },
            s.records.len()
        ));
    }
    Ok(())
}

/// A job's run with its files named from the sweep's results directory.
fn relocate(r: &mut RunRecord, prefix: &str) {
    let moved = |p: &mut Option<String>| {
        if let Some(p) = p.as_mut() {
            *p = format!("{prefix}/{p}");
        }
    };
    moved(&mut r.stdout_log);
    moved(&mut r.stderr_log);
    if let Some(e) = r.evidence.as_mut() {
        moved(&mut e.series_file);
    }
    for n in &mut r.node_evidence {
        if let scalescope_model::evidence::Measured::Measured(e) = &mut n.evidence {
            moved(&mut e.series_file);
        }
    }
}

/// Gathers runs until every job of this session has left the queue (or
/// `interrupt` is set: the jobs go on, a resume gathers them), then concludes
/// like a sweep: summaries, analysis, report.
///
/// # Errors
/// squeue failing, I/O on the results or the report.
pub fn wait(
    mut s: Submitted,
    sub: &SubmitSettings,
    interrupt: &AtomicBool,
    options: &Options,
    mut say: impl FnMut(&str),
) -> Result<Finished, SessionError> {
    let mut interrupted = false;
    loop {
        gather(&mut s, &mut say)?;
        if interrupt.load(Ordering::SeqCst) {
            interrupted = true;
            break;
        }
        if scalescope_sweep::submit::queued(&s.ids)?.is_empty() {
            gather(&mut s, &mut say)?;
            break;
        }
        let step = Duration::from_millis(100);
        let mut waited = Duration::ZERO;
        while waited < sub.poll && !interrupt.load(Ordering::SeqCst) {
            std::thread::sleep(step);
            waited += step;
        }
    }
    let measured = s.header.plan.jobs().iter().filter(|j| !j.warmup).count();
    let ok = s
        .records
        .iter()
        .filter(|r| !r.warmup && r.status == scalescope_model::store::RunStatus::Ok)
        .count();
    let ended = Ended {
        interrupted,
        failed_runs: measured.saturating_sub(ok),
        prepared: None,
    };
    conclude(s.header, s.records, s.store.out(), options, ended)
}
