//! `scalescope mem ...`: memory-subsystem workloads run in this process.

use std::process::ExitCode;

use anyhow::Context;
use scalescope_place::{place, MemPolicy};
use scalescope_topo::Source;
use scalescope_workloads::stream::Stream;
use scalescope_workloads::{execute, Pool};

use crate::cli::{C2cArgs, LatencyArgs, MatrixArgs, MemCommand, StreamArgs};

/// Version of the `mem matrix|latency|c2c --json` documents (docs/json.md).
pub const MEM_SCHEMA_VERSION: u32 = 1;

pub fn run(cmd: &MemCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        MemCommand::Stream(args) => stream(args),
        MemCommand::Matrix(args) => matrix(args),
        MemCommand::Latency(args) => latency(args),
        MemCommand::C2c(args) => c2c(args),
    }
}

/// Total last-level cache from the topology (L3, else L2), if known.
fn llc_bytes(topo: &scalescope_topo::Topology) -> Option<u64> {
    let llc = if topo.l3.is_empty() {
        &topo.l2
    } else {
        &topo.l3
    };
    let total: u64 = llc.iter().filter_map(|c| c.size_bytes).sum();
    (total > 0).then_some(total)
}

/// A size flag, or `times` x the last-level cache.
fn size_or_llc(
    flag: &str,
    text: Option<&str>,
    topo: &scalescope_topo::Topology,
    times: u64,
) -> anyhow::Result<usize> {
    match text {
        Some(t) => Ok(scalescope_workloads::size::parse_bytes(t)
            .map_err(|e| anyhow::anyhow!("{flag}: {e}"))? as usize),
        None => llc_bytes(topo)
            .map(|b| (b * times) as usize)
            .ok_or_else(|| {
                anyhow::anyhow!("the last-level cache size is unknown here; give {flag}")
            }),
    }
}

fn matrix_table(
    title: &str,
    rows: &[u32],
    cols: &[u32],
    cell: impl Fn(usize, usize) -> String,
) -> String {
    let mut out = format!("{title}\n  cpu\\mem");
    for c in cols {
        out += &format!(" {:>9}", format!("node{c}"));
    }
    out.push('\n');
    for (i, r) in rows.iter().enumerate() {
        out += &format!("  {:>7}", format!("node{r}"));
        for j in 0..cols.len() {
            out += &format!(" {:>9}", cell(i, j));
        }
        out.push('\n');
    }
    out
}

