//! A curve measured elsewhere (a paper's table, another tool's output) as a results
//! directory that analysis, reports and comparisons read like any sweep.
//!
//! The CSV has a header line naming its columns: `threads` (required), then
//! `seconds` (wall time) and/or any other numeric column, a figure of merit (the
//! first one names the basis the analysis uses); optional `placement` (a strategy
//! name), `mem` (a memory policy) and `rep`. Each row is one run; rows of the same
//! point are its repetitions. The machine is the one given on import (its topology
//! decides what a thread count means under the placement); the header's command is
//! of kind `imported` and names the file, so no one mistakes it for a sweep run
//! here.
//!
//! The text is read as CSV (`csv_lines`: RFC 4180 quoting, a byte-order mark,
//! `#` comments). scalescope's own tidy files read back too ([`crate::tidy`]): the
//! report's `curves.csv` (each point one run carrying its medians, the figure its
//! `basis` names; one result set at a time, chosen by its `results` label) and the
//! sweep's `summary.csv`; their derived columns are recomputed by the analysis, not
//! read, and an empty value there is one that was not measured.

use std::collections::BTreeMap;

use scalescope_place::{MemPolicy, Strategy};
use scalescope_topo::Topology;

use crate::csv_lines::{records, Line};
use crate::fingerprint::Fingerprint;
use crate::plan::{Plan, Point};
use crate::setting::{AboutSetting, Setting};
use crate::store::{CommandSpec, Header, MetricSpec, RunRecord, RunStatus, RESULTS_SCHEMA_VERSION};
use crate::tidy::Layout;

/// Why a CSV cannot be imported; each names the line (1-based) and the value.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ImportError {
    #[error(
        "{file}: empty file (expected a header line naming the columns, e.g. `threads,seconds`)"
    )]
    Empty { file: String },
    #[error("{file}:1: no `threads` column (columns: {columns})")]
    NoThreads { file: String, columns: String },
    #[error("{file}:1: no `seconds` or metric column besides threads, placement, mem and rep")]
    NoValue { file: String },
    #[error("{file}:{line}: {detail}")]
    Row {
        file: String,
        line: usize,
        detail: String,
    },
    #[error("{file}: no data rows")]
    NoRows { file: String },
    #[error("{file}: rows of {} result sets ({}): import one, chosen by its `results` label", labels.len(), quoted(labels))]
    SeveralResults { file: String, labels: Vec<String> },
    #[error(
        "{file}: no rows of result set `{wanted}` (the file holds {})",
        quoted(labels)
    )]
    NoSuchResults {
        file: String,
        wanted: String,
        labels: Vec<String>,
    },
    #[error(
        "{file}:{line}: more than the {max} data rows an import takes (each row becomes a run \
         record of about a kilobyte in memory and on disk): import one curve's points and \
         repetitions, or split the file"
    )]
    TooManyRows {
        file: String,
        line: usize,
        max: usize,
    },
    #[error("{file}:{line}: no placement: add a `placement` column or name the placement")]
    NoPlacement { file: String, line: usize },
    #[error("{file}: {threads} threads under {placement} do not fit the machine given ({machine}): {detail}{}",
        if *.oversubscribe { "" } else { " (counts past one thread per PU need oversubscription allowed)" })]
    DoesNotFit {
        file: String,
        threads: usize,
        placement: String,
        machine: String,
        detail: String,
        oversubscribe: bool,
    },
}

/// The most data rows one import takes: each becomes a run record (about 1.3
/// KB in memory, 340 bytes of JSON), so a CSV within its byte limit of short
/// rows (`1,1.0`) would otherwise ask for tens of gigabytes; a curve measured
/// elsewhere has tens to thousands of rows.
pub const MAX_ROWS: usize = 100_000;

/// `a`, `b` as the messages list names.
fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl AboutSetting for ImportError {
    fn setting(&self) -> Option<Setting> {
        match self {
            ImportError::NoPlacement { .. } => Some(Setting::Placement),
            ImportError::DoesNotFit {
                oversubscribe: false,
                ..
            } => Some(Setting::Oversubscribe),
            _ => None,
        }
    }
}

