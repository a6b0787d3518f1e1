//! Evidence over time: a sampler that runs beside one run (a process and its
//! descendants) and records, at a fixed interval, CPU utilisation per CPU and per
//! thread, resident pages per NUMA node, the kernel's NUMA counters, and memory
//! bandwidth from the best source the machine offers; at the end it sums them into
//! the run's [`RunEvidence`] and writes the [`Series`] file.
//!
//! Every file is read under a root directory (`/` live, a recorded or fake tree in
//! tests). Processes may end at any point of a read; what vanished is skipped. A
//! source that does not exist or does not work is reported with the reason, never
//! replaced by a guess.
//!
//! The sampler owns no thread: the executor that waits for the run calls
//! [`Sampler::sample`] when [`Sampler::due`] says so, and [`Sampler::finish`] once;
//! in-process workloads use [`Background`], which gives it one.

pub mod bandwidth;
pub mod perf;
pub mod procfs;
pub mod resctrl;
mod summary;
pub mod uncore;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use scalescope_model::evidence::{
    Measured, NumaCounters, RunEvidence, Sample, Series, ThreadSample,
};
use scalescope_topo::CpuSet;

use crate::bandwidth::{BandwidthSource, DomainReading};
use crate::procfs::{CpuTicks, TaskStat};

/// The default interval between samples.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(100);

/// How one run is sampled.
#[derive(Debug, Clone)]
pub struct SamplerConfig {
    /// `/` for the live machine; a recorded tree in tests.
    pub root: PathBuf,
    pub interval: Duration,
    /// The CPUs the run may use.
    pub cpus: CpuSet,
    /// Probe for and use bandwidth and PMU counters (off for recorded trees that
    /// have none, and in tests of the other sources).
    pub counters: bool,
}

impl SamplerConfig {
    /// Sampling of the live machine at `interval`.
    pub fn live(interval: Duration, cpus: CpuSet) -> SamplerConfig {
        SamplerConfig {
            root: PathBuf::from("/"),
            interval,
            cpus,
            counters: true,
        }
    }
}

/// What is tracked of one thread between samples.
#[derive(Debug, Clone)]
struct ThreadTrack {
    pid: u32,
    comm: String,
    cpus_seen: CpuSet,
    last_cpu: Option<u32>,
    migrations: usize,
    first: (f64, u64),
    last: (f64, u64, u64),
    shared_cpu_samples: usize,
    samples: usize,
}

/// Whose processes a sampler follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A process just started, and its descendants.
    Tree(u32),
    /// Every process whose environment holds `SCALESCOPE_RUN=<mark>`, and their
    /// descendants: a launched run's ranks on one node, started by a launcher's
    /// daemon the sampler did not start ([`procfs::RUN_MARK_VARIABLE`]).
    Marked(String),
}

/// Samples one run.
pub struct Sampler {
    cfg: SamplerConfig,
    target: Target,
    marked: procfs::Marked,
    start: Instant,
    next_due: Instant,
    ticks_per_sec: f64,
    stat_start: BTreeMap<u32, CpuTicks>,
    stat_prev: BTreeMap<u32, CpuTicks>,
    numastat_start: Result<BTreeMap<u32, NumaCounters>, String>,
    threads: BTreeMap<u32, ThreadTrack>,
    pages: summary::PagesAcc,
    bandwidth: Result<Box<dyn BandwidthSource>, String>,
    bw_first: Option<Vec<DomainReading>>,
    bw_prev: Option<(f64, Vec<DomainReading>)>,
    bw_acc: summary::BandwidthAcc,
    pmu: perf::RunCounters,
    series: Series,
    cost: Duration,
}

/// CPU time of the calling thread.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn clock_ticks_per_sec() -> f64 {
    // SAFETY: sysconf only reads a constant of the system.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

impl Sampler {
    /// Starts sampling `pid` (just started): reads the baselines and sets up the
    /// bandwidth source and per-run counters.
    pub fn start(cfg: SamplerConfig, pid: u32) -> Sampler {
        Sampler::start_on(cfg, Target::Tree(pid))
    }

