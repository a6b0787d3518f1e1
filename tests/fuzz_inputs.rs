//! Fuzzing every input parser besides placement's (which has its own harness in
//! `crates/place/tests/fuzz_parsers.rs`): sysfs files in a recorded tree, hwloc XML,
//! synthetic specs, thread lists, edge lists, Matrix Market, `.tbl` and results
//! files. Valid seeds are mutated at the byte level (bit flips, truncation,
//! deletion, insertion of NUL, `\n\0`, invalid UTF-8, non-ASCII, numbers past `u64`,
//! deep nesting, repeats) and each input must end in a value or a typed error: no
//! panic, no single allocation past 256 MiB, no case over 5 s.
//!
//! The normal test run does `SCALESCOPE_FUZZ_CASES` (default 64) cases per parser;
//! the campaign in docs/RELIABILITY.md runs
//! `SCALESCOPE_FUZZ_CASES=12500 cargo test --test fuzz_inputs -- --nocapture`
//! (8 parsers: 100,000 inputs). This binary installs a counting allocator.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use scalescope_topo::Source;

/// The largest single allocation a case may make (a parser sizing a buffer from a
/// number in its input would go far past this).
const ALLOCATION_LIMIT_BYTES: usize = 256 << 20;
const CASE_LIMIT: Duration = Duration::from_secs(5);
const MAX_INPUT_BYTES: usize = 1 << 20;

struct CountingAllocator;
static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged, except that requests past
// 4x the limit return null, which `GlobalAlloc` allows (allocation failure).
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        if layout.size() > 4 * ALLOCATION_LIMIT_BYTES {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract for `alloc` is `System`'s.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        if new_size > 4 * ALLOCATION_LIMIT_BYTES {
            return std::ptr::null_mut();
        }
        // SAFETY: as for `alloc`; `ptr` and `layout` came from `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn cases() -> u32 {
    std::env::var("SCALESCOPE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

/// Byte strings inserted by mutations.
const PIECES: &[&[u8]] = &[
    b"\0",
    b"\n\0",
    b"\xff\xfe",
    b"\xc3\xa9",
    b"18446744073709551615",
    b"18446744073709551616",
    b"99999999999999999999999999",
    b"4294967295",
    b"-1",
    b"18014398509481985K",
    b"\n",
    b",",
    b" ",
    b"0x",
    b"<object type=\"Group\">",
    b"</object>",
    b"\"",
    b"|",
    b"..",
    b"%",
];

#[derive(Debug, Clone)]
enum Mutation {
    FlipBit { at: usize, bit: u8 },
    Truncate { at: usize },
    Insert { at: usize, piece: usize },
    Delete { at: usize },
    ReplaceNumbers { piece: usize },
    Repeat { at: usize, len: usize, times: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        1 => any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        4 => (any::<usize>(), 0..PIECES.len()).prop_map(|(at, piece)| Mutation::Insert { at, piece }),
        2 => any::<usize>().prop_map(|at| Mutation::Delete { at }),
        1 => (0..PIECES.len()).prop_map(|piece| Mutation::ReplaceNumbers { piece }),
        1 => (any::<usize>(), 1usize..64, 2usize..20_000)
            .prop_map(|(at, len, times)| Mutation::Repeat { at, len, times }),
    ]
}

fn mutate(seed: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for m in mutations {
        let pos = |i: usize, len: usize| if len == 0 { 0 } else { i % (len + 1) };
        match *m {
            Mutation::FlipBit { at, bit } if !b.is_empty() => {
                let i = at % b.len();
                b[i] ^= 1 << bit;
            }
            Mutation::Truncate { at } => b.truncate(pos(at, b.len())),
            Mutation::Insert { at, piece } => {
                let i = pos(at, b.len());
                b.splice(i..i, PIECES[piece].iter().copied());
            }
            Mutation::Delete { at } if !b.is_empty() => {
                b.remove(at % b.len());
            }
            Mutation::ReplaceNumbers { piece } => {
                let mut out = Vec::with_capacity(b.len());
                let mut in_number = false;
                for &c in &b {
                    if c.is_ascii_digit() {
                        if !in_number {
                            out.extend_from_slice(PIECES[piece]);
                        }
                        in_number = true;
                    } else {
                        in_number = false;
                        out.push(c);
                    }
                }
                b = out;
            }
            // A slice repeated in place: long lines, many entries, deep nesting.
            Mutation::Repeat { at, len, times } if !b.is_empty() => {
                let start = at % b.len();
                let end = (start + len).min(b.len());
                let part = b[start..end].to_vec();
                let times = times.min(MAX_INPUT_BYTES / part.len().max(1));
                let mut rep = Vec::with_capacity(part.len() * times);
                for _ in 0..times {
                    rep.extend_from_slice(&part);
                }
                b.splice(start..start, rep);
            }
            _ => {}
        }
    }
    b
}

fn input(seeds: &'static [&'static [u8]]) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => (0..seeds.len(), prop::collection::vec(mutation(), 1..4))
            .prop_map(move |(s, ms)| mutate(seeds[s], &ms)),
        1 => (0..seeds.len(), prop::collection::vec(mutation(), 4..12))
            .prop_map(move |(s, ms)| mutate(seeds[s], &ms)),
        1 => prop::collection::vec(any::<u8>(), 0..256),
    ]
}

