//! The shape of a finding: what kind of thing it is, after which thread count, which
//! machine boundary it is attributed to, how confident the analysis is (a number and
//! a label) and the evidence, as typed items others can add to (a sampler adds its
//! own items next to the slopes and fits this crate computes).

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// Speedup and parallel efficiency at the largest count.
    Efficiency,
    /// The marginal speedup per thread changes.
    Knee,
    /// The scaling models fitted and the one chosen.
    Model,
    /// A fit that contradicts the data, rejected.
    RejectedFit,
    /// The one-thread baseline is special (falling Karp-Flatt).
    Baseline,
    /// Throughput reaches a measured memory-bandwidth ceiling.
    BandwidthSaturation,
    /// Hyper-threading yield on the same cores.
    SmtYield,
    /// Two placements differ at one thread count.
    Placement,
    /// Thread counts that would decide what the measured ones cannot.
    NotEnoughPoints,
    /// Something about the measurement that lowers confidence.
    MeasurementQuality,
    /// What this machine cannot show at all.
    MachineLimit,
    /// Threads of the run that sat idle or shared a CPU (the sampler's evidence).
    Threads,
}

/// How much a finding matters to the reader, in rising order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Context: what was measured, what the machine cannot show.
    Info,
    /// Worth knowing: a bend that speeds up, a placement that wins.
    Notice,
    /// Costs speedup: a bend that flattens, a saturated ceiling, a retrograde curve.
    Warning,
}

impl Severity {
    /// The word in the JSON and the text report.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Notice => "notice",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The machine boundary a finding is attributed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Boundary {
    None,
    Smt,
    L3,
    Numa,
    Package,
    AllCores,
    Oversubscribed,
    Bandwidth,
    Baseline,
    /// A new node of a cluster (a launched sweep's node axis).
    Node,
}

/// How sure the analysis is: `value` in [0, 1] (the bootstrap probability that the
/// effect is real and as large as stated), `label` high/medium/low, or `unknown`
/// when the measurement has no spread to judge by (one repetition).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confidence {
    pub value: Option<f64>,
    pub label: String,
    /// Why it is not higher, when something lowered it.
    pub lowered_by: Vec<String>,
}

impl Confidence {
    /// One repetition: nothing to judge by.
    pub fn unknown(why: &str) -> Confidence {
        Confidence {
            value: None,
            label: "unknown".into(),
            lowered_by: vec![why.to_string()],
        }
    }

    /// From a probability and the fewest repetitions behind it: high needs
    /// p >= 0.95 and at least three repetitions.
    pub fn from_probability(p: f64, reps: usize) -> Confidence {
        if reps < 2 {
            return Confidence::unknown("one repetition: no spread measured");
        }
        let mut lowered_by = Vec::new();
        let label = if p >= 0.95 && reps >= 3 {
            "high"
        } else if p >= 0.95 {
            lowered_by.push(format!("only {reps} repetitions"));
            "medium"
        } else if p >= 0.8 {
            "medium"
        } else {
            "low"
        };
        Confidence {
            value: Some(p),
            label: label.into(),
            lowered_by,
        }
    }

    /// A measurement that is not certain but not a statistic either.
    pub fn stated(label: &str) -> Confidence {
        Confidence {
            value: None,
            label: label.into(),
            lowered_by: Vec::new(),
        }
    }

    /// At most low, for `why` (unknown and low stay as they are).
    pub fn cap_low(&mut self, why: &str) {
        if self.label == "high" || self.label == "medium" {
            self.label = "low".into();
            self.lowered_by.push(why.to_string());
        }
    }

    /// One step lower (high -> medium -> low) for `why`; unknown stays unknown.
    pub fn lower(&mut self, why: &str) {
        let next = match self.label.as_str() {
            "high" => "medium",
            "medium" | "low" => "low",
            // A stated confidence ("measured", "unknown") has no step to go down:
            // "measured; lowered by ..." would say a thing that did not happen.
            _ => return,
        };
        self.label = next.into();
        self.lowered_by.push(why.to_string());
    }
}

/// One piece of evidence: a sentence for people and the typed numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub text: String,
    #[serde(flatten)]
    pub item: EvidenceItem,
}

