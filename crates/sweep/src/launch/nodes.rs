//! The evidence sampler on every node of a launched run. It is started through
//! the run's own launcher, as one unbound process on each of the run's hosts
//! (`scalescope __node-sampler`, `place::launch::one_per_node`), before the run;
//! on its node it follows the run's processes by their mark
//! (`SCALESCOPE_RUN=<mark>`, which the launcher hands to every rank). After the
//! run it is stopped with SIGUSR1, which srun, mpirun and Hydra forward to what
//! they started (srun ends a step on SIGTERM instead), and each node's totals and
//! series come back as its last lines on the launcher's output. Nothing needs a
//! file system shared with the nodes. The sampler itself is here too
//! ([`sampler_main`]), so both ends of its lines live together.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use scalescope_place::launch::one_per_node;
use std::sync::atomic::{AtomicBool, Ordering};

use scalescope_model::evidence::{
    node_samples_in, Measured, NodeEvidence, NodeSample, NODE_READY_KIND, NODE_SAMPLE_KIND,
    NODE_SAMPLE_SCHEMA_VERSION, SERIES_DIR,
};

use super::PreparedLaunch;

/// How long the samplers may take to start on every node before the run starts
/// without them.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the samplers may take to hand back their evidence once stopped.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(20);

/// The samplers of one run, started on every node of its launch.
pub struct NodeSampling {
    child: Result<Child, String>,
    out: PathBuf,
    err: PathBuf,
    hosts: Vec<String>,
}

/// The launcher's command that starts `sampler` (`scalescope __node-sampler`) on
/// each host of `l`, sampling every `interval` and following `mark`.
fn sampler_command(
    l: &PreparedLaunch,
    sampler: &[String],
    interval: Duration,
    mark: &str,
) -> Command {
    let mut cmd = Command::new(&l.spec.program);
    cmd.args(&l.spec.extra_args)
        .args(one_per_node(l.spec.launcher, &l.spec.hosts))
        .args(sampler)
        .args(["--interval-ms", &interval.as_millis().max(1).to_string()])
        .args(["--mark", mark])
        .envs(super::root_env(l.spec.launcher))
        .stdin(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd
}

impl NodeSampling {
    /// Starts the samplers of the run marked `mark` and waits until every node's
    /// is sampling (at most [`READY_TIMEOUT`]); their output goes under `dir`.
    /// A launch that cannot start leaves every node's evidence unavailable, with
    /// the reason, and the run goes on.
    pub fn start(
        l: &PreparedLaunch,
        sampler: &[String],
        interval: Duration,
        mark: &str,
        dir: &Path,
    ) -> NodeSampling {
        let (out, err) = (dir.join("nodes.out"), dir.join("nodes.err"));
        let child = std::fs::create_dir_all(dir)
            .and_then(|()| Ok((std::fs::File::create(&out)?, std::fs::File::create(&err)?)))
            .and_then(|(o, e)| {
                sampler_command(l, sampler, interval, mark)
                    .stdout(o)
                    .stderr(e)
                    .spawn()
            })
            .map_err(|e| format!("starting the node samplers through {}: {e}", l.spec.program));
        let mut s = NodeSampling {
            child,
            out,
            err,
            hosts: l.spec.hosts.clone(),
        };
        s.wait_ready();
        s
    }

    /// Waits until as many nodes as hosts said they are sampling, the launcher
    /// ended, or [`READY_TIMEOUT`] passed.
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + READY_TIMEOUT;
        while let Ok(child) = &mut self.child {
            let text = std::fs::read_to_string(&self.out).unwrap_or_default();
            let ready = text.lines().filter(|l| l.contains(NODE_READY_KIND)).count();
            let ended = !matches!(child.try_wait(), Ok(None));
            if ready >= self.hosts.len() || ended || Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the samplers (SIGUSR1 to the launcher, which forwards it; the whole
    /// launch killed after [`STOP_TIMEOUT`]) and returns every host's evidence,
    /// each node's series written to `results_dir/series/<stem>-<host>.json`.
    pub fn finish(mut self, results_dir: &Path, stem: &str) -> Vec<NodeEvidence> {
        let why = match &mut self.child {
            Ok(child) => stop(child),
            Err(why) => Some(why.clone()),
        };
        let out = std::fs::read_to_string(&self.out).unwrap_or_default();
        let err = std::fs::read_to_string(&self.err).unwrap_or_default();
        let samples = node_samples_in(&out);
        let here = super::local_host_name();
        // `localhost` is this machine, whose sampler says its own name.
        let short = |h: &str| match h {
            "localhost" | "127.0.0.1" => here.split('.').next().unwrap_or("").to_string(),
            h => h.split('.').next().unwrap_or(h).to_string(),
        };
        self.hosts
            .iter()
            .map(|host| {
                let found = samples.iter().find(|s| short(&s.host) == short(host));
                let evidence = match found {
                    Some(s) => {
                        let mut e = (*s.evidence).clone();
                        e.series_file = write_series(results_dir, stem, host, &s.series);
                        Measured::Measured(e)
                    }
                    None => Measured::Unavailable(missing(host, why.as_deref(), &err)),
                };
                NodeEvidence {
                    host: host.clone(),
                    evidence,
                }
            })
            .collect()
    }
}

/// Set by SIGUSR1, SIGTERM or SIGINT in the node sampler.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// `scalescope __node-sampler`: samples this node (every usable CPU) for the run
/// marked `mark` until SIGUSR1, SIGTERM or SIGINT; prints a ready line once it
/// samples, then the node's evidence and series in parts. Returns the exit status.
pub fn sampler_main(interval_ms: u64, mark: &str) -> u8 {
    for sig in [libc::SIGUSR1, libc::SIGTERM, libc::SIGINT] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            libc::signal(
                sig,
                on_stop as extern "C" fn(libc::c_int) as libc::sighandler_t,
            )
        };
    }
    match sample_node(interval_ms, mark) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("scalescope __node-sampler: {e}");
            1
        }
    }
}

