//! The settings a library error can be about, typed: the libraries say which
//! setting was wrong ([`Setting`]), never how it is spelled on a command line; the
//! binary alone maps each to its flag. An error type that names a setting says so
//! through [`AboutSetting`].

/// One setting of a sweep, a workload, a launch, an import or a prediction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Setting {
    /// The thread counts swept.
    Threads,
    /// The placement strategies swept (or the one placement of an import).
    Placement,
    /// The restriction, granularity and oversubscription of every placement.
    PlaceOptions,
    /// Thread counts past one thread per usable PU allowed.
    Oversubscribe,
    /// The memory policies swept.
    Mem,
    /// Measured repetitions per point.
    Reps,
    /// Unmeasured warm-up runs per point.
    Warmup,
    /// Timed trials of a built-in workload's kernel in each run's process.
    Trials,
    /// The seed of the run order.
    Seed,
    /// Seconds a run may take.
    Timeout,
    /// Seconds between SIGTERM and SIGKILL.
    KillGrace,
    /// Milliseconds between evidence samples.
    SampleInterval,
    /// Extra environment of every run.
    Env,
    /// Runs started through a shell.
    Shell,
    /// What is swept: a program or a built-in workload.
    Target,
    /// The built-in workload swept.
    Workload,
    /// One of a workload's parameters, by its key.
    Param(String),
    /// A figure of merit parsed from the output.
    Metric,
    /// The results directory.
    Out,
    /// The MPI launcher family.
    Launcher,
    /// Ranks per node.
    RanksPerNode,
    /// The node counts of a launch (its node axis), or its hosts in the older form.
    Nodes,
    /// The hosts of a launch.
    Hosts,
    /// A sweep submitted as batch jobs.
    Submit,
    /// How each rank's threads are placed on its node.
    RankPlacement,
    /// The machine a prediction is made for.
    PredictTarget,
    /// The target's bandwidth per NUMA node, stated.
    NodeGbps,
    /// Bandwidth ceilings measured on the target.
    Ceilings,
    /// What performance means for a curve (time, or a figure of merit).
    Basis,
}

impl Setting {
    /// A workload parameter's setting.
    pub fn param(key: impl Into<String>) -> Setting {
        Setting::Param(key.into())
    }
}

impl std::fmt::Display for Setting {
    /// The setting in words, as a library message names it (short, as the sweep's
    /// messages have named them).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = match self {
            Setting::Threads => "threads",
            Setting::Placement => "placement",
            Setting::PlaceOptions => "placement options",
            Setting::Oversubscribe => "oversubscription",
            Setting::Mem => "mem",
            Setting::Reps => "reps",
            Setting::Warmup => "warmup",
            Setting::Trials => "trials",
            Setting::Seed => "seed",
            Setting::Timeout => "timeout",
            Setting::KillGrace => "kill grace",
            Setting::SampleInterval => "sampling interval",
            Setting::Env => "env",
            Setting::Shell => "shell",
            Setting::Target => "target",
            Setting::Workload => "workload",
            Setting::Param(key) => return write!(f, "workload parameter `{key}`"),
            Setting::Metric => "metric",
            Setting::Out => "results directory",
            Setting::Launcher => "launcher",
            Setting::RanksPerNode => "ranks per node",
            Setting::Nodes => "nodes",
            Setting::Hosts => "hosts",
            Setting::Submit => "submission as batch jobs",
            Setting::RankPlacement => "rank placement",
            Setting::PredictTarget => "target machine",
            Setting::NodeGbps => "bandwidth per node",
            Setting::Ceilings => "ceilings",
            Setting::Basis => "basis",
        };
        f.write_str(text)
    }
}

/// An error that is about one setting the user gave (or should give).
pub trait AboutSetting {
    /// The setting, where the error is about one.
    fn setting(&self) -> Option<Setting>;
}

impl AboutSetting for crate::ResultsError {
    fn setting(&self) -> Option<Setting> {
        match self {
            crate::ResultsError::BadList { setting, .. } => Some(setting.clone()),
            _ => None,
        }
    }
}
