//! MPI ranks placed through real launchers on this machine: Open MPI's mpirun,
//! MPICH's Hydra mpiexec (called by explicit path, since both packages provide
//! `mpirun`), and srun on a one-node Slurm on loopback (scripts/mpi-slurm.sh
//! starts and stops munged, slurmctld and slurmd). Each runs 1 rank, one per core
//! and two per core (oversubscribed), launches the probe as a program would be
//! launched, and every rank must be on its planned CPUs; Open MPI is started as
//! root with no flag of the user's, and its start-up is kept out of a sweep's
//! figure. (Several nodes: tests/mpi_cluster.rs.) A test prints
//! "unavailable here: ..." and returns only where scripts/install-test-deps.sh
//! could not install the launcher.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn installed(tool: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        println!("unavailable here: {tool} is not installed (scripts/install-test-deps.sh could not install it)");
    }
    found
}

fn scalescope() -> String {
    assert_cmd::cargo::cargo_bin("scalescope")
        .to_string_lossy()
        .into_owned()
}

fn cores() -> usize {
    let out = Command::new(scalescope())
        .args(["topo", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let usable: Vec<u64> = v["pus"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["online"] == true && p["allowed"] == true)
        .map(|p| p["core"].as_u64().unwrap())
        .collect();
    let mut distinct = usable.clone();
    distinct.sort_unstable();
    distinct.dedup();
    distinct.len()
}

/// Runs `command` (mpi-check with `--json` at its end) and checks the document.
fn check_launches(mut command: Command, launcher: &str) {
    let out = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{launcher}: {stdout}\n{stderr}");
    let json = &stdout[stdout.find('{').unwrap()..=stdout.rfind('}').unwrap()];
    let v: Value = serde_json::from_str(json).unwrap();
    assert_eq!(v["kind"], "scalescope.mpi-check");
    assert_eq!(v["launcher"], launcher);
    let launches = v["launches"].as_array().unwrap();
    let counts: Vec<usize> = launches
        .iter()
        .map(|l| l["check"]["ranks"].as_array().unwrap().len())
        .collect();
    let c = cores();
    assert_eq!(counts, [1, c, 2 * c], "{launcher}");
    for l in launches {
        assert_eq!(l["exit_code"], 0, "{launcher}: {l}");
        assert_eq!(l["check"]["all_inside_plan"], true, "{launcher}: {l}");
        for r in l["check"]["ranks"].as_array().unwrap() {
            assert_eq!(r["probe"]["allowed"], r["planned"], "{launcher}: {r}");
        }
    }
    // Two ranks per core: rank i and rank i + cores share their CPUs.
    let doubled = launches[2]["check"]["ranks"].as_array().unwrap();
    for i in 0..c {
        assert_eq!(doubled[i]["planned"], doubled[i + c]["planned"]);
    }
}

fn mpi_check(launcher: &str, path: &str) -> Command {
    let mut cmd = Command::new(scalescope());
    cmd.args(["mpi-check", "--launcher", launcher, "--launcher-path", path])
        .args([
            "--ranks-per-node",
            "1,cores,2xcores",
            "--timeout",
            "120",
            "--json",
        ]);
    cmd
}

#[test]
fn open_mpi_places_one_and_two_ranks_per_core_as_planned() {
    if !installed("mpirun.openmpi") {
        return;
    }
    let mut cmd = mpi_check("mpirun", "mpirun.openmpi");
    // Open MPI refuses root unless told; scalescope tells it (CI runs as root), so
    // the user gives nothing.
    cmd.env_remove("OMPI_ALLOW_RUN_AS_ROOT")
        .env_remove("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM");
    check_launches(cmd, "mpirun");
}

#[test]
fn mpich_hydra_places_one_and_two_ranks_per_core_as_planned() {
    if !installed("mpiexec.hydra") {
        return;
    }
    check_launches(mpi_check("mpiexec", "mpiexec.hydra"), "mpiexec");
}

#[test]
fn slurm_srun_places_one_and_two_ranks_per_core_as_planned() {
    if !["slurmctld", "slurmd", "srun", "salloc", "munged"]
        .iter()
        .all(|t| installed(t))
    {
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/mpi-slurm.sh");
    let mut cmd = Command::new(script);
    cmd.args(["salloc", "-N1", "--exclusive", "--time=5"])
        .arg(scalescope())
        .args(["mpi-check", "--launcher", "srun"])
        .args([
            "--ranks-per-node",
            "1,cores,2xcores",
            "--timeout",
            "120",
            "--json",
        ])
        .env("SCALESCOPE_SLURM_LIFETIME", "300");
    check_launches(cmd, "srun");
}

/// A "launcher" in `dir` that starts two ranks without binding them: every rank
/// may run anywhere, so none is inside its one-CPU plan.
fn unbinding_launcher(dir: &Path) -> std::path::PathBuf {
    let fake = dir.join("unbinding-mpiexec");
    std::fs::write(
        &fake,
        "#!/bin/sh\nprog=\"\"; for a in \"$@\"; do prog2=\"$prog\"; prog=\"$a\"; done\n\
         PMI_RANK=0 \"$prog2\" \"$prog\"; PMI_RANK=1 \"$prog2\" \"$prog\"\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&fake)
        .status()
        .unwrap();
    fake
}

#[test]
fn ranks_a_launcher_leaves_unbound_are_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let fake = unbinding_launcher(dir.path());
    if cores() < 2 {
        println!("unavailable here: one core, so an unbound rank is still inside its plan");
        return;
    }
    let out = Command::new(scalescope())
        .args(["mpi-check", "--launcher", "mpiexec", "--launcher-path"])
        .arg(&fake)
        .args(["--ranks-per-node", "2", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = &v["launches"][0]["check"];
    assert_eq!(check["all_inside_plan"], false);
    for r in check["ranks"].as_array().unwrap() {
        assert_eq!(r["inside_plan"], false, "{r}");
        assert_ne!(r["probe"]["allowed"], r["planned"], "{r}");
    }
    // A sweep through it records every run's ranks as out of place.
    let results = dir.path().join("sweep");
    let out = Command::new(scalescope())
        .args(["sweep", "--launcher", "mpiexec", "--launcher-path"])
        .arg(&fake)
        .args(["--ranks-per-node", "2", "--reps", "1", "--warmup", "0"])
        .args(["--sample-interval", "0", "--out"])
        .arg(&results)
        .args(["--", "echo", "hi"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    for run in sweep_runs(&results, "mpiexec") {
        assert_eq!(run["ranks"]["check"]["all_inside_plan"], false, "{run}");
        assert_eq!(run["placement_check"]["inside_plan"], false, "{run}");
        assert_eq!(
            run["placement_check"]["violations"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
    }
}

/// The run records of the sweep in `dir`, launched through `launcher` on this
/// machine: each records the launcher, hosts, nodes, ranks per node and threads per
/// rank, and the probe's check of every rank.
fn sweep_runs(dir: &Path, launcher: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let launch = &records[0]["plan"]["launch"];
    assert_eq!(launch["launcher"], launcher, "{launch}");
    let runs: Vec<Value> = records[1..].to_vec();
    assert!(!runs.is_empty());
    for run in &runs {
        let ranks = &run["ranks"];
        assert_eq!(ranks["launcher"], launcher, "{run}");
        assert_eq!(ranks["hosts"], launch["hosts"], "{run}");
        assert_eq!(ranks["nodes"], 1, "{run}");
        assert_eq!(ranks["threads_per_rank"], 1, "{run}");
        assert_eq!(ranks["ranks_per_node"], run["threads"], "{run}");
        let checked = ranks["check"]["ranks"].as_array().unwrap();
        assert_eq!(Some(checked.len() as u64), run["threads"].as_u64(), "{run}");
    }
    runs
}

/// A launched sweep's runs all verified, every rank inside its plan, at one and
/// two ranks per core.
fn check_launched_sweep(dir: &Path, launcher: &str) {
    let runs = sweep_runs(dir, launcher);
    let c = cores() as u64;
    let mut counts: Vec<u64> = runs
        .iter()
        .map(|r| r["threads"].as_u64().unwrap())
        .collect();
    counts.sort_unstable();
    counts.dedup();
    assert_eq!(counts, [c, 2 * c]);
    for run in &runs {
        assert_eq!(run["status"], "ok", "{run}");
        assert!(run["metrics"]["mops"].as_f64().unwrap() > 0.0, "{run}");
        assert_eq!(run["ranks"]["check"]["all_inside_plan"], true, "{run}");
        assert_eq!(run["placement_check"]["inside_plan"], true, "{run}");
    }
    // The analysis gives the hyper-threading-doubling finding, like mpi-check.
    let text = std::fs::read_to_string(dir.join("report/analysis.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let findings = v["results"][0]["analysis"]["findings"].as_array().unwrap();
    let doubling: Vec<&str> = findings
        .iter()
        .filter_map(|f| f["title"].as_str())
        .filter(|t| t.contains("oversubscribed") || t.contains("on SMT siblings"))
        .collect();
    assert_eq!(doubling.len(), 1, "{findings:?}");
    println!("sweep through {launcher}: {}", doubling[0]);
}

/// `sweep --launcher` arguments: FT class S at one and two ranks per core, one run
/// each, results into `out`.
fn sweep_args(launcher: &str, path: &str, extra: &[&str], out: &Path) -> Vec<String> {
    let mut args: Vec<String> = ["sweep", "--launcher", launcher, "--launcher-path", path]
        .iter()
        .chain(extra)
        .chain(&["--ranks-per-node", "cores,2xcores", "--reps", "1"])
        .chain(&[
            "--warmup",
            "0",
            "--sample-interval",
            "0",
            "--timeout",
            "120",
        ])
        .map(|s| s.to_string())
        .collect();
    args.extend(["--out".into(), out.display().to_string(), "--".into()]);
    args.extend([mpi_nas(), "ft".into(), "S".into()]);
    args
}

#[test]
fn sweep_through_open_mpi_records_the_launch_and_every_rank() {
    if !installed("mpirun.openmpi") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(scalescope())
        .args(sweep_args(
            "mpirun",
            "mpirun.openmpi",
            &[],
            &dir.path().join("s"),
        ))
        .env_remove("OMPI_ALLOW_RUN_AS_ROOT")
        .env_remove("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    check_launched_sweep(&dir.path().join("s"), "mpirun");
}

/// scalescope-mpi-nas, built beside scalescope by `cargo test --workspace` (it is a
/// workspace member outside the default members, since it links MPI).
fn mpi_nas() -> String {
    let bin = Path::new(&scalescope()).with_file_name("scalescope-mpi-nas");
    assert!(
        bin.exists(),
        "{} is missing: build it with `cargo build -p scalescope-mpi-nas` (scripts/test's `cargo test --workspace` does)",
        bin.display()
    );
    bin.to_string_lossy().into_owned()
}

/// The hyper-threading-doubling study of one kernel and class through `launcher`
/// (after `scalescope mpi-check ... --`): one rank per core, then two on the same
/// cores; every rank placed as planned, every run verified, one finding.
fn doubling_study(mut cmd: Command, what: &str) {
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what}: {stdout}\n{stderr}");
    check_study(&stdout, what);
}

/// Checks one study's `mpi-check --json` document.
fn check_study(stdout: &str, what: &str) {
    let json = &stdout[stdout.find('{').unwrap()..=stdout.rfind('}').unwrap()];
    let v: Value = serde_json::from_str(json).unwrap();
    let launches = v["launches"].as_array().unwrap();
    assert_eq!(launches.len(), 2, "{what}: {v}");
    for l in launches {
        assert_eq!(l["check"]["all_inside_plan"], true, "{what}: {l}");
        let runs = l["runs"].as_array().unwrap();
        assert!(!runs.is_empty(), "{what}: {l}");
        for r in runs {
            assert_eq!(r["report"]["verified"], true, "{what}: {r}");
        }
    }
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{what}: {findings:?}");
    let finding = findings[0].as_str().unwrap();
    assert!(
        (finding.contains("oversubscribed") || finding.contains("on SMT siblings"))
            && finding.contains('x'),
        "{finding}"
    );
    println!("{what}: {finding}");
}

/// `mpi-check` arguments for the study of `kernel` at `class` through `launcher`.
fn study_args(
    launcher: &str,
    path: &str,
    extra: &[&str],
    kernel: &str,
    class: &str,
) -> Vec<String> {
    let mut args: Vec<String> = ["mpi-check", "--launcher", launcher, "--launcher-path", path]
        .iter()
        .chain(extra)
        .chain(&[
            "--ranks-per-node",
            "cores,2xcores",
            "--reps",
            "1",
            "--json",
            "--",
        ])
        .map(|s| s.to_string())
        .collect();
    args.extend([mpi_nas(), kernel.to_string(), class.to_string()]);
    args
}

#[test]
fn nas_ht_doubling_study_through_open_mpi_classes_s_and_w() {
    if !installed("mpirun.openmpi") {
        return;
    }
    for kernel in ["ep", "is", "ft"] {
        for class in ["S", "W"] {
            let mut cmd = Command::new(scalescope());
            cmd.args(study_args("mpirun", "mpirun.openmpi", &[], kernel, class))
                .env_remove("OMPI_ALLOW_RUN_AS_ROOT")
                .env_remove("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM");
            doubling_study(cmd, &format!("mpirun {kernel} {class}"));
        }
    }
}

#[test]
fn nas_ht_doubling_study_through_slurm_classes_s_and_w() {
    if !["slurmctld", "slurmd", "srun", "salloc", "munged"]
        .iter()
        .all(|t| installed(t))
    {
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/mpi-slurm.sh");
    // One Slurm and one allocation for every study, as a batch script would run
    // them; each study's document goes to a file of its own.
    let dir = tempfile::tempdir().unwrap();
    let mut lines = Vec::new();
    let studies: Vec<(&str, &str)> = ["ep", "is", "ft"]
        .iter()
        .flat_map(|k| [(*k, "S"), (*k, "W")])
        .collect();
    for (kernel, class) in &studies {
        // Open MPI ranks under srun need PMIx: a launcher argument before ours.
        let args = study_args(
            "srun",
            "srun",
            &["--launcher-arg=--mpi=pmix"],
            kernel,
            class,
        );
        let file = dir.path().join(format!("{kernel}-{class}.json"));
        let words: Vec<String> = std::iter::once(scalescope())
            .chain(args)
            .map(|w| format!("'{w}'"))
            .collect();
        lines.push(format!("{} > '{}'", words.join(" "), file.display()));
    }
    // And a sweep through srun, recorded in results.jsonl.
    let sweep = dir.path().join("sweep");
    let args = sweep_args("srun", "srun", &["--launcher-arg=--mpi=pmix"], &sweep);
    let words: Vec<String> = std::iter::once(scalescope())
        .chain(args)
        .map(|w| format!("'{w}'"))
        .collect();
    lines.push(format!("{} > /dev/null", words.join(" ")));
    let out = Command::new(&script)
        .args(["salloc", "-N1", "--exclusive", "--time=5", "sh", "-ec"])
        .arg(lines.join("\n"))
        .env("SCALESCOPE_SLURM_LIFETIME", "300")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{lines:?}\n{stderr}");
    for (kernel, class) in &studies {
        let file = dir.path().join(format!("{kernel}-{class}.json"));
        let text = std::fs::read_to_string(&file).unwrap();
        check_study(&text, &format!("srun {kernel} {class}"));
    }
    check_launched_sweep(&sweep, "srun");
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A program that takes 2 s, launched through Open MPI's mpirun with nothing
/// set by the user (as root here, scalescope tells Open MPI, and says so): each
/// run's figure is its wall time less the launcher's start-up, measured by
/// launching `true` the same way, so it is the program's 2 s, not mpirun's start;
/// the analysis judges the point by that figure.
#[test]
fn open_mpi_needs_no_flag_as_root_and_its_start_up_is_kept_out_of_the_figure() {
    if !installed("mpirun.openmpi") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s");
    let o = Command::new(scalescope())
        .args([
            "sweep",
            "--launcher",
            "mpirun",
            "--launcher-path",
            "mpirun.openmpi",
        ])
        .args(["--ranks-per-node", "1", "--reps", "3", "--warmup", "0"])
        .args(["--sample-interval", "0", "--out"])
        .arg(&out)
        .args(["--", "sleep", "2"])
        .env_remove("OMPI_ALLOW_RUN_AS_ROOT")
        .env_remove("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{o:?}");
    // SAFETY: geteuid has no arguments and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        assert!(stderr.contains("note: running as root"), "{stderr}");
    }
    let runs = sweep_runs(&out, "mpirun");
    let mut figures = Vec::new();
    let mut walls = Vec::new();
    for r in &runs {
        assert_eq!(r["status"], "ok", "{r}");
        let launch = r["ranks"]["launch_secs"].as_f64().unwrap();
        let wall = r["wall_secs"].as_f64().unwrap();
        assert!(launch > 0.0 && wall > 2.0, "{r}");
        figures.push(wall - launch);
        walls.push(wall);
    }
    let (figure, wall) = (median(figures), median(walls));
    println!("mpirun: wall {wall:.3} s, without its start-up {figure:.3} s (the program: 2 s)");
    // Leaving the measured start-up out brings the time nearer the program's own,
    // and never takes much more than the start-up away (a loaded machine slows
    // both, so the figure is not held to 2 s exactly).
    assert!(
        (figure - 2.0).abs() < (wall - 2.0).abs(),
        "{figure} s against {wall} s"
    );
    assert!(figure > 1.75, "{figure} s against the program's 2 s");
    let text = std::fs::read_to_string(out.join("report/analysis.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let point = &v["results"][0]["analysis"]["curves"][0]["points"][0];
    let judged = 1.0 / point["perf"].as_f64().unwrap();
    assert!(
        (judged - figure).abs() < 1e-6,
        "{point}: judged by {judged} s"
    );
}

/// A sweep through Hydra with sampling on: the sampler started on its node
/// (`localhost`, this machine) through the same launcher follows the run's ranks
/// there, and the run record keeps what it saw.
#[test]
fn a_launched_run_is_sampled_on_its_node_through_the_launcher() {
    if !installed("mpiexec.hydra") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s");
    let spin = "x=0; while [ $x -lt 1000000 ]; do x=$((x+1)); done";
    let o = Command::new(scalescope())
        .args([
            "sweep",
            "--launcher",
            "mpiexec",
            "--launcher-path",
            "mpiexec.hydra",
        ])
        .args(["--ranks-per-node", "1", "--reps", "1", "--warmup", "0"])
        .args(["--sample-interval", "20", "--out"])
        .arg(&out)
        .args(["--", "sh", "-c", spin])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    for run in sweep_runs(&out, "mpiexec") {
        let nodes = run["node_evidence"].as_array().unwrap();
        assert_eq!(nodes.len(), 1, "{run}");
        assert_eq!(nodes[0]["host"], "localhost");
        assert_eq!(nodes[0]["evidence"]["state"], "measured", "{run}");
        let comms: Vec<&str> = nodes[0]["evidence"]["value"]["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["comm"].as_str().unwrap())
            .collect();
        assert!(comms.contains(&"sh"), "the rank itself: {comms:?}");
    }
}
