//! 2-D maze benchmark suites, generated.
//!
//! A [`Spec`] describes one arena (Init, Safe with optional obstacles, a candidate invariant that is
//! a union of boxes, the goal, the step `x' = x + dt*a`, deterministic or scaled by a noise factor)
//! and families of instances (controller shapes x deliberate defects). [`generate`] trains each
//! controller deterministically from the seed ([`trestle_train`]: imitation of a saturated
//! feedback law toward the goal, with the defect applied), writes it as ONNX and checks the file
//! by loading it back (bit-identical weights) and against tract's inference, writes the system
//! file, and establishes the instance's expected verdict by means independent of the run a suite
//! will judge ([`truth`]): a one-step counterexample found by a grid search and replayed in exact
//! rational arithmetic (`not-inductive`), or a proof whose certificate `certify` accepts (`safe`);
//! otherwise the instance is marked not judged and kept out of the pass/fail set. Finally it writes
//! the suite file the runner reads (`trestle suite run`).
//!
//! Same spec, same bytes: training is bit-reproducible, files are written in a fixed order with
//! fixed text, and nothing depends on the thread count or the clock.

mod generate;
mod spec;
mod summary;
pub mod truth;

pub use generate::{Generated, InstanceSummary, SuiteEntry, generate, on_workers, relative, suite_file_text};
pub use spec::{Arena, Defect, Dynamics, Family, Spec, parse_shape, syntax_error as spec_syntax_error};
pub use summary::Generation;

#[derive(Debug, thiserror::Error)]
pub enum MazeError {
    /// The spec is wrong (exit 2).
    #[error("{0}")]
    Input(String),
    /// Writing, training or checking failed (exit 4).
    #[error("{0}")]
    Internal(String),
}
