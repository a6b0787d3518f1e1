//! How the corpora that test the null (issue 32) score an analysis: smooth
//! families (a knee of medium or high confidence at a topology boundary is a
//! false attribution), knee families (found with the right boundary, a cap at no
//! boundary put at one), and what every curve is checked for (findings the
//! consistency checker dropped, intervals outside their domain, contradictory
//! knees, high confidence from one repetition). Shared by `null_corpus.rs` and
//! `held_out_v2.rs`, so both sets are generated, analysed and counted alike.

#![allow(dead_code)] // each test uses part of it

use std::collections::BTreeMap;

use crate::generator::{design, header, run, Rng};
use crate::power::{critical, noncentrality_at, power};
use scalescope_analysis::events::{events, EventKind, TopologyEvent};
use scalescope_analysis::knee::Bend;
use scalescope_analysis::{analyze, Analysis, Basis, Boundary, EvidenceItem, FindingKind};
use scalescope_place::Strategy;
use scalescope_topo::{Source, Topology};

/// A speedup curve S(p).
pub type Shape = Box<dyn Fn(f64) -> f64>;

/// A smooth family with one parameter choice.
pub struct Smooth {
    pub family: &'static str,
    pub params: String,
    pub held_out: bool,
    pub f: Shape,
}

pub fn smooth(family: &'static str, params: &str, held_out: bool, f: Shape) -> Smooth {
    Smooth {
        family,
        params: params.into(),
        held_out,
        f,
    }
}

/// Thread counts: the product's boundary design, or doubling from 1.
pub fn grids(topo: &Topology) -> Vec<(&'static str, Vec<usize>)> {
    let max = topo.usable_cpus().len();
    let mut doubling: Vec<usize> = std::iter::successors(Some(1usize), |p| Some(p * 2))
        .take_while(|p| *p < max)
        .collect();
    doubling.push(max);
    vec![("boundaries", design(topo, max)), ("doubling", doubling)]
}

/// A sweep of `speedup` on `topo` over `threads` (cores-first unless told), each
/// run's time 100 / S(p) with lognormal noise of `cv`.
pub fn sweep(
    topo: &Topology,
    threads: Vec<usize>,
    (reps, cv, seed): (usize, f64, u64),
    placements: &[Strategy],
    speedup: &dyn Fn(&Strategy, usize) -> f64,
) -> (
    scalescope_model::store::Header,
    Vec<scalescope_model::store::RunRecord>,
) {
    let mut h = header(topo, threads, reps);
    h.plan.placements = placements.to_vec();
    let mut rng = Rng::new(seed);
    let sigma = (1.0 + cv * cv).ln().sqrt();
    let mut records = Vec::new();
    for point in h.plan.points() {
        let s = speedup(&point.placement, point.threads);
        for rep in 0..reps {
            let noise = (sigma * rng.normal() - sigma * sigma / 2.0).exp();
            records.push(run(point.clone(), rep, 100.0 / s * noise));
        }
    }
    (h, records)
}

/// What every analysed curve is checked for, whatever its origin.
#[derive(Default, Debug)]
pub struct Integrity {
    pub analyses: usize,
    pub dropped: usize,
    pub out_of_domain: usize,
    pub contradictions: usize,
    pub high_from_one_rep: usize,
    pub notes: Vec<String>,
}

impl Integrity {
    pub fn check(&mut self, label: &str, a: &Analysis, reps: usize) {
        self.analyses += 1;
        self.dropped += a.consistency.dropped.len();
        for d in &a.consistency.dropped {
            self.notes
                .push(format!("{label}: dropped {}: {}", d.title, d.reason));
        }
        let bad = intervals_outside_domain(a);
        self.out_of_domain += bad.len();
        self.notes
            .extend(bad.into_iter().map(|b| format!("{label}: {b}")));
        let mut seen = BTreeMap::new();
        for f in a.findings.iter().filter(|f| f.kind == FindingKind::Knee) {
            if let Some(prev) = seen.insert((f.curve.clone(), f.after_threads), f.title.clone()) {
                self.contradictions += 1;
                self.notes.push(format!("{label}: {prev} / {}", f.title));
            }
        }
        if reps < 2 {
            self.high_from_one_rep += a
                .findings
                .iter()
                .filter(|f| f.confidence.label == "high")
                .count();
        }
    }

