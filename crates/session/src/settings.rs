//! What a sweep is asked to do, parsed once into types, and the defaults that fill
//! what was not given. Fields left `None` stay `None` so a resume can tell which
//! settings were given and refuse the ones its header already fixes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use scalescope_place::{MemPolicy, Strategy};
use scalescope_results::plan::ThreadList;
use scalescope_results::store::{Header, MetricSpec};

/// Thread counts swept when none are given.
pub const DEFAULT_THREADS: &str = "boundaries";
/// Measured repetitions per point when none are given.
pub const DEFAULT_REPS: usize = 5;
/// Unmeasured warm-up runs per point when none are given.
pub const DEFAULT_WARMUP: usize = 1;
/// Seconds between SIGTERM and SIGKILL when a run is stopped.
pub const DEFAULT_KILL_GRACE_SECS: f64 = 2.0;

/// The placement every sweep uses unless told otherwise.
pub fn default_placement() -> Strategy {
    Strategy::CoresFirst
}

/// The memory policy every sweep uses unless told otherwise.
pub fn default_mem() -> MemPolicy {
    MemPolicy::FirstTouch
}

/// What to run: a program (argv, optionally through a shell) or a built-in workload.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Target {
    pub program: Vec<String>,
    pub shell: bool,
    pub workload: Option<String>,
    pub params: BTreeMap<String, String>,
    pub env: Vec<(String, String)>,
    pub metrics: Vec<MetricSpec>,
}

/// A sweep's settings as given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SweepSettings {
    pub threads: Option<ThreadList>,
    pub placements: Option<Vec<Strategy>>,
    pub mems: Option<Vec<MemPolicy>>,
    pub reps: Option<usize>,
    pub warmup: Option<usize>,
    pub timeout_secs: Option<f64>,
    pub kill_grace_secs: Option<f64>,
    /// Milliseconds between evidence samples (`None`: the default; 0: no sampling).
    pub sample_interval_ms: Option<u64>,
    pub target: Target,
    pub out: Option<PathBuf>,
    /// Restriction, granularity and oversubscription for every placement.
    pub place_options: Option<scalescope_results::plan::PlaceOptions>,
    /// Where a built-in workload's prepared input is cached (default: OUT/inputs).
    pub input_cache: Option<PathBuf>,
    /// Which runs of a built-in workload are checked.
    pub verify: scalescope_workloads::VerifyPolicy,
    /// The seed of the shuffled run order (`None`: a new one, recorded in the header).
    pub seed: Option<u64>,
    /// Every run through an MPI launcher (`None`: runs started directly).
    pub launch: Option<crate::launch::LaunchSettings>,
}

/// The cache directory inside a sweep's results directory when none is given.
pub const DEFAULT_INPUT_CACHE: &str = "inputs";

impl SweepSettings {
    /// The evidence sampler's interval, `None` when sampling is off.
    pub fn sample_interval(&self) -> Option<std::time::Duration> {
        match self.sample_interval_ms {
            None => Some(scalescope_sampler::DEFAULT_INTERVAL),
            Some(0) => None,
            Some(ms) => Some(std::time::Duration::from_millis(ms)),
        }
    }

    /// The settings a resume may not change (its header fixes them), named.
    pub fn plan_fields_given(&self) -> Vec<&'static str> {
        [
            ("threads", self.threads.is_some()),
            ("placement", self.placements.is_some()),
            ("placement options", self.place_options.is_some()),
            ("mem", self.mems.is_some()),
            ("reps", self.reps.is_some()),
            ("warmup", self.warmup.is_some()),
            ("seed", self.seed.is_some()),
            ("launcher", self.launch.is_some()),
            ("workload", self.target.workload.is_some()),
            ("metric", !self.target.metrics.is_empty()),
            ("a program", !self.target.program.is_empty()),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect()
    }
}

/// The run-shaping settings given to a resume that differ from what the sweep's
/// header recorded (`--env`, `--shell`, `--timeout`, `--kill-grace`), each as
/// `--flag: given X, recorded Y`. A setting not given, or given with the recorded
/// value, is no conflict.
pub fn run_settings_differing(s: &SweepSettings, header: &Header) -> Vec<String> {
    let mut out = Vec::new();
    let secs = |v: Option<f64>| v.map_or_else(|| "none".to_string(), |v| format!("{v} s"));
    let recorded = &header.command;
    if !s.target.env.is_empty() && s.target.env != recorded.env {
        let show = |env: &[(String, String)]| {
            let pairs: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("[{}]", pairs.join(" "))
        };
        out.push(format!(
            "--env: given {}, recorded {}",
            show(&s.target.env),
            show(&recorded.env)
        ));
    }
    if s.target.shell && !recorded.shell {
        out.push("--shell: given, recorded without".into());
    }
    if s.timeout_secs.is_some() && s.timeout_secs != header.timeout_secs {
        out.push(format!(
            "--timeout: given {}, recorded {}",
            secs(s.timeout_secs),
            secs(header.timeout_secs)
        ));
    }
    let grace = header.kill_grace_secs.unwrap_or(DEFAULT_KILL_GRACE_SECS);
    if s.kill_grace_secs.is_some_and(|g| g != grace) {
        out.push(format!(
            "--kill-grace: given {}, recorded {}",
            secs(s.kill_grace_secs),
            secs(Some(grace))
        ));
    }
    out
}

/// `K=V` into a pair.
///
/// # Errors
/// A message naming the text when it has no `=` or an empty key.
pub fn key_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("`{text}`: expected KEY=VALUE")),
    }
}
