//! The machine fingerprint stored in every results header: the topology itself and
//! the settings that change performance. Where a setting cannot be read here, the
//! value says so and why; nothing is guessed.

use std::path::Path;

use serde::{Deserialize, Serialize};

use scalescope_topo::{virt, Topology, Virtualization};

/// The machine a sweep ran on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: Option<String>,
    /// `scaling_governor` of the first usable CPU.
    pub frequency_governor: String,
    /// `/sys/devices/system/cpu/smt/control`.
    pub smt: String,
    /// The selected mode of `/sys/kernel/mm/transparent_hugepage/enabled`.
    pub transparent_hugepages: String,
    /// `/proc/sys/kernel/numa_balancing`.
    pub numa_balancing: String,
    /// 1, 5 and 15 minute load averages when the sweep started.
    pub load_average: String,
    /// Hypervisor or emulator evidence (CPUID, /sys/hypervisor, DMI); absent in results
    /// written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtualization: Option<Virtualization>,
    pub topology: Topology,
}

fn read_under(root: &Path, rel: &str, why_missing: &str) -> String {
    match scalescope_files::read_text(&root.join(rel), scalescope_files::Kind::SYSFS) {
        Ok(s) => s.trim().to_string(),
        Err(_) => format!("unavailable here: {why_missing}"),
    }
}

/// `[madvise]` from `always [madvise] never`.
fn bracketed(text: &str) -> String {
    text.split_whitespace()
        .find(|w| w.starts_with('['))
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        .unwrap_or_else(|| text.to_string())
}

impl Fingerprint {
    /// Reads the fingerprint of the machine under `root` (`/` for this one).
    pub fn read(root: &Path, topology: &Topology) -> Fingerprint {
        let cpu = topology.usable_pus().next().map(|p| p.cpu).unwrap_or(0);
        let load = read_under(root, "proc/loadavg", "no /proc/loadavg");
        Fingerprint {
            hostname: read_under(
                root,
                "proc/sys/kernel/hostname",
                "no /proc/sys/kernel/hostname",
            ),
            kernel: read_under(
                root,
                "proc/sys/kernel/osrelease",
                "no /proc/sys/kernel/osrelease",
            ),
            cpu_model: topology.cpu_model.clone(),
            frequency_governor: read_under(
                root,
                &format!("sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"),
                "no cpufreq driver (common in VMs)",
            ),
            smt: read_under(
                root,
                "sys/devices/system/cpu/smt/control",
                "kernel has no SMT control",
            ),
            transparent_hugepages: bracketed(&read_under(
                root,
                "sys/kernel/mm/transparent_hugepage/enabled",
                "kernel without transparent hugepages",
            )),
            numa_balancing: read_under(
                root,
                "proc/sys/kernel/numa_balancing",
                "kernel without NUMA balancing",
            ),
            load_average: load
                .split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" "),
            virtualization: Some(if root == Path::new("/") {
                virt::detect_live()
            } else {
                virt::detect(root, None)
            }),
            topology: topology.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_settings_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let topo = scalescope_topo::Source::Synthetic("core:2".into())
            .load()
            .unwrap();
        let f = Fingerprint::read(dir.path(), &topo);
        assert_eq!(
            f.frequency_governor,
            "unavailable here: no cpufreq driver (common in VMs)"
        );
        assert!(f.kernel.starts_with("unavailable here"));
        assert_eq!(bracketed("always [madvise] never"), "madvise");
    }

    #[test]
    fn this_machine() {
        let topo = scalescope_topo::Source::Live.load().unwrap();
        let f = Fingerprint::read(Path::new("/"), &topo);
        assert!(!f.kernel.starts_with("unavailable"));
        assert_eq!(f.load_average.split_whitespace().count(), 3);
    }
}
