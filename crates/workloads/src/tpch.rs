//! TPC-H Q1 and Q6 over an in-memory, columnar lineitem (TPC-H specification 3.0.1,
//! queries 1 and 6 with their validation parameters).
//!
//! Data: generated in-process by the `tpchgen` crate (identical to dbgen 2.14) in
//! one part per worker, or loaded from a `.tbl` file. Columns are compact: quantity
//! and discount/tax in hundredths as bytes, price in cents as u32, ship date as days
//! since 1970, return flag and line status folded into one group code. With the
//! `numa` layout each worker generates (first-touches) the partition it later scans,
//! so its pages are local to it; `naive` builds everything on one thread.
//!
//! Arithmetic is exact: sums are integers in the smallest unit (cents, 1e-4, 1e-6),
//! as the specification's decimal types allow; only the averages are doubles.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use serde_json::json;

use crate::pool::{chunk, Pool};
use crate::{prefetch, Figure, Verification, Workload, WorkloadError};

/// Days from 1970-01-01 to a civil date (H. Hinnant's days_from_civil).
pub fn days_from_civil(y: i32, m: u32, d: u32) -> i32 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe as u32 * 365 + yoe as u32 / 4 - yoe as u32 / 100 + doy;
    era * 146_097 + doe as i32 - 719_468
}

/// Q1's cut-off: date '1998-12-01' - interval '90' day (the validation DELTA).
pub fn q1_cutoff() -> i32 {
    days_from_civil(1998, 12, 1) - 90
}

/// One worker's slice of lineitem, column by column.
#[derive(Debug, Clone, Default)]
pub struct Partition {
    pub quantity: Vec<u8>,
    pub extprice_cents: Vec<u32>,
    pub discount: Vec<u8>,
    pub tax: Vec<u8>,
    /// returnflag (A=0, N=1, R=2) x 2 + linestatus (F=0, O=1).
    pub group: Vec<u8>,
    pub shipdate: Vec<i32>,
}

impl Partition {
    pub fn len(&self) -> usize {
        self.shipdate.len()
    }

    pub fn is_empty(&self) -> bool {
        self.shipdate.is_empty()
    }

    fn push(&mut self, q: u8, price: u32, disc: u8, tax: u8, group: u8, ship: i32) {
        self.quantity.push(q);
        self.extprice_cents.push(price);
        self.discount.push(disc);
        self.tax.push(tax);
        self.group.push(group);
        self.shipdate.push(ship);
    }

    /// Rows `r` copied into a new partition (first-touched by the caller).
    fn slice(&self, r: std::ops::Range<usize>) -> Partition {
        Partition {
            quantity: self.quantity[r.clone()].to_vec(),
            extprice_cents: self.extprice_cents[r.clone()].to_vec(),
            discount: self.discount[r.clone()].to_vec(),
            tax: self.tax[r.clone()].to_vec(),
            group: self.group[r.clone()].to_vec(),
            shipdate: self.shipdate[r].to_vec(),
        }
    }
}

fn group_code(returnflag: u8, linestatus: u8) -> Option<u8> {
    let rf = match returnflag {
        b'A' => 0,
        b'N' => 1,
        b'R' => 2,
        _ => return None,
    };
    let ls = match linestatus {
        b'F' => 0,
        b'O' => 1,
        _ => return None,
    };
    Some(rf * 2 + ls)
}

/// Generates part `part` (1-based) of `parts` of lineitem at scale factor `sf`.
pub fn generate_part(sf: f64, part: usize, parts: usize) -> Partition {
    let mut p = Partition::default();
    for li in tpchgen::generators::LineItemGenerator::new(sf, part as i32, parts as i32).iter() {
        let group = group_code(li.l_returnflag.as_bytes()[0], li.l_linestatus.as_bytes()[0])
            .expect("tpchgen writes A/N/R and F/O");
        p.push(
            li.l_quantity as u8,
            li.l_extendedprice.0 as u32,
            li.l_discount.0 as u8,
            li.l_tax.0 as u8,
            group,
            li.l_shipdate.to_unix_epoch(),
        );
    }
    p
}

/// How partitions are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// Each worker builds the partition it scans (pages local to it).
    Numa,
    /// One thread builds everything (pages where that thread runs).
    Naive,
}

impl std::str::FromStr for Layout {
    type Err = WorkloadError;
    fn from_str(s: &str) -> Result<Self, WorkloadError> {
        match s {
            "numa" => Ok(Layout::Numa),
            "naive" => Ok(Layout::Naive),
            other => Err(WorkloadError::BadParam {
                key: "layout".into(),
                detail: format!("`{other}` is not numa or naive"),
            }),
        }
    }
}

