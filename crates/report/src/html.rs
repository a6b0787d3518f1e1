//! The self-contained HTML report: inline CSS and SVG, no script, no network; every
//! string from the results (command lines, host names, labels) escaped, since the
//! page is written through [`crate::markup`]. It opens
//! with the answer ([`crate::summary`]), shows the machine once, then one section
//! per workload: its charts (a log2 or linear thread axis and each series shown or
//! hidden by pure-CSS radio buttons and checkboxes), its findings, its points.
//! And the report directory it is written into: `index.html`, every chart as its
//! own SVG, `curves.csv` and `analysis.json`, side by side so each can be used on
//! its own ([`write_dir`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::markup::{el, Markup};
use crate::mem::Section;
use crate::{charts, CsvExporter, Exporter, JsonExporter, ResultSet};

/// The report page.
pub struct HtmlExporter;

const CSS: &str = "body{font-family:sans-serif;font-size:16px;max-width:1500px;margin:1em auto;padding:0 1em;color:#222}\
h1{font-size:1.5em;margin:.2em 0}h2{border-bottom:2px solid #0072B2;padding-bottom:.2em;margin-top:1.5em}h3{margin:.3em 0}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}\
th{background:#f0f4f8}td.l,th.l{text-align:left}.finding{border-left:5px solid #0072B2;padding:.3em .8em;margin:.6em 0;background:#f8fafc}\
.warning{border-color:#D55E00}.notice{border-color:#E69F00}.finding ul{margin:.2em 0}\
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(720px,1fr));gap:.5em}figure{margin:0}svg{max-width:100%;height:auto}\
.answer{display:grid;grid-template-columns:minmax(300px,1fr) 720px;gap:1em;align-items:start;margin:.5em 0}\
.diag{background:#fff7ec;border-left:6px solid #D55E00;padding:.4em .9em}.quality{border-top:1px solid #E69F00;margin-top:.5em}.sentence{font-size:1.15em;font-weight:bold;margin:.3em 0}\
.machine{margin:.3em 0;color:#333}.controls{margin:.3em 0 .6em}.controls label{margin-right:1em;cursor:pointer}\
figcaption{font-size:14px;color:#444}.src{color:#444;font-size:14px}input.tg{margin-left:.2em}\
#xlog:checked~main .xlin,#xlin:checked~main .xlog{display:none}\
code{background:#f3f3f3;padding:0 .2em}";

/// "high (0.99)", "unknown", with what lowered it.
pub(crate) fn confidence_text(c: &scalescope_analysis::Confidence) -> String {
    let mut s = c.label.clone();
    if let Some(v) = c.value {
        s += &format!(" ({v:.2})");
    }
    if !c.lowered_by.is_empty() {
        s += &format!("; lowered by: {}", c.lowered_by.join("; "));
    }
    s
}

fn findings_html(set: &ResultSet) -> Markup {
    let mut inner = Markup::from_iter([el("summary").child(
        el("h3")
            .attr("style", "display:inline")
            .text(&format!("All findings ({})", set.analysis.findings.len())),
    )]);
    for f in &set.analysis.findings {
        inner.push(finding_html(f));
    }
    el("details").flag("open").child(inner)
}

/// One finding: its title, confidence, evidence, advice and check.
fn finding_html(f: &scalescope_analysis::Finding) -> Markup {
    let mut m = Markup::from_iter([
        el("strong").text(&f.title),
        Markup::trusted(" "),
        el("small").text(&format!("(confidence: {})", confidence_text(&f.confidence))),
        el("ul").children(f.evidence.iter().map(|e| el("li").text(&e.text))),
    ]);
    if let Some(a) = &f.advice {
        m.push(el("p").text(&format!("Try: {a}")));
    }
    if let Some(c) = &f.check {
        m.push(el("p").text(&format!("Check: {c}")));
    }
    el("div")
        .attr("class", format!("finding {}", f.severity))
        .child(m)
}

fn machine_html(set: &ResultSet) -> Markup {
    let m = &set.header.machine;
    let virtualization = m
        .virtualization
        .as_ref()
        .map(|v| v.describe())
        .unwrap_or_else(|| match set.header.command.kind.as_str() {
            "imported" => "unknown (imported: nothing of that machine was checked)".into(),
            _ => "not recorded".into(),
        });
    let rows = [
        ("machine", m.topology.summary()),
        ("virtualization", virtualization),
        (
            "CPU model",
            m.cpu_model.clone().unwrap_or_else(|| "unknown".into()),
        ),
        ("host", m.hostname.clone()),
        ("kernel", m.kernel.clone()),
        ("frequency governor", m.frequency_governor.clone()),
        ("SMT", m.smt.clone()),
        ("transparent hugepages", m.transparent_hugepages.clone()),
        ("NUMA balancing", m.numa_balancing.clone()),
        ("load average at start", m.load_average.clone()),
    ];
    el("table").children(rows.iter().map(|(k, v)| {
        el("tr").children([
            el("th").attr("class", "l").text(k),
            el("td").attr("class", "l").text(v),
        ])
    }))
}

