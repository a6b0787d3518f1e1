//! `scalescope npb ...`: NAS Parallel Benchmarks kernels run in this process through
//! the shared trial loop. The exit status is the verdict's: a failed verification
//! is never a quiet number.

use std::process::ExitCode;

use scalescope_workloads::npb::{ep::Ep, ft::Ft, is::Is};
use scalescope_workloads::{execute, Workload};

use crate::cli::{NpbArgs, NpbCommand};
use crate::shared::{pinned_pool, verdict_exit, verdict_line};

pub fn run(cmd: &NpbCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        NpbCommand::Ep(args) => kernel("EP", Box::new(Ep::new(&args.class)?), args),
        NpbCommand::Is(args) => kernel("IS", Box::new(Is::new(&args.class)?), args),
        NpbCommand::Ft(args) => kernel("FT", Box::new(Ft::new(&args.class)?), args),
    }
}

fn kernel(name: &str, mut workload: Box<dyn Workload>, args: &NpbArgs) -> anyhow::Result<ExitCode> {
    let working =
        crate::progress::working(&format!("npb {} class {}", name.to_lowercase(), args.class));
    let pool = pinned_pool(&args.place, args.threads)?;
    let report = execute(workload.as_mut(), &pool)?;
    drop(working);
    let mops = report.figures.get("mops").copied().unwrap_or(f64::NAN);
    if args.json {
        let doc = serde_json::json!({
            "kind": format!("scalescope.npb-{}", name.to_lowercase()),
            "schema_version": crate::shared::JSON_SCHEMA_VERSION,
            "verified": report.verification.passed(),
            "verdict": report.verification.verdict(),
            "mops": mops,
            "seconds": report.seconds,
            "report": report,
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "NPB {name} class {}: {} threads ({}), {:.4} s, {mops:.2} Mop/s",
            args.class,
            report.threads,
            args.place.strategy()?,
            report.seconds
        );
        println!("{}", verdict_line(&report.verification));
    }
    Ok(verdict_exit(&report.verification))
}
