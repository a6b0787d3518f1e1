//! The command line: every flag, its help and its examples. Parsing does no I/O; the
//! commands turn these values into library requests.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

const ABOUT: &str =
    "Why does my parallel program stop scaling? Finds the machine's true topology, \
places threads portably, and explains the speedup curve.";

const EXAMPLES: &str = "\
Examples:
  scalescope                               run the tour on this machine
  scalescope topo                          this machine's topology and numbering traps
  scalescope topo --synthetic 'package:2 core:24 pu:2 numbering=interleaved'
  scalescope place --strategy cores-first --threads 8
  scalescope place --cpus 'S0:0-3@S1:0-3' --json";

#[derive(Debug, Parser)]
#[command(name = "scalescope", version, about = ABOUT, after_help = EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the machine as it really is: packages, NUMA nodes, caches, cores, SMT
    /// siblings, offline and forbidden CPUs, distances, and where the numbering misleads.
    #[command(after_help = "\
Examples:
  scalescope topo
  scalescope topo --json > machine.json
  scalescope topo --sysfs-root ./recorded-tree
  scalescope topo --hwloc-xml lstopo-output.xml
  scalescope topo --synthetic 'package:2 numa:1 core:24 pu:2 numbering=smt-last'")]
    Topo(TopoArgs),
    /// Compute where each thread goes under a strategy, and print it in the syntax of
    /// OpenMP, Intel OpenMP, likwid-pin, taskset, numactl, Open MPI and Slurm.
    #[command(after_help = "\
Examples:
  scalescope place --strategy compact --threads 4
  scalescope place --strategy scatter --threads 16 --granularity core
  scalescope place --strategy smt-pairs --threads 16 --synthetic 'package:2 core:24 pu:2'
  scalescope place --cpus 'E:S0:4:1:2' --json
  scalescope place --strategy cores-first --threads 8 --numa-nodes 1")]
    Place(PlaceArgs),
}

/// Where the topology comes from (default: this machine).
#[derive(Debug, Args, Clone, Default)]
#[group(multiple = false)]
pub struct SourceArgs {
    /// Read a recorded Linux tree as if DIR were `/`.
    #[arg(long, value_name = "DIR")]
    pub sysfs_root: Option<PathBuf>,
    /// Read an hwloc 2.x XML export (`lstopo --of xml`).
    #[arg(long, value_name = "FILE")]
    pub hwloc_xml: Option<PathBuf>,
    /// Build a machine from a description: `package:2 core:24 pu:2`, optionally with
    /// `numa:N`, `l3:N`, `die:N` and `numbering=linear|smt-last|interleaved`.
    #[arg(long, value_name = "SPEC")]
    pub synthetic: Option<String>,
}

#[derive(Debug, Args)]
pub struct TopoArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Print the versioned JSON model (schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PlaceArgs {
    #[command(flatten)]
    pub source: SourceArgs,
    /// compact, scatter, cores-first, smt-pairs or spread.
    #[arg(
        long,
        short = 's',
        default_value = "cores-first",
        conflicts_with = "cpus"
    )]
    pub strategy: String,
    /// Number of threads (with --cpus: defaults to the number of CPUs named).
    #[arg(long, short = 't')]
    pub threads: Option<usize>,
    /// Bind each thread to one hardware thread, or to all of its core's.
    #[arg(long, default_value = "thread", value_parser = ["thread", "core"])]
    pub granularity: String,
    /// A likwid-pin expression (`S0:0-3@S1:0-3`, `N:0-7`, `M0:0-1`, `E:S0:4:1:2`,
    /// `S:scatter`) or a plain CPU list (`0-3,8`).
    #[arg(long, value_name = "EXPR")]
    pub cpus: Option<String>,
    /// Use only these NUMA nodes (OS indexes, e.g. `0,2` or `0-1`).
    #[arg(long, value_name = "LIST", conflicts_with = "packages")]
    pub numa_nodes: Option<String>,
    /// Use only these packages (logical indexes in hardware order, e.g. `1`).
    #[arg(long, value_name = "LIST")]
    pub packages: Option<String>,
    /// Allow more threads than usable PUs (threads then share PUs).
    #[arg(long)]
    pub oversubscribe: bool,
    /// Print JSON: {"threads":[{"thread":0,"cpus":[..]}..], "renderings":{..}}.
    #[arg(long)]
    pub json: bool,
}
