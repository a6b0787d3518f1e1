//! What a graph argument names, `kron:SCALE`, `uniform:SCALE` or a file, read into
//! an edge list with its memory estimated first ([`crate::budget`]): from the scale
//! before generating, from the vertex and edge counts before the CSR is built.

use std::path::Path;

use crate::budget;
use crate::graph::gen::{generate, Kind};
use crate::graph::load::load;
use crate::pool::Pool;
use crate::WorkloadError;

/// Vertex count and edges of `source`; `force` skips the memory check.
///
/// # Errors
/// [`WorkloadError::BadParam`] for a bad scale, [`WorkloadError::Graph`] for a file
/// that cannot be read, [`WorkloadError::TooBig`] when the estimate exceeds the
/// available memory.
pub fn edges(
    source: &str,
    force: bool,
    pool: &Pool,
) -> Result<(usize, Vec<(u32, u32)>), WorkloadError> {
    let generated = |kind: Kind, scale: &str| {
        let s = scale
            .parse::<u32>()
            .ok()
            .filter(|s| (1..=30).contains(s))
            .ok_or_else(|| WorkloadError::BadParam {
                key: "graph".into(),
                detail: format!("`{source}`: the scale must be 1-30"),
            })?;
        let n = 1u64 << s;
        let what = format!("graph {source} ({n} vertices, {} edges)", 16 * n);
        budget::check(&what, budget::graph_bytes(n, 16 * n), force)?;
        Ok(generate(kind, s, pool))
    };
    if let Some(s) = source.strip_prefix("kron:") {
        return generated(Kind::Kronecker, s);
    }
    if let Some(s) = source.strip_prefix("uniform:") {
        return generated(Kind::Uniform, s);
    }
    let (n, edges) = load(Path::new(source))?;
    let what = format!("graph {source} ({n} vertices, {} edges)", edges.len());
    budget::check(
        &what,
        budget::graph_bytes(n as u64, edges.len() as u64),
        force,
    )?;
    Ok((n, edges))
}
