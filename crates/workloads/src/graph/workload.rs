//! Graph kernels as a workload: the graph is generated or loaded and built by the
//! pinned workers (so its pages sit where they are read), the kernel (a subgraph
//! count, BFS or PageRank) is timed, and an independent check verifies it: the
//! slower counter ([`super::count::reference_count`]) for counts, the parent tree
//! for BFS, a serial PageRank for PageRank. `scalescope graph` and a sweep both run
//! this, so they give the same verdict.

use std::time::Instant;

use scalescope_model::detail::{AbortCounts, Detail, GraphDetail, GraphKernelDetail};

use super::count::{count, reference_count, Pattern};
use super::pagerank::{Ranks, SplitLists, Sync};
use super::renumber::Order;
use super::settings::GraphSettings;
use super::Graph;
use crate::inputs::{Answer, AnswerBook, Inputs};
use crate::pool::Pool;
use crate::{Figure, SetupCosts, Verification, Workload, WorkloadError};
use scalescope_model::setting::Setting;

/// The independent counter's work grows with the sum of squared degrees (it filters
/// whole neighbour lists); past this many steps (about 10 s on a 2020s core) a count
/// is reported unverified instead of waiting on its check. Kronecker scale 15 is
/// under it, scale 16 over it.
pub const REFERENCE_MAX_WORK: u64 = 500_000_000;

/// PageRank's default stopping tolerance (GAP's): sum of absolute score changes.
pub const DEFAULT_TOLERANCE: f64 = 1e-4;

/// Which graph kernel runs, with its settings.
#[derive(Debug, Clone, PartialEq)]
pub enum GraphKernel {
    /// Exact count of a pattern, non-induced or vertex-induced.
    Count { pattern: Pattern, induced: bool },
    /// Direction-optimizing BFS from `source` (default: the highest-degree vertex),
    /// on the graph renumbered by degree where `renumber`.
    Bfs { source: Option<u32>, renumber: bool },
    /// PageRank with a synchronisation mechanism and `batch` updates per critical
    /// section, until the scores change by less than `tolerance`.
    PageRank {
        sync: Sync,
        batch: usize,
        tolerance: f64,
    },
}

/// One graph kernel on one graph.
pub struct GraphCount {
    source: String,
    kernel: GraphKernel,
    /// Skip the memory estimate's refusal (`force=true`).
    force: bool,
    graph: Option<Graph>,
    /// The graph renumbered by degree, for BFS.
    relabelled: Option<super::Relabelled>,
    /// Pull PageRank's renumbering and its lists, made from the original lists
    /// without a renumbered CSR.
    pull: Option<(Order, SplitLists)>,
    /// The seconds renumbering took (once per prepared input, outside the timed
    /// kernel).
    relabel_seconds: Option<f64>,
    /// The kernel's copies were dropped after the last trial ([`Workload::release`]):
    /// nothing runs until the next `prepare`.
    released: bool,
    build_seconds: f64,
    count: u64,
    seconds: f64,
    bfs: Option<(u32, Vec<u32>)>,
    /// The last search's steps.
    bfs_steps: Vec<scalescope_model::detail::BfsStep>,
    /// The search's arrays, kept for the next trial on this input.
    bfs_arrays: super::bfs_arrays::Arrays,
    ranks: Option<Ranks>,
    inputs: Inputs,
    setup: SetupCosts,
    /// The cache file this run read and its fingerprint.
    cached: Option<(std::path::PathBuf, String)>,
    /// The independent answer, computed once per cached input.
    answer: Option<Answer>,
    /// Where no cached input holds it, the independent answer this process's
    /// first check computed: its later trials' checks compare with it.
    reference: std::sync::OnceLock<Answer>,
    /// The token of the cache file checked in full (or written) by this prepare.
    verified: Option<String>,
}

fn bad(key: &str, detail: String) -> WorkloadError {
    WorkloadError::BadParam {
        setting: Setting::param(key),
        detail,
    }
}

