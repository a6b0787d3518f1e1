//! The report directory: `index.html`, every chart as its own SVG, `curves.csv` and
//! `analysis.json`, written side by side so each can be used on its own.

use std::path::{Path, PathBuf};

use crate::html::HtmlExporter;
use crate::mem::Section;
use crate::{charts, CsvExporter, Exporter, JsonExporter, ResultSet};

/// A report file that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("writing {}", path.display())]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Writes the whole report for `sets` (and memory `sections` after them) into `dir`,
/// creating it if needed; returns the path of `index.html`.
///
/// # Errors
/// [`WriteError`] naming the file or directory that could not be written.
pub fn write_dir(
    sets: &[ResultSet],
    sections: &[Section],
    dir: &Path,
) -> Result<PathBuf, WriteError> {
    std::fs::create_dir_all(dir).map_err(|source| WriteError {
        path: dir.to_path_buf(),
        source,
    })?;
    let write = |name: &str, bytes: &[u8]| -> Result<(), WriteError> {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|source| WriteError { path, source })
    };
    write(
        "index.html",
        HtmlExporter.page_with(sets, sections).as_bytes(),
    )?;
    write("curves.csv", &CsvExporter.export(sets))?;
    write("analysis.json", &JsonExporter.export(sets))?;
    for (i, set) in sets.iter().enumerate() {
        let prefix = if sets.len() > 1 {
            format!("{}-", i + 1)
        } else {
            String::new()
        };
        for c in charts(set, &prefix) {
            write(&c.file, c.svg.as_bytes())?;
        }
    }
    for c in sections.iter().flat_map(|s| &s.charts) {
        write(&c.file, c.svg.as_bytes())?;
    }
    Ok(dir.join("index.html"))
}
