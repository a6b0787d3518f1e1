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
    /// A runtime-placed run: the runtime's binding against the plan (absent
    /// for runs scalescope pinned itself, and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<RuntimeCheck>,
}

/// A run whose threads the program's own runtime placed (`runtime:NAME`): where
/// its threads were bound, against the hardware-position plan of the same name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct RuntimeCheck {
    /// The strategy whose plan the runtime's binding is compared with.
    pub plan: String,
    /// The plan's CPU set per thread, in thread order.
    pub planned: Vec<CpuSet>,
    /// The distinct CPU sets the runtime bound threads to (a thread still allowed
    /// every CPU of the run was not bound, and shows as that whole set).
    pub observed: Vec<CpuSet>,
    /// Every planned set was bound to by exactly as many threads as the plan has
    /// (thread order is not compared: OS thread ids do not say which OpenMP thread is which).
    pub as_planned: bool,
    /// The mismatch in words, empty when as planned.
    pub detail: String,
}
