//! The NUMA structure a measured matrix reveals, and where the firmware's distance
//! table (SLIT) hides it.
//!
//! Matrix values are clustered into distance levels by natural breaks (a new level
//! starts where consecutive sorted costs jump by more than a relative gap). Noise
//! never becomes structure: two candidate levels stay apart only when the gap
//! between them exceeds the spread of the repeated measurements of their cells and
//! no repeat of the nearer level reaches the farther one. Without repeats the
//! separation cannot be checked, so nothing finer than SLIT is claimed. When the
//! measurement separates no more levels than SLIT has values, the reported levels
//! are SLIT's (one per value) and the document says the measurement could not
//! separate more. Only levels that survive the gate can make "SLIT hides" claims.
//! Where timings cannot show structure at all (under emulation, see
//! `scalescope_topo::Virtualization::timing_caveat`), no level is taken from them:
//! the levels are SLIT's and the note says why the measurement was not used.
//!
//! Level 0 is local; nodes whose mutual level is below the farthest level form
//! groups (for example two groups of four sockets joined by slower links).

use serde::{Deserialize, Serialize};

/// One distance level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    /// Range of the measured values in this level (in the matrix's own unit).
    pub min: f64,
    pub max: f64,
    pub cells: usize,
}

/// How the levels were checked against the spread of repeated measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseGate {
    /// Fewest repeats of any cell (0: fewer than two, which have no spread).
    pub repeats: usize,
    /// Largest spread (max - min) of one cell's repeats relative to its value.
    pub max_spread: Option<f64>,
    /// Levels the natural breaks proposed before the gate.
    pub candidate_levels: usize,
    /// Levels whose separation exceeds the spread of the repeats (the candidates
    /// when there were no repeats to check them with).
    pub separated_levels: usize,
    /// Where the reported levels come from: `measurement` or `slit`.
    pub levels_from: String,
    /// What the measurement could not decide, in words.
    pub note: Option<String>,
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
    /// The most hops between two nodes: the one-hop link graph's diameter where
    /// one was found ([`Self::links`]), else the farthest level (levels - 1).
    pub max_hops: usize,
    /// Distinct SLIT values among the same cells, when a SLIT is known.
    pub slit_levels: Option<usize>,
    /// Cells whose measured level disagrees with what SLIT implies.
    pub flagged: Vec<(usize, usize)>,
    pub disagreements: Vec<String>,
    pub noise: NoiseGate,
    /// One-hop links apart from their speed ([`crate::links`]); only where the
    /// measurement separated at least three levels beyond its noise.
    pub links: Option<crate::links::LinkGraph>,
}

/// The relative gap between sorted cell values that separates two distance levels,
/// unless a caller asks for another (what `mem matrix` uses).
pub const DEFAULT_REL_GAP: f64 = 0.15;

/// The input of [`infer`]: a square matrix, optionally every repeat of every cell.
#[derive(Debug, Clone, Copy)]
pub struct MatrixInput<'a> {
    /// The value reported per cell (best of the repeats, say).
    pub values: &'a [Vec<f64>],
    /// `samples[i][j]`: every repeated measurement of cell (i, j); empty if none.
    pub samples: &'a [Vec<Vec<f64>>],
    /// Bandwidth (higher is closer; the cost is 1/value) or latency (the value).
    pub higher_is_closer: bool,
    /// The firmware's matrix for the same nodes, if any.
    pub slit: Option<&'a [Vec<u32>]>,
    /// Smallest relative jump between sorted costs that may start a new level.
    pub rel_gap: f64,
    /// Why this machine's timings cannot show structure (emulation), if they cannot.
    pub timing_caveat: Option<&'a str>,
}

impl HopInference {
    /// The headline: the levels and the hop count (the link graph's diameter where
    /// there is one, so the two never disagree).
    pub fn headline(&self) -> String {
        let hops = match &self.links {
            Some(l) => format!("{} hop(s) at most over the one-hop links", l.max_hops),
            None => format!("at most {} hop(s)", self.max_hops),
        };
        format!("{} distance level(s), {hops}", self.levels.len())
    }

