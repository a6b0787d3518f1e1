//! Every source read from a fake tree: `/proc` (a process tree whose child exits
//! mid-run), `/sys/devices/system/node`, a resctrl mount with `mon_groups`, and the
//! perf sysfs descriptions of Intel and AMD memory-controller PMUs.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::fs;
use std::path::Path;
use std::time::Duration;

use scalescope_model::evidence::{Measured, Series};
use scalescope_sampler::bandwidth::BandwidthSource;
use scalescope_sampler::resctrl::Resctrl;
use scalescope_sampler::{procfs, uncore, Sampler, SamplerConfig};
use scalescope_topo::CpuSet;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// `stat` of a thread: utime/stime in ticks, last CPU.
fn stat(tid: u32, comm: &str, utime: u64, stime: u64, cpu: u32) -> String {
    // Fields 3.. of proc(5): field N at index N - 3.
    let mut f: Vec<String> = vec!["0".into(); 50];
    f[0] = "R".into();
    f[14 - 3] = utime.to_string();
    f[15 - 3] = stime.to_string();
    f[39 - 3] = cpu.to_string();
    format!("{tid} ({comm}) {}\n", f.join(" "))
}

fn task(root: &Path, pid: u32, tid: u32, comm: &str, ticks: (u64, u64), cpu: u32, children: &str) {
    let d = format!("proc/{pid}/task/{tid}");
    write(
        root,
        &format!("{d}/stat"),
        &stat(tid, comm, ticks.0, ticks.1, cpu),
    );
    write(
        root,
        &format!("{d}/status"),
        "Name:\tx\nCpus_allowed_list:\t0-3\n",
    );
    write(root, &format!("{d}/children"), children);
}

fn proc_stat(root: &Path, busy: [u64; 4], idle: [u64; 4]) {
    let mut text = String::from("cpu  0 0 0 0 0 0 0 0\n");
    for c in 0..4 {
        text += &format!("cpu{c} {} 0 0 {} 0 0 0 0 0 0\n", busy[c], idle[c]);
    }
    write(root, "proc/stat", &text);
}

fn numastat(root: &Path, node: u32, hit: u64, other: u64) {
    write(
        root,
        &format!("sys/devices/system/node/node{node}/numastat"),
        &format!("numa_hit {hit}\nnuma_miss 0\nnuma_foreign 0\ninterleave_hit 0\nlocal_node {hit}\nother_node {other}\n"),
    );
}

fn fake_config(root: &Path) -> SamplerConfig {
    SamplerConfig {
        root: root.to_path_buf(),
        interval: Duration::from_millis(100),
        cpus: CpuSet::parse_list("0-3").unwrap(),
        counters: false,
    }
}

