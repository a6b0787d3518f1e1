//! The words of a knee whose topology boundary fell between two measured points
//! (`attribution: "inside"`): where the bend lies, that the boundary is one
//! explanation the points cannot confirm, and the counts that would decide. No
//! advice that rests on the boundary being the cause: that premise was not
//! measured.

use crate::consistency::{command, Premise};
use crate::knee::Bend;
use crate::AttributedKnee;

/// Title, advice (none) and check of a knee whose boundary was not measured, or
/// None for any other knee.
pub(super) fn words(
    k: &AttributedKnee,
    name: &str,
) -> Option<(String, Option<String>, Option<String>)> {
    let e = k.cause.as_ref().filter(|_| k.attribution == "inside")?;
    let (t, next, c) = (k.knee.threads, k.knee.next_threads, e.last_before_change());
    let way = match k.knee.bend {
        Bend::Flattens => "slows",
        Bend::Steepens => "speeds up",
    };
    Some((
        format!(
            "{name}: scaling {way} between {t} and {next} threads; a boundary falls between them, not measured: {}",
            e.description
        ),
        None,
        Some(format!(
            "add points at {c} and {} threads (`--threads {t},{c},{},{next}`): a bend between {c} and {} points at the boundary, one elsewhere in the interval at a smooth limit (serial work, contention, bandwidth approached gradually)",
            c + 1,
            c + 1,
            c + 1
        )),
    ))
}

/// What the check above suggests, as a premise the checker verifies.
pub(super) fn premises(k: &AttributedKnee) -> Option<Vec<Premise>> {
    let e = k.cause.as_ref().filter(|_| k.attribution == "inside")?;
    let c = e.last_before_change();
    let threads = format!("{},{c},{},{}", k.knee.threads, c + 1, k.knee.next_threads);
    Some(vec![command(&["sweep", "--threads", &threads])])
}
