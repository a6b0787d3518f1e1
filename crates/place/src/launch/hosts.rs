//! Node lists: a comma-separated host list, Slurm's compressed `SLURM_JOB_NODELIST`
//! (`node[01-03,07],gpu5`) and MPI hostfiles (`host`, `host slots=4`, `host:4`,
//! `#` comments), each turned into host names in order, duplicates dropped.

use super::LaunchError;

/// The most hosts one list may expand to (a typo such as `n[0-99999999]` is an
/// error, not an allocation).
pub const MAX_HOSTS: usize = 65_536;

/// Expands a host list, which may use Slurm's bracket ranges.
///
/// # Errors
/// [`LaunchError::BadHosts`] naming the text for empty names, unbalanced brackets,
/// bad ranges or more than [`MAX_HOSTS`] hosts.
pub fn expand(text: &str) -> Result<Vec<String>, LaunchError> {
    let bad = |detail: &str| LaunchError::BadHosts {
        text: text.to_string(),
        detail: detail.to_string(),
    };
    let mut hosts: Vec<String> = Vec::new();
    for item in split_top_level(text).map_err(|d| bad(&d))? {
        let item = item.trim();
        if item.is_empty() {
            return Err(bad("an empty host name"));
        }
        for h in expand_one(item).map_err(|d| bad(&d))? {
            if !hosts.contains(&h) {
                hosts.push(h);
            }
            if hosts.len() > MAX_HOSTS {
                return Err(bad(&format!("more than {MAX_HOSTS} hosts")));
            }
        }
    }
    if hosts.is_empty() {
        return Err(bad("no host"));
    }
    Ok(hosts)
}

/// The hosts of an MPI hostfile's text, in file order.
///
/// # Errors
/// [`LaunchError::BadHosts`] when no line names a host.
pub fn parse_hostfile(text: &str) -> Result<Vec<String>, LaunchError> {
    let mut hosts: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some(word) = line.split_whitespace().next() else {
            continue;
        };
        let host = word.split(':').next().unwrap_or(word).to_string();
        if !host.is_empty() && !hosts.contains(&host) {
            hosts.push(host);
        }
    }
    if hosts.is_empty() {
        return Err(LaunchError::BadHosts {
            text: text.chars().take(80).collect(),
            detail: "the hostfile names no host".into(),
        });
    }
    Ok(hosts)
}

/// The hosts to use: a `--nodes` list, else a hostfile's text, else Slurm's
/// `SLURM_JOB_NODELIST` (inside a job), else `localhost`.
///
/// # Errors
/// As [`expand`] and [`parse_hostfile`].
pub fn choose(
    nodes: Option<&str>,
    hostfile: Option<&str>,
    slurm_nodelist: Option<&str>,
) -> Result<Vec<String>, LaunchError> {
    match (nodes, hostfile, slurm_nodelist) {
        (Some(list), _, _) => expand(list),
        (None, Some(text), _) => parse_hostfile(text),
        (None, None, Some(list)) if !list.is_empty() => expand(list),
        _ => Ok(vec!["localhost".to_string()]),
    }
}

/// The CPUs a Slurm job holds on each of its nodes, in node-list order, from
/// `SLURM_JOB_CPUS_PER_NODE` (`2(x3),1`: two on each of three nodes, then one).
///
/// # Errors
/// [`LaunchError::BadHosts`] naming the text when an item is not `N` or `N(xK)`.
pub fn cpus_per_node(text: &str) -> Result<Vec<usize>, LaunchError> {
    let bad = || LaunchError::BadHosts {
        text: text.to_string(),
        detail: "SLURM_JOB_CPUS_PER_NODE items are N or N(xK)".into(),
    };
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim) {
        let (cpus, times) = match item.split_once("(x") {
            Some((c, rest)) => (c, rest.strip_suffix(')').ok_or_else(bad)?),
            None => (item, "1"),
        };
        let cpus: usize = cpus.parse().map_err(|_| bad())?;
        let times: usize = times.parse().map_err(|_| bad())?;
        if times > MAX_HOSTS || out.len() + times > MAX_HOSTS {
            return Err(bad());
        }
        out.extend(std::iter::repeat_n(cpus, times));
    }
    Ok(out)
}

