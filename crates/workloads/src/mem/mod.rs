//! Memory-subsystem measurements beyond STREAM: the NUMA bandwidth and latency
//! matrices (threads on node i, memory bound to node j), the latency ladder across
//! working-set sizes, and core-to-core latency. Buffers are mapped, bound with
//! `mbind` before they are touched, and their placement read back from
//! `/proc/self/numa_maps`.

pub mod buffer;
pub mod c2c;
pub mod chase;
pub mod matrix;
pub mod stream;

use scalescope_topo::Topology;

use crate::WorkloadError;

/// Total last-level cache from the topology (L3, else L2), if known.
pub fn llc_bytes(topo: &Topology) -> Option<u64> {
    let llc = if topo.l3.is_empty() {
        &topo.l2
    } else {
        &topo.l3
    };
    let total: u64 = llc.iter().filter_map(|c| c.size_bytes).sum();
    (total > 0).then_some(total)
}

/// A buffer size: `text` parsed (`1GiB`, `512M`, `4096`), or by default `times` x
/// the last-level cache, so the buffer is out of every cache level.
///
/// # Errors
/// [`WorkloadError::BadParam`] naming `field`: a size that does not parse, or no
/// size given where the cache size is unknown.
pub fn size_or_llc(
    field: &str,
    text: Option<&str>,
    topo: &Topology,
    times: u64,
) -> Result<u64, WorkloadError> {
    let bad = |detail: String| WorkloadError::BadParam {
        key: field.into(),
        detail,
    };
    match text {
        Some(t) => crate::size::parse_bytes(t).map_err(bad),
        None => llc_bytes(topo).map(|b| b * times).ok_or_else(|| {
            bad("the last-level cache size is unknown here; give the size (e.g. 1GiB)".into())
        }),
    }
}

fn bad(field: &str, detail: String) -> WorkloadError {
    WorkloadError::BadParam {
        key: field.into(),
        detail,
    }
}

/// The CPU a one-thread measurement runs on: `cpu` if it is usable here, else the
/// first usable CPU.
///
/// # Errors
/// [`WorkloadError::BadParam`] naming `cpu` when it is not usable.
pub fn usable_cpu(topo: &Topology, cpu: Option<u32>) -> Result<u32, WorkloadError> {
    let usable = topo.usable_cpus();
    match cpu {
        Some(c) if usable.contains(c) => Ok(c),
        Some(c) => Err(bad(
            "cpu",
            format!("{c} is not a usable CPU here (usable: {usable})"),
        )),
        None => usable
            .first()
            .ok_or_else(|| bad("cpu", "no usable CPU".into())),
    }
}

/// The CPUs a list names (`0,2-3`), each usable here; every usable CPU by default.
///
/// # Errors
/// [`WorkloadError::BadParam`] naming `cpus`: a list that does not parse, or a CPU
/// that is not usable.
pub fn usable_cpus(topo: &Topology, list: Option<&str>) -> Result<Vec<u32>, WorkloadError> {
    let usable = topo.usable_cpus();
    let Some(text) = list else {
        return Ok(usable.iter().collect());
    };
    let set = scalescope_topo::CpuSet::parse_list(text)
        .map_err(|e| bad("cpus", format!("`{text}`: {e}")))?;
    let bad_cpu = set.iter().find(|c| !usable.contains(*c));
    match bad_cpu {
        Some(c) => Err(bad(
            "cpus",
            format!("CPU {c} is not usable here (usable: {usable})"),
        )),
        None => Ok(set.iter().collect()),
    }
}

/// The L2 and L3 sizes `cpu` sees, `(level, bytes)`, where known.
pub fn caches_of(topo: &Topology, cpu: u32) -> Vec<(u8, u64)> {
    let pu = topo.pu(cpu);
    let l2 = pu
        .and_then(|p| p.l2)
        .and_then(|i| topo.l2.get(i)?.size_bytes);
    let l3 = pu
        .and_then(|p| p.l3)
        .and_then(|i| topo.l3.get(i)?.size_bytes);
    [(2u8, l2), (3u8, l3)]
        .into_iter()
        .filter_map(|(l, s)| Some((l, s?)))
        .collect()
}
