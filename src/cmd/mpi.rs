//! `scalescope mpi-check` (the session's `launch::check`, printed as each launch
//! ends, exit 1 unless every rank was placed and every run verified), the hidden
//! `__probe` each rank runs and the hidden `__node-sampler` a launched sweep starts
//! on every node of a run.

use std::process::ExitCode;

use crate::cli::MpiCheckArgs;

pub fn run(args: &MpiCheckArgs) -> anyhow::Result<ExitCode> {
    let topo = scalescope_topo::Source::Live.load()?;
    let doc = scalescope_session::launch::check(&topo, &args.settings(), |l| {
        if !args.json {
            print!("{}", scalescope_report::kernels::launch_text(l));
        }
    })?;
    doc.notes.iter().for_each(|n| eprintln!("note: {n}"));
    match args.json {
        true => println!("{}", serde_json::to_string_pretty(&doc)?),
        false => doc.findings.iter().for_each(|f| println!("finding: {f}")),
    }
    Ok(ExitCode::from(u8::from(!doc.all_ok())))
}

/// Samples this node (every usable CPU) for the marked run until SIGUSR1, SIGTERM
/// or SIGINT; prints a ready line, then the node's evidence and series.
pub fn node_sampler(interval_ms: u64, mark: &str) -> anyhow::Result<ExitCode> {
    use scalescope_results::evidence as ev;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGUSR1,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
    ] {
        signal_hook::flag::register(signal, stop.clone())?;
    }
    let topo = scalescope_topo::Source::Live.load()?;
    let interval = std::time::Duration::from_millis(interval_ms.max(1));
    let cfg = scalescope_sampler::SamplerConfig::live(interval, topo.usable_cpus());
    let host = scalescope_sweep::launch::local_host_name();
    let target = scalescope_sampler::Target::Marked(mark.to_string());
    let (evidence, series) = scalescope_sampler::sample_until(cfg, target, &stop, || {
        let ready = serde_json::json!({"kind": ev::NODE_READY_KIND, "host": host});
        let _ = whole_line(ready.to_string());
    });
    let sample = ev::NodeSample {
        kind: ev::NODE_SAMPLE_KIND.into(),
        schema_version: ev::NODE_SAMPLE_SCHEMA_VERSION,
        host,
        evidence: Box::new(evidence),
        series,
    };
    for line in sample.lines()? {
        whole_line(line)?;
    }
    Ok(ExitCode::SUCCESS)
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

pub fn probe() -> anyhow::Result<ExitCode> {
    let probe = scalescope_sweep::launch::probe_here().map_err(anyhow::Error::msg)?;
    println!("{}", serde_json::to_string(&probe)?);
    Ok(ExitCode::SUCCESS)
}
