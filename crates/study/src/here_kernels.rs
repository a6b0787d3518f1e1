//! The synchronisation and SMT/MPI rows, and the runtime-placement check of the
//! NUMA-structure study (see [`crate::here`]).

use crate::here::{Here, Outputs};
use crate::published::Figure;

fn sync_curve<'a>(
    doc: &'a serde_json::Value,
    op: &str,
    sync: &str,
) -> Option<&'a serde_json::Value> {
    doc.get("curves")?
        .as_array()?
        .iter()
        .find(|c| c["op"] == op && c["sync"] == sync)
}

fn claim(doc: &serde_json::Value, claim: &str, op: &str) -> Option<String> {
    let c = doc
        .get("claims")?
        .as_array()?
        .iter()
        .find(|c| c["claim"] == claim && c["op"] == op)?;
    Some(
        format!(
            "{} {}",
            c["verdict"].as_str()?,
            c["detail"].as_str().unwrap_or("")
        )
        .trim()
        .to_string(),
    )
}

/// Synchronisation: the inequalities, the best sizes, atomics against HTM, A of atomics.
pub fn sync(f: &Figure, o: &Outputs) -> Here {
    let Some(doc) = o.docs.get("sync") else {
        return o.missing("sync");
    };
    let best_atomic =
        sync_curve(doc, "mark-visited", "atomic").and_then(|c| c["best_batch"].as_u64());
    let no_htm = o.facts.no_htm();
    match (f.id.as_str(), no_htm) {
        ("b-atomic-lt-b-htm", Some(why)) | ("a-atomic-gt-a-htm", Some(why)) | ("pagerank-atomics-win", Some(why)) | ("bfs-htm-wins", Some(why)) => Here::cannot(why),
        ("best-batch-haswell", Some(why)) | ("best-batch-bgq", Some(why)) => Here::cannot(format!(
            "{why}; the published sizes are HTM transaction sizes (here the best batch for atomics, marking visited, is {})",
            best_atomic.map_or("not measured".into(), |b| b.to_string())
        )),
        ("b-atomic-lt-b-htm", None) => claim_here(doc, "B_atomic < B_htm", "mark-visited"),
        ("a-atomic-gt-a-htm", None) => claim_here(doc, "A_atomic > A_htm", "mark-visited"),
        ("best-batch-haswell", None) | ("best-batch-bgq", None) => best_htm(doc, f),
        ("pagerank-atomics-win", None) => faster(doc, "increment"),
        ("bfs-htm-wins", None) => faster(doc, "mark-visited"),
        ("atomic-cost-per-update", _) => atomic_a(doc),
        _ => Here::unavailable("no measurement here for this figure"),
    }
}

fn claim_here(doc: &serde_json::Value, c: &str, op: &str) -> Here {
    match claim(doc, c, op) {
        Some(v) => Here::measured(v, "tested on the fits' 95% intervals"),
        None => Here::unavailable(format!("the sync document has no verdict on {c}")),
    }
}

fn best_htm(doc: &serde_json::Value, f: &Figure) -> Here {
    match sync_curve(doc, "mark-visited", "htm").and_then(|c| c["best_batch"].as_u64()) {
        Some(b) => Here::measured(
            format!("{b} updates per transaction"),
            format!("published about {}", f.value.unwrap_or(f64::NAN)),
        ),
        None => Here::unavailable("no HTM curve in the sync document"),
    }
}

/// Which of atomics and HTM is faster at their best batch, for `op`.
fn faster(doc: &serde_json::Value, op: &str) -> Here {
    let best = |sync: &str| -> Option<f64> {
        sync_curve(doc, op, sync)?["points"]
            .as_array()?
            .iter()
            .filter_map(|p| p["ns_per_update"].as_f64())
            .reduce(f64::min)
    };
    match (best("atomic"), best("htm")) {
        (Some(a), Some(h)) => Here::measured(
            format!("atomics {a:.1} ns per update, HTM {h:.1} ns (each at its best batch)"),
            if a < h {
                "atomics faster"
            } else {
                "HTM faster"
            },
        ),
        _ => Here::unavailable(format!("atomic or HTM curve missing for {op}")),
    }
}

