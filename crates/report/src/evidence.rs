//! The sampler's evidence in the report: for one placement, CPU use (solid) and
//! memory bandwidth (dashed; resident memory where no bandwidth source existed,
//! labelled so) over time for several thread counts on one chart; cross-node traffic
//! per thread count (or, where it could not be measured, the pages the kernel
//! allocated off their preferred node, labelled so); a per-point evidence table for
//! the terminal; and traffic side by side for `compare`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use scalescope_analysis::evidence::{summarize, PointEvidence};
use scalescope_model::evidence::{Measured, RunEvidence, Series as RunSeries};
use scalescope_model::store::{RunRecord, RunStatus};

use crate::svg::{LineChart, Series, PALETTE};
use crate::{Chart, ResultSet};

/// At most this many thread counts share the over-time chart.
const MAX_LINES: usize = 4;

/// Evenly spread picks from `v` (first and last included).
fn spread<T: Clone>(v: &[T], n: usize) -> Vec<T> {
    if v.len() <= n {
        return v.to_vec();
    }
    (0..n)
        .map(|i| v[i * (v.len() - 1) / (n - 1)].clone())
        .collect()
}

/// The run's own CPU use over time, percent of its CPUs: the threads' CPU time
/// between samples over (interval x CPUs).
pub fn cpu_use_percent(s: &RunSeries) -> Vec<(f64, f64)> {
    let n = s.cpus.len().max(1) as f64;
    let mut prev: BTreeMap<u32, f64> = BTreeMap::new();
    let mut t_prev = 0.0;
    let mut out = Vec::new();
    for sample in &s.samples {
        let dt = sample.t - t_prev;
        let mut used = 0.0;
        for th in &sample.threads {
            let now = th.user_secs + th.sys_secs;
            used += (now - prev.get(&th.tid).copied().unwrap_or(0.0)).max(0.0);
            prev.insert(th.tid, now);
        }
        if dt > 0.0 {
            out.push((sample.t, (used / dt / n * 100.0).min(100.0)));
        }
        t_prev = sample.t;
    }
    out
}

/// Memory bandwidth over time (bytes/s, all domains), or `None` without a source.
fn bandwidth(s: &RunSeries) -> Option<Vec<(f64, f64)>> {
    s.bandwidth_source.value()?;
    Some(
        s.samples
            .iter()
            .filter(|x| !x.bandwidth.is_empty())
            .map(|x| (x.t, x.bandwidth.iter().map(|d| d.bytes_per_sec).sum()))
            .collect(),
    )
}

/// Resident bytes over time (all nodes).
fn resident(s: &RunSeries) -> Vec<(f64, f64)> {
    s.samples
        .iter()
        .filter_map(|x| Some((x.t, x.bytes_per_node.as_ref()?.values().sum::<u64>() as f64)))
        .collect()
}

/// For each thread count of the first curve, the series of its median-time run.
fn chosen_runs(set: &ResultSet) -> Vec<(usize, &RunSeries)> {
    let Some(curve) = set.analysis.curves.first() else {
        return Vec::new();
    };
    let mut by_threads: BTreeMap<usize, Vec<&RunRecord>> = BTreeMap::new();
    for r in set.records.iter().filter(|r| {
        !r.warmup
            && r.status == RunStatus::Ok
            && r.point.placement == curve.placement
            && r.point.mem == curve.mem
    }) {
        let has = r
            .evidence
            .as_ref()
            .and_then(|e| e.series_file.as_ref())
            .is_some_and(|f| set.series.contains_key(f));
        if has {
            by_threads.entry(r.point.threads).or_default().push(r);
        }
    }
    let picked: Vec<(usize, &RunSeries)> = by_threads
        .into_iter()
        .filter_map(|(t, mut runs)| {
            runs.sort_by(|a, b| a.wall_secs.total_cmp(&b.wall_secs));
            let r = runs[runs.len() / 2];
            let file = r.evidence.as_ref()?.series_file.as_ref()?;
            Some((t, set.series.get(file)?))
        })
        .collect();
    spread(&picked, MAX_LINES)
}

/// A point scaled to percent of `max`, with an optional second series.
type Scaled = (f64, f64, Option<(f64, f64)>);

fn scaled(points: &[(f64, f64)], max: f64) -> Vec<Scaled> {
    points
        .iter()
        .map(|(t, v)| (*t, if max > 0.0 { v / max * 100.0 } else { 0.0 }, None))
        .collect()
}

fn short(why: &str) -> String {
    let w: String = why.chars().take(90).collect();
    if w.len() < why.len() {
        format!("{w}...")
    } else {
        w
    }
}