#[test]
fn a_fake_run_gives_cpu_threads_pages_and_numastat() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // PID 100 (two threads) started PID 200, and names 300, which is already gone.
    task(root, 100, 100, "main", (0, 0), 0, "200 300");
    task(root, 100, 101, "worker one", (0, 0), 1, "");
    task(root, 200, 200, "child", (0, 0), 1, "");
    write(
        root,
        "proc/100/numa_maps",
        "7f00 default anon=10 N0=6 N1=4 kernelpagesize_kB=4\n",
    );
    write(
        root,
        "proc/200/numa_maps",
        "7f00 bind:1 anon=2 N1=2 kernelpagesize_kB=2048\n",
    );
    proc_stat(root, [0; 4], [0; 4]);
    numastat(root, 0, 1000, 0);
    numastat(root, 1, 500, 7);

    let mut s = Sampler::start(fake_config(root), 100);
    proc_stat(root, [50, 100, 0, 0], [50, 0, 100, 0]);
    task(root, 100, 101, "worker one", (40, 10), 1, "");
    let tasks = s.sample();
    assert_eq!(tasks.len(), 3, "{tasks:?}");

    // The child exits and the worker migrates; pages grow on node 0.
    fs::remove_dir_all(root.join("proc/200")).unwrap();
    task(root, 100, 100, "main", (0, 0), 0, "");
    task(root, 100, 101, "worker one", (90, 10), 2, "");
    write(
        root,
        "proc/100/numa_maps",
        "7f00 default anon=30 N0=26 N1=4 kernelpagesize_kB=4\n",
    );
    proc_stat(root, [150, 200, 0, 0], [50, 0, 200, 0]);
    numastat(root, 0, 1300, 0);
    numastat(root, 1, 500, 57);
    assert_eq!(s.sample().len(), 2);

    let out = tempfile::tempdir().unwrap();
    let e = s.finish(2.0, Some(4.0), Some((out.path(), "series/run.json".into())));
    assert_eq!(e.samples, 2);
    assert_eq!(e.series_file.as_deref(), Some("series/run.json"));

    let cpu = e.cpu.value().expect("cpu measured");
    assert_eq!(cpu.busy_per_cpu[&0], 0.75);
    assert_eq!(cpu.busy_per_cpu[&1], 1.0);
    assert_eq!(cpu.busy_per_cpu[&2], 0.0);
    assert!(
        !cpu.busy_per_cpu.contains_key(&3),
        "no tick passed on CPU 3"
    );
    assert_eq!(cpu.run_share_mean, Some(0.5));

    let worker = e.threads.iter().find(|t| t.tid == 101).unwrap();
    assert_eq!(worker.comm, "worker one");
    assert_eq!(worker.cpus_seen.to_string(), "1-2");
    assert_eq!(worker.migrations, 1);
    assert!((worker.user_secs - 0.9).abs() < 1e-9, "{worker:?}");
    assert_eq!(e.threads[0].tid, 101, "busiest first");
    let child = e.threads.iter().find(|t| t.tid == 200).unwrap();
    assert_eq!((child.samples, child.busy), (1, None));
    // Thread 101 and the child shared CPU 1 in the first sample.
    assert_eq!(worker.shared_cpu_samples, 1);

    let pages = e.pages.value().expect("pages measured");
    // The peak is the sample with the most bytes: the first, with the child's huge pages.
    assert_eq!(pages.peak_bytes_per_node[&0], 6 * 4096);
    assert_eq!(pages.peak_bytes_per_node[&1], 4 * 4096 + 2 * 2048 * 1024);
    assert_eq!(pages.last_bytes_per_node[&0], 26 * 4096);
    assert_eq!(pages.last_bytes_per_node[&1], 4 * 4096);
    assert_eq!(pages.samples, 2);
    let numa = e.numastat.value().unwrap();
    assert_eq!((numa[&0].numa_hit, numa[&1].other_node), (300, 50));
    assert_eq!(e.other_node_pages(), Some(50));
    assert_eq!(e.bandwidth.why(), Some("counters were not asked for"));

    let series: Series = scalescope_model::evidence::read_series(out.path(), "series/run.json")
        .expect("series file readable");
    assert_eq!(series.samples.len(), 2);
    let first = &series.samples[0];
    assert_eq!(first.cpu_busy[&0], 0.5);
    assert_eq!(
        first.bytes_per_node.as_ref().unwrap()[&1],
        4 * 4096 + 2 * 2048 * 1024
    );
    assert_eq!(
        series.samples[1].numastat.as_ref().unwrap()[&0].numa_hit,
        300
    );
}

#[test]
fn a_task_vanishing_between_listing_and_reading_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    task(root, 100, 100, "main", (1, 1), 0, "");
    // A listed thread whose files are gone, and a stat cut short.
    fs::create_dir_all(root.join("proc/100/task/102")).unwrap();
    write(root, "proc/100/task/103/stat", "103 (x) R 1");
    let (tasks, processes) = procfs::read_tree(root, 100);
    assert_eq!(tasks.len(), 1);
    assert_eq!(processes, vec![100]);
    // The run gone entirely: nothing read, nothing panics.
    let (tasks, processes) = procfs::read_tree(root, 999);
    assert!(tasks.is_empty() && processes.is_empty());
    let mut s = Sampler::start(fake_config(root), 999);
    assert!(s.sample().is_empty());
    let e = s.finish(1.0, None, None);
    assert!(
        e.pages.why().unwrap().contains("numa_maps"),
        "{:?}",
        e.pages
    );
}

