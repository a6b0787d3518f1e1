//! Discovery from a Linux filesystem tree: `/sys/devices/system/{cpu,node}`,
//! `/proc/cpuinfo`, `/proc/mounts` and the cgroup cpuset files.
//!
//! Every path is read under a root directory, so a recorded tree from a 256-CPU
//! machine is read exactly like the live `/`. A file that is absent is a fact the
//! kernel did not report (older kernels, other architectures); a file that is present
//! but unreadable or malformed is an error that names the file.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::cpuset::{CpuSet, NodeSet};
use crate::model::{RawCache, RawDomain, RawNode, RawTopology, Topology};
use crate::TopoError;

/// Reads the machine under `root` (`/` for this machine). With `live`, the calling
/// process's own affinity mask also restricts the allowed CPUs, as it does for
/// every thread the process starts.
///
/// # Errors
/// [`TopoError::Missing`] when `root` holds no `sys/devices/system/cpu`,
/// [`TopoError::Parse`]/[`TopoError::Io`] naming a malformed or unreadable file,
/// [`TopoError::Inconsistent`] when the files contradict each other.
pub fn discover(root: &Path, live: bool) -> Result<Topology, TopoError> {
    let mut fs = Tree {
        root,
        compute_units: std::cell::Cell::new(None),
    };
    let cpu_dir = fs.path("sys/devices/system/cpu");
    if !cpu_dir.is_dir() {
        return Err(TopoError::Missing { path: cpu_dir });
    }
    let known = fs.numbered_entries("sys/devices/system/cpu", "cpu")?;
    if known.is_empty() {
        return Err(TopoError::Inconsistent {
            origin: root.display().to_string(),
            detail: format!("{} lists no cpuN directory", cpu_dir.display()),
        });
    }
    let online = fs.online_cpus(&known)?;
    if fs.amd_with_compute_units()? {
        fs.compute_units = std::cell::Cell::new(Some(None));
    }
    let mut raw = RawTopology {
        source: format!("sysfs:{}", root.display()),
        cpu_model: fs.cpu_model()?,
        known: known.clone(),
        online: online.clone(),
        ..RawTopology::default()
    };
    for cpu in online.iter() {
        fs.read_cpu(cpu, &mut raw)?;
    }
    fs.read_numa(&online, &mut raw)?;
    let (cgroup_cpus, cgroup_mems) = fs.cgroup_cpuset()?;
    raw.allowed = cgroup_cpus.unwrap_or_else(|| known.clone());
    if live {
        if let Some(affinity) = crate::affinity::process_affinity() {
            raw.allowed = raw.allowed.intersection(&affinity);
        }
    }
    raw.allowed_nodes = cgroup_mems;
    raw.kinds = fs.kinds(&online)?;
    Topology::build(raw)
}

pub(crate) struct Tree<'a> {
    pub(crate) root: &'a Path,
    /// AMD Bulldozer-family compute units (see [`Tree::split_compute_unit`]): `None` on
    /// other CPUs; `Some(None)` until the first multi-CPU core set decides; then
    /// `Some(Some(split))`.
    pub(crate) compute_units: std::cell::Cell<Option<Option<bool>>>,
}

