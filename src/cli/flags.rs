//! The one place that knows how each typed setting is spelled on the command line:
//! the libraries' errors name a [`Setting`], and [`explain`] adds the flag that
//! sets it before the error is printed.

use scalescope_analysis::predict::request::RequestError;
use scalescope_model::import::ImportError;
use scalescope_model::prediction_files::PredictFilesError;
use scalescope_model::setting::{AboutSetting, Setting};
use scalescope_model::ResultsError;
use scalescope_session::SessionError;
use scalescope_workloads::WorkloadError;

/// How a workload parameter was given: as a flag of its command, or as a sweep's
/// `--param KEY=VALUE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Given {
    Flags,
    Params,
}

/// The flag that sets `setting`.
pub fn flag(setting: &Setting, given: Given) -> String {
    let f = match setting {
        Setting::Threads => "--threads",
        Setting::Placement | Setting::RankPlacement => "--placement",
        Setting::PlaceOptions => "--numa-nodes, --packages, --granularity or --oversubscribe",
        Setting::Oversubscribe => "--oversubscribe",
        Setting::Mem => "--mem",
        Setting::Reps => "--reps",
        Setting::Warmup => "--warmup",
        Setting::Trials => "--trials",
        Setting::Seed => "--seed",
        Setting::Timeout => "--timeout",
        Setting::KillGrace => "--kill-grace",
        Setting::SampleInterval => "--sample-interval",
        Setting::Env => "--env",
        Setting::Shell => "--shell",
        Setting::Target => "a program after `--` or --workload NAME",
        Setting::Workload => "--workload",
        Setting::Param(key) => {
            return match given {
                Given::Params => format!("--param {key}=VALUE"),
                Given::Flags => format!("--{}", key.replace('_', "-")),
            }
        }
        Setting::Metric => "--metric",
        Setting::Out => "--out",
        Setting::Launcher => "--launcher",
        Setting::RanksPerNode => "--ranks-per-node",
        Setting::Nodes => "--nodes",
        Setting::Hosts => "--hosts",
        Setting::Submit => "--submit",
        Setting::PredictTarget => "--to",
        Setting::NodeGbps => "--node-gbps",
        Setting::Ceilings => "--ceilings",
        Setting::Basis => "--basis",
    };
    f.to_string()
}

/// The setting an error in the chain is about, if one is.
fn about(e: &anyhow::Error) -> Option<Setting> {
    e.chain().find_map(|c| {
        if let Some(e) = c.downcast_ref::<SessionError>() {
            e.setting()
        } else if let Some(e) = c.downcast_ref::<WorkloadError>() {
            e.setting()
        } else if let Some(e) = c.downcast_ref::<ResultsError>() {
            e.setting()
        } else if let Some(e) = c.downcast_ref::<ImportError>() {
            e.setting()
        } else if let Some(e) = c.downcast_ref::<RequestError>() {
            e.setting()
        } else if let Some(e) = c.downcast_ref::<PredictFilesError>() {
            e.setting()
        } else {
            None
        }
    })
}

/// A resume's refusal, with the flags to drop.
fn resume_refusal(e: &SessionError, given: Given) -> Option<String> {
    let flags = |settings: &mut dyn Iterator<Item = &Setting>| -> String {
        settings
            .map(|s| flag(s, given))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match e {
        SessionError::ResumeFixed { dir, given: fixed } => Some(format!(
            "{}: holds the plan and command of the sweep being finished; drop {}",
            dir.display(),
            flags(&mut fixed.iter())
        )),
        SessionError::ResumeDiffers { dir, differing } => {
            let each: Vec<String> = differing
                .iter()
                .map(|(s, d)| format!("{}: {d}", flag(s, given)))
                .collect();
            Some(format!(
                "{}: was started with other run settings ({}); a resume runs the rest as the first runs ran, so drop them (or start a new --out)",
                dir.display(),
                each.join("; ")
            ))
        }
        _ => None,
    }
}

/// `e` with the flag that sets the setting it is about: `... (set by --flag)`.
pub fn explain(e: anyhow::Error, given: Given) -> anyhow::Error {
    if let Some(text) = e
        .downcast_ref::<SessionError>()
        .and_then(|s| resume_refusal(s, given))
    {
        return anyhow::anyhow!(text);
    }
    match about(&e) {
        Some(setting) => anyhow::anyhow!("{e:#} (set by {})", flag(&setting, given)),
        None => e,
    }
}
