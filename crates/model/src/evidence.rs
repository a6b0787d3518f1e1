//! Evidence recorded beside a run: what the sampler saw over the run's life. The
//! per-run totals ([`RunEvidence`]) travel in the run record of `results.jsonl`; the
//! time series ([`Series`]) go to a versioned file of their own beside it
//! (`series/<run>.json`), named by [`RunEvidence::series_file`].
//!
//! Every measurement that could not be taken says why ([`Measured::Unavailable`]);
//! nothing here is ever estimated in place of a reading.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use scalescope_topo::CpuSet;

/// Version of the series file format (docs/json.md). Bump on incompatible changes.
pub const SERIES_SCHEMA_VERSION: u32 = 1;
/// The `schema` string of a series file.
pub const SERIES_SCHEMA: &str = "scalescope-series";
/// The folder of series files inside a results directory.
pub const SERIES_DIR: &str = "series";

/// A measurement, or the reason it could not be taken on this machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", content = "value", rename_all = "lowercase")]
pub enum Measured<T> {
    Measured(T),
    /// Why: which source was tried and what stopped it.
    Unavailable(String),
}

impl<T> Measured<T> {
    /// The measurement, if there is one.
    pub fn value(&self) -> Option<&T> {
        match self {
            Measured::Measured(v) => Some(v),
            Measured::Unavailable(_) => None,
        }
    }

    /// Why there is no measurement, if there is none.
    pub fn why(&self) -> Option<&str> {
        match self {
            Measured::Measured(_) => None,
            Measured::Unavailable(why) => Some(why),
        }
    }
}

/// What the sampler cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct SamplerCost {
    /// CPU time the sampling thread spent reading and recording.
    pub cpu_secs: f64,
    /// `cpu_secs` over the run's wall time (one CPU's worth; goal: under 0.01).
    pub fraction_of_wall: f64,
}

/// CPU utilisation over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuEvidence {
    /// The CPUs the run may use.
    pub cpus: CpuSet,
    /// Busy share of those CPUs over the run, whoever used them (`/proc/stat`), 0..1.
    pub busy_mean: f64,
    /// Busy share of each CPU (`/proc/stat`), 0..1.
    pub busy_per_cpu: BTreeMap<u32, f64>,
    /// CPU time of the run's own threads over (wall time x CPUs), 0..1.
    pub run_share_mean: Option<f64>,
    /// Share of those CPUs' time the hypervisor gave to others while they had
    /// work (`steal` in `/proc/stat`), 0..1; 0 on bare metal; absent in results
    /// written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_share: Option<f64>,
}

/// One thread of the run over its observed life.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadEvidence {
    pub pid: u32,
    pub tid: u32,
    pub comm: String,
    /// Every CPU it was seen on.
    pub cpus_seen: CpuSet,
    /// Samples in which it was on another CPU than in the sample before.
    pub migrations: usize,
    /// User and system time accumulated while observed (`/proc/PID/task/TID/stat`).
    pub user_secs: f64,
    pub sys_secs: f64,
    /// Seconds from the run's start to its first and last sighting.
    pub first_seen_secs: f64,
    pub last_seen_secs: f64,
    /// CPU time over the time it was observed alive, 0..1 (None: seen once).
    pub busy: Option<f64>,
    /// Samples in which it was running (`R`) while another running thread of the run
    /// was on the same CPU.
    pub shared_cpu_samples: usize,
    pub samples: usize,
}

/// Where the run's resident memory lay (`/proc/PID/numa_maps`, summed over the
/// run's processes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PagesEvidence {
    /// Resident bytes per NUMA node at the sample with the most resident bytes.
    pub peak_bytes_per_node: BTreeMap<u32, u64>,
    /// Resident bytes per NUMA node at the last sample.
    pub last_bytes_per_node: BTreeMap<u32, u64>,
    pub samples: usize,
}

/// The kernel's per-node allocation counters (`/sys/devices/system/node/nodeN/numastat`),
/// in pages. System-wide: other processes' allocations are counted too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct NumaCounters {
    pub numa_hit: u64,
    pub numa_miss: u64,
    pub numa_foreign: u64,
    pub interleave_hit: u64,
    pub local_node: u64,
    pub other_node: u64,
}

