//! The studies on an emulated two-package SMT machine: `study graph-mining --budget
//! 2m` plans the socket and SMT boundaries (both placements, a point on each side of
//! each) and runs, `study numa-structure` runs and measures what one node cannot
//! (SLIT levels, the numbering), and an OpenMP program built on the host, its own
//! runtime placing its threads, is checked run by run against the plan.

use serde_json::Value;

use crate::console::Console;
use crate::report::Check;
use crate::shapes::Shape;

/// The thread counts and placements of the graph-mining plan's sweep.
fn plan_sweep(plan: &Value) -> Result<(Vec<usize>, String), String> {
    let args: Vec<&str> = plan["steps"][0]["args"]
        .as_array()
        .ok_or("the plan has no steps")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let after = |flag: &str| {
        args.iter()
            .position(|a| *a == flag)
            .and_then(|i| args.get(i + 1))
            .map(|s| s.to_string())
            .ok_or(format!("the sweep has no {flag}"))
    };
    let threads = after("--threads")?
        .split(',')
        .map(|t| t.parse().map_err(|_| format!("thread count `{t}`")))
        .collect::<Result<Vec<usize>, String>>()?;
    Ok((threads, after("--placement")?))
}

fn rows(report: &Value) -> Vec<(String, String)> {
    report["rows"]
        .as_array()
        .map(|r| {
            r.iter()
                .map(|row| {
                    (
                        row["figure"]["id"].as_str().unwrap_or("").to_string(),
                        row["here"]["verdict"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The graph-mining study's plan crosses both boundaries and every row is measured
/// or unavailable for a reason, none "cannot occur" on this shape but the traffic.
fn graph_mining(shape: &Shape, c: &Console) -> Result<String, String> {
    let (threads, placements) = plan_sweep(&c.json("study.graph-mining.plan")?)?;
    if placements != "cores-first,smt-pairs" {
        return Err(format!(
            "placements {placements}, expected cores-first,smt-pairs"
        ));
    }
    let (per_package, cores) = (shape.cores as usize, (shape.sockets * shape.cores) as usize);
    for t in [per_package, per_package + 1, cores, cores + 1] {
        if !threads.contains(&t) {
            return Err(format!(
                "threads {threads:?} lack {t} (socket at {per_package}, SMT after {cores})"
            ));
        }
    }
    let run = c.get("study.graph-mining")?;
    if run.rc != 0 {
        return Err(format!("the study exited with {}", run.rc));
    }
    let rows = rows(&c.json("study.graph-mining.report")?);
    let cannot: Vec<&(String, String)> = rows
        .iter()
        .filter(|(id, v)| v == "cannot-occur" && !id.starts_with("remote-traffic"))
        .collect();
    if rows.len() != 7 || !cannot.is_empty() {
        return Err(format!("report rows {rows:?}"));
    }
    Ok(format!(
        "threads {threads:?}, {placements}; {} rows",
        rows.len()
    ))
}

fn numa_structure(c: &Console) -> Result<String, String> {
    let run = c.get("study.numa-structure")?;
    if run.rc != 0 {
        return Err(format!("the study exited with {}", run.rc));
    }
    let rows = rows(&c.json("study.numa-structure.report")?);
    let verdict = |id: &str| rows.iter().find(|(i, _)| i == id).map(|(_, v)| v.as_str());
    for id in [
        "slit-levels",
        "cpu0-cpu1-same-package",
        "scatter-two-threads-packages",
    ] {
        if verdict(id) != Some("measured") {
            return Err(format!("row {id}: {:?} (rows {rows:?})", verdict(id)));
        }
    }
    Ok(format!(
        "{} rows, the numbering and SLIT rows measured",
        rows.len()
    ))
}

/// Every runtime-placed run carries its check; a mismatch is named.
fn runtime(c: &Console) -> Result<String, String> {
    let runs: Vec<Value> = c
        .json_lines("runtime.results")?
        .into_iter()
        .filter(|v| v["record"] == "run")
        .collect();
    if runs.is_empty() {
        return Err("no runtime-placed run".into());
    }
    let mut said = Vec::new();
    for r in &runs {
        let check = &r["placement_check"]["runtime"];
        let what = format!(
            "{} {}",
            r["placement"].as_str().unwrap_or("?"),
            r["threads"]
        );
        match check["as_planned"].as_bool() {
            Some(true) => said.push(format!("{what}: as planned")),
            Some(false) if check["detail"].as_str().is_some_and(|d| !d.is_empty()) => said.push(
                format!("{what}: {}", check["detail"].as_str().unwrap_or("")),
            ),
            _ => return Err(format!("{what}: no runtime check ({check})")),
        }
    }
    Ok(said.join("; "))
}

pub fn checks(shape: &Shape, c: &Console) -> Vec<Check> {
    vec![
        Check::new(
            "study graph-mining --budget 2m: socket and SMT boundaries planned, run, reported",
            graph_mining(shape, c),
        ),
        Check::new(
            "study numa-structure: runs, numbering and SLIT rows measured",
            numa_structure(c),
        ),
        Check::new(
            "sweep --placement runtime:*: the OpenMP runtime's binding checked per run",
            runtime(c),
        ),
    ]
}