/// Runs `parse` on `cases()` inputs from `seeds`; returns (ok, err) counts.
fn campaign(
    name: &str,
    seeds: &'static [&'static [u8]],
    parse: impl FnMut(&[u8]) -> bool,
) -> (usize, usize) {
    let parse = std::cell::RefCell::new(parse);
    let mut runner = TestRunner::new(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let (ok, err) = (std::cell::Cell::new(0usize), std::cell::Cell::new(0usize));
    let started = Instant::now();
    let result = runner.run(&input(seeds), |bytes| {
        LARGEST.store(0, Ordering::Relaxed);
        let t = Instant::now();
        let parsed = (parse.borrow_mut())(&bytes);
        let took = t.elapsed();
        let largest = LARGEST.load(Ordering::Relaxed);
        prop_assert!(
            took < CASE_LIMIT,
            "{name}: {took:?} for {} bytes",
            bytes.len()
        );
        prop_assert!(
            largest <= ALLOCATION_LIMIT_BYTES,
            "{name}: one allocation of {largest} bytes"
        );
        let counter = if parsed { &ok } else { &err };
        counter.set(counter.get() + 1);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
    let (ok, err) = (ok.get(), err.get());
    eprintln!(
        "{name}: {} inputs in {:.1?}: {ok} parsed, {err} refused",
        cases(),
        started.elapsed()
    );
    (ok, err)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A file holding `bytes` in a fresh directory.
fn file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// The files of a small recorded tree: 4 CPUs (2 cores x 2 threads), caches with
/// sizes, 2 NUMA nodes with distances, cpufreq kinds, cpuinfo, a cgroup v2 cpuset.
const SYSFS: &[(&str, &[u8])] = &[
    ("sys/devices/system/cpu/online", b"0-3\n"),
    (
        "sys/devices/system/cpu/cpu0/topology/thread_siblings",
        b"00000003\n",
    ),
    (
        "sys/devices/system/cpu/cpu0/topology/core_siblings",
        b"0000000f\n",
    ),
    ("sys/devices/system/cpu/cpu0/topology/core_id", b"0\n"),
    (
        "sys/devices/system/cpu/cpu0/topology/physical_package_id",
        b"0\n",
    ),
    (
        "sys/devices/system/cpu/cpu0/topology/die_cpus_list",
        b"0-3\n",
    ),
    ("sys/devices/system/cpu/cpu0/cache/index2/level", b"2\n"),
    (
        "sys/devices/system/cpu/cpu0/cache/index2/type",
        b"Unified\n",
    ),
    ("sys/devices/system/cpu/cpu0/cache/index2/size", b"1024K\n"),
    (
        "sys/devices/system/cpu/cpu0/cache/index2/shared_cpu_map",
        b"00000003\n",
    ),
    ("sys/devices/system/cpu/cpu0/cache/index3/level", b"3\n"),
    ("sys/devices/system/cpu/cpu0/cache/index3/size", b"32768K\n"),
    (
        "sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list",
        b"0-3\n",
    ),
    (
        "sys/devices/system/cpu/cpu0/cache/index3/coherency_line_size",
        b"64\n",
    ),
    (
        "sys/devices/system/cpu/cpu0/cpufreq/base_frequency",
        b"1900000\n",
    ),
    ("sys/devices/system/cpu/cpu0/cpu_capacity", b"1024\n"),
    (
        "sys/devices/system/cpu/cpu1/topology/thread_siblings_list",
        b"0-1\n",
    ),
    ("sys/devices/system/cpu/cpu1/topology/core_id", b"0\n"),
    (
        "sys/devices/system/cpu/cpu1/topology/physical_package_id",
        b"0\n",
    ),
    (
        "sys/devices/system/cpu/cpu1/cpufreq/base_frequency",
        b"1900000\n",
    ),
    (
        "sys/devices/system/cpu/cpu2/topology/core_cpus",
        b"0000000c\n",
    ),
    ("sys/devices/system/cpu/cpu2/topology/core_id", b"1\n"),
    (
        "sys/devices/system/cpu/cpu2/topology/package_cpus",
        b"00000000,0000000f\n\0",
    ),
    (
        "sys/devices/system/cpu/cpu2/cpufreq/base_frequency",
        b"1400000\n",
    ),
    (
        "sys/devices/system/cpu/cpu3/topology/core_cpus_list",
        b"2-3\n",
    ),
    ("sys/devices/system/cpu/cpu3/topology/core_id", b"1\n"),
    (
        "sys/devices/system/cpu/cpu3/cpufreq/base_frequency",
        b"1400000\n",
    ),
    ("sys/devices/system/node/node0/cpulist", b"0-1\n"),
    (
        "sys/devices/system/node/node0/meminfo",
        b"Node 0 MemTotal:  16384 kB\n",
    ),
    ("sys/devices/system/node/node0/distance", b"10 20\n"),
    ("sys/devices/system/node/node1/cpumap", b"0c\n"),
    (
        "sys/devices/system/node/node1/meminfo",
        b"Node 1 MemTotal:  16384 kB\n",
    ),
    ("sys/devices/system/node/node1/distance", b"20 10\n"),
    (
        "proc/cpuinfo",
        b"processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 21\nmodel name\t: Fuzz CPU\n",
    ),
    ("proc/meminfo", b"MemTotal: 32768 kB\n"),
    ("proc/mounts", b"cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n"),
    ("proc/self/cgroup", b"0::/fuzz\n"),
    ("sys/fs/cgroup/fuzz/cpuset.cpus.effective", b"0-3\n"),
    ("sys/fs/cgroup/fuzz/cpuset.mems.effective", b"0-1\n"),
];

fn write_tree(root: &Path) {
    for (rel, bytes) in SYSFS {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
}

static SYSFS_SEEDS: std::sync::LazyLock<Vec<&'static [u8]>> =
    std::sync::LazyLock::new(|| SYSFS.iter().map(|(_, b)| *b).collect());

#[test]
fn sysfs_files() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path());
    Source::SysfsRoot(dir.path().into()).load().unwrap();
    let seeds: &'static [&'static [u8]] = SYSFS_SEEDS.as_slice();
    // Each input (grown from any file's seed) replaces the next file of the tree in
    // turn; the tree is read and the file restored.
    let mut which = 0usize;
    campaign("sysfs files", seeds, |bytes| {
        which = (which + 1) % SYSFS.len();
        let (rel, seed) = SYSFS[which];
        let p = dir.path().join(rel);
        std::fs::write(&p, bytes).unwrap();
        let ok = Source::SysfsRoot(dir.path().into()).load().is_ok();
        std::fs::write(&p, seed).unwrap();
        ok
    });
}

#[test]
fn hwloc_xml() {
    static SEEDS: std::sync::LazyLock<Vec<&'static [u8]>> = std::sync::LazyLock::new(|| {
        [
            "2arm-2c",
            "8em64t-2s4c-asymcaches",
            "20em64t-hybrid-1p6c2t+2ca4co1t",
        ]
        .iter()
        .map(|n| {
            let p = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("tests/fixtures/topology/{n}/{n}.hwloc.xml"));
            &*Box::leak(std::fs::read(p).unwrap().into_boxed_slice())
        })
        .collect()
    });
    let dir = tempfile::tempdir().unwrap();
    campaign("hwloc XML", SEEDS.as_slice(), |bytes| {
        let p = file(dir.path(), "t.xml", bytes);
        Source::HwlocXml(p).load().is_ok()
    });
}

