//! Fuzzing the placement parsers: likwid-pin expressions, strategy names, memory
//! policies and granularities, from valid seeds mutated the way hostile or careless
//! input is (byte flips, truncation, non-ASCII, huge numbers, repeated parts). Every
//! input must end in a value or a typed error: no panic, no absurd allocation, no
//! hang, and no error that names a command-line flag.
//!
//! A short campaign (256 cases) runs with the normal tests; a long one with
//! `SCALESCOPE_FUZZ_CASES=100000 cargo test -p scalescope-place --test fuzz_parsers`
//! (see docs/RELIABILITY.md, "Placement parsers"). Keep it a debug build: overflow
//! checks are on there, so unchecked arithmetic on input panics instead of wrapping.
//!
//! This binary installs a counting allocator, so it lives apart from the other tests.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::strategy::Strategy as PropStrategy;
use proptest::test_runner::TestRunner;
use scalescope_place::{
    likwid, max_threads, place, render, Granularity, MemPolicy, PlaceRequest, Strategy,
};
use scalescope_topo::{Source, Topology};

/// The largest single allocation any input may cause. The machines below have at
/// most 32 PUs, so a legitimate placement stays far below this.
const ALLOCATION_LIMIT_BYTES: usize = 64 << 20;

/// Repeated parts stop growing an input past this (a command-line argument is at
/// most 128 KiB on Linux; a results-file line is what the sweep wrote).
const MAX_INPUT_BYTES: usize = 4096;

/// The longest one input may take (debug build, a loaded 2-core runner).
const CASE_LIMIT: Duration = Duration::from_secs(5);

/// Remembers the largest allocation request, and refuses (aborts on) any request
/// past 16x the limit instead of letting the OS try to satisfy it.
struct CountingAllocator;

static LARGEST_ALLOCATION_BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged, except that requests past
// the hard limit return null, which `GlobalAlloc` allows (allocation failure).
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST_ALLOCATION_BYTES.fetch_max(layout.size(), Ordering::Relaxed);
        if layout.size() > 16 * ALLOCATION_LIMIT_BYTES {
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
        LARGEST_ALLOCATION_BYTES.fetch_max(new_size, Ordering::Relaxed);
        if new_size > 16 * ALLOCATION_LIMIT_BYTES {
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
        .unwrap_or(256)
}

/// Machines with different shapes: SMT-last numbering, no SMT, one PU, and a
/// recorded 4-package machine whose cgroup forbids some PUs.
fn machines() -> &'static [Topology] {
    static MACHINES: OnceLock<Vec<Topology>> = OnceLock::new();
    MACHINES.get_or_init(|| {
        let recorded = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../../tests/fixtures/topology/32amd64-4s2n4c-cgroup2/32amd64-4s2n4c-cgroup2.hwloc.xml",
        );
        vec![
            Source::Synthetic("package:2 numa:1 core:4 pu:2 numbering=smt-last".into())
                .load()
                .unwrap(),
            Source::Synthetic("package:1 numa:2 core:3 pu:1".into())
                .load()
                .unwrap(),
            Source::Synthetic("core:1".into()).load().unwrap(),
            Source::HwlocXml(recorded).load().unwrap(),
        ]
    })
}

/// Valid (or nearly valid) inputs for every parser, to mutate.
const SEEDS: &[&str] = &[
    "0-3,8",
    "3,0-1",
    "N:0-7",
    "S0:0-3@S1:0-3",
    "M0:0-1",
    "C0:0,2",
    "D0:1",
    "E:N:4",
    "E:S0:4:1:2",
    "E:N:4:2:4",
    "S:scatter",
    "M:scatter",
    "N:scatter",
    "cpus=0-3",
    "cpus=E:S1:2",
    "compact",
    "scatter",
    "cores-first",
    "smt-pairs",
    "spread",
    "first-touch",
    "interleave",
    "local",
    "bind:0+1",
    "preferred:1",
    "thread",
    "core",
];

/// Pieces that broke or could break a parser: non-ASCII, numbers past every integer
/// type, separators, signs, NUL.
const PIECES: &[&str] = &[
    "é",
    "١",
    "\u{0}",
    "\u{10FFFF}",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "1000000000000",
    "4294967295",
    "0",
    "-",
    ":",
    "@",
    ",",
    "+",
    " ",
    "E:",
    "N",
    "S",
    "S0",
    "scatter",
    "cpus=",
    "bind:",
    "preferred:",
];

#[derive(Debug, Clone)]
enum Mutation {
    FlipBit {
        at: usize,
        bit: u8,
    },
    Truncate {
        at: usize,
    },
    Insert {
        at: usize,
        piece: usize,
    },
    Delete {
        at: usize,
    },
    /// Every run of digits becomes this piece (huge numbers in every field).
    ReplaceNumbers {
        piece: usize,
    },
    /// `s@s`: repeated parts.
    Repeat {
        times: usize,
    },
}

