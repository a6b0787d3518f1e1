//! What the commands that run one built-in kernel print: for `graph`, `npb`, `tpch`,
//! `sync` and `mem stream` (run in this process) each kernel's versioned JSON
//! document (docs/json.md) and its text, built from the run's [`WorkloadReport`],
//! and the verdict and set-up lines every such command ends with; for `mpi-check`
//! (NAS kernels under MPI launchers) each launch's command, rankfile and every rank
//! against its plan.

use std::fmt::Write as _;

use scalescope_results::evidence::RunEvidence;
use scalescope_results::mem::StreamDocument;
use scalescope_results::ranks::LaunchCheck;
use scalescope_results::workload::{SetupCosts, Verification, WorkloadReport};
use serde_json::{json, Value};

/// The version of the command documents (`place`, `npb`, `tpch`, `graph`, `sync`
/// `--json`) documented in docs/json.md; bumped when a field is removed or changes
/// meaning.
pub const SCHEMA_VERSION: u32 = 1;

/// The verdict as the human-readable commands print it.
pub fn verdict_line(v: &Verification) -> String {
    format!("verification: {} ({})", v.verdict(), v.why())
}

/// A run's set-up seconds in one line: where the input came from and what preparing
/// and checking it cost.
pub fn setup_line(s: &SetupCosts) -> String {
    let part = |name: &str, v: Option<f64>| v.map(|v| format!(", {name} {v:.3} s"));
    format!(
        "set-up: {:.3} s preparing the input ({}{}{}{}{}), {:.3} s verifying",
        s.prepare_secs,
        s.input,
        s.input_check
            .as_ref()
            .map(|c| format!(", checked: {c}"))
            .unwrap_or_default(),
        part("first-touch", s.first_touch_secs).unwrap_or_default(),
        part("load", s.load_secs).unwrap_or_default(),
        part("build", s.build_secs).unwrap_or_default(),
        s.verify_secs
    )
}

/// The verdict line and, where the run has them, its set-up seconds, each after
/// `indent` and ending in a newline.
pub fn verdict_and_setup(r: &WorkloadReport, indent: &str) -> String {
    let mut out = format!("{indent}{}\n", verdict_line(&r.verification));
    if let Some(s) = &r.setup {
        out += &format!("{indent}{}\n", setup_line(s));
    }
    out
}

/// The sampler's evidence in one line, then the verdict, each after `indent`.
pub fn evidence_and_verdict(e: Option<&RunEvidence>, v: &Verification, indent: &str) -> String {
    let evidence = e.map_or(
        "evidence: none (sampling off, or the sampling thread failed)".into(),
        crate::evidence::one_line,
    );
    format!("{indent}{evidence}\n{indent}{}\n", verdict_line(v))
}

/// A named figure of the run, NaN where the workload did not give it.
fn figure(r: &WorkloadReport, name: &str) -> f64 {
    r.figures.get(name).copied().unwrap_or(f64::NAN)
}

/// The verdict's three fields every kernel document carries.
fn verdict_fields(v: &Verification) -> Value {
    json!({"verified": v.passed(), "verdict": v.verdict(), "verification": v.why()})
}

fn extend(doc: &mut Value, extra: Value) {
    if let (Some(d), Value::Object(extra)) = (doc.as_object_mut(), extra) {
        d.extend(extra);
    }
}

/// The `graph count|bfs|pr --json` document: the workload's detail, what the kernel
/// adds (count: the graph's size; pr: seconds per iteration), the threads and the
/// verdict. `source` is the graph as the user named it.
pub fn graph_document(r: &WorkloadReport, source: &str) -> Value {
    let d = &r.detail;
    let mut doc = d.clone();
    if !doc.is_object() {
        return doc;
    }
    let kernel = d.get("kernel").and_then(Value::as_str).unwrap_or("count");
    extend(
        &mut doc,
        match kernel {
            "count" => json!({"graph": {"source": source, "vertices": d["vertices"],
                "edges": d["edges"], "bytes_per_edge": d["bytes_per_edge"]}}),
            "pr" => json!({"seconds_per_iteration":
                r.seconds / d["iterations"].as_f64().unwrap_or(f64::NAN)}),
            _ => json!({}),
        },
    );
    extend(
        &mut doc,
        json!({"kind": format!("scalescope.graph-{kernel}"), "schema_version": SCHEMA_VERSION,
            "threads": r.threads, "setup": r.setup}),
    );
    extend(&mut doc, verdict_fields(&r.verification));
    if nothing_ran(r) {
        if let Some(d) = doc.as_object_mut() {
            for figure in ["seconds", "seconds_per_iteration"] {
                d.remove(figure);
            }
        }
    }
    doc
}

