//! Shared by the fixture tests: unpacks hwloc's recorded machines once per process.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

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

/// Names of every recorded machine (`NAME.tar.bz2` with an entry in `expected.json`).
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

/// Unpacks every tarball into one temporary directory, once.
fn unpacked() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        for name in fixture_names() {
            let file = std::fs::File::open(fixture_dir().join(format!("{name}.tar.bz2"))).unwrap();
            let mut archive = tar::Archive::new(bzip2::read::BzDecoder::new(file));
            archive
                .unpack(dir.path())
                .unwrap_or_else(|e| panic!("unpacking {name}: {e}"));
        }
        dir
    })
    .path()
}

/// The root directory of a recorded machine, as if it were `/`.
pub fn root_of(name: &str) -> PathBuf {
    let root_dir = expected(name)["root_dir"].as_str().unwrap().to_string();
    unpacked().join(root_dir)
}