    /// Starts sampling `target`. A marked run's processes appear after the
    /// sampler starts, so per-run PMU counters (opened on one process, inherited
    /// by its children) are unavailable for it; a resctrl monitoring group starts
    /// with the sampler itself and follows the run's threads as they are found.
    pub fn start_on(cfg: SamplerConfig, target: Target) -> Sampler {
        let before = thread_cpu_time();
        let start = Instant::now();
        let stat_start = procfs::read_stat(&cfg.root);
        let numastat_start = procfs::read_numastat(&cfg.root);
        let (bandwidth, pmu) = match (&target, cfg.counters) {
            (Target::Tree(pid), true) => (
                bandwidth::open(&cfg.root, *pid),
                perf::RunCounters::open(&cfg.root, *pid),
            ),
            (Target::Marked(_), true) => (
                bandwidth::open(&cfg.root, std::process::id()),
                perf::RunCounters::none(
                    "per-run counters follow one process from its start; a node's ranks are found after they start",
                ),
            ),
            (_, false) => {
                (
                    Err("counters were not asked for".to_string()),
                    perf::RunCounters::none("counters were not asked for"),
                )
            }
        };
        let source = match &bandwidth {
            Ok(b) => Measured::Measured(b.name().to_string()),
            Err(why) => Measured::Unavailable(why.clone()),
        };
        let series = Series::new(cfg.interval.as_secs_f64() * 1e3, cfg.cpus.clone(), source);
        let mut s = Sampler {
            next_due: start + cfg.interval,
            ticks_per_sec: clock_ticks_per_sec(),
            stat_prev: stat_start.clone(),
            stat_start,
            numastat_start,
            threads: BTreeMap::new(),
            pages: summary::PagesAcc::default(),
            bw_first: None,
            bw_prev: None,
            bw_acc: summary::BandwidthAcc::default(),
            bandwidth,
            pmu,
            series,
            cost: Duration::ZERO,
            cfg,
            target,
            marked: procfs::Marked::default(),
            start,
        };
        if let Ok(b) = s.bandwidth.as_mut() {
            let first = b.read();
            s.bw_first = Some(first.clone());
            s.bw_prev = Some((0.0, first));
        }
        s.cost += thread_cpu_time().saturating_sub(before);
        s
    }

    /// Whether the next sample is due.
    pub fn due(&self) -> bool {
        Instant::now() >= self.next_due
    }

    /// How long until the next sample is due.
    pub fn until_due(&self) -> Duration {
        self.next_due.saturating_duration_since(Instant::now())
    }

    /// Takes one sample; returns the threads read, for the placement monitor.
    pub fn sample(&mut self) -> Vec<TaskStat> {
        let before = thread_cpu_time();
        let t = self.start.elapsed().as_secs_f64();
        self.next_due = Instant::now() + self.cfg.interval;
        let (tasks, processes) = match &self.target {
            Target::Tree(pid) => procfs::read_tree(&self.cfg.root, *pid),
            Target::Marked(mark) => {
                let roots = self.marked.scan(&self.cfg.root, mark);
                procfs::read_trees(&self.cfg.root, &roots)
            }
        };
        let stat = procfs::read_stat(&self.cfg.root);
        let cpu_busy = procfs::busy_between(&self.stat_prev, &stat, &self.cfg.cpus);
        self.stat_prev = stat;
        self.track_threads(t, &tasks);
        let bytes_per_node = procfs::read_numa_maps(&self.cfg.root, &processes);
        if let Some(b) = &bytes_per_node {
            self.pages.add(b);
        }
        let numastat = match (&self.numastat_start, procfs::read_numastat(&self.cfg.root)) {
            (Ok(start), Ok(now)) => Some(procfs::deltas(start, &now)),
            _ => None,
        };
        let bandwidth = self.sample_bandwidth(t, &tasks);
        let threads = tasks
            .iter()
            .map(|k| ThreadSample {
                tid: k.tid,
                cpu: k.cpu,
                user_secs: k.utime as f64 / self.ticks_per_sec,
                sys_secs: k.stime as f64 / self.ticks_per_sec,
            })
            .collect();
        self.series.samples.push(Sample {
            t,
            cpu_busy,
            threads,
            bytes_per_node,
            numastat,
            bandwidth,
        });
        self.cost += thread_cpu_time().saturating_sub(before);
        tasks
    }

    fn track_threads(&mut self, t: f64, tasks: &[TaskStat]) {
        // Sharing is counted among running threads only: a sleeping thread's CPU is
        // just where it last ran.
        let mut on_cpu: BTreeMap<u32, usize> = BTreeMap::new();
        for k in tasks.iter().filter(|k| k.state == 'R') {
            if let Some(c) = k.cpu {
                *on_cpu.entry(c).or_insert(0) += 1;
            }
        }
        for k in tasks {
            let ticks = k.utime + k.stime;
            let tr = self.threads.entry(k.tid).or_insert_with(|| ThreadTrack {
                pid: k.pid,
                comm: k.comm.clone(),
                cpus_seen: CpuSet::new(),
                last_cpu: k.cpu,
                migrations: 0,
                first: (t, ticks),
                last: (t, k.utime, k.stime),
                shared_cpu_samples: 0,
                samples: 0,
            });
            if let Some(c) = k.cpu {
                tr.cpus_seen.insert(c);
                if tr.last_cpu.is_some_and(|l| l != c) {
                    tr.migrations += 1;
                }
                if k.state == 'R' && on_cpu.get(&c).is_some_and(|n| *n > 1) {
                    tr.shared_cpu_samples += 1;
                }
            }
            tr.last_cpu = k.cpu;
            tr.last = (t, k.utime, k.stime);
            tr.samples += 1;
        }
    }

