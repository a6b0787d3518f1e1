//! `scalescope mem ...`: memory-subsystem workloads run in this process.

use std::process::ExitCode;

use anyhow::Context;
use scalescope_place::{place, MemPolicy, PlaceRequest, Strategy};
use scalescope_topo::Source;
use scalescope_workloads::stream::Stream;
use scalescope_workloads::{execute, Pool};

use crate::cli::{MemCommand, StreamArgs};

pub fn run(cmd: &MemCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        MemCommand::Stream(args) => stream(args),
    }
}

fn stream(args: &StreamArgs) -> anyhow::Result<ExitCode> {
    let strategy: Strategy = args.placement.parse()?;
    let policy: MemPolicy = args.mem.parse()?;
    if args.ntimes < 2 {
        anyhow::bail!(
            "--ntimes {}: STREAM needs at least 2 iterations (the first is not counted)",
            args.ntimes
        );
    }
    let topo = Source::Live.load()?;
    let threads = args.threads.unwrap_or_else(|| topo.usable_cpus().len());
    let placement = place(&topo, &PlaceRequest::new(strategy, threads))?;
    let resolved = policy.resolve(&topo)?;
    let bytes = Stream::array_bytes(args.size.as_deref(), &topo)?;
    let mut stream = Stream::new((bytes / 8) as usize, args.ntimes, args.nt);
    let pool = Pool::new(&placement.threads, Some(&resolved)).context("starting pinned workers")?;
    let report = execute(&mut stream, &pool)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "STREAM: {} threads ({}), {}, {} per array ({} total), best of {} iterations{}",
            threads,
            placement.strategy,
            policy,
            super::topo::human_bytes(bytes),
            super::topo::human_bytes(3 * bytes),
            args.ntimes - 1,
            if args.nt { ", non-temporal stores" } else { "" }
        );
        println!(
            "{:<8} {:>12} {:>12} {:>12} {:>12}",
            "kernel", "GB/s", "best s", "avg s", "max s"
        );
        for name in scalescope_workloads::stream::KERNELS {
            let k = &report.detail["kernels"][name];
            println!(
                "{name:<8} {:>12.2} {:>12.6} {:>12.6} {:>12.6}",
                k["gb_per_s"].as_f64().unwrap_or(f64::NAN),
                k["best_secs"].as_f64().unwrap_or(f64::NAN),
                k["avg_secs"].as_f64().unwrap_or(f64::NAN),
                k["max_secs"].as_f64().unwrap_or(f64::NAN)
            );
        }
        println!(
            "validation: {} ({})",
            if report.verified { "passed" } else { "FAILED" },
            report.verification
        );
    }
    Ok(if report.verified {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::workload_child::EXIT_UNVERIFIED)
    })
}
