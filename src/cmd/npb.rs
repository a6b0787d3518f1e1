//! `scalescope npb ...`: NAS Parallel Benchmarks kernels run in this process through
//! the shared trial loop. The exit status is the verdict's: a failed verification
//! is never a quiet number.

use std::process::ExitCode;

use scalescope_report::kernels::{npb_document, npb_text};
use scalescope_workloads::npb::{ep::Ep, ft::Ft, is::Is};
use scalescope_workloads::{execute, Workload};

use crate::cli::{NpbArgs, NpbCommand};
use crate::shared::{pinned_pool, verdict_exit};

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
    let pool = pinned_pool(&args.run.place, args.run.threads)?;
    let report = execute(workload.as_mut(), &pool)?;
    drop(working);
    if args.run.json {
        let doc = npb_document(name, &report);
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        let placement = args.run.place.strategy()?.to_string();
        print!("{}", npb_text(name, &args.class, &placement, &report));
    }
    Ok(verdict_exit(&report.verification))
}
