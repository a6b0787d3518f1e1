//! What a person sees while runs go by: a progress bar with ETA on stderr, hidden
//! when stderr is not a terminal or with `--quiet`.

use indicatif::{ProgressBar, ProgressStyle};
use scalescope_results::plan::Job;
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
