//! scalescope-analysis's integration tests, one module per former test file, in one
//! binary: the generated corpora (`corpus`, `null_corpus`, the held-out sets
//! `held_out_v*`) and the prediction sets, scored as docs/ANALYSIS.md reports them,
//! and analyses of constructed and recorded sweeps (`basis`, `curves`, `evidence`,
//! `nodes`, `published`).
//!
//! One binary rather than eighteen: the generator and the scorer (`tests/support`)
//! are compiled once, at the package's opt-level, instead of once per set, and
//! libtest runs the long corpus tests side by side instead of one binary after
//! another (docs/PERFORMANCE.md, "The CI run's time"). One set alone, with what it
//! prints: `cargo test -p scalescope-analysis --test analysis held_out_v2 --
//! --nocapture` (a name filter; `corpus::` also matches `null_corpus::`, so the
//! corpus alone is `corpus:: -- --skip null_corpus`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

#[path = "../support/generator.rs"]
mod generator;
#[path = "../support/power.rs"]
mod power;
#[path = "../support/scoring.rs"]
mod scoring;

mod basis;
mod corpus;
mod curves;
mod evidence;
mod held_out_v10;
mod held_out_v11;
mod held_out_v12;
mod held_out_v13;
mod held_out_v14;
mod held_out_v15;
mod held_out_v16;
mod held_out_v17;
mod held_out_v2;
mod held_out_v3;
mod held_out_v4;
mod held_out_v5;
mod held_out_v6;
mod held_out_v7;
mod held_out_v8;
mod held_out_v9;
mod nodes;
mod null_corpus;
mod predict;
mod predict_unseen;
mod published;
