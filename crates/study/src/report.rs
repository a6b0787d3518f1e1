//! The study's one report (`OUT/report.md`, and the same rows as
//! `OUT/report.json`): the published-vs-here table first, then what every run's
//! verification said, the findings of each sweep as `analyze` gives them, the
//! sizing and what this machine left out.

use std::path::{Path, PathBuf};

use crate::here::{rows, Here, Outputs, Row};
use crate::published::Published;
use crate::{StudyError, StudyPlan};

/// Schema of `report.json` (docs/json.md).
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// The report's content.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    pub kind: &'static str,
    pub schema_version: u32,
    pub study: crate::StudyName,
    pub citation: crate::published::Citation,
    pub machine_here: String,
    pub rows: Vec<Row>,
    /// One line per sweep or document: runs, verified, failed.
    pub verification: Vec<String>,
    /// `[step] finding`, as `analyze` words them.
    pub findings: Vec<String>,
}

/// Builds the report of the study in `dir`.
///
/// # Errors
/// A published data file that does not parse.
pub fn build(plan: &StudyPlan, dir: &Path) -> Result<Report, StudyError> {
    let published: Published = crate::published::of(plan.study)?;
    let o = Outputs::read(plan, dir);
    Ok(Report {
        kind: "scalescope.study-report",
        schema_version: REPORT_SCHEMA_VERSION,
        study: plan.study,
        citation: published.citation.clone(),
        machine_here: plan.facts.machine.clone(),
        rows: rows(plan.study, &published.figures, &o),
        verification: verification(&o),
        findings: findings(&o),
    })
}

fn verification(o: &Outputs) -> Vec<String> {
    let mut out = Vec::new();
    for (name, set) in &o.sets {
        let measured: Vec<_> = set.records.iter().collect();
        let ok = measured
            .iter()
            .filter(|r| r.status == scalescope_model::store::RunStatus::Ok)
            .count();
        let failed: Vec<String> = measured
            .iter()
            .filter(|r| r.status != scalescope_model::store::RunStatus::Ok)
            .take(3)
            .map(|r| {
                format!(
                    "{} rep {}: {}",
                    r.point,
                    r.rep,
                    r.error.as_deref().unwrap_or(r.status.label())
                )
            })
            .collect();
        let what = if set.header.command.workload.is_some() {
            "verified (ended ok)"
        } else {
            "ended ok"
        };
        let mut line = format!("{name}: {} runs, {ok} {what}", measured.len());
        if !failed.is_empty() {
            line += &format!("; not ok: {}", failed.join("; "));
        }
        out.push(line);
    }
    for (name, doc) in &o.docs {
        if let Some(v) = doc.get("verdict").and_then(|v| v.as_str()) {
            out.push(format!("{name}: verification {v}"));
        }
    }
    for (name, why) in &o.missing {
        out.push(format!("{name}: no output: {why}"));
    }
    out
}

fn findings(o: &Outputs) -> Vec<String> {
    let mut out = Vec::new();
    for (name, set) in &o.sets {
        for f in &set.analysis.findings {
            let evidence = f
                .evidence
                .last()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default();
            out.push(format!("[{name}] {}{evidence}", f.title));
        }
    }
    out
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The report as Markdown.
pub fn markdown(r: &Report, plan: &StudyPlan, secs: Option<f64>) -> String {
    let c = &r.citation;
    let mut out = format!(
        "# scalescope study {}\n\n{}\n\n",
        r.study,
        r.study.question()
    );
    out += &format!("Published: {}.\nTheir machine: {}.\nTheir workload: {}.\nCopy held by the project: {}.\n\nThis machine: {}.\n\n", c.source, c.machine, c.workload, c.seed, r.machine_here);
    out += "## Published vs here\n\n| figure | published (their machine) | here | comparison |\n|---|---|---|---|\n";
    for row in &r.rows {
        let (here, cmp) = match &row.here {
            Here::Measured { value, comparison } => (value.clone(), comparison.clone()),
            Here::CannotOccur { why } => ("cannot occur here".to_string(), why.clone()),
            Here::Unavailable { why } => ("unavailable here".to_string(), why.clone()),
        };
        out += &format!(
            "| {} | {} ({}) | {} | {} |\n",
            cell(&row.figure.what),
            cell(&row.figure.published),
            cell(&row.figure.at),
            cell(&here),
            cell(&cmp)
        );
    }
    out += "\n## Verification\n\n";
    out += &list(&r.verification);
    out += "\n## Findings (as `scalescope analyze` gives them)\n\n";
    out += &if r.findings.is_empty() {
        "- none\n".to_string()
    } else {
        list(&r.findings)
    };
    out += "\n## Sizing\n\n";
    out += &list(&plan.sizing);
    out += &format!(
        "\nBudget {:.0} s, estimated {:.0} s",
        plan.budget_secs,
        plan.estimate_secs()
    );
    out += &secs
        .map(|s| format!(", this session took {s:.0} s.\n"))
        .unwrap_or_else(|| ".\n".into());
    if !plan.notes.is_empty() {
        out += "\n## Not on this machine\n\n";
        out += &list(&plan.notes);
    }
    out += "\n## Steps\n\n";
    out += &list(
        &plan
            .steps
            .iter()
            .map(|s| format!("{}: {} — `{}`", s.name, s.what, s.command_line()))
            .collect::<Vec<_>>(),
    );
    out
}

/// The published-vs-here table for a terminal: each figure, then both values.
pub fn summary_text(r: &Report) -> String {
    let mut out = String::from("Published vs here:\n");
    for row in &r.rows {
        let here = match &row.here {
            Here::Measured { value, comparison } => format!("{value} — {comparison}"),
            Here::CannotOccur { why } => format!("cannot occur here: {why}"),
            Here::Unavailable { why } => format!("unavailable here: {why}"),
        };
        out += &format!(
            "  {}\n      published: {}\n      here: {here}\n",
            row.figure.what, row.figure.published
        );
    }
    out
}

fn list(items: &[String]) -> String {
    items.iter().map(|i| format!("- {i}\n")).collect()
}

/// Writes `report.md` and `report.json` in `dir`; the Markdown's path.
///
/// # Errors
/// I/O.
pub fn write(
    r: &Report,
    plan: &StudyPlan,
    dir: &Path,
    secs: Option<f64>,
) -> Result<PathBuf, StudyError> {
    let md = dir.join("report.md");
    crate::write_in(dir, "report.md", markdown(r, plan, secs).as_bytes())?;
    let text = serde_json::to_string_pretty(r).unwrap_or_default();
    crate::write_in(dir, "report.json", (text + "\n").as_bytes())?;
    Ok(md)
}
