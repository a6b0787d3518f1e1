//! The tour (`scalescope` with no arguments): short sweeps of three built-in
//! workloads that bend for different reasons (NAS EP, compute-bound; STREAM,
//! bandwidth-bound; diamond counting on a Kronecker graph, irregular) over the
//! placements that actually differ on this machine, and one report for all three.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use scalescope_model::plan::Plan;
use scalescope_place::{place, MemPolicy, PlaceRequest, Strategy};
use scalescope_report::ResultSet;
use scalescope_sweep::engine::{Clock, SystemClock};
use scalescope_topo::Topology;

use crate::prepare::{self, Ready};
use crate::run::{self, Hooks, Options};
use crate::settings::Target;
use crate::SessionError;

/// One workload of the tour: its name, what it shows, its parameters, and the
/// trials of its kernel in each run's process (the median warm one counts).
pub struct TourWorkload {
    pub name: &'static str,
    pub what: &'static str,
    pub params: &'static [(&'static str, &'static str)],
    pub trials: u64,
}

/// The tour's workloads, in the order they run.
pub const WORKLOADS: [TourWorkload; 3] = [
    TourWorkload {
        name: "ep",
        what: "NAS EP class S (compute-bound)",
        params: &[("class", "S")],
        trials: 1,
    },
    TourWorkload {
        name: "stream",
        what: "STREAM, 4x the last-level cache per array (bandwidth-bound)",
        params: &[("ntimes", "4")],
        trials: 1,
    },
    TourWorkload {
        name: "graph",
        what: "diamond counting on a Kronecker graph, scale 14 (irregular, memory-hungry)",
        params: &[("graph", "kron:14"), ("pattern", "diamond")],
        // A count of about 0.1 s in a run of over a second: one cold trial a run
        // spread the tour's speedup from 0.7x to 3.1x on a 2-vCPU guest.
        trials: 5,
    },
];

/// Seconds after which a tour run is stopped.
const TOUR_TIMEOUT_SECS: f64 = 300.0;

/// Thread counts: every count on small machines, powers of two (and the maximum)
/// on large ones.
pub fn threads(usable: usize) -> Vec<usize> {
    if usable <= 8 {
        return (1..=usable).collect();
    }
    let mut v: Vec<usize> = std::iter::successors(Some(1), |t| Some(t * 2))
        .take_while(|t| *t < usable)
        .collect();
    v.push(usable);
    v
}

/// Strategies whose CPU choices differ somewhere along `threads` (one per group,
/// in the order cores-first, compact, scatter, spread, smt-pairs).
pub fn distinct_placements(topo: &Topology, threads: &[usize]) -> Vec<Strategy> {
    let order = [
        Strategy::CoresFirst,
        Strategy::Compact,
        Strategy::Scatter,
        Strategy::Spread,
        Strategy::SmtPairs,
    ];
    let mut seen: Vec<Vec<Vec<u32>>> = Vec::new();
    let mut out = Vec::new();
    for strategy in order {
        let choices: Option<Vec<Vec<u32>>> = threads
            .iter()
            .map(|&t| {
                place(topo, &PlaceRequest::new(strategy.clone(), t))
                    .ok()
                    .map(|p| p.first_cpus())
            })
            .collect();
        let Some(choices) = choices else { continue };
        if !seen.contains(&choices) {
            seen.push(choices);
            out.push(strategy);
        }
    }
    out
}

/// The plan every tour workload runs: 3 measured runs after a warm-up per point.
pub fn plan(topo: &Topology) -> Plan {
    let threads = threads(scalescope_place::every_usable_cpu(topo));
    Plan {
        launch: None,
        placements: distinct_placements(topo, &threads),
        threads,
        mems: vec![MemPolicy::FirstTouch],
        reps: 3,
        warmup: 1,
        options: Default::default(),
        order: Default::default(),
    }
}

/// A fresh tour directory under `scalescope-results/`.
pub fn out_dir() -> PathBuf {
    crate::names::fresh_dir(
        Path::new("scalescope-results"),
        "tour",
        SystemClock.unix_secs(),
    )
}

