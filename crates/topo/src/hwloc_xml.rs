//! Reading hwloc 2.x XML exports (`lstopo --of xml`), so a user can send the
//! topology of a machine scalescope has never run on.
//!
//! hwloc attaches NUMA nodes as memory children, each carrying the CPU set of its
//! locality; several nodes (DRAM plus HBM, NVDIMM or CXL tiers) can share one. The
//! model here gives CPUs to the lowest-numbered node of a locality, as the kernel's
//! `nodeN/cpulist` does, and the others become memory-only nodes. An export made
//! without `--disallowed` leaves out the PUs a cgroup forbids; they appear here only
//! in the complete set and so read as not online.

use std::path::Path;

use roxmltree::{Document, Node};

use crate::cpuset::{CpuSet, NodeSet};
use crate::model::{Distances, RawCache, RawDomain, RawNode, RawTopology, Topology};
use crate::TopoError;

/// Loads an hwloc XML file.
///
/// # Errors
/// [`TopoError::Io`] if it cannot be read, [`TopoError::Parse`] (with the line) when it
/// is not well-formed XML or not an hwloc topology.
pub fn load(path: &Path) -> Result<Topology, TopoError> {
    let bytes = crate::files::read_file(path, MAX_XML_BYTES)?;
    let text = String::from_utf8(bytes).map_err(|e| TopoError::Parse {
        path: path.to_path_buf(),
        detail: format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
    })?;
    parse(&text, &format!("hwloc-xml:{}", path.display())).map_err(|detail| TopoError::Parse {
        path: path.to_path_buf(),
        detail,
    })
}

/// The largest XML file read (hwloc exports of the largest machines, with every PCI
/// device, are a few MB).
pub const MAX_XML_BYTES: u64 = 256 << 20;

/// The deepest element nesting accepted (a real export nests about 20 levels; the
/// XML parser recurses, so 12,000 levels overflowed the stack).
pub const MAX_DEPTH: usize = 256;

/// The `<topology>` root element.
fn topology_root<'a, 'input>(doc: &'a Document<'input>) -> Result<Node<'a, 'input>, String> {
    let root = doc.root_element();
    if root.tag_name().name() != "topology" {
        return Err(format!(
            "root element is <{}>, expected <topology>",
            root.tag_name().name()
        ));
    }
    Ok(root)
}

/// A cache object's size and line size, over `cpus`.
fn cache_of(node: Node, cpus: CpuSet) -> RawCache {
    RawCache {
        size_bytes: node.attribute("cache_size").and_then(|v| v.parse().ok()),
        line_bytes: node
            .attribute("cache_linesize")
            .and_then(|v| v.parse().ok()),
        cpus,
        reporter: None,
    }
}

/// Parses hwloc XML text; errors are plain sentences for [`TopoError::Parse`].
pub(crate) fn parse(text: &str, source: &str) -> Result<Topology, String> {
    check_depth(text)?;
    // hwloc writes `<!DOCTYPE topology SYSTEM "hwloc2.dtd">`; the DTD is never fetched.
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = Document::parse_with_options(text, options)
        .map_err(|e| format!("not well-formed XML: {e}"))?;
    let root = topology_root(&doc)?;
    let machine = root
        .children()
        .find(|n| n.has_tag_name("object"))
        .ok_or("no top-level <object> (the Machine)")?;
    let mut raw = RawTopology {
        source: source.to_string(),
        ..RawTopology::default()
    };
    let cpuset_attr = |n: Node, name: &str| -> Result<Option<CpuSet>, String> {
        n.attribute(name)
            .map(|t| {
                CpuSet::parse_hwloc(t)
                    .map_err(|e| format!("line {}: {name}: {e}", line_of(&doc, n)))
            })
            .transpose()
    };
    let online = cpuset_attr(machine, "cpuset")?.ok_or("the Machine object has no cpuset")?;
    raw.known = cpuset_attr(machine, "complete_cpuset")?.unwrap_or_else(|| online.clone());
    raw.allowed = cpuset_attr(machine, "allowed_cpuset")?.unwrap_or_else(|| online.clone());
    raw.online = online;
    raw.allowed_nodes =
        cpuset_attr(machine, "allowed_nodeset")?.map(|s| s.iter().collect::<NodeSet>());
    let mut numa: Vec<(u32, CpuSet, Option<u64>)> = Vec::new();
    for node in machine.descendants().filter(|n| n.has_tag_name("object")) {
        let kind = node.attribute("type").unwrap_or("");
        let cpus = cpuset_attr(node, "cpuset")?.unwrap_or_default();
        let os_index = node
            .attribute("os_index")
            .and_then(|v| v.parse::<u32>().ok());
        let domain = |cpus: CpuSet| RawDomain {
            os_id: os_index,
            cpus,
            reporter: None,
        };
        match kind {
            "Package" => raw.packages.push(domain(cpus)),
            "Die" => raw.dies.push(domain(cpus)),
            "Group" => raw.groups.push(domain(cpus)),
            "Core" => raw.cores.push(domain(cpus)),
            "L3Cache" | "L2Cache" => {
                let cache = cache_of(node, cpus);
                if kind == "L3Cache" {
                    raw.l3.push(cache)
                } else {
                    raw.l2.push(cache)
                }
            }
            "NUMANode" => {
                let id = os_index.ok_or_else(|| {
                    format!("line {}: NUMANode without os_index", line_of(&doc, node))
                })?;
                let memory = node.attribute("local_memory").and_then(|v| v.parse().ok());
                numa.push((id, cpus, memory));
            }
            _ => {}
        }
        if raw.cpu_model.is_none() {
            raw.cpu_model = info(node, "CPUModel").map(|m| m.trim().to_string());
        }
    }
    raw.numa = numa_nodes(numa);
    raw.distances = distances(root)?;
    raw.kinds = cpu_kinds(root)?;
    Topology::build(raw).map_err(|e| e.to_string())
}

