//! Where a file named on the command line lives.

use std::path::Path;

/// The directory `path` is in: its parent, or `.` for a bare file name
/// (whose `Path::parent` is the empty path).
pub fn dir_of(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
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
