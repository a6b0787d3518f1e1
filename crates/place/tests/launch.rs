//! MPI launcher renderings checked against what each launcher documents it does,
//! on recorded machines whose OS numbering interleaves packages.
//!
//! The oracle for Open MPI's logical numbering is hwloc's own: the order of the PU
//! and Core objects in the machine's hwloc XML (hwloc numbers objects of a type in
//! that depth-first order), read independently of scalescope's topology code. The
//! topology the renderer sees is read from the recorded sysfs tree, as on the
//! machine itself. Each rendered command is then interpreted by its launcher's
//! documented rules (Open MPI 4 rankfile and ppr mapping, Hydra's `user:` binding,
//! Slurm's `map_cpu`/`mask_cpu`), and every rank must land on its planned OS CPUs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::collections::BTreeSet;

use scalescope_place::launch::{hwloc_order, render, Launcher, RankPlan, Rendered};
use scalescope_place::{place, Granularity, PlaceRequest, Strategy};
use scalescope_topo::{CpuSet, Topology};

#[path = "../../topo/tests/common/mod.rs"]
mod common;

/// The recorded machine `name`, read from its sysfs tree.
fn machine(name: &str) -> Topology {
    scalescope_topo::sysfs::discover(&common::root_of(name), false).unwrap()
}

/// hwloc's logical order from the XML: PU OS indexes, and each Core's PUs.
struct Hwloc {
    pus: Vec<u32>,
    cores: Vec<Vec<u32>>,
    packages: Vec<Vec<u32>>,
}

fn hwloc(name: &str) -> Hwloc {
    let text = std::fs::read_to_string(common::hwloc_xml(name)).unwrap();
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&text, options).unwrap();
    let of_type = |t: &str| -> Vec<roxmltree::Node> {
        doc.descendants()
            .filter(|n| n.attribute("type") == Some(t))
            .collect()
    };
    let pus_under = |n: &roxmltree::Node| -> Vec<u32> {
        n.descendants()
            .filter(|d| d.attribute("type") == Some("PU"))
            .map(|d| d.attribute("os_index").unwrap().parse().unwrap())
            .collect()
    };
    Hwloc {
        pus: of_type("PU")
            .iter()
            .map(|n| n.attribute("os_index").unwrap().parse().unwrap())
            .collect(),
        cores: of_type("Core").iter().map(pus_under).collect(),
        packages: of_type("Package").iter().map(pus_under).collect(),
    }
}

fn numbers(list: &str) -> Vec<usize> {
    list.split(',').map(|n| n.parse().unwrap()).collect()
}

fn arg_after<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == flag)
        .map(|i| args[i + 1].as_str())
}

/// Open MPI 4: rankfile `slot=` lists are logical PU indexes with
/// `--use-hwthread-cpus`, logical core indexes (every PU of the core) without.
fn openmpi_rankfile_binding(r: &Rendered, hw: &Hwloc) -> Vec<BTreeSet<u32>> {
    let hwthreads = r.args.iter().any(|a| a == "--use-hwthread-cpus");
    r.rankfile
        .as_ref()
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let (rank, slot) = line
                .strip_prefix("rank ")
                .unwrap()
                .split_once(" slot=")
                .unwrap();
            assert_eq!(rank.split('=').next().unwrap(), i.to_string());
            numbers(slot)
                .into_iter()
                .flat_map(|n| {
                    if hwthreads {
                        vec![hw.pus[n]]
                    } else {
                        hw.cores[n].clone()
                    }
                })
                .collect()
        })
        .collect()
}

/// Open MPI 4 `--map-by ppr:N:package:PE=T --bind-to core`: N ranks per package,
/// packages in logical order, each rank on the package's next T cores in logical
/// order.
fn openmpi_ppr_binding(args: &[String], hw: &Hwloc) -> Vec<BTreeSet<u32>> {
    let map = arg_after(args, "--map-by").unwrap();
    let (n, pe) = map
        .strip_prefix("ppr:")
        .unwrap()
        .split_once(":package:PE=")
        .unwrap();
    let (n, pe): (usize, usize) = (n.parse().unwrap(), pe.parse().unwrap());
    assert_eq!(arg_after(args, "--bind-to"), Some("core"));
    let mut ranks = Vec::new();
    for pkg in &hw.packages {
        let cores: Vec<&Vec<u32>> = hw.cores.iter().filter(|c| pkg.contains(&c[0])).collect();
        for k in 0..n {
            ranks.push(
                cores[k * pe..(k + 1) * pe]
                    .iter()
                    .flat_map(|c| c.iter().copied())
                    .collect(),
            );
        }
    }
    ranks
}

