//! Readers of `/proc` under a root directory: per-CPU times (`/proc/stat`), the
//! threads of a process tree with their CPU, times and allowed CPUs
//! (`/proc/PID/task/TID/{stat,status,children}`), and resident pages per NUMA node
//! (`/proc/PID/numa_maps`). A process or thread that ends between listing and
//! reading is skipped, never an error: runs end while they are sampled.
//!
//! Also the kernel's per-node allocation counters,
//! `ROOT/sys/devices/system/node/nodeN/numastat` (pages; system-wide).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use scalescope_model::evidence::NumaCounters;
use scalescope_topo::CpuSet;

/// Cumulative busy, stolen and total ticks of one CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTicks {
    pub busy: u64,
    /// Ticks the hypervisor ran something else while this virtual CPU had work
    /// (`steal`; 0 on bare metal). Counted in `busy` and `total` too.
    pub steal: u64,
    pub total: u64,
}

/// Per-CPU ticks from `/proc/stat` (`cpuN user nice system idle iowait irq softirq
/// steal ...`); idle and iowait count as not busy, guest time is already inside user.
pub fn parse_stat(text: &str) -> BTreeMap<u32, CpuTicks> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(cpu) = words
            .next()
            .and_then(|w| w.strip_prefix("cpu"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let v: Vec<u64> = words.take(8).filter_map(|w| w.parse().ok()).collect();
        if v.len() < 4 {
            continue;
        }
        let total: u64 = v.iter().sum();
        let idle = v[3] + v.get(4).copied().unwrap_or(0);
        out.insert(
            cpu,
            CpuTicks {
                busy: total - idle,
                steal: v.get(7).copied().unwrap_or(0),
                total,
            },
        );
    }
    out
}

/// Reads `ROOT/proc/stat`; empty when unreadable.
pub fn read_stat(root: &Path) -> BTreeMap<u32, CpuTicks> {
    std::fs::read_to_string(root.join("proc/stat"))
        .map(|t| parse_stat(&t))
        .unwrap_or_default()
}

/// Busy share of each CPU in `cpus` between two readings (CPUs missing from either
/// reading, or with no ticks in between, are left out).
pub fn busy_between(
    before: &BTreeMap<u32, CpuTicks>,
    after: &BTreeMap<u32, CpuTicks>,
    cpus: &CpuSet,
) -> BTreeMap<u32, f64> {
    cpus.iter()
        .filter_map(|c| {
            let (a, b) = (before.get(&c)?, after.get(&c)?);
            let total = b.total.checked_sub(a.total).filter(|t| *t > 0)?;
            let busy = b.busy.saturating_sub(a.busy).min(total);
            Some((c, busy as f64 / total as f64))
        })
        .collect()
}

/// Share of the ticks of `cpus` between two readings that the hypervisor stole
/// (`None` when no tick of those CPUs passed or a CPU is missing from a reading).
pub fn steal_between(
    before: &BTreeMap<u32, CpuTicks>,
    after: &BTreeMap<u32, CpuTicks>,
    cpus: &CpuSet,
) -> Option<f64> {
    let (mut steal, mut total) = (0u64, 0u64);
    for c in cpus.iter() {
        let (a, b) = (before.get(&c)?, after.get(&c)?);
        total += b.total.saturating_sub(a.total);
        steal += b.steal.saturating_sub(a.steal);
    }
    (total > 0).then(|| (steal as f64 / total as f64).min(1.0))
}

/// One thread as read from its `stat` and `status`.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskStat {
    pub pid: u32,
    pub tid: u32,
    pub comm: String,
    /// `R` running or runnable, `S` sleeping, `D` waiting on I/O, ...
    pub state: char,
    /// CPU it last ran on.
    pub cpu: Option<u32>,
    /// Cumulative user and system ticks.
    pub utime: u64,
    pub stime: u64,
    pub allowed: Option<CpuSet>,
}

