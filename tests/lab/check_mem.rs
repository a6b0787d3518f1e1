//! Memory: where the pages of each run landed, judged from the kernel's numastat
//! counters around the command (pages each node served), for every memory policy and
//! node; TPC-H's numa layout; `mem matrix`'s cells and its hop inference.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::console::{kernel_nodes, Console};
use crate::report::Check;
use crate::shapes::Shape;

/// Bytes per STREAM array in the guest script (`LAB_STREAM_SIZE`, 16 MiB): large
/// enough that the rest of the process stays a small share of a run's pages.
const STREAM_ARRAY_BYTES: i64 = 16 << 20;
/// Pages of one STREAM run: three arrays of 4 KiB pages (THP is off in the guest).
pub const STREAM_PAGES: i64 = 3 * STREAM_ARRAY_BYTES / 4096;
/// A node that should hold the run must have served at least this share of its pages;
/// one that should not, less than `STRAY`. The rest of the process (binary, heap,
/// stacks, sysfs reads) is up to about a thousand pages wherever it runs (the test
/// build's binary, 24 MB stripped; 700 pages with a 12 MB release binary).
const HOLDS: f64 = 0.9;
const STRAY: f64 = 0.15;
/// The same through a sweep: its parent process, on its own node, samples the run and
/// then analyses it and writes its report inside the same measured command (up to
/// 981 pages, 16% of a run, seen on an emulated 2-node machine).
const STRAY_SWEEP: f64 = 0.3;

