//! The memory measurements' text, and the report sections drawn from their documents
//! (`mem matrix|latency|c2c --json`, typed in `scalescope_model::mem`):
//! bandwidth, latency and SLIT matrices
//! and core-to-core latency as heatmaps, the latency ladder as a curve with the cache
//! sizes shaded.

use std::collections::BTreeMap;

use scalescope_analysis::hops::HopInference;
use scalescope_model::mem::{
    self, C2cDocument, CacheSize, LatencyDocument, MatrixDocument, MemDocError, StreamKernel,
};
use serde_json::Value;

use crate::svg::{Band, Heatmap, LineChart, Series, PALETTE};
use crate::Chart;

/// A titled group of charts with notes, drawn after the sweeps.
#[derive(Debug, Clone)]
pub struct Section {
    pub title: String,
    pub notes: Vec<String>,
    pub charts: Vec<Chart>,
}

fn labels<T: std::fmt::Display>(v: &[T], prefix: &str) -> Vec<String> {
    v.iter().map(|x| format!("{prefix}{x}")).collect()
}

/// Cells as the heatmap takes them.
fn cells<T: Copy + Into<f64>>(m: &[Vec<T>]) -> Vec<Vec<Option<f64>>> {
    m.iter()
        .map(|r| r.iter().map(|&c| Some(c.into())).collect())
        .collect()
}

/// One heatmap chart, its file named with `prefix`.
fn heat(
    prefix: &str,
    file: &str,
    title: &str,
    axes: (Vec<String>, Vec<String>),
    values: Vec<Vec<Option<f64>>>,
    unit: &str,
) -> Chart {
    Chart {
        file: format!("{prefix}{file}"),
        title: title.to_string(),
        svg: Heatmap {
            title: title.to_string(),
            rows: axes.0,
            cols: axes.1,
            values,
            unit: unit.to_string(),
        }
        .to_svg(),
    }
}

/// The section for one memory document, or an error naming what is missing.
///
/// # Errors
/// A sentence when the document is not a known kind or a field has the wrong shape.
pub fn section(label: &str, doc: &Value, prefix: &str) -> Result<Section, String> {
    let kind = mem::kind_of(doc).ok_or_else(|| MemDocError::NoKind.to_string())?;
    let e = |e: MemDocError| e.to_string();
    match kind.as_str() {
        mem::MATRIX_KIND => Ok(matrix_section(
            label,
            &mem::read(doc, mem::MATRIX_KIND).map_err(e)?,
            prefix,
        )),
        mem::C2C_KIND => Ok(c2c_section(
            label,
            &mem::read(doc, mem::C2C_KIND).map_err(e)?,
            prefix,
        )),
        mem::LATENCY_KIND => Ok(latency_section(
            label,
            &mem::read(doc, mem::LATENCY_KIND).map_err(e)?,
            prefix,
        )),
        other => Err(format!("unknown document kind `{other}`")),
    }
}

/// Bandwidth, latency and SLIT heatmaps of a `mem matrix` document, with its hop notes.
fn matrix_section(label: &str, doc: &MatrixDocument<HopInference>, prefix: &str) -> Section {
    let m = &doc.matrix;
    let axes = (
        labels(&m.cpu_nodes, "cpu node "),
        labels(&m.memory_nodes, "mem node "),
    );
    let mut charts = vec![
        heat(
            prefix,
            "matrix-bandwidth.svg",
            "Read bandwidth",
            axes.clone(),
            cells(&m.bandwidth_gb_per_s),
            "GB/s",
        ),
        heat(
            prefix,
            "matrix-latency.svg",
            "Load latency",
            axes.clone(),
            cells(&m.latency_ns),
            "ns",
        ),
    ];
    if !m.slit.is_empty() {
        charts.push(heat(
            prefix,
            "matrix-slit.svg",
            "Firmware distances (SLIT)",
            axes,
            cells(&m.slit),
            "SLIT",
        ));
    }
    let mut notes = vec![doc.machine.clone()];
    for (key, h) in [
        ("bandwidth hops", &doc.bandwidth_hops),
        ("latency hops", &doc.latency_hops),
    ] {
        notes.extend(h.iter().flat_map(|h| hop_notes(key, h, &m.cpu_nodes)));
    }
    notes.extend(doc.note.clone());
    Section {
        title: format!("NUMA matrices ({label})"),
        notes,
        charts,
    }
}

