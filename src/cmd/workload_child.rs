//! `scalescope __workload NAME --thread-cpus 0;1`: what a sweep starts for a built-in
//! workload. The sweep has already set the process affinity and memory policy; this
//! pins each worker to its own set, runs the shared trial loop (the median warm trial
//! of `--trials N`), prints a human line and the JSON report last; it exits with the
//! verdict's status.

use std::collections::BTreeMap;
use std::process::ExitCode;

use scalescope_topo::Source;
use scalescope_workloads::{build_here, execute_picked, Pool, TrialPick};

use crate::cli::WorkloadChildArgs;

pub fn run(args: &WorkloadChildArgs) -> anyhow::Result<ExitCode> {
    let params: BTreeMap<String, String> = args.params.iter().cloned().collect();
    let mut workload = build_here(&args.name, &params, || anyhow::Ok(Source::Live.load()?))?;
    let pool = Pool::new(&args.thread_cpus, None)?;
    let (inputs, n) = (args.inputs(), args.trials.usize());
    let report = execute_picked(workload.as_mut(), &pool, &inputs, n, TrialPick::WarmMedian)?;
    let figures: Vec<String> = report
        .figures
        .iter()
        .map(|(k, v)| format!("{k}={v:.4}"))
        .collect();
    println!(
        "{} on {} threads: {:.4} s, {} ({})",
        report.workload,
        report.threads,
        report.seconds,
        figures.join(" "),
        report.verification
    );
    println!("{}", serde_json::to_string(&report)?);
    // The verdict's own exit status (0, 4 or 5): the sweep reads it with the report.
    Ok(ExitCode::from(report.verification.exit_code()))
}