    pub fn print(&self) {
        eprintln!(
            "integrity over {} analyses: {} findings dropped by the consistency checker, {} intervals outside their domain, {} contradictory pairs, {} high-confidence findings from one repetition",
            self.analyses, self.dropped, self.out_of_domain, self.contradictions, self.high_from_one_rep
        );
        for n in self.notes.iter().take(40) {
            eprintln!("  {n}");
        }
    }

    /// The counts that must all be zero.
    pub fn failures(&self) -> (usize, usize, usize, usize) {
        (
            self.dropped,
            self.out_of_domain,
            self.contradictions,
            self.high_from_one_rep,
        )
    }
}

/// Every interval that leaves its quantity's domain (speedups, ratios and times
/// are positive).
fn intervals_outside_domain(a: &Analysis) -> Vec<String> {
    let mut out = Vec::new();
    let mut pos = |what: String, ci: Option<(f64, f64)>| {
        if let Some((lo, hi)) = ci {
            if !(lo > 0.0 && hi >= lo) {
                out.push(format!("{what} [{lo}, {hi}]"));
            }
        }
    };
    for c in &a.curves {
        for p in &c.points {
            pos(format!("speedup at {}", p.threads), p.speedup_ci95);
            pos(format!("time at {}", p.threads), p.time_ci95_secs);
        }
    }
    for p in &a.smt_yield.pairs {
        pos(format!("SMT yield at {}", p.cores), p.ci95);
    }
    for c in &a.placement_comparisons {
        pos(format!("placement ratio at {}", c.threads), c.ci95);
    }
    for f in &a.findings {
        for e in &f.evidence {
            match &e.item {
                EvidenceItem::Speedup { ci95, .. } | EvidenceItem::Comparison { ci95, .. } => {
                    pos(format!("evidence of {}", f.title), *ci95)
                }
                _ => {}
            }
        }
    }
    out
}

/// Per family: curves, knees, knees of medium or high confidence attributed to a
/// boundary (false attributions), curves with a high-confidence knee.
#[derive(Default, Debug, Clone)]
pub struct NullTally {
    pub curves: usize,
    pub knees: usize,
    pub false_attributions: usize,
    pub high_curves: usize,
}

impl NullTally {
    fn add(&mut self, t: &NullTally) {
        self.curves += t.curves;
        self.knees += t.knees;
        self.false_attributions += t.false_attributions;
        self.high_curves += t.high_curves;
    }
}

fn score_null(a: &Analysis, t: &mut NullTally, notes: &mut Vec<String>, label: &str) {
    t.curves += 1;
    let knees = &a.curves[0].knees;
    t.knees += knees.len();
    let confident = |l: &str| l == "high" || l == "medium";
    for k in knees {
        if confident(&k.knee.confidence.label) && k.boundary != Boundary::None {
            t.false_attributions += 1;
            notes.push(format!(
                "{label}: knee after {} ({:?}, {}, change {:+.0}%{})",
                k.knee.threads,
                k.boundary,
                k.knee.confidence.label,
                k.knee.change * 100.0,
                if k.implied_by.is_some() {
                    ", implied"
                } else {
                    ""
                }
            ));
        }
    }
    t.high_curves += usize::from(knees.iter().any(|k| k.knee.confidence.label == "high"));
}

