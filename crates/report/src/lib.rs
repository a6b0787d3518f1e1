//! Turning an analysed sweep into things people read: exporters behind one
//! [`Exporter`] trait that returns bytes (terminal text, tidy CSV, JSON, the HTML
//! report), and the SVG charts the report embeds and also writes on their own.
//! Everything is a pure function of the results, so every format is snapshot-tested.

pub mod compare;
pub mod dir;
pub mod evidence;
pub mod html;
pub mod machine;
pub mod mem;
pub mod svg;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use scalescope_analysis::summary::{csv_field, opt};
use scalescope_analysis::{Analysis, Basis};
use scalescope_results::store::{Header, RunRecord};

use svg::{Band, LineChart, Series, PALETTE};

/// One analysed results file.
#[derive(Debug, Clone)]
pub struct ResultSet {
    /// Where it came from (a path or a name), shown as its heading.
    pub label: String,
    pub header: Header,
    pub records: Vec<RunRecord>,
    pub analysis: Analysis,
    /// The runs' series files, by the name their evidence gives
    /// ([`ResultSet::with_series`] loads them).
    pub series: BTreeMap<String, scalescope_results::evidence::Series>,
}

impl ResultSet {
    /// Analyses `records` on `basis` and keeps them together under `label`.
    pub fn analysed(
        label: String,
        header: Header,
        records: Vec<RunRecord>,
        basis: &Basis,
    ) -> ResultSet {
        ResultSet::analysed_with(label, header, records, basis, &[])
    }

    /// Analysed with measured bandwidth ceilings.
    pub fn analysed_with(
        label: String,
        header: Header,
        records: Vec<RunRecord>,
        basis: &Basis,
        ceilings: &[scalescope_analysis::ceiling::Ceiling],
    ) -> ResultSet {
        let analysis = scalescope_analysis::analyze_with(&header, &records, basis, ceilings);
        ResultSet {
            label,
            header,
            records,
            analysis,
            series: BTreeMap::new(),
        }
    }

