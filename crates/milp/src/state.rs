//! The values a step reads, as model quantities: the state (variables over a region, or the
//! successor of the previous step made a state again), the non-deterministic inputs (fixed values
//! or variables over their domains) and the controllers' initial hidden states.
//!
//! A state has its declared kinds (integer variables for `int` and `bool`) and lies in its
//! declared domains (unless the caller says domains are ignored, as under
//! [`trestle_ir::system::DomainExit::Ignore`]); every
//! bound is rounded outward from the exact rational ends, so no state is cut off.

use crate::error::MilpError;
use crate::expr::Bounded;
use crate::model::MilpModel;
use good_lp::{Expression, IntoAffineExpression, Variable};
use trestle_ir::num::{down, to_f64_nearest, up};
use trestle_ir::system::{NondetDomain, Policy, System, VarKind};
use trestle_ir::{Interval, RBox, Rational};

/// The values of the non-deterministic inputs in one step.
#[derive(Clone, Debug, PartialEq)]
pub enum NondetChoice {
    /// These values (exact; they enter the model as their nearest f64, as every constant).
    Fixed(Vec<Rational>),
    /// Any values of their domains: an interval input is a real variable over its interval (a
    /// product of it with another variable is then not piecewise linear, an error), a set-valued
    /// input is the value picked by one binary per element.
    Free,
}

/// The variables of a state and the state as steps read it (the same variables, with their bounds).
pub type StateVariables = (Vec<Variable>, Vec<Bounded>);

/// Hidden states of the recurrent controllers: `[controller][recurrent layer][neuron]`, as in
/// [`trestle_ir::sim::Memory`].
pub type Hidden = Vec<Vec<Vec<Bounded>>>;

/// One variable per state variable over `region` (bounded in every variable), of the variable's
/// kind, intersected with its declared domain when `domains` is set. `None` when the region holds
/// no state (no integer in an `int` range, or empty after the domain).
pub fn state_variables(
    model: &mut MilpModel,
    sys: &System,
    region: &RBox,
    domains: bool,
) -> Result<Option<StateVariables>, MilpError> {
    if region.lo.len() != sys.state.len() || region.hi.len() != sys.state.len() {
        return Err(MilpError::Dimension {
            what: "region of the state".into(),
            found: region.lo.len().min(region.hi.len()),
            expected: sys.state.len(),
        });
    }
    let mut vars = Vec::with_capacity(sys.state.len());
    let mut values = Vec::with_capacity(sys.state.len());
    for (i, v) in sys.state.iter().enumerate() {
        let (lo, hi) = match (&region.lo[i], &region.hi[i]) {
            (Some(l), Some(h)) => (l, h),
            _ => return Err(MilpError::Unbounded { what: format!("state variable {}", v.name), lo: 0.0, hi: 0.0 }),
        };
        // A state lies inside its variable's declared domain.
        let lo = v.domain.lo.as_ref().filter(|d| domains && *d > lo).unwrap_or(lo);
        let hi = v.domain.hi.as_ref().filter(|d| domains && *d < hi).unwrap_or(hi);
        if lo > hi {
            return Ok(None);
        }
        let var = match v.kind {
            VarKind::Real => model.continuous(down(lo), up(hi), &v.name)?,
            VarKind::Int | VarKind::Bool => {
                let (mut l, mut h) = (to_f64_nearest(&lo.ceil()), to_f64_nearest(&hi.floor()));
                if v.kind == VarKind::Bool {
                    (l, h) = (l.max(0.0), h.min(1.0));
                }
                if l > h {
                    return Ok(None);
                }
                model.integer(l, h, &v.name)?
            }
        };
        let (l, h) = model.bounds_of(var);
        vars.push(var);
        values.push(Bounded::new(Expression::from(var), Interval::new(l, h)));
    }
    Ok(Some((vars, values)))
}

/// The non-deterministic inputs of one step.
pub fn nondet_values(model: &mut MilpModel, sys: &System, choice: &NondetChoice) -> Result<Vec<Bounded>, MilpError> {
    match choice {
        NondetChoice::Fixed(values) => {
            if values.len() != sys.nondet.len() {
                return Err(MilpError::Dimension {
                    what: "non-deterministic input values".into(),
                    found: values.len(),
                    expected: sys.nondet.len(),
                });
            }
            Ok(values.iter().map(Bounded::rational).collect())
        }
        NondetChoice::Free => sys
            .nondet
            .iter()
            .map(|v| match &v.domain {
                NondetDomain::Interval(lo, hi) if lo == hi => Ok(Bounded::rational(lo)),
                NondetDomain::Interval(lo, hi) => {
                    let (l, h) = (down(lo), up(hi));
                    Ok(Bounded::new(Expression::from(model.continuous(l, h, &v.name)?), Interval::new(l, h)))
                }
                NondetDomain::Set(values) => Ok(one_of(model, values)),
            })
            .collect(),
    }
}

