//! The files a program reads and writes for its user: every file Trestle writes is written by
//! [`write`] (results a user asked for, `--certificate FILE`, `--plot FILE`, reports, exports,
//! generated benchmarks, scripts; a test of this crate fails on any other writer in the
//! workspace's sources), every input file a user names is read by [`input::read`] (regular files
//! of bounded size only), and [`lock::try_lock`] keeps two processes from writing one results
//! store at once.
//!
//! [`write`] puts the bytes in a fresh temporary file beside the target (created exclusively, so
//! it is never someone else's file), flushes it to disk (`fsync`), renames it over the target and
//! flushes the directory, so a reader sees the old file or the whole new one, even after a crash.
//! Around that:
//!
//! - **Symbolic links are written through**: the file the link (chain) finally names is replaced,
//!   the link stays a link. A dangling link creates its target, as a shell redirection would.
//! - **Only regular files are replaced.** A directory, FIFO, socket or device node at the target
//!   is an error (renaming over `/dev/full` would replace the device node by a regular file;
//!   opening a FIFO would block), reported before anything is created.
//! - **The temporary file never outlives the call**: every error path removes it, and errors name
//!   the target and the real problem (`No space left on device`), never the temporary name.
//! - **Interruption**: [`stop_writes`] waits until no write is in progress and blocks every later
//!   one, for a process that is about to exit on a signal: it then leaves neither a temporary nor
//!   a half-written file.
//!
//! The crate knows nothing of what it writes; it depends on `std` and `libc` (the flags and locks
//! `std` does not name).

pub mod input;
pub mod lock;

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Held for the whole of every write; taken for good by [`stop_writes`].
static WRITES: Mutex<()> = Mutex::new(());

/// Most symbolic links followed from the target (as the kernel's `ELOOP` limit).
const MAX_LINKS: usize = 40;

/// Replaces the contents of `path` by `bytes` (see the crate docs). The file is created if it
/// does not exist; its directory is created too.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_using(path, |f| f.write_all(bytes))
}

/// Like [`write`], the new file's permission bits being `mode` exactly (`0o755` for a script),
/// whatever the umask or the replaced file's.
pub fn write_with_mode(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    write_inner(path, Some(mode), |f| f.write_all(bytes))
}

/// Like [`write`], with the contents produced by `fill` into the temporary file.
pub fn write_using(path: &Path, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    write_inner(path, None, fill)
}

fn write_inner(path: &Path, mode: Option<u32>, fill: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    let _writing = WRITES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let target = resolve_links(path)?;
    let existing = existing_mode(&target)?;
    #[cfg(unix)]
    let mode = match mode {
        Some(m) => {
            use std::os::unix::fs::PermissionsExt;
            Some(std::fs::Permissions::from_mode(m))
        }
        None => existing,
    };
    #[cfg(not(unix))]
    let mode = existing;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let name = target.file_name().ok_or_else(|| invalid("it names no file"))?;
    let mut temp = Temp::create(&dir, &name.to_string_lossy(), mode)?;
    fill(&mut temp.file)?;
    temp.file.sync_all()?;
    std::fs::rename(&temp.path, &target)?;
    temp.renamed = true;
    sync_dir(&dir)
}

/// Whether [`write`] could replace `path` as far as can be told without writing: the final target
/// of its links is a regular file or absent (the directory's permissions are only known by
/// trying). For refusing a bad path before a long computation, not after it.
pub fn check_target(path: &Path) -> io::Result<()> {
    existing_mode(&resolve_links(path)?).map(|_| ())
}

/// Waits until no write is in progress and makes every later [`write`] block forever. For a
/// process about to exit (on SIGINT or SIGTERM): afterwards no file is half-written and no
/// temporary file exists, and none will.
pub fn stop_writes() {
    let guard = WRITES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    std::mem::forget(guard);
}

/// The file a path finally names, following symbolic links (relative ones from their directory).
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(invalid("too many levels of symbolic links"))
}

/// The permissions to give the new file: the replaced file's, or the default (0666 less the
/// umask) for a new one. Errors for anything but a regular file.
fn existing_mode(target: &Path) -> io::Result<Option<std::fs::Permissions>> {
    match std::fs::metadata(target) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
        Ok(m) if m.is_file() => Ok(Some(m.permissions())),
        Ok(m) => Err(io::Error::new(
            if m.is_dir() { io::ErrorKind::IsADirectory } else { io::ErrorKind::InvalidInput },
            format!("it is {}, not a regular file; give the path of a file to write", kind(&m.file_type())),
        )),
    }
}

/// `a FIFO (named pipe)`, `a character device`, ...: what a file that is not a regular one is.
pub(crate) fn kind(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() { "a directory" } else { "a special file" }
}

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg.to_string())
}

/// Flushes a directory's entries (the rename) to disk. Filesystems that cannot sync a directory
/// say so with `EINVAL`; the rename itself has then happened, which is all they offer.
fn sync_dir(dir: &Path) -> io::Result<()> {
    match File::open(dir).and_then(|d| d.sync_all()) {
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => Ok(()),
        other => other,
    }
}

/// A temporary file beside the target, removed on drop unless it was renamed.
struct Temp {
    path: PathBuf,
    file: File,
    renamed: bool,
}

impl Temp {
    fn create(dir: &Path, name: &str, mode: Option<std::fs::Permissions>) -> io::Result<Temp> {
        let mut last = None;
        for attempt in 0..100u32 {
            let path = dir.join(format!(".{name}.{}-{attempt}.tmp", std::process::id()));
            let mut options = OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
                options.mode(mode.as_ref().map_or(0o666, |p| p.mode() & 0o7777));
            }
            match options.open(&path) {
                Ok(file) => {
                    let temp = Temp { path, file, renamed: false };
                    #[cfg(unix)]
                    if let Some(p) = mode {
                        // `open` applies the umask; the replaced file's mode is kept exactly.
                        temp.file.set_permissions(p)?;
                    }
                    return Ok(temp);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.expect("100 attempts"))
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests;
