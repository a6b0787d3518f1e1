//! Q1 and Q6 over the columns, in exact integer arithmetic, the bytes each query
//! scans per row, and the reference answers they are checked against.

use crate::pool::Pool;
use crate::prefetch;

use super::data::{days_from_civil, q1_cutoff, Lineitem, Partition};

/// Per-group sums of Q1, in exact units.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Q1Acc {
    count: u64,
    qty: u64,
    price_cents: u64,
    /// price x (100 - disc): 1e-4 units.
    disc_price: u128,
    /// price x (100 - disc) x (100 + tax): 1e-6 units.
    charge: u128,
    disc: u64,
}

fn q1_partition(p: &Partition, cutoff: i32) -> [Q1Acc; 6] {
    let mut acc = [Q1Acc::default(); 6];
    for j in 0..p.len() {
        if p.shipdate[j] <= cutoff {
            let a = &mut acc[p.group[j] as usize];
            let (price, d, t) = (
                u64::from(p.extprice_cents[j]),
                u64::from(p.discount[j]),
                u64::from(p.tax[j]),
            );
            let dp = price * (100 - d);
            a.count += 1;
            a.qty += u64::from(p.quantity[j]);
            a.price_cents += price;
            a.disc_price += u128::from(dp);
            a.charge += u128::from(dp * (100 + t));
            a.disc += d;
        }
    }
    acc
}

/// Q6's scan, branch-free and portable.
pub(super) fn q6_scan(
    shipdate: &[i32],
    discount: &[u8],
    quantity: &[u8],
    price: &[u32],
    lo: i32,
    hi: i32,
) -> u64 {
    let n = shipdate.len();
    let (discount, quantity, price) = (&discount[..n], &quantity[..n], &price[..n]);
    let mut sum = 0u64;
    for j in 0..n {
        let d = u32::from(discount[j]);
        let hit = (shipdate[j] >= lo)
            & (shipdate[j] < hi)
            & (d.wrapping_sub(5) <= 2)
            & (quantity[j] < 24);
        sum += u64::from(u32::from(hit) * price[j] * d);
    }
    sum
}

/// How far ahead of the scan Q6 prefetches, in rows: 4 KiB ahead on the 4-byte
/// columns. With four streams per core the hardware prefetcher alone left the scan at
/// 8-10 GB/s on one thread of dev-vm; with this, 13 GB/s (docs/PERFORMANCE.md).
const Q6_PREFETCH_ROWS: usize = 1024;

/// Q6's scan in AVX2, eight rows per step: price x discount is at most 1e7 x 10, so
/// 32-bit products are exact and 32 of them fit a 32-bit lane (3.2e9 < 2^32); the
/// lanes are widened into 64-bit sums every 32 steps. Each column's next cache line
/// is prefetched [`Q6_PREFETCH_ROWS`] ahead.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn q6_scan_avx2(
    shipdate: &[i32],
    discount: &[u8],
    quantity: &[u8],
    price: &[u32],
    lo: i32,
    hi: i32,
) -> u64 {
    use std::arch::x86_64::*;
    let n = shipdate
        .len()
        .min(discount.len())
        .min(quantity.len())
        .min(price.len());
    let steps = n / 8;
    // SAFETY: (whole block) every load reads 8 elements (32 or 8 bytes) at index
    // 8 * step < 8 * steps <= n, inside each slice; unaligned loads are used.
    unsafe {
        let (lo_m1, hi_v) = (_mm256_set1_epi32(lo - 1), _mm256_set1_epi32(hi));
        let (four, eight, q24) = (
            _mm256_set1_epi32(4),
            _mm256_set1_epi32(8),
            _mm256_set1_epi32(24),
        );
        let mut acc64 = _mm256_setzero_si256();
        let mut step = 0;
        while step < steps {
            let end = (step + 32).min(steps);
            let mut acc32 = _mm256_setzero_si256();
            while step < end {
                let j = step * 8;
                if step % 2 == 0 {
                    prefetch(shipdate.as_ptr().wrapping_add(j + Q6_PREFETCH_ROWS));
                    prefetch(price.as_ptr().wrapping_add(j + Q6_PREFETCH_ROWS));
                }
                if step % 8 == 0 {
                    prefetch(discount.as_ptr().wrapping_add(j + Q6_PREFETCH_ROWS));
                    prefetch(quantity.as_ptr().wrapping_add(j + Q6_PREFETCH_ROWS));
                }
                let sd = _mm256_loadu_si256(shipdate.as_ptr().add(j) as *const __m256i);
                let d = _mm256_cvtepu8_epi32(_mm_loadl_epi64(
                    discount.as_ptr().add(j) as *const __m128i
                ));
                let q = _mm256_cvtepu8_epi32(_mm_loadl_epi64(
                    quantity.as_ptr().add(j) as *const __m128i
                ));
                let p = _mm256_loadu_si256(price.as_ptr().add(j) as *const __m256i);
                let in_year =
                    _mm256_and_si256(_mm256_cmpgt_epi32(sd, lo_m1), _mm256_cmpgt_epi32(hi_v, sd));
                let in_disc =
                    _mm256_and_si256(_mm256_cmpgt_epi32(d, four), _mm256_cmpgt_epi32(eight, d));
                let hit = _mm256_and_si256(
                    _mm256_and_si256(in_year, in_disc),
                    _mm256_cmpgt_epi32(q24, q),
                );
                acc32 = _mm256_add_epi32(acc32, _mm256_and_si256(_mm256_mullo_epi32(p, d), hit));
                step += 1;
            }
            acc64 = _mm256_add_epi64(acc64, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(acc32)));
            acc64 = _mm256_add_epi64(
                acc64,
                _mm256_cvtepu32_epi64(_mm256_extracti128_si256(acc32, 1)),
            );
        }
        let mut lanes = [0u64; 4];
        _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, acc64);
        let tail = steps * 8;
        lanes.iter().sum::<u64>()
            + q6_scan(
                &shipdate[tail..n],
                &discount[tail..n],
                &quantity[tail..n],
                &price[tail..n],
                lo,
                hi,
            )
    }
}

