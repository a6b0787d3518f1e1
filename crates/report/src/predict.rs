//! A prediction for another machine (`scalescope predict`), in words and as a
//! report section: the parameters with their intervals, each placement's predicted
//! speedup with its 95% band beside the calibration's measured points and the
//! target's topology regions, the recommendation, and every assumption. Everything
//! is titled as a prediction: nothing here was measured on the target.

use std::fmt::Write as _;

use scalescope_analysis::predict::target::{PredictedCurve, PredictedPoint};
use scalescope_analysis::predict::Prediction;

use crate::mem::Section;
use crate::svg::{LineChart, Series, PALETTE};
use crate::Chart;

/// The thread counts a table shows: 1, powers of two, both sides of each topology
/// event, the recommendation and the largest.
fn shown(p: &Prediction) -> Vec<usize> {
    let max = p
        .curves
        .iter()
        .flat_map(|c| c.points.iter().map(|q| q.threads))
        .max()
        .unwrap_or(1);
    let mut t: Vec<usize> = std::iter::successors(Some(1usize), |x| Some(x * 2))
        .take_while(|x| *x < max)
        .collect();
    t.push(max);
    for c in &p.curves {
        for e in &c.events {
            t.extend([e.threads.saturating_sub(1), e.threads]);
        }
    }
    t.extend(p.recommendation.as_ref().map(|r| r.threads));
    t.retain(|x| (1..=max).contains(x));
    t.sort_unstable();
    t.dedup();
    t
}

fn cell(q: Option<&PredictedPoint>) -> String {
    let Some(q) = q else {
        return "-".into();
    };
    let star = if q.extrapolated.is_empty() { "" } else { "*" };
    match q.ci95 {
        Some((a, b)) => format!("{:.1} [{a:.1}-{b:.1}]{star}", q.speedup),
        None => format!("{:.1}{star}", q.speedup),
    }
}

fn at(c: &PredictedCurve, t: usize) -> Option<&PredictedPoint> {
    c.points.iter().find(|q| q.threads == t)
}

/// The prediction for a terminal.
pub fn text(p: &Prediction) -> String {
    let mut s = format!(
        "PREDICTION (not a measurement) for {}\ncalibrated on: {} ({}; {} distinct points, up to {} threads)\n\nModel parameters (95% bootstrap interval; `assumed`: not determined by the calibration, its range drawn):\n",
        p.target_machine, p.calibration_machine, p.basis, p.coverage.distinct_points, p.coverage.max_threads
    );
    for q in &p.params {
        let ci = q
            .ci95
            .map(|(a, b)| format!("[{a:.4}, {b:.4}]"))
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            s,
            "  {:<9.4} {ci:<20} {:<8} {} ({})",
            q.value, q.source, q.name, q.unit
        );
    }
    let _ = writeln!(s, "\nPredicted speedup [95% interval] per placement; * = extrapolated beyond what was measured:");
    let _ = write!(s, "{:>7}", "threads");
    for c in &p.curves {
        let _ = write!(s, "  {:<22}", c.placement.to_string());
    }
    s.push('\n');
    for t in shown(p) {
        let _ = write!(s, "{t:>7}");
        for c in &p.curves {
            let _ = write!(s, "  {:<22}", cell(at(c, t)));
        }
        s.push('\n');
    }
    if let Some(r) = &p.recommendation {
        let _ = writeln!(s, "\nRecommendation: {}", r.sentence);
    }
    let _ = writeln!(s, "\nAssumptions:");
    for a in &p.assumptions {
        let _ = writeln!(s, "  - {a}");
    }
    s
}

/// Predicted curves (dashed, with their bands), the measured ones (solid, same
/// colour per placement), the ideal line and the target's topology regions.
pub fn chart(p: &Prediction, log2_x: bool) -> LineChart {
    let mut series: Vec<Series> = Vec::new();
    let color = |i: usize| PALETTE[i % PALETTE.len()].to_string();
    for (i, c) in p.curves.iter().enumerate() {
        series.push(Series {
            name: format!("predicted {}", c.placement),
            points: c
                .points
                .iter()
                .map(|q| (q.threads as f64, q.speedup, q.ci95))
                .collect(),
            color: color(i),
            dashed: true,
        });
    }
    for (j, m) in p.measured.iter().enumerate() {
        let i = p
            .curves
            .iter()
            .position(|c| c.placement == m.placement)
            .unwrap_or(p.curves.len() + j);
        series.push(Series {
            name: format!("measured {} (calibration)", m.placement),
            points: m
                .points
                .iter()
                .map(|(t, s)| (*t as f64, *s, None))
                .collect(),
            color: color(i),
            dashed: false,
        });
    }
    let x_max = series
        .iter()
        .flat_map(|s| s.points.iter().map(|q| q.0))
        .fold(1.0, f64::max);
    let bands = crate::event_bands(
        p.curves
            .iter()
            .map(|c| (c.placement.to_string(), c.events.as_slice())),
        x_max,
    );
    LineChart {
        title: "PREDICTION (not measured): speedup on the target".into(),
        x_label: "threads".into(),
        y_label: "predicted speedup".into(),
        series,
        bands,
        markers: Vec::new(),
        y_from_zero: true,
        log2_x,
        x_bytes: false,
    }
}

/// The report section: the chart (log2 and linear thread axes), the
/// recommendation, the assumptions and the parameters as notes.
pub fn section(p: &Prediction, prefix: &str) -> Section {
    let mut notes = vec![format!(
        "Predicted for {} from a sweep on {}. Nothing in this section was measured on the target.",
        p.target_machine, p.calibration_machine
    )];
    notes.extend(
        p.recommendation
            .as_ref()
            .map(|r| format!("Recommendation: {}", r.sentence)),
    );
    notes.extend(p.assumptions.iter().map(|a| format!("Assumption: {a}")));
    for q in &p.params {
        let ci = q
            .ci95
            .map(|(a, b)| format!(", 95% interval {a:.4}-{b:.4}"))
            .unwrap_or_default();
        notes.push(format!(
            "Parameter ({}): {} = {:.4} {}{ci}",
            q.source, q.name, q.value, q.unit
        ));
    }
    let caption = "PREDICTION, not a measurement: dashed lines and shaded bands are the model's speedup and 95% interval on the target; solid points were measured on the calibration machine; the lanes at the top are the target's topology regions per placement";
    let charts = [(true, "prediction.svg"), (false, "prediction-linear.svg")]
        .into_iter()
        .map(|(log2, file)| Chart {
            file: format!("{prefix}{file}"),
            title: format!("{caption}{}", if log2 { "" } else { " (linear axis)" }),
            svg: chart(p, log2).to_svg(),
        })
        .collect();
    Section {
        title: format!("Prediction (not measured): {}", p.target_machine),
        notes,
        charts,
    }
}