/// The notes of one hop inference: its levels and hops, its links and groups, its
/// noise note and its disagreements (`ids`: the rows' NUMA nodes).
fn hop_notes(what: &str, h: &HopInference, ids: &[u32]) -> Vec<String> {
    let ids = Some(ids);
    let mut notes = vec![format!("{what}: {}", h.headline())];
    notes.extend(
        h.structure_lines(ids)
            .into_iter()
            .map(|l| format!("{what}: {l}")),
    );
    notes.extend(h.noise.note.clone());
    notes.extend(h.disagreements.iter().cloned());
    notes
}

/// The core-to-core heatmap of a `mem c2c` document, with the per-relationship means.
fn c2c_section(label: &str, doc: &C2cDocument, prefix: &str) -> Section {
    let c = &doc.c2c;
    let cpus = labels(&c.cpus, "");
    let mut notes = vec![doc.machine.clone()];
    for (relation, pairs, mean, _, _) in &c.summary {
        notes.push(format!("{relation}: {pairs} pairs, mean {mean:.1} ns"));
    }
    Section {
        title: format!("Core-to-core latency ({label})"),
        notes,
        charts: vec![heat(
            prefix,
            "c2c.svg",
            "Core-to-core latency (one-way)",
            (cpus.clone(), cpus),
            c.ns.clone(),
            "ns",
        )],
    }
}

/// The latency ladder of a `mem latency` document, with the cache sizes shaded.
fn latency_section(label: &str, doc: &LatencyDocument, prefix: &str) -> Section {
    let points = doc
        .rungs
        .iter()
        .map(|r| (r.bytes as f64, r.ns, None))
        .collect();
    let x_max = doc.rungs.last().map_or(1.0, |r| r.bytes as f64);
    let chart = LineChart {
        title: format!("Load latency from CPU {}", doc.cpu),
        x_label: "working set".into(),
        y_label: "ns per load".into(),
        series: vec![Series {
            name: "latency".into(),
            points,
            color: PALETTE[0].into(),
            dashed: false,
        }],
        bands: cache_bands(&doc.caches, x_max),
        y_from_zero: true,
        log2_x: true,
        x_bytes: true,
        ..Default::default()
    };
    Section {
        title: format!("Latency ladder ({label})"),
        notes: vec![doc.machine.clone()],
        charts: vec![Chart {
            file: format!("{prefix}latency-ladder.svg"),
            title: "Latency ladder".into(),
            svg: chart.to_svg(),
        }],
    }
}

/// A node-by-node matrix as a text table: `title`, then one row per CPU node and one
/// column per memory node, each cell as `cell(row, column)` renders it.
pub fn text_table(
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

/// One region per cache level of a latency document: working sets past it.
fn cache_bands(caches: &[CacheSize], x_max: f64) -> Vec<Band> {
    caches
        .iter()
        .map(|c| Band {
            from: c.size_bytes as f64,
            to: x_max,
            label: format!("past L{}", c.level),
            tooltip: format!(
                "working sets larger than the L{} cache ({} bytes)",
                c.level, c.size_bytes
            ),
            ..Default::default()
        })
        .collect()
}

/// A `mem matrix` measurement as the tables need it (rows: CPU nodes; columns:
/// memory nodes).
pub struct MatrixTables<'a> {
    pub cpu_nodes: &'a [u32],
    pub memory_nodes: &'a [u32],
    pub bandwidth_gb_per_s: &'a [Vec<f64>],
    pub latency_ns: &'a [Vec<f64>],
    /// Empty where the firmware gave no distances.
    pub slit: &'a [Vec<u32>],
    /// Share of each cell's pages found on its memory node; `None` unverified.
    pub placement_verified: &'a [Vec<Option<f64>>],
    /// The read loop of each bandwidth cell (empty in older documents).
    pub read_loops: &'a [Vec<scalescope_model::mem::ReadLoopChoice>],
}