/// Refuses text whose elements nest deeper than [`MAX_DEPTH`], before any parser
/// recurses into it. Comments, CDATA, processing instructions, declarations and quoted
/// attribute values are skipped; a malformed document is left to the parser.
fn check_depth(text: &str) -> Result<(), String> {
    let b = text.as_bytes();
    let (mut i, mut depth) = (0usize, 0usize);
    let skip_to = |from: usize, end: &str| {
        text[from..]
            .find(end)
            .map_or(b.len(), |p| from + p + end.len())
    };
    while let Some(p) = text[i..].find('<') {
        let at = i + p;
        let rest = &text[at..];
        if rest.starts_with("<!--") {
            i = skip_to(at, "-->");
        } else if rest.starts_with("<![CDATA[") {
            i = skip_to(at, "]]>");
        } else if rest.starts_with("<?") {
            i = skip_to(at, "?>");
        } else if rest.starts_with("<!") {
            i = skip_to(at, ">");
        } else if rest.starts_with("</") {
            depth = depth.saturating_sub(1);
            i = skip_to(at, ">");
        } else {
            let end = tag_end(b, at + 1);
            if b.get(end.wrapping_sub(1)) != Some(&b'/') {
                depth += 1;
                if depth > MAX_DEPTH {
                    let line = text[..at].bytes().filter(|&c| c == b'\n').count() + 1;
                    return Err(format!(
                        "line {line}: elements nest deeper than {MAX_DEPTH} levels"
                    ));
                }
            }
            i = (end + 1).min(b.len());
        }
    }
    Ok(())
}

/// Index of the `>` that closes a start tag beginning at `from`, skipping quoted
/// attribute values (the length of the text when there is none).
fn tag_end(b: &[u8], mut from: usize) -> usize {
    let mut quote = None;
    while from < b.len() {
        match (quote, b[from]) {
            (None, b'"' | b'\'') => quote = Some(b[from]),
            (Some(q), c) if c == q => quote = None,
            (None, b'>') => return from,
            _ => {}
        }
        from += 1;
    }
    b.len()
}

fn line_of(doc: &Document, node: Node) -> u32 {
    doc.text_pos_at(node.range().start).row
}

fn info(node: Node, name: &str) -> Option<String> {
    node.children()
        .filter(|c| c.has_tag_name("info"))
        .find(|c| c.attribute("name") == Some(name))
        .and_then(|c| c.attribute("value"))
        .map(str::to_string)
}

/// Lowest-numbered node of a locality keeps its CPUs; later ones are memory-only.
fn numa_nodes(mut numa: Vec<(u32, CpuSet, Option<u64>)>) -> Vec<RawNode> {
    numa.sort_by_key(|n| n.0);
    let mut claimed = CpuSet::new();
    numa.into_iter()
        .map(|(id, cpus, memory_bytes)| {
            let own = cpus.difference(&claimed);
            claimed = claimed.union(&own);
            RawNode {
                id,
                cpus: own,
                memory_bytes,
                locality: Some(cpus),
            }
        })
        .collect()
}

