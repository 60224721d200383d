//! What stops a bounded-CTL check before it has a verdict: input the engines cannot take, and
//! failures of the layers below. None of these is an answer.

use trestle_milp::MilpError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CtlError {
    /// The formula or the system is outside what the engines decide (unbounded operators, interval
    /// non-determinism, an Init that is not a bounded union of boxes, a system with infinitely many
    /// states for the explicit engine).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The system's semantics stop the search: a state without a successor, or a successor outside
    /// the declared domains (the dualities of bounded CTL need every state to have successors).
    #[error("{0}")]
    Semantics(String),
    #[error("MILP: {0}")]
    Milp(#[from] MilpError),
}

impl CtlError {
    /// Whether the error is a problem of the input (exit code 2) rather than of the tool.
    pub fn is_input(&self) -> bool {
        match self {
            CtlError::Unsupported(_) | CtlError::Semantics(_) => true,
            CtlError::Milp(e) => !matches!(
                e,
                MilpError::Solver(_) | MilpError::Bounds(_) | MilpError::Dimension { .. } | MilpError::Cancelled
            ),
        }
    }
}
