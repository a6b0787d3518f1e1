//! What a built-in workload reports: its verification verdict ([`Verification`],
//! with one exit status for each) and the run's report ([`WorkloadReport`]), which
//! the single-workload commands print and a sweep's workload child writes as its
//! last stdout line for the engine to read back. One type on both sides of that
//! pipe, so the two cannot drift apart.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Exit status of a run whose verification passed.
pub const EXIT_PASSED: u8 = 0;
/// Exit status of a run whose result was checked and found wrong.
pub const EXIT_VERIFICATION_FAILED: u8 = 4;
/// Exit status of a run that finished but could not be checked here (no reference
/// answer at this size, a mechanism this CPU lacks); its numbers are real, not
/// verified.
pub const EXIT_VERIFICATION_UNAVAILABLE: u8 = 5;

/// The result of checking a run against an independent reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verification {
    /// Checked and right; what was compared.
    Passed(String),
    /// Checked and wrong; why.
    Failed(String),
    /// Not checked; why not.
    Unavailable(String),
}

impl Verification {
    /// Passed if `ok`, failed otherwise, with the same detail.
    pub fn check(ok: bool, detail: String) -> Verification {
        if ok {
            Verification::Passed(detail)
        } else {
            Verification::Failed(detail)
        }
    }

    pub fn passed(&self) -> bool {
        matches!(self, Verification::Passed(_))
    }

    /// `passed`, `failed` or `unavailable`.
    pub fn verdict(&self) -> &'static str {
        match self {
            Verification::Passed(_) => "passed",
            Verification::Failed(_) => "failed",
            Verification::Unavailable(_) => "unavailable",
        }
    }

    /// What was compared, or why it failed or could not be checked.
    pub fn why(&self) -> &str {
        match self {
            Verification::Passed(w) | Verification::Failed(w) | Verification::Unavailable(w) => w,
        }
    }

    /// The exit status a command (or a sweep's workload child) ends with.
    pub fn exit_code(&self) -> u8 {
        match self {
            Verification::Passed(_) => EXIT_PASSED,
            Verification::Failed(_) => EXIT_VERIFICATION_FAILED,
            Verification::Unavailable(_) => EXIT_VERIFICATION_UNAVAILABLE,
        }
    }

    /// The verdict a workload child's exit status means, if it is one of the three.
    pub fn verdict_of_exit(code: i32) -> Option<&'static str> {
        match u8::try_from(code).ok()? {
            EXIT_PASSED => Some("passed"),
            EXIT_VERIFICATION_FAILED => Some("failed"),
            EXIT_VERIFICATION_UNAVAILABLE => Some("unavailable"),
            _ => None,
        }
    }

    fn from_parts(verdict: &str, why: String) -> Result<Verification, String> {
        Ok(match verdict {
            "passed" => Verification::Passed(why),
            "failed" => Verification::Failed(why),
            "unavailable" => Verification::Unavailable(why),
            other => return Err(format!("unknown verdict `{other}`")),
        })
    }
}

impl std::fmt::Display for Verification {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.verdict(), self.why())
    }
}

/// What one run spent before and after its kernel, in seconds: preparing its input
/// (`prepare_secs` in all, of which `load_secs` reading a prepared input from the
/// cache, `first_touch_secs` faulting in the pages its workers then fill, and
/// `build_secs` generating or building the input when no cache served it), and
/// checking the answer (`verify_secs`); `kernel_secs` is the timed part beside them
/// (all its repetitions). `input` says where the input came from:
/// `cache FILE`, `built and cached FILE` or `built in memory`; `input_bytes` is the
/// prepared input's size, where known.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SetupCosts {
    pub prepare_secs: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_secs: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_touch_secs: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_secs: Option<f64>,
    pub verify_secs: f64,
    /// Seconds in the workload's timed part, every repetition of it (the report's
    /// `seconds` is the figure it counts, e.g. TPC-H's best of its repeats).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_secs: Option<f64>,
    #[serde(default)]
    pub input: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_bytes: Option<u64>,
    /// Which check the cached input had before use (absent where nothing was
    /// checked: an input built in memory, or files written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_check: Option<String>,
}

/// The seconds of every timed trial of a run that repeated its kernel in one
/// process (`graph bfs|pr|count --trials N`), in order. The first trial pays what a
/// fresh process pays (the workers' first wake-up, first-touch page faults of the
/// kernel's arrays, the mapped input's first reads); the others run warm. The
/// summary a peer reports is derived from them: GAP's "Average Time" is the mean of
/// all trials, PEERS.md compares warm trials (the first left out) by their mean and
/// median. In JSON the derived figures are written beside `seconds` and recomputed
/// on reading.
#[derive(Debug, Clone, PartialEq)]
pub struct Trials {
    pub seconds: Vec<f64>,
    /// The trial (0 first) whose seconds and figures the report carries, where it
    /// is not the last: a sweep's run carries its median warm trial's.
    pub picked: Option<usize>,
}

