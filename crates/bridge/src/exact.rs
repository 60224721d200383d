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

/// The phases on `p` of every network each controller may run (which piece of its activation each
/// neuron follows), from CROWN's pre-activation bounds over the controller's input box (IBP for
/// activations CROWN does not handle; outward rounded, so each phase holds on all of `p`). A
/// network that cannot be bounded there gets no phases (every neuron stays an `ite`).
pub fn phases(sys: &System, engine: &PostEngine<'_>, p: &FBox) -> Vec<Vec<Option<NetworkPhases>>> {
    phases_over(sys, |ci| engine.input_box(ci, p))
}

/// [`phases`] over the input box `input(c)` of each controller `c` (the caller vouches that it
/// encloses the controller's inputs on the region the phases are for).
pub fn phases_over(sys: &System, input: impl Fn(usize) -> FBox) -> Vec<Vec<Option<NetworkPhases>>> {
    sys.controllers
        .iter()
        .enumerate()
        .map(|(ci, c)| {
            let input = input(ci);
            sys.controller_networks(c)
                .iter()
                .map(|&n| {
                    let net = &sys.networks[n].network;
                    trestle_bounds::preactivation_bounds(net, &input)
                        .ok()
                        .map(|layers| NetworkPhases::of_bounds(net, &layers))
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
    run(sys, z3, &q)
}

/// Decides one transition of a chain of sets exactly: `(p /\ a = f(s) /\ Next) => target'`, every
/// successor of every state of the box `p` lies in `target` (a refutation is a state of `p` with a
/// successor outside `target`, replayed exactly).
/// `phases` as [`InductiveQuery::phases`]: the caller vouches that they hold on all of `p`.
pub fn decide_transition(
    sys: &System,
    z3: &mut Z3Backend<'_>,
    phases: Vec<Vec<Option<NetworkPhases>>>,
    p: &FBox,
    target: &Pred,
) -> Result<ExactDecision, BridgeError> {
    let region = crate::certificate::boxes_pred(std::slice::from_ref(p));
    let q = InductiveQuery::on_box(&region, p).with_phases(phases).with_target(target);
    run(sys, z3, &q)
}

fn run(sys: &System, z3: &mut Z3Backend<'_>, q: &InductiveQuery<'_>) -> Result<ExactDecision, BridgeError> {
    let answer = match z3.check_inductive_on(q) {
        // What the exact encoding cannot express leaves the box to the rest of the engine.
        Err(CheckError::Unsupported(why)) => return Ok(ExactDecision::Undecided(why)),
        other => other?,
    };
    let to = q.target.unwrap_or(q.inv);
    Ok(match answer {
        Answer::Valid => ExactDecision::Proven,
        Answer::Invalid(w) => {
            match witness::replay_transition_exact(sys, q.inv, to, &w.state, std::slice::from_ref(&w.nondet)) {
                Some(replayed) => ExactDecision::Refuted(replayed),
                None => ExactDecision::Undecided(format!("Z3's counterexample does not replay through the step: {w}")),
            }
        }
        Answer::Unknown(r) => ExactDecision::Undecided(r.to_string()),
    })
}