impl Tree<'_> {
    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }

    /// Contents of a file, `None` when it does not exist. Only regular files are read
    /// (after following links): a FIFO, a device such as `/dev/zero` or a socket in a
    /// recorded tree is an error naming it, never a hang or an unbounded read. Files
    /// past [`MAX_FILE_BYTES`] are refused. Like hwloc (which reads C strings), the
    /// text ends at the first NUL byte: some ARM kernels end masks with `\n\0`.
    pub(crate) fn read(&self, rel: &str) -> Result<Option<String>, TopoError> {
        let path = self.path(rel);
        match crate::files::read_regular(&path, crate::files::MAX_FILE_BYTES) {
            Ok(bytes) => {
                let text = bytes.split(|&b| b == 0).next().unwrap_or_default();
                Ok(Some(String::from_utf8_lossy(text).into_owned()))
            }
            Err(crate::files::ReadError::Io(e)) => match e.kind() {
                io::ErrorKind::NotFound => Ok(None),
                // sysfs answers EINVAL/ENODEV for attributes a driver does not implement.
                _ if matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENODEV)) => {
                    Ok(None)
                }
                _ => Err(TopoError::Io { path, source: e }),
            },
            Err(crate::files::ReadError::Refused(detail)) => Err(TopoError::Parse { path, detail }),
        }
    }

    pub(crate) fn parse_err(&self, rel: &str, e: impl std::fmt::Display) -> TopoError {
        TopoError::Parse {
            path: self.path(rel),
            detail: e.to_string(),
        }
    }

    pub(crate) fn read_number(&self, rel: &str) -> Result<Option<i64>, TopoError> {
        match self.read(rel)? {
            None => Ok(None),
            Some(text) if text.trim().is_empty() => Ok(None),
            Some(text) => {
                text.trim().parse::<i64>().map(Some).map_err(|_| {
                    self.parse_err(rel, format!("`{}` is not an integer", text.trim()))
                })
            }
        }
    }

    pub(crate) fn read_list(&self, rel: &str) -> Result<Option<CpuSet>, TopoError> {
        self.read(rel)?
            .map(|t| CpuSet::parse_list(&t).map_err(|e| self.parse_err(rel, e)))
            .transpose()
    }

    fn read_mask(&self, rel: &str) -> Result<Option<CpuSet>, TopoError> {
        self.read(rel)?
            .map(|t| CpuSet::parse_mask(&t).map_err(|e| self.parse_err(rel, e)))
            .transpose()
    }

    /// The first of several equivalent files that exists: a `_list` or a mask form.
    /// Callers list masks first: where a recorded tree's two forms disagree, hwloc
    /// believes the mask, and so do we.
    fn read_set(&self, dir: &str, names: &[&str]) -> Result<Option<CpuSet>, TopoError> {
        for name in names {
            let rel = format!("{dir}/{name}");
            let found = if name.ends_with("_list") || name.ends_with("cpulist") {
                self.read_list(&rel)?
            } else {
                self.read_mask(&rel)?
            };
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// OS indexes of `<prefix>N` entries in a directory.
    fn numbered_entries(&self, rel: &str, prefix: &str) -> Result<CpuSet, TopoError> {
        let dir = self.path(rel);
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(CpuSet::new()),
            Err(source) => return Err(TopoError::Io { path: dir, source }),
        };
        let mut out = CpuSet::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(digits) = name.to_str().and_then(|n| n.strip_prefix(prefix)) else {
                continue;
            };
            if let Ok(i) = digits.parse::<u32>() {
                if i <= crate::cpuset::MAX_INDEX {
                    out.insert(i);
                }
            }
        }
        Ok(out)
    }

    fn online_cpus(&self, known: &CpuSet) -> Result<CpuSet, TopoError> {
        if let Some(online) = self.read_list("sys/devices/system/cpu/online")? {
            return Ok(online.intersection(known));
        }
        let mut online = CpuSet::new();
        for cpu in known.iter() {
            // cpu0 often has no `online` file: it cannot be taken offline.
            let state = self.read_number(&format!("sys/devices/system/cpu/cpu{cpu}/online"))?;
            if state.unwrap_or(1) != 0 {
                online.insert(cpu);
            }
        }
        Ok(online)
    }

    fn read_cpu(&self, cpu: u32, raw: &mut RawTopology) -> Result<(), TopoError> {
        let topo = format!("sys/devices/system/cpu/cpu{cpu}/topology");
        let id = |name: &str| -> Result<Option<u32>, TopoError> {
            Ok(self
                .read_number(&format!("{topo}/{name}"))?
                .and_then(|v| u32::try_from(v).ok()))
        };
        let own: CpuSet = [cpu].into_iter().collect();
        let domain = |os_id, cpus: Option<CpuSet>| RawDomain {
            os_id,
            cpus: cpus.unwrap_or_else(|| own.clone()),
            reporter: Some(cpu),
        };
        let package_set = self.read_set(
            &topo,
            &[
                "package_cpus",
                "core_siblings",
                "package_cpus_list",
                "core_siblings_list",
            ],
        )?;
        let package_id = id("physical_package_id")?;
        if package_set.is_some() || package_id.is_some() {
            raw.packages.push(domain(package_id, package_set));
        }
        let core_set = self.read_set(
            &topo,
            &[
                "core_cpus",
                "thread_siblings",
                "core_cpus_list",
                "thread_siblings_list",
            ],
        )?;
        let core_id = id("core_id")?;
        let core_set = self.split_compute_unit(cpu, core_set, core_id)?;
        if core_set.is_some() || core_id.is_some() {
            raw.cores.push(domain(core_id, core_set.clone()));
        }
        if let Some(die_set) = self.read_set(&topo, &["die_cpus", "die_cpus_list"])? {
            raw.dies.push(domain(id("die_id")?, Some(die_set)));
        }
        for level in ["book", "drawer"] {
            let set = self.read_set(
                &topo,
                &[
                    &format!("{level}_siblings"),
                    &format!("{level}_siblings_list"),
                ],
            )?;
            if let Some(set) = set {
                raw.groups
                    .push(domain(id(&format!("{level}_id"))?, Some(set)));
            }
        }
        self.read_caches(cpu, core_set.unwrap_or(own), raw)
    }

    fn read_caches(&self, cpu: u32, core: CpuSet, raw: &mut RawTopology) -> Result<(), TopoError> {
        let base = format!("sys/devices/system/cpu/cpu{cpu}/cache");
        for index in self.numbered_entries(&base, "index")?.iter() {
            let dir = format!("{base}/index{index}");
            let kind = self.read(&format!("{dir}/type"))?.unwrap_or_default();
            if kind.trim() == "Instruction" {
                continue;
            }
            let Some(level) = self.read_number(&format!("{dir}/level"))? else {
                continue;
            };
            // Some ia64 kernels write an empty sharing set for caches private to a
            // core; like hwloc, read that as the core's CPUs.
            let cpus = self
                .read_set(&dir, &["shared_cpu_map", "shared_cpu_list"])?
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| core.clone());
            let size_bytes = match self.read(&format!("{dir}/size"))? {
                Some(t) => Some(parse_size(&t).ok_or_else(|| {
                    self.parse_err(
                        &format!("{dir}/size"),
                        format!(
                            "`{}` is not a size like 32K (or is past 2^64 bytes)",
                            t.trim()
                        ),
                    )
                })?),
                None => None,
            };
            let line_bytes = self
                .read_number(&format!("{dir}/coherency_line_size"))?
                .and_then(|v| u32::try_from(v).ok());
            let cache = RawCache {
                size_bytes: size_bytes.filter(|s| *s > 0),
                line_bytes,
                cpus,
                reporter: Some(cpu),
            };
            match level {
                3 => raw.l3.push(cache),
                2 => raw.l2.push(cache),
                _ => {}
            }
        }
        Ok(())
    }

    fn read_numa(&self, online: &CpuSet, raw: &mut RawTopology) -> Result<(), TopoError> {
        let ids = self.numbered_entries("sys/devices/system/node", "node")?;
        let mut nodes = Vec::new();
        let mut rows = Vec::new();
        for id in ids.iter() {
            let dir = format!("sys/devices/system/node/node{id}");
            let cpus = self
                .read_set(&dir, &["cpumap", "cpulist"])?
                .unwrap_or_default();
            let memory_bytes = match self.read(&format!("{dir}/meminfo"))? {
                Some(text) => meminfo_total(&text)
                    .ok_or_else(|| self.parse_err(&format!("{dir}/meminfo"), "no MemTotal line"))
                    .map(Some)?,
                None => None,
            };
            if let Some(text) = self.read(&format!("{dir}/distance"))? {
                let row: Result<Vec<u32>, _> = text.split_whitespace().map(str::parse).collect();
                rows.push(row.map_err(|_| {
                    self.parse_err(&format!("{dir}/distance"), "not a list of integers")
                })?);
            }
            let locality = if cpus.is_empty() {
                Some(self.initiator_cpus(&dir)?)
            } else {
                None
            };
            nodes.push(RawNode {
                id,
                cpus,
                memory_bytes,
                locality,
            });
        }
        if nodes.is_empty() {
            let memory_bytes = self
                .read("proc/meminfo")?
                .as_deref()
                .and_then(meminfo_total);
            raw.numa.push(RawNode {
                id: 0,
                cpus: online.clone(),
                memory_bytes,
                locality: None,
            });
            return Ok(());
        }
        if rows.len() == nodes.len() && rows.iter().all(|r| r.len() == nodes.len()) {
            raw.distances = Some((nodes.iter().map(|n| n.id).collect(), rows));
        }
        raw.numa = nodes;
        Ok(())
    }

    /// CPUs of a memory-only node's initiators (HMAT access classes: `access1` lists
    /// CPU initiators only, `access0` any initiator).
    fn initiator_cpus(&self, node_dir: &str) -> Result<CpuSet, TopoError> {
        for class in ["access1", "access0"] {
            let dir = format!("{node_dir}/{class}/initiators");
            let mut cpus = CpuSet::new();
            for n in self.numbered_entries(&dir, "node")?.iter() {
                let ndir = format!("sys/devices/system/node/node{n}");
                cpus = cpus.union(
                    &self
                        .read_set(&ndir, &["cpumap", "cpulist"])?
                        .unwrap_or_default(),
                );
            }
            if !cpus.is_empty() {
                return Ok(cpus);
            }
        }
        Ok(CpuSet::new())
    }

    /// The cgroup cpuset's CPUs and memory nodes, following `/proc/self/cgroup` (or the
    /// older `/proc/self/cpuset`) into the mount point `/proc/mounts` names.
    fn cgroup_cpuset(&self) -> Result<(Option<CpuSet>, Option<NodeSet>), TopoError> {
        let mounts = self.read("proc/mounts")?.unwrap_or_default();
        let mut v2_mount = None;
        let mut v1_mount = None;
        for line in mounts.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 4 {
                continue;
            }
            let opts: Vec<&str> = f[3].split(',').collect();
            match f[2] {
                "cgroup2" => v2_mount = Some(f[1].to_string()),
                "cgroup" if opts.contains(&"cpuset") => {
                    v1_mount = Some((f[1].to_string(), opts.contains(&"noprefix")))
                }
                "cpuset" => v1_mount = Some((f[1].to_string(), true)),
                _ => {}
            }
        }
        let cgroup = self.read("proc/self/cgroup")?.unwrap_or_default();
        let v1_path = cgroup.lines().find_map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            controllers
                .split(',')
                .any(|c| c == "cpuset")
                .then(|| path.to_string())
        });
        let v2_path = cgroup
            .lines()
            .find_map(|l| l.strip_prefix("0::").map(str::to_string));
        let legacy_path = self.read("proc/self/cpuset")?.map(|p| p.trim().to_string());
        let (dir, names): (String, [&str; 4]) = if let (Some((mnt, noprefix)), Some(path)) =
            (v1_mount.clone(), v1_path.clone().or(legacy_path.clone()))
        {
            let names = if noprefix {
                ["effective_cpus", "cpus", "effective_mems", "mems"]
            } else {
                [
                    "cpuset.effective_cpus",
                    "cpuset.cpus",
                    "cpuset.effective_mems",
                    "cpuset.mems",
                ]
            };
            (format!("{mnt}/{path}"), names)
        } else if let (Some(mnt), Some(path)) = (v2_mount, v2_path.or(legacy_path)) {
            (
                format!("{mnt}/{path}"),
                [
                    "cpuset.cpus.effective",
                    "cpuset.cpus.effective",
                    "cpuset.mems.effective",
                    "cpuset.mems.effective",
                ],
            )
        } else {
            return Ok((None, None));
        };
        let dir = dir.replace("//", "/");
        let first = |a: &str, b: &str| -> Result<Option<CpuSet>, TopoError> {
            match self.read_list(&format!("{dir}/{a}"))? {
                Some(s) => Ok(Some(s)),
                None => self.read_list(&format!("{dir}/{b}")),
            }
        };
        let cpus = first(names[0], names[1])?;
        let mems = first(names[2], names[3])?.map(|s| s.iter().collect::<NodeSet>());
        Ok((cpus, mems))
    }

    fn cpu_model(&self) -> Result<Option<String>, TopoError> {
        let Some(text) = self.read("proc/cpuinfo")? else {
            return Ok(None);
        };
        const KEYS: [&str; 5] = ["model name", "cpu model", "Processor", "cpu", "vendor_id"];
        for key in KEYS {
            for line in text.lines() {
                if let Some((k, v)) = line.split_once(':') {
                    if k.trim() == key && !v.trim().is_empty() {
                        return Ok(Some(v.trim().to_string()));
                    }
                }
            }
        }
        Ok(None)
    }
}

