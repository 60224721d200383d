//! What can stop a run before it has a verdict.

use trestle_smt::CheckError;

#[derive(Debug, thiserror::Error)]
pub enum CegarError {
    /// The system is not a discrete system these engines take (see [`crate::model`]).
    #[error("not a discrete system: {0}")]
    Unsupported(String),
    /// A tanh or sigmoid network, or an elementary function: the message names what can.
    #[error("{0}")]
    NotPiecewiseLinear(String),
    #[error("the system has no `safe` condition (unsafety is `not safe`)")]
    NoSafe,
    #[error(transparent)]
    Smt(#[from] CheckError),
    /// The explicit search would enumerate more states than it may.
    #[error("{0}")]
    TooLarge(String),
    /// A counterexample failed its exact replay: a bug, never reported as a verdict.
    #[error("internal error: {0}")]
    Internal(String),
}
