//! SVG charts drawn by hand (no JavaScript, no fonts to fetch): line charts with a
//! linear or log2 x axis, whiskers with caps, an ideal line, knees marked and
//! labelled, and one lane of shaded regions per series (a placement's topology
//! regions); heatmaps ([`crate::heatmap`]). Written through [`crate::markup`], so every text and attribute
//! is escaped; every series and its regions and knees share the class `sN` so a page
//! can hide them together.

use std::fmt::Display;

use crate::axis::{fit_label, fmt_bytes, fmt_num, log2_ticks, ticks};
use crate::markup::{el, Markup, D1};

pub use crate::heatmap::Heatmap;

/// Series colours (colour-blind friendly, Okabe-Ito).
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
];

/// One point: x, y and an optional (low, high) whisker.
pub type ChartPoint = (f64, f64, Option<(f64, f64)>);

/// One line of a chart.
#[derive(Debug, Clone, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<ChartPoint>,
    pub color: String,
    pub dashed: bool,
}

/// A shaded x-range with a label (a topology region). With `series`, it is drawn
/// in that series' lane and colour; without, across the whole plot in grey.
#[derive(Debug, Clone, Default)]
pub struct Band {
    pub from: f64,
    pub to: f64,
    pub label: String,
    pub tooltip: String,
    pub series: Option<usize>,
}

/// A labelled vertical line at one x (a knee of a series).
#[derive(Debug, Clone, Default)]
pub struct Marker {
    pub x: f64,
    pub label: String,
    pub tooltip: String,
    pub series: usize,
}

/// A line chart.
#[derive(Debug, Clone, Default)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub bands: Vec<Band>,
    pub markers: Vec<Marker>,
    /// Start the y axis at zero.
    pub y_from_zero: bool,
    /// A log2 x axis (thread counts, working-set sizes); linear where some x <= 0.
    pub log2_x: bool,
    /// The x values are bytes: ticks read `4 KiB`, `1 MiB`.
    pub x_bytes: bool,
}

const W: f64 = 720.0;
const H: f64 = 440.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 55.0;
/// Height of one series' lane of regions at the top of the plot.
const LANE: f64 = 18.0;

/// The plotting area and the data ranges it shows.
struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    pw: f64,
    ph: f64,
    log2_x: bool,
}

impl Frame {
    fn sx(&self, x: f64) -> f64 {
        let t = if self.log2_x {
            (x.log2() - self.x0.log2()) / (self.x1.log2() - self.x0.log2())
        } else {
            (x - self.x0) / (self.x1 - self.x0)
        };
        LEFT + t * self.pw
    }
    fn sy(&self, y: f64) -> f64 {
        TOP + self.ph - (y - self.y0) / (self.y1 - self.y0) * self.ph
    }
}

impl LineChart {
    /// The chart as a standalone SVG document.
    pub fn to_svg(&self) -> Markup {
        let f = self.frame();
        let mut body = Markup::new();
        body.push(el("title").text(&self.title));
        body.push(
            el("rect")
                .attr("x", 0)
                .attr("y", 0)
                .attr("width", W)
                .attr("height", H)
                .attr("fill", "#ffffff")
                .empty(),
        );
        body.push(self.ticks_svg(&f));
        body.push(self.titles_svg(&f));
        body.push(self.bands_svg(&f));
        for (i, ser) in self.series.iter().enumerate() {
            body.push(series_svg(&f, i, ser));
        }
        body.push(self.markers_svg(&f));
        el("svg")
            .attr("xmlns", "http://www.w3.org/2000/svg")
            .attr("viewBox", format!("0 0 {W} {H}"))
            .attr("width", W)
            .attr("height", H)
            .attr("font-family", "sans-serif")
            .attr("font-size", 13)
            .attr("role", "img")
            .child(body)
    }

