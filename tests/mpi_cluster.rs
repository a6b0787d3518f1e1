//! Past one node, on this machine: a two-node Slurm cluster in network namespaces
//! (scripts/slurm-cluster.sh: one namespace, hostname and address per node on a
//! bridge, one slurmd each, slurmctld and munged shared). NAS EP, IS and FT swept
//! over 1 and 2 nodes at 1 and 2 ranks per node through srun, every rank probed
//! on its planned node and CPUs, every node's evidence recorded; the same sweep
//! submitted as batch jobs, one cancelled and resumed; two ranks per core in a
//! plain allocation; Open MPI as root with no extra flags, its start-up measured
//! and kept out of the figure. The cluster must leave nothing behind, even when
//! its script is killed.
//!
//! A test prints "unavailable here: ..." and returns only where the cluster
//! cannot be made (no root, no network namespaces, Slurm not installed).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

fn scalescope() -> String {
    assert_cmd::cargo::cargo_bin("scalescope")
        .to_string_lossy()
        .into_owned()
}

fn mpi_nas() -> String {
    let bin = Path::new(&scalescope()).with_file_name("scalescope-mpi-nas");
    assert!(
        bin.exists(),
        "{} is missing: build it with `cargo build -p scalescope-mpi-nas` (scripts/test's `cargo test --workspace` does)",
        bin.display()
    );
    bin.to_string_lossy().into_owned()
}

/// One cluster at a time in this binary (the script's lock serialises clusters,
/// and a test that checks nothing was left behind must not see another's).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn cluster_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-cluster.sh")
}

/// Whether a 2-node cluster can be made here (prints why not).
fn cluster_available() -> bool {
    let out = Command::new(cluster_script())
        .args(["--nodes", "2", "--check"])
        .env("SCALESCOPE_SLURM_LIFETIME", "600")
        .output()
        .unwrap();
    if out.status.code() == Some(3) {
        let why = String::from_utf8_lossy(&out.stderr);
        println!("{}", why.lines().next().unwrap_or("unavailable here"));
        return false;
    }
    assert!(out.status.success(), "{out:?}");
    true
}

/// Runs `sh -ec script` inside a cluster of `nodes` nodes.
fn in_cluster(nodes: usize, script: &str) -> Output {
    Command::new(cluster_script())
        .args(["--nodes", &nodes.to_string(), "sh", "-ec", script])
        .env("SCALESCOPE_SLURM_LIFETIME", "600")
        .output()
        .unwrap()
}

