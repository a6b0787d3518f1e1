//! The machine and its placements for people: the condensed topology tree, the
//! summary line, the distance matrix, the numbering report, what each strategy would
//! pick, and one placement per thread with every tool's rendering. Pure functions of
//! the model, so `topo` and `place` only print what these return.

use std::fmt::Write as _;

use scalescope_place::{place, render, PlaceRequest, Placement, Strategy, STRATEGY_NAMES};
use scalescope_topo::{CpuSet, NumberingReport, Topology};

/// Everything a person wants to see, in reading order.
pub fn topology_text(topo: &Topology) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", topo.summary());
    if let Some(model) = &topo.cpu_model {
        let _ = writeln!(out, "CPU model: {model}");
    }
    let _ = writeln!(out, "Source: {}\n", topo.source);
    out += &tree(topo);
    out += &numa_section(topo);
    out += &numbering_section(topo);
    out += &strategies_section(topo);
    for note in &topo.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// Wraps `items` after a prefix at about 100 columns, continuing under the prefix.
fn wrapped(prefix: &str, items: &[String]) -> String {
    let mut out = String::new();
    let mut line = prefix.to_string();
    for item in items {
        if line.len() + item.len() + 1 > 100 && line.len() > prefix.len() {
            out += line.trim_end();
            out.push('\n');
            line = " ".repeat(prefix.len());
        }
        line += item;
        line.push(' ');
    }
    out += line.trim_end();
    out.push('\n');
    out
}

fn tree(topo: &Topology) -> String {
    let mut out = String::new();
    for pkg in &topo.packages {
        let os = pkg
            .os_id
            .map(|i| format!(" (physical id {i})"))
            .unwrap_or_default();
        let _ = writeln!(out, "Package {}{os}: CPUs {}", pkg.id, pkg.cpus);
        for (label, cpus) in l3_groups(topo, &pkg.cpus) {
            let cores: Vec<String> = topo
                .cores
                .iter()
                .filter(|c| c.cpus.is_subset(&cpus))
                .map(|c| {
                    let pus: Vec<String> = c.cpus.iter().map(|x| x.to_string()).collect();
                    format!("[{}]", pus.join("+"))
                })
                .collect();
            let prefix = if label.is_empty() {
                format!("  {} cores: ", cores.len())
            } else {
                format!("  {label}, {} cores: ", cores.len())
            };
            out += &wrapped(&prefix, &cores);
        }
    }
    out += &unusual_cpus(topo);
    out.push('\n');
    out
}

/// A package's L3 domains, labelled with their size (the whole package, unlabelled,
/// when no L3 is known).
fn l3_groups(topo: &Topology, pkg: &CpuSet) -> Vec<(String, CpuSet)> {
    let l3: Vec<_> = topo.l3.iter().filter(|c| c.cpus.is_subset(pkg)).collect();
    if l3.is_empty() {
        return vec![(String::new(), pkg.clone())];
    }
    l3.iter()
        .map(|c| {
            let size = c
                .size_bytes
                .map(|b| format!(" {}", human_bytes(b)))
                .unwrap_or_default();
            (format!("L3 #{}{size}", c.id), c.cpus.clone())
        })
        .collect()
}

/// Offline CPUs, CPUs this process may not use, and core kinds, where there are any.
fn unusual_cpus(topo: &Topology) -> String {
    let mut out = String::new();
    let offline: CpuSet = topo
        .pus
        .iter()
        .filter(|p| !p.online)
        .map(|p| p.cpu)
        .collect();
    if !offline.is_empty() {
        let _ = writeln!(out, "Offline CPUs: {offline}");
    }
    let forbidden: CpuSet = topo
        .pus
        .iter()
        .filter(|p| p.online && !p.allowed)
        .map(|p| p.cpu)
        .collect();
    if !forbidden.is_empty() {
        let _ = writeln!(
            out,
            "Not allowed to this process (cgroup or affinity): CPUs {forbidden}"
        );
    }
    if topo.kinds.len() > 1 {
        for k in &topo.kinds {
            let _ = writeln!(out, "Core kind {} ({}): CPUs {}", k.id, k.name, k.cpus);
        }
    }
    out
}