fn matrix(args: &MatrixArgs) -> anyhow::Result<ExitCode> {
    let working = super::progress::working("mem matrix");
    let topo = Source::Live.load()?;
    if args.passes == 0 {
        anyhow::bail!("--passes 0: at least one pass is needed");
    }
    let cfg = scalescope_workloads::mem::matrix::MatrixConfig {
        bandwidth_bytes: size_or_llc("--size", args.size.as_deref(), &topo, 4)?,
        passes: args.passes,
        latency_bytes: size_or_llc("--latency-size", args.latency_size.as_deref(), &topo, 4)?,
        latency_steps: 4_000_000,
        threads_per_node: args.threads_per_node,
    };
    let m = scalescope_workloads::mem::matrix::measure(&topo, &cfg)?;
    let slit = (!m.slit.is_empty()).then_some(m.slit.as_slice());
    let input = |values, samples, higher_is_closer| scalescope_analysis::hops::MatrixInput {
        values,
        samples,
        higher_is_closer,
        slit,
        rel_gap: 0.15,
    };
    let bw_hops =
        scalescope_analysis::hops::infer(&input(&m.bandwidth_gb_per_s, &m.bandwidth_samples, true));
    let lat_hops =
        scalescope_analysis::hops::infer(&input(&m.latency_ns, &m.latency_samples, false));
    let one_node = m.cpu_nodes.len() == 1 && m.memory_nodes.len() == 1;
    drop(working);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "kind": "scalescope.mem-matrix",
                "schema_version": MEM_SCHEMA_VERSION,
                "machine": topo.summary(),
                "matrix": m,
                "bandwidth_hops": bw_hops,
                "latency_hops": lat_hops,
                "note": one_node.then_some("1x1: this machine has one NUMA node, so there is no remote memory to compare"),
            }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}\n", topo.summary());
    print!(
        "{}",
        matrix_table(
            "Read bandwidth, GB/s (rows: threads on node; columns: memory on node)",
            &m.cpu_nodes,
            &m.memory_nodes,
            |i, j| format!("{:.2}", m.bandwidth_gb_per_s[i][j])
        )
    );
    print!(
        "{}",
        matrix_table(
            "\nLoad latency, ns (one thread, dependent loads)",
            &m.cpu_nodes,
            &m.memory_nodes,
            |i, j| format!("{:.1}", m.latency_ns[i][j])
        )
    );
    if !m.slit.is_empty() {
        print!(
            "{}",
            matrix_table(
                "\nFirmware distances (SLIT)",
                &m.cpu_nodes,
                &m.memory_nodes,
                |i, j| m.slit[i][j].to_string()
            )
        );
    }
    for (i, row) in m.placement_verified.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            match v {
                Some(f) if *f < 0.99 => println!(
                    "warning: only {:.0}% of the pages for node{} -> node{} landed on node{}",
                    f * 100.0,
                    m.cpu_nodes[i],
                    m.memory_nodes[j],
                    m.memory_nodes[j]
                ),
                None => println!("note: page placement unverified (no /proc/self/numa_maps here)"),
                _ => {}
            }
        }
    }
    if one_node {
        println!("\n1x1 matrix: this machine has one NUMA node, so there is no remote memory to compare and no hop structure to infer.");
        return Ok(ExitCode::SUCCESS);
    }
    for (what, h) in [("bandwidth", &bw_hops), ("latency", &lat_hops)] {
        println!(
            "\nInferred from {what}: {} levels ({}), at most {} hop(s)",
            h.levels.len(),
            if h.noise.levels_from == "slit" {
                "one per SLIT value"
            } else {
                "measured, each beyond the spread of repeats"
            },
            h.max_hops
        );
        if let Some(n) = &h.noise.note {
            println!("  {n}");
        }
        for (k, l) in h.levels.iter().enumerate() {
            println!(
                "  level {k}: {:.2}..{:.2} ({} cells)",
                l.min, l.max, l.cells
            );
        }
        let groups: Vec<String> = h
            .groups
            .iter()
            .map(|g| {
                format!(
                    "{{{}}}",
                    g.iter()
                        .map(|i| format!("node{}", m.cpu_nodes[*i]))
                        .collect::<Vec<_>>()
                        .join(",")
                )
            })
            .collect();
        println!("  groups: {}", groups.join(" "));
        for d in &h.disagreements {
            println!("  ! {d}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn latency(args: &LatencyArgs) -> anyhow::Result<ExitCode> {
    let working = super::progress::working("mem latency");
    let topo = Source::Live.load()?;
    let cpu = match args.cpu {
        Some(c) if topo.usable_cpus().contains(c) => c,
        Some(c) => anyhow::bail!(
            "--cpu {c}: not a usable CPU here (usable: {})",
            topo.usable_cpus()
        ),
        None => topo.usable_cpus().first().context("no usable CPU")?,
    };
    let max = size_or_llc("--max-size", args.max_size.as_deref(), &topo, 8)?;
    let sizes = scalescope_workloads::mem::matrix::ladder_sizes(max);
    let rungs = scalescope_workloads::mem::matrix::ladder(cpu, &sizes, 5_000_000)?;
    let pu = topo.pu(cpu);
    let caches: Vec<(u8, u64)> = [
        (
            2u8,
            pu.and_then(|p| p.l2).and_then(|i| topo.l2[i].size_bytes),
        ),
        (
            3u8,
            pu.and_then(|p| p.l3).and_then(|i| topo.l3[i].size_bytes),
        ),
    ]
    .into_iter()
    .filter_map(|(l, s)| s.map(|s| (l, s)))
    .collect();
    drop(working);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "kind": "scalescope.mem-latency",
                "schema_version": MEM_SCHEMA_VERSION,
                "machine": topo.summary(),
                "cpu": cpu,
                "rungs": rungs,
                "caches": caches.iter().map(|(l, s)| serde_json::json!({"level": l, "size_bytes": s})).collect::<Vec<_>>(),
            }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("Load latency from CPU {cpu} (dependent loads over a random cycle of cache lines)");
    println!("{:>12} {:>10}", "working set", "ns/load");
    let mut marked = Vec::new();
    for r in &rungs {
        let mut mark = String::new();
        for (l, s) in &caches {
            if r.bytes as u64 > *s && !marked.contains(l) {
                marked.push(*l);
                mark += &format!(
                    "  <- past L{l} ({})",
                    scalescope_report::machine::human_bytes(*s)
                );
            }
        }
        println!(
            "{:>12} {:>10.2}{mark}",
            scalescope_report::machine::human_bytes(r.bytes as u64),
            r.ns
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn c2c(args: &C2cArgs) -> anyhow::Result<ExitCode> {
    let working = super::progress::working("mem c2c");
    let topo = Source::Live.load()?;
    let cpus: Vec<u32> = match &args.cpus {
        Some(t) => {
            let set =
                scalescope_topo::CpuSet::parse_list(t).with_context(|| format!("--cpus `{t}`"))?;
            if let Some(bad) = set.iter().find(|c| !topo.usable_cpus().contains(*c)) {
                anyhow::bail!(
                    "--cpus: CPU {bad} is not usable here (usable: {})",
                    topo.usable_cpus()
                );
            }
            set.iter().collect()
        }
        None => topo.usable_cpus().iter().collect(),
    };
    if args.round_trips == 0 || args.samples < 2 {
        anyhow::bail!(
            "--round-trips must be at least 1 and --samples at least 2 (the first is a warm-up)"
        );
    }
    let m = scalescope_workloads::mem::c2c::measure(
        &topo,
        &cpus,
        args.node,
        args.round_trips,
        args.samples,
    )?;
    drop(working);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "kind": "scalescope.mem-c2c",
                "schema_version": MEM_SCHEMA_VERSION,
                "machine": topo.summary(),
                "c2c": m,
            }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "Core-to-core latency, ns one-way (CAS ping-pong, {} round trips x {} samples{})",
        m.round_trips,
        m.samples,
        m.line_node
            .map(|n| format!(", line on node {n}"))
            .unwrap_or_default()
    );
    // Each CPU labelled with its core and NUMA node, so SMT siblings (same core) and
    // remote pairs (different node) can be read off the table.
    let label = |c: u32| {
        let pu = topo.pu(c);
        format!(
            "{c} c{} n{}",
            pu.and_then(|p| p.core)
                .map(|x| x.to_string())
                .unwrap_or("?".into()),
            pu.and_then(|p| p.numa_node)
                .map(|x| x.to_string())
                .unwrap_or("?".into())
        )
    };
    print!("{:>12}", "cpu core node");
    for c in &m.cpus {
        print!(" {:>10}", label(*c));
    }
    println!();
    for (i, a) in m.cpus.iter().enumerate() {
        print!("{:>12}", label(*a));
        for j in 0..m.cpus.len() {
            print!(
                " {:>10}",
                m.ns[i][j]
                    .map(|v| format!("{v:.1}"))
                    .unwrap_or_else(|| "-".into())
            );
        }
        println!();
    }
    println!("\nBy relationship:");
    for (rel, n, mean, min, max) in &m.summary {
        println!(
            "  {:<26} {n:>5} pairs  mean {mean:.1} ns  (min {min:.1}, max {max:.1})",
            rel.label()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn stream(args: &StreamArgs) -> anyhow::Result<ExitCode> {
    let working = super::progress::working("mem stream");
    let policy: MemPolicy = args.mem.parse()?;
    if args.ntimes < 2 {
        anyhow::bail!(
            "--ntimes {}: STREAM needs at least 2 iterations (the first is not counted)",
            args.ntimes
        );
    }
    let topo = Source::Live.load()?;
    let placement = place(&topo, &args.place.request(&topo, args.threads)?)?;
    let threads = placement.threads.len();
    let resolved = policy.resolve(&topo)?;
    let bytes = Stream::array_bytes(args.size.as_deref(), &topo)?;
    let mut stream = Stream::new((bytes / 8) as usize, args.ntimes, args.nt);
    let pool = Pool::new(&placement.threads, Some(&resolved)).context("starting pinned workers")?;
    let report = execute(&mut stream, &pool)?;
    drop(working);
    if args.json {
        let doc = serde_json::json!({
            "kind": "scalescope.mem-stream",
            "schema_version": MEM_SCHEMA_VERSION,
            "threads": threads,
            "placement": placement.strategy.to_string(),
            "mem": policy.to_string(),
            "verified": report.verified,
            "verification": report.verification,
            "array_bytes": report.detail["array_bytes"],
            "kernels": report.detail["kernels"],
            "report": report,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "STREAM: {} threads ({}), {}, {} per array ({} total), best of {} iterations{}",
            threads,
            placement.strategy,
            policy,
            scalescope_report::machine::human_bytes(bytes),
            scalescope_report::machine::human_bytes(3 * bytes),
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
