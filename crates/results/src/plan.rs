//! What a sweep will run: thread counts x placements x memory policies, each point
//! repeated, with warm-ups; parsed from the command line's lists.

use serde::{Deserialize, Serialize};

use scalescope_place::{Granularity, MemPolicy, PlaceRequest, Restriction, Strategy};

use crate::ResultsError;

/// One point of the sweep.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Point {
    /// Threads; for a launched point, its total ranks.
    pub threads: usize,
    pub placement: Strategy,
    pub mem: MemPolicy,
    /// The nodes a launched point's ranks span, where the sweep has a node axis
    /// (`--nodes 1,2,4`): its `threads / nodes` ranks run on each of the first
    /// `nodes` hosts. Absent for every other point (and in files before schema 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<usize>,
}

impl std::fmt::Display for Point {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.nodes {
            Some(n) => write!(
                f,
                "{} ranks on {n} node{}, {}, {}",
                self.threads,
                if n == 1 { "" } else { "s" },
                self.placement,
                self.mem
            ),
            None => write!(
                f,
                "{} threads, {}, {}",
                self.threads, self.placement, self.mem
            ),
        }
    }
}

/// One execution: a point's repetition (or warm-up).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    pub point: Point,
    pub rep: usize,
    pub warmup: bool,
}

/// The whole sweep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub threads: Vec<usize>,
    pub placements: Vec<Strategy>,
    pub mems: Vec<MemPolicy>,
    pub reps: usize,
    pub warmup: usize,
    /// How every placement is restricted and bound (absent: the whole machine,
    /// thread granularity, no oversubscription).
    #[serde(default, skip_serializing_if = "PlaceOptions::is_default")]
    pub options: PlaceOptions,
    /// The order the runs are executed in (absent in files written before it was
    /// recorded: grouped).
    #[serde(default)]
    pub order: RunOrder,
    /// The MPI launcher every run goes through (absent: runs started directly).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<crate::launch::LaunchPlan>,
}

/// The order of a sweep's runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum RunOrder {
    /// Each point's warm-ups and repetitions together, placement by placement, thread
    /// counts ascending: drift over the sweep can look like a difference between
    /// placements or thread counts.
    #[default]
    Grouped,
    /// Rounds: round r runs repetition r of every point, in an order drawn from
    /// `seed` (a point's warm-ups come right before its first repetition), so slow
    /// drift spreads over every point instead of biasing the late ones.
    Shuffled { seed: u64 },
}

