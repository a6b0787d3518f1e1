//! Reading graphs: SNAP edge lists (`#` comments), plain `.el` (two ids a line) and
//! Matrix Market coordinate files (`pattern` or weighted, `general` or `symmetric`,
//! 1-based), and writing a graph back as an edge list. Errors name the file and the
//! line. What a graph argument names, `kron:SCALE`, `uniform:SCALE` or a file, is
//! read into an edge list with its memory estimated first ([`crate::budget`]): from
//! the scale before generating, from the vertex and edge counts before the CSR is
//! built.

use std::path::Path;

use crate::budget;
use crate::graph::gen::{generate, Kind};
use crate::pool::Pool;
use crate::WorkloadError;
use scalescope_model::setting::Setting;

/// Why a graph file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{file}:{line}: {detail}")]
    Syntax {
        file: String,
        line: usize,
        detail: String,
    },
    /// The cause is part of the message and not a `source`, so that an error
    /// chain prints it once.
    #[error("{file}: {cause}")]
    Io { file: String, cause: std::io::Error },
    /// A file the input layer refused (not a regular file, a line too long).
    #[error(transparent)]
    File(#[from] scalescope_files::FileError),
}

/// Writes `g` as an edge list that [`load`] (and other tools) read back: `u v` with
/// u < v, one undirected edge a line.
///
/// # Errors
/// [`LoadError::Io`] naming the file.
pub fn write_edge_list(g: &super::Graph, path: &Path) -> Result<(), LoadError> {
    use std::io::Write;
    let (dir, name) = match (path.parent(), path.file_name()) {
        (Some(d), Some(n)) if !d.as_os_str().is_empty() => (d, n),
        (_, Some(n)) => (Path::new("."), n),
        _ => {
            return Err(LoadError::Io {
                file: path.display().to_string(),
                cause: std::io::Error::other("not a file path"),
            })
        }
    };
    // Written aside and renamed: a link at the name is replaced, not followed.
    let out = scalescope_files::OutDir::open(dir)?;
    out.write_with(name, |f| {
        let mut w = std::io::BufWriter::new(f);
        for u in 0..g.vertices() as u32 {
            for &v in g.neighbors(u).iter().filter(|&&v| u < v) {
                writeln!(w, "{u} {v}")?;
            }
        }
        w.flush()
    })?;
    Ok(())
}

/// Vertex count and edges of a file, by its extension (`.mtx` is Matrix Market,
/// anything else an edge list), read line by line through the bounded input
/// layer (a regular file; lines of at most 64 KiB), so a FIFO, `/dev/zero` or a
/// 1 GiB line is an error naming the file, not a hang or 1 GiB held.
///
/// # Errors
/// [`LoadError`] with the file and line.
pub fn load(path: &Path) -> Result<(usize, Vec<(u32, u32)>), LoadError> {
    let file = path.display().to_string();
    let input = scalescope_files::open(path, scalescope_files::Kind::GRAPH)?;
    let mut source = Source::File(input.lines(), Vec::new());
    if path.extension().is_some_and(|e| e == "mtx") {
        matrix_market_from(&mut source, &file)
    } else {
        edge_list_from(&mut source, &file)
    }
}

/// Where a graph's lines come from: text in memory, or a file read bounded.
enum Source<'a> {
    Text(std::iter::Enumerate<std::str::Lines<'a>>),
    File(scalescope_files::Lines, Vec<u8>),
}

impl Source<'_> {
    /// The next line and its number (1-based).
    fn next(&mut self) -> Result<Option<(usize, &str)>, LoadError> {
        match self {
            Source::Text(lines) => Ok(lines.next().map(|(i, l)| (i + 1, l))),
            Source::File(lines, buf) => {
                let text = lines.next_str(buf)?;
                Ok(text.map(|t| (lines.number(), t)))
            }
        }
    }
}

fn id(tok: Option<&str>, file: &str, line: usize, what: &str) -> Result<u64, LoadError> {
    let t = tok.ok_or_else(|| LoadError::Syntax {
        file: file.into(),
        line,
        detail: format!("missing {what}"),
    })?;
    t.parse::<u64>().map_err(|_| LoadError::Syntax {
        file: file.into(),
        line,
        detail: format!(
            "{what} `{}` is not a non-negative integer",
            scalescope_files::excerpt::of(t.as_bytes())
        ),
    })
}

fn vertex(v: u64, file: &str, line: usize) -> Result<u32, LoadError> {
    u32::try_from(v)
        .ok()
        .filter(|v| *v < u32::MAX)
        .ok_or_else(|| LoadError::Syntax {
            file: file.into(),
            line,
            detail: format!("vertex {v} does not fit 32-bit ids"),
        })
}

/// Edge lists: `u v` per line (extra columns, such as weights, ignored).
///
/// # Errors
/// [`LoadError::Syntax`] naming the line.
pub fn edge_list(text: &str, file: &str) -> Result<(usize, Vec<(u32, u32)>), LoadError> {
    edge_list_from(&mut Source::Text(text.lines().enumerate()), file)
}

fn edge_list_from(source: &mut Source, file: &str) -> Result<(usize, Vec<(u32, u32)>), LoadError> {
    let mut edges = Vec::new();
    let mut max = 0u32;
    while let Some((n, raw)) = source.next()? {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('%') {
            continue;
        }
        let mut it = line.split_whitespace();
        let a = vertex(id(it.next(), file, n, "source")?, file, n)?;
        let b = vertex(id(it.next(), file, n, "target")?, file, n)?;
        max = max.max(a).max(b);
        edges.push((a, b));
    }
    Ok((
        if edges.is_empty() {
            0
        } else {
            max as usize + 1
        },
        edges,
    ))
}

