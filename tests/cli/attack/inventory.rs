//! The command line as clap models it (`scalescope __inventory`), and a small,
//! fast invocation of every command that the attacks vary one argument of.
//! A command without a base invocation fails the harness, so a new command is
//! attacked as soon as it exists.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// One argument of one command, as clap describes it.
#[derive(Debug, Clone)]
pub struct Arg {
    pub command: Vec<String>,
    pub name: String,
    pub positional: bool,
    pub takes_value: bool,
    /// `number`, `path`, `choice` or `text`.
    pub kind: String,
    /// The value type's largest value (u64::MAX for non-numbers).
    pub max: String,
}

pub fn arguments() -> Vec<Arg> {
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("scalescope"))
        .arg("__inventory")
        .output()
        .expect("the inventory runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("an inventory line");
            Arg {
                command: v["command"]
                    .as_array()
                    .expect("a command path")
                    .iter()
                    .map(|c| c.as_str().unwrap_or_default().to_string())
                    .collect(),
                name: v["name"].as_str().unwrap_or_default().to_string(),
                positional: v["positional"].as_bool().unwrap_or(false),
                takes_value: v["takes_value"].as_bool().unwrap_or(false),
                kind: v["kind"].as_str().unwrap_or_default().to_string(),
                max: v["max"].as_str().unwrap_or_default().to_string(),
            }
        })
        .filter(|a| !a.command.iter().any(|c| c.starts_with("__")))
        .collect()
}

/// Inputs every base invocation may name, made once.
pub struct Fixtures {
    pub _dir: tempfile::TempDir,
    pub results: PathBuf,
    pub csv: PathBuf,
    pub tbl: PathBuf,
}

