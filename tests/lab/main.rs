//! The lab: emulated multi-socket SMT machines (QEMU, TCG) running a real Debian
//! kernel, where every live NUMA and SMT path of scalescope runs and is checked
//! against the kernel's own answers (sysfs, /proc/stat, numastat).
//!
//! Built by scripts/lab-image.sh (kernel from Debian's package, busybox, the scalescope
//! binary this test build made: the dev profile, whose kernels and what they call are
//! optimised, see Cargo.toml); each shape boots with a time limit and prints its
//! results between markers on the serial console (tests/lab/guest). The report goes
//! to target/lab/report.txt. Skipped, with a line saying so, only where QEMU cannot run
//! at all. `SCALESCOPE_LAB_SHAPES=name,name` boots only those shapes;
//! `SCALESCOPE_LAB_REPLAY=1` checks the consoles the last boots saved in target/lab
//! without booting.

mod check_evidence;
mod check_mem;
mod check_place;
mod check_study;
mod check_topo;
mod console;
mod qemu;
mod report;
mod shapes;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use console::Console;
use report::{Check, ShapeReport};
use shapes::Shape;

/// Generous: a shape takes 30-90 s on 2 host cores (the one that runs the studies
/// about 4 minutes more); a loaded CI machine may be slower.
const BOOT_LIMIT: Duration = Duration::from_secs(720);
/// Guests booted at once (each already uses every host core while it computes; two
/// overlap one's boot and idle phases with the other's work).
const CONCURRENT: usize = 2;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Why QEMU cannot run here, if it cannot.
fn qemu_unavailable() -> Option<String> {
    match Command::new("qemu-system-x86_64").arg("--version").output() {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!(
            "qemu-system-x86_64 --version exited with {}",
            o.status
        )),
        Err(e) => Some(format!(
            "qemu-system-x86_64 cannot be started ({e}); scripts/install-test-deps.sh installs it"
        )),
    }
}

