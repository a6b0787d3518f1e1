//! The graph commands' and the synchronisation study's flags: each command its own
//! options (BFS never shows PageRank's), the placement options shared with `place`.

use std::path::PathBuf;

use clap::Args;

use super::PlacementArgs;

#[derive(Debug, Args)]
pub struct SyncArgs {
    /// Slots in the shared table (fewer = more contention).
    #[arg(long, default_value_t = 4096)]
    pub table: usize,
    /// Batch sizes (updates per critical section).
    #[arg(long, default_value = "1,2,4,8,16,32,64")]
    pub batches: String,
    /// Updates per thread per measurement.
    #[arg(long, default_value_t = 200_000)]
    pub updates: usize,
    /// Stripes for striped locks.
    #[arg(long, default_value_t = 256)]
    pub stripes: usize,
    /// Threads [default: every usable PU].
    #[arg(long, short = 't')]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub place: PlacementArgs,
    /// Print JSON (versioned; schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct GraphExportArgs {
    /// A file (SNAP edge list, .el, Matrix Market .mtx, or a .csr cache) or
    /// kron:SCALE / uniform:SCALE.
    #[arg(long)]
    pub graph: String,
    /// Where to write: an edge list, or a binary cache when it ends in `.csr`.
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct GraphBfsArgs {
    /// A file (SNAP edge list, .el, Matrix Market .mtx, or a .csr cache) or
    /// kron:SCALE / uniform:SCALE.
    #[arg(long)]
    pub graph: String,
    /// The vertex to start from [default: the highest-degree vertex].
    #[arg(long)]
    pub source: Option<u32>,
    /// Threads [default: every usable PU].
    #[arg(long, short = 't')]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub place: PlacementArgs,
    /// Print JSON (versioned; schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct GraphPrArgs {
    /// A file (SNAP edge list, .el, Matrix Market .mtx, or a .csr cache) or
    /// kron:SCALE / uniform:SCALE.
    #[arg(long)]
    pub graph: String,
    /// Synchronisation of the score updates: pull (none needed), coarse-lock,
    /// striped-locks:K, atomic, htm.
    #[arg(long, default_value = "pull")]
    pub sync: String,
    /// Score updates per critical section or transaction.
    #[arg(long, default_value_t = 1)]
    pub batch: usize,
    /// Stop when the sum of absolute changes is below this.
    #[arg(long, default_value_t = 1e-4)]
    pub tolerance: f64,
    /// Threads [default: every usable PU].
    #[arg(long, short = 't')]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub place: PlacementArgs,
    /// Print JSON (versioned; schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct GraphCountArgs {
    /// triangle, c4, diamond or k4.
    #[arg(long)]
    pub pattern: String,
    /// Vertex-induced instead of non-induced (c4 and diamond).
    #[arg(long)]
    pub induced: bool,
    /// A file (SNAP edge list, .el, or Matrix Market .mtx) or kron:SCALE / uniform:SCALE.
    #[arg(long)]
    pub graph: String,
    /// Threads [default: every usable PU].
    #[arg(long, short = 't')]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub place: PlacementArgs,
    /// Print JSON (versioned; schema in docs/json.md) instead of text.
    #[arg(long)]
    pub json: bool,
}
