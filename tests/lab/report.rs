//! The lab's verdicts: one line per check, grouped by shape, written to
//! target/lab/report.txt and printed as a summary.

use std::fmt::Write;

/// One check's verdict.
#[derive(Debug, Clone)]
pub struct Check {
    pub name: String,
    pub ok: bool,
    /// Nothing to check here (said why in `detail`); not a pass, not a failure.
    pub not_applicable: bool,
    pub detail: String,
}

impl Check {
    pub fn new(name: impl Into<String>, result: Result<String, String>) -> Check {
        let (ok, detail) = match result {
            Ok(d) => (true, d),
            Err(d) => (false, d),
        };
        Check {
            name: name.into(),
            ok,
            not_applicable: false,
            detail,
        }
    }

    /// A check that has nothing to look at on this build, and says why.
    pub fn not_applicable(name: impl Into<String>, why: String) -> Check {
        Check {
            name: name.into(),
            ok: true,
            not_applicable: true,
            detail: why,
        }
    }
}

/// One shape's boot and checks.
pub struct ShapeReport {
    pub shape: String,
    pub description: String,
    pub secs: f64,
    /// Where the guest's time went.
    pub timing: String,
    pub checks: Vec<Check>,
    /// The console's last lines and QEMU's stderr, kept when something failed.
    pub tail: Option<String>,
}

impl ShapeReport {
    pub fn failed(&self) -> usize {
        self.checks.iter().filter(|c| !c.ok).count()
    }
}

/// The full report.
pub fn render(shapes: &[ShapeReport], total_secs: f64) -> String {
    let mut out = String::new();
    let checks: usize = shapes.iter().map(|s| s.checks.len()).sum();
    let failed: usize = shapes.iter().map(ShapeReport::failed).sum();
    let _ = writeln!(
        out,
        "scalescope lab: {} shapes, {checks} checks, {failed} failed, {total_secs:.0} s",
        shapes.len()
    );
    for s in shapes {
        let _ = writeln!(
            out,
            "\nshape {} ({}), {:.0} s: {} checks, {} failed",
            s.shape,
            s.description,
            s.secs,
            s.checks.len(),
            s.failed()
        );
        let _ = writeln!(out, "  ({})", s.timing);
        for c in &s.checks {
            let verdict = match (c.ok, c.not_applicable) {
                (_, true) => "n/a ",
                (true, false) => "ok  ",
                (false, false) => "FAIL",
            };
            let _ = writeln!(out, "  {verdict} {}: {}", c.name, c.detail);
        }
        if let Some(t) = &s.tail {
            let _ = writeln!(out, "  --- guest console tail ---\n{t}");
        }
    }
    out
}