impl NumaCounters {
    /// `self - earlier`, each counter saturating at zero (a counter reset reads as 0).
    pub fn since(&self, earlier: &NumaCounters) -> NumaCounters {
        NumaCounters {
            numa_hit: self.numa_hit.saturating_sub(earlier.numa_hit),
            numa_miss: self.numa_miss.saturating_sub(earlier.numa_miss),
            numa_foreign: self.numa_foreign.saturating_sub(earlier.numa_foreign),
            interleave_hit: self.interleave_hit.saturating_sub(earlier.interleave_hit),
            local_node: self.local_node.saturating_sub(earlier.local_node),
            other_node: self.other_node.saturating_sub(earlier.other_node),
        }
    }
}

/// Memory traffic through one monitoring domain (an L3 domain for resctrl, a
/// socket's memory controllers for uncore counters).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainTraffic {
    /// The domain's id (resctrl `mon_L3_NN`, or the package of the uncore PMU's CPU).
    pub domain: u32,
    pub total_bytes: u64,
    /// Local and remote (total - local) bytes, where the source splits them.
    pub local_bytes: Option<u64>,
    pub remote_bytes: Option<u64>,
    pub mean_bytes_per_sec: f64,
    pub peak_bytes_per_sec: f64,
}

/// Memory bandwidth over the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandwidthEvidence {
    /// `resctrl-mbm`, `perf-uncore-imc` or `perf-amd-umc`.
    pub source: String,
    /// What the counters cover: the run's tasks (resctrl) or the whole socket (uncore).
    pub scope: String,
    pub domains: Vec<DomainTraffic>,
    /// Bytes that crossed between nodes, where the source can tell (resctrl: the sum
    /// of total - local).
    pub cross_node_bytes: Option<u64>,
}

/// One per-run hardware event count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PmuCount {
    /// `llc-misses`, `remote-dram` (node-load-misses), ...
    pub name: String,
    pub count: Measured<u64>,
}

/// Everything sampled over one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunEvidence {
    pub interval_ms: f64,
    pub samples: usize,
    /// The run's series file, relative to the results directory.
    pub series_file: Option<String>,
    pub sampler: SamplerCost,
    pub cpu: Measured<CpuEvidence>,
    /// At most [`MAX_THREADS_KEPT`] threads, busiest first.
    pub threads: Vec<ThreadEvidence>,
    pub pages: Measured<PagesEvidence>,
    /// Counter deltas per node over the run.
    pub numastat: Measured<BTreeMap<u32, NumaCounters>>,
    pub bandwidth: Measured<BandwidthEvidence>,
    pub pmu: Vec<PmuCount>,
}

/// Threads kept per run in the record (the series keeps every sample's threads).
pub const MAX_THREADS_KEPT: usize = 256;

impl RunEvidence {
    /// Resident bytes per node at the peak, if placement was read.
    pub fn peak_bytes_per_node(&self) -> Option<&BTreeMap<u32, u64>> {
        self.pages.value().map(|p| &p.peak_bytes_per_node)
    }

    /// Pages allocated off their preferred node during the run (numastat
    /// `other_node`, summed over nodes).
    pub fn other_node_pages(&self) -> Option<u64> {
        self.numastat
            .value()
            .map(|m| m.values().map(|c| c.other_node).sum())
    }
}

/// Reads a run record's `evidence` through a JSON value: a run record is read
/// through serde's buffered form (it flattens its point and sits in a tagged
/// record), which cannot turn the string keys of JSON objects back into the CPU
/// and node numbers these maps use; `serde_json` can.
///
/// # Errors
/// The field is not a valid evidence object.
pub fn deserialize_evidence<'de, D>(d: D) -> Result<Option<Box<RunEvidence>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let v: Option<serde_json::Value> = Option::deserialize(d)?;
    v.filter(|v| !v.is_null())
        .map(|v| serde_json::from_value(v).map(Box::new))
        .transpose()
        .map_err(serde::de::Error::custom)
}

