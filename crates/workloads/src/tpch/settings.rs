//! TPC-H's settings, typed once: the `tpch` command's flags and `sweep --workload
//! tpch --param` keys are both this struct's, with its one set of defaults.

use std::path::PathBuf;

use scalescope_model::value::Count;

use super::data::Layout;

/// Which query runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Query {
    /// Pricing summary report: eight aggregates in four groups.
    #[default]
    Q1,
    /// Forecasting revenue change: one sum over a selective scan.
    Q6,
}

impl Query {
    pub fn as_str(self) -> &'static str {
        match self {
            Query::Q1 => "q1",
            Query::Q6 => "q6",
        }
    }
}

impl std::str::FromStr for Query {
    type Err = String;
    fn from_str(s: &str) -> Result<Query, String> {
        match s {
            "q1" => Ok(Query::Q1),
            "q6" => Ok(Query::Q6),
            other => Err(format!("`{other}` is not q1 or q6")),
        }
    }
}

impl std::fmt::Display for Query {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A TPC-H scale factor: above 0, at most 1000 (about 6 billion lineitem rows).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct ScaleFactor(f64);

impl ScaleFactor {
    /// The scale factor when none is given: 0.1 (600,000 rows, a referenced size).
    pub const DEFAULT: ScaleFactor = ScaleFactor(0.1);
    pub const MAX: f64 = 1000.0;

    pub fn get(self) -> f64 {
        self.0
    }
}

impl std::str::FromStr for ScaleFactor {
    type Err = String;
    fn from_str(s: &str) -> Result<ScaleFactor, String> {
        match s.trim().parse::<f64>() {
            Ok(sf) if sf > 0.0 && sf <= ScaleFactor::MAX => Ok(ScaleFactor(sf)),
            Ok(_) => Err(format!(
                "scale factor {s} is not in (0, {}]",
                ScaleFactor::MAX
            )),
            Err(_) => Err(format!(
                "`{s}` is not a scale factor (a number in (0, 1000])"
            )),
        }
    }
}

impl std::fmt::Display for ScaleFactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Query runs, the fastest counting.
pub type Repeat = Count<1, 1_000_000>;

/// Query runs when none is given.
pub const DEFAULT_REPEAT: Repeat = Repeat::clamped(5);

/// TPC-H Q1 or Q6 (`tpch QUERY` and its flags; a sweep's `query`, `sf`, `layout`,
/// `tbl`, `repeat`, `force`).
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct TpchSettings {
    /// q1 or q6.
    #[arg(default_value_t = Query::default())]
    pub query: Query,
    /// Scale factor (reference answers exist for 0.01, 0.1 and 1).
    #[arg(long, default_value_t = ScaleFactor::DEFAULT)]
    pub sf: ScaleFactor,
    /// numa: each thread builds (first-touches) the partition it scans; naive: one
    /// thread builds everything.
    #[arg(long, default_value_t = Layout::Numa)]
    pub layout: Layout,
    /// Read lineitem from a dbgen .tbl file instead of generating it.
    #[arg(long, value_name = "FILE")]
    pub tbl: Option<PathBuf>,
    /// Query runs; the fastest counts.
    #[arg(long, default_value_t = DEFAULT_REPEAT)]
    pub repeat: Repeat,
    /// Go ahead even when the memory estimate exceeds what is available.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
        default_value_t = false, action = clap::ArgAction::Set)]
    pub force: bool,
}

impl Default for TpchSettings {
    fn default() -> TpchSettings {
        TpchSettings {
            query: Query::default(),
            sf: ScaleFactor::DEFAULT,
            layout: Layout::Numa,
            tbl: None,
            repeat: DEFAULT_REPEAT,
            force: false,
        }
    }
}