#[test]
fn synthetic_specs() {
    const SEEDS: &[&[u8]] = &[
        b"package:2 core:4 pu:2",
        b"package:2 numa:2 l3:1 core:8 pu:2 numbering=smt-last",
        b"package:1 core:2 pu:1 numbering=interleaved",
        b"pu:1",
    ];
    campaign("synthetic specs", SEEDS, |bytes| {
        Source::Synthetic(text(bytes)).load().is_ok()
    });
}

#[test]
fn thread_lists() {
    const SEEDS: &[&[u8]] = &[b"1,2,4", b"1..16:2", b"pow2", b"all", b"1,2..8:2,all"];
    campaign("thread lists", SEEDS, |bytes| {
        scalescope_model::plan::parse_threads(&text(bytes), 16).is_ok()
    });
}

#[test]
fn edge_lists() {
    const SEEDS: &[&[u8]] = &[
        b"# SNAP\n0 1\n1 2\n2 0\n",
        b"0\t1\t0.5\n3 4\n",
        b"% comment\n5 6\n",
    ];
    let dir = tempfile::tempdir().unwrap();
    campaign("edge lists", SEEDS, |bytes| {
        let p = file(dir.path(), "g.el", bytes);
        scalescope_workloads::graph::load::load(&p).is_ok()
    });
}

