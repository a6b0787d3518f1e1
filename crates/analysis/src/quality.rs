//! What about the measurement lowers confidence in any finding: a machine already
//! busy when the sweep started (the header's load average against its usable PUs),
//! runs whose threads were seen outside their planned CPUs, a hypervisor or
//! emulator under the machine (read from the header where the topology records
//! it), a single repetition, and results imported from elsewhere.

use serde::{Deserialize, Serialize};

use scalescope_model::store::{Header, RunRecord};

/// What a warning about the measurement is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QualityKind {
    /// The machine was busy when the sweep started.
    Load,
    /// Threads were seen outside their planned CPUs.
    OutsideCpus,
    /// A hypervisor or emulator under the machine.
    Hypervisor,
    /// One repetition per point.
    SingleRepetition,
    /// Results imported from elsewhere (a fact, not a flaw).
    Imported,
    /// Runs whose figure is no measurement (a time or a rate of zero or less),
    /// left out of every point; or points whose figure is too far from the
    /// baseline's to compute a speedup with (1e308 against 1e-5), left out of
    /// their curve.
    UnusableFigures,
    /// Runs at points the sweep's plan does not hold, in no curve (a fact about
    /// the file, not a flaw of the measurement).
    OutsidePlan,
}

impl QualityKind {
    /// A fact about the file rather than a flaw of the measurement: said, as
    /// information, and lowering no finding.
    pub fn is_fact(self) -> bool {
        matches!(self, QualityKind::Imported | QualityKind::OutsidePlan)
    }

    /// The word in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            QualityKind::Load => "load",
            QualityKind::OutsideCpus => "outside-cpus",
            QualityKind::Hypervisor => "hypervisor",
            QualityKind::SingleRepetition => "single-repetition",
            QualityKind::Imported => "imported",
            QualityKind::UnusableFigures => "unusable-figures",
            QualityKind::OutsidePlan => "outside-plan",
        }
    }
}

/// One warning about the measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QualityWarning {
    pub kind: QualityKind,
    pub text: String,
}

/// Every warning; each lowers the confidence of timing-based findings one step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Quality {
    pub warnings: Vec<QualityWarning>,
}

impl Quality {
    /// Warnings that lower confidence (an import, or runs outside the plan, are
    /// facts about the file, not flaws of the measurement).
    pub fn lowering(&self) -> impl Iterator<Item = &QualityWarning> {
        self.warnings.iter().filter(|w| !w.kind.is_fact())
    }
}

fn warn(kind: QualityKind, text: String) -> QualityWarning {
    QualityWarning { kind, text }
}

