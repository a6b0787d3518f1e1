//! NAS EP, IS and FT over MPI through real launchers on this machine: Open MPI's mpirun and
//! srun on a one-node Slurm on loopback (scripts/mpi-slurm.sh; PMIx, as Debian's
//! Open MPI expects), with one rank per core and then two ranks per core on the
//! same cores (the hyper-threading doubling; here, without SMT, oversubscription).
//! Ranks are placed by scalescope's launcher rendering; every run must verify
//! against the official values. The binary links Open MPI, so MPICH's Hydra cannot
//! start it as one job; tests/mpi.rs checks Hydra's placement with the probe.
//! A test prints "unavailable here: ..." and returns only where
//! scripts/install-test-deps.sh could not install the launcher.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::path::Path;
use std::process::Command;

use scalescope_model::workload::WorkloadReport;
use scalescope_place::launch::{plan_ranks, render, Launcher, RanksPerNode};
use scalescope_place::Strategy;
use scalescope_topo::Source;

fn installed(tools: &[&str]) -> bool {
    for tool in tools {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            println!("unavailable here: {tool} is not installed (scripts/install-test-deps.sh could not install it)");
            return false;
        }
    }
    true
}

/// The rendered launcher environment (`K=V` words) and arguments for `ranks` per
/// node on this machine, and the rankfile written into `dir`.
fn launcher_args(launcher: Launcher, ranks: &str, dir: &Path) -> (Vec<String>, Vec<String>) {
    let topo = Source::Live.load().unwrap();
    let n = ranks.parse::<RanksPerNode>().unwrap().resolve(&topo);
    let plan = plan_ranks(&topo, &Strategy::Compact, n, 1).unwrap();
    let rankfile = dir.join(format!("rankfile-{ranks}"));
    let hosts = [scalescope_host()];
    let r = render(&topo, launcher, &plan, &hosts, &rankfile.to_string_lossy()).unwrap();
    if let Some(text) = &r.rankfile {
        std::fs::write(&rankfile, text).unwrap();
    }
    let env = r.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    (env, r.args)
}

fn scalescope_host() -> String {
    let out = Command::new("hostname").arg("-s").output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The report rank 0 printed last; the run must have passed verification.
fn verified_report(out: &std::process::Output, what: &str) -> WorkloadReport {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what}: {stdout}\n{stderr}");
    let line = stdout
        .lines()
        .rfind(|l| l.starts_with('{'))
        .expect("a report line");
    let report: WorkloadReport = serde_json::from_str(line).unwrap();
    assert!(
        report.verification.passed(),
        "{what}: {}",
        report.verification
    );
    report
}

fn gain(one: &WorkloadReport, two: &WorkloadReport) -> f64 {
    two.figures["mops"] / one.figures["mops"]
}

#[test]
fn ep_is_ft_over_open_mpi_verify_at_one_and_two_ranks_per_core() {
    if !installed(&["mpirun.openmpi"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for kernel in ["ep", "is", "ft"] {
        let mut reports = Vec::new();
        for ranks in ["cores", "2xcores"] {
            let (env, args) = launcher_args(Launcher::Mpirun, ranks, dir.path());
            let out = Command::new("env")
                .args(env)
                .arg("mpirun.openmpi")
                .args(args)
                .arg(env!("CARGO_BIN_EXE_scalescope-mpi-nas"))
                .args([kernel, "S"])
                .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
                .output()
                .unwrap();
            reports.push(verified_report(&out, &format!("mpirun {kernel} {ranks}")));
        }
        assert_eq!(reports[1].threads, 2 * reports[0].threads);
        println!(
            "{kernel} S over mpirun: 2 ranks per core give {:.2}x the Mop/s of 1",
            gain(&reports[0], &reports[1])
        );
    }
}

#[test]
fn ep_is_ft_over_slurm_srun_verify_at_one_and_two_ranks_per_core() {
    if !installed(&["slurmctld", "slurmd", "srun", "salloc", "munged"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mpi-slurm.sh");
    // One allocation, both launches inside it, as a batch script would.
    let mut lines = Vec::new();
    for kernel in ["ep", "is", "ft"] {
        for ranks in ["cores", "2xcores"] {
            let (env, args) = launcher_args(Launcher::Srun, ranks, dir.path());
            let (env, args) = (env.join(" "), args.join(" "));
            let bin = env!("CARGO_BIN_EXE_scalescope-mpi-nas");
            lines.push(format!("env {env} srun --mpi=pmix {args} {bin} {kernel} S"));
        }
    }
    let out = Command::new(script)
        .args([
            "salloc",
            "-N1",
            "--exclusive",
            "--time=5",
            "sh",
            "-ec",
            &lines.join("\n"),
        ])
        .env("SCALESCOPE_SLURM_LIFETIME", "300")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reports: Vec<WorkloadReport> = stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(reports.len(), 6, "{lines:?}\n{stdout}");
    for r in &reports {
        assert!(r.verification.passed(), "{}", r.verification);
    }
    for pair in reports.chunks(2) {
        assert_eq!(pair[1].threads, 2 * pair[0].threads, "{stdout}");
        println!(
            "{} S over srun: 2 ranks per core give {:.2}x the Mop/s of 1",
            pair[0].workload,
            gain(&pair[0], &pair[1])
        );
    }
}
