//! TPC-H Q1 or Q6 as a [`Workload`]: parameters, preparation of the columns,
//! repeated timed queries, and the check of the answer against the reference.

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::json;

use crate::pool::Pool;
use crate::{Figure, Verification, Workload, WorkloadError};

use super::data::{read_tbl, Layout, Lineitem};
use super::query::{bytes_per_row, check, q1, q6, reference};

/// TPC-H Q1 or Q6 as a workload.
pub struct Tpch {
    pub query: String,
    pub sf: f64,
    pub layout: Layout,
    pub repeat: usize,
    tbl: Option<std::path::PathBuf>,
    data: Lineitem,
    rows: Vec<String>,
    seconds: f64,
}

impl Tpch {
    /// Where each partition's pages are, by the kernel's answer (`move_pages`):
    /// `[{"partition": i, "pages": {"0": n, ..., "unallocated": m}}]`, or the reason it
    /// is unavailable here.
    pub fn partition_pages(&self) -> serde_json::Value {
        let mut out = Vec::new();
        for (i, buffers) in self.lineitem().partition_buffers().iter().enumerate() {
            let mut pages = serde_json::Map::new();
            for (addr, len) in buffers {
                match scalescope_place::mempolicy::page_nodes(*addr, *len) {
                    Ok(nodes) => {
                        for (node, n) in nodes {
                            let key = node.map_or("unallocated".to_string(), |n| n.to_string());
                            let slot = pages.entry(key).or_insert(0.into());
                            *slot = (slot.as_u64().unwrap_or(0) + n as u64).into();
                        }
                    }
                    Err(e) => return format!("unavailable here: move_pages: {e}").into(),
                }
            }
            out.push(serde_json::json!({"partition": i, "pages": pages}));
        }
        out.into()
    }

    /// # Errors
    /// [`WorkloadError::BadParam`] for an unknown query or a bad scale factor.
    pub fn new(
        query: &str,
        sf: f64,
        layout: Layout,
        repeat: usize,
        tbl: Option<std::path::PathBuf>,
    ) -> Result<Tpch, WorkloadError> {
        if !["q1", "q6"].contains(&query) {
            return Err(WorkloadError::BadParam {
                key: "query".into(),
                detail: format!("`{query}` is not q1 or q6"),
            });
        }
        if !(sf > 0.0 && sf <= 1000.0) {
            return Err(WorkloadError::BadParam {
                key: "sf".into(),
                detail: format!("scale factor {sf} is not in (0, 1000]"),
            });
        }
        Ok(Tpch {
            query: query.into(),
            sf,
            layout,
            repeat: repeat.max(1),
            tbl,
            data: Lineitem::default(),
            rows: Vec::new(),
            seconds: 0.0,
        })
    }

    /// From sweep parameters: `query` (q1), `sf` (0.01), `layout` (numa), `repeat` (5).
    ///
    /// # Errors
    /// [`WorkloadError::BadParam`] naming the parameter.
    pub fn from_params(params: &BTreeMap<String, String>) -> Result<Tpch, WorkloadError> {
        if let Some(k) = params
            .keys()
            .find(|k| !["query", "sf", "layout", "repeat"].contains(&k.as_str()))
        {
            return Err(WorkloadError::BadParam {
                key: k.clone(),
                detail: "unknown (tpch takes query, sf, layout, repeat)".into(),
            });
        }
        let sf = params
            .get("sf")
            .map(|s| s.parse::<f64>())
            .transpose()
            .map_err(|_| WorkloadError::BadParam {
                key: "sf".into(),
                detail: "not a number".into(),
            })?;
        let repeat = params
            .get("repeat")
            .map(|s| s.parse::<usize>())
            .transpose()
            .map_err(|_| WorkloadError::BadParam {
                key: "repeat".into(),
                detail: "not a count".into(),
            })?;
        Tpch::new(
            params.get("query").map(String::as_str).unwrap_or("q1"),
            sf.unwrap_or(0.01),
            params
                .get("layout")
                .map(|s| s.parse())
                .transpose()?
                .unwrap_or(Layout::Numa),
            repeat.unwrap_or(5),
            None,
        )
    }

    pub fn rows(&self) -> &[String] {
        &self.rows
    }

    /// The table as prepared (partition i built and scanned by worker i).
    pub fn lineitem(&self) -> &Lineitem {
        &self.data
    }
}

impl Workload for Tpch {
    fn name(&self) -> &'static str {
        "tpch"
    }

    fn primary_figure(&self) -> &'static str {
        "rows_per_s"
    }

    fn prepare(&mut self, pool: &Pool) -> Result<(), WorkloadError> {
        self.data = match &self.tbl {
            Some(path) => Lineitem::distribute(&read_tbl(path)?, pool, self.layout),
            None => Lineitem::generate(self.sf, pool, self.layout),
        };
        Ok(())
    }

    fn run(&mut self, pool: &Pool) -> (f64, Vec<Figure>) {
        let mut best = f64::INFINITY;
        for _ in 0..self.repeat {
            let t = Instant::now();
            self.rows = if self.query == "q1" {
                q1(&self.data, pool)
            } else {
                q6(&self.data, pool)
            };
            best = best.min(t.elapsed().as_secs_f64());
        }
        self.seconds = best;
        let rows = self.data.rows() as f64;
        let figures = vec![
            Figure {
                name: "rows_per_s".into(),
                value: rows / best,
                unit: "rows/s",
            },
            Figure {
                name: "scanned_gb_per_s".into(),
                value: rows * bytes_per_row(&self.query) as f64 / best / 1e9,
                unit: "GB/s",
            },
        ];
        (best, figures)
    }

    fn verify(&self, _pool: &Pool) -> Verification {
        match reference(&self.query, self.sf) {
            Some(r) => match check(&self.rows, &r) {
                Ok(()) => Verification::Passed(format!(
                    "{} at SF {} equals the reference answer",
                    self.query, self.sf
                )),
                Err(e) => Verification::Failed(e),
            },
            None => Verification::Unavailable(format!(
                "no reference answer for {} at SF {} (references exist for SF 0.01, 0.1 and 1)",
                self.query, self.sf
            )),
        }
    }

    fn detail(&self) -> serde_json::Value {
        json!({
            "query": self.query,
            "sf": self.sf,
            "layout": self.layout,
            "lineitem_rows": self.data.rows(),
            "rows": self.rows,
            "seconds": self.seconds,
            "scanned_bytes_per_row": bytes_per_row(&self.query),
        })
    }
}