/// How to read the CSV.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// The file's name, for messages and the header.
    pub file: String,
    /// The placement when the CSV has no `placement` column.
    pub placement: Option<Strategy>,
    /// Lower values of the metric columns are better (times, not rates).
    pub lower_is_better: bool,
}

/// The imported runs and the plan they fill.
#[derive(Debug, Clone)]
pub struct Imported {
    pub plan: Plan,
    pub metrics: Vec<MetricSpec>,
    pub runs: Vec<RunRecord>,
}

/// Which columns hold what, read from the header line.
struct Columns {
    threads: usize,
    seconds: Option<usize>,
    placement: Option<usize>,
    mem: Option<usize>,
    rep: Option<usize>,
    /// The result set a row belongs to (the report's `curves.csv` holds several).
    results: Option<usize>,
    /// The figure of merit `metric_median` holds, `time` or `metric:NAME` (curves.csv).
    basis: Option<usize>,
    metrics: Vec<(usize, String)>,
    /// One of scalescope's own files: an empty value cell is a value not measured.
    own: Option<Layout>,
}

fn columns(names: &[String], file: &str) -> Result<Columns, ImportError> {
    let find = |n: &str| names.iter().position(|c| c == n);
    let threads = find("threads").ok_or_else(|| ImportError::NoThreads {
        file: file.into(),
        columns: names.join(", "),
    })?;
    let own = Layout::of(names);
    let fixed = ["threads", "seconds", "placement", "mem", "rep", "results"];
    let metrics: Vec<(usize, String)> = names
        .iter()
        .enumerate()
        .filter(|(_, n)| !fixed.contains(&n.as_str()) && !n.is_empty())
        .filter_map(|(i, n)| match own {
            Some(l) => l.metric(n, names).map(|m| (i, m)),
            None => Some((i, n.clone())),
        })
        .collect();
    let c = Columns {
        threads,
        seconds: find(own.map_or("seconds", Layout::seconds_column)),
        placement: find("placement"),
        mem: find("mem"),
        rep: find("rep"),
        results: find("results"),
        basis: (own == Some(Layout::Curves))
            .then(|| find("basis"))
            .flatten(),
        metrics,
        own,
    };
    if c.seconds.is_none() && c.metrics.is_empty() {
        return Err(ImportError::NoValue { file: file.into() });
    }
    Ok(c)
}

fn number(cell: &str, name: &str, line: usize, file: &str) -> Result<f64, ImportError> {
    let cell = cell.trim();
    cell.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| ImportError::Row {
            file: file.into(),
            line,
            detail: format!("{name} {}: expected a positive number", shown(cell)),
        })
}

/// A cell as a message quotes it: whole when short, else its start and its
/// length; a cell running over lines is a quote left open (the rest of the file
/// would otherwise be quoted back).
fn shown(cell: &str) -> String {
    const MAX: usize = 40;
    if cell.len() <= MAX {
        return format!("`{cell}`");
    }
    let lines = cell.lines().count();
    let start: String = cell
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(MAX)
        .collect();
    let open = if lines > 1 {
        format!(", over {lines} lines: is a closing quote missing?")
    } else {
        String::new()
    };
    format!("`{start}...` ({} bytes{open})", cell.len())
}

/// A value cell: a positive number, or (in scalescope's own files) empty for a value
/// that was not measured.
fn value(
    l: &Line,
    i: usize,
    name: &str,
    c: &Columns,
    file: &str,
) -> Result<Option<f64>, ImportError> {
    let cell = l.cell(i);
    if cell.trim().is_empty() && c.own.is_some() {
        return Ok(None);
    }
    number(cell, name, l.line, file).map(Some)
}

/// One parsed row: the point, its repetition number if given, seconds, metrics.
type Row = (Point, Option<usize>, f64, BTreeMap<String, f64>);