fn q6_partition(p: &Partition, lo: i32, hi: i32) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe {
            q6_scan_avx2(
                &p.shipdate,
                &p.discount,
                &p.quantity,
                &p.extprice_cents,
                lo,
                hi,
            )
        };
    }
    q6_scan(
        &p.shipdate,
        &p.discount,
        &p.quantity,
        &p.extprice_cents,
        lo,
        hi,
    )
}

/// `v` in units of 10^-`places`, as decimal text.
pub(super) fn fixed(v: u128, places: u32) -> String {
    let scale = 10u128.pow(places);
    format!(
        "{}.{:0width$}",
        v / scale,
        v % scale,
        width = places as usize
    )
}

/// Q1's result rows as the reference writes them (`|`-separated, header first).
pub fn q1(li: &Lineitem, pool: &Pool) -> Vec<String> {
    let cutoff = q1_cutoff();
    let parts = &li.partitions;
    let per = pool.broadcast(|i| {
        parts
            .get(i)
            .map(|p| q1_partition(p, cutoff))
            .unwrap_or_default()
    });
    let mut acc = [Q1Acc::default(); 6];
    for a in per {
        for g in 0..6 {
            acc[g].count += a[g].count;
            acc[g].qty += a[g].qty;
            acc[g].price_cents += a[g].price_cents;
            acc[g].disc_price += a[g].disc_price;
            acc[g].charge += a[g].charge;
            acc[g].disc += a[g].disc;
        }
    }
    let mut rows = vec!["l_returnflag|l_linestatus|sum_qty|sum_base_price|sum_disc_price|sum_charge|avg_qty|avg_price|avg_disc|count_order".to_string()];
    for (g, a) in acc.iter().enumerate().filter(|(_, a)| a.count > 0) {
        let (rf, ls) = (["A", "N", "R"][g / 2], ["F", "O"][g % 2]);
        let n = a.count as f64;
        rows.push(format!(
            "{rf}|{ls}|{}|{}|{}|{}|{}|{}|{}|{}",
            a.qty,
            fixed(u128::from(a.price_cents), 2),
            fixed(a.disc_price, 4),
            fixed(a.charge, 6),
            a.qty as f64 / n,
            a.price_cents as f64 / 100.0 / n,
            a.disc as f64 / 100.0 / n,
            a.count
        ));
    }
    rows
}

/// Q6's result (header first).
pub fn q6(li: &Lineitem, pool: &Pool) -> Vec<String> {
    let (lo, hi) = (days_from_civil(1994, 1, 1), days_from_civil(1995, 1, 1));
    let parts = &li.partitions;
    let total: u64 = pool
        .broadcast(|i| parts.get(i).map(|p| q6_partition(p, lo, hi)).unwrap_or(0))
        .iter()
        .sum();
    vec!["revenue".into(), fixed(u128::from(total), 4)]
}

/// Bytes of columns a query reads per row.
pub fn bytes_per_row(query: &str) -> usize {
    match query {
        // quantity, price, discount, tax, group, shipdate
        "q1" => 1 + 4 + 1 + 1 + 1 + 4,
        // quantity, price, discount, shipdate
        _ => 1 + 4 + 1 + 4,
    }
}

/// The reference answers (tests/fixtures/tpch.json, from DuckDB's tpch extension).
static TPCH_JSON: &str = include_str!("../../../../tests/fixtures/tpch.json");

/// The reference rows for `query` at scale factor `sf`, if there are any.
pub fn reference(query: &str, sf: f64) -> Option<Vec<String>> {
    let v: serde_json::Value = serde_json::from_str(TPCH_JSON).ok()?;
    let table = v[query].as_object()?;
    table
        .iter()
        .find(|(k, _)| k.parse::<f64>().ok().is_some_and(|k| (k - sf).abs() < 1e-9))
        .and_then(|(_, rows)| serde_json::from_value(rows.clone()).ok())
}

/// Compares result rows with the reference: sums and counts exactly, averages
/// (doubles) to 1e-12 relative.
pub fn check(ours: &[String], reference: &[String]) -> Result<(), String> {
    if ours.len() != reference.len() {
        return Err(format!(
            "{} rows, the reference has {}",
            ours.len(),
            reference.len()
        ));
    }
    for (a, b) in ours.iter().zip(reference) {
        let (fa, fb): (Vec<&str>, Vec<&str>) = (a.split('|').collect(), b.split('|').collect());
        let avg_cols: Vec<usize> = if fa.len() == 10 {
            vec![6, 7, 8]
        } else {
            vec![]
        };
        for (k, (x, y)) in fa.iter().zip(&fb).enumerate() {
            let same = x == y
                || avg_cols.contains(&k) && {
                    match (x.parse::<f64>(), y.parse::<f64>()) {
                        (Ok(x), Ok(y)) => ((x - y) / y).abs() <= 1e-12,
                        _ => false,
                    }
                };
            if !same {
                return Err(format!(
                    "row `{a}`: column {} is {x}, the reference says {y}",
                    k + 1
                ));
            }
        }
    }
    Ok(())
}