/// The smooth families at 3 repetitions and 3% CV on every shape and grid, three
/// seeds each (`seed_base` + 0..3, plus 1000 for a held-out family), keyed by
/// (held out, family).
pub fn null_corpus(
    families: &[Smooth],
    shapes: &[(&str, &str)],
    seed_base: u64,
    integrity: &mut Integrity,
) -> BTreeMap<(bool, String), NullTally> {
    let mut out: BTreeMap<(bool, String), NullTally> = BTreeMap::new();
    let mut notes = Vec::new();
    for fam in families {
        for (shape, spec) in shapes {
            let topo = Source::Synthetic((*spec).into()).load().unwrap();
            for (grid, threads) in grids(&topo) {
                for seed in 0..3u64 {
                    let seed = seed_base + seed + if fam.held_out { 1000 } else { 0 };
                    let (h, r) = sweep(
                        &topo,
                        threads.clone(),
                        (3, 0.03, seed * 7919 + 3),
                        &[Strategy::CoresFirst],
                        &|_, p| (fam.f)(p as f64),
                    );
                    let a = analyze(&h, &r, &Basis::Time);
                    let label = format!(
                        "{} {} on {shape} ({grid}, seed {seed})",
                        fam.family, fam.params
                    );
                    integrity.check(&label, &a, 3);
                    let t = out
                        .entry((fam.held_out, fam.family.to_string()))
                        .or_default();
                    score_null(&a, t, &mut notes, &label);
                }
            }
        }
    }
    for n in &notes {
        eprintln!("FALSE ATTRIBUTION {n}");
    }
    out
}

/// Prints the smooth families' table (docs/ANALYSIS.md's form) and returns the
/// totals per set (keyed by held out).
pub fn print_null(
    null: &BTreeMap<(bool, String), NullTally>,
    sets: [&str; 2],
) -> BTreeMap<bool, NullTally> {
    eprintln!("| set | family | curves | knees reported | medium/high knees at a boundary | curves with a high-confidence knee |");
    eprintln!("|---|---|---|---|---|---|");
    let mut totals: BTreeMap<bool, NullTally> = BTreeMap::new();
    for ((held, fam), t) in null {
        eprintln!(
            "| {} | {fam} | {} | {} | {} | {} |",
            sets[usize::from(*held)],
            t.curves,
            t.knees,
            t.false_attributions,
            t.high_curves
        );
        totals.entry(*held).or_default().add(t);
    }
    for (held, t) in &totals {
        eprintln!(
            "| {} | all smooth | {} | {} | {} | {} ({:.1}%) |",
            sets[usize::from(*held)],
            t.curves,
            t.knees,
            t.false_attributions,
            t.high_curves,
            100.0 * ratio(t.high_curves, t.curves)
        );
    }
    totals
}

/// A curve with known knees: a base curve (linear, or Amdahl's with a serial
/// part) up to the first knee, then each knee's new slope.
pub struct KneeFamily {
    pub name: &'static str,
    /// (name, synthetic spec) of the machine.
    pub machine: (&'static str, &'static str),
    pub held_out: bool,
    /// (last thread count before the change, the slope after it relative to the
    /// slope before) in order.
    pub knees: Vec<(usize, f64)>,
    /// The curve's start: 0 (linear) or an Amdahl serial part.
    pub serial: f64,
}

impl KneeFamily {
    /// A knee family of a held-out set.
    pub fn held_out(
        name: &'static str,
        machine: (&'static str, &'static str),
        knees: Vec<(usize, f64)>,
        serial: f64,
    ) -> Self {
        KneeFamily {
            name,
            machine,
            held_out: true,
            knees,
            serial,
        }
    }

    /// The noise-free speedup: Amdahl's (or linear) up to the first knee, then the
    /// slope after each knee relative to the slope before it. With
    /// `SCALESCOPE_KNEE_SERIAL=whole` in the environment (docs/ANALYSIS.md, "The
    /// eighth round"), the serial part holds over the whole machine instead:
    /// Amdahl's law applied to the linear curve with the knees, so the curve keeps
    /// bending after them.
    pub fn speedup(&self, p: f64) -> f64 {
        let whole = std::env::var("SCALESCOPE_KNEE_SERIAL").is_ok_and(|v| v == "whole");
        if whole && self.serial > 0.0 {
            let rate = self.bent_from(p, |p| p);
            return 1.0 / (self.serial + (1.0 - self.serial) / rate);
        }
        self.bent_from(p, |p: f64| 1.0 / (self.serial + (1.0 - self.serial) / p))
    }

