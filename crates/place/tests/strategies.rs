//! Placement on recorded machines (hwloc XML exports of hwloc's test trees, whose
//! models are checked against hwloc in the topo crate) and on synthetic ones:
//! the machine, the strategy, the expected CPUs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

use proptest::prelude::*;
use scalescope_place::{place, Granularity, PlaceError, PlaceRequest, Restriction, Strategy};
use scalescope_topo::{Source, Topology};

fn recorded(name: &str) -> Topology {
    static CACHE: Mutex<BTreeMap<String, Topology>> = Mutex::new(BTreeMap::new());
    let mut cache = CACHE.lock().unwrap();
    cache
        .entry(name.to_string())
        .or_insert_with(|| {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
                "../../tests/fixtures/topology/{name}/{name}.hwloc.xml"
            ));
            Source::HwlocXml(path).load().unwrap()
        })
        .clone()
}

fn synthetic(spec: &str) -> Topology {
    Source::Synthetic(spec.into()).load().unwrap()
}

fn cpus(topo: &Topology, strategy: &str, threads: usize) -> Vec<String> {
    let req = PlaceRequest::new(strategy.parse().unwrap(), threads);
    place(topo, &req)
        .unwrap()
        .threads
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn cpus_gran(topo: &Topology, strategy: &str, threads: usize, g: Granularity) -> Vec<String> {
    let mut req = PlaceRequest::new(strategy.parse().unwrap(), threads);
    req.granularity = g;
    place(topo, &req)
        .unwrap()
        .threads
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// 2 packages x 4 cores, no SMT; consecutive CPU numbers alternate packages and
/// package 0's cores 0-3 are CPUs 0, 4, 2, 6 (0 and 4 share an L2).
#[test]
fn alternating_dual_socket() {
    let t = recorded("8em64t-2s2ca2c");
    assert_eq!(cpus(&t, "compact", 4), ["0", "4", "2", "6"]);
    assert_eq!(cpus(&t, "scatter", 4), ["0", "1", "4", "5"]);
    assert_eq!(cpus(&t, "cores-first", 5), ["0", "4", "2", "6", "1"]);
    assert_eq!(cpus(&t, "spread", 2), ["0", "1"]);
    assert_eq!(cpus(&t, "spread", 4), ["0", "2", "1", "3"]);
    let err = place(&t, &PlaceRequest::new(Strategy::SmtPairs, 2)).unwrap_err();
    assert_eq!(err, PlaceError::NoSmt);
}

/// 4 packages x 2 cores x 2 threads with CPUs 2, 5, 13, 14 offline; package 0 holds
/// 0, 4, 8, 12 and SMT siblings are 8 apart; package 2's core 0 is left with CPU 10.
#[test]
fn interleaved_with_offline_cpus() {
    let t = recorded("16em64t-4s2c2t-offlines");
    assert_eq!(cpus(&t, "compact", 4), ["0", "8", "4", "12"]);
    assert_eq!(cpus(&t, "smt-pairs", 4), ["0", "8", "4", "12"]);
    assert_eq!(cpus(&t, "cores-first", 4), ["0", "4", "1", "10"]);
    assert_eq!(
        cpus_gran(&t, "compact", 2, Granularity::Core),
        ["0,8", "0,8"]
    );
    assert_eq!(
        cpus_gran(&t, "cores-first", 2, Granularity::Core),
        ["0,8", "4,12"]
    );
    // Every usable PU exactly once; offline ones never.
    let all = cpus(&t, "scatter", 12);
    for off in ["2", "5", "13", "14"] {
        assert!(!all.contains(&off.to_string()));
    }
}

/// Forced hyper-threading on the reference study's shape: 16 threads on 8 cores.
#[test]
fn smt_pairs_on_2x24x2_intel_numbering() {
    let t = synthetic("package:2 numa:1 core:24 pu:2 numbering=smt-last");
    let p = cpus(&t, "smt-pairs", 16);
    assert_eq!(&p[..4], ["0", "48", "1", "49"]);
    assert_eq!(cpus(&t, "cores-first", 26)[23..], ["23", "24", "25"]);
    assert_eq!(cpus(&t, "cores-first", 49)[48], "48");
    assert_eq!(cpus(&t, "scatter", 3), ["0", "24", "1"]);
}

#[test]
fn restrictions_keep_threads_inside() {
    let t = synthetic("package:2 numa:1 core:4 pu:2 numbering=interleaved");
    let mut req = PlaceRequest::new(Strategy::Compact, 4);
    req.restriction = Restriction {
        numa_nodes: Some(vec![1]),
        packages: None,
    };
    let p = place(&t, &req).unwrap();
    assert_eq!(p.all_cpus().to_string(), "1,3,9,11");
    req.restriction = Restriction {
        numa_nodes: None,
        packages: Some(vec![0]),
    };
    req.threads = Some(9);
    let e = place(&t, &req).unwrap_err().to_string();
    assert!(
        e.contains("9 threads requested but only 8 usable PUs on packages 0"),
        "{e}"
    );
    req.restriction = Restriction {
        numa_nodes: Some(vec![7]),
        packages: None,
    };
    assert!(place(&t, &req)
        .unwrap_err()
        .to_string()
        .contains("no usable PU in NUMA nodes 7"));
}

#[test]
fn oversubscription_is_explicit() {
    let t = synthetic("package:1 core:2 pu:1");
    let req = PlaceRequest::new(Strategy::Compact, 3);
    assert!(matches!(
        place(&t, &req),
        Err(PlaceError::TooManyThreads {
            requested: 3,
            available: 2,
            ..
        })
    ));
    let mut req = req;
    req.oversubscribe = true;
    assert_eq!(place(&t, &req).unwrap().threads.len(), 3);
    assert_eq!(
        place(&t, &PlaceRequest::new(Strategy::Compact, 0)).unwrap_err(),
        PlaceError::ZeroThreads
    );
}

#[test]
fn cgroup_restricted_machine_places_only_allowed_pus() {
    let t = recorded("32amd64-4s2n4c-cgroup2");
    let p = place(&t, &PlaceRequest::new(Strategy::Scatter, 6)).unwrap();
    assert_eq!(p.all_cpus(), t.usable_cpus());
}

#[test]
fn likwid_expression_threads_default_to_its_length() {
    let t = synthetic("package:2 numa:1 core:4 pu:2 numbering=smt-last");
    let req = PlaceRequest {
        threads: None,
        ..PlaceRequest::new(Strategy::Cpus("S1:0-1@S0:0".into()), 1)
    };
    let p = place(&t, &req).unwrap();
    assert_eq!(p.first_cpus(), vec![4, 5, 0]);
}

#[test]
fn unknown_strategy_is_one_clear_line() {
    let e = "closest".parse::<Strategy>().unwrap_err().to_string();
    assert!(
        e.starts_with("unknown strategy `closest`") && !e.contains('\n'),
        "{e}"
    );
}

const FIXTURES: [&str; 6] = [
    "8em64t-2s2ca2c",
    "16em64t-4s2c2t-offlines",
    "64fake-4n2s2ca2c2t",
    "32amd64-4s2n4c-cgroup2",
    "fakeheterocpunuma",
    "256ia64-64n2s2c",
];

fn strategies() -> impl proptest::strategy::Strategy<Value = Strategy> {
    prop_oneof![
        Just(Strategy::Compact),
        Just(Strategy::Scatter),
        Just(Strategy::CoresFirst),
        Just(Strategy::Spread),
        Just(Strategy::SmtPairs),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn placements_are_sane(fixture in 0..FIXTURES.len(), strategy in strategies(), frac in 0.0f64..1.0) {
        let t = recorded(FIXTURES[fixture]);
        let usable = t.usable_cpus();
        let n = 1 + ((usable.len() - 1) as f64 * frac) as usize;
        let req = PlaceRequest::new(strategy.clone(), n);
        let p = match place(&t, &req) {
            Err(PlaceError::NoSmt) => return Ok(()),
            Err(PlaceError::TooManyThreads { .. }) if strategy == Strategy::SmtPairs => return Ok(()),
            other => other.unwrap(),
        };
        prop_assert_eq!(p.threads.len(), n);
        prop_assert!(p.all_cpus().is_subset(&usable));
        let firsts = p.first_cpus();
        let mut dedup = firsts.clone();
        dedup.sort_unstable();
        dedup.dedup();
        prop_assert_eq!(dedup.len(), n, "duplicate PU in {:?}", p.threads);
        prop_assert_eq!(&place(&t, &req).unwrap(), &p);
        let n_cores = t.cores.iter().filter(|c| c.cpus.intersects(&usable)).count();
        if strategy == Strategy::CoresFirst && n <= n_cores {
            let mut cores: Vec<usize> = firsts.iter().map(|c| t.pu(*c).unwrap().core.unwrap()).collect();
            cores.sort_unstable();
            cores.dedup();
            prop_assert_eq!(cores.len(), n);
        }
    }
}

/// AMD Opteron 6276 (Bulldozer): the two cores of a compute unit share an L2 but are
/// cores, not hardware threads, as hwloc reads them; so `cores-first` may use both
/// cores of a unit and `smt-pairs` has no SMT to pair.
#[test]
fn bulldozer_compute_units_are_cores() {
    let t = recorded("64amd64-4s2n4ca2co");
    assert_eq!(t.cores.len(), 64);
    assert_eq!(cpus(&t, "cores-first", 64).len(), 64);
    assert_eq!(cpus(&t, "cores-first", 16)[..4], ["0", "8", "1", "9"]);
    let err = place(&t, &PlaceRequest::new(Strategy::SmtPairs, 2)).unwrap_err();
    assert_eq!(err, PlaceError::NoSmt);
}

/// i7-1370P: 6 performance cores with two hardware threads (CPUs 0-11), 8 efficiency
/// cores (12-19). `K1` is the performance kind, `K0` the efficiency kind.
#[test]
fn hybrid_kinds_are_domains() {
    let t = recorded("20em64t-hybrid-1p6c2t+2ca4co1t");
    assert_eq!(t.kinds.len(), 2);
    assert_eq!(cpus(&t, "cpus=K1:0-5", 6), ["0", "2", "4", "6", "8", "10"]);
    assert_eq!(cpus(&t, "cpus=K0:0-1", 2), ["12", "13"]);
    assert_eq!(cpus(&t, "cpus=E:K1:2", 2), ["0", "1"]);
    let one_kind = synthetic("package:1 core:2 pu:1");
    assert_eq!(cpus(&one_kind, "cpus=K0:0-1", 2), ["0", "1"]);
    let err = place(
        &one_kind,
        &PlaceRequest::new("cpus=K1:0".parse().unwrap(), 1),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("K0-K0"), "{err}");
}
