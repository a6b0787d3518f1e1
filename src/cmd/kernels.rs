//! The commands that run one built-in kernel in this process (`graph`, `npb`, `tpch`,
//! `sync`; `mem stream` is with the other memory commands): each builds its workload
//! from the flags, runs it through the shared trial loop (the sweep's `__workload`
//! child runs the same), prints the report's document or text, and exits with the
//! verdict's status, so a failed verification is never a quiet number.
//! `graph export` writes the graph as an edge list or a `.csr` cache.

use std::process::ExitCode;

use scalescope_report::kernels::{
    graph_document, graph_text, npb_document, npb_text, tpch_document, tpch_text, verdict_line,
    TpchRun,
};
use scalescope_workloads::graph::workload::{build_graph, GraphCount, GraphKernel};
use scalescope_workloads::npb::{ep::Ep, ft::Ft, is::Is};
use scalescope_workloads::sync::model::describe;
use scalescope_workloads::sync::workload::{SyncBench, SyncSettings};
use scalescope_workloads::tpch::Tpch;
use scalescope_workloads::{execute, execute_with, Workload};

use crate::cli::{
    GraphCommand, GraphExportArgs, GraphInput, InputArgs, NpbArgs, NpbCommand, PlacementArgs,
    RunArgs, SyncArgs, TpchArgs,
};
use crate::shared::{pinned_pool, verdict_exit};

pub fn graph(cmd: &GraphCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        GraphCommand::Count(a) => {
            let (pattern, induced) = (a.pattern, a.induced);
            graph_kernel(
                &a.input,
                &a.run,
                &a.inputs,
                GraphKernel::Count { pattern, induced },
            )
        }
        GraphCommand::Bfs(a) => graph_kernel(
            &a.input,
            &a.run,
            &a.inputs,
            GraphKernel::Bfs { source: a.source },
        ),
        GraphCommand::Pr(a) => graph_kernel(
            &a.input,
            &a.run,
            &a.inputs,
            GraphKernel::PageRank {
                sync: a.sync.clone(),
                batch: a.batch,
                tolerance: a.tolerance,
            },
        ),
        GraphCommand::Export(a) => export(a),
    }
}

/// Builds, runs and verifies a graph kernel, then prints it; the exit status is the verdict's.
fn graph_kernel(
    input: &GraphInput,
    run: &RunArgs,
    inputs: &InputArgs,
    kernel: GraphKernel,
) -> anyhow::Result<ExitCode> {
    let working = crate::progress::working(&format!("graph kernel on {}", input.graph));
    let mut workload = GraphCount::new(&input.graph, kernel)?.forced(input.force);
    let pool = pinned_pool(&run.place, run.threads)?;
    let r = execute_with(&mut workload, &pool, &inputs.inputs())?;
    drop(working);
    if run.json {
        let doc = graph_document(&r, &input.graph);
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", graph_text(&r, &input.graph));
    }
    Ok(verdict_exit(&r.verification))
}

fn export(args: &GraphExportArgs) -> anyhow::Result<ExitCode> {
    let pool = pinned_pool(&PlacementArgs::default(), None)?;
    let g = build_graph(&args.input.graph, args.input.force, &pool)?;
    let out = args.out.display();
    if args.out.extension().is_some_and(|e| e == "csr") {
        scalescope_workloads::graph::cache::save(&g, &args.out, &args.input.graph)?;
        let version = scalescope_workloads::graph::cache::VERSION;
        let (v, e) = (g.vertices(), g.edges());
        println!("{out}: {v} vertices, {e} edges (binary CSR cache, format {version})");
    } else {
        scalescope_workloads::graph::load::write_edge_list(&g, &args.out)?;
        println!("{out}: {} vertices, {} edges", g.vertices(), g.edges());
    }
    Ok(ExitCode::SUCCESS)
}

