//! `perf_event_open` for counting (no sampling, no mmap): one counter per file
//! descriptor, read as a single `u64`. Events are given as a PMU type and config
//! words, either generic constants or parsed from the PMU's sysfs description
//! (`events/NAME` terms mapped through `format/TERM` bit ranges).
//!
//! Per-run hardware event totals on the run's tasks ([`RunCounters`]; inherited by
//! the threads and children started after the counters open): last-level-cache
//! load misses and loads served by another node's memory, through the kernel's
//! generic cache events (`LLC-load-misses`, `node-load-misses`), which it maps to the
//! vendor's own events. Where the PMU has no such event the count says why.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

use scalescope_model::evidence::{Measured, PmuCount};

/// `struct perf_event_attr` up to `PERF_ATTR_SIZE_VER5` (112 bytes).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved: u16,
}

const FLAG_INHERIT: u64 = 1 << 1;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;

pub const TYPE_HARDWARE: u32 = 0;
pub const TYPE_SOFTWARE: u32 = 1;
pub const TYPE_HW_CACHE: u32 = 3;

/// One event to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Event {
    pub kind: u32,
    pub config: u64,
    pub config1: u64,
    pub config2: u64,
}

/// What to count: one task (and, with `inherit`, the threads and children it starts
/// afterwards), or a whole CPU (uncore counters).
#[derive(Debug, Clone, Copy)]
pub enum Target {
    Task { pid: u32, inherit: bool },
    Cpu(u32),
}

/// An open counter.
#[derive(Debug)]
pub struct Counter {
    fd: OwnedFd,
}

/// Opens a counter.
///
/// # Errors
/// The `errno` of `perf_event_open`.
pub fn open(event: Event, target: Target) -> std::io::Result<Counter> {
    let mut attr = PerfEventAttr {
        kind: event.kind,
        size: std::mem::size_of::<PerfEventAttr>() as u32,
        config: event.config,
        config1: event.config1,
        config2: event.config2,
        ..Default::default()
    };
    let (pid, cpu) = match target {
        Target::Task { pid, inherit } => {
            attr.flags = FLAG_EXCLUDE_HV | if inherit { FLAG_INHERIT } else { 0 };
            (pid as libc::pid_t, -1)
        }
        Target::Cpu(cpu) => (-1, cpu as libc::c_int),
    };
    // SAFETY: the attribute is a fully initialised repr(C) struct whose `size` field
    // says how much of it the kernel may read; the other arguments are plain values.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            pid,
            cpu,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) };
    Ok(Counter { fd })
}

impl Counter {
    /// The count so far.
    ///
    /// # Errors
    /// The `errno` of `read`, or a short read.
    pub fn read(&self) -> std::io::Result<u64> {
        let mut value = 0u64;
        // SAFETY: reads at most 8 bytes into a u64 we own, from a descriptor we own.
        let n = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                (&mut value as *mut u64).cast::<libc::c_void>(),
                8,
            )
        };
        match n {
            8 => Ok(value),
            n if n < 0 => Err(std::io::Error::last_os_error()),
            _ => Err(std::io::Error::other("short read from a perf counter")),
        }
    }
}

/// `ROOT/proc/sys/kernel/perf_event_paranoid`, if readable.
pub fn paranoid(root: &Path) -> Option<i32> {
    std::fs::read_to_string(root.join("proc/sys/kernel/perf_event_paranoid"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Explains a refused open in the words of the setting that decides it.
pub fn explain(err: &std::io::Error, root: &Path, system_wide: bool) -> String {
    let level = paranoid(root);
    let hint = match (err.raw_os_error(), level) {
        (Some(libc::EACCES) | Some(libc::EPERM), Some(l)) if system_wide => format!(
            " (perf_event_paranoid is {l}; counting a whole CPU needs 0 or less, or CAP_PERFMON)"
        ),
        (Some(libc::EACCES) | Some(libc::EPERM), Some(l)) => format!(
            " (perf_event_paranoid is {l}; counting another process needs 2 or less, or CAP_PERFMON)"
        ),
        (Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV), _) => {
            " (this CPU or VM exposes no such hardware event)".to_string()
        }
        _ => String::new(),
    };
    format!("perf_event_open: {err}{hint}")
}

/// Parses a PMU format file (`config:0-7`, `config1:0-15`, `config:0-7,32-35`) into
/// the config word and its bit ranges.
pub fn parse_format(text: &str) -> Option<(usize, Vec<(u32, u32)>)> {
    let (word, ranges) = text.trim().split_once(':')?;
    let word = match word {
        "config" => 0,
        "config1" => 1,
        "config2" => 2,
        _ => return None,
    };
    let ranges = ranges
        .split(',')
        .map(|r| match r.split_once('-') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => r.parse().ok().map(|a| (a, a)),
        })
        .collect::<Option<Vec<(u32, u32)>>>()?;
    Some((word, ranges))
}

/// Builds an event from a sysfs description (`event=0x04,umask=0x03`) and the PMU's
/// `format/` files (term name -> file content).
///
/// # Errors
/// A term with no format, or a malformed value, named.
pub fn event_from_terms(
    kind: u32,
    description: &str,
    formats: &BTreeMap<String, String>,
) -> Result<Event, String> {
    let mut words = [0u64; 3];
    for term in description.trim().split(',').filter(|t| !t.is_empty()) {
        let (name, value) = term.split_once('=').unwrap_or((term, "1"));
        let value = match value.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => value.parse(),
        }
        .map_err(|_| format!("term `{term}`: not a number"))?;
        let format = formats
            .get(name)
            .ok_or_else(|| format!("term `{name}` has no format file"))?;
        let (word, ranges) =
            parse_format(format).ok_or_else(|| format!("format `{format}` of `{name}`"))?;
        let mut rest = value;
        for (lo, hi) in ranges {
            let width = hi - lo + 1;
            let mask = if width >= 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            words[word] |= (rest & mask) << lo;
            rest = if width >= 64 { 0 } else { rest >> width };
        }
    }
    Ok(Event {
        kind,
        config: words[0],
        config1: words[1],
        config2: words[2],
    })
}