/// SplitMix64, for the shuffled order: small, seeded, the same on every machine.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `v` in the order of a Fisher-Yates shuffle drawn from `seed`.
fn shuffled<T>(mut v: Vec<T>, seed: u64) -> Vec<T> {
    let mut state = seed;
    for i in (1..v.len()).rev() {
        let j = (splitmix(&mut state) % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
    v
}

/// The placement options of `place` that apply to every strategy of a sweep.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PlaceOptions {
    #[serde(default)]
    pub restriction: Restriction,
    #[serde(default)]
    pub granularity: Granularity,
    #[serde(default)]
    pub oversubscribe: bool,
}

impl PlaceOptions {
    pub fn is_default(&self) -> bool {
        *self == PlaceOptions::default()
    }

    /// The request for one point under these options.
    pub fn request(&self, strategy: Strategy, threads: usize) -> PlaceRequest {
        let mut r = PlaceRequest::new(strategy, threads);
        r.restriction = self.restriction.clone();
        r.granularity = self.granularity;
        r.oversubscribe = self.oversubscribe;
        r
    }
}

impl Plan {
    /// Every point: placement, then memory policy, then threads ascending (the
    /// grouped execution order; [`Plan::jobs`] gives the plan's own).
    ///
    /// A launched plan with a node axis has a point per node count and
    /// ranks-per-node value instead: `threads` is their product.
    pub fn points(&self) -> Vec<Point> {
        let axis = self.launch.as_ref().and_then(|l| l.node_axis());
        let shapes: Vec<(usize, Option<usize>)> = match axis {
            Some(pairs) => pairs.into_iter().map(|(n, r)| (n * r, Some(n))).collect(),
            None => self.threads.iter().map(|&t| (t, None)).collect(),
        };
        let mut v = Vec::new();
        for placement in &self.placements {
            for mem in &self.mems {
                for &(threads, nodes) in &shapes {
                    v.push(Point {
                        threads,
                        placement: placement.clone(),
                        mem: mem.clone(),
                        nodes,
                    });
                }
            }
        }
        v
    }

    /// Every execution in the plan's order (see [`RunOrder`]).
    pub fn jobs(&self) -> Vec<Job> {
        match self.order {
            RunOrder::Grouped => self.grouped_jobs(),
            RunOrder::Shuffled { seed } => self.shuffled_jobs(seed),
        }
    }

    fn warmups(&self, p: &Point) -> impl Iterator<Item = Job> + '_ {
        let p = p.clone();
        (0..self.warmup).map(move |rep| Job {
            point: p.clone(),
            rep,
            warmup: true,
        })
    }

    /// Each point's warm-ups, then its repetitions, point after point.
    fn grouped_jobs(&self) -> Vec<Job> {
        let mut out = Vec::new();
        for p in self.points() {
            out.extend(self.warmups(&p));
            out.extend((0..self.reps).map(|rep| Job {
                point: p.clone(),
                rep,
                warmup: false,
            }));
        }
        out
    }

    /// Round r: repetition r of every point in an order drawn from the seed and r.
    fn shuffled_jobs(&self, seed: u64) -> Vec<Job> {
        let mut out = Vec::new();
        for rep in 0..self.reps {
            let round_seed = seed ^ (rep as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
            for p in shuffled(self.points(), round_seed) {
                if rep == 0 {
                    out.extend(self.warmups(&p));
                }
                out.push(Job {
                    point: p,
                    rep,
                    warmup: false,
                });
            }
        }
        out
    }
}

/// Parses a thread list: `1,2,4`, `1..16`, `1..16:2`, `pow2`, `all`, `boundaries`,
/// or a mix (`1,2..8:2`). `max` is the number of usable PUs (for `pow2` and `all`).
/// `boundaries` is 1, 2 and `max` here; [`parse_threads_with`] adds the machine's
/// boundaries for the chosen placements.
///
/// # Errors
/// [`ResultsError::BadList`] naming the bad item.
pub fn parse_threads(text: &str, max: usize) -> Result<Vec<usize>, ResultsError> {
    parse_threads_with(text, max, &[])
}

/// [`parse_threads`] with the thread counts `boundaries` stands for (a point on each
/// side of every boundary of the placements, computed by the caller from the
/// topology).
///
/// # Errors
/// [`ResultsError::BadList`] naming the bad item.
pub fn parse_threads_with(
    text: &str,
    max: usize,
    boundaries: &[usize],
) -> Result<Vec<usize>, ResultsError> {
    let bad = |detail: String| ResultsError::BadList {
        field: "threads",
        value: text.to_string(),
        detail,
    };
    // A set, not a list: values are at most 100000, so repeated items and ranges
    // (`1..100000,1..100000,...`) cannot grow it past that.
    let mut out: std::collections::BTreeSet<usize> = std::collections::BTreeSet::new();
    for item in text.split(',').map(str::trim) {
        let num = |s: &str| -> Result<usize, ResultsError> {
            s.parse::<usize>()
                .ok()
                .filter(|v| (1..=100_000).contains(v))
                .ok_or_else(|| bad(format!("`{s}` is not a thread count between 1 and 100000")))
        };
        match item {
            "all" => out.extend(1..=max),
            "boundaries" => {
                out.extend([1, 2.min(max), max]);
                out.extend(boundaries.iter().copied().filter(|t| (1..=max).contains(t)));
            }
            "pow2" => {
                let mut t = 1;
                while t <= max {
                    out.insert(t);
                    t *= 2;
                }
                if max > 0 {
                    out.insert(max);
                }
            }
            _ => match item.split_once("..").or_else(|| dash_range(item)) {
                Some((a, rest)) => {
                    let (b, step) = match rest.split_once(':') {
                        Some((b, s)) => (b, num(s)?),
                        None => (rest, 1),
                    };
                    let (a, b) = (num(a)?, num(b)?);
                    if b < a {
                        return Err(bad(format!("range `{item}` runs backwards")));
                    }
                    out.extend((a..=b).step_by(step));
                }
                None => {
                    out.insert(num(item)?);
                }
            },
        }
    }
    if out.is_empty() {
        return Err(bad("no thread count".into()));
    }
    Ok(out.into_iter().collect())
}

/// `4-16` (how likwid, numactl and taskset write a range) split like `4..16`.
fn dash_range(item: &str) -> Option<(&str, &str)> {
    let (a, b) = item.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    (digits(a) && digits(b.split(':').next().unwrap_or(""))).then_some((a, b))
}

/// A thread list as written (`1,2,4`, `1..16`, `1-16`, `1..16:2`, `pow2`, `all`),
/// checked when parsed and resolved against the machine's usable PUs later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadList(String);

impl std::str::FromStr for ThreadList {
    type Err = ResultsError;
    fn from_str(s: &str) -> Result<Self, ResultsError> {
        parse_threads(s, 1)?;
        Ok(ThreadList(s.to_string()))
    }
}

impl std::fmt::Display for ThreadList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl ThreadList {
    /// The thread counts, `pow2` and `all` taken up to `usable` PUs.
    ///
    /// # Errors
    /// None in practice: the text was checked when parsed.
    pub fn resolve(&self, usable: usize) -> Result<Vec<usize>, ResultsError> {
        parse_threads(&self.0, usable)
    }

    /// As [`ThreadList::resolve`], with what `boundaries` stands for.
    ///
    /// # Errors
    /// None in practice: the text was checked when parsed.
    pub fn resolve_with(
        &self,
        usable: usize,
        boundaries: &[usize],
    ) -> Result<Vec<usize>, ResultsError> {
        parse_threads_with(&self.0, usable, boundaries)
    }
}

/// A comma-separated list of settings (`compact,scatter`, `first-touch,bind:1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct List<T>(pub Vec<T>);

impl<T: std::str::FromStr> std::str::FromStr for List<T>
where
    T::Err: std::fmt::Display,
{
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        items(s)
            .iter()
            .map(|item| item.trim().parse::<T>().map_err(|e| e.to_string()))
            .collect::<Result<Vec<T>, String>>()
            .map(List)
    }
}

