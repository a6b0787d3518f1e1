//! The lineitem column cache (`.cols`, format 1): lineitem generated once, on every
//! worker in parallel, written as a checked file ([`crate::blob`], magic
//! `SCALESCOPE-COLS\0`) with six sections (quantity u8, extended price u32 cents,
//! discount u8, tax u8, group u8, ship date i32 days) and the description
//! `{"table": "lineitem", "sf": SF, "rows": N, "generator": "tpchgen 2"}`. A run
//! loads it with one partition per worker: each worker faults in its partition's
//! pages (first touch, so they sit on its node), then reads its rows into them,
//! checking every block it read.

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use serde_json::json;

use super::data::{generate_part_checked, Layout, Lineitem, Partition};
use crate::blob::{self, Blob, BlobError};
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

/// A partition of `rows` rows with every page faulted in by the calling thread.
fn touched(rows: usize) -> Partition {
    let mut p = Partition {
        quantity: vec![0; rows],
        extprice_cents: vec![0; rows],
        discount: vec![0; rows],
        tax: vec![0; rows],
        group: vec![0; rows],
        shipdate: vec![0; rows],
    };
    blob::touch(&mut p.quantity);
    blob::touch(&mut p.extprice_cents);
    blob::touch(&mut p.discount);
    blob::touch(&mut p.tax);
    blob::touch(&mut p.group);
    blob::touch(&mut p.shipdate);
    p
}

/// Reads rows from `start` into `p`, every column.
fn read(blob: &Blob, start: usize, p: &mut Partition) -> Result<(), BlobError> {
    blob.read_into(0, start, &mut p.quantity)?;
    blob.read_into(1, start, &mut p.extprice_cents)?;
    blob.read_into(2, start, &mut p.discount)?;
    blob.read_into(3, start, &mut p.tax)?;
    blob.read_into(4, start, &mut p.group)?;
    blob.read_into(5, start, &mut p.shipdate)
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

/// Loads lineitem at `sf` from `path` in one partition per worker: with the numa
/// layout each worker first-touches and reads its own (then moves any page that
/// still sits elsewhere to its node), with the naive one this thread does all.
///
/// # Errors
/// The file is missing, stale or corrupt (then it must be rebuilt, never used).
pub fn load(
    path: &Path,
    sf: f64,
    pool: &Pool,
    layout: Layout,
) -> Result<(Lineitem, Loaded), BlobError> {
    let (blob, rows) = open(path, sf)?;
    let t = pool.threads();
    let range = |i: usize| blob::split::<u8>(rows, t, i);
    let clock = Instant::now();
    let parts: Vec<Partition> = match layout {
        Layout::Numa => pool.broadcast(|i| touched(range(i).len())),
        Layout::Naive => (0..t).map(|i| touched(range(i).len())).collect(),
    };
    let first_touch_secs = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    let partitions = match layout {
        Layout::Numa => {
            let slots: Vec<Mutex<Option<Partition>>> =
                parts.into_iter().map(|p| Mutex::new(Some(p))).collect();
            pool.broadcast(|i| {
                let mut p = slots[i]
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .take()
                    .unwrap_or_default();
                read(&blob, range(i).start, &mut p)?;
                p.home_here();
                Ok(p)
            })
            .into_iter()
            .collect::<Result<Vec<_>, BlobError>>()?
        }
        Layout::Naive => {
            let mut parts = parts;
            for (i, p) in parts.iter_mut().enumerate() {
                read(&blob, range(i).start, p)?;
            }
            parts
        }
    };
    let loaded = Loaded {
        first_touch_secs,
        load_secs: clock.elapsed().as_secs_f64(),
        bytes: (rows * super::query::bytes_per_row("q1")) as u64,
        fingerprint: blob.fingerprint(),
    };
    Ok((Lineitem { partitions }, loaded))
}
