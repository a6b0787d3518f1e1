//! Every argument that takes a number or free text, at the limits of numbers:
//! 0, -1, nan, inf, 1e19, 1e300 and the value type's largest value; a sweep that
//! accepted a value is resumed too. Past the fixed matrix (a campaign), values are
//! drawn at random: integers of every magnitude, signs, exponents, digits outside
//! ASCII, blanks.

use std::time::Duration;

use super::harness::{self, Verdict};
use super::inventory::{self, Arg, Fixtures};
use super::Rng;

pub const FIXED: [&str; 6] = ["0", "-1", "nan", "inf", "1e19", "1e300"];

/// Every (argument, value) pair of the fixed matrix.
pub fn matrix(args: &[Arg]) -> Vec<(Arg, String)> {
    let mut out = Vec::new();
    for a in args.iter().filter(|a| attacked(a)) {
        for v in FIXED.iter().map(|v| v.to_string()).chain([a.max.clone()]) {
            out.push((a.clone(), v));
        }
    }
    out
}

fn attacked(a: &Arg) -> bool {
    a.takes_value && !a.positional && (a.kind == "number" || a.kind == "text")
}

/// A value drawn for a campaign case.
pub fn random_value(rng: &mut Rng) -> String {
    const ODD: [&str; 18] = [
        "-0",
        "+5",
        " 1",
        "1 ",
        "0x10",
        "1_000",
        "\u{661}",
        "",
        "-inf",
        "NaN",
        "1e-300",
        "1.5",
        "4294967296",
        "18446744073709551616",
        "-9223372036854775809",
        "99999999999999999999999999999999999999",
        "1,2,3",
        "1-100000000",
    ];
    match rng.below(5) {
        0 => ODD[rng.below(ODD.len() as u64) as usize].to_string(),
        1 => (rng.draw() >> rng.below(64)).to_string(),
        2 => format!("-{}", rng.draw() >> rng.below(64)),
        3 => format!("{}e{}", rng.below(1000), rng.below(800) as i64 - 400),
        _ => FIXED[rng.below(FIXED.len() as u64) as usize].to_string(),
    }
}

/// Runs one case (and a resume after a sweep that wrote a header); the bad outcomes.
pub fn run_case(arg: &Arg, value: &str, fx: &Fixtures, hang: Duration) -> Vec<String> {
    let Some(base) = inventory::base(&arg.command) else {
        return vec![format!("{}: no base invocation", arg.command.join(" "))];
    };
    let dir = tempfile::tempdir().expect("a case directory");
    let out = dir.path().join("out");
    let args = inventory::with_flag(&inventory::fill(&base, fx, &out), &arg.name, value);
    let first = harness::run(&args, dir.path(), hang);
    let mut bad = Vec::new();
    match first.verdict() {
        // A size the user asked for may take memory: the estimate against what
        // is available decides (the 200 MB bound is for refusals and files).
        Verdict::Bad(why)
            if why.starts_with("peak RSS") && matches!(first.code, Some(0 | 3..=5)) => {}
        Verdict::Bad(_) => bad.push(first.describe()),
        // A float flag (a duration, a rate, a tolerance, a scale) that takes NaN,
        // infinity or a negative value has not run correctly, whatever it printed.
        Verdict::Ran | Verdict::RanWithFailures
            if arg.max.contains("e3") && ["nan", "inf", "-1"].contains(&value) =>
        {
            bad.push(format!(
                "accepted {}={value}: {}",
                arg.name,
                first.describe()
            ));
        }
        _ => {}
    }
    if arg.command == ["sweep"] && out.join("results.jsonl").exists() {
        let resume: Vec<String> = ["sweep", "--quiet", "--resume", "--out"]
            .iter()
            .map(|s| s.to_string())
            .chain([out.display().to_string()])
            .collect();
        let again = harness::run(&resume, dir.path(), hang);
        if let Verdict::Bad(_) = again.verdict() {
            bad.push(format!(
                "after `{} {value}`: {}",
                arg.name,
                again.describe()
            ));
        }
    }
    bad
}
