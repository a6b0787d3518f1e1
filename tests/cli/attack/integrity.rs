//! The results file under attack: the lock file deleted mid-sweep, an import
//! killed midway, a NUL hole written mid-file. No duplicate, no run lost, and
//! analysis still possible.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub fn scalescope() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("scalescope"))
}

/// The run records of a results file.
pub fn runs(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("a results file")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["record"] == "run")
        .collect()
}

/// (threads, placement, mem, rep, warmup) of every run, and whether any repeats.
pub fn keys(runs: &[Value]) -> (BTreeSet<String>, bool) {
    let mut seen = BTreeSet::new();
    let mut repeated = false;
    for r in runs {
        let k = format!(
            "{} {} {} {} {}",
            r["threads"], r["placement"], r["mem"], r["rep"], r["warmup"]
        );
        repeated |= !seen.insert(k);
    }
    (seen, repeated)
}

pub fn sweep_args(out: &Path, reps: usize, script: &str) -> Vec<String> {
    let mut v: Vec<String> = [
        "sweep",
        "--quiet",
        "--threads",
        "1",
        "--warmup",
        "0",
        "--sample-interval",
        "0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend([
        "--reps".into(),
        reps.to_string(),
        "--out".into(),
        out.display().to_string(),
    ]);
    v.extend(["--".into(), "sh".into(), "-c".into(), script.into()]);
    v
}

/// Waits until `path` holds at least `lines` lines (at most 30 s).
pub fn wait_lines(path: &Path, lines: usize) {
    let t = Instant::now();
    while std::fs::read_to_string(path).map_or(0, |s| s.lines().count()) < lines {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{} never reached {lines} lines",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A CSV of `rows` rows over thread counts 1-4.
pub fn big_csv(path: &Path, rows: usize) {
    let mut text = String::from("threads,seconds\n");
    for i in 0..rows {
        let t = 1 << (i % 3);
        text += &format!("{t},{}\n", 10.0 / t as f64 + (i % 7) as f64 * 0.01);
    }
    std::fs::write(path, text).expect("a CSV");
}

pub fn import(csv: &Path, out: &Path) -> Command {
    let mut c = scalescope();
    c.args([
        "import",
        "--synthetic",
        "package:1 core:4",
        "--placement",
        "cores-first",
    ])
    .arg(csv)
    .arg("--out")
    .arg(out)
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    c
}

/// PIDs of live (not zombie) processes whose command line contains `marker`, and
/// their parents.
pub fn alive(marker: &str) -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let after = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect::<Vec<_>>();
        let zombie = after.first().is_some_and(|s| *s == "Z");
        let ppid = after.get(1).and_then(|p| p.parse().ok()).unwrap_or(0);
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if !zombie && text.contains(marker) {
            out.push((pid, ppid));
        }
    }
    out
}

/// How many run records a results file holds (counted, not parsed: a file of
/// 50,000 runs parsed whole would swell this process, and with it the peak RSS
/// its children report).
pub fn run_count(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).expect("a results file");
    text.lines()
        .filter(|l| l.starts_with("{\"record\":\"run\""))
        .count()
}