/// An exit status in words (a process killed by a signal has none).
fn exit_text(code: Option<i32>) -> String {
    code.map_or_else(|| "none (killed by a signal)".into(), |c| c.to_string())
}

/// The run could not be made (its verdict unavailable and no figure reported,
/// e.g. `--sync htm` without RTM): its document carries no seconds.
fn nothing_ran(r: &WorkloadReport) -> bool {
    matches!(r.verification, Verification::Unavailable(_)) && r.figures.is_empty()
}

/// `graph count|bfs|pr` as text: the kernel's line(s) and the verdict.
pub fn graph_text(r: &WorkloadReport, source: &str) -> String {
    let d = &r.detail;
    let num = |k: &str| d[k].as_f64().unwrap_or(f64::NAN);
    let mut out = String::new();
    match d["kernel"].as_str() {
        Some("count") => {
            let kind = if d["induced"] == true {
                "induced"
            } else {
                "non-induced"
            };
            let _ = writeln!(
                out,
                "{} ({kind}) in {source}: {}\n  {} vertices, {} edges, {:.1} bytes/edge; counted in {:.4} s on {} threads (graph built in {:.4} s)",
                d["pattern"].as_str().unwrap_or("?"), d["count"], d["vertices"], d["edges"],
                num("bytes_per_edge"), r.seconds, r.threads, num("build_seconds")
            );
            return out + &verdict_and_setup(r, "  ");
        }
        Some("bfs") => {
            let _ = writeln!(
                out,
                "BFS from {} in {source}: {} vertices reached, {} edges, {:.4} s on {} threads, {:.3e} TEPS",
                d["source"], d["reached_vertices"], d["traversed_edges"], r.seconds, r.threads, num("teps")
            );
        }
        _ if !d["iterations"].is_null() => out += &pagerank_text(r, source),
        _ => {}
    }
    out + &format!("  {}\n", verdict_line(&r.verification))
}

/// PageRank's line, and its RTM line where transactions ran.
fn pagerank_text(r: &WorkloadReport, source: &str) -> String {
    let d = &r.detail;
    let iterations = d["iterations"].as_f64().unwrap_or(f64::NAN);
    let mut out = format!(
        "PageRank ({}, batch {}) in {source}: {} iterations, {:.4} s ({:.4} s per iteration) on {} threads\n",
        d["sync"].as_str().unwrap_or("?"), d["batch"], d["iterations"], r.seconds, r.seconds / iterations, r.threads
    );
    let (tx, a) = (
        d["transactions"].as_u64().unwrap_or(0),
        &d["aborts_by_cause"],
    );
    if tx > 0 {
        let total = d["aborts"].as_u64().unwrap_or(0);
        let _ = writeln!(
            out,
            "  RTM: {tx} transactions, {total} aborted ({:.1}%): {} conflict, {} capacity, {} explicit, {} other (aborted batches ran under the elided lock)",
            100.0 * total as f64 / tx as f64, a["conflict"], a["capacity"], a["explicit"], a["other"]
        );
    }
    out
}

/// The `npb ep|is|ft --json` document (`name` is the kernel's, `EP`).
pub fn npb_document(name: &str, r: &WorkloadReport) -> Value {
    json!({
        "kind": format!("scalescope.npb-{}", name.to_lowercase()),
        "schema_version": SCHEMA_VERSION,
        "verified": r.verification.passed(),
        "verdict": r.verification.verdict(),
        "mops": figure(r, "mops"),
        "seconds": r.seconds,
        "report": r,
    })
}

/// `npb ep|is|ft` as text: class, threads, placement, seconds, Mop/s and the verdict.
pub fn npb_text(name: &str, class: &str, placement: &str, r: &WorkloadReport) -> String {
    format!(
        "NPB {name} class {class}: {} threads ({placement}), {:.4} s, {:.2} Mop/s\n{}\n",
        r.threads,
        r.seconds,
        figure(r, "mops"),
        verdict_line(&r.verification)
    )
}