/// What the sampler saw on one node of a launched run: a sampler started on each
/// node of the run's hosts through the same launcher, from before the run started
/// until after it ended, following the run's processes there (found by the
/// `SCALESCOPE_RUN` mark in their environment). Its series file is named in the
/// evidence, as a run's own is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeEvidence {
    pub host: String,
    pub evidence: Measured<RunEvidence>,
}

/// The `kind` of the line a node's sampler prints when it is sampling.
pub const NODE_READY_KIND: &str = "scalescope.node-sampler-ready";
/// The `kind` of the line a node's sampler prints last, with what it saw.
pub const NODE_SAMPLE_KIND: &str = "scalescope.node-evidence";
/// Version of the node sampler's lines (docs/json.md).
pub const NODE_SAMPLE_SCHEMA_VERSION: u32 = 1;

/// What `scalescope __node-sampler` prints last: the node, its totals and its
/// series (written to a file beside the results by the sweep that reads it), as
/// numbered parts whose lines take at most [`NODE_PART_BYTES`] each
/// ([`NodeSample::lines`]), each line written whole in one write(2) under
/// PIPE_BUF: launchers relay what they read from each rank as it comes and
/// interleave the pieces of different nodes' long lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeSample {
    pub kind: String,
    pub schema_version: u32,
    pub host: String,
    #[serde(deserialize_with = "deserialize_boxed")]
    pub evidence: Box<RunEvidence>,
    pub series: Series,
}

fn deserialize_boxed<'de, D>(d: D) -> Result<Box<RunEvidence>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let v = serde_json::Value::deserialize(d)?;
    serde_json::from_value(v)
        .map(Box::new)
        .map_err(serde::de::Error::custom)
}

/// The `kind` of one part of a node's sample.
pub const NODE_PART_KIND: &str = "scalescope.node-evidence-part";
/// The most bytes one part's line may take: srun relays a rank's output in
/// messages of at most 1024 bytes, and a longer line reaches it cut, with other
/// nodes' pieces between.
pub const NODE_PART_BYTES: usize = 900;

/// One line of a node's sample: part `part` of `parts` of its JSON text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodePart {
    pub kind: String,
    pub host: String,
    pub part: usize,
    pub parts: usize,
    pub text: String,
}

impl NodeSample {
    /// The sample as the lines the node sampler prints.
    ///
    /// # Errors
    /// The sample cannot be written as JSON.
    pub fn lines(&self) -> serde_json::Result<Vec<String>> {
        let text = serde_json::to_string(self)?;
        // Room for the part's own fields; each character counted as escaped.
        let room = NODE_PART_BYTES
            .saturating_sub(120 + 2 * self.host.len())
            .max(64);
        let mut pieces: Vec<String> = vec![String::new()];
        let mut used = 0;
        for c in text.chars() {
            let n = match c {
                '"' | '\\' => 2,
                c if (c as u32) < 0x20 => 6,
                c => c.len_utf8(),
            };
            if used + n > room {
                pieces.push(String::new());
                used = 0;
            }
            used += n;
            if let Some(p) = pieces.last_mut() {
                p.push(c);
            }
        }
        let parts = pieces.len();
        pieces
            .into_iter()
            .enumerate()
            .map(|(part, text)| {
                serde_json::to_string(&NodePart {
                    kind: NODE_PART_KIND.into(),
                    host: self.host.clone(),
                    part,
                    parts,
                    text,
                })
            })
            .collect()
    }
}

/// The node samples in a launcher's output: each node's parts put back together
/// (other lines are ignored; a node with a part missing or unreadable is left
/// out).
pub fn node_samples_in(output: &str) -> Vec<NodeSample> {
    let mut by_host: BTreeMap<String, Vec<NodePart>> = BTreeMap::new();
    for part in output
        .lines()
        .filter(|l| l.contains(NODE_PART_KIND))
        .filter_map(|l| serde_json::from_str::<NodePart>(l.trim()).ok())
        .filter(|p| p.kind == NODE_PART_KIND)
    {
        by_host.entry(part.host.clone()).or_default().push(part);
    }
    by_host
        .into_values()
        .filter_map(|mut parts| {
            parts.sort_by_key(|p| p.part);
            parts.dedup_by_key(|p| p.part);
            let whole = parts.len() == parts.first()?.parts
                && parts.iter().enumerate().all(|(i, p)| p.part == i);
            let text: String = parts.iter().map(|p| p.text.as_str()).collect();
            whole.then(|| serde_json::from_str::<NodeSample>(&text).ok())?
        })
        .filter(|s| s.kind == NODE_SAMPLE_KIND)
        .collect()
}