impl GraphCount {
    /// The kernel on the graph `source` names: `kron:SCALE`, `uniform:SCALE`, an
    /// edge-list file (SNAP, `.el`, `.mtx`) or a `.csr` cache.
    ///
    /// # Errors
    /// [`WorkloadError::BadParam`] naming the setting: `induced` on a pattern it does
    /// not change, `batch` 0, `tolerance` not positive.
    pub fn new(source: &str, kernel: GraphKernel) -> Result<GraphCount, WorkloadError> {
        match &kernel {
            GraphKernel::Count {
                pattern: Pattern::Triangle | Pattern::K4,
                induced: true,
            } => {
                return Err(bad(
                    "induced",
                    "changes only c4 and diamond (triangles and 4-cliques are induced already)"
                        .into(),
                ))
            }
            GraphKernel::PageRank { batch: 0, .. } => {
                return Err(bad("batch", "must be at least 1".into()))
            }
            GraphKernel::PageRank { tolerance, .. }
                if !(tolerance.is_finite() && *tolerance > 0.0) =>
            {
                return Err(bad("tolerance", format!("{tolerance} is not positive")))
            }
            _ => {}
        }
        Ok(GraphCount {
            source: source.to_string(),
            kernel,
            force: false,
            graph: None,
            relabelled: None,
            pull: None,
            relabel_seconds: None,
            released: false,
            build_seconds: 0.0,
            count: 0,
            seconds: 0.0,
            bfs: None,
            bfs_steps: Vec::new(),
            bfs_arrays: Default::default(),
            ranks: None,
            inputs: Inputs::default(),
            setup: SetupCosts::default(),
            cached: None,
            answer: None,
            reference: std::sync::OnceLock::new(),
            verified: None,
        })
    }

    /// The kernel its settings describe, on the graph they name.
    ///
    /// # Errors
    /// As [`GraphCount::new`].
    pub fn with(settings: &GraphSettings) -> Result<GraphCount, WorkloadError> {
        let kernel = match settings {
            GraphSettings::Count(s) => GraphKernel::Count {
                pattern: s.pattern,
                induced: s.induced,
            },
            GraphSettings::Bfs(s) => GraphKernel::Bfs {
                source: s.source,
                renumber: s.renumber,
            },
            GraphSettings::Pr(s) => GraphKernel::PageRank {
                sync: s.sync.clone(),
                batch: s.batch.usize(),
                tolerance: s.tolerance.get(),
            },
        };
        let input = settings.input();
        Ok(GraphCount::new(input.graph.as_str(), kernel)?.forced(input.force))
    }

    /// Builds the graph even when its memory estimate exceeds what is available.
    #[must_use]
    pub fn forced(mut self, force: bool) -> GraphCount {
        self.force = force;
        self
    }

    /// The graph, once prepared.
    pub fn graph(&self) -> Option<&Graph> {
        self.graph.as_ref()
    }

    /// Checks the BFS source against the graph: the highest-degree vertex when none
    /// was given.
    fn bfs_source(&self, g: &Graph) -> Result<Option<u32>, WorkloadError> {
        let GraphKernel::Bfs { source, .. } = self.kernel else {
            return Ok(None);
        };
        if g.vertices() == 0 {
            return Err(bad(
                "graph",
                format!("`{}`: the graph has no vertices", self.source),
            ));
        }
        match source {
            Some(s) if (s as usize) < g.vertices() => Ok(Some(s)),
            Some(s) => Err(bad(
                "source",
                format!("{s}: the graph has vertices 0-{}", g.vertices() - 1),
            )),
            None => Ok((0..g.vertices() as u32).max_by_key(|&v| g.degree(v))),
        }
    }

