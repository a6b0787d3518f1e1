#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::os::unix::fs::symlink;

use super::*;

/// An output directory with a victim file and a victim directory beside it.
fn setup() -> (tempfile::TempDir, OutDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let victim_dir = tmp.path().join("victim-dir");
    std::fs::create_dir(&victim_dir).unwrap();
    let out = OutDir::create(&tmp.path().join("out")).unwrap();
    (tmp, out, victim, victim_dir)
}

#[test]
fn a_planted_file_link_is_replaced_never_written_through() {
    let (_tmp, out, victim, _) = setup();
    symlink(&victim, out.join("a.txt")).unwrap();
    symlink(&victim, out.join("b.txt")).unwrap();
    let mut f = out.create_file("a.txt").unwrap();
    f.write_all(b"new").unwrap();
    out.write_file("b.txt", b"new").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(std::fs::read_to_string(out.join("a.txt")).unwrap(), "new");
    assert!(!std::fs::symlink_metadata(out.join("b.txt"))
        .unwrap()
        .is_symlink());
}

#[test]
fn a_planted_directory_link_is_refused() {
    let (_tmp, out, _, victim_dir) = setup();
    symlink(&victim_dir, out.join("logs")).unwrap();
    let e = out.create_file("logs/run.out").unwrap_err();
    assert!(matches!(e, FileError::Link { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("logs: a symbolic link; refusing to write"),
        "{e}"
    );
    assert!(out.subdir("logs").is_err());
    assert_eq!(std::fs::read_dir(&victim_dir).unwrap().count(), 0);
}

#[test]
fn appending_refuses_links_and_shared_files() {
    let (_tmp, out, victim, _) = setup();
    symlink(&victim, out.join("link")).unwrap();
    assert!(matches!(
        out.open_append("link"),
        Err(FileError::Link { .. })
    ));
    std::fs::hard_link(&victim, out.join("hard")).unwrap();
    let e = out.open_append("hard").unwrap_err().to_string();
    assert!(e.contains("has 2 names"), "{e}");
    out.write_file("own", b"x").unwrap();
    assert!(out.open_append("own").is_ok());
}

#[test]
fn reads_named_by_a_results_file_stay_inside() {
    let (_tmp, out, victim, _) = setup();
    out.write_file("series/a.json", b"{}").unwrap();
    assert!(out.open_input("series/a.json", Kind::JSON).is_ok());
    for bad in ["../victim", "/etc/passwd", "", "series/../../victim"] {
        let e = out.open_input(bad, Kind::JSON).unwrap_err();
        assert!(matches!(e, FileError::Outside { .. }), "{bad}: {e}");
    }
    symlink(&victim, out.join("series/b.json")).unwrap();
    let e = out.open_input("series/b.json", Kind::JSON).unwrap_err();
    assert!(e.to_string().contains("refusing to read through it"), "{e}");
    let e = out
        .open_input("series", Kind::JSON)
        .unwrap_err()
        .to_string();
    assert!(e.contains("a directory"), "{e}");
}

#[test]
fn the_lock_holds_while_the_lock_file_is_deleted() {
    let (_tmp, out, _, _) = setup();
    let held = out.try_lock().unwrap().expect("a free directory");
    out.write_file(".lock", b"1").unwrap();
    out.remove_file(".lock").unwrap();
    let again = OutDir::open(out.path()).unwrap();
    assert!(again.try_lock().unwrap().is_none());
    // The kernel names the holder (this process) where it lists the lock.
    if let Some(pid) = again.lock_holder() {
        assert_eq!(pid, std::process::id());
    }
    drop(held);
    assert!(again.try_lock().unwrap().is_some());
}

#[test]
fn a_failed_write_leaves_nothing_aside() {
    let (_tmp, out, _, _) = setup();
    let e = out.write_with("x", |_| Err(std::io::Error::other("disk full")));
    assert!(e.is_err());
    assert!(out.names().unwrap().is_empty(), "{:?}", out.names());
    assert!(is_aside_of(
        &aside_name(OsStr::new("results.jsonl")),
        "results.jsonl"
    ));
    assert!(!is_aside_of(OsStr::new("results.jsonl"), "results.jsonl"));
}

#[test]
fn a_device_or_fifo_of_that_name_is_never_replaced() {
    let (_tmp, out, _, _) = setup();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        out.join("fifo"),
        rustix::fs::FileType::Fifo,
        Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let e = out.write_file("fifo", b"x").unwrap_err().to_string();
    assert!(
        e.contains("exists and is a FIFO; refusing to replace it"),
        "{e}"
    );
    assert!(out.create_file("fifo").is_err());
    let dev = OutDir::open(Path::new("/dev")).unwrap();
    let e = dev.write_file("null", b"x").unwrap_err().to_string();
    assert!(e.contains("a character device"), "{e}");
}
