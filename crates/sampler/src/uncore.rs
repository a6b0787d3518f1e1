//! Memory bandwidth per socket from uncore memory-controller counters, found under
//! `ROOT/sys/bus/event_source/devices`: Intel `uncore_imc_N` (`cas_count_read` and
//! `cas_count_write`, scaled by their `.scale`/`.unit` files) or
//! `uncore_imc_free_running_N` (`data_read`, `data_write`), and AMD `amd_umc_N`
//! (`umc_cas_cmd.all`, event 0x0a, 64 bytes per CAS, as in the kernel's AMD UMC
//! documentation and perf's Zen 4 event list). Each PMU is opened on the CPUs of its
//! `cpumask` (one per socket); the domain is that CPU's package. Uncore counts
//! cover the whole socket, every process on it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::bandwidth::{BandwidthSource, DomainReading};
use crate::perf::{self, Counter, Event, Target};

/// One counter of one PMU on one socket, with its bytes per count.
#[derive(Debug)]
struct Opened {
    domain: u32,
    bytes_per_count: f64,
    counter: Counter,
}

/// Open uncore counters.
#[derive(Debug)]
pub struct Uncore {
    name: &'static str,
    counters: Vec<Opened>,
}

/// An event to open, found in sysfs.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub pmu: String,
    pub event: Event,
    pub bytes_per_count: f64,
    pub cpus: Vec<u32>,
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn formats(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir.join("format"))
        .map(|es| {
            es.flatten()
                .filter_map(|e| Some((e.file_name().to_str()?.to_string(), read(&e.path())?)))
                .collect()
        })
        .unwrap_or_default()
}

/// Bytes per count from `NAME.scale` and `NAME.unit` (MiB, bytes), else `default`.
fn bytes_per_count(events: &Path, name: &str, default: f64) -> f64 {
    let scale: Option<f64> =
        read(&events.join(format!("{name}.scale"))).and_then(|s| s.trim().parse().ok());
    let unit = read(&events.join(format!("{name}.unit"))).unwrap_or_default();
    let unit_bytes = match unit.trim() {
        "MiB" => 1024.0 * 1024.0,
        "KiB" => 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => 1.0,
    };
    scale.map_or(default, |s| s * unit_bytes)
}

/// The events to open for one PMU directory, by its name.
fn plan_pmu(dir: &Path, name: &str) -> Result<Vec<Planned>, String> {
    let kind: u32 = read(&dir.join("type"))
        .and_then(|t| t.trim().parse().ok())
        .ok_or_else(|| format!("{}/type unreadable", dir.display()))?;
    let cpus: Vec<u32> = read(&dir.join("cpumask"))
        .and_then(|m| scalescope_topo::CpuSet::parse_list(m.trim()).ok())
        .map(|s| s.iter().collect())
        .unwrap_or_default();
    if cpus.is_empty() {
        return Err(format!("{}/cpumask names no CPU", dir.display()));
    }
    let formats = formats(dir);
    let events = dir.join("events");
    let described: Vec<(String, String, f64)> = if name.starts_with("amd_umc") {
        vec![("umc_cas_cmd.all".into(), "event=0x0a".into(), 64.0)]
    } else {
        [
            "cas_count_read",
            "cas_count_write",
            "data_read",
            "data_write",
        ]
        .iter()
        .filter_map(|e| {
            let d = read(&events.join(e))?;
            Some((e.to_string(), d, bytes_per_count(&events, e, 64.0)))
        })
        .collect()
    };
    if described.is_empty() {
        return Err(format!("{} describes no CAS or data event", dir.display()));
    }
    described
        .into_iter()
        .map(|(ev, desc, bpc)| {
            let event = perf::event_from_terms(kind, &desc, &formats)
                .map_err(|e| format!("{name}/{ev}: {e}"))?;
            Ok(Planned {
                pmu: name.to_string(),
                event,
                bytes_per_count: bpc,
                cpus: cpus.clone(),
            })
        })
        .collect()
}

