//! A placement written in the languages other tools speak, so a user can reproduce
//! scalescope's binding by hand, in a job script or under another launcher.

use std::collections::BTreeMap;

use scalescope_topo::CpuSet;

use crate::{Granularity, Placement};

/// Every rendering, keyed by tool (`OMP_PLACES`, `taskset`, `slurm`, ...).
pub fn renderings(p: &Placement) -> BTreeMap<&'static str, String> {
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
    m.insert("openmpi", openmpi(p));
    m.insert(
        "openmpi-note",
        "mpirun orders ranks by OS numbering within --cpu-set; openmpi-rankfile gives the exact order".into(),
    );
    m.insert("openmpi-rankfile", openmpi_rankfile(p));
    m.insert("slurm", slurm(p));
    m
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

fn openmpi(p: &Placement) -> String {
    let (map, bind) = match p.granularity {
        Granularity::Thread => ("hwthread", "hwthread"),
        Granularity::Core => ("core", "core"),
    };
    format!(
        "mpirun -np {} --cpu-set {} --map-by {map} --bind-to {bind}",
        p.threads.len(),
        p.all_cpus()
    )
}

fn openmpi_rankfile(p: &Placement) -> String {
    p.threads
        .iter()
        .enumerate()
        .map(|(i, s)| {
            format!(
                "rank {i}=localhost slot={}",
                join(&s.iter().collect::<Vec<_>>(), ",")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
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
