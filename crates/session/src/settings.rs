//! What a sweep is asked to do, parsed once into types, and the defaults that fill
//! what was not given. Fields left `None` stay `None` so a resume can tell which
//! settings were given and refuse the ones its header already fixes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use scalescope_model::plan::ThreadList;
use scalescope_model::setting::Setting;
use scalescope_model::store::{Header, MetricSpec};
use scalescope_model::value::{Count, Secs};
use scalescope_place::{MemPolicy, Strategy};

/// Measured repetitions per point: 1 to a million.
pub type Reps = Count<1, 1_000_000>;
/// Timed trials of a built-in workload's kernel in each run's process: 1 to 100,000.
pub type Trials = Count<1, 100_000>;
/// Unmeasured warm-up runs per point: 0 to a million.
pub type Warmup = Count<0, 1_000_000>;
/// Seconds a run may take: 1 ms to a year.
pub type Timeout = Secs<1, 31_536_000>;
/// Seconds between SIGTERM and SIGKILL: 0 to an hour.
pub type KillGrace = Secs<0, 3600>;
/// Milliseconds between evidence samples: 0 (none) to an hour.
pub type SampleMs = Count<0, 3_600_000>;

/// Thread counts swept when none are given.
pub const DEFAULT_THREADS: &str = "boundaries";
/// Measured repetitions per point when none are given.
pub const DEFAULT_REPS: usize = 5;
/// Unmeasured warm-up runs per point when none are given.
pub const DEFAULT_WARMUP: usize = 1;
/// Seconds between SIGTERM and SIGKILL when a run is stopped.
pub const DEFAULT_KILL_GRACE_SECS: f64 = 2.0;

/// [`DEFAULT_KILL_GRACE_SECS`] as the setting.
pub fn default_kill_grace() -> KillGrace {
    KillGrace::checked(DEFAULT_KILL_GRACE_SECS).unwrap_or_default()
}

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
    /// A built-in workload's kernel runs this many times in each run's process
    /// (`None` or 1: once).
    pub trials: Option<Trials>,
}

/// A sweep's settings as given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SweepSettings {
    pub threads: Option<ThreadList>,
    pub placements: Option<Vec<Strategy>>,
    pub mems: Option<Vec<MemPolicy>>,
    pub reps: Option<Reps>,
    pub warmup: Option<Warmup>,
    pub timeout: Option<Timeout>,
    pub kill_grace: Option<KillGrace>,
    /// Milliseconds between evidence samples (`None`: the default; 0: no sampling).
    pub sample_interval_ms: Option<SampleMs>,
    pub target: Target,
    pub out: Option<PathBuf>,
    /// Restriction, granularity and oversubscription for every placement.
    pub place_options: Option<scalescope_model::plan::PlaceOptions>,
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
        match self.sample_interval_ms.map(SampleMs::get) {
            None => Some(scalescope_sampler::DEFAULT_INTERVAL),
            Some(0) => None,
            Some(ms) => Some(std::time::Duration::from_millis(ms)),
        }
    }

    /// The settings a resume may not change (its header fixes them).
    pub fn plan_fields_given(&self) -> Vec<Setting> {
        [
            (Setting::Threads, self.threads.is_some()),
            (Setting::Placement, self.placements.is_some()),
            (Setting::PlaceOptions, self.place_options.is_some()),
            (Setting::Mem, self.mems.is_some()),
            (Setting::Reps, self.reps.is_some()),
            (Setting::Warmup, self.warmup.is_some()),
            (Setting::Trials, self.target.trials.is_some()),
            (Setting::Seed, self.seed.is_some()),
            (Setting::Launcher, self.launch.is_some()),
            (Setting::Workload, self.target.workload.is_some()),
            (Setting::Metric, !self.target.metrics.is_empty()),
            (Setting::Target, !self.target.program.is_empty()),
        ]
        .into_iter()
        .filter_map(|(setting, given)| given.then_some(setting))
        .collect()
    }
}

/// The run-shaping settings given to a resume that differ from what the sweep's
/// header recorded (environment, shell, timeout, kill grace), each with `given X,
/// recorded Y`. A setting not given, or given with the recorded value, is no
/// conflict.
pub fn run_settings_differing(s: &SweepSettings, header: &Header) -> Vec<(Setting, String)> {
    let mut out = Vec::new();
    let secs = |v: Option<f64>| v.map_or_else(|| "none".to_string(), |v| format!("{v} s"));
    let recorded = &header.command;
    if !s.target.env.is_empty() && s.target.env != recorded.env {
        let show = |env: &[(String, String)]| {
            let pairs: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("[{}]", pairs.join(" "))
        };
        out.push((
            Setting::Env,
            format!(
                "given {}, recorded {}",
                show(&s.target.env),
                show(&recorded.env)
            ),
        ));
    }
    if s.target.shell && !recorded.shell {
        out.push((Setting::Shell, "given, recorded without".into()));
    }
    let timeout = s.timeout.map(Timeout::get);
    if timeout.is_some() && timeout != header.timeout_secs {
        out.push((
            Setting::Timeout,
            format!(
                "given {}, recorded {}",
                secs(timeout),
                secs(header.timeout_secs)
            ),
        ));
    }
    let grace = header.kill_grace_secs.unwrap_or(DEFAULT_KILL_GRACE_SECS);
    if let Some(g) = s.kill_grace.map(KillGrace::get).filter(|g| *g != grace) {
        out.push((
            Setting::KillGrace,
            format!("given {}, recorded {}", secs(Some(g)), secs(Some(grace))),
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
