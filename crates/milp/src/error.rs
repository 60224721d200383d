//! Input problems: a query or model this backend cannot encode. These are errors, never verdicts.

use trestle_bounds::BoundsError;
use trestle_ir::system::SystemError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MilpError {
    #[error("invalid system: {0}")]
    System(#[from] SystemError),
    #[error("network bounds: {0}")]
    Bounds(String),
    /// A product of two non-constant terms (after the non-deterministic inputs are fixed): not MILP.
    #[error("{what} is not piecewise linear: {detail}")]
    NotPiecewiseLinear { what: String, detail: String },
    /// The step is not multilinear in an interval input, so checking the ends of its interval would not
    /// be exact.
    #[error("the step is not multilinear in the non-deterministic input '{input}': {detail}")]
    NotMultilinear { input: String, detail: String },
    /// The invariant is not a bounded union of closed boxes over the state variables.
    #[error("the invariant must be a bounded union of at most {max_boxes} closed boxes: {detail}")]
    NotBoxUnion { max_boxes: usize, detail: String },
    /// A quantity used as a big-M constant is unbounded or not finite.
    #[error("{what} has no finite bounds ({lo}, {hi}); big-M constants need them")]
    Unbounded { what: String, lo: f64, hi: f64 },
    #[error("{what} has {found} entries, expected {expected}")]
    Dimension { what: String, found: usize, expected: usize },
    #[error("the check needs {count} MILPs, more than the limit {limit}")]
    TooManyMilps { count: usize, limit: usize },
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// HiGHS refused the model or failed outright (not a timeout, not infeasibility).
    #[error("HiGHS: {0}")]
    Solver(String),
    /// Another thread raised the search's [`crate::model::Cancel`] flag (a portfolio's loser).
    #[error("cancelled")]
    Cancelled,
}

impl From<BoundsError> for MilpError {
    fn from(e: BoundsError) -> MilpError {
        MilpError::Bounds(e.to_string())
    }
}
