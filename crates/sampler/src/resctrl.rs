//! Memory bandwidth monitoring through resctrl (Intel RDT MBM, AMD PQoS): a
//! monitoring group `mon_groups/scalescope-PID` that holds exactly the run's tasks,
//! read per L3 domain (`mon_data/mon_L3_NN/mbm_{total,local}_bytes`); remote =
//! total - local, the quantity `pqos` calls MBR. The group is removed when the
//! source is dropped (its tasks return to the default group).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::bandwidth::{BandwidthSource, DomainReading};

/// A live monitoring group.
#[derive(Debug)]
pub struct Resctrl {
    group: PathBuf,
    followed: BTreeSet<u32>,
    has_local: bool,
}

/// The resctrl mount point listed in `ROOT/proc/mounts`, under `root`.
pub fn mount_point(root: &Path) -> Option<PathBuf> {
    let mounts = std::fs::read_to_string(root.join("proc/mounts")).ok()?;
    mounts.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        let point = f.get(1)?;
        (f.get(2) == Some(&"resctrl")).then(|| root.join(point.trim_start_matches('/')))
    })
}

/// Why MBM cannot be used when resctrl is not mounted: the CPU flags tell whether
/// mounting would help.
fn not_mounted(root: &Path) -> String {
    let cpuinfo = std::fs::read_to_string(root.join("proc/cpuinfo")).unwrap_or_default();
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or_default();
    if flags.split_whitespace().any(|f| f == "cqm_mbm_total") {
        "no resctrl filesystem is mounted, though the CPU has MBM (cqm_mbm_total); `mount -t resctrl resctrl /sys/fs/resctrl` as root enables it".into()
    } else {
        "no resctrl filesystem is mounted and the CPU does not report MBM (no cqm_mbm_total flag in /proc/cpuinfo)".into()
    }
}

impl Resctrl {
    /// Finds resctrl, checks MBM is offered, creates the group and moves `pid` into
    /// it, and takes a first reading.
    ///
    /// # Errors
    /// What is missing or refused, in a sentence.
    pub fn open(root: &Path, pid: u32) -> Result<Resctrl, String> {
        let mount = mount_point(root).ok_or_else(|| not_mounted(root))?;
        let features =
            std::fs::read_to_string(mount.join("info/L3_MON/mon_features")).map_err(|e| {
                format!(
                    "{}: {e} (no L3 monitoring)",
                    mount.join("info/L3_MON/mon_features").display()
                )
            })?;
        let has = |f: &str| features.lines().any(|l| l.trim() == f);
        if !has("mbm_total_bytes") {
            return Err(format!(
                "{}/info/L3_MON/mon_features offers no mbm_total_bytes (only: {})",
                mount.display(),
                features.split_whitespace().collect::<Vec<_>>().join(", ")
            ));
        }
        let group = mount.join(format!("mon_groups/scalescope-{pid}"));
        // A group left by an earlier scalescope of the same PID (crashed before it
        // removed it) is reused: it monitors nothing else.
        let made = match std::fs::create_dir(&group) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            other => other,
        };
        made.map_err(|e| {
            format!(
                "creating monitoring group {}: {e}{}",
                group.display(),
                match e.raw_os_error() {
                    Some(libc::EACCES) | Some(libc::EPERM) => " (needs root)",
                    Some(libc::ENOSPC) => " (no free RMID)",
                    _ => "",
                }
            )
        })?;
        let mut r = Resctrl {
            group,
            followed: BTreeSet::new(),
            has_local: has("mbm_local_bytes"),
        };
        r.follow(&[pid]);
        if !r.followed.contains(&pid) {
            return Err(format!("{}/tasks refused PID {pid}", r.group.display()));
        }
        if r.read().is_empty() {
            return Err(format!(
                "{}/mon_data holds no readable mon_L3_NN/mbm_total_bytes",
                r.group.display()
            ));
        }
        Ok(r)
    }
}

fn read_u64(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

impl BandwidthSource for Resctrl {
    fn name(&self) -> &str {
        "resctrl-mbm"
    }

    fn scope(&self) -> &str {
        "the run's tasks (a resctrl monitoring group)"
    }

    fn follow(&mut self, tids: &[u32]) {
        for &tid in tids {
            if self.followed.contains(&tid) {
                continue;
            }
            // One task per write, as the kernel requires; a task that ended is skipped.
            if std::fs::write(self.group.join("tasks"), tid.to_string()).is_ok() {
                self.followed.insert(tid);
            }
        }
    }

    fn read(&mut self) -> Vec<DomainReading> {
        let Ok(entries) = std::fs::read_dir(self.group.join("mon_data")) else {
            return Vec::new();
        };
        let mut out: Vec<DomainReading> = entries
            .flatten()
            .filter_map(|e| {
                let domain = e
                    .file_name()
                    .to_str()?
                    .strip_prefix("mon_L3_")?
                    .parse()
                    .ok()?;
                let dir = e.path();
                Some(DomainReading {
                    domain,
                    total_bytes: read_u64(&dir.join("mbm_total_bytes"))?,
                    local_bytes: if self.has_local {
                        read_u64(&dir.join("mbm_local_bytes"))
                    } else {
                        None
                    },
                })
            })
            .collect();
        out.sort_by_key(|d| d.domain);
        out
    }
}

impl Drop for Resctrl {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.group);
    }
}
