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

use std::collections::BTreeMap;

use scalescope_place::{MemPolicy, Strategy};
use scalescope_topo::Topology;

use crate::fingerprint::Fingerprint;
use crate::plan::{Plan, Point};
use crate::store::{CommandSpec, Header, MetricSpec, RunRecord, RunStatus, RESULTS_SCHEMA_VERSION};

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
    #[error("{file}: {threads} threads under {placement} do not fit the machine given ({machine}): {detail}{}",
        if *.oversubscribe { "" } else { " (give --oversubscribe for counts past one thread per PU)" })]
    DoesNotFit {
        file: String,
        threads: usize,
        placement: String,
        machine: String,
        detail: String,
        oversubscribe: bool,
    },
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

struct Columns {
    threads: usize,
    seconds: Option<usize>,
    placement: Option<usize>,
    mem: Option<usize>,
    rep: Option<usize>,
    metrics: Vec<(usize, String)>,
}

fn columns(head: &str, file: &str) -> Result<Columns, ImportError> {
    let names: Vec<String> = head.split(',').map(|c| c.trim().to_string()).collect();
    let find = |n: &str| names.iter().position(|c| c == n);
    let threads = find("threads").ok_or_else(|| ImportError::NoThreads {
        file: file.into(),
        columns: names.join(", "),
    })?;
    let fixed = ["threads", "seconds", "placement", "mem", "rep"];
    let metrics: Vec<(usize, String)> = names
        .iter()
        .enumerate()
        .filter(|(_, n)| !fixed.contains(&n.as_str()) && !n.is_empty())
        .map(|(i, n)| (i, n.clone()))
        .collect();
    let c = Columns {
        threads,
        seconds: find("seconds"),
        placement: find("placement"),
        mem: find("mem"),
        rep: find("rep"),
        metrics,
    };
    if c.seconds.is_none() && c.metrics.is_empty() {
        return Err(ImportError::NoValue { file: file.into() });
    }
    Ok(c)
}

fn number(
    cells: &[&str],
    i: usize,
    name: &str,
    line: usize,
    file: &str,
) -> Result<f64, ImportError> {
    let text = cells.get(i).map(|s| s.trim()).unwrap_or("");
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| ImportError::Row {
            file: file.into(),
            line,
            detail: format!("{name} `{text}`: expected a positive number"),
        })
}

/// One parsed row: the point, its repetition number if given, seconds, metrics.
type Row = (Point, Option<usize>, f64, BTreeMap<String, f64>);

fn row(cells: &[&str], c: &Columns, opts: &ImportOptions, line: usize) -> Result<Row, ImportError> {
    let err = |detail: String| ImportError::Row {
        file: opts.file.clone(),
        line,
        detail,
    };
    let t = number(cells, c.threads, "threads", line, &opts.file)?;
    if t.fract() != 0.0 || t > 1e6 {
        return Err(err(format!(
            "threads `{t}`: expected a whole number of threads"
        )));
    }
    let text = |i: Option<usize>| {
        i.and_then(|i| cells.get(i))
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
    };
    let placement = match (text(c.placement), &opts.placement) {
        (Some(p), _) => p
            .parse()
            .map_err(|e| err(format!("placement `{p}`: {e}")))?,
        (None, Some(p)) => p.clone(),
        (None, None) => {
            return Err(err(
                "no placement: add a `placement` column or give --placement NAME".into(),
            ))
        }
    };
    let mem = match text(c.mem) {
        Some(m) => m.parse().map_err(|e| err(format!("mem `{m}`: {e}")))?,
        None => MemPolicy::FirstTouch,
    };
    let rep = match text(c.rep) {
        Some(r) => Some(
            r.parse()
                .map_err(|_| err(format!("rep `{r}`: expected a whole number")))?,
        ),
        None => None,
    };
    let secs = match c.seconds {
        Some(i) => number(cells, i, "seconds", line, &opts.file)?,
        None => 0.0,
    };
    let mut metrics = BTreeMap::new();
    for (i, name) in &c.metrics {
        metrics.insert(name.clone(), number(cells, *i, name, line, &opts.file)?);
    }
    Ok((
        Point {
            threads: t as usize,
            placement,
            mem,
        },
        rep,
        secs,
        metrics,
    ))
}

fn record(point: Point, rep: usize, wall_secs: f64, metrics: BTreeMap<String, f64>) -> RunRecord {
    RunRecord {
        ranks: None,
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
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    let (_, head) = lines.next().ok_or_else(|| ImportError::Empty {
        file: opts.file.clone(),
    })?;
    let c = columns(head, &opts.file)?;
    let mut runs = Vec::new();
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for (i, l) in lines {
        let cells: Vec<&str> = l.split(',').collect();
        let (point, rep, secs, metrics) = row(&cells, &c, opts, i + 1)?;
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
        assert!(e.is_some_and(|e| e.to_string().contains("--placement")));
        assert!(matches!(
            parse_csv("threads\n1\n", &opts()).err(),
            Some(ImportError::NoValue { .. })
        ));
        assert!(matches!(
            parse_csv("", &opts()).err(),
            Some(ImportError::Empty { .. })
        ));
    }
}
