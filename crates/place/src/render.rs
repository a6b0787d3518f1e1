//! A placement written in the languages other tools speak, so a user can reproduce
//! scalescope's binding by hand, in a job script or under another launcher.

use std::collections::BTreeMap;

use scalescope_topo::{CpuSet, Topology};

use crate::launch::{self, Launcher, RankPlan};
use crate::{Granularity, Placement};

/// Every rendering, keyed by tool (`OMP_PLACES`, `taskset`, `slurm`, ...). The MPI
/// ones treat each thread as one rank on this machine; Open MPI's need `topo`
/// because Open MPI numbers CPUs logically, not by OS index.
pub fn renderings(p: &Placement, topo: &Topology) -> BTreeMap<&'static str, String> {
    let mut m = BTreeMap::new();
    m.insert("OMP_PLACES", omp_places(p));
    m.insert("OMP_PROC_BIND", "true".to_string());
    m.insert("OMP_NUM_THREADS", p.threads.len().to_string());
    m.insert("GOMP_CPU_AFFINITY", gomp_cpu_affinity(p));
    m.insert("KMP_AFFINITY", kmp_affinity(p));
    m.insert(
        "likwid-pin",
        format!("likwid-pin -c {}", join(&p.first_cpus(), ",")),
    );
    m.insert("taskset", format!("taskset -c {}", p.all_cpus()));
    m.insert("numactl", format!("numactl --physcpubind={}", p.all_cpus()));
    let (openmpi, rankfile) = openmpi(p, topo);
    m.insert("openmpi", openmpi);
    m.insert(
        "openmpi-note",
        "Open MPI numbers CPUs and cores logically (hwloc's order), not by OS index: the rankfile's slots are logical".into(),
    );
    m.insert("openmpi-rankfile", rankfile);
    m.insert("mpich", mpich(p, topo));
    m.insert("slurm", slurm(p));
    portable(p, &mut m);
    m
}

/// The runtime's own form of the strategy, where it has one (compact, scatter,
/// spread, or a `runtime:` placement): `portable-omp` (the OpenMP standard's
/// environment), `portable-kmp` (Intel's and LLVM's), and `portable-note` where the
/// standard form is only the nearest one.
fn portable(p: &Placement, m: &mut BTreeMap<&'static str, String>) {
    let bind = match &p.strategy {
        crate::Strategy::Compact => crate::RuntimeBind::Compact,
        crate::Strategy::Scatter => crate::RuntimeBind::Scatter,
        crate::Strategy::Spread => crate::RuntimeBind::Spread,
        crate::Strategy::Runtime(b) => *b,
        _ => return,
    };
    let (places, proc_bind) = bind.omp();
    m.insert(
        "portable-omp",
        format!(
            "OMP_PLACES={places} OMP_PROC_BIND={proc_bind} OMP_NUM_THREADS={}",
            p.threads.len()
        ),
    );
    m.insert(
        "portable-kmp",
        bind.kmp().map_or_else(
            || "none: use portable-omp".to_string(),
            |k| format!("KMP_AFFINITY={k}"),
        ),
    );
    if !bind.omp_is_exact() {
        m.insert(
            "portable-note",
            "OpenMP has no scatter: portable-omp is the nearest standard form (spread over cores); Intel's and LLVM's runtimes take portable-kmp".into(),
        );
    }
}

/// One rank per thread on this host, through a rankfile named `rankfile`.
fn openmpi(p: &Placement, topo: &Topology) -> (String, String) {
    let rendered = RankPlan::from_placement(p, 1).and_then(|plan| {
        launch::render(
            topo,
            Launcher::Mpirun,
            &plan,
            &["localhost".into()],
            "rankfile",
        )
    });
    match rendered {
        Ok(r) => (
            r.command_line(&[]),
            r.rankfile.unwrap_or_default().trim_end().to_string(),
        ),
        Err(e) => (format!("unavailable: {e}"), format!("unavailable: {e}")),
    }
}

/// One rank per thread on this host, bound by Hydra's user list (OS numbers).
fn mpich(p: &Placement, topo: &Topology) -> String {
    RankPlan::from_placement(p, 1)
        .and_then(|plan| launch::render(topo, Launcher::Mpiexec, &plan, &["localhost".into()], ""))
        .map_or_else(|e| format!("unavailable: {e}"), |r| r.command_line(&[]))
}

fn join<T: ToString>(v: &[T], sep: &str) -> String {
    v.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(sep)
}

fn braces(set: &CpuSet) -> String {
    format!("{{{}}}", join(&set.iter().collect::<Vec<_>>(), ","))
}

/// One explicit place per thread, in thread order: with as many places as threads,
/// OMP_PROC_BIND=true binds thread i to place i.
pub fn omp_places(p: &Placement) -> String {
    join(&p.threads.iter().map(braces).collect::<Vec<_>>(), ",")
}

/// libgomp binds thread i to the i-th CPU of the list (one CPU per thread).
pub fn gomp_cpu_affinity(p: &Placement) -> String {
    join(&p.first_cpus(), " ")
}

/// Intel OpenMP: `explicit` with one proc per thread; `granularity=core` widens each
/// to its core, which is what a core-granularity placement means.
pub fn kmp_affinity(p: &Placement) -> String {
    let gran = match p.granularity {
        Granularity::Thread => "fine",
        Granularity::Core => "core",
    };
    format!(
        "granularity={gran},explicit,proclist=[{}]",
        join(&p.first_cpus(), ",")
    )
}

fn slurm(p: &Placement) -> String {
    match p.granularity {
        Granularity::Thread => format!("srun --cpu-bind=map_cpu:{}", join(&p.first_cpus(), ",")),
        Granularity::Core => format!(
            "srun --cpu-bind=mask_cpu:{}",
            join(
                &p.threads
                    .iter()
                    .map(CpuSet::to_hex_mask)
                    .collect::<Vec<_>>(),
                ","
            )
        ),
    }
}