/// A value of a finite set: one binary per element, exactly one set.
fn one_of(model: &mut MilpModel, values: &[Rational]) -> Bounded {
    let mut values = values.to_vec();
    values.sort();
    values.dedup();
    if let [only] = &values[..] {
        return Bounded::rational(only);
    }
    let (mut value, mut sum) = (Expression::default(), Expression::default());
    for q in &values {
        let b = model.binary();
        value.add_mul(to_f64_nearest(q), b);
        sum.add_mul(1.0, b);
    }
    model.add(sum.eq(1.0));
    let iv = values.iter().map(Interval::of_rational).reduce(|a, b| a.hull(&b)).expect("a validated set is non-empty");
    Bounded::new(value, iv)
}

/// The controllers' hidden states before the first step (the IR's: zero), as constants.
pub fn initial_hidden(sys: &System) -> Hidden {
    sys.controllers
        .iter()
        .map(|c| match &c.policy {
            Policy::Network(n) => sys.networks[*n]
                .network
                .initial_hidden_exact()
                .iter()
                .map(|h| h.iter().map(Bounded::rational).collect())
                .collect(),
            Policy::Select { .. } => Vec::new(),
        })
        .collect()
}

/// Most terms a real successor's expression keeps before a fresh variable stands for it.
const MAX_SUCCESSOR_TERMS: usize = 16;

/// Constrains a successor to be a state: inside the declared domains when `domains` is set, and of
/// the declared kinds (an integer variable equal to each `int` or `bool` successor). Returns the
/// successor as the next step reads it (the integer variables, intervals narrowed to the domains),
/// or `None` when an integer successor has no integer value in its bounds. A real successor whose
/// expression has more than a few terms is named by a fresh variable.
pub fn successor_as_state(
    model: &mut MilpModel,
    sys: &System,
    next: &[Bounded],
    domains: bool,
) -> Result<Option<Vec<Bounded>>, MilpError> {
    let mut out = Vec::with_capacity(next.len());
    for (v, x) in sys.state.iter().zip(next) {
        let mut iv = x.iv;
        if domains {
            if let Some(l) = &v.domain.lo {
                model.add(x.expr.clone().geq(down(l)));
                iv.lo = iv.lo.max(down(l));
            }
            if let Some(h) = &v.domain.hi {
                model.add(x.expr.clone().leq(up(h)));
                iv.hi = iv.hi.min(up(h));
            }
        }
        let value = if v.kind == VarKind::Real && (&x.expr).linear_coefficients().count() <= MAX_SUCCESSOR_TERMS {
            Bounded::new(x.expr.clone(), iv)
        } else if v.kind == VarKind::Real {
            // Named by a variable: an unrolling's state would otherwise carry every earlier
            // step's terms, and its size grow with the square of its length.
            let w = model.continuous(iv.lo, iv.hi, &format!("{}'", v.name))?;
            model.add((x.expr.clone() - w).eq(0.0));
            Bounded::new(Expression::from(w), iv)
        } else {
            let (mut l, mut h) = (x.iv.lo.ceil(), x.iv.hi.floor());
            if v.kind == VarKind::Bool {
                (l, h) = (l.max(0.0), h.min(1.0));
            }
            if !(l.is_finite() && h.is_finite()) || l > h {
                return Ok(None);
            }
            let w = model.integer(l, h, &format!("{}'", v.name))?;
            model.add(x.expr.clone().eq(w));
            iv = Interval { lo: iv.lo.ceil().max(l), hi: iv.hi.floor().min(h) };
            Bounded::new(Expression::from(w), iv)
        };
        if value.iv.lo > value.iv.hi {
            // The domain and the successor's bounds do not meet: no successor is a state.
            model.mark_infeasible(format!("every successor of {} leaves its domain", v.name));
            out.push(Bounded::new(value.expr, x.iv));
        } else {
            out.push(value);
        }
    }
    Ok(Some(out))
}
