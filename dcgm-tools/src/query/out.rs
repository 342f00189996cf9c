//! Where the lines go: standard output or `-f FILE`.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Standard output (quiet exit when its reader goes away) or `-f FILE`.
pub(crate) enum Out {
    Stdout,
    File(std::fs::File, PathBuf),
}

impl Out {
    /// `-f FILE`, created now (or emptied), or standard output.
    pub(crate) fn open(file: Option<&Path>) -> crate::Result<Self> {
        Ok(match file {
            Some(p) => Out::File(
                std::fs::File::create(p)
                    .map_err(|e| format!("cannot create {}: {e}", p.display()))?,
                p.to_path_buf(),
            ),
            None => Out::Stdout,
        })
    }

    /// Writes `s` and a newline.
    pub(crate) fn line(&mut self, s: &str) -> crate::Result<()> {
        match self {
            Out::Stdout => {
                crate::outln!("{s}");
                Ok(())
            }
            Out::File(f, p) => writeln!(f, "{s}")
                .map_err(|e| format!("cannot write to {}: {e}", p.display()).into()),
        }
    }
}
