//! `scalescope tpch q1|q6`: the query on this machine, its result rows checked
//! against the reference answers where they exist.

use std::process::ExitCode;

use scalescope_report::kernels::{tpch_document, tpch_text, TpchRun};
use scalescope_workloads::execute_with;
use scalescope_workloads::tpch::Tpch;

use crate::cli::TpchArgs;
use crate::shared::{pinned_pool, verdict_exit};

pub fn run(args: &TpchArgs) -> anyhow::Result<ExitCode> {
    let (layout, tbl) = (args.layout, args.tbl.clone());
    let mut q = Tpch::new(&args.query, args.sf, layout, args.repeat, tbl)?;
    q.force = args.force;
    let working =
        crate::progress::working(&format!("tpch {} at scale factor {}", args.query, args.sf));
    let pool = pinned_pool(&args.run.place, args.run.threads)?;
    let report = execute_with(&mut q, &pool, &args.inputs.inputs())?;
    drop(working);
    let (layout, placement) = (layout.to_string(), args.run.place.strategy()?.to_string());
    let run = TpchRun {
        query: &args.query,
        sf: args.sf,
        layout: &layout,
        repeat: args.repeat,
        placement: &placement,
        rows: q.rows(),
    };
    if args.run.json {
        let doc = tpch_document(&run, &report, q.partition_pages());
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", tpch_text(&run, &report));
    }
    Ok(verdict_exit(&report.verification))
}