    /// The link graph and the groups in words (none without a link graph or
    /// groups); `ids` names the rows (NUMA node numbers), else rows are numbered.
    pub fn structure_lines(&self, ids: Option<&[u32]>) -> Vec<String> {
        let name = |i: usize| match ids.and_then(|v| v.get(i)) {
            Some(id) => id.to_string(),
            None => i.to_string(),
        };
        let set = |g: &[usize]| g.iter().map(|i| name(*i)).collect::<Vec<_>>().join(", ");
        let mut out = Vec::new();
        if let Some(l) = &self.links {
            let classes: Vec<String> = l
                .link_classes
                .iter()
                .map(|(a, b)| format!("{a:.1}-{b:.1}"))
                .collect();
            let links: Vec<String> = l
                .links
                .iter()
                .map(|(i, j, v)| format!("{}-{} ({v:.1})", name(*i), name(*j)))
                .collect();
            out.push(format!(
                "one-hop links: {} per node, speed classes {}: {}",
                l.k,
                classes.join(", "),
                links.join(", ")
            ));
            let groups: Vec<String> = l.groups.iter().map(|g| format!("{{{}}}", set(g))).collect();
            out.push(format!(
                "groups joined by the fastest links: {}",
                groups.join(" ")
            ));
        } else if self.groups.len() > 1 {
            let groups: Vec<String> = self
                .groups
                .iter()
                .map(|g| format!("{{{}}}", set(g)))
                .collect();
            out.push(format!(
                "groups nearer each other than the rest: {}",
                groups.join(" ")
            ));
        }
        out
    }
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

/// One cell in cost space: its reported cost and the range of its repeats.
#[derive(Debug, Clone, Copy)]
struct Cell {
    cost: f64,
    lo: f64,
    hi: f64,
}

fn cells(input: &MatrixInput) -> (Vec<Cell>, usize) {
    let cost = |v: f64| if input.higher_is_closer { 1.0 / v } else { v };
    let n = input.values.len();
    let mut repeats = usize::MAX;
    let mut out = Vec::with_capacity(n * n);
    for (i, row) in input.values.iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            let c = cost(v);
            let reps: Vec<f64> = input
                .samples
                .get(i)
                .and_then(|r| r.get(j))
                .map(|s| {
                    s.iter()
                        .map(|&x| cost(x))
                        .filter(|x| x.is_finite())
                        .collect()
                })
                .unwrap_or_default();
            repeats = repeats.min(reps.len());
            let lo = reps.iter().copied().fold(c, f64::min);
            let hi = reps.iter().copied().fold(c, f64::max);
            out.push(Cell { cost: c, lo, hi });
        }
    }
    // A single measurement has no spread: fewer than two repeats count as none.
    (
        out,
        if (2..usize::MAX).contains(&repeats) {
            repeats
        } else {
            0
        },
    )
}

fn level_of(cost: f64, levels: &[(f64, f64)]) -> usize {
    levels
        .iter()
        .position(|(lo, hi)| cost >= *lo && cost <= *hi)
        .unwrap_or(levels.len().saturating_sub(1))
}

/// Merges adjacent candidate levels whose separation does not exceed the spread
/// of the repeats of their cells (or where a repeat of the nearer level reaches
/// the farther one).
fn gate(candidates: &[(f64, f64)], cells: &[Cell]) -> Vec<(f64, f64)> {
    let members = |lvl: (f64, f64)| {
        cells
            .iter()
            .filter(move |c| c.cost >= lvl.0 && c.cost <= lvl.1)
    };
    let mut out: Vec<(f64, f64)> = Vec::new();
    for &next in candidates {
        let Some(prev) = out.last_mut() else {
            out.push(next);
            continue;
        };
        let both = members(*prev).chain(members(next));
        let spread = both.clone().map(|c| c.hi - c.lo).fold(0.0, f64::max);
        let prev_top = members(*prev).map(|c| c.hi).fold(f64::MIN, f64::max);
        let next_bottom = members(next).map(|c| c.lo).fold(f64::MAX, f64::min);
        let gap = next.0 - prev.1;
        if gap > spread && prev_top < next_bottom {
            out.push(next);
        } else {
            prev.1 = next.1;
        }
    }
    out
}

