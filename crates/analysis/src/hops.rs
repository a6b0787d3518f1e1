//! The NUMA structure a measured matrix reveals, and where the firmware's distance
//! table (SLIT) hides it. Matrix values are clustered into distance levels by
//! natural breaks (a new level starts where consecutive sorted costs jump by more
//! than a relative gap); level 0 is local, level k is k hops. Nodes whose mutual
//! level is below the farthest level form groups (for example two groups of four
//! sockets joined by slower links). The same clustering on the SLIT shows how many
//! levels the firmware admits; cells that SLIT calls equal but measurement does not
//! are flagged.

use serde::{Deserialize, Serialize};

/// One distance level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    /// Range of the measured values in this level (in the matrix's own unit).
    pub min: f64,
    pub max: f64,
    pub cells: usize,
}

/// What the matrix says about the machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HopInference {
    /// Nearest first.
    pub levels: Vec<Level>,
    /// `hops[i][j]`: the level of cell (i, j).
    pub hops: Vec<Vec<usize>>,
    /// Groups of nodes (row indexes) closer to each other than to the rest.
    pub groups: Vec<Vec<usize>>,
    pub max_hops: usize,
    /// Distinct SLIT values among the same cells, when a SLIT is known.
    pub slit_levels: Option<usize>,
    /// Cells whose measured level disagrees with what SLIT implies.
    pub flagged: Vec<(usize, usize)>,
    pub disagreements: Vec<String>,
}

