//! The sampler's evidence of a run against the memory policy it ran under: a STREAM
//! bound to a remote node shows its pages on that node and the kernel's count of
//! remote allocations (numastat `other_node`: pages allocated on a node while the
//! allocating task ran on another), which a first-touch run from a local CPU does not.

use serde_json::Value;

use crate::check_mem::STREAM_PAGES;
use crate::console::{cpulist, kernel_cpus, Console};
use crate::report::Check;

/// The node of the first CPU the guest script may run on (where its bound STREAM
/// runs run).
fn home_node(console: &Console) -> Result<u32, String> {
    let allowed = console
        .get("self")?
        .text
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(cpulist)
        .unwrap_or_default();
    let first = *allowed.first().ok_or("no allowed CPU in `self`")?;
    kernel_cpus(console)?
        .iter()
        .find(|k| k.cpu == first)
        .and_then(|k| k.node)
        .ok_or(format!("the kernel lists no node for CPU {first}"))
}

/// (peak resident bytes on `node`, numastat other_node pages summed over nodes).
fn evidence_of(console: &Console, section: &str, node: u32) -> Result<(f64, f64), String> {
    let doc = console.json(section)?;
    let e = &doc["evidence"];
    if e["pages"]["state"] != "measured" || e["numastat"]["state"] != "measured" {
        return Err(format!(
            "{section}: evidence pages {}, numastat {}",
            e["pages"], e["numastat"]
        ));
    }
    let on = e["pages"]["value"]["peak_bytes_per_node"][node.to_string()]
        .as_f64()
        .unwrap_or(0.0);
    let other: f64 = e["numastat"]["value"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(_, c): (&String, &Value)| c["other_node"].as_f64().unwrap_or(0.0))
        .sum();
    Ok((on, other))
}

/// A bind to a node other than the home node against first touch from a home CPU.
pub fn remote_allocation(console: &Console) -> Check {
    let name = "sampler evidence: a run bound to a remote node shows its pages there and remote allocations (numastat other_node) that a first-touch local run does not";
    let result = (|| -> Result<String, String> {
        let home = home_node(console)?;
        let remote = console
            .sections
            .keys()
            .filter_map(|k| k.strip_prefix("mem.bind:")?.parse::<u32>().ok())
            .filter(|n| *n != home)
            .max()
            .ok_or("no STREAM run bound to a node other than the home node")?;
        let (bound_on, bound_other) = evidence_of(console, &format!("mem.bind:{remote}"), remote)?;
        let (_, local_other) = evidence_of(console, &format!("mem.first-touch:{home}"), home)?;
        let pages = STREAM_PAGES as f64;
        let arrays = pages * 4096.0;
        let summary = format!(
            "bind:{remote} from a node-{home} CPU: {bound_on:.0} bytes resident on node {remote}, other_node {bound_other:.0} pages; first touch on node {home}: other_node {local_other:.0} pages (run: {pages:.0} pages)"
        );
        // The sampler's numastat deltas start at its first reading, a moment after
        // the run began: most, not necessarily all, of the arrays' pages fall inside.
        if bound_on < 0.9 * arrays || bound_other < 0.5 * pages {
            return Err(format!("{summary}: the bound run's evidence is too small"));
        }
        if local_other >= 0.15 * pages {
            return Err(format!(
                "{summary}: the local run counted remote allocations"
            ));
        }
        Ok(summary)
    })();
    Check::new(name, result)
}
