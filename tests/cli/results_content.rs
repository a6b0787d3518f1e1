//! The content of the files `analyze`, `report`, `compare` and `predict` read back:
//! numbers a sweep could not have measured, and values a program printed that are
//! no number. (The attack harness covers each file argument's type and size; these
//! cases are about what a results file says.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::path::Path;

use assert_cmd::Command;

fn scalescope() -> Command {
    Command::cargo_bin("scalescope").unwrap()
}

/// A sweep of `sh -c SCRIPT` at 1 and 2 threads, `reps` repetitions each, with
/// the metric `rate` read from `rate: VALUE`.
fn sweep_printing(out: &Path, script: &str, reps: &str) {
    scalescope()
        .args(["sweep", "--quiet", "--threads", "1,2", "--reps", reps])
        .args(["--warmup", "0", "--metric", r"rate=rate: (\S+)", "--out"])
        .arg(out)
        .args(["--", "sh", "-c", script])
        .assert()
        .success();
}

/// A program that prints `nan` for its metric reported no value: the run is kept
/// with its wall time (before, the metric was written as `null` and every reader
/// set the whole run aside as unreadable).
#[test]
fn a_metric_printed_as_nan_leaves_the_run_readable() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    sweep_printing(&out, "echo rate: nan; echo rate: inf >&2", "1");
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    assert!(!text.contains("null}"), "{text}");
    let a = scalescope()
        .args(["analyze", "--quiet", "--basis", "time"])
        .arg(&out)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(!stderr.contains("set aside"), "{stderr}");
}

/// A figure of 1e308 is finite, but two of them had a mean of infinity: the
/// speedups were printed as `inf` and `NaN`. Their summary is now finite (a
/// speedup of 1).
#[test]
fn a_figure_of_1e308_gives_no_nan_or_inf_speedup() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    sweep_printing(&out, "echo rate: 1e308", "2");
    for json in [false, true] {
        let stdout = analyze_rate(&out, json);
        assert_no_invented_number(&stdout);
        // JSON writes a NaN as null.
        assert!(!stdout.contains("\"speedup\": null"), "{stdout}");
    }
}

/// A speedup past the largest number (a rate of 1e308 against 1e-5 at one
/// thread), or one that falls to zero (the other way round), has no figure to
/// show: its point is left out of the curve, and a warning names it rather than
/// the table losing a row without a word (or printing a Karp-Flatt of `inf`).
#[test]
fn a_point_whose_speedup_overflows_is_named() {
    for (at_2, at_1) in [("1e308", "1e-5"), ("1e-5", "1e308")] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("res");
        let script = format!(
            r#"if [ "$OMP_NUM_THREADS" = 2 ]; then echo rate: {at_2}; else echo rate: {at_1}; fi"#
        );
        sweep_printing(&out, &script, "2");
        for json in [false, true] {
            let stdout = analyze_rate(&out, json);
            assert!(stdout.contains("1 point(s) left out"), "{stdout}");
            assert!(
                stdout.contains("too far from the baseline's to compute with")
                    && stdout.contains("2 threads, cores-first"),
                "{stdout}"
            );
            assert_no_invented_number(&stdout);
        }
    }
}

/// A rate of zero or less is no measurement: its runs were left out of their
/// points without a word (a table with no rows, exit status 0). A warning now
/// names them, their point and their value.
#[test]
fn runs_with_a_negative_figure_are_named_not_dropped_silently() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    sweep_printing(&out, "echo rate: -5", "1");
    for json in [false, true] {
        let stdout = analyze_rate(&out, json);
        assert!(stdout.contains("2 run(s) left out"), "{stdout}");
        assert!(
            stdout.contains("threads, cores-first, first-touch, rep 0: -5"),
            "{stdout}"
        );
    }
}

/// No `NaN` or `inf` printed as a word: a figure nothing measured.
fn assert_no_invented_number(stdout: &str) {
    let words: Vec<&str> = stdout.split(|c: char| !c.is_alphanumeric()).collect();
    for invented in ["NaN", "inf"] {
        assert!(!words.contains(&invented), "{invented} in:\n{stdout}");
    }
}

/// `analyze --basis metric:rate`, as text or JSON: its standard output.
fn analyze_rate(out: &Path, json: bool) -> String {
    let mut cmd = scalescope();
    cmd.args(["analyze", "--quiet", "--basis", "metric:rate"]);
    if json {
        cmd.arg("--json");
    }
    let a = cmd.arg(out).assert().success();
    String::from_utf8_lossy(&a.get_output().stdout).to_string()
}

/// A terminal escape in what a results directory says (here its own name, as
/// the table's label) reaches the terminal as an escape, not as a command to it:
/// `analyze` and `compare` print text a results file may carry.
#[test]
fn terminal_escapes_in_results_are_printed_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res\u{1b}[2Jx");
    sweep_printing(&out, "echo rate: 5", "1");
    let a = scalescope().arg("analyze").arg(&out).assert().success();
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
    assert!(stdout.contains("res\\u{1b}[2Jx"), "{stdout}");
    let c = scalescope()
        .arg("compare")
        .arg(&out)
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&c.get_output().stdout).to_string();
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
}

/// `predict` reads a results file as `analyze` does, and warns of each line it
/// sets aside (a last line a crash cut short) as `analyze` does; it said nothing.
#[test]
fn predict_warns_of_a_line_set_aside() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    sweep_printing(&out, "echo rate: 5", "2");
    let file = out.join("results.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, &text[..text.len() - 20]).unwrap();
    let p = scalescope()
        .args(["predict", "--from"])
        .arg(&out)
        .args(["--to", "package:2 core:4 pu:1", "--node-gbps", "20"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&p.stderr);
    assert!(
        stderr.contains("warning: ") && stderr.contains("set aside"),
        "{stderr}"
    );
}

/// A run at a point the sweep's plan does not hold (here 3 threads, in a sweep
/// of 1 and 2) is in no curve: `analyze` says so, as information, instead of
/// leaving it out without a word.
#[test]
fn runs_outside_the_plan_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    sweep_printing(&out, "echo rate: 5", "1");
    let file = out.join("results.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    // The run order is shuffled: take the run at 2 threads wherever it is.
    let two = text
        .lines()
        .find(|l| l.contains("\"threads\":2"))
        .unwrap_or_else(|| panic!("no run at 2 threads:\n{text}"));
    let moved = two.replacen("\"threads\":2", "\"threads\":3", 1);
    std::fs::write(&file, format!("{text}{moved}\n")).unwrap();
    let a = scalescope().arg("analyze").arg(&out).assert().success();
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    assert!(
        stdout.contains(
            "[info] 1 run(s) left out: their point is not in the sweep's plan: 3 threads"
        ),
        "{stdout}"
    );
}