#[test]
fn missing_node_directory_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let s = Sampler::start(fake_config(dir.path()), 1);
    let e = s.finish(1.0, None, None);
    assert!(
        e.numastat
            .why()
            .unwrap()
            .contains("sys/devices/system/node"),
        "{:?}",
        e.numastat
    );
    assert!(e.cpu.why().is_some());
    assert!(e.pages.why().unwrap().contains("before its first sample"));
}

fn resctrl_tree(root: &Path, features: &str, cpuinfo_flags: &str) {
    write(
        root,
        "proc/mounts",
        "proc /proc proc rw 0 0\nresctrl /sys/fs/resctrl resctrl rw,relatime 0 0\n",
    );
    write(
        root,
        "proc/cpuinfo",
        &format!("processor\t: 0\nflags\t\t: fpu {cpuinfo_flags}\n"),
    );
    write(root, "sys/fs/resctrl/info/L3_MON/mon_features", features);
}

fn mbm(root: &Path, pid: u32, domain: &str, total: u64, local: u64) {
    let d = format!("sys/fs/resctrl/mon_groups/scalescope-{pid}/mon_data/mon_L3_{domain}");
    write(root, &format!("{d}/mbm_total_bytes"), &format!("{total}\n"));
    write(root, &format!("{d}/mbm_local_bytes"), &format!("{local}\n"));
}

#[test]
fn resctrl_group_holds_the_run_and_splits_local_from_remote() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    resctrl_tree(
        root,
        "llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n",
        "cqm_mbm_total",
    );
    // The kernel would create mon_data when the group is made; the fake has it ready.
    mbm(root, 4242, "00", 1_000, 900);
    mbm(root, 4242, "01", 0, 0);
    let mut r = Resctrl::open(root, 4242).expect("resctrl opens");
    let group = root.join("sys/fs/resctrl/mon_groups/scalescope-4242");
    assert_eq!(fs::read_to_string(group.join("tasks")).unwrap(), "4242");
    r.follow(&[4243]);
    assert_eq!(fs::read_to_string(group.join("tasks")).unwrap(), "4243");
    let before = r.read();
    assert_eq!(before.len(), 2);
    assert_eq!(
        (before[0].total_bytes, before[0].local_bytes),
        (1_000, Some(900))
    );

    // Through the sampler: totals are end - start, remote = total - local.
    let mut s = Sampler::start(
        SamplerConfig {
            counters: true,
            ..fake_config(root)
        },
        4242,
    );
    mbm(root, 4242, "00", 101_000, 60_900);
    mbm(root, 4242, "01", 5_000, 5_000);
    s.sample();
    let e = s.finish(2.0, None, None);
    let bw = e.bandwidth.value().expect("bandwidth measured");
    assert_eq!(bw.source, "resctrl-mbm");
    let d0 = &bw.domains[0];
    assert_eq!(
        (d0.total_bytes, d0.local_bytes, d0.remote_bytes),
        (100_000, Some(60_000), Some(40_000))
    );
    assert_eq!(d0.mean_bytes_per_sec, 50_000.0);
    assert!(d0.peak_bytes_per_sec > 0.0);
    assert_eq!(bw.cross_node_bytes, Some(40_000));
    // The per-run PMU counters refer to a PID that does not exist here: refused, with the reason.
    assert!(e.pmu.iter().all(|c| c
        .count
        .why()
        .is_some_and(|w| w.starts_with("perf_event_open"))));
    drop(r);
}

#[test]
fn resctrl_refusals_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "proc/mounts", "proc /proc proc rw 0 0\n");
    write(
        root,
        "proc/cpuinfo",
        "flags\t: fpu cqm_mbm_total cqm_mbm_local\n",
    );
    let e = Resctrl::open(root, 1).unwrap_err();
    assert!(e.contains("though the CPU has MBM"), "{e}");
    write(root, "proc/cpuinfo", "flags\t: fpu\n");
    let e = Resctrl::open(root, 1).unwrap_err();
    assert!(e.contains("does not report MBM"), "{e}");
    resctrl_tree(root, "llc_occupancy\n", "");
    let e = Resctrl::open(root, 1).unwrap_err();
    assert!(
        e.contains("no mbm_total_bytes (only: llc_occupancy)"),
        "{e}"
    );
}