/// Splits a comma-separated list, keeping a `key=value` item's own commas: after
/// `cpus=0`, a piece that starts with a digit continues it (`cpus=0,1,4-7,scatter`
/// is `cpus=0,1,4-7` and `scatter`).
fn items(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for piece in s.split(',') {
        let continues = piece.trim_start().starts_with(|c: char| c.is_ascii_digit())
            && out.last().is_some_and(|prev| prev.contains('='));
        match out.last_mut() {
            Some(prev) if continues => {
                prev.push(',');
                prev.push_str(piece);
            }
            _ => out.push(piece.to_string()),
        }
    }
    out
}

/// Parses a comma-separated list with `parse`, naming the field on error.
///
/// # Errors
/// [`ResultsError::BadList`] with the item's own error.
pub fn parse_list<T>(
    field: &'static str,
    text: &str,
    parse: impl Fn(&str) -> Result<T, scalescope_place::PlaceError>,
) -> Result<Vec<T>, ResultsError> {
    text.split(',')
        .map(|item| {
            parse(item.trim()).map_err(|e| ResultsError::BadList {
                field,
                value: text.to_string(),
                detail: e.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_list_keeps_its_commas() {
        assert_eq!(
            items("cpus=0,1,4-7,scatter"),
            vec!["cpus=0,1,4-7".to_string(), "scatter".to_string()]
        );
        let l: List<scalescope_place::Strategy> = "compact,cpus=0,1".parse().unwrap();
        assert_eq!(l.0.len(), 2);
        assert_eq!(items("1,2,4"), vec!["1", "2", "4"]);
    }

    #[test]
    fn thread_lists() {
        assert_eq!(parse_threads("1,2,4", 2).unwrap(), vec![1, 2, 4]);
        assert_eq!(parse_threads("1..4", 2).unwrap(), vec![1, 2, 3, 4]);
        assert_eq!(parse_threads("1..16:4", 2).unwrap(), vec![1, 5, 9, 13]);
        assert_eq!(parse_threads("pow2", 12).unwrap(), vec![1, 2, 4, 8, 12]);
        assert_eq!(parse_threads("pow2", 16).unwrap(), vec![1, 2, 4, 8, 16]);
        assert_eq!(parse_threads("all", 3).unwrap(), vec![1, 2, 3]);
        assert_eq!(parse_threads("4,1..2", 3).unwrap(), vec![1, 2, 4]);
        assert_eq!(parse_threads("1-4", 2).unwrap(), vec![1, 2, 3, 4]);
        assert_eq!(parse_threads("2-8:2", 2).unwrap(), vec![2, 4, 6, 8]);
        for bad in ["0", "x", "4..2", "1..", "1..4:0", "", "4-2", "-3", "1-"] {
            let e = parse_threads(bad, 4).unwrap_err().to_string();
            assert!(e.starts_with("threads"), "{bad}: {e}");
        }
    }

    #[test]
    fn jobs_warm_up_each_point_first() {
        let plan = Plan {
            launch: None,
            threads: vec![1, 2],
            placements: vec![Strategy::Compact],
            mems: vec![MemPolicy::FirstTouch],
            reps: 2,
            warmup: 1,
            options: Default::default(),
            order: RunOrder::Grouped,
        };
        let jobs = plan.jobs();
        assert_eq!(jobs.len(), 6);
        assert!(jobs[0].warmup && !jobs[1].warmup && jobs[3].warmup);
        assert_eq!(jobs[3].point.threads, 2);
    }

    #[test]
    fn a_node_axis_gives_a_point_per_node_count_and_ranks_per_node() {
        use crate::launch::{HostsFrom, LaunchPlan};
        let plan = Plan {
            launch: Some(LaunchPlan {
                launcher: "srun".into(),
                program: "srun".into(),
                extra_args: vec![],
                hosts: vec!["n1".into(), "n2".into()],
                ranks_per_node: vec!["cores".into(), "2xcores".into()],
                threads_per_rank: 1,
                node_counts: vec![2, 1],
                per_node: vec![2, 4],
                hosts_from: HostsFrom::Allocation,
            }),
            threads: vec![2, 4, 8],
            placements: vec![Strategy::Compact],
            mems: vec![MemPolicy::FirstTouch],
            reps: 1,
            warmup: 0,
            options: Default::default(),
            order: RunOrder::Grouped,
        };
        let shapes: Vec<(usize, Option<usize>)> =
            plan.points().iter().map(|p| (p.threads, p.nodes)).collect();
        // 4 ranks on one node and 4 on two are two points.
        assert_eq!(
            shapes,
            [(2, Some(1)), (4, Some(1)), (4, Some(2)), (8, Some(2))]
        );
        assert_eq!(plan.jobs().len(), 4);
    }

    fn two_placements(order: RunOrder) -> Plan {
        Plan {
            launch: None,
            threads: vec![1, 2, 4, 8],
            placements: vec![Strategy::Compact, Strategy::Scatter],
            mems: vec![MemPolicy::FirstTouch],
            reps: 3,
            warmup: 1,
            options: Default::default(),
            order,
        }
    }

    #[test]
    fn shuffled_rounds_interleave_points_and_placements_reproducibly() {
        let plan = two_placements(RunOrder::Shuffled { seed: 42 });
        let jobs = plan.jobs();
        // The same jobs as grouped, in another order.
        let key = |j: &Job| (j.point.clone(), j.rep, j.warmup);
        let mut a: Vec<_> = jobs.iter().map(key).collect();
        let mut b: Vec<_> = two_placements(RunOrder::Grouped)
            .jobs()
            .iter()
            .map(key)
            .collect();
        a.sort();
        b.sort();
        assert_eq!(a, b);
        // Round by round: every point's repetition r before any repetition r + 1,
        // and each point's warm-up right before its first repetition.
        let measured: Vec<&Job> = jobs.iter().filter(|j| !j.warmup).collect();
        for (i, j) in measured.iter().enumerate() {
            assert_eq!(j.rep, i / 8, "{jobs:?}");
        }
        for (i, j) in jobs.iter().enumerate().filter(|(_, j)| j.warmup) {
            assert_eq!((&jobs[i + 1].point, jobs[i + 1].rep), (&j.point, 0));
        }
        // The placements alternate inside a round, and the rounds differ.
        let round = |r: usize| -> Vec<Point> {
            measured
                .iter()
                .filter(|j| j.rep == r)
                .map(|j| j.point.clone())
                .collect()
        };
        let first_half: Vec<_> = round(0)[..4].iter().map(|p| p.placement.clone()).collect();
        assert!(first_half.contains(&Strategy::Compact) && first_half.contains(&Strategy::Scatter));
        assert_ne!(round(0), round(1));
        // The seed reproduces the order; another seed gives another.
        assert_eq!(jobs, plan.jobs());
        assert_ne!(jobs, two_placements(RunOrder::Shuffled { seed: 43 }).jobs());
    }

    #[test]
    fn files_without_an_order_read_as_grouped() {
        let v = serde_json::json!({"threads": [1], "placements": ["compact"],
            "mems": ["first-touch"], "reps": 1, "warmup": 0});
        let plan: Plan = serde_json::from_value(v).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plan.order, RunOrder::Grouped);
        let shuffled =
            serde_json::to_value(RunOrder::Shuffled { seed: 7 }).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(shuffled, serde_json::json!({"kind": "shuffled", "seed": 7}));
    }
}
