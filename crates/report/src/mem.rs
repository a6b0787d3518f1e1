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
