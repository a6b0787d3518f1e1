//! What the placement monitor saw over one run's life, as recorded in each run record.

use serde::{Deserialize, Serialize};

use scalescope_topo::CpuSet;

/// One thread seen outside the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    pub pid: u32,
    pub tid: u32,
    /// CPU it was last seen running on.
    pub cpu: Option<u32>,
    /// CPUs it was allowed to run on.
    pub allowed: CpuSet,
}

/// What sampling saw over a run's life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PlacementCheck {
    pub samples: usize,
    /// Most threads alive at once (all processes of the run).
    pub max_threads: usize,
    /// Threads the plan expects (workers, plus the main thread for built-ins).
    pub planned_threads: usize,
    /// Every sampled thread ran, and was only allowed to run, inside the plan.
    pub inside_plan: bool,
    pub more_threads_than_planned: bool,
    /// Distinct offending threads (at most 16 kept).
    pub violations: Vec<Violation>,
}
