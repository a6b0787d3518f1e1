//! Why the curve bends. Pure functions over a results header (which carries the
//! machine's topology) and its runs: per-placement speedup, efficiency and the
//! Karp-Flatt serial fraction; Amdahl and USL fits; knees, each attributed to the
//! topology event it coincides with under that placement; hyper-threading yield;
//! placement comparisons; and findings in words with their numbers. No I/O, no clock:
//! a sweep recorded on a 96-PU machine is analysed here exactly as it would be there.

pub mod basis_rule;
pub mod ceiling;
pub mod compare;
pub mod consistency;
mod curve;
pub mod events;
pub mod evidence;
pub mod evidence_findings;
pub mod finding;
mod findings;
pub mod fit;
pub mod hops;
pub mod ht_doubling;
pub mod knee;
pub mod links;
pub mod matrix_doc;
mod placements;
pub mod predict;
pub mod quality;
pub mod smooth;
pub mod summary;

/// The statistics this crate shares with every other (`scalescope-stats`).
pub use scalescope_stats as stats;
pub use scalescope_stats::boot;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use scalescope_model::store::{Header, RunRecord};
use scalescope_place::{MemPolicy, Strategy};

use events::{TopologyEvent, Usage};
pub use finding::{Boundary, Confidence, Evidence, EvidenceItem, Finding, FindingKind, Severity};
use fit::{AmdahlFit, ModelChoice, UslFit};
use knee::{Knee, Undecided};

/// Version of the analysis JSON (docs/json.md). 2: findings carry kind, boundary,
/// confidence and typed evidence; knees carry intervals; curves carry the models.
/// 3: knees are departures from the best smooth family (`smooth` per curve), a
/// knee's `bend` and a finding's `severity` are closed sets, findings carry their
/// `premises` and `speedup_lost`, the consistency checker's account
/// (`consistency`), points name their `outliers`, and intervals stay in their
/// quantity's domain.
pub const ANALYSIS_SCHEMA_VERSION: u32 = 3;

/// What "performance" means for a curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Basis {
    /// 1 / wall time.
    Time,
    /// A figure of merit; `higher_is_better` false means 1 / value.
    Metric {
        name: String,
        higher_is_better: bool,
    },
}

impl Basis {
    /// The header's first figure of merit if there is one, else time.
    pub fn default_for(header: &Header) -> Basis {
        match header.command.metrics.first() {
            Some(m) => Basis::Metric {
                name: m.name.clone(),
                higher_is_better: m.higher_is_better,
            },
            None => Basis::Time,
        }
    }

    /// `time`, `metric:NAME` (its direction taken from the header when it names
    /// the metric), or the header's default when `text` is `None`.
    ///
    /// # Errors
    /// A message naming the text when it is neither form.
    pub fn parse(text: Option<&str>, header: &Header) -> Result<Basis, String> {
        match text {
            None => Ok(Basis::default_for(header)),
            Some("time") => Ok(Basis::Time),
            Some(t) => match t.strip_prefix("metric:") {
                Some(name) if !name.is_empty() => Ok(Basis::Metric {
                    name: name.to_string(),
                    higher_is_better: header
                        .command
                        .metrics
                        .iter()
                        .find(|m| m.name == name)
                        .is_none_or(|m| m.higher_is_better),
                }),
                _ => Err(format!("basis `{t}`: expected `time` or `metric:NAME`")),
            },
        }
    }

    /// As [`Basis::parse`], then [`Basis::check_known`] against the results.
    ///
    /// # Errors
    /// As both.
    pub fn parse_known(
        text: Option<&str>,
        header: &Header,
        runs: &[RunRecord],
    ) -> Result<Basis, String> {
        let b = Basis::parse(text, header)?;
        b.check_known(header, runs)?;
        Ok(b)
    }

    /// Refuses a `metric:NAME` basis that neither the header nor any run knows,
    /// naming the metrics that exist (an unknown name would analyse nothing).
    ///
    /// # Errors
    /// A message naming the basis and the metrics recorded.
    pub fn check_known(&self, header: &Header, runs: &[RunRecord]) -> Result<(), String> {
        let Basis::Metric { name, .. } = self else {
            return Ok(());
        };
        let mut known: std::collections::BTreeSet<&str> = header
            .command
            .metrics
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        known.extend(
            runs.iter()
                .flat_map(|r| r.metrics.keys().map(String::as_str)),
        );
        if known.contains(name.as_str()) {
            return Ok(());
        }
        let list: Vec<&str> = known.into_iter().collect();
        Err(if list.is_empty() {
            format!("basis `metric:{name}`: these results record no metric; use `time`")
        } else {
            format!(
                "basis `metric:{name}`: no such metric in these results (recorded: {}); or use `time`",
                list.join(", ")
            )
        })
    }

