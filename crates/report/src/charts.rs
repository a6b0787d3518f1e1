//! The SVG charts of an analysed sweep: the speedup chart with its ideal line,
//! event bands and knee markers, the per-thread charts and the topology picture's
//! CPUs, each a [`Chart`] the report embeds and also writes on its own.

use scalescope_analysis::{Analysis, Basis};

use crate::svg::{Band, LineChart, Marker, Series, PALETTE};
use crate::{evidence, markup, topo_svg, ResultSet};

/// Picks a chart's y value (and whisker) from a curve point.
type YOf = dyn Fn(&scalescope_analysis::CurvePoint) -> Option<(f64, Option<(f64, f64)>)>;

/// A chart written on its own and embedded in the report.
#[derive(Debug, Clone)]
pub struct Chart {
    /// File name (`speedup.svg`).
    pub file: String,
    pub title: String,
    pub svg: markup::Markup,
}

pub(crate) fn series_name(c: &scalescope_analysis::Curve, many_mems: bool) -> String {
    if let Some(r) = c.ranks_per_node {
        return format!("{} ({r} ranks per node)", c.placement);
    }
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
                EventKind::NewNode => "new node",
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
                .map(|e| match k.attribution.as_str() {
                    "inside" => format!(": {} between, unmeasured", short_event(&e.kind)),
                    _ => format!(": {}", short_event(&e.kind)),
                })
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
        EventKind::NewNode => "new node",
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
        series: speedup_series(a, many_mems, x_max(a), log2_x),
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
            "Speedup with 95% intervals, each placement's topology regions and knees",
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

/// Speedup per curve with its 95% interval as whiskers (the bootstrap interval; none
/// with one repetition), and the ideal line up to a little above the best measured
/// speedup (so it never flattens the data).
fn speedup_series(a: &Analysis, many_mems: bool, x_max: f64, log2_x: bool) -> Vec<Series> {
    let mut speedup = per_curve_series(a, many_mems, &|p| Some((p.speedup, p.speedup_ci95)));
    if let Some(c) = a.curves.first() {
        let b = c.baseline_threads as f64;
        let best = speedup
            .iter()
            .flat_map(|s| s.points.iter())
            .map(|p| p.2.map(|w| w.1).unwrap_or(p.1))
            .filter(|v| v.is_finite())
            .fold(1.0, f64::max);
        let end = x_max.min(best * 1.2 * b).max(b);
        let measured = a
            .curves
            .iter()
            .flat_map(|c| c.points.iter())
            .map(|p| p.threads as f64);
        speedup.push(Series {
            name: "ideal".into(),
            points: ideal_xs(b, end, measured, log2_x)
                .into_iter()
                .map(|x| (x, x / b, None))
                .collect(),
            color: "#888888".into(),
            dashed: true,
        });
    }
    speedup
}

/// Where the ideal line (speedup = threads / baseline) has a vertex: the baseline, every
/// thread count measured up to `end`, and `end`; on a log2 axis also eight steps an
/// octave between them, since a straight segment there is not the line. So the line is
/// exact at every thread count on either axis.
fn ideal_xs(b: f64, end: f64, measured: impl Iterator<Item = f64>, log2_x: bool) -> Vec<f64> {
    let mut xs: Vec<f64> = measured.filter(|x| *x > b && *x < end).collect();
    xs.extend([b, end]);
    if log2_x && b > 0.0 {
        let steps = ((end / b).log2() * 8.0).ceil() as u32;
        xs.extend((1..steps).map(|k| b * 2f64.powf(f64::from(k) / 8.0)));
    }
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs
}
