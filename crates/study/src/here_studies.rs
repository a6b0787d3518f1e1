//! The graph-mining, NUMA-structure and TPC-H rows (see [`crate::here`]).

use scalescope_analysis::Boundary;
use scalescope_place::{place, PlaceRequest, Strategy};
use scalescope_topo::Topology;

use crate::here::{curve, knee_at, speedup_text, Here, Outputs};
use crate::published::Figure;

/// Graph mining: speedups, forced hyper-threading, the bends, cross-node traffic.
pub fn graph_mining(f: &Figure, o: &Outputs) -> Here {
    let facts = &o.facts;
    let Some(set) = o.sets.get("graph") else {
        return o.missing("graph");
    };
    let cores_first = curve(set, &Strategy::CoresFirst);
    let smt = curve(set, &Strategy::SmtPairs);
    match f.id.as_str() {
        "speedup-all-cores" => match cores_first.and_then(|c| speedup_text(c, facts.cores)) {
            Some((s, text)) => Here::measured(
                format!("{text}, one per core"),
                format!(
                    "efficiency {:.2} on {} cores here; 0.85 published (41x on 48 cores)",
                    s / facts.cores as f64,
                    facts.cores
                ),
            ),
            None => Here::unavailable(format!("no cores-first point at {} threads", facts.cores)),
        },
        "speedup-forced-ht" => match (
            facts.no_smt(),
            smt.and_then(|c| speedup_text(c, facts.cores)),
        ) {
            (Some(why), _) => Here::cannot(why),
            (None, Some((s, text))) => Here::measured(
                format!("{text} on {} cores (two per core)", facts.cores / 2),
                format!(
                    "{:.2} per core used here; 1.25 published (30x on 24 cores)",
                    s / (facts.cores / 2).max(1) as f64
                ),
            ),
            (None, None) => {
                Here::unavailable(format!("no smt-pairs point at {} threads", facts.cores))
            }
        },
        "ht-yield" => match (facts.no_smt(), set.analysis.smt_yield.ratio) {
            (Some(why), _) => Here::cannot(why),
            (None, Some(r)) => Here::measured(
                format!("{r:.2} (two threads per core against one, same threads)"),
                compare_ratio(r, 0.7317),
            ),
            (None, None) => Here::unavailable(
                set.analysis
                    .smt_yield
                    .unavailable
                    .clone()
                    .unwrap_or_else(|| "no like-with-like pair measured".into()),
            ),
        },
        "bend-smt" => bend(
            facts.no_smt(),
            cores_first,
            &[Boundary::AllCores, Boundary::Smt],
            "sharing cores",
        ),
        "bend-socket" => bend(
            facts.one_package(),
            cores_first,
            &[Boundary::Package, Boundary::Numa],
            "the second socket",
        ),
        "remote-traffic-one-socket" => traffic(o, set, facts.cores / facts.packages.max(1)),
        "remote-traffic-two-sockets" => traffic(o, set, facts.cores),
        _ => Here::unavailable("no measurement here for this figure"),
    }
}

fn compare_ratio(here: f64, published: f64) -> String {
    let side = if here > published {
        "above"
    } else {
        "at or below"
    };
    format!("{side} the published {published:.2}")
}

fn bend(
    absent: Option<String>,
    c: Option<&scalescope_analysis::Curve>,
    kinds: &[Boundary],
    what: &str,
) -> Here {
    if let Some(why) = absent {
        return Here::cannot(why);
    }
    let Some(c) = c else {
        return Here::unavailable("no cores-first curve");
    };
    match kinds.iter().find_map(|k| knee_at(c, *k)) {
        Some(text) => Here::measured(
            text,
            format!("a bend where threads reach {what}, as published"),
        ),
        None => Here::measured(
            "no bend found there",
            format!(
                "the curve does not bend significantly at {what} here (the analysis' knee test)"
            ),
        ),
    }
}

fn traffic(o: &Outputs, set: &scalescope_report::ResultSet, threads: usize) -> Here {
    if let Some(why) = o.facts.one_node() {
        return Here::cannot(why);
    }
    let e = set
        .analysis
        .evidence
        .iter()
        .find(|e| e.point.threads == threads && e.point.placement == Strategy::CoresFirst);
    match e {
        Some(e) => match (e.cross_node_bytes, &e.cross_node_unavailable) {
            (Some(b), _) => Here::measured(
                format!("{:.3} GB at {threads} threads", b / 1e9),
                "bytes between nodes over the run (median run)",
            ),
            (None, why) => Here::unavailable(
                why.clone()
                    .unwrap_or_else(|| "no cross-node counter read".into()),
            ),
        },
        None => Here::unavailable(format!("no evidence at {threads} threads")),
    }
}

fn matrix_field(o: &Outputs, pointer: &str) -> Option<f64> {
    o.docs.get("matrix")?.pointer(pointer)?.as_f64()
}

fn topology(o: &Outputs) -> Option<Topology> {
    serde_json::from_value(o.docs.get("topo")?.clone()).ok()
}

