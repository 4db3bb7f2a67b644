//! Where a file named on the command line lives, and writing one so that
//! a reader never sees half of it.

use std::path::Path;

use anyhow::Context;

/// The directory `path` is in: its parent, or `.` for a bare file name
/// (whose `Path::parent` is the empty path).
pub fn dir_of(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Writes `bytes` to `path` via a temporary file and a rename, so a reader
/// never sees half a file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("Could not write '{}'", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("Could not move '{}' to '{}'", tmp.display(), path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_names_are_in_the_current_directory() {
        assert_eq!(dir_of(Path::new("out.json")), Path::new("."));
        assert_eq!(dir_of(Path::new("a/b/out.json")), Path::new("a/b"));
        assert_eq!(dir_of(Path::new("/out.json")), Path::new("/"));
    }
}