/// One tour workload's sweep, ready to run in `dir/NAME`.
///
/// # Errors
/// A workload that does not build, a point the machine cannot host, I/O.
pub fn ready(
    topo: &Topology,
    plan: &Plan,
    w: &TourWorkload,
    dir: &Path,
) -> Result<Ready, SessionError> {
    let params: BTreeMap<String, String> = w
        .params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let target = Target {
        workload: Some(w.name.into()),
        params,
        trials: crate::settings::Trials::new(w.trials),
        ..Target::default()
    };
    let command = prepare::command_of(&target, topo)?;
    let timeout = crate::settings::Timeout::checked(TOUR_TIMEOUT_SECS).ok();
    let template = prepare::template_of(&command, timeout, crate::settings::default_kill_grace())?;
    let points = scalescope_sweep::engine::prepare_points(topo, &plan.points())?;
    let header = prepare::new_header(command, plan.clone(), Some(TOUR_TIMEOUT_SECS), topo);
    let store = scalescope_model::store::ResultsStore::create(&dir.join(w.name), &header)?;
    Ok(Ready {
        planned: prepare::Planned {
            header,
            template,
            points,
        },
        store,
        earlier: Vec::new(),
        inputs: scalescope_workloads::Inputs::default(),
    })
}

/// Runs one tour workload; the caller collects the sets and writes one report.
///
/// # Errors
/// As [`ready`] and [`run::run`].
pub fn sweep(
    topo: &Topology,
    plan: &Plan,
    w: &TourWorkload,
    dir: &Path,
    hooks: Hooks,
) -> Result<(ResultSet, bool), SessionError> {
    let r = ready(topo, plan, w, dir)?;
    let finished = run::run(r, hooks, &Options::default())?;
    Ok((finished.set, finished.interrupted))
}

/// The larger machine the tour predicts: twice this machine's packages (at least
/// two), at least 8 cores each, two SMT threads per core, as a synthetic spec.
pub fn prediction_target(topo: &Topology) -> String {
    let packages = topo.packages.len().max(1);
    let cores = topo.cores.len().max(1).div_ceil(packages);
    format!(
        "package:{} numa:1 core:{} pu:2",
        (2 * packages).max(2),
        cores.max(8)
    )
}

/// The tour's prediction: the model calibrated on one tour sweep, asked about
/// [`prediction_target`]. Returns the target's spec and the prediction.
///
/// # Errors
/// A sentence when the sweep cannot calibrate the model (e.g. a one-CPU machine
/// measures a single thread count) or the target cannot be built.
pub fn predict(
    topo: &Topology,
    set: &ResultSet,
) -> Result<(String, scalescope_analysis::predict::Prediction), String> {
    use scalescope_analysis::predict;
    let spec = prediction_target(topo);
    let target = scalescope_topo::Source::Synthetic(spec.clone())
        .load()
        .map_err(|e| format!("the target `{spec}`: {e}"))?;
    let cal = predict::calibrate(
        &set.header,
        &set.records,
        &set.analysis.basis,
        &[],
        &predict::CalibrateOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    let p = predict::predict(&cal, &target, &predict::TargetBandwidth::default());
    Ok((spec, p))
}

/// The tour's closing summary: each workload's first four findings, each with
/// its last evidence line where that adds to the title (a warning whose
/// evidence is its own sentence is said once).
pub fn main_findings(sets: &[ResultSet]) -> String {
    let mut out = String::from("\nMain findings:\n");
    for set in sets {
        let name = set.header.command.workload.clone().unwrap_or_default();
        for f in set.analysis.findings.iter().take(4) {
            out += &format!("  [{name}] {}\n", f.title);
            let e = f.evidence.last().map(ToString::to_string);
            if let Some(e) = e.filter(|e| !f.title.ends_with(e.as_str())) {
                out += &format!("        {e}\n");
            }
        }
    }
    out
}

/// The tour's prediction from its first sweep (NAS EP): what to print (the
/// recommendation and the first assumption, titled as a prediction, or why it is
/// unavailable here) and the report section.
pub fn prediction(
    topo: &Topology,
    sets: &[ResultSet],
) -> (String, Vec<scalescope_report::mem::Section>) {
    let Some(set) = sets.first() else {
        return (String::new(), Vec::new());
    };
    let name = set.header.command.workload.clone().unwrap_or_default();
    match predict(topo, set) {
        Ok((spec, p)) => {
            let mut said = format!(
                "\nPREDICTION (not a measurement): {name} on a larger machine, `{spec}`:\n"
            );
            if let Some(r) = &p.recommendation {
                said += &format!("  {}\n", r.sentence);
            }
            if let Some(a) = p.assumptions.get(1) {
                said += &format!("  assumption: {a}\n");
            }
            // What puts the calibration's own measurement in doubt, beside the
            // answer that rests on it.
            for w in set.analysis.quality.lowering() {
                said += &format!("  calibrated on a sweep in doubt: {}\n", w.text);
            }
            (
                said,
                vec![scalescope_report::predict::section(&p, "prediction-")],
            )
        }
        Err(e) => (
            format!("\nPrediction for a larger machine: unavailable here: {e}\n"),
            Vec::new(),
        ),
    }
}