/// Each chart as a figure (with `class`) and its caption.
fn figures_html(charts: &[crate::Chart], class: &str) -> Markup {
    charts
        .iter()
        .map(|c| {
            el("figure")
                .attr("class", class)
                .children([c.svg.clone(), el("figcaption").text(&c.title)])
        })
        .collect()
}

/// The command a set ran, in words.
fn command_text(set: &ResultSet) -> String {
    let c = &set.header.command;
    match &c.workload {
        Some(w) => format!("built-in workload {w}"),
        None => c.argv.join(" "),
    }
}

/// One checkbox per curve (checked: shown) and the CSS that hides a curve's
/// series, regions and knees in this section's charts when it is unchecked.
fn toggles(set: &ResultSet, id: &str, css: &mut String) -> Markup {
    let many_mems = set.header.plan.mems.len() > 1;
    // Not wrapped: the inputs must be siblings of the charts for `~` to reach them.
    let mut s = Markup::from_iter([el("b").attr("class", "controls").text("Show: ")]);
    for (k, c) in set.analysis.curves.iter().enumerate() {
        let color = crate::svg::PALETTE[k % crate::svg::PALETTE.len()];
        let input = format!("{id}-s{k}");
        s.push(
            el("input")
                .attr("type", "checkbox")
                .attr("class", "tg")
                .attr("id", &input)
                .flag("checked")
                .void(),
        );
        s.push(
            el("label")
                .attr("for", &input)
                .attr("style", format!("color:{color}"))
                .text(&format!("■ {}", crate::charts::series_name(c, many_mems))),
        );
        // The ids are made here (`w1-s0`): no data reaches the stylesheet.
        let _ = write!(
            css,
            "#{id}-s{k}:not(:checked)~.charts .bycurve .s{k}{{display:none}}"
        );
    }
    s
}

/// One workload: its title, command, charts (both axes), findings and points.
fn set_html(set: &ResultSet, i: usize, many: bool, css: &mut String) -> Markup {
    let prefix = if many {
        format!("{}-", i + 1)
    } else {
        String::new()
    };
    let id = format!("w{}", i + 1);
    let source = format!(
        " · scalescope {} · results: {}",
        set.header.scalescope_version, set.label
    );
    el("section").attr("id", &id).children([
        el("h2").text(&crate::summary::workload_title(set)),
        el("p").attr("class", "src").children([
            Markup::text("command: "),
            el("code").text(&command_text(set)),
            Markup::text(&source),
        ]),
        // The checkboxes come before the charts: the CSS reaches them as siblings.
        toggles(set, &id, css),
        el("div").attr("class", "charts").children([
            figures_html(&crate::threads_charts(set, &prefix, true), "bycurve xlog"),
            figures_html(&crate::threads_charts(set, &prefix, false), "bycurve xlin"),
            figures_html(&crate::other_charts(set, &prefix), "other"),
        ]),
        findings_html(set),
        points_html(set),
        crate::nodes::html(&set.header.plan.points(), &set.records),
    ])
}

fn points_html(set: &ResultSet) -> Markup {
    let head = [
        "placement",
        "mem",
        "threads",
        "runs",
        "median s",
        "speedup",
        "efficiency",
        "Karp-Flatt",
    ];
    let mut rows = Markup::from_iter([el("tr").children(head.iter().enumerate().map(|(i, h)| {
        let th = el("th");
        if i < 2 { th.attr("class", "l") } else { th }.text(h)
    }))]);
    for c in &set.analysis.curves {
        for p in &c.points {
            let cells = [
                p.threads.to_string(),
                p.runs.to_string(),
                p.time_median_secs
                    .map(|t| format!("{t:.4}"))
                    .unwrap_or("-".into()),
                format!("{:.2}", p.speedup),
                format!("{:.0}%", p.efficiency * 100.0),
                p.karp_flatt
                    .map(|k| format!("{k:.4}"))
                    .unwrap_or("-".into()),
            ];
            let mut tr = Markup::from_iter([
                el("td").attr("class", "l").text(&c.placement.to_string()),
                el("td").attr("class", "l").text(&c.mem.to_string()),
            ]);
            tr.push(cells.iter().map(|v| el("td").text(v)).collect());
            rows.push(el("tr").child(tr));
        }
    }
    Markup::from_iter([el("h3").text("Points"), el("table").child(rows)])
}

/// The machine tables, each distinct machine once.
fn machines_html(sets: &[ResultSet]) -> Markup {
    let mut tables: Vec<Markup> = sets.iter().map(machine_html).collect();
    tables.dedup();
    el("section")
        .attr("id", "machine")
        .children(std::iter::once(el("h2").text("Machine")).chain(tables))
}

