//! Readings of a sysfs tree that follow hwloc's quirks rather than the plain files:
//! AMD compute units listed as hardware threads, and hybrid core kinds from PMU
//! devices, `cpu_capacity` or cpufreq frequencies.

use crate::cpuset::CpuSet;
use crate::sysfs::Tree;
use crate::TopoError;

impl Tree<'_> {
    /// AMD families 15h/16h (Bulldozer, Piledriver, Steamroller, Excavator, Jaguar)
    /// list both cores of a compute unit in `thread_siblings`, each with its own
    /// `core_id`. hwloc makes those two cores, not one core with two hardware threads,
    /// and decides once, at the first CPU whose set has a sibling: if that sibling's
    /// `core_id` differs, every core set is cut down to its own CPU.
    pub(crate) fn split_compute_unit(
        &self,
        cpu: u32,
        core_set: Option<CpuSet>,
        core_id: Option<u32>,
    ) -> Result<Option<CpuSet>, TopoError> {
        let Some(state) = self.compute_units.get() else {
            return Ok(core_set);
        };
        let Some(set) = core_set else {
            return Ok(None);
        };
        let split = match state {
            Some(split) => split,
            None => {
                let Some(sibling) = set.iter().find(|&c| c != cpu) else {
                    return Ok(Some(set));
                };
                let sibling_id = self
                    .read_number(&format!(
                        "sys/devices/system/cpu/cpu{sibling}/topology/core_id"
                    ))?
                    .and_then(|v| u32::try_from(v).ok());
                let split = sibling_id != core_id;
                self.compute_units.set(Some(Some(split)));
                split
            }
        };
        Ok(Some(if split {
            [cpu].into_iter().collect()
        } else {
            set
        }))
    }

    /// `vendor_id: AuthenticAMD` with `cpu family: 21` or `22` in `/proc/cpuinfo` (the
    /// first processor's), as hwloc tests it.
    pub(crate) fn amd_with_compute_units(&self) -> Result<bool, TopoError> {
        let Some(text) = self.read("proc/cpuinfo")? else {
            return Ok(false);
        };
        let field = |key: &str| {
            text.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        Ok(field("vendor_id").as_deref() == Some("AuthenticAMD")
            && matches!(field("cpu family").as_deref(), Some("21" | "22")))
    }

    /// Hybrid core kinds: Intel's `cpu_atom`/`cpu_core` PMU devices, else distinct
    /// `cpu_capacity` values (ARM big.LITTLE and friends), else distinct cpufreq
    /// frequencies as hwloc's Linux backend ranks them (the base frequency where every
    /// CPU reports one, else the hardware maximum); least capable first.
    pub(crate) fn kinds(&self, online: &CpuSet) -> Result<Vec<(String, CpuSet)>, TopoError> {
        let atom = self.read_list("sys/devices/cpu_atom/cpus")?;
        let core = self.read_list("sys/devices/cpu_core/cpus")?;
        if let (Some(atom), Some(core)) = (atom, core) {
            return Ok(vec![("E-core".into(), atom), ("P-core".into(), core)]);
        }
        let per_cpu = |file: &str| self.per_cpu_values(online, file);
        if let Some(kinds) = per_cpu("cpu_capacity")?.and_then(|v| bands(v, "capacity-", "")) {
            return Ok(kinds);
        }
        let freq = match per_cpu("cpufreq/base_frequency")? {
            Some(base) => bands(khz_to_mhz(base), "base-", "MHz"),
            None => per_cpu("cpufreq/cpuinfo_max_freq")?
                .and_then(|max| bands(khz_to_mhz(max), "max-", "MHz")),
        };
        Ok(freq.unwrap_or_default())
    }

    /// One number per online CPU from `cpuN/<file>`, `None` unless every CPU has it.
    fn per_cpu_values(
        &self,
        online: &CpuSet,
        file: &str,
    ) -> Result<Option<Vec<(u32, i64)>>, TopoError> {
        let mut out = Vec::new();
        for cpu in online.iter() {
            match self.read_number(&format!("sys/devices/system/cpu/cpu{cpu}/{file}"))? {
                Some(v) => out.push((cpu, v)),
                None => return Ok(None),
            }
        }
        Ok(Some(out))
    }
}

fn khz_to_mhz(values: Vec<(u32, i64)>) -> Vec<(u32, i64)> {
    values.into_iter().map(|(c, v)| (c, v / 1000)).collect()
}

/// CPUs grouped by value, lowest value first, named `{prefix}{value}{suffix}`; `None`
/// when all CPUs share one value (no hybrid kinds).
fn bands(values: Vec<(u32, i64)>, prefix: &str, suffix: &str) -> Option<Vec<(String, CpuSet)>> {
    let mut by_value: std::collections::BTreeMap<i64, CpuSet> = Default::default();
    for (cpu, v) in values {
        by_value.entry(v).or_default().insert(cpu);
    }
    (by_value.len() > 1).then(|| {
        by_value
            .into_iter()
            .map(|(v, cpus)| (format!("{prefix}{v}{suffix}"), cpus))
            .collect()
    })
}