/// Fields of `/proc/.../stat` after `(comm)`: comm may hold spaces and parentheses,
/// so fields are counted from the last `)`. Returns (comm, state-relative fields).
fn split_stat(stat: &str) -> Option<(&str, Vec<&str>)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?;
    Some((comm, stat.get(close + 1..)?.split_whitespace().collect()))
}

/// One thread's `stat` fields the sampler uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatFields {
    pub comm: String,
    pub state: char,
    pub utime: u64,
    pub stime: u64,
    pub cpu: Option<u32>,
}

/// Parses one thread's `stat`: comm, state (field 3), utime (14), stime (15),
/// processor (39).
pub fn parse_task_stat(stat: &str) -> Option<StatFields> {
    let (comm, f) = split_stat(stat)?;
    let state = f.first()?.chars().next()?;
    // f[0] is field 3 (state): field N is f[N - 3].
    let utime = f.get(11)?.parse().ok()?;
    let stime = f.get(12)?.parse().ok()?;
    let cpu = f.get(36).and_then(|c| c.parse().ok());
    Some(StatFields {
        comm: comm.to_string(),
        state,
        utime,
        stime,
        cpu,
    })
}

/// `Cpus_allowed_list:` from `/proc/.../status`.
pub fn allowed_from_status(status: &str) -> Option<CpuSet> {
    let line = status
        .lines()
        .find(|l| l.starts_with("Cpus_allowed_list:"))?;
    CpuSet::parse_list(line.split_once(':')?.1).ok()
}

/// Most processes followed in one tree (a fork bomb must not stall the sampler).
pub const MAX_PROCESSES: usize = 4096;

/// Threads of `pid` and of its descendants (through `task/TID/children`), and the
/// processes found. Anything that vanished mid-read is skipped.
pub fn read_tree(root: &Path, pid: u32) -> (Vec<TaskStat>, Vec<u32>) {
    read_trees(root, &[pid])
}

