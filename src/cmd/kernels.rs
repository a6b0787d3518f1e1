//! The commands that run one built-in kernel in this process (`graph`, `npb`, `tpch`,
//! `sync`; `mem stream` is with the other memory commands): each builds its workload
//! from its typed settings (the same structs a sweep's `--param` keys are read by),
//! runs it through the shared trial loop (the sweep's `__workload` child runs the
//! same), prints the report's document or text, and exits with the verdict's
//! status, so a failed verification is never a quiet number. `graph export` writes
//! the graph as an edge list or a `.csr` cache.

use std::process::ExitCode;

use scalescope_report::kernels::{
    graph_document, graph_text, npb_document, npb_text, sync_document, sync_text, tpch_document,
    tpch_text, TpchRun,
};
use scalescope_workloads::graph::settings::GraphSettings;
use scalescope_workloads::graph::workload::{build_graph, GraphCount};
use scalescope_workloads::npb::{ep::Ep, ft::Ft, is::Is, NpbSettings};
use scalescope_workloads::sync::workload::SyncBench;
use scalescope_workloads::tpch::Tpch;
use scalescope_workloads::{execute_trials, execute_with, Inputs, Workload};

use crate::cli::{
    GraphCommand, GraphExportArgs, InputArgs, NpbArgs, NpbCommand, PlacementArgs, RunArgs,
    SyncArgs, TpchArgs,
};
use crate::shared::{pinned_pool, verdict_exit};

pub fn graph(cmd: &GraphCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        GraphCommand::Count(a) => graph_kernel(
            GraphSettings::Count(a.settings.clone()),
            &a.run,
            &a.inputs,
            a.trials.trials.usize(),
        ),
        GraphCommand::Bfs(a) => graph_kernel(
            GraphSettings::Bfs(a.settings.clone()),
            &a.run,
            &a.inputs,
            a.trials.trials.usize(),
        ),
        GraphCommand::Pr(a) => graph_kernel(
            GraphSettings::Pr(a.settings.clone()),
            &a.run,
            &a.inputs,
            a.trials.trials.usize(),
        ),
        GraphCommand::Export(a) => export(a),
    }
}

/// Builds a graph kernel, runs and verifies it `trials` times in this process, then
/// prints it; the exit status is the verdict's.
fn graph_kernel(
    settings: GraphSettings,
    run: &RunArgs,
    inputs: &InputArgs,
    trials: usize,
) -> anyhow::Result<ExitCode> {
    let source = settings.input().graph.to_string();
    let working = crate::progress::working(&format!("graph kernel on {source}"));
    let mut workload = GraphCount::with(&settings)?;
    let pool = pinned_pool(&run.place, run.threads)?;
    let r = execute_trials(&mut workload, &pool, &inputs.inputs(), trials)?;
    drop(working);
    if run.json {
        let doc = graph_document(&r, &source);
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", graph_text(&r, &source));
    }
    Ok(verdict_exit(&r.verification))
}

fn export(args: &GraphExportArgs) -> anyhow::Result<ExitCode> {
    let pool = pinned_pool(&PlacementArgs::default(), None)?;
    let source = args.input.graph.as_str();
    let g = build_graph(source, args.input.force, &pool)?;
    let out = args.out.display();
    if args.out.extension().is_some_and(|e| e == "csr") {
        scalescope_workloads::graph::cache::save(&g, &args.out, source)?;
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
    let with = |s: &NpbSettings, kernel: &str| -> anyhow::Result<Box<dyn Workload>> {
        Ok(match kernel {
            "EP" => Box::new(Ep::with(s)?),
            "IS" => Box::new(Is::with(s)?),
            _ => Box::new(Ft::with(s)?),
        })
    };
    match cmd {
        NpbCommand::Ep(a) => npb_kernel("EP", with(&a.settings, "EP")?, a),
        NpbCommand::Is(a) => npb_kernel("IS", with(&a.settings, "IS")?, a),
        NpbCommand::Ft(a) => npb_kernel("FT", with(&a.settings, "FT")?, a),
    }
}

fn npb_kernel(
    name: &str,
    mut workload: Box<dyn Workload>,
    args: &NpbArgs,
) -> anyhow::Result<ExitCode> {
    let class = args.settings.class;
    let working = crate::progress::working(&format!("npb {} class {class}", name.to_lowercase()));
    let pool = pinned_pool(&args.run.place, args.run.threads)?;
    let report = execute_with(workload.as_mut(), &pool, &Inputs::default())?;
    drop(working);
    if args.run.json {
        let doc = npb_document(name, &report);
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        let placement = args.run.place.strategy().to_string();
        print!("{}", npb_text(name, class.as_str(), &placement, &report));
    }
    Ok(verdict_exit(&report.verification))
}

pub fn tpch(args: &TpchArgs) -> anyhow::Result<ExitCode> {
    let s = &args.settings;
    let mut q = Tpch::with(s);
    let working = crate::progress::working(&format!("tpch {} at scale factor {}", s.query, s.sf));
    let pool = pinned_pool(&args.run.place, args.run.threads)?;
    let report = execute_with(&mut q, &pool, &args.inputs.inputs())?;
    drop(working);
    let (layout, placement) = (s.layout.to_string(), args.run.place.strategy().to_string());
    let run = TpchRun {
        query: s.query.as_str(),
        sf: s.sf.get(),
        layout: &layout,
        repeat: s.repeat.usize(),
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
    let mut bench = SyncBench::new(args.settings.clone())?;
    let working = crate::progress::working("sync study");
    let pool = pinned_pool(&args.run.place, args.run.threads)?;
    let report = execute_with(&mut bench, &pool, &Inputs::default())?;
    drop(working);
    if args.run.json {
        println!("{}", serde_json::to_string_pretty(&sync_document(&report))?);
    } else {
        print!("{}", sync_text(&report));
    }
    Ok(verdict_exit(&report.verification))
}
