//! Turning an analysed sweep into things people read: exporters behind one
//! [`Exporter`] trait that returns bytes (terminal text, tidy CSV, JSON, the HTML
//! report), and the SVG charts the report embeds and also writes on their own.
//! Everything is a pure function of the results, so every format is snapshot-tested.

mod axis;
mod charts;
pub mod compare;
pub mod evidence;
pub mod heatmap;
pub mod html;
pub mod kernels;
pub mod machine;
pub mod markup;
pub mod mem;
pub mod nodes;
pub mod predict;
pub mod summary;
pub mod svg;
pub mod topo_svg;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use scalescope_analysis::{Analysis, Basis};
use scalescope_model::store::{Header, RunRecord};
use scalescope_model::tidy;

pub use charts::{
    charts, event_bands, other_charts, picture_threads, speedup_chart, threads_charts, used_cpus,
    Chart,
};

/// One analysed results file.
#[derive(Debug, Clone)]
pub struct ResultSet {
    /// Where it came from (a path or a name), shown as its heading.
    pub label: String,
    pub header: Header,
    pub records: Vec<RunRecord>,
    pub analysis: Analysis,
    /// The runs' series files, by the name their evidence gives
    /// ([`ResultSet::with_series`]).
    pub series: BTreeMap<String, scalescope_model::evidence::Series>,
}

impl ResultSet {
    /// A finished analysis of `records`, kept with them under `label`; the report
    /// renders it and decides nothing about the data.
    pub fn new(label: String, header: Header, records: Vec<RunRecord>, analysis: Analysis) -> Self {
        ResultSet {
            label,
            header,
            records,
            analysis,
            series: BTreeMap::new(),
        }
    }

    /// With the runs' series, as [`scalescope_model::evidence::read_all_series`]
    /// loaded them.
    pub fn with_series(
        mut self,
        series: BTreeMap<String, scalescope_model::evidence::Series>,
    ) -> ResultSet {
        self.series = series;
        self
    }
}

/// Bytes in one format.
pub trait Exporter {
    /// File extension of the output (`txt`, `csv`, `json`, `html`).
    fn extension(&self) -> &'static str;
    fn export(&self, sets: &[ResultSet]) -> Vec<u8>;
}

/// Curves and findings for a terminal.
pub struct TextExporter;
/// One row per measured point of every curve.
pub struct CsvExporter;
/// The analyses as JSON (`{"schema_version": 1, "results": [...]}`).
pub struct JsonExporter;

impl Exporter for TextExporter {
    fn extension(&self) -> &'static str {
        "txt"
    }
    fn export(&self, sets: &[ResultSet]) -> Vec<u8> {
        let mut out = String::new();
        for set in sets {
            let a = &set.analysis;
            let _ = writeln!(
                out,
                "{}\nmachine: {}\nperformance: {}\n",
                set.label,
                a.machine,
                scalescope_analysis::basis_rule::statement(&a.basis, &set.header, &set.records)
            );
            let _ = writeln!(
                out,
                "{:<14} {:<12} {:>7} {:>9} {:>8} {:>6} {:>8}  uses",
                "placement", "mem", "threads", "speedup", "± sd", "eff", "K-F"
            );
            for c in &a.curves {
                for p in &c.points {
                    let uses = p
                        .usage
                        .map(|u| {
                            format!(
                                "{} pkg, {} node, {} core{}",
                                u.packages,
                                u.numa_nodes,
                                u.cores,
                                if u.smt_shared { ", SMT" } else { "" }
                            )
                        })
                        .unwrap_or_default();
                    // A curve over nodes: its ranks per node, and each point's nodes.
                    let uses = match c.ranks_per_node {
                        Some(r) => {
                            let n = p.threads / r.max(1);
                            format!("{n} node{} x {r} ranks", if n == 1 { "" } else { "s" })
                        }
                        None => uses,
                    };
                    let _ = writeln!(
                        out,
                        "{:<14} {:<12} {:>7} {:>9.3} {:>8} {:>5.0}% {:>8}  {uses}",
                        c.placement.to_string(),
                        c.mem.to_string(),
                        p.threads,
                        p.speedup,
                        spread(p),
                        p.efficiency * 100.0,
                        p.karp_flatt
                            .map(|k| format!("{k:.4}"))
                            .unwrap_or("-".into()),
                    );
                }
            }
            out += &evidence::text(set);
            let _ = writeln!(out, "\nFindings:");
            for f in &a.findings {
                let _ = writeln!(out, "  [{}] {}", f.severity, f.title);
                let _ = writeln!(
                    out,
                    "      confidence: {}",
                    html::confidence_text(&f.confidence)
                );
                // Evidence that is the title's own sentence is said once.
                for e in f.evidence.iter().filter(|e| e.to_string() != f.title) {
                    let _ = writeln!(out, "      {e}");
                }
                if let Some(adv) = &f.advice {
                    let _ = writeln!(out, "      try: {adv}");
                }
                if let Some(c) = &f.check {
                    let _ = writeln!(out, "      check: {c}");
                }
            }
            out.push('\n');
        }
        terminal_text(&out).into_bytes()
    }
}

