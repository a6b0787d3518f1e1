//! `scalescope tpch q1|q6`: the query on this machine, its result rows checked
//! against the reference answers where they exist.

use std::process::ExitCode;

use scalescope_place::mempolicy::page_nodes;
use scalescope_place::Strategy;
use scalescope_workloads::execute;
use scalescope_workloads::tpch::{Layout, Tpch};

use crate::cli::TpchArgs;

/// Result rows as objects keyed by the header's column names.
fn rows_json(rows: &[String]) -> Vec<serde_json::Map<String, serde_json::Value>> {
    let Some((header, body)) = rows.split_first() else {
        return Vec::new();
    };
    let names: Vec<&str> = header.split('|').collect();
    body.iter()
        .map(|r| {
            names
                .iter()
                .zip(r.split('|'))
                .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.to_string())))
                .collect()
        })
        .collect()
}

/// Where each partition's pages are, by the kernel's answer (`move_pages`):
/// `[{"partition": i, "pages": {"0": n, ..., "unallocated": m}}]`, or the reason it
/// is unavailable here.
fn partition_pages(q: &Tpch) -> serde_json::Value {
    let mut out = Vec::new();
    for (i, buffers) in q.lineitem().partition_buffers().iter().enumerate() {
        let mut pages = serde_json::Map::new();
        for (addr, len) in buffers {
            match page_nodes(*addr, *len) {
                Ok(nodes) => {
                    for (node, n) in nodes {
                        let key = node.map_or("unallocated".to_string(), |n| n.to_string());
                        let slot = pages.entry(key).or_insert(0.into());
                        *slot = (slot.as_u64().unwrap_or(0) + n as u64).into();
                    }
                }
                Err(e) => return format!("unavailable here: move_pages: {e}").into(),
            }
        }
        out.push(serde_json::json!({"partition": i, "pages": pages}));
    }
    out.into()
}

pub fn run(args: &TpchArgs) -> anyhow::Result<ExitCode> {
    let strategy: Strategy = args.placement.parse()?;
    let layout: Layout = args.layout.parse()?;
    let mut q = Tpch::new(&args.query, args.sf, layout, args.repeat, args.tbl.clone())?;
    q.force = args.force;
    let pool = super::pinned_pool(&strategy, args.threads)?;
    let threads = pool.threads();
    let report = execute(&mut q, &pool)?;
    let unavailable = report.verification.starts_with("unavailable");
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "query": args.query,
                "sf": args.sf,
                "layout": args.layout,
                "threads": threads,
                "rows": rows_json(q.rows()),
                "seconds": report.seconds,
                "rows_per_s": report.figures["rows_per_s"],
                "scanned_bytes_per_s": report.figures["scanned_gb_per_s"] * 1e9,
                "lineitem_rows": report.detail["lineitem_rows"],
                "verified": report.verified,
                "verification": report.verification,
                "partition_pages": partition_pages(&q),
            }))?
        );
    } else {
        println!(
            "TPC-H {} SF {} ({} layout): {} threads ({}), {:.2} ms best of {}, {:.0} rows/s, {:.2} GB/s scanned",
            args.query.to_uppercase(),
            args.sf,
            args.layout,
            threads,
            strategy,
            report.seconds * 1e3,
            args.repeat,
            report.figures["rows_per_s"],
            report.figures["scanned_gb_per_s"]
        );
        for r in q.rows() {
            println!("  {r}");
        }
        println!("verification: {}", report.verification);
    }
    if !report.verified && !unavailable {
        anyhow::bail!(
            "TPC-H {} SF {}: wrong answer: {}",
            args.query,
            args.sf,
            report.verification
        );
    }
    Ok(ExitCode::SUCCESS)
}
