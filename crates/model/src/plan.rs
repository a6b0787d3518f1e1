//! What a sweep will run: thread counts x placements x memory policies, each point
//! repeated, with warm-ups; parsed from the command line's lists.

use serde::{Deserialize, Serialize};

use scalescope_place::{Granularity, MemPolicy, PlaceRequest, Restriction, Strategy};

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

/// `v` in the order of a Fisher-Yates shuffle drawn from `seed` (the project's
/// SplitMix64, the same on every machine).
fn shuffled<T>(mut v: Vec<T>, seed: u64) -> Vec<T> {
    let mut rng = scalescope_stats::Rng::new(seed);
    for i in (1..v.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
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

pub use crate::threads::{parse_threads, parse_threads_with, ThreadItem, ThreadList};

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
