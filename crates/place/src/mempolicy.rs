//! Memory placement policies (`set_mempolicy(2)`): where the pages a thread touches
//! first are allocated. Parsed from the sweep's `--mem` values and applied in the
//! calling thread (or, before `exec`, in a child process, where it is inherited).

use std::fmt;
use std::io;
use std::str::FromStr;

use scalescope_topo::{NodeSet, Topology};
use serde::{Deserialize, Serialize};

use crate::PlaceError;

/// A memory policy, by its sweep name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum MemPolicy {
    /// The kernel default: a page lands on the node of the CPU that first touches it.
    FirstTouch,
    /// Pages round-robin over every allowed node with memory (`numactl --interleave=all`).
    Interleave,
    /// Only these nodes (`numactl --membind`).
    Bind(Vec<u32>),
    /// This node first, others when it is full (`numactl --preferred`).
    Preferred(u32),
    /// The node of the CPU doing the allocation, strictly (`MPOL_LOCAL`).
    Local,
}

impl FromStr for MemPolicy {
    type Err = PlaceError;
    fn from_str(s: &str) -> Result<Self, PlaceError> {
        let bad = || PlaceError::BadValue {
            what: "memory policy",
            value: s.to_string(),
            expected: "first-touch, interleave, bind:N[+M..], preferred:N or local",
        };
        Ok(match s {
            "first-touch" => MemPolicy::FirstTouch,
            "interleave" => MemPolicy::Interleave,
            "local" => MemPolicy::Local,
            _ => {
                if let Some(nodes) = s.strip_prefix("bind:") {
                    let v: Option<Vec<u32>> = nodes.split('+').map(node_id).collect();
                    MemPolicy::Bind(v.ok_or_else(bad)?)
                } else if let Some(node) = s.strip_prefix("preferred:") {
                    MemPolicy::Preferred(node_id(node).ok_or_else(bad)?)
                } else {
                    return Err(bad());
                }
            }
        })
    }
}

/// A node number as written: ASCII digits only (`str::parse` would also take `+1`,
/// which then prints back as `1`), fitting a `u32`.
fn node_id(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

impl fmt::Display for MemPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemPolicy::FirstTouch => f.write_str("first-touch"),
            MemPolicy::Interleave => f.write_str("interleave"),
            MemPolicy::Local => f.write_str("local"),
            MemPolicy::Preferred(n) => write!(f, "preferred:{n}"),
            MemPolicy::Bind(v) => {
                let s: Vec<String> = v.iter().map(u32::to_string).collect();
                write!(f, "bind:{}", s.join("+"))
            }
        }
    }
}

impl From<MemPolicy> for String {
    fn from(p: MemPolicy) -> String {
        p.to_string()
    }
}

impl TryFrom<String> for MemPolicy {
    type Error = PlaceError;
    fn try_from(s: String) -> Result<Self, PlaceError> {
        s.parse()
    }
}

/// A policy resolved against a machine: the syscall's mode and node mask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPolicy {
    pub mode: i32,
    pub nodes: NodeSet,
}

// From <linux/mempolicy.h>.
const MPOL_DEFAULT: i32 = 0;
const MPOL_PREFERRED: i32 = 1;
const MPOL_BIND: i32 = 2;
const MPOL_INTERLEAVE: i32 = 3;
const MPOL_LOCAL: i32 = 4;
/// `move_pages(2)` flag: move pages mapped by this process only (linux/mempolicy.h).
const MPOL_MF_MOVE: i32 = 1 << 1;

