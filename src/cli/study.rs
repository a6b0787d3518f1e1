//! `scalescope study`: the flags of the five published studies.

use std::path::PathBuf;

use clap::Args;

use super::SourceArgs;

#[derive(Debug, Args)]
pub struct StudyArgs {
    /// `list`, or a study: graph-mining, numa-structure, tpch-numa, sync, smt-mpi.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Time the study may take (90s, 10m, 1h, 2m30s): inputs are sized to fit it
    /// [default: 10m].
    #[arg(long, value_name = "DURATION")]
    pub budget: Option<String>,
    /// The study's directory (default: `scalescope-results/study-NAME-<UTC date and
    /// time>`). Given again after an interruption, the study finishes its plan.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the plan (commands, thread counts, sizes, time estimate); run nothing
    /// but the short sizing probes.
    #[arg(long)]
    pub dry_run: bool,
    /// Plan for another machine (with --dry-run only).
    #[command(flatten)]
    pub source: SourceArgs,
}