fn row(l: &Line, c: &Columns, opts: &ImportOptions) -> Result<Row, ImportError> {
    let line = l.line;
    let err = |detail: String| ImportError::Row {
        file: opts.file.clone(),
        line,
        detail,
    };
    let t = number(l.cell(c.threads), "threads", line, &opts.file)?;
    if t.fract() != 0.0 {
        return Err(err(format!(
            "threads `{t}`: expected a whole number of threads"
        )));
    }
    if t > 1e6 {
        return Err(err(format!(
            "threads `{t}`: more than a million threads, more than any machine holds"
        )));
    }
    let text = |i: Option<usize>| i.map(|i| l.cell(i)).filter(|s| !s.is_empty());
    let placement = match (text(c.placement), &opts.placement) {
        (Some(p), _) => p
            .parse()
            .map_err(|e| err(format!("placement {}: {e}", shown(p))))?,
        (None, Some(p)) => p.clone(),
        (None, None) => {
            return Err(ImportError::NoPlacement {
                file: opts.file.clone(),
                line,
            })
        }
    };
    let mem = match text(c.mem) {
        Some(m) => m
            .parse()
            .map_err(|e| err(format!("mem {}: {e}", shown(m))))?,
        None => MemPolicy::FirstTouch,
    };
    let rep = match text(c.rep) {
        Some(r) => Some(
            r.parse()
                .map_err(|_| err(format!("rep {}: expected a whole number", shown(r))))?,
        ),
        None => None,
    };
    let secs = match c.seconds {
        Some(i) => value(l, i, "seconds", c, &opts.file)?.unwrap_or(0.0),
        None => 0.0,
    };
    let mut metrics = BTreeMap::new();
    for (i, name) in &c.metrics {
        if let Some(v) = value(l, *i, name, c, &opts.file)? {
            metrics.insert(name.clone(), v);
        }
    }
    Ok((
        Point {
            threads: t as usize,
            placement,
            mem,
            nodes: None,
        },
        rep,
        secs,
        metrics,
    ))
}

/// The rows of the result set `wanted` (every row when the file has no `results`
/// column); with none wanted, the file must hold one set.
fn select(
    lines: Vec<Line>,
    c: &Columns,
    file: &str,
    wanted: Option<&str>,
) -> Result<Vec<Line>, ImportError> {
    let Some(i) = c.results else {
        return Ok(lines);
    };
    let mut labels: Vec<String> = Vec::new();
    for l in &lines {
        if !labels.iter().any(|x| x == l.cell(i)) {
            labels.push(l.cell(i).to_string());
        }
    }
    match wanted {
        Some(w) if labels.iter().any(|x| x == w) => {
            Ok(lines.into_iter().filter(|l| l.cell(i) == w).collect())
        }
        Some(w) => Err(ImportError::NoSuchResults {
            file: file.into(),
            wanted: w.into(),
            labels,
        }),
        None if labels.len() > 1 => Err(ImportError::SeveralResults {
            file: file.into(),
            labels,
        }),
        None => Ok(lines),
    }
}

/// In the report's `curves.csv`, `metric_median` is the figure of merit its `basis`
/// names (`metric:NAME`; with `time`, none): every row imported must name the same.
fn curves_metric(lines: &[Line], c: &mut Columns, file: &str) -> Result<(), ImportError> {
    let Some(col) = c.metrics.iter().position(|(_, n)| n == "metric_median") else {
        return Ok(());
    };
    let (at, _) = c.metrics.remove(col);
    let Some(b) = c.basis else {
        c.metrics.insert(col, (at, "metric".into()));
        return Ok(());
    };
    let mut name: Option<(&str, usize)> = None;
    for l in lines {
        match name {
            Some((n, first)) if n != l.cell(b) => {
                return Err(ImportError::Row {
                    file: file.into(),
                    line: l.line,
                    detail: format!(
                        "basis `{}` differs from line {first}'s `{n}`: one curve has one basis",
                        l.cell(b)
                    ),
                })
            }
            Some(_) => {}
            None => name = Some((l.cell(b), l.line)),
        }
    }
    if let Some(m) = name.and_then(|(n, _)| n.strip_prefix("metric:")) {
        c.metrics.insert(col, (at, m.to_string()));
    }
    Ok(())
}

