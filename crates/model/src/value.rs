//! Numbers as settings take them, checked once when parsed so nothing downstream
//! meets a value out of range: whole counts within a range ([`Count`]), seconds
//! within a range ([`Secs`]) and byte sizes as people write them ([`Bytes`]:
//! `200MB`, `1GiB`). Every error names the value and the range it must be in.
//! `nan`, `inf`, negative numbers, `1e19` and `1e300` are refused, never clamped.

use std::time::Duration;

/// A whole number from `MIN` to `MAX`, written in decimal digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Count<const MIN: u64, const MAX: u64>(u64);

impl<const MIN: u64, const MAX: u64> Count<MIN, MAX> {
    /// `v`, if it is in range.
    pub const fn new(v: u64) -> Option<Self> {
        if v >= MIN && v <= MAX {
            Some(Count(v))
        } else {
            None
        }
    }

    /// `v`, clamped into range: for constants and defaults only.
    pub const fn clamped(v: u64) -> Self {
        Count(if v < MIN {
            MIN
        } else if v > MAX {
            MAX
        } else {
            v
        })
    }

    pub const fn get(self) -> u64 {
        self.0
    }

    /// The count as an index type (every range here fits a 64-bit usize).
    pub const fn usize(self) -> usize {
        self.0 as usize
    }

    /// The range, as an error states it.
    pub fn range() -> String {
        format!("{MIN} to {MAX}")
    }
}

impl<const MIN: u64, const MAX: u64> std::str::FromStr for Count<MIN, MAX> {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let out_of_range = || format!("`{t}` is out of range: a whole number from {MIN} to {MAX}");
        if t.bytes().all(|b| b.is_ascii_digit()) && !t.is_empty() {
            // All digits: too many of them is out of range, not malformed.
            return t
                .parse::<u64>()
                .ok()
                .and_then(Count::new)
                .ok_or_else(out_of_range);
        }
        Err(format!(
            "`{t}` is not a whole number (expected {MIN} to {MAX}, in digits)"
        ))
    }
}

impl<const MIN: u64, const MAX: u64> std::fmt::Display for Count<MIN, MAX> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Seconds from `MIN_MS` milliseconds to `MAX_S` seconds: finite, never negative,
/// so they always make a [`Duration`].
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Secs<const MIN_MS: u64, const MAX_S: u64>(f64);

impl<const MIN_MS: u64, const MAX_S: u64> Secs<MIN_MS, MAX_S> {
    /// `v` seconds, if in range.
    pub fn new(v: f64) -> Option<Self> {
        (v.is_finite() && v >= MIN_MS as f64 / 1000.0 && v <= MAX_S as f64).then_some(Secs(v))
    }

    pub fn get(self) -> f64 {
        self.0
    }

    pub fn duration(self) -> Duration {
        Duration::from_secs_f64(self.0)
    }

    /// The range, as an error states it.
    pub fn range() -> String {
        format!("{} to {MAX_S} seconds", MIN_MS as f64 / 1000.0)
    }

    /// `v` checked, or why not: a number read back from a file goes through this.
    ///
    /// # Errors
    /// The value and the range.
    pub fn checked(v: f64) -> Result<Self, String> {
        Secs::new(v).ok_or_else(|| format!("{v} is out of range: {}", Self::range()))
    }
}

impl<const MIN_MS: u64, const MAX_S: u64> Default for Secs<MIN_MS, MAX_S> {
    /// The least the range allows (0 where 0 is allowed).
    fn default() -> Self {
        Secs(MIN_MS as f64 / 1000.0)
    }
}

impl<const MIN_MS: u64, const MAX_S: u64> std::str::FromStr for Secs<MIN_MS, MAX_S> {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        match t.parse::<f64>() {
            Ok(v) if !v.is_nan() => {
                Secs::new(v).ok_or_else(|| format!("`{t}` is out of range: {}", Self::range()))
            }
            _ => Err(format!(
                "`{t}` is not a number of seconds ({})",
                Self::range()
            )),
        }
    }
}

impl<const MIN_MS: u64, const MAX_S: u64> std::fmt::Display for Secs<MIN_MS, MAX_S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The largest byte size a setting takes: 1 PB.
pub const MAX_BYTES: u64 = 1_000_000_000_000_000;

/// A byte size from 1 byte to 1 PB, written as people write sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(u64);

impl Bytes {
    pub fn new(v: u64) -> Option<Bytes> {
        (1..=MAX_BYTES).contains(&v).then_some(Bytes(v))
    }

    pub fn get(self) -> u64 {
        self.0
    }
}

impl std::str::FromStr for Bytes {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_bytes(s).map(Bytes)
    }
}

impl std::fmt::Display for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Parses a size (`200MB`, `1GiB`, `512k`, `4096`); decimal units (kB, MB, GB, TB)
/// are powers of 1000, binary ones (KiB, MiB, GiB, TiB, and the bare K, M, G, T)
/// powers of 1024.
///
/// # Errors
/// A sentence naming what is wrong, with the range (1 byte to 1 PB).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a size like 200MB or 1GiB"))?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024.0 * 1024.0,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tib" => 1024f64.powi(4),
        other => {
            return Err(format!(
                "`{text}`: unknown unit `{other}` (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)"
            ))
        }
    };
    let bytes = value * mult;
    if !(1.0..=MAX_BYTES as f64).contains(&bytes) {
        return Err(format!("`{text}` is out of range (1 byte to 1 PB)"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("200MB").unwrap(), 200_000_000);
        assert_eq!(parse_bytes("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_bytes("512k").unwrap(), 512 * 1024);
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(parse_bytes("1.5GB").unwrap(), 1_500_000_000);
        for bad in ["", "MB", "12XB", "0", "-5MB", "1e30", "nan", "inf", "1e19"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn counts_refuse_every_attack_value_with_their_range() {
        type Reps = Count<1, 1000>;
        assert_eq!("5".parse::<Reps>().unwrap().get(), 5);
        for bad in [
            "0",
            "-1",
            "nan",
            "inf",
            "1e19",
            "1e300",
            "18446744073709551615",
            "99999999999999999999999",
            "1.5",
            "",
        ] {
            let e = bad.parse::<Reps>().unwrap_err();
            assert!(e.contains("1 to 1000"), "{bad}: {e}");
        }
        assert_eq!(Count::<2, 9>::clamped(0).get(), 2);
    }

    #[test]
    fn seconds_refuse_every_attack_value_with_their_range() {
        type Timeout = Secs<1, 31_536_000>;
        assert_eq!(
            "2.5".parse::<Timeout>().unwrap().duration(),
            Duration::from_millis(2500)
        );
        for bad in [
            "0", "-1", "nan", "NaN", "inf", "-inf", "1e19", "1e300", "x", "",
        ] {
            let e = bad.parse::<Timeout>().unwrap_err();
            assert!(e.contains("0.001 to 31536000 seconds"), "{bad}: {e}");
        }
        assert!("0".parse::<Secs<0, 3600>>().is_ok());
        assert!(Timeout::checked(1e19).unwrap_err().contains("out of range"));
    }
}