/// The guest image around the binary this test build made (`cargo test` builds it
/// before the lab runs, so the guest runs the code under test; a second, release
/// build of every dependency would cost a fresh machine minutes).
fn build_image(target: &Path) -> Result<(PathBuf, PathBuf), String> {
    let binary = Path::new(env!("CARGO_BIN_EXE_scalescope"));
    let out = Command::new(repo().join("scripts/lab-image.sh"))
        .arg(binary)
        .arg(target.join("lab"))
        .output()
        .map_err(|e| format!("scripts/lab-image.sh: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "scripts/lab-image.sh exited with {}:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    match (lines.next(), lines.next()) {
        (Some(k), Some(i)) => Ok((k.into(), i.into())),
        _ => Err(format!(
            "scripts/lab-image.sh printed `{text}`, not two paths"
        )),
    }
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|p| if p.is_absolute() { p } else { repo().join(p) })
        .unwrap_or_else(|| repo().join("target"))
}

fn describe(s: &Shape) -> String {
    let mut d = format!(
        "{} sockets x {} cores x {} threads, {} nodes",
        s.sockets,
        s.cores,
        s.threads,
        s.nodes()
    );
    if !s.memory_only.is_empty() {
        d += &format!(" ({} memory-only)", s.memory_only.len());
    }
    if let Some(c) = s.offline {
        d += &format!(", CPU {c} taken offline in the guest");
    }
    if let Some(c) = s.cpuset {
        d += &format!(", run in a cgroup v2 cpuset {c}");
    }
    d
}

fn run_shape(shape: &Shape, kernel: &Path, initrd: &Path, log_dir: &Path) -> ShapeReport {
    let boot = if std::env::var_os("SCALESCOPE_LAB_REPLAY").is_some() {
        replay(shape, log_dir)
    } else {
        let first = qemu::boot(shape, kernel, initrd, BOOT_LIMIT);
        if first.console.contains("@@LAB-START") {
            first
        } else {
            // The guest died before its script started (a kernel that panicked while
            // booting on a loaded host): boot once more, and say so in the report.
            let _ = std::fs::write(
                log_dir.join(format!("{}.first-boot.console", shape.name)),
                &first.console,
            );
            println!(
                "lab: {}: the first boot never reached its script; booting again",
                shape.name
            );
            qemu::boot(shape, kernel, initrd, BOOT_LIMIT)
        }
    };
    let console = Console::parse(&boot.console);
    let _ = std::fs::write(
        log_dir.join(format!("{}.console", shape.name)),
        &boot.console,
    );
    let mut checks = vec![Check::new(
        "guest booted, ran its script and powered off",
        match (&boot.failure, console.finished) {
            (None, true) => Ok(format!("{:.0} s", boot.secs)),
            (Some(f), _) => Err(f.clone()),
            (None, false) => Err("powered off before the end of its script".into()),
        },
    )];
    checks.extend(check_topo::checks(shape, &console));
    checks.extend(check_place::checks(shape, &console));
    checks.extend(check_mem::policies(shape, &console));
    checks.push(check_mem::sweep_evidence(&console));
    if shape.nodes() > 1 {
        checks.push(check_evidence::remote_allocation(&console));
    }
    if shape.tpch_threads.is_some() {
        checks.push(Check::new(
            "tpch q6 --layout numa: partitions on their scanners' nodes",
            check_mem::tpch(&console),
        ));
    }
    if shape.matrix {
        checks.extend(check_mem::matrix(shape, &console));
    }
    if shape.studies {
        checks.extend(check_study::checks(shape, &console));
    }
    let failed = checks.iter().any(|c| !c.ok);
    let tail = failed.then(|| {
        let lines: Vec<&str> = boot.console.lines().collect();
        let start = lines.len().saturating_sub(40);
        let err: Vec<&str> = boot
            .stderr
            .lines()
            .filter(|l| !l.contains("TCG doesn't support"))
            .collect();
        format!(
            "{}\n--- qemu stderr ---\n{}",
            lines[start..].join("\n"),
            err.join("\n")
        )
    });
    ShapeReport {
        shape: shape.name.into(),
        description: describe(shape),
        secs: boot.secs,
        timing: console.slowest(4),
        checks,
        tail,
    }
}

/// The console a previous boot saved (`SCALESCOPE_LAB_REPLAY=1`: re-check without
/// booting, for work on the checks themselves).
fn replay(shape: &Shape, log_dir: &Path) -> qemu::Boot {
    let path = log_dir.join(format!("{}.console", shape.name));
    match std::fs::read_to_string(&path) {
        Ok(console) => qemu::Boot {
            console,
            stderr: String::new(),
            secs: 0.0,
            failure: None,
        },
        Err(e) => qemu::Boot {
            console: String::new(),
            stderr: String::new(),
            secs: 0.0,
            failure: Some(format!("replay: {}: {e}", path.display())),
        },
    }
}

fn selected() -> Vec<Shape> {
    let only = std::env::var("SCALESCOPE_LAB_SHAPES").unwrap_or_default();
    shapes::all()
        .into_iter()
        .filter(|s| only.is_empty() || only.split(',').any(|n| n == s.name))
        .collect()
}

fn run_all(shapes: &[Shape], kernel: &Path, initrd: &Path, log_dir: &Path) -> Vec<ShapeReport> {
    let next = Mutex::new(0usize);
    let done = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..CONCURRENT {
            scope.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap_or_else(|p| p.into_inner());
                    *n += 1;
                    *n - 1
                };
                let Some(shape) = shapes.get(i) else { break };
                let r = run_shape(shape, kernel, initrd, log_dir);
                println!(
                    "lab: {} done in {:.0} s, {} of {} checks failed",
                    r.shape,
                    r.secs,
                    r.failed(),
                    r.checks.len()
                );
                done.lock().unwrap_or_else(|p| p.into_inner()).push((i, r));
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

fn main() -> ExitCode {
    // libtest's flags (`--list` from tooling) ask for nothing to run, and a name
    // filter (`cargo test NAME`) that does not match "lab" leaves the lab out.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        return ExitCode::SUCCESS;
    }
    const WITH_VALUE: [&str; 7] = [
        "--test-threads",
        "--skip",
        "--color",
        "--format",
        "--logfile",
        "--shuffle-seed",
        "-Z",
    ];
    let filters: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| {
            !a.starts_with('-') && (*i == 0 || !WITH_VALUE.contains(&args[i - 1].as_str()))
        })
        .map(|(_, a)| a)
        .collect();
    if !filters.is_empty() && !filters.iter().any(|f| "lab".contains(f.as_str())) {
        println!("lab: filtered out by {filters:?}");
        return ExitCode::SUCCESS;
    }
    if let Some(why) = qemu_unavailable() {
        println!("SKIP lab: QEMU cannot run here: {why}");
        return ExitCode::SUCCESS;
    }
    let start = Instant::now();
    let target = target_dir();
    let replaying = std::env::var_os("SCALESCOPE_LAB_REPLAY").is_some();
    let built = if replaying {
        Ok((PathBuf::new(), PathBuf::new()))
    } else {
        build_image(&target)
    };
    let (kernel, initrd) = match built {
        Ok(p) => p,
        Err(e) => {
            eprintln!("lab: could not build the guest image: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("lab: image ready in {:.0} s", start.elapsed().as_secs_f64());
    let reports = run_all(&selected(), &kernel, &initrd, &target.join("lab"));
    let text = report::render(&reports, start.elapsed().as_secs_f64());
    let path = target.join("lab/report.txt");
    let _ = std::fs::write(&path, &text);
    println!("{text}\nlab: report written to {}", path.display());
    if reports.iter().any(|r| r.failed() > 0) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
