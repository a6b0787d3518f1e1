//! Verified placement: while a run is alive, sample every thread of the process
//! (and of its descendants) from `/proc/PID/task/*` (read by the evidence sampler's
//! reader, [`scalescope_sampler::procfs`]): the CPU it last ran on and the CPUs it
//! may run on. A run passes when every sampled thread stayed inside the
//! planned CPUs; more threads than planned is reported separately. A run whose
//! threads its OpenMP runtime places (`runtime:NAME`) is also checked against the
//! plan of that name: the set each thread was last seen bound to, against the
//! plan's sets ([`RuntimePlan`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use scalescope_model::check::{PlacementCheck, RuntimeCheck, Violation};
use scalescope_sampler::procfs::TaskStat;
use scalescope_topo::CpuSet;

/// Accumulates samples for one run.
#[derive(Debug)]
pub struct Monitor {
    planned: CpuSet,
    check: PlacementCheck,
    seen: BTreeSet<u32>,
    runtime: Option<RuntimePlan>,
    /// Each thread's allowed set when last seen (runtime-placed runs).
    bound: BTreeMap<u32, CpuSet>,
}

/// The hardware-position plan a runtime-placed run is checked against.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimePlan {
    /// The strategy's name (`spread`, ...).
    pub plan: String,
    /// Its CPU set per thread.
    pub sets: Vec<CpuSet>,
}

/// The state of one thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskState {
    pub pid: u32,
    pub tid: u32,
    pub cpu: Option<u32>,
    pub allowed: Option<CpuSet>,
}

impl Monitor {
    pub fn new(planned: CpuSet, planned_threads: usize) -> Self {
        Monitor {
            planned,
            check: PlacementCheck {
                planned_threads,
                inside_plan: true,
                ..Default::default()
            },
            seen: BTreeSet::new(),
            runtime: None,
            bound: BTreeMap::new(),
        }
    }

    /// Also checks the run against a runtime placement's plan.
    pub fn with_runtime(mut self, plan: Option<RuntimePlan>) -> Self {
        self.runtime = plan;
        self
    }

    /// Takes one sample of the process tree rooted at `pid` under `root` (`/` live).
    pub fn sample(&mut self, root: &Path, pid: u32) {
        let tasks = read_tree(root, pid);
        if tasks.is_empty() {
            return;
        }
        self.observe(&tasks);
    }

    /// Records one sample (separated from /proc for tests).
    pub fn observe(&mut self, tasks: &[TaskState]) {
        self.check.samples += 1;
        self.check.max_threads = self.check.max_threads.max(tasks.len());
        if tasks.len() > self.check.planned_threads {
            self.check.more_threads_than_planned = true;
        }
        for t in tasks {
            if let (Some(_), Some(a)) = (&self.runtime, &t.allowed) {
                self.bound.insert(t.tid, a.clone());
            }
            let cpu_out = t.cpu.is_some_and(|c| !self.planned.contains(c));
            let allowed_out = t
                .allowed
                .as_ref()
                .is_some_and(|a| !a.is_subset(&self.planned));
            if cpu_out || allowed_out {
                self.check.inside_plan = false;
                if self.seen.insert(t.tid) && self.check.violations.len() < 16 {
                    self.check.violations.push(Violation {
                        pid: t.pid,
                        tid: t.tid,
                        cpu: t.cpu,
                        allowed: t.allowed.clone().unwrap_or_default(),
                    });
                }
            }
        }
    }

    pub fn finish(mut self) -> Option<PlacementCheck> {
        if let Some(plan) = &self.runtime {
            let observed: Vec<CpuSet> = self.bound.values().cloned().collect();
            self.check.runtime = Some(runtime_check(plan, &observed, &self.planned));
        }
        (self.check.samples > 0).then_some(self.check)
    }
}

