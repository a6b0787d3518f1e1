//! Inputs shared by the runs of a sweep, and how often runs are checked: where
//! prepared inputs are cached ([`Inputs`]), the cache files' names (keyed by the
//! input's parameters), the answers computed once per input and stored beside its
//! cache ([`AnswerBook`]), and the verification policy ([`VerifyPolicy`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::WorkloadError;

/// Which runs are checked against the independent answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum VerifyPolicy {
    /// Only the first run on an input (later runs say they were not checked).
    First,
    /// Every run (the default: each compares with an answer computed once).
    #[default]
    All,
    /// No run.
    None,
}

impl std::fmt::Display for VerifyPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            VerifyPolicy::First => "first",
            VerifyPolicy::All => "all",
            VerifyPolicy::None => "none",
        })
    }
}

impl std::str::FromStr for VerifyPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "first" => Ok(VerifyPolicy::First),
            "all" => Ok(VerifyPolicy::All),
            "none" => Ok(VerifyPolicy::None),
            other => Err(format!("`{other}` is not first, all or none")),
        }
    }
}

/// Where a run's prepared input lives and how it is checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inputs {
    /// The cache directory; `None` builds the input in memory for this run only.
    pub cache: Option<PathBuf>,
    pub verify: VerifyPolicy,
    /// A sweep run's token of the cache file its sweep checked in full before the
    /// runs (see `blob::Blob::token`): a run whose file still has that identity skips
    /// the O(size) checks. `None` (the commands, the sweep's own preparation) checks
    /// in full.
    pub verified: Option<String>,
}

/// FNV-1a 64 of a key: short file names for long parameter lists.
fn key_hash(key: &str) -> u64 {
    key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Inputs {
    /// The cache file for the input `key` (every parameter that shapes it, with the
    /// format version): `DIR/STEM-HASH.EXT`, the stem made of the key's safe
    /// characters for people to read, the hash of the whole key to tell inputs apart.
    pub fn file(&self, key: &str, ext: &str) -> Option<PathBuf> {
        let dir = self.cache.as_ref()?;
        let stem: String = key
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' {
                    c
                } else {
                    '-'
                }
            })
            .take(48)
            .collect();
        Some(dir.join(format!("{stem}-{:016x}.{ext}", key_hash(key))))
    }

    /// Creates the cache directory.
    ///
    /// # Errors
    /// [`WorkloadError::Cache`] naming the directory.
    pub fn create_dir(&self) -> Result<(), WorkloadError> {
        if let Some(dir) = &self.cache {
            std::fs::create_dir_all(dir).map_err(|e| WorkloadError::Cache {
                file: dir.display().to_string(),
                detail: format!("creating the input cache: {e}"),
            })?;
        }
        Ok(())
    }
}

