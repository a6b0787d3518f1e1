//! SVG charts drawn by hand (no JavaScript, no fonts to fetch): line charts with a
//! linear or log2 x axis, whiskers with caps, an ideal line, knees marked and
//! labelled, and one lane of shaded regions per series (a placement's topology
//! regions); heatmaps. Every text goes through [`escape`]; every series and its
//! regions and knees share the class `sN` so a page can hide them together.

use std::fmt::Write as _;

/// Escapes text for XML/HTML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

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

/// Round tick values covering [lo, hi].
fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut v = Vec::new();
    let mut t = (lo / step).ceil() * step;
    while t <= hi + step * 1e-9 {
        v.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    v
}

/// `label` cut to what fits in `width` pixels at 12 px (about 6.8 px a
/// character), with an ellipsis; empty when not even a few characters fit.
fn fit_label(label: &str, width: f64) -> String {
    let fits = (width / 6.8).floor().max(0.0) as usize;
    let n = label.chars().count();
    if n <= fits {
        label.to_string()
    } else if fits < 4 {
        String::new()
    } else {
        format!("{}…", label.chars().take(fits - 1).collect::<String>())
    }
}

/// Powers of two covering [lo, hi], every second one when there are many.
fn log2_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, z) = (lo.log2().ceil() as i32, hi.log2().floor() as i32);
    let step = if z - a > 10 { 2 } else { 1 };
    (a..=z).step_by(step).map(|e| 2f64.powi(e)).collect()
}

fn fmt_num(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1000.0 || v.abs() < 0.01 {
        format!("{v:.3e}")
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

/// `4 KiB`, `32 MiB`, `1 GiB` for tick labels.
fn fmt_bytes(v: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = v;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{} {}", fmt_num((v * 10.0).round() / 10.0), units[u])
}

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
    pub fn to_svg(&self) -> String {
        let f = self.frame();
        let mut s = String::new();
        let _ = write!(
            s,
            r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" font-family="sans-serif" font-size="13" role="img"><title>{}</title><rect x="0" y="0" width="{W}" height="{H}" fill="#ffffff"/>"##,
            escape(&self.title)
        );
        self.write_ticks(&mut s, &f);
        self.write_titles(&mut s, &f);
        self.write_bands(&mut s, &f);
        for (i, ser) in self.series.iter().enumerate() {
            write_series(&mut s, &f, i, ser);
        }
        self.write_markers(&mut s, &f);
        s.push_str("</svg>");
        s
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
    fn write_bands(&self, s: &mut String, f: &Frame) {
        let mut lanes: Vec<Option<usize>> = self.bands.iter().map(|b| b.series).collect();
        lanes.sort_unstable();
        lanes.dedup();
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
                        .map(|x| escape(&x.color))
                        .unwrap_or("#888".into()),
                ),
                None => ("band".to_string(), "#888888".to_string()),
            };
            let label = fit_label(&b.label, z - a - 8.0);
            let _ = write!(
                s,
                r##"<g class="{class}"><title>{}</title><rect x="{a:.1}" y="{TOP}" width="{:.1}" height="{:.1}" fill="{color}" fill-opacity="0.05"/><rect x="{a:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{color}" fill-opacity="0.22" stroke="{color}" stroke-width="1"/><line x1="{a:.1}" y1="{TOP}" x2="{a:.1}" y2="{:.1}" stroke="{color}" stroke-width="1" stroke-opacity="0.5"/><text x="{:.1}" y="{:.1}" fill="#222" font-size="12">{}</text></g>"##,
                escape(&b.tooltip),
                z - a,
                f.ph,
                z - a,
                LANE - 3.0,
                TOP + f.ph,
                a + 4.0,
                y + LANE - 7.0,
                escape(&label)
            );
        }
    }

    /// Knees: a dashed vertical line in the series' colour, labelled at the bottom.
    fn write_markers(&self, s: &mut String, f: &Frame) {
        for (k, m) in self.markers.iter().enumerate() {
            if m.x < f.x0 || m.x > f.x1 {
                continue;
            }
            let x = f.sx(m.x);
            let color = self
                .series
                .get(m.series)
                .map(|x| escape(&x.color))
                .unwrap_or("#444".into());
            let y = TOP + f.ph - 8.0 - 16.0 * k as f64;
            let (anchor, dx) = if x > LEFT + f.pw * 0.6 {
                ("end", -4.0)
            } else {
                ("start", 4.0)
            };
            let _ = write!(
                s,
                r##"<g class="knee s{}"><title>{}</title><line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="{color}" stroke-width="2" stroke-dasharray="5 3"/><text x="{:.1}" y="{y:.1}" text-anchor="{anchor}" font-size="12" font-weight="bold" fill="{color}" stroke="#fff" stroke-width="3" paint-order="stroke">{}</text></g>"##,
                m.series,
                escape(&m.tooltip),
                TOP + f.ph,
                x + dx,
                escape(&m.label)
            );
        }
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
    fn write_ticks(&self, s: &mut String, f: &Frame) {
        for t in self.x_ticks(f) {
            let x = f.sx(t);
            let label = if self.x_bytes {
                fmt_bytes(t)
            } else {
                fmt_num(t)
            };
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="12">{label}</text>"##,
                TOP + f.ph,
                TOP + f.ph + 17.0,
            );
        }
        for t in ticks(f.y0, f.y1, 6) {
            let y = f.sy(t);
            let _ = write!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end" font-size="12">{}</text>"##,
                LEFT + f.pw,
                LEFT - 6.0,
                y + 4.0,
                fmt_num(t)
            );
        }
    }

    /// The frame, the title and both axis labels.
    fn write_titles(&self, s: &mut String, f: &Frame) {
        let (pw, ph) = (f.pw, f.ph);
        let _ = write!(
            s,
            r##"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>"##
        );
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="24" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
            LEFT + pw / 2.0,
            escape(&self.title)
        );
        let scale = if f.log2_x { " (log2 scale)" } else { "" };
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}{scale}</text>"#,
            LEFT + pw / 2.0,
            H - 12.0,
            escape(&self.x_label)
        );
        let _ = write!(
            s,
            r#"<text transform="translate(18 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            TOP + ph / 2.0,
            escape(&self.y_label)
        );
    }
}

