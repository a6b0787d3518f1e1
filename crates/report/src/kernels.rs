//! What the commands that run one built-in kernel print: for `graph`, `npb`, `tpch`,
//! `sync` and `mem stream` (run in this process) each kernel's versioned JSON
//! document (docs/json.md) and its text, built from the run's [`WorkloadReport`],
//! and the verdict and set-up lines every such command ends with; for `mpi-check`
//! (NAS kernels under MPI launchers) each launch's command, rankfile and every rank
//! against its plan.

use std::fmt::Write as _;

use scalescope_model::detail::{Detail, GraphKernelDetail, SyncDetail};
use scalescope_model::evidence::RunEvidence;
use scalescope_model::launch::LaunchCheck;
use scalescope_model::mem::StreamDocument;
use scalescope_model::workload::{SetupCosts, Verification, WorkloadReport};
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
    let Detail::Graph(d) = &r.detail else {
        return detail_missing(r, "graph");
    };
    let mut doc = serde_json::to_value(d).unwrap_or(Value::Null);
    let kernel = match &d.kernel {
        GraphKernelDetail::Count { .. } => {
            extend(
                &mut doc,
                json!({"graph": {"source": source, "vertices": d.vertices,
                    "edges": d.edges, "bytes_per_edge": d.bytes_per_edge}}),
            );
            "count"
        }
        GraphKernelDetail::Bfs { .. } => "bfs",
        GraphKernelDetail::Pr { iterations, .. } => {
            let per = r.seconds / iterations.map_or(f64::NAN, |i| i as f64);
            extend(&mut doc, json!({ "seconds_per_iteration": per }));
            "pr"
        }
    };
    extend(
        &mut doc,
        json!({"kind": format!("scalescope.graph-{kernel}"), "schema_version": SCHEMA_VERSION,
            "threads": r.threads, "setup": r.setup}),
    );
    if let Some(t) = &r.trials {
        extend(&mut doc, json!({ "trials": t }));
    }
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

/// The trials of a kernel run more than once in one process, in one line: the
/// first (cold) apart, the warm ones' mean and median with their spread, and the
/// mean of all (GAP's "Average Time").
fn trials_line(r: &WorkloadReport, indent: &str) -> String {
    let Some(t) = &r.trials else {
        return String::new();
    };
    let n = t.seconds.len();
    let warm = t.warm().map_or(String::new(), |w| {
        format!(
            "; warm ({}): mean {:.6} s, median {:.6} s, min {:.6} s, IQR/median {:.3}",
            w.count, w.mean_seconds, w.median_seconds, w.min_seconds, w.iqr_over_median
        )
    });
    format!(
        "{indent}{n} trials in this process: first {:.6} s{warm}; mean of all {:.6} s\n",
        t.first(),
        t.mean()
    )
}

/// The document of a report without the detail its command expects (a workload
/// that failed before reporting one): the verdict and what is missing.
fn detail_missing(r: &WorkloadReport, kernel: &str) -> Value {
    let mut doc = json!({"kind": format!("scalescope.{kernel}"), "schema_version": SCHEMA_VERSION,
        "threads": r.threads, "detail": "none reported"});
    extend(&mut doc, verdict_fields(&r.verification));
    doc
}

/// The run could not be made (its verdict unavailable and no figure reported,
/// e.g. `--sync htm` without RTM): its document carries no seconds.
fn nothing_ran(r: &WorkloadReport) -> bool {
    matches!(r.verification, Verification::Unavailable(_)) && r.figures.is_empty()
}

