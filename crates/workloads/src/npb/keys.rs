//! IS's keys, prepared once per input like a graph: generated from NPB's seed by the
//! pool's workers, and where the runs share an input cache (a sweep's, or a
//! command's `--input-cache`) written once as a checked file ([`crate::blob`], magic
//! `SCALESCOPE-KEYS\0`, format 1: one section of u32 keys, the description
//! `{"kernel": "is", "class": C, "keys": N, "max_key": M}`) that every later run
//! maps read-only and reads in place. A run handed its sweep's token of this very
//! file checks only the header; otherwise every block's CRC and every key's range
//! are checked by the workers. The ten rankings overwrite keys 1..=20, so the keys
//! are kept as an owned copy of the first block (`Keys::head`) in front of the
//! (owned or mapped) whole.

use std::ops::Range;
use std::path::Path;
use std::time::Instant;

use serde_json::json;

use crate::blob::{self, Blob, BlobError, Column};
use crate::pool::{chunk, Pool};

const MAGIC: &[u8; 16] = b"SCALESCOPE-KEYS\0";
/// The format written and read.
pub const VERSION: u32 = 1;
/// Keys kept as an owned, writable copy in front of the rest (one checked block).
const HEAD: usize = blob::BLOCK / 4;

/// The cache key of IS's keys at `class`.
pub fn key(class: &str) -> String {
    format!("npb is keys v{VERSION} class {class}")
}

/// The keys of one IS input: the first `HEAD` owned and writable, the whole
/// sequence owned or read in place from a mapped cache (its first `HEAD` shadowed
/// by `head`).
#[derive(Debug, Default)]
pub struct Keys {
    head: Vec<u32>,
    all: Column<u32>,
}

impl Keys {
    pub fn new(all: Column<u32>) -> Keys {
        let head = all[..all.len().min(HEAD)].to_vec();
        Keys { head, all }
    }

    pub fn len(&self) -> usize {
        self.all.len()
    }

    pub fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    pub fn get(&self, i: usize) -> u32 {
        match self.head.get(i) {
            Some(&k) => k,
            None => self.all[i],
        }
    }

    /// Overwrites key `i`, which must lie in the owned head (the ten rankings
    /// overwrite keys 1..=20).
    ///
    /// # Panics
    /// Past the head: a key the input holds read-only.
    pub fn set(&mut self, i: usize, k: u32) {
        self.head[i] = k;
    }

    /// Keys `r` as two slices: the part in the head, then the rest.
    pub fn range(&self, r: Range<usize>) -> (&[u32], &[u32]) {
        let h = self.head.len();
        (
            &self.head[r.start.min(h)..r.end.min(h)],
            &self.all[r.start.max(h)..r.end.max(h)],
        )
    }

    /// Every key in order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let (head, rest) = self.range(0..self.len());
        head.iter().chain(rest).copied()
    }
}

/// Writes the keys to `path`.
///
/// # Errors
/// [`BlobError::Io`] naming the file.
pub fn save(keys: &[u32], path: &Path, class: &str, max_key: usize) -> Result<(), BlobError> {
    let desc = json!({"kernel": "is", "class": class, "keys": keys.len(), "max_key": max_key});
    blob::write(path, MAGIC, VERSION, &desc, &[vec![blob::bytes_of(keys)]])
}

/// What loading the keys cost and which check they had.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    pub load_secs: f64,
    pub bytes: u64,
    pub fingerprint: String,
    /// True when a token spared the block and range checks.
    pub trusted: bool,
    /// The token of the file checked in full (none after a lighter check).
    pub token: Option<String>,
}