/// The independent answer for one kernel on one input, computed once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", content = "value", rename_all = "lowercase")]
pub enum Answer {
    /// What every run must give.
    Known(serde_json::Value),
    /// Why there is none (the independent check is out of reach at this size).
    Unavailable(String),
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct BookFile {
    schema: String,
    version: u32,
    /// The fingerprint of the cache file the answers belong to.
    input: String,
    answers: BTreeMap<String, Answer>,
    /// Kernels a `--verify first` run has checked and passed on this input.
    #[serde(default)]
    checked: BTreeMap<String, bool>,
}

/// Version of the answers file (`FILE.answers.json`, docs/json.md).
pub const ANSWERS_VERSION: u32 = 1;

/// The answers stored beside a cache file, valid only for the contents it
/// fingerprints: a rebuilt input starts with none.
pub struct AnswerBook {
    path: PathBuf,
    input: String,
}

impl AnswerBook {
    /// The book for the cache file `input` whose contents `fingerprint` names.
    pub fn beside(input: &Path, fingerprint: &str) -> AnswerBook {
        let mut name = input.as_os_str().to_owned();
        name.push(".answers.json");
        AnswerBook {
            path: PathBuf::from(name),
            input: fingerprint.to_string(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's answers if it belongs to this input; an unreadable or stale file
    /// reads as empty (and is replaced on the next write).
    fn read(&self) -> BookFile {
        let kind = scalescope_files::Kind::new("answers file", 64 << 20, 64 << 20);
        scalescope_files::read(&self.path, kind)
            .ok()
            .and_then(|b| serde_json::from_slice::<BookFile>(&b).ok())
            .filter(|b| {
                b.schema == "scalescope.answers"
                    && b.version == ANSWERS_VERSION
                    && b.input == self.input
            })
            .unwrap_or_else(|| BookFile {
                schema: "scalescope.answers".into(),
                version: ANSWERS_VERSION,
                input: self.input.clone(),
                ..BookFile::default()
            })
    }

    fn write(&self, book: &BookFile) -> Result<(), WorkloadError> {
        let err = |e: std::io::Error| WorkloadError::Cache {
            file: self.path.display().to_string(),
            detail: e.to_string(),
        };
        let text = serde_json::to_string_pretty(book).map_err(|e| WorkloadError::Cache {
            file: self.path.display().to_string(),
            detail: e.to_string(),
        })?;
        // Written aside and renamed, never through a link planted at the name.
        let (Some(dir), Some(name)) = (self.path.parent(), self.path.file_name()) else {
            return Err(err(std::io::Error::other("not a file path")));
        };
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        scalescope_files::OutDir::open(dir)
            .and_then(|d| d.write_file(name, text.as_bytes()))
            .map_err(|e| err(std::io::Error::other(e.to_string())))
    }

    pub fn get(&self, kernel: &str) -> Option<Answer> {
        self.read().answers.get(kernel).cloned()
    }

    /// Stores `answer` for `kernel`.
    ///
    /// # Errors
    /// [`WorkloadError::Cache`] when the file cannot be written.
    pub fn put(&self, kernel: &str, answer: &Answer) -> Result<(), WorkloadError> {
        let mut book = self.read();
        book.answers.insert(kernel.to_string(), answer.clone());
        self.write(&book)
    }

    /// The stored answer for `kernel`, or `compute`'s, stored for the next run.
    ///
    /// # Errors
    /// [`WorkloadError::Cache`] when the file cannot be written.
    pub fn get_or(
        &self,
        kernel: &str,
        compute: impl FnOnce() -> Answer,
    ) -> Result<Answer, WorkloadError> {
        if let Some(a) = self.get(kernel) {
            return Ok(a);
        }
        let a = compute();
        self.put(kernel, &a)?;
        Ok(a)
    }

    /// Whether a run has already checked `kernel` on this input and passed.
    pub fn checked(&self, kernel: &str) -> bool {
        self.read().checked.get(kernel).copied().unwrap_or(false)
    }

    /// Records that a run checked `kernel` on this input and passed.
    ///
    /// # Errors
    /// [`WorkloadError::Cache`] when the file cannot be written.
    pub fn mark_checked(&self, kernel: &str) -> Result<(), WorkloadError> {
        let mut book = self.read();
        book.checked.insert(kernel.to_string(), true);
        self.write(&book)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_keyed_and_answers_belong_to_one_input() {
        let dir = tempfile::tempdir().unwrap();
        let inputs = Inputs {
            cache: Some(dir.path().to_path_buf()),
            verify: VerifyPolicy::All,
            verified: None,
        };
        let a = inputs.file("graph v2 kron:10", "csr").unwrap();
        let b = inputs.file("graph v2 kron:11", "csr").unwrap();
        assert_ne!(a, b);
        assert!(a
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("graph-v2-kron-10-"));
        assert_eq!(Inputs::default().file("x", "csr"), None);
        let book = AnswerBook::beside(&a, "0001");
        assert_eq!(book.get("count"), None);
        let got = book.get_or("count", || Answer::Known(42.into())).unwrap();
        assert_eq!(got, Answer::Known(42.into()));
        assert_eq!(book.get_or("count", || unreachable!()).unwrap(), got);
        assert!(!book.checked("count"));
        book.mark_checked("count").unwrap();
        assert!(book.checked("count"));
        // A rebuilt input (another fingerprint) has no answers yet.
        assert_eq!(AnswerBook::beside(&a, "0002").get("count"), None);
        assert!(!AnswerBook::beside(&a, "0002").checked("count"));
        assert_eq!("first".parse::<VerifyPolicy>(), Ok(VerifyPolicy::First));
        assert!("some".parse::<VerifyPolicy>().is_err());
    }
}