/// Matrix Market coordinate format.
///
/// # Errors
/// [`LoadError::Syntax`] naming the line.
pub fn matrix_market(text: &str, file: &str) -> Result<(usize, Vec<(u32, u32)>), LoadError> {
    matrix_market_from(&mut Source::Text(text.lines().enumerate()), file)
}

fn matrix_market_from(
    lines: &mut Source,
    file: &str,
) -> Result<(usize, Vec<(u32, u32)>), LoadError> {
    let syntax = |line: usize, detail: String| LoadError::Syntax {
        file: file.into(),
        line,
        detail,
    };
    let (_, banner) = lines
        .next()?
        .ok_or_else(|| syntax(1, "empty file".into()))?;
    let b = banner.to_ascii_lowercase();
    if !b.starts_with("%%matrixmarket matrix coordinate") {
        return Err(syntax(
            1,
            "expected `%%MatrixMarket matrix coordinate ...`".into(),
        ));
    }
    let mut size: Option<(u64, u64, u64)> = None;
    let mut size_line = 1;
    let mut edges = Vec::new();
    while let Some((n, raw)) = lines.next()? {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('%') {
            continue;
        }
        let mut it = line.split_whitespace();
        match size {
            None => {
                let r = id(it.next(), file, n, "row count")?;
                let c = id(it.next(), file, n, "column count")?;
                let nnz = id(it.next(), file, n, "entry count")?;
                size = Some((r, c, nnz));
                size_line = n;
            }
            Some((r, c, _)) => {
                let a = id(it.next(), file, n, "row")?;
                let b = id(it.next(), file, n, "column")?;
                if a == 0 || b == 0 || a > r || b > c {
                    return Err(syntax(
                        n,
                        format!("entry ({a}, {b}) is outside the 1-based {r} x {c} matrix"),
                    ));
                }
                edges.push((vertex(a - 1, file, n)?, vertex(b - 1, file, n)?));
            }
        }
    }
    let (r, c, nnz) = size.ok_or_else(|| syntax(1, "no size line".into()))?;
    if r.max(c) > u64::from(u32::MAX) {
        return Err(syntax(
            size_line,
            format!("a {r} x {c} matrix has more vertices than 32-bit ids can name"),
        ));
    }
    if edges.len() as u64 != nnz {
        return Err(syntax(
            1,
            format!(
                "the size line promises {nnz} entries, the file has {}",
                edges.len()
            ),
        ));
    }
    Ok((r.max(c) as usize, edges))
}

/// Vertex count and edges of `source`; `force` skips the memory check.
///
/// # Errors
/// [`WorkloadError::BadParam`] for a bad scale, [`WorkloadError::Graph`] for a file
/// that cannot be read, [`WorkloadError::TooBig`] when the estimate exceeds the
/// available memory.
pub fn from_source(
    source: &str,
    force: bool,
    pool: &Pool,
) -> Result<(usize, Vec<(u32, u32)>), WorkloadError> {
    let generated = |kind: Kind, scale: &str| {
        let s = scale
            .parse::<u32>()
            .ok()
            .filter(|s| (1..=30).contains(s))
            .ok_or_else(|| WorkloadError::BadParam {
                setting: Setting::param("graph"),
                detail: format!("`{source}`: the scale must be 1-30"),
            })?;
        let n = 1u64 << s;
        let what = format!("graph {source} ({n} vertices, {} edges)", 16 * n);
        budget::check(&what, budget::graph_bytes(n, 16 * n), force)?;
        Ok(generate(kind, s, pool))
    };
    if let Some(s) = source.strip_prefix("kron:") {
        return generated(Kind::Kronecker, s);
    }
    if let Some(s) = source.strip_prefix("uniform:") {
        return generated(Kind::Uniform, s);
    }
    let (n, edges) = load(Path::new(source))?;
    let what = format!("graph {source} ({n} vertices, {} edges)", edges.len());
    budget::check(
        &what,
        budget::graph_bytes(n as u64, edges.len() as u64),
        force,
    )?;
    Ok((n, edges))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_lists_and_errors() {
        let (n, e) = edge_list("# SNAP\n0 1\n\n1 2 0.5\n", "g.txt").unwrap();
        assert_eq!((n, e), (3, vec![(0, 1), (1, 2)]));
        let err = edge_list("0 1\n1 x\n", "g.el").unwrap_err().to_string();
        assert_eq!(err, "g.el:2: target `x` is not a non-negative integer");
        assert!(edge_list("0\n", "g.el")
            .unwrap_err()
            .to_string()
            .contains("g.el:1: missing target"));
    }

    #[test]
    fn matrix_market_pattern_symmetric() {
        let t = "%%MatrixMarket matrix coordinate pattern symmetric\n% c\n3 3 2\n2 1\n3 2\n";
        assert_eq!(
            matrix_market(t, "m.mtx").unwrap(),
            (3, vec![(1, 0), (2, 1)])
        );
        let bad = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n4 2\n";
        assert!(matrix_market(bad, "m.mtx")
            .unwrap_err()
            .to_string()
            .starts_with("m.mtx:4: entry (4, 2) is outside"));
        assert!(
            matrix_market("%%MatrixMarket matrix array real general\n", "m.mtx")
                .unwrap_err()
                .to_string()
                .contains("m.mtx:1")
        );
        let short = "%%MatrixMarket matrix coordinate pattern general\n3 3 5\n1 2\n";
        assert!(matrix_market(short, "m.mtx")
            .unwrap_err()
            .to_string()
            .contains("promises 5 entries"));
    }
}