    /// Loads the series files the runs name, from the results directory `dir`; a
    /// missing or unreadable file leaves its run without a series (the totals in
    /// the run record stay) and is returned as a problem.
    pub fn with_series(mut self, dir: &std::path::Path) -> (ResultSet, Vec<String>) {
        let mut problems = Vec::new();
        for r in &self.records {
            let Some(name) = r.evidence.as_ref().and_then(|e| e.series_file.as_ref()) else {
                continue;
            };
            match scalescope_results::evidence::read_series(&dir.join(name)) {
                Ok(s) => {
                    self.series.insert(name.clone(), s);
                }
                Err(e) => problems.push(e.to_string()),
            }
        }
        (self, problems)
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
                a.basis.label()
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
                    let _ = writeln!(
                        out,
                        "{:<14} {:<12} {:>7} {:>9.3} {:>8.3} {:>5.0}% {:>8}  {uses}",
                        c.placement.to_string(),
                        c.mem.to_string(),
                        p.threads,
                        p.speedup,
                        p.speedup_sd,
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
                for e in &f.evidence {
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
        out.into_bytes()
    }
}

impl Exporter for CsvExporter {
    fn extension(&self) -> &'static str {
        "csv"
    }
    fn export(&self, sets: &[ResultSet]) -> Vec<u8> {
        let mut out = String::from("results,placement,mem,threads,runs,perf,speedup,speedup_sd,efficiency,karp_flatt,time_median_secs,time_ci95_lo_secs,time_ci95_hi_secs,metric_median,packages,numa_nodes,cores,smt_shared\n");
        for set in sets {
            for c in &set.analysis.curves {
                for p in &c.points {
                    let u = p.usage;
                    let _ = writeln!(
                        out,
                        "{},{},{},{},{},{:.6},{:.6},{:.6},{:.6},{},{},{},{},{},{},{},{},{}",
                        csv_field(&set.label),
                        csv_field(&c.placement.to_string()),
                        csv_field(&c.mem.to_string()),
                        p.threads,
                        p.runs,
                        p.perf,
                        p.speedup,
                        p.speedup_sd,
                        p.efficiency,
                        opt(p.karp_flatt),
                        opt(p.time_median_secs),
                        opt(p.time_ci95_secs.map(|c| c.0)),
                        opt(p.time_ci95_secs.map(|c| c.1)),
                        opt(p.metric_median),
                        u.map(|u| u.packages.to_string()).unwrap_or_default(),
                        u.map(|u| u.numa_nodes.to_string()).unwrap_or_default(),
                        u.map(|u| u.cores.to_string()).unwrap_or_default(),
                        u.map(|u| u.smt_shared.to_string()).unwrap_or_default(),
                    );
                }
            }
        }
        out.into_bytes()
    }
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

/// Picks a chart's y value (and whisker) from a curve point.
type YOf = dyn Fn(&scalescope_analysis::CurvePoint) -> Option<(f64, Option<(f64, f64)>)>;

/// A chart written on its own and embedded in the report.
#[derive(Debug, Clone)]
pub struct Chart {
    /// File name (`speedup.svg`).
    pub file: String,
    pub title: String,
    pub svg: String,
}

fn series_name(c: &scalescope_analysis::Curve, many_mems: bool) -> String {
    if many_mems {
        format!("{} / {}", c.placement, c.mem)
    } else {
        c.placement.to_string()
    }
}

/// Topology regions of the first curve's placement, shaded on the x axis: one band
/// per thread count where something changes, labelled briefly (the full sentence
/// is the band's tooltip).
fn bands(a: &Analysis, x_max: f64) -> Vec<Band> {
    use scalescope_analysis::events::EventKind;
    let Some(c) = a.curves.first() else {
        return Vec::new();
    };
    let mut out: Vec<(usize, Vec<String>, Vec<String>)> = Vec::new();
    for e in c.events.iter().filter(|e| (e.threads as f64) <= x_max) {
        let short = match e.kind {
            EventKind::NewPackage => "new package",
            EventKind::NewNumaNode => "new NUMA node",
            EventKind::SmtSharing => "SMT sharing",
            _ => continue,
        };
        match out.iter_mut().find(|b| b.0 == e.threads) {
            Some(b) => {
                b.1.push(short.into());
                b.2.push(e.description.clone());
            }
            None => out.push((e.threads, vec![short.into()], vec![e.description.clone()])),
        }
    }
    out.into_iter()
        .map(|(t, short, long)| Band {
            from: t as f64 - 0.5,
            to: x_max,
            label: format!("{}: {} (≥{t})", c.placement, short.join(", ")),
            tooltip: long.join("; "),
        })
        .collect()
}

/// The charts for one results set: speedup (with the ideal line and topology
/// regions), efficiency, time with 95% whiskers, the figure of merit, the topology.
pub fn charts(set: &ResultSet, prefix: &str) -> Vec<Chart> {
    let a = &set.analysis;
    let many_mems = set.header.plan.mems.len() > 1;
    let x_max = a
        .curves
        .iter()
        .flat_map(|c| c.points.iter())
        .map(|p| p.threads as f64)
        .fold(1.0, f64::max);
    let per_curve = |f: &YOf| per_curve_series(a, many_mems, f);
    let chart = |file: &str, title: &str, line: LineChart| Chart {
        file: format!("{prefix}{file}"),
        title: title.to_string(),
        svg: line.to_svg(),
    };
    let threads_chart = |title: String, y_label: &str, series, bands| LineChart {
        title,
        x_label: "threads".into(),
        y_label: y_label.to_string(),
        series,
        bands,
        y_from_zero: true,
    };
    let mut out = vec![
        chart(
            "speedup.svg",
            "Speedup",
            threads_chart(
                format!("Speedup ({})", a.basis.label()),
                "speedup",
                speedup_series(a, many_mems, x_max),
                bands(a, x_max),
            ),
        ),
        chart(
            "efficiency.svg",
            "Parallel efficiency",
            threads_chart(
                "Parallel efficiency".into(),
                "efficiency",
                per_curve(&|p| Some((p.efficiency, None))),
                bands(a, x_max),
            ),
        ),
        chart(
            "time.svg",
            "Wall time",
            threads_chart(
                "Wall time (median, 95% CI)".into(),
                "seconds",
                per_curve(&|p| p.time_median_secs.map(|t| (t, p.time_ci95_secs))),
                Vec::new(),
            ),
        ),
    ];
    if let Basis::Metric { name, .. } = &a.basis {
        out.push(chart(
            "metric.svg",
            &format!("Figure of merit: {name}"),
            threads_chart(
                format!("Figure of merit: {name} (median)"),
                name,
                per_curve(&|p| p.metric_median.map(|m| (m, None))),
                bands(a, x_max),
            ),
        ));
    }
    out.extend(evidence::over_time_chart(set, prefix));
    out.extend(evidence::traffic_chart(set, prefix));
    out.push(Chart {
        file: format!("{prefix}topology.svg"),
        title: "Topology".into(),
        svg: svg::topology_picture(&set.header.machine.topology),
    });
    out
}

/// One series per curve, with the y value (and whisker) `f` picks from each point.
fn per_curve_series(a: &Analysis, many_mems: bool, f: &YOf) -> Vec<Series> {
    a.curves
        .iter()
        .enumerate()
        .map(|(i, c)| Series {
            name: series_name(c, many_mems),
            points: c
                .points
                .iter()
                .filter_map(|p| f(p).map(|(y, w)| (p.threads as f64, y, w)))
                .collect(),
            color: PALETTE[i % PALETTE.len()].to_string(),
            dashed: false,
        })
        .collect()
}

/// Speedup per curve with one-standard-deviation whiskers, and the ideal line.
fn speedup_series(a: &Analysis, many_mems: bool, x_max: f64) -> Vec<Series> {
    let mut speedup = per_curve_series(a, many_mems, &|p| {
        Some((
            p.speedup,
            Some((p.speedup - p.speedup_sd, p.speedup + p.speedup_sd)),
        ))
    });
    if let Some(c) = a.curves.first() {
        let b = c.baseline_threads as f64;
        speedup.push(Series {
            name: "ideal".into(),
            points: vec![(b, 1.0, None), (x_max, x_max / b, None)],
            color: "#888888".into(),
            dashed: true,
        });
    }
    speedup
}
