//! `mpi-check` as text: each launch's command, rankfile and every rank against its
//! plan.

use std::fmt::Write as _;

use scalescope_results::ranks::LaunchCheck;

/// One launch, as printed by `mpi-check`.
pub fn launch_text(l: &LaunchCheck) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "ranks per node {}: {}", l.ranks_per_node, l.command);
    if let Some(rf) = &l.rankfile {
        let _ = writeln!(
            out,
            "  rankfile:\n    {}",
            rf.trim_end().replace('\n', "\n    ")
        );
    }
    for r in &l.check.ranks {
        let seen = r.probe.as_ref().map_or("did not report".to_string(), |p| {
            let cpu = p.cpu.map_or("?".into(), |c| c.to_string());
            format!(
                "on {} cpus {} (running on {cpu}), memory {}",
                p.host, p.allowed, p.mem_policy
            )
        });
        let mark = if r.inside_plan { "ok" } else { "OUT OF PLAN" };
        let _ = writeln!(
            out,
            "  rank {:>3}  planned {} cpus {:<8} {seen}  {mark}",
            r.rank, r.planned_host, r.planned
        );
    }
    for u in &l.check.unexpected {
        let _ = writeln!(out, "  unexpected: {u}");
    }
    if l.timed_out {
        let _ = writeln!(out, "  the launch was killed after its timeout");
    } else if l.exit_code != Some(0) {
        let _ = writeln!(
            out,
            "  the launcher failed (exit {:?}): {}",
            l.exit_code, l.stderr_tail
        );
    }
    for r in &l.runs {
        let verdict = r.report.as_ref().map_or(String::new(), |w| {
            let figures: Vec<String> = w
                .figures
                .iter()
                .map(|(k, v)| format!("{k}={v:.4}"))
                .collect();
            format!(", {} ({})", figures.join(" "), w.verification)
        });
        let status = if r.ok() { "ok" } else { "FAILED" };
        let _ = writeln!(
            out,
            "  run {}: {:.3} s wall, exit {:?}{verdict}  {status}",
            r.rep, r.wall_secs, r.exit_code
        );
    }
    let verdict = if l.check.all_inside_plan {
        "every rank where planned"
    } else {
        "ranks out of plan"
    };
    let _ = writeln!(out, "  {verdict}");
    out
}
