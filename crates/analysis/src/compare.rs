//! The same sweep on two machines or two versions, point by point: the ratio of
//! their performance and whether the difference is significant (Welch's t-test on
//! the runs, p < 0.05), and the sampler's evidence (cross-node traffic, off-node
//! allocations, bandwidth) of each point both recorded, side by side.

use serde::{Deserialize, Serialize};

use crate::evidence::PointEvidence;
use crate::stats::summarize;
use scalescope_model::plan::Point;
use scalescope_model::store::{Header, RunRecord, RunStatus};

use crate::stats::welch_t_test;
use crate::Basis;

/// One point measured in both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareRow {
    #[serde(flatten)]
    pub point: Point,
    pub a_perf: f64,
    pub b_perf: f64,
    /// B's performance over A's (above 1: B is better).
    pub ratio: f64,
    pub p_value: Option<f64>,
    pub significant: bool,
}

/// Both sides and the rows they share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub schema_version: u32,
    pub basis: Basis,
    pub a_machine: String,
    pub b_machine: String,
    pub rows: Vec<CompareRow>,
    /// Points only one side measured.
    pub only_in_a: Vec<Point>,
    pub only_in_b: Vec<Point>,
    /// The evidence of every point both sides recorded evidence for.
    #[serde(default)]
    pub evidence: Vec<EvidencePair>,
}

/// One point's evidence in A and in B (each with its point).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvidencePair {
    pub a: PointEvidence,
    pub b: PointEvidence,
}

/// Points whose runs carry evidence on both sides, A's order.
fn evidence_pairs(a: &[RunRecord], b: &[RunRecord]) -> Vec<EvidencePair> {
    let eb = crate::evidence::summarize(b);
    crate::evidence::summarize(a)
        .into_iter()
        .filter_map(|x| {
            let y = eb.iter().find(|y| y.point == x.point)?.clone();
            Some(EvidencePair { a: x, b: y })
        })
        .collect()
}

fn perf_of(records: &[RunRecord], point: &Point, basis: &Basis) -> Vec<f64> {
    records
        .iter()
        .filter(|r| !r.warmup && r.status == RunStatus::Ok && &r.point == point)
        .filter_map(|r| basis.perf(r))
        .collect()
}

/// Compares B against A on every point both planned.
pub fn compare(
    a: (&Header, &[RunRecord]),
    b: (&Header, &[RunRecord]),
    basis: &Basis,
) -> Comparison {
    let (pa, pb) = (a.0.plan.points(), b.0.plan.points());
    let mut rows = Vec::new();
    for point in pa.iter().filter(|p| pb.contains(p)) {
        let (ra, rb) = (perf_of(a.1, point, basis), perf_of(b.1, point, basis));
        let (Some(sa), Some(sb)) = (summarize(&ra), summarize(&rb)) else {
            continue;
        };
        let p_value = welch_t_test(&ra, &rb).map(|w| w.p_value);
        rows.push(CompareRow {
            point: point.clone(),
            a_perf: sa.median,
            b_perf: sb.median,
            ratio: sb.median / sa.median,
            significant: p_value.is_some_and(|p| p < 0.05),
            p_value,
        });
    }
    Comparison {
        schema_version: crate::ANALYSIS_SCHEMA_VERSION,
        basis: basis.clone(),
        a_machine: a.0.machine.topology.summary(),
        b_machine: b.0.machine.topology.summary(),
        rows,
        only_in_a: pa.iter().filter(|p| !pb.contains(p)).cloned().collect(),
        only_in_b: pb.iter().filter(|p| !pa.contains(p)).cloned().collect(),
        evidence: evidence_pairs(a.1, b.1),
    }
}
