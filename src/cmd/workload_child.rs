//! `scalescope __workload NAME --thread-cpus 0;1`: what a sweep starts for a built-in
//! workload. The sweep has already set the process affinity and memory policy; this
//! pins each worker to its own set, runs the workload through the shared trial loop,
//! and prints a human line and then the JSON report as the last line; it exits
//! with the verdict's status.

use std::collections::BTreeMap;
use std::process::ExitCode;

use scalescope_topo::{CpuSet, Source};
use scalescope_workloads::{build_here, execute_with, Pool};

use crate::cli::WorkloadChildArgs;

pub fn run(args: &WorkloadChildArgs) -> anyhow::Result<ExitCode> {
    let sets: &[CpuSet] = &args.thread_cpus;
    let params: BTreeMap<String, String> = args.params.iter().cloned().collect();
    let mut workload = build_here(&args.name, &params, || anyhow::Ok(Source::Live.load()?))?;
    let pool = Pool::new(sets, None)?;
    let report = execute_with(workload.as_mut(), &pool, &args.inputs())?;
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