fn pmu(
    root: &Path,
    name: &str,
    kind: u32,
    cpumask: &str,
    formats: &[(&str, &str)],
    events: &[(&str, &str)],
) {
    let d = format!("sys/bus/event_source/devices/{name}");
    write(root, &format!("{d}/type"), &format!("{kind}\n"));
    write(root, &format!("{d}/cpumask"), &format!("{cpumask}\n"));
    for (f, v) in formats {
        write(root, &format!("{d}/format/{f}"), &format!("{v}\n"));
    }
    for (e, v) in events {
        write(root, &format!("{d}/events/{e}"), &format!("{v}\n"));
    }
}

#[test]
fn intel_imc_events_come_from_sysfs_descriptions() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "sys/bus/event_source/devices/cpu/type", "4\n");
    for n in 0..2 {
        pmu(
            root,
            &format!("uncore_imc_{n}"),
            14 + n,
            "0,24",
            &[("event", "config:0-7"), ("umask", "config:8-15")],
            &[
                ("cas_count_read", "event=0x04,umask=0x03"),
                ("cas_count_read.scale", "6.103515625e-5"),
                ("cas_count_read.unit", "MiB"),
                ("cas_count_write", "event=0x04,umask=0x0c"),
                ("cas_count_write.scale", "6.103515625e-5"),
                ("cas_count_write.unit", "MiB"),
            ],
        );
    }
    let (source, planned) = uncore::discover(root).unwrap();
    assert_eq!(source, "perf-uncore-imc");
    assert_eq!(planned.len(), 4);
    assert_eq!(planned[0].event.kind, 14);
    assert_eq!(planned[0].event.config, 0x0304);
    assert_eq!(planned[1].event.config, 0x0c04);
    assert!((planned[0].bytes_per_count - 64.0).abs() < 1e-9);
    assert_eq!(planned[0].cpus, vec![0, 24]);
    // PMU type 14 does not exist on the machine running the test: the open is refused
    // and the reason names the PMU and the CPU.
    let e = uncore::Uncore::open(root).unwrap_err();
    assert!(
        e.starts_with("uncore_imc_0 on CPU 0: perf_event_open"),
        "{e}"
    );
}

#[test]
fn intel_free_running_and_amd_umc_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    pmu(
        root,
        "uncore_imc_free_running_0",
        20,
        "0",
        &[("event", "config:0-7"), ("umask", "config:8-15")],
        &[
            ("data_read", "event=0xff,umask=0x20"),
            ("data_read.scale", "6.103515625e-5"),
            ("data_read.unit", "MiB"),
        ],
    );
    let (_, planned) = uncore::discover(root).unwrap();
    assert_eq!((planned.len(), planned[0].event.config), (1, 0x20ff));

    let amd = tempfile::tempdir().unwrap();
    for n in 0..3 {
        pmu(
            amd.path(),
            &format!("amd_umc_{n}"),
            30,
            "0,64",
            &[("event", "config:0-7"), ("rdwrmask", "config:8-9")],
            &[],
        );
    }
    let (source, planned) = uncore::discover(amd.path()).unwrap();
    assert_eq!(source, "perf-amd-umc");
    assert_eq!(planned.len(), 3);
    assert_eq!(
        (planned[0].event.config, planned[0].bytes_per_count),
        (0x0a, 64.0)
    );
    assert_eq!(planned[2].cpus, vec![0, 64]);

    let none = tempfile::tempdir().unwrap();
    write(
        none.path(),
        "sys/bus/event_source/devices/software/type",
        "1\n",
    );
    let e = uncore::discover(none.path()).unwrap_err();
    assert!(e.contains("(found: software)"), "{e}");
}

#[test]
fn this_machine_either_measures_bandwidth_or_says_why() {
    // Whatever this machine is, the answer is a working source or every reason.
    match scalescope_sampler::bandwidth::open(Path::new("/"), std::process::id()) {
        Ok(source) => assert!(!source.name().is_empty()),
        Err(why) => {
            assert!(why.starts_with("resctrl MBM: "), "{why}");
            assert!(
                why.contains("; uncore memory-controller counters: "),
                "{why}"
            );
        }
    }
    let measured = matches!(
        scalescope_sampler::perf::RunCounters::open(Path::new("/"), std::process::id()).read()[0]
            .count,
        Measured::Measured(_)
    );
    let _ = measured;
}
