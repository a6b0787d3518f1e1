//! The self-contained HTML report: inline CSS and SVG, no script, no network; every
//! string from the results (command lines, host names, labels) escaped.

use std::fmt::Write as _;

use crate::svg::escape;
use crate::{charts, Exporter, ResultSet};

/// The report page.
pub struct HtmlExporter;

const CSS: &str = "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\
h1{font-size:1.6em}h2{border-bottom:2px solid #0072B2;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}\
th{background:#f0f4f8}td.l,th.l{text-align:left}.finding{border-left:5px solid #0072B2;padding:.3em .8em;margin:.6em 0;background:#f8fafc}\
.warning{border-color:#D55E00}.notice{border-color:#E69F00}.finding ul{margin:.2em 0}.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(480px,1fr));gap:.5em}.charts figure{margin:0}.charts svg{max-width:100%;height:auto}\
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
    let mut s = String::from("<h3>Findings</h3>");
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
        (
            "command",
            set.header
                .command
                .workload
                .clone()
                .map(|w| format!("built-in workload {w}"))
                .unwrap_or_else(|| set.header.command.argv.join(" ")),
        ),
        ("scalescope", set.header.scalescope_version.clone()),
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

/// Each chart as a figure with its caption.
fn figures_html(charts: &[crate::Chart]) -> String {
    let mut s = String::new();
    for c in charts {
        let _ = write!(
            s,
            r#"<figure id="{}">{}<figcaption>{}</figcaption></figure>"#,
            escape(&c.file),
            c.svg,
            escape(&c.title)
        );
    }
    s
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

impl HtmlExporter {
    /// The page, with each results set's charts embedded.
    pub fn page(&self, sets: &[ResultSet]) -> String {
        self.page_with(sets, &[])
    }

    /// The page with memory-measurement sections after the sweeps.
    pub fn page_with(&self, sets: &[ResultSet], sections: &[crate::mem::Section]) -> String {
        let mut body = String::new();
        for (i, set) in sets.iter().enumerate() {
            let prefix = if sets.len() > 1 {
                format!("{}-", i + 1)
            } else {
                String::new()
            };
            let _ = write!(body, "<h2>{}</h2>{}", escape(&set.label), machine_html(set));
            body += &findings_html(set);
            body.push_str(r#"<div class="charts">"#);
            body += &figures_html(&charts(set, &prefix));
            body.push_str("</div>");
            body += &points_html(set);
        }
        for sec in sections {
            let _ = write!(body, "<h2>{}</h2><ul>", escape(&sec.title));
            for n in &sec.notes {
                let _ = write!(body, "<li>{}</li>", escape(n));
            }
            body.push_str(r#"</ul><div class="charts">"#);
            body += &figures_html(&sec.charts);
            body.push_str("</div>");
        }
        format!(
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\"><title>scalescope report</title><style>{CSS}</style></head><body><h1>scalescope report: why does it stop scaling?</h1>{body}<p><small>Generated by scalescope. Charts are inline SVG; the tidy data is in curves.csv beside this file.</small></p></body></html>\n"
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
