//! Placement: for every strategy, the CPUs `place` plans, the CPUs the sweep says it
//! used, and the CPUs the kernel says were busy (per-CPU busy jiffies from /proc/stat
//! around the sweep) must agree; smt-pairs must land on the kernel's SMT siblings and
//! cores-first on separate kernel cores.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::console::{kernel_cpus, Console, KernelCpu};
use crate::report::Check;
use crate::shapes::Shape;

pub const STRATEGIES: [&str; 5] = ["compact", "scatter", "cores-first", "smt-pairs", "spread"];

/// The planned CPUs must be the busiest ones, each at least this many times as busy
/// as any other CPU but one. Each EP worker computes the same share. The one CPU
/// allowed closer is the command's own main thread: it is not a worker, so it is not
/// pinned, and under TCG on a loaded host its topology discovery and report cost 0.2 to
/// 0.7 of a worker's jiffies (CI, 4s-2c-2t: 107, 140, 113, 242 and 169 against workers'
/// 346 to 534). It must still be less busy than every planned CPU, so the set of the
/// busiest CPUs is never ambiguous.
const MARGIN: f64 = 1.5;

fn thread_cpus(v: &Value) -> Vec<Vec<u32>> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let cpus = if t.is_array() { t } else { &t["cpus"] };
            cpus.as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c.as_u64().map(|c| c as u32))
                .collect()
        })
        .collect()
}

/// The `n` CPUs the kernel saw busiest during command `name`, if they stand out from
/// the rest as [`MARGIN`] says; the per-CPU jiffies as text.
pub fn busiest_cpus(
    console: &Console,
    name: &str,
    n: usize,
) -> Result<(BTreeSet<u32>, String), String> {
    let d = console.deltas(name)?;
    let ticks: Vec<String> = d.ticks.iter().map(|(c, t)| format!("{c}:{t}")).collect();
    let ticks = ticks.join(" ");
    let mut by_busy: Vec<(i64, u32)> = d.ticks.iter().map(|(c, t)| (*t, *c)).collect();
    by_busy.sort_unstable_by(|a, b| b.cmp(a));
    let busy = |i: usize| by_busy.get(i).map(|x| x.0).unwrap_or(0);
    let least_planned = busy(n.saturating_sub(1));
    let (main_thread, rest) = (busy(n), busy(n + 1));
    if least_planned < 20
        || least_planned <= main_thread
        || (least_planned as f64) < MARGIN * rest as f64
    {
        return Err(format!(
            "the {n} busiest CPUs do not stand out (jiffies {ticks})"
        ));
    }
    Ok((by_busy.iter().take(n).map(|x| x.1).collect(), ticks))
}

/// The plan `place` printed for a strategy: one CPU set per thread.
fn plan_of(console: &Console, s: &str) -> Result<Vec<Vec<u32>>, String> {
    let plan = thread_cpus(&console.json(&format!("place.{s}"))?["threads"]);
    if plan.is_empty() || plan.iter().any(|t| t.len() != 1) {
        return Err(format!("plan {plan:?}: a thread is not on exactly one PU"));
    }
    let planned: BTreeSet<u32> = plan.iter().flatten().copied().collect();
    if planned.len() != plan.len() {
        return Err(format!("plan {plan:?} puts two threads on one PU"));
    }
    Ok(plan)
}

/// In-process (the pinned pool): the kernel's busiest CPUs are exactly the plan.
fn in_process(console: &Console, kernel: &[KernelCpu], s: &str) -> Result<String, String> {
    let plan = plan_of(console, s)?;
    let doc = console.json(&format!("ep.{s}"))?;
    if doc["verified"] != true {
        return Err(format!(
            "EP not verified: {}",
            doc["report"]["verification"]
        ));
    }
    let planned: BTreeSet<u32> = plan.iter().flatten().copied().collect();
    let (busy, ticks) = busiest_cpus(console, &format!("ep.{s}"), planned.len())?;
    if busy != planned {
        return Err(format!(
            "planned {planned:?}, the kernel saw busiest {busy:?} (jiffies {ticks})"
        ));
    }
    let rule = shape_rule(kernel, s, &plan)?;
    Ok(format!(
        "threads on {plan:?}; the kernel's busiest CPUs {busy:?} (jiffies {ticks}){rule}"
    ))
}

