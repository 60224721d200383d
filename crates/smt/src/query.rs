//! The shape of a bridge query: a state box `p` (optionally intersected with a state predicate), a
//! postcondition `psi` of the controller on `p`, and the target the successors must reach.

use crate::error::CheckError;
use trestle_ir::expr::VarRef;
use trestle_ir::linear::AffineMap;
use trestle_ir::num::rational_from_f64;
use trestle_ir::{FBox, Matrix, Pred, Rational, System};

/// Linear bounds `lower.a s + lower.c <= a <= upper.a s + upper.c` (the IR's one linear-bounds
/// type), together with the action box `bounds` (both hold). One row per action
/// (`System::actions` order), one column per state variable; every f64 is used as its exact
/// rational value.
#[derive(Clone, Debug, PartialEq)]
pub struct LinearPost {
    pub lower: AffineMap,
    pub upper: AffineMap,
    pub bounds: FBox,
}

/// A postcondition `psi` of the controller on a state box: what the actions may be there.
#[derive(Clone, Debug, PartialEq)]
pub enum Postcondition {
    /// A box over the actions.
    Box(FBox),
    /// Linear bounds in the state, plus the action box.
    Linear(LinearPost),
}

impl Postcondition {
    /// The constant action box (`Box`) or the box that accompanies the linear bounds.
    pub fn action_box(&self) -> &FBox {
        match self {
            Postcondition::Box(b) => b,
            Postcondition::Linear(l) => &l.bounds,
        }
    }

    /// Exact bounds of action `j` at `state`: `(lo, hi)`, the set being empty when `lo > hi`.
    pub fn exact_bounds(&self, j: usize, state: &[Rational]) -> (Rational, Rational) {
        let b = self.action_box();
        let (blo, bhi) = (rational_from_f64(b.lo[j]), rational_from_f64(b.hi[j]));
        match self {
            Postcondition::Box(_) => (blo, bhi),
            Postcondition::Linear(l) => {
                let lo = affine_row(&l.lower.a, &l.lower.c, j, state);
                let hi = affine_row(&l.upper.a, &l.upper.c, j, state);
                (lo.max(blo), hi.min(bhi))
            }
        }
    }

    pub(crate) fn validate(&self, n_state: usize, n_actions: usize) -> Result<(), CheckError> {
        validate_box("postcondition action box", self.action_box(), n_actions)?;
        if let Postcondition::Linear(l) = self {
            for (name, m, off) in [("lower", &l.lower.a, &l.lower.c), ("upper", &l.upper.a, &l.upper.c)] {
                let what = |s: &str| format!("postcondition {name} {s}");
                check_dim(&what("matrix rows"), m.rows, n_actions)?;
                check_dim(&what("matrix columns"), m.cols, n_state)?;
                check_dim(&what("matrix data"), m.data.len(), m.rows * m.cols)?;
                check_dim(&what("offset"), off.len(), n_actions)?;
                for (k, &v) in m.data.iter().chain(off.iter()).enumerate() {
                    if !v.is_finite() {
                        return Err(CheckError::NotFinite { what: what(&format!("entry {k}")), value: v });
                    }
                }
            }
        }
        Ok(())
    }
}

/// `row_j(m) . state + off_j`, exactly.
pub(crate) fn affine_row(m: &Matrix, off: &[f64], j: usize, state: &[Rational]) -> Rational {
    let mut acc = rational_from_f64(off[j]);
    for (i, s) in state.iter().enumerate() {
        let w = m.get(j, i);
        if w != 0.0 {
            acc += rational_from_f64(w) * s;
        }
    }
    acc
}

/// What the successors must do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target<'a> {
    /// Every successor satisfies the predicate (`Valid` proves the bridge clause).
    StaysIn(&'a Pred),
    /// No successor satisfies it (`Valid` proves that every state of `p` leaves: Algorithm 1's
    /// falsification check).
    Leaves(&'a Pred),
}

impl<'a> Target<'a> {
    pub fn pred(&self) -> &'a Pred {
        match self {
            Target::StaysIn(p) | Target::Leaves(p) => p,
        }
    }
}

/// `(p /\ extra /\ psi /\ Next_ENV) => Target`.
#[derive(Clone, Copy, Debug)]
pub struct BridgeQuery<'a> {
    /// The state box `p`, exact f64 ends.
    pub region: &'a FBox,
    /// An extra state predicate intersected with `p` (e.g. the exact candidate invariant).
    pub extra: Option<&'a Pred>,
    /// The controller's postcondition on `p`.
    pub post: &'a Postcondition,
    pub target: Target<'a>,
}

