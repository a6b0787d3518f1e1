//! `scalescope import`: a CSV measured elsewhere becomes a results directory (the
//! parsing and the header live in the results crate).

use std::process::ExitCode;

use anyhow::{bail, Context};
use scalescope_results::import::{check_fits, header, parse_csv, ImportOptions};
use scalescope_results::store::ResultsStore;

use crate::cli::ImportArgs;

pub fn run(args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let s = &args.source;
    if s.synthetic.is_none() && s.hwloc_xml.is_none() && s.sysfs_root.is_none() {
        bail!("the machine the curve was measured on is needed: give --synthetic SPEC, --hwloc-xml FILE or --sysfs-root DIR");
    }
    let topo = crate::shared::load_topology(s)?;
    let file = args.csv.display().to_string();
    let text = std::fs::read_to_string(&args.csv).with_context(|| format!("reading {file}"))?;
    let placement = match &args.placement {
        Some(p) => Some(
            p.parse()
                .map_err(|e| anyhow::anyhow!("--placement `{p}`: {e}"))?,
        ),
        None => None,
    };
    let mut imported = parse_csv(
        &text,
        &ImportOptions {
            file: file.clone(),
            placement,
            lower_is_better: args.lower_is_better,
        },
    )?;
    imported.plan.options.oversubscribe = args.oversubscribe;
    check_fits(&imported, &topo, &file)?;
    let h = header(&imported, &topo, &file, env!("CARGO_PKG_VERSION"));
    let mut store = ResultsStore::create(&args.out, &h)?;
    for r in &imported.runs {
        store.append(r)?;
    }
    println!(
        "{}: {} runs at {} thread counts imported (machine: {})",
        store
            .dir()
            .join(scalescope_results::store::RESULTS_FILE)
            .display(),
        imported.runs.len(),
        imported.plan.threads.len(),
        topo.summary()
    );
    Ok(ExitCode::SUCCESS)
}
