#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::time::{Duration, Instant};

use super::*;

const SMALL: Kind = Kind::new("test file", 100, 10);

fn fifo(dir: &Path) -> PathBuf {
    let p = dir.join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &p,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    p
}

#[test]
fn a_fifo_a_device_and_a_directory_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let e = read(&fifo(dir.path()), SMALL).unwrap_err().to_string();
    assert!(
        e.contains("a FIFO, not a regular file; a test file must be"),
        "{e}"
    );
    let e = read(Path::new("/dev/zero"), SMALL).unwrap_err().to_string();
    assert!(e.contains("a character device"), "{e}");
    let e = read(dir.path(), SMALL).unwrap_err().to_string();
    assert!(e.contains("a directory"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(2));
}

#[test]
fn a_link_loop_is_an_io_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    let e = read(&a, SMALL).unwrap_err().to_string();
    assert!(e.contains("symbolic links"), "{e}");
    assert!(e.starts_with(&a.display().to_string()), "{e}");
}

#[test]
fn a_file_past_the_limit_is_refused_before_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big");
    let f = File::create(&p).unwrap();
    f.set_len(1 << 30).unwrap();
    let e = read(&p, SMALL).unwrap_err().to_string();
    assert!(
        e.ends_with("larger than 100 bytes (the limit for a test file)"),
        "{e}"
    );
}

#[test]
fn a_long_line_is_refused_after_its_limit_with_a_short_escaped_start() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("long");
    std::fs::write(
        &p,
        b"ok\n\x1b[2Jxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
    )
    .unwrap();
    let mut lines = open(&p, SMALL).unwrap().lines();
    assert_eq!(lines.next().unwrap().unwrap(), (1, "ok".to_string()));
    let e = lines.next().unwrap().unwrap_err().to_string();
    assert!(e.contains(":2: a line longer than 10 bytes"), "{e}");
    assert!(e.contains("`\\u{1b}[2Jxxx"), "{e}");
    assert!(!e.contains('\x1b'), "{e}");
}

#[test]
fn lines_end_with_or_without_a_newline_and_drop_a_bom() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t");
    std::fs::write(&p, "\u{feff}a,b\r\nc").unwrap();
    let lines: Vec<_> = open(&p, SMALL)
        .unwrap()
        .lines()
        .map(|l| l.unwrap())
        .collect();
    assert_eq!(lines, vec![(1, "a,b".to_string()), (2, "c".to_string())]);
    assert_eq!(read_text(&p, SMALL).unwrap(), "a,b\r\nc");
}

#[test]
fn text_that_is_not_utf8_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t");
    std::fs::write(&p, b"a\nb\xff\x1b\n").unwrap();
    let e = read_text(&p, SMALL).unwrap_err().to_string();
    assert!(
        e.ends_with(":2: not UTF-8 text: `b\\xff\\u{1b}\\u{a}`"),
        "{e}"
    );
}

#[test]
fn input_growing_past_the_limit_is_cut_with_an_error() {
    let input = Input {
        path: PathBuf::from("<stdin>"),
        kind: SMALL,
        source: Box::new(std::io::repeat(b'x')),
        read: 0,
    };
    let e = input.read_all().unwrap_err().to_string();
    assert!(e.contains("larger than 100 bytes"), "{e}");
}