fn quote(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Namespaces, bridges, daemons and directories a cluster could leave.
fn leftovers() -> Vec<String> {
    let mut out = Vec::new();
    let list = |args: &[&str]| {
        let o = Command::new("ip").args(args).output().unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    out.extend(
        list(&["netns", "list"])
            .lines()
            .filter(|l| l.starts_with("scalescope-slurm-"))
            .map(|l| format!("namespace {l}")),
    );
    out.extend(
        list(&["-o", "link", "show", "type", "bridge"])
            .lines()
            .filter(|l| l.contains(": ssbr"))
            .map(|l| format!("bridge {l}")),
    );
    let procs = Command::new("pgrep")
        .args(["-af", "scalescope-cluster\\."])
        .output()
        .unwrap();
    out.extend(
        String::from_utf8_lossy(&procs.stdout)
            .lines()
            .map(|l| format!("process {l}")),
    );
    for e in std::fs::read_dir("/tmp").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("scalescope-cluster.") {
            out.push(format!("directory /tmp/{name}"));
        }
    }
    out
}

/// Waits (at most `secs`) until nothing is left, and says what is.
fn nothing_left_within(secs: u64) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let left = leftovers();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_two_node_cluster_comes_up_and_down_cleanly_even_when_killed() {
    let _one = serial();
    if !cluster_available() {
        return;
    }
    let out = in_cluster(
        2,
        "sinfo -h -N -o '%N %t %c'; srun -N2 -n2 --ntasks-per-node=1 hostname | sort",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    // Each node is idle and declares this machine's CPUs; each task ran in its
    // node's namespace, under its name.
    let cpus = std::thread::available_parallelism().unwrap().get();
    for n in ["node1", "node2"] {
        assert!(
            stdout.contains(&format!("{n} idle {cpus}")),
            "{n} with {cpus} CPUs: {stdout}"
        );
    }
    assert!(stdout.ends_with("node1\nnode2\n"), "{stdout}");
    assert_eq!(nothing_left_within(10), Vec::<String>::new());

    // Killed outright (no trap runs): its watcher removes everything.
    let dir = tempfile::tempdir().unwrap();
    let up = dir.path().join("up");
    let mut child = Command::new(cluster_script())
        .args(["--nodes", "2", "sh", "-c"])
        .arg(format!("touch '{}'; sleep 300", up.display()))
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !up.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(up.exists(), "the cluster did not come up");
    assert!(!leftovers().is_empty(), "a running cluster is seen");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(nothing_left_within(20), Vec::<String>::new());
}

/// The sweep's arguments: `kernel` class S over 1 and 2 nodes at 1 and 2 ranks per
/// node through srun (Open MPI's ranks need PMIx), one run each.
fn node_sweep(kernel: &str, out: &Path) -> Vec<String> {
    let mut v: Vec<String> = [
        "sweep",
        "--launcher",
        "srun",
        "--launcher-arg=--mpi=pmix",
        "--nodes",
        "1,2",
        "--ranks-per-node",
        "1,2",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--timeout",
        "120",
        "--sample-interval",
        "20",
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push(out.display().to_string());
    v.extend(["--".into(), mpi_nas(), kernel.into(), "S".into()]);
    v
}

fn records(dir: &Path) -> (Value, Vec<Value>) {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let mut lines = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap());
    let header = lines.next().unwrap();
    (header, lines.collect())
}

/// Every run of a node sweep: verified, every rank on its planned node and CPUs,
/// every node's evidence with the ranks that ran there.
fn check_node_run(dir: &Path, run: &Value) {
    assert_eq!(run["status"], "ok", "{run}");
    assert!(run["error"].is_null(), "verified, not unchecked: {run}");
    assert!(run["metrics"]["mops"].as_f64().unwrap() > 0.0, "{run}");
    let ranks = &run["ranks"];
    let nodes = run["nodes"].as_u64().unwrap() as usize;
    let per_node = ranks["ranks_per_node"].as_u64().unwrap() as usize;
    let hosts: Vec<&str> = ranks["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    // The nodes of the allocation it ran in (a one-node job may get any).
    let mut distinct = hosts.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), nodes, "{run}");
    assert!(hosts.iter().all(|h| h.starts_with("node")), "{run}");
    assert_eq!(run["threads"].as_u64().unwrap() as usize, nodes * per_node);
    let check = &ranks["check"];
    assert_eq!(check["all_inside_plan"], true, "{run}");
    for (r, rank) in check["ranks"].as_array().unwrap().iter().enumerate() {
        assert_eq!(rank["planned_host"], hosts[r / per_node], "{rank}");
        assert_eq!(rank["probe"]["host"], hosts[r / per_node], "{rank}");
        assert_eq!(rank["probe"]["allowed"], rank["planned"], "{rank}");
    }
    assert!(ranks["launch_secs"].as_f64().unwrap() > 0.0, "{run}");
    let evidence = run["node_evidence"].as_array().unwrap();
    let seen: Vec<&str> = evidence
        .iter()
        .map(|e| e["host"].as_str().unwrap())
        .collect();
    assert_eq!(seen, hosts, "{run}");
    for e in evidence {
        assert_eq!(e["evidence"]["state"], "measured", "{e}");
        let v = &e["evidence"]["value"];
        assert!(v["samples"].as_u64().unwrap() >= 1, "{e}");
        // This node's ranks, and no other node's: one process per rank (and, in
        // a batch job, the launcher itself on the job's first node).
        let mut pids: Vec<u64> = v["threads"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["comm"].as_str().unwrap().starts_with("scalescope-"))
            .map(|t| t["pid"].as_u64().unwrap())
            .collect();
        pids.sort_unstable();
        pids.dedup();
        // A rank that lives between two samples may go unseen.
        assert!((1..=per_node).contains(&pids.len()), "{e}");
        let series = dir.join(v["series_file"].as_str().unwrap());
        assert!(series.is_file(), "{}", series.display());
    }
}

#[test]
fn nas_ep_is_ft_over_one_and_two_nodes_place_every_rank_and_sample_every_node() {
    let _one = serial();
    if !cluster_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kernels = ["ep", "is", "ft"];
    let lines: Vec<String> = kernels
        .iter()
        .map(|k| {
            let mut words = vec![scalescope()];
            words.extend(node_sweep(k, &dir.path().join(k)));
            format!("{} > /dev/null", quote(&words))
        })
        .collect();
    let out = in_cluster(
        2,
        &format!(
            "salloc -N2 --exclusive sh -ec {}",
            quote(&[lines.join("\n")])
        ),
    );
    assert!(out.status.success(), "{out:?}");
    for k in kernels {
        let d = dir.path().join(k);
        let (header, runs) = records(&d);
        assert_eq!(
            header["plan"]["launch"]["node_counts"],
            serde_json::json!([1, 2])
        );
        let mut shapes: Vec<(u64, u64)> = runs
            .iter()
            .map(|r| (r["nodes"].as_u64().unwrap(), r["threads"].as_u64().unwrap()))
            .collect();
        shapes.sort_unstable();
        assert_eq!(shapes, [(1, 1), (1, 2), (2, 2), (2, 4)], "{k}");
        for run in &runs {
            check_node_run(&d, run);
        }
        // One curve per ranks-per-node value over the nodes, the node boundary
        // among its events; the doubling per node count.
        let text = std::fs::read_to_string(d.join("report/analysis.json")).unwrap();
        let a: Value = serde_json::from_str(&text).unwrap();
        let analysis = &a["results"][0]["analysis"];
        let curves = analysis["curves"].as_array().unwrap();
        let per_node: Vec<u64> = curves
            .iter()
            .map(|c| c["ranks_per_node"].as_u64().unwrap())
            .collect();
        assert_eq!(per_node, [1, 2], "{k}");
        for c in curves {
            let kinds: Vec<&str> = c["events"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["kind"].as_str().unwrap())
                .collect();
            assert_eq!(kinds, ["new-node"], "{k}: {c}");
        }
        let doubling: Vec<&str> = analysis["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["title"].as_str())
            .filter(|t| t.contains(" ranks per node (") && t.contains(" give "))
            .collect();
        assert_eq!(doubling.len(), 2, "{k}: one per node count: {doubling:?}");
        // The report shows every node's evidence beside the others'.
        let page = std::fs::read_to_string(d.join("report/index.html")).unwrap();
        assert!(page.contains("Evidence from every node"), "{k}");
        assert!(page.contains("<th class=\"l\">node 2</th>"), "{k}");
        assert!(page.contains("node2 · CPUs"), "{k}");
        println!("{k}: {}", doubling.join(" / "));
    }
}

/// The submitted sweep's arguments: EP class S over 1 and 2 nodes at 1 and 2 ranks
/// per node, two runs per point, as Slurm jobs.
fn submitted_sweep(out: &Path) -> Vec<String> {
    let mut v: Vec<String> = [
        "sweep",
        "--submit",
        "--launcher",
        "srun",
        "--launcher-arg=--mpi=pmix",
        "--nodes",
        "1,2",
        "--ranks-per-node",
        "1,2",
        "--reps",
        "2",
        "--warmup",
        "0",
        "--timeout",
        "120",
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push(out.display().to_string());
    v.extend(["--".into(), mpi_nas(), "ep".into(), "S".into()]);
    v
}

#[test]
fn a_sweep_submitted_as_jobs_gathers_every_point_and_a_cancelled_job_resumes_without_repeats() {
    let _one = serial();
    if !cluster_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sub");
    let mut first = vec![scalescope()];
    first.extend(submitted_sweep(&out));
    let resume = [
        scalescope(),
        "sweep".into(),
        "--submit".into(),
        "--resume".into(),
        "--out".into(),
        out.display().to_string(),
    ];
    // The sweep submitted; once its four jobs are queued, the two-node job with
    // two ranks per node is cancelled (pending or running); the sweep ends with
    // that point's runs missing, and --resume submits that point alone.
    let script = format!(
        "{first} > {log}.1 2>&1 &\n\
         pid=$!\n\
         for i in $(seq 300); do [ \"$(squeue -h | wc -l)\" -ge 4 ] && break; sleep 0.1; done\n\
         victim=$(squeue -h -o '%i %j' | grep n2-r2 | cut -d' ' -f1)\n\
         scancel \"$victim\"\n\
         status=0; wait $pid || status=$?\n\
         echo \"first: $status\"\n\
         {resume} > {log}.2 2>&1\n\
         echo resumed",
        first = quote(&first),
        resume = quote(&resume),
        log = dir.path().join("log").display()
    );
    let o = in_cluster(2, &script);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let log = |n: u8| std::fs::read_to_string(dir.path().join(format!("log.{n}"))).unwrap();
    assert!(o.status.success(), "{o:?}\n{}\n{}", log(1), log(2));
    // The first sweep ended with runs missing (exit 3), and said how to finish.
    assert!(stdout.contains("first: 3"), "{stdout}\n{}", log(1));
    assert!(log(1).contains("--submit --resume"), "{}", log(1));
    assert!(log(2).contains("submitted job"), "{}", log(2));
    let resubmitted = log(2).matches("submitted job").count();
    assert_eq!(resubmitted, 1, "only the cancelled point: {}", log(2));
    // Every point's two runs, once each, with the nodes they ran on.
    let (header, runs) = records(&out);
    assert_eq!(header["plan"]["launch"]["hosts_from"], "allocation");
    let mut keys: Vec<(u64, u64, u64)> = runs
        .iter()
        .map(|r| {
            (
                r["nodes"].as_u64().unwrap(),
                r["threads"].as_u64().unwrap(),
                r["rep"].as_u64().unwrap(),
            )
        })
        .collect();
    keys.sort_unstable();
    let want: Vec<(u64, u64, u64)> = [(1, 1), (1, 2), (2, 2), (2, 4)]
        .iter()
        .flat_map(|&(n, t)| [(n, t, 0), (n, t, 1)])
        .collect();
    assert_eq!(keys, want);
    for run in &runs {
        check_node_run(&out, run);
        // The run's logs are named from the sweep's directory.
        let log = out.join(run["stdout_log"].as_str().unwrap());
        assert!(log.is_file(), "{}", log.display());
    }
    // The cancelled point's job was submitted twice, every other once.
    let jobs = std::fs::read_to_string(out.join("jobs/n2-r2-cores-first.jobs")).unwrap();
    assert_eq!(jobs.lines().count(), 2, "{jobs}");
    let once = std::fs::read_to_string(out.join("jobs/n1-r1-cores-first.jobs")).unwrap();
    assert_eq!(once.lines().count(), 1, "{once}");
    assert!(out.join("report/index.html").is_file());
}

#[test]
fn two_ranks_per_core_under_srun_in_a_plain_allocation() {
    let _one = serial();
    if !cluster_available() {
        return;
    }
    let cores = {
        let out = Command::new(scalescope())
            .args(["topo", "--json"])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut c: Vec<u64> = v["pus"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["online"] == true && p["allowed"] == true)
            .map(|p| p["core"].as_u64().unwrap())
            .collect();
        c.sort_unstable();
        c.dedup();
        c.len()
    };
    let check = |alloc: &str| {
        let words = [
            scalescope(),
            "mpi-check".into(),
            "--launcher".into(),
            "srun".into(),
            "--ranks-per-node".into(),
            "cores,2xcores".into(),
            "--json".into(),
        ];
        format!(
            "if salloc -N1 {alloc} {} 2>&1; then echo 'status: 0'; else echo \"status: $?\"; fi",
            quote(&words)
        )
    };
    // A plain allocation of the node's cores (not --exclusive): one rank per
    // core, then two (srun --overcommit on the same CPUs).
    let whole = format!("--ntasks-per-node={cores}");
    let out = in_cluster(1, &format!("{}\n{}", check(&whole), check("-n1")));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    let (plain, one_cpu) = stdout.split_once("status: ").unwrap();
    assert!(one_cpu.starts_with('0'), "{stdout}");
    let json = &plain[plain.find('{').unwrap()..=plain.rfind('}').unwrap()];
    let v: Value = serde_json::from_str(json).unwrap();
    for l in v["launches"].as_array().unwrap() {
        assert_eq!(l["check"]["all_inside_plan"], true, "{l}");
    }
    // One CPU allocated: refused before srun, with what to allocate.
    assert!(one_cpu.contains("allocate whole nodes"), "{one_cpu}");
    assert!(!one_cpu.trim_end().ends_with("status: 0"), "{one_cpu}");
}

/// Four nodes, where the time allows (about 25 s here): NAS EP over 1, 2 and 4
/// nodes at 1 and 2 ranks per node, each run's ranks on their nodes, every node's
/// evidence.
#[test]
fn nas_ep_over_one_two_and_four_nodes() {
    let _one = serial();
    if !cluster_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ep4");
    let mut words = vec![scalescope()];
    words.extend(node_sweep("ep", &out));
    let at = words.iter().position(|w| w == "1,2").unwrap();
    words[at] = "1,2,4".into();
    let o = in_cluster(
        4,
        &format!("salloc -N4 --exclusive {} > /dev/null", quote(&words)),
    );
    assert!(o.status.success(), "{o:?}");
    let (_, runs) = records(&out);
    let mut shapes: Vec<(u64, u64)> = runs
        .iter()
        .map(|r| (r["nodes"].as_u64().unwrap(), r["threads"].as_u64().unwrap()))
        .collect();
    shapes.sort_unstable();
    assert_eq!(shapes, [(1, 1), (1, 2), (2, 2), (2, 4), (4, 4), (4, 8)]);
    for run in &runs {
        check_node_run(&out, run);
    }
}