/// `PERF_COUNT_HW_CACHE_{LL,NODE} | OP_READ << 8 | RESULT_MISS << 16`.
const LLC_LOAD_MISSES: u64 = 2 | (1 << 16);
const NODE_LOAD_MISSES: u64 = 6 | (1 << 16);

/// The counters of one run.
#[derive(Debug)]
pub struct RunCounters {
    counters: Vec<(&'static str, Result<Counter, String>)>,
}

impl RunCounters {
    /// Opens every counter on `pid`; each one that fails keeps its reason.
    pub fn open(root: &Path, pid: u32) -> RunCounters {
        let events = [
            ("llc-load-misses", LLC_LOAD_MISSES),
            ("remote-dram-loads", NODE_LOAD_MISSES),
        ];
        RunCounters {
            counters: events
                .into_iter()
                .map(|(name, config)| {
                    let event = Event {
                        kind: TYPE_HW_CACHE,
                        config,
                        ..Default::default()
                    };
                    let c = open(event, Target::Task { pid, inherit: true })
                        .map_err(|e| explain(&e, root, false));
                    (name, c)
                })
                .collect(),
        }
    }

    /// No counters, for this reason.
    pub fn none(why: &str) -> RunCounters {
        RunCounters {
            counters: vec![
                ("llc-load-misses", Err(why.to_string())),
                ("remote-dram-loads", Err(why.to_string())),
            ],
        }
    }

    /// The totals (or reasons).
    pub fn read(&self) -> Vec<PmuCount> {
        self.counters
            .iter()
            .map(|(name, c)| PmuCount {
                name: (*name).to_string(),
                count: match c {
                    Ok(c) => match c.read() {
                        Ok(v) => Measured::Measured(v),
                        Err(e) => Measured::Unavailable(format!("reading the counter: {e}")),
                    },
                    Err(why) => Measured::Unavailable(why.clone()),
                },
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_map_through_formats() {
        let formats = BTreeMap::from([
            ("event".to_string(), "config:0-7\n".to_string()),
            ("umask".to_string(), "config:8-15".to_string()),
            ("rdwrmask".to_string(), "config:8-9".to_string()),
            ("split".to_string(), "config1:0-3,8-11".to_string()),
        ]);
        let e = event_from_terms(14, "event=0x04,umask=0x03", &formats).unwrap();
        assert_eq!((e.kind, e.config), (14, 0x0304));
        let e = event_from_terms(14, "split=0xab", &formats).unwrap();
        assert_eq!(e.config1, 0x0a0b);
        assert!(event_from_terms(14, "edge=1", &formats)
            .unwrap_err()
            .contains("edge"));
    }

    #[test]
    fn a_software_counter_counts_a_real_child() {
        // This machine may have no hardware counters, but task-clock always exists:
        // it checks the open/read path on a real process.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"])
            .spawn()
            .unwrap();
        let c = open(
            Event {
                kind: TYPE_SOFTWARE,
                config: 1, // PERF_COUNT_SW_TASK_CLOCK
                ..Default::default()
            },
            Target::Task {
                pid: child.id(),
                inherit: true,
            },
        );
        let c = match c {
            Ok(c) => c,
            // Some sandboxes forbid perf entirely; the refusal must say why.
            Err(e) => {
                let why = explain(&e, Path::new("/"), false);
                assert!(why.starts_with("perf_event_open:"), "{why}");
                child.wait().unwrap();
                return;
            }
        };
        child.wait().unwrap();
        let ns = c.read().unwrap();
        assert!(ns > 0, "task-clock of a busy child read {ns} ns");
    }
}
