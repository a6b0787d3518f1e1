//! SVG charts drawn by hand (no JavaScript, no fonts to fetch): line charts with
//! optional whiskers, an ideal line and shaded regions; heatmaps; the topology
//! picture. Every text goes through [`escape`].

use std::fmt::Write as _;

use scalescope_topo::Topology;

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
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<ChartPoint>,
    pub color: String,
    pub dashed: bool,
}

/// A shaded x-range with a label (a topology region).
#[derive(Debug, Clone)]
pub struct Band {
    pub from: f64,
    pub to: f64,
    pub label: String,
    pub tooltip: String,
}

/// A line chart.
#[derive(Debug, Clone)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub bands: Vec<Band>,
    /// Start the y axis at zero.
    pub y_from_zero: bool,
}

const W: f64 = 720.0;
const H: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 55.0;

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

/// The plotting area and the data ranges it shows.
struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    pw: f64,
    ph: f64,
}

impl Frame {
    fn sx(&self, x: f64) -> f64 {
        LEFT + (x - self.x0) / (self.x1 - self.x0) * self.pw
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
            r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" font-family="sans-serif" font-size="12" role="img"><title>{}</title>"#,
            escape(&self.title)
        );
        let _ = write!(
            s,
            r##"<rect x="0" y="0" width="{W}" height="{H}" fill="#ffffff"/>"##
        );
        let band_labels = self.write_bands(&mut s, &f);
        self.write_ticks(&mut s, &f);
        s.push_str(&band_labels);
        self.write_titles(&mut s, &f);
        for (i, ser) in self.series.iter().enumerate() {
            write_series(&mut s, &f, i, ser);
        }
        s.push_str("</svg>");
        s
    }

    /// The data ranges (with a margin on top), the y axis from zero if asked.
    fn frame(&self) -> Frame {
        let pts = self.series.iter().flat_map(|s| s.points.iter());
        let xs: Vec<f64> = pts.clone().map(|p| p.0).collect();
        let ys: Vec<f64> = pts
            .clone()
            .flat_map(|p| [Some(p.1), p.2.map(|w| w.0), p.2.map(|w| w.1)])
            .flatten()
            .filter(|v| v.is_finite())
            .collect();
        let (mut x0, mut x1) = (
            xs.iter().copied().fold(f64::INFINITY, f64::min),
            xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        let (mut y0, mut y1) = (
            ys.iter().copied().fold(f64::INFINITY, f64::min),
            ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        if !x0.is_finite() {
            (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
        }
        if self.y_from_zero {
            y0 = y0.min(0.0);
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        if y1 <= y0 {
            y1 = y0 + 1.0;
        }
        y1 += (y1 - y0) * 0.05;
        Frame {
            x0,
            x1,
            y0,
            y1,
            pw: W - LEFT - RIGHT,
            ph: H - TOP - BOTTOM,
        }
    }

    /// Shaded topology regions; returns their labels, drawn later above the grid.
    fn write_bands(&self, s: &mut String, f: &Frame) -> String {
        let mut band_labels = String::new();
        for (i, b) in self.bands.iter().enumerate() {
            let (a, z) = (f.sx(b.from.max(f.x0)), f.sx(b.to.min(f.x1)));
            if z > a {
                let shade = ["#f2f2f2", "#e4e4e4", "#d6d6d6"][i % 3];
                let _ = write!(
                    s,
                    r#"<rect class="band" x="{a:.1}" y="{TOP}" width="{:.1}" height="{}" fill="{shade}"><title>{}</title></rect>"#,
                    z - a,
                    f.ph,
                    escape(&b.tooltip)
                );
                let _ = write!(
                    band_labels,
                    r##"<text x="{:.1}" y="{:.1}" fill="#444" font-size="10">{}</text>"##,
                    a + 3.0,
                    TOP + 12.0 + 12.0 * i as f64,
                    escape(&b.label)
                );
            }
        }
        band_labels
    }

    /// Grid lines and tick labels on both axes.
    fn write_ticks(&self, s: &mut String, f: &Frame) {
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
        for t in xt {
            let x = f.sx(t);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                TOP + f.ph,
                TOP + f.ph + 16.0,
                fmt_num(t)
            );
        }
        for t in ticks(f.y0, f.y1, 6) {
            let y = f.sy(t);
            let _ = write!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
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
            r#"<text x="{:.1}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
            LEFT + pw / 2.0,
            escape(&self.title)
        );
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + pw / 2.0,
            H - 12.0,
            escape(&self.x_label)
        );
        let _ = write!(
            s,
            r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            TOP + ph / 2.0,
            escape(&self.y_label)
        );
    }
}

/// One series: its line, whiskers, markers with tooltips, and its legend entry.
fn write_series(s: &mut String, f: &Frame, i: usize, ser: &Series) {
    let dash = if ser.dashed {
        r#" stroke-dasharray="6 4""#
    } else {
        ""
    };
    let path: Vec<String> = ser
        .points
        .iter()
        .filter(|p| p.1.is_finite())
        .map(|p| format!("{:.1},{:.1}", f.sx(p.0), f.sy(p.1)))
        .collect();
    let color = escape(&ser.color);
    let _ = write!(
        s,
        r#"<polyline class="series" fill="none" stroke="{color}" stroke-width="2.5"{dash} points="{}"/>"#,
        path.join(" ")
    );
    for p in ser.points.iter().filter(|p| p.1.is_finite()) {
        if let Some((lo, hi)) = p.2 {
            let x = f.sx(p.0);
            let _ = write!(
                s,
                r#"<line class="whisker" x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="{color}" stroke-width="1.5"/>"#,
                f.sy(lo),
                f.sy(hi)
            );
        }
        if !ser.dashed {
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{color}"><title>{}: {} at {}</title></circle>"#,
                f.sx(p.0),
                f.sy(p.1),
                escape(&ser.name),
                fmt_num(p.1),
                fmt_num(p.0)
            );
        }
    }
    let ly = TOP + 14.0 + 18.0 * i as f64;
    let lx = LEFT + f.pw + 12.0;
    let _ = write!(
        s,
        r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="2.5"{dash}/><text x="{:.1}" y="{:.1}">{}</text>"#,
        lx + 22.0,
        lx + 28.0,
        ly + 4.0,
        escape(&ser.name)
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
            r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w:.0} {h:.0}" width="{w:.0}" height="{h:.0}" font-family="sans-serif" font-size="11" role="img"><title>{}</title><rect width="{w:.0}" height="{h:.0}" fill="#fff"/><text x="10" y="20" font-size="14" font-weight="bold">{} ({})</text>"##,
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
                        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">{}</text>"#,
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

/// Packages as boxes, cores as cells listing their PUs, coloured by NUMA node;
/// offline or forbidden PUs greyed.
pub fn topology_picture(topo: &Topology) -> String {
    let per_row = 12usize;
    let (cw, ch) = (54.0, 30.0);
    let mut y = 40.0;
    let mut body = String::new();
    for pkg in &topo.packages {
        let cores: Vec<_> = topo
            .cores
            .iter()
            .filter(|c| c.package == Some(pkg.id))
            .collect();
        let rows = cores.len().div_ceil(per_row).max(1);
        let height = 28.0 + rows as f64 * (ch + 6.0);
        let _ = write!(
            body,
            r##"<rect x="10" y="{y:.1}" width="{:.1}" height="{height:.1}" fill="#fafafa" stroke="#333" rx="6"/><text x="18" y="{:.1}" font-weight="bold">Package {} — CPUs {}</text>"##,
            per_row as f64 * (cw + 6.0) + 16.0,
            y + 16.0,
            pkg.id,
            escape(&pkg.cpus.to_string())
        );
        for (i, c) in cores.iter().enumerate() {
            let (cx, cy) = (
                18.0 + (i % per_row) as f64 * (cw + 6.0),
                y + 24.0 + (i / per_row) as f64 * (ch + 6.0),
            );
            let first = c.cpus.first().and_then(|cpu| topo.pu(cpu));
            let node = first.and_then(|p| p.numa_node).unwrap_or(0) as usize;
            let usable = c
                .cpus
                .iter()
                .any(|cpu| topo.pu(cpu).is_some_and(|p| p.allowed));
            let fill = if usable {
                PALETTE[node % PALETTE.len()]
            } else {
                "#bbbbbb"
            };
            let label: Vec<String> = c.cpus.iter().map(|x| x.to_string()).collect();
            let _ = write!(
                body,
                r##"<rect x="{cx:.1}" y="{cy:.1}" width="{cw}" height="{ch}" fill="{fill}" fill-opacity="0.25" stroke="{fill}"><title>core {} (NUMA node {node}): PUs {}</title></rect><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10">{}</text>"##,
                c.id,
                escape(&c.cpus.to_string()),
                cx + cw / 2.0,
                cy + ch / 2.0 + 4.0,
                escape(&label.join("+"))
            );
        }
        y += height + 12.0;
    }
    let w = per_row as f64 * (cw + 6.0) + 40.0;
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w:.0} {:.0}" width="{w:.0}" height="{:.0}" font-family="sans-serif" font-size="12" role="img"><title>topology</title><rect width="100%" height="100%" fill="#fff"/><text x="10" y="24" font-size="14" font-weight="bold">{}</text>{body}</svg>"##,
        y + 10.0,
        y + 10.0,
        escape(&topo.summary())
    )
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
    fn ticks_are_round() {
        assert_eq!(ticks(0.0, 96.0, 8), vec![0.0, 20.0, 40.0, 60.0, 80.0]);
        assert_eq!(ticks(1.0, 2.0, 4), vec![1.0, 1.25, 1.5, 1.75, 2.0]);
    }
}
