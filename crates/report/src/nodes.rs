//! A launched sweep's evidence from every node, side by side: one row per point,
//! one cell per node it ran on (its first node, its second, ...), each with the
//! medians over the point's measured runs of what that node's sampler saw: how
//! busy the node's CPUs were, the CPU time of the run's processes there and how
//! many there were, their peak resident memory, the pages the kernel allocated
//! off their preferred NUMA node and the memory bandwidth, or why the node's
//! evidence is missing.

use crate::markup::{el, Markup};
use std::collections::BTreeSet;

use scalescope_model::evidence::{Measured, RunEvidence};
use scalescope_model::plan::Point;
use scalescope_model::store::RunRecord;

/// One node of one point, over the point's measured runs.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeCell {
    /// Host names seen in this position (one, unless jobs ran on different nodes).
    pub hosts: BTreeSet<String>,
    pub runs: usize,
    /// Busy share of the node's CPUs, median.
    pub busy: Option<f64>,
    /// CPU seconds of the run's processes on the node, median.
    pub run_cpu_secs: Option<f64>,
    /// The most processes of the run seen on the node.
    pub processes: usize,
    pub peak_bytes: Option<f64>,
    pub other_node_pages: Option<f64>,
    pub bandwidth_bytes_per_sec: Option<f64>,
    /// Why evidence is missing, where it is (each reason once).
    pub unavailable: BTreeSet<String>,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| v[v.len() / 2])
}

fn cell(hosts: BTreeSet<String>, evidence: &[&Measured<RunEvidence>]) -> NodeCell {
    let measured: Vec<&RunEvidence> = evidence.iter().filter_map(|e| e.value()).collect();
    let of = |f: &dyn Fn(&RunEvidence) -> Option<f64>| {
        median(measured.iter().filter_map(|e| f(e)).collect())
    };
    NodeCell {
        hosts,
        runs: measured.len(),
        busy: of(&|e| e.cpu.value().map(|c| c.busy_mean)),
        run_cpu_secs: of(&|e| Some(e.threads.iter().map(|t| t.user_secs + t.sys_secs).sum())),
        processes: measured
            .iter()
            .map(|e| {
                e.threads
                    .iter()
                    .map(|t| t.pid)
                    .collect::<BTreeSet<_>>()
                    .len()
            })
            .max()
            .unwrap_or(0),
        peak_bytes: of(&|e| {
            e.peak_bytes_per_node()
                .map(|m| m.values().sum::<u64>() as f64)
        }),
        other_node_pages: of(&|e| e.other_node_pages().map(|p| p as f64)),
        bandwidth_bytes_per_sec: of(&|e| {
            e.bandwidth
                .value()
                .map(|b| b.domains.iter().map(|d| d.mean_bytes_per_sec).sum())
        }),
        unavailable: evidence
            .iter()
            .filter_map(|e| e.why().map(str::to_string))
            .collect(),
    }
}

/// Every point with node evidence, in plan order, with one cell per node
/// position; empty for sweeps without it.
pub fn node_cells(points: &[Point], records: &[RunRecord]) -> Vec<(Point, Vec<NodeCell>)> {
    points
        .iter()
        .filter_map(|p| {
            let runs: Vec<&RunRecord> = records
                .iter()
                .filter(|r| !r.warmup && &r.point == p && !r.node_evidence.is_empty())
                .collect();
            let width = runs.iter().map(|r| r.node_evidence.len()).max()?;
            let cells = (0..width)
                .map(|i| {
                    let at: Vec<_> = runs.iter().filter_map(|r| r.node_evidence.get(i)).collect();
                    let hosts = at.iter().map(|n| n.host.clone()).collect();
                    cell(hosts, &at.iter().map(|n| &n.evidence).collect::<Vec<_>>())
                })
                .collect();
            Some((p.clone(), cells))
        })
        .collect()
}

/// One node's cell as text.
pub fn cell_text(c: &NodeCell) -> String {
    let hosts: Vec<&str> = c.hosts.iter().map(String::as_str).collect();
    let mut parts = vec![hosts.join("/")];
    if c.runs > 0 {
        let pct = |v: f64| format!("{:.0}%", v * 100.0);
        parts.extend(c.busy.map(|b| format!("CPUs {} busy", pct(b))));
        parts.extend(
            c.run_cpu_secs
                .map(|s| format!("run {s:.2} CPU s in {} processes", c.processes)),
        );
        parts.extend(
            c.peak_bytes
                .map(|b| format!("peak {:.1} MiB", b / 1048576.0)),
        );
        parts.extend(c.other_node_pages.map(|p| format!("{p:.0} pages off-node")));
        parts.extend(
            c.bandwidth_bytes_per_sec
                .map(|b| format!("{:.2} GB/s", b / 1e9)),
        );
    }
    for why in &c.unavailable {
        parts.push(format!("unavailable here: {why}"));
    }
    parts.join(" · ")
}

