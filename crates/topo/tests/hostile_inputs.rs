//! Hostile or odd inputs to the topology readers end in an error naming the file, or
//! in the reading hwloc makes, never in a hang, an unbounded read, a wrapped number or
//! a stack overflow (issue 14).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use scalescope_topo::{Source, TopoError};

/// A two-CPU machine (one core, two hardware threads) with one L2 cache.
fn tiny_tree(root: &Path) {
    let cpu = root.join("sys/devices/system/cpu");
    for c in 0..2 {
        let t = cpu.join(format!("cpu{c}/topology"));
        fs::create_dir_all(&t).unwrap();
        fs::write(t.join("core_id"), "0\n").unwrap();
        fs::write(t.join("physical_package_id"), "0\n").unwrap();
        fs::write(t.join("thread_siblings"), "3\n").unwrap();
        fs::write(t.join("core_siblings"), "3\n").unwrap();
        let cache = cpu.join(format!("cpu{c}/cache/index2"));
        fs::create_dir_all(&cache).unwrap();
        fs::write(cache.join("level"), "2\n").unwrap();
        fs::write(cache.join("type"), "Unified\n").unwrap();
        fs::write(cache.join("size"), "1024K\n").unwrap();
        fs::write(cache.join("shared_cpu_map"), "3\n").unwrap();
    }
    fs::write(cpu.join("online"), "0-1\n").unwrap();
}

fn load(root: &Path) -> Result<scalescope_topo::Topology, TopoError> {
    Source::SysfsRoot(root.to_path_buf()).load()
}

#[test]
fn the_tiny_tree_reads() {
    let dir = tempfile::tempdir().unwrap();
    tiny_tree(dir.path());
    let topo = load(dir.path()).unwrap();
    assert_eq!(topo.cores.len(), 1);
    assert_eq!(topo.l2[0].size_bytes, Some(1 << 20));
}

#[test]
fn a_fifo_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    tiny_tree(dir.path());
    let fifo = dir
        .path()
        .join("sys/devices/system/cpu/cpu1/topology/core_id");
    fs::remove_file(&fifo).unwrap();
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let start = Instant::now();
    let err = load(dir.path()).unwrap_err().to_string();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(err.contains("core_id") && err.contains("FIFO"), "{err}");
}

#[test]
fn a_link_to_dev_zero_is_refused_not_read_forever() {
    let dir = tempfile::tempdir().unwrap();
    tiny_tree(dir.path());
    let size = dir
        .path()
        .join("sys/devices/system/cpu/cpu0/cache/index2/size");
    fs::remove_file(&size).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &size).unwrap();
    let err = load(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("index2/size") && err.contains("character device"),
        "{err}"
    );
}

#[test]
fn a_huge_regular_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    tiny_tree(dir.path());
    let cpuinfo = dir.path().join("proc/cpuinfo");
    fs::create_dir_all(cpuinfo.parent().unwrap()).unwrap();
    let f = fs::File::create(&cpuinfo).unwrap();
    // Sparse: no disk is used for the 1 GiB hole.
    f.set_len(1 << 30).unwrap();
    let err = load(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("cpuinfo") && err.contains("larger than"),
        "{err}"
    );
}

#[test]
fn a_cache_size_past_u64_is_an_error_not_1_kib() {
    let dir = tempfile::tempdir().unwrap();
    tiny_tree(dir.path());
    let size = dir
        .path()
        .join("sys/devices/system/cpu/cpu0/cache/index2/size");
    fs::write(&size, "18014398509481985K\n").unwrap();
    let err = load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("18014398509481985K"), "{err}");
}

#[test]
fn masks_ending_in_newline_nul_read_like_hwloc() {
    let dir = tempfile::tempdir().unwrap();
    tiny_tree(dir.path());
    for c in 0..2 {
        let t = dir
            .path()
            .join(format!("sys/devices/system/cpu/cpu{c}/topology"));
        fs::write(t.join("thread_siblings"), "00000003\n\0").unwrap();
        fs::write(t.join("core_siblings"), "00000000,00000003\n\0").unwrap();
    }
    let topo = load(dir.path()).unwrap();
    assert_eq!(topo.cores.len(), 1);
    assert_eq!(topo.cores[0].cpus.to_list_string(), "0-1");
}

/// hwloc XML nested far deeper than any machine: an error, not a stack overflow.
#[test]
fn deeply_nested_xml_is_refused() {
    let depth = 100_000;
    let mut xml = String::from("<topology><object type=\"Machine\" cpuset=\"0x1\">");
    xml += &"<object type=\"Group\" cpuset=\"0x1\">".repeat(depth);
    xml += &"</object>".repeat(depth);
    xml += "</object></topology>";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("deep.xml");
    fs::write(&file, xml).unwrap();
    let err = Source::HwlocXml(file).load().unwrap_err().to_string();
    assert!(err.contains("deep.xml") && err.contains("nest"), "{err}");
}

#[test]
fn an_xml_that_is_not_a_regular_file_is_refused() {
    let err = Source::HwlocXml("/dev/zero".into())
        .load()
        .unwrap_err()
        .to_string();
    assert!(err.contains("/dev/zero"), "{err}");
}
