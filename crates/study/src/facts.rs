//! What a study plan needs to know about this machine beyond its topology: how
//! many CPUs, cores, packages and NUMA nodes are usable, SMT, Intel RTM, an MPI
//! launcher and the MPI NAS binary, a C compiler with OpenMP. Each absent thing
//! carries the reason a figure "cannot occur here".

use std::path::{Path, PathBuf};

use scalescope_topo::Topology;

/// This machine, as the studies see it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Facts {
    /// The topology's one-line summary.
    pub machine: String,
    pub cpus: usize,
    pub cores: usize,
    pub packages: usize,
    /// NUMA nodes with usable CPUs.
    pub nodes: usize,
    /// Most hardware threads on one usable core.
    pub smt: usize,
    pub rtm: bool,
    /// The first MPI launcher found on PATH: family (`mpirun`, `mpiexec`, `srun`).
    pub launcher: Option<String>,
    /// `scalescope-mpi-nas` beside this executable or on PATH.
    pub mpi_nas: Option<PathBuf>,
    /// A C compiler that takes `-fopenmp` (`cc`, `gcc`, `clang`).
    pub openmp_cc: Option<PathBuf>,
}

impl Facts {
    /// The facts of `topo`, with the programs looked up on PATH and beside `exe`.
    pub fn of(topo: &Topology, exe: &Path, path_var: Option<&std::ffi::OsStr>) -> Facts {
        let usable = topo.usable_cpus();
        let cores: Vec<usize> = topo
            .cores
            .iter()
            .map(|c| c.cpus.intersection(&usable).len())
            .filter(|n| *n > 0)
            .collect();
        let packages = topo
            .packages
            .iter()
            .filter(|p| p.cpus.intersects(&usable))
            .count();
        let nodes = topo
            .numa_nodes
            .iter()
            .filter(|n| n.cpus.intersects(&usable))
            .count();
        let find = |name: &str| find_on_path(name, path_var);
        let launcher = ["mpirun", "mpiexec", "srun"]
            .into_iter()
            .find(|l| find(l).is_some())
            .map(str::to_string);
        let beside = exe.parent().map(|d| d.join("scalescope-mpi-nas"));
        let mpi_nas = beside
            .filter(|p| p.is_file())
            .or_else(|| find("scalescope-mpi-nas"));
        let openmp_cc = ["cc", "gcc", "clang"].into_iter().find_map(find);
        Facts {
            machine: topo.summary(),
            cpus: usable.len(),
            cores: cores.len(),
            packages: packages.max(1),
            nodes: nodes.max(1),
            smt: cores.iter().copied().max().unwrap_or(1),
            rtm: scalescope_workloads::sync::rtm::rtm_available(),
            launcher,
            mpi_nas,
            openmp_cc,
        }
    }

    /// Why SMT figures cannot occur here, if they cannot.
    pub fn no_smt(&self) -> Option<String> {
        (self.smt < 2).then(|| "no SMT: every core has one hardware thread".to_string())
    }

    /// Why cross-socket figures cannot occur here, if they cannot.
    pub fn one_package(&self) -> Option<String> {
        (self.packages < 2).then(|| {
            format!(
                "one package: all {} usable CPUs share one socket",
                self.cpus
            )
        })
    }

    /// Why NUMA figures cannot occur here, if they cannot.
    pub fn one_node(&self) -> Option<String> {
        (self.nodes < 2).then(|| "one NUMA node: all memory is local to every CPU".to_string())
    }

    /// Why HTM figures cannot occur here, if they cannot.
    pub fn no_htm(&self) -> Option<String> {
        (!self.rtm)
            .then(|| "no TSX: this CPU does not offer Intel RTM (absent or disabled)".to_string())
    }

    /// Why a figure needing more CPUs than this machine has cannot occur here.
    pub fn too_few_cpus(&self, threads: usize) -> Option<String> {
        (threads > self.cpus).then(|| {
            format!(
                "{threads} threads: this machine has {} usable CPUs",
                self.cpus
            )
        })
    }
}

/// `name` as an executable file in a directory of `path_var` (PATH).
pub fn find_on_path(name: &str, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path_var?)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}
