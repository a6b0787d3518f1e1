//! likwid-pin CPU expressions, the de-facto syntax for naming CPUs by position
//! (likwid 5.2, `likwid-pin -h` and the likwid wiki "Likwid-Pin"):
//!
//! - `0-3,8`: physical OS indexes, in the order written;
//! - `D:LIST` with a domain `N` (the node: all CPUs), `S<i>` (socket), `M<i>` (memory
//!   domain), `C<i>` (last-level cache), `D<i>` (die) and LIST indexes into the
//!   domain's logical numbering: physical cores first, SMT siblings after them;
//! - `E:D:COUNT[:CHUNK:STRIDE]`: COUNT CPUs of domain D in hardware order (SMT
//!   siblings adjacent), CHUNK at a time, chunk starts STRIDE apart;
//! - `X:scatter` with X in `S`, `M`, `C`, `D`, `N`: round-robin over the domains;
//! - several of the above joined by `@`.

use scalescope_topo::Topology;

use crate::PlaceError;

/// A usable PU's hardware position, for ordering.
#[derive(Debug, Clone, Copy)]
struct Hw {
    cpu: u32,
    package: usize,
    core: usize,
    smt: u32,
}

/// Resolves an expression to CPUs in thread order.
///
/// # Errors
/// [`PlaceError::BadExpression`] naming the part that is wrong and why.
pub fn resolve(topo: &Topology, expr: &str) -> Result<Vec<u32>, PlaceError> {
    let bad = |detail: String| PlaceError::BadExpression {
        expr: expr.to_string(),
        detail,
    };
    if expr.trim().is_empty() {
        return Err(bad("empty expression".into()));
    }
    let mut out: Vec<u32> = Vec::new();
    for part in expr.split('@') {
        let cpus = resolve_part(topo, part.trim()).map_err(&bad)?;
        out.extend(cpus);
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some(dup) = out.iter().find(|c| !seen.insert(**c)) {
        return Err(bad(format!("CPU {dup} is named twice")));
    }
    Ok(out)
}

fn resolve_part(topo: &Topology, part: &str) -> Result<Vec<u32>, String> {
    if part.is_empty() {
        return Err("empty part between `@`".into());
    }
    if let Some(rest) = part.strip_prefix("E:") {
        return expression_part(topo, rest);
    }
    match part.split_once(':') {
        None => {
            parse_ordered_list(part, u32::MAX).map(|v| v.into_iter().map(|i| i as u32).collect())
        }
        Some((domain, "scatter")) => scatter(topo, domain),
        Some((domain, list)) => {
            let members = logical(domain_members(topo, domain)?);
            let idx = parse_ordered_list(list, members.len() as u32)
                .map_err(|e| format!("{domain}: {e}"))?;
            Ok(idx.into_iter().map(|i| members[i].cpu).collect())
        }
    }
}

/// Indexes in the written order: `3,0-1` is 3, 0, 1. Each must be below `limit`.
fn parse_ordered_list(text: &str, limit: u32) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for token in text.split(',') {
        let num = |t: &str| -> Result<u32, String> {
            let t = t.trim();
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) || t.len() > 6 {
                return Err(format!("`{token}` is not a number or range"));
            }
            let v: u32 = t
                .parse()
                .map_err(|_| format!("`{token}` is not a number"))?;
            if v >= limit {
                return Err(format!(
                    "index {v} is out of range (the domain has {limit} CPUs, 0-{})",
                    limit.saturating_sub(1)
                ));
            }
            Ok(v)
        };
        match token.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if b < a {
                    return Err(format!("range `{token}` runs backwards"));
                }
                out.extend((a..=b).map(|v| v as usize));
            }
            None => out.push(num(token)? as usize),
        }
    }
    Ok(out)
}

fn usable(topo: &Topology) -> Vec<Hw> {
    topo.usable_pus()
        .map(|p| Hw {
            cpu: p.cpu,
            package: p.package.unwrap_or(0),
            core: p.core.unwrap_or(usize::MAX),
            smt: p.smt_rank.unwrap_or(0),
        })
        .collect()
}