    fn verify_count(&self, g: &Graph, pattern: Pattern, induced: bool) -> Verification {
        let answer = match &self.answer {
            Some(a) => a.clone(),
            None => self
                .reference
                .get_or_init(|| reference_answer(g, pattern, induced))
                .clone(),
        };
        match answer {
            Answer::Known(r) => Verification::check(
                r.as_u64() == Some(self.count),
                format!("count {} against the independent counter's {r}", self.count),
            ),
            Answer::Unavailable(why) => Verification::Unavailable(why),
        }
    }

    /// The cache key of the input: the graph format and the source, for a file its
    /// full path, size and modification time (so an edited file is read again).
    fn cache_key(&self) -> Option<String> {
        let v = super::cache::VERSION;
        if self.source.starts_with("kron:") || self.source.starts_with("uniform:") {
            return Some(format!("graph v{v} {}", self.source));
        }
        // A `.csr` the user names is keyed like any file: a sweep checks it once,
        // keeps its own copy beside its results and maps that in every run.
        let path = std::fs::canonicalize(&self.source).ok()?;
        let meta = std::fs::metadata(&path).ok()?;
        let mtime = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        Some(format!(
            "graph v{v} {} {} {}",
            path.display(),
            meta.len(),
            mtime.as_nanos()
        ))
    }

    /// The graph from the cache file `path`, or built and written there when the
    /// file is missing, stale or corrupt (never used then).
    fn cached_graph(
        &mut self,
        path: &std::path::Path,
        pool: &Pool,
    ) -> Result<Graph, WorkloadError> {
        let shown = path.display();
        let token = self.inputs.verified.as_deref();
        let g = match super::cache::load_trusting(path, pool, token) {
            Ok((g, loaded)) => {
                self.setup.input_check = Some(loaded.check.to_string());
                self.verified = loaded.token;
                self.setup.first_touch_secs = loaded.first_touch_secs;
                self.setup.load_secs = Some(loaded.load_secs);
                self.setup.input_bytes = Some(loaded.bytes);
                self.setup.input = format!("cache {shown}");
                self.cached = Some((path.to_path_buf(), loaded.fingerprint));
                return Ok(g);
            }
            Err(e) => {
                let why = match path.exists() {
                    true => format!("rebuilt and cached {shown} (the cache was refused: {e})"),
                    false => format!("built and cached {shown}"),
                };
                let t = Instant::now();
                self.inputs.create_dir()?;
                let g = build_graph(&self.source, self.force, pool)?;
                super::cache::save(&g, path, &self.source)?;
                self.setup.build_secs = Some(t.elapsed().as_secs_f64());
                self.setup.input = why;
                g
            }
        };
        let blob = crate::blob::Blob::open(path, b"SCALESCOPE-CSR\0\0", &[super::cache::VERSION])?;
        self.setup.input_bytes = Some((g.offsets.len() * 8 + g.neighbors.len() * 4) as u64);
        self.cached = Some((path.to_path_buf(), blob.fingerprint()));
        // Written from the graph in memory just now: its blocks are what was built.
        self.verified = Some(blob.token());
        Ok(g)
    }

    /// Renumbers the graph by degree for the kernels that run on it (BFS unless
    /// told not to, pull PageRank), reading the original lists block by block; then
    /// the original's pages are released (a mapped `.csr`: the checks after the
    /// trials read it again from the page cache; a graph built in memory stays).
    fn renumber(&mut self, g: &Graph, pool: &Pool) {
        (self.relabelled, self.pull, self.relabel_seconds) = (None, None, None);
        self.released = false;
        let t = Instant::now();
        match self.kernel {
            GraphKernel::Bfs { renumber: true, .. } => {
                self.relabelled = Some(super::Relabelled::new(g, pool));
            }
            GraphKernel::PageRank {
                sync: Sync::Pull, ..
            } => {
                let order = Order::by_degree(g);
                let lists = SplitLists::renumbered(g, &order, pool);
                self.pull = Some((order, lists));
            }
            _ => return,
        }
        self.relabel_seconds = Some(t.elapsed().as_secs_f64());
        g.release();
    }

