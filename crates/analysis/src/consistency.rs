//! Every finding checked against the measured points before it is printed. A
//! finding states what it rests on as typed premises ([`Premise`]): the point it
//! calls the fastest, the limit it keeps above every measured speedup, the
//! configuration it advises against, the fixed factor it reads off the baseline,
//! the command lines it suggests. Each premise is evaluated here on the curves;
//! a finding whose premise the data refutes, whose interval leaves its quantity's
//! domain, or that contradicts an earlier finding (two knees of one curve after
//! the same thread count) is dropped and counted, with the reason, never printed.

use serde::{Deserialize, Serialize};

use crate::finding::{EvidenceItem, Finding, FindingKind};
use crate::Curve;

/// What a finding rests on, in a form the checker can evaluate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Premise {
    /// The curve's point at `threads` has the highest speedup of the curve
    /// (`within_sd`: or is within its standard deviation of it).
    FastestAt {
        curve: String,
        threads: usize,
        within_sd: bool,
    },
    /// A fitted limit (Amdahl's 1/s, the USL's peak) at or above every measured
    /// speedup of the curve.
    LimitAtLeast {
        curve: String,
        model: String,
        limit: f64,
    },
    /// Advice to run one thread per physical core: no point measured with threads
    /// sharing a core (any placement) is faster than the best without.
    NoFasterWithSmt,
    /// The parallel runs pay one fixed factor over the one-thread run: every p/S of
    /// the curve's parallel points within [`FIXED_FACTOR_SPREAD`] of each other.
    FixedFactor { curve: String },
    /// A scalescope command line the finding suggests: every flag is one that the
    /// subcommand accepts ([`SUGGESTED_FLAGS`]).
    Command { argv: Vec<String> },
}

/// The largest ratio of the highest to the lowest p/S that still reads as one
/// fixed factor (a serial fraction makes p/S grow with p).
pub const FIXED_FACTOR_SPREAD: f64 = 1.25;

/// The subcommands and flags a finding may suggest; `tests/cli/analyze.rs` checks
/// every one against the real command line.
pub const SUGGESTED_FLAGS: &[(&str, &[&str])] = &[
    (
        "sweep",
        &["--threads", "--mem", "--baseline", "--placement", "--reps"],
    ),
    ("analyze", &["--ceilings", "--basis"]),
    ("mem stream", &["--threads", "--json"]),
    ("mem matrix", &["--json"]),
    ("topo", &[]),
];

/// A finding dropped by the checker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dropped {
    pub kind: FindingKind,
    pub title: String,
    pub reason: String,
}

/// The checker's account: how many findings it checked and which it dropped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Consistency {
    pub checked: usize,
    pub dropped: Vec<Dropped>,
}

fn curve<'a>(curves: &'a [Curve], name: &str) -> Option<&'a Curve> {
    curves
        .iter()
        .find(|c| format!("{} / {}", c.placement, c.mem) == name)
}

/// Why `p` does not hold on the curves, or None when it holds.
fn refuted(p: &Premise, curves: &[Curve]) -> Option<String> {
    match p {
        Premise::FastestAt {
            curve: name,
            threads,
            within_sd,
        } => {
            let c = curve(curves, name)?;
            let at = c.points.iter().find(|q| q.threads == *threads)?;
            let best = c
                .points
                .iter()
                .max_by(|a, b| a.speedup.total_cmp(&b.speedup))?;
            // The fits' own rule: the speedup's standard deviation as the slack.
            let slack = if *within_sd { at.speedup_sd } else { 0.0 };
            (at.speedup + slack < best.speedup).then(|| {
                format!(
                    "it rests on {threads} threads being the fastest point of {name}, but {} threads was faster",
                    best.threads
                )
            })
        }
        Premise::LimitAtLeast {
            curve: name,
            model,
            limit,
        } => {
            let c = curve(curves, name)?;
            let best = c
                .points
                .iter()
                .max_by(|a, b| a.speedup.total_cmp(&b.speedup))?;
            (best.speedup > *limit * (1.0 + 1e-9)).then(|| {
                format!(
                    "the {model} fit's limit {limit:.2}x is below the {:.2}x measured at {} threads",
                    best.speedup, best.threads
                )
            })
        }
        Premise::NoFasterWithSmt => smt_refutes(curves),
        Premise::FixedFactor { curve: name } => {
            let c = curve(curves, name)?;
            let f: Vec<f64> = c
                .points
                .iter()
                .filter(|q| q.threads > c.baseline_threads && q.speedup > 0.0)
                .map(|q| q.threads as f64 / q.speedup)
                .collect();
            let (lo, hi) = f
                .iter()
                .fold((f64::MAX, 0.0f64), |(l, h), v| (l.min(*v), h.max(*v)));
            (f.is_empty() || hi > lo * FIXED_FACTOR_SPREAD).then(|| {
                format!("it reads one fixed factor off the baseline, but p/S ranges from {lo:.2} to {hi:.2}")
            })
        }
        Premise::Command { argv } => command_refuted(argv),
    }
}

