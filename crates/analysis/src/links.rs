//! Link speed apart from hop count: the sockets' one-hop links found from the
//! matrix's structure. Each node's k nearest others (by the symmetrised cost: the
//! mean of (i, j) and (j, i)) must be mutual (j among i's k nearest exactly when i is
//! among j's) and set apart from the (k+1)-th nearest by a clear gap; the largest
//! such k below n - 1 gives a graph whose edges are the one-hop links. Hop counts are
//! shortest paths in that graph; links are grouped by speed (natural breaks); groups
//! of nodes are the components joined by the fastest links only. A slow one-hop link
//! is then one hop at a lower speed, not "two hops".

use serde::{Deserialize, Serialize};

use crate::hops::cluster;

/// The one-hop link graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkGraph {
    /// Links per node.
    pub k: usize,
    /// `(i, j, value)` with i < j, value in the matrix's unit (mean of both ways).
    pub links: Vec<(usize, usize, f64)>,
    /// Shortest path in links; `hops[i][i]` = 0.
    pub hops: Vec<Vec<usize>>,
    pub max_hops: usize,
    /// Link speed classes, fastest first: (min, max) in the matrix's unit.
    pub link_classes: Vec<(f64, f64)>,
    /// Components joined by the fastest class of links.
    pub groups: Vec<Vec<usize>>,
}

fn sym_cost(m: &[Vec<f64>], higher_is_closer: bool, i: usize, j: usize) -> f64 {
    let v = (m[i][j] + m[j][i]) / 2.0;
    if higher_is_closer {
        1.0 / v
    } else {
        v
    }
}

/// Others of `i` nearest first.
fn ranked(m: &[Vec<f64>], hic: bool, i: usize) -> Vec<(usize, f64)> {
    let mut v: Vec<(usize, f64)> = (0..m.len())
        .filter(|&j| j != i)
        .map(|j| (j, sym_cost(m, hic, i, j)))
        .collect();
    v.sort_by(|a, b| a.1.total_cmp(&b.1));
    v
}

/// The largest k < n - 1 whose k-nearest relation is mutual and gapped by `rel_gap`.
fn choose_k(m: &[Vec<f64>], hic: bool, rel_gap: f64) -> Option<usize> {
    let n = m.len();
    let ranks: Vec<Vec<(usize, f64)>> = (0..n).map(|i| ranked(m, hic, i)).collect();
    (1..n.saturating_sub(1)).rev().find(|&k| {
        let gapped = ranks.iter().all(|r| r[k].1 > r[k - 1].1 * (1.0 + rel_gap));
        let near = |i: usize, j: usize| ranks[i][..k].iter().any(|(x, _)| *x == j);
        let mutual = (0..n).all(|i| (0..n).filter(|&j| j != i).all(|j| near(i, j) == near(j, i)));
        gapped && mutual
    })
}

fn bfs(n: usize, adj: &[Vec<usize>], from: usize) -> Vec<usize> {
    let mut d = vec![usize::MAX; n];
    d[from] = 0;
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(u) = queue.pop_front() {
        for &v in &adj[u] {
            if d[v] == usize::MAX {
                d[v] = d[u] + 1;
                queue.push_back(v);
            }
        }
    }
    d
}

fn components(n: usize, adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut seen = vec![false; n];
    let mut out = Vec::new();
    for s in 0..n {
        if seen[s] {
            continue;
        }
        let mut g: Vec<usize> = bfs(n, adj, s)
            .iter()
            .enumerate()
            .filter(|(_, d)| **d != usize::MAX)
            .map(|(i, _)| i)
            .collect();
        g.sort_unstable();
        for &i in &g {
            seen[i] = true;
        }
        out.push(g);
    }
    out
}

/// The link graph of a square matrix, or None when no k gives mutual, gapped
/// neighbours (every node one hop from every other, or no structure) or the links
/// found do not connect every node.
pub fn link_graph(m: &[Vec<f64>], higher_is_closer: bool, rel_gap: f64) -> Option<LinkGraph> {
    let n = m.len();
    if n < 3 || m.iter().any(|r| r.len() != n) {
        return None;
    }
    let k = choose_k(m, higher_is_closer, rel_gap)?;
    let mut links = Vec::new();
    let mut adj = vec![Vec::new(); n];
    for i in 0..n {
        for (j, _) in ranked(m, higher_is_closer, i).into_iter().take(k) {
            if i < j {
                links.push((i, j, (m[i][j] + m[j][i]) / 2.0));
            }
            adj[i].push(j);
        }
    }
    let hops: Vec<Vec<usize>> = (0..n).map(|i| bfs(n, &adj, i)).collect();
    // A graph in pieces says which nodes are near, not how the pieces connect.
    if hops.iter().flatten().any(|d| *d == usize::MAX) {
        return None;
    }
    let max_hops = hops.iter().flatten().copied().max().unwrap_or(0);
    let cost = |v: f64| if higher_is_closer { 1.0 / v } else { v };
    let costs: Vec<f64> = links.iter().map(|l| cost(l.2)).collect();
    let classes = cluster(&costs, rel_gap);
    let as_value = |(a, b): (f64, f64)| {
        let (x, y) = if higher_is_closer {
            (1.0 / b, 1.0 / a)
        } else {
            (a, b)
        };
        (x.min(y), x.max(y))
    };
    let fastest = classes.first().copied().unwrap_or((0.0, 0.0));
    let mut fast_adj = vec![Vec::new(); n];
    for l in links.iter().filter(|l| cost(l.2) <= fastest.1) {
        fast_adj[l.0].push(l.1);
        fast_adj[l.1].push(l.0);
    }
    Some(LinkGraph {
        k,
        hops,
        max_hops,
        link_classes: classes.into_iter().map(as_value).collect(),
        groups: components(n, &fast_adj),
        links,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 8-socket model: three one-hop links per socket, two to its group
    /// (fast) and one to the other group (slow); everything else two or more hops.
    #[test]
    fn slow_one_hop_links_are_one_hop_and_the_groups_are_found() {
        // Groups {0..3} and {4..7}; in-group ring 0-1-2-3-0; cross links i <-> i+4.
        let link = |i: usize, j: usize| -> Option<f64> {
            let (a, b) = (i.min(j), i.max(j));
            let ring = a / 4 == b / 4 && ((b - a) == 1 || (b - a) == 3);
            if ring {
                Some(11.0)
            } else if b == a + 4 {
                Some(8.0)
            } else {
                None
            }
        };
        let m: Vec<Vec<f64>> = (0..8)
            .map(|i| {
                (0..8)
                    .map(|j| {
                        if i == j {
                            20.0
                        } else {
                            link(i, j).unwrap_or(5.0) * (1.0 + 0.003 * ((i * 3 + j) % 5) as f64)
                        }
                    })
                    .collect()
            })
            .collect();
        let g = link_graph(&m, true, 0.15).unwrap_or_else(|| panic!("no graph"));
        assert_eq!(g.k, 3);
        assert_eq!(g.hops[0][4], 1, "slow link: one hop");
        assert_eq!(g.hops[0][1], 1);
        assert_eq!(g.hops[0][2], 2);
        assert_eq!(g.link_classes.len(), 2);
        assert_eq!(g.groups, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        assert_eq!(g.max_hops, 3);
    }

    #[test]
    fn fully_connected_has_no_link_graph() {
        let m: Vec<Vec<f64>> = (0..4)
            .map(|i| (0..4).map(|j| if i == j { 20.0 } else { 10.0 }).collect())
            .collect();
        assert!(link_graph(&m, true, 0.15).is_none());
    }
}
