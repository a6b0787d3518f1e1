//! Is this machine virtual? The evidence a hypervisor or an emulator leaves: the CPUID
//! hypervisor bit (leaf 1, ECX bit 31) and vendor leaf 0x40000000, the kernel's copy of
//! that bit in `/proc/cpuinfo`, `/sys/hypervisor/type`, and the firmware's DMI strings
//! (`/sys/class/dmi/id/sys_vendor`, `product_name`). Timings taken inside a virtual
//! machine, let alone an emulated one, are not the hardware's; the machine record says
//! so instead of letting anyone mistake them.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// What CPUID says (read on the running CPU only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuidHypervisor {
    /// Leaf 1, ECX bit 31: set by every mainstream hypervisor for its guests.
    pub bit: bool,
    /// Leaf 0x40000000's 12-byte vendor signature (`KVMKVMKVM`, `TCGTCGTCGTCG`, ...)
    /// when the bit is set and the signature is printable.
    pub vendor: Option<String>,
}

/// The verdict and the evidence behind it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Virtualization {
    /// True when any evidence names a hypervisor or emulator.
    pub virtual_machine: bool,
    /// The hypervisor or emulator the evidence names, if it names one.
    pub hypervisor: Option<String>,
    /// Each piece of evidence in words (`CPUID hypervisor bit set`, `DMI sys_vendor QEMU`).
    pub evidence: Vec<String>,
}

/// CPUID vendor signatures of leaf 0x40000000 and who they belong to.
const CPUID_VENDORS: [(&str, &str); 10] = [
    ("KVMKVMKVM", "KVM"),
    ("TCGTCGTCGTCG", "QEMU (TCG emulation)"),
    ("Microsoft Hv", "Hyper-V"),
    ("VMwareVMware", "VMware"),
    ("XenVMMXenVMM", "Xen"),
    ("VBoxVBoxVBox", "VirtualBox"),
    ("bhyve bhyve", "bhyve"),
    ("lrpepyh  vr", "Parallels"),
    ("ACRNACRNACRN", "ACRN"),
    ("QNXQVMBSQG", "QNX"),
];

/// DMI vendor or product strings (prefixes) that only virtual machines report.
const DMI_VIRTUAL: [(&str, &str); 12] = [
    ("QEMU", "QEMU"),
    ("KVM", "KVM"),
    ("Bochs", "Bochs"),
    ("VMware", "VMware"),
    ("innotek GmbH", "VirtualBox"),
    ("VirtualBox", "VirtualBox"),
    ("Xen", "Xen"),
    ("Parallels", "Parallels"),
    ("Amazon EC2", "Amazon EC2"),
    ("Google Compute Engine", "Google Compute Engine"),
    ("OpenStack", "OpenStack"),
    ("Virtual Machine", "Hyper-V"),
];

/// Reads CPUID on this CPU; None where there is no CPUID (not x86-64).
pub fn cpuid_hypervisor() -> Option<CpuidHypervisor> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        // SAFETY: CPUID exists on every x86-64 CPU; leaf 1 is always defined, and leaf
        // 0x40000000 is reserved for hypervisors (read only when the bit says one is there).
        #[allow(unused_unsafe)]
        let leaf1 = unsafe { __cpuid(1) };
        let bit = leaf1.ecx & (1 << 31) != 0;
        let vendor = bit
            .then(|| {
                // SAFETY: as above.
                #[allow(unused_unsafe)]
                let v = unsafe { __cpuid(0x4000_0000) };
                let bytes: Vec<u8> = [v.ebx, v.ecx, v.edx]
                    .iter()
                    .flat_map(|r| r.to_le_bytes())
                    .collect();
                let text = String::from_utf8_lossy(&bytes)
                    .trim_end_matches('\0')
                    .trim()
                    .to_string();
                (!text.is_empty() && text.chars().all(|c| c.is_ascii_graphic() || c == ' '))
                    .then_some(text)
            })
            .flatten();
        Some(CpuidHypervisor { bit, vendor })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