/// Reads a run record's `node_evidence` through a JSON value, as
/// [`deserialize_evidence`] does for `evidence`.
///
/// # Errors
/// The field is not a list of node evidence.
pub fn deserialize_node_evidence<'de, D>(d: D) -> Result<Vec<NodeEvidence>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let v: Option<serde_json::Value> = Option::deserialize(d)?;
    v.filter(|v| !v.is_null())
        .map(serde_json::from_value)
        .transpose()
        .map(Option::unwrap_or_default)
        .map_err(serde::de::Error::custom)
}

/// One thread in one sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadSample {
    pub tid: u32,
    pub cpu: Option<u32>,
    /// Cumulative user and system seconds.
    pub user_secs: f64,
    pub sys_secs: f64,
}

/// Bandwidth of one domain over one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainRate {
    pub domain: u32,
    pub bytes_per_sec: f64,
    pub local_bytes_per_sec: Option<f64>,
}

/// One sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the run started.
    pub t: f64,
    /// Busy share of each of the run's CPUs since the previous sample, 0..1.
    pub cpu_busy: BTreeMap<u32, f64>,
    pub threads: Vec<ThreadSample>,
    /// Resident bytes per node (absent when numa_maps was not read this sample).
    pub bytes_per_node: Option<BTreeMap<u32, u64>>,
    /// numastat counters per node since the run started.
    pub numastat: Option<BTreeMap<u32, NumaCounters>>,
    pub bandwidth: Vec<DomainRate>,
}

/// The series file of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub schema: String,
    pub schema_version: u32,
    pub interval_ms: f64,
    pub cpus: CpuSet,
    /// The bandwidth source's name, or why there is none.
    pub bandwidth_source: Measured<String>,
    pub samples: Vec<Sample>,
}

impl Series {
    /// An empty series in the current format.
    pub fn new(interval_ms: f64, cpus: CpuSet, bandwidth_source: Measured<String>) -> Series {
        Series {
            schema: SERIES_SCHEMA.into(),
            schema_version: SERIES_SCHEMA_VERSION,
            interval_ms,
            cpus,
            bandwidth_source,
            samples: Vec::new(),
        }
    }
}

/// Why a series file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SeriesError {
    /// The cause is part of the message and not a `source`, so that an error
    /// chain prints it once.
    #[error("{path}: {cause}")]
    Io { path: String, cause: std::io::Error },
    #[error("{path}: {detail}")]
    Malformed { path: String, detail: String },
    /// Not a file that may be read (outside the directory, a link, a FIFO, too large).
    #[error("{0}")]
    File(String),
}