    /// The key of this kernel's answer in the input's answers file.
    fn kernel_key(&self) -> String {
        match &self.kernel {
            GraphKernel::Count { pattern, induced } => {
                format!("count {pattern:?} induced={induced}")
            }
            GraphKernel::Bfs { source, .. } => format!("bfs {source:?}"),
            GraphKernel::PageRank { sync, batch, .. } => format!("pr {sync} batch={batch}"),
        }
    }
}

/// The independent counter's answer, or why it is out of reach: its work grows with
/// the sum of squared degrees, refused past [`REFERENCE_MAX_WORK`].
pub fn reference_answer(g: &Graph, pattern: Pattern, induced: bool) -> Answer {
    let work: u64 = (0..g.vertices() as u32)
        .map(|v| (g.degree(v) as u64).pow(2))
        .sum();
    if work > REFERENCE_MAX_WORK {
        return Answer::Unavailable(format!(
            "the independent counter would take {work:.1e} steps on this graph (limit {REFERENCE_MAX_WORK:.0e})"
        ));
    }
    Answer::Known(reference_count(g, pattern, induced).into())
}

/// The graph `source` names, built by the pool's workers: `kron:SCALE` or
/// `uniform:SCALE` generated, a `.csr` cache loaded as it is, any other file read as
/// an edge list (SNAP, `.el`, `.mtx`).
///
/// The memory it will take is estimated first and refused past what is available
/// unless `force`.
///
/// # Errors
/// [`WorkloadError::BadParam`] for a scale outside 1-30; the loader's error for a file;
/// [`WorkloadError::TooBig`] when the estimate exceeds the available memory.
pub fn build_graph(source: &str, force: bool, pool: &Pool) -> Result<Graph, WorkloadError> {
    if source.ends_with(".csr") {
        return Ok(super::cache::load(std::path::Path::new(source), pool)?.0);
    }
    let (n, edges) = super::load::from_source(source, force, pool)?;
    Ok(Graph::from_edges(n, &edges, pool))
}

/// Vertices a BFS reached and the edges among them (each counted once), the edges
/// its TEPS rate counts.
fn traversed(g: &Graph, parent: &[u32]) -> (usize, u64) {
    let reached = (0..g.vertices() as u32).filter(|&v| parent[v as usize] != super::bfs::NONE);
    let (n, degrees) = reached.fold((0, 0u64), |(n, d), v| (n + 1, d + g.degree(v) as u64));
    (n, degrees / 2)
}

