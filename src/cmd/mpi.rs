//! `scalescope mpi-check`: launches the probe through an MPI launcher for each
//! ranks-per-node value and prints every rank against its plan (exit 1 when one is
//! not where planned).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use scalescope_place::launch::hosts;
use scalescope_sweep::launch::{check_all, CheckRequest};
use scalescope_topo::Source;

use crate::cli::MpiCheckArgs;

pub fn run(args: &MpiCheckArgs) -> anyhow::Result<ExitCode> {
    let launcher: scalescope_place::launch::Launcher = args.launcher.parse()?;
    let hostfile = match &args.hostfile {
        Some(p) => Some(std::fs::read_to_string(p).with_context(|| p.display().to_string())?),
        None => None,
    };
    let slurm = std::env::var("SLURM_JOB_NODELIST").ok();
    let exe = std::env::current_exe().context("finding the scalescope binary for the probe")?;
    let req = CheckRequest {
        launcher,
        program: args
            .launcher_path
            .clone()
            .unwrap_or_else(|| launcher.to_string()),
        extra_args: args.launcher_arg.clone(),
        hosts: hosts::choose(args.nodes.as_deref(), hostfile.as_deref(), slurm.as_deref())?,
        values: args
            .ranks_per_node
            .iter()
            .map(|v| v.parse())
            .collect::<Result<_, _>>()?,
        threads_per_rank: args.threads_per_rank,
        strategy: args.strategy.parse()?,
        timeout: Duration::from_secs(args.timeout),
        probe: vec![exe.to_string_lossy().into_owned(), "__probe".into()],
        run: args.program.clone(),
        reps: args.reps,
        work_dir: std::env::temp_dir().join(format!("scalescope-mpi-{}", std::process::id())),
    };
    let topo = Source::Live.load()?;
    let mut doc = check_all(&topo, &req, |l| {
        if !args.json {
            print!("{}", scalescope_report::ranks::launch_text(l));
        }
    })?;
    let doublings = scalescope_analysis::ht_doubling::doublings(&doc.launches);
    doc.findings = doublings.iter().map(|d| d.sentence()).collect();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        doc.findings.iter().for_each(|f| println!("finding: {f}"));
    }
    Ok(if doc.all_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
