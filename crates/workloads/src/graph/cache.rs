//! The binary CSR cache: a graph saved once, reloaded without parsing. Format
//! (little-endian, version 1):
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

use super::load::LoadError;
use super::Graph;

const MAGIC: &[u8; 16] = b"SCALESCOPE-CSR\0\0";
pub const VERSION: u32 = 1;

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Writes `g` to `path`.
///
/// # Errors
/// The I/O error, naming the file.
pub fn save(g: &Graph, path: &Path) -> Result<(), LoadError> {
    let mut buf = Vec::with_capacity(48 + g.offsets.len() * 8 + g.neighbors.len() * 4);
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&VERSION.to_le_bytes());
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
    std::fs::write(path, buf).map_err(|cause| LoadError::Io {
        file: path.display().to_string(),
        cause,
    })
}

/// Reads a cache written by [`save`], checking it.
///
/// # Errors
/// [`LoadError::Syntax`] (line 0) naming what is wrong with the file.
pub fn load(path: &Path) -> Result<Graph, LoadError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|cause| LoadError::Io {
        file: file.clone(),
        cause,
    })?;
    let bad = |detail: String| LoadError::Syntax {
        file: file.clone(),
        line: 0,
        detail,
    };
    if bytes.len() < 48 || &bytes[..16] != MAGIC {
        return Err(bad("not a scalescope CSR cache (bad magic)".into()));
    }
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
    let version = u32_at(16);
    if version != VERSION {
        return Err(bad(format!(
            "cache format version {version}, this scalescope reads {VERSION}"
        )));
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
    Ok(Graph { offsets, neighbors })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::gen::{generate, Kind};
    use crate::graph::tests::pool;

    #[test]
    fn round_trip_and_corruption() {
        let p = pool(1);
        let (n, e) = generate(Kind::Kronecker, 8, &p);
        let g = Graph::from_edges(n, &e, &p);
        let path =
            std::env::temp_dir().join(format!("scalescope-cache-{}.csr", std::process::id()));
        save(&g, &path).unwrap();
        assert_eq!(load(&path).unwrap(), g);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[100] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(load(&path)
            .unwrap_err()
            .to_string()
            .contains("checksum mismatch"));
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(load(&path).unwrap_err().to_string().contains("bytes, but"));
        bytes[16] = 9;
        std::fs::write(&path, &bytes).unwrap();
        assert!(load(&path).unwrap_err().to_string().contains("version 9"));
        std::fs::remove_file(&path).unwrap();
    }
}
