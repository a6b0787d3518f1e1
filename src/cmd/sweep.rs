//! `scalescope sweep`: settings -> (dry run | session) -> summary table, findings and
//! where the files are. Ctrl-C and SIGTERM stop the current run's whole process
//! group, keep every finished run on disk and exit 130.

use std::process::ExitCode;

use anyhow::bail;
use scalescope_report::Exporter;
use scalescope_session::run::{self, Hooks, Options};
use scalescope_session::{prepare, SessionError};

use crate::cli::SweepArgs;
use crate::progress::Bar;

/// Exit status when some runs failed (0: all ok, 130: interrupted).
pub const EXIT_RUNS_FAILED: u8 = 3;

pub fn run(args: &SweepArgs) -> anyhow::Result<ExitCode> {
    let source_given = args.source.sysfs_root.is_some()
        || args.source.hwloc_xml.is_some()
        || args.source.synthetic.is_some();
    if source_given && !args.dry_run {
        bail!("--sysfs-root/--hwloc-xml/--synthetic only plan a sweep (--dry-run); real runs use this machine");
    }
    let topo = crate::shared::load_topology(&args.source)?;
    let settings = args.settings();
    for n in scalescope_session::launch::sweep_notes(&settings) {
        eprintln!("note: {n}");
    }
    if args.launch.submit {
        return submit(args, &settings, &topo);
    }
    if args.dry_run && !args.resume {
        let planned = prepare::plan_new(&settings, &topo).map_err(flag_hint)?;
        print!("{}", run::dry_run_text(&planned));
        return Ok(ExitCode::SUCCESS);
    }
    let ready = if args.resume {
        prepare::resume(&settings, &topo)
    } else {
        prepare::start(&settings, &topo)
    }
    .map_err(flag_hint)?;
    crate::shared::warn_set_aside(&ready.store);
    let interrupt = crate::shared::interrupt_flag()?;
    let mut bar = Bar::new(!crate::progress::may_draw());
    let hooks = Hooks {
        progress: &mut bar,
        interrupt: &interrupt,
    };
    let done = run::run(ready, hooks, &options(args))?;
    print_outcome(args, &done)?;
    exit_code(&done)
}

/// `--submit`: the job scripts (dry run), or the jobs submitted (or those missing,
/// with --resume) and their runs gathered until they end.
fn submit(
    args: &SweepArgs,
    settings: &scalescope_session::settings::SweepSettings,
    topo: &scalescope_topo::Topology,
) -> anyhow::Result<ExitCode> {
    use scalescope_session::submit;
    let sub = args.launch.submit_settings(args.resume);
    if args.dry_run {
        let scripts = submit::dry_run(settings, &sub, topo).map_err(flag_hint)?;
        print!("{scripts}");
        return Ok(ExitCode::SUCCESS);
    }
    let interrupt = crate::shared::interrupt_flag()?;
    let say = |line: &str| eprintln!("{line}");
    let done = submit::run(settings, &sub, topo, &interrupt, &options(args), say);
    let done = done.map_err(flag_hint)?;
    if done.failed_runs > 0 || done.interrupted {
        eprintln!(
            "the jobs' missing runs: `scalescope sweep --submit --resume --out {}` gathers what they left and submits the rest",
            done.dir.display()
        );
    }
    print_outcome(args, &done)?;
    exit_code(&done)
}

fn options(args: &SweepArgs) -> Options {
    Options {
        baseline: args.baseline.clone().unwrap_or_default(),
        write_report: true,
    }
}

/// A library error with what to do about it here (the flag that sets the setting
/// it names is added where every error is printed).
fn flag_hint(e: SessionError) -> anyhow::Error {
    match &e {
        SessionError::Results(scalescope_model::ResultsError::ResultsExist { .. }) => {
            anyhow::Error::new(e)
                .context("pass --resume to finish that sweep, or choose another --out")
        }
        _ => e.into(),
    }
}

fn print_outcome(args: &SweepArgs, done: &run::Finished) -> anyhow::Result<()> {
    if args.json {
        println!("{}", serde_json::to_string_pretty(&done.json())?);
    } else {
        print!("{}", done.table());
        let text = scalescope_report::TextExporter.export(std::slice::from_ref(&done.set));
        print!("\n{}", String::from_utf8_lossy(&text));
    }
    let lines = run::problems(&done.set.records).into_iter();
    let lines = lines.chain(scalescope_session::runtime::lines(&done.set.records));
    for line in lines.chain(run::setup_lines(done)) {
        eprintln!("{line}");
    }
    let report = done
        .report_index
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    eprintln!(
        "results: {}  summary: {}  report: {report}",
        done.results.display(),
        done.summary_csv.display()
    );
    Ok(())
}

fn exit_code(done: &run::Finished) -> anyhow::Result<ExitCode> {
    if done.interrupted {
        eprintln!(
            "interrupted: {} runs kept; finish with `scalescope sweep --resume --out {}`",
            done.set.records.len(),
            done.dir.display()
        );
        return Ok(ExitCode::from(130));
    }
    if done.failed_runs > 0 {
        eprintln!(
            "{} runs did not succeed (see the table and the logs)",
            done.failed_runs
        );
        return Ok(ExitCode::from(EXIT_RUNS_FAILED));
    }
    Ok(ExitCode::SUCCESS)
}
