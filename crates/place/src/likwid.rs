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
/// Every size is checked against the machine before anything is allocated: a list
/// index or CPU past the domain, an `E:` count larger than the domain, or a CPU named
/// twice is refused, so no expression makes the result longer than the machine has
/// PUs (plus one part).
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
    let mut seen = std::collections::BTreeSet::new();
    for part in expr.split('@') {
        let cpus = resolve_part(topo, part.trim()).map_err(&bad)?;
        // Checked part by part, so `0-7@0-7@...` stops at the first repeat instead of
        // growing with the input.
        if let Some(dup) = cpus.iter().find(|c| !seen.insert(**c)) {
            return Err(bad(format!("CPU {dup} is named twice")));
        }
        out.extend(cpus);
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
            // Physical OS indexes: each must be a CPU this machine has.
            let end = topo
                .pus
                .iter()
                .map(|p| p.cpu)
                .max()
                .map_or(0, |m| u64::from(m) + 1);
            let limit = Limit {
                end,
                what: "CPU",
                out_of_range: |v, end| {
                    format!("CPU {v} does not exist (this machine's CPUs are numbered below {end})")
                },
            };
            parse_ordered_list(part, &limit).map(|v| v.into_iter().map(|i| i as u32).collect())
        }
        Some((domain, "scatter")) => scatter(topo, domain),
        Some((domain, list)) => {
            let members = logical(domain_members(topo, domain)?);
            let limit = Limit {
                end: members.len() as u64,
                what: "index",
                out_of_range: |v, end| {
                    format!(
                        "index {v} is out of range (the domain has {end} CPUs, 0-{})",
                        end.saturating_sub(1)
                    )
                },
            };
            let idx = parse_ordered_list(list, &limit).map_err(|e| format!("{domain}: {e}"))?;
            Ok(idx.into_iter().map(|i| members[i as usize].cpu).collect())
        }
    }
}

/// What a list's numbers must stay below, and how to say one does not.
struct Limit {
    end: u64,
    what: &'static str,
    out_of_range: fn(u64, u64) -> String,
}

/// Numbers in the written order: `3,0-1` is 3, 0, 1. Each must be below
/// `limit.end` and appear once, so the list is never longer than `limit.end`.
fn parse_ordered_list(text: &str, limit: &Limit) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for token in text.split(',') {
        let num = |t: &str| -> Result<u64, String> {
            let v =
                decimal(t.trim()).ok_or_else(|| format!("`{token}` is not a number or range"))?;
            if v >= limit.end {
                return Err((limit.out_of_range)(v, limit.end));
            }
            Ok(v)
        };
        let (a, b) = match token.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let v = num(token)?;
                (v, v)
            }
        };
        if b < a {
            return Err(format!("range `{token}` runs backwards"));
        }
        for v in a..=b {
            if !seen.insert(v) {
                return Err(format!("{} {v} is named twice", limit.what));
            }
            out.push(v);
        }
    }
    Ok(out)
}

/// A plain decimal number (ASCII digits only: no sign, no spaces), or `None` when
/// the text is not one or does not fit in a `u64`.
fn decimal(t: &str) -> Option<u64> {
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
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

/// The usable PUs of one domain (`N`, `S0`, `M1`, `C0`, `D0`, `K1`), unordered.
fn domain_members(topo: &Topology, domain: &str) -> Result<Vec<Hw>, String> {
    let all = usable(topo);
    if domain == "N" {
        return Ok(all);
    }
    let unknown = || format!("unknown domain `{domain}` (N, S<i>, M<i>, C<i>, D<i>, K<i>)");
    // Split after the first character, not the first byte: the name may be any text.
    let mut chars = domain.chars();
    let kind = chars.next().ok_or_else(unknown)?;
    let index = chars.as_str();
    let sets = domain_sets(topo, kind.encode_utf8(&mut [0; 4])).ok_or_else(unknown)?;
    let i = decimal(index).ok_or_else(unknown)?;
    let set = usize::try_from(i)
        .ok()
        .and_then(|i| sets.get(i))
        .ok_or_else(|| {
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
        // Not likwid's: hybrid core kinds, least performant first (K1 is the
        // performance cores of a two-kind Intel part); one kind, K0, elsewhere.
        "K" => {
            if topo.kinds.is_empty() {
                vec![topo.usable_cpus()]
            } else {
                topo.kinds.iter().map(|k| k.cpus.clone()).collect()
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
        decimal(s)
            .filter(|v| *v >= 1)
            .map(|v| usize::try_from(v).unwrap_or(usize::MAX))
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
    // The count is checked against the domain before anything is allocated.
    if count > members.len() {
        return Err(format!(
            "E: count {count} is more than the {} CPUs of domain {domain}",
            members.len()
        ));
    }
    let mut out = Vec::with_capacity(count);
    let mut start = 0usize;
    while out.len() < count {
        if start >= members.len() {
            return Err(format!(
                "E:{domain}:{count}: only {} CPUs can be selected with chunk {chunk} and stride {stride} from {} in the domain",
                out.len(),
                members.len()
            ));
        }
        let end = start.saturating_add(chunk).min(members.len());
        out.extend(
            members[start..end]
                .iter()
                .take(count - out.len())
                .map(|h| h.cpu),
        );
        start = start.saturating_add(stride);
    }
    Ok(out)
}

/// Round-robin over all domains of a kind, each in logical order.
fn scatter(topo: &Topology, domain: &str) -> Result<Vec<u32>, String> {
    if domain == "N" {
        return Ok(logical(usable(topo)).into_iter().map(|h| h.cpu).collect());
    }
    let sets = domain_sets(topo, domain)
        .ok_or_else(|| format!("`{domain}:scatter`: unknown domain kind (S, M, C, D, K, N)"))?;
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
            ("E:S0:99", "count 99 is more than the 8 CPUs of domain S0"),
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
