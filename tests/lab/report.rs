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

/// Checks that fail for a reason found by the lab and not fixed yet: (the start of
/// the check's name, why). A failure of one of these is printed as KNOWN and counted
/// apart, without failing the lab; remove the entry when the fix lands.
pub const KNOWN_ISSUES: [(&str, &str); 0] = [];

/// The known issue a failed check is, if any.
pub fn known_issue(c: &Check) -> Option<&'static str> {
    if c.ok {
        return None;
    }
    KNOWN_ISSUES
        .iter()
        .find(|(prefix, _)| c.name.starts_with(prefix))
        .map(|(_, why)| *why)
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
    /// Failures that are not known issues.
    pub fn failed(&self) -> usize {
        self.checks
            .iter()
            .filter(|c| !c.ok && known_issue(c).is_none())
            .count()
    }

    pub fn known(&self) -> usize {
        self.checks
            .iter()
            .filter(|c| known_issue(c).is_some())
            .count()
    }
}

/// The full report.
pub fn render(shapes: &[ShapeReport], total_secs: f64) -> String {
    let mut out = String::new();
    let checks: usize = shapes.iter().map(|s| s.checks.len()).sum();
    let failed: usize = shapes.iter().map(ShapeReport::failed).sum();
    let known: usize = shapes.iter().map(ShapeReport::known).sum();
    let _ = writeln!(
        out,
        "scalescope lab: {} shapes, {checks} checks, {failed} failed, {known} known issues showed, {total_secs:.0} s",
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
            let verdict = match (c.ok, c.not_applicable, known_issue(c)) {
                (_, true, _) => "n/a ",
                (true, false, _) => "ok  ",
                (false, false, Some(_)) => "KNOWN",
                (false, false, None) => "FAIL",
            };
            let _ = writeln!(out, "  {verdict} {}: {}", c.name, c.detail);
            if let Some(why) = known_issue(c) {
                let _ = writeln!(out, "        known issue: {why}");
            }
        }
        if let Some(t) = &s.tail {
            let _ = writeln!(out, "  --- guest console tail ---\n{t}");
        }
    }
    out
}