/// Infers levels, hops and groups from a square matrix, with the noise gate and
/// the SLIT fallback described in the module doc.
pub fn infer(input: &MatrixInput) -> HopInference {
    let n = input.values.len();
    let (cells, repeats) = cells(input);
    let costs: Vec<f64> = cells.iter().map(|c| c.cost).collect();
    let candidates = cluster(&costs, input.rel_gap);
    let separated = if repeats > 0 {
        gate(&candidates, &cells)
    } else {
        candidates.clone()
    };
    let slit = input
        .slit
        .filter(|s| n > 0 && s.len() == n && s.iter().all(|r| r.len() == n));
    let slit_values = slit.map(distinct);
    let from_slit = match (&slit_values, repeats) {
        (Some(_), _) if input.timing_caveat.is_some() => true,
        (Some(_), 0) => true,
        (Some(v), _) => separated.len() < v.len(),
        (None, _) => false,
    };
    let hops: Vec<Vec<usize>> = match (slit, &slit_values) {
        (Some(s), Some(v)) if from_slit => s
            .iter()
            .map(|row| row.iter().map(|d| v.partition_point(|x| x < d)).collect())
            .collect(),
        _ => (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| level_of(cells[i * n + j].cost, &separated))
                    .collect()
            })
            .collect(),
    };
    let count = hops.iter().flatten().copied().max().map_or(0, |m| m + 1);
    let levels = level_info(input.values, &hops, count);
    let max_hops = count.saturating_sub(1);
    let (flagged, disagreements) = match slit {
        Some(s) if !from_slit => compare_slit(&hops, s, count),
        _ => (Vec::new(), Vec::new()),
    };
    let noise = NoiseGate {
        repeats,
        max_spread: (repeats > 0).then(|| max_spread(&cells)),
        candidate_levels: candidates.len(),
        separated_levels: separated.len(),
        levels_from: if from_slit { "slit" } else { "measurement" }.into(),
        note: None,
    };
    let slit_count = slit_values.as_ref().map(Vec::len);
    let note = match (input.timing_caveat, slit_count) {
        (Some(why), Some(v)) => Some(format!(
            "unavailable here: {why}; reported one level per SLIT value ({v}); the measurement could not separate more"
        )),
        (Some(why), None) => Some(format!(
            "{why}: these levels are the emulator's, not the machine's"
        )),
        (None, _) => gate_note(&noise, slit_count),
    };
    let noise = NoiseGate { note, ..noise };
    let links = (!from_slit && separated.len() >= 3 && repeats > 0)
        .then(|| crate::links::link_graph(input.values, input.higher_is_closer, input.rel_gap))
        .flatten();
    HopInference {
        groups: groups(&hops, max_hops),
        // Hops are counted over the one-hop links where they were found: a slow
        // link is a farther level but one hop.
        max_hops: links.as_ref().map_or(max_hops, |l| l.max_hops),
        links,
        levels,
        hops,
        slit_levels: slit_values.map(|v| v.len()),
        flagged,
        disagreements,
        noise,
    }
}