/// One series (class `sN`): its line, markers with tooltips, whiskers with caps
/// drawn over the markers (for a dashed series, a shaded band instead), and its
/// legend entry.
fn write_series(s: &mut String, f: &Frame, i: usize, ser: &Series) {
    let dash = if ser.dashed {
        r#" stroke-dasharray="6 4""#
    } else {
        ""
    };
    let pts: Vec<&ChartPoint> = ser.points.iter().filter(|p| p.1.is_finite()).collect();
    let path: Vec<String> = pts
        .iter()
        .map(|p| format!("{:.1},{:.1}", f.sx(p.0), f.sy(p.1)))
        .collect();
    let color = escape(&ser.color);
    let _ = write!(s, r#"<g class="series s{i}">"#);
    if ser.dashed {
        write_band(s, f, &pts, &color);
    }
    let _ = write!(
        s,
        r#"<polyline fill="none" stroke="{color}" stroke-width="2.5"{dash} points="{}"/>"#,
        path.join(" ")
    );
    for p in &pts {
        if !ser.dashed {
            let _ = write!(
                s,
                r##"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="#fff" stroke="{color}" stroke-width="2"><title>{}: {} at {}</title></circle>"##,
                f.sx(p.0),
                f.sy(p.1),
                escape(&ser.name),
                fmt_num(p.1),
                fmt_num(p.0)
            );
        }
    }
    for p in pts.iter().filter(|_| !ser.dashed) {
        if let Some((lo, hi)) = p.2 {
            let (x, a, z) = (f.sx(p.0), f.sy(lo), f.sy(hi));
            let _ = write!(
                s,
                r#"<path class="whisker" d="M{x:.1},{a:.1}V{z:.1}M{:.1},{a:.1}h10M{:.1},{z:.1}h10" stroke="{color}" stroke-width="1.8" fill="none"/>"#,
                x - 5.0,
                x - 5.0,
            );
        }
    }
    let ly = TOP + 14.0 + 20.0 * i as f64;
    let lx = LEFT + f.pw + 12.0;
    let _ = write!(
        s,
        r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="3"{dash}/><text x="{:.1}" y="{:.1}">{}</text></g>"#,
        lx + 22.0,
        lx + 28.0,
        ly + 4.0,
        escape(&ser.name)
    );
}

/// A dashed series' intervals drawn as a shaded band (a prediction's), instead
/// of whiskers.
fn write_band(s: &mut String, f: &Frame, pts: &[&ChartPoint], color: &str) {
    let w: Vec<(f64, f64, f64)> = pts
        .iter()
        .filter_map(|p| p.2.map(|(lo, hi)| (p.0, lo, hi)))
        .filter(|p| p.1.is_finite() && p.2.is_finite())
        .collect();
    if w.len() < 2 {
        return;
    }
    let upper = w
        .iter()
        .map(|p| format!("{:.1},{:.1}", f.sx(p.0), f.sy(p.2)));
    let lower = w
        .iter()
        .rev()
        .map(|p| format!("{:.1},{:.1}", f.sx(p.0), f.sy(p.1)));
    let all: Vec<String> = upper.chain(lower).collect();
    let _ = write!(
        s,
        r#"<polygon class="band95" points="{}" fill="{color}" fill-opacity="0.15" stroke="none"/>"#,
        all.join(" ")
    );
}

/// A matrix of values with row and column labels, coloured from low to high.
#[derive(Debug, Clone)]
pub struct Heatmap {
    pub title: String,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    pub values: Vec<Vec<Option<f64>>>,
    pub unit: String,
}

impl Heatmap {
    pub fn to_svg(&self) -> String {
        let cell = (480.0 / self.cols.len().max(1) as f64).clamp(14.0, 60.0);
        let (w, h) = (
            120.0 + cell * self.cols.len() as f64 + 20.0,
            70.0 + cell * self.rows.len() as f64 + 20.0,
        );
        let vals: Vec<f64> = self
            .values
            .iter()
            .flatten()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .collect();
        let (lo, hi) = (
            vals.iter().copied().fold(f64::INFINITY, f64::min),
            vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        let mut s = format!(
            r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w:.0} {h:.0}" width="{w:.0}" height="{h:.0}" font-family="sans-serif" font-size="12" role="img"><title>{}</title><rect width="{w:.0}" height="{h:.0}" fill="#fff"/><text x="10" y="20" font-size="14" font-weight="bold">{} ({})</text>"##,
            escape(&self.title),
            escape(&self.title),
            escape(&self.unit)
        );
        for (j, c) in self.cols.iter().enumerate() {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="60" text-anchor="middle">{}</text>"#,
                120.0 + cell * (j as f64 + 0.5),
                escape(c)
            );
        }
        for (i, r) in self.rows.iter().enumerate() {
            let y = 70.0 + cell * i as f64;
            let _ = write!(
                s,
                r#"<text x="112" y="{:.1}" text-anchor="end">{}</text>"#,
                y + cell / 2.0 + 4.0,
                escape(r)
            );
            for (j, v) in self.values.get(i).into_iter().flatten().enumerate() {
                let x = 120.0 + cell * j as f64;
                let (fill, label) = match v {
                    Some(v) if hi > lo => {
                        let t = (v - lo) / (hi - lo);
                        (
                            format!(
                                "rgb({},{},{})",
                                (255.0 - 200.0 * t) as u8,
                                (255.0 - 120.0 * t) as u8,
                                255
                            ),
                            fmt_num(*v),
                        )
                    }
                    Some(v) => ("rgb(150,190,255)".to_string(), fmt_num(*v)),
                    None => ("#eee".to_string(), String::new()),
                };
                let _ = write!(
                    s,
                    r##"<rect x="{x:.1}" y="{y:.1}" width="{cell:.1}" height="{cell:.1}" fill="{fill}" stroke="#fff"><title>{}</title></rect>"##,
                    escape(&label)
                );
                if cell >= 36.0 {
                    let _ = write!(
                        s,
                        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12">{}</text>"#,
                        x + cell / 2.0,
                        y + cell / 2.0 + 4.0,
                        escape(&label)
                    );
                }
            }
        }
        s.push_str("</svg>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn log2_ticks_are_powers_of_two() {
        assert_eq!(
            log2_ticks(1.0, 96.0),
            vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
        );
        assert_eq!(log2_ticks(3.0, 5.0), vec![4.0]);
        assert_eq!(fmt_bytes(4096.0), "4 KiB");
        assert_eq!(fmt_bytes(1.5 * 1048576.0), "1.5 MiB");
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(ticks(0.0, 96.0, 8), vec![0.0, 20.0, 40.0, 60.0, 80.0]);
        assert_eq!(ticks(1.0, 2.0, 4), vec![1.0, 1.25, 1.5, 1.75, 2.0]);
    }
}
