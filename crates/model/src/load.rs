//! Loading the JSON documents that sit beside results: a `mem ... --json`
//! document a user names (read bounded, through the input layer), and the JSON
//! files in a results directory (where `mem stream` documents give a sweep its
//! bandwidth ceilings). What a document means is decided downstream (analysis).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A document that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    File(#[from] scalescope_files::FileError),
    #[error("{path}: not JSON: {detail}")]
    NotJson { path: String, detail: String },
}

/// One loaded document and the path it was read from.
#[derive(Debug, Clone)]
pub struct Document {
    pub path: PathBuf,
    pub value: Value,
}

/// A JSON document a user names: a regular file of at most
/// [`scalescope_files::Kind::JSON`].
///
/// # Errors
/// [`LoadError::File`] (missing, a FIFO, a device, too large) or
/// [`LoadError::NotJson`].
pub fn json(p: &Path) -> Result<Value, LoadError> {
    let text = scalescope_files::read_text(p, scalescope_files::Kind::JSON)?;
    serde_json::from_str(&text).map_err(|e| LoadError::NotJson {
        path: p.display().to_string(),
        detail: e.to_string(),
    })
}

/// The documents `given`, each of which must load; with none given, every JSON
/// file in the directory of `results` that loads (others are passed over).
///
/// # Errors
/// A given file that cannot be read or is not JSON.
pub fn documents(results: &Path, given: &[PathBuf]) -> Result<Vec<Document>, LoadError> {
    if !given.is_empty() {
        return given
            .iter()
            .map(|p| {
                Ok(Document {
                    path: p.clone(),
                    value: json(p)?,
                })
            })
            .collect();
    }
    let dir = results.parent().unwrap_or(Path::new("."));
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    Ok(paths
        .into_iter()
        .filter_map(|p| json(&p).ok().map(|value| Document { path: p, value }))
        .collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn given_documents_must_load_and_found_ones_may_not() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("results.jsonl");
        std::fs::write(dir.path().join("a.json"), "{\"kind\": 1}").unwrap();
        std::fs::write(dir.path().join("b.json"), "not json").unwrap();
        std::fs::write(dir.path().join("c.txt"), "{}").unwrap();
        let found = documents(&results, &[]).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].value["kind"], 1);
        let bad = [dir.path().join("b.json")];
        assert!(matches!(
            documents(&results, &bad),
            Err(LoadError::NotJson { .. })
        ));
        let missing = [dir.path().join("none.json")];
        assert!(matches!(
            documents(&results, &missing),
            Err(LoadError::File(_))
        ));
    }
}