/// [`read_tree`] from several roots at once, each process read once.
pub fn read_trees(root: &Path, pids: &[u32]) -> (Vec<TaskStat>, Vec<u32>) {
    let proc_dir = root.join("proc");
    let mut tasks = Vec::new();
    let mut stack = pids.to_vec();
    let mut visited = BTreeSet::new();
    let mut processes = Vec::new();
    while let Some(p) = stack.pop() {
        if visited.len() >= MAX_PROCESSES || !visited.insert(p) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(proc_dir.join(format!("{p}/task"))) else {
            continue;
        };
        processes.push(p);
        for entry in entries.flatten() {
            let Some(tid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            let dir = entry.path();
            let Some(f) = std::fs::read_to_string(dir.join("stat"))
                .ok()
                .and_then(|s| parse_task_stat(&s))
            else {
                continue;
            };
            let allowed = std::fs::read_to_string(dir.join("status"))
                .ok()
                .and_then(|s| allowed_from_status(&s));
            tasks.push(TaskStat {
                pid: p,
                tid,
                comm: f.comm,
                state: f.state,
                cpu: f.cpu,
                utime: f.utime,
                stime: f.stime,
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
    (tasks, processes)
}

/// The environment variable that marks a launched run's processes, so the
/// sampler on each of its nodes can find them (`SCALESCOPE_RUN=<mark>`).
pub const RUN_MARK_VARIABLE: &str = "SCALESCOPE_RUN";

/// The most bytes of one process's environment read when looking for the mark.
const MAX_ENVIRON_BYTES: u64 = 1 << 20;

/// Processes carrying a run's mark, found by reading `/proc/PID/environ` once per
/// process and program: `known` remembers each process read (marked or not, with
/// its command name) and forgets those that ended, so a sample reads only the
/// processes that appeared, or ran a new program (a launcher's daemon forks,
/// then execs the rank: before the exec its environment is the daemon's, and for
/// a moment during it, empty), since the last.
///
/// Only processes in the sampler's own UTS namespace (its node's hostname) count:
/// where one machine stands in for several nodes (one network and UTS namespace
/// per node, `scripts/slurm-cluster.sh`), every node's sampler sees every node's
/// processes in `/proc`; on real nodes all share the host's namespace.
#[derive(Debug, Default)]
pub struct Marked {
    known: BTreeMap<u32, (String, bool)>,
    own_uts: Option<Option<std::path::PathBuf>>,
}

/// A process's UTS namespace (`/proc/PID/ns/uts`, e.g. `uts:[4026531838]`).
fn uts_of(root: &Path, pid: &str) -> Option<std::path::PathBuf> {
    std::fs::read_link(root.join(format!("proc/{pid}/ns/uts"))).ok()
}

impl Marked {
    /// The processes under `root` whose environment holds `RUN_MARK_VARIABLE=mark`.
    pub fn scan(&mut self, root: &Path, mark: &str) -> Vec<u32> {
        use std::io::Read;
        let needle = format!("{RUN_MARK_VARIABLE}={mark}\0");
        let Ok(entries) = std::fs::read_dir(root.join("proc")) else {
            return Vec::new();
        };
        let live: BTreeSet<u32> = entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .collect();
        self.known.retain(|pid, _| live.contains(pid));
        let own = self
            .own_uts
            .get_or_insert_with(|| uts_of(root, "self"))
            .clone();
        for &pid in live.iter().take(MAX_PROCESSES * 4) {
            let comm =
                std::fs::read_to_string(root.join(format!("proc/{pid}/comm"))).unwrap_or_default();
            if self.known.get(&pid).is_some_and(|(c, _)| *c == comm) {
                continue;
            }
            let mut env = Vec::new();
            let read = std::fs::File::open(root.join(format!("proc/{pid}/environ")))
                .and_then(|f| f.take(MAX_ENVIRON_BYTES).read_to_end(&mut env));
            // An empty environment is a kernel thread, or a program in the middle
            // of its exec (its new name set, its environment not yet): read again.
            if read.is_err() || env.is_empty() {
                continue;
            }
            let env = String::from_utf8_lossy(&env);
            let marked = env.starts_with(&needle[..]) || env.contains(&format!("\0{needle}"));
            let elsewhere = marked
                && own.as_ref().is_some_and(|own| {
                    uts_of(root, &pid.to_string()).is_some_and(|theirs| &theirs != own)
                });
            self.known.insert(pid, (comm, marked && !elsewhere));
        }
        self.known
            .iter()
            .filter(|(_, (_, m))| *m)
            .map(|(&p, _)| p)
            .collect()
    }
}

/// Resident bytes per node from one `numa_maps`: each mapping's `N<node>=<pages>`
/// times its `kernelpagesize_kB` (4 when absent).
pub fn parse_numa_maps(text: &str) -> BTreeMap<u32, u64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut page_kb = 4u64;
        let mut counts: Vec<(u32, u64)> = Vec::new();
        for word in line.split_whitespace() {
            if let Some(kb) = word.strip_prefix("kernelpagesize_kB=") {
                page_kb = kb.parse().unwrap_or(4);
            } else if let Some((node, pages)) = word
                .strip_prefix('N')
                .and_then(|w| w.split_once('='))
                .and_then(|(n, c)| Some((n.parse::<u32>().ok()?, c.parse::<u64>().ok()?)))
            {
                counts.push((node, pages));
            }
        }
        for (node, pages) in counts {
            *out.entry(node).or_insert(0) += pages * page_kb * 1024;
        }
    }
    out
}

/// Resident bytes per node over `processes`, or `None` when no `numa_maps` could be
/// read (the kernel has no NUMA support, or every process ended).
pub fn read_numa_maps(root: &Path, processes: &[u32]) -> Option<BTreeMap<u32, u64>> {
    let mut total: Option<BTreeMap<u32, u64>> = None;
    for p in processes {
        let Ok(text) = std::fs::read_to_string(root.join(format!("proc/{p}/numa_maps"))) else {
            continue;
        };
        let sum = total.get_or_insert_with(BTreeMap::new);
        for (node, bytes) in parse_numa_maps(&text) {
            *sum.entry(node).or_insert(0) += bytes;
        }
    }
    total
}

/// Parses one `numastat` file (`name value` lines; unknown names ignored).
pub fn parse_numastat(text: &str) -> NumaCounters {
    let mut c = NumaCounters::default();
    for line in text.lines() {
        let Some((name, value)) = line.split_once(char::is_whitespace) else {
            continue;
        };
        let Ok(v) = value.trim().parse::<u64>() else {
            continue;
        };
        match name {
            "numa_hit" => c.numa_hit = v,
            "numa_miss" => c.numa_miss = v,
            "numa_foreign" => c.numa_foreign = v,
            "interleave_hit" => c.interleave_hit = v,
            "local_node" => c.local_node = v,
            "other_node" => c.other_node = v,
            _ => {}
        }
    }
    c
}

/// Every node's counters, or why there are none.
///
/// # Errors
/// A sentence naming the directory when it has no `nodeN/numastat`.
pub fn read_numastat(root: &Path) -> Result<BTreeMap<u32, NumaCounters>, String> {
    let dir = root.join("sys/devices/system/node");
    let entries = std::fs::read_dir(&dir).map_err(|e| {
        format!(
            "{} cannot be read ({e}): a kernel without NUMA support",
            dir.display()
        )
    })?;
    let mut out = BTreeMap::new();
    for entry in entries.flatten() {
        let Some(node) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.strip_prefix("node"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Ok(text) = std::fs::read_to_string(entry.path().join("numastat")) {
            out.insert(node, parse_numastat(&text));
        }
    }
    if out.is_empty() {
        return Err(format!("no nodeN/numastat under {}", dir.display()));
    }
    Ok(out)
}

/// Per-node `now - start` (nodes missing from `start` count from zero).
pub fn deltas(
    start: &BTreeMap<u32, NumaCounters>,
    now: &BTreeMap<u32, NumaCounters>,
) -> BTreeMap<u32, NumaCounters> {
    now.iter()
        .map(|(n, c)| (*n, c.since(&start.get(n).copied().unwrap_or_default())))
        .collect()
}

#[cfg(test)]
mod numastat_tests {
    use super::*;

    #[test]
    fn counters_and_deltas() {
        let a = parse_numastat("numa_hit 10\nnuma_miss 1\nnuma_foreign 2\ninterleave_hit 3\nlocal_node 9\nother_node 4\nbogus x\n");
        assert_eq!((a.numa_hit, a.other_node, a.numa_foreign), (10, 4, 2));
        let b = parse_numastat("numa_hit 15\nother_node 10\n");
        let d = deltas(&BTreeMap::from([(0, a)]), &BTreeMap::from([(0, b), (1, b)]));
        assert_eq!((d[&0].numa_hit, d[&0].other_node), (5, 6));
        assert_eq!(d[&1].other_node, 10);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_busy_and_total() {
        let text = "cpu  9 0 9 9 0 0 0 0 0 0\ncpu0 10 2 3 80 5 0 0 0 0 0\ncpu1 50 0 0 50 0 0 0 0\nintr 1 2\n";
        let s = parse_stat(text);
        assert_eq!(
            s[&0],
            CpuTicks {
                busy: 15,
                steal: 0,
                total: 100
            }
        );
        assert_eq!(s.len(), 2);
        let later = parse_stat("cpu0 60 2 3 130 5 0 0 0\ncpu1 50 0 0 150 0 0 0 0\n");
        let b = busy_between(&s, &later, &CpuSet::parse_list("0-2").unwrap());
        assert_eq!(b[&0], 0.5);
        assert_eq!(b[&1], 0.0);
        assert!(!b.contains_key(&2));
        // Missing CPU 2: no steal figure rather than a partial one.
        assert_eq!(
            steal_between(&s, &later, &CpuSet::parse_list("0-2").unwrap()),
            None
        );
    }

    #[test]
    fn steal_is_the_eighth_column_as_a_share_of_all_ticks() {
        let a = parse_stat("cpu0 10 0 0 80 0 0 0 10\ncpu1 10 0 0 90 0 0 0 0\n");
        assert_eq!(a[&0].steal, 10);
        let b = parse_stat("cpu0 40 0 0 130 0 0 0 40\ncpu1 60 0 0 140 0 0 0 0\n");
        // cpu0: 30 of 110 ticks stolen; cpu1: 0 of 100.
        let both = steal_between(&a, &b, &CpuSet::parse_list("0-1").unwrap()).unwrap();
        assert!((both - 30.0 / 210.0).abs() < 1e-12, "{both}");
        assert_eq!(
            steal_between(&a, &a, &CpuSet::parse_list("0").unwrap()),
            None
        );
    }

    #[test]
    fn task_stat_fields_after_odd_comm() {
        let stat = "1234 (a) b) (c) S 1 1234 1234 0 -1 4194304 100 0 0 0 57 13 0 0 20 0 3 0 12345 1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 5 0 0 0 0 0";
        assert_eq!(
            parse_task_stat(stat),
            Some(StatFields {
                comm: "a) b) (c".to_string(),
                state: 'S',
                utime: 57,
                stime: 13,
                cpu: Some(5)
            })
        );
        assert_eq!(parse_task_stat("1 (x) S 1"), None);
    }

    #[test]
    fn numa_maps_sum_pages_times_page_size() {
        let text = "7f00 default anon=3 N0=2 N1=1 kernelpagesize_kB=4\n\
                    7f10 bind:1 huge anon=1 N1=1 kernelpagesize_kB=2048\n\
                    7f20 default file=/lib/x mapped=2 N0=2 kernelpagesize_kB=4\n\
                    7f30 default\n";
        let m = parse_numa_maps(text);
        assert_eq!(m[&0], 4 * 4096);
        assert_eq!(m[&1], 4096 + 2048 * 1024);
    }
}

#[cfg(test)]
mod marked_tests {
    use super::*;

    fn process(root: &Path, pid: u32, comm: &str, environ: &str) {
        let dir = root.join(format!("proc/{pid}"));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.join("comm"), format!("{comm}\n")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.join("environ"), environ).unwrap_or_else(|e| panic!("{e}"));
    }

    /// A rank is forked by the launcher's daemon (its environment the daemon's),
    /// then execs (for a moment its environment empty): it is found once its
    /// environment holds the mark, whatever was read of it before.
    #[test]
    fn a_rank_is_found_once_its_exec_has_given_it_the_mark() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        let mut m = Marked::default();
        process(root, 40, "slurmstepd", "PATH=/bin\0");
        process(root, 41, "other", "SCALESCOPE_RUN=another\0");
        assert!(m.scan(root, "r1").is_empty());
        // Mid-exec: the new name, no environment yet.
        process(root, 40, "rank", "");
        assert!(m.scan(root, "r1").is_empty());
        process(root, 40, "rank", "PATH=/bin\0SCALESCOPE_RUN=r1\0");
        assert_eq!(m.scan(root, "r1"), [40]);
        // A mark that only begins with this one's is not it.
        process(root, 42, "rank", "SCALESCOPE_RUN=r10\0");
        assert_eq!(m.scan(root, "r1"), [40]);
        // Ended processes are forgotten.
        std::fs::remove_dir_all(root.join("proc/40")).unwrap_or_else(|e| panic!("{e}"));
        assert!(m.scan(root, "r1").is_empty());
    }
}