    /// The data ranges (with a margin on top, and room for the region lanes), the
    /// y axis from zero if asked.
    fn frame(&self) -> Frame {
        let pts = self.series.iter().flat_map(|s| s.points.iter());
        let xs: Vec<f64> = pts.clone().map(|p| p.0).collect();
        let ys: Vec<f64> = pts
            .clone()
            .flat_map(|p| [Some(p.1), p.2.map(|w| w.0), p.2.map(|w| w.1)])
            .flatten()
            .filter(|v| v.is_finite())
            .collect();
        let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (mut x0, mut x1, mut y0, mut y1) = (min(&xs), max(&xs), min(&ys), max(&ys));
        if !x0.is_finite() || !y0.is_finite() {
            (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
        }
        if self.y_from_zero {
            y0 = y0.min(0.0);
        }
        let log2_x = self.log2_x && x0 > 0.0;
        if x1 <= x0 {
            x1 = if log2_x { x0 * 2.0 } else { x0 + 1.0 };
        }
        if y1 <= y0 {
            y1 = y0 + 1.0;
        }
        let ph = H - TOP - BOTTOM;
        let lanes = self.lanes() as f64;
        // The top of the plot is left to the lanes: data stays below them.
        let room = (lanes * LANE + 6.0) / ph;
        y1 += (y1 - y0) * (0.05 + room) / (1.0 - room);
        Frame {
            x0,
            x1,
            y0,
            y1,
            pw: W - LEFT - RIGHT,
            ph,
            log2_x,
        }
    }

    /// Lanes of regions: one per series that has bands.
    fn lanes(&self) -> usize {
        let mut lanes: Vec<usize> = self.bands.iter().filter_map(|b| b.series).collect();
        lanes.sort_unstable();
        lanes.dedup();
        lanes.len() + usize::from(self.bands.iter().any(|b| b.series.is_none()))
    }

    /// Each band: a tinted strip in its series' lane at the top of the plot with
    /// its label, and a thin line where it starts; unassigned bands shade the plot.
    fn bands_svg(&self, f: &Frame) -> Markup {
        let mut lanes: Vec<Option<usize>> = self.bands.iter().map(|b| b.series).collect();
        lanes.sort_unstable();
        lanes.dedup();
        let mut out = Markup::new();
        for b in &self.bands {
            let (a, z) = (f.sx(b.from.max(f.x0)), f.sx(b.to.min(f.x1)));
            if z <= a {
                continue;
            }
            let lane = lanes.iter().position(|l| *l == b.series).unwrap_or(0) as f64;
            let y = TOP + 2.0 + lane * LANE;
            let (class, color) = match b.series {
                Some(i) => (
                    format!("band s{i}"),
                    self.series
                        .get(i)
                        .map_or("#888".to_string(), |x| x.color.clone()),
                ),
                None => ("band".to_string(), "#888888".to_string()),
            };
            let label = fit_label(&b.label, z - a - 8.0);
            out.push(
                el("g").attr("class", class).children([
                    el("title").text(&b.tooltip),
                    el("rect")
                        .attr("x", D1(a))
                        .attr("y", TOP)
                        .attr("width", D1(z - a))
                        .attr("height", D1(f.ph))
                        .attr("fill", &color)
                        .attr("fill-opacity", "0.05")
                        .empty(),
                    el("rect")
                        .attr("x", D1(a))
                        .attr("y", D1(y))
                        .attr("width", D1(z - a))
                        .attr("height", D1(LANE - 3.0))
                        .attr("fill", &color)
                        .attr("fill-opacity", "0.22")
                        .attr("stroke", &color)
                        .attr("stroke-width", 1)
                        .empty(),
                    el("line")
                        .attr("x1", D1(a))
                        .attr("y1", TOP)
                        .attr("x2", D1(a))
                        .attr("y2", D1(TOP + f.ph))
                        .attr("stroke", &color)
                        .attr("stroke-width", 1)
                        .attr("stroke-opacity", "0.5")
                        .empty(),
                    el("text")
                        .attr("x", D1(a + 4.0))
                        .attr("y", D1(y + LANE - 7.0))
                        .attr("fill", "#222")
                        .attr("font-size", 12)
                        .text(&label),
                ]),
            );
        }
        out
    }

    /// Knees: a dashed vertical line in the series' colour, labelled at the bottom.
    fn markers_svg(&self, f: &Frame) -> Markup {
        let mut out = Markup::new();
        for (k, m) in self.markers.iter().enumerate() {
            if m.x < f.x0 || m.x > f.x1 {
                continue;
            }
            let x = f.sx(m.x);
            let color = self
                .series
                .get(m.series)
                .map_or("#444".to_string(), |x| x.color.clone());
            let y = TOP + f.ph - 8.0 - 16.0 * k as f64;
            let (anchor, dx) = if x > LEFT + f.pw * 0.6 {
                ("end", -4.0)
            } else {
                ("start", 4.0)
            };
            out.push(
                el("g")
                    .attr("class", format!("knee s{}", m.series))
                    .children([
                        el("title").text(&m.tooltip),
                        el("line")
                            .attr("x1", D1(x))
                            .attr("y1", TOP)
                            .attr("x2", D1(x))
                            .attr("y2", D1(TOP + f.ph))
                            .attr("stroke", &color)
                            .attr("stroke-width", 2)
                            .attr("stroke-dasharray", "5 3")
                            .empty(),
                        el("text")
                            .attr("x", D1(x + dx))
                            .attr("y", D1(y))
                            .attr("text-anchor", anchor)
                            .attr("font-size", 12)
                            .attr("font-weight", "bold")
                            .attr("fill", &color)
                            .attr("stroke", "#fff")
                            .attr("stroke-width", 3)
                            .attr("paint-order", "stroke")
                            .text(&m.label),
                    ]),
            );
        }
        out
    }

    fn x_ticks(&self, f: &Frame) -> Vec<f64> {
        if f.log2_x {
            let mut t = log2_ticks(f.x0, f.x1);
            if t.len() < 2 {
                t = vec![f.x0, f.x1];
            }
            return t;
        }
        // Thread counts are whole numbers: no tick at 1.5 threads.
        let integral = self
            .series
            .iter()
            .flat_map(|s| s.points.iter())
            .all(|p| p.0.fract() == 0.0);
        let mut xt: Vec<f64> = ticks(f.x0, f.x1, 8)
            .into_iter()
            .filter(|t| !integral || t.fract() == 0.0)
            .collect();
        if integral && xt.len() < 2 {
            xt = (f.x0 as i64..=f.x1 as i64).map(|v| v as f64).collect();
        }
        xt
    }

    /// Grid lines and tick labels on both axes.
    fn ticks_svg(&self, f: &Frame) -> Markup {
        let mut out = Markup::new();
        for t in self.x_ticks(f) {
            let x = f.sx(t);
            let label = if self.x_bytes {
                fmt_bytes(t)
            } else {
                fmt_num(t)
            };
            out.push(grid_line(D1(x), TOP, D1(x), D1(TOP + f.ph)));
            out.push(
                el("text")
                    .attr("x", D1(x))
                    .attr("y", D1(TOP + f.ph + 17.0))
                    .attr("text-anchor", "middle")
                    .attr("font-size", 12)
                    .text(&label),
            );
        }
        for t in ticks(f.y0, f.y1, 6) {
            let y = f.sy(t);
            out.push(grid_line(LEFT, D1(y), D1(LEFT + f.pw), D1(y)));
            out.push(
                el("text")
                    .attr("x", D1(LEFT - 6.0))
                    .attr("y", D1(y + 4.0))
                    .attr("text-anchor", "end")
                    .attr("font-size", 12)
                    .text(&fmt_num(t)),
            );
        }
        out
    }

    /// The frame, the title and both axis labels.
    fn titles_svg(&self, f: &Frame) -> Markup {
        let (pw, ph) = (f.pw, f.ph);
        let scale = if f.log2_x { " (log2 scale)" } else { "" };
        Markup::from_iter([
            el("rect")
                .attr("x", LEFT)
                .attr("y", TOP)
                .attr("width", pw)
                .attr("height", ph)
                .attr("fill", "none")
                .attr("stroke", "#333")
                .empty(),
            el("text")
                .attr("x", D1(LEFT + pw / 2.0))
                .attr("y", 24)
                .attr("text-anchor", "middle")
                .attr("font-size", 15)
                .attr("font-weight", "bold")
                .text(&self.title),
            el("text")
                .attr("x", D1(LEFT + pw / 2.0))
                .attr("y", D1(H - 12.0))
                .attr("text-anchor", "middle")
                .text(&format!("{}{scale}", self.x_label)),
            el("text")
                .attr(
                    "transform",
                    format!("translate(18 {:.1}) rotate(-90)", TOP + ph / 2.0),
                )
                .attr("text-anchor", "middle")
                .text(&self.y_label),
        ])
    }
}

/// A light grey grid line.
fn grid_line(x1: impl Display, y1: impl Display, x2: impl Display, y2: impl Display) -> Markup {
    el("line")
        .attr("x1", x1)
        .attr("y1", y1)
        .attr("x2", x2)
        .attr("y2", y2)
        .attr("stroke", "#ddd")
        .empty()
}

/// One series (class `sN`): its line, markers with tooltips, whiskers with caps
/// drawn over the markers (for a dashed series, a shaded band instead), and its
/// legend entry.
fn series_svg(f: &Frame, i: usize, ser: &Series) -> Markup {
    let dash = ser.dashed.then_some("6 4");
    let pts: Vec<&ChartPoint> = ser.points.iter().filter(|p| p.1.is_finite()).collect();
    let path: Vec<String> = pts
        .iter()
        .map(|p| format!("{:.1},{:.1}", f.sx(p.0), f.sy(p.1)))
        .collect();
    let color = ser.color.as_str();
    let mut g = Markup::new();
    if ser.dashed {
        g.push(band_svg(f, &pts, color));
    }
    g.push(
        el("polyline")
            .attr("fill", "none")
            .attr("stroke", color)
            .attr("stroke-width", "2.5")
            .attr_opt("stroke-dasharray", dash)
            .attr("points", path.join(" "))
            .empty(),
    );
    for p in pts.iter().filter(|_| !ser.dashed) {
        g.push(
            el("circle")
                .attr("cx", D1(f.sx(p.0)))
                .attr("cy", D1(f.sy(p.1)))
                .attr("r", "3.5")
                .attr("fill", "#fff")
                .attr("stroke", color)
                .attr("stroke-width", 2)
                .child(el("title").text(&format!(
                    "{}: {} at {}",
                    ser.name,
                    fmt_num(p.1),
                    fmt_num(p.0)
                ))),
        );
    }
    for p in pts.iter().filter(|_| !ser.dashed) {
        if let Some((lo, hi)) = p.2 {
            let (x, a, z) = (f.sx(p.0), f.sy(lo), f.sy(hi));
            g.push(
                el("path")
                    .attr("class", "whisker")
                    .attr(
                        "d",
                        format!(
                            "M{x:.1},{a:.1}V{z:.1}M{:.1},{a:.1}h10M{:.1},{z:.1}h10",
                            x - 5.0,
                            x - 5.0
                        ),
                    )
                    .attr("stroke", color)
                    .attr("stroke-width", "1.8")
                    .attr("fill", "none")
                    .empty(),
            );
        }
    }
    g.push(legend_svg(f, i, ser, dash));
    el("g").attr("class", format!("series s{i}")).child(g)
}

/// Series `i`'s legend entry, right of the plot: a short line and its name.
fn legend_svg(f: &Frame, i: usize, ser: &Series, dash: Option<&str>) -> Markup {
    let ly = TOP + 14.0 + 20.0 * i as f64;
    let lx = LEFT + f.pw + 12.0;
    Markup::from_iter([
        el("line")
            .attr("x1", D1(lx))
            .attr("y1", D1(ly))
            .attr("x2", D1(lx + 22.0))
            .attr("y2", D1(ly))
            .attr("stroke", &ser.color)
            .attr("stroke-width", 3)
            .attr_opt("stroke-dasharray", dash)
            .empty(),
        el("text")
            .attr("x", D1(lx + 28.0))
            .attr("y", D1(ly + 4.0))
            .text(&ser.name),
    ])
}

/// A dashed series' intervals drawn as a shaded band (a prediction's), instead
/// of whiskers.
fn band_svg(f: &Frame, pts: &[&ChartPoint], color: &str) -> Markup {
    let w: Vec<(f64, f64, f64)> = pts
        .iter()
        .filter_map(|p| p.2.map(|(lo, hi)| (p.0, lo, hi)))
        .filter(|p| p.1.is_finite() && p.2.is_finite())
        .collect();
    if w.len() < 2 {
        return Markup::new();
    }
    let upper = w
        .iter()
        .map(|p| format!("{:.1},{:.1}", f.sx(p.0), f.sy(p.2)));
    let lower = w
        .iter()
        .rev()
        .map(|p| format!("{:.1},{:.1}", f.sx(p.0), f.sy(p.1)));
    let all: Vec<String> = upper.chain(lower).collect();
    el("polygon")
        .attr("class", "band95")
        .attr("points", all.join(" "))
        .attr("fill", color)
        .attr("fill-opacity", "0.15")
        .attr("stroke", "none")
        .empty()
}
