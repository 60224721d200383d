//! Issue 39, item 1: reports, exports and Slurm scripts had a writer of their own, which turned a
//! FIFO, a symbolic link or a device given as `-o` into a regular file. Every file the tool writes
//! goes through this crate: this test reads the workspace's sources (outside tests, test support
//! and this crate) and fails on any other way of creating or replacing a file.

use std::path::{Path, PathBuf};

/// What creates, replaces or moves a file other than through `atomic_output`.
const WRITERS: [&str; 9] = [
    "File::create",
    "File::options",
    "OpenOptions",
    "fs::write",
    "fs::copy",
    "fs::rename",
    "fs::hard_link",
    "create_new(",
    "os::unix::fs::symlink",
];

/// Files allowed a writer of their own, with the reason (none today: keep it that way).
const ALLOWED: [(&str, &str); 0] = [];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the workspace root")
}

/// The Rust files of the workspace that are not tests, test support or this crate.
fn sources(dir: &Path, root: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable source directory") {
        let path = entry.expect("a directory entry").path();
        let rel = path.strip_prefix(root).expect("inside the workspace").to_string_lossy().into_owned();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let skipped = name.starts_with('.')
            || ["target", "tests", "testkit"].contains(&name)
            || rel == "crates/atomic-output"
            || name == "tests.rs";
        if skipped {
            continue;
        }
        if path.is_dir() {
            sources(&path, root, out);
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// The lines of a file outside `#[cfg(test)]` items (an inline `mod tests { .. }`, a helper
/// function for unit tests), with their numbers.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        if line.trim() != "#[cfg(test)]" {
            out.push((n + 1, line));
            continue;
        }
        // Skip the item: up to its `;` or to the brace closing its first `{`.
        let mut depth = 0i64;
        let mut opened = false;
        for (_, l) in lines.by_ref() {
            depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
            opened |= l.contains('{');
            if (opened && depth <= 0) || (!opened && l.trim_end().ends_with(';')) {
                break;
            }
        }
    }
    out
}

#[test]
fn the_atomic_writer_is_the_only_writer_in_the_workspace() {
    let root = workspace();
    let mut files = Vec::new();
    for dir in ["src", "crates", "benches", "examples"] {
        if root.join(dir).is_dir() {
            sources(&root.join(dir), &root, &mut files);
        }
    }
    assert!(files.len() > 100, "found only {} source files under {}", files.len(), root.display());
    let mut found = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
        if ALLOWED.iter().any(|(allowed, _)| *allowed == rel) {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("a readable source file");
        for (n, line) in code_lines(&text) {
            let code = line.split("//").next().unwrap_or_default();
            if let Some(w) = WRITERS.iter().find(|w| code.contains(*w)) {
                found.push(format!("{rel}:{n}: {w}: {}", line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "files written other than by atomic_output::write (use it, or say in ALLOWED why not):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_scan_sees_writers_and_skips_test_items() {
    let text = "fn a() {\n    std::fs::write(p, b)?;\n}\n#[cfg(test)]\nmod tests {\n    fn t() {\n        std::fs::write(p, b);\n    }\n}\n#[cfg(test)]\nmod more;\nfn b() {}\n";
    let kept: Vec<usize> = code_lines(text).iter().map(|(n, _)| *n).collect();
    assert_eq!(kept, [1, 2, 3, 12]);
    assert!(WRITERS.iter().any(|w| text.lines().nth(1).unwrap().contains(w)));
}
