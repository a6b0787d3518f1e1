//! Graphs for the graph-mining and traversal workloads: an undirected CSR with
//! 32-bit vertex ids (symmetrised, without self-loops or duplicate edges, neighbour
//! lists sorted), built in parallel from an edge list; loaders for SNAP edge lists,
//! plain `.el` and Matrix Market, and a checked binary cache (`.csr`); the Graph500 Kronecker and uniform generators;
//! exact subgraph counts.

pub mod bfs;
pub mod cache;
pub mod count;
pub mod gen;
pub mod load;
pub mod pagerank;
pub mod syncbench;
pub mod workload;

use crate::pool::{chunk, Pool};

/// An undirected simple graph in compressed sparse row form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    /// `offsets[v]..offsets[v + 1]` indexes `neighbors` for vertex v.
    pub offsets: Vec<u64>,
    /// Sorted neighbour lists, each edge stored in both directions.
    pub neighbors: Vec<u32>,
}

impl Graph {
    pub fn vertices(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Undirected edges.
    pub fn edges(&self) -> usize {
        self.neighbors.len() / 2
    }

    pub fn neighbors(&self, v: u32) -> &[u32] {
        &self.neighbors[self.offsets[v as usize] as usize..self.offsets[v as usize + 1] as usize]
    }

    pub fn degree(&self, v: u32) -> usize {
        (self.offsets[v as usize + 1] - self.offsets[v as usize]) as usize
    }

    /// Bytes of the CSR per undirected edge.
    pub fn bytes_per_edge(&self) -> f64 {
        (self.offsets.len() * 8 + self.neighbors.len() * 4) as f64 / self.edges().max(1) as f64
    }

    /// Builds the CSR from directed or undirected pairs: both directions are kept,
    /// self-loops and duplicates dropped. Degrees are counted and lists filled and
    /// sorted by the pool's workers.
    pub fn from_edges(n: usize, edges: &[(u32, u32)], pool: &Pool) -> Graph {
        let t = pool.threads();
        // Per-worker degree counts over their slice of the edge list.
        let counts: Vec<Vec<u32>> = pool.broadcast(|w| {
            let mut c = vec![0u32; n];
            for &(a, b) in &edges[chunk(edges.len(), t, w, 1)] {
                if a != b {
                    c[a as usize] += 1;
                    c[b as usize] += 1;
                }
            }
            c
        });
        let mut offsets = vec![0u64; n + 1];
        for v in 0..n {
            offsets[v + 1] = offsets[v] + counts.iter().map(|c| u64::from(c[v])).sum::<u64>();
        }
        let mut lists: Vec<Vec<u32>> = (0..n)
            .map(|v| Vec::with_capacity((offsets[v + 1] - offsets[v]) as usize))
            .collect();
        for &(a, b) in edges {
            if a != b {
                lists[a as usize].push(b);
                lists[b as usize].push(a);
            }
        }
        // Sort and deduplicate each list, vertices shared out among the workers.
        let lists = std::sync::Mutex::new(lists);
        let sorted: Vec<Vec<(usize, Vec<u32>)>> = pool.broadcast(|w| {
            let mut out = Vec::new();
            for v in chunk(n, t, w, 1) {
                let mut l = std::mem::take(&mut lists.lock().unwrap_or_else(|p| p.into_inner())[v]);
                l.sort_unstable();
                l.dedup();
                out.push((v, l));
            }
            out
        });
        let mut final_lists: Vec<Vec<u32>> = vec![Vec::new(); n];
        for part in sorted {
            for (v, l) in part {
                final_lists[v] = l;
            }
        }
        let mut offsets = vec![0u64; n + 1];
        for v in 0..n {
            offsets[v + 1] = offsets[v] + final_lists[v].len() as u64;
        }
        Graph {
            offsets,
            neighbors: final_lists.concat(),
        }
    }

    /// The same graph with vertices renumbered by decreasing degree (hubs first),
    /// which shortens the lists the counting kernels intersect.
    pub fn relabel_by_degree(&self, pool: &Pool) -> Graph {
        let n = self.vertices();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&v| (std::cmp::Reverse(self.degree(v)), v));
        let mut new_id = vec![0u32; n];
        for (i, &v) in order.iter().enumerate() {
            new_id[v as usize] = i as u32;
        }
        let edges: Vec<(u32, u32)> = (0..n as u32)
            .flat_map(|v| {
                self.neighbors(v)
                    .iter()
                    .filter(move |&&w| v < w)
                    .map(move |&w| (v, w))
            })
            .map(|(a, b)| (new_id[a as usize], new_id[b as usize]))
            .collect();
        Graph::from_edges(n, &edges, pool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) use crate::pool::test_pool as pool;

    #[test]
    fn csr_is_symmetric_simple_and_sorted() {
        let g = Graph::from_edges(
            4,
            &[(0, 1), (1, 0), (2, 2), (3, 1), (0, 1), (2, 0)],
            &pool(2),
        );
        assert_eq!(g.edges(), 3);
        assert_eq!(g.neighbors(0), &[1, 2]);
        assert_eq!(g.neighbors(1), &[0, 3]);
        assert_eq!(g.neighbors(2), &[0]);
        let r = g.relabel_by_degree(&pool(1));
        assert_eq!(r.edges(), 3);
        assert_eq!(r.degree(0), 2);
    }
}