impl MemPolicy {
    /// Checks the nodes against the machine and builds the syscall arguments.
    ///
    /// # Errors
    /// [`PlaceError::BadValue`] naming a node that does not exist, is not allowed, or
    /// has no memory.
    pub fn resolve(&self, topo: &Topology) -> Result<ResolvedPolicy, PlaceError> {
        let usable: Vec<u32> = topo
            .numa_nodes
            .iter()
            .filter(|n| n.allowed && n.memory_bytes != Some(0))
            .map(|n| n.id)
            .collect();
        let check = |id: u32| -> Result<u32, PlaceError> {
            if usable.contains(&id) {
                Ok(id)
            } else {
                Err(PlaceError::BadValue {
                    what: "memory node",
                    value: id.to_string(),
                    expected: "an allowed NUMA node with memory (see `scalescope topo`)",
                })
            }
        };
        Ok(match self {
            MemPolicy::FirstTouch => ResolvedPolicy {
                mode: MPOL_DEFAULT,
                nodes: NodeSet::new(),
            },
            MemPolicy::Local => ResolvedPolicy {
                mode: MPOL_LOCAL,
                nodes: NodeSet::new(),
            },
            MemPolicy::Interleave => ResolvedPolicy {
                mode: MPOL_INTERLEAVE,
                nodes: usable.iter().copied().collect(),
            },
            MemPolicy::Preferred(n) => ResolvedPolicy {
                mode: MPOL_PREFERRED,
                nodes: [check(*n)?].into_iter().collect(),
            },
            MemPolicy::Bind(v) => ResolvedPolicy {
                mode: MPOL_BIND,
                nodes: v
                    .iter()
                    .map(|n| check(*n))
                    .collect::<Result<NodeSet, _>>()?,
            },
        })
    }
}

/// The node mask as the kernel wants it: an array of longs, bit n for node n.
fn node_mask(nodes: &NodeSet) -> Vec<libc::c_ulong> {
    let bits = 8 * std::mem::size_of::<libc::c_ulong>();
    let words = nodes.last().map(|n| n as usize / bits + 1).unwrap_or(1);
    let mut mask = vec![0 as libc::c_ulong; words];
    for n in nodes.iter() {
        mask[n as usize / bits] |= 1 << (n as usize % bits);
    }
    mask
}

/// Applies a resolved policy to the calling thread. Async-signal-safe apart from
/// the mask allocation, so callers before `exec` build the mask first with
/// [`PreparedPolicy::new`].
///
/// # Errors
/// The OS error from `set_mempolicy`.
pub fn apply(policy: &ResolvedPolicy) -> io::Result<()> {
    PreparedPolicy::new(policy).apply()
}

/// A policy with its mask allocated, ready to apply between `fork` and `exec`.
#[derive(Debug, Clone)]
pub struct PreparedPolicy {
    mode: i32,
    mask: Vec<libc::c_ulong>,
}

impl PreparedPolicy {
    pub fn new(policy: &ResolvedPolicy) -> Self {
        PreparedPolicy {
            mode: policy.mode,
            mask: node_mask(&policy.nodes),
        }
    }