/// Text for a terminal: control characters other than line ends and tabs (a
/// terminal escape in a directory name, a metric's name or a program's error
/// read back from a results file) written as escapes, never sent to the
/// terminal.
pub fn terminal_text(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A point's speedup spread for the run table: one run has none to state (not
/// a spread of 0).
fn spread(p: &scalescope_analysis::CurvePoint) -> String {
    if p.runs >= 2 {
        format!("{:.3}", p.speedup_sd)
    } else {
        "-".into()
    }
}

impl Exporter for CsvExporter {
    fn extension(&self) -> &'static str {
        "csv"
    }
    /// `curves.csv` ([`scalescope_model::tidy::CURVES_COLUMNS`]), through the `csv`
    /// crate's quoting; numbers in their shortest exact form, so `import` reads every
    /// value back as written.
    fn export(&self, sets: &[ResultSet]) -> Vec<u8> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut rows = vec![tidy::CURVES_COLUMNS.map(String::from).to_vec()];
        for set in sets {
            let basis = match &set.analysis.basis {
                Basis::Time => "time".to_string(),
                Basis::Metric { name, .. } => format!("metric:{name}"),
            };
            for c in &set.analysis.curves {
                rows.extend(c.points.iter().map(|p| curve_row(&set.label, c, p, &basis)));
            }
        }
        for row in rows {
            // Writing into a Vec cannot fail.
            let _ = w.write_record(&row);
        }
        w.into_inner().unwrap_or_default()
    }
}

/// One `curves.csv` row. A time that is not positive (a curve imported without
/// seconds) was not measured and is left empty.
fn curve_row(
    label: &str,
    c: &scalescope_analysis::Curve,
    p: &scalescope_analysis::CurvePoint,
    basis: &str,
) -> Vec<String> {
    let u = p.usage;
    let time = p.time_median_secs.filter(|t| *t > 0.0);
    let ci = p.time_ci95_secs.filter(|_| time.is_some());
    vec![
        label.to_string(),
        c.placement.to_string(),
        c.mem.to_string(),
        p.threads.to_string(),
        p.runs.to_string(),
        tidy::number(p.perf),
        tidy::number(p.speedup),
        tidy::number(p.speedup_sd),
        tidy::number(p.efficiency),
        tidy::opt_number(p.karp_flatt),
        tidy::opt_number(time),
        tidy::opt_number(ci.map(|c| c.0)),
        tidy::opt_number(ci.map(|c| c.1)),
        tidy::opt_number(p.metric_median),
        tidy::opt_text(u.map(|u| u.packages)),
        tidy::opt_text(u.map(|u| u.numa_nodes)),
        tidy::opt_text(u.map(|u| u.cores)),
        tidy::opt_text(u.map(|u| u.smt_shared)),
        basis.to_string(),
    ]
}

impl Exporter for JsonExporter {
    fn extension(&self) -> &'static str {
        "json"
    }
    fn export(&self, sets: &[ResultSet]) -> Vec<u8> {
        let results: Vec<serde_json::Value> = sets
            .iter()
            .map(|s| serde_json::json!({"label": s.label, "analysis": s.analysis}))
            .collect();
        let doc = serde_json::json!({"schema_version": scalescope_analysis::ANALYSIS_SCHEMA_VERSION, "results": results});
        let mut v = serde_json::to_vec_pretty(&doc).unwrap_or_default();
        v.push(b'\n');
        v
    }
}
