//! `mpi-check` as one library call: typed settings (launcher, ranks per node,
//! hosts, program) -> hosts resolved (flag, hostfile, `SLURM_JOB_NODELIST`,
//! localhost) -> every launch checked and its runs made (`sweep::launch`) -> the
//! hyper-threading-doubling findings (`analysis::ht_doubling`).

use std::path::PathBuf;
use std::time::Duration;

use scalescope_place::launch::{hosts, LaunchError, Launcher, RanksPerNode};
use scalescope_place::Strategy;
use scalescope_results::ranks::{LaunchCheck, MpiCheck};
use scalescope_sweep::launch::{check_all, CheckRequest};
use scalescope_topo::Topology;

use crate::SessionError;

/// What `mpi-check` was asked, as given on the command line.
#[derive(Debug, Clone)]
pub struct MpiSettings {
    pub launcher: String,
    pub launcher_path: Option<String>,
    pub launcher_args: Vec<String>,
    pub ranks_per_node: Vec<String>,
    pub threads_per_rank: usize,
    pub strategy: String,
    pub nodes: Option<String>,
    pub hostfile: Option<PathBuf>,
    pub timeout: Duration,
    pub reps: usize,
    pub program: Vec<String>,
}

fn setting(field: &'static str) -> impl Fn(LaunchError) -> SessionError {
    move |e| SessionError::Setting {
        field,
        detail: e.to_string(),
    }
}

/// Checks every launch on `topo` (this machine), running the program through each;
/// `each` sees every launch as it ends.
///
/// # Errors
/// [`SessionError::Setting`] naming a bad value, [`SessionError::Read`] for an
/// unreadable hostfile, [`SessionError::CurrentExe`], or the sweep's error.
pub fn check(
    topo: &Topology,
    s: &MpiSettings,
    each: impl FnMut(&LaunchCheck),
) -> Result<MpiCheck, SessionError> {
    let launcher: Launcher = s.launcher.parse().map_err(setting("--launcher"))?;
    let hostfile = match &s.hostfile {
        Some(p) => Some(
            std::fs::read_to_string(p).map_err(|source| SessionError::Read {
                path: p.display().to_string(),
                source,
            })?,
        ),
        None => None,
    };
    let slurm = std::env::var("SLURM_JOB_NODELIST").ok();
    let hosts = hosts::choose(s.nodes.as_deref(), hostfile.as_deref(), slurm.as_deref())
        .map_err(setting("--nodes"))?;
    let values = s
        .ranks_per_node
        .iter()
        .map(|v| v.parse::<RanksPerNode>())
        .collect::<Result<_, _>>()
        .map_err(setting("--ranks-per-node"))?;
    let strategy: Strategy = s
        .strategy
        .parse()
        .map_err(|e: scalescope_place::PlaceError| SessionError::Setting {
            field: "--strategy",
            detail: e.to_string(),
        })?;
    let exe = std::env::current_exe().map_err(SessionError::CurrentExe)?;
    let req = CheckRequest {
        launcher,
        program: s
            .launcher_path
            .clone()
            .unwrap_or_else(|| launcher.to_string()),
        extra_args: s.launcher_args.clone(),
        hosts,
        values,
        threads_per_rank: s.threads_per_rank,
        strategy,
        timeout: s.timeout,
        probe: vec![exe.to_string_lossy().into_owned(), "__probe".into()],
        run: s.program.clone(),
        reps: s.reps,
        work_dir: std::env::temp_dir().join(format!("scalescope-mpi-{}", std::process::id())),
    };
    let mut doc = check_all(topo, &req, each)?;
    let doublings = scalescope_analysis::ht_doubling::doublings(&doc.launches);
    doc.findings = doublings.iter().map(|d| d.sentence()).collect();
    Ok(doc)
}
