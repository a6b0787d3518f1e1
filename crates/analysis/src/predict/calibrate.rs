//! Fitting the mechanism model to a sweep: every measured point of every placement
//! at once, by least squares on the logarithm of performance (so every point counts
//! by its relative error) with a free scale, one parameter at a time (a grid, then
//! golden section) until nothing improves. Only the parameters the calibration can
//! determine are fitted: the remote rate needs threads off the first node, the SMT
//! yield threads sharing a core, the bandwidth cap two threads on a node; which of
//! them explain the sweep is decided in [`super::rivals`]. The
//! intervals come from the bootstrap: each point's repetitions resampled (the
//! residuals, for curves with one repetition) and the model fitted again.

use serde::{Deserialize, Serialize};

use scalescope_model::store::{Header, RunRecord};
use scalescope_place::{MemPolicy, Strategy};

use super::model::{layout, Layout};
use super::model::{time, Params, Scales};
use crate::boot::Rng;
use crate::fit::minimise;
use crate::Basis;

/// One measured point: where its threads ran and its repetitions' performance.
#[derive(Debug, Clone, PartialEq)]
pub struct CalPoint {
    pub placement: Strategy,
    pub layout: Layout,
    pub perfs: Vec<f64>,
    pub wall_secs: Vec<f64>,
}

impl CalPoint {
    pub fn median(&self) -> f64 {
        median_of(&self.perfs)
    }
}

pub(crate) fn median_of(v: &[f64]) -> f64 {
    crate::stats::median_of(v).unwrap_or(f64::NAN)
}

/// The memory policy a calibration uses: first-touch when the sweep has it.
fn calibration_mem(header: &Header) -> Option<MemPolicy> {
    let mems = &header.plan.mems;
    mems.iter()
        .find(|m| **m == MemPolicy::FirstTouch)
        .or(mems.first())
        .cloned()
}

/// Every measured point of the sweep (one memory policy: first-touch if measured).
pub fn cal_points(header: &Header, records: &[RunRecord], basis: &Basis) -> Vec<CalPoint> {
    let topo = &header.machine.topology;
    let Some(mem) = calibration_mem(header) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for pl in &header.plan.placements {
        for &t in &header.plan.threads {
            let runs = crate::curve::ok_runs(records, t, pl, &mem);
            let perfs: Vec<f64> = runs.iter().filter_map(|r| basis.perf(r)).collect();
            let Some(l) = layout(topo, pl, t) else {
                continue;
            };
            if !perfs.is_empty() {
                out.push(CalPoint {
                    placement: pl.clone(),
                    layout: l,
                    perfs,
                    wall_secs: runs.iter().map(|r| r.wall_secs).collect(),
                });
            }
        }
    }
    out
}

/// What the calibration measured, and so what it can determine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    pub max_threads: usize,
    pub nodes: usize,
    pub packages: usize,
    /// The most threads measured on one NUMA node.
    pub max_per_node: usize,
    /// Some point had threads off the first thread's node.
    pub remote: bool,
    /// Some point had two threads on one core.
    pub smt: bool,
    /// The largest SLIT distance between nodes used together.
    pub remote_distance: Option<u32>,
    pub fewest_reps: usize,
    /// Distinct measured layouts (placement and thread count).
    pub distinct_points: usize,
}

pub fn coverage(points: &[CalPoint]) -> Coverage {
    let mut layouts: Vec<&Layout> = Vec::new();
    for p in points {
        if !layouts.contains(&&p.layout) {
            layouts.push(&p.layout);
        }
    }
    let mut c = Coverage {
        fewest_reps: points.iter().map(|p| p.perfs.len()).min().unwrap_or(0),
        distinct_points: layouts.len(),
        ..Coverage::default()
    };
    for p in points {
        let l = &p.layout;
        c.max_threads = c.max_threads.max(l.threads);
        c.nodes = c.nodes.max(l.nodes.len());
        c.packages = c.packages.max(l.packages);
        c.max_per_node = c.max_per_node.max(l.max_per_node());
        c.remote |= l.remote_threads() > 0;
        c.smt |= l.smt();
        let far = l
            .nodes
            .iter()
            .filter(|n| !n.home)
            .filter_map(|n| n.distance);
        c.remote_distance = c.remote_distance.max(far.max());
    }
    c
}

