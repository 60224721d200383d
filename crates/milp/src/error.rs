//! Input problems: a query or model this backend cannot encode. These are errors, never verdicts.

use trestle_bounds::BoundsError;
use trestle_core::Stop;
use trestle_ir::system::SystemError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MilpError {
    #[error("invalid system: {0}")]
    System(#[from] SystemError),
    #[error("network bounds: {0}")]
    Bounds(String),
    /// Bounds left f64's range (enclosures grown over many steps, or huge weights or boxes):
    /// where. An answer of the engines (unknown), not an input error.
    #[error("bounds overflowed: {0}")]
    Overflow(String),
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
    /// The run's [`trestle_core::Budget`] ended: its deadline passed, or another thread raised
    /// its [`crate::model::Cancel`] token (a race's loser). Not an answer.
    #[error("{0}")]
    Stopped(#[from] Stop),
    /// What the encoding would build exceeds a size limit, refused before it is allocated.
    #[error("{what} would need about {estimate} matrix entries, more than the {limit} an encoding may hold")]
    TooLarge { what: String, estimate: u128, limit: u128 },
}

impl From<BoundsError> for MilpError {
    fn from(e: BoundsError) -> MilpError {
        match e {
            BoundsError::Overflow { at } => MilpError::Overflow(format!("{at}: too large for f64")),
            // Boxes reach the bounds crate from enclosures rounded outward: an end that is not
            // finite is one that overflowed.
            BoundsError::NotFinite { what, index, lo, hi } => {
                MilpError::Overflow(format!("{what}: dimension {index} is [{lo}, {hi}]"))
            }
            e => MilpError::Bounds(e.to_string()),
        }
    }
}
