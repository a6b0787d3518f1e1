//! The commands about a machine other than this one, named by `--synthetic`,
//! `--hwloc-xml` or `--sysfs-root`: `scalescope import` (a CSV measured there becomes
//! a results directory; the parsing and the header live in the results crate) and
//! `scalescope predict` (the request from the flags, the prediction for that machine
//! printed as text or JSON, and its report section written when asked).

use std::process::ExitCode;

use anyhow::bail;
use scalescope_analysis::predict::request::prediction;
use scalescope_model::import::{check_fits, header, parse_csv_for, ImportOptions};
use scalescope_model::prediction_files::PredictFiles;
use scalescope_model::store::ResultsStore;

use crate::cli::{ImportArgs, PredictArgs};

pub fn import(args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let s = &args.source;
    if s.synthetic.is_none() && s.hwloc_xml.is_none() && s.sysfs_root.is_none() {
        bail!("the machine the curve was measured on is needed: give --synthetic SPEC, --hwloc-xml FILE or --sysfs-root DIR");
    }
    let topo = crate::shared::load_topology(s)?;
    let file = args.csv.display().to_string();
    let kind = scalescope_files::Kind::CSV;
    let text = scalescope_files::input::open_arg(&args.csv, kind)?.read_text()?;
    let opts = ImportOptions {
        file: file.clone(),
        placement: args.placement.clone(),
        lower_is_better: args.lower_is_better,
    };
    let mut imported = parse_csv_for(&text, &opts, args.results.as_deref())?;
    imported.plan.options.oversubscribe = args.oversubscribe;
    check_fits(&imported, &topo, &file)?;
    let h = header(&imported, &topo, &file, env!("CARGO_PKG_VERSION"));
    let path = ResultsStore::create_complete(&args.out, &h, &imported.runs)?;
    println!(
        "{}: {} runs at {} thread counts imported (machine: {})",
        path.display(),
        imported.runs.len(),
        imported.plan.threads.len(),
        topo.summary()
    );
    Ok(ExitCode::SUCCESS)
}

pub fn predict(args: &PredictArgs) -> anyhow::Result<ExitCode> {
    let s = &args.source;
    let named = s.sysfs_root.is_some() || s.hwloc_xml.is_some() || s.synthetic.is_some();
    let inputs = crate::shared::predict_inputs(&PredictFiles {
        from: args.from.clone(),
        to: args.to.clone(),
        source: named.then(|| crate::shared::source_of(s)),
        ceilings: args.ceilings.clone(),
        from_ceilings: args.from_ceilings.clone(),
    })?;
    let p = prediction(&inputs, args.basis.as_deref(), args.node_gbps)?;
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