/// Hydra `-bind-to user:a+b,c`: local rank i gets entry i (mod the entries), OS
/// numbers.
fn hydra_binding(r: &Rendered, ranks: usize) -> Vec<BTreeSet<u32>> {
    let list = arg_after(&r.args, "-bind-to")
        .unwrap()
        .strip_prefix("user:")
        .unwrap();
    let entries: Vec<BTreeSet<u32>> = list
        .split(',')
        .map(|e| e.split('+').map(|c| c.parse().unwrap()).collect())
        .collect();
    (0..ranks)
        .map(|i| entries[i % entries.len()].clone())
        .collect()
}

/// Slurm `--cpu-bind=map_cpu:` / `mask_cpu:`: local task i gets entry i (mod the
/// entries), OS numbers; masks in hex.
fn slurm_binding(r: &Rendered, ranks: usize) -> Vec<BTreeSet<u32>> {
    let bind = r
        .args
        .iter()
        .find_map(|a| a.strip_prefix("--cpu-bind="))
        .unwrap();
    let entries: Vec<BTreeSet<u32>> = if let Some(l) = bind.strip_prefix("map_cpu:") {
        l.split(',').map(|c| [c.parse().unwrap()].into()).collect()
    } else {
        let l = bind.strip_prefix("mask_cpu:").unwrap();
        l.split(',')
            .map(|m| {
                let v = u128::from_str_radix(m.trim_start_matches("0x"), 16).unwrap();
                (0..128).filter(|b| v >> b & 1 == 1).collect()
            })
            .collect()
    };
    assert!(r.args.contains(&"--distribution=block:block".to_string()));
    (0..ranks)
        .map(|i| entries[i % entries.len()].clone())
        .collect()
}

fn planned(plan: &RankPlan) -> Vec<BTreeSet<u32>> {
    plan.ranks.iter().map(|s| s.iter().collect()).collect()
}

fn plans(topo: &Topology) -> Vec<(String, RankPlan)> {
    let usable = topo.usable_pus().count();
    let mut out = Vec::new();
    for strategy in ["compact", "scatter", "cores-first", "spread"] {
        for granularity in [Granularity::Thread, Granularity::Core] {
            for threads in 1..=usable {
                for per_rank in (1..=threads).filter(|t| threads % t == 0) {
                    let mut req = PlaceRequest::new(strategy.parse::<Strategy>().unwrap(), threads);
                    req.granularity = granularity;
                    let p = place(topo, &req).unwrap();
                    let plan = RankPlan::from_placement(&p, per_rank).unwrap();
                    out.push((
                        format!("{strategy} {granularity} {threads}/{per_rank}"),
                        plan,
                    ));
                }
            }
        }
    }
    out
}

/// Checks every plan on `name` for every launcher; returns how many plans the
/// `ppr` form reproduced (and was checked).
fn check_every_launcher(name: &str) -> usize {
    let topo = machine(name);
    let hw = hwloc(name);
    let hosts = vec!["localhost".to_string()];
    let mut ppr_checked = 0;
    for (what, plan) in plans(&topo) {
        let want = planned(&plan);
        let r = render(&topo, Launcher::Mpirun, &plan, &hosts, "rf").unwrap();
        assert_eq!(
            openmpi_rankfile_binding(&r, &hw),
            want,
            "{name} {what}: {:?}",
            r.rankfile
        );
        if let Some(alt) = &r.alternative {
            assert_eq!(
                openmpi_ppr_binding(alt, &hw),
                want,
                "{name} {what}: {alt:?}"
            );
            ppr_checked += 1;
        }
        let r = render(&topo, Launcher::Mpiexec, &plan, &hosts, "").unwrap();
        assert_eq!(
            hydra_binding(&r, want.len()),
            want,
            "{name} {what}: {:?}",
            r.args
        );
        let r = render(&topo, Launcher::Srun, &plan, &hosts, "").unwrap();
        assert_eq!(
            slurm_binding(&r, want.len()),
            want,
            "{name} {what}: {:?}",
            r.args
        );
    }
    ppr_checked
}

#[test]
fn every_launcher_lands_ranks_on_planned_cpus_on_interleaved_2_socket_machine() {
    assert!(check_every_launcher("8em64t-2s2ca2c") > 0);
}

#[test]
fn every_launcher_lands_ranks_on_planned_cpus_on_interleaved_smt_machine_with_offline_cpus() {
    check_every_launcher("16em64t-4s2c2t-offlines");
}

#[test]
fn every_launcher_lands_ranks_on_planned_cpus_on_smt_machine_including_ppr_form() {
    assert!(check_every_launcher("8ia64-2s2c2t") > 0);
}

