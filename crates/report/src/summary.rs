//! The answer first: the report's opening section names the machine in one line
//! and, per workload, the diagnosis in a sentence with its evidence and the one
//! chart that shows it. Also the workload titles the sections use (workload and
//! parameters, never file paths). The finding chosen is the analysis's own; this
//! module only picks which one leads.

use std::fmt::Write as _;

use scalescope_analysis::{Analysis, Finding, FindingKind};

use crate::html::confidence_text;
use crate::svg::escape;
use crate::ResultSet;

/// A workload and its parameters (`ep (class=W)`), or the program's command line,
/// plus what was swept (`3 placements, 1–96 threads`).
pub fn workload_title(set: &ResultSet) -> String {
    let cmd = &set.header.command;
    let what = match &cmd.workload {
        Some(w) if cmd.params.is_empty() => w.clone(),
        Some(w) => {
            let params: Vec<String> = cmd.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{w} ({})", params.join(", "))
        }
        None => {
            let mut argv = cmd.argv.clone();
            if let Some(first) = argv.first_mut() {
                if let Some(base) = std::path::Path::new(first.as_str()).file_name() {
                    *first = base.to_string_lossy().into_owned();
                }
            }
            let text = argv.join(" ");
            if text.chars().count() > 60 {
                format!("{}…", text.chars().take(59).collect::<String>())
            } else {
                text
            }
        }
    };
    let plan = &set.header.plan;
    let (lo, hi) = (
        plan.threads.iter().min().copied().unwrap_or(0),
        plan.threads.iter().max().copied().unwrap_or(0),
    );
    let placements = match plan.placements.len() {
        1 => plan.placements[0].to_string(),
        n => format!("{n} placements"),
    };
    format!("{what} — {placements}, {lo}–{hi} threads")
}

/// The machine in one line: topology, CPU model, virtualization, host.
pub fn machine_line(set: &ResultSet) -> String {
    let m = &set.header.machine;
    let mut parts = vec![m.topology.summary()];
    if let Some(model) = &m.cpu_model {
        parts.push(model.clone());
    }
    match &m.virtualization {
        Some(v) if v.virtual_machine => parts.push(
            v.hypervisor
                .as_ref()
                .map(|h| format!("virtual machine ({h})"))
                .unwrap_or_else(|| "virtual machine".into()),
        ),
        Some(_) => parts.push("bare metal".into()),
        None if set.header.command.kind == "imported" => {
            parts.push("virtualization: unknown (imported)".into())
        }
        None => {}
    }
    parts.push(format!("host {}", m.hostname));
    parts.join(" · ")
}

/// The finding that leads: a warning before a notice before information, and
/// among them what changes the scaling (a knee, a ceiling, a placement) before a
/// summary of efficiency; never a note about the measurement itself.
pub fn diagnosis(a: &Analysis) -> Option<&Finding> {
    let rank_kind = |k: FindingKind| match k {
        FindingKind::Knee => 0,
        FindingKind::BandwidthSaturation => 1,
        FindingKind::Placement => 2,
        FindingKind::SmtYield => 3,
        FindingKind::Baseline => 4,
        FindingKind::Efficiency => 5,
        FindingKind::Model => 6,
        _ => 9,
    };
    let rank_sev = |s: &str| match s {
        "warning" => 0,
        "notice" => 1,
        _ => 2,
    };
    a.findings
        .iter()
        .filter(|f| rank_kind(f.kind) < 9)
        .min_by_key(|f| {
            (
                rank_kind(f.kind) > 5,
                rank_sev(&f.severity),
                rank_kind(f.kind),
            )
        })
}

/// The opening section: the machine once (or each distinct one), then per set
/// its diagnosis beside its speedup chart.
pub fn summary_html(sets: &[ResultSet]) -> String {
    let mut s = String::from(r#"<section id="summary"><h2>The answer</h2>"#);
    let mut machines: Vec<String> = sets.iter().map(machine_line).collect();
    machines.dedup();
    for m in &machines {
        let _ = write!(s, r#"<p class="machine">Machine: {}</p>"#, escape(m));
    }
    for (i, set) in sets.iter().enumerate() {
        let _ = write!(
            s,
            r##"<div class="answer"><div class="diag"><h3><a href="#w{}">{}</a></h3>"##,
            i + 1,
            escape(&workload_title(set))
        );
        s += &diagnosis_html(diagnosis(&set.analysis));
        let basis = scalescope_analysis::basis_rule::statement(
            &set.analysis.basis,
            &set.header,
            &set.records,
        );
        let _ = write!(s, r#"<p class="basis">Speedups: {}</p>"#, escape(&basis));
        let chart = crate::speedup_chart(set, true).to_svg();
        let _ = write!(
            s,
            r#"</div><figure class="lead">{chart}<figcaption>Speedup on a log2 thread axis; shaded lanes are each placement's topology regions, dashed lines the knees.</figcaption></figure></div>"#
        );
    }
    s.push_str("</section>");
    s
}

/// The leading finding as a sentence, its first evidence, confidence and advice.
fn diagnosis_html(f: Option<&Finding>) -> String {
    let Some(f) = f else {
        return r#"<p class="sentence">No finding: the analysis had too few points to say anything.</p>"#.into();
    };
    let mut s = format!(
        r#"<p class="sentence {}">{}</p><ul class="evidence">"#,
        escape(&f.severity),
        escape(&capitalized(&f.title))
    );
    for e in f.evidence.iter().take(3) {
        let _ = write!(s, "<li>{}</li>", escape(&e.text));
    }
    let _ = write!(
        s,
        "</ul><p><small>confidence: {}</small></p>",
        escape(&confidence_text(&f.confidence))
    );
    if let Some(a) = &f.advice {
        let _ = write!(s, "<p>Try: {}</p>", escape(a));
    }
    s
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