/// A TPC-H run as the `tpch` command names it, beside its report.
#[derive(Debug, Clone, Copy)]
pub struct TpchRun<'a> {
    /// `q1` or `q6`.
    pub query: &'a str,
    pub sf: f64,
    /// `numa` or `naive`.
    pub layout: &'a str,
    /// Query runs (the fastest counts).
    pub repeat: usize,
    /// The placement strategy, as text.
    pub placement: &'a str,
    /// The result rows, the first being the header (`|`-separated).
    pub rows: &'a [String],
}

/// Result rows as objects keyed by the header's column names.
fn rows_json(rows: &[String]) -> Vec<serde_json::Map<String, Value>> {
    let Some((header, body)) = rows.split_first() else {
        return Vec::new();
    };
    let names: Vec<&str> = header.split('|').collect();
    body.iter()
        .map(|r| {
            names
                .iter()
                .zip(r.split('|'))
                .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
                .collect()
        })
        .collect()
}

/// The `tpch --json` document; `partition_pages` is where each partition's pages lie.
pub fn tpch_document(q: &TpchRun, r: &WorkloadReport, partition_pages: Value) -> Value {
    let mut doc = json!({
        "kind": "scalescope.tpch",
        "schema_version": SCHEMA_VERSION,
        "query": q.query,
        "sf": q.sf,
        "layout": q.layout,
        "threads": r.threads,
        "rows": rows_json(q.rows),
        "seconds": r.seconds,
        "rows_per_s": figure(r, "rows_per_s"),
        "scanned_bytes_per_s": figure(r, "scanned_gb_per_s") * 1e9,
        "lineitem_rows": r.detail["lineitem_rows"],
    });
    extend(&mut doc, verdict_fields(&r.verification));
    extend(
        &mut doc,
        json!({"partition_pages": partition_pages, "setup": r.setup}),
    );
    doc
}

/// `tpch` as text: the timing line, the result rows and the verdict.
pub fn tpch_text(q: &TpchRun, r: &WorkloadReport) -> String {
    let mut out = format!(
        "TPC-H {} SF {} ({} layout): {} threads ({}), {:.2} ms best of {}, {:.0} rows/s, {:.2} GB/s scanned\n",
        q.query.to_uppercase(), q.sf, q.layout, r.threads, q.placement, r.seconds * 1e3,
        q.repeat, figure(r, "rows_per_s"), figure(r, "scanned_gb_per_s")
    );
    for row in q.rows {
        let _ = writeln!(out, "  {row}");
    }
    out + &verdict_and_setup(r, "")
}

/// A `mem stream` run as the command describes it, beside its report.
#[derive(Debug, Clone, Copy)]
pub struct StreamRun<'a> {
    /// The placement strategy and the memory policy, as text.
    pub placement: &'a str,
    pub mem: &'a str,
    /// Bytes per array, iterations (the first is a warm-up), non-temporal stores.
    pub array_bytes: u64,
    pub ntimes: usize,
    pub nt: bool,
}

/// The `mem stream --json` document: the run's report, its kernels and the sampler's
/// evidence, with the verdict spelled out.
///
/// # Errors
/// A report whose `detail` lacks the STREAM kernels or the array size.
pub fn stream_document(
    s: &StreamRun,
    r: &WorkloadReport,
    evidence: Option<&RunEvidence>,
) -> Result<StreamDocument, serde_json::Error> {
    let v = &r.verification;
    // The workload's own detail (free-form in every report) holds the kernels.
    let detail = &r.detail;
    Ok(StreamDocument {
        kind: scalescope_results::mem::STREAM_KIND.into(),
        schema_version: scalescope_results::mem::STREAM_SCHEMA_VERSION,
        threads: r.threads,
        placement: s.placement.into(),
        mem: s.mem.into(),
        verified: v.passed(),
        verdict: v.verdict().into(),
        verification: v.why().into(),
        array_bytes: serde_json::from_value(detail["array_bytes"].clone())?,
        kernels: serde_json::from_value(detail["kernels"].clone())?,
        report: Some(r.clone()),
        evidence: evidence.cloned(),
    })
}

