//! `scalescope graph count|bfs|pr|export`: a graph kernel built as the `graph`
//! workload and run through the shared trial loop (the sweep runs the same), then
//! printed; `export` writes the graph as an edge list or a `.csr` cache.

use std::process::ExitCode;

use scalescope_report::kernels::{graph_document, graph_text};
use scalescope_workloads::execute_with;
use scalescope_workloads::graph::workload::{build_graph, GraphCount, GraphKernel};

use crate::cli::{GraphCommand, GraphExportArgs, GraphInput, InputArgs, PlacementArgs, RunArgs};
use crate::shared::{pinned_pool, verdict_exit};

pub fn run(cmd: &GraphCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        GraphCommand::Count(a) => {
            let (pattern, induced) = (a.pattern, a.induced);
            kernel(
                &a.input,
                &a.run,
                &a.inputs,
                GraphKernel::Count { pattern, induced },
            )
        }
        GraphCommand::Bfs(a) => kernel(
            &a.input,
            &a.run,
            &a.inputs,
            GraphKernel::Bfs { source: a.source },
        ),
        GraphCommand::Pr(a) => kernel(
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

/// Builds, runs and verifies the kernel, then prints it; the exit status is the verdict's.
fn kernel(
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