/// Every memory-controller event the PMUs under `root` describe, and the source
/// name (`perf-uncore-imc` or `perf-amd-umc`).
///
/// # Errors
/// Which PMUs exist when none is a memory controller, or why one cannot be used.
pub fn discover(root: &Path) -> Result<(&'static str, Vec<Planned>), String> {
    let devices = root.join("sys/bus/event_source/devices");
    let mut names: Vec<String> = std::fs::read_dir(&devices)
        .map_err(|e| format!("{}: {e}", devices.display()))?
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect();
    names.sort();
    let imc: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("uncore_imc"))
        .collect();
    let umc: Vec<&String> = names.iter().filter(|n| n.starts_with("amd_umc")).collect();
    let (source, pmus) = match (imc.is_empty(), umc.is_empty()) {
        (false, _) => ("perf-uncore-imc", imc),
        (true, false) => ("perf-amd-umc", umc),
        (true, true) => {
            return Err(format!(
                "no uncore_imc_* or amd_umc_* PMU under {} (found: {})",
                devices.display(),
                names.join(", ")
            ))
        }
    };
    let mut planned = Vec::new();
    for name in pmus {
        planned.extend(plan_pmu(&devices.join(name), name)?);
    }
    Ok((source, planned))
}

/// The package of a CPU (`cpuN/topology/physical_package_id`), else the CPU itself.
fn package_of(root: &Path, cpu: u32) -> u32 {
    let p: PathBuf = root.join(format!(
        "sys/devices/system/cpu/cpu{cpu}/topology/physical_package_id"
    ));
    read(&p).and_then(|t| t.trim().parse().ok()).unwrap_or(cpu)
}

impl Uncore {
    /// Discovers the events and opens every one on each socket's CPU; all must open
    /// and give a first reading.
    ///
    /// # Errors
    /// Discovery's reason, or the refused open explained by `perf_event_paranoid`.
    pub fn open(root: &Path) -> Result<Uncore, String> {
        let (name, planned) = discover(root)?;
        let mut counters = Vec::new();
        for p in planned {
            for &cpu in &p.cpus {
                let counter = perf::open(p.event, Target::Cpu(cpu)).map_err(|e| {
                    format!("{} on CPU {cpu}: {}", p.pmu, perf::explain(&e, root, true))
                })?;
                counter
                    .read()
                    .map_err(|e| format!("{} on CPU {cpu}: reading: {e}", p.pmu))?;
                counters.push(Opened {
                    domain: package_of(root, cpu),
                    bytes_per_count: p.bytes_per_count,
                    counter,
                });
            }
        }
        Ok(Uncore { name, counters })
    }
}

/// Bytes per domain from (domain, count, bytes per count) of every counter: the
/// read and write CAS counts of every controller of a socket add up.
pub fn per_domain(counts: impl Iterator<Item = (u32, u64, f64)>) -> Vec<DomainReading> {
    let mut per: BTreeMap<u32, f64> = BTreeMap::new();
    for (domain, count, bytes_per_count) in counts {
        *per.entry(domain).or_insert(0.0) += count as f64 * bytes_per_count;
    }
    per.into_iter()
        .map(|(domain, bytes)| DomainReading {
            domain,
            total_bytes: bytes as u64,
            local_bytes: None,
        })
        .collect()
}

impl BandwidthSource for Uncore {
    fn name(&self) -> &str {
        self.name
    }

    fn scope(&self) -> &str {
        "the whole socket (every process on it)"
    }

    fn read(&mut self) -> Vec<DomainReading> {
        per_domain(
            self.counters
                .iter()
                .filter_map(|o| Some((o.domain, o.counter.read().ok()?, o.bytes_per_count))),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_become_bytes_per_socket() {
        // Two controllers x read/write on socket 0, one on socket 1; 64 B per CAS.
        let mib = 6.103515625e-5 * 1024.0 * 1024.0;
        let r = per_domain([(0, 10, mib), (0, 5, mib), (0, 1, mib), (1, 100, 64.0)].into_iter());
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].domain, r[0].total_bytes), (0, 16 * 64));
        assert_eq!(
            (r[1].domain, r[1].total_bytes, r[1].local_bytes),
            (1, 6400, None)
        );
    }
}
