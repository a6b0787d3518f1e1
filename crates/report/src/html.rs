//! The self-contained HTML report: inline CSS and SVG, no script, no network; every
//! string from the results (command lines, host names, labels) escaped. It opens
//! with the answer ([`crate::summary`]), shows the machine once, then one section
//! per workload: its charts (a log2 or linear thread axis and each series shown or
//! hidden by pure-CSS radio buttons and checkboxes), its findings, its points.
//! And the report directory it is written into: `index.html`, every chart as its
//! own SVG, `curves.csv` and `analysis.json`, side by side so each can be used on
//! its own ([`write_dir`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::mem::Section;
use crate::svg::escape;
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
.diag{background:#fff7ec;border-left:6px solid #D55E00;padding:.4em .9em}.sentence{font-size:1.15em;font-weight:bold;margin:.3em 0}\
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

fn findings_html(set: &ResultSet) -> String {
    let mut s = format!(
        "<details open><summary><h3 style=\"display:inline\">All findings ({})</h3></summary>",
        set.analysis.findings.len()
    );
    for f in &set.analysis.findings {
        let _ = write!(
            s,
            r#"<div class="finding {}"><strong>{}</strong> <small>(confidence: {})</small><ul>"#,
            escape(&f.severity),
            escape(&f.title),
            escape(&confidence_text(&f.confidence))
        );
        for e in &f.evidence {
            let _ = write!(s, "<li>{}</li>", escape(&e.text));
        }
        s.push_str("</ul>");
        if let Some(a) = &f.advice {
            let _ = write!(s, "<p>Try: {}</p>", escape(a));
        }
        if let Some(c) = &f.check {
            let _ = write!(s, "<p>Check: {}</p>", escape(c));
        }
        s.push_str("</div>");
    }
    s.push_str("</details>");
    s
}

fn machine_html(set: &ResultSet) -> String {
    let m = &set.header.machine;
    let virtualization = m
        .virtualization
        .as_ref()
        .map(|v| v.describe())
        .unwrap_or_else(|| "not recorded".into());
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
    let mut s = String::from("<table>");
    for (k, v) in rows {
        let _ = write!(
            s,
            r#"<tr><th class="l">{}</th><td class="l">{}</td></tr>"#,
            escape(k),
            escape(&v)
        );
    }
    s.push_str("</table>");
    s
}

/// Each chart as a figure (with `class`) and its caption.
fn figures_html(charts: &[crate::Chart], class: &str) -> String {
    let mut s = String::new();
    for c in charts {
        let _ = write!(
            s,
            r#"<figure class="{class}">{}<figcaption>{}</figcaption></figure>"#,
            c.svg,
            escape(&c.title)
        );
    }
    s
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
fn toggles(set: &ResultSet, id: &str, css: &mut String) -> String {
    let many_mems = set.header.plan.mems.len() > 1;
    // Not wrapped: the inputs must be siblings of the charts for `~` to reach them.
    let mut s = String::from(r#"<b class="controls">Show: </b>"#);
    for (k, c) in set.analysis.curves.iter().enumerate() {
        let color = crate::svg::PALETTE[k % crate::svg::PALETTE.len()];
        let _ = write!(
            s,
            r#"<input type="checkbox" class="tg" id="{id}-s{k}" checked><label for="{id}-s{k}" style="color:{color}">■ {}</label>"#,
            escape(&crate::series_name(c, many_mems))
        );
        let _ = write!(
            css,
            "#{id}-s{k}:not(:checked)~.charts .bycurve .s{k}{{display:none}}"
        );
    }
    s
}

/// One workload: its title, command, charts (both axes), findings and points.
fn set_html(set: &ResultSet, i: usize, many: bool, css: &mut String) -> String {
    let prefix = if many {
        format!("{}-", i + 1)
    } else {
        String::new()
    };
    let id = format!("w{}", i + 1);
    let mut body = format!(
        r#"<section id="{id}"><h2>{}</h2><p class="src">command: <code>{}</code> · scalescope {} · results: {}</p>"#,
        escape(&crate::summary::workload_title(set)),
        escape(&command_text(set)),
        escape(&set.header.scalescope_version),
        escape(&set.label)
    );
    // The checkboxes come before the charts: the CSS reaches them as siblings.
    body += &toggles(set, &id, css);
    body.push_str(r#"<div class="charts">"#);
    body += &figures_html(&crate::threads_charts(set, &prefix, true), "bycurve xlog");
    body += &figures_html(&crate::threads_charts(set, &prefix, false), "bycurve xlin");
    body += &figures_html(&crate::other_charts(set, &prefix), "other");
    body.push_str("</div>");
    body += &findings_html(set);
    body += &points_html(set);
    body.push_str("</section>");
    body
}

fn points_html(set: &ResultSet) -> String {
    let mut s = String::from(
        r#"<h3>Points</h3><table><tr><th class="l">placement</th><th class="l">mem</th><th>threads</th><th>runs</th><th>median s</th><th>speedup</th><th>efficiency</th><th>Karp-Flatt</th></tr>"#,
    );
    for c in &set.analysis.curves {
        for p in &c.points {
            let _ = write!(
                s,
                r#"<tr><td class="l">{}</td><td class="l">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{:.0}%</td><td>{}</td></tr>"#,
                escape(&c.placement.to_string()),
                escape(&c.mem.to_string()),
                p.threads,
                p.runs,
                p.time_median_secs
                    .map(|t| format!("{t:.4}"))
                    .unwrap_or("-".into()),
                p.speedup,
                p.efficiency * 100.0,
                p.karp_flatt
                    .map(|k| format!("{k:.4}"))
                    .unwrap_or("-".into())
            );
        }
    }
    s.push_str("</table>");
    s
}

/// The machine tables, each distinct machine once.
fn machines_html(sets: &[ResultSet]) -> String {
    let mut tables: Vec<String> = sets.iter().map(machine_html).collect();
    tables.dedup();
    let mut s = String::from(r#"<section id="machine"><h2>Machine</h2>"#);
    for t in tables {
        s += &t;
    }
    s.push_str("</section>");
    s
}

/// The log2/linear switch for the thread axis (radio buttons placed before
/// `<main>`, their labels in it).
const AXIS_INPUTS: &str = r#"<input type="radio" name="xaxis" id="xlog" checked hidden><input type="radio" name="xaxis" id="xlin" hidden>"#;
const AXIS_LABELS: &str = r#"<div class="controls">Thread axis: <label for="xlog">◉ log2</label><label for="xlin">◎ linear</label></div>"#;

impl HtmlExporter {
    /// The page, with each results set's charts embedded.
    pub fn page(&self, sets: &[ResultSet]) -> String {
        self.page_with(sets, &[])
    }

    /// The page with memory-measurement sections after the sweeps.
    pub fn page_with(&self, sets: &[ResultSet], sections: &[crate::mem::Section]) -> String {
        let mut css = String::from(CSS);
        let mut body = String::new();
        if !sets.is_empty() {
            body += &crate::summary::summary_html(sets);
            body += AXIS_LABELS;
            body += &machines_html(sets);
        }
        for (i, set) in sets.iter().enumerate() {
            body += &set_html(set, i, sets.len() > 1, &mut css);
        }
        for sec in sections {
            let _ = write!(body, "<h2>{}</h2><ul>", escape(&sec.title));
            for n in &sec.notes {
                let _ = write!(body, "<li>{}</li>", escape(n));
            }
            body.push_str(r#"</ul><div class="charts">"#);
            body += &figures_html(&sec.charts, "other");
            body.push_str("</div>");
        }
        format!(
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\"><meta name=\"viewport\" content=\"width=device-width\"><title>scalescope report</title><style>{css}</style></head><body>{AXIS_INPUTS}<main><h1>scalescope report: why does it stop scaling?</h1>{body}<p><small>Generated by scalescope. One self-contained file: charts are inline SVG, the switches are CSS; the tidy data is in curves.csv beside this file.</small></p></main></body></html>\n"
        )
    }
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
            write(&c.file, c.svg.as_bytes())?;
        }
    }
    for c in sections.iter().flat_map(|s| &s.charts) {
        write(&c.file, c.svg.as_bytes())?;
    }
    Ok(out.join("index.html"))
}