/// The usable PUs of one domain (`N`, `S0`, `M1`, `C0`, `D0`), unordered.
fn domain_members(topo: &Topology, domain: &str) -> Result<Vec<Hw>, String> {
    let all = usable(topo);
    let (kind, index) = domain.split_at(domain.len().min(1));
    if kind == "N" && index.is_empty() {
        return Ok(all);
    }
    let i: usize = index
        .parse()
        .map_err(|_| format!("unknown domain `{domain}` (N, S<i>, M<i>, C<i>, D<i>)"))?;
    let sets = domain_sets(topo, kind)
        .ok_or_else(|| format!("unknown domain `{domain}` (N, S<i>, M<i>, C<i>, D<i>)"))?;
    let set = sets.get(i).ok_or_else(|| {
        format!(
            "domain `{domain}` does not exist (this machine has {kind}0-{kind}{})",
            sets.len().saturating_sub(1)
        )
    })?;
    let members: Vec<Hw> = all.into_iter().filter(|h| set.contains(h.cpu)).collect();
    if members.is_empty() {
        return Err(format!("domain `{domain}` has no usable CPU"));
    }
    Ok(members)
}

/// The CPU sets of every domain of a kind, in likwid's order.
fn domain_sets(topo: &Topology, kind: &str) -> Option<Vec<scalescope_topo::CpuSet>> {
    Some(match kind {
        "S" => topo.packages.iter().map(|d| d.cpus.clone()).collect(),
        "M" => topo
            .numa_nodes
            .iter()
            .filter(|n| !n.cpus.is_empty())
            .map(|n| n.cpus.clone())
            .collect(),
        "C" => {
            let llc = if topo.l3.is_empty() {
                &topo.l2
            } else {
                &topo.l3
            };
            if llc.is_empty() {
                topo.packages.iter().map(|d| d.cpus.clone()).collect()
            } else {
                llc.iter().map(|c| c.cpus.clone()).collect()
            }
        }
        "D" => {
            if topo.dies.is_empty() {
                topo.packages.iter().map(|d| d.cpus.clone()).collect()
            } else {
                topo.dies.iter().map(|d| d.cpus.clone()).collect()
            }
        }
        _ => return None,
    })
}

/// likwid's logical numbering: physical cores first, then their SMT siblings.
fn logical(mut v: Vec<Hw>) -> Vec<Hw> {
    v.sort_by_key(|h| (h.smt, h.package, h.core));
    v
}

/// Hardware order: SMT siblings adjacent.
fn compact(mut v: Vec<Hw>) -> Vec<Hw> {
    v.sort_by_key(|h| (h.package, h.core, h.smt));
    v
}

fn expression_part(topo: &Topology, rest: &str) -> Result<Vec<u32>, String> {
    let fields: Vec<&str> = rest.split(':').collect();
    let number = |s: &str, what: &str| -> Result<usize, String> {
        s.parse::<usize>()
            .ok()
            .filter(|v| *v >= 1)
            .ok_or_else(|| format!("E: {what} `{s}` must be a positive integer"))
    };
    let (domain, count, chunk, stride) = match fields.as_slice() {
        [d, c] => (*d, number(c, "count")?, 1, 1),
        [d, c, ch, st] => (
            *d,
            number(c, "count")?,
            number(ch, "chunk")?,
            number(st, "stride")?,
        ),
        _ => return Err("E: expects E:DOMAIN:COUNT or E:DOMAIN:COUNT:CHUNK:STRIDE".into()),
    };
    if stride < chunk {
        return Err(format!("E: stride {stride} is smaller than chunk {chunk}"));
    }
    let members = compact(domain_members(topo, domain)?);
    let mut out = Vec::with_capacity(count);
    let mut start = 0;
    while out.len() < count {
        if start >= members.len() {
            return Err(format!(
                "E:{domain}:{count}: only {} CPUs can be selected with chunk {chunk} and stride {stride} from {} in the domain",
                out.len(),
                members.len()
            ));
        }
        out.extend(
            members[start..(start + chunk).min(members.len())]
                .iter()
                .take(count - out.len())
                .map(|h| h.cpu),
        );
        start += stride;
    }
    Ok(out)
}

