//! The built-in workloads a sweep names, by name: each one's settings read from
//! `key=value` parameters by its own settings struct ([`Settings::from_params`],
//! the same definitions that give its command its flags), and the workload built
//! from them ([`Settings::build`]), or its shared input prepared once
//! ([`prepare_inputs`]).

use std::collections::BTreeMap;
use std::time::Instant;

use scalescope_topo::Topology;

use crate::graph::settings::GraphSettings;
use crate::graph::workload::GraphCount;
use crate::mem::settings::StreamSettings;
use crate::npb::{ep::Ep, ft::Ft, is::Is, NpbSettings};
use crate::sync::workload::{SyncBench, SyncSettings};
use crate::tpch::{Tpch, TpchSettings};
use crate::{params, Inputs, Pool, SetupCosts, Workload, WorkloadError};

/// Names a sweep's `--workload` accepts.
pub const AVAILABLE: &str = "stream, ep, is, ft, tpch, graph, sync";

/// One built-in workload's settings, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum Settings {
    Stream(StreamSettings),
    Ep(NpbSettings),
    Is(NpbSettings),
    Ft(NpbSettings),
    Tpch(TpchSettings),
    Graph(GraphSettings),
    Sync(SyncSettings),
}

impl Settings {
    /// The settings of the workload `name` from `key=value` parameters, defaults
    /// where none is given.
    ///
    /// # Errors
    /// [`WorkloadError::Unknown`] for a name not in [`AVAILABLE`];
    /// [`WorkloadError::BadParam`] naming a parameter that is unknown or bad.
    pub fn from_params(
        name: &str,
        p: &BTreeMap<String, String>,
    ) -> Result<Settings, WorkloadError> {
        Ok(match name {
            "stream" => Settings::Stream(params::parse(name, p)?),
            "ep" => Settings::Ep(params::parse(name, p)?),
            "is" => Settings::Is(params::parse(name, p)?),
            "ft" => Settings::Ft(params::parse(name, p)?),
            "tpch" => Settings::Tpch(params::parse(name, p)?),
            "graph" => Settings::Graph(GraphSettings::from_params(p)?),
            "sync" => Settings::Sync(params::parse(name, p)?),
            other => return Err(WorkloadError::Unknown(other.to_string())),
        })
    }

    /// The workload's name, as a sweep gives it.
    pub fn name(&self) -> &'static str {
        match self {
            Settings::Stream(_) => "stream",
            Settings::Ep(_) => "ep",
            Settings::Is(_) => "is",
            Settings::Ft(_) => "ft",
            Settings::Tpch(_) => "tpch",
            Settings::Graph(_) => "graph",
            Settings::Sync(_) => "sync",
        }
    }

    /// Whether building reads the topology (`stream` sizes its arrays from the
    /// last-level cache when no size is given).
    pub fn needs_topology(&self) -> bool {
        matches!(self, Settings::Stream(s) if s.size.is_none())
    }

    /// The workload. `topo` is read only where [`Settings::needs_topology`].
    ///
    /// # Errors
    /// The workload's own ([`WorkloadError::BadParam`] for values no flag could
    /// refuse on its own, such as `induced` on a triangle count).
    pub fn build(&self, topo: Option<&Topology>) -> Result<Box<dyn Workload>, WorkloadError> {
        Ok(match self {
            Settings::Stream(s) => Box::new(crate::stream::Stream::with(s, topo)?),
            Settings::Ep(s) => Box::new(Ep::with(s)?),
            Settings::Is(s) => Box::new(Is::with(s)?),
            Settings::Ft(s) => Box::new(Ft::with(s)?),
            Settings::Tpch(s) => Box::new(Tpch::with(s)),
            Settings::Graph(s) => Box::new(GraphCount::with(s)?),
            Settings::Sync(s) => Box::new(SyncBench::new(s.clone())?),
        })
    }
}

/// Builds a workload by name from `key=value` parameters.
///
/// # Errors
/// As [`Settings::from_params`] and [`Settings::build`].
pub fn build(
    name: &str,
    params: &BTreeMap<String, String>,
    topo: &Topology,
) -> Result<Box<dyn Workload>, WorkloadError> {
    Settings::from_params(name, params)?.build(Some(topo))
}

/// [`build`] on this machine, discovering its topology (`topo`) only where the
/// workload reads it: a sweep's run of any other skips that walk of sysfs (about
/// 1 ms of every run).
///
/// # Errors
/// As [`build`], or `topo`'s.
pub fn build_here<E: From<WorkloadError>>(
    name: &str,
    params: &BTreeMap<String, String>,
    topo: impl FnOnce() -> Result<Topology, E>,
) -> Result<Box<dyn Workload>, E> {
    let settings = Settings::from_params(name, params)?;
    if settings.needs_topology() {
        Ok(settings.build(Some(&topo()?))?)
    } else {
        Ok(settings.build(None)?)
    }
}

/// What a sweep's preparation of its shared input cost, and the token of the cache
/// file it checked in full, for its runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prepared {
    pub setup: SetupCosts,
    pub verified: Option<String>,
}

/// Prepares the shared input of the workload `name` once (a sweep does this before
/// its runs): the cache file and its answers. Returns what was prepared, or `None`
/// for a workload whose runs share nothing.
///
/// # Errors
/// A workload that does not build, or whatever its `prepare` reports.
pub fn prepare_inputs(
    name: &str,
    params: &BTreeMap<String, String>,
    topo: &Topology,
    inputs: &Inputs,
    pool: &Pool,
) -> Result<Option<Prepared>, WorkloadError> {
    let mut workload = build(name, params, topo)?;
    workload.use_inputs(inputs);
    if inputs.cache.is_none() || !workload.shares_inputs() {
        return Ok(None);
    }
    inputs.create_dir()?;
    let t = Instant::now();
    workload.prepare(pool)?;
    Ok(Some(Prepared {
        setup: SetupCosts {
            prepare_secs: t.elapsed().as_secs_f64(),
            ..workload.setup()
        },
        verified: workload.verified_input(),
    }))
}
