//! The lineitem columns Q1 and Q6 read: generated in parts by `tpchgen` or read
//! from a `.tbl` file, compacted into bytes and integers, in one partition per
//! worker or one for all (the layout).

use std::path::Path;

use serde::Serialize;

use crate::blob::Column;
use crate::pool::{chunk, Pool};
use crate::WorkloadError;

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

/// One worker's slice of lineitem, column by column: owned, or read in place
/// from a mapped `.cols` cache (a column its query does not scan is then empty).
#[derive(Debug, Clone, Default)]
pub struct Partition {
    pub quantity: Column<u8>,
    pub extprice_cents: Column<u32>,
    pub discount: Column<u8>,
    pub tax: Column<u8>,
    /// returnflag (A=0, N=1, R=2) x 2 + linestatus (F=0, O=1).
    pub group: Column<u8>,
    pub shipdate: Column<i32>,
}

/// Moves the pages of `bytes` to the node of the CPU this thread runs on (see
/// [`Partition::home_here`]). On a machine with one NUMA node
/// (`/sys/devices/system/node/online` is `0`, or absent) there is nowhere else a
/// page could be, and nothing is asked.
pub(crate) fn home_bytes(bytes: &[u8]) {
    static SEVERAL_NODES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let several = SEVERAL_NODES.get_or_init(|| {
        std::fs::read_to_string("/sys/devices/system/node/online").is_ok_and(|s| s.trim() != "0")
    });
    if bytes.is_empty() || !several {
        return;
    }
    if let Ok(node) = scalescope_place::mempolicy::current_node() {
        let _ = scalescope_place::mempolicy::move_pages_to(bytes.as_ptr(), bytes.len(), node);
    }
}

/// Rows as they are generated or parsed, before they become a [`Partition`].
#[derive(Default)]
struct Rows {
    quantity: Vec<u8>,
    extprice_cents: Vec<u32>,
    discount: Vec<u8>,
    tax: Vec<u8>,
    group: Vec<u8>,
    shipdate: Vec<i32>,
}

impl Rows {
    fn push(&mut self, q: u8, price: u32, disc: u8, tax: u8, group: u8, ship: i32) {
        self.quantity.push(q);
        self.extprice_cents.push(price);
        self.discount.push(disc);
        self.tax.push(tax);
        self.group.push(group);
        self.shipdate.push(ship);
    }

    fn done(self) -> Partition {
        Partition {
            quantity: self.quantity.into(),
            extprice_cents: self.extprice_cents.into(),
            discount: self.discount.into(),
            tax: self.tax.into(),
            group: self.group.into(),
            shipdate: self.shipdate.into(),
        }
    }
}

impl Partition {
    /// Moves the columns' pages to the node of the CPU this thread runs on. Building
    /// a partition in its worker first-touches only fresh pages: small columns grow
    /// inside the allocator's arenas, on pages another thread (on another node) may
    /// have touched first, as the emulated lab found. Best effort: a kernel without
    /// NUMA support leaves everything where it is.
    pub(crate) fn home_here(&self) {
        home_bytes(crate::blob::bytes_of(&self.quantity));
        home_bytes(crate::blob::bytes_of(&self.extprice_cents));
        home_bytes(crate::blob::bytes_of(&self.discount));
        home_bytes(crate::blob::bytes_of(&self.tax));
        home_bytes(crate::blob::bytes_of(&self.group));
        home_bytes(crate::blob::bytes_of(&self.shipdate));
    }

    pub fn len(&self) -> usize {
        self.shipdate.len()
    }

    pub fn is_empty(&self) -> bool {
        self.shipdate.is_empty()
    }

    /// Rows `r` copied into a new partition (first-touched by the caller).
    fn slice(&self, r: std::ops::Range<usize>) -> Partition {
        Partition {
            quantity: self.quantity[r.clone()].to_vec().into(),
            extprice_cents: self.extprice_cents[r.clone()].to_vec().into(),
            discount: self.discount[r.clone()].to_vec().into(),
            tax: self.tax[r.clone()].to_vec().into(),
            group: self.group[r.clone()].to_vec().into(),
            shipdate: self.shipdate[r].to_vec().into(),
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

/// The text pool lineitem's generator draws `l_comment` from. tpchgen's default is
/// dbgen's 300 MiB pool, built once per process (about a second, and 300 MiB of
/// peak memory whatever the scale factor). No column kept here is a comment, and
/// every column has its own random stream that draws a fixed count per row, so a
/// small pool changes the comments alone: every kept value is dbgen's (the
/// reference answers at SF 0.01, 0.1 and 1 check it, and
/// `small_text_pool_keeps_every_column` compares the rows with the default pool's).
fn comment_pool() -> &'static tpchgen::text::TextPool {
    static POOL: std::sync::OnceLock<tpchgen::text::TextPool> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        tpchgen::text::TextPool::new(
            1 << 16,
            tpchgen::distribution::Distributions::static_default(),
        )
    })
}

/// Lineitem part `part` (1-based) of `parts` at scale factor `sf`, comments drawn
/// from the small pool.
fn lineitem(sf: f64, part: usize, parts: usize) -> tpchgen::generators::LineItemGenerator<'static> {
    tpchgen::generators::LineItemGenerator::new_with_distributions_and_text_pool(
        sf,
        part as i32,
        parts as i32,
        tpchgen::distribution::Distributions::static_default(),
        comment_pool(),
    )
}

