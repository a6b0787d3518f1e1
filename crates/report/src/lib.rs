//! Turning an analysed sweep into things people read: exporters behind one
//! [`Exporter`] trait that returns bytes (terminal text, tidy CSV, JSON, the HTML
//! report), and the SVG charts the report embeds and also writes on their own.
//! Everything is a pure function of the results, so every format is snapshot-tested.

pub mod compare;
pub mod evidence;
pub mod html;
pub mod kernels;
pub mod machine;
pub mod mem;
pub mod predict;
pub mod summary;
pub mod svg;
pub mod topo_svg;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use scalescope_analysis::summary::{csv_field, opt};
use scalescope_analysis::{Analysis, Basis};
use scalescope_results::store::{Header, RunRecord};

use svg::{Band, LineChart, Marker, Series, PALETTE};

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
            match scalescope_results::evidence::read_series(dir, name) {
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

/// Every curve's topology regions, each in its curve's lane and colour: one
/// region from each thread count where something changes to the next such count
/// (or the end), labelled briefly (the full sentences are the tooltip).
fn bands(a: &Analysis, x_max: f64) -> Vec<Band> {
    let curves = a
        .curves
        .iter()
        .map(|c| (c.placement.to_string(), c.events.as_slice()));
    event_bands(curves, x_max)
}

/// The regions of each (placement, its events), in lane i for the i-th.
pub fn event_bands<'a>(
    curves: impl Iterator<Item = (String, &'a [scalescope_analysis::events::TopologyEvent])>,
    x_max: f64,
) -> Vec<Band> {
    use scalescope_analysis::events::EventKind;
    let mut all = Vec::new();
    for (i, (placement, events)) in curves.enumerate() {
        let mut starts: Vec<(usize, Vec<&str>, Vec<String>)> = Vec::new();
        for e in events.iter().filter(|e| (e.threads as f64) <= x_max) {
            let short = match e.kind {
                EventKind::NewPackage => "new package",
                EventKind::NewNumaNode => "new NUMA node",
                EventKind::SmtSharing => "SMT sharing",
                _ => continue,
            };
            match starts.iter_mut().find(|b| b.0 == e.threads) {
                Some(b) => {
                    b.1.push(short);
                    b.2.push(e.description.clone());
                }
                None => starts.push((e.threads, vec![short], vec![e.description.clone()])),
            }
        }
        starts.sort_by_key(|b| b.0);
        for (k, (t, short, long)) in starts.iter().enumerate() {
            let to = starts.get(k + 1).map(|n| n.0 as f64).unwrap_or(x_max);
            all.push(Band {
                from: *t as f64,
                to,
                label: format!("≥{t}: {}", short.join(", ")),
                tooltip: format!("{placement}: {}", long.join("; ")),
                series: Some(i),
            });
        }
    }
    all
}

/// Every curve's knees, marked where the slope changes and labelled with the cause.
fn knee_markers(a: &Analysis) -> Vec<Marker> {
    let mut out = Vec::new();
    for (i, c) in a.curves.iter().enumerate() {
        for k in &c.knees {
            let cause = k
                .cause
                .as_ref()
                .map(|e| format!(": {}", short_event(&e.kind)))
                .unwrap_or_default();
            out.push(Marker {
                x: k.knee.threads as f64,
                label: format!("knee after {}{cause}", k.knee.threads),
                tooltip: format!("{}: {}", c.placement, k.attribution),
                series: i,
            });
        }
    }
    out
}

fn short_event(k: &scalescope_analysis::events::EventKind) -> &'static str {
    use scalescope_analysis::events::EventKind;
    match k {
        EventKind::NewPackage => "new package",
        EventKind::NewNumaNode => "new NUMA node",
        EventKind::SmtSharing => "SMT sharing",
        _ => "topology change",
    }
}

/// The largest thread count measured.
fn x_max(a: &Analysis) -> f64 {
    a.curves
        .iter()
        .flat_map(|c| c.points.iter())
        .map(|p| p.threads as f64)
        .fold(1.0, f64::max)
}

/// The speedup chart: every curve with whiskers, the ideal line, knees and every
/// placement's topology regions.
pub fn speedup_chart(set: &ResultSet, log2_x: bool) -> LineChart {
    let a = &set.analysis;
    let many_mems = set.header.plan.mems.len() > 1;
    LineChart {
        title: format!("Speedup ({})", a.basis.label().replace('`', "")),
        x_label: "threads".into(),
        y_label: "speedup".into(),
        series: speedup_series(a, many_mems, x_max(a)),
        bands: bands(a, x_max(a)),
        markers: knee_markers(a),
        y_from_zero: true,
        log2_x,
        x_bytes: false,
    }
}