    /// `base` up to the first knee, then the slope after each knee relative to the
    /// slope before it.
    fn bent_from(&self, p: f64, base: impl Fn(f64) -> f64) -> f64 {
        let Some(&(k0, _)) = self.knees.first() else {
            return base(p);
        };
        let k0 = k0 as f64;
        if p <= k0 {
            return base(p);
        }
        let mut s = base(k0);
        let mut slope = (base(k0) - base(k0 - 1.0)).max(0.0);
        for (i, (k, r)) in self.knees.iter().enumerate() {
            let k = *k as f64;
            let end = self.knees.get(i + 1).map_or(f64::MAX, |n| n.0 as f64);
            slope *= r;
            let step = (p.min(end) - k).max(0.0);
            s += slope * step;
            if p <= end {
                break;
            }
        }
        s
    }
}

pub fn boundary_of(kind: &EventKind) -> Boundary {
    match kind {
        EventKind::NewPackage => Boundary::Package,
        EventKind::NewNumaNode => Boundary::Numa,
        EventKind::NewL3 => Boundary::L3,
        EventKind::AllCoresBusy => Boundary::AllCores,
        EventKind::SmtSharing => Boundary::Smt,
        EventKind::Oversubscribed => Boundary::Oversubscribed,
        EventKind::NewNode => Boundary::Node,
    }
}

/// Whether a reported knee (threads, next) shows a true change after k: within one
/// measured point.
pub fn shows(grid: &[usize], threads: usize, next: usize, k: usize) -> bool {
    let prev = grid
        .iter()
        .copied()
        .filter(|&t| t < threads)
        .max()
        .unwrap_or(threads);
    prev <= k + 1 && k <= next
}

#[derive(Default, Debug, Clone)]
pub struct KneeTally {
    pub curves: usize,
    pub truths: usize,
    pub found_right: usize,
    /// Of those, the ones found with medium or high confidence.
    pub found_confident: usize,
    /// Knees near a cap at no boundary attributed to a boundary.
    pub cap_attributed: usize,
    /// Knees matching no truth, of medium or high confidence.
    pub false_confident: usize,
    /// Truths not found but reported undecided (a side too short).
    pub undecided: usize,
    /// The recall any test at the detector's false-alarm rate can expect: the sum
    /// over the truths of the power of the F test for their hinge against the
    /// null (`support/power.rs`).
    pub ceiling: f64,
    /// Truths whose power is at least 0.95 (the data can show them), and of
    /// those, the ones found with the right boundary.
    pub detectable: usize,
    pub detectable_found: usize,
}

impl KneeTally {
    fn add(&mut self, t: &KneeTally) {
        self.curves += t.curves;
        self.truths += t.truths;
        self.found_right += t.found_right;
        self.found_confident += t.found_confident;
        self.cap_attributed += t.cap_attributed;
        self.false_confident += t.false_confident;
        self.undecided += t.undecided;
        self.ceiling += t.ceiling;
        self.detectable += t.detectable;
        self.detectable_found += t.detectable_found;
    }
}

/// The power of a test at the detector's critical value for each of `fam`'s
/// knees on `grid` (3 repetitions, 3% CV).
fn powers(fam: &KneeFamily, grid: &[usize], boundaries: &[usize]) -> Vec<f64> {
    let y0 = fam.speedup(grid[0] as f64);
    let y: Vec<f64> = grid.iter().map(|&t| fam.speedup(t as f64) / y0).collect();
    let idx = |k: usize| grid.iter().position(|&t| t >= k).unwrap_or(grid.len() - 1);
    let positions = (1..grid.len().saturating_sub(2))
        .filter(|&j| boundaries.contains(&grid[j]))
        .count();
    // A knee at no boundary is searched for among every admissible position.
    let c = |k: usize| {
        let n = if boundaries.contains(&k) {
            positions
        } else {
            grid.len() - 3
        };
        critical(grid.len(), 3, n)
    };
    fam.knees
        .iter()
        .map(|&(k, _)| {
            let others: Vec<usize> = fam
                .knees
                .iter()
                .filter(|o| o.0 != k)
                .map(|o| idx(o.0))
                .collect();
            power(noncentrality_at(grid, &y, 3, 0.03, &others, k), c(k))
        })
        .collect()
}

