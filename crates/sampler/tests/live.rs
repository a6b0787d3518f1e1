//! The sampler on this machine's real `/proc`: its page and CPU series checked
//! against what the kernel reports by other means (`VmRSS`, a thread's own CPU
//! clock), and a run whose processes come and go while it is read.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failed unwrap is a failed test

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use scalescope_sampler::{Sampler, SamplerConfig};
use scalescope_topo::CpuSet;

fn config() -> SamplerConfig {
    SamplerConfig {
        root: "/".into(),
        interval: Duration::from_millis(20),
        cpus: CpuSet::parse_list(&format!(
            "0-{}",
            std::thread::available_parallelism().map_or(1, |n| n.get()) - 1
        ))
        .unwrap(),
        counters: false,
    }
}

fn vm_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

fn thread_cpu_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes one timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn this_tid() -> u32 {
    std::fs::read_link("/proc/thread-self")
        .unwrap()
        .file_name()
        .and_then(|t| t.to_str()?.parse().ok())
        .unwrap()
}

#[test]
fn pages_and_thread_cpu_agree_with_the_kernel() {
    // 64 MiB touched: resident, on whatever nodes this machine has.
    let block = vec![1u8; 64 << 20];
    let done = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let spinner = {
        let done = done.clone();
        std::thread::spawn(move || {
            let start = Instant::now();
            let mut x = 0u64;
            while start.elapsed() < Duration::from_millis(400) {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            tx.send((this_tid(), thread_cpu_secs(), x)).unwrap();
            while !done.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let mut s = Sampler::start(config(), std::process::id());
    let (tid, own_cpu, _) = loop {
        std::thread::sleep(s.until_due());
        s.sample();
        if let Ok(v) = rx.try_recv() {
            break v;
        }
    };
    // One more sample while the spinner sleeps: its CPU time no longer moves.
    std::thread::sleep(Duration::from_millis(30));
    s.sample();
    let rss = vm_rss_bytes();
    let last = s.series().samples.last().unwrap().clone();
    done.store(true, Ordering::SeqCst);
    spinner.join().unwrap();

    let on_nodes: u64 = last
        .bytes_per_node
        .as_ref()
        .expect("numa_maps read")
        .values()
        .sum();
    assert!(
        on_nodes >= 64 << 20,
        "numa_maps shows {on_nodes} bytes, 64 MiB touched"
    );
    let diff = on_nodes.abs_diff(rss) as f64 / rss as f64;
    assert!(diff < 0.10, "numa_maps {on_nodes} vs VmRSS {rss}");

    let seen = last
        .threads
        .iter()
        .find(|t| t.tid == tid)
        .expect("spinner sampled");
    let sampled = seen.user_secs + seen.sys_secs;
    // /proc counts in clock ticks (10 ms at 100 Hz); the thread's own clock is exact.
    assert!(
        (sampled - own_cpu).abs() <= 0.03 + 0.05 * own_cpu,
        "sampled {sampled} s, the thread's clock {own_cpu} s"
    );
    let e = s.finish(1.0, None, None);
    let t = e.threads.iter().find(|t| t.tid == tid).unwrap();
    assert!(t.samples >= 2);
    assert!(e.cpu.value().is_some(), "{:?}", e.cpu);
    assert!(block.iter().step_by(4096).all(|b| *b == 1));
}

#[test]
fn survives_processes_exiting_mid_read() {
    let mut child = std::process::Command::new("sh")
        .args([
            "-c",
            "i=0; while [ $i -lt 200 ]; do (true; true) & i=$((i+1)); done; wait",
        ])
        .spawn()
        .unwrap();
    let mut s = Sampler::start(
        SamplerConfig {
            interval: Duration::from_millis(1),
            ..config()
        },
        child.id(),
    );
    let mut most = 0;
    while child.try_wait().unwrap().is_none() {
        let (_, processes) = scalescope_sampler::procfs::read_tree(Path::new("/"), child.id());
        most = most.max(processes.len());
        s.sample();
    }
    // The parent is gone too: a sample of nothing.
    s.sample();
    let e = s.finish(0.1, None, None);
    assert!(e.samples >= 2);
    assert!(most >= 1);
}

/// Reads `passes` times through `words` 8-byte words: `8 x words x passes` bytes
/// from memory (the array is far larger than any cache).
fn read_known_bytes(data: &[u64], passes: usize) -> u64 {
    let mut sum = 0u64;
    for _ in 0..passes {
        for chunk in data.chunks(8) {
            sum = sum.wrapping_add(chunk.iter().fold(0, |a, b| a ^ b));
        }
        sum = std::hint::black_box(sum);
    }
    sum
}

#[test]
fn bandwidth_source_reads_a_known_traffic_or_says_why() {
    let mut source = match scalescope_sampler::bandwidth::open(Path::new("/"), std::process::id()) {
        Ok(s) => s,
        Err(why) => {
            // This machine has no source: the refusal names every source and its reason.
            assert!(why.starts_with("resctrl MBM: "), "{why}");
            assert!(why.contains("uncore memory-controller counters: "), "{why}");
            eprintln!("bandwidth unavailable here: {why}");
            return;
        }
    };
    // A source exists: 512 MiB read 4 times must read as 2 GiB, within 10%
    // (plus whatever else the socket did, for socket-wide counters).
    let data: Vec<u64> = (0..(64u64 << 20)).collect();
    let expected = (data.len() * 8 * 4) as f64;
    source.follow(&[this_tid()]);
    let before = source.read();
    let _ = read_known_bytes(&data, 4);
    let after = source.read();
    let moved: f64 = after
        .iter()
        .map(|a| {
            let b = before
                .iter()
                .find(|b| b.domain == a.domain)
                .map_or(0, |b| b.total_bytes);
            a.total_bytes.saturating_sub(b) as f64
        })
        .sum();
    assert!(
        (moved - expected).abs() / expected < 0.10,
        "{} measured {moved} bytes for {expected} bytes read",
        source.name()
    );
}

/// A launched run's processes on a node are found by their mark, whoever started
/// them: a child with `SCALESCOPE_RUN=<mark>` (and its own child) is followed, a
/// child without it is not.
#[test]
fn marked_processes_are_followed_and_others_are_not() {
    use scalescope_sampler::{sample_until, Target};
    let mark = format!("test-{}", std::process::id());
    let spin = "x=0; while [ $x -lt 200000 ]; do x=$((x+1)); done";
    let mut marked = std::process::Command::new("sh")
        .args(["-c", &format!("sh -c '{spin}'; {spin}")])
        .env("SCALESCOPE_RUN", &mark)
        .spawn()
        .unwrap();
    let mut other = std::process::Command::new("sh")
        .args(["-c", spin])
        .spawn()
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stopper = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            // Long enough for three samples on a loaded machine (at 300 ms a CI
            // machine under load took one).
            std::thread::sleep(Duration::from_millis(1000));
            stop.store(true, Ordering::SeqCst);
        })
    };
    let mut ready = false;
    let (evidence, series) = sample_until(config(), Target::Marked(mark), &stop, || ready = true);
    stopper.join().unwrap();
    let marked_pid = marked.id();
    let other_pid = other.id();
    let _ = marked.kill();
    let _ = other.kill();
    let _ = marked.wait();
    let _ = other.wait();
    assert!(ready);
    assert!(evidence.samples >= 3, "{}", evidence.samples);
    let pids: Vec<u32> = evidence.threads.iter().map(|t| t.pid).collect();
    assert!(pids.contains(&marked_pid), "{pids:?}");
    // Its child, started by it, is followed too (two processes of the run).
    assert!(pids.iter().any(|&p| p != marked_pid), "{pids:?}");
    assert!(!pids.contains(&other_pid), "{pids:?}");
    assert_eq!(series.samples.len(), evidence.samples);
}
