//! The answer first: the report's opening section names the machine in one line
//! and, per workload, the diagnosis in a sentence with its evidence and the one
//! chart that shows it. Also the workload titles the sections use (workload and
//! parameters, never file paths). The finding chosen is the analysis's own; this
//! module only picks which one leads.

use scalescope_analysis::finding::EvidenceItem;
use scalescope_analysis::{Analysis, Finding, FindingKind, Severity};

use crate::html::confidence_text;
use crate::markup::{el, Markup};
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

/// The finding that leads: the one that explains the most speedup lost
/// ([`speedup_lost`]); where none accounts for a loss, a warning before a notice
/// before information, and among them what changes the scaling (a knee, a ceiling,
/// a placement) before a summary of efficiency. Never a note about the measurement
/// itself: those stand beside the answer (`quality_html`).
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
    let rank_sev = |s: Severity| match s {
        Severity::Warning => 0,
        Severity::Notice => 1,
        Severity::Info => 2,
    };
    let eligible = || a.findings.iter().filter(|f| rank_kind(f.kind) < 9);
    let costliest = eligible()
        .filter_map(|f| Some((f, speedup_lost(a, f).filter(|l| *l > 0.0)?)))
        .fold(None::<(&Finding, f64)>, |best, (f, l)| match best {
            Some((_, b)) if b >= l => best,
            _ => Some((f, l)),
        });
    costliest.map(|(f, _)| f).or_else(|| {
        eligible().min_by_key(|f| {
            (
                rank_kind(f.kind) > 5,
                rank_sev(f.severity),
                rank_kind(f.kind),
            )
        })
    })
}

/// The speedup a finding accounts for losing, in units of speedup, from the analysis's
/// own numbers: for a knee where scaling slows, the marginal speedup per thread it
/// lost times the threads measured after it, `(slope before - slope after) x (last -
/// knee)`, which is what the curve falls short, at its last point, of the slope it
/// had before the knee; for a placement difference, the speedup the slower placement
/// gives up at that thread count. Other findings carry no such quantity (`None`).
pub fn speedup_lost(a: &Analysis, f: &Finding) -> Option<f64> {
    let t = f.after_threads?;
    match f.kind {
        // The analysis's own account where it gives one.
        FindingKind::Knee if f.speedup_lost.is_some() => f.speedup_lost.map(|l| l.max(0.0)),
        FindingKind::Knee => {
            let c = a
                .curves
                .iter()
                .find(|c| f.curve.as_deref() == Some(&format!("{} / {}", c.placement, c.mem)))?;
            let k = c.knees.iter().find(|k| k.knee.threads == t)?;
            let last = c.points.last()?.threads;
            Some(
                (k.knee.slope_before - k.knee.slope_after).max(0.0) * last.saturating_sub(t) as f64,
            )
        }
        FindingKind::Placement => {
            let (worst, best) = f.evidence.iter().find_map(|e| match &e.item {
                EvidenceItem::Comparison { a, b, .. } => Some((a, b)),
                _ => None,
            })?;
            let cmp = a
                .placement_comparisons
                .iter()
                .find(|c| c.threads == t && &c.worst == worst && &c.best == best)?;
            let slow = a
                .curves
                .iter()
                .find(|c| c.placement.to_string() == *worst && c.mem == cmp.mem)?;
            let p = slow.points.iter().find(|p| p.threads == t)?;
            Some(p.speedup * (cmp.ratio - 1.0))
        }
        _ => None,
    }
}

/// The opening section: the machine once (or each distinct one), then per set
/// its diagnosis beside its speedup chart.
pub fn summary_html(sets: &[ResultSet]) -> Markup {
    let mut s = Markup::from_iter([el("h2").text("The answer")]);
    let mut machines: Vec<String> = sets.iter().map(machine_line).collect();
    machines.dedup();
    for m in &machines {
        s.push(
            el("p")
                .attr("class", "machine")
                .text(&format!("Machine: {m}")),
        );
    }
    for (i, set) in sets.iter().enumerate() {
        let basis = scalescope_analysis::basis_rule::statement(
            &set.analysis.basis,
            &set.header,
            &set.records,
        );
        let diag = Markup::from_iter([
            el("h3").child(
                el("a")
                    .attr("href", format!("#w{}", i + 1))
                    .text(&workload_title(set)),
            ),
            diagnosis_html(diagnosis(&set.analysis)),
            el("p")
                .attr("class", "basis")
                .text(&format!("Speedups: {basis}")),
            quality_html(&set.analysis),
        ]);
        let chart = crate::speedup_chart(set, true).to_svg();
        s.push(
            el("div").attr("class", "answer").children([
                el("div").attr("class", "diag").child(diag),
                el("figure")
                    .attr("class", "lead")
                    .children([chart, el("figcaption").child(Markup::trusted(LEAD_CAPTION))]),
            ]),
        );
    }
    el("section").attr("id", "summary").child(s)
}

const LEAD_CAPTION: &str = "Speedup on a log2 thread axis; whiskers are 95% intervals, shaded lanes each placement's topology regions, dashed lines the knees.";

/// The measurement's own warnings (load, the hypervisor, runs outside their CPUs,
/// one repetition), beside the answer they weaken; nothing when there are none.
fn quality_html(a: &Analysis) -> Markup {
    let warnings: Vec<&Finding> = a
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::MeasurementQuality && f.severity == Severity::Warning)
        .collect();
    if warnings.is_empty() {
        return Markup::new();
    }
    el("div").attr("class", "quality").children([
        el("p").child(el("strong").text("Measurement warnings: read the answer with them")),
        el("ul").children(warnings.iter().map(|f| el("li").text(&f.title))),
    ])
}

/// The leading finding as a sentence, its first evidence, confidence and advice.
fn diagnosis_html(f: Option<&Finding>) -> Markup {
    let Some(f) = f else {
        return el("p")
            .attr("class", "sentence")
            .text("No finding: the analysis had too few points to say anything.");
    };
    let mut s = Markup::from_iter([
        el("p")
            .attr("class", format!("sentence {}", f.severity))
            .text(&capitalized(&f.title)),
        el("ul")
            .attr("class", "evidence")
            .children(f.evidence.iter().take(3).map(|e| el("li").text(&e.text))),
        el("p").child(el("small").text(&format!("confidence: {}", confidence_text(&f.confidence)))),
    ]);
    if let Some(a) = &f.advice {
        s.push(el("p").text(&format!("Try: {a}")));
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
