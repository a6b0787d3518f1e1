//! What a sweep says about its runtime-placed runs (`runtime:NAME`): how many put
//! their threads where the hardware-position plan says, and each run that did not.

use scalescope_model::store::RunRecord;

/// One line of totals per runtime placement, then every mismatch (at most 10).
pub fn lines(records: &[RunRecord]) -> Vec<String> {
    let checked: Vec<(&RunRecord, &scalescope_model::check::RuntimeCheck)> = records
        .iter()
        .filter_map(|r| Some((r, r.placement_check.as_ref()?.runtime.as_ref()?)))
        .collect();
    let mut out = Vec::new();
    let mut placements: Vec<String> = checked
        .iter()
        .map(|(r, _)| r.point.placement.to_string())
        .collect();
    placements.sort();
    placements.dedup();
    for p in placements {
        let of: Vec<_> = checked
            .iter()
            .filter(|(r, _)| r.point.placement.to_string() == p)
            .collect();
        let ok = of.iter().filter(|(_, c)| c.as_planned).count();
        out.push(format!(
            "{p}: the OpenMP runtime placed threads as the plan says in {ok} of {} runs",
            of.len()
        ));
    }
    for (r, c) in checked.iter().filter(|(_, c)| !c.as_planned).take(10) {
        out.push(format!(
            "run {} rep {}: the runtime {}",
            r.point, r.rep, c.detail
        ));
    }
    out
}