    /// Calls `set_mempolicy`; the default policy is a no-op.
    ///
    /// # Errors
    /// The OS error from the syscall.
    pub fn apply(&self) -> io::Result<()> {
        if self.mode == MPOL_DEFAULT {
            return Ok(());
        }
        let (ptr, maxnode) = if self.mode == MPOL_LOCAL {
            (std::ptr::null(), 0)
        } else {
            (
                self.mask.as_ptr(),
                self.mask.len() * 8 * std::mem::size_of::<libc::c_ulong>() + 1,
            )
        };
        // SAFETY: set_mempolicy reads `maxnode` bits from `ptr`, which points into
        // `self.mask` (or is null for MPOL_LOCAL); no memory is written.
        let rc = unsafe { libc::syscall(libc::SYS_set_mempolicy, self.mode, ptr, maxnode) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

/// Applies a policy to the pages of `[addr, addr + len)` (`mbind(2)`); call it before
/// the pages are first touched so they are allocated where the policy says.
///
/// # Errors
/// The OS error from `mbind` (EINVAL for an unaligned range or a bad node).
///
/// # Safety
/// `[addr, addr + len)` must be a mapping owned by the caller.
pub unsafe fn bind_range(addr: *mut u8, len: usize, policy: &ResolvedPolicy) -> io::Result<()> {
    let p = PreparedPolicy::new(policy);
    let (ptr, maxnode) = if p.mode == MPOL_DEFAULT || p.mode == MPOL_LOCAL {
        (std::ptr::null(), 0)
    } else {
        (
            p.mask.as_ptr(),
            p.mask.len() * 8 * std::mem::size_of::<libc::c_ulong>() + 1,
        )
    };
    // SAFETY: the caller owns the mapping; mbind only changes its policy and reads
    // `maxnode` bits of the mask, which `p` keeps alive for the call.
    let rc = unsafe { libc::syscall(libc::SYS_mbind, addr, len, p.mode, ptr, maxnode, 0u32) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Where the pages of `[addr, addr + len)` are, by the kernel's own answer
/// (`move_pages(2)` with no target nodes only reports): pages per NUMA node, and the
/// pages not yet allocated (never touched) under `None`.
///
/// # Errors
/// The OS error from `move_pages` (ENOSYS on a kernel without NUMA).
pub fn page_nodes(
    addr: *const u8,
    len: usize,
) -> io::Result<std::collections::BTreeMap<Option<u32>, usize>> {
    let pages = page_addresses(addr, len);
    let mut status = vec![0i32; pages.len()];
    let mut out = std::collections::BTreeMap::new();
    if pages.is_empty() {
        return Ok(out);
    }
    // SAFETY: with a null `nodes` array move_pages moves nothing: it reads `count`
    // addresses from `pages` and writes `count` ints to `status`, both that long.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0,
            pages.len(),
            pages.as_ptr(),
            std::ptr::null::<i32>(),
            status.as_mut_ptr(),
            0,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    for s in status {
        *out.entry(u32::try_from(s).ok()).or_insert(0) += 1;
    }
    Ok(out)
}

/// The start of every page that `[addr, addr + len)` touches, as `move_pages(2)`
/// takes them.
fn page_addresses(addr: *const u8, len: usize) -> Vec<*const libc::c_void> {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    let start = addr as usize & !(page - 1);
    (start..addr as usize + len)
        .step_by(page)
        .map(|a| a as *const libc::c_void)
        .collect()
}

/// The NUMA node of the CPU the calling thread runs on now (`getcpu(2)`).
///
/// # Errors
/// The OS error from `getcpu`.
pub fn current_node() -> io::Result<u32> {
    let (mut cpu, mut node) = (0u32, 0u32);
    // SAFETY: getcpu writes one unsigned int through each non-null pointer; the
    // third argument (a cache, unused since Linux 2.6.24) may be null.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_getcpu,
            &mut cpu as *mut u32,
            &mut node as *mut u32,
            std::ptr::null_mut::<libc::c_void>(),
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(node)
}

/// The calling thread's memory policy (`get_mempolicy(2)`): its mode's name
/// (`default`, `preferred`, `bind`, `interleave`, `local`, `preferred-many`,
/// `weighted-interleave`) and its nodes (empty for `default` and `local`).
///
/// # Errors
/// The OS error from `get_mempolicy` (ENOSYS on a kernel without NUMA).
pub fn current_policy() -> io::Result<(String, NodeSet)> {
    let mut mode: i32 = 0;
    let mut mask = [0u64; 16];
    let maxnode = (mask.len() * 64) as u64;
    // SAFETY: get_mempolicy writes one int through `mode` and at most `maxnode`
    // bits through `mask`, which holds exactly that many; addr null and flags 0
    // ask for the thread's own policy.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut mode as *mut i32,
            mask.as_mut_ptr(),
            maxnode,
            std::ptr::null_mut::<libc::c_void>(),
            0u64,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    // The mode's high bits are flags (MPOL_F_STATIC_NODES, ...); the mode is below.
    let name = match mode & 0xff {
        MPOL_DEFAULT => "default",
        MPOL_PREFERRED => "preferred",
        MPOL_BIND => "bind",
        MPOL_INTERLEAVE => "interleave",
        MPOL_LOCAL => "local",
        5 => "preferred-many",
        6 => "weighted-interleave",
        _ => "unknown",
    };
    let nodes = (0..maxnode as u32)
        .filter(|&n| mask[n as usize / 64] >> (n % 64) & 1 == 1)
        .collect();
    Ok((name.to_string(), nodes))
}

/// Moves the allocated pages of `[addr, addr + len)` to `node` (`move_pages(2)` with
/// a target for every page; pages never touched stay unallocated). Pages at the
/// range's edges that it shares with neighbouring data move too. Returns how many
/// pages could not be moved (busy, or not ours).
///
/// # Errors
/// The OS error from `move_pages` (ENOSYS on a kernel without NUMA, ENODEV for a
/// node that does not exist).
pub fn move_pages_to(addr: *const u8, len: usize, node: u32) -> io::Result<usize> {
    let pages = page_addresses(addr, len);
    if pages.is_empty() {
        return Ok(0);
    }
    let nodes = vec![node as i32; pages.len()];
    let mut status = vec![0i32; pages.len()];
    // SAFETY: move_pages reads `count` addresses from `pages` and `count` node
    // numbers from `nodes`, and writes `count` ints to `status`: all three that long.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0,
            pages.len(),
            pages.as_ptr(),
            nodes.as_ptr(),
            status.as_mut_ptr(),
            MPOL_MF_MOVE,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    // -ENOENT: a page never touched, nothing to move.
    Ok(status
        .iter()
        .filter(|&&s| s < 0 && s != -libc::ENOENT)
        .count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_moved_to_this_node_read_back_there() {
        let node = current_node().expect("getcpu");
        let buf = vec![1u8; 1 << 20];
        let failed = move_pages_to(buf.as_ptr(), buf.len(), node).expect("move_pages");
        assert_eq!(failed, 0);
        let nodes = page_nodes(buf.as_ptr(), buf.len()).expect("move_pages query");
        assert_eq!(nodes.keys().copied().collect::<Vec<_>>(), vec![Some(node)]);
        assert!(nodes[&Some(node)] >= 256, "{nodes:?}");
    }

    #[test]
    fn names_round_trip() {
        for s in [
            "first-touch",
            "interleave",
            "local",
            "bind:0",
            "bind:0+2",
            "preferred:1",
        ] {
            assert_eq!(s.parse::<MemPolicy>().unwrap().to_string(), s);
        }
        for s in [
            "bind:",
            "bind:x",
            "preferred:",
            "everywhere",
            "preferred:+1",
            "bind:0+-1",
            "bind:4294967296",
            "preferred:é",
        ] {
            assert!(s.parse::<MemPolicy>().is_err(), "{s}");
        }
    }

    #[test]
    fn resolve_checks_nodes() {
        let t = scalescope_topo::Source::Synthetic("numa:2 core:2".into())
            .load()
            .unwrap();
        assert_eq!(
            MemPolicy::Bind(vec![1]).resolve(&t).unwrap().mode,
            MPOL_BIND
        );
        let e = MemPolicy::Bind(vec![5])
            .resolve(&t)
            .unwrap_err()
            .to_string();
        assert!(e.contains("memory node `5`"), "{e}");
        assert_eq!(MemPolicy::Interleave.resolve(&t).unwrap().nodes.len(), 2);
    }

    #[test]
    fn masks() {
        assert_eq!(node_mask(&[0, 2].into_iter().collect()), vec![5]);
        assert_eq!(node_mask(&NodeSet::new()), vec![0]);
    }

    /// Touched pages are on a node (this machine's node 0 when it has one); untouched
    /// pages of a fresh mapping are not allocated yet.
    #[test]
    fn page_nodes_counts_touched_and_untouched_pages() {
        let mut v = vec![0u8; 64 * 4096];
        for b in v.iter_mut().step_by(4096).take(16) {
            *b = 1;
        }
        let nodes = page_nodes(v.as_ptr(), v.len()).unwrap();
        let placed: usize = nodes
            .iter()
            .filter(|(n, _)| n.is_some())
            .map(|(_, c)| c)
            .sum();
        assert!(placed >= 16, "{nodes:?}");
        assert!(nodes.values().sum::<usize>() >= 64, "{nodes:?}");
        // The 48 pages never written are not allocated (calloc maps zero pages lazily).
        assert!(nodes.get(&None).copied().unwrap_or(0) >= 40, "{nodes:?}");
    }
}
