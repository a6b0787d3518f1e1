//! `scalescope sync`: the synchronisation mechanisms against the batch size, with
//! their linear fits, run as the `sync` workload through the shared trial loop.

use std::process::ExitCode;

use scalescope_workloads::execute;
use scalescope_workloads::sync::model::describe;
use scalescope_workloads::sync::workload::{SyncBench, SyncSettings};

use crate::cli::SyncArgs;
use scalescope_report::kernels::verdict_line;

use crate::shared::{pinned_pool, verdict_exit};

pub fn run(args: &SyncArgs) -> anyhow::Result<ExitCode> {
    let mut bench = SyncBench::new(SyncSettings {
        batches: args.batches.clone(),
        table: args.table,
        updates: args.updates,
        stripes: args.stripes,
        reps: args.reps,
    })?;
    let working = crate::progress::working("sync study");
    let pool = pinned_pool(&args.run.place, args.run.threads)?;
    let report = execute(&mut bench, &pool)?;
    drop(working);
    if args.run.json {
        let doc = serde_json::json!({"kind": "scalescope.sync", "schema_version": crate::shared::JSON_SCHEMA_VERSION, "threads": report.threads, "table": args.table, "reps": args.reps, "curves": bench.curves(), "claims": bench.claims(),
            "note": SyncBench::htm_note(), "verified": report.verification.passed(),
            "verdict": report.verification.verdict(), "verification": report.verification.why()});
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(verdict_exit(&report.verification));
    }
    println!("{} threads, {} slots (contention), {} updates per thread per point, {} repetitions; T(N) = A*N + B per critical section, 95% intervals", report.threads, args.table, args.updates, args.reps);
    for c in bench.curves() {
        let pts: Vec<String> = c
            .points
            .iter()
            .map(|p| format!("N={}: {:.1} ns/update", p.batch, p.ns_per_update))
            .collect();
        // The user-facing name is the one the JSON uses (`mark-visited`, `increment`).
        let op = serde_json::to_value(c.op)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        println!(
            "  {op:<13} {:<18} {}  best batch {}",
            c.sync,
            describe(&c.fit),
            c.best_batch
        );
        println!("      {}", pts.join("  "));
    }
    if let Some(n) = SyncBench::htm_note() {
        println!("{n}");
    }
    for c in bench.claims() {
        println!("  {}", c.line());
    }
    println!("{}", verdict_line(&report.verification));
    Ok(verdict_exit(&report.verification))
}
