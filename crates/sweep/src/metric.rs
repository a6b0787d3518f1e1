//! Figures of merit: parsed from a program's output with `--metric NAME=REGEX` (each
//! match within one line, scanned as the output streams: [`crate::output`]), or
//! reported by a built-in workload as a JSON line.

use regex::Regex;

use crate::SweepError;
use scalescope_model::store::MetricSpec;

/// Parses `NAME=REGEX[:higher|lower]` (default: higher is better). The regex's first
/// capture group (or the whole match) must be a number.
///
/// # Errors
/// [`SweepError::BadSetting`] for a missing name, a bad regex or a bad direction.
pub fn parse_spec(text: &str) -> Result<MetricSpec, SweepError> {
    let bad = |detail: String| SweepError::BadSetting {
        field: "metric",
        value: text.to_string(),
        detail,
    };
    let (name, rest) = text
        .split_once('=')
        .ok_or_else(|| bad("expected NAME=REGEX[:higher|lower]".into()))?;
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(bad(format!(
            "metric name `{name}` must be letters, digits and _"
        )));
    }
    let (regex, higher) = match rest.rsplit_once(':') {
        Some((r, "higher")) => (r, true),
        Some((r, "lower")) => (r, false),
        _ => (rest, true),
    };
    // regex's own message draws a caret diagram over several lines; keep its verdict.
    Regex::new(regex).map_err(|e| {
        let text = e.to_string();
        let verdict = text
            .lines()
            .last()
            .unwrap_or("")
            .trim_start_matches("error: ")
            .to_string();
        bad(format!("bad regex: {verdict}"))
    })?;
    Ok(MetricSpec {
        name: name.to_string(),
        regex: Some(regex.to_string()),
        higher_is_better: higher,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs() {
        let m = parse_spec(r"mops=Mop/s total\s*=\s*([0-9.]+)").unwrap();
        assert!(m.higher_is_better);
        let m = parse_spec(r"lat=latency ([0-9.]+) ns:lower").unwrap();
        assert!(!m.higher_is_better);
        for bad in ["noequals", "=x", "bad name=x", "x=(unclosed"] {
            assert!(parse_spec(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn last_match_wins() {
        let specs = [
            parse_spec(r"rate=rate: ([0-9.e+]+)").unwrap(),
            parse_spec("teps=TEPS ([0-9]+)").unwrap(),
        ];
        let scan =
            crate::output::Scanner::new(&specs).scan_reader(&b"rate: 1.5\nrate: 2.5e3\n"[..]);
        assert_eq!(scan.found["rate"], 2500.0);
        assert!(!scan.found.contains_key("teps"));
    }
}
