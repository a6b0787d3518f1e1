//! Shared by the fixture tests: hwloc's recorded machines, one directory per machine under
//! `tests/fixtures/topology` (`NAME/NAME.tar.bz2`, the recorded tree; `NAME/NAME.expected.json`,
//! hwloc's answer; `NAME/NAME.hwloc.xml`, hwloc's XML export). The trees are unpacked once into
//! the build's temporary directory and reused.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test
#![allow(dead_code)] // shared by several test binaries (`#[path]`), each using a part

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// `tests/fixtures/topology` of the workspace, from the root package or a member crate.
pub fn fixture_dir() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let direct = here.join("tests/fixtures/topology");
    if direct.is_dir() {
        direct
    } else {
        here.join("../../tests/fixtures/topology")
    }
}

/// One recorded machine's file: `fixture_dir()/NAME/NAME.<suffix>` (`tar.bz2`,
/// `expected.json`, `hwloc.xml`).
pub fn machine_file(name: &str, suffix: &str) -> PathBuf {
    fixture_dir().join(name).join(format!("{name}.{suffix}"))
}

/// hwloc's XML export of a recorded machine.
pub fn hwloc_xml(name: &str) -> PathBuf {
    machine_file(name, "hwloc.xml")
}

/// Names of every recorded machine: the directories of `fixture_dir()`, sorted.
pub fn fixture_names() -> Vec<String> {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES
        .get_or_init(|| {
            let mut names: Vec<String> = std::fs::read_dir(fixture_dir())
                .unwrap()
                .map(|e| e.unwrap())
                .filter(|e| e.file_type().unwrap().is_dir())
                .map(|e| e.file_name().into_string().unwrap())
                .collect();
            names.sort();
            names
        })
        .clone()
}

/// A recorded machine's expected answer (`NAME/NAME.expected.json`).
pub fn expected(name: &str) -> serde_json::Value {
    let path = machine_file(name, "expected.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Every recorded machine's tarball: (`NAME`, its bytes), sorted by name.
pub fn tarballs() -> Vec<(String, Vec<u8>)> {
    fixture_names()
        .into_iter()
        .map(|name| {
            let bytes = std::fs::read(machine_file(&name, "tar.bz2")).unwrap();
            (name, bytes)
        })
        .collect()
}

/// The unpacked trees: `CARGO_TARGET_TMPDIR/topology-<content hash>`, made once and reused
/// by later runs. It is unpacked beside that name and renamed into place, so test binaries
/// running side by side never see a half-written tree (the first rename wins).
fn unpacked() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let tarballs = tarballs();
        let mut hasher = std::hash::DefaultHasher::new();
        tarballs.hash(&mut hasher);
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let dir = tmp.join(format!("topology-{:016x}", hasher.finish()));
        if dir.is_dir() {
            return dir;
        }
        let partial = tempfile::tempdir_in(tmp).unwrap();
        for (name, bytes) in &tarballs {
            let mut archive = tar::Archive::new(bzip2::read::BzDecoder::new(bytes.as_slice()));
            archive
                .unpack(partial.path())
                .unwrap_or_else(|e| panic!("unpacking {name}: {e}"));
        }
        // Another binary may have renamed its copy first: then ours is dropped and theirs used.
        if std::fs::rename(partial.path(), &dir).is_err() && !dir.is_dir() {
            panic!("could not move the unpacked trees to {}", dir.display());
        }
        dir
    })
}

/// The root directory of a recorded machine, as if it were `/`.
pub fn root_of(name: &str) -> PathBuf {
    let root_dir = expected(name)["root_dir"].as_str().unwrap().to_string();
    unpacked().join(root_dir)
}