    pub(crate) fn perf(&self, r: &RunRecord) -> Option<f64> {
        let v = match self {
            // A launched run's time without the launcher's own start-up.
            Basis::Time => 1.0 / r.figure_secs(),
            Basis::Metric {
                name,
                higher_is_better: true,
            } => *r.metrics.get(name)?,
            Basis::Metric {
                name,
                higher_is_better: false,
            } => 1.0 / *r.metrics.get(name)?,
        };
        (v.is_finite() && v > 0.0).then_some(v)
    }

    /// The run's figure on this basis as recorded (the time, or the metric's
    /// value), when [`Basis::perf`] gives it none: `None` when it has one, or when
    /// the metric is absent.
    pub(crate) fn unusable(&self, r: &RunRecord) -> Option<f64> {
        let raw = match self {
            Basis::Time => r.figure_secs(),
            Basis::Metric { name, .. } => *r.metrics.get(name)?,
        };
        self.perf(r).is_none().then_some(raw)
    }

    pub fn label(&self) -> String {
        match self {
            Basis::Time => "wall time".into(),
            Basis::Metric { name, .. } => format!("figure of merit `{name}`"),
        }
    }
}

/// One measured thread count of a curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    pub threads: usize,
    pub runs: usize,
    /// Median performance (1/s for time, the metric otherwise) and its standard error.
    pub perf: f64,
    pub perf_se: f64,
    pub time_median_secs: Option<f64>,
    pub time_ci95_secs: Option<(f64, f64)>,
    pub metric_median: Option<f64>,
    /// Against the baseline (1 thread, or the smallest count measured).
    pub speedup: f64,
    pub speedup_sd: f64,
    /// Bootstrap 95% interval of the speedup (None with one repetition).
    pub speedup_ci95: Option<(f64, f64)>,
    pub efficiency: f64,
    /// Karp-Flatt experimentally determined serial fraction (needs a 1-thread baseline).
    pub karp_flatt: Option<f64>,
    pub usage: Option<Usage>,
    /// Runs far from the point's others (named, never dropped: the median and the
    /// intervals already resist one of them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outliers: Vec<Outlier>,
}

/// One run far from its point's others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outlier {
    /// The run's repetition number.
    pub rep: usize,
    /// Its performance over the point's median (below 1: slower).
    pub perf_over_median: f64,
    /// What the sampler saw on its CPUs while it ran (absent without evidence):
    /// other work's share beyond the run's own, and the hypervisor's (steal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_share: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_share: Option<f64>,
}

/// A knee and what it coincides with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttributedKnee {
    #[serde(flatten)]
    pub knee: Knee,
    /// The topology event that happens between `threads` and `next_threads`.
    pub cause: Option<TopologyEvent>,
    /// `coincides` (inside the interval) or `none`.
    pub attribution: String,
    pub boundary: Boundary,
    /// Set when the knee is implied by the mechanism model fitted to the whole
    /// curve rather than found by the local test (docs/ANALYSIS.md, Knees).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implied_by: Option<predict::implied::MechanismFit>,
}

/// Speedup against thread count for one placement and memory policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    pub placement: Strategy,
    pub mem: MemPolicy,
    pub baseline_threads: usize,
    pub points: Vec<CurvePoint>,
    pub amdahl: Option<AmdahlFit>,
    pub usl: Option<UslFit>,
    /// Every model fitted and the one chosen by AICc.
    pub models: ModelChoice,
    pub knees: Vec<AttributedKnee>,
    /// Bends seen where a side has too few points to decide.
    pub undecided: Vec<Undecided>,
    /// The knees' null hypothesis: the best smooth family and its lack of fit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smooth: Option<knee::SmoothNull>,
    pub events: Vec<TopologyEvent>,
    /// The ranks per node of a launched sweep's curve over its node axis (its
    /// points are node counts at this many ranks each); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks_per_node: Option<usize>,
}

impl Curve {
    /// The curve's name in findings: placement and memory policy, and the ranks
    /// per node of a curve over nodes.
    pub fn label(&self) -> String {
        match self.ranks_per_node {
            Some(r) => format!("{} / {} / {r} ranks per node", self.placement, self.mem),
            None => format!("{} / {}", self.placement, self.mem),
        }
    }
}

/// Hyper-threading yield like with like: the same N cores with one thread each
/// (cores-first at N) and with two (smt-pairs at 2N).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmtPair {
    pub cores: usize,
    pub mem: MemPolicy,
    /// Median performance with one and with two threads per core.
    pub one_per_core: f64,
    pub two_per_core: f64,
    pub ratio: f64,
    /// Bootstrap 95% interval of the ratio (None with one repetition).
    pub ci95: Option<(f64, f64)>,
    pub runs: usize,
}

/// The hyper-threading yield over every like-with-like pair measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmtYield {
    pub pairs: Vec<SmtPair>,
    /// The ratio of the pair with the most cores.
    pub ratio: Option<f64>,
    /// Why there is no ratio, when there is none.
    pub unavailable: Option<String>,
}

