//! The attack harness over the whole command line (issue 33). The arguments come
//! from clap's own model (`scalescope __inventory`), so a new flag or command is
//! attacked as soon as it exists:
//! - numbers: every argument taking a number or text at 0, -1, nan, inf, 1e19,
//!   1e300 and its type's largest value; a sweep that took it is resumed;
//! - files: every file argument given a FIFO, `/dev/zero`, a directory, a 1 GiB
//!   one-line file and a link loop: refused within 5 s under 200 MB of RSS
//!   (`wait4`'s figure);
//! - links planted in every output directory: nothing outside written or opened;
//! - integrity: the lock file deleted mid-sweep, an import killed midway, a NUL
//!   hole mid-file; and the refusals that used to be unclear.
//!
//! A normal run takes a fixed sample of the number cases
//! (`SCALESCOPE_ATTACK_CASES`, default 40; `all` for the whole matrix; more than
//! the matrix continues with random values: the campaign in docs/RELIABILITY.md)
//! and every file and link case.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

mod files;
mod harness;
mod integrity;
mod inventory;
mod links;
mod numbers;

use std::time::{Duration, Instant};

use harness::Verdict;
use integrity::{
    alive, big_csv, import, keys, run_count, runs, scalescope, sweep_args, wait_lines,
};

/// A small deterministic generator (xorshift64*), seeded for reproducible cases.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn draw(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.draw() % n.max(1)
    }
}

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn report(what: &str, problems: &[String]) {
    assert!(
        problems.is_empty(),
        "{what}: {} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn every_command_has_a_base_invocation() {
    let args = inventory::arguments();
    let mut missing: Vec<String> = args
        .iter()
        .map(|a| a.command.clone())
        .filter(|c| inventory::base(c).is_none())
        .map(|c| c.join(" "))
        .filter(|c| !inventory::UNATTACKED.contains(&c.as_str()))
        .collect();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "commands the harness cannot attack: {missing:?}"
    );
    // The inventory knows the numbers it must attack.
    let numbers = args.iter().filter(|a| a.kind == "number").count();
    assert!(numbers >= 30, "{numbers} numeric arguments");
}