fn record(point: Point, rep: usize, wall_secs: f64, metrics: BTreeMap<String, f64>) -> RunRecord {
    RunRecord {
        ranks: None,
        node_evidence: Vec::new(),
        point,
        rep,
        warmup: false,
        thread_cpus: Vec::new(),
        started_unix_secs: 0.0,
        wall_secs,
        user_secs: None,
        sys_secs: None,
        max_rss_bytes: None,
        status: RunStatus::Ok,
        exit_code: None,
        signal: None,
        error: None,
        metrics,
        placement_check: None,
        stdout_log: None,
        stderr_log: None,
        evidence: None,
        setup: None,
    }
}

/// Parses the CSV text into runs and the plan they fill.
///
/// # Errors
/// A missing `threads` or value column, or a row whose values do not parse (the
/// error names the line and the value).
pub fn parse_csv(text: &str, opts: &ImportOptions) -> Result<Imported, ImportError> {
    parse_csv_for(text, opts, None)
}

/// [`parse_csv`] keeping only the rows whose `results` cell is `results` (the
/// report's `curves.csv` holds one result set per label); with `None`, a file with a
/// `results` column must hold one set.
///
/// # Errors
/// As [`parse_csv`]; and [`ImportError::NoSuchResults`] or
/// [`ImportError::SeveralResults`] for the selection.
pub fn parse_csv_for(
    text: &str,
    opts: &ImportOptions,
    results: Option<&str>,
) -> Result<Imported, ImportError> {
    let (head, lines) = records(text, &opts.file)?;
    let mut c = columns(&head, &opts.file)?;
    let lines = select(lines, &c, &opts.file, results)?;
    curves_metric(&lines, &mut c, &opts.file)?;
    let mut runs = Vec::new();
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for l in &lines {
        let (point, rep, secs, metrics) = row(l, &c, opts)?;
        if secs == 0.0 && metrics.is_empty() {
            if c.own.is_some() {
                continue; // a point of scalescope's own file where nothing was measured
            }
            return Err(ImportError::NoValue {
                file: opts.file.clone(),
            });
        }
        let key = format!("{}/{}/{}", point.threads, point.placement, point.mem);
        let n = count.entry(key).or_default();
        runs.push(record(point, rep.unwrap_or(*n), secs, metrics));
        *n += 1;
    }
    if runs.is_empty() {
        return Err(ImportError::NoRows {
            file: opts.file.clone(),
        });
    }
    let mut threads: Vec<usize> = runs.iter().map(|r| r.point.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let mut placements: Vec<Strategy> = Vec::new();
    let mut mems: Vec<MemPolicy> = Vec::new();
    for r in &runs {
        if !placements.contains(&r.point.placement) {
            placements.push(r.point.placement.clone());
        }
        if !mems.contains(&r.point.mem) {
            mems.push(r.point.mem.clone());
        }
    }
    let metrics = c
        .metrics
        .iter()
        .map(|(_, n)| MetricSpec {
            name: n.clone(),
            regex: None,
            higher_is_better: !opts.lower_is_better,
        })
        .collect();
    Ok(Imported {
        plan: Plan {
            launch: None,
            threads,
            placements,
            mems,
            reps: count.values().copied().max().unwrap_or(1),
            warmup: 0,
            options: Default::default(),
            order: Default::default(),
        },
        metrics,
        runs,
    })
}

/// Whether every point of the import can be placed on the machine given (with
/// the plan's options: `oversubscribe` for curves past one thread per PU).
///
/// # Errors
/// [`ImportError::DoesNotFit`] naming the first point that does not fit.
pub fn check_fits(imported: &Imported, topo: &Topology, file: &str) -> Result<(), ImportError> {
    let opts = &imported.plan.options;
    for p in imported.plan.points() {
        let req = opts.request(p.placement.clone(), p.threads);
        scalescope_place::place(topo, &req).map_err(|e| ImportError::DoesNotFit {
            file: file.into(),
            threads: p.threads,
            placement: p.placement.to_string(),
            machine: topo.summary(),
            detail: e.to_string(),
            oversubscribe: opts.oversubscribe,
        })?;
    }
    Ok(())
}

/// The header of an imported results directory: the machine given on import, a
/// command of kind `imported` naming the file.
pub fn header(imported: &Imported, topology: &Topology, file: &str, version: &str) -> Header {
    let mut machine = Fingerprint::read(std::path::Path::new("/nonexistent-imported"), topology);
    let elsewhere = format!("unavailable here: imported from {file}");
    machine.hostname = "imported".into();
    machine.kernel = elsewhere.clone();
    machine.frequency_governor = elsewhere.clone();
    machine.smt = elsewhere.clone();
    machine.transparent_hugepages = elsewhere.clone();
    machine.numa_balancing = elsewhere.clone();
    machine.load_average = elsewhere;
    // Nothing of the machine that measured the curve was checked: no verdict
    // (not "bare metal"), which the report shows as unknown.
    machine.virtualization = None;
    Header {
        schema: "scalescope.results".into(),
        schema_version: RESULTS_SCHEMA_VERSION,
        scalescope_version: version.into(),
        started_unix_secs: 0.0,
        command: CommandSpec {
            trials: None,
            kind: "imported".into(),
            argv: vec![file.into()],
            shell: false,
            workload: None,
            params: BTreeMap::new(),
            env: Vec::new(),
            metrics: imported.metrics.clone(),
        },
        plan: imported.plan.clone(),
        timeout_secs: None,
        kill_grace_secs: None,
        machine,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> ImportOptions {
        ImportOptions {
            file: "q6.csv".into(),
            placement: Some(Strategy::CoresFirst),
            lower_is_better: false,
        }
    }

    #[test]
    fn an_imported_machine_has_no_virtualization_verdict() {
        let csv = "threads,seconds\n1,10\n2,5.1\n";
        let imp = parse_csv(csv, &opts()).unwrap_or_else(|e| panic!("{e}"));
        let topo = scalescope_topo::Source::Synthetic("core:2".into())
            .load()
            .unwrap_or_else(|e| panic!("{e}"));
        let h = header(&imp, &topo, "q6.csv", "test");
        assert_eq!(h.machine.virtualization, None);
    }

    #[test]
    fn rows_become_runs_and_repetitions() {
        let csv = "threads,seconds\n1,10\n1,10.2\n2,5.1\n4,2.6\n";
        let imp = parse_csv(csv, &opts()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(imp.plan.threads, vec![1, 2, 4]);
        assert_eq!(imp.plan.reps, 2);
        assert_eq!(imp.runs.len(), 4);
        assert_eq!((imp.runs[1].rep, imp.runs[1].wall_secs), (1, 10.2));
    }

    #[test]
    fn metric_placement_and_mem_columns() {
        let csv = "threads,placement,mem,rep,rows_per_s\n1,compact,interleave,0,100\n2,scatter,first-touch,0,190\n";
        let imp = parse_csv(
            csv,
            &ImportOptions {
                placement: None,
                ..opts()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(imp.plan.placements.len(), 2);
        assert_eq!(imp.metrics[0].name, "rows_per_s");
        assert_eq!(imp.runs[1].metrics["rows_per_s"], 190.0);
    }

    #[test]
    fn errors_name_the_line_and_value() {
        let e = parse_csv("threads,seconds\n1,10\n2,fast\n", &opts()).err();
        assert_eq!(
            e.map(|e| e.to_string()),
            Some("q6.csv:3: seconds `fast`: expected a positive number".into())
        );
        let e = parse_csv("cores,seconds\n1,10\n", &opts()).err();
        assert!(matches!(e, Some(ImportError::NoThreads { .. })));
        let e = parse_csv(
            "threads,seconds\n1,10\n",
            &ImportOptions {
                placement: None,
                ..opts()
            },
        )
        .err();
        assert!(e.is_some_and(|e| e.setting() == Some(Setting::Placement)));
        assert!(matches!(
            parse_csv("threads\n1\n", &opts()).err(),
            Some(ImportError::NoValue { .. })
        ));
        assert!(matches!(
            parse_csv("", &opts()).err(),
            Some(ImportError::Empty { .. })
        ));
    }

    #[test]
    fn quoted_fields_a_byte_order_mark_and_crlf_read_as_written() {
        let csv = "\u{feff}threads,placement,seconds\r\n1,\"cpus=0-3,8\",10\r\n# a comment\r\n\r\n2,\"cpus=0-3,8\" , 5.5\r\n";
        let imp = parse_csv(csv, &opts()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(imp.plan.placements, vec![Strategy::Cpus("0-3,8".into())]);
        assert_eq!((imp.runs[1].point.threads, imp.runs[1].wall_secs), (2, 5.5));
        let e = parse_csv("threads,seconds\n1,10\n\n3,x\n", &opts()).err();
        assert_eq!(
            e.map(|e| e.to_string()),
            Some("q6.csv:4: seconds `x`: expected a positive number".into())
        );
        // A quoted field may span lines; the record is named by its first line.
        let e = parse_csv("threads,placement,seconds\n1,\"a\nb\",1\n", &opts()).err();
        assert!(
            e.as_ref()
                .is_some_and(|e| e.to_string().starts_with("q6.csv:2: placement `a\nb`")),
            "{e:?}"
        );
        // A quote that never closes is an error on its line, not rows silently merged.
        let e = parse_csv("threads,seconds\n1,2\n2,3\"\n4,5\n", &opts()).err();
        assert!(
            e.as_ref()
                .is_some_and(|e| e.to_string().starts_with("q6.csv:3: a quote")),
            "{e:?}"
        );
    }

    /// The report's curves.csv: the medians are the values, `basis` names the metric,
    /// the derived columns are not imported, and one result set is taken at a time.
    #[test]
    fn the_reports_curves_csv_reads_back_by_result_set() {
        let csv = "results,placement,mem,threads,runs,perf,speedup,speedup_sd,efficiency,karp_flatt,time_median_secs,time_ci95_lo_secs,time_ci95_hi_secs,metric_median,packages,numa_nodes,cores,smt_shared,basis\n\
            \"a,b\",compact,first-touch,1,3,100,1,0,1,,8,7.5,8.5,100,1,1,1,false,metric:rows/s\n\
            \"a,b\",compact,first-touch,2,3,190,1.9,0.1,0.95,0.05,4.2,4,4.4,190,1,1,2,false,metric:rows/s\n\
            other,compact,first-touch,1,1,0.125,1,0,1,,8,,,,,,,,time\n";
        let e = parse_csv(csv, &opts()).err();
        assert!(
            matches!(e, Some(ImportError::SeveralResults { ref labels, .. }) if labels == &["a,b", "other"])
        );
        let imp = parse_csv_for(csv, &opts(), Some("a,b")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(imp.metrics.len(), 1);
        assert_eq!(imp.metrics[0].name, "rows/s");
        assert_eq!(imp.runs.len(), 2);
        assert_eq!(imp.runs[1].wall_secs, 4.2);
        assert_eq!(imp.runs[1].metrics["rows/s"], 190.0);
        let imp = parse_csv_for(csv, &opts(), Some("other")).unwrap_or_else(|e| panic!("{e}"));
        assert!(imp.metrics.is_empty());
        assert_eq!(imp.runs[0].wall_secs, 8.0);
        let e = parse_csv_for(csv, &opts(), Some("missing")).err();
        assert!(matches!(e, Some(ImportError::NoSuchResults { .. })));
    }

    /// The sweep's summary.csv: `wall_median_secs` and `NAME_median` are the values; a
    /// point where every run failed has none and is passed over.
    #[test]
    fn the_sweeps_summary_csv_reads_back() {
        let csv = "threads,placement,mem,runs,failed,wall_median_secs,wall_mean_secs,wall_min_secs,wall_max_secs,wall_stddev_secs,wall_ci95_lo_secs,wall_ci95_hi_secs,outliers,speedup,efficiency,placement_ok,more_threads_than_planned,mops_median,mops_speedup\n\
            1,compact,first-touch,3,0,2,2,2,2,0,2,2,0,1,1,true,false,50,1\n\
            2,compact,first-touch,0,3,,,,,,,,,,,,false,,\n";
        let imp = parse_csv(csv, &opts()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(imp.runs.len(), 1);
        assert_eq!(imp.runs[0].wall_secs, 2.0);
        assert_eq!(
            imp.metrics
                .iter()
                .map(|m| m.name.as_str())
                .collect::<Vec<_>>(),
            ["mops"]
        );
        assert_eq!(imp.runs[0].metrics["mops"], 50.0);
    }
}