/// Placements compared at one thread count and memory policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementComparison {
    pub threads: usize,
    pub mem: MemPolicy,
    /// Median performance per placement.
    pub perf: BTreeMap<String, f64>,
    pub best: String,
    pub worst: String,
    pub ratio: f64,
    /// Bootstrap 95% interval of the ratio (None with one repetition).
    pub ci95: Option<(f64, f64)>,
    /// Welch's t-test on the runs of best and worst, p < 0.05.
    pub significant: bool,
    pub p_value: Option<f64>,
    /// The runs of the two placements alternate in time; when they do not, drift
    /// over the sweep can look like a difference between them.
    pub interleaved: bool,
    pub runs: usize,
}

/// Everything `scalescope analyze` reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub schema_version: u32,
    pub machine: String,
    pub basis: Basis,
    pub curves: Vec<Curve>,
    pub smt_yield: SmtYield,
    pub placement_comparisons: Vec<PlacementComparison>,
    /// What about the measurement lowers confidence.
    pub quality: quality::Quality,
    pub findings: Vec<Finding>,
    /// The sampler's evidence per point (empty for results recorded without it).
    #[serde(default)]
    pub evidence: Vec<evidence::PointEvidence>,
    /// Findings checked against the data, and those dropped with the reason.
    #[serde(default)]
    pub consistency: consistency::Consistency,
}

/// A launched sweep's node axis, where it holds more than one node count: its
/// curves are then over the nodes (else over the threads, like any sweep).
pub(crate) fn node_curves_axis(header: &Header) -> Option<Vec<(usize, usize)>> {
    let axis = header.plan.launch.as_ref()?.node_axis()?;
    axis.iter().any(|&(n, _)| n != axis[0].0).then_some(axis)
}

/// One curve per placement and memory policy; for a launched sweep over several
/// node counts, one per placement and ranks-per-node value, over the nodes.
fn curves(header: &Header, records: &[RunRecord], basis: &Basis) -> Vec<Curve> {
    let topo = &header.machine.topology;
    let pairs = header
        .plan
        .placements
        .iter()
        .flat_map(|pl| header.plan.mems.iter().map(move |m| (pl, m)));
    match node_curves_axis(header) {
        Some(axis) => {
            let mut per_node: Vec<usize> = axis.iter().map(|&(_, r)| r).collect();
            per_node.sort_unstable();
            per_node.dedup();
            pairs
                .flat_map(|pm| per_node.iter().map(move |&r| (pm, r)))
                .filter_map(|(pm, r)| curve::node_curve(topo, header, records, basis, pm, r))
                .collect()
        }
        _ => pairs
            .filter_map(|(pl, m)| curve::curve(topo, header, records, basis, pl, m))
            .collect(),
    }
}

/// Analyses a sweep.
pub fn analyze(header: &Header, records: &[RunRecord], basis: &Basis) -> Analysis {
    analyze_with(header, records, basis, &[])
}

/// Analyses a sweep with measured bandwidth ceilings (from `mem stream` documents).
pub fn analyze_with(
    header: &Header,
    records: &[RunRecord],
    basis: &Basis,
    ceilings: &[ceiling::Ceiling],
) -> Analysis {
    let topo = &header.machine.topology;
    let curves = curves(header, records, basis);
    let smt_yield = placements::smt_yield(topo, header, records, basis);
    let placement_comparisons = placements::compare_placements(header, records, basis);
    let mut quality = quality::assess(header, records);
    quality
        .warnings
        .extend(quality::unusable_figures(records, basis));
    quality
        .warnings
        .extend(quality::outside_plan(header, records));
    quality.warnings.extend(quality::points_without_a_figure(
        header, records, basis, &curves,
    ));
    let evidence = evidence::summarize(records);
    let load_refuted = quality.refute_load(header, &evidence);
    let mut findings = findings::findings(
        &findings::Inputs {
            topo,
            basis,
            curves: &curves,
            smt: &smt_yield,
            cmp: &placement_comparisons,
            quality: &quality,
        },
        ceilings,
    );
    let timed_share = basis_rule::timed_share(records).map(|share| evidence_findings::TimedShare {
        share,
        basis_is_time: *basis == Basis::Time,
    });
    evidence_findings::add(&mut findings, &curves, &evidence, timed_share);
    findings.extend(load_refuted.map(|text| {
        let mut f = finding::Finding::new(
            finding::FindingKind::MeasurementQuality,
            Severity::Info,
            text,
        );
        f.confidence = finding::Confidence::stated("measured");
        f
    }));
    findings.extend(
        ht_doubling::doublings_in_sweep(header, records, basis)
            .iter()
            .map(|d| {
                let mut f = finding::Finding::new(
                    finding::FindingKind::SmtYield,
                    Severity::Info,
                    d.sentence(),
                );
                f.boundary = d.on.boundary();
                f
            }),
    );
    let (findings, consistency) = consistency::check(findings, &curves);
    Analysis {
        consistency,
        schema_version: ANALYSIS_SCHEMA_VERSION,
        machine: topo.summary(),
        basis: basis.clone(),
        curves,
        smt_yield,
        placement_comparisons,
        quality,
        findings,
        evidence,
    }
}
