//! SMT-LIB 2 dumps of the queries, one file per Z3 query, written atomically (temp + rename).

use crate::error::CheckError;
use std::io::Write;
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
        let tmp = self.dir.join(format!(".{name}.tmp"));
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
        let io = |e: std::io::Error| CheckError::Dump { path: path.clone(), message: e.to_string() };
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let mut f = std::fs::File::create(&tmp).map_err(io)?;
        f.write_all(text.as_bytes()).map_err(io)?;
        f.sync_all().map_err(io)?;
        drop(f);
        std::fs::rename(&tmp, &path).map_err(io)?;
        Ok(path)
    }
}
