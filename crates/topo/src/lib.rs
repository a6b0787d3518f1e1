//! scalescope's picture of the machine: packages, dies, NUMA nodes, caches, cores and
//! processing units, read from live sysfs, a recorded sysfs tree, an hwloc XML export
//! or a synthetic description, plus a report on how the OS numbering maps onto that
//! hardware. This crate knows nothing of threads or placement.

pub mod affinity;
pub mod cpuset;
pub mod files;
pub mod hwloc_xml;
pub mod model;
pub mod numbering;
mod raw;
pub mod synthetic;
pub mod sysfs;
mod sysfs_quirks;
pub mod virt;

use std::path::{Path, PathBuf};

pub use cpuset::{CpuSet, NodeSet, SetParseError};
pub use model::{Cache, Core, CpuKind, Domain, NumaNode, Pu, Topology, TOPOLOGY_SCHEMA_VERSION};
pub use numbering::NumberingReport;
pub use virt::Virtualization;

/// Why a topology could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TopoError {
    #[error("{}: not found (is this a Linux sysfs tree?)", path.display())]
    Missing { path: PathBuf },
    #[error("reading {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {detail}", path.display())]
    Parse { path: PathBuf, detail: String },
    #[error("{origin}: inconsistent topology: {detail}")]
    Inconsistent { origin: String, detail: String },
    #[error("synthetic spec `{spec}`: {detail}")]
    Synthetic { spec: String, detail: String },
}

/// Where to read a topology from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// This machine (`/sys`, `/proc`, and the process's own affinity).
    Live,
    /// A recorded tree, read as if the directory were `/`.
    SysfsRoot(PathBuf),
    /// An hwloc 2.x XML export (`lstopo --of xml`).
    HwlocXml(PathBuf),
    /// A synthetic description such as `package:2 core:24 pu:2`.
    Synthetic(String),
}

impl Source {
    /// Reads the topology.
    ///
    /// # Errors
    /// Whatever the backend reports; see [`TopoError`].
    pub fn load(&self) -> Result<Topology, TopoError> {
        match self {
            Source::Live => sysfs::discover(Path::new("/"), true),
            Source::SysfsRoot(dir) => sysfs::discover(dir, false),
            Source::HwlocXml(file) => hwloc_xml::load(file),
            Source::Synthetic(spec) => synthetic::build(spec),
        }
    }

    /// Whether the machine is virtual, where the source can tell (live: CPUID,
    /// `/sys/hypervisor`, DMI; a recorded tree: its cpuinfo flags and files); None for
    /// hwloc exports and synthetic machines.
    pub fn virtualization(&self) -> Option<Virtualization> {
        match self {
            Source::Live => Some(virt::detect_live()),
            Source::SysfsRoot(dir) => Some(virt::detect(dir, None)),
            Source::HwlocXml(_) | Source::Synthetic(_) => None,
        }
    }
}
