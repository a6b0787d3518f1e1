//! `scalescope study`: the flags of the five published studies.

use std::path::PathBuf;

use clap::Args;

use super::SourceArgs;

#[derive(Debug, Args)]
pub struct StudyArgs {
    /// A study: graph-mining, numa-structure, tpch-numa, sync, smt-mpi; or `list`
    /// (the same as giving no NAME): what each reproduces.
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
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

impl StudyArgs {
    /// The study NAME names; `None` for the list (`list`, or no NAME and no other
    /// flag). Flags that only a study uses, given without one, are an error.
    pub fn study(&self) -> anyhow::Result<Option<&str>> {
        let s = &self.source;
        let flags = self.dry_run || self.out.is_some() || self.budget.is_some();
        match self.name.as_deref() {
            Some("list") => Ok(None),
            Some(name) => Ok(Some(name)),
            None if flags
                || s.sysfs_root.is_some()
                || s.hwloc_xml.is_some()
                || s.synthetic.is_some() =>
            {
                anyhow::bail!("which study? give its NAME: graph-mining, numa-structure, tpch-numa, sync or smt-mpi (`scalescope study list` says what each reproduces)")
            }
            None => Ok(None),
        }
    }
}
