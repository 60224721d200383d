//! n-dimensional arena benchmarks, generated: systems with more state dimensions.
//!
//! The system of dimension n has real states `x1..xn`, a controller whose n outputs are the
//! actions `a1..an`, and the step `xi' = xi + dt*ai` (deterministic), or `xi' = xi + dt*ai + di`
//! with a bounded disturbance `di` per axis (non-deterministic). Every region is a box that is
//! the same interval on every axis: Init (small, around the goal) inside the candidate invariant
//! inside Safe. The controller imitates the saturated go-to-goal law `ai = clamp(gain*(g - xi),
//! -1, 1)`, which makes the candidate inductive when the goal is inside it (each coordinate's
//! distance to the goal shrinks by the factor `1 - dt*gain` while unsaturated). The defect
//! `drift` moves the goal past Safe's upper corner: the candidate's upper faces are then left.
//!
//! ```toml
//! [arena]
//! name = "arena-scale"
//! seed = 2029
//! dt = 0.1
//! goal = 0.5                 # the goal is (g, ..., g)
//! init = [0.45, 0.55]        # [lo, hi] on every axis
//! candidate = [0.2, 0.8]
//! safe = [0.15, 0.85]
//! gain = 3.0                 # optional, default 3
//! samples = 2048             # training states, drawn uniformly from Safe from the seed
//! epochs = 40
//! proof_timeout = 120        # seconds for the independent proof's check
//! certify_max_clauses = 256  # larger proofs are not certified: the instance is not judged
//!
//! [[family]]
//! dims = [3, 4, 6]
//! dynamics = "det"           # or "nondet" with disturbance = [lo, hi]
//! shapes = ["2x32", "2x64"]  # hidden layers x width
//! defects = ["none", "drift"]
//! ```
//!
//! [`generate`] trains each controller deterministically ([`trestle_train`]), writes it as ONNX
//! checked by reading back and against tract, writes the system file, and establishes its
//! expected verdict independently of the run a suite judges ([`truth`]): a one-step
//! counterexample found by a grid search and replayed in exact rational arithmetic
//! (`not-inductive`), or a proof whose certificate `certify` accepts (`safe`); otherwise the
//! instance is not judged. Same spec, same bytes.

mod generate;
mod spec;
pub mod truth;

pub use generate::{Generated, InstanceSummary, generate};
pub use spec::{Defect, Dynamics, Family, Spec};

#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    /// The spec is wrong (exit 2).
    #[error("{0}")]
    Input(String),
    /// Writing, training or checking failed (exit 4).
    #[error("{0}")]
    Internal(String),
}
