//! Links planted where a command writes. A command runs once into a clean
//! directory to learn every path it writes there; then into a directory where
//! each of those paths is a link to a file outside (variant "files"), or each
//! directory is a link to a directory outside (variant "dirs"). Outside, nothing
//! may change: the victim files keep their bytes and times, the victim
//! directories stay empty, and the victim FIFO is never opened (opening it would
//! block, and the case would hang).

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::harness::{self, Verdict};

/// Every path below `root` (files and directories), relative, parents first.
pub fn listing(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for e in entries.flatten() {
            let r = rel.join(e.file_name());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(r.clone());
            }
            out.push(r);
        }
    }
    out.sort();
    out
}

/// Files and a FIFO outside the output directory, and an empty directory.
pub struct Victims {
    pub dir: tempfile::TempDir,
    files: Vec<(PathBuf, std::fs::Metadata)>,
}

impl Victims {
    pub fn new() -> Victims {
        let dir = tempfile::tempdir().expect("a victims' directory");
        let mut files = Vec::new();
        for name in ["victim-a", "victim-b"] {
            let p = dir.path().join(name);
            std::fs::write(&p, "precious\n").expect("a victim");
            files.push((p.clone(), std::fs::metadata(&p).expect("metadata")));
        }
        std::fs::create_dir(dir.path().join("victim-dir")).expect("a victim directory");
        super::files::hostile(dir.path(), "fifo", "");
        Victims { dir, files }
    }

    /// The n-th planted file link's target (files and the FIFO in turn).
    pub fn file(&self, n: usize) -> PathBuf {
        match n % 3 {
            0 => self.dir.path().join("victim-a"),
            1 => self.dir.path().join("fifo"),
            _ => self.dir.path().join("victim-b"),
        }
    }

    pub fn directory(&self) -> PathBuf {
        self.dir.path().join("victim-dir")
    }

    /// What changed outside.
    pub fn damage(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (p, before) in &self.files {
            let now = std::fs::metadata(p).expect("the victim is still there");
            let text = std::fs::read_to_string(p).unwrap_or_default();
            if text != "precious\n" || now.modified().ok() != before.modified().ok() {
                out.push(format!("{} was written", p.display()));
            }
        }
        let inside = std::fs::read_dir(self.directory()).map_or(0, |d| d.count());
        if inside > 0 {
            out.push(format!("{inside} entries appeared in the victim directory"));
        }
        out
    }
}

/// Plants links at every path of `paths` below `root`: each file path a link to
/// a victim file ("files"), or each top-level directory a link to the victim
/// directory ("dirs").
pub fn plant(root: &Path, paths: &[PathBuf], variant: &str, v: &Victims, clean: &Path) {
    std::fs::create_dir_all(root).expect("the output directory");
    for (n, rel) in paths.iter().enumerate() {
        let is_dir = clean.join(rel).is_dir();
        let at = root.join(rel);
        match (variant, is_dir) {
            ("files", true) => std::fs::create_dir_all(&at).expect("a real directory"),
            ("files", false) => symlink(v.file(n), &at).expect("a planted link"),
            ("dirs", true) if rel.components().count() == 1 => {
                symlink(v.directory(), &at).expect("a planted directory link")
            }
            _ => {}
        }
    }
}

/// Runs `args` (where `{out}` names the output) clean, then into each planted
/// variant; the damage done and any bad outcome.
pub fn attack(args: &[&str], out_is_file: bool) -> Vec<String> {
    let work = tempfile::tempdir().expect("a work directory");
    let fill = |out: &Path| -> Vec<String> {
        args.iter()
            .map(|a| a.replace("{out}", &out.display().to_string()))
            .collect()
    };
    let clean = work.path().join("clean");
    let first = harness::run(&fill(&clean), work.path(), Duration::from_secs(60));
    if !matches!(first.verdict(), Verdict::Ran | Verdict::RanWithFailures) {
        return vec![format!("the clean run failed: {}", first.describe())];
    }
    let mut problems = Vec::new();
    for variant in ["files", "dirs"] {
        let v = Victims::new();
        let target = work.path().join(format!("planted-{variant}"));
        if out_is_file {
            if variant == "dirs" {
                continue;
            }
            symlink(v.file(0), &target).expect("a planted link");
        } else {
            plant(&target, &listing(&clean), variant, &v, &clean);
        }
        let o = harness::run(&fill(&target), work.path(), Duration::from_secs(60));
        eprintln!(
            "links {variant}: `{}` ({} paths written clean): {:?}",
            args.join(" "),
            listing(&clean).len(),
            o.verdict()
        );
        if let Verdict::Bad(_) = o.verdict() {
            problems.push(format!("{variant}: {}", o.describe()));
        }
        problems.extend(
            v.damage()
                .into_iter()
                .map(|d| format!("{variant}: `{}`: {d}", args.join(" "))),
        );
    }
    problems
}