/// Whether `p` holds on the curves (findings are written so that it does; the
/// check is the guard).
pub(crate) fn holds(p: &Premise, curves: &[Curve]) -> bool {
    refuted(p, curves).is_none()
}

/// A suggested command line as a premise.
pub(crate) fn command(words: &[&str]) -> Premise {
    Premise::Command {
        argv: words.iter().map(|w| (*w).to_string()).collect(),
    }
}

/// Whether some point with threads sharing a core beats every point without.
fn smt_refutes(curves: &[Curve]) -> Option<String> {
    let points = curves
        .iter()
        .flat_map(|c| c.points.iter().map(move |p| (c, p)))
        .filter_map(|(c, p)| Some((c, p, p.usage?.smt_shared)));
    let best = |shared: bool| {
        points
            .clone()
            .filter(move |x| x.2 == shared)
            .max_by(|a, b| a.1.perf.total_cmp(&b.1.perf))
    };
    let (with, without) = (best(true)?, best(false)?);
    (with.1.perf > without.1.perf).then(|| {
        format!(
            "it advises one thread per physical core, but {} at {} threads (threads sharing cores) is the fastest point measured, faster than {} at {} threads",
            with.0.placement, with.1.threads, without.0.placement, without.1.threads
        )
    })
}

/// Why a suggested command line would not parse: an unknown subcommand or flag.
fn command_refuted(argv: &[String]) -> Option<String> {
    let (sub, flags) = SUGGESTED_FLAGS
        .iter()
        .filter(|(sub, _)| {
            let words: Vec<&str> = sub.split(' ').collect();
            argv.len() >= words.len() && argv.iter().zip(&words).all(|(a, w)| a == w)
        })
        .max_by_key(|(sub, _)| sub.len())?;
    let skip = sub.split(' ').count();
    argv.iter()
        .skip(skip)
        .filter(|a| a.starts_with("--"))
        .map(|a| a.split('=').next().unwrap_or(a))
        .find(|a| !flags.contains(a))
        .map(|a| {
            format!(
                "it suggests `scalescope {}`, but `{sub}` has no {a}",
                argv.join(" ")
            )
        })
}

/// An interval outside its quantity's domain: a speedup or a ratio at or below zero.
fn out_of_domain(f: &Finding) -> Option<String> {
    f.evidence.iter().find_map(|e| match &e.item {
        EvidenceItem::Speedup {
            threads,
            ci95: Some((lo, _)),
            ..
        } if *lo <= 0.0 => Some(format!(
            "the speedup interval at {threads} threads reaches {lo:.2}"
        )),
        EvidenceItem::Comparison {
            ci95: Some((lo, _)),
            a,
            b,
            ..
        } if *lo <= 0.0 => Some(format!("the interval of {b} over {a} reaches {lo:.2}")),
        _ => None,
    })
}

/// The findings that pass, and the checker's account of those that do not.
pub fn check(findings: Vec<Finding>, curves: &[Curve]) -> (Vec<Finding>, Consistency) {
    let mut report = Consistency {
        checked: findings.len(),
        dropped: Vec::new(),
    };
    let mut kept: Vec<Finding> = Vec::new();
    for f in findings {
        let why = f
            .premises
            .iter()
            .find_map(|p| refuted(p, curves))
            .or_else(|| out_of_domain(&f))
            .or_else(|| contradiction(&kept, &f));
        match why {
            Some(reason) => report.dropped.push(Dropped {
                kind: f.kind,
                title: f.title,
                reason,
            }),
            None => kept.push(f),
        }
    }
    (kept, report)
}

/// A second knee of one curve after the same thread count ("speeds up after N"
/// beside "slows after N").
fn contradiction(kept: &[Finding], f: &Finding) -> Option<String> {
    if f.kind != FindingKind::Knee {
        return None;
    }
    kept.iter()
        .find(|k| {
            k.kind == FindingKind::Knee && k.curve == f.curve && k.after_threads == f.after_threads
        })
        .map(|k| {
            format!(
                "it contradicts an earlier finding at the same thread count: {}",
                k.title
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggested_commands_are_checked_flag_by_flag() {
        let argv = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(command_refuted(&argv("sweep --threads boundaries")), None);
        assert_eq!(command_refuted(&argv("analyze --ceilings FILE")), None);
        assert_eq!(
            command_refuted(&argv("mem stream --threads 4 --json")),
            None
        );
        // The advice `analyze --baseline threads=2`: analyze has no --baseline.
        let why = command_refuted(&argv("analyze --baseline threads=2")).unwrap_or_default();
        assert!(why.contains("has no --baseline"), "{why}");
    }
}
