//! `compare` for a terminal: both sides named, then one row per shared point with
//! each side's performance (in the basis's own unit), the ratio and its p-value.

use std::fmt::Write as _;

use scalescope_analysis::compare::Comparison;
use scalescope_analysis::Basis;

/// The comparison of `a` (labelled `a_label`) and `b` as a table.
/// Control characters a label or a name carries are written as escapes
/// ([`crate::terminal_text`]).
pub fn text(c: &Comparison, a_label: &str, b_label: &str, basis: &Basis) -> String {
    crate::terminal_text(&text_raw(c, a_label, b_label, basis))
}

/// What the public function returns, before its control characters are escaped.
fn text_raw(c: &Comparison, a_label: &str, b_label: &str, basis: &Basis) -> String {
    let unit = match basis {
        Basis::Time => "runs/s".to_string(),
        Basis::Metric { name, .. } => name.clone(),
    };
    // Column headers carry the unit; a long metric name is cut to fit them.
    let unit: String = unit.chars().take(10).collect();
    let mut out = format!(
        "A: {a_label} ({})\nB: {b_label} ({})\nperformance: {}, in {unit}; ratio = B / A (above 1: B is better)\n\n",
        c.a_machine,
        c.b_machine,
        basis.label()
    );
    let _ = writeln!(
        out,
        "{:<14} {:<12} {:>7} {:>12} {:>12} {:>8} {:>9}  significant",
        "placement",
        "mem",
        "threads",
        format!("A {unit}"),
        format!("B {unit}"),
        "B/A",
        "p"
    );
    for r in &c.rows {
        let _ = writeln!(
            out,
            "{:<14} {:<12} {:>7} {:>12.5} {:>12.5} {:>8.3} {:>9}  {}",
            r.point.placement.to_string(),
            r.point.mem.to_string(),
            r.point.threads,
            r.a_perf,
            r.b_perf,
            r.ratio,
            r.p_value.map(|p| format!("{p:.4}")).unwrap_or("-".into()),
            if r.significant { "yes" } else { "no" }
        );
    }
    for p in &c.only_in_a {
        let _ = writeln!(out, "only in A: {p}");
    }
    for p in &c.only_in_b {
        let _ = writeln!(out, "only in B: {p}");
    }
    out
}