/// Compares the sets threads were bound to (`observed`, one per thread, in any
/// order) with the plan's: as planned when every planned set has exactly as many
/// threads bound to it as the plan gives it. Threads still allowed all of `whole`
/// were not bound by the runtime; extra threads bound to a planned set count
/// against it.
pub fn runtime_check(plan: &RuntimePlan, observed: &[CpuSet], whole: &CpuSet) -> RuntimeCheck {
    let count = |sets: &[CpuSet]| {
        let mut m: BTreeMap<String, usize> = BTreeMap::new();
        for s in sets {
            *m.entry(s.to_string()).or_default() += 1;
        }
        m
    };
    let bound: Vec<CpuSet> = observed
        .iter()
        .filter(|s| *s != whole || plan.sets.contains(s))
        .cloned()
        .collect();
    let unbound = observed.len() - bound.len();
    let (want, got) = (count(&plan.sets), count(&bound));
    let as_planned = want == got;
    let detail = if as_planned {
        String::new()
    } else {
        let show = |m: &BTreeMap<String, usize>| {
            m.iter()
                .map(|(s, n)| {
                    if *n > 1 {
                        format!("{{{s}}}x{n}")
                    } else {
                        format!("{{{s}}}")
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut d = format!(
            "bound to {} where the {} plan says {}",
            if got.is_empty() {
                "nothing".to_string()
            } else {
                show(&got)
            },
            plan.plan,
            show(&want)
        );
        if unbound > 0 {
            d += &format!("; {unbound} thread(s) left unbound (any of {whole})");
        }
        if observed.len() < plan.sets.len() {
            d += &format!(
                "; only {} of {} threads were sampled (a run too short to see them all)",
                observed.len(),
                plan.sets.len()
            );
        }
        d
    };
    let mut distinct: Vec<CpuSet> = observed.to_vec();
    distinct.sort_by_key(|s| s.to_string());
    distinct.dedup();
    RuntimeCheck {
        plan: plan.plan.clone(),
        planned: plan.sets.clone(),
        observed: distinct,
        as_planned,
        detail,
    }
}

/// The placement view of the threads the evidence sampler read.
pub fn states(tasks: &[TaskStat]) -> Vec<TaskState> {
    tasks
        .iter()
        .map(|t| TaskState {
            pid: t.pid,
            tid: t.tid,
            cpu: t.cpu,
            allowed: t.allowed.clone(),
        })
        .collect()
}

/// Threads of `pid` and of its descendants, read under `root` (`/` live) by the
/// evidence sampler's reader.
pub fn read_tree(root: &Path, pid: u32) -> Vec<TaskState> {
    states(&scalescope_sampler::procfs::read_tree(root, pid).0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(tid: u32, cpu: u32, allowed: &str) -> TaskState {
        TaskState {
            pid: 1,
            tid,
            cpu: Some(cpu),
            allowed: Some(CpuSet::parse_list(allowed).unwrap()),
        }
    }

    fn set(list: &str) -> CpuSet {
        CpuSet::parse_list(list).unwrap()
    }

    #[test]
    fn a_runtime_binding_is_compared_with_the_plan_as_sets() {
        let plan = RuntimePlan {
            plan: "spread".into(),
            sets: vec![set("0,8"), set("4,12")],
        };
        let whole = set("0-15");
        let ok = runtime_check(&plan, &[set("4,12"), set("0,8")], &whole);
        assert!(ok.as_planned, "{}", ok.detail);
        let same_socket = runtime_check(&plan, &[set("0,8"), set("2,10")], &whole);
        assert!(!same_socket.as_planned);
        assert!(
            same_socket.detail.contains("{2,10}"),
            "{}",
            same_socket.detail
        );
        let unbound = runtime_check(&plan, &[whole.clone(), whole.clone()], &whole);
        assert!(!unbound.as_planned);
        assert!(
            unbound.detail.contains("2 thread(s) left unbound"),
            "{}",
            unbound.detail
        );
    }

    #[test]
    fn the_monitor_keeps_each_threads_last_binding() {
        let plan = RuntimePlan {
            plan: "compact".into(),
            sets: vec![set("0"), set("1")],
        };
        let mut m = Monitor::new(set("0-3"), 2).with_runtime(Some(plan));
        m.observe(&[task(10, 0, "0-3")]);
        m.observe(&[task(10, 0, "0"), task(11, 1, "1")]);
        let r = m.finish().unwrap().runtime.unwrap();
        assert!(r.as_planned, "{}", r.detail);
    }

    #[test]
    fn violations_and_extra_threads() {
        let mut m = Monitor::new(CpuSet::parse_list("0-1").unwrap(), 2);
        m.observe(&[task(10, 0, "0-1"), task(11, 1, "1")]);
        m.observe(&[task(10, 0, "0-1"), task(11, 3, "3"), task(12, 1, "0-1")]);
        let c = m.finish().unwrap();
        assert_eq!((c.samples, c.max_threads), (2, 3));
        assert!(!c.inside_plan && c.more_threads_than_planned);
        assert_eq!(c.violations.len(), 1);
        assert_eq!(c.violations[0].tid, 11);
    }

    #[test]
    fn this_process_is_visible() {
        // Other tests' threads may end between the listing and the reading of their
        // state, so only this thread is sure to be seen whole.
        let me: u32 = std::fs::read_link("/proc/thread-self")
            .unwrap()
            .file_name()
            .and_then(|t| t.to_str()?.parse().ok())
            .unwrap();
        // A directory listing of /proc/PID/task resumes by position when the
        // thread it stopped at has exited, so under other tests' thread churn it
        // may skip a live one (seen once under load): a few readings, not one.
        let mine = (0..5)
            .find_map(|_| {
                read_tree(Path::new("/"), std::process::id())
                    .into_iter()
                    .find(|t| t.tid == me)
            })
            .expect("this thread is listed");
        assert_eq!(mine.pid, std::process::id());
        assert!(mine.allowed.is_some() && mine.cpu.is_some(), "{mine:?}");
    }
}
