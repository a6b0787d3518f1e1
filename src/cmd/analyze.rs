//! `scalescope analyze`, `report` and `compare`: results files in, explanations out.
//! Results recorded on any machine are analysed with the topology in their header.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context};
use scalescope_analysis::{analyze, compare::compare, Basis};
use scalescope_report::html::HtmlExporter;
use scalescope_report::mem::Section;
use scalescope_report::{charts, CsvExporter, Exporter, JsonExporter, ResultSet, TextExporter};
use scalescope_results::store::{read_results, Header, RunRecord};

use crate::cli::{AnalyzeArgs, CompareArgs, ReportArgs};

/// `time` or `metric:NAME` (its direction taken from the header when it names it).
fn basis_of(text: Option<&str>, header: &Header) -> anyhow::Result<Basis> {
    match text {
        None => Ok(Basis::default_for(header)),
        Some("time") => Ok(Basis::Time),
        Some(t) => match t.strip_prefix("metric:") {
            Some(name) if !name.is_empty() => Ok(Basis::Metric {
                name: name.to_string(),
                higher_is_better: header
                    .command
                    .metrics
                    .iter()
                    .find(|m| m.name == name)
                    .is_none_or(|m| m.higher_is_better),
            }),
            _ => bail!("--basis `{t}`: expected `time` or `metric:NAME`"),
        },
    }
}

fn load(path: &Path) -> anyhow::Result<(Header, Vec<RunRecord>)> {
    let (h, r, _) =
        read_results(path).with_context(|| format!("reading results {}", path.display()))?;
    Ok((h, r))
}

/// Analyses one results set.
pub fn analysed(
    label: String,
    header: Header,
    records: Vec<RunRecord>,
    basis: Option<&str>,
) -> anyhow::Result<ResultSet> {
    let basis = basis_of(basis, &header)?;
    let analysis = analyze(&header, &records, &basis);
    Ok(ResultSet {
        label,
        header,
        records,
        analysis,
    })
}

/// Writes index.html, every chart as SVG, curves.csv and analysis.json into `dir`.
pub fn write_report(sets: &[ResultSet], dir: &Path) -> anyhow::Result<()> {
    write_report_with(sets, &[], dir)
}

/// The same, with memory sections (heatmaps, the latency ladder) after the sweeps.
pub fn write_report_with(
    sets: &[ResultSet],
    sections: &[Section],
    dir: &Path,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let write = |name: &str, bytes: &[u8]| -> anyhow::Result<()> {
        let p = dir.join(name);
        std::fs::write(&p, bytes).with_context(|| format!("writing {}", p.display()))
    };
    write(
        "index.html",
        HtmlExporter.page_with(sets, sections).as_bytes(),
    )?;
    write("curves.csv", &CsvExporter.export(sets))?;
    write("analysis.json", &JsonExporter.export(sets))?;
    for (i, set) in sets.iter().enumerate() {
        let prefix = if sets.len() > 1 {
            format!("{}-", i + 1)
        } else {
            String::new()
        };
        for c in charts(set, &prefix) {
            write(&c.file, c.svg.as_bytes())?;
        }
    }
    for c in sections.iter().flat_map(|s| &s.charts) {
        write(&c.file, c.svg.as_bytes())?;
    }
    Ok(())
}

pub fn run_analyze(args: &AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let (h, r) = load(&args.results)?;
    let set = analysed(
        args.results.display().to_string(),
        h,
        r,
        args.basis.as_deref(),
    )?;
    let sets = [set];
    let bytes = if args.json {
        JsonExporter.export(&sets)
    } else {
        TextExporter.export(&sets)
    };
    print!("{}", String::from_utf8_lossy(&bytes));
    Ok(ExitCode::SUCCESS)
}

pub fn run_report(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    let mut sets = Vec::new();
    let mut sections = Vec::new();
    for (i, p) in args.results.iter().enumerate() {
        // A sweep's results.jsonl, or a `mem ... --json` document.
        if p.extension().is_some_and(|e| e == "jsonl") {
            let (h, r) = load(p)?;
            sets.push(analysed(
                p.display().to_string(),
                h,
                r,
                args.basis.as_deref(),
            )?);
        } else {
            let text =
                std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            let doc: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{}: not JSON", p.display()))?;
            let sec = scalescope_report::mem::section(
                &p.display().to_string(),
                &doc,
                &format!("m{}-", i + 1),
            )
            .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
            sections.push(sec);
        }
    }
    write_report_with(&sets, &sections, &args.out)?;
    println!("{}", args.out.join("index.html").display());
    Ok(ExitCode::SUCCESS)
}

pub fn run_compare(args: &CompareArgs) -> anyhow::Result<ExitCode> {
    let (ha, ra) = load(&args.a)?;
    let (hb, rb) = load(&args.b)?;
    let basis = basis_of(args.basis.as_deref(), &ha)?;
    let c = compare((&ha, &ra), (&hb, &rb), &basis);
    if c.rows.is_empty() {
        bail!(
            "{} and {} share no measured point (same threads, placement and memory policy)",
            args.a.display(),
            args.b.display()
        );
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = format!(
        "A: {} ({})\nB: {} ({})\nperformance: {}; ratio = B / A (above 1: B is better)\n\n",
        args.a.display(),
        c.a_machine,
        args.b.display(),
        c.b_machine,
        basis.label()
    );
    let _ = writeln!(
        out,
        "{:<14} {:<12} {:>7} {:>12} {:>12} {:>8} {:>9}  significant",
        "placement", "mem", "threads", "A", "B", "B/A", "p"
    );
    for r in &c.rows {
        let _ = writeln!(
            out,
            "{:<14} {:<12} {:>7} {:>12.5} {:>12.5} {:>8.3} {:>9}  {}",
            r.point.placement.to_string(),
            r.point.mem.to_string(),
            r.point.threads,
            r.a_perf,
            r.b_perf,
            r.ratio,
            r.p_value.map(|p| format!("{p:.4}")).unwrap_or("-".into()),
            if r.significant { "yes" } else { "no" }
        );
    }
    for p in &c.only_in_a {
        let _ = writeln!(out, "only in A: {p}");
    }
    for p in &c.only_in_b {
        let _ = writeln!(out, "only in B: {p}");
    }
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}
