//! The topology picture: packages as boxes, NUMA nodes inside them with their
//! memory, L3 caches with their sizes, cores as cells listing their PUs (offline or
//! forbidden ones greyed), and, for each placement, which cores its threads used at
//! one thread count (a bar per placement in the placement's colour, as wide as the
//! share of the core's PUs it used). Written through [`crate::markup`].

use scalescope_topo::{CpuSet, Topology};

use crate::machine::human_bytes;
use crate::markup::{el, Markup, D0, D1};

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
pub fn topology_picture(topo: &Topology, used: &[Used], threads: Option<usize>) -> Markup {
    let mut y = 40.0;
    let mut body = Markup::new();
    if !used.is_empty() {
        body.push(legend(used, threads, y));
        y += 22.0;
    }
    for pkg in &topo.packages {
        let (m, below) = package(topo, pkg, used, y);
        body.push(m);
        y = below + 12.0;
    }
    let w = PER_ROW as f64 * (CW + GAP) + 60.0;
    let h = y + 10.0;
    el("svg")
        .attr("xmlns", "http://www.w3.org/2000/svg")
        .attr("viewBox", format!("0 0 {w:.0} {h:.0}"))
        .attr("width", D0(w))
        .attr("height", D0(h))
        .attr("font-family", "sans-serif")
        .attr("font-size", 12)
        .attr("role", "img")
        .children([
            el("title").text("topology"),
            el("rect")
                .attr("width", "100%")
                .attr("height", "100%")
                .attr("fill", "#fff")
                .empty(),
            el("text")
                .attr("x", 10)
                .attr("y", 24)
                .attr("font-size", 15)
                .attr("font-weight", "bold")
                .text(&topo.summary()),
            body,
        ])
}

/// "CPUs used at N threads:" and one swatch per placement (22 px high).
fn legend(used: &[Used], threads: Option<usize>, y: f64) -> Markup {
    let at = threads
        .map(|t| format!("CPUs used at {t} threads:"))
        .unwrap_or_else(|| "CPUs used:".into());
    let mut out = Markup::from_iter([el("text").attr("x", 10).attr("y", D1(y + 4.0)).text(&at)]);
    let mut x = 190.0;
    for (i, u) in used.iter().enumerate() {
        out.push(
            el("g").attr("class", format!("s{i}")).children([
                el("rect")
                    .attr("x", D1(x))
                    .attr("y", D1(y - 5.0))
                    .attr("width", 14)
                    .attr("height", 10)
                    .attr("fill", &u.color)
                    .empty(),
                el("text")
                    .attr("x", D1(x + 18.0))
                    .attr("y", D1(y + 4.0))
                    .text(&format!("{} ({} CPUs)", u.name, u.cpus.len())),
            ]),
        );
        x += 40.0 + 8.0 * (u.name.len() as f64 + 8.0);
    }
    out
}

/// One package box with its NUMA nodes, and the y below it.
fn package(
    topo: &Topology,
    pkg: &scalescope_topo::model::Domain,
    used: &[Used],
    y: f64,
) -> (Markup, f64) {
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
    let mut inner = Markup::new();
    for (node, cpus) in &nodes {
        let (m, below) = node_box(topo, *node, cpus, used, ny);
        inner.push(m);
        ny = below + 8.0;
    }
    let w = PER_ROW as f64 * (CW + GAP) + 36.0;
    let m = Markup::from_iter([
        el("rect")
            .attr("x", 10)
            .attr("y", D1(top))
            .attr("width", D1(w))
            .attr("height", D1(ny - top))
            .attr("fill", "#fafafa")
            .attr("stroke", "#333")
            .attr("rx", 6)
            .empty(),
        el("text")
            .attr("x", 18)
            .attr("y", D1(top + 18.0))
            .attr("font-weight", "bold")
            .text(&format!("Package {} — CPUs {}", pkg.id, pkg.cpus)),
        inner,
    ]);
    (m, ny)
}

/// One NUMA node (or the package, without nodes): its memory, its L3 caches and
/// its cores, and the y below it.
fn node_box(
    topo: &Topology,
    node: Option<&scalescope_topo::model::NumaNode>,
    cpus: &CpuSet,
    used: &[Used],
    y: f64,
) -> (Markup, f64) {
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
    let mut out = Markup::from_iter([
        el("rect")
            .attr("x", 20)
            .attr("y", D1(y))
            .attr("width", D1(w))
            .attr("height", D1(height))
            .attr("fill", "#eef3f8")
            .attr("stroke", "#7a8fa6")
            .attr("rx", 4)
            .empty(),
        el("text")
            .attr("x", 28)
            .attr("y", D1(y + 16.0))
            .text(&format!("{title} · {caches}")),
    ]);
    for (i, c) in cores.iter().enumerate() {
        let (cx, cy) = (
            28.0 + (i % PER_ROW) as f64 * (CW + GAP),
            y + 22.0 + (i / PER_ROW) as f64 * (CH + GAP),
        );
        out.push(core_cell(topo, c, used, cx, cy));
    }
    (out, y + height)
}

/// A core: its PUs, greyed where unusable, and a bar per placement that used it.
fn core_cell(
    topo: &Topology,
    c: &scalescope_topo::model::Core,
    used: &[Used],
    cx: f64,
    cy: f64,
) -> Markup {
    let usable = c
        .cpus
        .iter()
        .any(|cpu| topo.pu(cpu).is_some_and(|p| p.allowed && p.online));
    let fill = if usable { "#ffffff" } else { "#bbbbbb" };
    let label: Vec<String> = c.cpus.iter().map(|x| x.to_string()).collect();
    let mut out = Markup::from_iter([
        el("rect")
            .attr("x", D1(cx))
            .attr("y", D1(cy))
            .attr("width", CW)
            .attr("height", CH)
            .attr("fill", fill)
            .attr("stroke", "#667")
            .child(el("title").text(&format!("core {}: PUs {}", c.id, c.cpus))),
        el("text")
            .attr("x", D1(cx + CW / 2.0))
            .attr("y", D1(cy + 15.0))
            .attr("text-anchor", "middle")
            .text(&label.join("+")),
    ]);
    let n = c.cpus.len().max(1) as f64;
    let bar_h = (18.0 / used.len().max(1) as f64).min(6.0);
    for (k, u) in used.iter().enumerate() {
        let mine = c.cpus.iter().filter(|cpu| u.cpus.contains(*cpu)).count();
        let share = mine as f64 / n;
        if share > 0.0 {
            out.push(
                el("rect")
                    .attr("class", format!("used s{k}"))
                    .attr("x", D1(cx + 3.0))
                    .attr("y", D1(cy + 20.0 + k as f64 * (bar_h + 1.0)))
                    .attr("width", D1((CW - 6.0) * share))
                    .attr("height", D1(bar_h))
                    .attr("fill", &u.color)
                    .child(el("title").children([
                        Markup::text(&format!("{}: {mine} ", u.name)),
                        Markup::trusted("of this core's PUs"),
                    ])),
            );
        }
    }
    out
}