/// The warm trials' summary (every trial after the first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WarmTrials {
    pub count: usize,
    pub mean_seconds: f64,
    pub median_seconds: f64,
    pub min_seconds: f64,
    /// The spread: interquartile range over the median.
    pub iqr_over_median: f64,
}

#[derive(Serialize, Deserialize)]
struct TrialsWire {
    count: usize,
    seconds: Vec<f64>,
    #[serde(default)]
    first_seconds: f64,
    #[serde(default)]
    mean_seconds: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    warm: Option<WarmTrials>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    picked: Option<usize>,
}

impl Trials {
    /// The first trial's seconds (NaN when there is none).
    pub fn first(&self) -> f64 {
        self.seconds.first().copied().unwrap_or(f64::NAN)
    }

    /// The mean over every trial, the first included (GAP's "Average Time").
    pub fn mean(&self) -> f64 {
        scalescope_stats::mean(&self.seconds)
    }

    /// The trials after the first, summarised; `None` with fewer than two trials.
    pub fn warm(&self) -> Option<WarmTrials> {
        let warm = self.seconds.get(1..).filter(|w| !w.is_empty())?;
        let mut sorted = warm.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = scalescope_stats::median(&sorted);
        Some(WarmTrials {
            count: warm.len(),
            mean_seconds: scalescope_stats::mean(warm),
            median_seconds: median,
            min_seconds: sorted[0],
            iqr_over_median: scalescope_stats::iqr(&sorted) / median,
        })
    }
}