/// The bandwidth, latency and SLIT tables, and a line for every cell whose pages
/// landed elsewhere or could not be checked.
pub fn matrices_text(m: &MatrixTables) -> String {
    let mut out = text_table(
        "Read bandwidth, GB/s (rows: threads on node; columns: memory on node)",
        m.cpu_nodes,
        m.memory_nodes,
        |i, j| format!("{:.2}", m.bandwidth_gb_per_s[i][j]),
    );
    out += &text_table(
        "\nLoad latency, ns (one thread, dependent loads)",
        m.cpu_nodes,
        m.memory_nodes,
        |i, j| format!("{:.1}", m.latency_ns[i][j]),
    );
    if m.read_loops.iter().flatten().any(|l| l.trial_pairs > 0) {
        out += &text_table(
            "\nRead loop per bandwidth cell (the faster in a trial of interleaved one-pass blocks; median GB/s wide / paced)",
            m.cpu_nodes,
            m.memory_nodes,
            |i, j| {
                let l = &m.read_loops[i][j];
                let gbs = |k: &str| l.trial_gb_per_s.get(k).map_or("?".into(), |g| format!("{g:.1}"));
                format!("{} ({}/{})", l.chosen, gbs("wide"), gbs("paced"))
            },
        );
    }
    if !m.slit.is_empty() {
        out += &text_table(
            "\nFirmware distances (SLIT)",
            m.cpu_nodes,
            m.memory_nodes,
            |i, j| m.slit[i][j].to_string(),
        );
    }
    for (i, row) in m.placement_verified.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            match v {
                Some(f) if *f < 0.99 => {
                    out += &format!(
                        "warning: only {:.0}% of the pages for node{} -> node{} landed on node{}\n",
                        f * 100.0,
                        m.cpu_nodes[i],
                        m.memory_nodes[j],
                        m.memory_nodes[j]
                    )
                }
                None => out += "note: page placement unverified (no /proc/self/numa_maps here)\n",
                _ => {}
            }
        }
    }
    out
}

/// What one matrix says about the distance levels and node groups.
pub fn hops_text(
    what: &str,
    h: &scalescope_analysis::hops::HopInference,
    cpu_nodes: &[u32],
) -> String {
    let mut out = format!(
        "\nInferred from {what}: {} ({})\n",
        h.headline(),
        if h.noise.levels_from == "slit" {
            "levels: one per SLIT value"
        } else {
            "levels measured, each beyond the spread of repeats"
        },
    );
    if let Some(n) = &h.noise.note {
        out += &format!("  {n}\n");
    }
    for (k, l) in h.levels.iter().enumerate() {
        out += &format!(
            "  level {k}: {:.2}..{:.2} ({} cells)\n",
            l.min, l.max, l.cells
        );
    }
    let groups: Vec<String> = h
        .groups
        .iter()
        .map(|g| {
            let nodes: Vec<String> = g.iter().map(|i| format!("node{}", cpu_nodes[*i])).collect();
            format!("{{{}}}", nodes.join(","))
        })
        .collect();
    out += &format!("  groups: {}\n", groups.join(" "));
    if h.links.is_some() {
        for l in h.structure_lines(Some(cpu_nodes)) {
            out += &format!("  {l}\n");
        }
    }
    for d in &h.disagreements {
        out += &format!("  ! {d}\n");
    }
    out
}

/// The core-to-core latency table, one-way ns per pair (`None` on the diagonal),
/// each CPU labelled with its core and NUMA node so SMT siblings (same core) and
/// remote pairs (different node) can be read off it.
pub fn c2c_table(
    topo: &scalescope_topo::Topology,
    cpus: &[u32],
    ns: &[Vec<Option<f64>>],
) -> String {
    let label = |c: u32| {
        let pu = topo.pu(c);
        let or_unknown = |x: Option<usize>| x.map_or("?".to_string(), |x| x.to_string());
        format!(
            "{c} c{} n{}",
            or_unknown(pu.and_then(|p| p.core)),
            or_unknown(pu.and_then(|p| p.numa_node.map(|n| n as usize)))
        )
    };
    let mut out = format!("{:>12}", "cpu core node");
    for c in cpus {
        out += &format!(" {:>10}", label(*c));
    }
    out.push('\n');
    for (i, a) in cpus.iter().enumerate() {
        out += &format!("{:>12}", label(*a));
        for v in &ns[i] {
            out += &format!(
                " {:>10}",
                v.map_or_else(|| "-".into(), |v| format!("{v:.1}"))
            );
        }
        out.push('\n');
    }
    out
}

pub use scalescope_model::mem::{ONE_NODE_NOTE, SCHEMA_VERSION};

/// The latency ladder as text: one row per working set (bytes, ns per load), each cache
/// level marked at the first working set past it. `caches` are (level, size in bytes).
pub fn ladder_text(cpu: u32, rungs: &[(u64, f64)], caches: &[(u8, u64)]) -> String {
    let mut out = format!(
        "Load latency from CPU {cpu} (dependent loads over a random cycle of cache lines)\n{:>12} {:>10}\n",
        "working set", "ns/load"
    );
    let mut marked = Vec::new();
    for &(bytes, ns) in rungs {
        let mut mark = String::new();
        for (l, s) in caches {
            if bytes > *s && !marked.contains(l) {
                marked.push(*l);
                mark += &format!("  <- past L{l} ({})", crate::machine::human_bytes(*s));
            }
        }
        out += &format!(
            "{:>12} {ns:>10.2}{mark}\n",
            crate::machine::human_bytes(bytes)
        );
    }
    out
}