impl Workload for GraphCount {
    fn name(&self) -> &'static str {
        "graph"
    }

    fn primary_figure(&self) -> &'static str {
        "edges_per_s"
    }

    fn use_inputs(&mut self, inputs: &Inputs) {
        self.inputs = inputs.clone();
    }

    fn shares_inputs(&self) -> bool {
        self.cache_key().is_some()
    }

    fn setup(&self) -> SetupCosts {
        self.setup.clone()
    }

    fn verified_input(&self) -> Option<String> {
        self.verified.clone()
    }

    fn answer_slot(&self) -> Option<(AnswerBook, String)> {
        let (path, fingerprint) = self.cached.as_ref()?;
        Some((AnswerBook::beside(path, fingerprint), self.kernel_key()))
    }

    fn prepare(&mut self, pool: &Pool) -> Result<(), WorkloadError> {
        let t = Instant::now();
        self.setup = SetupCosts {
            input: "built in memory".into(),
            ..SetupCosts::default()
        };
        self.verified = None;
        self.reference = std::sync::OnceLock::new();
        let cache = self
            .cache_key()
            .and_then(|key| self.inputs.file(&key, "csr"));
        let g = match &cache {
            Some(path) => self.cached_graph(path, pool)?,
            None => {
                let g = build_graph(&self.source, self.force, pool)?;
                self.setup.build_secs = Some(t.elapsed().as_secs_f64());
                g
            }
        };
        if let (Some(book), GraphKernel::Count { pattern, induced }) =
            (self.answer_slot(), &self.kernel)
        {
            let (pattern, induced) = (*pattern, *induced);
            self.answer = Some(
                book.0
                    .get_or(&book.1, || reference_answer(&g, pattern, induced))?,
            );
        }
        if let Some(s) = self.bfs_source(&g)? {
            if let GraphKernel::Bfs { source, .. } = &mut self.kernel {
                *source = Some(s);
            }
        }
        self.renumber(&g, pool);
        self.graph = Some(g);
        self.build_seconds = t.elapsed().as_secs_f64();
        Ok(())
    }

    fn run(&mut self, pool: &Pool) -> (f64, Vec<Figure>) {
        let Some(g) = self.graph.as_ref().filter(|_| !self.released) else {
            return (0.0, Vec::new());
        };
        // The last trial's tree (checked by now where every trial is) becomes this
        // one's array.
        if let Some((_, tree)) = self.bfs.take() {
            self.bfs_arrays.recycle(tree);
        }
        let t = Instant::now();
        match &self.kernel {
            GraphKernel::Count { pattern, induced } => {
                self.count = count(g, *pattern, *induced, pool)
            }
            GraphKernel::Bfs { source, .. } => {
                let s = source.unwrap_or(0);
                let tree = match &self.relabelled {
                    Some(r) => super::bfs::bfs_relabelled_in(r, s, pool, &mut self.bfs_arrays),
                    None => super::bfs::bfs_in(g, s, pool, &mut self.bfs_arrays),
                };
                self.bfs = Some((s, tree.parent));
                self.bfs_steps = tree.steps;
            }
            // Pull PageRank on the renumbered lists `prepare` made.
            GraphKernel::PageRank {
                sync: Sync::Pull,
                tolerance,
                ..
            } if self.pull.is_some() => {
                if let Some((order, lists)) = &self.pull {
                    self.ranks = Some(super::pagerank::pagerank_relabelled(
                        order, lists, *tolerance, pool,
                    ));
                }
            }
            // An unavailable mechanism (htm without RTM) leaves no ranks; verify says why.
            GraphKernel::PageRank {
                sync,
                batch,
                tolerance,
            } => {
                self.ranks = super::pagerank::pagerank(g, sync, *batch, *tolerance, pool).ok();
                if self.ranks.is_none() {
                    // Nothing ran: no seconds and no figure to report.
                    return (0.0, Vec::new());
                }
            }
        }
        self.seconds = t.elapsed().as_secs_f64();
        (
            self.seconds,
            vec![Figure {
                name: "edges_per_s".into(),
                value: g.edges() as f64 / self.seconds,
                unit: "edges/s",
            }],
        )
    }

    /// The renumbered copy (BFS), the split lists (PageRank) and the search's kept
    /// arrays go; the last result, in original ids, stays for the check, which reads
    /// the original graph.
    fn release(&mut self) {
        (self.relabelled, self.pull) = (None, None);
        self.bfs_arrays = Default::default();
        self.released = true;
    }

    fn verify(&self, _pool: &Pool) -> Verification {
        let Some(g) = &self.graph else {
            return Verification::Failed("nothing ran".into());
        };
        match &self.kernel {
            GraphKernel::Count { pattern, induced } => self.verify_count(g, *pattern, *induced),
            GraphKernel::Bfs { .. } => match &self.bfs {
                Some((s, parent)) => match super::bfs::verify(g, *s, parent) {
                    Ok(edges) => Verification::Passed(format!(
                        "parent tree from {s} verified ({edges} edges reached)"
                    )),
                    Err(e) => Verification::Failed(e),
                },
                None => Verification::Failed("nothing ran".into()),
            },
            GraphKernel::PageRank { sync, .. } => match &self.ranks {
                Some(r) => match super::pagerank::verify(g, r) {
                    Ok(()) => Verification::Passed(format!(
                        "{} iterations; scores equal a serial pull PageRank to {:.0e} of each",
                        r.iterations,
                        super::pagerank::VERIFY_RELATIVE
                    )),
                    Err(e) => Verification::Failed(e),
                },
                None => Verification::Unavailable(format!(
                    "{sync}: this CPU does not offer Intel RTM (TSX absent or disabled), so no htm run was made"
                )),
            },
        }
    }

    fn detail(&self) -> Detail {
        let g = self.graph.as_ref();
        let kernel = match &self.kernel {
            GraphKernel::Count { pattern, induced } => GraphKernelDetail::Count {
                pattern: pattern.to_string(),
                induced: *induced,
                count: self.count,
            },
            GraphKernel::Bfs { .. } => {
                let (source, reached_vertices, traversed_edges) = match (&self.bfs, g) {
                    (Some((s, parent)), Some(g)) => {
                        let (reached, edges) = traversed(g, parent);
                        (Some(*s), reached, edges)
                    }
                    _ => (None, 0, 0),
                };
                GraphKernelDetail::Bfs {
                    source,
                    reached_vertices,
                    traversed_edges,
                    teps: traversed_edges as f64 / self.seconds,
                    steps: self.bfs_steps.clone(),
                }
            }
            GraphKernel::PageRank { sync, batch, .. } => {
                let r = self.ranks.as_ref();
                GraphKernelDetail::Pr {
                    sync: sync.to_string(),
                    batch: *batch,
                    iterations: r.map(|r| r.iterations),
                    transactions: r.map(|r| r.transactions),
                    aborts: r.map(|r| r.aborts.total()),
                    aborts_by_cause: r.map(|r| AbortCounts {
                        conflict: r.aborts.conflict,
                        capacity: r.aborts.capacity,
                        explicit: r.aborts.explicit,
                        other: r.aborts.other,
                    }),
                }
            }
        };
        Detail::Graph(GraphDetail {
            graph: self.source.clone(),
            seconds: self.seconds,
            build_seconds: self.build_seconds,
            vertices: g.map(Graph::vertices),
            edges: g.map(Graph::edges),
            bytes_per_edge: g.map(Graph::bytes_per_edge),
            relabel_seconds: self.relabel_seconds,
            kernel,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::cache::{FULL_CHECK, TOKEN_CHECK};
    use super::*;
    use crate::graph::tests::pool;
    use std::collections::BTreeMap;

    /// A run of triangle counting on kron:10 given `token` on the cache in `dir`: its
    /// set-up, and the token of the file it checked in full (or wrote).
    fn run_with(dir: &std::path::Path, token: Option<String>) -> (SetupCosts, Option<String>) {
        let params: BTreeMap<String, String> = [("graph", "kron:10"), ("pattern", "triangle")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut w = GraphCount::with(&GraphSettings::from_params(&params).unwrap()).unwrap();
        w.use_inputs(&Inputs {
            cache: Some(dir.to_path_buf()),
            verified: token,
            ..Inputs::default()
        });
        w.prepare(&pool(2)).unwrap();
        (w.setup(), w.verified_input())
    }

    /// The `.csr` in `dir` with one neighbour byte flipped: `how` 0 through a new file
    /// renamed over it (another inode), 1 written in place (the same inode and size),
    /// 2 in place with its modification time set back (only the change time differs).
    fn corrupt(dir: &std::path::Path, how: usize) {
        let file = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "csr"))
            .unwrap();
        let mut bytes = std::fs::read(&file).unwrap();
        let at = bytes.len() - 64;
        bytes[at] ^= 0x40;
        let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
        // Past the coarse clock's tick, so a rewrite's times differ.
        std::thread::sleep(std::time::Duration::from_millis(20));
        if how == 0 {
            let tmp = file.with_extension("new");
            std::fs::write(&tmp, &bytes).unwrap();
            std::fs::rename(&tmp, &file).unwrap();
        } else {
            std::fs::write(&file, &bytes).unwrap();
        }
        if how == 2 {
            let f = std::fs::File::options().write(true).open(&file).unwrap();
            f.set_modified(mtime).unwrap();
        }
    }

    /// Issue 36: after the last trial the kernel's copies go and the check reads the
    /// original (a mapped cache, released while the copies were made); nothing runs
    /// until the next `prepare`, which makes them again.
    #[test]
    fn released_kernels_are_checked_against_the_original_and_run_only_after_prepare() {
        let dir = tempfile::tempdir().unwrap();
        for kernel in ["bfs", "pr"] {
            let params: BTreeMap<String, String> = [("graph", "kron:10"), ("kernel", kernel)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let settings = GraphSettings::from_params(&params).unwrap();
            let mut w = GraphCount::with(&settings).unwrap();
            w.use_inputs(&Inputs {
                cache: Some(dir.path().to_path_buf()),
                ..Inputs::default()
            });
            let p = pool(2);
            for _ in 0..2 {
                w.prepare(&p).unwrap();
                assert!(w.run(&p).0 > 0.0, "{kernel}");
                w.release();
                assert!(w.verify(&p).passed(), "{kernel}: {:?}", w.verify(&p));
                assert_eq!(w.run(&p).0, 0.0, "{kernel}: nothing runs after release");
                assert!(w.verify(&p).passed(), "{kernel}: the last result stays");
            }
        }
    }

    /// A graph built in memory has no answers file: the first check of a process
    /// computes the independent count and the later trials' checks compare with
    /// it (a wrong count still fails); a new `prepare` computes it again.
    #[test]
    fn the_independent_count_is_computed_once_per_prepared_input() {
        let params: BTreeMap<String, String> = [("graph", "kron:8"), ("pattern", "triangle")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let settings = GraphSettings::from_params(&params).unwrap();
        let mut w = GraphCount::with(&settings).unwrap();
        let p = pool(2);
        w.prepare(&p).unwrap();
        assert!(w.reference.get().is_none());
        w.run(&p);
        assert!(w.verify(&p).passed(), "{:?}", w.verify(&p));
        let first = w.reference.get().cloned();
        assert!(matches!(first, Some(Answer::Known(_))), "{first:?}");
        w.count += 1;
        assert!(
            !w.verify(&p).passed(),
            "a wrong count fails against the kept answer"
        );
        w.prepare(&p).unwrap();
        assert!(w.reference.get().is_none(), "a new input, a new answer");
    }

    #[test]
    fn a_token_spares_the_full_check_only_on_the_file_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let (built, token) = run_with(dir.path(), None);
        assert!(
            built.input.starts_with("built and cached"),
            "{}",
            built.input
        );
        let token = token.expect("the file written is named");
        let (trusted, none) = run_with(dir.path(), Some(token.clone()));
        assert_eq!(trusted.input_check.as_deref(), Some(TOKEN_CHECK));
        assert!(trusted.input.starts_with("cache "), "{}", trusted.input);
        assert_eq!(none, None, "a run that trusted a token vouches for nothing");
        // Replaced (another inode), rewritten in place, rewritten with its old mtime:
        // each time the token of the last full check no longer names the file.
        for how in 0..3 {
            let (full, token) = run_with(dir.path(), None);
            assert_eq!(full.input_check.as_deref(), Some(FULL_CHECK), "{how}");
            corrupt(dir.path(), how);
            let (s, _) = run_with(dir.path(), token);
            assert!(
                s.input.starts_with("rebuilt and cached") && s.input.contains("checksum mismatch"),
                "corruption {how}: {}",
                s.input
            );
        }
        // A token of another shape (or a forged one) checks in full.
        let (s, _) = run_with(dir.path(), Some(format!("{token}x")));
        assert_eq!(s.input_check.as_deref(), Some(FULL_CHECK));
    }
}