#[test]
fn os_numbers_in_an_open_mpi_rankfile_would_misplace_ranks_here() {
    // The bug this module fixes: on the interleaved machine, OS CPU 1 is on package
    // 1 but Open MPI's PU 1 is CPU 4 (package 0, the second core under L2 #0).
    let hw = hwloc("8em64t-2s2ca2c");
    assert_eq!(hw.pus[1], 4);
    let topo = machine("8em64t-2s2ca2c");
    assert_eq!(hwloc_order::pu_order(&topo), hw.pus);
    let p = place(&topo, &PlaceRequest::new(Strategy::Scatter, 2)).unwrap();
    let plan = RankPlan::from_placement(&p, 1).unwrap();
    assert_eq!(planned(&plan), [[0].into(), [1].into()]);
    let r = render(&topo, Launcher::Mpirun, &plan, &["h".into()], "rf").unwrap();
    assert_eq!(
        r.rankfile.as_deref(),
        Some("rank 0=h slot=0\nrank 1=h slot=4\n")
    );
}

#[test]
fn logical_order_matches_hwloc_on_every_recorded_machine() {
    let (mut checked, mut differ) = (0, Vec::new());
    for name in common::fixture_names() {
        let name = name.as_str();
        // fakeheterocpunuma: a NUMA node spanning two others, which scalescope's
        // model drops (architecture.md) and hwloc keeps as a Group. cpusetreorder:
        // an XML has no online set, so CPUs outside the cgroup read as offline; it
        // is checked from sysfs below.
        if ["fakeheterocpunuma", "16em64t-4s2ca2c-cpusetreorder"].contains(&name) {
            continue;
        }
        // scalescope's own XML reader: no unpacking, and its model is built by
        // hardware position, independently of the XML's order.
        let xml = common::hwloc_xml(name);
        let topo = scalescope_topo::hwloc_xml::load(&xml).unwrap();
        let hw = hwloc(name);
        let usable: BTreeSet<u32> = topo.usable_cpus().iter().collect();
        // hwloc XML exports keep disallowed PUs; Open MPI's topology does not.
        let xml_usable: Vec<u32> = hw
            .pus
            .iter()
            .copied()
            .filter(|c| usable.contains(c))
            .collect();
        if hwloc_order::pu_order(&topo) != xml_usable {
            differ.push(format!(
                "{name}: {:?} != {xml_usable:?}",
                hwloc_order::pu_order(&topo)
            ));
        }
        checked += 1;
    }
    assert!(checked > 20, "only {checked} recorded machines");
    assert_eq!(differ, Vec::<String>::new());
}

#[test]
fn ranks_on_several_hosts_are_numbered_node_by_node() {
    let topo = machine("8em64t-2s2ca2c");
    let p = place(&topo, &PlaceRequest::new(Strategy::Compact, 2)).unwrap();
    let plan = RankPlan::from_placement(&p, 1).unwrap();
    let hosts = vec!["a".to_string(), "b".to_string()];
    let r = render(&topo, Launcher::Mpirun, &plan, &hosts, "rf").unwrap();
    let lines: Vec<&str> = r.rankfile.as_deref().unwrap().lines().collect();
    assert_eq!(
        lines,
        [
            "rank 0=a slot=0",
            "rank 1=a slot=1",
            "rank 2=b slot=0",
            "rank 3=b slot=1"
        ]
    );
    let r = render(&topo, Launcher::Srun, &plan, &hosts, "").unwrap();
    for want in [
        "--nodes=2",
        "--ntasks=4",
        "--ntasks-per-node=2",
        "--nodelist=a,b",
    ] {
        assert!(r.args.contains(&want.to_string()), "{want} in {:?}", r.args);
    }
    let r = render(&topo, Launcher::Mpiexec, &plan, &hosts, "").unwrap();
    assert_eq!(arg_after(&r.args, "-hosts"), Some("a,b"));
    assert_eq!(arg_after(&r.args, "-ppn"), Some("2"));
}

#[test]
fn two_ranks_per_cpu_ask_for_oversubscription() {
    let topo = machine("8em64t-2s2ca2c");
    let mut req = PlaceRequest::new(Strategy::Compact, 16);
    req.oversubscribe = true;
    let plan = RankPlan::from_placement(&place(&topo, &req).unwrap(), 1).unwrap();
    assert!(plan.shares_cpus());
    let hosts = vec!["localhost".to_string()];
    let mpirun = render(&topo, Launcher::Mpirun, &plan, &hosts, "rf").unwrap();
    assert!(mpirun.args.contains(&"--oversubscribe".to_string()));
    let srun = render(&topo, Launcher::Srun, &plan, &hosts, "").unwrap();
    assert!(srun.args.contains(&"--overcommit".to_string()));
}

