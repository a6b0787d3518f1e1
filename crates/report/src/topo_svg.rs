//! The topology picture: packages as boxes, NUMA nodes inside them with their
//! memory, L3 caches with their sizes, cores as cells listing their PUs (offline or
//! forbidden ones greyed), and, for each placement, which cores its threads used at
//! one thread count (a bar per placement in the placement's colour, as wide as the
//! share of the core's PUs it used).

use std::fmt::Write as _;

use scalescope_topo::{CpuSet, Topology};

use crate::machine::human_bytes;
use crate::svg::escape;

/// The CPUs one placement's threads used, drawn in `color`.
#[derive(Debug, Clone)]
pub struct Used {
    pub name: String,
    pub color: String,
    pub cpus: CpuSet,
}

const PER_ROW: usize = 12;
const CW: f64 = 60.0;
const CH: f64 = 40.0;
const GAP: f64 = 6.0;

/// The picture; `threads` names the thread count the `used` sets belong to.
pub fn topology_picture(topo: &Topology, used: &[Used], threads: Option<usize>) -> String {
    let mut y = 40.0;
    let mut body = String::new();
    if !used.is_empty() {
        y += legend(&mut body, used, threads, y);
    }
    for pkg in &topo.packages {
        y = package(&mut body, topo, pkg, used, y) + 12.0;
    }
    let w = PER_ROW as f64 * (CW + GAP) + 60.0;
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w:.0} {:.0}" width="{w:.0}" height="{:.0}" font-family="sans-serif" font-size="12" role="img"><title>topology</title><rect width="100%" height="100%" fill="#fff"/><text x="10" y="24" font-size="15" font-weight="bold">{}</text>{body}</svg>"##,
        y + 10.0,
        y + 10.0,
        escape(&topo.summary())
    )
}

