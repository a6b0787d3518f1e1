//! STREAM's settings, typed once: the `mem stream` command's flags and `sweep
//! --workload stream --param` keys are both this struct's, with one set of defaults.

use scalescope_model::value::{Bytes, Count, Secs};

/// Iterations of STREAM's kernels (the first is not counted).
pub type NTimes = Count<2, 1_000_000>;
/// Seconds each sustained block lasts (0: none; at most an hour).
pub type Sustain = Secs<0, 3600>;

/// Iterations when none are given.
pub const DEFAULT_NTIMES: NTimes = NTimes::clamped(10);

/// STREAM copy, scale, add and triad, and the write and read ceilings.
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct StreamSettings {
    /// Bytes per array (`200MB`, `1GiB`) [default: 4 x the total last-level cache].
    #[arg(long)]
    pub size: Option<Bytes>,
    /// Iterations; the best after the first counts.
    #[arg(long, default_value_t = DEFAULT_NTIMES)]
    pub ntimes: NTimes,
    /// Non-temporal (streaming) stores.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
        default_value_t = false, action = clap::ArgAction::Set)]
    pub nt: bool,
    /// Seconds of back-to-back sweeps the write, write_nt and read kernels each
    /// also run alone after the iterations, averaged over the block as likwid-bench
    /// measures (the sustained ceilings; 0: none); a trial of half as long again
    /// picks the read's loop.
    #[arg(long, value_name = "SECS", default_value_t = Sustain::default())]
    pub sustain: Sustain,
}

impl Default for StreamSettings {
    fn default() -> StreamSettings {
        StreamSettings {
            size: None,
            ntimes: DEFAULT_NTIMES,
            nt: false,
            sustain: Sustain::default(),
        }
    }
}
