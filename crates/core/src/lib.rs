//! The solver-neutral core every engine stands on.
//!
//! Engines differ in how they decide (Z3, bound propagation, MILP, explicit search) but not in
//! what they return: a refutation is a [`Trace`] that [`Trace::replay`] confirms in exact rational
//! arithmetic through the IR's one definition of a step (or, through values with no rational
//! form, by high-precision enclosures strictly on the wrong side: [`validate`]), a query's outcome
//! is an [`Answer`], and a whole run is a [`RunResult`] with a [`Status`] that maps to the CLI's
//! exit code. Keeping these
//! here, below every engine, means an engine links a solver only when it uses one, and the CLI,
//! the campaign runner and the tests read one shape.
//!
//! Architecture invariant: this crate depends on the IR and serde only: no solver, no file format
//! beyond the JSON shape of its own types.

mod answer;
mod budget;
mod result;
mod trace;
pub mod validate;
mod validated;
mod verdict;
mod witness;

pub use answer::{Answer, AnswerKind, Unknown};
pub use budget::{Budget, Cancel, Stop, deadline_after};
pub use result::{RESULT_FORMAT, RunResult, Stats, Status};
pub use trace::{Named, ReplayError, StepJson, Trace, TraceJson, TraceStep};
pub use validated::{ValidatedTrace, refutation};
pub use verdict::{Certificate, Verdict};
pub use witness::{
    Witness, WitnessError, check_action_kinds, check_state, check_transition, holds, replay_implication,
    replay_inductive, replay_transition,
};
