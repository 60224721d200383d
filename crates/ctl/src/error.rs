//! What stops a bounded-CTL check before it has a verdict: input the engines cannot take, and
//! failures of the layers below. None of these is an answer; the limits among them (the budget
//! ended, bounds overflowed, an encoding too large to build) become `unknown` verdicts with that
//! reason ([`CtlError::unknown`]).

use trestle_core::{Stop, Unknown};
use trestle_milp::MilpError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CtlError {
    /// The formula or the system is outside what the engines decide (unbounded operators, interval
    /// non-determinism, an Init that is not a bounded union of boxes, a system with infinitely many
    /// states for the explicit engine).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// An option outside what can be built (`pieces` above its cap, no threads).
    #[error("{0}")]
    Options(String),
    /// The system's semantics stop the search: a state without a successor, or a successor outside
    /// the declared domains (the dualities of bounded CTL need every state to have successors).
    #[error("{0}")]
    Semantics(String),
    /// The MILP layer refused or failed (not a `#[source]`: its message is this one's, said once).
    #[error("MILP encoding: {0}")]
    Milp(MilpError),
    /// The budget ended (time limit, or cancelled by a race's winner or the caller).
    #[error("{0}")]
    Stopped(#[from] Stop),
    /// A limit of the explicit engine (states to expand) or of an encoding was reached: which.
    #[error("limit reached: {0}")]
    Limit(String),
    /// Two parts of the tool disagree (a bug, reported rather than answered around).
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<MilpError> for CtlError {
    fn from(e: MilpError) -> CtlError {
        CtlError::Milp(e)
    }
}

impl CtlError {
    /// Whether the error is a problem of the input (exit code 2) rather than of the tool.
    pub fn is_input(&self) -> bool {
        match self {
            CtlError::Unsupported(_) | CtlError::Options(_) | CtlError::Semantics(_) => true,
            CtlError::Stopped(_) | CtlError::Limit(_) | CtlError::Internal(_) => false,
            CtlError::Milp(e) => !matches!(
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
            CtlError::Stopped(s) | CtlError::Milp(MilpError::Stopped(s)) => Some((*s).into()),
            CtlError::Milp(MilpError::Overflow(at)) => Some(Unknown::Overflow(at.clone())),
            CtlError::Milp(e @ MilpError::TooLarge { .. }) => Some(Unknown::Limit(e.to_string())),
            CtlError::Limit(what) => Some(Unknown::Limit(what.clone())),
            _ => None,
        }
    }
}
