//! Shared by the fixture tests: unpacks hwloc's recorded machines (`trees.tar`, one
//! `NAME.tar.bz2` per machine) once into the build's temporary directory and reuses them.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test
#![allow(dead_code)] // shared by several test binaries (`#[path]`), each using a part

use std::hash::{Hash, Hasher};
use std::io::Read;
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

/// Every recorded machine's expected answer (`expected.json`, keyed by machine name).
fn bundle() -> &'static serde_json::Map<String, serde_json::Value> {
    static BUNDLE: OnceLock<serde_json::Map<String, serde_json::Value>> = OnceLock::new();
    BUNDLE.get_or_init(|| {
        let text = std::fs::read_to_string(fixture_dir().join("expected.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    })
}

/// Names of every recorded machine (`NAME.tar.bz2` in trees.tar with an entry in `expected.json`).
pub fn fixture_names() -> Vec<String> {
    let mut names: Vec<String> = bundle().keys().cloned().collect();
    names.sort();
    names
}

pub fn expected(name: &str) -> serde_json::Value {
    bundle()
        .get(name)
        .unwrap_or_else(|| panic!("no entry {name} in expected.json"))
        .clone()
}

/// Every member of `trees.tar`: (`NAME.tar.bz2`, its bytes), in archive order.
pub fn tarballs() -> Vec<(String, Vec<u8>)> {
    let file = std::fs::File::open(fixture_dir().join("trees.tar")).unwrap();
    let mut archive = tar::Archive::new(file);
    let mut out = Vec::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = entry.path().unwrap().to_string_lossy().into_owned();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).unwrap();
        out.push((name, bytes));
    }
    out
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