impl Serialize for Trials {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        TrialsWire {
            count: self.seconds.len(),
            seconds: self.seconds.clone(),
            first_seconds: self.first(),
            mean_seconds: self.mean(),
            warm: self.warm(),
            picked: self.picked,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Trials {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Trials, D::Error> {
        let w = TrialsWire::deserialize(d)?;
        Ok(Trials {
            seconds: w.seconds,
            picked: w.picked,
        })
    }
}

/// What every workload run reports. In JSON the verdict is spelled out three ways
/// for readers old and new: `verdict` (passed, failed, unavailable), `verification`
/// (the why) and `verified` (true exactly when the verdict is passed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "ReportWire", try_from = "ReportWire")]
pub struct WorkloadReport {
    pub workload: String,
    pub threads: usize,
    pub verification: Verification,
    /// The seconds the workload counts (its timed part).
    pub seconds: f64,
    pub figures: BTreeMap<String, f64>,
    pub units: BTreeMap<String, String>,
    /// Workload-specific detail, typed by workload.
    pub detail: crate::detail::Detail,
    /// What the run spent on set-up and verification (absent in older reports).
    pub setup: Option<SetupCosts>,
    /// Every trial's seconds where the kernel ran more than once in the process
    /// (then `seconds`, `figures` and `detail` are the last trial's).
    pub trials: Option<Trials>,
}

#[derive(Serialize, Deserialize)]
struct ReportWire {
    #[serde(default)]
    workload: String,
    #[serde(default)]
    threads: usize,
    verified: bool,
    #[serde(default)]
    verdict: Option<String>,
    #[serde(default)]
    verification: String,
    #[serde(default)]
    seconds: f64,
    figures: BTreeMap<String, f64>,
    #[serde(default)]
    units: BTreeMap<String, String>,
    #[serde(default)]
    detail: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    setup: Option<SetupCosts>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trials: Option<Trials>,
}

impl From<WorkloadReport> for ReportWire {
    fn from(r: WorkloadReport) -> ReportWire {
        ReportWire {
            workload: r.workload,
            threads: r.threads,
            verified: r.verification.passed(),
            verdict: Some(r.verification.verdict().to_string()),
            verification: r.verification.why().to_string(),
            seconds: r.seconds,
            figures: r.figures,
            units: r.units,
            detail: serde_json::to_value(&r.detail).unwrap_or(serde_json::Value::Null),
            setup: r.setup,
            trials: r.trials,
        }
    }
}

impl TryFrom<ReportWire> for WorkloadReport {
    type Error = String;
    fn try_from(w: ReportWire) -> Result<WorkloadReport, String> {
        // A report without `verdict` (written before it existed) has only the flag.
        let verdict = w
            .verdict
            .unwrap_or_else(|| if w.verified { "passed" } else { "failed" }.into());
        Ok(WorkloadReport {
            detail: crate::detail::Detail::from_wire(&w.workload, w.detail),
            workload: w.workload,
            threads: w.threads,
            verification: Verification::from_parts(&verdict, w.verification)?,
            seconds: w.seconds,
            figures: w.figures,
            units: w.units,
            setup: w.setup,
            trials: w.trials,
        })
    }
}

impl WorkloadReport {
    /// The report from a workload's stdout, if its last non-empty line is one.
    pub fn from_output(output: &str) -> Option<WorkloadReport> {
        let line = output.lines().rev().find(|l| !l.trim().is_empty())?;
        serde_json::from_str(line).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(v: Verification) -> WorkloadReport {
        WorkloadReport {
            workload: "tpch".into(),
            threads: 2,
            verification: v,
            seconds: 0.5,
            figures: [("rows_per_s".to_string(), 1e6)].into(),
            units: [("rows_per_s".to_string(), "rows/s".to_string())].into(),
            detail: crate::detail::Detail::Tpch(crate::detail::TpchDetail {
                query: "q6".into(),
                sf: 0.001,
                layout: "numa".into(),
                lineitem_rows: 6000,
                rows: vec!["revenue".into(), "1.0".into()],
                seconds: 0.5,
                scanned_bytes_per_row: 10,
            }),
            setup: Some(SetupCosts {
                prepare_secs: 0.25,
                load_secs: Some(0.125),
                verify_secs: 0.5,
                input: "cache x.cols".into(),
                ..SetupCosts::default()
            }),
            trials: None,
        }
    }

    #[test]
    fn every_verdict_round_trips_with_its_own_exit_status() {
        let mut codes = Vec::new();
        for v in [
            Verification::Passed("rows equal".into()),
            Verification::Failed("column 1 differs".into()),
            Verification::Unavailable("no reference at SF 0.001".into()),
        ] {
            let r = report(v.clone());
            let line = serde_json::to_string(&r).unwrap();
            let json: serde_json::Value = serde_json::from_str(&line).unwrap();
            assert_eq!(json["verdict"], v.verdict());
            assert_eq!(json["verified"], v.passed());
            assert_eq!(json["verification"], v.why());
            let back = WorkloadReport::from_output(&format!("noise\n{line}\n")).unwrap();
            assert_eq!(back, r);
            assert_eq!(
                Verification::verdict_of_exit(i32::from(v.exit_code())),
                Some(v.verdict())
            );
            codes.push(v.exit_code());
        }
        codes.dedup();
        assert_eq!(codes.len(), 3, "one exit status per verdict");
    }

    #[test]
    fn a_report_without_verdict_reads_from_its_flag() {
        let r =
            WorkloadReport::from_output(r#"{"verified":false,"verification":"x","figures":{}}"#)
                .unwrap();
        assert_eq!(r.verification, Verification::Failed("x".into()));
        assert!(
            WorkloadReport::from_output(r#"{"verified":true,"verdict":"maybe","figures":{}}"#)
                .is_none()
        );
        assert!(WorkloadReport::from_output("not json").is_none());
    }

    #[test]
    fn trials_report_the_first_apart_and_the_warm_ones_like_gap() {
        let mut r = report(Verification::Passed("ok".into()));
        // GAP's "Average Time" of these five trials is 0.6 (the cold first counts);
        // the warm four: mean 0.375, median 0.375, IQR 0.4125 - 0.3375 (type 7).
        r.trials = Some(Trials {
            seconds: vec![1.5, 0.4, 0.3, 0.35, 0.45],
            picked: None,
        });
        let json: serde_json::Value = serde_json::to_value(&r).unwrap();
        let t = &json["trials"];
        assert_eq!(
            (t["count"].as_u64(), t["first_seconds"].as_f64()),
            (Some(5), Some(1.5))
        );
        assert!((t["mean_seconds"].as_f64().unwrap() - 0.6).abs() < 1e-12);
        let warm = &t["warm"];
        assert_eq!(warm["count"], 4);
        assert!((warm["mean_seconds"].as_f64().unwrap() - 0.375).abs() < 1e-12);
        assert!((warm["median_seconds"].as_f64().unwrap() - 0.375).abs() < 1e-12);
        assert_eq!(warm["min_seconds"], 0.3);
        assert!((warm["iqr_over_median"].as_f64().unwrap() - 0.075 / 0.375).abs() < 1e-12);
        let back: WorkloadReport = serde_json::from_value(json).unwrap();
        assert_eq!(back, r);
        // One trial has no warm part; a report without trials writes no field.
        let one = Trials {
            seconds: vec![2.0],
            picked: None,
        };
        assert_eq!((one.warm(), one.first(), one.mean()), (None, 2.0, 2.0));
        r.trials = None;
        assert!(serde_json::to_value(&r).unwrap().get("trials").is_none());
    }
}
