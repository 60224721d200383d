//! One closed-loop step as MILP constraints, following [`trestle_ir::sim`]: the non-deterministic
//! inputs, the controllers (observations, networks, selectors, argmax), one branch of the
//! environment (its guard and label) and the successor.
//!
//! The step is over-approximated only where the crate's contract says so: strict comparisons (in
//! guards and argmax) as their closures, and, under [`DomainExit::Error`], a branch taken while
//! another enabled branch leaves the domains (the simulator stops there with an error). A branch
//! is either fixed by the caller ([`BranchChoice::Fixed`], as the inductive check does) or chosen
//! by one binary per possible branch ([`BranchChoice::Any`]): its guard holds under its binary,
//! its label's argmax value is chosen, and each successor variable equals that branch's update by
//! big-M (updates that are the same in every branch are encoded once). Updates of a branch are
//! evaluated only under its binary, so a `lookup` of a branch not taken constrains nothing.
//!
//! [`DomainExit::Error`]: trestle_ir::system::DomainExit::Error

use crate::argmax::Strictness;
use crate::bounds::BoundOptions;
use crate::controller::encode_controllers;
use crate::error::MilpError;
use crate::expr::{Bounded, Lit, VarMap, assert_pred, assert_pred_if, encode_expr, encode_expr_if, select};
use crate::model::{MilpModel, constant};
use crate::state::{Hidden, NondetChoice, nondet_values};
use good_lp::Expression;
use trestle_ir::system::System;

/// How a step is encoded.
#[derive(Clone, Debug, PartialEq)]
pub struct StepOptions {
    /// How the networks' pre-activation bounds (big-M constants) are computed.
    pub bounds: BoundOptions,
    /// How argmax treats ties with lower indices (the closure for anything that may be evidence).
    pub strictness: Strictness,
}

impl Default for StepOptions {
    fn default() -> StepOptions {
        StepOptions { bounds: BoundOptions::default(), strictness: Strictness::Closure }
    }
}

/// Which branch of the environment the step takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BranchChoice {
    /// This one (its guard and label are constraints).
    Fixed(usize),
    /// Any enabled one, chosen by binaries.
    Any,
}

/// What [`encode_step`] added.
#[derive(Clone, Debug)]
pub struct EncodedStep {
    /// The non-deterministic inputs (constants or variables).
    pub nondet: Vec<Bounded>,
    /// The actions the controllers set.
    pub actions: Vec<Bounded>,
    /// The one-hot choice of each argmax action (by action index).
    pub onehots: Vec<Option<Vec<Expression>>>,
    /// A 0/1 expression per branch saying whether it is taken (`None`: it cannot be).
    pub branches: Vec<Option<Expression>>,
    /// The successor (not yet constrained to be a state; see
    /// [`crate::state::successor_as_state`]).
    pub next: Vec<Bounded>,
    /// The controllers' hidden states after the step.
    pub hidden: Hidden,
    /// An argmax of the step may choose an index tied with a lower one.
    pub ties_possible: bool,
}

/// Encodes one step from `state` (one value per state variable, each with a sound enclosure) and
/// the controllers' hidden states `hidden` (see [`crate::state::initial_hidden`]). `None` when the
/// step has no transition from any of these states (a selector picking no network, the fixed
/// branch's label never chosen, no branch possible).
pub fn encode_step(
    model: &mut MilpModel,
    sys: &System,
    state: &[Bounded],
    hidden: &Hidden,
    nondet: &NondetChoice,
    branch: BranchChoice,
    opts: &StepOptions,
) -> Result<Option<EncodedStep>, MilpError> {
    if state.len() != sys.state.len() {
        return Err(MilpError::Dimension {
            what: "state values".into(),
            found: state.len(),
            expected: sys.state.len(),
        });
    }
    if hidden.len() != sys.controllers.len() {
        return Err(MilpError::Dimension {
            what: "hidden states (one list per controller)".into(),
            found: hidden.len(),
            expected: sys.controllers.len(),
        });
    }
    let mut vars = VarMap { state: state.to_vec(), action: Vec::new(), nondet: nondet_values(model, sys, nondet)? };
    // Actions are set by the controllers; inputs never read actions (validated).
    vars.action = vec![Bounded::float(0.0); sys.actions.len()];
    let Some(controllers) = encode_controllers(model, sys, &mut vars, hidden, opts)? else { return Ok(None) };
    let taken = match branch {
        BranchChoice::Fixed(b) => fixed_branch(model, sys, b, &vars, &controllers.onehots)?,
        BranchChoice::Any => any_branch(model, sys, &vars, &controllers.onehots)?,
    };
    let Some((branches, next)) = taken else { return Ok(None) };
    Ok(Some(EncodedStep {
        nondet: vars.nondet,
        actions: vars.action,
        onehots: controllers.onehots,
        branches,
        next,
        hidden: controllers.hidden,
        ties_possible: controllers.ties_possible,
    }))
}