#[test]
fn numbers_at_their_limits_are_refused_or_run_never_crash() {
    let args = inventory::arguments();
    let fx = inventory::Fixtures::new();
    // SCALESCOPE_ATTACK_FLAGS=--timeout,--sustain narrows the cases to those flags.
    let only = env_or("SCALESCOPE_ATTACK_FLAGS", "");
    let args: Vec<inventory::Arg> = args
        .into_iter()
        .filter(|a| only.is_empty() || only.split(',').any(|f| f == a.name))
        .collect();
    let mut cases = numbers::matrix(&args);
    let seed: u64 = env_or("SCALESCOPE_ATTACK_SEED", "33").parse().unwrap_or(33);
    let mut rng = Rng::new(seed);
    for i in (1..cases.len()).rev() {
        cases.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let wanted = match env_or("SCALESCOPE_ATTACK_CASES", "40").as_str() {
        "all" => cases.len(),
        n => n.parse().unwrap_or(40),
    };
    let attacked: Vec<inventory::Arg> = args
        .iter()
        .filter(|a| !numbers::matrix(std::slice::from_ref(a)).is_empty())
        .cloned()
        .collect();
    while cases.len() < wanted {
        let a = attacked[rng.below(attacked.len() as u64) as usize].clone();
        cases.push((a, numbers::random_value(&mut rng)));
    }
    let hang = Duration::from_secs(
        env_or("SCALESCOPE_ATTACK_HANG_SECS", "20")
            .parse()
            .unwrap_or(20),
    );
    let t = Instant::now();
    let mut problems = Vec::new();
    for (a, v) in cases.iter().take(wanted) {
        problems.extend(numbers::run_case(a, v, &fx, hang));
    }
    eprintln!(
        "numbers: {wanted} cases of {} in the matrix (seed {seed}) in {:.1} s, {} problems",
        numbers::matrix(&args).len(),
        t.elapsed().as_secs_f64(),
        problems.len()
    );
    report("numbers", &problems);
}

#[test]
fn every_file_argument_refuses_what_is_not_a_file_quickly_and_small() {
    let args = inventory::arguments();
    let fx = inventory::Fixtures::new();
    let cases = files::cases(&args);
    let mut problems = Vec::new();
    let t = Instant::now();
    for (a, kind, ext) in &cases {
        problems.extend(
            files::run_case(a, kind, ext, &fx)
                .into_iter()
                .map(|p| format!("{} {}: {p}", a.command.join(" "), a.name)),
        );
    }
    eprintln!(
        "files: {} cases in {:.1} s",
        cases.len(),
        t.elapsed().as_secs_f64()
    );
    // Every argument the issue named is among them.
    for (cmd, name) in [
        ("analyze", "results"),
        ("compare", "a"),
        ("predict", "--from"),
        ("report", "results"),
        ("import", "csv"),
        ("graph count", "--graph"),
        ("tpch", "--tbl"),
        ("analyze", "--ceilings"),
        ("mpi-check", "--hostfile"),
    ] {
        assert!(
            cases
                .iter()
                .any(|(a, _, _)| a.command.join(" ") == cmd && a.name == name),
            "{cmd} {name}"
        );
    }
    report("files", &problems);
}

#[test]
fn links_planted_in_output_directories_are_never_followed() {
    let fx = inventory::Fixtures::new();
    let results = fx.results.display().to_string();
    let csv = fx.csv.display().to_string();
    let sweep = [
        "sweep",
        "--quiet",
        "--threads",
        "1",
        "--reps",
        "2",
        "--warmup",
        "1",
        "--sample-interval",
        "20",
        "--out",
        "{out}",
        "--",
        "sh",
        "-c",
        "echo hello; sleep 0.05",
    ];
    let import = [
        "import",
        &csv,
        "--synthetic",
        "package:1 core:4",
        "--placement",
        "cores-first",
        "--out",
        "{out}",
    ];
    let report_ = ["report", &results, "--out", "{out}"];
    let predict = [
        "predict",
        "--from",
        &results,
        "--to",
        "package:2 core:4",
        "--out",
        "{out}",
    ];
    let cache = [
        "graph",
        "count",
        "--pattern",
        "triangle",
        "--graph",
        "kron:6",
        "--threads",
        "1",
        "--input-cache",
        "{out}",
    ];
    let export = ["graph", "export", "--graph", "kron:6", "--out", "{out}"];
    let mut problems = Vec::new();
    for args in [
        &sweep[..],
        &import[..],
        &report_[..],
        &predict[..],
        &cache[..],
    ] {
        problems.extend(links::attack(args, false));
    }
    problems.extend(links::attack(&export, true));
    report("links", &problems);
}

#[test]
fn mpi_check_leaves_no_scratch_directory_and_uses_a_fresh_one() {
    let tmp = tempfile::tempdir().unwrap();
    let args: Vec<String> = [
        "mpi-check",
        "--launcher",
        "mpirun",
        "--launcher-path",
        "/bin/false",
        "--ranks-per-node",
        "1",
        "--timeout",
        "5",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = harness::run_with(
        &args,
        tmp.path(),
        Duration::from_secs(30),
        &[("TMPDIR", tmp.path())],
    );
    assert!(!matches!(o.verdict(), Verdict::Bad(_)), "{}", o.describe());
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with("scalescope-mpi"))
        .collect();
    assert!(left.is_empty(), "scratch left behind: {left:?}");
}

#[test]
fn deleting_the_lock_file_mid_sweep_lets_no_second_writer_in() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    let mut first = scalescope()
        .args(sweep_args(&out, 6, "sleep 0.3"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_lines(&out.join("results.jsonl"), 2);
    std::fs::remove_file(out.join(".scalescope.lock")).unwrap();
    let second = scalescope()
        .args(["sweep", "--quiet", "--resume", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "a second writer ran: {err}");
    assert!(err.contains("in use by a running scalescope"), "{err}");
    assert!(!err.contains("(PID )"), "{err}");
    assert!(first.wait().unwrap().success());
    let all = runs(&out.join("results.jsonl"));
    let (k, repeated) = keys(&all);
    assert_eq!((all.len(), k.len(), repeated), (6, 6, false));
    let analyze = scalescope()
        .arg("analyze")
        .arg(out.join("results.jsonl"))
        .output()
        .unwrap();
    assert!(
        analyze.status.success(),
        "{}",
        String::from_utf8_lossy(&analyze.stderr)
    );
}

#[test]
fn a_killed_import_leaves_nothing_that_reads_as_complete_and_can_be_redone() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("big.csv");
    big_csv(&csv, 50_000);
    let mut killed_before_done = 0;
    // Killed at these delays; the last lets it finish.
    for (i, delay) in [30u64, 80, 150, 300, 600, 60_000].into_iter().enumerate() {
        let out = dir.path().join(format!("imp{i}"));
        let mut child = import(&csv, &out).spawn().unwrap();
        let t = Instant::now();
        while child.try_wait().unwrap().is_none() && t.elapsed() < Duration::from_millis(delay) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = child.kill();
        let status = child.wait().unwrap();
        let results = out.join("results.jsonl");
        if results.exists() {
            // Renamed into place only when whole.
            assert_eq!(run_count(&results), 50_000, "delay {delay} ms, {status:?}");
        } else {
            killed_before_done += 1;
            let analyze = scalescope().arg("analyze").arg(&results).output().unwrap();
            assert!(!analyze.status.success());
            let again = import(&csv, &out).output().unwrap();
            assert!(
                again.status.success(),
                "{}",
                String::from_utf8_lossy(&again.stderr)
            );
            assert_eq!(run_count(&results), 50_000);
            let partial = std::fs::read_dir(&out)
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .ends_with(".partial")
                })
                .count();
            assert_eq!(partial, 0, "an aside file was left after the re-import");
        }
    }
    eprintln!("import: killed before completion {killed_before_done} of 6 times");
    assert!(killed_before_done > 0, "no import was killed midway");
    assert!(killed_before_done < 6, "no import finished");
}

