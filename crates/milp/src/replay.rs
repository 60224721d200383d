//! The replay gate: a MILP solution is a floating-point point of a floating-point model, so it is
//! never reported as it is. Its state is replayed in exact rational arithmetic with the IR's own
//! semantics ([`trestle_ir::sim::step`], networks run by [`trestle_ir::Network::forward_exact`]); only a
//! transition whose exact successor violates the invariant *exactly* ([`Pred::eval_exact`]) becomes a
//! counterexample. When the solver's point itself fails, nearby points are tried (the point clamped
//! into the invariant's box, rounded to a few decimals, nudged toward the box centre); if none
//! replays, the caller answers `Unknown`.

use num_traits::One;
use trestle_core::Witness;
use trestle_ir::expr::Env;
use trestle_ir::num::{rational_from_f64, rational_from_i64};
use trestle_ir::sim::{self, SimError};
use trestle_ir::system::{DomainExit, System, VarKind};
use trestle_ir::{Pred, RBox, Rational};

const OUTSIDE: &str = "the state violates the invariant";

fn holds(p: &Pred, state: &[Rational]) -> Result<bool, String> {
    p.eval_exact(&Env::new(state, &[], &[])).map_err(|e| format!("evaluating the invariant: {e}"))
}

/// Replays one exact state: the state has the declared kinds and lies in the declared domains, it
/// satisfies `inv`, the step taken with these inputs (values of their declared domains, by
/// construction of the callers) and this branch exists under the simulator's semantics (networks
/// exact, argmax by the lowest index, successors checked against the domains), and its successor
/// violates `inv` exactly.
pub fn replay_exact(
    sys: &System,
    inv: &Pred,
    state: &[Rational],
    nondet: &[Rational],
    branch: usize,
) -> Result<Witness, String> {
    sim::check_state(sys, state).map_err(|e| e.to_string())?;
    if !holds(inv, state)? {
        return Err(OUTSIDE.into());
    }
    let mut memory = sim::initial_memory::<Rational>(sys);
    let (actions, next) = match sim::step(sys, state, &mut memory, nondet, branch) {
        Ok(t) => (t.actions, t.next),
        // With `DomainExit::Error` a successor outside the domains (of any enabled branch) makes the
        // step an error run; the transition of this branch is still a real behaviour: replay it with
        // the functions `step` is made of.
        Err(SimError::DomainExit { .. }) if sys.domain_exit == DomainExit::Error => {
            let mut memory = sim::initial_memory::<Rational>(sys);
            let actions = sim::controller_actions(sys, state, nondet, &mut memory).map_err(|e| e.to_string())?;
            let enabled = sim::enabled_branches(sys, state, &actions, nondet).map_err(|e| e.to_string())?;
            if !enabled.contains(&branch) {
                return Err(format!("branch '{}' is not enabled", sys.step.branches[branch].name));
            }
            let next = sim::successor(sys, branch, state, &actions, nondet).map_err(|e| e.to_string())?;
            (actions, next)
        }
        Err(e) => return Err(e.to_string()),
    };
    if holds(inv, &next)? {
        return Err("the exact successor satisfies the invariant".into());
    }
    Ok(Witness { state: state.to_vec(), actions, nondet: nondet.to_vec(), branch, next })
}

fn round_to(q: &Rational, decimals: u32) -> Rational {
    let scale = Rational::from_integer(num_traits::pow(rational_from_i64(10).to_integer(), decimals as usize));
    (q * &scale).round() / scale
}

fn clamp(q: Rational, lo: &Option<Rational>, hi: &Option<Rational>) -> Rational {
    let q = match lo {
        Some(l) if q < *l => l.clone(),
        _ => q,
    };
    match hi {
        Some(h) if q > *h => h.clone(),
        _ => q,
    }
}

/// Exact points to try for a solver state: the point itself, clamped into `region`, rounded, nudged
/// toward the centre of `region` (integer and boolean variables rounded to the nearest integer).
pub fn candidates(sys: &System, region: &RBox, state: &[f64]) -> Vec<Vec<Rational>> {
    let integral = |i: usize, q: Rational| match sys.state.get(i).map(|v| v.kind) {
        Some(VarKind::Int | VarKind::Bool) => q.round(),
        _ => q,
    };
    let clamped = |xs: &[Rational]| -> Vec<Rational> {
        xs.iter().enumerate().map(|(i, q)| integral(i, clamp(q.clone(), &region.lo[i], &region.hi[i]))).collect()
    };
    let raw: Vec<Rational> = state
        .iter()
        .enumerate()
        .map(|(i, &x)| integral(i, rational_from_f64(if x.is_finite() { x } else { 0.0 })))
        .collect();
    let mut out = vec![raw.clone(), clamped(&raw)];
    for decimals in [15, 12, 9, 6, 4] {
        out.push(clamped(&raw.iter().map(|q| round_to(q, decimals)).collect::<Vec<_>>()));
    }
    let base = clamped(&raw);
    let two = rational_from_i64(2);
    for shift in [40u32, 30, 20, 12, 6] {
        let t = Rational::one() / Rational::from_integer(num_traits::pow(two.to_integer(), shift as usize));
        let nudged: Vec<Rational> = base
            .iter()
            .enumerate()
            .map(|(i, q)| match (&region.lo[i], &region.hi[i]) {
                (Some(l), Some(h)) => {
                    let centre = (l + h) / &two;
                    integral(i, q + (centre - q) * &t)
                }
                _ => q.clone(),
            })
            .collect();
        out.push(nudged);
    }
    let mut unique: Vec<Vec<Rational>> = Vec::new();
    for c in out {
        if !unique.contains(&c) {
            unique.push(c);
        }
    }
    unique
}

/// The gate: replays the solver's state and nearby points ([`candidates`]) with these input values,
/// the solver's branch first and then every other branch. Returns the first exact counterexample, or
/// why the first candidate inside the invariant failed.
pub fn replay_candidate(
    sys: &System,
    inv: &Pred,
    region: &RBox,
    state: &[f64],
    nondet: &[Rational],
    branch: usize,
) -> Result<Witness, String> {
    let mut first_error = None;
    let order: Vec<usize> =
        std::iter::once(branch).chain((0..sys.step.branches.len()).filter(|&b| b != branch)).collect();
    for point in candidates(sys, region, state) {
        for &b in &order {
            match replay_exact(sys, inv, &point, nondet, b) {
                Ok(w) => return Ok(w),
                // The raw solver point may sit outside the invariant by the feasibility tolerance:
                // the first error of a point inside it says more.
                Err(e) if first_error.as_deref() == Some(OUTSIDE) && e != OUTSIDE => first_error = Some(e),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
    }
    Err(first_error.unwrap_or_else(|| "no candidate point".into()))
}
