//! What a person sees while runs go by: a progress bar with ETA on stderr, hidden
//! when stderr is not a terminal or with `--quiet`; and a spinner with the elapsed
//! time for in-process work that runs longer than two seconds.

use indicatif::{ProgressBar, ProgressStyle};
use scalescope_model::plan::Job;
use scalescope_sweep::engine::Progress;
use scalescope_sweep::exec::Outcome;

pub struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
    pub fn new(hidden: bool) -> Bar {
        Bar {
            bar: (!hidden).then(ProgressBar::hidden),
        }
    }
}

impl Progress for Bar {
    fn begin(&mut self, total: usize, done: usize) {
        if let Some(b) = &mut self.bar {
            *b = ProgressBar::new(total as u64);
            b.set_style(
                ProgressStyle::with_template("{bar:30} {pos}/{len} runs, ETA {eta} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.set_position(done as u64);
        }
    }
    fn job_started(&mut self, job: &Job) {
        if let Some(b) = &self.bar {
            let warm = if job.warmup { " (warm-up)" } else { "" };
            b.set_message(format!("{}{warm}", job.point));
        }
    }
    fn job_finished(&mut self, _job: &Job, _outcome: &Outcome) {
        if let Some(b) = &self.bar {
            b.inc(1);
        }
    }
    fn finish(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// Set once from `--quiet`: no progress display at all.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns progress displays off for the rest of the process (`-q`).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
}

/// Whether a progress display may draw: on a terminal, not `-q`, not `TERM=dumb`.
/// Nothing drawn uses colour, so `NO_COLOR` needs no more than that.
pub fn may_draw() -> bool {
    use std::io::IsTerminal as _;
    !QUIET.load(std::sync::atomic::Ordering::Relaxed)
        && std::io::stderr().is_terminal()
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

/// How long in-process work runs before a spinner appears.
const SPINNER_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// A spinner with the elapsed time on stderr for in-process work that takes more
/// than two seconds; cleared when dropped (drop it before printing results).
pub struct Working {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Starts the spinner for `what` (`npb ep class S`), if one may draw.
pub fn working(what: &str) -> Working {
    if !may_draw() {
        return Working {
            stop: None,
            thread: None,
        };
    }
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let what = what.to_string();
    let thread = std::thread::spawn(move || {
        if rx.recv_timeout(SPINNER_AFTER).is_ok() {
            return;
        }
        let bar = ProgressBar::new_spinner().with_elapsed(SPINNER_AFTER);
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}: {elapsed} (Ctrl-C stops)")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(what);
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        let _ = rx.recv();
        bar.finish_and_clear();
    });
    Working {
        stop: Some(tx),
        thread: Some(thread),
    }
}

impl Drop for Working {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
