//! Byte sizes as people write them: `200MB`, `1GiB`, `512k`, `4096`.

/// Parses a size; decimal units (kB, MB, GB) are powers of 1000, binary ones (KiB,
/// MiB, GiB, and the bare K, M, G) powers of 1024.
///
/// # Errors
/// A sentence naming what is wrong.
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
                "`{text}`: unknown unit `{other}` (B, kB, MB, GB, KiB, MiB, GiB)"
            ))
        }
    };
    let bytes = value * mult;
    if !(1.0..=1e15).contains(&bytes) {
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
        for bad in ["", "MB", "12XB", "0", "-5MB", "1e30"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }
}
