//! `scalescope predict`: the request from the flags, the prediction printed (text
//! or JSON), and its report section written when asked.

use std::process::ExitCode;

use scalescope_session::predict::{prediction, Request};

use crate::cli::PredictArgs;

pub fn run(args: &PredictArgs) -> anyhow::Result<ExitCode> {
    let s = &args.source;
    let named = s.sysfs_root.is_some() || s.hwloc_xml.is_some() || s.synthetic.is_some();
    let p = prediction(&Request {
        from: args.from.clone(),
        to: args.to.clone(),
        source: named.then(|| crate::shared::source_of(s)),
        ceilings: args.ceilings.clone(),
        node_gbps: args.node_gbps,
        from_ceilings: args.from_ceilings.clone(),
        basis: args.basis.clone(),
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&p)?);
    } else {
        print!("{}", scalescope_report::predict::text(&p));
    }
    if let Some(dir) = &args.out {
        let section = scalescope_report::predict::section(&p, "");
        let index = scalescope_report::html::write_dir(&[], &[section], dir)?;
        eprintln!("report: {}", index.display());
    }
    Ok(ExitCode::SUCCESS)
}
