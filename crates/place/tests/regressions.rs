//! Inputs that once crashed the placement library (exit 101 or 134 from the CLI), each
//! with the clear error it now gets: the machine, the input, what the error says.
//! `place`, `analyze`, `report` and `sweep --resume` all reach these parsers through
//! `Strategy::from_str` and [`place`], so one fix and one test cover them all.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use scalescope_place::{
    likwid, max_threads, place, MemPolicy, PlaceError, PlaceRequest, Strategy, MAX_THREADS,
};
use scalescope_topo::{Source, Topology};

/// 2 packages x 4 cores x 2 hardware threads: 16 PUs, numbered 0-15.
fn machine() -> Topology {
    Source::Synthetic("package:2 numa:1 core:4 pu:2 numbering=smt-last".into())
        .load()
        .unwrap()
}

fn expression_error(expr: &str) -> String {
    match likwid::resolve(&machine(), expr) {
        Err(e @ PlaceError::BadExpression { .. }) => e.to_string(),
        other => panic!("{expr}: expected a BadExpression error, got {other:?}"),
    }
}

fn oversubscribed(strategy: Strategy, threads: usize) -> PlaceRequest {
    let mut req = PlaceRequest::new(strategy, threads);
    req.oversubscribe = true;
    req
}

#[test]
fn non_ascii_domain_name_is_an_unknown_domain_not_a_byte_slicing_panic() {
    // `scalescope place --cpus 'é:0'` sliced "é" at byte 1, inside the character.
    for expr in [
        "é:0",
        "Sé:0",
        "é0:0",
        "E:é:1",
        "E:Sé:1",
        "é:scatter",
        "0@é:0",
    ] {
        let e = expression_error(expr);
        assert!(e.contains("unknown domain"), "{expr}: {e}");
    }
}

#[test]
fn non_ascii_domain_name_in_a_strategy_read_back_from_results_is_an_error() {
    // analyze, report and --resume re-parse the strategy, then place it.
    let strategy: Strategy = "cpus=é:0".parse().unwrap();
    let e = place(&machine(), &PlaceRequest::new(strategy, 1)).unwrap_err();
    assert!(e.to_string().contains("unknown domain `é`"), "{e}");
}

#[test]
fn expression_count_of_u64_max_is_refused_before_allocating() {
    // Was "capacity overflow" from Vec::with_capacity(count).
    let e = expression_error("E:N:18446744073709551615");
    assert!(
        e.contains("count 18446744073709551615 is more than the 16 CPUs of domain N"),
        "{e}"
    );
}

#[test]
fn expression_count_of_a_trillion_is_refused_before_allocating() {
    // Was an attempt to allocate 4 TB.
    let e = expression_error("E:N:1000000000000");
    assert!(
        e.contains("count 1000000000000 is more than the 16 CPUs of domain N"),
        "{e}"
    );
}

#[test]
fn expression_numbers_past_u64_are_not_positive_integers() {
    let e = expression_error("E:N:99999999999999999999999");
    assert!(e.contains("count `99999999999999999999999` must be a positive integer"));
    let e = expression_error("E:N:+4");
    assert!(e.contains("count `+4` must be a positive integer"), "{e}");
}

#[test]
fn expression_chunk_and_stride_of_u64_max_do_not_overflow() {
    let e = expression_error("E:N:2:1:18446744073709551615");
    assert!(e.contains("only 1 CPUs can be selected"), "{e}");
    // One chunk as wide as the domain: the first 2 CPUs in hardware order.
    assert_eq!(
        likwid::resolve(
            &machine(),
            "E:N:2:18446744073709551615:18446744073709551615"
        )
        .unwrap(),
        vec![0, 8]
    );
}

#[test]
fn domain_index_past_usize_does_not_exist() {
    let e = expression_error("S99999999999999999999999:0");
    assert!(e.contains("unknown domain"), "{e}");
    let e = expression_error("S18446744073709551615:0");
    assert!(e.contains("does not exist (this machine has S0-S1)"), "{e}");
}

#[test]
fn plain_cpu_past_the_machine_does_not_exist() {
    let e = expression_error("4294967295");
    assert!(e.contains("CPU 4294967295 does not exist"), "{e}");
    let e = expression_error("0-999999");
    assert!(
        e.contains("CPU 999999 does not exist (this machine's CPUs are numbered below 16)"),
        "{e}"
    );
}

#[test]
fn repeated_parts_stop_at_the_first_repeat() {
    // Each part is checked as it comes, so a long input cannot build a long list.
    let expr = vec!["N:0-15"; 100_000].join("@");
    let e = expression_error(&expr);
    assert!(e.contains("CPU 0 is named twice"));
    let e = expression_error("S0:0,1-3,2");
    assert!(e.contains("S0: index 2 is named twice"), "{e}");
}

#[test]
fn oversubscribing_a_hundred_billion_threads_is_refused_before_allocating() {
    // `place --threads 100000000000 --oversubscribe` built a Vec of that many sets.
    for strategy in [Strategy::Compact, Strategy::Spread, Strategy::SmtPairs] {
        let e = place(
            &machine(),
            &oversubscribed(strategy.clone(), 100_000_000_000),
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                PlaceError::ThreadsOverLimit {
                    requested: 100_000_000_000,
                    ..
                }
            ),
            "{strategy}: {e:?}"
        );
    }
    let e = place(
        &machine(),
        &oversubscribed(Strategy::Compact, 100_000_000_000),
    )
    .unwrap_err();
    assert_eq!(
        e,
        PlaceError::ThreadsOverLimit {
            requested: 100_000_000_000,
            limit: 1024,
            available: 16
        }
    );
    assert_eq!(
        e.to_string(),
        "100000000000 threads requested, more than the limit of 1024 (64 per usable PU, at most 1048576) for 16 usable PUs"
    );
}

#[test]
fn oversubscribing_usize_max_threads_is_refused() {
    let e = place(&machine(), &oversubscribed(Strategy::Scatter, usize::MAX)).unwrap_err();
    assert!(matches!(e, PlaceError::ThreadsOverLimit { .. }), "{e:?}");
}

#[test]
fn oversubscribing_up_to_the_limit_still_works() {
    let p = place(&machine(), &oversubscribed(Strategy::Compact, 1024)).unwrap();
    assert_eq!(p.threads.len(), 1024);
    let p = place(&machine(), &oversubscribed(Strategy::Spread, 1024)).unwrap();
    assert_eq!(p.threads.len(), 1024);
}

#[test]
fn thread_limit_is_64_per_pu_capped_at_a_million() {
    assert_eq!(max_threads(0), 1);
    assert_eq!(max_threads(16), 1024);
    assert_eq!(max_threads(1 << 20), MAX_THREADS);
    assert_eq!(max_threads(usize::MAX), MAX_THREADS);
}

#[test]
fn too_many_threads_names_no_flag() {
    let e = place(&machine(), &PlaceRequest::new(Strategy::Compact, 17)).unwrap_err();
    let text = e.to_string();
    assert!(!text.contains("--"), "{text}");
    assert!(text.contains("oversubscription is off"), "{text}");
}

#[test]
fn memory_policy_numbers_are_plain_decimals() {
    for s in ["preferred:+1", "bind:4294967296", "bind:0+é", "preferred:١"] {
        let e = s.parse::<MemPolicy>().unwrap_err();
        assert!(e.to_string().contains(&format!("`{s}`")), "{s}: {e}");
    }
}
