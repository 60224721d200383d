//! The continuous-time plant of a sampled-data system (a system file's `[flow]`).
//!
//! Semantics of one step of such a system: at the start of the period the controllers are
//! evaluated on the current state (as for a discrete system) and their actions are held
//! constant for the whole period; the non-deterministic inputs are drawn once, at the start,
//! and held too; the state then follows `dx_i/dt = rates[i]` (over state, actions and inputs)
//! for exactly `period` time units. The successor is the state at the end of the period: one
//! step is the flow map. Discrete updates before or after the flow are not part of this form.

use crate::expr::Expr;
use crate::num::Rational;

/// `dx/dt = rates(x, u, w)` over one control period, `u` and `w` held.
#[derive(Clone, Debug, PartialEq)]
pub struct SampledPlant {
    /// The control period, exact and positive.
    pub period: Rational,
    /// One right-hand side per state variable, in state order.
    pub rates: Vec<Expr>,
}