/// The charts over thread counts: speedup (with the ideal line, knees and
/// topology regions), efficiency, time with 95% whiskers, the figure of merit.
pub fn threads_charts(set: &ResultSet, prefix: &str, log2_x: bool) -> Vec<Chart> {
    let a = &set.analysis;
    let many_mems = set.header.plan.mems.len() > 1;
    let x_max = x_max(a);
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
        markers: knee_markers(a),
        y_from_zero: true,
        log2_x,
        x_bytes: false,
    };
    let mut out = vec![
        chart(
            "speedup.svg",
            "Speedup, with each placement's topology regions and knees",
            speedup_chart(set, log2_x),
        ),
        chart(
            "efficiency.svg",
            "Parallel efficiency (speedup / threads)",
            threads_chart(
                "Parallel efficiency".into(),
                "efficiency",
                per_curve(&|p| Some((p.efficiency, None))),
                bands(a, x_max),
            ),
        ),
        chart(
            "time.svg",
            "Wall time: median and 95% confidence interval",
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
            &format!("Figure of merit {name}, median per point"),
            threads_chart(
                format!("Figure of merit: {name} (median)"),
                name,
                per_curve(&|p| p.metric_median.map(|m| (m, None))),
                bands(a, x_max),
            ),
        ));
    }
    out
}

/// The thread count the topology picture shows: just past the first knee (where
/// the diagnosis says things change), else the largest measured.
pub fn picture_threads(a: &Analysis) -> Option<usize> {
    a.curves
        .iter()
        .flat_map(|c| c.knees.iter())
        .map(|k| k.knee.next_threads)
        .min()
        .or_else(|| {
            a.curves
                .iter()
                .flat_map(|c| c.points.iter())
                .map(|p| p.threads)
                .max()
        })
}

/// The CPUs each curve's threads ran on at `threads`: as the runs recorded them,
/// else as the placement computes them on the recorded machine.
pub fn used_cpus(set: &ResultSet, threads: usize) -> Vec<topo_svg::Used> {
    let topo = &set.header.machine.topology;
    let many_mems = set.header.plan.mems.len() > 1;
    set.analysis
        .curves
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let recorded = set.records.iter().find(|r| {
                r.point.threads == threads
                    && r.point.placement == c.placement
                    && r.point.mem == c.mem
                    && !r.thread_cpus.is_empty()
            });
            let cpus: scalescope_topo::CpuSet = match recorded {
                Some(r) => r.thread_cpus.iter().flat_map(|s| s.iter()).collect(),
                None => {
                    let req = scalescope_place::PlaceRequest::new(c.placement.clone(), threads);
                    let p = scalescope_place::place(topo, &req).ok()?;
                    p.threads.iter().flat_map(|s| s.iter()).collect()
                }
            };
            Some(topo_svg::Used {
                name: series_name(c, many_mems),
                color: PALETTE[i % PALETTE.len()].to_string(),
                cpus,
            })
        })
        .collect()
}

/// Every chart of one results set, as written beside the report: the thread
/// charts on a log2 axis, the sampler's evidence, the topology picture.
pub fn charts(set: &ResultSet, prefix: &str) -> Vec<Chart> {
    let mut out = threads_charts(set, prefix, true);
    out.extend(other_charts(set, prefix));
    out
}

/// The charts not drawn over thread counts: the sampler's evidence over time and
/// cross-node traffic, and the topology with each placement's CPUs.
pub fn other_charts(set: &ResultSet, prefix: &str) -> Vec<Chart> {
    let mut out = Vec::new();
    out.extend(evidence::over_time_chart(set, prefix));
    out.extend(evidence::traffic_chart(set, prefix));
    let threads = picture_threads(&set.analysis);
    let used = threads.map(|t| used_cpus(set, t)).unwrap_or_default();
    out.push(Chart {
        file: format!("{prefix}topology.svg"),
        title: match threads {
            Some(t) => format!(
                "Topology: caches, NUMA nodes, and the cores each placement used at {t} threads"
            ),
            None => "Topology: caches and NUMA nodes".into(),
        },
        svg: topo_svg::topology_picture(&set.header.machine.topology, &used, threads),
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

/// Speedup per curve with one-standard-deviation whiskers, and the ideal line up
/// to a little above the best measured speedup (so it never flattens the data).
fn speedup_series(a: &Analysis, many_mems: bool, x_max: f64) -> Vec<Series> {
    let mut speedup = per_curve_series(a, many_mems, &|p| {
        Some((
            p.speedup,
            Some((p.speedup - p.speedup_sd, p.speedup + p.speedup_sd)),
        ))
    });
    if let Some(c) = a.curves.first() {
        let b = c.baseline_threads as f64;
        let best = speedup
            .iter()
            .flat_map(|s| s.points.iter())
            .map(|p| p.2.map(|w| w.1).unwrap_or(p.1))
            .filter(|v| v.is_finite())
            .fold(1.0, f64::max);
        let end = x_max.min(best * 1.2 * b).max(b);
        speedup.push(Series {
            name: "ideal".into(),
            points: vec![(b, 1.0, None), (end, end / b, None)],
            color: "#888888".into(),
            dashed: true,
        });
    }
    speedup
}
