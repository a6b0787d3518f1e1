//! The sampler on a thread of its own, watching this process: for built-in
//! workloads run in-process (`scalescope mem stream`), where no executor waits
//! beside the run. Its own thread is among those it sees.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use scalescope_results::evidence::RunEvidence;
use scalescope_topo::CpuSet;

use crate::{Sampler, SamplerConfig};

/// A running background sampler.
pub struct Background {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<RunEvidence>,
}

impl Background {
    /// Starts sampling this process every `interval` on `cpus` (the CPUs its
    /// workers may use).
    pub fn start(interval: Duration, cpus: CpuSet) -> Background {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let t0 = Instant::now();
            let mut s = Sampler::start(SamplerConfig::live(interval, cpus), std::process::id());
            while !flag.load(Ordering::SeqCst) {
                std::thread::sleep(s.until_due().min(Duration::from_millis(10)));
                if s.due() && !flag.load(Ordering::SeqCst) {
                    s.sample();
                }
            }
            s.finish(t0.elapsed().as_secs_f64(), None, None)
        });
        Background { stop, handle }
    }

    /// Stops sampling and sums up; `None` if the sampling thread panicked.
    pub fn finish(self) -> Option<RunEvidence> {
        self.stop.store(true, Ordering::SeqCst);
        self.handle.join().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_this_process_until_stopped() {
        let b = Background::start(
            Duration::from_millis(10),
            CpuSet::parse_list("0").unwrap_or_default(),
        );
        let block = vec![7u8; 8 << 20];
        std::thread::sleep(Duration::from_millis(60));
        let e = b
            .finish()
            .unwrap_or_else(|| panic!("sampler thread panicked"));
        assert!(e.samples >= 2, "{}", e.samples);
        let peak: u64 = e.peak_bytes_per_node().map_or(0, |m| m.values().sum());
        assert!(peak >= 8 << 20, "{peak}");
        assert_eq!(block[100], 7);
    }
}
