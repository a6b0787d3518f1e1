//! Booting one shape: the QEMU command line, a time limit, and a guest that dies with
//! the test (killed on drop, on timeout, and by the kernel if this process dies first).

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::shapes::Shape;

/// What a boot produced: the serial console and how it ended.
pub struct Boot {
    pub console: String,
    pub stderr: String,
    pub secs: f64,
    /// None when the guest powered off by itself; the reason otherwise.
    pub failure: Option<String>,
}

/// The QEMU arguments for a shape. In the guest, transparent huge pages are off (so
/// numastat counts 4 KiB pages) and automatic NUMA balancing is off (so pages stay
/// where the policy under test put them). `no_timer_check`: on a loaded host the
/// emulated timer can look broken to the kernel's boot-time check, which then panics
/// ("IO-APIC + timer doesn't work!"). `norandmaps`: every scalescope process maps the
/// binary at the same address, so TCG reuses the code it translated for the previous
/// one (its translations are keyed by guest address) instead of translating the
/// binary again for each of the guest's hundreds of short processes.
pub fn args(shape: &Shape, kernel: &Path, initrd: &Path) -> Vec<String> {
    let mut a: Vec<String> = [
        "-accel",
        "tcg,thread=multi",
        "-cpu",
        "Skylake-Server-v1",
        "-nodefaults",
        "-no-user-config",
        "-display",
        "none",
        "-serial",
        "stdio",
        "-no-reboot",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let nodes = shape.nodes();
    a.push("-m".into());
    a.push(format!("{}M", shape.node_mib * nodes));
    a.push("-smp".into());
    a.push(format!(
        "{},sockets={},cores={},threads={}",
        shape.cpus(),
        shape.sockets,
        shape.cores,
        shape.threads
    ));
    for n in 0..nodes {
        a.push("-object".into());
        a.push(format!(
            "memory-backend-ram,id=m{n},size={}M",
            shape.node_mib
        ));
        a.push("-numa".into());
        let mut node = format!("node,nodeid={n},memdev=m{n}");
        if n < shape.sockets {
            let per = shape.cpus_per_socket();
            node += &format!(",cpus={}-{}", n * per, (n + 1) * per - 1);
        }
        a.push(node);
    }
    for i in 0..nodes {
        for j in 0..nodes {
            if i != j {
                a.push("-numa".into());
                a.push(format!("dist,src={i},dst={j},val={}", shape.distance(i, j)));
            }
        }
    }
    a.push("-kernel".into());
    a.push(kernel.display().to_string());
    a.push("-initrd".into());
    a.push(initrd.display().to_string());
    a.push("-append".into());
    a.push(format!(
        "console=ttyS0 quiet loglevel=1 panic=-1 no_timer_check transparent_hugepage=never numa_balancing=disable norandmaps {}",
        shape.script_args()
    ));
    a
}

/// A QEMU process that is killed when this value is dropped.
struct Guest(Child);

impl Drop for Guest {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn pipe_reader(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = r.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Boots the shape and waits for it to power off, at most `limit`.
pub fn boot(shape: &Shape, kernel: &Path, initrd: &Path, limit: Duration) -> Boot {
    let start = Instant::now();
    let mut cmd = Command::new("qemu-system-x86_64");
    cmd.args(args(shape, kernel, initrd))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: prctl is async-signal-safe and touches only the child's own state; it
    // asks the kernel to kill QEMU when the thread that started it (this test) dies.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let mut guest = match cmd.spawn() {
        Ok(c) => Guest(c),
        Err(e) => {
            return Boot {
                console: String::new(),
                stderr: String::new(),
                secs: 0.0,
                failure: Some(format!("could not start qemu-system-x86_64: {e}")),
            }
        }
    };
    let out = guest.0.stdout.take().map(pipe_reader);
    let err = guest.0.stderr.take().map(pipe_reader);
    let mut failure = None;
    loop {
        match guest.0.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(status)) => {
                failure = Some(format!("qemu exited with {status}"));
                break;
            }
            Ok(None) if start.elapsed() > limit => {
                failure = Some(format!("no power-off within {} s; killed", limit.as_secs()));
                let _ = guest.0.kill();
                let _ = guest.0.wait();
                break;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => {
                failure = Some(format!("waiting for qemu: {e}"));
                break;
            }
        }
    }
    drop(guest);
    let join = |h: Option<std::thread::JoinHandle<String>>| {
        h.and_then(|h| h.join().ok()).unwrap_or_default()
    };
    Boot {
        console: join(out).replace('\r', ""),
        stderr: join(err),
        secs: start.elapsed().as_secs_f64(),
        failure,
    }
}
