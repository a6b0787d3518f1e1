//! scalescope's own tidy CSV files as an interface (docs/json.md): the report's
//! `curves.csv` and the sweep's `summary.csv`. Their column names live here, beside
//! [`crate::import`], which reads both back, so a writer and the reader cannot drift
//! apart; and how every number is written (its shortest form that reads back exactly).
//! The writers (`scalescope-report`, `scalescope-analysis::summary`) write through the
//! `csv` crate, which quotes what needs quoting (RFC 4180).

/// The report's `curves.csv`: one row per measured point of every curve.
/// `time_median_secs` and `metric_median` are the point's measured values (the figure
/// of merit named by `basis`, `metric:NAME`); the other numeric columns are derived
/// from them and recomputed by the analysis of an imported copy.
pub const CURVES_COLUMNS: [&str; 19] = [
    "results",
    "placement",
    "mem",
    "threads",
    "runs",
    "perf",
    "speedup",
    "speedup_sd",
    "efficiency",
    "karp_flatt",
    "time_median_secs",
    "time_ci95_lo_secs",
    "time_ci95_hi_secs",
    "metric_median",
    "packages",
    "numa_nodes",
    "cores",
    "smt_shared",
    "basis",
];

/// The sweep's `summary.csv`: these columns, then `NAME_median` and `NAME_speedup` per
/// figure of merit. `wall_median_secs` and each `NAME_median` are measured values; the
/// others are derived.
pub const SUMMARY_COLUMNS: [&str; 17] = [
    "threads",
    "placement",
    "mem",
    "runs",
    "failed",
    "wall_median_secs",
    "wall_mean_secs",
    "wall_min_secs",
    "wall_max_secs",
    "wall_stddev_secs",
    "wall_ci95_lo_secs",
    "wall_ci95_hi_secs",
    "outliers",
    "speedup",
    "efficiency",
    "placement_ok",
    "more_threads_than_planned",
];

/// A figure of merit's columns in `summary.csv`: its median (measured), its speedup
/// (derived).
pub fn summary_metric_columns(name: &str) -> [String; 2] {
    [format!("{name}_median"), format!("{name}_speedup")]
}

/// A number as the tidy files write it: the shortest decimal that reads back as the
/// same `f64` (Rust's `Display`, never an exponent), so nothing is lost on import.
pub fn number(x: f64) -> String {
    x.to_string()
}

/// An optional number: empty when absent.
pub fn opt_number(x: Option<f64>) -> String {
    x.map(number).unwrap_or_default()
}

/// An optional value of any kind: empty when absent.
pub fn opt_text<T: ToString>(x: Option<T>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

/// scalescope's own tidy files, told apart by a column only they have.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Layout {
    /// The report's `curves.csv`: the medians `time_median_secs` and `metric_median`.
    Curves,
    /// The sweep's `summary.csv`: `wall_median_secs` and `NAME_median` per metric.
    Summary,
}

impl Layout {
    pub(crate) fn of(names: &[String]) -> Option<Layout> {
        let has = |n: &str| names.iter().any(|c| c == n);
        if has("time_median_secs") && has("metric_median") {
            Some(Layout::Curves)
        } else if has("wall_median_secs") {
            Some(Layout::Summary)
        } else {
            None
        }
    }

    /// The column holding the wall time.
    pub(crate) fn seconds_column(self) -> &'static str {
        match self {
            Layout::Curves => "time_median_secs",
            Layout::Summary => "wall_median_secs",
        }
    }

    /// What a column other than the fixed ones holds: a metric (its name), or `None`
    /// for a column derived from the measured values (not imported).
    pub(crate) fn metric(self, name: &str, names: &[String]) -> Option<String> {
        let derived = match self {
            Layout::Curves => name != "metric_median" && CURVES_COLUMNS.contains(&name),
            Layout::Summary => {
                SUMMARY_COLUMNS.contains(&name)
                    || name
                        .strip_suffix("_speedup")
                        .is_some_and(|m| names.contains(&summary_metric_columns(m)[0]))
            }
        };
        match (self, name.strip_suffix("_median")) {
            (Layout::Summary, Some(m)) if !derived && !m.is_empty() => Some(m.to_string()),
            _ => (!derived).then(|| name.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_back_exactly() {
        for x in [
            0.5,
            2.0,
            1e-7,
            1.0 / 3.0,
            8.080000000000002,
            1e300,
            f64::MIN_POSITIVE,
        ] {
            assert_eq!(number(x).parse::<f64>(), Ok(x), "{x}");
        }
        assert_eq!(number(2.0), "2");
        assert_eq!(opt_number(None), "");
    }
}