/// CPU use (solid) and bandwidth or resident memory (dashed) over time.
pub fn over_time_chart(set: &ResultSet, prefix: &str) -> Option<Chart> {
    let runs = chosen_runs(set);
    let curve = set.analysis.curves.first()?;
    if runs.is_empty() {
        return None;
    }
    let bw: Vec<Option<Vec<(f64, f64)>>> = runs.iter().map(|(_, s)| bandwidth(s)).collect();
    let have_bw = bw.iter().all(Option::is_some);
    let second: Vec<Vec<(f64, f64)>> = runs
        .iter()
        .zip(bw)
        .map(|((_, s), b)| {
            if have_bw {
                b.unwrap_or_default()
            } else {
                resident(s)
            }
        })
        .collect();
    let max = second.iter().flatten().map(|(_, v)| *v).fold(0.0, f64::max);
    let (what, short_what, unit) = if have_bw {
        ("bandwidth", "bandwidth", format!("{:.2} GB/s", max / 1e9))
    } else {
        (
            "resident memory",
            "memory",
            format!("{:.0} MiB", max / (1 << 20) as f64),
        )
    };
    let mut series = Vec::new();
    for (i, ((threads, s), other)) in runs.iter().zip(&second).enumerate() {
        let color = PALETTE[i % PALETTE.len()].to_string();
        series.push(Series {
            name: format!("t={threads} CPU"),
            points: cpu_use_percent(s)
                .into_iter()
                .map(|(t, v)| (t, v, None))
                .collect(),
            color: color.clone(),
            dashed: false,
        });
        series.push(Series {
            name: format!("t={threads} {short_what}"),
            points: scaled(other, max),
            color,
            dashed: true,
        });
    }
    let why = runs
        .first()
        .and_then(|(_, s)| s.bandwidth_source.why())
        .map(|w| format!(" Bandwidth unavailable here: {}", short(w)))
        .unwrap_or_default();
    let caption = format!(
        "Over time, {} / {}: CPU use of the run's CPUs (solid, %) and {what} (dashed, % of {unit})",
        curve.placement, curve.mem
    );
    Some(Chart {
        file: format!("{prefix}over-time.svg"),
        title: format!("{caption}.{why}"),
        svg: LineChart {
            title: format!(
                "CPU (solid) and {what} (dashed) over time, {}",
                curve.placement
            ),
            x_label: "seconds since the run started".into(),
            y_label: format!("% (CPU of the run's CPUs; {short_what} of {unit})"),
            series,
            bands: Vec::new(),
            y_from_zero: true,
            ..Default::default()
        }
        .to_svg(),
    })
}

