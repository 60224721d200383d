//! Issue 9, item 14: `--certificate`/`--plot` replaced symlinks, FIFOs and device nodes by regular
//! files and left `.NAME.tmpPID` behind on errors.

use super::*;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};

/// The names in a directory (temporary files included).
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

#[test]
fn writes_and_replaces_a_regular_file_keeping_its_mode() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("out.json");
    write(&f, b"one").unwrap();
    assert_eq!(std::fs::read(&f).unwrap(), b"one");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o640)).unwrap();
    write(&f, b"two").unwrap();
    assert_eq!(std::fs::read(&f).unwrap(), b"two");
    assert_eq!(std::fs::metadata(&f).unwrap().permissions().mode() & 0o777, 0o640);
    assert_eq!(entries(d.path()), ["out.json"]);
    // A missing directory is created.
    write(&d.path().join("sub/dir/x.svg"), b"<svg/>").unwrap();
    assert_eq!(std::fs::read(d.path().join("sub/dir/x.svg")).unwrap(), b"<svg/>");
}

#[test]
fn symlinks_are_written_through() {
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("real.json");
    std::fs::write(&real, b"old").unwrap();
    let link = d.path().join("link.json");
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    let chain = d.path().join("chain.json");
    std::os::unix::fs::symlink(&link, &chain).unwrap();
    write(&chain, b"new").unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(std::fs::symlink_metadata(&chain).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(&real).unwrap(), b"new");
    // A dangling link creates its target.
    let dangling = d.path().join("dangling.json");
    std::os::unix::fs::symlink("made.json", &dangling).unwrap();
    write(&dangling, b"made").unwrap();
    assert_eq!(std::fs::read(d.path().join("made.json")).unwrap(), b"made");
    // A loop is an error.
    let a = d.path().join("a");
    std::os::unix::fs::symlink("b", &a).unwrap();
    std::os::unix::fs::symlink("a", d.path().join("b")).unwrap();
    assert!(write(&a, b"x").unwrap_err().to_string().contains("symbolic links"));
    assert_eq!(entries(d.path()), ["a", "b", "chain.json", "dangling.json", "link.json", "made.json", "real.json"]);
}

#[test]
fn special_files_are_refused_and_left_alone() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("pipe");
    mkfifo(&fifo);
    let e = write(&fifo, b"x").unwrap_err();
    assert_eq!(e.to_string(), "it is a FIFO (named pipe), not a regular file; give the path of a file to write");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    // A link to a FIFO is the FIFO.
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    assert!(write(&link, b"x").unwrap_err().to_string().contains("FIFO"));
    let e = write(d.path(), b"x").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::IsADirectory);
    assert!(e.to_string().starts_with("it is a directory"), "{e}");
    assert_eq!(entries(d.path()), ["link", "pipe"]);
    assert!(check_target(&fifo).is_err() && check_target(&link).is_err() && check_target(d.path()).is_err());
    assert!(check_target(&d.path().join("new.json")).is_ok());
    for dev in ["/dev/null", "/dev/full"] {
        let e = write(Path::new(dev), b"x").unwrap_err();
        assert!(e.to_string().starts_with("it is a character device"), "{dev}: {e}");
        assert!(std::fs::metadata(dev).unwrap().file_type().is_char_device(), "{dev} is still a device");
    }
}

/// `--certificate /tmp` created its temporary file at the filesystem root and left it there.
#[test]
fn a_directory_target_creates_nothing_in_its_parent() {
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("dir");
    std::fs::create_dir(&target).unwrap();
    assert!(write(&target, b"x").is_err());
    assert!(write(Path::new("/tmp"), b"x").is_err());
    assert_eq!(entries(d.path()), ["dir"]);
    assert!(entries(Path::new("/")).iter().all(|n| !n.ends_with(".tmp")), "{:?}", entries(Path::new("/")));
}

#[test]
fn a_failed_write_removes_its_temporary_file() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("out.json");
    std::fs::write(&f, b"old").unwrap();
    let e = write_using(&f, |file| {
        file.write_all(b"partial")?;
        Err(io::Error::other("No space left on device"))
    })
    .unwrap_err();
    assert_eq!(e.to_string(), "No space left on device");
    assert_eq!(std::fs::read(&f).unwrap(), b"old");
    assert_eq!(entries(d.path()), ["out.json"]);
}

#[test]
fn an_unusable_directory_is_an_error_naming_the_problem() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("file");
    std::fs::write(&file, b"").unwrap();
    // A path below a regular file.
    let e = write(&file.join("out.json"), b"x").unwrap_err();
    assert!(e.to_string().contains("Not a directory") || e.to_string().contains("File exists"), "{e}");
    // A directory nobody may write in (root may write anywhere, except in /proc).
    let e = write(Path::new("/proc/trestle-atomic-output-test.json"), b"x").unwrap_err();
    assert!(!e.to_string().contains(".tmp"), "{e}");
    assert_eq!(entries(d.path()), ["file"]);
}