impl<'a> BridgeQuery<'a> {
    pub fn new(region: &'a FBox, post: &'a Postcondition, target: Target<'a>) -> BridgeQuery<'a> {
        BridgeQuery { region, extra: None, post, target }
    }

    pub fn with_extra(mut self, extra: &'a Pred) -> BridgeQuery<'a> {
        self.extra = Some(extra);
        self
    }

    /// Checks the query against the system: dimensions, boxes, state-only predicates.
    pub fn validate(&self, sys: &System) -> Result<(), CheckError> {
        self.validate_trusting(sys, |_| false)
    }

    /// [`BridgeQuery::validate`], skipping the predicates `is_trusted` accepts (by address: the
    /// caller validated those very objects once, and borrows them for as long as it trusts them).
    /// A large invariant (a union of thousands of boxes) is then walked once per run, not once per
    /// query.
    pub(crate) fn validate_trusting(&self, sys: &System, is_trusted: impl Fn(&Pred) -> bool) -> Result<(), CheckError> {
        validate_box("state box p", self.region, sys.state.len())?;
        self.post.validate(sys.state.len(), sys.actions.len())?;
        if !is_trusted(self.target.pred()) {
            state_only(self.target.pred(), "target", sys.state.len())?;
        }
        if let Some(e) = self.extra
            && !is_trusted(e)
        {
            state_only(e, "extra state predicate", sys.state.len())?;
        }
        Ok(())
    }
}

pub(crate) fn check_dim(what: &str, found: usize, expected: usize) -> Result<(), CheckError> {
    if found != expected {
        return Err(CheckError::Dimension { what: what.to_string(), found, expected });
    }
    Ok(())
}

pub(crate) fn validate_box(what: &str, b: &FBox, dims: usize) -> Result<(), CheckError> {
    check_dim(&format!("{what} (lower ends)"), b.lo.len(), dims)?;
    check_dim(&format!("{what} (upper ends)"), b.hi.len(), dims)?;
    for (i, (l, h)) in b.lo.iter().zip(&b.hi).enumerate() {
        if !l.is_finite() || !h.is_finite() {
            return Err(CheckError::InvalidBox {
                what: what.to_string(),
                reason: format!("dimension {i} has a non-finite end [{l}, {h}]"),
            });
        }
        if l > h {
            return Err(CheckError::InvalidBox {
                what: what.to_string(),
                reason: format!("dimension {i} is inverted [{l}, {h}]"),
            });
        }
    }
    Ok(())
}

/// Checks that `p` reads only state variables, all of them declared.
pub(crate) fn state_only(p: &Pred, what: &str, n_state: usize) -> Result<(), CheckError> {
    if p.mentions(|v| !matches!(v, VarRef::State(_))) {
        return Err(CheckError::NotStatePredicate { what: what.to_string() });
    }
    if p.mentions(|v| matches!(v, VarRef::State(i) if i >= n_state)) {
        return Err(CheckError::UnknownVariable { what: what.to_string() });
    }
    Ok(())
}

/// Checks that every variable `e` reads is declared in `sys`.
pub(crate) fn vars_declared(vars: &[VarRef], sys: &System, what: &str) -> Result<(), CheckError> {
    let ok = vars.iter().all(|v| match *v {
        VarRef::State(i) => i < sys.state.len(),
        VarRef::Action(i) => i < sys.actions.len(),
        VarRef::Nondet(i) => i < sys.nondet.len(),
    });
    if ok { Ok(()) } else { Err(CheckError::UnknownVariable { what: what.to_string() }) }
}

/// Structural checks of a system beyond [`System::validate`]: every variable an expression reads
/// is declared, every network a controller names exists.
pub(crate) fn validate_system(sys: &System) -> Result<(), CheckError> {
    sys.validate()?;
    for b in &sys.step.branches {
        let what = format!("step branch '{}'", b.name);
        for u in &b.updates {
            vars_declared(&u.vars(), sys, &what)?;
        }
        if let Some(g) = &b.guard {
            vars_declared(&g.vars(), sys, &what)?;
        }
        if let Some((a, _)) = b.label {
            vars_declared(&[VarRef::Action(a)], sys, &what)?;
        }
    }
    for c in &sys.controllers {
        let what = format!("controller '{}'", c.name);
        for e in &c.inputs {
            vars_declared(&e.vars(), sys, &what)?;
        }
        if sys.controller_networks(c).iter().any(|&n| n >= sys.networks.len()) {
            return Err(CheckError::UnknownVariable { what: format!("{what} (network index)") });
        }
    }
    state_only(&sys.init, "init", sys.state.len())?;
    if let Some(s) = &sys.safe {
        state_only(s, "safe", sys.state.len())?;
    }
    Ok(())
}