    fn sample_bandwidth(&mut self, t: f64, tasks: &[TaskStat]) -> Vec<bandwidth::DomainRateOut> {
        let Ok(source) = self.bandwidth.as_mut() else {
            return Vec::new();
        };
        let tids: Vec<u32> = tasks.iter().map(|k| k.tid).collect();
        source.follow(&tids);
        let now = source.read();
        let rates = match &self.bw_prev {
            Some((t0, prev)) => bandwidth::rates(prev, &now, t - t0),
            None => Vec::new(),
        };
        self.bw_acc.add(&rates);
        self.bw_prev = Some((t, now));
        rates
    }

    /// Ends sampling: reads the final counters, writes the series as `name` inside
    /// the results directory `dir` (`series: Some((dir, name))`; the evidence names
    /// it) and sums everything up.
    /// `wall_secs` and `run_cpu_secs` come from the executor's `wait4`.
    pub fn finish(
        mut self,
        wall_secs: f64,
        run_cpu_secs: Option<f64>,
        series: Option<(&Path, String)>,
    ) -> RunEvidence {
        let before = thread_cpu_time();
        let end = summary::End {
            stat: procfs::read_stat(&self.cfg.root),
            numastat: procfs::read_numastat(&self.cfg.root),
            pmu: self.pmu.read(),
            bandwidth_total: match (&mut self.bandwidth, &self.bw_prev) {
                (Ok(b), Some(_)) => Some(b.read()),
                _ => None,
            },
        };
        // Written inside the results directory, never through a link planted there.
        let series_file = series.and_then(|(dir, name)| {
            let text = serde_json::to_string(&self.series).ok()?;
            let out = scalescope_files::OutDir::open(dir).ok()?;
            out.write_file(&name, text.as_bytes())
                .is_ok()
                .then_some(name)
        });
        self.cost += thread_cpu_time().saturating_sub(before);
        summary::evidence(&self, end, wall_secs, run_cpu_secs, series_file)
    }

    /// The series so far (for tests and in-process callers).
    pub fn series(&self) -> &Series {
        &self.series
    }
}

/// Samples `target` on this thread from now until `stop` is set, calling `ready`
/// once the baselines are read (the node sampler of a launched run says it is
/// sampling, and the run starts): the totals and the series, with no series file
/// written (the caller decides where the series goes).
pub fn sample_until(
    cfg: SamplerConfig,
    target: Target,
    stop: &AtomicBool,
    ready: impl FnOnce(),
) -> (RunEvidence, Series) {
    let t0 = Instant::now();
    let mut s = Sampler::start_on(cfg, target);
    ready();
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(s.until_due().min(Duration::from_millis(10)));
        if s.due() && !stop.load(Ordering::SeqCst) {
            s.sample();
        }
    }
    let series = s.series().clone();
    (s.finish(t0.elapsed().as_secs_f64(), None, None), series)
}

/// The sampler on a thread of its own, watching this process: for built-in
/// workloads run in-process (`scalescope mem stream`), where no executor waits
/// beside the run. Its own thread is among those it sees.
pub struct Background {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<RunEvidence>,
}

impl Background {
    /// Starts sampling this process every `interval` on `cpus` (the CPUs its
    /// workers may use).
    pub fn start(interval: Duration, cpus: CpuSet) -> Background {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let t0 = Instant::now();
            let mut s = Sampler::start(SamplerConfig::live(interval, cpus), std::process::id());
            while !flag.load(Ordering::SeqCst) {
                std::thread::sleep(s.until_due().min(Duration::from_millis(10)));
                if s.due() && !flag.load(Ordering::SeqCst) {
                    s.sample();
                }
            }
            s.finish(t0.elapsed().as_secs_f64(), None, None)
        });
        Background { stop, handle }
    }

    /// Stops sampling and sums up; `None` if the sampling thread panicked.
    pub fn finish(self) -> Option<RunEvidence> {
        self.stop.store(true, Ordering::SeqCst);
        self.handle.join().ok()
    }
}

#[cfg(test)]
mod background_tests {
    use super::*;

    #[test]
    fn samples_this_process_until_stopped() {
        let b = Background::start(
            Duration::from_millis(10),
            CpuSet::parse_list("0").unwrap_or_default(),
        );
        let block = vec![7u8; 8 << 20];
        std::thread::sleep(Duration::from_millis(60));
        let e = b
            .finish()
            .unwrap_or_else(|| panic!("sampler thread panicked"));
        assert!(e.samples >= 2, "{}", e.samples);
        let peak: u64 = e.peak_bytes_per_node().map_or(0, |m| m.values().sum());
        assert!(peak >= 8 << 20, "{peak}");
        assert_eq!(block[100], 7);
    }
}
