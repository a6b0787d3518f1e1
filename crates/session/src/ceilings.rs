//! Where a sweep's bandwidth ceilings come from: the `mem stream --json`
//! documents a user names, else every such document beside the results.

use std::path::{Path, PathBuf};

use scalescope_analysis::ceiling::{self, Ceiling};

use crate::SessionError;

fn of_file(p: &Path) -> Result<Ceiling, SessionError> {
    Ok(ceiling::from_stream_doc(
        &p.display().to_string(),
        &crate::read_json(p)?,
    )?)
}

/// The ceilings in `given` (each must be a `mem stream --json` document, else an
/// error naming it); with none given, every such document in the directory of
/// `results` (other JSON files there are passed over).
///
/// # Errors
/// A given file that cannot be read or is not a `mem stream` document.
pub fn discover(results: &Path, given: &[PathBuf]) -> Result<Vec<Ceiling>, SessionError> {
    if !given.is_empty() {
        return given.iter().map(|p| of_file(p)).collect();
    }
    let dir = results.parent().unwrap_or(Path::new("."));
    let entries = std::fs::read_dir(dir).into_iter().flatten().flatten();
    Ok(entries
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter_map(|p| of_file(&p).ok())
        .collect())
}
