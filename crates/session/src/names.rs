//! Result directory names people can read and sort: `sweep-2026-11-22T10-31-05`
//! (UTC), with `-2`, `-3`, ... when a directory of that name already exists, so two
//! sweeps started in the same second never share one.

use std::path::{Path, PathBuf};

/// `YYYY-MM-DDTHH-MM-SS` (UTC) for seconds since the Unix epoch.
pub fn utc_stamp(unix_secs: f64) -> String {
    let secs = unix_secs.max(0.0) as u64;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}-{:02}-{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Year, month, day of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, proleptic Gregorian calendar).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// `parent/KIND-STAMP`, or the same with the first free `-N` suffix.
pub fn fresh_dir(parent: &Path, kind: &str, unix_secs: f64) -> PathBuf {
    let base = format!("{kind}-{}", utc_stamp(unix_secs));
    let first = parent.join(&base);
    if !first.exists() {
        return first;
    }
    (2..)
        .map(|n| parent.join(format!("{base}-{n}")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_calendar_times() {
        assert_eq!(utc_stamp(0.0), "1970-01-01T00-00-00");
        // 2000-02-29 (a leap day of a century leap year) 12:34:56.
        assert_eq!(utc_stamp(951_827_696.0), "2000-02-29T12-34-56");
        assert_eq!(utc_stamp(1_795_392_952.9), "2026-11-23T00-15-52");
    }

    #[test]
    fn a_taken_name_gets_the_next_suffix() {
        let tmp = tempfile::tempdir().unwrap();
        let a = fresh_dir(tmp.path(), "sweep", 0.0);
        assert!(a.ends_with("sweep-1970-01-01T00-00-00"));
        std::fs::create_dir(&a).unwrap();
        let b = fresh_dir(tmp.path(), "sweep", 0.0);
        assert!(b.ends_with("sweep-1970-01-01T00-00-00-2"));
        std::fs::create_dir(&b).unwrap();
        assert!(fresh_dir(tmp.path(), "sweep", 0.0).ends_with("sweep-1970-01-01T00-00-00-3"));
    }
}