type Taken = Option<(Vec<Option<Expression>>, Vec<Bounded>)>;

/// The literal a branch's label needs (`Lit::False`: its value is never chosen).
pub fn label_lit(sys: &System, b: usize, onehots: &[Option<Vec<Expression>>]) -> Result<Lit, MilpError> {
    let branch = &sys.step.branches[b];
    let Some((a, value)) = branch.label else { return Ok(Lit::True) };
    let Some(onehot) = &onehots[a] else {
        return Err(MilpError::Unsupported(format!("branch '{}' is labelled by a non-argmax action", branch.name)));
    };
    Ok(Lit::of(&onehot[value]))
}

/// Branch `b` is taken: its label and guard hold, the successor is its update.
fn fixed_branch(
    model: &mut MilpModel,
    sys: &System,
    b: usize,
    vars: &VarMap,
    onehots: &[Option<Vec<Expression>>],
) -> Result<Taken, MilpError> {
    let Some(branch) = sys.step.branches.get(b) else {
        return Err(MilpError::Dimension { what: "branch index".into(), found: b, expected: sys.step.branches.len() });
    };
    match label_lit(sys, b, onehots)? {
        Lit::False => return Ok(None),
        Lit::True => {}
        Lit::Expr(o) => model.add(o.eq(1.0)),
    }
    if let Some(g) = &branch.guard {
        assert_pred(model, g, vars)?;
    }
    let next = branch.updates.iter().map(|u| encode_expr(model, u, vars)).collect::<Result<_, _>>()?;
    let mut taken = vec![None; sys.step.branches.len()];
    taken[b] = Some(constant(1.0));
    Ok(Some((taken, next)))
}

/// One binary per branch whose label can be chosen; exactly one is taken.
fn any_branch(
    model: &mut MilpModel,
    sys: &System,
    vars: &VarMap,
    onehots: &[Option<Vec<Expression>>],
) -> Result<Taken, MilpError> {
    let mut possible = Vec::new();
    for b in 0..sys.step.branches.len() {
        let label = label_lit(sys, b, onehots)?;
        if !matches!(label, Lit::False) {
            possible.push((b, label));
        }
    }
    match possible[..] {
        [] => return Ok(None),
        [(b, _)] => return fixed_branch(model, sys, b, vars, onehots),
        _ => {}
    }
    let mut sum = Expression::default();
    let mut taken = vec![None; sys.step.branches.len()];
    let mut lits = Vec::with_capacity(possible.len());
    for (b, label) in &possible {
        let beta = model.binary();
        sum.add_mul(1.0, beta);
        let lit = Lit::Expr(Expression::from(beta));
        if let Lit::Expr(o) = label {
            // Taken only when its label's value is the argmax.
            model.add((Expression::from(beta) - o.clone()).leq(0.0));
        }
        if let Some(g) = &sys.step.branches[*b].guard {
            assert_pred_if(model, g, &lit, vars)?;
        }
        taken[*b] = Some(Expression::from(beta));
        lits.push((*b, lit));
    }
    model.add(sum.eq(1.0));
    let mut next = Vec::with_capacity(sys.state.len());
    for (j, v) in sys.state.iter().enumerate() {
        let first = &sys.step.branches[lits[0].0].updates[j];
        if lits.iter().all(|(b, _)| sys.step.branches[*b].updates[j] == *first) {
            next.push(encode_expr(model, first, vars)?);
            continue;
        }
        let mut choices = Vec::with_capacity(lits.len());
        for (b, lit) in &lits {
            let value = encode_expr_if(model, &sys.step.branches[*b].updates[j], lit, vars)?;
            choices.push((lit.clone(), value));
        }
        next.push(select(model, &choices, &format!("{}'", v.name))?);
    }
    Ok(Some((taken, next)))
}
