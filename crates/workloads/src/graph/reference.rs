//! The independent checks of the subgraph counts: brute force over every vertex
//! subset (small graphs), and a slower counter that shares no code with the fast
//! kernels (any size). The fixtures' published counts are checked here too.

#[cfg(test)]
use super::count::count;
use super::count::Pattern;
use super::Graph;

/// Brute force over all 4-vertex subsets (and 3-vertex ones for triangles): the
/// independent check for small graphs.
pub fn brute_force(g: &Graph, pattern: Pattern, induced: bool) -> u64 {
    let n = g.vertices() as u32;
    let adj = |a: u32, b: u32| g.neighbors(a).binary_search(&b).is_ok();
    if pattern == Pattern::Triangle {
        let mut c = 0;
        for a in 0..n {
            for b in a + 1..n {
                for d in b + 1..n {
                    c += u64::from(adj(a, b) && adj(b, d) && adj(a, d));
                }
            }
        }
        return c;
    }
    let mut total = 0u64;
    for a in 0..n {
        for b in a + 1..n {
            for c in b + 1..n {
                for d in c + 1..n {
                    let vs = [a, b, c, d];
                    let e: Vec<bool> = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
                        .iter()
                        .map(|&(i, j)| adj(vs[i], vs[j]))
                        .collect();
                    let m = e.iter().filter(|x| **x).count();
                    // The three ways to lay a 4-cycle on four vertices: 0-1-2-3, 0-1-3-2, 0-2-1-3.
                    let cycles = [
                        [e[0], e[3], e[5], e[2]],
                        [e[0], e[4], e[5], e[1]],
                        [e[1], e[3], e[4], e[2]],
                    ]
                    .iter()
                    .filter(|c| c.iter().all(|x| *x))
                    .count() as u64;
                    let (k4, ind_diamond) = (m == 6, m == 5);
                    total += match (pattern, induced) {
                        (Pattern::K4, _) => u64::from(k4),
                        (Pattern::C4, false) => cycles,
                        (Pattern::C4, true) => u64::from(m == 4 && cycles == 1),
                        (Pattern::Diamond, true) => u64::from(ind_diamond),
                        // A K4 holds 6 diamonds (one per chord), a 5-edge set one.
                        (Pattern::Diamond, false) => u64::from(ind_diamond) + 6 * u64::from(k4),
                        (Pattern::Triangle, _) => 0,
                    };
                }
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::gen::{generate, Kind};
    use crate::graph::tests::pool;

    #[test]
    fn generated_graphs_agree_with_brute_force() {
        for threads in [1, 2] {
            let p = pool(threads);
            for kind in [Kind::Kronecker, Kind::Uniform] {
                let (n, e) = generate(kind, 5, &p);
                let g = Graph::from_edges(n, &e, &p);
                for pattern in [
                    Pattern::Triangle,
                    Pattern::C4,
                    Pattern::Diamond,
                    Pattern::K4,
                ] {
                    for induced in [false, true] {
                        assert_eq!(
                            count(&g, pattern, induced, &p),
                            brute_force(&g, pattern, induced),
                            "{kind:?} {pattern:?} induced={induced}"
                        );
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod fixtures {
    use super::*;
    use crate::graph::load::load;
    use crate::graph::tests::pool;

    /// Every graph in tests/fixtures/graphs, every count counts.json gives
    /// (networkx, brute force and igraph agree on them).
    #[test]
    fn named_graphs_have_their_exact_counts() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/graphs");
        let counts: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("counts.json")).unwrap())
                .unwrap();
        let p = pool(2);
        let mut checked = 0;
        for (file, want) in counts["files"].as_object().unwrap() {
            let (n, e) = load(&dir.join(file)).unwrap();
            let g = Graph::from_edges(n, &e, &p);
            assert_eq!(
                g.edges() as u64,
                want["m"].as_u64().unwrap(),
                "{file} edges"
            );
            for (key, pattern, induced) in [
                ("tri", Pattern::Triangle, false),
                ("c4", Pattern::C4, false),
                ("diamond", Pattern::Diamond, false),
                ("k4", Pattern::K4, false),
                ("ind_c4", Pattern::C4, true),
                ("ind_diamond", Pattern::Diamond, true),
            ] {
                if let Some(w) = want.get(key).and_then(|v| v.as_u64()) {
                    assert_eq!(count(&g, pattern, induced, &p), w, "{file} {key}");
                    checked += 1;
                }
            }
        }
        assert!(checked >= 30, "only {checked} counts checked");
    }
}

/// An independent, slower count for any size: unoriented, membership by binary
/// search over the full neighbour lists, no ranking, shared with nothing above.
/// Triangles: each edge's common neighbours, /3. Diamonds: C(t(e), 2) per edge, t by
/// binary search. 4-cliques: per edge u<v, edges inside their common neighbourhood
/// with w<x, /6 (each 4-clique has 6 edges). 4-cycles: codegrees of all vertex pairs
/// from every wedge, C(codeg, 2) summed over ordered pairs / 4.
pub fn reference_count(g: &Graph, pattern: Pattern, induced: bool) -> u64 {
    let n = g.vertices() as u32;
    let adj = |a: u32, b: u32| g.neighbors(a).binary_search(&b).is_ok();
    let common = |u: u32, v: u32| -> Vec<u32> {
        g.neighbors(u)
            .iter()
            .copied()
            .filter(|&w| adj(v, w))
            .collect()
    };
    let edges = || {
        (0..n).flat_map(move |u| {
            g.neighbors(u)
                .iter()
                .copied()
                .filter(move |&v| u < v)
                .map(move |v| (u, v))
        })
    };
    let tri = || edges().map(|(u, v)| common(u, v).len() as u64).sum::<u64>() / 3;
    let dia = || {
        edges()
            .map(|(u, v)| common(u, v).len() as u64)
            .map(|t| t * t.saturating_sub(1) / 2)
            .sum::<u64>()
    };
    let k4 = || {
        edges()
            .map(|(u, v)| {
                let s = common(u, v);
                s.iter()
                    .map(|&w| s.iter().filter(|&&x| w < x && adj(w, x)).count() as u64)
                    .sum::<u64>()
            })
            .sum::<u64>()
            / 6
    };
    let c4 = || {
        let mut codeg = vec![0u64; n as usize];
        let mut total = 0u64;
        for a in 0..n {
            for &v in g.neighbors(a) {
                for &b in g.neighbors(v) {
                    if b != a {
                        codeg[b as usize] += 1;
                    }
                }
            }
            for c in codeg.iter_mut() {
                total += *c * c.saturating_sub(1) / 2;
                *c = 0;
            }
        }
        total / 4
    };
    match (pattern, induced) {
        (Pattern::Triangle, _) => tri(),
        (Pattern::K4, _) => k4(),
        (Pattern::Diamond, false) => dia(),
        (Pattern::Diamond, true) => dia() - 6 * k4(),
        (Pattern::C4, false) => c4(),
        (Pattern::C4, true) => {
            let (k, d) = (k4(), dia());
            c4() - (d - 6 * k) - 3 * k
        }
    }
}

#[cfg(test)]
mod reference_tests {
    use super::*;
    use crate::graph::gen::{generate, Kind};
    use crate::graph::tests::pool;

    #[test]
    fn the_reference_agrees_with_brute_force_and_the_fast_kernels() {
        let p = pool(2);
        for (kind, scale) in [
            (Kind::Kronecker, 5),
            (Kind::Uniform, 5),
            (Kind::Kronecker, 9),
        ] {
            let (n, e) = generate(kind, scale, &p);
            let g = Graph::from_edges(n, &e, &p);
            for pattern in [
                Pattern::Triangle,
                Pattern::C4,
                Pattern::Diamond,
                Pattern::K4,
            ] {
                for induced in [false, true] {
                    let r = reference_count(&g, pattern, induced);
                    if scale == 5 {
                        assert_eq!(r, brute_force(&g, pattern, induced), "{kind:?} {pattern:?}");
                    }
                    assert_eq!(
                        r,
                        count(&g, pattern, induced, &p),
                        "{kind:?} {scale} {pattern:?} induced={induced}"
                    );
                }
            }
        }
    }
}