/// The `NUMALatency` matrix (`<distances2>`), indexed by node OS index.
fn distances(root: Node) -> Result<Option<Distances>, String> {
    let Some(d) = root.children().find(|n| {
        n.has_tag_name("distances2")
            && n.attribute("type") == Some("NUMANode")
            && n.attribute("name").is_none_or(|name| name == "NUMALatency")
    }) else {
        return Ok(None);
    };
    let numbers = |tag: &str| -> Result<Vec<u64>, String> {
        d.children()
            .filter(|c| c.has_tag_name(tag))
            .flat_map(|c| {
                c.text()
                    .unwrap_or("")
                    .split_whitespace()
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .map(|t| {
                t.parse::<u64>()
                    .map_err(|_| format!("<distances2>: `{t}` is not a number"))
            })
            .collect()
    };
    let ids: Vec<u32> = numbers("indexes")?.into_iter().map(|v| v as u32).collect();
    let values = numbers("u64values")?;
    let n = ids.len();
    if values.len() != n * n {
        return Err(format!(
            "<distances2>: {n} indexes need {} values, found {}",
            n * n,
            values.len()
        ));
    }
    let matrix = values
        .chunks(n)
        .map(|r| r.iter().map(|&v| v as u32).collect())
        .collect();
    Ok(Some((ids, matrix)))
}

/// `<cpukind>` elements ordered by efficiency (least performant first), ranked as
/// hwloc ranks them: by `forced_efficiency` where every kind has a distinct one, else
/// by core type (`IntelAtom` < `IntelCore`) then base frequency (max frequency where a
/// kind lacks a base). Kinds hwloc cannot rank (no such information, or two kinds
/// equal on it) are only frequency bands, not hybrid cores, and are dropped.
fn cpu_kinds(root: Node) -> Result<Vec<(String, CpuSet)>, String> {
    let mut kinds = Vec::new();
    for k in root.children().filter(|n| n.has_tag_name("cpukind")) {
        let cpus = CpuSet::parse_hwloc(k.attribute("cpuset").unwrap_or(""))
            .map_err(|e| format!("<cpukind>: {e}"))?;
        let forced: Option<u64> = k
            .attribute("forced_efficiency")
            .and_then(|v| v.parse::<i64>().ok())
            .and_then(|v| u64::try_from(v).ok());
        let mhz = |name: &str| info(k, name).and_then(|v| v.trim().parse::<u64>().ok());
        let core_type: u64 = match info(k, "CoreType").as_deref() {
            Some("IntelLowPower") => 1,
            Some("IntelCore") => 3,
            _ => 2,
        };
        let name = info(k, "LinuxCapacity")
            .map(|c| format!("capacity-{c}"))
            .or_else(|| info(k, "CoreType"))
            .or_else(|| mhz("FrequencyBaseMHz").map(|f| format!("base-{f}MHz")))
            .or_else(|| mhz("FrequencyMaxMHz").map(|f| format!("max-{f}MHz")))
            .unwrap_or_else(|| format!("kind-{}", kinds.len()));
        let info_rank = (mhz("FrequencyBaseMHz"), mhz("FrequencyMaxMHz"));
        kinds.push((forced, core_type, info_rank, name, cpus));
    }
    if kinds.len() < 2 {
        return Ok(Vec::new());
    }
    let distinct = |ranks: &[u64]| {
        let mut sorted = ranks.to_vec();
        sorted.sort_unstable();
        sorted.windows(2).all(|w| w[0] != w[1])
    };
    let forced: Option<Vec<u64>> = kinds.iter().map(|k| k.0).collect();
    let all_base = kinds.iter().all(|k| k.2 .0.is_some());
    let by_info: Option<Vec<u64>> = kinds
        .iter()
        .map(|k| {
            let freq = if all_base { k.2 .0 } else { k.2 .1 }?;
            Some((k.1 << 20).saturating_add(freq))
        })
        .collect();
    let ranks = match (forced, by_info) {
        (Some(r), _) if distinct(&r) => r,
        (_, Some(r)) if distinct(&r) => r,
        // hwloc may split one efficiency class by frequency; the model keeps one kind
        // per rank.
        (Some(r), _) => r,
        _ => return Ok(Vec::new()),
    };
    let mut ranked: Vec<(u64, String, CpuSet)> = ranks
        .into_iter()
        .zip(kinds)
        .map(|(r, k)| (r, k.3, k.4))
        .collect();
    ranked.sort_by_key(|k| k.0);
    let mut merged: Vec<(u64, String, CpuSet)> = Vec::new();
    for (rank, name, cpus) in ranked {
        match merged.last_mut() {
            Some(last) if last.0 == rank => last.2 = last.2.union(&cpus),
            _ => merged.push((rank, name, cpus)),
        }
    }
    Ok(merged
        .into_iter()
        .map(|(_, name, cpus)| (name, cpus))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_xml_names_the_problem() {
        let err = parse("<topology><object type=\"Machine\"", "t").unwrap_err();
        assert!(err.contains("not well-formed"), "{err}");
        let deep = format!("{}{}", "<a>".repeat(300), "</a>".repeat(300));
        let err = parse(&deep, "t").unwrap_err();
        assert!(err.contains("nest deeper than 256"), "{err}");
        // Quoted `>` and `/>`, comments and self-closing tags do not count as levels.
        let shallow = format!(
            "<!-- <a> --><topology a=\"x>y\" b='/>'>{}</topology>",
            "<info/>".repeat(500)
        );
        assert!(check_depth(&shallow).is_ok());
        let err = parse("<foo/>", "t").unwrap_err();
        assert!(err.contains("expected <topology>"), "{err}");
        let err = parse(
            "<topology><object type=\"Machine\" cpuset=\"zz\"/></topology>",
            "t",
        )
        .unwrap_err();
        assert!(err.contains("line 1"), "{err}");
    }
}
