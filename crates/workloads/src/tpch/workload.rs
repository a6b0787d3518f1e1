//! TPC-H Q1 or Q6 as a [`Workload`]: parameters, preparation of the columns,
//! repeated timed queries, and the check of the answer against the reference.

use std::time::Instant;

use serde_json::json;

use crate::inputs::{Answer, AnswerBook, Inputs};
use crate::pool::Pool;
use crate::{Figure, SetupCosts, Verification, Workload, WorkloadError};
use scalescope_model::detail::{Detail, TpchDetail};

use super::data::{read_tbl, Layout, Lineitem};
use super::query::{bytes_per_row, check, fixed, q1, q6, reference};
use super::settings::TpchSettings;

/// The most timed query runs one command or sweep run may ask for.
pub const MAX_REPEAT: usize = 10_000;

/// TPC-H Q1 or Q6 as a workload.
pub struct Tpch {
    pub query: String,
    pub sf: f64,
    pub layout: Layout,
    pub repeat: usize,
    tbl: Option<std::path::PathBuf>,
    /// Generate even when the memory estimate exceeds what is available.
    pub force: bool,
    data: Lineitem,
    rows: Vec<String>,
    seconds: f64,
    inputs: Inputs,
    setup: SetupCosts,
    cached: Option<(std::path::PathBuf, String)>,
    /// The independent answer for this query and scale factor.
    answer: Option<Answer>,
}

/// The independent answer to `query` at `sf`: DuckDB's (tests/fixtures/tpch.json)
/// where there is one, else for Q6 the revenue summed row by row as lineitem was
/// generated (`q6_rowwise`, 1e-4 units), else none.
fn independent(query: &str, sf: f64, q6_rowwise: Option<u128>) -> Answer {
    if let Some(r) = reference(query, sf) {
        return Answer::Known(json!({"source": "the reference answer", "rows": r}));
    }
    match (query, q6_rowwise) {
        ("q6", Some(rev)) => Answer::Known(json!({
            "source": "Q6 summed row by row from the generator's values",
            "rows": ["revenue", fixed(rev, 4)],
        })),
        _ => Answer::Unavailable(format!(
            "no reference answer for {query} at SF {sf} (references exist for SF 0.01, 0.1 and 1; Q6 is also checked row by row when lineitem is generated)"
        )),
    }
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

    /// The workload its settings describe (checked when they were parsed).
    pub fn with(settings: &TpchSettings) -> Tpch {
        Tpch {
            query: settings.query.as_str().into(),
            sf: settings.sf.get(),
            layout: settings.layout,
            repeat: settings.repeat.usize(),
            tbl: settings.tbl.clone(),
            force: settings.force,
            data: Lineitem::default(),
            rows: Vec::new(),
            seconds: 0.0,
            inputs: Inputs::default(),
            setup: SetupCosts::default(),
            cached: None,
            answer: None,
        }
    }

    pub fn rows(&self) -> &[String] {
        &self.rows
    }

    /// The table as prepared (partition i built and scanned by worker i).
    pub fn lineitem(&self) -> &Lineitem {
        &self.data
    }
}

