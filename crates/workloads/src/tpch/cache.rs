//! The lineitem column cache (`.cols`, format 1): lineitem generated once, on every
//! worker in parallel, written as a checked file ([`crate::blob`], magic
//! `SCALESCOPE-COLS\0`) with six sections (quantity u8, extended price u32 cents,
//! discount u8, tax u8, group u8, ship date i32 days) and the description
//! `{"table": "lineitem", "sf": SF, "rows": N, "generator": "tpchgen 2"}`. A run
//! maps it read-only and scans it in place, in one partition per worker and only
//! the columns its query reads: each worker faults in its partition's pages and
//! moves any on another NUMA node to its own (so they sit where it scans them),
//! then checks every block of it. Nothing is copied or zeroed per run: the pages
//! are the page cache's (an earlier version read each partition into fresh memory
//! first-touched by its worker, which cost more than twice reading the file).

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;

use super::data::{generate_part_checked, Layout, Lineitem, Partition};
use crate::blob::{self, Blob, BlobError, Mapping};
use crate::pool::Pool;
use crate::WorkloadError;

const MAGIC: &[u8; 16] = b"SCALESCOPE-COLS\0";
/// The format written and read.
pub const VERSION: u32 = 1;

/// The cache key of lineitem at `sf`.
pub fn key(sf: f64) -> String {
    format!("tpch lineitem v{VERSION} sf{sf} tpchgen2")
}

/// Generates lineitem at `sf` on every worker of `pool` (one part each) and writes
/// it to `path`; returns the rows and Q6's revenue summed row by row (1e-4).
///
/// # Errors
/// The file cannot be written.
pub fn build(sf: f64, pool: &Pool, path: &Path) -> Result<(usize, u128), WorkloadError> {
    let t = pool.threads();
    let parts: Vec<(Partition, u128)> = pool.broadcast(|i| generate_part_checked(sf, i + 1, t));
    let rows = parts.iter().map(|p| p.0.len()).sum();
    let q6 = parts.iter().map(|p| p.1).sum();
    let ps: Vec<&Partition> = parts.iter().map(|p| &p.0).collect();
    let sections = vec![
        ps.iter().map(|p| blob::bytes_of(&p.quantity)).collect(),
        ps.iter()
            .map(|p| blob::bytes_of(&p.extprice_cents))
            .collect(),
        ps.iter().map(|p| blob::bytes_of(&p.discount)).collect(),
        ps.iter().map(|p| blob::bytes_of(&p.tax)).collect(),
        ps.iter().map(|p| blob::bytes_of(&p.group)).collect(),
        ps.iter().map(|p| blob::bytes_of(&p.shipdate)).collect(),
    ];
    let desc = json!({"table": "lineitem", "sf": sf, "rows": rows, "generator": "tpchgen 2"});
    blob::write(path, MAGIC, VERSION, &desc, &sections)?;
    Ok((rows, q6))
}

/// What loading the cache cost, in seconds, its size and fingerprint.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub first_touch_secs: f64,
    pub load_secs: f64,
    pub bytes: u64,
    pub fingerprint: String,
}

/// The sections a query scans: Q6 reads quantity, price, discount and ship date,
/// Q1 every column.
fn sections_of(query: &str) -> &'static [usize] {
    match query {
        "q6" => &[0, 1, 2, 5],
        _ => &[0, 1, 2, 3, 4, 5],
    }
}

/// Faults in the mapped pages of `bytes` from the calling thread (their page-table
/// entries, `MADV_POPULATE_READ`; a read of each page where the kernel lacks it):
/// no copy, no zeroing, the pages stay the page cache's.
fn populate(bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    let start = bytes.as_ptr() as usize;
    let page = start / 4096 * 4096;
    // SAFETY: `page..start + len` is mapped (it holds `bytes`, from the start of its
    // page, which the same mapping holds); MADV_POPULATE_READ only faults pages in
    // for reading, changing no contents, and a failure is harmless (handled below).
    let rc = unsafe {
        libc::madvise(
            page as *mut libc::c_void,
            start + bytes.len() - page,
            libc::MADV_POPULATE_READ,
        )
    };
    if rc != 0 {
        bytes.iter().step_by(4096).for_each(|b| {
            std::hint::black_box(*b);
        });
    }
}

