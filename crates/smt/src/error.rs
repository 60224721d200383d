//! Input problems: a query that does not fit the system. These are errors, never verdicts.

use std::path::PathBuf;
use trestle_ir::system::SystemError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CheckError {
    #[error("invalid system: {0}")]
    System(#[from] SystemError),
    #[error("{what} has {found} entries, expected {expected}")]
    Dimension { what: String, found: usize, expected: usize },
    #[error("invalid box {what}: {reason}")]
    InvalidBox { what: String, reason: String },
    #[error("{what} is not finite ({value})")]
    NotFinite { what: String, value: f64 },
    #[error("{what} may only mention state variables")]
    NotStatePredicate { what: String },
    #[error("{what} reads a variable the system does not declare")]
    UnknownVariable { what: String },
    #[error("the system has no safe predicate")]
    NoSafe,
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("cannot write SMT-LIB dump {path}: {message}")]
    Dump { path: PathBuf, message: String },
}
