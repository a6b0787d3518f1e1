//! The command line as users run it: every test here starts the `scalescope` binary
//! this build made and checks what it prints, writes and refuses. One module per
//! former test file (`tests/cli_graph.rs` is `graph`, `tests/cli_attack/` is
//! `attack`), in one binary rather than eighteen: each binary linked the same
//! dependencies again, and libtest runs one binary's tests side by side but the
//! binaries one after another, so a long test (a killed import, the tour) ran alone
//! (docs/PERFORMANCE.md, "The CI run's time"). One module alone: `cargo test --test
//! cli graph::`.
//!
//! Kept in binaries of their own: `fuzz_inputs` (its counting global allocator would
//! count every other test's allocations), `mpi` and `mpi_cluster` (Slurm and MPI
//! daemons), the lab (QEMU, no libtest harness), and the source rules (`structure`,
//! `no_debug_text`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

mod analyze;
mod attack;
mod docs;
mod docs_runnable;
mod evidence;
mod graph;
mod import;
mod inputs;
mod mem;
mod placement_options;
mod predict;
mod regressions;
mod report_chromium;
mod results_content;
mod study;
mod sweep;
mod sweep_hostile;
mod topo_place;
mod tpch_npb;