/// The STREAM kernels of a `mem stream` run as a table (GB/s, best, average and
/// worst seconds per kernel, in `names` order; NaN for a kernel it lacks), and the
/// sustained block's GB/s and sweeps where the kernel ran one (`-` otherwise), then
/// the read loop the run kept where the document says.
pub fn stream_table(kernels: &BTreeMap<String, StreamKernel>, names: &[&str]) -> String {
    let mut out = format!(
        "{:<8} {:>12} {:>12} {:>12} {:>12} {:>15}\n",
        "kernel", "GB/s", "best s", "avg s", "max s", "sustained GB/s"
    );
    for name in names {
        let k = kernels.get(*name);
        let f = |v: fn(&StreamKernel) -> f64| k.map_or(f64::NAN, v);
        let sustained = k.and_then(|k| k.sustained).map_or("-".into(), |s| {
            format!("{:.2} ({} sweeps)", s.gb_per_s, s.sweeps)
        });
        out += &format!(
            "{name:<8} {:>12.2} {:>12.6} {:>12.6} {:>12.6} {sustained:>15}\n",
            f(|k| k.gb_per_s),
            f(|k| k.best_secs),
            f(|k| k.avg_secs),
            f(|k| k.max_secs)
        );
    }
    if let Some(l) = kernels.get("read").and_then(|k| k.read_loop.as_ref()) {
        out += &read_loop_line(l);
    }
    out
}

/// Which loop the sustained read ran through and, where a trial chose it, what
/// each loop read.
fn read_loop_line(l: &scalescope_model::mem::ReadLoopChoice) -> String {
    if l.trial_gb_per_s.is_empty() {
        return format!(
            "sustained read loop: {} (the only one this CPU runs)\n",
            l.chosen
        );
    }
    let trial: Vec<String> = l
        .trial_gb_per_s
        .iter()
        .map(|(name, gbs)| format!("{name} {gbs:.2}"))
        .collect();
    format!(
        "sustained read loop: {}, the faster in a trial of {} interleaved blocks of {} sweeps each (median GB/s: {}; the iterations read through the wide loop)\n",
        l.chosen,
        l.trial_pairs,
        l.trial_sweeps,
        trial.join(", ")
    )
}

/// A core-to-core measurement as the text output needs it.
pub struct C2cText<'a> {
    pub cpus: &'a [u32],
    pub ns: &'a [Vec<Option<f64>>],
    pub round_trips: usize,
    pub samples: usize,
    pub line_node: Option<u32>,
    /// Per relationship: its label, pairs, mean, min and max one-way ns.
    pub summary: Vec<(&'static str, usize, f64, f64, f64)>,
}

/// The core-to-core text output: a header line, the matrix, the per-relationship means.
pub fn c2c_text(topo: &scalescope_topo::Topology, m: &C2cText) -> String {
    let mut out = format!(
        "Core-to-core latency, ns one-way (CAS ping-pong, {} round trips x {} samples{})\n",
        m.round_trips,
        m.samples,
        m.line_node
            .map(|n| format!(", line on node {n}"))
            .unwrap_or_default()
    );
    out += &c2c_table(topo, m.cpus, m.ns);
    out += "\nBy relationship:\n";
    for (rel, n, mean, min, max) in &m.summary {
        out +=
            &format!("  {rel:<26} {n:>5} pairs  mean {mean:.1} ns  (min {min:.1}, max {max:.1})\n");
    }
    out
}

/// `analyze matrix.json` as text: per matrix its levels, the noise and disagreement
/// notes, and the one-hop link graph where one was found.
pub fn hop_summary_text(
    bandwidth: &scalescope_analysis::hops::HopInference,
    latency: &scalescope_analysis::hops::HopInference,
) -> String {
    let mut out = String::new();
    for (what, h) in [("bandwidth", bandwidth), ("latency", latency)] {
        out += &format!(
            "{what}: {} (levels from the {})\n",
            h.headline(),
            h.noise.levels_from,
        );
        for n in h.noise.note.iter().chain(&h.disagreements) {
            out += &format!("  {n}\n");
        }
        for l in h.structure_lines(None) {
            out += &format!("  {l}\n");
        }
    }
    out
}
