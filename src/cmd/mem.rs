//! `scalescope mem ...`: memory-subsystem workloads run in this process.

use std::process::ExitCode;

use anyhow::Context;
use scalescope_analysis::hops::HopInference;
use scalescope_model::mem::{self as doc_mem, C2cDocument, LatencyDocument, MatrixDocument};
use scalescope_model::value::Bytes;
use scalescope_report::mem as report_mem;
use scalescope_topo::Source;
use scalescope_workloads::mem;
use scalescope_workloads::mem::matrix::MemMatrix;
use scalescope_workloads::stream::Stream;
use scalescope_workloads::Pool;

use crate::cli::{C2cArgs, LatencyArgs, MatrixArgs, MemCommand, StreamArgs};
use crate::shared::{execute_sampled, verdict_exit};

pub fn run(cmd: &MemCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        MemCommand::Stream(args) => stream(args),
        MemCommand::Matrix(args) => matrix(args),
        MemCommand::Latency(args) => latency(args),
        MemCommand::C2c(args) => c2c(args),
    }
}

/// A size setting, or `times` x the last-level cache.
fn size_or_llc(
    field: &str,
    size: Option<Bytes>,
    topo: &scalescope_topo::Topology,
    times: u64,
) -> anyhow::Result<usize> {
    Ok(mem::size_or_llc(field, size, topo, times)? as usize)
}

fn matrix(args: &MatrixArgs) -> anyhow::Result<ExitCode> {
    let topo = Source::Live.load()?;
    let cfg = mem::matrix::MatrixConfig {
        bandwidth_bytes: size_or_llc("size", args.size, &topo, 4)?,
        passes: args.passes.usize(),
        latency_bytes: size_or_llc("latency_size", args.latency_size, &topo, 4)?,
        latency_steps: 4_000_000,
        threads_per_node: args.threads_per_node.map(|t| t.usize()),
        force: args.force,
    };
    let m = mem::matrix::measure(&topo, &cfg)?;
    let virt = Source::Live.virtualization();
    let mut doc = MatrixDocument::<HopInference>::new(&topo.summary(), virt, m);
    // The same inference `analyze matrix.json` runs on the file later.
    let (bw_hops, lat_hops) = scalescope_analysis::matrix_doc::infer_matrix(&doc)?;
    if args.json {
        doc.bandwidth_hops = Some(bw_hops);
        doc.latency_hops = Some(lat_hops);
        println!("{}", doc_mem::to_json(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}\n", topo.summary());
    print_matrices(&doc.matrix);
    if doc.note.is_some() {
        println!("\n1x1 matrix: this machine has one NUMA node, so there is no remote memory to compare and no hop structure to infer.");
        return Ok(ExitCode::SUCCESS);
    }
    for (what, h) in [("bandwidth", &bw_hops), ("latency", &lat_hops)] {
        print!("{}", report_mem::hops_text(what, h, &doc.matrix.cpu_nodes));
    }
    Ok(ExitCode::SUCCESS)
}

/// The bandwidth, latency and SLIT tables, and any page that landed elsewhere.
fn print_matrices(m: &MemMatrix) {
    print!(
        "{}",
        report_mem::matrices_text(&report_mem::MatrixTables {
            cpu_nodes: &m.cpu_nodes,
            memory_nodes: &m.memory_nodes,
            bandwidth_gb_per_s: &m.bandwidth_gb_per_s,
            latency_ns: &m.latency_ns,
            slit: &m.slit,
            placement_verified: &m.placement_verified,
            read_loops: &m.read_loops,
        })
    );
}

fn latency(args: &LatencyArgs) -> anyhow::Result<ExitCode> {
    let topo = Source::Live.load()?;
    let cpu = mem::usable_cpu(&topo, args.cpu)?;
    let max = size_or_llc("max_size", args.max_size, &topo, 8)?;
    let sizes = mem::matrix::ladder_sizes(max);
    let rungs = mem::matrix::ladder(cpu, &sizes, 5_000_000, args.force)?;
    let caches = mem::caches_of(&topo, cpu);
    if args.json {
        let doc = LatencyDocument::new(&topo.summary(), cpu, doc_mem::part(&rungs)?, &caches);
        println!("{}", doc_mem::to_json(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    let ladder: Vec<(u64, f64)> = rungs.iter().map(|r| (r.bytes as u64, r.ns)).collect();
    print!("{}", report_mem::ladder_text(cpu, &ladder, &caches));
    Ok(ExitCode::SUCCESS)
}

fn c2c(args: &C2cArgs) -> anyhow::Result<ExitCode> {
    let topo = Source::Live.load()?;
    let cpus = mem::usable_cpus(&topo, args.cpus.as_ref())?;
    let (round_trips, samples) = (args.round_trips.usize(), args.samples.usize());
    let m = mem::c2c::measure(&topo, &cpus, args.node, round_trips, samples)?;
    if args.json {
        let doc = C2cDocument::new(&topo.summary(), doc_mem::part(&m)?);
        println!("{}", doc_mem::to_json(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    let text = report_mem::C2cText {
        cpus: &m.cpus,
        ns: &m.ns,
        round_trips: m.round_trips,
        samples: m.samples,
        line_node: m.line_node,
        summary: m
            .summary
            .iter()
            .map(|(r, n, a, lo, hi)| (r.label(), *n, *a, *lo, *hi))
            .collect(),
    };
    print!("{}", report_mem::c2c_text(&topo, &text));
    Ok(ExitCode::SUCCESS)
}

fn stream(args: &StreamArgs) -> anyhow::Result<ExitCode> {
    let topo = Source::Live
        .load()
        .context("reading this machine's topology")?;
    let mut stream = Stream::with(&args.settings, Some(&topo))?;
    let resolved = args.mem.resolve(&topo)?;
    let request = args.run.place.request(&topo, args.run.threads);
    let placement = scalescope_place::place(&topo, &request)?;
    let pool = Pool::new(&placement.threads, Some(&resolved))?;
    let working = crate::progress::working("mem stream");
    let (report, evidence) = execute_sampled(&mut stream, &pool, args.sample_interval)?;
    drop(working);
    let (strategy, policy) = (placement.strategy.to_string(), args.mem.to_string());
    let run = scalescope_report::kernels::StreamRun {
        placement: &strategy,
        mem: &policy,
        array_bytes: stream.array_bytes_each(),
        ntimes: args.settings.ntimes.usize(),
        nt: args.settings.nt,
    };
    if args.run.json {
        let doc = scalescope_report::kernels::stream_document(&run, &report, evidence.as_ref())
            .context("the STREAM report's kernels")?;
        println!("{}", doc_mem::to_json(&doc)?);
    } else {
        let names = &scalescope_workloads::stream::KERNELS;
        print!(
            "{}",
            scalescope_report::kernels::stream_text(&run, &report, evidence.as_ref(), names)
        );
    }
    Ok(verdict_exit(&report.verification))
}
