//! `scalescope analyze`, `report` and `compare`: results files in, explanations out.
//! Results recorded on any machine are analysed with the topology in their header.

use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use scalescope_analysis::ceiling::Ceiling;
use scalescope_analysis::{compare::compare, Basis};
use scalescope_model::store::{Header, RunRecord};
use scalescope_report::mem::Section;
use scalescope_report::{Exporter, JsonExporter, ResultSet, TextExporter};

use crate::cli::{AnalyzeArgs, CompareArgs, ReportArgs};

fn load(path: &Path) -> anyhow::Result<(Header, Vec<RunRecord>)> {
    crate::shared::load_results(path)
}

fn basis(text: Option<&str>, header: &Header, runs: &[RunRecord]) -> anyhow::Result<Basis> {
    Basis::parse_known(text, header, runs).map_err(|e| anyhow::anyhow!("--{e}"))
}

/// One results file, analysed.
fn analysed(path: &Path, basis_text: Option<&str>) -> anyhow::Result<ResultSet> {
    let (h, r) = load(path)?;
    let b = basis(basis_text, &h, &r)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let (series, problems) = scalescope_model::evidence::read_all_series(dir, &r);
    for p in problems {
        eprintln!("warning: {p}");
    }
    let analysis = scalescope_analysis::analyze(&h, &r, &b);
    Ok(ResultSet::new(path.display().to_string(), h, r, analysis).with_series(series))
}

/// Bandwidth ceilings: the files given, else every `mem stream` document beside
/// the results.
fn ceilings(args: &AnalyzeArgs) -> anyhow::Result<Vec<Ceiling>> {
    let docs = scalescope_model::load::documents(&args.results, &args.ceilings)?;
    Ok(scalescope_analysis::ceiling::from_documents(
        &docs,
        !args.ceilings.is_empty(),
    )?)
}

/// `analyze matrix.json`: hop inference on a `mem matrix --json` document.
fn analyze_matrix(args: &AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let p = &args.results;
    let doc = scalescope_model::load::json(p)?;
    let (bw, lat) = scalescope_analysis::matrix_doc::infer_doc(&doc)
        .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
    if args.json {
        let out = serde_json::json!({"kind": "scalescope.hop-inference", "schema_version": crate::shared::MEM_SCHEMA_VERSION,
            "source": p.display().to_string(), "bandwidth_hops": bw, "latency_hops": lat});
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", scalescope_report::mem::hop_summary_text(&bw, &lat));
    Ok(ExitCode::SUCCESS)
}

pub fn run_analyze(args: &AnalyzeArgs) -> anyhow::Result<ExitCode> {
    if args.results.extension().is_some_and(|e| e == "json") {
        return analyze_matrix(args);
    }
    let (h, r) = load(&args.results)?;
    let b = basis(args.basis.as_deref(), &h, &r)?;
    let label = args.results.display().to_string();
    let analysis = scalescope_analysis::analyze_with(&h, &r, &b, &ceilings(args)?);
    let sets = [ResultSet::new(label, h, r, analysis)];
    let bytes = if args.json {
        JsonExporter.export(&sets)
    } else {
        TextExporter.export(&sets)
    };
    print!("{}", String::from_utf8_lossy(&bytes));
    Ok(ExitCode::SUCCESS)
}

/// A `mem matrix|latency|c2c --json` document as a report section.
fn mem_section(path: &Path, index: usize) -> anyhow::Result<Section> {
    let doc = scalescope_model::load::json(path)?;
    scalescope_report::mem::section(&path.display().to_string(), &doc, &format!("m{index}-"))
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

pub fn run_report(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let mut sets = Vec::new();
    let mut sections = Vec::new();
    for (i, p) in args.results.iter().enumerate() {
        // A sweep's results.jsonl, or a `mem ... --json` document.
        if p.extension().is_some_and(|e| e == "jsonl") {
            sets.push(analysed(p, args.basis.as_deref())?);
        } else {
            sections.push(mem_section(p, i + 1)?);
        }
    }
    let index = scalescope_report::html::write_dir(&sets, &sections, &args.out)?;
    println!("{}", index.display());
    Ok(ExitCode::SUCCESS)
}

pub fn run_compare(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let (ha, ra) = load(&args.a)?;
    let (hb, rb) = load(&args.b)?;
    let b = basis(args.basis.as_deref(), &ha, &ra)?;
    let c = compare((&ha, &ra), (&hb, &rb), &b);
    if c.rows.is_empty() {
        bail!(
            "{} and {} share no measured point (same threads, placement and memory policy)",
            args.a.display(),
            args.b.display()
        );
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        let (a, bl) = (args.a.display().to_string(), args.b.display().to_string());
        print!("{}", scalescope_report::compare::text(&c, &a, &bl, &b));
        print!("{}", scalescope_report::evidence::compare_text(&ra, &rb));
    }
    Ok(ExitCode::SUCCESS)
}
