//! Verified placement: while a run is alive, sample every thread of the process
//! (and of its descendants) from `/proc/PID/task/*`: the CPU it last ran on and the
//! CPUs it may run on. A run passes when every sampled thread stayed inside the
//! planned CPUs; more threads than planned is reported separately.

use std::collections::BTreeSet;
use std::path::Path;

use scalescope_results::check::{PlacementCheck, Violation};
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

    /// Takes one sample of the process tree rooted at `pid` under `proc_root`.
    pub fn sample(&mut self, proc_root: &Path, pid: u32) {
        let tasks = read_tree(proc_root, pid);
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

/// Threads of `pid` and of its descendants (through `/proc/PID/task/TID/children`).
pub fn read_tree(proc_root: &Path, pid: u32) -> Vec<TaskState> {
    let mut out = Vec::new();
    let mut stack = vec![pid];
    let mut visited = BTreeSet::new();
    while let Some(p) = stack.pop() {
        if !visited.insert(p) || visited.len() > 4096 {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(proc_root.join(format!("{p}/task"))) else {
            continue;
        };
        for entry in entries.flatten() {
            let Some(tid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            let dir = entry.path();
            let Ok(stat) = std::fs::read_to_string(dir.join("stat")) else {
                continue;
            };
            let cpu = processor_from_stat(&stat);
            let allowed = std::fs::read_to_string(dir.join("status"))
                .ok()
                .and_then(|s| allowed_from_status(&s));
            out.push(TaskState {
                pid: p,
                tid,
                cpu,
                allowed,
            });
            if let Ok(children) = std::fs::read_to_string(dir.join("children")) {
                stack.extend(
                    children
                        .split_whitespace()
                        .filter_map(|c| c.parse::<u32>().ok()),
                );
            }
        }
    }
    out
}

/// Field 39 of `/proc/.../stat` (`processor`), counted after the `(comm)` field,
/// which may itself contain spaces and parentheses.
pub fn processor_from_stat(stat: &str) -> Option<u32> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(36)?.parse().ok()
}

/// `Cpus_allowed_list:` from `/proc/.../status`.
pub fn allowed_from_status(status: &str) -> Option<CpuSet> {
    let line = status
        .lines()
        .find(|l| l.starts_with("Cpus_allowed_list:"))?;
    CpuSet::parse_list(line.split_once(':')?.1).ok()
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
    fn stat_parsing_survives_odd_names() {
        let stat = "1234 (a) b) (c) S 1 1234 1234 0 -1 4194304 100 0 0 0 5 3 0 0 20 0 3 0 12345 1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 5 0 0 0 0 0 0 0 0 0 0 0 0 0";
        assert_eq!(processor_from_stat(stat), Some(5));
        assert_eq!(
            allowed_from_status("Name:\tx\nCpus_allowed_list:\t0-3,8\n")
                .unwrap()
                .to_string(),
            "0-3,8"
        );
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
        let tasks = read_tree(Path::new("/proc"), std::process::id());
        let mine = tasks
            .iter()
            .find(|t| t.tid == me)
            .expect("this thread is listed");
        assert_eq!(mine.pid, std::process::id());
        assert!(mine.allowed.is_some() && mine.cpu.is_some(), "{mine:?}");
    }
}