fn distinct(slit: &[Vec<u32>]) -> Vec<u32> {
    let mut v: Vec<u32> = slit.iter().flatten().copied().collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn max_spread(cells: &[Cell]) -> f64 {
    cells
        .iter()
        .filter(|c| c.cost > 0.0)
        .map(|c| (c.hi - c.lo) / c.cost)
        .fold(0.0, f64::max)
}

/// Each level's range of reported values.
fn level_info(values: &[Vec<f64>], hops: &[Vec<usize>], count: usize) -> Vec<Level> {
    (0..count)
        .map(|k| {
            let vs: Vec<f64> = values
                .iter()
                .zip(hops)
                .flat_map(|(vr, hr)| vr.iter().zip(hr).filter(|(_, h)| **h == k))
                .map(|(v, _)| *v)
                .collect();
            Level {
                min: vs.iter().copied().fold(f64::INFINITY, f64::min),
                max: vs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                cells: vs.len(),
            }
        })
        .collect()
}

fn gate_note(g: &NoiseGate, slit_levels: Option<usize>) -> Option<String> {
    let spread = g
        .max_spread
        .map(|s| format!(" (largest spread of one cell's repeats: {:.1}%)", s * 100.0))
        .unwrap_or_default();
    match (g.repeats, slit_levels) {
        (0, Some(v)) => Some(format!(
            "no repeated measurements, so no separation can be checked against noise: reported one level per SLIT value ({v}); the measurement could not separate more"
        )),
        (0, None) => Some(
            "no repeated measurements and no SLIT: these levels are not checked against noise"
                .into(),
        ),
        (_, Some(v)) if g.levels_from == "slit" => Some(format!(
            "the measurement separates {} level(s) beyond the spread of its repeats{spread}; reported one level per SLIT value ({v}); the measurement could not separate more",
            g.separated_levels
        )),
        _ if g.candidate_levels > g.separated_levels => Some(format!(
            "{} candidate level(s) lay within the spread of repeated measurements{spread} and were merged",
            g.candidate_levels - g.separated_levels
        )),
        _ => None,
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
) -> (Vec<(usize, usize)>, Vec<String>) {
    let n = hops.len();
    let values = distinct(slit);
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
            format!("the firmware's distance table has {} levels, measurement shows {measured_levels}: SLIT hides part of the structure (each level separated beyond the spread of repeated measurements)", values.len()),
        );
    }
    (flagged, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic jitter in [-amp, +amp] from a cell and a repeat index.
    fn jitter(i: usize, j: usize, r: usize, amp: f64) -> f64 {
        let h = (i * 7919 + j * 104_729 + r * 1_299_709) % 1000;
        1.0 + amp * (h as f64 / 500.0 - 1.0)
    }

    /// `reps` repeats per cell around `level(i, j)` with relative jitter `amp`;
    /// the reported value is the best (highest) repeat.
    fn measured(
        n: usize,
        reps: usize,
        amp: f64,
        level: impl Fn(usize, usize) -> f64,
    ) -> (Vec<Vec<f64>>, Vec<Vec<Vec<f64>>>) {
        let samples: Vec<Vec<Vec<f64>>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        (0..reps)
                            .map(|r| level(i, j) * jitter(i, j, r, amp))
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let best = samples
            .iter()
            .map(|row| {
                row.iter()
                    .map(|s: &Vec<f64>| s.iter().copied().fold(f64::MIN, f64::max))
                    .collect()
            })
            .collect();
        (best, samples)
    }

    fn bw<'a>(
        values: &'a [Vec<f64>],
        samples: &'a [Vec<Vec<f64>>],
        slit: Option<&'a [Vec<u32>]>,
    ) -> MatrixInput<'a> {
        MatrixInput {
            values,
            samples,
            higher_is_closer: true,
            slit,
            rel_gap: 0.15,
            timing_caveat: None,
        }
    }

    fn slit(n: usize, remote: u32) -> Vec<Vec<u32>> {
        (0..n)
            .map(|i| (0..n).map(|j| if i == j { 10 } else { remote }).collect())
            .collect()
    }

    /// The reference study: 8 sockets in two groups of four; local, same group and
    /// other group give three bandwidth levels; SLIT says 10 local and 12 for all else.
    fn eight_socket_level(i: usize, j: usize) -> f64 {
        if i == j {
            20.0
        } else if i / 4 == j / 4 {
            11.0
        } else {
            5.5
        }
    }

    #[test]
    fn eight_socket_groups_hops_and_the_slit_that_hides_them() {
        let (v, s) = measured(8, 3, 0.02, eight_socket_level);
        let slit = slit(8, 12);
        let h = infer(&bw(&v, &s, Some(&slit)));
        assert_eq!(h.levels.len(), 3);
        assert_eq!(h.noise.levels_from, "measurement");
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
        // Every socket equally near its group: no one-hop structure beyond groups.
        assert!(h.links.is_none(), "{:?}", h.links);
    }

    /// Four sockets in a ring, two links fast and two slow: four levels (local,
    /// fast, slow, across), but every node is at most two hops from every other;
    /// the headline counts hops over the links, never levels.
    #[test]
    fn the_hop_headline_is_the_link_graph_diameter() {
        let ring = |i: usize, j: usize| -> f64 {
            let (a, b) = (i.min(j), i.max(j));
            match (a, b) {
                _ if a == b => 20.0,
                (0, 1) | (2, 3) => 11.0,
                (1, 2) | (0, 3) => 8.0,
                _ => 5.0,
            }
        };
        let (v, s) = measured(4, 3, 0.01, ring);
        let h = infer(&bw(&v, &s, None));
        assert_eq!(h.levels.len(), 4);
        let links = h
            .links
            .as_ref()
            .unwrap_or_else(|| panic!("no links: {h:?}"));
        assert_eq!((links.k, links.max_hops, h.max_hops), (2, 2, 2));
        let head = h.headline();
        assert!(head.contains("2 hop(s)") && !head.contains('3'), "{head}");
        let lines = h.structure_lines(Some(&[0, 1, 2, 3])).join("\n");
        assert!(
            lines.contains("0-1 (11.") && lines.contains("groups"),
            "{lines}"
        );
        assert!(!lines.contains('['), "no debug text: {lines}");
    }

    #[test]
    fn without_repeats_nothing_finer_than_slit_is_claimed() {
        let (v, _) = measured(8, 3, 0.02, eight_socket_level);
        let slit = slit(8, 12);
        let h = infer(&bw(&v, &[], Some(&slit)));
        assert_eq!((h.levels.len(), h.noise.levels_from.as_str()), (2, "slit"));
        assert!(h.disagreements.is_empty() && h.flagged.is_empty());
        assert!(h
            .noise
            .note
            .as_deref()
            .unwrap_or("")
            .contains("could not separate more"));
    }

    /// An emulated machine: every cell equal within +-40% noise (TCG timings). Natural
    /// breaks alone find spurious levels; the gate merges them and SLIT's levels are
    /// reported.
    #[test]
    fn emulated_cells_equal_within_noise_give_one_level_per_slit_value() {
        let mut spurious = 0;
        for (n, remote) in [(2, 21), (4, 21), (8, 12)] {
            let (_, s) = measured(n, 5, 0.4, |_, _| 10.0);
            // The reported value is one repeat, as a noisy single pass would be.
            let v: Vec<Vec<f64>> = s.iter().map(|r| r.iter().map(|c| c[0]).collect()).collect();
            let slit = slit(n, remote);
            let h = infer(&bw(&v, &s, Some(&slit)));
            assert_eq!(h.levels.len(), 2, "{n} nodes: {h:?}");
            assert_eq!(h.noise.levels_from, "slit");
            assert_eq!(h.noise.separated_levels, 1);
            assert!(h.disagreements.is_empty() && h.flagged.is_empty(), "{h:?}");
            assert!(h
                .noise
                .note
                .as_deref()
                .unwrap_or("")
                .contains("could not separate more"));
            assert_eq!(h.max_hops, 1);
            spurious += usize::from(h.noise.candidate_levels > 1);
        }
        assert!(spurious >= 1, "the noise should tempt natural breaks");
    }

    /// Under emulation even levels that pass the gate are not the machine's: the
    /// levels are SLIT's and the note says why, with nothing flagged or "hidden".
    #[test]
    fn emulated_timings_claim_nothing_beyond_slit() {
        // Three tight levels on an 8-node SLIT of 10/12: without the caveat, "SLIT hides".
        let (v, s) = measured(8, 3, 0.02, eight_socket_level);
        let slit = slit(8, 12);
        let input = bw(&v, &s, Some(&slit));
        assert_eq!(infer(&input).levels.len(), 3);
        let h = infer(&MatrixInput {
            timing_caveat: Some(
                "timings under emulation (QEMU (TCG emulation)) are the emulator's",
            ),
            ..input
        });
        assert_eq!((h.levels.len(), h.noise.levels_from.as_str()), (2, "slit"));
        assert!(h.disagreements.is_empty() && h.flagged.is_empty() && h.links.is_none());
        let note = h.noise.note.unwrap_or_default();
        assert!(
            note.starts_with("unavailable here: timings under emulation"),
            "{note}"
        );
        assert!(note.contains("one level per SLIT value (2)"), "{note}");
    }

    #[test]
    fn a_gap_smaller_than_the_repeat_spread_is_merged() {
        // Two candidate levels 20% apart, but each cell's repeats spread by 40%.
        let (v, s) = measured(2, 4, 0.2, |i, j| if (i + j) % 2 == 0 { 12.0 } else { 10.0 });
        let h = infer(&bw(&v, &s, None));
        assert_eq!(h.noise.separated_levels, 1, "{h:?}");
        assert_eq!(h.levels.len(), 1);
        // The same levels measured tightly stay apart.
        let (v, s) = measured(
            2,
            4,
            0.01,
            |i, j| if (i + j) % 2 == 0 { 12.0 } else { 10.0 },
        );
        let h = infer(&bw(&v, &s, None));
        assert_eq!(h.levels.len(), 2);
        assert!(h.noise.note.is_none());
    }

    #[test]
    fn latency_matrix_that_agrees_with_slit() {
        let lat = vec![vec![90.0, 140.0], vec![142.0, 91.0]];
        let reps = vec![
            vec![vec![90.0, 91.0], vec![140.0, 141.5]],
            vec![vec![142.0, 143.0], vec![91.0, 92.0]],
        ];
        let slit = slit(2, 21);
        let h = infer(&MatrixInput {
            values: &lat,
            samples: &reps,
            higher_is_closer: false,
            slit: Some(&slit),
            rel_gap: 0.15,
            timing_caveat: None,
        });
        assert_eq!((h.levels.len(), h.max_hops), (2, 1));
        assert_eq!(h.groups, vec![vec![0, 1]]);
        assert!(h.flagged.is_empty() && h.disagreements.is_empty());
    }

    #[test]
    fn one_node() {
        let h = infer(&bw(&[vec![12.0]], &[], None));
        assert_eq!((h.levels.len(), h.max_hops, h.groups.len()), (1, 0, 1));
    }
}
