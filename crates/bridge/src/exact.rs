//! The exact leaf decision: a box that postconditions cannot decide is decided by Z3 with the
//! networks encoded exactly on it, `(p /\ Inv /\ a = f(s) /\ Next_ENV) => Inv'` (the monolithic
//! baseline's query restricted to `p`).
//!
//! Why it is needed: psi is a sound over-approximation of the controller, widened by rounding
//! terms and a relative hair (see [`crate::post`]). A candidate with no margin (a fixed point on the
//! invariant's boundary, `x' = -x` on `[-1, 1]`, a guard that touches it) therefore fails on every
//! box that touches the boundary, however small; and a violation smaller than the rounding (an
//! exact `5e-17`, a single rational point, a window narrower than any sample spacing) never shows
//! in floating-point search. Both are easy for an exact query on a small box, where most ReLUs have
//! a fixed sign: those are encoded as the identity or as zero, from CROWN's outward-rounded
//! pre-activation bounds on the box, so only the unstable ones remain case splits.
//!
//! `Valid` proves the box (an exact clause of the certificate, which `certify` re-checks by the
//! same query, built from the box alone); a model is replayed through the IR's step
//! ([`crate::witness::replay_exact`]) before it is reported; anything else leaves the box
//! undecided.

use crate::error::BridgeError;
use crate::post::PostEngine;
use crate::witness;
use trestle_ir::system::Policy;
use trestle_ir::{FBox, Pred, System};
use trestle_smt::{
    Answer, CheckError, InductiveQuery, InductivenessChecker, NetworkPhases, Postcondition, Witness, Z3Backend,
};

/// What the exact query said about one box.
#[derive(Clone, Debug, PartialEq)]
pub enum ExactDecision {
    /// Every successor of every state of the box (with the controller's real actions) is in Inv.
    Proven,
    /// A real counterexample, replayed exactly.
    Refuted(Witness),
    /// Time-out, solver unknown, or a model that did not replay: why.
    Undecided(String),
}

/// The ReLU phases on `p` of every network each controller may run, from CROWN's pre-activation
/// bounds over the controller's input box (outward rounded, so each phase holds on all of `p`).
/// A network that cannot be bounded there gets no phases (every ReLU stays an `ite`).
pub fn phases(sys: &System, engine: &PostEngine<'_>, p: &FBox) -> Vec<Vec<Option<NetworkPhases>>> {
    sys.controllers
        .iter()
        .enumerate()
        .map(|(ci, c)| {
            let input = engine.input_box(ci, p);
            let nets = match &c.policy {
                Policy::Network(n) => vec![*n],
                Policy::Select { networks, .. } => networks.clone(),
            };
            nets.iter()
                .map(|&n| {
                    trestle_bounds::preactivation_bounds(&sys.networks[n].network, &input)
                        .ok()
                        .map(|layers| NetworkPhases::of_bounds(&layers))
                })
                .collect()
        })
        .collect()
}

/// Decides `(p /\ inv /\ a = f(s) /\ Next) => inv'` exactly with `z3`. `post`, when given, is
/// the engine's postcondition on `p` (sound bounds of the controllers there): it only lets a
/// narrowing backend ([`Z3Backend::narrowed_by`]) cut a union `inv'` to the boxes the successors
/// can reach.
pub fn decide(
    sys: &System,
    z3: &mut Z3Backend<'_>,
    engine: &PostEngine<'_>,
    inv: &Pred,
    p: &FBox,
    post: Option<&Postcondition>,
) -> Result<ExactDecision, BridgeError> {
    let mut q = InductiveQuery::on_box(inv, p).with_phases(phases(sys, engine, p));
    q.post = post;
    let answer = match z3.check_inductive_on(&q) {
        // What the exact encoding cannot express leaves the box to the rest of the engine.
        Err(CheckError::Unsupported(why)) => return Ok(ExactDecision::Undecided(why)),
        other => other?,
    };
    Ok(match answer {
        Answer::Valid => ExactDecision::Proven,
        Answer::Invalid(w) => match witness::replay_exact(sys, inv, &w.state, std::slice::from_ref(&w.nondet)) {
            Some(replayed) => ExactDecision::Refuted(replayed),
            None => ExactDecision::Undecided(format!("Z3's counterexample does not replay through the step: {w}")),
        },
        Answer::Unknown(r) => ExactDecision::Undecided(r.to_string()),
    })
}