/// The parameters a fit may move.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Free {
    pub serial: bool,
    pub sync: bool,
    pub remote: bool,
    pub bandwidth: bool,
    pub smt: bool,
    /// The per-node memory time (a bandwidth limit approached gradually).
    #[serde(default)]
    pub mem_time: bool,
    /// The shape of the bandwidth cap (only with `bandwidth`).
    #[serde(default)]
    pub cap_shape: bool,
    /// The memory limits apply to the home node's memory serving every thread
    /// (shared data), not per node: a choice of structure, not a value (only with
    /// `bandwidth` or `mem_time`).
    #[serde(default)]
    pub home_memory: bool,
}

/// How many parameters and structural choices the model has (`Free::flags`
/// order).
pub const PARAMS: usize = 8;

impl Free {
    /// What the coverage can determine: the serial part (two thread counts), the
    /// bandwidth cap and the memory time (two threads on a node), the remote rate
    /// (threads off the first node), the SMT yield (siblings sharing a core), the
    /// synchronisation cost (two thread counts; it competes with the serial part
    /// when the points are few).
    pub fn determinable(c: &Coverage) -> Free {
        Free {
            serial: c.max_threads >= 2,
            bandwidth: c.max_per_node >= 2,
            remote: c.remote,
            smt: c.smt,
            sync: c.max_threads >= 2,
            mem_time: c.max_per_node >= 2,
            cap_shape: c.max_per_node >= 3,
            home_memory: c.max_per_node >= 2,
        }
    }

    /// None of them.
    pub const NONE: Free = Free {
        serial: false,
        sync: false,
        remote: false,
        bandwidth: false,
        smt: false,
        mem_time: false,
        cap_shape: false,
        home_memory: false,
    };

    /// Every subset of the determinable parameters with at most one parameter fewer
    /// than the distinct points (the scale takes one): all of them when the points
    /// allow, else each choice of that many.
    pub fn choices(c: &Coverage) -> Vec<Free> {
        let all = Free::determinable(c);
        let room = c.distinct_points.saturating_sub(1);
        if all.count() <= room {
            return vec![all];
        }
        all.subsets()
            .into_iter()
            .filter(|f| f.count() == room)
            .collect()
    }

    /// Every subset of these parameters, the empty one first (the cap's shape
    /// only with the cap, the home node's memory only with a memory limit).
    pub fn subsets(&self) -> Vec<Free> {
        let flags = self.flags();
        (0u32..1 << PARAMS)
            .filter(|m| (0..PARAMS).all(|i| m & (1 << i) == 0 || flags[i]))
            .map(|m| Free::from_flags(|i| m & (1 << i) != 0))
            .filter(|f| f.bandwidth || !f.cap_shape)
            .filter(|f| f.bandwidth || f.mem_time || !f.home_memory)
            .collect()
    }

    pub(crate) fn flags(&self) -> [bool; PARAMS] {
        [
            self.serial,
            self.bandwidth,
            self.remote,
            self.smt,
            self.sync,
            self.mem_time,
            self.cap_shape,
            self.home_memory,
        ]
    }

    pub(crate) fn from_flags(f: impl Fn(usize) -> bool) -> Free {
        Free {
            serial: f(0),
            bandwidth: f(1),
            remote: f(2),
            smt: f(3),
            sync: f(4),
            mem_time: f(5),
            cap_shape: f(6),
            home_memory: f(7),
        }
    }

    /// The values fitted (a structural choice is none).
    pub fn count(&self) -> usize {
        self.flags()[..PARAMS - 1].iter().filter(|b| **b).count()
    }

    /// `start` with this choice's structure applied.
    pub fn shape(&self, start: Params) -> Params {
        Params {
            home_memory: self.home_memory,
            ..start
        }
    }
}

/// A fitted model: its parameters, its scale (performance = scale / t(p)) and the
/// sum of squared log residuals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Fitted {
    pub params: Params,
    pub scale: f64,
    pub sse: f64,
}

/// (the best scale, the squared residuals' sum) for `p` on the observations.
fn score(p: &Params, s: &Scales, obs: &[(&Layout, f64)]) -> (f64, f64) {
    let res: Vec<f64> = obs
        .iter()
        .map(|(l, y)| y.ln() + time(p, s, l).ln())
        .collect();
    let mean = res.iter().sum::<f64>() / res.len().max(1) as f64;
    let sse = res.iter().map(|r| (r - mean).powi(2)).sum();
    (mean.exp(), sse)
}

type Coord = (fn(&mut Params, f64), fn(&Params) -> f64, f64, f64);