/// Cross-node traffic per thread count, one line per curve; where no point has it,
/// numastat's off-node allocations instead, labelled so.
pub fn traffic_chart(set: &ResultSet, prefix: &str) -> Option<Chart> {
    let ev = &set.analysis.evidence;
    if ev.is_empty() {
        return None;
    }
    let measured = ev.iter().any(|p| p.cross_node_bytes.is_some());
    let y = |p: &PointEvidence| {
        if measured {
            p.cross_node_bytes.map(|b| b / 1e6)
        } else {
            p.other_node_pages
        }
    };
    let series: Vec<Series> = set
        .analysis
        .curves
        .iter()
        .enumerate()
        .map(|(i, c)| Series {
            name: format!("{} / {}", c.placement, c.mem),
            points: ev
                .iter()
                .filter(|p| p.point.placement == c.placement && p.point.mem == c.mem)
                .filter_map(|p| Some((p.point.threads as f64, y(p)?, None)))
                .collect(),
            color: PALETTE[i % PALETTE.len()].to_string(),
            dashed: false,
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    if series.is_empty() {
        return None;
    }
    let (title, y_label) = if measured {
        (
            "Cross-node memory traffic per run (median)".to_string(),
            "MB",
        )
    } else {
        let why = ev
            .iter()
            .find_map(|p| p.cross_node_unavailable.as_deref())
            .unwrap_or("no source");
        (
            format!(
                "Pages allocated off their preferred node (numastat other_node, median; system-wide). Cross-node traffic unavailable here: {}",
                short(why)
            ),
            "pages off their node",
        )
    };
    Some(Chart {
        file: format!("{prefix}cross-node.svg"),
        title: title.clone(),
        svg: LineChart {
            title: if measured {
                title
            } else {
                "Off-node page allocations (numastat other_node)".into()
            },
            x_label: "threads".into(),
            y_label: y_label.into(),
            series,
            bands: Vec::new(),
            y_from_zero: true,
            ..Default::default()
        }
        .to_svg(),
    })
}

fn mib(b: u64) -> String {
    format!("{:.0}", b as f64 / (1 << 20) as f64)
}

fn nodes(m: &BTreeMap<u32, u64>) -> String {
    if m.is_empty() {
        return "-".into();
    }
    m.iter()
        .map(|(n, b)| format!("N{n}:{}", mib(*b)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

/// One line per point with evidence; the reasons for what is missing after.
pub fn text(set: &ResultSet) -> String {
    let ev = &set.analysis.evidence;
    if ev.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nevidence (medians over each point's runs):\n");
    let _ = writeln!(
        out,
        "{:<14} {:<12} {:>7} {:>6} {:>6} {:>12} {:>10} {:>11}  resident MiB per node",
        "placement", "mem", "threads", "busy", "own", "cross-node", "off-node", "peak GB/s"
    );
    for p in ev {
        let peak: f64 = p.bandwidth_peak.values().sum();
        let _ = writeln!(
            out,
            "{:<14} {:<12} {:>7} {:>6} {:>6} {:>12} {:>10} {:>11}  {}",
            p.point.placement.to_string(),
            p.point.mem.to_string(),
            p.point.threads,
            opt(p.cpu_busy_mean, |v| format!("{:.0}%", v * 100.0)),
            opt(p.run_share_mean, |v| format!("{:.0}%", v * 100.0)),
            opt(p.cross_node_bytes, |v| format!("{:.1} MB", v / 1e6)),
            opt(p.other_node_pages, |v| format!("{v:.0} pg")),
            if p.bandwidth_peak.is_empty() {
                "-".into()
            } else {
                format!("{:.2}", peak / 1e9)
            },
            nodes(&p.peak_bytes_per_node)
        );
    }
    if let Some(p) = ev.first() {
        if let Some(w) = &p.bandwidth_unavailable {
            let _ = writeln!(out, "bandwidth: unavailable here: {w}");
        }
        for (name, w) in &p.pmu_unavailable {
            let _ = writeln!(out, "{name}: unavailable here: {w}");
        }
    }
    let worst = ev
        .iter()
        .map(|p| p.sampler_fraction_max)
        .fold(0.0, f64::max);
    let _ = writeln!(
        out,
        "sampler cost: at most {:.2}% of a run's wall time (one CPU)",
        worst * 100.0
    );
    out
}

/// Cross-node traffic (or off-node allocations) and peak bandwidth of A and B side
/// by side, for the points both measured.
/// Control characters a label or a name carries are written as escapes
/// ([`crate::terminal_text`]).
pub fn compare_text(a: &[RunRecord], b: &[RunRecord]) -> String {
    crate::terminal_text(&compare_text_raw(a, b))
}

/// What the public function returns, before its control characters are escaped.
fn compare_text_raw(a: &[RunRecord], b: &[RunRecord]) -> String {
    let (ea, eb) = (summarize(a), summarize(b));
    let rows: Vec<(&PointEvidence, &PointEvidence)> = ea
        .iter()
        .filter_map(|x| Some((x, eb.iter().find(|y| y.point == x.point)?)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nevidence, A vs B (medians):\n");
    let _ = writeln!(
        out,
        "{:<14} {:<12} {:>7} {:>13} {:>13} {:>11} {:>11} {:>10} {:>10}",
        "placement",
        "mem",
        "threads",
        "cross-node A",
        "cross-node B",
        "off-node A",
        "off-node B",
        "GB/s A",
        "GB/s B"
    );
    let mb = |v: Option<f64>| opt(v, |x| format!("{:.1} MB", x / 1e6));
    let pg = |v: Option<f64>| opt(v, |x| format!("{x:.0} pg"));
    let gbs = |p: &PointEvidence| {
        if p.bandwidth_peak.is_empty() {
            "-".to_string()
        } else {
            format!("{:.2}", p.bandwidth_peak.values().sum::<f64>() / 1e9)
        }
    };
    for (x, y) in &rows {
        let _ = writeln!(
            out,
            "{:<14} {:<12} {:>7} {:>13} {:>13} {:>11} {:>11} {:>10} {:>10}",
            x.point.placement.to_string(),
            x.point.mem.to_string(),
            x.point.threads,
            mb(x.cross_node_bytes),
            mb(y.cross_node_bytes),
            pg(x.other_node_pages),
            pg(y.other_node_pages),
            gbs(x),
            gbs(y)
        );
    }
    for (side, e) in [("A", &ea), ("B", &eb)] {
        if let Some(w) = e.iter().find_map(|p| p.cross_node_unavailable.as_deref()) {
            let _ = writeln!(out, "cross-node traffic, {side}: unavailable: {w}");
        }
    }
    out
}

/// One run's evidence in a line: resident memory per node, off-node allocations,
/// the sampler's cost, and bandwidth or why it is unavailable.
pub fn one_line(e: &RunEvidence) -> String {
    let pages = e
        .peak_bytes_per_node()
        .map_or("pages per node unavailable".into(), |m| {
            format!("resident MiB per node {}", nodes(m))
        });
    let off = e
        .other_node_pages()
        .map_or(String::new(), |p| format!(", {p} pages allocated off-node"));
    let bw = match &e.bandwidth {
        Measured::Measured(b) => format!(
            "bandwidth ({}) {:.2} GB/s mean",
            b.source,
            b.domains.iter().map(|d| d.mean_bytes_per_sec).sum::<f64>() / 1e9
        ),
        Measured::Unavailable(why) => format!("bandwidth unavailable here: {why}"),
    };
    format!(
        "evidence ({} samples, sampler {:.2}% of wall): {pages}{off}; {bw}",
        e.samples,
        e.sampler.fraction_of_wall * 100.0
    )
}

/// Whether a series records a bandwidth source.
pub fn has_bandwidth(s: &RunSeries) -> bool {
    matches!(s.bandwidth_source, Measured::Measured(_))
}
