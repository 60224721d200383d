//! Flows of ODEs under a held input: validated one-step enclosures and numerical integrators.
//!
//! A continuous-time plant `dx/dt = f(x, u, w)` is driven by a sampled controller: the action
//! `u` is computed at the start of a period and held for its whole length `T`, and so are the
//! non-deterministic inputs `w`. One step of the closed loop is the flow of `f` over `T`. This
//! crate gives, for a box of states `X0` and boxes of held inputs `U`, `W`:
//!
//! - [`Flow::enclose`]: a **validated** enclosure of every `x(T)` from every `x0 ∈ X0`, `u ∈ U`,
//!   `w ∈ W` — a box, and a linear enclosure `x(T) ∈ A x0 + B u + C w + o + rem` (what the bridge
//!   engine's Z3 check and bound propagation through time take). Interval Taylor series in time
//!   with a Picard–Lindelöf a-priori enclosure, Taylor coefficients by automatic differentiation
//!   in outward-rounded interval arithmetic, the elementary functions only from `trestle_real`,
//!   adaptive sub-steps, and wrapping control by a first-order Taylor model in the initial values
//!   (the mean-value form; see [`enclose`] for the method and its guarantees).
//! - [`Flow::simulate`]: an adaptive Taylor integrator in f64 for simulation (not a bound).
//! - [`Flow::simulate_big`]: the same in MPFR floats at a chosen precision, the high-precision
//!   reference the tests check enclosures against (not a bound either).
//!
//! The right-hand sides are IR expressions ([`trestle_ir::Expr`]) over the state (`VarRef::State`),
//! the actions (`VarRef::Action`) and the non-deterministic inputs (`VarRef::Nondet`); they must be
//! smooth (no `min`, `max`, `relu`, `abs`, `if`, `lookup`: [`FlowError::NotSmooth`]). The period is
//! an exact rational.
//!
//! [`Zonotope`] carries a set through many periods as an affine form in its generators (no
//! wrapping when the closed loop rotates; [`zonotope`]).
//!
//! Layout: [`coef`] (the number domains of the Taylor coefficients), [`tape`] (the compiled
//! right-hand side and its coefficient recurrences), [`enclose`] (the validated step and the
//! linear enclosure), [`simulate`] (the integrators), [`zonotope`] (sets
//! through periods).

pub mod coef;
pub mod enclose;
pub mod simulate;
pub mod tape;
pub mod zonotope;

pub use enclose::{FlowEnclosure, FlowSettings, LinearEnclosure};
pub use zonotope::{AffineForm, Zonotope};

use rug::Float;
use trestle_ir::{Expr, Interval, Rational};

use crate::tape::Tape;

/// Why a flow could not be enclosed or integrated.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FlowError {
    /// The right-hand side uses an operation without derivatives everywhere.
    #[error("flows need smooth dynamics: {0} is not differentiable everywhere")]
    NotSmooth(String),
    /// Vectors or variables that do not fit the flow's dimensions.
    #[error("{0}")]
    Dimension(String),
    /// An elementary function evaluated outside its domain (or a division by 0).
    #[error("{0}")]
    Domain(String),
    /// A box or period that is not one (unbounded, inverted, non-positive).
    #[error("{0}")]
    Input(String),
    /// No validated step could be taken even at the smallest step size (the solution may blow
    /// up, leave a function's domain, or the box may be too large).
    #[error("no validated step at t = {time}: {reason} (step size down to {step:e})")]
    StepFailed { time: f64, step: f64, reason: String },
    #[error("more than {0} sub-steps")]
    TooManySteps(usize),
}

/// An autonomous ODE `dx/dt = f(x, u, w)` with held actions `u` and inputs `w`, compiled.
#[derive(Clone, Debug)]
pub struct Flow {
    tape: Tape,
}

impl Flow {
    /// `dx_i/dt = rhs[i]` over `rhs.len()` states, `actions` actions and `nondet` inputs.
    pub fn new(rhs: &[Expr], actions: usize, nondet: usize) -> Result<Flow, FlowError> {
        Ok(Flow { tape: Tape::new(rhs, actions, nondet)? })
    }

    pub fn tape(&self) -> &Tape {
        &self.tape
    }

    /// A validated enclosure of the state after `period` (see [`enclose`]).
    pub fn enclose(
        &self,
        x0: &[Interval],
        u: &[Interval],
        w: &[Interval],
        period: &Rational,
        settings: &FlowSettings,
    ) -> Result<FlowEnclosure, FlowError> {
        enclose::enclose(&self.tape, x0, u, w, period, settings)
    }

    fn augmented<T: Clone>(&self, x0: &[T], u: &[T], w: &[T]) -> Result<Vec<T>, FlowError> {
        let t = &self.tape;
        if (x0.len(), u.len(), w.len()) != (t.state_dim(), t.action_dim(), t.nondet_dim()) {
            return Err(FlowError::Dimension(format!(
                "{} states, {} actions, {} inputs given for a flow of {}, {}, {}",
                x0.len(),
                u.len(),
                w.len(),
                t.state_dim(),
                t.action_dim(),
                t.nondet_dim()
            )));
        }
        Ok(x0.iter().chain(u).chain(w).cloned().collect())
    }

    /// The state after `period` in f64 (adaptive Taylor, local error about `tol`; not a bound).
    pub fn simulate(&self, x0: &[f64], u: &[f64], w: &[f64], period: f64, tol: f64) -> Result<Vec<f64>, FlowError> {
        let y = self.augmented(x0, u, w)?;
        let (y, _) = simulate::simulate_f64(&self.tape, &y, period, tol)?;
        Ok(y[..self.tape.state_dim()].to_vec())
    }

    /// The state after `period` from exact values, in MPFR floats of `prec` bits (Taylor order
    /// `order`; not a bound).
    pub fn simulate_big(
        &self,
        x0: &[Rational],
        u: &[Rational],
        w: &[Rational],
        period: &Rational,
        prec: u32,
        order: usize,
    ) -> Result<Vec<Float>, FlowError> {
        let y = self.augmented(x0, u, w)?;
        let y = simulate::simulate_big(&self.tape, &y, period, prec, order)?;
        Ok(y[..self.tape.state_dim()].to_vec())
    }
}
