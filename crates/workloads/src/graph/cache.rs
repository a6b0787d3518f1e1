//! The binary CSR cache: a graph saved once, reloaded without parsing, by every
//! worker at once. Format 2 (written) is a checked file ([`crate::blob`]) with magic
//! `SCALESCOPE-CSR\0\0`, a description `{"vertices": n, "entries": m, "source": ..}`
//! and two sections: the (n + 1) u64 offsets and the m u32 neighbours (2 x undirected
//! edges), each 16 KiB block with its CRC-32. A run maps the file read-only (its
//! pages are the page cache's, shared by every run, nothing copied), and the workers
//! check every block's CRC, that the offsets rise and that the neighbours are
//! vertices, each its share. A run handed the token of a full check of this very file
//! by its sweep ([`load_trusting`]; same device, inode, size, times and header
//! checksum) checks the header and the offsets only: the O(edges) passes are the
//! sweep's, once.
//!
//! Format 1 (still read, no longer written), little-endian:
//!
//! | bytes | field |
//! |---|---|
//! | 16 | magic `SCALESCOPE-CSR\0\0` |
//! | 4 | format version (1) |
//! | 4 | reserved (0) |
//! | 8 | vertices n |
//! | 8 | neighbour entries (2 x undirected edges) |
//! | 8 (n + 1) | offsets |
//! | 4 x entries | neighbours |
//! | 8 | FNV-1a 64 of everything before it |
//!
//! Loading checks the magic, the version, the length, the checksum, that offsets
//! rise to the entry count and that every neighbour is a vertex.

use std::path::Path;

use std::time::Instant;

use super::load::LoadError;
use super::Graph;
use crate::blob::{self, Blob, BlobError};
use crate::pool::Pool;

const MAGIC: &[u8; 16] = b"SCALESCOPE-CSR\0\0";
/// The format [`save`] writes.
pub const VERSION: u32 = 2;

/// What loading a cache cost in seconds (format 2 is mapped, so nothing is first
/// touched: the pages are the page cache's), and the file's size and fingerprint.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    pub first_touch_secs: Option<f64>,
    pub load_secs: f64,
    pub bytes: u64,
    pub fingerprint: String,
    /// Which check the file had ([`FULL_CHECK`] or [`TOKEN_CHECK`]).
    pub check: &'static str,
    /// The token of the file checked in full (none after a lighter check, or for
    /// format 1, which is read into memory).
    pub token: Option<String>,
}

/// What a full check covers (the `setup.input_check` of the run).
pub const FULL_CHECK: &str = "full: every block's CRC, the offsets and the neighbours";
/// What a run trusting its sweep's check covers.
pub const TOKEN_CHECK: &str =
    "header and offsets; blocks and neighbours checked by the sweep (same file, unchanged)";