/// lineitem in per-worker partitions.
#[derive(Debug, Clone, Default)]
pub struct Lineitem {
    pub partitions: Vec<Partition>,
}

impl Lineitem {
    /// Each partition's column buffers as (address, bytes), for asking the kernel
    /// where their pages are.
    pub fn partition_buffers(&self) -> Vec<Vec<(*const u8, usize)>> {
        fn buf<T>(v: &[T]) -> (*const u8, usize) {
            (v.as_ptr().cast(), std::mem::size_of_val(v))
        }
        self.partitions
            .iter()
            .map(|p| {
                vec![
                    buf(&p.quantity),
                    buf(&p.extprice_cents),
                    buf(&p.discount),
                    buf(&p.tax),
                    buf(&p.group),
                    buf(&p.shipdate),
                ]
            })
            .collect()
    }

    pub fn rows(&self) -> usize {
        self.partitions.iter().map(Partition::len).sum()
    }

    /// Generates lineitem at `sf` with one partition per worker of `pool`.
    pub fn generate(sf: f64, pool: &Pool, layout: Layout) -> Lineitem {
        let t = pool.threads();
        let partitions = match layout {
            Layout::Numa => pool.broadcast(|i| generate_part(sf, i + 1, t)),
            Layout::Naive => (0..t).map(|i| generate_part(sf, i + 1, t)).collect(),
        };
        Lineitem { partitions }
    }

    /// Splits one table into one partition per worker, each copied by its worker
    /// (numa) or by the caller (naive).
    pub fn distribute(all: &Partition, pool: &Pool, layout: Layout) -> Lineitem {
        let (n, t) = (all.len(), pool.threads());
        let partitions = match layout {
            Layout::Numa => pool.broadcast(|i| all.slice(chunk(n, t, i, 64))),
            Layout::Naive => (0..t).map(|i| all.slice(chunk(n, t, i, 64))).collect(),
        };
        Lineitem { partitions }
    }
}

fn tbl_err(path: &Path, line: usize, detail: String) -> WorkloadError {
    WorkloadError::BadParam {
        key: format!("{}:{line}", path.display()),
        detail,
    }
}

/// `21168.23` in hundredths.
fn hundredths(text: &str) -> Option<u64> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    if int.is_empty()
        || frac.len() > 2
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let frac_val: u64 = if frac.is_empty() {
        0
    } else {
        frac.parse::<u64>().ok()? * if frac.len() == 1 { 10 } else { 1 }
    };
    Some(int.parse::<u64>().ok()? * 100 + frac_val)
}