/// Round-robin over all domains of a kind, each in logical order.
fn scatter(topo: &Topology, domain: &str) -> Result<Vec<u32>, String> {
    if domain == "N" {
        return Ok(logical(usable(topo)).into_iter().map(|h| h.cpu).collect());
    }
    let sets = domain_sets(topo, domain)
        .ok_or_else(|| format!("`{domain}:scatter`: unknown domain kind (S, M, C, D, N)"))?;
    let all = usable(topo);
    let lists: Vec<Vec<Hw>> = sets
        .iter()
        .map(|s| logical(all.iter().copied().filter(|h| s.contains(h.cpu)).collect()))
        .filter(|l: &Vec<Hw>| !l.is_empty())
        .collect();
    let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
    Ok((0..longest)
        .flat_map(|i| lists.iter().filter_map(move |l| l.get(i).map(|h| h.cpu)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use scalescope_topo::Source;

    fn machine() -> Topology {
        // 2 sockets x 4 cores x 2 threads, Intel-style numbering (siblings 8 apart).
        Source::Synthetic("package:2 numa:1 core:4 pu:2 numbering=smt-last".into())
            .load()
            .unwrap()
    }

    #[test]
    fn socket_lists_use_physical_cores_first() {
        let t = machine();
        assert_eq!(resolve(&t, "S0:0-3").unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(resolve(&t, "S0:4-5").unwrap(), vec![8, 9]);
        assert_eq!(
            resolve(&t, "S0:0-3@S1:0-3").unwrap(),
            vec![0, 1, 2, 3, 4, 5, 6, 7]
        );
        assert_eq!(resolve(&t, "N:0-7").unwrap(), vec![0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(resolve(&t, "M1:0-1").unwrap(), vec![4, 5]);
    }

    #[test]
    fn expression_syntax_walks_hardware_order() {
        let t = machine();
        assert_eq!(resolve(&t, "E:S0:4").unwrap(), vec![0, 8, 1, 9]);
        assert_eq!(resolve(&t, "E:S0:4:1:2").unwrap(), vec![0, 1, 2, 3]);
        assert_eq!(resolve(&t, "E:N:4:2:4").unwrap(), vec![0, 8, 2, 10]);
    }

    #[test]
    fn scatter_round_robins_domains() {
        let t = machine();
        assert_eq!(resolve(&t, "S:scatter").unwrap()[..4], [0, 4, 1, 5]);
        assert_eq!(resolve(&t, "M:scatter").unwrap().len(), 16);
    }

    #[test]
    fn plain_lists_keep_their_order() {
        let t = machine();
        assert_eq!(resolve(&t, "3,0-1").unwrap(), vec![3, 0, 1]);
    }

    #[test]
    fn errors_say_what_is_wrong() {
        let t = machine();
        for (expr, needle) in [
            ("S2:0", "does not exist"),
            ("S0:9", "out of range"),
            ("Q0:1", "unknown domain"),
            ("E:S0:99", "only 8 CPUs"),
            ("E:S0:x", "positive integer"),
            ("0-3@", "empty part"),
            ("0,0", "named twice"),
            ("S0:3-1", "backwards"),
            ("", "empty expression"),
        ] {
            let e = resolve(&t, expr).unwrap_err().to_string();
            assert!(e.contains(needle), "{expr}: {e}");
        }
    }

    proptest! {
        #[test]
        fn never_panics(s in "[NSMCDE0-9:,@x-]{0,24}") {
            let _ = resolve(&machine(), &s);
        }
    }
}
