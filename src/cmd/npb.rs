//! `scalescope npb ...`: NAS Parallel Benchmarks kernels run in this process. A failed
//! verification is an error exit, never a quiet number.

use std::process::ExitCode;

use scalescope_workloads::npb_ep::Ep;
use scalescope_workloads::npb_ft::Ft;
use scalescope_workloads::npb_is::Is;
use scalescope_workloads::{execute, Workload};

use crate::cli::{NpbArgs, NpbCommand};

pub fn run(cmd: &NpbCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        NpbCommand::Ep(args) => kernel("EP", Box::new(Ep::new(&args.class)?), args),
        NpbCommand::Is(args) => kernel("IS", Box::new(Is::new(&args.class)?), args),
        NpbCommand::Ft(args) => kernel("FT", Box::new(Ft::new(&args.class)?), args),
    }
}

fn kernel(name: &str, mut workload: Box<dyn Workload>, args: &NpbArgs) -> anyhow::Result<ExitCode> {
    let working =
        super::progress::working(&format!("npb {} class {}", name.to_lowercase(), args.class));
    let strategy = args.place.strategy()?;
    let pool = super::pinned_pool(&args.place, args.threads)?;
    let threads = pool.threads();
    let report = execute(workload.as_mut(), &pool)?;
    drop(working);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "kind": format!("scalescope.npb-{}", name.to_lowercase()),
                "schema_version": super::JSON_SCHEMA_VERSION,
                "verified": report.verified,
                "mops": report.figures["mops"],
                "seconds": report.seconds,
                "report": report,
            }))?
        );
    } else {
        println!(
            "NPB {name} class {}: {} threads ({}), {:.4} s, {:.2} Mop/s",
            args.class, threads, strategy, report.seconds, report.figures["mops"]
        );
        println!(
            "verification: {} ({})",
            if report.verified {
                "SUCCESSFUL"
            } else {
                "FAILED"
            },
            report.verification
        );
    }
    if !report.verified {
        anyhow::bail!(
            "NPB {name} class {} failed verification: {}",
            args.class,
            report.verification
        );
    }
    Ok(ExitCode::SUCCESS)
}