fn blob_err(e: BlobError) -> LoadError {
    match e {
        BlobError::Io { file, cause } => LoadError::Io { file, cause },
        BlobError::Bad { file, detail } => LoadError::Syntax {
            file,
            line: 0,
            detail,
        },
        BlobError::File(e) => LoadError::File(e),
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Writes `g` to `path` (format 2); `source` names the input in the description.
///
/// # Errors
/// The I/O error, naming the file.
pub fn save(g: &Graph, path: &Path, source: &str) -> Result<(), LoadError> {
    let desc = serde_json::json!({"vertices": g.vertices(), "entries": g.neighbors.len(), "source": source});
    blob::write(
        path,
        MAGIC,
        VERSION,
        &desc,
        &[
            vec![blob::bytes_of(&g.offsets)],
            vec![blob::bytes_of(&g.neighbors)],
        ],
    )
    .map_err(blob_err)
}

/// Reads a cache (format 2 on the pool's workers, format 1 on this thread), checking
/// it; with what the load cost.
///
/// # Errors
/// [`LoadError::Syntax`] (line 0) naming what is wrong with the file.
pub fn load(path: &Path, pool: &Pool) -> Result<(Graph, Loaded), LoadError> {
    load_trusting(path, pool, None)
}

/// [`load`], but skipping the block and neighbour checks when `token` is the
/// [`Loaded::token`] of a full check of this same, unchanged file (any other token,
/// or none, checks in full).
///
/// # Errors
/// As [`load`].
pub fn load_trusting(
    path: &Path,
    pool: &Pool,
    token: Option<&str>,
) -> Result<(Graph, Loaded), LoadError> {
    let mut start = [0u8; 20];
    let version = scalescope_files::input::open_regular(path, scalescope_files::Kind::CACHE)
        .map_err(std::io::Error::other)
        .and_then(|f| std::os::unix::fs::FileExt::read_exact_at(&f, &mut start, 0))
        .ok()
        .filter(|()| &start[..16] == MAGIC)
        .map(|()| u32::from_le_bytes([start[16], start[17], start[18], start[19]]));
    let blob = match version {
        Some(1) => {
            let t = Instant::now();
            let g = load_v1(path)?;
            let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
            let loaded = Loaded {
                load_secs: t.elapsed().as_secs_f64(),
                bytes,
                fingerprint: format!("v1-{bytes}"),
                check: FULL_CHECK,
                ..Loaded::default()
            };
            return Ok((g, loaded));
        }
        _ => Blob::open(path, MAGIC, &[VERSION]).map_err(blob_err)?,
    };
    let mut blob = blob;
    let trusted = blob.trust(token);
    load_v2(&blob, pool, trusted).map_err(blob_err)
}

fn load_v2(blob: &Blob, pool: &Pool, trusted: bool) -> Result<(Graph, Loaded), BlobError> {
    let t = Instant::now();
    let map = blob.map(true)?;
    let offsets = blob.column::<u64>(&map, 0, pool)?;
    let neighbors = blob.column::<u32>(&map, 1, pool)?;
    let bad = |what: String| BlobError::Bad {
        file: blob.description["source"].to_string(),
        detail: what,
    };
    let (n, m) = (offsets.len().saturating_sub(1), neighbors.len());
    if offsets.first() != Some(&0) || offsets.last() != Some(&(m as u64)) || n > u32::MAX as usize {
        return Err(bad("offsets do not rise to the entry count".into()));
    }
    let t_n = pool.threads();
    let problems: Vec<String> = pool
        .broadcast(|i| {
            let o = &offsets[crate::pool::chunk(n + 1, t_n, i, 1)];
            let mut out = Vec::new();
            if o.windows(2).any(|w| w[0] > w[1]) {
                out.push("offsets do not rise to the entry count".to_string());
            }
            let r = crate::pool::chunk(if trusted { 0 } else { m }, t_n, i, 1);
            if let Some(v) = neighbors[r]
                .iter()
                .copied()
                .max()
                .filter(|&v| v as usize >= n)
            {
                out.push(format!("neighbour {v} is not a vertex (n = {n})"));
            }
            out
        })
        .concat();
    let joins = (1..t_n).map(|i| crate::pool::chunk(n + 1, t_n, i, 1).start);
    if joins
        .filter(|&j| j > 0 && j <= n)
        .any(|j| offsets[j - 1] > offsets[j])
    {
        return Err(bad("offsets do not rise to the entry count".into()));
    }
    if let Some(p) = problems.into_iter().next() {
        return Err(bad(p));
    }
    let loaded = Loaded {
        first_touch_secs: None,
        load_secs: t.elapsed().as_secs_f64(),
        bytes: (offsets.len() * 8 + neighbors.len() * 4) as u64,
        fingerprint: blob.fingerprint(),
        check: if trusted { TOKEN_CHECK } else { FULL_CHECK },
        token: (!trusted).then(|| blob.token()),
    };
    Ok((Graph { offsets, neighbors }, loaded))
}

/// Reads a format-1 cache, checking it.
fn load_v1(path: &Path) -> Result<Graph, LoadError> {
    let file = path.display().to_string();
    let kind = scalescope_files::Kind::new("scalescope CSR cache", u64::MAX, 0);
    let bytes = scalescope_files::read(path, kind)?;
    let bad = |detail: String| LoadError::Syntax {
        file: file.clone(),
        line: 0,
        detail,
    };
    if bytes.len() < 48 || &bytes[..16] != MAGIC {
        return Err(bad("not a scalescope CSR cache (bad magic)".into()));
    }
    let u32_at = |o: usize| crate::blob::le_bytes(&bytes[o..o + 4]) as u32;
    let u64_at = |o: usize| crate::blob::le_bytes(&bytes[o..o + 8]);
    let version = u32_at(16);
    if version != 1 {
        return Err(bad(format!("cache format version {version}, expected 1")));
    }
    let (n, m) = (u64_at(24) as usize, u64_at(32) as usize);
    let want = 40usize
        .checked_add(
            (n + 1)
                .checked_mul(8)
                .ok_or_else(|| bad("size overflow".into()))?,
        )
        .and_then(|x| x.checked_add(m.checked_mul(4)?))
        .and_then(|x| x.checked_add(8));
    if want != Some(bytes.len()) {
        return Err(bad(format!(
            "{} bytes, but {n} vertices and {m} entries need {}",
            bytes.len(),
            want.map_or("more".into(), |w| w.to_string())
        )));
    }
    let body = bytes.len() - 8;
    if fnv1a(&bytes[..body]) != u64_at(body) {
        return Err(bad("checksum mismatch: the file is corrupted".into()));
    }
    let offsets: Vec<u64> = (0..=n).map(|i| u64_at(40 + 8 * i)).collect();
    let base = 40 + 8 * (n + 1);
    let neighbors: Vec<u32> = (0..m).map(|i| u32_at(base + 4 * i)).collect();
    if offsets.windows(2).any(|w| w[0] > w[1]) || offsets.last() != Some(&(m as u64)) {
        return Err(bad("offsets do not rise to the entry count".into()));
    }
    if let Some(v) = neighbors.iter().find(|&&v| v as usize >= n) {
        return Err(bad(format!("neighbour {v} is not a vertex (n = {n})")));
    }
    Ok(Graph {
        offsets: offsets.into(),
        neighbors: neighbors.into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::gen::{generate, Kind};
    use crate::graph::tests::pool;

    /// Format 1 as it was written, for the reader that still takes it.
    fn save_v1(g: &Graph, path: &Path) {
        let mut buf = Vec::new();
        buf.extend_from_slice(MAGIC);
        buf.extend_from_slice(&1u32.to_le_bytes());
        buf.extend_from_slice(&0u32.to_le_bytes());
        buf.extend_from_slice(&(g.vertices() as u64).to_le_bytes());
        buf.extend_from_slice(&(g.neighbors.len() as u64).to_le_bytes());
        g.offsets
            .iter()
            .for_each(|o| buf.extend_from_slice(&o.to_le_bytes()));
        g.neighbors
            .iter()
            .for_each(|v| buf.extend_from_slice(&v.to_le_bytes()));
        let sum = fnv1a(&buf);
        buf.extend_from_slice(&sum.to_le_bytes());
        std::fs::write(path, buf).unwrap();
    }

    #[test]
    fn round_trip_on_any_worker_count_and_corruption_refused() {
        let p = pool(1);
        let (n, e) = generate(Kind::Kronecker, 10, &p);
        let g = Graph::from_edges(n, &e, &p);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.csr");
        save(&g, &path, "kron:10").unwrap();
        for t in [1, 2, 3] {
            let (back, loaded) = load(&path, &pool(t)).unwrap();
            assert_eq!(back, g, "{t} workers");
            assert_eq!(
                loaded.bytes,
                (g.offsets.len() * 8 + g.neighbors.len() * 4) as u64
            );
        }
        let good = std::fs::read(&path).unwrap();
        let mut bytes = good.clone();
        let at = bytes.len() - 100;
        bytes[at] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let e = load(&path, &p).unwrap_err().to_string();
        assert!(e.contains("checksum mismatch"), "{e}");
        std::fs::write(&path, &good[..good.len() - 3]).unwrap();
        assert!(load(&path, &p).is_err());
        save_v1(&g, &path);
        assert_eq!(load(&path, &p).unwrap().0, g);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[100] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(load(&path, &p)
            .unwrap_err()
            .to_string()
            .contains("checksum mismatch"));
        bytes[16] = 9;
        std::fs::write(&path, &bytes).unwrap();
        assert!(load(&path, &p)
            .unwrap_err()
            .to_string()
            .contains("version 9"));
    }
}
