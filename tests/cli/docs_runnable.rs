#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

//! Every command the README and docs/ show runs as written. A code block whose info
//! string is `sh runnable` is run: where some of its lines start with `$ `, each
//! such line is one command (the other lines are its output); otherwise the whole
//! block is one `sh -eu` script. The blocks of one file run in order in one fresh
//! directory (so a later block can use what an earlier one wrote), with this build's
//! `scalescope` first on the PATH. Other blocks (`sh`, `console`, `json`) are shown,
//! not run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// One runnable block: the file, its first line, and the scripts it runs.
struct Block {
    file: String,
    line: usize,
    scripts: Vec<String>,
}

fn blocks_of(file: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = Vec::new();
    let mut current: Option<(usize, Vec<String>)> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut current, fence) {
            (None, Some(info)) if info.split_whitespace().any(|w| w == "runnable") => {
                current = Some((i + 1, Vec::new()));
            }
            (Some(_), Some(_)) => {
                let (start, lines) = current.take().unwrap();
                out.push(Block {
                    file: file.display().to_string(),
                    line: start,
                    scripts: scripts(&lines),
                });
            }
            (Some((_, lines)), None) => lines.push(line.to_string()),
            _ => {}
        }
    }
    out
}

/// `$ ` lines one by one, else the whole block.
fn scripts(lines: &[String]) -> Vec<String> {
    let prompted: Vec<String> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("$ ").map(str::to_string))
        .collect();
    if prompted.is_empty() {
        vec![lines.join("\n")]
    } else {
        prompted
    }
}

fn doc_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

fn run(block: &Block, script: &str, dir: &Path) {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_scalescope"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let t0 = Instant::now();
    let out = Command::new("sh")
        .args(["-eu", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let took = t0.elapsed();
    assert!(
        out.status.success(),
        "{}:{}: `{script}` failed ({}):\n{}\n{}",
        block.file,
        block.line,
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        took < Duration::from_secs(300),
        "{}:{}: `{script}` took {took:?}",
        block.file,
        block.line
    );
}

#[test]
fn every_runnable_command_in_the_docs_runs() {
    let mut ran = 0;
    for file in doc_files() {
        let blocks = blocks_of(&file);
        if blocks.is_empty() {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        for block in &blocks {
            for script in &block.scripts {
                run(block, script, dir.path());
                ran += 1;
            }
        }
    }
    // The README's examples and the guide's walk-through are all marked runnable.
    assert!(ran >= 10, "only {ran} runnable commands found");
}

#[test]
fn block_parsing() {
    let lines: Vec<String> = ["$ scalescope topo", "2 packages", "$ scalescope place"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(scripts(&lines), vec!["scalescope topo", "scalescope place"]);
    let plain: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
    assert_eq!(scripts(&plain), vec!["a\nb"]);
}