/// The knee families on the product's boundary design (a grid with one point
/// past a knee can only call it undecided), 3 repetitions at 3% CV, six seeds
/// each (`seed_base` + 0..6, plus 1000 for a held-out family).
pub fn knee_corpus(
    families: &[KneeFamily],
    seed_base: u64,
    integrity: &mut Integrity,
) -> BTreeMap<(bool, String), KneeTally> {
    let mut out: BTreeMap<(bool, String), KneeTally> = BTreeMap::new();
    for fam in families {
        let (shape, spec) = fam.machine;
        let topo = Source::Synthetic(spec.into()).load().unwrap();
        let max = topo.usable_cpus().len();
        let ev = events(&topo, &Strategy::CoresFirst, max);
        let boundaries: Vec<usize> = ev.iter().map(|e| e.last_before_change()).collect();
        for (grid, threads) in grids(&topo).into_iter().take(1) {
            let powers = powers(fam, &threads, &boundaries);
            for seed in 0..6u64 {
                let seed = seed_base + seed + if fam.held_out { 1000 } else { 0 };
                let (h, r) = sweep(
                    &topo,
                    threads.clone(),
                    (3, 0.03, seed * 104_729 + 11),
                    &[Strategy::CoresFirst],
                    &|_, p| fam.speedup(p as f64),
                );
                let a = analyze(&h, &r, &Basis::Time);
                let label = format!("{} on {shape} ({grid}, seed {seed})", fam.name);
                integrity.check(&label, &a, 3);
                let t = out
                    .entry((fam.held_out, format!("{} on {shape}", fam.name)))
                    .or_default();
                score_knees(&a, fam, &ev, &threads, &powers, t, &label);
            }
        }
    }
    out
}

fn score_knees(
    a: &Analysis,
    fam: &KneeFamily,
    ev: &[TopologyEvent],
    grid: &[usize],
    powers: &[f64],
    t: &mut KneeTally,
    label: &str,
) {
    t.curves += 1;
    let knees = &a.curves[0].knees;
    for (&(k, r), &pw) in fam.knees.iter().zip(powers) {
        let mut truth: Vec<Boundary> = ev
            .iter()
            .filter(|e| e.last_before_change() == k)
            .map(|e| boundary_of(&e.kind))
            .collect();
        if truth.is_empty() {
            truth.push(Boundary::None);
        }
        t.truths += 1;
        // A knee shows this truth where it lies within one measured point of it
        // and bends the same way (a steepening after the next boundary is not
        // the cap before it).
        let way = if r < 1.0 {
            Bend::Flattens
        } else {
            Bend::Steepens
        };
        let near: Vec<_> = knees
            .iter()
            .filter(|x| shows(grid, x.knee.threads, x.knee.next_threads, k))
            .filter(|x| x.knee.bend == way)
            .collect();
        let right = near.iter().any(|x| truth.contains(&x.boundary));
        t.found_right += usize::from(right);
        t.found_confident += usize::from(near.iter().any(|x| {
            truth.contains(&x.boundary)
                && (x.knee.confidence.label == "high" || x.knee.confidence.label == "medium")
        }));
        t.ceiling += pw;
        if pw >= 0.95 {
            t.detectable += 1;
            t.detectable_found += usize::from(right);
        }
        let und = &a.curves[0].undecided;
        t.undecided += usize::from(
            !right
                && und
                    .iter()
                    .any(|u| shows(grid, u.threads, u.next_threads, k)),
        );
        if !right && std::env::var_os("CORPUS_FN").is_some() {
            eprintln!(
                "FN {label}: truth after {k} {truth:?} (power {pw:.2}); knees {:?}",
                knees
                    .iter()
                    .map(|x| (x.knee.threads, x.boundary, x.knee.confidence.label.clone()))
                    .collect::<Vec<_>>()
            );
        }
        if truth == [Boundary::None] {
            t.cap_attributed += near.iter().filter(|x| x.boundary != Boundary::None).count();
        }
    }
    let at_no_truth: Vec<_> = knees
        .iter()
        .filter(|x| x.knee.confidence.label == "high" || x.knee.confidence.label == "medium")
        .filter(|x| {
            !fam.knees.iter().any(|(k, r)| {
                let way = if *r < 1.0 {
                    Bend::Flattens
                } else {
                    Bend::Steepens
                };
                x.knee.bend == way && shows(grid, x.knee.threads, x.knee.next_threads, *k)
            })
        })
        .collect();
    if std::env::var_os("CORPUS_FN").is_some() {
        for x in &at_no_truth {
            eprintln!(
                "CONFIDENT AT NO TRUTH {label}: after {} ({:?}, {}, {:?}, change {:.2})",
                x.knee.threads, x.boundary, x.knee.confidence.label, x.knee.bend, x.knee.change
            );
        }
    }
    t.false_confident += at_no_truth.len();
}