/// "CPUs used at N threads:" and one swatch per placement; returns its height.
fn legend(body: &mut String, used: &[Used], threads: Option<usize>, y: f64) -> f64 {
    let at = threads
        .map(|t| format!("CPUs used at {t} threads:"))
        .unwrap_or_else(|| "CPUs used:".into());
    let _ = write!(body, r#"<text x="10" y="{:.1}">{}</text>"#, y + 4.0, at);
    let mut x = 190.0;
    for (i, u) in used.iter().enumerate() {
        let _ = write!(
            body,
            r#"<g class="s{i}"><rect x="{x:.1}" y="{:.1}" width="14" height="10" fill="{}"/><text x="{:.1}" y="{:.1}">{} ({} CPUs)</text></g>"#,
            y - 5.0,
            escape(&u.color),
            x + 18.0,
            y + 4.0,
            escape(&u.name),
            u.cpus.len()
        );
        x += 40.0 + 8.0 * (u.name.len() as f64 + 8.0);
    }
    22.0
}

/// One package box with its NUMA nodes; returns the y below it.
fn package(
    body: &mut String,
    topo: &Topology,
    pkg: &scalescope_topo::model::Domain,
    used: &[Used],
    y: f64,
) -> f64 {
    let mut nodes: Vec<_> = topo
        .numa_nodes
        .iter()
        .filter(|n| !n.cpus.is_empty() && n.cpus.is_subset(&pkg.cpus))
        .map(|n| (Some(n), n.cpus.clone()))
        .collect();
    if nodes.is_empty() {
        nodes.push((None, pkg.cpus.clone()));
    }
    let top = y;
    let mut ny = y + 26.0;
    let mut inner = String::new();
    for (node, cpus) in &nodes {
        ny = node_box(&mut inner, topo, *node, cpus, used, ny) + 8.0;
    }
    let w = PER_ROW as f64 * (CW + GAP) + 36.0;
    let _ = write!(
        body,
        r##"<rect x="10" y="{top:.1}" width="{w:.1}" height="{:.1}" fill="#fafafa" stroke="#333" rx="6"/><text x="18" y="{:.1}" font-weight="bold">Package {} — CPUs {}</text>{inner}"##,
        ny - top,
        top + 18.0,
        pkg.id,
        escape(&pkg.cpus.to_string())
    );
    ny
}

/// One NUMA node (or the package, without nodes): its memory, its L3 caches and
/// its cores; returns the y below it.
fn node_box(
    out: &mut String,
    topo: &Topology,
    node: Option<&scalescope_topo::model::NumaNode>,
    cpus: &CpuSet,
    used: &[Used],
    y: f64,
) -> f64 {
    let cores: Vec<_> = topo
        .cores
        .iter()
        .filter(|c| c.cpus.is_subset(cpus))
        .collect();
    let rows = cores.len().div_ceil(PER_ROW).max(1);
    let height = 24.0 + rows as f64 * (CH + GAP);
    let l3: Vec<String> = topo
        .l3
        .iter()
        .filter(|c| c.cpus.intersects(cpus))
        .map(|c| {
            let size = c
                .size_bytes
                .map(human_bytes)
                .unwrap_or("size unknown".into());
            format!("L3 #{} {size}", c.id)
        })
        .collect();
    let title = match node {
        Some(n) => format!(
            "NUMA node {} · {}",
            n.id,
            n.memory_bytes
                .map(human_bytes)
                .unwrap_or("memory unknown".into())
        ),
        None => "no NUMA node known".into(),
    };
    let caches = if l3.is_empty() {
        "L3 unknown".to_string()
    } else {
        l3.join(", ")
    };
    let w = PER_ROW as f64 * (CW + GAP) + 16.0;
    let _ = write!(
        out,
        r##"<rect x="20" y="{y:.1}" width="{w:.1}" height="{height:.1}" fill="#eef3f8" stroke="#7a8fa6" rx="4"/><text x="28" y="{:.1}">{} · {}</text>"##,
        y + 16.0,
        escape(&title),
        escape(&caches)
    );
    for (i, c) in cores.iter().enumerate() {
        let (cx, cy) = (
            28.0 + (i % PER_ROW) as f64 * (CW + GAP),
            y + 22.0 + (i / PER_ROW) as f64 * (CH + GAP),
        );
        core_cell(out, topo, c, used, cx, cy);
    }
    y + height
}

/// A core: its PUs, greyed where unusable, and a bar per placement that used it.
fn core_cell(
    out: &mut String,
    topo: &Topology,
    c: &scalescope_topo::model::Core,
    used: &[Used],
    cx: f64,
    cy: f64,
) {
    let usable = c
        .cpus
        .iter()
        .any(|cpu| topo.pu(cpu).is_some_and(|p| p.allowed && p.online));
    let fill = if usable { "#ffffff" } else { "#bbbbbb" };
    let label: Vec<String> = c.cpus.iter().map(|x| x.to_string()).collect();
    let _ = write!(
        out,
        r##"<rect x="{cx:.1}" y="{cy:.1}" width="{CW}" height="{CH}" fill="{fill}" stroke="#667"><title>core {}: PUs {}</title></rect><text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
        c.id,
        escape(&c.cpus.to_string()),
        cx + CW / 2.0,
        cy + 15.0,
        escape(&label.join("+"))
    );
    let n = c.cpus.len().max(1) as f64;
    let bar_h = (18.0 / used.len().max(1) as f64).min(6.0);
    for (k, u) in used.iter().enumerate() {
        let share = c.cpus.iter().filter(|cpu| u.cpus.contains(*cpu)).count() as f64 / n;
        if share > 0.0 {
            let _ = write!(
                out,
                r#"<rect class="used s{k}" x="{:.1}" y="{:.1}" width="{:.1}" height="{bar_h:.1}" fill="{}"><title>{}: {} of this core's PUs</title></rect>"#,
                cx + 3.0,
                cy + 20.0 + k as f64 * (bar_h + 1.0),
                (CW - 6.0) * share,
                escape(&u.color),
                escape(&u.name),
                c.cpus.iter().filter(|cpu| u.cpus.contains(*cpu)).count()
            );
        }
    }
}