/// The first number of "0.52 0.58 0.59 ...".
fn load1(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// A hypervisor named anywhere in the machine record (a `hypervisor` field that is
/// a non-empty string or an object with a vendor), read defensively: older headers
/// have none.
fn hypervisor(header: &Header) -> Option<String> {
    let v = serde_json::to_value(&header.machine).ok()?;
    find_hypervisor(&v)
}

fn find_hypervisor(v: &serde_json::Value) -> Option<String> {
    let obj = v.as_object()?;
    for (k, val) in obj {
        if k.contains("hypervisor") || k == "virtualization" {
            match val {
                serde_json::Value::String(s)
                    if !s.is_empty() && s != "none" && !s.starts_with("unavailable") =>
                {
                    return Some(s.clone())
                }
                serde_json::Value::Object(o) => {
                    let named = ["vendor", "name", "kind"]
                        .iter()
                        .find_map(|f| o.get(*f).and_then(|x| x.as_str()))
                        .filter(|s| !s.is_empty() && *s != "none");
                    if let Some(n) = named {
                        return Some(n.to_string());
                    }
                    if o.get("detected").and_then(|d| d.as_bool()) == Some(true) {
                        return Some("a hypervisor".into());
                    }
                }
                serde_json::Value::Bool(true) => return Some("a hypervisor".into()),
                _ => {}
            }
        }
        if let Some(found) = val.as_object().and_then(|_| find_hypervisor(val)) {
            return Some(found);
        }
    }
    None
}

/// Assesses a sweep's header and runs.
pub fn assess(header: &Header, records: &[RunRecord]) -> Quality {
    let mut w = Vec::new();
    let pus = header.machine.topology.usable_cpus().len().max(1) as f64;
    if let Some(l) = load1(&header.machine.load_average) {
        if l >= 0.5 && l > 0.1 * pus {
            w.push(warn(QualityKind::Load, format!(
                "the load average was {l:.1} on {pus:.0} usable PUs when the sweep started: other work may have competed with the runs"
            )));
        }
    }
    let outside = records
        .iter()
        .filter(|r| !r.warmup)
        .filter(|r| r.placement_check.as_ref().is_some_and(|c| !c.inside_plan))
        .count();
    if outside > 0 {
        w.push(warn(
            QualityKind::OutsideCpus,
            format!("{outside} run(s) had threads seen outside their planned CPUs"),
        ));
    }
    if let Some(h) = hypervisor(header) {
        w.push(warn(QualityKind::Hypervisor, format!(
            "the machine runs under {h}: timings include the hypervisor's scheduling and may not be the hardware's"
        )));
    }
    if header.plan.reps < 2 && header.command.kind != "imported" {
        w.push(warn(
            QualityKind::SingleRepetition,
            "one repetition per point: no spread is measured, so no finding can be confident"
                .into(),
        ));
    }
    if header.command.kind == "imported" {
        w.push(warn(
            QualityKind::Imported,
            format!(
                "imported from {}: measured elsewhere, the machine is as described on import",
                header.command.argv.first().map_or("a file", String::as_str)
            ),
        ));
    }
    Quality { warnings: w }
}

/// The runs that ran to the end but whose figure on `basis` is no measurement
/// (zero or less, where a rate or a time must be positive),
/// named (point, repetition, value): they are left out of every point, and the
/// reader should know that rather than see a point with fewer runs, or none.
pub fn unusable_figures(records: &[RunRecord], basis: &crate::Basis) -> Option<QualityWarning> {
    let bad: Vec<String> = records
        .iter()
        .filter(|r| !r.warmup && r.status == scalescope_model::store::RunStatus::Ok)
        .filter_map(|r| Some((r, basis.unusable(r)?)))
        .map(|(r, v)| format!("{}, rep {}: {}", r.point, r.rep, number(v)))
        .collect();
    let (first, more) = first_and_more(&bad)?;
    Some(warn(
        QualityKind::UnusableFigures,
        format!(
            "{} run(s) left out: their {} is no measurement (zero or less): {first}{more}",
            bad.len(),
            basis.label()
        ),
    ))
}

/// The runs (warm-ups aside) at points the header's plan does not hold: a
/// thread count, placement or memory policy it does not name. No curve holds
/// them; the reader is told how many and which, not left to count. (A launched
/// sweep's points are its node axis: not checked here.)
pub fn outside_plan(header: &Header, records: &[RunRecord]) -> Option<QualityWarning> {
    let p = &header.plan;
    if p.launch.is_some() {
        return None;
    }
    let out: Vec<String> = records
        .iter()
        .filter(|r| !r.warmup)
        .filter(|r| {
            !(p.threads.contains(&r.point.threads)
                && p.placements.contains(&r.point.placement)
                && p.mems.contains(&r.point.mem))
        })
        .map(|r| format!("{}, rep {}", r.point, r.rep))
        .collect();
    let (first, more) = first_and_more(&out)?;
    Some(warn(
        QualityKind::OutsidePlan,
        format!(
            "{} run(s) left out: their point is not in the sweep's plan: {first}{more}",
            out.len()
        ),
    ))
}

/// The points with runs that have a figure but no place on their curve: a
/// figure so far from the baseline's (1e308 against 1e-5) that their ratio
/// passes the largest number or falls to zero, so the curve has no speedup to
/// show there. Named, so a point does not vanish from the table without a word.
/// (A launched sweep over several node counts has its curves over the nodes:
/// not checked here.)
pub fn points_without_a_figure(
    header: &Header,
    records: &[RunRecord],
    basis: &crate::Basis,
    curves: &[crate::Curve],
) -> Option<QualityWarning> {
    let p = &header.plan;
    if crate::node_curves_axis(header).is_some() {
        return None;
    }
    let mut out = Vec::new();
    for (pl, mem) in p
        .placements
        .iter()
        .flat_map(|pl| p.mems.iter().map(move |m| (pl, m)))
    {
        let curve = curves
            .iter()
            .find(|c| &c.placement == pl && &c.mem == mem && c.ranks_per_node.is_none());
        for &t in &p.threads {
            if curve.is_some_and(|c| c.points.iter().any(|q| q.threads == t)) {
                continue;
            }
            let runs = crate::curve::ok_runs(records, t, pl, mem);
            if let Some(r) = runs.iter().find(|r| basis.perf(r).is_some()) {
                out.push(r.point.to_string());
            }
        }
    }
    let (first, more) = first_and_more(&out)?;
    Some(warn(
        QualityKind::UnusableFigures,
        format!(
            "{} point(s) left out: their {} is too far from the baseline's to compute with (the ratio passes the largest number, about 1.8e308, or falls to zero): {first}{more}",
            out.len(),
            basis.label()
        ),
    ))
}

/// The first of the things a warning names, and " (and N more)" for the rest;
/// None when there are none.
fn first_and_more(named: &[String]) -> Option<(&str, String)> {
    let more = match named.len() {
        0 => return None,
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    Some((named[0].as_str(), more))
}

/// A recorded value as a reader can take it in: plain when ordinary, else in
/// scientific notation (1e308 plainly is 309 digits).
fn number(v: f64) -> String {
    if v == 0.0 || (1e-3..1e6).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// The most that other work may have used of a run's CPUs, beyond the run's own
/// share, at every point, for the evidence to say the runs had their CPUs to
/// themselves (the sampler's own reads land there too: up to 2% of one CPU).
pub const QUIET_SHARE: f64 = 0.05;

impl Quality {
    /// Holds the load warning to what the evidence measured while the runs ran.
    /// The load average is read once, at the start, over the past minute (work that
    /// has just ended counts); when every point's CPUs were sampled and none did
    /// other work beyond [`QUIET_SHARE`] of them, its premise is refuted: the
    /// warning is removed (it no longer lowers any confidence) and the note that
    /// says so is returned, to be shown instead.
    pub fn refute_load(
        &mut self,
        header: &Header,
        ev: &[crate::evidence::PointEvidence],
    ) -> Option<String> {
        let at = self
            .warnings
            .iter()
            .position(|w| w.kind == QualityKind::Load)?;
        let foreign: Option<Vec<f64>> = ev
            .iter()
            .map(|p| Some(p.cpu_busy_mean? - p.run_share_mean?))
            .collect();
        let worst = foreign?
            .into_iter()
            .fold(None, |m: Option<f64>, f| Some(m.map_or(f, |m| m.max(f))))?;
        if worst >= QUIET_SHARE {
            return None;
        }
        self.warnings.remove(at);
        let load = load1(&header.machine.load_average).unwrap_or(0.0);
        Some(format!(
            "no other work competed with the runs: while they ran, their CPUs did no other work worth naming (at most {:.1}% of them beyond the runs' own share at any point; /proc/stat, every point sampled); the load average of {load:.1} at the start came from work on other CPUs or work that had ended",
            worst.max(0.0) * 100.0
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypervisor_fields_read_defensively() {
        let v = serde_json::json!({"topology": {"hypervisor": {"vendor": "KVM"}}});
        assert_eq!(find_hypervisor(&v).as_deref(), Some("KVM"));
        let v = serde_json::json!({"hypervisor": "none"});
        assert_eq!(find_hypervisor(&v), None);
        let v = serde_json::json!({"topology": {"cpus": 2}});
        assert_eq!(find_hypervisor(&v), None);
        assert_eq!(load1("3.40 2.1 1.0 1/200 5"), Some(3.4));
    }
}
