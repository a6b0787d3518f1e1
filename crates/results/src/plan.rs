//! What a sweep will run: thread counts x placements x memory policies, each point
//! repeated, with warm-ups; parsed from the command line's lists.

use serde::{Deserialize, Serialize};

use scalescope_place::{Granularity, MemPolicy, PlaceRequest, Restriction, Strategy};

use crate::ResultsError;

/// One point of the sweep.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Point {
    pub threads: usize,
    pub placement: Strategy,
    pub mem: MemPolicy,
}

impl std::fmt::Display for Point {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} threads, {}, {}",
            self.threads, self.placement, self.mem
        )
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
    /// Points in execution order: placement, then memory policy, then threads
    /// ascending, so each curve completes before the next starts.
    pub fn points(&self) -> Vec<Point> {
        let mut v = Vec::new();
        for placement in &self.placements {
            for mem in &self.mems {
                for &threads in &self.threads {
                    v.push(Point {
                        threads,
                        placement: placement.clone(),
                        mem: mem.clone(),
                    });
                }
            }
        }
        v
    }

    /// Every execution in order: each point's warm-ups, then its repetitions.
    pub fn jobs(&self) -> Vec<Job> {
        self.points()
            .into_iter()
            .flat_map(|p| {
                let warm = (0..self.warmup).map({
                    let p = p.clone();
                    move |rep| Job {
                        point: p.clone(),
                        rep,
                        warmup: true,
                    }
                });
                let reps = (0..self.reps).map(move |rep| Job {
                    point: p.clone(),
                    rep,
                    warmup: false,
                });
                warm.chain(reps)
            })
            .collect()
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
    let mut out: Vec<usize> = Vec::new();
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
                    out.push(t);
                    t *= 2;
                }
                if out.last() != Some(&max) {
                    out.push(max);
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
                None => out.push(num(item)?),
            },
        }
    }
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err(bad("no thread count".into()));
    }
    Ok(out)
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
            threads: vec![1, 2],
            placements: vec![Strategy::Compact],
            mems: vec![MemPolicy::FirstTouch],
            reps: 2,
            warmup: 1,
            options: Default::default(),
        };
        let jobs = plan.jobs();
        assert_eq!(jobs.len(), 6);
        assert!(jobs[0].warmup && !jobs[1].warmup && jobs[3].warmup);
        assert_eq!(jobs[3].point.threads, 2);
    }
}
