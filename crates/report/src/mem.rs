//! Report sections for the memory measurements (`mem matrix|latency|c2c --json`
//! documents): bandwidth, latency and SLIT matrices and core-to-core latency as
//! heatmaps, the latency ladder as a curve with the cache sizes shaded.

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

fn f64s(v: &Value) -> Vec<Vec<Option<f64>>> {
    v.as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    r.as_array()
                        .map(|c| c.iter().map(Value::as_f64).collect())
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default()
}

fn labels(v: &Value, prefix: &str) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(|x| format!("{prefix}{}", x)).collect())
        .unwrap_or_default()
}

/// The section for one memory document, or an error naming what is missing.
///
/// # Errors
/// A sentence when the document is not a known kind or lacks a field.
pub fn section(label: &str, doc: &Value, prefix: &str) -> Result<Section, String> {
    let kind = doc["kind"]
        .as_str()
        .ok_or("no `kind` field: not a scalescope document")?;
    let machine = doc["machine"].as_str().unwrap_or("").to_string();
    let heat = |file: &str,
                title: &str,
                rows: Vec<String>,
                cols: Vec<String>,
                values: Vec<Vec<Option<f64>>>,
                unit: &str| Chart {
        file: format!("{prefix}{file}"),
        title: title.to_string(),
        svg: Heatmap {
            title: title.to_string(),
            rows,
            cols,
            values,
            unit: unit.to_string(),
        }
        .to_svg(),
    };
    match kind {
        "scalescope.mem-matrix" => {
            let m = &doc["matrix"];
            let (rows, cols) = (
                labels(&m["cpu_nodes"], "cpu node "),
                labels(&m["memory_nodes"], "mem node "),
            );
            let mut charts = vec![
                heat(
                    "matrix-bandwidth.svg",
                    "Read bandwidth",
                    rows.clone(),
                    cols.clone(),
                    f64s(&m["bandwidth_gb_per_s"]),
                    "GB/s",
                ),
                heat(
                    "matrix-latency.svg",
                    "Load latency",
                    rows.clone(),
                    cols.clone(),
                    f64s(&m["latency_ns"]),
                    "ns",
                ),
            ];
            if m["slit"].as_array().is_some_and(|s| !s.is_empty()) {
                charts.push(heat(
                    "matrix-slit.svg",
                    "Firmware distances (SLIT)",
                    rows,
                    cols,
                    f64s(&m["slit"]),
                    "SLIT",
                ));
            }
            let mut notes = vec![machine];
            for key in ["bandwidth_hops", "latency_hops"] {
                let h = &doc[key];
                notes.push(format!(
                    "{}: {} distance levels, at most {} hop(s)",
                    key.replace('_', " "),
                    h["levels"].as_array().map_or(0, Vec::len),
                    h["max_hops"]
                ));
                notes.extend(h["noise"]["note"].as_str().map(String::from));
                notes.extend(
                    h["disagreements"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|d| d.as_str().map(String::from)),
                );
            }
            if let Some(n) = doc["note"].as_str() {
                notes.push(n.to_string());
            }
            Ok(Section {
                title: format!("NUMA matrices ({label})"),
                notes,
                charts,
            })
        }
        "scalescope.mem-c2c" => {
            let c = &doc["c2c"];
            let cpus = labels(&c["cpus"], "");
            let mut notes = vec![machine];
            for s in c["summary"].as_array().into_iter().flatten() {
                notes.push(format!(
                    "{}: {} pairs, mean {:.1} ns",
                    s[0].as_str().unwrap_or(""),
                    s[1],
                    s[2].as_f64().unwrap_or(f64::NAN)
                ));
            }
            Ok(Section {
                title: format!("Core-to-core latency ({label})"),
                notes,
                charts: vec![heat(
                    "c2c.svg",
                    "Core-to-core latency (one-way)",
                    cpus.clone(),
                    cpus,
                    f64s(&c["ns"]),
                    "ns",
                )],
            })
        }
        "scalescope.mem-latency" => {
            let rungs = doc["rungs"].as_array().ok_or("no `rungs`")?;
            let points = rungs
                .iter()
                .filter_map(|r| Some((r["bytes"].as_f64()?, r["ns"].as_f64()?, None)))
                .collect();
            let x_max = rungs
                .last()
                .and_then(|r| r["bytes"].as_f64())
                .unwrap_or(1.0);
            let bands = cache_bands(doc, x_max);
            let chart = LineChart {
                title: format!("Load latency from CPU {}", doc["cpu"]),
                x_label: "working set".into(),
                y_label: "ns per load".into(),
                series: vec![Series {
                    name: "latency".into(),
                    points,
                    color: PALETTE[0].into(),
                    dashed: false,
                }],
                bands,
                y_from_zero: true,
                log2_x: true,
                x_bytes: true,
                ..Default::default()
            };
            Ok(Section {
                title: format!("Latency ladder ({label})"),
                notes: vec![machine],
                charts: vec![Chart {
                    file: format!("{prefix}latency-ladder.svg"),
                    title: "Latency ladder".into(),
                    svg: chart.to_svg(),
                }],
            })
        }
        other => Err(format!("unknown document kind `{other}`")),
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
fn cache_bands(doc: &serde_json::Value, x_max: f64) -> Vec<Band> {
    doc["caches"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| {
            Some(Band {
                from: c["size_bytes"].as_f64()?,
                to: x_max,
                label: format!("past L{}", c["level"]),
                tooltip: format!(
                    "working sets larger than the L{} cache ({} bytes)",
                    c["level"], c["size_bytes"]
                ),
                ..Default::default()
            })
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
        "\nInferred from {what}: {} levels ({}), at most {} hop(s)\n",
        h.levels.len(),
        if h.noise.levels_from == "slit" {
            "one per SLIT value"
        } else {
            "measured, each beyond the spread of repeats"
        },
        h.max_hops
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
