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
