//! Rows of the published-vs-here table from outputs made here: the numbering rows
//! of the NUMA-structure study on machines numbered like each of the study's two
//! servers, and rows that cannot occur on one node without SMT.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::collections::BTreeMap;

use scalescope_study::here::{rows, Here, Outputs};
use scalescope_study::{published, Facts, StudyName};
use scalescope_topo::Source;

fn outputs(spec: &str) -> Outputs {
    let topo = Source::Synthetic(spec.into()).load().unwrap();
    let facts = Facts::of(&topo, std::path::Path::new("/nonexistent/scalescope"), None);
    let mut docs = BTreeMap::new();
    docs.insert("topo".to_string(), serde_json::to_value(&topo).unwrap());
    Outputs {
        facts,
        sets: BTreeMap::new(),
        docs,
        missing: BTreeMap::new(),
    }
}

fn here(study: StudyName, o: &Outputs, id: &str) -> Here {
    let figures = published::of(study).unwrap().figures;
    rows(study, &figures, o)
        .into_iter()
        .find(|r| r.figure.id == id)
        .unwrap()
        .here
}

fn value(h: Here) -> String {
    match h {
        Here::Measured { value, .. } => value,
        other => panic!("not measured: {other:?}"),
    }
}

#[test]
fn numbered_like_the_sun_server_cpus_0_and_1_share_a_package() {
    let o = outputs("package:2 core:4 pu:2 numbering=smt-last");
    assert_eq!(
        value(here(StudyName::NumaStructure, &o, "cpu0-cpu1-same-package")),
        "yes"
    );
    assert_eq!(
        value(here(
            StudyName::NumaStructure,
            &o,
            "scatter-two-threads-packages"
        )),
        "2 packages"
    );
}

#[test]
fn numbered_like_the_hp_server_cpus_0_and_1_are_on_two_packages() {
    let o = outputs("package:2 core:4 pu:2 numbering=interleaved");
    assert_eq!(
        value(here(StudyName::NumaStructure, &o, "cpu0-cpu1-same-package")),
        "no"
    );
    assert_eq!(
        value(here(
            StudyName::NumaStructure,
            &o,
            "scatter-two-threads-packages"
        )),
        "2 packages"
    );
}

#[test]
fn one_node_without_smt_says_why_rows_cannot_occur() {
    let o = outputs("package:1 core:2 pu:1");
    for id in ["slit-levels", "cpu0-cpu1-same-package"] {
        assert!(
            matches!(
                here(StudyName::NumaStructure, &o, id),
                Here::CannotOccur { .. }
            ),
            "{id}"
        );
    }
    assert!(matches!(
        here(StudyName::NumaStructure, &o, "aggregate-bandwidth"),
        Here::Unavailable { .. }
    ));
    let tpch = here(StudyName::TpchNuma, &o, "q1-ms-64");
    assert_eq!(
        tpch,
        Here::cannot("64 threads: this machine has 2 usable CPUs")
    );
}
