//! The generated ground truth shared by the corpus tests: a mechanism model per
//! placed thread (its core's compute rate, 1 alone or (1 + y)/2 for SMT siblings,
//! times a remote penalty r off the first node, capped per NUMA node at b
//! thread-equivalents of bandwidth, with a serial part s), five mechanisms, four
//! machine shapes, and the results records a sweep of it would write.

#![allow(dead_code)] // each test uses part of it

use std::collections::BTreeMap;
use std::path::Path;

use scalescope_analysis::events::boundary_threads;
use scalescope_model::fingerprint::Fingerprint;
use scalescope_model::plan::{Plan, Point};
use scalescope_model::store::{CommandSpec, Header, RunRecord, RunStatus};
use scalescope_place::{place, MemPolicy, PlaceRequest, Strategy};
use scalescope_topo::Topology;

#[derive(Debug, Clone, Copy)]
pub struct Mechanism {
    pub name: &'static str,
    pub serial: f64,
    pub remote: f64,
    /// Bandwidth per node in thread-equivalents (None: unbounded).
    pub bandwidth: Option<f64>,
    pub smt_yield: f64,
}

pub const MECHANISMS: [Mechanism; 5] = [
    Mechanism {
        name: "compute",
        serial: 0.0,
        remote: 1.0,
        bandwidth: None,
        smt_yield: 0.25,
    },
    Mechanism {
        name: "remote",
        serial: 0.005,
        remote: 0.7,
        bandwidth: None,
        smt_yield: 0.2,
    },
    Mechanism {
        name: "bandwidth",
        serial: 0.0,
        remote: 0.9,
        bandwidth: Some(4.0),
        smt_yield: 0.0,
    },
    Mechanism {
        name: "serial+remote",
        serial: 0.01,
        remote: 0.75,
        bandwidth: None,
        smt_yield: 0.3,
    },
    Mechanism {
        name: "bandwidth+remote",
        serial: 0.002,
        remote: 0.6,
        bandwidth: Some(5.0),
        smt_yield: 0.1,
    },
];

pub const SHAPES: [&str; 4] = [
    "package:2 numa:1 core:8 pu:2",
    "package:4 numa:1 core:6 pu:1",
    "package:2 numa:2 core:4 pu:2",
    "package:1 numa:1 core:12 pu:2",
];

/// P(p): the parallel rate of p threads placed cores-first.
pub fn rate(topo: &Topology, m: &Mechanism, p: usize) -> f64 {
    rate_for(topo, m, &Strategy::CoresFirst, p)
}

/// P(p) under any placement.
pub fn rate_for(topo: &Topology, m: &Mechanism, strategy: &Strategy, p: usize) -> f64 {
    let pl = place(topo, &PlaceRequest::new(strategy.clone(), p)).unwrap();
    let pus: Vec<_> = pl
        .first_cpus()
        .into_iter()
        .map(|c| topo.pu(c).unwrap())
        .collect();
    let mut per_core: BTreeMap<Option<usize>, usize> = BTreeMap::new();
    for pu in &pus {
        *per_core.entry(pu.core).or_default() += 1;
    }
    let first_node = pus[0].numa_node;
    let mut per_node: BTreeMap<Option<u32>, f64> = BTreeMap::new();
    for pu in &pus {
        let sharing = per_core[&pu.core];
        let compute = if sharing > 1 {
            (1.0 + m.smt_yield) / sharing as f64
        } else {
            1.0
        };
        let remote = if pu.numa_node == first_node {
            1.0
        } else {
            m.remote
        };
        *per_node.entry(pu.numa_node).or_default() += compute * remote;
    }
    per_node
        .values()
        .map(|d| m.bandwidth.map_or(*d, |b| d.min(b)))
        .sum()
}

pub fn speedup(m: &Mechanism, rate: f64) -> f64 {
    1.0 / (m.serial + (1.0 - m.serial) / rate)
}

/// The project's seeded generator (SplitMix64), the one the analysis resamples with.
pub use scalescope_analysis::stats::Rng;

pub fn header(topo: &Topology, threads: Vec<usize>, reps: usize) -> Header {
    Header {
        schema: "scalescope.results".into(),
        schema_version: 1,
        scalescope_version: "corpus".into(),
        started_unix_secs: 0.0,
        command: CommandSpec {
            trials: None,
            kind: "external".into(),
            argv: vec!["model".into()],
            shell: false,
            workload: None,
            params: BTreeMap::new(),
            env: vec![],
            metrics: vec![],
        },
        plan: Plan {
            launch: None,
            threads,
            placements: vec![Strategy::CoresFirst],
            mems: vec![MemPolicy::FirstTouch],
            reps,
            warmup: 0,
            options: Default::default(),
            order: Default::default(),
        },
        timeout_secs: None,
        kill_grace_secs: None,
        machine: Fingerprint::read(Path::new("/nonexistent"), topo),
    }
}

/// A header like [`header`] for the study-shaped curves of `curves` and
/// `evidence`: the program `./graph-mining`, five repetitions, over `placements`.
pub fn study_header(topo: &Topology, threads: Vec<usize>, placements: Vec<Strategy>) -> Header {
    let mut h = header(topo, threads, 5);
    h.scalescope_version = "test".into();
    h.command.argv = vec!["./graph-mining".into()];
    h.plan.placements = placements;
    h
}

/// Five runs per point with times 100/S(p), spread by ±0.5%.
pub fn five_runs(h: &Header, speedup: impl Fn(&Strategy, f64) -> f64) -> Vec<RunRecord> {
    let mut out = Vec::new();
    for point in h.plan.points() {
        let s = speedup(&point.placement, point.threads as f64);
        for rep in 0..5 {
            let jitter = 1.0 + 0.005 * (rep as f64 - 2.0) / 2.0;
            out.push(run(point.clone(), rep, 100.0 / s * jitter));
        }
    }
    out
}

pub fn run(point: Point, rep: usize, wall_secs: f64) -> RunRecord {
    RunRecord {
        ranks: None,
        node_evidence: Vec::new(),
        point,
        rep,
        warmup: false,
        thread_cpus: vec![],
        started_unix_secs: 0.0,
        wall_secs,
        user_secs: None,
        sys_secs: None,
        max_rss_bytes: None,
        status: RunStatus::Ok,
        exit_code: Some(0),
        signal: None,
        error: None,
        metrics: BTreeMap::new(),
        placement_check: None,
        stdout_log: None,
        stderr_log: None,
        evidence: None,
        setup: None,
    }
}

/// The thread counts a sweep measures by default (`--threads boundaries`), from
/// the product's own design: 1, 2, a point on each side of every boundary of the
/// placement, the maximum, and midpoints.
pub fn design(topo: &Topology, max: usize) -> Vec<usize> {
    boundary_threads(topo, &[Strategy::CoresFirst], max)
}
