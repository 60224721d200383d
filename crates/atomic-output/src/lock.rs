//! An advisory lock on a file beside what it guards (a results store), so that two processes do
//! not write the same thing at once.
//!
//! The lock is `flock(LOCK_EX | LOCK_NB)` on an empty file: it belongs to the open file, so it is
//! released when the [`Lock`] is dropped or the process ends in any way (killed included), and a
//! lock file left behind never blocks anyone. The file is never removed (removing it would let
//! a third process lock a new file while the second still holds the old one). On NFS, Linux
//! emulates `flock` with byte-range locks the server sees, so shards on cluster nodes that share
//! a directory exclude each other too.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

/// Takes the lock of `path` (created empty when missing) without waiting: `Ok(None)` when another
/// process holds it. A symbolic link or anything but a regular file at `path` is an error, so the
/// lock never opens someone else's file for writing.
pub fn try_lock(path: &Path) -> io::Result<Option<Lock>> {
    let mut options = OpenOptions::new();
    // Read access suffices for flock; create(true) needs write or append.
    options.read(true).append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o666).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| {
        if e.raw_os_error() == Some(libc::ELOOP) {
            io::Error::new(io::ErrorKind::InvalidInput, "it is a symbolic link; a lock file must be a regular file")
        } else {
            e
        }
    })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {}, not a regular file", crate::kind(&meta.file_type())),
        ));
    }
    use std::os::unix::io::AsRawFd;
    // SAFETY: flock on a descriptor owned by `file`, which outlives the call.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(Some(Lock { _file: file }));
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) { Ok(None) } else { Err(e) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_excludes_a_second_holder_until_it_is_dropped() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("store.lock");
        let first = try_lock(&path).unwrap().expect("free");
        // flock locks belong to open files: a second open in the same process is a second holder.
        assert!(try_lock(&path).unwrap().is_none(), "held");
        drop(first);
        assert!(try_lock(&path).unwrap().is_some(), "released on drop");
        assert!(path.is_file(), "the lock file stays");
    }

    #[test]
    fn links_and_special_files_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        std::fs::write(&target, b"data").unwrap();
        let link = d.path().join("link.lock");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(try_lock(&link).unwrap_err().to_string().contains("symbolic link"));
        assert_eq!(std::fs::read(&target).unwrap(), b"data");
        assert!(try_lock(d.path()).is_err());
    }
}