fn pages_text(p: &BTreeMap<u32, i64>) -> String {
    p.iter()
        .map(|(n, v)| format!("node{n}:{v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Pages of `expected` pages landed on `target` nodes, evenly when several.
fn landed(
    pages: &BTreeMap<u32, i64>,
    target: &BTreeSet<u32>,
    expected: i64,
    stray: f64,
) -> Result<String, String> {
    let share = expected as f64 / target.len() as f64;
    for (n, v) in pages {
        let v = *v as f64;
        let ok = if target.contains(n) {
            v >= HOLDS * share
        } else {
            v < stray * expected as f64
        };
        if !ok {
            return Err(format!(
                "pages served {}; expected {expected} pages on {target:?}",
                pages_text(pages)
            ));
        }
    }
    Ok(format!(
        "pages served {} (run: {expected})",
        pages_text(pages)
    ))
}

/// Nodes with memory that the guest's memory policies may use.
fn memory_nodes(console: &Console) -> Result<BTreeSet<u32>, String> {
    Ok(kernel_nodes(console)?
        .iter()
        .filter(|n| n.mem_kb > 0)
        .map(|n| n.node)
        .collect())
}

/// Node `n` has CPUs the guest script may run on (first-touch from one is expected).
fn has_allowed_cpus(console: &Console, n: u32) -> bool {
    let allowed = console
        .get("self")
        .ok()
        .and_then(|s| {
            s.text
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(crate::console::cpulist)
        })
        .unwrap_or_default();
    kernel_nodes(console)
        .unwrap_or_default()
        .iter()
        .any(|k| k.node == n && k.cpus.iter().any(|c| allowed.contains(c)))
}

fn policy_run(console: &Console, name: &str, target: &BTreeSet<u32>) -> Result<String, String> {
    let mut stray = STRAY;
    if name.starts_with("sweep-mem") {
        stray = STRAY_SWEEP;
        let lines = console.json_lines(&format!("{name}.results"))?;
        let run = lines
            .into_iter()
            .find(|l| l["record"] == "run")
            .ok_or("the sweep recorded no run")?;
        if run["status"] != "ok" {
            return Err(format!("the run ended {}: {}", run["status"], run["error"]));
        }
    } else {
        let doc = console.json(name)?;
        if doc["verified"] != true {
            return Err(format!("STREAM not verified: {}", doc["verification"]));
        }
    }
    landed(&console.deltas(name)?.pages, target, STREAM_PAGES, stray)
}

/// Every memory policy x node combination the guest ran.
pub fn policies(shape: &Shape, console: &Console) -> Vec<Check> {
    let nodes = match memory_nodes(console) {
        Ok(n) => n,
        Err(e) => return vec![Check::new("kernel nodes", Err(e))],
    };
    let mut out = Vec::new();
    for n in &nodes {
        let one = BTreeSet::from([*n]);
        let listed = shape.policy_nodes.map(crate::console::cpulist);
        if listed.is_some_and(|l| !l.contains(n)) {
            continue; // the shape runs the policies on other nodes only
        }
        for p in ["bind", "preferred"] {
            let name = format!("mem.{p}:{n}");
            out.push(Check::new(
                format!("mem stream --mem {p}:{n}: pages on node {n}"),
                policy_run(console, &name, &one),
            ));
        }
        let ft = format!("mem.first-touch:{n}");
        if has_allowed_cpus(console, *n) {
            out.push(Check::new(
                format!("mem stream first-touch from a node-{n} CPU: pages on node {n}"),
                policy_run(console, &ft, &one),
            ));
        }
    }
    out.push(Check::new(
        format!("mem stream --mem interleave: pages spread over {nodes:?}"),
        policy_run(console, "mem.interleave", &nodes),
    ));
    if let Some(last) = nodes.iter().next_back() {
        let name = format!("sweep-mem.bind:{last}");
        out.push(Check::new(
            format!("sweep --mem bind:{last} (set before exec): pages on node {last}"),
            policy_run(console, &name, &BTreeSet::from([*last])),
        ));
    }
    out
}

/// TPC-H's numa layout: partition i's pages (the kernel's answer through
/// `move_pages`, in the command's `partition_pages`) are on the node of worker i's CPU
/// (the kernel's node of that CPU in sysfs).
pub fn tpch(console: &Console) -> Result<String, String> {
    let doc = console.json("tpch.numa")?;
    if doc["verified"] != true {
        return Err(format!("Q6 not verified: {}", doc["verification"]));
    }
    let plan = console.json("place.tpch")?;
    let kernel = crate::console::kernel_cpus(console)?;
    let parts = doc["partition_pages"]
        .as_array()
        .ok_or(format!("partition_pages: {}", doc["partition_pages"]))?;
    let threads = plan["threads"].as_array().cloned().unwrap_or_default();
    if parts.len() != threads.len() {
        return Err(format!(
            "{} partitions for {} threads",
            parts.len(),
            threads.len()
        ));
    }
    let mut seen = Vec::new();
    for (t, part) in threads.iter().zip(parts) {
        let cpu = t["cpus"][0]
            .as_u64()
            .ok_or("place.tpch: a thread without CPUs")? as u32;
        let node = kernel
            .iter()
            .find(|k| k.cpu == cpu)
            .and_then(|k| k.node)
            .ok_or("CPU without node")?;
        let pages = part["pages"].as_object().ok_or("partition without pages")?;
        let on = |k: &str| pages.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
        let placed: u64 = pages
            .iter()
            .filter(|(k, _)| *k != "unallocated")
            .map(|(_, v)| v.as_u64().unwrap_or(0))
            .sum();
        let local = on(&node.to_string());
        if placed == 0 || (local as f64) < HOLDS * placed as f64 {
            return Err(format!(
                "partition {} (worker on CPU {cpu}, node {node}): pages {pages:?}",
                part["partition"]
            ));
        }
        seen.push(format!(
            "partition {} on CPU {cpu}: {local}/{placed} pages on node {node}",
            part["partition"]
        ));
    }
    Ok(seen.join("; "))
}

/// Levels: no more than SLIT has values, and no "SLIT hides" claim.
fn hop_levels(doc: &Value, key: &str, slit_values: usize) -> Result<String, String> {
    let h = &doc[key];
    let levels = h["levels"].as_array().map(Vec::len).unwrap_or(0);
    let hides: Vec<&Value> = h["disagreements"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d.as_str().is_some_and(|d| d.contains("hides")))
        .collect();
    if levels == 0 || levels > slit_values || !hides.is_empty() {
        return Err(format!(
            "{key}: {levels} levels for {slit_values} SLIT values; {hides:?}"
        ));
    }
    let noise = &h["noise"];
    // Every lab guest runs under TCG: its timings must not be used for structure.
    let emulated = noise["note"]
        .as_str()
        .is_some_and(|n| n.starts_with("unavailable here: timings under emulation"));
    if noise["levels_from"] != "slit" || !emulated {
        return Err(format!(
            "{key}: levels from {}, note {}: timings under emulation were used for structure",
            noise["levels_from"], noise["note"]
        ));
    }
    Ok(format!(
        "{key}: {levels} levels for {slit_values} SLIT values (levels from {}, {} candidates; {})",
        noise["levels_from"], noise["candidate_levels"], noise["note"]
    ))
}

/// Cells SLIT calls equal are not split by noise (no flagged cells, no disagreement).
fn hop_cells(doc: &Value, key: &str) -> Result<String, String> {
    let h = &doc[key];
    let flagged = h["flagged"].as_array().map(Vec::len).unwrap_or(0);
    let dis = h["disagreements"].as_array().cloned().unwrap_or_default();
    if flagged > 0 || !dis.is_empty() {
        return Err(format!(
            "{key}: {flagged} flagged cells, disagreements {dis:?}"
        ));
    }
    Ok(format!("{key}: no cell flagged"))
}

fn both(doc: &Value, f: impl Fn(&Value, &str) -> Result<String, String>) -> Result<String, String> {
    Ok(format!(
        "{}; {}",
        f(doc, "bandwidth_hops")?,
        f(doc, "latency_hops")?
    ))
}

/// `mem matrix`: every cell measured and its pages verified on the memory node; the
/// kernel saw every memory node serve pages; no structure inferred from noise.
pub fn matrix(shape: &Shape, console: &Console) -> Vec<Check> {
    let doc = match console.json("matrix") {
        Ok(d) => d,
        Err(e) => return vec![Check::new("mem matrix", Err(e))],
    };
    let m = &doc["matrix"];
    let nodes = shape.nodes() as usize;
    let cpu_nodes = shape.sockets as usize;
    let cells = (|| -> Result<String, String> {
        for i in 0..cpu_nodes {
            for j in 0..nodes {
                let bw = m["bandwidth_gb_per_s"][i][j].as_f64().unwrap_or(0.0);
                let lat = m["latency_ns"][i][j].as_f64().unwrap_or(0.0);
                let ver = m["placement_verified"][i][j].as_f64().unwrap_or(0.0);
                if !(bw > 0.0 && lat > 0.0 && ver >= 0.95) {
                    return Err(format!(
                        "cell ({i},{j}): bandwidth {bw}, latency {lat}, pages verified {ver}"
                    ));
                }
            }
        }
        let pages = console.deltas("matrix")?.pages;
        if let Some((n, v)) = pages.iter().find(|(_, v)| **v < 512) {
            return Err(format!(
                "node {n} served only {v} pages (kernel numastat) during the matrix"
            ));
        }
        Ok(format!(
            "{cpu_nodes}x{nodes} cells measured, every one's pages on its memory node; kernel: {}",
            pages_text(&pages)
        ))
    })();
    let slit_values: usize = (0..shape.nodes())
        .flat_map(|i| (0..shape.nodes()).map(move |j| (i, j)))
        .map(|(i, j)| shape.distance(i, j))
        .collect::<BTreeSet<_>>()
        .len();
    vec![
        Check::new("mem matrix: every cell filled, pages verified", cells),
        Check::new(
            "mem matrix: no hop level beyond SLIT's, no 'SLIT hides' from noise",
            both(&doc, |d, k| hop_levels(d, k, slit_values)),
        ),
        Check::new(
            "mem matrix: no SLIT-equal cells split by noise",
            both(&doc, hop_cells),
        ),
    ]
}

/// The sweep's own record of where the run's pages were (`evidence.pages`, the
/// sampler's numa_maps readings, in results.jsonl) against the kernel's numastat.
pub fn sweep_evidence(console: &Console) -> Check {
    let Some(name) = console.sections.keys().find(|k| {
        k.starts_with("sweep-mem.")
            && !k.contains(".results")
            && !k.contains(".err")
            && !k.contains(".kernel")
    }) else {
        return Check::new(
            "sweep records page placement per run",
            Err("no sweep-mem section".into()),
        );
    };
    let node: u32 = name
        .rsplit(':')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let title = format!(
        "sweep --mem bind:{node} records the run's pages on node {node} (results.jsonl evidence)"
    );
    let run = match console.json_lines(&format!("{name}.results")) {
        Ok(lines) => lines.into_iter().find(|l| l["record"] == "run"),
        Err(e) => return Check::new(title, Err(e)),
    };
    let Some(run) = run else {
        return Check::new(title, Err("the sweep recorded no run".into()));
    };
    let evidence = &run["evidence"];
    if evidence.is_null() {
        return Check::not_applicable(title, "this build's run records carry no `evidence` (the per-run sampler is not in this branch yet)".into());
    }
    let result = (|| -> Result<String, String> {
        let pages = &evidence["pages"];
        if pages["state"] != "measured" {
            return Err(format!("evidence.pages: {pages}"));
        }
        let peak = pages["value"]["peak_bytes_per_node"]
            .as_object()
            .ok_or(format!("evidence.pages: {pages}"))?;
        let total: f64 = peak.values().filter_map(|v| v.as_f64()).sum();
        let on: f64 = peak
            .get(&node.to_string())
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0);
        let array_pages = STREAM_PAGES as f64 * 4096.0;
        // Elsewhere: the binary's own pages (up to about 15 MB of the test build's
        // binary, file-backed, wherever the initramfs was unpacked), heap and stacks;
        // never as much as half the arrays.
        let elsewhere = total - on;
        if on < HOLDS * array_pages || elsewhere >= 0.5 * array_pages {
            return Err(format!("peak resident bytes per node {peak:?}; the run's arrays are {array_pages} bytes on node {node}"));
        }
        Ok(format!("peak resident bytes per node {peak:?}"))
    })();
    Check::new(title, result)
}
