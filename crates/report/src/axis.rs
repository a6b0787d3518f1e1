//! Chart axes: round tick values, powers of two for log2 axes, numbers and byte sizes
//! as tick labels, and labels cut to the room they have.

/// Round tick values covering [lo, hi].
pub(crate) fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut v = Vec::new();
    let mut t = (lo / step).ceil() * step;
    while t <= hi + step * 1e-9 {
        v.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    v
}

/// `label` cut to what fits in `width` pixels at 12 px (about 6.8 px a
/// character), with an ellipsis; empty when not even a few characters fit.
pub(crate) fn fit_label(label: &str, width: f64) -> String {
    let fits = (width / 6.8).floor().max(0.0) as usize;
    let n = label.chars().count();
    if n <= fits {
        label.to_string()
    } else if fits < 4 {
        String::new()
    } else {
        format!("{}…", label.chars().take(fits - 1).collect::<String>())
    }
}

/// Powers of two covering [lo, hi], every second one when there are many.
pub(crate) fn log2_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, z) = (lo.log2().ceil() as i32, hi.log2().floor() as i32);
    let step = if z - a > 10 { 2 } else { 1 };
    (a..=z).step_by(step).map(|e| 2f64.powi(e)).collect()
}

pub(crate) fn fmt_num(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 1000.0 || v.abs() < 0.01 {
        format!("{v:.3e}")
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

/// `4 KiB`, `32 MiB`, `1 GiB` for tick labels.
pub(crate) fn fmt_bytes(v: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = v;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{} {}", fmt_num((v * 10.0).round() / 10.0), units[u])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_ticks_are_powers_of_two() {
        assert_eq!(
            log2_ticks(1.0, 96.0),
            vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
        );
        assert_eq!(log2_ticks(3.0, 5.0), vec![4.0]);
        assert_eq!(fmt_bytes(4096.0), "4 KiB");
        assert_eq!(fmt_bytes(1.5 * 1048576.0), "1.5 MiB");
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(ticks(0.0, 96.0, 8), vec![0.0, 20.0, 40.0, 60.0, 80.0]);
        assert_eq!(ticks(1.0, 2.0, 4), vec![1.0, 1.25, 1.5, 1.75, 2.0]);
    }
}