impl Tpch {
    /// Lineitem from the cache file `path`, built there first (on every worker) when
    /// missing, stale or corrupt; the answers stored beside it.
    fn prepare_cached(&mut self, path: &std::path::Path, pool: &Pool) -> Result<(), WorkloadError> {
        let shown = path.display().to_string();
        let refused = match super::cache::load(path, self.sf, pool, self.layout, &self.query) {
            Ok(got) => {
                self.setup.input = format!("cache {shown}");
                Ok(got)
            }
            Err(e) => Err(e),
        };
        let (data, loaded) = match refused {
            Ok(got) => got,
            Err(e) => {
                let why = match path.exists() {
                    true => format!("rebuilt and cached {shown} (the cache was refused: {e})"),
                    false => format!("built and cached {shown}"),
                };
                let what = format!("TPC-H lineitem at scale factor {}", self.sf);
                crate::budget::check(&what, crate::budget::tpch_bytes(self.sf), self.force)?;
                self.inputs.create_dir()?;
                let t = Instant::now();
                let (_, q6) = super::cache::build(self.sf, pool, path)?;
                self.setup.build_secs = Some(t.elapsed().as_secs_f64());
                let got = super::cache::load(path, self.sf, pool, self.layout, &self.query)?;
                let book = AnswerBook::beside(path, &got.1.fingerprint);
                for query in ["q1", "q6"] {
                    book.put(query, &independent(query, self.sf, Some(q6)))?;
                }
                self.setup.input = why;
                got
            }
        };
        self.setup.first_touch_secs = Some(loaded.first_touch_secs);
        self.setup.load_secs = Some(loaded.load_secs);
        self.setup.input_bytes = Some(loaded.bytes);
        let book = AnswerBook::beside(path, &loaded.fingerprint);
        // Answers lost (the file deleted): the reference where there is one.
        self.answer = Some(book.get_or(&self.query, || independent(&self.query, self.sf, None))?);
        self.cached = Some((path.to_path_buf(), loaded.fingerprint));
        self.data = data;
        Ok(())
    }
}

impl Workload for Tpch {
    fn name(&self) -> &'static str {
        "tpch"
    }

    fn primary_figure(&self) -> &'static str {
        "rows_per_s"
    }

    fn use_inputs(&mut self, inputs: &Inputs) {
        self.inputs = inputs.clone();
    }

    fn shares_inputs(&self) -> bool {
        self.tbl.is_none()
    }

    fn setup(&self) -> SetupCosts {
        self.setup.clone()
    }

    fn answer_slot(&self) -> Option<(AnswerBook, String)> {
        let (path, fingerprint) = self.cached.as_ref()?;
        Some((AnswerBook::beside(path, fingerprint), self.query.clone()))
    }

    fn prepare(&mut self, pool: &Pool) -> Result<(), WorkloadError> {
        let t = Instant::now();
        self.setup = SetupCosts {
            input: "built in memory".into(),
            ..SetupCosts::default()
        };
        let cache = match &self.tbl {
            Some(_) => None,
            None => self.inputs.file(&super::cache::key(self.sf), "cols"),
        };
        if let Some(path) = cache {
            return self.prepare_cached(&path, pool);
        }
        self.data = match &self.tbl {
            Some(path) => Lineitem::distribute(&read_tbl(path)?, pool, self.layout),
            None => {
                let what = format!("TPC-H lineitem at scale factor {}", self.sf);
                crate::budget::check(&what, crate::budget::tpch_bytes(self.sf), self.force)?;
                let (data, q6) = Lineitem::generate_checked(self.sf, pool, self.layout);
                self.answer = Some(independent(&self.query, self.sf, Some(q6)));
                data
            }
        };
        self.setup.build_secs = Some(t.elapsed().as_secs_f64());
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
        let answer = self
            .answer
            .clone()
            .unwrap_or_else(|| independent(&self.query, self.sf, None));
        let known = match answer {
            Answer::Known(k) => k,
            Answer::Unavailable(why) => return Verification::Unavailable(why),
        };
        let rows: Vec<String> = serde_json::from_value(known["rows"].clone()).unwrap_or_default();
        match check(&self.rows, &rows) {
            Ok(()) => Verification::Passed(format!(
                "{} at SF {} equals {}",
                self.query,
                self.sf,
                known["source"].as_str().unwrap_or("the stored answer")
            )),
            Err(e) => Verification::Failed(e),
        }
    }

    fn detail(&self) -> Detail {
        Detail::Tpch(TpchDetail {
            query: self.query.clone(),
            sf: self.sf,
            layout: self.layout.to_string(),
            lineitem_rows: self.data.rows(),
            rows: self.rows.clone(),
            seconds: self.seconds,
            scanned_bytes_per_row: bytes_per_row(&self.query),
        })
    }
}
