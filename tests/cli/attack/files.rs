//! Every file argument given what is not a file to read: a FIFO (nobody writes
//! it), `/dev/zero`, a directory, a 1 GiB file of one line (sparse: no byte of it
//! written) and a symbolic link loop, each under the extensions the commands
//! dispatch on. An input must be refused within 5 s using under 200 MB; a
//! directory argument may also run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::harness::{self, Verdict};
use super::inventory::{self, Arg, Fixtures};

pub const KINDS: [&str; 5] = ["fifo", "zero", "dir", "big", "loop"];

/// Arguments that are paths but typed as text (a graph or a machine may be named
/// by a spec or by a file).
pub fn path_like(a: &Arg) -> bool {
    a.kind == "path" || (a.name == "--graph") || (a.command == ["predict"] && a.name == "--to")
}

/// Arguments naming a directory the command writes (or reads, as a tree).
pub fn is_dir_arg(a: &Arg) -> bool {
    matches!(a.name.as_str(), "--out" | "--input-cache" | "--sysfs-root")
}

fn writes(a: &Arg) -> bool {
    matches!(a.name.as_str(), "--out" | "--input-cache")
}

/// The extensions an argument's readers dispatch on.
fn extensions(a: &Arg) -> &'static [&'static str] {
    match (a.command.first().map(String::as_str), a.name.as_str()) {
        (_, "--graph") => &["", ".mtx", ".csr"],
        (Some("analyze" | "report"), "results") => &[".jsonl", ".json"],
        _ => &[""],
    }
}

/// Makes `kind` named with `ext` in `dir`.
pub fn hostile(dir: &Path, kind: &str, ext: &str) -> PathBuf {
    let p = dir.join(format!("{kind}{ext}"));
    match kind {
        "fifo" => {
            let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).expect("a path");
            // SAFETY: mkfifo reads the NUL-terminated path it is given.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        }
        "zero" => std::os::unix::fs::symlink("/dev/zero", &p).expect("a link to /dev/zero"),
        "dir" => std::fs::create_dir(&p).expect("a directory"),
        "big" => std::fs::File::create(&p)
            .and_then(|f| f.set_len(1 << 30))
            .expect("a sparse 1 GiB file"),
        _ => {
            let other = dir.join(format!("loop-back{ext}"));
            std::os::unix::fs::symlink(&other, &p).expect("a link");
            std::os::unix::fs::symlink(&p, &other).expect("a link back");
        }
    }
    p
}

/// Every (argument, kind, extension) case.
pub fn cases(args: &[Arg]) -> Vec<(Arg, &'static str, &'static str)> {
    let mut out = Vec::new();
    for a in args.iter().filter(|a| path_like(a) && a.takes_value) {
        for kind in KINDS {
            // Never hand a device to a command as a place to write.
            if kind == "zero" && writes(a) {
                continue;
            }
            for ext in extensions(a) {
                out.push((a.clone(), kind, *ext));
            }
        }
    }
    out
}

/// The base invocation adjusted so the argument is read: other machine sources
/// dropped (they exclude each other), a sweep planning (`--dry-run`) when the
/// machine is named, a launcher where a hostfile is.
fn adjusted(a: &Arg, args: Vec<String>) -> Vec<String> {
    let mut args = args;
    let source = matches!(a.name.as_str(), "--hwloc-xml" | "--sysfs-root" | "--to");
    for drop in ["--synthetic", "--to"] {
        if source && a.name != drop {
            if let Some(i) = args.iter().position(|x| x == drop) {
                args.drain(i..i + 2);
            }
        }
    }
    let at = args.iter().position(|x| x == "--").unwrap_or(args.len());
    if a.command == ["sweep"] && source {
        args.insert(at, "--dry-run".into());
    }
    if a.command == ["sweep"] && a.name == "--hostfile" {
        for (i, x) in ["--launcher", "mpirun", "--launcher-path", "/bin/false"]
            .iter()
            .enumerate()
        {
            args.insert(at + i, x.to_string());
        }
    }
    args
}

/// Runs one case; the problems found.
pub fn run_case(a: &Arg, kind: &str, ext: &str, fx: &Fixtures) -> Vec<String> {
    let Some(base) = inventory::base(&a.command) else {
        return vec![format!("{}: no base invocation", a.command.join(" "))];
    };
    let dir = tempfile::tempdir().expect("a case directory");
    let target = hostile(dir.path(), kind, ext).display().to_string();
    let filled = inventory::fill(&base, fx, &dir.path().join("out"));
    let args = if a.positional {
        match inventory::with_positional(&base, &filled, &a.name, &target) {
            Some(args) => args,
            None => {
                return vec![format!(
                    "{} {}: not in the base invocation",
                    a.command.join(" "),
                    a.name
                )]
            }
        }
    } else {
        adjusted(a, inventory::with_flag(&filled, &a.name, &target))
    };
    let o = harness::run(&args, dir.path(), Duration::from_secs(10));
    let mut bad = Vec::new();
    let v = o.verdict();
    // A directory argument given a directory runs; an input cache a command does
    // not need is not read; an output file replaces a regular file of its name.
    let output_file = a.command == ["graph", "export"] && a.name == "--out";
    let may_run = (is_dir_arg(a) && kind == "dir")
        || a.name == "--input-cache"
        || (output_file && matches!(kind, "big" | "loop"));
    if matches!(v, Verdict::Bad(_)) || o.secs > 5.0 || (!may_run && v == Verdict::Ran) {
        bad.push(format!("{kind}{ext}: {}", o.describe()));
    }
    bad
}