/// The section of the HTML report (empty without node evidence).
pub fn html(points: &[Point], records: &[RunRecord]) -> Markup {
    let rows = node_cells(points, records);
    let Some(width) = rows.iter().map(|(_, c)| c.len()).max() else {
        return Markup::new();
    };
    let head = el("tr").children(
        std::iter::once(el("th").attr("class", "l").text("point"))
            .chain((1..=width).map(|i| el("th").attr("class", "l").text(&format!("node {i}")))),
    );
    let body = rows.iter().map(|(p, cells)| {
        el("tr").children(
            std::iter::once(el("td").attr("class", "l").text(&p.to_string())).chain(
                cells
                    .iter()
                    .map(|c| el("td").attr("class", "l").text(&cell_text(c))),
            ),
        )
    });
    Markup::from_iter([
        el("h3").text("Evidence from every node"),
        el("p").text(
            "Medians over each point's runs of what the sampler started on each of its nodes saw.",
        ),
        el("table").children(std::iter::once(head).chain(body)),
    ])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use scalescope_model::evidence::NodeEvidence;

    fn run(nodes: usize, busy: &[f64]) -> RunRecord {
        let mut r: RunRecord = serde_json::from_value(serde_json::json!({
            "threads": 2 * nodes, "nodes": nodes, "placement": "compact", "mem": "first-touch",
            "rep": 0, "warmup": false, "thread_cpus": [], "started_unix_secs": 0.0,
            "wall_secs": 1.0, "status": "ok", "metrics": {},
        }))
        .unwrap();
        r.node_evidence = busy
            .iter()
            .enumerate()
            .map(|(i, &b)| NodeEvidence {
                host: format!("node{}", i + 1),
                evidence: if b < 0.0 {
                    Measured::Unavailable("no evidence came back".into())
                } else {
                    Measured::Measured(
                        serde_json::from_value(serde_json::json!({
                            "interval_ms": 100.0, "samples": 3, "series_file": null,
                            "sampler": {"cpu_secs": 0.0, "fraction_of_wall": 0.0},
                            "cpu": {"state": "measured", "value": {"cpus": [0, 1], "busy_mean": b,
                                "busy_per_cpu": {}, "run_share_mean": null}},
                            "threads": [{"pid": 7, "tid": 7, "comm": "rank", "cpus_seen": [0],
                                "migrations": 0, "user_secs": 0.5, "sys_secs": 0.25,
                                "first_seen_secs": 0.0, "last_seen_secs": 1.0, "busy": 0.75,
                                "shared_cpu_samples": 0, "samples": 3}],
                            "pages": {"state": "unavailable", "value": "x"},
                            "numastat": {"state": "unavailable", "value": "x"},
                            "bandwidth": {"state": "unavailable", "value": "x"}, "pmu": []
                        }))
                        .unwrap(),
                    )
                },
            })
            .collect();
        r
    }

    #[test]
    fn every_node_of_a_point_sits_beside_the_others() {
        let runs = [run(2, &[0.5, 0.9]), run(2, &[0.7, -1.0]), run(1, &[0.25])];
        let points: Vec<Point> = [&runs[2], &runs[0]]
            .iter()
            .map(|r| r.point.clone())
            .collect();
        let rows = node_cells(&points, &runs);
        assert_eq!(rows.len(), 2);
        let two = &rows[1].1;
        assert_eq!(two.len(), 2);
        // Node 1: the median of 0.5 and 0.7 (the upper one of two).
        assert_eq!(two[0].busy, Some(0.7));
        assert_eq!(two[0].run_cpu_secs, Some(0.75));
        // Node 2: one run measured, one that says why not.
        assert_eq!((two[1].runs, two[1].busy), (1, Some(0.9)));
        let text = cell_text(&two[1]);
        assert!(
            text.starts_with("node2 · CPUs 90% busy · run 0.75 CPU s in 1 processes"),
            "{text}"
        );
        assert!(
            text.contains("unavailable here: no evidence came back"),
            "{text}"
        );
        let page = html(&points, &runs).into_string();
        assert!(
            page.contains("<th class=\"l\">node 2</th>") && page.contains("4 ranks on 2 nodes")
        );
        assert!(html(&points, &[]).is_empty());
    }
}