/// Splits at commas outside brackets.
fn split_top_level(text: &str) -> Result<Vec<String>, String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0usize);
    for c in text.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.checked_sub(1).ok_or("a `]` without `[`")?,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if depth != 0 {
        return Err("a `[` without `]`".into());
    }
    out.push(cur);
    Ok(out)
}

/// `prefix[a-b,c]suffix` into its hosts (one bracket group, as Slurm prints them
/// for one-dimensional names); a plain name into itself.
fn expand_one(item: &str) -> Result<Vec<String>, String> {
    let Some(open) = item.find('[') else {
        return Ok(vec![item.to_string()]);
    };
    let close = item.find(']').ok_or("a `[` without `]`")?;
    let (prefix, inner, suffix) = (&item[..open], &item[open + 1..close], &item[close + 1..]);
    if suffix.contains('[') {
        return Err("more than one bracket group in one name".into());
    }
    let mut out = Vec::new();
    for range in inner.split(',') {
        let (lo, hi) = range.split_once('-').unwrap_or((range, range));
        let width = lo.len();
        let parse = |s: &str| {
            s.parse::<u64>()
                .map_err(|_| format!("`{range}` is not a number or a range of numbers"))
        };
        let (a, b) = (parse(lo)?, parse(hi)?);
        if b < a || b - a >= MAX_HOSTS as u64 {
            return Err(format!("the range `{range}` is empty or too large"));
        }
        out.extend((a..=b).map(|n| format!("{prefix}{n:0width$}{suffix}")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn plain_list_keeps_order_and_drops_duplicates() {
        assert_eq!(expand("b,a,b").unwrap(), ["b", "a"]);
    }

    #[test]
    fn slurm_ranges_keep_zero_padding() {
        assert_eq!(
            expand("node[08-10,13],gpu5").unwrap(),
            ["node08", "node09", "node10", "node13", "gpu5"]
        );
    }

    #[test]
    fn bad_lists_name_the_problem() {
        for (text, what) in [
            ("a,,b", "empty host"),
            ("n[1-3", "without `]`"),
            ("n[3-1]", "empty or too large"),
            ("n[x]", "not a number"),
            ("n[0-99999999]", "too large"),
        ] {
            let e = expand(text).unwrap_err().to_string();
            assert!(e.contains(text) && e.contains(what), "{text}: {e}");
        }
    }

    #[test]
    fn hosts_come_from_the_flag_then_the_file_then_slurm() {
        assert_eq!(choose(Some("a"), Some("b"), Some("c")).unwrap(), ["a"]);
        assert_eq!(choose(None, Some("b slots=2"), Some("c")).unwrap(), ["b"]);
        assert_eq!(choose(None, None, Some("c[1-2]")).unwrap(), ["c1", "c2"]);
        assert_eq!(choose(None, None, None).unwrap(), ["localhost"]);
    }

    #[test]
    fn slurm_cpus_per_node_expand_their_repeats() {
        assert_eq!(cpus_per_node("2(x3),1").unwrap(), [2, 2, 2, 1]);
        assert_eq!(cpus_per_node("64").unwrap(), [64]);
        for bad in ["", "2(x", "a", "2(x3", "1(x99999999)"] {
            assert!(cpus_per_node(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn hostfile_forms() {
        let text = "# cluster\nnode1 slots=4\nnode2:8\n\n  node3 # spare\nnode1\n";
        assert_eq!(parse_hostfile(text).unwrap(), ["node1", "node2", "node3"]);
        assert!(parse_hostfile("# nothing\n").is_err());
    }
}