/// Natural breaks: sorted costs split where the next is more than `rel_gap` above
/// the previous one. Returns each level's (min, max) cost.
pub fn cluster(costs: &[f64], rel_gap: f64) -> Vec<(f64, f64)> {
    let mut v: Vec<f64> = costs.iter().copied().filter(|c| c.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let mut out: Vec<(f64, f64)> = Vec::new();
    for c in v {
        match out.last_mut() {
            Some(level) if c <= level.1 * (1.0 + rel_gap) => level.1 = c,
            _ => out.push((c, c)),
        }
    }
    out
}

fn level_of(cost: f64, levels: &[(f64, f64)]) -> usize {
    levels
        .iter()
        .position(|(lo, hi)| cost >= *lo && cost <= *hi)
        .unwrap_or(levels.len().saturating_sub(1))
}

/// Infers levels, hops and groups from a square matrix. With `higher_is_closer`
/// (bandwidth) the cost is 1/value; otherwise (latency) the value itself. `slit`
/// is the firmware's matrix for the same nodes, if any.
pub fn infer(
    matrix: &[Vec<f64>],
    higher_is_closer: bool,
    slit: Option<&[Vec<u32>]>,
    rel_gap: f64,
) -> HopInference {
    let n = matrix.len();
    let cost = |v: f64| if higher_is_closer { 1.0 / v } else { v };
    let costs: Vec<f64> = matrix.iter().flatten().map(|&v| cost(v)).collect();
    let levels = cluster(&costs, rel_gap);
    let hops: Vec<Vec<usize>> = matrix
        .iter()
        .map(|row| row.iter().map(|&v| level_of(cost(v), &levels)).collect())
        .collect();
    let max_hops = hops.iter().flatten().copied().max().unwrap_or(0);
    let groups = groups(&hops, max_hops);
    let as_value = |c: f64| if higher_is_closer { 1.0 / c } else { c };
    let level_info: Vec<Level> = levels
        .iter()
        .enumerate()
        .map(|(k, (lo, hi))| {
            let (a, b) = (as_value(*lo), as_value(*hi));
            Level {
                min: a.min(b),
                max: a.max(b),
                cells: hops.iter().flatten().filter(|h| **h == k).count(),
            }
        })
        .collect();
    let (slit_levels, flagged, disagreements) =
        match slit.filter(|s| s.len() == n && s.iter().all(|r| r.len() == n)) {
            Some(s) => compare_slit(&hops, s, levels.len()),
            None => (None, Vec::new(), Vec::new()),
        };
    HopInference {
        levels: level_info,
        hops,
        groups,
        max_hops,
        slit_levels,
        flagged,
        disagreements,
    }
}

/// Connected components of "nearer than the farthest level"; with only local and
/// remote, one group.
fn groups(hops: &[Vec<usize>], max_hops: usize) -> Vec<Vec<usize>> {
    let n = hops.len();
    let near =
        |i: usize, j: usize| max_hops < 2 || (hops[i][j] < max_hops && hops[j][i] < max_hops);
    let mut seen = vec![false; n];
    let mut out = Vec::new();
    for start in 0..n {
        if seen[start] {
            continue;
        }
        seen[start] = true;
        let (mut group, mut stack) = (Vec::new(), vec![start]);
        while let Some(i) = stack.pop() {
            group.push(i);
            for (j, s) in seen.iter_mut().enumerate() {
                if !*s && near(i, j) {
                    *s = true;
                    stack.push(j);
                }
            }
        }
        group.sort_unstable();
        out.push(group);
    }
    out
}

fn compare_slit(
    hops: &[Vec<usize>],
    slit: &[Vec<u32>],
    measured_levels: usize,
) -> (Option<usize>, Vec<(usize, usize)>, Vec<String>) {
    let n = hops.len();
    let mut values: Vec<u32> = slit.iter().flatten().copied().collect();
    values.sort_unstable();
    values.dedup();
    let mut flagged = Vec::new();
    let mut notes = Vec::new();
    // Within each SLIT value, the most common measured level is what SLIT "means";
    // cells at another level are where the table misleads.
    for v in &values {
        let cells: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .filter(|&(i, j)| slit[i][j] == *v)
            .collect();
        let mut counts = vec![0usize; measured_levels.max(1)];
        for &(i, j) in &cells {
            counts[hops[i][j]] += 1;
        }
        let common = counts
            .iter()
            .enumerate()
            .max_by_key(|(_, c)| **c)
            .map(|(l, _)| l)
            .unwrap_or(0);
        let odd: Vec<(usize, usize)> = cells
            .iter()
            .copied()
            .filter(|&(i, j)| hops[i][j] != common)
            .collect();
        if !odd.is_empty() {
            notes.push(format!(
                "SLIT gives {} cells the distance {v}, but measurement splits them into {} levels ({} cells differ from the rest)",
                cells.len(),
                counts.iter().filter(|c| **c > 0).count(),
                odd.len()
            ));
            flagged.extend(odd);
        }
    }
    if measured_levels > values.len() {
        notes.insert(
            0,
            format!("the firmware's distance table has {} levels, measurement shows {measured_levels}: SLIT hides part of the structure", values.len()),
        );
    }
    (Some(values.len()), flagged, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference study: 8 sockets in two groups of four; local, same group and
    /// other group give three bandwidth levels; SLIT says 10 local and 12 for all else.
    fn eight_socket() -> (Vec<Vec<f64>>, Vec<Vec<u32>>) {
        let level = |i: usize, j: usize| {
            if i == j {
                20.0
            } else if i / 4 == j / 4 {
                11.0
            } else {
                5.5
            }
        };
        let jitter = |i: usize, j: usize| 1.0 + 0.02 * (((i * 7 + j * 3) % 5) as f64 - 2.0) / 2.0;
        let bw: Vec<Vec<f64>> = (0..8)
            .map(|i| (0..8).map(|j| jitter(i, j) * level(i, j)).collect())
            .collect();
        let slit: Vec<Vec<u32>> = (0..8)
            .map(|i| (0..8).map(|j| if i == j { 10 } else { 12 }).collect())
            .collect();
        (bw, slit)
    }

    #[test]
    fn eight_socket_groups_hops_and_the_slit_that_hides_them() {
        let (bw, slit) = eight_socket();
        let h = infer(&bw, true, Some(&slit), 0.15);
        assert_eq!(h.levels.len(), 3);
        assert_eq!(h.max_hops, 2);
        assert_eq!(h.groups, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        assert_eq!(h.hops[0][5], 2);
        assert_eq!(h.hops[1][2], 1);
        assert_eq!(h.slit_levels, Some(2));
        assert!(
            h.disagreements[0].contains("has 2 levels, measurement shows 3"),
            "{:?}",
            h.disagreements
        );
        // SLIT's "12" cells split 24 (same group) / 32 (other group): the minority is flagged.
        assert_eq!(h.flagged.len(), 24);
    }

    #[test]
    fn latency_matrix_that_agrees_with_slit() {
        let lat = vec![vec![90.0, 140.0], vec![142.0, 91.0]];
        let slit = vec![vec![10, 21], vec![21, 10]];
        let h = infer(&lat, false, Some(&slit), 0.15);
        assert_eq!((h.levels.len(), h.max_hops), (2, 1));
        assert_eq!(h.groups, vec![vec![0, 1]]);
        assert!(h.flagged.is_empty() && h.disagreements.is_empty());
    }

    #[test]
    fn one_node() {
        let h = infer(&[vec![12.0]], true, None, 0.15);
        assert_eq!((h.levels.len(), h.max_hops, h.groups.len()), (1, 0, 1));
    }
}