/// `mem stream` as text: what ran, the kernels' table (`names` in order), the
/// evidence line and the verdict.
pub fn stream_text(
    s: &StreamRun,
    r: &WorkloadReport,
    evidence: Option<&RunEvidence>,
    names: &[&str],
) -> String {
    let human = crate::machine::human_bytes;
    format!(
        "STREAM: {} threads ({}), {}, {} per array ({} total), best of {} iterations{}\n{}{}",
        r.threads,
        s.placement,
        s.mem,
        human(s.array_bytes),
        human(3 * s.array_bytes),
        s.ntimes.saturating_sub(1),
        if s.nt { ", non-temporal stores" } else { "" },
        crate::mem::stream_table(
            // The workload's own detail; a report without kernels shows NaN rows.
            &serde_json::from_value(r.detail["kernels"].clone()).unwrap_or_default(),
            names
        ),
        evidence_and_verdict(evidence, &r.verification, ""),
    )
}

/// One launch, as printed by `mpi-check`.
pub fn launch_text(l: &LaunchCheck) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "ranks per node {}: {}", l.ranks_per_node, l.command);
    if let Some(rf) = &l.rankfile {
        let _ = writeln!(
            out,
            "  rankfile:\n    {}",
            rf.trim_end().replace('\n', "\n    ")
        );
    }
    for r in &l.check.ranks {
        let seen = r.probe.as_ref().map_or("did not report".to_string(), |p| {
            let cpu = p.cpu.map_or("?".into(), |c| c.to_string());
            format!(
                "on {} cpus {} (running on {cpu}), memory {}",
                p.host, p.allowed, p.mem_policy
            )
        });
        let mark = if r.inside_plan { "ok" } else { "OUT OF PLAN" };
        let _ = writeln!(
            out,
            "  rank {:>3}  planned {} cpus {:<8} {seen}  {mark}",
            r.rank, r.planned_host, r.planned
        );
    }
    for u in &l.check.unexpected {
        let _ = writeln!(out, "  unexpected: {u}");
    }
    if l.timed_out {
        let _ = writeln!(out, "  the launch was killed after its timeout");
    } else if l.exit_code != Some(0) {
        let _ = writeln!(
            out,
            "  the launcher failed (exit {}): {}",
            exit_text(l.exit_code),
            l.stderr_tail
        );
    }
    for r in &l.runs {
        let verdict = r.report.as_ref().map_or(String::new(), |w| {
            let figures: Vec<String> = w
                .figures
                .iter()
                .map(|(k, v)| format!("{k}={v:.4}"))
                .collect();
            format!(", {} ({})", figures.join(" "), w.verification)
        });
        let status = if r.ok() { "ok" } else { "FAILED" };
        let _ = writeln!(
            out,
            "  run {}: {:.3} s wall, exit {}{verdict}  {status}",
            r.rep,
            r.wall_secs,
            exit_text(r.exit_code)
        );
    }
    let verdict = if l.check.all_inside_plan {
        "every rank where planned"
    } else {
        "ranks out of plan"
    };
    let _ = writeln!(out, "  {verdict}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(detail: Value, verification: Verification) -> WorkloadReport {
        WorkloadReport {
            workload: "w".into(),
            threads: 2,
            verification,
            seconds: 2.0,
            figures: Default::default(),
            units: Default::default(),
            detail,
            setup: None,
        }
    }

    #[test]
    fn graph_count_document_names_the_graph_and_the_verdict() {
        let r = report(
            json!({"graph": "kron:4", "vertices": 16, "edges": 40, "bytes_per_edge": 4.0,
                "kernel": "count", "pattern": "triangle", "induced": false, "count": 7}),
            Verification::Failed("7 != 8".into()),
        );
        let doc = graph_document(&r, "kron:4");
        assert_eq!(doc["kind"], "scalescope.graph-count");
        assert_eq!(doc["graph"]["source"], "kron:4");
        assert_eq!(doc["graph"]["edges"], 40);
        assert_eq!(doc["verdict"], "failed");
        assert_eq!(doc["verification"], "7 != 8");
        let text = graph_text(&r, "kron:4");
        assert!(
            text.starts_with("triangle (non-induced) in kron:4: 7\n"),
            "{text}"
        );
        assert!(
            text.ends_with("  verification: failed (7 != 8)\n"),
            "{text}"
        );
    }

    #[test]
    fn pagerank_gives_seconds_per_iteration() {
        let r = report(
            json!({"kernel": "pr", "sync": "atomic", "batch": 4, "iterations": 4,
                "transactions": 0}),
            Verification::Passed("converged".into()),
        );
        assert_eq!(graph_document(&r, "g")["seconds_per_iteration"], 0.5);
        let text = graph_text(&r, "g");
        assert!(text.starts_with("PageRank (atomic, batch 4) in g: 4 iterations"));
    }

    /// `--sync htm` without RTM: nothing ran, so the document carries no seconds
    /// (a run whose check alone was unavailable keeps its measured figures).
    #[test]
    fn an_unavailable_run_carries_no_figure() {
        let why = "htm: this CPU does not offer Intel RTM".to_string();
        let r = report(
            json!({"kernel": "pr", "sync": "htm", "batch": 4, "iterations": null,
                "seconds": 0.0}),
            Verification::Unavailable(why.clone()),
        );
        let doc = graph_document(&r, "g");
        assert_eq!(doc["verdict"], "unavailable");
        assert!(doc.get("seconds").is_none() && doc.get("seconds_per_iteration").is_none());
        let mut counted = report(
            json!({"kernel": "count", "seconds": 2.0, "vertices": 9, "edges": 9}),
            Verification::Unavailable("too large for the reference".into()),
        );
        counted.figures.insert("edges_per_s".into(), 4.5);
        assert_eq!(graph_document(&counted, "g")["seconds"], 2.0);
        assert_eq!(exit_text(Some(0)), "0");
        assert!(!exit_text(None).contains("None"));
    }

    #[test]
    fn stream_names_the_sustained_reads_loop_and_its_trial() {
        let kernel = |l: Value| {
            json!({"gb_per_s": 30.0, "best_secs": 0.1, "avg_secs": 0.1,
            "max_secs": 0.1, "bytes": 3, "sustained": {"sweeps": 9, "secs": 1.0, "gb_per_s": 31.5},
            "loop": l})
        };
        let run = StreamRun {
            placement: "compact",
            mem: "first-touch",
            array_bytes: 1 << 20,
            ntimes: 3,
            nt: false,
        };
        let trial = json!({"chosen": "paced", "trial_gb_per_s": {"wide": 30.25, "paced": 33.5},
            "trial_pairs": 5, "trial_sweeps": 12});
        let r = report(
            json!({"array_bytes": 1 << 20, "kernels": {"read": kernel(trial)}}),
            Verification::Passed("ok".into()),
        );
        let doc = stream_document(&run, &r, None).unwrap();
        let l = doc.kernels["read"].read_loop.as_ref().unwrap();
        assert_eq!(
            (l.chosen.as_str(), l.trial_pairs, l.trial_sweeps),
            ("paced", 5, 12)
        );
        let text = stream_text(&run, &r, None, &["read"]);
        assert!(
            text.contains("sustained read loop: paced, the faster in a trial of 5 interleaved blocks of 12 sweeps each (median GB/s: paced 33.50, wide 30.25;"),
            "{text}"
        );
        let only =
            json!({"chosen": "wide", "trial_gb_per_s": {}, "trial_pairs": 0, "trial_sweeps": 0});
        let r = report(
            json!({"array_bytes": 1 << 20, "kernels": {"read": kernel(only)}}),
            Verification::Passed("ok".into()),
        );
        let text = stream_text(&run, &r, None, &["read"]);
        assert!(
            text.contains("sustained read loop: wide (the only one this CPU runs)\n"),
            "{text}"
        );
        // No sustained block: no loop line.
        let r = report(
            json!({"array_bytes": 1 << 20, "kernels": {"read": kernel(Value::Null)}}),
            Verification::Passed("ok".into()),
        );
        assert!(!stream_text(&run, &r, None, &["read"]).contains("read loop"));
    }

    #[test]
    fn tpch_rows_are_keyed_by_the_header() {
        let rows = ["a|b".to_string(), "1|2".to_string()];
        let q = TpchRun {
            query: "q6",
            sf: 0.01,
            layout: "numa",
            repeat: 1,
            placement: "compact",
            rows: &rows,
        };
        let r = report(json!({}), Verification::Unavailable("no answer".into()));
        let doc = tpch_document(&q, &r, json!([]));
        assert_eq!(doc["rows"], json!([{"a": "1", "b": "2"}]));
        assert_eq!(doc["verdict"], "unavailable");
        assert!(tpch_text(&q, &r).starts_with("TPC-H Q6 SF 0.01 (numa layout)"));
    }
}
