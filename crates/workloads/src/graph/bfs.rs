//! Direction-optimizing breadth-first search (S. Beamer, K. Asanović, D. Patterson,
//! "Direction-Optimizing Breadth-First Search", SC 2012; as in the GAP benchmark
//! suite's bfs.cc): top-down steps claim children with compare-and-swap on the parent
//! array; when the frontier's edges exceed 1/alpha of the unexplored edges the search
//! switches to bottom-up steps (every unvisited vertex looks for a parent in the
//! frontier bitmap), and back when the frontier shrinks below n/beta vertices.
//! The result is a parent tree, verified against an independent serial BFS.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::Graph;
use crate::pool::{chunk, Pool};

const ALPHA: u64 = 15;
const BETA: u64 = 18;
/// Parent of an unvisited vertex.
pub const NONE: u32 = u32::MAX;

fn bitmap_set(bits: &[AtomicU64], v: u32) {
    bits[v as usize / 64].fetch_or(1 << (v % 64), Ordering::Relaxed);
}

fn bitmap_get(bits: &[AtomicU64], v: u32) -> bool {
    bits[v as usize / 64].load(Ordering::Relaxed) & (1 << (v % 64)) != 0
}

/// BFS from `source`; returns the parent of every vertex (`NONE` if unreached; the
/// source is its own parent).
pub fn bfs(g: &Graph, source: u32, pool: &Pool) -> Vec<u32> {
    let n = g.vertices();
    let t = pool.threads();
    let parent: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(NONE)).collect();
    parent[source as usize].store(source, Ordering::Relaxed);
    let mut frontier = vec![source];
    let mut edges_to_check = g.neighbors.len() as u64;
    let mut scout = g.degree(source) as u64;
    while !frontier.is_empty() {
        if scout > edges_to_check / ALPHA {
            // Bottom-up until the frontier is small again.
            let words = n.div_ceil(64);
            let mut front: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(0)).collect();
            for &v in &frontier {
                bitmap_set(&front, v);
            }
            let mut size = frontier.len() as u64;
            loop {
                let next: Vec<AtomicU64> = (0..words).map(|_| AtomicU64::new(0)).collect();
                let awake: u64 = pool
                    .broadcast(|w| {
                        let mut found = 0u64;
                        for v in chunk(n, t, w, 64) {
                            if parent[v].load(Ordering::Relaxed) != NONE {
                                continue;
                            }
                            if let Some(&p) = g
                                .neighbors(v as u32)
                                .iter()
                                .find(|&&u| bitmap_get(&front, u))
                            {
                                parent[v].store(p, Ordering::Relaxed);
                                bitmap_set(&next, v as u32);
                                found += 1;
                            }
                        }
                        found
                    })
                    .iter()
                    .sum();
                front = next;
                let grew = awake > size;
                size = awake;
                if size == 0 || (!grew && size < n as u64 / BETA) {
                    break;
                }
            }
            frontier = (0..n as u32).filter(|&v| bitmap_get(&front, v)).collect();
            scout = frontier.iter().map(|&v| g.degree(v) as u64).sum();
            continue;
        }
        edges_to_check = edges_to_check.saturating_sub(scout);
        let parts: Vec<(Vec<u32>, u64)> = pool.broadcast(|w| {
            let mut next = Vec::new();
            let mut sc = 0u64;
            for &u in &frontier[chunk(frontier.len(), t, w, 1)] {
                for &v in g.neighbors(u) {
                    if parent[v as usize].load(Ordering::Relaxed) == NONE
                        && parent[v as usize]
                            .compare_exchange(NONE, u, Ordering::Relaxed, Ordering::Relaxed)
                            .is_ok()
                    {
                        next.push(v);
                        sc += g.degree(v) as u64;
                    }
                }
            }
            (next, sc)
        });
        scout = parts.iter().map(|p| p.1).sum();
        frontier = parts.into_iter().flat_map(|p| p.0).collect();
    }
    parent.into_iter().map(AtomicU32::into_inner).collect()
}

/// Checks a parent tree against a serial BFS: the same vertices are reached, and
/// every reached vertex's parent is a neighbour one level closer to the source.
///
/// # Errors
/// A sentence naming the first vertex that is wrong.
pub fn verify(g: &Graph, source: u32, parent: &[u32]) -> Result<u64, String> {
    let n = g.vertices();
    let mut depth = vec![u32::MAX; n];
    depth[source as usize] = 0;
    let mut queue = VecDeque::from([source]);
    while let Some(u) = queue.pop_front() {
        for &v in g.neighbors(u) {
            if depth[v as usize] == u32::MAX {
                depth[v as usize] = depth[u as usize] + 1;
                queue.push_back(v);
            }
        }
    }
    let mut reached_edges = 0u64;
    for v in 0..n as u32 {
        let (d, p) = (depth[v as usize], parent[v as usize]);
        match (d == u32::MAX, p == NONE) {
            (true, true) => continue,
            (true, false) => return Err(format!("vertex {v} has parent {p} but is unreachable")),
            (false, true) => {
                return Err(format!(
                    "vertex {v} is reachable at depth {d} but has no parent"
                ))
            }
            (false, false) => {}
        }
        reached_edges += g.degree(v) as u64;
        if v == source {
            if p != source {
                return Err(format!("the source {source} has parent {p}"));
            }
            continue;
        }
        if depth[p as usize] != d - 1 || g.neighbors(v).binary_search(&p).is_err() {
            return Err(format!(
                "vertex {v} at depth {d} has parent {p}, which is not a neighbour at depth {}",
                d - 1
            ));
        }
    }
    Ok(reached_edges / 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::gen::{generate, Kind};
    use crate::graph::tests::pool;

    #[test]
    fn parent_trees_verify_on_generated_graphs() {
        for threads in [1, 2] {
            let p = pool(threads);
            for (kind, scale) in [(Kind::Kronecker, 12), (Kind::Uniform, 10)] {
                let (n, e) = generate(kind, scale, &p);
                let g = Graph::from_edges(n, &e, &p);
                let source = (0..n as u32).max_by_key(|&v| g.degree(v)).unwrap();
                let parent = bfs(&g, source, &p);
                let edges = verify(&g, source, &parent).unwrap();
                assert!(edges > 0);
            }
        }
    }

    #[test]
    fn a_wrong_parent_is_caught() {
        let p = pool(1);
        let g = Graph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], &p);
        let mut parent = bfs(&g, 0, &p);
        assert_eq!(parent, vec![0, 0, 1, 2]);
        parent[3] = 1;
        assert!(verify(&g, 0, &parent).unwrap_err().contains("vertex 3"));
    }
}
