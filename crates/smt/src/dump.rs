//! SMT-LIB 2 dumps of the queries, one file per Z3 query, written by the project's atomic writer
//! (`atomic-output`: temp file, fsync, rename; no temporary file left behind).

use crate::error::CheckError;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

static CHECKER_NUMBER: AtomicUsize = AtomicUsize::new(0);

/// Numbers the dumps of one checker: `{prefix}query-000001.smt2`, `...-000002.smt2`, ...
#[derive(Debug)]
pub(crate) struct Dumper {
    dir: PathBuf,
    prefix: String,
    next: u64,
}

impl Dumper {
    pub(crate) fn new(dir: &Path, prefix: Option<&str>) -> Dumper {
        let prefix = match prefix {
            Some(p) => p.to_string(),
            None => format!("c{}-", CHECKER_NUMBER.fetch_add(1, Ordering::Relaxed)),
        };
        Dumper { dir: dir.to_path_buf(), prefix, next: 1 }
    }

    /// Writes one query: `comment` lines (`; ...`), the solver's declarations and assertions, and
    /// `(check-sat)`. Returns the path written.
    pub(crate) fn write(&mut self, comment: &str, assertions: &str) -> Result<PathBuf, CheckError> {
        let name = format!("{}query-{:06}.smt2", self.prefix, self.next);
        self.next += 1;
        let path = self.dir.join(&name);
        let mut text = String::with_capacity(assertions.len() + 256);
        for line in comment.lines() {
            text.push_str("; ");
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(assertions);
        if !assertions.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("(check-sat)\n");
        atomic_output::write(&path, text.as_bytes())
            .map_err(|e| CheckError::Dump { path: path.clone(), message: e.to_string() })?;
        Ok(path)
    }
}