#[test]
fn hybrid_ranks_get_their_thread_count_and_whole_sets() {
    let topo = machine("8em64t-2s2ca2c");
    let p = place(&topo, &PlaceRequest::new(Strategy::Compact, 8)).unwrap();
    let plan = RankPlan::from_placement(&p, 4).unwrap();
    assert_eq!(plan.ranks.len(), 2);
    let r = render(&topo, Launcher::Srun, &plan, &["n".into()], "").unwrap();
    assert!(r.env.contains(&("OMP_NUM_THREADS".into(), "4".into())));
    // Slurm must hold each rank's four CPUs for it.
    assert!(r.args.contains(&"--cpus-per-task=4".to_string()), "{r:?}");
    assert!(RankPlan::from_placement(&p, 3).is_err());
    assert!(render(&topo, Launcher::Srun, &plan, &[], "").is_err());
    let _ = CpuSet::new();
}

#[test]
fn logical_order_matches_hwloc_under_a_cgroup_that_reorders_packages() {
    // Read from sysfs, where CPUs outside the cgroup are online but not allowed:
    // hwloc sorts siblings by their complete cpusets, forbidden CPUs included.
    let name = "16em64t-4s2ca2c-cpusetreorder";
    let topo = machine(name);
    let usable: BTreeSet<u32> = topo.usable_cpus().iter().collect();
    let xml: Vec<u32> = hwloc(name)
        .pus
        .into_iter()
        .filter(|c| usable.contains(c))
        .collect();
    assert_eq!(hwloc_order::pu_order(&topo), xml);
    assert_eq!(xml[..2], [8, 4]);
}

#[test]
fn ranks_per_node_values() {
    use scalescope_place::launch::{plan_ranks, RanksPerNode};
    let topo = machine("16em64t-4s2c2t-offlines");
    let cores = topo
        .cores
        .iter()
        .filter(|c| c.cpus.intersects(&topo.usable_cpus()))
        .count();
    assert_eq!(
        "cores".parse::<RanksPerNode>().unwrap().resolve(&topo),
        cores
    );
    assert_eq!(
        "2xcores".parse::<RanksPerNode>().unwrap().resolve(&topo),
        2 * cores
    );
    assert_eq!("3".parse::<RanksPerNode>().unwrap().resolve(&topo), 3);
    for bad in ["0", "x", "0xcores", "-1"] {
        assert!(bad
            .parse::<RanksPerNode>()
            .unwrap_err()
            .to_string()
            .contains(bad));
    }
    // Twice as many ranks as PUs: each PU carries two, in the strategy's order.
    let usable = topo.usable_pus().count();
    let plan = plan_ranks(&topo, &Strategy::Compact, 2 * usable, 1).unwrap();
    assert!(plan.shares_cpus());
    assert_eq!(plan.ranks[..usable], plan.ranks[usable..]);
}

#[test]
fn one_process_per_node_beside_a_run_in_each_launcher() {
    use scalescope_place::launch::one_per_node;
    let hosts = vec!["node1".to_string(), "node2".to_string()];
    let srun = one_per_node(Launcher::Srun, &hosts);
    // A second step must be allowed to share the run's CPUs, and stay unbound.
    for a in [
        "--overlap",
        "--nodes=2",
        "--ntasks-per-node=1",
        "--nodelist=node1,node2",
        "--cpu-bind=none",
    ] {
        assert!(srun.contains(&a.to_string()), "{a}: {srun:?}");
    }
    let mpirun = one_per_node(Launcher::Mpirun, &hosts);
    assert_eq!(arg_after(&mpirun, "--map-by"), Some("ppr:1:node"));
    assert_eq!(arg_after(&mpirun, "--host"), Some("node1,node2"));
    assert_eq!(arg_after(&mpirun, "--bind-to"), Some("none"));
    let hydra = one_per_node(Launcher::Mpiexec, &hosts);
    assert_eq!(arg_after(&hydra, "-ppn"), Some("1"));
    assert_eq!(arg_after(&hydra, "-hosts"), Some("node1,node2"));
}

#[test]
fn open_mpi_as_root_is_told_and_others_are_left_alone() {
    use scalescope_place::launch::{as_root, forward_env};
    let (env, note) = as_root(Launcher::Mpirun, true).unwrap();
    assert!(env.contains(&("OMPI_ALLOW_RUN_AS_ROOT".into(), "1".into())));
    assert!(env.contains(&("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM".into(), "1".into())));
    assert!(note.contains("root"));
    assert!(as_root(Launcher::Mpirun, false).is_none());
    assert!(as_root(Launcher::Srun, true).is_none());
    assert_eq!(forward_env(Launcher::Mpirun, "X"), ["-x", "X"]);
    assert!(forward_env(Launcher::Srun, "X").is_empty());
}