fn atomic_a(doc: &serde_json::Value) -> Here {
    let Some(c) = sync_curve(doc, "mark-visited", "atomic") else {
        return Here::unavailable("no atomic curve in the sync document");
    };
    let ci = c["fit"]["a_ci95"]
        .as_array()
        .and_then(|v| {
            Some(format!(
                " (95% CI {:.1}-{:.1})",
                v.first()?.as_f64()?,
                v.get(1)?.as_f64()?
            ))
        })
        .unwrap_or_default();
    let rejected = c["fit"]["rejected"]
        .as_str()
        .map(|r| format!("; the line is rejected: {r}"))
        .unwrap_or_default();
    Here::measured(
        format!(
            "A = {:.1} ns{ci}, B = {:.1} ns",
            c["a_ns"].as_f64().unwrap_or(f64::NAN),
            c["b_ns"].as_f64().unwrap_or(f64::NAN)
        ),
        format!("the paper gives no number to compare{rejected}"),
    )
}

/// SMT and MPI: the doubling yields of EP, FT and IS, node scaling.
pub fn smt_mpi(f: &Figure, o: &Outputs) -> Here {
    let kernel = f.kernel.as_deref().unwrap_or("ep");
    let nodes = "one node: the study's figure is about 2 to 16 nodes and their interconnect";
    match f.id.as_str() {
        "is-ht-slow-network" | "is-ht-fast-network" | "ep-scaling-nodes" => Here::cannot(nodes),
        _ => match o.facts.no_smt() {
            Some(why) => Here::cannot(format!("{why} (a second rank per core here would share the core by time-slicing, not hyper-threading)")),
            None => doubling(o, kernel, f),
        },
    }
}

fn doubling(o: &Outputs, kernel: &str, f: &Figure) -> Here {
    let Some(set) = o.sets.get(kernel) else {
        return o.missing(kernel);
    };
    let y = &set.analysis.smt_yield;
    match y.ratio {
        Some(r) => {
            let ci = y
                .pairs
                .last()
                .and_then(|p| p.ci95)
                .map(|(a, b)| format!(" (95% CI {a:.2}-{b:.2})"))
                .unwrap_or_default();
            let cmp = match f.value {
                Some(v) => format!("published {v:.2}"),
                None => format!("published: {}", f.published),
            };
            Here::measured(
                format!("{r:.2}{ci}: two threads per core against one, same threads"),
                cmp,
            )
        }
        None => Here::unavailable(
            y.unavailable
                .clone()
                .unwrap_or_else(|| "no like-with-like pair".into()),
        ),
    }
}

/// Whether the OpenMP runtime's own placement matched the plan, over the runs of
/// the `omp-runtime` sweep.
pub fn runtime_verified(o: &Outputs) -> Here {
    if let Some(why) = o.missing.get("omp-runtime") {
        return Here::unavailable(why.clone());
    }
    let Some(set) = o.sets.get("omp-runtime") else {
        return Here::unavailable(
            "no C compiler with OpenMP here to build the probe (see the plan's notes)",
        );
    };
    let checks: Vec<(String, &scalescope_model::check::RuntimeCheck)> = set
        .records
        .iter()
        .filter(|r| !r.warmup)
        .filter_map(|r| {
            Some((
                format!("{} {}", r.point.placement, r.point.threads),
                r.placement_check.as_ref()?.runtime.as_ref()?,
            ))
        })
        .collect();
    if checks.is_empty() {
        return Here::unavailable("no run recorded a runtime-placement check");
    }
    let off: Vec<String> = checks
        .iter()
        .filter(|(_, c)| !c.as_planned)
        .map(|(p, c)| format!("{p}: {}", c.detail))
        .collect();
    let value = format!(
        "{} of {} runs as planned",
        checks.len() - off.len(),
        checks.len()
    );
    if off.is_empty() {
        Here::measured(
            value,
            "the runtime put every thread where the hardware-position plan says",
        )
    } else {
        Here::measured(
            value,
            format!(
                "mismatches: {}",
                off.into_iter().take(3).collect::<Vec<_>>().join("; ")
            ),
        )
    }
}
