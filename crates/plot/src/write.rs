//! File output: the shared atomic writer (temporary file, fsync, rename, fsync of the directory;
//! symlinks written through; special files refused; no temporary file left behind).

use std::path::Path;

use crate::PlotError;

pub(crate) fn atomically(path: &Path, bytes: &[u8]) -> Result<(), PlotError> {
    atomic_output::write(path, bytes).map_err(|source| PlotError::Io { path: path.to_path_buf(), source })
}
