//! Verified placement: while a run is alive, sample every thread of the process
//! (and of its descendants) from `/proc/PID/task/*` (read by the evidence sampler's
//! reader, [`scalescope_sampler::procfs`]): the CPU it last ran on and the CPUs it
//! may run on. A run passes when every sampled thread stayed inside the
//! planned CPUs; more threads than planned is reported separately.

use std::collections::BTreeSet;
use std::path::Path;

use scalescope_model::check::{PlacementCheck, Violation};
use scalescope_sampler::procfs::TaskStat;
use scalescope_topo::CpuSet;

/// Accumulates samples for one run.
#[derive(Debug)]
pub struct Monitor {
    planned: CpuSet,
    check: PlacementCheck,
    seen: BTreeSet<u32>,
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
        }
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

    pub fn finish(self) -> Option<PlacementCheck> {
        (self.check.samples > 0).then_some(self.check)
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
        let tasks = read_tree(Path::new("/"), std::process::id());
        let mine = tasks
            .iter()
            .find(|t| t.tid == me)
            .expect("this thread is listed");
        assert_eq!(mine.pid, std::process::id());
        assert!(mine.allowed.is_some() && mine.cpu.is_some(), "{mine:?}");
    }
}