fn mutation() -> impl PropStrategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        (any::<usize>(), 0..PIECES.len()).prop_map(|(at, piece)| Mutation::Insert { at, piece }),
        any::<usize>().prop_map(|at| Mutation::Delete { at }),
        (0..PIECES.len()).prop_map(|piece| Mutation::ReplaceNumbers { piece }),
        (2usize..64).prop_map(|times| Mutation::Repeat { times }),
    ]
}

/// Applies mutations to bytes; invalid UTF-8 is replaced, as no `&str` can hold it
/// (the CLI refuses such arguments before any parser sees them).
fn mutate(seed: &str, mutations: &[Mutation]) -> String {
    let mut b = seed.as_bytes().to_vec();
    for m in mutations {
        let at = |i: usize, len: usize| if len == 0 { 0 } else { i % (len + 1) };
        match *m {
            Mutation::FlipBit { at: i, bit } if !b.is_empty() => {
                let i = i % b.len();
                b[i] ^= 1 << bit;
            }
            Mutation::FlipBit { .. } => {}
            Mutation::Truncate { at: i } => b.truncate(at(i, b.len())),
            Mutation::Insert { at: i, piece } => {
                let i = at(i, b.len());
                b.splice(i..i, PIECES[piece].bytes());
            }
            Mutation::Delete { at: i } if !b.is_empty() => {
                b.remove(i % b.len());
            }
            Mutation::Delete { .. } => {}
            Mutation::ReplaceNumbers { piece } => {
                let mut out = Vec::with_capacity(b.len());
                let mut in_number = false;
                for &c in &b {
                    if c.is_ascii_digit() {
                        if !in_number {
                            out.extend_from_slice(PIECES[piece].as_bytes());
                        }
                        in_number = true;
                    } else {
                        in_number = false;
                        out.push(c);
                    }
                }
                b = out;
            }
            Mutation::Repeat { times } => {
                let one = b.clone();
                // Repeats compound; past a few KiB an input only tests the speed of
                // copying it into error messages.
                for _ in 1..times {
                    if b.len() >= MAX_INPUT_BYTES {
                        break;
                    }
                    b.push(b'@');
                    b.extend_from_slice(&one);
                }
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn input() -> impl PropStrategy<Value = String> {
    prop_oneof![
        // Near-valid input reaches placement and rendering, not just the first check.
        3 => (0..SEEDS.len(), prop::collection::vec(mutation(), 0..2))
            .prop_map(|(seed, ms)| mutate(SEEDS[seed], &ms)),
        2 => "(N|S[0-3]|M[0-3]|C[0-3]|D[0-3]):[0-9](-[0-9]{1,2})?(,[0-9]{1,2})?(@(N|S[0-3]|M[0-3]):[0-9](-[0-9])?)?",
        1 => "E:(N|S[0-3]|M[0-3]|C0|D0):[0-9]{1,2}(:[0-9]:[0-9])?(@[0-9]{1,2})?",
        1 => "[0-9]{1,2}(-[0-9]{1,2})?(,[0-9]{1,2}){0,3}",
        6 => (0..SEEDS.len(), prop::collection::vec(mutation(), 0..6))
            .prop_map(|(seed, ms)| mutate(SEEDS[seed], &ms)),
        2 => "[NSMCDE0-9:,@x+é -]{0,40}",
        1 => any::<String>(),
    ]
}

fn threads() -> impl PropStrategy<Value = Option<usize>> {
    prop_oneof![
        Just(None),
        (0usize..70).prop_map(Some),
        any::<usize>().prop_map(Some),
        Just(Some(100_000_000_000)),
    ]
}

/// An error message must not send the user to a flag: the library does not know
/// which command (or flag) the value came from.
fn names_no_flag(input: &str, message: &str) -> Result<(), TestCaseError> {
    if !input.contains("--") {
        prop_assert!(!message.contains("--"), "{input:?}: {message}");
    }
    prop_assert!(!message.is_empty());
    Ok(())
}

fn check_expression(topo: &Topology, expr: &str) -> Result<(), TestCaseError> {
    let resolved = likwid::resolve(topo, expr);
    Tally::count(&tally().expressions, resolved.is_ok());
    match resolved {
        Ok(cpus) => {
            let mut distinct = cpus.clone();
            distinct.sort_unstable();
            distinct.dedup();
            prop_assert_eq!(distinct.len(), cpus.len(), "{:?}", expr);
            prop_assert!(cpus.iter().all(|c| topo.pu(*c).is_some()), "{:?}", expr);
        }
        Err(e) => names_no_flag(expr, &e.to_string())?,
    }
    Ok(())
}

fn check_strategy(
    topo: &Topology,
    text: &str,
    threads: Option<usize>,
    oversubscribe: bool,
) -> Result<(), TestCaseError> {
    let strategy = match text.parse::<Strategy>() {
        Ok(s) => s,
        Err(e) => return names_no_flag(text, &e.to_string()),
    };
    // Results files store strategies by name: the name must read back the same.
    prop_assert_eq!(
        strategy.to_string().parse::<Strategy>().ok(),
        Some(strategy.clone())
    );
    let json = serde_json::to_string(&strategy).unwrap();
    prop_assert_eq!(
        serde_json::from_str::<Strategy>(&json).ok(),
        Some(strategy.clone())
    );
    for granularity in [Granularity::Thread, Granularity::Core] {
        let mut req = PlaceRequest::new(strategy.clone(), 1);
        req.threads = threads;
        req.granularity = granularity;
        req.oversubscribe = oversubscribe;
        let placed = place(topo, &req);
        Tally::count(&tally().placements, placed.is_ok());
        match placed {
            Ok(p) => {
                let usable = topo.usable_pus().count();
                prop_assert!(p.threads.len() <= max_threads(usable), "{:?}", text);
                prop_assert!(p.threads.iter().all(|s| !s.is_empty()));
                prop_assert!(render::renderings(&p, topo).values().all(|r| !r.is_empty()));
            }
            Err(e) => names_no_flag(text, &e.to_string())?,
        }
    }
    Ok(())
}

fn check_mem_policy(topo: &Topology, text: &str) -> Result<(), TestCaseError> {
    let parsed = text.parse::<MemPolicy>();
    Tally::count(&tally().policies, parsed.is_ok());
    match parsed {
        Ok(policy) => {
            prop_assert_eq!(
                policy.to_string().parse::<MemPolicy>().ok(),
                Some(policy.clone())
            );
            if let Err(e) = policy.resolve(topo) {
                names_no_flag(text, &e.to_string())?;
            }
        }
        Err(e) => names_no_flag(text, &e.to_string())?,
    }
    Ok(())
}

/// How the inputs ended, so a campaign shows it reached past the first error.
#[derive(Default)]
struct Tally {
    expressions: [AtomicUsize; 2],
    placements: [AtomicUsize; 2],
    policies: [AtomicUsize; 2],
    largest_allocation_bytes: AtomicUsize,
}

impl Tally {
    fn count(pair: &[AtomicUsize; 2], ok: bool) {
        pair[usize::from(!ok)].fetch_add(1, Ordering::Relaxed);
    }
}

static TALLY: OnceLock<Tally> = OnceLock::new();

fn tally() -> &'static Tally {
    TALLY.get_or_init(Tally::default)
}

fn check_case(
    text: &str,
    threads: Option<usize>,
    oversubscribe: bool,
) -> Result<(), TestCaseError> {
    let started = Instant::now();
    // Per case, so a shrunk failure is the input that allocated, not a later one.
    LARGEST_ALLOCATION_BYTES.store(0, Ordering::Relaxed);
    for topo in machines() {
        check_expression(topo, text)?;
        check_strategy(topo, text, threads, oversubscribe)?;
        check_strategy(topo, &format!("cpus={text}"), threads, oversubscribe)?;
        check_mem_policy(topo, text)?;
    }
    if let Err(e) = text.parse::<Granularity>() {
        names_no_flag(text, &e.to_string())?;
    }
    let largest = LARGEST_ALLOCATION_BYTES.load(Ordering::Relaxed);
    tally()
        .largest_allocation_bytes
        .fetch_max(largest, Ordering::Relaxed);
    prop_assert!(
        largest <= ALLOCATION_LIMIT_BYTES,
        "{:?}: an allocation of {} bytes",
        text,
        largest
    );
    prop_assert!(
        started.elapsed() < CASE_LIMIT,
        "{:?}: took {:?}",
        text,
        started.elapsed()
    );
    Ok(())
}

#[test]
fn place_parsers_never_panic() {
    let cases = cases();
    let mut runner = TestRunner::new(ProptestConfig::with_cases(cases));
    let started = Instant::now();
    let result = runner.run(
        &(input(), threads(), any::<bool>()),
        |(text, threads, oversubscribe)| check_case(&text, threads, oversubscribe),
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    let t = tally();
    let pair = |p: &[AtomicUsize; 2]| (p[0].load(Ordering::Relaxed), p[1].load(Ordering::Relaxed));
    // Counts are per machine (4) and include shrinking; shown with --nocapture.
    eprintln!(
        "{cases} cases in {:.1?}: expressions ok/err {:?}, placements ok/err {:?}, memory policies ok/err {:?}, largest allocation {} bytes",
        started.elapsed(),
        pair(&t.expressions),
        pair(&t.placements),
        pair(&t.policies),
        t.largest_allocation_bytes.load(Ordering::Relaxed),
    );
}

#[test]
fn mutations_reach_the_crashes_they_are_meant_to_find() {
    // The campaign can only find what its mutations can build.
    let flips = [Mutation::Insert { at: 0, piece: 0 }];
    assert_eq!(mutate("S0:0", &flips), "éS0:0");
    let huge = [Mutation::ReplaceNumbers { piece: 4 }];
    assert_eq!(mutate("E:N:4", &huge), "E:N:18446744073709551615");
    assert_eq!(
        mutate("N:0", &[Mutation::Repeat { times: 3 }]),
        "N:0@N:0@N:0"
    );
    assert_eq!(mutate("N:0", &[Mutation::Truncate { at: 2 }]), "N:");
    assert_eq!(
        mutate("0", &[Mutation::FlipBit { at: 0, bit: 7 }]),
        "\u{FFFD}"
    );
}