fn numa_section(topo: &Topology) -> String {
    let mut out = String::new();
    for n in &topo.numa_nodes {
        let mem = n
            .memory_bytes
            .map(human_bytes)
            .unwrap_or_else(|| "memory unknown".into());
        let cpus = if n.cpus.is_empty() {
            format!("memory-only, near CPUs {}", n.locality)
        } else {
            format!("CPUs {}", n.cpus)
        };
        let allowed = if n.allowed {
            ""
        } else {
            " (not allowed by the cgroup)"
        };
        let _ = writeln!(out, "NUMA node {}: {mem}, {cpus}{allowed}", n.id);
    }
    if topo.numa_nodes.len() > 1 && topo.numa_nodes.iter().all(|n| !n.distances.is_empty()) {
        let _ = writeln!(out, "\nNUMA distances (firmware SLIT, 10 = local):");
        let header: String = topo
            .numa_nodes
            .iter()
            .map(|n| format!("{:>5}", n.id))
            .collect();
        let _ = writeln!(out, "  node{header}");
        for n in &topo.numa_nodes {
            let row: String = n.distances.iter().map(|d| format!("{d:>5}")).collect();
            let _ = writeln!(out, "  {:>4}{row}", n.id);
        }
    } else if topo.numa_nodes.len() > 1 {
        let _ = writeln!(
            out,
            "NUMA distances: unavailable here: the firmware reports none"
        );
    }
    out.push('\n');
    out
}

fn numbering_section(topo: &Topology) -> String {
    let report = NumberingReport::of(topo);
    let mut out = String::from("Numbering:\n");
    for f in &report.facts {
        let _ = writeln!(out, "  - {f}");
    }
    for w in &report.warnings {
        let _ = writeln!(out, "  ! warning: {w}");
    }
    out.push('\n');
    out
}

/// What every strategy picks for as many threads as the first package has cores.
fn strategies_section(topo: &Topology) -> String {
    let usable = topo.usable_cpus();
    let first_pkg = topo.usable_pus().next().and_then(|p| p.package);
    let per_pkg = topo
        .cores
        .iter()
        .filter(|c| c.package == first_pkg && c.cpus.intersects(&usable))
        .count();
    let n = per_pkg.clamp(2.min(usable.len()), usable.len());
    let mut out = format!("What each strategy picks for {n} threads:\n");
    for (name, strategy) in STRATEGY_NAMES
        .iter()
        .filter_map(|n| n.parse::<Strategy>().ok().map(|s| (n, s)))
    {
        let line = match place(topo, &PlaceRequest::new(strategy, n)) {
            Ok(p) => {
                let cpus = p.first_cpus();
                let shown: Vec<String> = cpus.iter().take(24).map(u32::to_string).collect();
                let more = if cpus.len() > 24 { ", ..." } else { "" };
                format!("CPUs {}{more}", shown.join(","))
            }
            Err(e) => format!("not possible: {e}"),
        };
        let _ = writeln!(out, "  {name:<12} {line}");
    }
    out
}

/// One placement per thread (CPUs, core, package, NUMA node), then every tool's
/// rendering of it.
pub fn placement_text(topo: &Topology, p: &Placement) -> String {
    let mut out = format!(
        "{} threads, strategy {}, granularity {} on {}\n\n",
        p.threads.len(),
        p.strategy,
        p.granularity,
        topo.summary()
    );
    let _ = writeln!(
        out,
        "{:>6}  {:<12} {:>5} {:>8} {:>5}",
        "thread", "cpus", "core", "package", "numa"
    );
    for (i, cpus) in p.threads.iter().enumerate() {
        let pu = cpus.first().and_then(|c| topo.pu(c));
        let field = |v: Option<usize>| v.map(|x| x.to_string()).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "{i:>6}  {:<12} {:>5} {:>8} {:>5}",
            cpus.to_string(),
            field(pu.and_then(|p| p.core)),
            field(pu.and_then(|p| p.package)),
            field(pu.and_then(|p| p.numa_node).map(|n| n as usize)),
        );
    }
    out.push('\n');
    for (tool, text) in render::renderings(p, topo) {
        if text.contains('\n') {
            let _ = writeln!(out, "{tool}:\n  {}", text.replace('\n', "\n  "));
        } else {
            let _ = writeln!(out, "{tool:<18} {text}");
        }
    }
    out
}
