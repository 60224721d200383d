//! Atomic file output: a temporary file beside the target, then a rename over it.

use std::io::Write;
use std::path::Path;

use crate::PlotError;

pub(crate) fn atomically(path: &Path, bytes: &[u8]) -> Result<(), PlotError> {
    let io = |source| PlotError::Io { path: path.to_path_buf(), source };
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".trestle-plot-").suffix(".tmp");
    // tempfile's default mode is 0o600; a picture should get the usual umask-limited mode.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut file = builder.tempfile_in(dir).map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    file.as_file().sync_all().map_err(io)?;
    // On failure the temporary file is dropped, which deletes it.
    file.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}
