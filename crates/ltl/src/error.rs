//! What stops an LTL check before it has a verdict. None of these is an answer.

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
    #[error("MILP: {0}")]
    Milp(#[from] MilpError),
    /// Two parts of the tool disagree (a bug, reported rather than answered around).
    #[error("internal error: {0}")]
    Internal(String),
}

impl LtlError {
    /// Whether the error is a problem of the input (exit code 2) rather than of the tool.
    pub fn is_input(&self) -> bool {
        match self {
            LtlError::Unsupported(_) | LtlError::Semantics(_) => true,
            LtlError::Internal(_) => false,
            LtlError::Milp(e) => !matches!(
                e,
                MilpError::Solver(_) | MilpError::Bounds(_) | MilpError::Dimension { .. } | MilpError::Cancelled
            ),
        }
    }
}