fn read_trimmed(root: &Path, rel: &str) -> Option<String> {
    // Bounded, regular files only: a recorded tree may hold a FIFO or a device.
    scalescope_files::read_text(&root.join(rel), scalescope_files::Kind::SYSFS)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The first `flags` line of `/proc/cpuinfo` lists `hypervisor`.
fn cpuinfo_flag(root: &Path) -> bool {
    read_trimmed(root, "proc/cpuinfo")
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("flags"))
                .map(|l| l.split_whitespace().any(|w| w == "hypervisor"))
        })
        .unwrap_or(false)
}

/// Looks at the machine under `root` (`/` for this one) and, for the live machine,
/// at what CPUID said.
pub fn detect(root: &Path, cpuid: Option<&CpuidHypervisor>) -> Virtualization {
    let mut evidence = Vec::new();
    let mut names: Vec<String> = Vec::new();
    if let Some(c) = cpuid.filter(|c| c.bit) {
        evidence.push("CPUID hypervisor bit set".to_string());
        if let Some(v) = &c.vendor {
            evidence.push(format!("CPUID hypervisor vendor `{v}`"));
            let known = CPUID_VENDORS.iter().find(|(sig, _)| v.trim() == sig.trim());
            names.push(
                known
                    .map(|(_, n)| n.to_string())
                    .unwrap_or_else(|| v.clone()),
            );
        }
    } else if cpuinfo_flag(root) {
        evidence.push("/proc/cpuinfo flags list `hypervisor`".to_string());
    }
    if let Some(t) = read_trimmed(root, "sys/hypervisor/type") {
        evidence.push(format!("/sys/hypervisor/type `{t}`"));
        names.push(if t == "xen" { "Xen".into() } else { t });
    }
    for file in ["sys_vendor", "product_name"] {
        let Some(v) = read_trimmed(root, &format!("sys/class/dmi/id/{file}")) else {
            continue;
        };
        if let Some((_, name)) = DMI_VIRTUAL.iter().find(|(p, _)| v.starts_with(p)) {
            evidence.push(format!("DMI {file} `{v}`"));
            names.push(name.to_string());
        }
    }
    let hypervisor = names.into_iter().next();
    Virtualization {
        virtual_machine: !evidence.is_empty(),
        hypervisor,
        evidence,
    }
}

/// [`Virtualization::timing_caveat`] from the hypervisor's name alone (as a saved
/// machine record gives it).
pub fn emulated_caveat(hypervisor: Option<&str>) -> Option<String> {
    let h = hypervisor?;
    h.contains("TCG").then(|| {
        format!(
            "timings under emulation ({h}) are the emulator's, not the hardware's, so they show no structure"
        )
    })
}

/// This machine, CPUID included.
pub fn detect_live() -> Virtualization {
    detect(Path::new("/"), cpuid_hypervisor().as_ref())
}

impl Virtualization {
    /// Why timings taken here cannot show the machine's structure, when they cannot:
    /// under emulation (QEMU's TCG translates every instruction; memory and caches are
    /// the host's, whatever the guest's NUMA shape) a slower remote node or a faster
    /// pair of cores is an accident of the emulator. A hypervisor with hardware
    /// virtualization (KVM, Hyper-V, ...) runs the code on the real CPU: its timings
    /// stay, with the caveat [`Virtualization::describe`] gives.
    pub fn timing_caveat(&self) -> Option<String> {
        emulated_caveat(self.hypervisor.as_deref())
    }