#[test]
fn matrix_market() {
    const SEEDS: &[&[u8]] = &[
        b"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n1 2\n2 3\n",
        b"%%MatrixMarket matrix coordinate real general\n% c\n4 4 3\n1 2 0.5\n2 3 1\n4 1 2\n",
    ];
    let dir = tempfile::tempdir().unwrap();
    campaign("Matrix Market", SEEDS, |bytes| {
        let p = file(dir.path(), "g.mtx", bytes);
        scalescope_workloads::graph::load::load(&p).is_ok()
    });
}

#[test]
fn tbl_files() {
    const SEEDS: &[&[u8]] = &[
        b"1|155190|7706|1|17|21168.23|0.04|0.02|N|O|1996-03-13|1996-02-12|1996-03-22|DELIVER IN PERSON|TRUCK|egular courts above the|\n\
          1|67310|7311|2|36|45983.16|0.09|0.06|N|O|1996-04-12|1996-02-28|1996-04-20|TAKE BACK RETURN|MAIL|ly final dependencies|\n",
    ];
    let dir = tempfile::tempdir().unwrap();
    campaign(".tbl files", SEEDS, |bytes| {
        let p = file(dir.path(), "lineitem.tbl", bytes);
        scalescope_workloads::tpch::data::read_tbl(&p).is_ok()
    });
}

#[test]
fn results_files() {
    // A real results file, written by a real sweep of `true`.
    static SEED: std::sync::LazyLock<&'static [u8]> = std::sync::LazyLock::new(|| {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("res");
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_scalescope"))
            .args([
                "sweep",
                "--quiet",
                "--threads",
                "1,2",
                "--reps",
                "2",
                "--warmup",
                "0",
            ])
            .args(["--metric", "x=x ([0-9]+)", "--out"])
            .arg(&out)
            .args(["--", "echo", "x 1"])
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        Box::leak(
            std::fs::read(out.join("results.jsonl"))
                .unwrap()
                .into_boxed_slice(),
        )
    });
    static SEEDS: std::sync::LazyLock<[&'static [u8]; 1]> = std::sync::LazyLock::new(|| [*SEED]);
    let dir = tempfile::tempdir().unwrap();
    let (ok, _) = campaign("results files", SEEDS.as_slice(), |bytes| {
        let p = file(dir.path(), "results.jsonl", bytes);
        scalescope_model::store::read_results(&p).is_ok()
    });
    let _ = ok;
}
