//! The kernel's per-node allocation counters,
//! `ROOT/sys/devices/system/node/nodeN/numastat` (pages; system-wide).

use std::collections::BTreeMap;
use std::path::Path;

use scalescope_results::evidence::NumaCounters;

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
mod tests {
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
