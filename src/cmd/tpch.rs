//! `scalescope tpch q1|q6`: the query on this machine, its result rows checked
//! against the reference answers where they exist.

use std::process::ExitCode;

use scalescope_workloads::execute_with;
use scalescope_workloads::tpch::Tpch;

use crate::cli::TpchArgs;
use crate::shared::{pinned_pool, verdict_exit};

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

pub fn run(args: &TpchArgs) -> anyhow::Result<ExitCode> {
    let mut q = Tpch::new(
        &args.query,
        args.sf,
        args.layout,
        args.repeat,
        args.tbl.clone(),
    )?;
    q.force = args.force;
    let working =
        crate::progress::working(&format!("tpch {} at scale factor {}", args.query, args.sf));
    let pool = pinned_pool(&args.place, args.threads)?;
    let report = execute_with(&mut q, &pool, &args.inputs.inputs())?;
    drop(working);
    let figure = |k: &str| report.figures.get(k).copied().unwrap_or(f64::NAN);
    if args.json {
        let doc = serde_json::json!({
            "kind": "scalescope.tpch",
            "schema_version": crate::shared::JSON_SCHEMA_VERSION,
            "query": args.query,
            "sf": args.sf,
            "layout": args.layout,
            "threads": report.threads,
            "rows": rows_json(q.rows()),
            "seconds": report.seconds,
            "rows_per_s": figure("rows_per_s"),
            "scanned_bytes_per_s": figure("scanned_gb_per_s") * 1e9,
            "lineitem_rows": report.detail["lineitem_rows"],
            "verified": report.verification.passed(),
            "verdict": report.verification.verdict(),
            "verification": report.verification.why(),
            "partition_pages": q.partition_pages(),
            "setup": report.setup,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "TPC-H {} SF {} ({} layout): {} threads ({}), {:.2} ms best of {}, {:.0} rows/s, {:.2} GB/s scanned",
            args.query.to_uppercase(),
            args.sf,
            args.layout,
            report.threads,
            args.place.strategy()?,
            report.seconds * 1e3,
            args.repeat,
            figure("rows_per_s"),
            figure("scanned_gb_per_s")
        );
        for r in q.rows() {
            println!("  {r}");
        }
        crate::shared::print_verdict(&report, "");
    }
    Ok(verdict_exit(&report.verification))
}
