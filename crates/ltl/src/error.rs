//! What stops an LTL check before it has a verdict, and the limits that end it with one.
//!
//! `Unsupported`, `Semantics`, `Milp` (input the encodings refuse) and `Internal` are errors,
//! never answers. A budget that ran out ([`LtlError::Stopped`], or the MILP layer's
//! `MilpError::Stopped`), bounds that left f64's range and encodings refused for their size are
//! the limits of one method: [`LtlError::unknown`] names them, and `check_ltl` answers them as
//! `unknown` with that reason.

use trestle_core::{Stop, Unknown};
use trestle_milp::MilpError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LtlError {
    /// The formula or the system is outside what the method decides (an unbounded operator for a
    /// bounded method, an Init that is not a bounded union of boxes, ...).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The system's semantics stop a run (an evaluation error, a deadlock).
    #[error("{0}")]
    Semantics(String),
    /// The MILP layer refused or failed (not a `#[source]`: its message is this one's, said once).
    #[error("MILP encoding: {0}")]
    Milp(MilpError),
    /// Two parts of the tool disagree (a bug, reported rather than answered around).
    #[error("internal error: {0}")]
    Internal(String),
    /// The budget ran out (time limit, or cancelled by a race's winner or the caller).
    #[error("{0}")]
    Stopped(#[from] Stop),
    /// Enclosures left f64's range: where.
    #[error("bounds overflowed: {0}")]
    Overflow(String),
}

impl From<MilpError> for LtlError {
    fn from(e: MilpError) -> LtlError {
        LtlError::Milp(e)
    }
}

impl LtlError {
    /// Whether the error is a problem of the input (exit code 2) rather than of the tool.
    pub fn is_input(&self) -> bool {
        match self {
            LtlError::Unsupported(_) | LtlError::Semantics(_) => true,
            LtlError::Internal(_) | LtlError::Stopped(_) | LtlError::Overflow(_) => false,
            LtlError::Milp(e) => !matches!(
                e,
                MilpError::Solver(_)
                    | MilpError::Bounds(_)
                    | MilpError::Dimension { .. }
                    | MilpError::Stopped(_)
                    | MilpError::Overflow(_)
                    | MilpError::TooLarge { .. }
            ),
        }
    }

    /// The limit this error is, as the reason of an `unknown` verdict; `None` for errors.
    pub fn unknown(&self) -> Option<Unknown> {
        match self {
            LtlError::Stopped(s) | LtlError::Milp(MilpError::Stopped(s)) => Some((*s).into()),
            LtlError::Overflow(at) | LtlError::Milp(MilpError::Overflow(at)) => Some(Unknown::Overflow(at.clone())),
            LtlError::Milp(e @ MilpError::TooLarge { .. }) => Some(Unknown::Limit(e.to_string())),
            _ => None,
        }
    }
}