/// The log2/linear switch for the thread axis (radio buttons placed before
/// `<main>`, their labels in it).
const AXIS_INPUTS: &str = r#"<input type="radio" name="xaxis" id="xlog" checked hidden><input type="radio" name="xaxis" id="xlin" hidden>"#;
const AXIS_LABELS: &str = r#"<div class="controls">Thread axis: <label for="xlog">◉ log2</label><label for="xlin">◎ linear</label></div>"#;
const HEAD: &str = r#"<meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"><meta name="viewport" content="width=device-width"><title>scalescope report</title>"#;
const FOOT: &str = "<p><small>Generated by scalescope. One self-contained file: charts are inline SVG, the switches are CSS; the tidy data is in curves.csv beside this file.</small></p>";

impl HtmlExporter {
    /// The page, with each results set's charts embedded.
    pub fn page(&self, sets: &[ResultSet]) -> String {
        self.page_with(sets, &[])
    }

    /// The page with memory-measurement sections after the sweeps.
    pub fn page_with(&self, sets: &[ResultSet], sections: &[crate::mem::Section]) -> String {
        let mut css = String::from(CSS);
        let mut body =
            Markup::from_iter([el("h1").text("scalescope report: why does it stop scaling?")]);
        if !sets.is_empty() {
            body.push(crate::summary::summary_html(sets));
            body.push(Markup::trusted(AXIS_LABELS));
            body.push(machines_html(sets));
        }
        for (i, set) in sets.iter().enumerate() {
            body.push(set_html(set, i, sets.len() > 1, &mut css));
        }
        for sec in sections {
            body.push(section_html(sec));
        }
        body.push(Markup::trusted(FOOT));
        // Escaped like any text: the stylesheet holds no character that escaping changes
        // (tested), so it reaches the browser as written.
        let head = Markup::from_iter([Markup::trusted(HEAD), el("style").text(&css)]);
        let page = el("html").attr("lang", "en").children([
            el("head").child(head),
            el("body").children([Markup::trusted(AXIS_INPUTS), el("main").child(body)]),
        ]);
        format!("<!DOCTYPE html>{page}\n")
    }
}

/// A memory-measurement section: its title, notes and charts.
fn section_html(sec: &Section) -> Markup {
    Markup::from_iter([
        el("h2").text(&sec.title),
        el("ul").children(sec.notes.iter().map(|n| el("li").text(n))),
        el("div")
            .attr("class", "charts")
            .child(figures_html(&sec.charts, "other")),
    ])
}

impl Exporter for HtmlExporter {
    fn extension(&self) -> &'static str {
        "html"
    }
    fn export(&self, sets: &[ResultSet]) -> Vec<u8> {
        self.page(sets).into_bytes()
    }
}

/// A report file that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("writing {}", path.display())]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Writes the whole report for `sets` (and memory `sections` after them) into `dir`,
/// creating it if needed; returns the path of `index.html`.
///
/// # Errors
/// [`WriteError`] naming the file or directory that could not be written.
pub fn write_dir(
    sets: &[ResultSet],
    sections: &[Section],
    dir: &Path,
) -> Result<PathBuf, WriteError> {
    let out = scalescope_files::OutDir::create(dir).map_err(|e| WriteError::of(dir, e))?;
    write_into(sets, sections, &out)
}

impl WriteError {
    fn of(path: &Path, e: scalescope_files::FileError) -> WriteError {
        WriteError {
            path: path.to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        }
    }
}

/// As [`write_dir`], into a directory already owned (a results directory's
/// `report/`): every file is written aside and renamed, so a link planted under
/// a report file's name is replaced, never written through.
///
/// # Errors
/// [`WriteError`] naming the file that could not be written.
pub fn write_into(
    sets: &[ResultSet],
    sections: &[Section],
    out: &scalescope_files::OutDir,
) -> Result<PathBuf, WriteError> {
    let write = |name: &str, bytes: &[u8]| -> Result<(), WriteError> {
        out.write_file(name, bytes)
            .map_err(|e| WriteError::of(&out.join(name), e))
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
            write(&c.file, c.svg.as_str().as_bytes())?;
        }
    }
    for c in sections.iter().flat_map(|s| &s.charts) {
        write(&c.file, c.svg.as_str().as_bytes())?;
    }
    Ok(out.join("index.html"))
}

#[cfg(test)]
mod tests {
    /// The stylesheet goes through the page as escaped text: escaping must leave it as
    /// written (no `&`, `<`, `>` or quotes in it).
    #[test]
    fn the_stylesheet_is_unchanged_by_escaping() {
        assert_eq!(crate::markup::escape(super::CSS), super::CSS);
    }
}