/// The numbers behind a piece of evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum EvidenceItem {
    /// A measured speedup and its 95% interval.
    Speedup {
        threads: usize,
        speedup: f64,
        ci95: Option<(f64, f64)>,
        runs: usize,
    },
    /// Speedup per added thread over a range of thread counts.
    Slope {
        from_threads: usize,
        to_threads: usize,
        slope: f64,
        ci95: Option<(f64, f64)>,
    },
    /// Relative change of the slope at a knee, (after - before) / |before|.
    SlopeChange {
        change: f64,
        ci95: Option<(f64, f64)>,
    },
    /// A fitted model.
    Fit {
        model: String,
        params: Vec<(String, f64)>,
        aicc: Option<f64>,
        r_squared: f64,
    },
    /// A topology boundary of the placement.
    TopologyEvent { threads: usize, event: String },
    /// Karp-Flatt serial fraction by thread count.
    KarpFlatt { values: Vec<(usize, f64)> },
    /// A measured bandwidth ceiling and the throughput that reaches it.
    Ceiling {
        source: String,
        ceiling: f64,
        reached: f64,
        unit: String,
    },
    /// A field of the results header (load, hypervisor, placement checks).
    Header { field: String, value: String },
    /// Two measurements compared.
    Comparison {
        a: String,
        b: String,
        ratio: f64,
        ci95: Option<(f64, f64)>,
        p_value: Option<f64>,
    },
    /// Cross-node memory traffic measured beside the runs on each side of a knee.
    Traffic {
        before_threads: usize,
        after_threads: usize,
        before_bytes: f64,
        after_bytes: f64,
    },
    /// Anything else, in words only.
    Note,
}

impl Evidence {
    pub fn new(text: impl Into<String>, item: EvidenceItem) -> Evidence {
        Evidence {
            text: text.into(),
            item,
        }
    }

    pub fn note(text: impl Into<String>) -> Evidence {
        Evidence::new(text, EvidenceItem::Note)
    }
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One thing the analysis concludes, with the numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub severity: Severity,
    pub title: String,
    /// The curve (`placement / mem`) it belongs to, if any.
    pub curve: Option<String>,
    /// The last thread count before the change, where that applies.
    pub after_threads: Option<usize>,
    pub boundary: Boundary,
    pub confidence: Confidence,
    pub evidence: Vec<Evidence>,
    pub advice: Option<String>,
    /// What measurement would confirm or refute the explanation.
    pub check: Option<String>,
    /// The speedup at the curve's last point that this finding accounts for: what
    /// the curve would have gained had the slope before a knee continued, or the
    /// distance to ideal of an efficiency summary (None where it does not apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup_lost: Option<f64>,
    /// What the finding rests on, checked against the data before it is printed
    /// (`crate::consistency`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub premises: Vec<crate::consistency::Premise>,
}

impl Finding {
    /// A finding with no thread count, boundary or advice yet.
    pub fn new(kind: FindingKind, severity: Severity, title: impl Into<String>) -> Finding {
        Finding {
            kind,
            severity,
            title: title.into(),
            curve: None,
            after_threads: None,
            boundary: Boundary::None,
            confidence: Confidence::stated("measured"),
            evidence: Vec::new(),
            advice: None,
            check: None,
            speedup_lost: None,
            premises: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_repetition_is_never_high() {
        for p in [0.0, 0.5, 0.99, 1.0] {
            assert_eq!(Confidence::from_probability(p, 1).label, "unknown");
        }
        assert_eq!(Confidence::from_probability(0.99, 2).label, "medium");
        assert_eq!(Confidence::from_probability(0.99, 5).label, "high");
        let mut c = Confidence::from_probability(0.99, 5);
        c.lower("load 3.4 on 2 CPUs");
        assert_eq!(c.label, "medium");
        assert_eq!(c.lowered_by, ["load 3.4 on 2 CPUs"]);
        // A stated confidence has no step down: nothing is said to lower it.
        for label in ["measured", "unknown"] {
            let mut c = Confidence::stated(label);
            c.lower("the machine runs under KVM");
            assert_eq!((c.label.as_str(), c.lowered_by.len()), (label, 0));
        }
    }

    #[test]
    fn evidence_is_typed_json() {
        let e = Evidence::new(
            "slope 0.7",
            EvidenceItem::Slope {
                from_threads: 24,
                to_threads: 48,
                slope: 0.7,
                ci95: Some((0.6, 0.8)),
            },
        );
        let v = serde_json::to_value(&e).unwrap_or_default();
        assert_eq!(v["kind"], "slope");
        assert_eq!(v["text"], "slope 0.7");
        assert_eq!(v["to_threads"], 48);
    }
}