impl Fixtures {
    pub fn new() -> Fixtures {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let csv = dir.path().join("curve.csv");
        std::fs::write(&csv, "threads,seconds\n1,10\n2,5.2\n4,2.8\n").expect("csv");
        let tbl = dir.path().join("lineitem.tbl");
        std::fs::write(&tbl, "1|155190|7706|1|17|21168.23|0.04|0.02|N|O|1996-03-13|1996-02-12|1996-03-22|DELIVER IN PERSON|TRUCK|x|\n").expect("tbl");
        let out = dir.path().join("imported");
        let status = std::process::Command::new(assert_cmd::cargo::cargo_bin("scalescope"))
            .args([
                "import",
                "--synthetic",
                "package:1 core:4",
                "--placement",
                "cores-first",
            ])
            .arg(&csv)
            .arg("--out")
            .arg(&out)
            .output()
            .expect("import runs");
        assert!(
            status.status.success(),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
        Fixtures {
            results: out.join("results.jsonl"),
            csv,
            tbl,
            _dir: dir,
        }
    }
}

/// A fast invocation of `command` (None: not attacked, with the reason in
/// [`UNATTACKED`]). `@NAME` marks a positional or a trailing program; `{out}` a
/// path inside the case's own directory.
pub fn base(command: &[String]) -> Option<Vec<&'static str>> {
    let c: Vec<&str> = command.iter().map(String::as_str).collect();
    let v: &[&'static str] = match c.as_slice() {
        ["topo"] => &["topo", "--synthetic", "package:1 core:2"],
        ["place"] => &[
            "place",
            "--synthetic",
            "package:1 core:2 pu:2",
            "--threads",
            "2",
        ],
        ["sweep"] => &[
            "sweep",
            "--quiet",
            "--threads",
            "1",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--sample-interval",
            "0",
            "--out",
            "{out}",
            "--",
            "true",
        ],
        ["analyze"] => &["analyze", "@results"],
        // A study's plan (sized by short probes) without its runs: the topology
        // and output flags are read and checked all the same.
        ["study"] => &[
            "study",
            "numa-structure",
            "--dry-run",
            "--synthetic",
            "package:1 core:2",
            "--out",
            "{out}",
        ],
        ["import"] => &[
            "import",
            "@csv",
            "--synthetic",
            "package:1 core:4",
            "--placement",
            "cores-first",
            "--out",
            "{out}",
        ],
        ["predict"] => &[
            "predict",
            "--from",
            "@results",
            "--to",
            "package:2 core:4 pu:2",
        ],
        ["report"] => &["report", "@results", "--out", "{out}"],
        ["compare"] => &["compare", "@a", "@b"],
        ["mem", "stream"] => &[
            "mem",
            "stream",
            "--size",
            "1MiB",
            "--ntimes",
            "2",
            "--threads",
            "1",
            "--sustain",
            "0",
            "--sample-interval",
            "0",
        ],
        ["mem", "matrix"] => &[
            "mem",
            "matrix",
            "--size",
            "1MiB",
            "--latency-size",
            "1MiB",
            "--passes",
            "1",
        ],
        ["mem", "latency"] => &["mem", "latency", "--max-size", "64KiB"],
        ["mem", "c2c"] => &[
            "mem",
            "c2c",
            "--cpus",
            "0,1",
            "--round-trips",
            "1000",
            "--samples",
            "2",
        ],
        ["npb", "ep"] => &["npb", "ep", "--class", "S", "--threads", "1"],
        ["npb", "is"] => &["npb", "is", "--class", "S", "--threads", "1"],
        ["npb", "ft"] => &["npb", "ft", "--class", "S", "--threads", "1"],
        ["tpch"] => &[
            "tpch",
            "q6",
            "--tbl",
            "@tbl",
            "--sf",
            "0.01",
            "--threads",
            "1",
            "--repeat",
            "1",
        ],
        ["graph", "count"] => &[
            "graph",
            "count",
            "--pattern",
            "triangle",
            "--graph",
            "kron:6",
            "--threads",
            "1",
        ],
        ["graph", "bfs"] => &["graph", "bfs", "--graph", "kron:6", "--threads", "1"],
        ["graph", "pr"] => &["graph", "pr", "--graph", "kron:6", "--threads", "1"],
        ["graph", "export"] => &["graph", "export", "--graph", "kron:6", "--out", "{out}.el"],
        ["sync"] => &[
            "sync",
            "--table",
            "16",
            "--batches",
            "1",
            "--updates",
            "1000",
            "--reps",
            "1",
            "--threads",
            "1",
        ],
        ["mpi-check"] => &[
            "mpi-check",
            "--launcher",
            "mpirun",
            "--launcher-path",
            "/bin/false",
            "--ranks-per-node",
            "1",
            "--timeout",
            "5",
        ],
        ["completions"] => &["completions", "bash"],
        ["man"] => &["man"],
        _ => return None,
    };
    Some(v.to_vec())
}

/// Commands with no base invocation, and why.
pub const UNATTACKED: &[&str] = &[];

/// The invocation with `@NAME` and `{out}` filled in.
pub fn fill(base: &[&str], fx: &Fixtures, out: &Path) -> Vec<String> {
    base.iter()
        .map(|a| match *a {
            "@results" | "@a" | "@b" => fx.results.display().to_string(),
            "@csv" => fx.csv.display().to_string(),
            "@tbl" => fx.tbl.display().to_string(),
            a if a.contains("{out}") => a.replace("{out}", &out.display().to_string()),
            a => a.to_string(),
        })
        .collect()
}

/// `args` with `name` set to `value`: replaced where the base gives it, else
/// added before a trailing `--`. Values go as `--name=value`, so `-1` is a value.
pub fn with_flag(args: &[String], name: &str, value: &str) -> Vec<String> {
    let mut out = args.to_vec();
    if let Some(i) = out.iter().position(|a| a == name) {
        out.remove(i + 1);
        out[i] = format!("{name}={value}");
        return out;
    }
    let at = out.iter().position(|a| a == "--").unwrap_or(out.len());
    out.insert(at, format!("{name}={value}"));
    out
}

/// `args` with the positional marked `@name` (in the base) set to `value`.
pub fn with_positional(
    base: &[&str],
    args: &[String],
    name: &str,
    value: &str,
) -> Option<Vec<String>> {
    let i = base.iter().position(|a| *a == format!("@{name}"))?;
    let mut out = args.to_vec();
    out[i] = value.to_string();
    Some(out)
}
