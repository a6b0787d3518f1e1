//! Probes: a short one-thread run of a study's kernel at a small size, timed, so
//! the plan can size the real inputs for the budget. The real probe runs this
//! scalescope executable as a child (a command with `--json`); tests give a fake
//! with fixed times, so sizing is tested exactly.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::StudyError;

/// What one probe measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// The kernel alone (the command's `setup.kernel_secs`, else its `seconds`).
    pub kernel_secs: f64,
    /// The whole command: input built, kernel, verification.
    pub wall_secs: f64,
}

/// Times a scalescope command (its arguments, `--json` among them).
pub trait Probe {
    /// # Errors
    /// The command failed or printed no time.
    fn time(&mut self, args: &[String]) -> Result<Timing, StudyError>;
}

/// Runs this executable as a child, reads its JSON document.
pub struct ChildProbe {
    pub exe: PathBuf,
}

impl Probe for ChildProbe {
    fn time(&mut self, args: &[String]) -> Result<Timing, StudyError> {
        let command = format!("scalescope {}", args.join(" "));
        let fail = |detail: String| StudyError::Probe {
            command: command.clone(),
            detail,
        };
        let start = Instant::now();
        let out = Command::new(&self.exe)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| fail(e.to_string()))?;
        let wall_secs = start.elapsed().as_secs_f64();
        if !out.status.success() {
            return Err(fail(format!(
                "exited with {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| fail(format!("printed no JSON document: {e}")))?;
        let kernel_secs =
            kernel_secs(&doc).ok_or_else(|| fail("no kernel time in its document".into()))?;
        Ok(Timing {
            kernel_secs,
            wall_secs,
        })
    }
}

/// The kernel's seconds in a command's document: `setup.kernel_secs`, else
/// `report.setup.kernel_secs`, else `seconds`.
pub fn kernel_secs(doc: &serde_json::Value) -> Option<f64> {
    [
        "/setup/kernel_secs",
        "/report/setup/kernel_secs",
        "/seconds",
        "/report/seconds",
    ]
    .iter()
    .find_map(|p| doc.pointer(p).and_then(serde_json::Value::as_f64))
    .filter(|s| s.is_finite() && *s >= 0.0)
}

/// A probe with fixed answers, in the order asked (tests).
pub struct FixedProbe {
    pub answers: Vec<Timing>,
    pub asked: Vec<Vec<String>>,
}

impl Probe for FixedProbe {
    fn time(&mut self, args: &[String]) -> Result<Timing, StudyError> {
        self.asked.push(args.to_vec());
        let i = self.asked.len() - 1;
        self.answers
            .get(i)
            .or(self.answers.last())
            .copied()
            .ok_or_else(|| StudyError::Probe {
                command: args.join(" "),
                detail: "no fixed answer".into(),
            })
    }
}

/// `args` as owned strings.
pub fn words(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}
