//! Per-run hardware event totals on the run's tasks (inherited by the threads and
//! children started after the counters open): last-level-cache load misses and
//! loads served by another node's memory, through the kernel's generic cache
//! events (`LLC-load-misses`, `node-load-misses`), which it maps to the vendor's
//! own events. Where the PMU has no such event the count says why.

use std::path::Path;

use scalescope_results::evidence::{Measured, PmuCount};

use crate::perf::{self, Counter, Event, Target, TYPE_HW_CACHE};

/// `PERF_COUNT_HW_CACHE_{LL,NODE} | OP_READ << 8 | RESULT_MISS << 16`.
const LLC_LOAD_MISSES: u64 = 2 | (1 << 16);
const NODE_LOAD_MISSES: u64 = 6 | (1 << 16);

/// The counters of one run.
#[derive(Debug)]
pub struct RunCounters {
    counters: Vec<(&'static str, Result<Counter, String>)>,
}

impl RunCounters {
    /// Opens every counter on `pid`; each one that fails keeps its reason.
    pub fn open(root: &Path, pid: u32) -> RunCounters {
        let events = [
            ("llc-load-misses", LLC_LOAD_MISSES),
            ("remote-dram-loads", NODE_LOAD_MISSES),
        ];
        RunCounters {
            counters: events
                .into_iter()
                .map(|(name, config)| {
                    let event = Event {
                        kind: TYPE_HW_CACHE,
                        config,
                        ..Default::default()
                    };
                    let c = perf::open(event, Target::Task { pid, inherit: true })
                        .map_err(|e| perf::explain(&e, root, false));
                    (name, c)
                })
                .collect(),
        }
    }

    /// No counters, for this reason.
    pub fn none(why: &str) -> RunCounters {
        RunCounters {
            counters: vec![
                ("llc-load-misses", Err(why.to_string())),
                ("remote-dram-loads", Err(why.to_string())),
            ],
        }
    }

    /// The totals (or reasons).
    pub fn read(&self) -> Vec<PmuCount> {
        self.counters
            .iter()
            .map(|(name, c)| PmuCount {
                name: (*name).to_string(),
                count: match c {
                    Ok(c) => match c.read() {
                        Ok(v) => Measured::Measured(v),
                        Err(e) => Measured::Unavailable(format!("reading the counter: {e}")),
                    },
                    Err(why) => Measured::Unavailable(why.clone()),
                },
            })
            .collect()
    }
}