/// Each free parameter: how to set it, read it, and its range.
fn coords(free: &Free) -> Vec<Coord> {
    let mut v: Vec<Coord> = Vec::new();
    if free.serial {
        v.push((|p, x| p.serial = x, |p| p.serial, 0.0, 1.0));
    }
    if free.bandwidth {
        v.push((|p, x| p.inv_bandwidth = x, |p| p.inv_bandwidth, 0.0, 2.0));
    }
    if free.remote {
        v.push((|p, x| p.remote = x, |p| p.remote, 0.1, 1.0));
    }
    if free.smt {
        v.push((|p, x| p.smt_yield = x, |p| p.smt_yield, 0.0, 1.0));
    }
    if free.sync {
        v.push((|p, x| p.sync = x, |p| p.sync, 0.0, 2.0));
    }
    if free.mem_time {
        v.push((|p, x| p.mem_time = x, |p| p.mem_time, 0.0, 2.0));
    }
    if free.cap_shape {
        v.push((|p, x| p.cap_shape = x, |p| p.cap_shape, 0.0, 1.0));
    }
    v
}

/// Fits the free parameters from `start` (coordinate descent over each
/// parameter's whole range, at most `sweeps`, then Nelder-Mead).
pub fn fit(
    obs: &[(&Layout, f64)],
    free: &Free,
    start: Params,
    s: &Scales,
    sweeps: usize,
) -> Fitted {
    descend(obs, free, start, s, sweeps, false)
}

/// [`fit`] with every sweep after the first searching a window around the current
/// value that halves each sweep: about a third of the evaluations, for the
/// hundreds of fits a calibration's rival explanations need.
pub fn fit_windowed(
    obs: &[(&Layout, f64)],
    free: &Free,
    start: Params,
    s: &Scales,
    sweeps: usize,
) -> Fitted {
    descend(obs, free, start, s, sweeps, true)
}

fn descend(
    obs: &[(&Layout, f64)],
    free: &Free,
    start: Params,
    s: &Scales,
    sweeps: usize,
    windowed: bool,
) -> Fitted {
    let mut p = start;
    let cs = coords(free);
    let mut last = score(&p, s, obs).1;
    for sweep in 0..sweeps {
        for (set, get, lo, hi) in &cs {
            let f = |x: f64| {
                let mut q = p;
                set(&mut q, x);
                score(&q, s, obs).1
            };
            let x = if sweep == 0 || !windowed {
                minimise(*lo, *hi, f)
            } else {
                let w = (hi - lo) * 0.1 / (1u64 << (sweep - 1).min(20)) as f64;
                let at = get(&p);
                golden(at - w, at + w, *lo, *hi, f)
            };
            let mut q = p;
            set(&mut q, x);
            if score(&q, s, obs).1 <= score(&p, s, obs).1 {
                p = q;
            }
        }
        let now = score(&p, s, obs).1;
        if last - now <= 1e-9 * (1.0 + last) {
            break;
        }
        last = now;
    }
    let p = nelder_mead(&cs, p, |q| score(q, s, obs).1);
    let (scale, sse) = score(&p, s, obs);
    Fitted {
        params: p,
        scale,
        sse,
    }
}

/// Golden-section search of `f` on [a, b] clipped to [lo, hi] (20 steps: the
/// window shrinks to 1e-4 of its width; Nelder-Mead polishes after).
fn golden(a: f64, b: f64, lo: f64, hi: f64, f: impl Fn(f64) -> f64) -> f64 {
    let (mut a, mut b) = (a.max(lo), b.min(hi));
    let g = 0.618_033_988_75;
    let (mut c, mut d) = (b - g * (b - a), a + g * (b - a));
    let (mut fc, mut fd) = (f(c), f(d));
    for _ in 0..20 {
        if fc < fd {
            (b, d, fd) = (d, c, fc);
            c = b - g * (b - a);
            fc = f(c);
        } else {
            (a, c, fc) = (c, d, fd);
            d = a + g * (b - a);
            fd = f(d);
        }
    }
    (a + b) / 2.0
}