/// Maps the keys of `path` (checked: `n` keys of `class`, each below `max_key`,
/// every block's CRC; the block and range checks skipped when `token` is this
/// unchanged file's token from a full check).
///
/// # Errors
/// A missing, stale or corrupt file (then it is rebuilt, never used).
pub fn load(
    path: &Path,
    class: &str,
    (n, max_key): (usize, usize),
    pool: &Pool,
    token: Option<&str>,
) -> Result<(Keys, Loaded), BlobError> {
    let t = Instant::now();
    let mut file = Blob::open(path, MAGIC, &[VERSION])?;
    let trusted = file.trust(token);
    let bad = |detail: String| BlobError::Bad {
        file: path.display().to_string(),
        detail,
    };
    let d = &file.description;
    if d["class"] != class || d["max_key"].as_u64() != Some(max_key as u64) {
        return Err(bad(format!("holds the keys of {d}, not class {class}")));
    }
    if file.len_of::<u32>(0)? != n {
        return Err(bad(format!("does not hold {n} keys: corrupted")));
    }
    let map = file.map(true)?;
    let all = file.column::<u32>(&map, 0, pool)?;
    let threads = pool.threads();
    let outside = match trusted {
        true => None,
        false => pool
            .broadcast(|i| {
                all[chunk(n, threads, i, 1)]
                    .iter()
                    .find(|&&k| k as usize >= max_key)
                    .copied()
            })
            .into_iter()
            .flatten()
            .next(),
    };
    if let Some(k) = outside {
        return Err(bad(format!("key {k} is not below {max_key}: corrupted")));
    }
    let loaded = Loaded {
        load_secs: t.elapsed().as_secs_f64(),
        bytes: (n * 4) as u64,
        fingerprint: file.fingerprint(),
        trusted,
        token: (!trusted).then(|| file.token()),
    };
    Ok((Keys::new(all), loaded))
}

/// The token of the file at `path` just written (its blocks are what was built).
///
/// # Errors
/// The file cannot be reopened.
pub fn token_of(path: &Path) -> Result<(String, String), BlobError> {
    let file = Blob::open(path, MAGIC, &[VERSION])?;
    Ok((file.token(), file.fingerprint()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::test_pool as pool;

    #[test]
    fn keys_round_trip_and_a_corrupt_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.keys");
        let keys: Vec<u32> = (0..10_000u32).map(|i| (i * 7919) % 2048).collect();
        save(&keys, &path, "S", 2048).unwrap();
        for t in [1, 2, 3] {
            let (back, loaded) = load(&path, "S", (10_000, 2048), &pool(t), None).unwrap();
            assert_eq!(back.iter().collect::<Vec<_>>(), keys, "{t} workers");
            assert!(!loaded.trusted && loaded.token.is_some());
        }
        let (token, _) = token_of(&path).unwrap();
        let (_, loaded) = load(&path, "S", (10_000, 2048), &pool(2), Some(&token)).unwrap();
        assert!(loaded.trusted && loaded.token.is_none());
        // Another class, another count, a key out of range, a flipped byte: refused.
        assert!(load(&path, "W", (10_000, 2048), &pool(1), None).is_err());
        assert!(load(&path, "S", (9_999, 2048), &pool(1), None).is_err());
        let mut wrong = keys.clone();
        wrong[9_000] = 2048;
        save(&wrong, &path, "S", 2048).unwrap();
        let e = load(&path, "S", (10_000, 2048), &pool(2), None).unwrap_err();
        assert!(e.to_string().contains("key 2048"), "{e}");
        save(&keys, &path, "S", 2048).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() - 100;
        bytes[at] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let e = load(&path, "S", (10_000, 2048), &pool(1), None).unwrap_err();
        assert!(e.to_string().contains("checksum mismatch"), "{e}");
    }

    #[test]
    fn the_head_shadows_the_mapped_keys_and_ranges_split_at_it() {
        let mut k = Keys::new((0..10_000u32).collect::<Vec<_>>().into());
        k.set(3, 99);
        assert_eq!((k.get(3), k.get(HEAD + 5)), (99, (HEAD + 5) as u32));
        let (h, rest) = k.range(HEAD - 2..HEAD + 2);
        assert_eq!(h, &[(HEAD - 2) as u32, (HEAD - 1) as u32]);
        assert_eq!(rest, &[HEAD as u32, (HEAD + 1) as u32]);
        assert_eq!(k.iter().nth(3), Some(99));
        assert_eq!(k.iter().count(), 10_000);
    }
}