/// Prints the knee families' table and returns the totals per set.
pub fn print_knees(
    knees: &BTreeMap<(bool, String), KneeTally>,
    sets: [&str; 2],
) -> BTreeMap<bool, KneeTally> {
    eprintln!("| set | knee family | curves | true knees | found with the right boundary | of them medium/high | recall | recall a test can expect | knees a test finds 95% of | of them found | cap knees put at a boundary | confident knees at no truth | missed but undecided |");
    eprintln!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut ktot: BTreeMap<bool, KneeTally> = BTreeMap::new();
    let row = |set: &str, fam: &str, t: &KneeTally| {
        eprintln!(
            "| {set} | {fam} | {} | {} | {} | {} | {:.3} | {:.3} | {} | {} | {} | {} | {} |",
            t.curves,
            t.truths,
            t.found_right,
            t.found_confident,
            ratio(t.found_right, t.truths),
            t.ceiling / t.truths.max(1) as f64,
            t.detectable,
            t.detectable_found,
            t.cap_attributed,
            t.false_confident,
            t.undecided
        );
    };
    for ((held, fam), t) in knees {
        row(sets[usize::from(*held)], fam, t);
        ktot.entry(*held).or_default().add(t);
    }
    for (held, t) in &ktot {
        row(sets[usize::from(*held)], "all knee families", t);
    }
    ktot
}

pub fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}

/// Growth curves offset so that S(1) = 1 and saturating at 1 + `top`: G is the
/// shape (Gompertz, logistic, Richards), normalised between G(1) and
/// G(infinity) = 1.
pub fn growth(top: f64, g: impl Fn(f64) -> f64 + 'static) -> Shape {
    let g1 = g(1.0);
    Box::new(move |p| 1.0 + top * (g(p) - g1) / (1.0 - g1))
}

/// `g` over its value at one thread: a held-out set's shape made a speedup.
pub fn over_one(g: impl Fn(f64) -> f64 + 'static) -> Shape {
    let g1 = g(1.0);
    Box::new(move |p| g(p) / g1)
}

/// The speedup of a time model `t(p)`: t(1) / t(p).
pub fn from_time(t: impl Fn(f64) -> f64 + 'static) -> Shape {
    let t1 = t(1.0);
    Box::new(move |p| t1 / t(p))
}

/// A held-out set's smooth families (`seed_base` as `null_corpus` takes it):
/// their table printed (docs/ANALYSIS.md's), and what every curve must satisfy
/// held: zero findings the checker drops, zero intervals outside their domain,
/// zero contradictory pairs, no high confidence from one repetition. A test of
/// its own beside [`held_out_knees`], so the two run side by side.
pub fn held_out_smooth(set: &str, smooth: &[Smooth], machines: &[(&str, &str)], seed_base: u64) {
    let mut integrity = Integrity::default();
    let null = null_corpus(smooth, machines, seed_base, &mut integrity);
    print_null(&null, ["(unused)", set]);
    integrity.print();
    assert_eq!(integrity.failures(), (0, 0, 0, 0), "{:#?}", integrity.notes);
}

/// A held-out set's knee families (`seed_base` as `knee_corpus` takes it), as
/// [`held_out_smooth`] holds its smooth ones.
pub fn held_out_knees(set: &str, knees: &[KneeFamily], seed_base: u64) {
    let mut integrity = Integrity::default();
    let found = knee_corpus(knees, seed_base, &mut integrity);
    print_knees(&found, ["(unused)", set]);
    integrity.print();
    assert_eq!(integrity.failures(), (0, 0, 0, 0), "{:#?}", integrity.notes);
}
