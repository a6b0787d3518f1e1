//! No Rust debug text in what scalescope prints or writes: `Some(0)`, `Htm`, `[1, 2]`
//! come from `{:?}`, which shows how a value is stored, not what it means. Every
//! production format string of the workspace (test modules stripped) is checked for a
//! `:?}` or `:#?}` placeholder; the few left are named below with why they are not
//! output people read. (What the report renders is also checked on its output:
//! `crates/report/tests/exporters.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::path::{Path, PathBuf};

/// `file:needle` of debug placeholders that are not read by people, and why.
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "crates/workloads/src/graph/workload.rs",
        "count {pattern:?} induced={induced}",
        "the key of a stored answer in an input's answers file; changing it would orphan every cached answer",
    ),
    (
        "crates/workloads/src/graph/workload.rs",
        "bfs {source:?}",
        "the key of a stored answer in an input's answers file",
    ),
    (
        "crates/analysis/src/findings.rs",
        "event: format!(\"{:?}\", e.kind)",
        "a JSON field of the typed evidence (analysis schema 2: `NewPackage`); the issue 32 work on findings owns it",
    ),
    (
        "crates/analysis/src/findings/curves.rs",
        "event: format!(\"{:?}\", e.kind)",
        "the same JSON field",
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The text without `#[cfg(test)]` items (a module or function, to its closing brace).
fn production(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let Some(open) = item.find('{') else {
            return out;
        };
        let mut depth = 0usize;
        let mut end = item.len();
        for (i, c) in item[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn no_debug_placeholders_in_production_format_strings() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    for c in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = c.unwrap().path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    let mut found = Vec::new();
    for path in &files {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel.ends_with("_tests.rs") || rel.ends_with("/tests.rs") || rel.contains("/tests/") {
            continue; // test-only files included by `#[cfg(test)] mod x;`
        }
        let code = production(&std::fs::read_to_string(path).unwrap());
        for line in code.lines() {
            let debug = line.contains(":?}") || line.contains(":#?}");
            let allowed = ALLOWED
                .iter()
                .any(|(f, needle, _)| *f == rel && line.contains(needle));
            if debug && !allowed && !line.trim_start().starts_with("//") {
                found.push(format!("{rel}: {}", line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "debug formatting in production code (write what the value means, not how it is stored):\n{}",
        found.join("\n")
    );
}