/// `Node 0 MemTotal:  16384 kB` (per node) or `MemTotal: 16384 kB` (/proc/meminfo).
fn meminfo_total(text: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (_, rest) = line.split_once("MemTotal:")?;
        let mut it = rest.split_whitespace();
        let value: u64 = it.next()?.parse().ok()?;
        let unit = it.next().unwrap_or("B");
        value.checked_mul(unit_multiplier(unit)?)
    })
}

fn unit_multiplier(unit: &str) -> Option<u64> {
    Some(match unit.to_ascii_lowercase().as_str() {
        "b" | "" => 1,
        "kb" | "k" => 1 << 10,
        "mb" | "m" => 1 << 20,
        "gb" | "g" => 1 << 30,
        _ => return None,
    })
}

/// Cache sizes as sysfs writes them: `32K`, `8192K`, `2M`; `None` for anything else,
/// a size past `u64` bytes included (`18014398509481985K` must not wrap to 1 KiB).
fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    digits
        .parse::<u64>()
        .ok()?
        .checked_mul(unit_multiplier(unit)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_meminfo() {
        assert_eq!(parse_size("32K\n"), Some(32 * 1024));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("abc"), None);
        // 18014398509481985 * 1024 wraps to 1024 in unchecked u64 arithmetic.
        assert_eq!(parse_size("18014398509481985K"), None);
        assert_eq!(meminfo_total("MemTotal: 18014398509481985 kB"), None);
        assert_eq!(
            meminfo_total("Node 0 MemTotal:       16384 kB\n"),
            Some(16384 * 1024)
        );
        assert_eq!(meminfo_total("MemFree: 1 kB"), None);
    }
}