#[test]
fn a_nul_hole_mid_file_is_set_aside_and_the_sweep_finishes_without_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("res");
    let ok = scalescope()
        .args(sweep_args(&out, 4, "true"))
        .output()
        .unwrap();
    assert!(ok.status.success());
    let path = out.join("results.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Header, two runs, a hole of NULs, a torn record, the third run; the fourth lost.
    let mut damaged = format!("{}\n{}\n{}\n", lines[0], lines[1], lines[2]).into_bytes();
    damaged.extend([0u8; 4096]);
    damaged.extend(b"\n{\"record\":\"run\",\"thr\n");
    damaged.extend(format!("{}\n", lines[3]).as_bytes());
    std::fs::write(&path, damaged).unwrap();
    let analyze = scalescope().arg("analyze").arg(&path).output().unwrap();
    let err = String::from_utf8_lossy(&analyze.stderr);
    assert!(analyze.status.success(), "{err}");
    assert!(err.contains("line 4 set aside: 4096 NUL bytes"), "{err}");
    let resume = scalescope()
        .args(["sweep", "--quiet", "--resume", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&resume.stderr);
    assert!(resume.status.success(), "{err}");
    assert!(err.contains("kept in results.jsonl.set-aside"), "{err}");
    let all = runs(&path);
    let (k, repeated) = keys(&all);
    assert_eq!((all.len(), k.len(), repeated), (4, 4, false));
    let clean = scalescope().arg("analyze").arg(&path).output().unwrap();
    assert!(
        clean.status.success() && clean.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );
}

#[test]
fn refusals_say_what_is_wrong() {
    let fx = inventory::Fixtures::new();
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = scalescope()
        .args(["sweep", "--quiet", "--resume", "--out"])
        .arg(&empty)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no results.jsonl here, so there is nothing to resume"),
        "{err}"
    );
    let o = scalescope()
        .arg("analyze")
        .arg(&fx.results)
        .args(["--basis", "metric:nonexistent"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("metric:nonexistent"),
        "{err}"
    );
    let o = scalescope()
        .args([
            "tpch",
            "q6",
            "--sf",
            "0.01",
            "--threads",
            "1",
            "--repeat",
            "0",
            "--tbl",
        ])
        .arg(&fx.tbl)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && !String::from_utf8_lossy(&o.stdout).contains("best of 0"),
        "{err}"
    );
    let bom = dir.path().join("bom.csv");
    std::fs::write(&bom, "\u{feff}threads,seconds\n1,10\n2,5\n").unwrap();
    let o = import(&bom, &dir.path().join("bom")).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let esc = dir.path().join("esc.csv");
    std::fs::write(&esc, "threads,seconds\n1,\x1b[2J10\n").unwrap();
    let o = import(&esc, &dir.path().join("esc")).output().unwrap();
    assert!(
        !o.stderr.contains(&0x1b),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn the_guard_killed_first_is_replaced_so_the_runs_still_die_with_scalescope() {
    let dir = tempfile::tempdir().unwrap();
    let marker = "31.4159";
    let script = format!("setsid sleep {marker} & sleep {marker} & sleep {marker}; wait");
    let mut child = scalescope()
        .args(sweep_args(&dir.path().join("res"), 1, &script))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let me = child.id() as i32;
    let t = Instant::now();
    let guards = |t: &Instant| loop {
        let g: Vec<i32> = alive("__guard")
            .into_iter()
            .filter(|(_, pp)| *pp == me)
            .map(|(p, _)| p)
            .collect();
        if !g.is_empty() || t.elapsed() > Duration::from_secs(20) {
            return g;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    while alive(marker).len() < 3 {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let first = guards(&t);
    assert_eq!(first.len(), 1, "one guard: {first:?}");
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(first[0], libc::SIGKILL) };
    let t = Instant::now();
    let replaced = loop {
        let g = guards(&t);
        if g.iter().any(|p| *p != first[0]) || t.elapsed() > Duration::from_secs(5) {
            break g;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        replaced.iter().any(|p| *p != first[0]),
        "no new guard: {replaced:?}"
    );
    // SAFETY: as above.
    unsafe { libc::kill(me, libc::SIGKILL) };
    let _ = child.wait();
    std::thread::sleep(Duration::from_millis(1500));
    let left = alive(marker);
    assert!(
        left.is_empty(),
        "processes of the run outlived scalescope: {left:?}"
    );
}

#[test]
fn a_resume_reads_back_header_numbers_at_their_limits_without_crashing() {
    let dir = tempfile::tempdir().unwrap();
    let clean = dir.path().join("clean");
    let ok = scalescope()
        .args(sweep_args(&clean, 1, "true"))
        .output()
        .unwrap();
    assert!(ok.status.success());
    let text = std::fs::read_to_string(clean.join("results.jsonl")).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let mut problems = Vec::new();
    for field in ["timeout_secs", "kill_grace_secs"] {
        for value in [
            "0",
            "-1",
            "1e19",
            "1e300",
            "1.7976931348623157e308",
            "18446744073709551615",
        ] {
            let mut h = header.clone();
            h[field] = serde_json::from_str(value).unwrap();
            let out = dir.path().join(format!("{field}-{value}"));
            std::fs::create_dir(&out).unwrap();
            // The header alone: every run is still to do.
            std::fs::write(out.join("results.jsonl"), format!("{h}\n")).unwrap();
            let args: Vec<String> = [
                "sweep",
                "--quiet",
                "--resume",
                "--out",
                &out.display().to_string(),
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            let o = harness::run(&args, dir.path(), Duration::from_secs(20));
            if let Verdict::Bad(_) = o.verdict() {
                problems.push(format!("{field} = {value}: {}", o.describe()));
            }
        }
    }
    report("header numbers on --resume", &problems);
}