/// NUMA structure: SLIT against measured levels and hops, bandwidth, numbering, placements.
pub fn numa_structure(f: &Figure, o: &Outputs) -> Here {
    let facts = &o.facts;
    let one_node = facts.one_node();
    match f.id.as_str() {
        "slit-levels" | "measured-levels" | "max-hops" if one_node.is_some() => {
            Here::cannot(one_node.unwrap_or_default())
        }
        "slit-levels" => levels(o, "/bandwidth_hops/slit_levels", f),
        "measured-levels" => levels(o, "/bandwidth_hops/noise/separated_levels", f),
        "max-hops" => levels(o, "/bandwidth_hops/max_hops", f),
        "aggregate-bandwidth" => aggregate(o),
        "cpu0-cpu1-same-package" => match (facts.one_package(), topology(o)) {
            (Some(why), _) => Here::cannot(why),
            (None, Some(t)) => {
                let pkg = |c: u32| t.pus.iter().find(|p| p.cpu == c).and_then(|p| p.package);
                let same = pkg(0).is_some() && pkg(0) == pkg(1);
                Here::measured(
                    if same { "yes" } else { "no" },
                    format!(
                        "numbered like the {} server",
                        if same { "Sun" } else { "HP" }
                    ),
                )
            }
            (None, None) => o.missing("topo"),
        },
        "scatter-two-threads-packages" => match (facts.one_package(), topology(o)) {
            (Some(why), _) => Here::cannot(why),
            (None, Some(t)) => match place(&t, &PlaceRequest::new(Strategy::Scatter, 2)) {
                Ok(p) => {
                    let n = packages_of(&t, &p.first_cpus());
                    Here::measured(
                        format!("{n} packages"),
                        if n == 2 {
                            "as published: scatter crosses sockets whatever the numbering"
                        } else {
                            "differs from the published 2"
                        },
                    )
                }
                Err(e) => Here::unavailable(e.to_string()),
            },
            (None, None) => o.missing("topo"),
        },
        "runtime-placement-verified" => crate::here_kernels::runtime_verified(o),
        _ => Here::unavailable("no measurement here for this figure"),
    }
}

fn packages_of(t: &Topology, cpus: &[u32]) -> usize {
    let mut p: Vec<usize> = cpus
        .iter()
        .filter_map(|c| t.pus.iter().find(|p| p.cpu == *c)?.package)
        .collect();
    p.sort_unstable();
    p.dedup();
    p.len()
}

fn levels(o: &Outputs, pointer: &str, f: &Figure) -> Here {
    match matrix_field(o, pointer) {
        Some(v) => Here::measured(
            format!("{v}"),
            match f.value {
                Some(p) if (p - v).abs() < 0.5 => "the same as published".to_string(),
                Some(p) => format!("published {p}: this machine's interconnect differs"),
                None => String::new(),
            },
        ),
        None => o.missing("matrix"),
    }
}

fn aggregate(o: &Outputs) -> Here {
    let Some(m) = o
        .docs
        .get("matrix")
        .and_then(|d| d.pointer("/matrix/bandwidth_gb_per_s"))
        .and_then(|v| v.as_array())
    else {
        return o.missing("matrix");
    };
    let diag: f64 = m
        .iter()
        .enumerate()
        .filter_map(|(i, row)| row.get(i)?.as_f64())
        .sum();
    Here::measured(
        format!("{diag:.1} GB/s over {} node(s)", m.len()),
        "the sum of each node's local cell, measured one node at a time (the study loaded every socket at once)",
    )
}

/// TPC-H: query times at the published core counts, and scaling across sockets.
pub fn tpch(f: &Figure, o: &Outputs) -> Here {
    let facts = &o.facts;
    if f.id == "scaling-across-sockets" {
        return match facts.one_package() {
            Some(why) => Here::cannot(why),
            None => match o
                .sets
                .get("q1-numa")
                .and_then(|s| curve(s, &Strategy::CoresFirst))
                .and_then(|c| speedup_text(c, facts.cores))
            {
                Some((_, t)) => {
                    Here::measured(t, "speedup over one thread with every socket's cores")
                }
                None => o.missing("q1-numa"),
            },
        };
    }
    let (Some(q), Some(t)) = (f.query.as_deref(), f.threads) else {
        return Here::unavailable("figure without query and threads");
    };
    if let Some(why) = facts.too_few_cpus(t) {
        return Here::cannot(why);
    }
    let point = |layout: &str| {
        let set = o.sets.get(&format!("{q}-{layout}"))?;
        let rows = lineitem_rows(set.header.command.params.get("sf")?.parse().ok()?)?;
        let c = curve(set, &Strategy::CoresFirst)?;
        let p = c.points.iter().find(|p| p.threads == t)?;
        // The runs' figure is the fastest query's rows per second.
        Some((rows / p.metric_median? * 1000.0, p.speedup))
    };
    match point("numa") {
        Some((ms, s)) => {
            let naive = point("naive")
                .map(|(n, _)| format!("; naive layout {n:.1} ms"))
                .unwrap_or_default();
            let published = if q == "q1" { 5300.0 } else { 3606.0 };
            let ps = f.value.map(|v| published / v).unwrap_or(f64::NAN);
            Here::measured(
                format!("{ms:.1} ms (fastest of the run's queries){naive}"),
                format!("speedup {s:.2}x here, {ps:.2}x published"),
            )
        }
        None => o.missing(&format!("{q}-numa")),
    }
}

/// Rows of lineitem at the scale factors with reference answers (dbgen's counts).
fn lineitem_rows(sf: f64) -> Option<f64> {
    [(0.01, 60_175.0), (0.1, 600_572.0), (1.0, 6_001_215.0)]
        .iter()
        .find(|(s, _)| (s - sf).abs() < 1e-9)
        .map(|(_, r)| *r)
}
