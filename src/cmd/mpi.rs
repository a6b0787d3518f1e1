//! `scalescope mpi-check` (the session's `launch::check`, printed as each launch
//! ends, exit 1 unless every rank was placed and every run verified) and the
//! hidden `__probe` each rank runs.

use std::process::ExitCode;

use crate::cli::MpiCheckArgs;

pub fn run(args: &MpiCheckArgs) -> anyhow::Result<ExitCode> {
    let topo = scalescope_topo::Source::Live.load()?;
    let doc = scalescope_session::launch::check(&topo, &args.settings(), |l| {
        if !args.json {
            print!("{}", scalescope_report::kernels::launch_text(l));
        }
    })?;
    doc.notes.iter().for_each(|n| eprintln!("note: {n}"));
    match args.json {
        true => println!("{}", serde_json::to_string_pretty(&doc)?),
        false => doc.findings.iter().for_each(|f| println!("finding: {f}")),
    }
    Ok(ExitCode::from(u8::from(!doc.all_ok())))
}

pub fn probe() -> anyhow::Result<ExitCode> {
    let probe = scalescope_sweep::launch::probe_here().map_err(anyhow::Error::msg)?;
    println!("{}", serde_json::to_string(&probe)?);
    Ok(ExitCode::SUCCESS)
}
