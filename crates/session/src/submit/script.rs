//! The text of one point's Slurm batch script: `#SBATCH` directives and the
//! `scalescope sweep` command line that runs (or resumes) the point inside its
//! allocation. This file is a command line by design: it spells flags.

use std::path::Path;

use scalescope_model::plan::{Point, RunOrder};
use scalescope_model::store::{Header, RESULTS_FILE};
use scalescope_sweep::engine::shell_quote;

use super::SubmitSettings;

/// The sweep flags that run `point` alone, as the whole sweep would run it.
fn sweep_flags(header: &Header, point: &Point, sample_interval_ms: Option<u64>) -> Vec<String> {
    let plan = &header.plan;
    let mut v: Vec<String> = Vec::new();
    let mut flag = |k: &str, val: String| v.extend([k.to_string(), val]);
    if let Some(l) = &plan.launch {
        flag("--launcher", l.launcher.clone());
        flag("--launcher-path", l.program.clone());
        let nodes = point.nodes.unwrap_or(1).max(1);
        flag("--nodes", nodes.to_string());
        flag("--ranks-per-node", (point.threads / nodes).to_string());
        flag("--threads-per-rank", l.threads_per_rank.to_string());
    }
    flag("--placement", point.placement.to_string());
    flag("--reps", plan.reps.to_string());
    flag("--warmup", plan.warmup.to_string());
    if let RunOrder::Shuffled { seed } = plan.order {
        flag("--seed", seed.to_string());
    }
    if let Some(t) = header.timeout_secs {
        flag("--timeout", t.to_string());
    }
    if let Some(g) = header.kill_grace_secs {
        flag("--kill-grace", g.to_string());
    }
    if let Some(ms) = sample_interval_ms {
        flag("--sample-interval", ms.to_string());
    }
    for m in header.command.metrics.iter() {
        if let Some(re) = &m.regex {
            let dir = if m.higher_is_better {
                "higher"
            } else {
                "lower"
            };
            flag("--metric", format!("{}={re}:{dir}", m.name));
        }
    }
    for (k, val) in &header.command.env {
        flag("--env", format!("{k}={val}"));
    }
    let extra = plan.launch.iter().flat_map(|l| l.extra_args.iter());
    v.extend(extra.map(|a| format!("--launcher-arg={a}")));
    v
}

/// One point's job script: exclusive nodes, the point's sweep started in its
/// directory, or resumed there when it has runs already.
pub(super) fn script(
    header: &Header,
    point: &Point,
    name: &str,
    out: &Path,
    exe: &str,
    sub: &SubmitSettings,
    sample_interval_ms: Option<u64>,
) -> String {
    let q = |s: &str| shell_quote(s);
    let dir = out.join("jobs").join(name).display().to_string();
    let nodes = point.nodes.unwrap_or(1).max(1);
    let mut text = String::from("#!/bin/bash\n");
    text += &format!(
        "#SBATCH --job-name=scalescope-{name}\n#SBATCH --nodes={nodes}\n#SBATCH --exclusive\n"
    );
    text += &format!(
        "#SBATCH --output={}\n",
        out.join("jobs").join(format!("{name}.%j.log")).display()
    );
    if let Some(t) = header.timeout_secs {
        let runs = header.plan.reps + header.plan.warmup + scalescope_sweep::launch::PROBE_LAUNCHES;
        let minutes = (runs as f64 * t / 60.0).ceil() as u64 + 5;
        text += &format!("#SBATCH --time={minutes}\n");
    }
    for a in &sub.sbatch_args {
        text += &format!("#SBATCH {a}\n");
    }
    text += &format!(
        "# scalescope sweep --submit: {point}, gathered into {}\nset -eu\ndir={}\n",
        out.join(RESULTS_FILE).display(),
        q(&dir)
    );
    let interval = sample_interval_ms
        .map(|ms| format!(" --sample-interval {ms}"))
        .unwrap_or_default();
    text += &format!(
        "if [ -s \"$dir/results.jsonl\" ]; then\n  exec {} sweep --resume --out \"$dir\"{interval}\nfi\n",
        q(exe)
    );
    let flags: Vec<String> = sweep_flags(header, point, sample_interval_ms)
        .iter()
        .map(|f| q(f))
        .collect();
    let program: Vec<String> = header.command.argv.iter().map(|a| q(a)).collect();
    text += &format!(
        "exec {} sweep {} --out \"$dir\" -- {}\n",
        q(exe),
        flags.join(" "),
        program.join(" ")
    );
    text
}