/// Every series file the runs name, from the results directory `dir`: the series
/// by name, and a problem for each missing or unreadable file (its run keeps the
/// totals in its record and has no series).
pub fn read_all_series(
    dir: &std::path::Path,
    records: &[crate::store::RunRecord],
) -> (std::collections::BTreeMap<String, Series>, Vec<String>) {
    let mut series = std::collections::BTreeMap::new();
    let mut problems = Vec::new();
    for r in records {
        let Some(name) = r.evidence.as_ref().and_then(|e| e.series_file.as_ref()) else {
            continue;
        };
        match read_series(dir, name) {
            Ok(s) => {
                series.insert(name.clone(), s);
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    (series, problems)
}

/// Reads and checks the series file `name`, a path a results file names,
/// confined to the results directory `dir`: plain names only, no link followed,
/// a regular file of bounded size (so `../../etc/shadow`, a FIFO or `/dev/zero`
/// named there is an error, never opened or waited on).
///
/// # Errors
/// I/O errors, a path leaving the directory, malformed JSON or an unknown schema,
/// naming the file.
pub fn read_series(dir: &std::path::Path, name: &str) -> Result<Series, SeriesError> {
    use scalescope_files::{FileError, Kind, OutDir};
    let path = dir.join(name);
    let shown = scalescope_files::excerpt::escaped(path.as_os_str().as_encoded_bytes(), 200);
    let malformed = |e: FileError| match e {
        FileError::Io { cause, .. } => SeriesError::Io {
            path: shown.clone(),
            cause,
        },
        e => SeriesError::File(e.to_string()),
    };
    let text = OutDir::open(dir)
        .and_then(|d| d.open_input(name, Kind::SERIES))
        .and_then(|input| input.read_text())
        .map_err(malformed)?;
    let name = shown.clone();
    let series: Series = serde_json::from_str(&text).map_err(|e| SeriesError::Malformed {
        path: name.clone(),
        detail: e.to_string(),
    })?;
    if series.schema != SERIES_SCHEMA || series.schema_version > SERIES_SCHEMA_VERSION {
        return Err(SeriesError::Malformed {
            path: name,
            detail: format!(
                "schema {} version {} (this scalescope reads {SERIES_SCHEMA} up to {SERIES_SCHEMA_VERSION})",
                series.schema, series.schema_version
            ),
        });
    }
    Ok(series)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_round_trips_with_its_reason() {
        let m: Measured<u64> = Measured::Unavailable("no PMU".into());
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(text, r#"{"state":"unavailable","value":"no PMU"}"#);
        let back: Measured<u64> = serde_json::from_str(&text).unwrap();
        assert_eq!(back.why(), Some("no PMU"));
        let c = NumaCounters {
            other_node: 5,
            ..Default::default()
        };
        assert_eq!(
            c.since(&NumaCounters {
                other_node: 7,
                ..Default::default()
            })
            .other_node,
            0
        );
    }

    #[test]
    fn a_node_sample_survives_being_cut_into_interleaved_parts() {
        let evidence: RunEvidence = serde_json::from_value(serde_json::json!({
            "interval_ms": 100.0, "samples": 1, "series_file": null,
            "sampler": {"cpu_secs": 0.0, "fraction_of_wall": 0.0},
            "cpu": {"state": "unavailable", "value": "x"}, "threads": [],
            "pages": {"state": "unavailable", "value": "x"},
            "numastat": {"state": "unavailable", "value": "x"},
            "bandwidth": {"state": "unavailable", "value": "x"}, "pmu": []
        }))
        .unwrap();
        let sample = |host: &str, samples: usize| {
            let mut series = Series::new(100.0, CpuSet::new(), Measured::Unavailable("x".into()));
            series.samples = (0..samples)
                .map(|i| Sample {
                    t: i as f64,
                    cpu_busy: [(0u32, 0.5), (1, 1.0)].into(),
                    threads: vec![],
                    bytes_per_node: None,
                    numastat: None,
                    bandwidth: vec![],
                })
                .collect();
            NodeSample {
                kind: NODE_SAMPLE_KIND.into(),
                schema_version: NODE_SAMPLE_SCHEMA_VERSION,
                host: host.into(),
                evidence: Box::new(evidence.clone()),
                series,
            }
        };
        let (a, b) = (sample("node1", 300), sample("node2", 200));
        let (la, lb) = (a.lines().unwrap(), b.lines().unwrap());
        assert!(la.len() > 3 && la.iter().all(|l| l.len() <= NODE_PART_BYTES));
        // The launcher interleaves the nodes' lines, among its own.
        let mut out = vec!["srun: something".to_string()];
        for i in 0..la.len().max(lb.len()) {
            out.extend(lb.get(i).cloned());
            out.extend(la.get(i).cloned());
        }
        let got = node_samples_in(&out.join("\n"));
        assert_eq!(got, [a, b.clone()]);
        // A node with a part lost is left out.
        let cut: Vec<String> = lb[1..].to_vec();
        assert!(node_samples_in(&cut.join("\n")).is_empty());
    }

    #[test]
    fn a_series_of_an_unknown_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        let mut s = Series::new(100.0, CpuSet::new(), Measured::Measured("x".into()));
        s.schema_version = 99;
        std::fs::write(&path, serde_json::to_string(&s).unwrap()).unwrap();
        let err = read_series(dir.path(), "s.json").unwrap_err().to_string();
        assert!(err.contains("version 99"), "{err}");
    }
}