/// `graph count|bfs|pr` as text: the kernel's line(s) and the verdict.
pub fn graph_text(r: &WorkloadReport, source: &str) -> String {
    let Detail::Graph(d) = &r.detail else {
        return format!("  {}\n", verdict_line(&r.verification));
    };
    let shown = |v: Option<usize>| v.map_or("?".to_string(), |v| v.to_string());
    let mut out = String::new();
    match &d.kernel {
        GraphKernelDetail::Count {
            pattern,
            induced,
            count,
        } => {
            let kind = if *induced { "induced" } else { "non-induced" };
            let _ = writeln!(
                out,
                "{pattern} ({kind}) in {source}: {count}\n  {} vertices, {} edges, {:.1} bytes/edge; counted in {:.4} s on {} threads (graph built in {:.4} s)",
                shown(d.vertices), shown(d.edges), d.bytes_per_edge.unwrap_or(f64::NAN),
                r.seconds, r.threads, d.build_seconds
            );
            return out + &trials_line(r, "  ") + &verdict_and_setup(r, "  ");
        }
        GraphKernelDetail::Bfs {
            source: from,
            reached_vertices,
            traversed_edges,
            teps,
            steps,
        } => {
            let from = from.map_or("?".to_string(), |s| s.to_string());
            let _ = writeln!(
                out,
                "BFS from {from} in {source}: {reached_vertices} vertices reached, {traversed_edges} edges, {:.4} s on {} threads, {teps:.3e} TEPS",
                r.seconds, r.threads
            );
            out += &bfs_steps_line(steps);
        }
        GraphKernelDetail::Pr { .. } => out += &pagerank_text(r, &d.kernel, source),
    }
    out + &trials_line(r, "  ") + &format!("  {}\n", verdict_line(&r.verification))
}

/// A BFS's steps in one line: how many of each kind, and the share of the steps'
/// time its workers spent in barriers.
fn bfs_steps_line(steps: &[scalescope_model::detail::BfsStep]) -> String {
    if steps.is_empty() {
        return String::new();
    }
    let kinds = [
        "top-down",
        "bottom-up",
        "queue-to-bitmap",
        "bitmap-to-queue",
    ];
    let counts: Vec<String> = kinds
        .iter()
        .map(|k| (k, steps.iter().filter(|s| s.kind == *k).count()))
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    let secs: f64 = steps.iter().map(|s| s.seconds).sum();
    let wait: f64 = steps.iter().map(|s| s.wait_seconds).sum();
    format!(
        "  {} steps ({}): {:.4} s, of which {:.1}% waiting at barriers (mean over workers)\n",
        steps.len(),
        counts.join(", "),
        secs,
        100.0 * wait / secs
    )
}