/// Through a sweep: the run recorded the plan, its own /proc sampling found every
/// thread inside it, and the kernel saw every planned CPU busy (the sweep's parent
/// may add a busy CPU of its own, so the rest are not required idle here).
fn swept(console: &Console, kernel: &[KernelCpu], s: &str) -> Result<String, String> {
    let plan = plan_of(console, s)?;
    let sweep = format!("sweep.{s}");
    let sweep_rc = console.get(&sweep)?.rc;
    let lines = console.json_lines(&format!("{sweep}.results"))?;
    let run = lines
        .iter()
        .find(|l| l["record"] == "run")
        .ok_or(format!("`{sweep}` (exit {sweep_rc}) recorded no run"))?;
    if run["status"] != "ok" {
        return Err(format!(
            "the sweep's run ended {}: {}",
            run["status"], run["error"]
        ));
    }
    let recorded = thread_cpus(&run["thread_cpus"]);
    if recorded != plan {
        return Err(format!(
            "place planned {plan:?}, the sweep ran {recorded:?}"
        ));
    }
    let check = &run["placement_check"];
    if check["inside_plan"] != true || check["violations"].as_array().is_none_or(|v| !v.is_empty())
    {
        return Err(format!("the sweep's own placement check: {check}"));
    }
    let d = console.deltas(&sweep)?;
    let max = d.ticks.values().copied().max().unwrap_or(0);
    let idle: Vec<u32> = plan
        .iter()
        .map(|t| t[0])
        .filter(|c| (d.ticks.get(c).copied().unwrap_or(0) as f64) < 0.3 * max as f64)
        .collect();
    if max < 20 || !idle.is_empty() {
        let ticks: Vec<String> = d.ticks.iter().map(|(c, t)| format!("{c}:{t}")).collect();
        return Err(format!(
            "planned CPUs {idle:?} were not busy (jiffies {})",
            ticks.join(" ")
        ));
    }
    let rule = shape_rule(kernel, s, &plan)?;
    Ok(format!("the run recorded {plan:?}, its sampling found every thread inside, the kernel saw each planned CPU busy{rule}"))
}

/// What the strategy promises about cores, judged with the kernel's siblings.
fn shape_rule(kernel: &[KernelCpu], s: &str, plan: &[Vec<u32>]) -> Result<String, String> {
    let core = |c: u32| -> Option<(u32, u32)> {
        let k = kernel.iter().find(|k| k.cpu == c)?;
        Some((k.package?, k.core?))
    };
    let cpus: Vec<u32> = plan.iter().map(|t| t[0]).collect();
    let smt = kernel.iter().any(|k| k.siblings.len() > 1);
    match s {
        "smt-pairs" if smt => {
            for pair in cpus.chunks(2).filter(|p| p.len() == 2) {
                let k = kernel
                    .iter()
                    .find(|k| k.cpu == pair[0])
                    .ok_or("unknown CPU")?;
                if !k.siblings.contains(&pair[1]) {
                    return Err(format!(
                        "smt-pairs put {pair:?} together; the kernel's siblings of {} are {:?}",
                        pair[0], k.siblings
                    ));
                }
            }
            Ok("; pairs are kernel SMT siblings".into())
        }
        "cores-first" => {
            let cores: BTreeSet<_> = cpus.iter().map(|c| core(*c)).collect();
            let allowed_cores: BTreeSet<_> = kernel
                .iter()
                .filter(|k| k.online)
                .map(|k| core(k.cpu))
                .collect();
            let want = cpus.len().min(allowed_cores.len());
            if cores.len() < want {
                return Err(format!(
                    "cores-first used {} kernel cores for {} threads",
                    cores.len(),
                    cpus.len()
                ));
            }
            Ok(format!("; {} separate kernel cores", cores.len()))
        }
        _ => Ok(String::new()),
    }
}

/// On a machine without SMT, smt-pairs must be refused with a reason, not run.
fn refused_without_smt(console: &Console, section: &str) -> Result<String, String> {
    match console.json(section) {
        Ok(doc) => Err(format!("ran on a machine without SMT: {doc}")),
        Err(e) if e.contains("no SMT") => Ok(format!("refused: {e}")),
        Err(e) => Err(e),
    }
}

pub fn checks(shape: &Shape, console: &Console) -> Vec<Check> {
    let kernel = match kernel_cpus(console) {
        Ok(k) => k,
        Err(e) => return vec![Check::new("kernel CPUs", Err(e))],
    };
    if shape.threads == 1 {
        let mut out = vec![Check::new(
            "place --strategy smt-pairs refused without SMT",
            refused_without_smt(console, "place.smt-pairs"),
        )];
        for s in STRATEGIES.iter().filter(|s| **s != "smt-pairs") {
            out.push(Check::new(
                format!("npb ep --placement {s}: threads where planned"),
                in_process(console, &kernel, s),
            ));
        }
        out.push(Check::new(
            "sweep --placement cores-first: threads where planned",
            swept(console, &kernel, "cores-first"),
        ));
        return out;
    }
    let mut out: Vec<Check> = STRATEGIES
        .iter()
        .map(|s| {
            Check::new(
                format!("npb ep --placement {s}: threads where planned"),
                in_process(console, &kernel, s),
            )
        })
        .collect();
    for s in ["smt-pairs", "cores-first"] {
        out.push(Check::new(
            format!("sweep --placement {s}: threads where planned"),
            swept(console, &kernel, s),
        ));
    }
    out
}