/// Worker `i`'s partition `r` of the mapped cache, in the sections `query` scans
/// (the others empty): each column's pages faulted in and moved to this thread's
/// node (the seconds that took), then every block checked.
fn part(
    blob: &Blob,
    map: &Arc<Mapping>,
    r: Range<usize>,
    query: &str,
) -> Result<(Partition, f64), BlobError> {
    let touch = std::cell::Cell::new(0.0);
    let prepare = |bytes: &[u8]| {
        let clock = Instant::now();
        populate(bytes);
        super::data::home_bytes(bytes);
        touch.set(touch.get() + clock.elapsed().as_secs_f64());
    };
    let pick = |s| match sections_of(query).contains(&s) {
        true => r.clone(),
        false => r.start..r.start,
    };
    let p = Partition {
        quantity: blob.part(map, 0, pick(0), prepare)?,
        extprice_cents: blob.part(map, 1, pick(1), prepare)?,
        discount: blob.part(map, 2, pick(2), prepare)?,
        tax: blob.part(map, 3, pick(3), prepare)?,
        group: blob.part(map, 4, pick(4), prepare)?,
        shipdate: blob.part(map, 5, pick(5), prepare)?,
    };
    Ok((p, touch.get()))
}

/// Opens the cache at `path` for scale factor `sf`: every column holds the same
/// number of rows, and the description names this scale factor.
fn open(path: &Path, sf: f64) -> Result<(Blob, usize), BlobError> {
    let blob = Blob::open(path, MAGIC, &[VERSION])?;
    let rows = blob.len_of::<u8>(0)?;
    let bad = |detail: String| BlobError::Bad {
        file: path.display().to_string(),
        detail,
    };
    let same = [2, 3, 4]
        .iter()
        .all(|&s| blob.len_of::<u8>(s).ok() == Some(rows))
        && blob.len_of::<u32>(1).ok() == Some(rows)
        && blob.len_of::<i32>(5).ok() == Some(rows);
    if !same || blob.description["rows"].as_u64() != Some(rows as u64) {
        return Err(bad("columns of different lengths: corrupted".into()));
    }
    if blob.description["sf"].as_f64() != Some(sf) {
        return Err(bad(format!(
            "holds scale factor {}, not {sf}",
            blob.description["sf"]
        )));
    }
    Ok((blob, rows))
}

/// Loads the columns `query` scans of lineitem at `sf` from `path` (the others
/// stay empty) in one partition per worker, read in place from the file mapped
/// read-only: with the numa layout each worker faults in its own partition's pages
/// and moves any that sit on another node to its own, with the naive one this
/// thread does all; then every block is checked by the thread that prepared it.
/// `first_touch_secs` is the longest a thread spent faulting in and moving,
/// `load_secs` the rest of the load (map and checks).
///
/// # Errors
/// The file is missing, stale or corrupt (then it must be rebuilt, never used).
pub fn load(
    path: &Path,
    sf: f64,
    pool: &Pool,
    layout: Layout,
    query: &str,
) -> Result<(Lineitem, Loaded), BlobError> {
    let clock = Instant::now();
    let (blob, rows) = open(path, sf)?;
    let map = blob.map(false)?;
    let t = pool.threads();
    let one = |i: usize| part(&blob, &map, blob::split::<u8>(rows, t, i), query);
    let parts: Vec<(Partition, f64)> = match layout {
        Layout::Numa => pool.broadcast(one).into_iter().collect::<Result<_, _>>()?,
        Layout::Naive => (0..t).map(one).collect::<Result<_, _>>()?,
    };
    let first_touch_secs = match layout {
        Layout::Numa => parts.iter().map(|p| p.1).fold(0.0, f64::max),
        Layout::Naive => parts.iter().map(|p| p.1).sum(),
    };
    let loaded = Loaded {
        first_touch_secs,
        load_secs: (clock.elapsed().as_secs_f64() - first_touch_secs).max(0.0),
        bytes: (rows * super::query::bytes_per_row(query)) as u64,
        fingerprint: blob.fingerprint(),
    };
    let partitions = parts.into_iter().map(|p| p.0).collect();
    Ok((Lineitem { partitions }, loaded))
}