fn date(text: &str) -> Option<i32> {
    let mut it = text.split('-');
    let (y, m, d) = (
        it.next()?.parse().ok()?,
        it.next()?.parse().ok()?,
        it.next()?.parse().ok()?,
    );
    if it.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

/// Reads a dbgen `lineitem.tbl` (`|`-separated, 16 fields and a trailing `|`).
///
/// # Errors
/// [`WorkloadError::BadParam`] naming `FILE:LINE` and the bad field.
pub fn read_tbl(path: &Path) -> Result<Partition, WorkloadError> {
    let text = std::fs::read_to_string(path).map_err(|e| tbl_err(path, 0, e.to_string()))?;
    let mut p = Partition::default();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('|').collect();
        if f.len() < 16 {
            return Err(tbl_err(
                path,
                n,
                format!("{} fields, lineitem has 16", f.len().saturating_sub(1)),
            ));
        }
        let bad = |k: usize, what: &str| {
            tbl_err(path, n, format!("field {} `{}` is not {what}", k + 1, f[k]))
        };
        let q: u8 = f[4]
            .parse()
            .ok()
            .filter(|q| (1..=50).contains(q))
            .ok_or_else(|| bad(4, "a quantity 1-50"))?;
        let price = hundredths(f[5])
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| bad(5, "a price with 2 decimals"))?;
        let disc = hundredths(f[6])
            .filter(|v| *v <= 10)
            .ok_or_else(|| bad(6, "a discount 0.00-0.10"))? as u8;
        let tax = hundredths(f[7])
            .filter(|v| *v <= 8)
            .ok_or_else(|| bad(7, "a tax 0.00-0.08"))? as u8;
        let group = match (f[8].as_bytes(), f[9].as_bytes()) {
            ([rf], [ls]) => group_code(*rf, *ls),
            _ => None,
        }
        .ok_or_else(|| bad(8, "a return flag A/N/R followed by a line status F/O"))?;
        let ship = date(f[10]).ok_or_else(|| bad(10, "a date YYYY-MM-DD"))?;
        p.push(q, price, disc, tax, group, ship);
    }
    Ok(p)
}

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
fn q6_scan(
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
unsafe fn q6_scan_avx2(
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
    // SAFETY (whole block): every load reads 8 elements (32 or 8 bytes) at index
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
fn fixed(v: u128, places: u32) -> String {
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
static TPCH_JSON: &str = include_str!("../../../tests/fixtures/tpch.json");

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

/// TPC-H Q1 or Q6 as a workload.
pub struct Tpch {
    pub query: String,
    pub sf: f64,
    pub layout: Layout,
    pub repeat: usize,
    tbl: Option<std::path::PathBuf>,
    data: Lineitem,
    rows: Vec<String>,
    seconds: f64,
}

impl Tpch {
    /// # Errors
    /// [`WorkloadError::BadParam`] for an unknown query or a bad scale factor.
    pub fn new(
        query: &str,
        sf: f64,
        layout: Layout,
        repeat: usize,
        tbl: Option<std::path::PathBuf>,
    ) -> Result<Tpch, WorkloadError> {
        if !["q1", "q6"].contains(&query) {
            return Err(WorkloadError::BadParam {
                key: "query".into(),
                detail: format!("`{query}` is not q1 or q6"),
            });
        }
        if !(sf > 0.0 && sf <= 1000.0) {
            return Err(WorkloadError::BadParam {
                key: "sf".into(),
                detail: format!("scale factor {sf} is not in (0, 1000]"),
            });
        }
        Ok(Tpch {
            query: query.into(),
            sf,
            layout,
            repeat: repeat.max(1),
            tbl,
            data: Lineitem::default(),
            rows: Vec::new(),
            seconds: 0.0,
        })
    }

    /// From sweep parameters: `query` (q1), `sf` (0.01), `layout` (numa), `repeat` (5).
    ///
    /// # Errors
    /// [`WorkloadError::BadParam`] naming the parameter.
    pub fn from_params(params: &BTreeMap<String, String>) -> Result<Tpch, WorkloadError> {
        if let Some(k) = params
            .keys()
            .find(|k| !["query", "sf", "layout", "repeat"].contains(&k.as_str()))
        {
            return Err(WorkloadError::BadParam {
                key: k.clone(),
                detail: "unknown (tpch takes query, sf, layout, repeat)".into(),
            });
        }
        let sf = params
            .get("sf")
            .map(|s| s.parse::<f64>())
            .transpose()
            .map_err(|_| WorkloadError::BadParam {
                key: "sf".into(),
                detail: "not a number".into(),
            })?;
        let repeat = params
            .get("repeat")
            .map(|s| s.parse::<usize>())
            .transpose()
            .map_err(|_| WorkloadError::BadParam {
                key: "repeat".into(),
                detail: "not a count".into(),
            })?;
        Tpch::new(
            params.get("query").map(String::as_str).unwrap_or("q1"),
            sf.unwrap_or(0.01),
            params
                .get("layout")
                .map(|s| s.parse())
                .transpose()?
                .unwrap_or(Layout::Numa),
            repeat.unwrap_or(5),
            None,
        )
    }

    pub fn rows(&self) -> &[String] {
        &self.rows
    }

    /// The table as prepared (partition i built and scanned by worker i).
    pub fn lineitem(&self) -> &Lineitem {
        &self.data
    }
}

impl Workload for Tpch {
    fn name(&self) -> &'static str {
        "tpch"
    }

    fn primary_figure(&self) -> &'static str {
        "rows_per_s"
    }

    fn prepare(&mut self, pool: &Pool) -> Result<(), WorkloadError> {
        self.data = match &self.tbl {
            Some(path) => Lineitem::distribute(&read_tbl(path)?, pool, self.layout),
            None => Lineitem::generate(self.sf, pool, self.layout),
        };
        Ok(())
    }

    fn run(&mut self, pool: &Pool) -> (f64, Vec<Figure>) {
        let mut best = f64::INFINITY;
        for _ in 0..self.repeat {
            let t = Instant::now();
            self.rows = if self.query == "q1" {
                q1(&self.data, pool)
            } else {
                q6(&self.data, pool)
            };
            best = best.min(t.elapsed().as_secs_f64());
        }
        self.seconds = best;
        let rows = self.data.rows() as f64;
        let figures = vec![
            Figure {
                name: "rows_per_s".into(),
                value: rows / best,
                unit: "rows/s",
            },
            Figure {
                name: "scanned_gb_per_s".into(),
                value: rows * bytes_per_row(&self.query) as f64 / best / 1e9,
                unit: "GB/s",
            },
        ];
        (best, figures)
    }

    fn verify(&self, _pool: &Pool) -> Verification {
        match reference(&self.query, self.sf) {
            Some(r) => match check(&self.rows, &r) {
                Ok(()) => Verification { passed: true, detail: format!("{} at SF {} equals the reference answer", self.query, self.sf) },
                Err(e) => Verification { passed: false, detail: e },
            },
            None => Verification {
                passed: false,
                detail: format!("unavailable: no reference answer for {} at SF {} (references exist for SF 0.01, 0.1 and 1)", self.query, self.sf),
            },
        }
    }

    fn detail(&self) -> serde_json::Value {
        json!({
            "query": self.query,
            "sf": self.sf,
            "layout": self.layout,
            "lineitem_rows": self.data.rows(),
            "rows": self.rows,
            "seconds": self.seconds,
            "scanned_bytes_per_row": bytes_per_row(&self.query),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::pool::test_pool as pool;

    #[test]
    fn dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(q1_cutoff(), days_from_civil(1998, 9, 2));
    }

    #[test]
    fn q1_and_q6_at_sf_0_01_equal_the_reference_in_both_layouts() {
        for (threads, layout) in [(1, Layout::Numa), (2, Layout::Numa), (2, Layout::Naive)] {
            let p = pool(threads);
            let li = Lineitem::generate(0.01, &p, layout);
            assert_eq!(li.rows(), 60_175);
            check(&q1(&li, &p), &reference("q1", 0.01).unwrap()).unwrap();
            check(&q6(&li, &p), &reference("q6", 0.01).unwrap()).unwrap();
        }
    }

    #[test]
    fn avx2_and_portable_q6_agree() {
        let p = generate_part(0.01, 1, 1);
        let (lo, hi) = (days_from_civil(1994, 1, 1), days_from_civil(1995, 1, 1));
        let portable = q6_scan(
            &p.shipdate,
            &p.discount,
            &p.quantity,
            &p.extprice_cents,
            lo,
            hi,
        );
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // Odd lengths exercise the scalar tail too.
            for n in [p.len(), p.len() - 3, 1000, 7] {
                // SAFETY: AVX2 is supported (checked above).
                let simd = unsafe {
                    q6_scan_avx2(
                        &p.shipdate[..n],
                        &p.discount[..n],
                        &p.quantity[..n],
                        &p.extprice_cents[..n],
                        lo,
                        hi,
                    )
                };
                assert_eq!(
                    simd,
                    q6_scan(
                        &p.shipdate[..n],
                        &p.discount[..n],
                        &p.quantity[..n],
                        &p.extprice_cents[..n],
                        lo,
                        hi
                    )
                );
            }
        }
        assert_eq!(
            fixed(u128::from(portable), 4),
            reference("q6", 0.01).unwrap()[1]
        );
    }

    #[test]
    fn check_catches_a_wrong_digit() {
        let r = reference("q6", 0.01).unwrap();
        let mut bad = r.clone();
        bad[1] = "1193053.2254".into();
        assert!(check(&bad, &r).unwrap_err().contains("column 1"));
        assert!(reference("q1", 3.0).is_none());
    }

    #[test]
    fn tbl_errors_name_the_line_and_field() {
        let dir = std::env::temp_dir().join(format!("scalescope-tbl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.tbl");
        std::fs::write(&f, "1|155190|7706|1|17|21168.23|0.04|0.02|N|O|1996-03-13|1996-02-12|1996-03-22|DELIVER IN PERSON|TRUCK|x|\n1|2|3|4|17|21x68.23|0.04|0.02|N|O|1996-03-13|a|b|c|d|e|\n").unwrap();
        let e = read_tbl(&f).unwrap_err().to_string();
        assert!(
            e.contains("bad.tbl:2") && e.contains("field 6 `21x68.23`"),
            "{e}"
        );
        std::fs::write(&f, "1|2|3\n").unwrap();
        assert!(read_tbl(&f).unwrap_err().to_string().contains("bad.tbl:1"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
