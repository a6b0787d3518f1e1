//! Memory a workload will need, estimated before anything is allocated, against
//! what the kernel says is available (`MemAvailable` in `/proc/meminfo`). A tiny
//! file can declare a huge graph (a Matrix Market header of 2^64 rows, an edge list
//! naming vertex 4294967294) and a scale factor can ask for terabytes; those end in
//! an error with the estimate, not in the OOM killer. `force` (a flag of the
//! command, or a parameter of a sweep) skips the check for a user who means it.

use crate::WorkloadError;

/// Bytes per vertex and per edge of a graph run: the edge list (8 B an edge), the
/// CSR in both directions (8 B an edge) with its build buffers (8 B an edge), the
/// offsets and the kernels' per-vertex arrays (PageRank's three f64 arrays, BFS's
/// parents and frontiers): an upper estimate, not a measurement.
const GRAPH_BYTES_PER_EDGE: u64 = 24;
const GRAPH_BYTES_PER_VERTEX: u64 = 40;

/// lineitem rows per unit of scale factor (TPC-H: 6,001,215 at SF 1), and bytes
/// per row held (the six scanned columns, 12 B, plus generation buffers).
const TPCH_ROWS_PER_SF: f64 = 6.0e6;
const TPCH_BYTES_PER_ROW: f64 = 24.0;

/// Estimated bytes for a graph of `vertices` and `edges` (saturating).
pub fn graph_bytes(vertices: u64, edges: u64) -> u64 {
    vertices
        .saturating_mul(GRAPH_BYTES_PER_VERTEX)
        .saturating_add(edges.saturating_mul(GRAPH_BYTES_PER_EDGE))
}

/// Estimated bytes for TPC-H's lineitem at scale factor `sf`.
pub fn tpch_bytes(sf: f64) -> u64 {
    let b = sf * TPCH_ROWS_PER_SF * TPCH_BYTES_PER_ROW;
    if b.is_finite() && b < u64::MAX as f64 {
        b as u64
    } else {
        u64::MAX
    }
}

/// Estimated bytes for the sync study: the table's 8-byte cells, a lock per stripe
/// (8 bytes), and every worker's list of the slots it updates (4 bytes each).
pub fn sync_bytes(table: u64, stripes: u64, updates: u64, threads: u64) -> u64 {
    table
        .saturating_mul(8)
        .saturating_add(stripes.saturating_mul(8))
        .saturating_add(updates.saturating_mul(4).saturating_mul(threads))
}

/// `MemAvailable` of `/proc/meminfo`, in bytes; `None` where the kernel does not say.
pub fn mem_available() -> Option<u64> {
    parse_mem_available(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

fn parse_mem_available(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|l| {
        let rest = l.strip_prefix("MemAvailable:")?;
        let kib: u64 = rest.split_whitespace().next()?.parse().ok()?;
        kib.checked_mul(1024)
    })
}

/// Refuses `what` when its estimate `need` exceeds the available memory, unless
/// `force`. Where the kernel does not say what is available, nothing is refused.
///
/// # Errors
/// [`WorkloadError::TooBig`] with the estimate and what is available.
pub fn check(what: &str, need: u64, force: bool) -> Result<(), WorkloadError> {
    check_against(what, need, force, mem_available())
}

fn check_against(
    what: &str,
    need: u64,
    force: bool,
    available: Option<u64>,
) -> Result<(), WorkloadError> {
    match available {
        Some(available) if need > available && !force => Err(WorkloadError::TooBig {
            what: what.to_string(),
            need: gib(need),
            available: gib(available),
        }),
        _ => Ok(()),
    }
}

fn gib(bytes: u64) -> String {
    if bytes == u64::MAX {
        "more than 16 EiB".into()
    } else {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_saturate_and_refusals_name_both_sides() {
        assert_eq!(graph_bytes(u64::MAX, 1), u64::MAX);
        assert_eq!(tpch_bytes(f64::INFINITY), u64::MAX);
        // kron:30: 2^30 vertices, 2^34 edges: about 440 GiB.
        let kron30 = graph_bytes(1 << 30, 1 << 34);
        let err = check_against("kron:30", kron30, false, Some(20 << 30))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("kron:30") && err.contains("424.0 GiB"),
            "{err}"
        );
        assert!(
            err.contains("20.0 GiB") && err.contains("force it"),
            "{err}"
        );
        assert!(check_against("kron:30", kron30, true, Some(20 << 30)).is_ok());
        assert!(check_against("kron:30", kron30, false, None).is_ok());
        assert!(check_against(
            "kron:16",
            graph_bytes(1 << 16, 1 << 20),
            false,
            Some(1 << 30)
        )
        .is_ok());
        assert_eq!(
            parse_mem_available("MemTotal: 10 kB\nMemAvailable:    2048 kB\n"),
            Some(2 << 20)
        );
    }
}