/// Generates part `part` (1-based) of `parts` of lineitem at scale factor `sf`.
pub fn generate_part(sf: f64, part: usize, parts: usize) -> Partition {
    generate_part_checked(sf, part, parts).0
}

/// Part `part` of `parts` of lineitem, and Q6's revenue over its rows (in 1e-4)
/// summed row by row from the generator's own values as they are made: an answer
/// that owes nothing to the columns or the scan kernels it later checks.
pub fn generate_part_checked(sf: f64, part: usize, parts: usize) -> (Partition, u128) {
    let (lo, hi) = (days_from_civil(1994, 1, 1), days_from_civil(1995, 1, 1));
    let mut p = Rows::default();
    let mut q6 = 0u128;
    for li in lineitem(sf, part, parts).iter() {
        let ship = li.l_shipdate.to_unix_epoch();
        if (lo..hi).contains(&ship) && (5..=7).contains(&li.l_discount.0) && li.l_quantity < 24 {
            q6 += (li.l_extendedprice.0 as i128 * li.l_discount.0 as i128) as u128;
        }
        // tpchgen writes only A/N/R and F/O; a row with another flag would be left
        // out of the columns, and the check against the reference would fail.
        let flags = (
            li.l_returnflag.bytes().next(),
            li.l_linestatus.bytes().next(),
        );
        let Some(group) = flags.0.zip(flags.1).and_then(|(r, l)| group_code(r, l)) else {
            continue;
        };
        p.push(
            li.l_quantity as u8,
            li.l_extendedprice.0 as u32,
            li.l_discount.0 as u8,
            li.l_tax.0 as u8,
            group,
            ship,
        );
    }
    (p.done(), q6)
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

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Layout::Numa => "numa",
            Layout::Naive => "naive",
        })
    }
}

impl std::str::FromStr for Layout {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "numa" => Ok(Layout::Numa),
            "naive" => Ok(Layout::Naive),
            other => Err(format!("`{other}` is not numa or naive")),
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
        Lineitem::generate_checked(sf, pool, layout).0
    }

    /// Generates lineitem at `sf` with one partition per worker of `pool`, and Q6's
    /// revenue summed row by row as it was generated ([`generate_part_checked`]).
    pub fn generate_checked(sf: f64, pool: &Pool, layout: Layout) -> (Lineitem, u128) {
        let t = pool.threads();
        let parts: Vec<(Partition, u128)> = match layout {
            Layout::Numa => pool.broadcast(|i| {
                let p = generate_part_checked(sf, i + 1, t);
                p.0.home_here();
                p
            }),
            Layout::Naive => (0..t)
                .map(|i| generate_part_checked(sf, i + 1, t))
                .collect(),
        };
        let q6 = parts.iter().map(|p| p.1).sum();
        let partitions = parts.into_iter().map(|p| p.0).collect();
        (Lineitem { partitions }, q6)
    }

    /// Splits one table into one partition per worker, each copied by its worker
    /// (numa) or by the caller (naive).
    pub fn distribute(all: &Partition, pool: &Pool, layout: Layout) -> Lineitem {
        let (n, t) = (all.len(), pool.threads());
        let partitions = match layout {
            Layout::Numa => pool.broadcast(|i| {
                let p = all.slice(chunk(n, t, i, 64));
                p.home_here();
                p
            }),
            Layout::Naive => (0..t).map(|i| all.slice(chunk(n, t, i, 64))).collect(),
        };
        Lineitem { partitions }
    }
}

fn tbl_err(path: &Path, line: usize, detail: String) -> WorkloadError {
    WorkloadError::Input {
        file: path.display().to_string(),
        line,
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
    // Streamed through the bounded input layer: a regular file, lines of at most
    // 64 KiB, so a FIFO or a 1 GiB line is an error, not a hang or 1 GiB held.
    let mut lines = scalescope_files::open(path, scalescope_files::Kind::TBL)?.lines();
    let mut buf = Vec::new();
    let mut p = Rows::default();
    while let Some(line) = lines.next_text(&mut buf)? {
        let n = lines.number();
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
            let shown = scalescope_files::excerpt::of(f[k].as_bytes());
            tbl_err(path, n, format!("field {} `{shown}` is not {what}", k + 1))
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
    Ok(p.done())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The small comment pool changes `l_comment` and nothing else: every other
    /// field of every row equals what tpchgen's default (dbgen's 300 MiB) pool gives.
    #[test]
    fn small_text_pool_keeps_every_column() {
        let default = tpchgen::generators::LineItemGenerator::new(0.01, 2, 3);
        let small = lineitem(0.01, 2, 3);
        let (mut rows, mut comments_differ) = (0, 0);
        for (a, b) in default.iter().zip(small.iter()) {
            let strip = |s: String, c: &str| s.replace(c, "");
            assert_eq!(
                strip(a.to_string(), a.l_comment),
                strip(b.to_string(), b.l_comment),
                "row {rows}"
            );
            comments_differ += usize::from(a.l_comment != b.l_comment);
            rows += 1;
        }
        assert_eq!(rows, default.iter().count());
        assert_eq!(rows, small.iter().count());
        assert!(rows > 10_000, "{rows}");
        // The pools really differ, so the equality above is not a tautology.
        assert!(comments_differ > rows / 2, "{comments_differ} of {rows}");
    }
}
