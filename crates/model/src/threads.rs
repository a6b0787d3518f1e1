//! Thread lists as people write them (`1,2,4`, `1..16`, `1-16` as likwid and
//! taskset write ranges, `1..16:2`, `pow2`, `all`, `boundaries`, or a mix), parsed
//! once into a [`ThreadList`] of typed items and resolved against the machine (its
//! usable PUs, the placements' boundaries) when the sweep is planned.

use crate::setting::Setting;
use crate::ResultsError;

/// The largest thread count a list may name.
pub const MAX_THREADS: usize = 100_000;

/// One item of a thread list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadItem {
    /// One thread count.
    Count(usize),
    /// `from..to` (or `from-to`), every `step`-th count.
    Range { from: usize, to: usize, step: usize },
    /// 1, 2, 4, ... up to the usable PUs, and the usable PUs.
    Pow2,
    /// Every count from 1 to the usable PUs.
    All,
    /// A point on each side of every boundary of the placements (L3, node, package,
    /// all cores, all PUs), plus 1, 2 and the usable PUs.
    Boundaries,
}

/// A thread list, checked when parsed; [`ThreadList::resolve_with`] gives its
/// counts on a machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadList(Vec<ThreadItem>);

impl ThreadList {
    /// The items, in the order written.
    pub fn items(&self) -> &[ThreadItem] {
        &self.0
    }

    /// The thread counts, `pow2` and `all` taken up to `usable` PUs.
    ///
    /// # Errors
    /// [`ResultsError::BadList`] when nothing is left (`all` on no usable PU).
    pub fn resolve(&self, usable: usize) -> Result<Vec<usize>, ResultsError> {
        self.resolve_with(usable, &[])
    }

    /// As [`ThreadList::resolve`], with the counts `boundaries` stands for.
    ///
    /// # Errors
    /// As [`ThreadList::resolve`].
    pub fn resolve_with(
        &self,
        usable: usize,
        boundaries: &[usize],
    ) -> Result<Vec<usize>, ResultsError> {
        // A set, not a list: values are at most MAX_THREADS, so repeated items and
        // ranges cannot grow it past that.
        let mut out = std::collections::BTreeSet::new();
        for item in &self.0 {
            match *item {
                ThreadItem::Count(n) => {
                    out.insert(n);
                }
                ThreadItem::Range { from, to, step } => out.extend((from..=to).step_by(step)),
                ThreadItem::All => out.extend(1..=usable),
                ThreadItem::Boundaries => {
                    out.extend([1, 2.min(usable), usable].into_iter().filter(|t| *t > 0));
                    out.extend(
                        boundaries
                            .iter()
                            .copied()
                            .filter(|t| (1..=usable).contains(t)),
                    );
                }
                ThreadItem::Pow2 => {
                    out.extend(
                        std::iter::successors(Some(1), |t| Some(t * 2))
                            .take_while(|t| *t <= usable),
                    );
                    out.extend((usable > 0).then_some(usable));
                }
            }
        }
        if out.is_empty() {
            return Err(bad(
                &self.to_string(),
                "no thread count on this machine".into(),
            ));
        }
        Ok(out.into_iter().collect())
    }
}

fn bad(value: &str, detail: String) -> ResultsError {
    ResultsError::BadList {
        setting: Setting::Threads,
        value: value.to_string(),
        detail,
    }
}

/// A count between 1 and [`MAX_THREADS`].
fn count(text: &str, s: &str) -> Result<usize, ResultsError> {
    s.parse::<usize>()
        .ok()
        .filter(|v| (1..=MAX_THREADS).contains(v))
        .ok_or_else(|| {
            bad(
                text,
                format!("`{s}` is not a thread count between 1 and {MAX_THREADS}"),
            )
        })
}

/// `4-16` (how likwid, numactl and taskset write a range) split like `4..16`.
fn dash_range(item: &str) -> Option<(&str, &str)> {
    let (a, b) = item.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    (digits(a) && digits(b.split(':').next().unwrap_or(""))).then_some((a, b))
}