/// PageRank's line, and its RTM line where transactions ran.
fn pagerank_text(r: &WorkloadReport, kernel: &GraphKernelDetail, source: &str) -> String {
    let GraphKernelDetail::Pr {
        sync,
        batch,
        iterations,
        transactions,
        aborts,
        aborts_by_cause,
    } = kernel
    else {
        return String::new();
    };
    let shown = iterations.map_or("?".to_string(), |i| i.to_string());
    let per = r.seconds / iterations.map_or(f64::NAN, |i| i as f64);
    let mut out = format!(
        "PageRank ({sync}, batch {batch}) in {source}: {shown} iterations, {:.4} s ({per:.4} s per iteration) on {} threads\n",
        r.seconds, r.threads
    );
    let tx = transactions.unwrap_or(0);
    if tx > 0 {
        let total = aborts.unwrap_or(0);
        let a = aborts_by_cause.unwrap_or_default();
        let _ = writeln!(
            out,
            "  RTM: {tx} transactions, {total} aborted ({:.1}%): {} conflict, {} capacity, {} explicit, {} other (aborted batches ran under the elided lock)",
            100.0 * total as f64 / tx as f64, a.conflict, a.capacity, a.explicit, a.other
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
        "lineitem_rows": match &r.detail {
            Detail::Tpch(d) => Some(d.lineitem_rows),
            _ => None,
        },
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

/// A report without the detail its document is made of.
#[derive(Debug, thiserror::Error)]
#[error("the report has no {0} detail")]
pub struct MissingDetail(pub &'static str);

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
/// [`MissingDetail`] for a report without STREAM's detail (its kernels and array
/// size).
pub fn stream_document(
    s: &StreamRun,
    r: &WorkloadReport,
    evidence: Option<&RunEvidence>,
) -> Result<StreamDocument, MissingDetail> {
    let v = &r.verification;
    let Detail::Stream(detail) = &r.detail else {
        return Err(MissingDetail("STREAM"));
    };
    Ok(StreamDocument {
        kind: scalescope_model::mem::STREAM_KIND.into(),
        schema_version: scalescope_model::mem::STREAM_SCHEMA_VERSION,
        threads: r.threads,
        placement: s.placement.into(),
        mem: s.mem.into(),
        verified: v.passed(),
        verdict: v.verdict().into(),
        verification: v.why().into(),
        array_bytes: detail.array_bytes,
        kernels: detail.kernels.clone(),
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
            // A report without kernels shows NaN rows.
            &match &r.detail {
                Detail::Stream(d) => d.kernels.clone(),
                _ => Default::default(),
            },
            names
        ),
        evidence_and_verdict(evidence, &r.verification, ""),
    )
}

/// `exit 3`, or what stands for a missing exit status (a process ended by a signal).
fn exit_text(code: Option<i32>) -> String {
    code.map_or("no exit status: ended by a signal".into(), |c| {
        format!("exit {c}")
    })
}

/// The `sync --json` document: the study's curves, fits and claims, the threads
/// and the verdict.
pub fn sync_document(r: &WorkloadReport) -> Value {
    let Detail::Sync(d) = &r.detail else {
        return detail_missing(r, "sync");
    };
    let mut doc = json!({"kind": "scalescope.sync", "schema_version": SCHEMA_VERSION,
        "threads": r.threads, "table": d.table, "updates": d.updates, "reps": d.reps,
        "curves": d.curves, "claims": d.claims, "note": d.note, "setup": r.setup});
    extend(&mut doc, verdict_fields(&r.verification));
    doc
}

/// `sync` as text: what ran, each mechanism's fit and points, the claims and the
/// verdict.
pub fn sync_text(r: &WorkloadReport) -> String {
    let Detail::Sync(d) = &r.detail else {
        return format!("{}\n", verdict_line(&r.verification));
    };
    let mut out = sync_curves_text(r.threads, d);
    if let Some(n) = &d.note {
        let _ = writeln!(out, "{n}");
    }
    for c in &d.claims {
        let _ = writeln!(out, "  {}", c.line());
    }
    out + &verdict_and_setup(r, "")
}

fn sync_curves_text(threads: usize, d: &SyncDetail) -> String {
    let mut out = format!(
        "{threads} threads, {} slots (contention), {} updates per thread per point, {} repetitions; T(N) = A*N + B per critical section, 95% intervals\n",
        d.table, d.updates, d.reps
    );
    for c in &d.curves {
        let pts: Vec<String> = c
            .points
            .iter()
            .map(|p| format!("N={}: {:.1} ns/update", p.batch, p.ns_per_update))
            .collect();
        // The best batch is read off the model: none where the fit was rejected.
        let best = match c.fit.rejected {
            None => format!("best batch {}", c.best_batch),
            Some(_) => "no best batch (the fit is rejected)".to_string(),
        };
        let _ = writeln!(
            out,
            "  {:<13} {:<18} {}  {best}\n      {}",
            c.op.as_str(),
            c.sync,
            c.fit.describe(),
            pts.join("  ")
        );
    }
    out
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
            "  the launcher failed ({}): {}",
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
            "  run {}: {:.3} s wall, {}{verdict}  {status}",
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
    use scalescope_model::detail::StreamDetail;

    fn report(detail: Detail, verification: Verification) -> WorkloadReport {
        WorkloadReport {
            workload: "w".into(),
            threads: 2,
            verification,
            seconds: 2.0,
            figures: Default::default(),
            units: Default::default(),
            detail,
            setup: None,
            trials: None,
        }
    }

    /// Exit statuses in words: `exit 1`, or that there was none; never `Some(1)`.
    #[test]
    fn launch_text_writes_exit_statuses_in_words() {
        use scalescope_model::launch::{ProgramRun, RanksCheck};
        let run = |rep, exit_code| ProgramRun {
            rep,
            wall_secs: 1.0,
            exit_code,
            timed_out: false,
            report: None,
        };
        let l = LaunchCheck {
            ranks_per_node: "2".into(),
            command: "mpirun -n 2 ./ep".into(),
            rankfile: None,
            exit_code: None,
            timed_out: false,
            stderr_tail: "killed".into(),
            check: RanksCheck {
                ranks: Vec::new(),
                all_inside_plan: true,
                unexpected: Vec::new(),
            },
            runs: vec![run(0, Some(1)), run(1, None)],
        };
        let text = launch_text(&l);
        assert!(
            text.contains("the launcher failed (no exit status: ended by a signal): killed"),
            "{text}"
        );
        assert!(
            text.contains("run 0: 1.000 s wall, exit 1  FAILED"),
            "{text}"
        );
        assert!(!text.contains("Some(") && !text.contains("None"), "{text}");
    }

    fn graph(kernel: GraphKernelDetail) -> Detail {
        Detail::Graph(scalescope_model::detail::GraphDetail {
            graph: "kron:4".into(),
            seconds: 2.0,
            build_seconds: 0.5,
            vertices: Some(16),
            edges: Some(40),
            bytes_per_edge: Some(4.0),
            relabel_seconds: None,
            kernel,
        })
    }

    fn stream(kernels: Value) -> Detail {
        Detail::Stream(StreamDetail {
            array_elements: 1 << 17,
            array_bytes: 1 << 20,
            total_bytes: 3 << 20,
            ntimes: 3,
            non_temporal_stores: false,
            sustain_secs: 1.0,
            kernels: serde_json::from_value(kernels).unwrap(),
        })
    }

    #[test]
    fn graph_count_document_names_the_graph_and_the_verdict() {
        let r = report(
            graph(GraphKernelDetail::Count {
                pattern: "triangle".into(),
                induced: false,
                count: 7,
            }),
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
            graph(GraphKernelDetail::Pr {
                sync: "atomic".into(),
                batch: 4,
                iterations: Some(4),
                transactions: Some(0),
                aborts: Some(0),
                aborts_by_cause: None,
            }),
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
            graph(GraphKernelDetail::Pr {
                sync: "htm".into(),
                batch: 4,
                iterations: None,
                transactions: None,
                aborts: None,
                aborts_by_cause: None,
            }),
            Verification::Unavailable(why.clone()),
        );
        let doc = graph_document(&r, "g");
        assert_eq!(doc["verdict"], "unavailable");
        assert!(doc.get("seconds").is_none() && doc.get("seconds_per_iteration").is_none());
        let mut counted = report(
            graph(GraphKernelDetail::Count {
                pattern: "triangle".into(),
                induced: false,
                count: 9,
            }),
            Verification::Unavailable("too large for the reference".into()),
        );
        counted.figures.insert("edges_per_s".into(), 4.5);
        assert_eq!(graph_document(&counted, "g")["seconds"], 2.0);
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
            stream(json!({"read": kernel(trial)})),
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
            stream(json!({"read": kernel(only)})),
            Verification::Passed("ok".into()),
        );
        let text = stream_text(&run, &r, None, &["read"]);
        assert!(
            text.contains("sustained read loop: wide (the only one this CPU runs)\n"),
            "{text}"
        );
        // No sustained block: no loop line.
        let r = report(
            stream(json!({"read": kernel(Value::Null)})),
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
        let r = report(Detail::None, Verification::Unavailable("no answer".into()));
        let doc = tpch_document(&q, &r, json!([]));
        assert_eq!(doc["rows"], json!([{"a": "1", "b": "2"}]));
        assert_eq!(doc["verdict"], "unavailable");
        assert!(tpch_text(&q, &r).starts_with("TPC-H Q6 SF 0.01 (numa layout)"));
    }
}