/// Polishes `start` by Nelder-Mead over the free coordinates (each kept inside its
/// range): coordinate descent alone crawls along the ridge where the serial part
/// and the synchronisation cost trade against each other.
fn nelder_mead(cs: &[Coord], start: Params, f: impl Fn(&Params) -> f64) -> Params {
    let n = cs.len();
    if n == 0 {
        return start;
    }
    let to_params = |x: &[f64]| {
        let mut p = start;
        for ((set, _, lo, hi), v) in cs.iter().zip(x) {
            set(&mut p, v.clamp(*lo, *hi));
        }
        p
    };
    let x0: Vec<f64> = cs.iter().map(|c| (c.1)(&start)).collect();
    let mut simplex: Vec<(Vec<f64>, f64)> = vec![(x0.clone(), f(&start))];
    for (i, (_, _, lo, hi)) in cs.iter().enumerate() {
        let mut x = x0.clone();
        let step = 0.1 * (hi - lo);
        x[i] = if x[i] + step <= *hi {
            x[i] + step
        } else {
            x[i] - step
        };
        let v = f(&to_params(&x));
        simplex.push((x, v));
    }
    for _ in 0..200 * n {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (best, worst) = (simplex[0].1, simplex[n].1);
        if worst - best <= 1e-11 * (1.0 + best.abs()) {
            break;
        }
        let centroid: Vec<f64> = (0..n)
            .map(|j| simplex[..n].iter().map(|v| v.0[j]).sum::<f64>() / n as f64)
            .collect();
        let towards = |t: f64| -> Vec<f64> {
            centroid
                .iter()
                .zip(&simplex[n].0)
                .map(|(c, w)| c + t * (w - c))
                .collect()
        };
        let eval = |x: Vec<f64>| {
            let v = f(&to_params(&x));
            (x, v)
        };
        let r = eval(towards(-1.0));
        if r.1 < simplex[0].1 {
            let e = eval(towards(-2.0));
            simplex[n] = if e.1 < r.1 { e } else { r };
        } else if r.1 < simplex[n - 1].1 {
            simplex[n] = r;
        } else {
            let c = eval(towards(0.5));
            if c.1 < worst {
                simplex[n] = c;
            } else {
                let b = simplex[0].0.clone();
                for v in simplex.iter_mut().skip(1) {
                    let x: Vec<f64> = v.0.iter().zip(&b).map(|(x, b)| b + 0.5 * (x - b)).collect();
                    *v = eval(x);
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    let p = to_params(&simplex[0].0);
    if f(&p) <= f(&start) {
        p
    } else {
        start
    }
}

/// The fit on every point's median (from `start` with the choice's structure).
pub fn fit_points(points: &[CalPoint], free: &Free, start: Params) -> Fitted {
    let obs: Vec<(&Layout, f64)> = points.iter().map(|p| (&p.layout, p.median())).collect();
    fit_windowed(&obs, free, free.shape(start), &Scales::default(), 12)
}

/// Small-sample AIC of a fit on `n` points with the free parameters and the scale
/// (None when there are too few points for them).
pub(crate) fn aicc(n: usize, free: &Free, sse: f64) -> Option<f64> {
    crate::stats::aicc(n, free.count() + 1, sse)
}

/// Bootstrap refits around `best`: repetitions resampled when every point has two
/// or more, else residuals resampled; each draw's distance from `best` widened by
/// the small-sample factor (t quantile for the fewest repetitions, or
/// sqrt(n / (n - k)) for residuals) and kept inside the parameters' ranges.
pub fn draws(points: &[CalPoint], free: &Free, best: &Fitted, n: usize, seed: u64) -> Vec<Fitted> {
    let mut rng = Rng::new(seed);
    let s = Scales::default();
    let reps = points.iter().map(|p| p.perfs.len()).min().unwrap_or(0);
    let k = free.count() + 1;
    let widen = if reps >= 2 {
        crate::stats::t_quantile(reps - 1) / 1.96 * (reps as f64 / (reps - 1) as f64).sqrt()
    } else if points.len() > k {
        (points.len() as f64 / (points.len() - k) as f64).sqrt()
    } else {
        return Vec::new();
    };
    let fitted: Vec<f64> = points
        .iter()
        .map(|p| best.scale / time(&best.params, &s, &p.layout))
        .collect();
    let resid: Vec<f64> = points
        .iter()
        .zip(&fitted)
        .map(|(p, f)| (p.median() / f).ln())
        .collect();
    (0..n)
        .map(|_| {
            let ys: Vec<f64> = points
                .iter()
                .zip(&fitted)
                .map(|(p, f)| {
                    if reps >= 2 {
                        crate::boot::resampled_median(&p.perfs, &mut rng)
                    } else {
                        f * resid[rng.below(resid.len())].exp()
                    }
                })
                .collect();
            let obs: Vec<(&Layout, f64)> = points.iter().map(|p| &p.layout).zip(ys).collect();
            let d = fit_windowed(&obs, free, best.params, &s, 6);
            widened(best, &d, free, widen)
        })
        .collect()
}

fn widened(best: &Fitted, d: &Fitted, free: &Free, widen: f64) -> Fitted {
    let mut p = d.params;
    for (set, get, lo, hi) in coords(free) {
        let b = get(&best.params);
        set(&mut p, (b + (get(&d.params) - b) * widen).clamp(lo, hi));
    }
    Fitted {
        params: p,
        scale: best.scale * (d.scale / best.scale).powf(widen),
        sse: d.sse,
    }
}