fn item(text: &str, item: &str) -> Result<ThreadItem, ResultsError> {
    Ok(match item {
        "all" => ThreadItem::All,
        "boundaries" => ThreadItem::Boundaries,
        "pow2" => ThreadItem::Pow2,
        _ => match item.split_once("..").or_else(|| dash_range(item)) {
            Some((a, rest)) => {
                let (b, step) = match rest.split_once(':') {
                    Some((b, s)) => (b, count(text, s)?),
                    None => (rest, 1),
                };
                let (from, to) = (count(text, a)?, count(text, b)?);
                if to < from {
                    return Err(bad(text, format!("range `{item}` runs backwards")));
                }
                ThreadItem::Range { from, to, step }
            }
            None => ThreadItem::Count(count(text, item)?),
        },
    })
}

impl std::str::FromStr for ThreadList {
    type Err = ResultsError;
    fn from_str(text: &str) -> Result<Self, ResultsError> {
        text.split(',')
            .map(|i| item(text, i.trim()))
            .collect::<Result<Vec<_>, _>>()
            .map(ThreadList)
    }
}

impl std::fmt::Display for ThreadItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ThreadItem::Count(n) => write!(f, "{n}"),
            ThreadItem::Range { from, to, step: 1 } => write!(f, "{from}..{to}"),
            ThreadItem::Range { from, to, step } => write!(f, "{from}..{to}:{step}"),
            ThreadItem::Pow2 => f.write_str("pow2"),
            ThreadItem::All => f.write_str("all"),
            ThreadItem::Boundaries => f.write_str("boundaries"),
        }
    }
}

impl std::fmt::Display for ThreadList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let items: Vec<String> = self.0.iter().map(ThreadItem::to_string).collect();
        f.write_str(&items.join(","))
    }
}

/// Parses a thread list and resolves it on `max` usable PUs, where `boundaries` is
/// 1, 2 and `max` ([`parse_threads_with`] adds the placements' boundaries).
///
/// # Errors
/// [`ResultsError::BadList`] naming the bad item.
pub fn parse_threads(text: &str, max: usize) -> Result<Vec<usize>, ResultsError> {
    parse_threads_with(text, max, &[])
}

/// [`parse_threads`] with the thread counts `boundaries` stands for.
///
/// # Errors
/// [`ResultsError::BadList`] naming the bad item.
pub fn parse_threads_with(
    text: &str,
    max: usize,
    boundaries: &[usize],
) -> Result<Vec<usize>, ResultsError> {
    text.parse::<ThreadList>()?.resolve_with(max, boundaries)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(parse_threads("boundaries", 8).unwrap(), vec![1, 2, 8]);
        assert_eq!(parse_threads("boundaries", 1).unwrap(), vec![1]);
        for bad in [
            "0", "x", "4..2", "1..", "1..4:0", "", "4-2", "-3", "1-", "100001",
        ] {
            let e = parse_threads(bad, 4).unwrap_err().to_string();
            assert!(e.starts_with("threads `"), "{bad}: {e}");
        }
        assert!(parse_threads("all", 0).is_err());
    }

    #[test]
    fn a_list_is_typed_once_and_written_back_in_its_own_grammar() {
        let l: ThreadList = "1, 2-8:2,pow2,all,boundaries".parse().unwrap();
        assert_eq!(
            l.items(),
            [
                ThreadItem::Count(1),
                ThreadItem::Range {
                    from: 2,
                    to: 8,
                    step: 2
                },
                ThreadItem::Pow2,
                ThreadItem::All,
                ThreadItem::Boundaries
            ]
        );
        assert_eq!(l.to_string(), "1,2..8:2,pow2,all,boundaries");
        assert_eq!(l.to_string().parse::<ThreadList>().unwrap(), l);
    }
}