    /// One line for people.
    pub fn describe(&self) -> String {
        if !self.virtual_machine {
            return "no sign of a hypervisor (CPUID, /sys/hypervisor, DMI)".into();
        }
        let who = self.hypervisor.as_deref().unwrap_or("a hypervisor");
        format!(
            "virtual machine: {who} ({}); timings are the guest's, not the hardware's",
            self.evidence.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_qemu_guest_under_tcg_is_named_by_cpuid_and_dmi() {
        let dir = tree(&[
            ("sys/class/dmi/id/sys_vendor", "QEMU\n"),
            (
                "sys/class/dmi/id/product_name",
                "Standard PC (i440FX + PIIX, 1996)\n",
            ),
        ]);
        let cpuid = CpuidHypervisor {
            bit: true,
            vendor: Some("TCGTCGTCGTCG".into()),
        };
        let v = detect(dir.path(), Some(&cpuid));
        assert!(v.virtual_machine);
        assert_eq!(v.hypervisor.as_deref(), Some("QEMU (TCG emulation)"));
        assert!(v
            .timing_caveat()
            .is_some_and(|c| c.contains("under emulation (QEMU (TCG emulation))")));
        assert_eq!(
            v.evidence,
            [
                "CPUID hypervisor bit set",
                "CPUID hypervisor vendor `TCGTCGTCGTCG`",
                "DMI sys_vendor `QEMU`"
            ]
        );
    }

    #[test]
    fn a_recorded_kvm_guest_is_found_from_cpuinfo_and_dmi() {
        let dir = tree(&[
            (
                "proc/cpuinfo",
                "processor\t: 0\nflags\t\t: fpu vme sse2 hypervisor lahf_lm\n",
            ),
            ("sys/class/dmi/id/sys_vendor", "QEMU"),
        ]);
        let v = detect(dir.path(), None);
        assert!(v.virtual_machine);
        assert_eq!(v.hypervisor.as_deref(), Some("QEMU"));
        assert_eq!(v.evidence[0], "/proc/cpuinfo flags list `hypervisor`");
        // Hardware virtualization: timings stay (with the VM caveat), no emulation.
        assert_eq!(v.timing_caveat(), None);
    }

    #[test]
    fn xen_is_named_by_sys_hypervisor() {
        let dir = tree(&[("sys/hypervisor/type", "xen\n")]);
        let v = detect(dir.path(), None);
        assert_eq!(v.hypervisor.as_deref(), Some("Xen"));
        assert!(v.describe().starts_with("virtual machine: Xen"));
    }

    #[test]
    fn hyper_v_by_its_dmi_product() {
        let dir = tree(&[
            ("sys/class/dmi/id/sys_vendor", "Microsoft Corporation"),
            ("sys/class/dmi/id/product_name", "Virtual Machine"),
        ]);
        let v = detect(dir.path(), None);
        assert_eq!(v.hypervisor.as_deref(), Some("Hyper-V"));
        assert_eq!(v.evidence, ["DMI product_name `Virtual Machine`"]);
    }

    #[test]
    fn bare_metal_has_no_evidence() {
        let dir = tree(&[
            (
                "proc/cpuinfo",
                "processor\t: 0\nflags\t\t: fpu vme sse2 lahf_lm\n",
            ),
            ("sys/class/dmi/id/sys_vendor", "Dell Inc."),
            ("sys/class/dmi/id/product_name", "PowerEdge R750"),
        ]);
        let cpuid = CpuidHypervisor {
            bit: false,
            vendor: None,
        };
        let v = detect(dir.path(), Some(&cpuid));
        assert!(!v.virtual_machine);
        assert_eq!(v.hypervisor, None);
        assert!(v.evidence.is_empty());
        assert!(v.describe().starts_with("no sign of a hypervisor"));
    }

    /// The kernel copies CPUID's bit into /proc/cpuinfo: live detection must agree with it
    /// (this development machine is a VM, so here both say virtual).
    #[test]
    fn this_machine_agrees_with_the_kernels_hypervisor_flag() {
        let live = detect_live();
        if cpuinfo_flag(Path::new("/")) {
            assert!(live.virtual_machine, "{live:?}");
            assert!(
                live.evidence.iter().any(|e| e.starts_with("CPUID")),
                "{live:?}"
            );
        }
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            cpuid_hypervisor().map(|c| c.bit),
            Some(cpuinfo_flag(Path::new("/")))
        );
    }

    #[test]
    fn an_unknown_cpuid_vendor_is_reported_as_is() {
        let dir = tree(&[]);
        let cpuid = CpuidHypervisor {
            bit: true,
            vendor: Some("NewVisor".into()),
        };
        assert_eq!(
            detect(dir.path(), Some(&cpuid)).hypervisor.as_deref(),
            Some("NewVisor")
        );
    }
}
