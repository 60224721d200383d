//! LTL for memoryful (recurrent) neural agents over the IR.
//!
//! A bounded formula is unfolded over one path ([`path`]: the notes' corrected expansions,
//! negation pushed to the comparisons). [`bpt`] pushes boxes of (state, hidden state) through time
//! and decides what the enclosures decide, exactly; [`rmilp`] unrolls the closed loop in one MILP
//! and asserts the negation over that one path (floating-point evidence when no path violates
//! the formula, a replayed path when one does). [`check_ltl`] runs them cheapest first and says
//! which decided at which depth.
//!
//! Not built yet: the lasso search (refuting unbounded `F` / `U`) and invariant synthesis
//! (proving unbounded `G`); unbounded operators are refused as unsupported.

pub mod bpt;
mod engine;
mod error;
pub mod path;
pub mod rmilp;

pub use engine::{LtlOptions, LtlResult, LtlStats, LtlVerdict, Method, check_ltl};
pub use error::LtlError;
pub use path::PathFormula;