pub fn npb(cmd: &NpbCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        NpbCommand::Ep(args) => npb_kernel("EP", Box::new(Ep::new(&args.class)?), args),
        NpbCommand::Is(args) => npb_kernel("IS", Box::new(Is::new(&args.class)?), args),
        NpbCommand::Ft(args) => npb_kernel("FT", Box::new(Ft::new(&args.class)?), args),
    }
}

fn npb_kernel(
    name: &str,
    mut workload: Box<dyn Workload>,
    args: &NpbArgs,
) -> anyhow::Result<ExitCode> {
    let working =
        crate::progress::working(&format!("npb {} class {}", name.to_lowercase(), args.class));
    let pool = pinned_pool(&args.run.place, args.run.threads)?;
    let report = execute(workload.as_mut(), &pool)?;
    drop(working);
    if args.run.json {
        let doc = npb_document(name, &report);
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        let placement = args.run.place.strategy()?.to_string();
        print!("{}", npb_text(name, &args.class, &placement, &report));
    }
    Ok(verdict_exit(&report.verification))
}

pub fn tpch(args: &TpchArgs) -> anyhow::Result<ExitCode> {
    let (layout, tbl) = (args.layout, args.tbl.clone());
    let mut q = Tpch::new(&args.query, args.sf, layout, args.repeat, tbl)?;
    q.force = args.force;
    let working =
        crate::progress::working(&format!("tpch {} at scale factor {}", args.query, args.sf));
    let pool = pinned_pool(&args.run.place, args.run.threads)?;
    let report = execute_with(&mut q, &pool, &args.inputs.inputs())?;
    drop(working);
    let (layout, placement) = (layout.to_string(), args.run.place.strategy()?.to_string());
    let run = TpchRun {
        query: &args.query,
        sf: args.sf,
        layout: &layout,
        repeat: args.repeat,
        placement: &placement,
        rows: q.rows(),
    };
    if args.run.json {
        let doc = tpch_document(&run, &report, q.partition_pages());
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", tpch_text(&run, &report));
    }
    Ok(verdict_exit(&report.verification))
}

pub fn sync(args: &SyncArgs) -> anyhow::Result<ExitCode> {
    let mut bench = SyncBench::new(SyncSettings {
        batches: args.batches.clone(),
        table: args.table,
        updates: args.updates,
        stripes: args.stripes,
        reps: args.reps,
    })?;
    let working = crate::progress::working("sync study");
    let pool = pinned_pool(&args.run.place, args.run.threads)?;
    let report = execute(&mut bench, &pool)?;
    drop(working);
    if args.run.json {
        let doc = serde_json::json!({"kind": "scalescope.sync", "schema_version": crate::shared::JSON_SCHEMA_VERSION, "threads": report.threads, "table": args.table, "reps": args.reps, "curves": bench.curves(), "claims": bench.claims(),
            "note": SyncBench::htm_note(), "verified": report.verification.passed(),
            "verdict": report.verification.verdict(), "verification": report.verification.why()});
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(verdict_exit(&report.verification));
    }
    println!("{} threads, {} slots (contention), {} updates per thread per point, {} repetitions; T(N) = A*N + B per critical section, 95% intervals", report.threads, args.table, args.updates, args.reps);
    for c in bench.curves() {
        let pts: Vec<String> = c
            .points
            .iter()
            .map(|p| format!("N={}: {:.1} ns/update", p.batch, p.ns_per_update))
            .collect();
        // The user-facing name is the one the JSON uses (`mark-visited`, `increment`).
        let op = serde_json::to_value(c.op)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        // The best batch is read off the model: none where the fit was rejected.
        let best = match c.fit.rejected {
            None => format!("best batch {}", c.best_batch),
            Some(_) => "no best batch (the fit is rejected)".to_string(),
        };
        println!("  {op:<13} {:<18} {}  {best}", c.sync, describe(&c.fit));
        println!("      {}", pts.join("  "));
    }
    if let Some(n) = SyncBench::htm_note() {
        println!("{n}");
    }
    for c in bench.claims() {
        println!("  {}", c.line());
    }
    println!("{}", verdict_line(&report.verification));
    Ok(verdict_exit(&report.verification))
}
