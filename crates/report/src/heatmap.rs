//! Heatmaps: a matrix of values with row and column labels, each cell coloured from
//! the lowest value to the highest (NUMA bandwidth and latency matrices, core-to-core
//! latency). Written through [`crate::markup`].

use crate::axis::fmt_num;
use crate::markup::{el, Markup, D0, D1};

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
    pub fn to_svg(&self) -> Markup {
        let cell = (480.0 / self.cols.len().max(1) as f64).clamp(14.0, 60.0);
        let (w, h) = (
            120.0 + cell * self.cols.len() as f64 + 20.0,
            70.0 + cell * self.rows.len() as f64 + 20.0,
        );
        let mut body = Markup::from_iter([
            el("title").text(&self.title),
            el("rect")
                .attr("width", D0(w))
                .attr("height", D0(h))
                .attr("fill", "#fff")
                .empty(),
            el("text")
                .attr("x", 10)
                .attr("y", 20)
                .attr("font-size", 14)
                .attr("font-weight", "bold")
                .text(&format!("{} ({})", self.title, self.unit)),
        ]);
        for (j, c) in self.cols.iter().enumerate() {
            body.push(
                el("text")
                    .attr("x", D1(120.0 + cell * (j as f64 + 0.5)))
                    .attr("y", 60)
                    .attr("text-anchor", "middle")
                    .text(c),
            );
        }
        for (i, r) in self.rows.iter().enumerate() {
            body.push(self.row_svg(i, r, cell));
        }
        el("svg")
            .attr("xmlns", "http://www.w3.org/2000/svg")
            .attr("viewBox", format!("0 0 {w:.0} {h:.0}"))
            .attr("width", D0(w))
            .attr("height", D0(h))
            .attr("font-family", "sans-serif")
            .attr("font-size", 12)
            .attr("role", "img")
            .child(body)
    }

    /// Row `i`: its label and its cells, coloured from the lowest value to the highest.
    fn row_svg(&self, i: usize, r: &str, cell: f64) -> Markup {
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
        let y = 70.0 + cell * i as f64;
        let mut out = Markup::from_iter([el("text")
            .attr("x", 112)
            .attr("y", D1(y + cell / 2.0 + 4.0))
            .attr("text-anchor", "end")
            .text(r)]);
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
            out.push(
                el("rect")
                    .attr("x", D1(x))
                    .attr("y", D1(y))
                    .attr("width", D1(cell))
                    .attr("height", D1(cell))
                    .attr("fill", fill)
                    .attr("stroke", "#fff")
                    .child(el("title").text(&label)),
            );
            if cell >= 36.0 {
                out.push(
                    el("text")
                        .attr("x", D1(x + cell / 2.0))
                        .attr("y", D1(y + cell / 2.0 + 4.0))
                        .attr("text-anchor", "middle")
                        .attr("font-size", 12)
                        .text(&label),
                );
            }
        }
        out
    }
}