fn sample_node(interval_ms: u64, mark: &str) -> Result<(), Box<dyn std::error::Error>> {
    let topo = scalescope_topo::Source::Live.load()?;
    let interval = Duration::from_millis(interval_ms.max(1));
    let cfg = scalescope_sampler::SamplerConfig::live(interval, topo.usable_cpus());
    let host = super::local_host_name();
    let target = scalescope_sampler::Target::Marked(mark.to_string());
    let (evidence, series) = scalescope_sampler::sample_until(cfg, target, &STOP, || {
        let ready = serde_json::json!({"kind": NODE_READY_KIND, "host": host});
        let _ = whole_line(ready.to_string());
    });
    let sample = NodeSample {
        kind: NODE_SAMPLE_KIND.into(),
        schema_version: NODE_SAMPLE_SCHEMA_VERSION,
        host,
        evidence: Box::new(evidence),
        series,
    };
    for line in sample.lines()? {
        whole_line(line)?;
    }
    Ok(())
}

/// Writes `line` and its newline in one write(2) (under PIPE_BUF, so the pipe
/// takes it whole): a launcher relays what it reads from each rank as it comes,
/// and a line written in two pieces may be cut by another node's.
fn whole_line(mut line: String) -> std::io::Result<()> {
    use std::io::Write;
    line.push('\n');
    let mut out = std::io::stdout().lock();
    out.write_all(line.as_bytes())?;
    out.flush()
}

/// Why a host's evidence did not come back, with the launcher's last words.
fn missing(host: &str, why: Option<&str>, stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
    let mut text = format!("no evidence came back from {host}'s sampler");
    if let Some(why) = why {
        text += &format!(" ({why})");
    }
    if !tail.is_empty() {
        text += &format!(": {tail}");
    }
    text
}

/// Sends SIGUSR1 to the launcher and waits for it; past [`STOP_TIMEOUT`], kills
/// its process group. Returns why the stop was not clean, if it was not.
fn stop(child: &mut Child) -> Option<String> {
    let Ok(pid) = i32::try_from(child.id()) else {
        return Some("no process id".into());
    };
    // SAFETY: kill(2) on the launcher we started and still hold (not yet waited
    // for, so its pid is not reused); no memory is involved.
    unsafe { libc::kill(pid, libc::SIGUSR1) };
    let deadline = Instant::now() + STOP_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return None,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => break,
        }
    }
    // SAFETY: as above, the process group the launcher leads (process_group(0)).
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let _ = child.wait();
    Some(format!(
        "the samplers did not stop within {} s and were killed",
        STOP_TIMEOUT.as_secs()
    ))
}

/// Writes one node's series beside the results; its name relative to them, or
/// `None` when it could not be written.
fn write_series(
    results_dir: &Path,
    stem: &str,
    host: &str,
    series: &scalescope_model::evidence::Series,
) -> Option<String> {
    let safe: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = format!("{SERIES_DIR}/{stem}-{safe}.json");
    let path = results_dir.join(&name);
    let text = serde_json::to_string(series).ok()?;
    path.parent()
        .map(std::fs::create_dir_all)
        .unwrap_or(Ok(()))
        .and_then(|()| std::fs::write(&path, text))
        .ok()
        .map(|()| name)
}
