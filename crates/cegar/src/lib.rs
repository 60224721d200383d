//! Safety of discrete neural action policies: "from every start state, the policy never reaches
//! an unsafe state", decided three ways over the IR's guarded commands.
//!
//! * [`cegar`]: policy predicate abstraction refined by CEGAR (the paper behind
//!   `../shared/papers/ppa-cegar-neural-policies.txt`, with our notes): abstract states are truth
//!   vectors over linear atoms, abstract transitions are decided by Z3 with one exact copy of the
//!   network per query, and spurious abstract paths are removed by weakest-precondition atoms
//!   (transition spuriousness) or by witness splitting / concretisation exclusion (policy
//!   spuriousness). Proves safety.
//! * [`bmc`]: bounded model checking, the network copied once per step in one Z3 query; it
//!   proves safety only when no loop-free path of the current length exists.
//! * [`explicit`]: breadth-first search of the concrete states reachable under the policy,
//!   evaluated exactly: the oracle of the tests.
//!
//! Every "unsafe" carries a concrete run from a start state, rebuilt by the IR's exact simulator
//! and replayed ([`trestle_core::Trace::replay`]) before it is returned; its last state violates
//! `safe` exactly. See [`model`] for the systems taken and what domains and argmax ties mean.

pub mod atom;
pub mod bmc;
pub mod cegar;
mod error;
pub mod explicit;
pub mod model;
pub mod policy;

pub use cegar::{CegarOptions, PolicyEncoding, Refine, check_cegar};
pub use error::CegarError;
pub use model::Discrete;

use trestle_core::{Trace, Verdict};
use trestle_ir::Rational;
use trestle_ir::system::System;

/// The engine's word for a verdict: `safe`, `unsafe` or `unknown`.
pub fn word(v: &Verdict) -> &'static str {
    match v {
        Verdict::Proven { .. } | Verdict::Evidence { .. } => "safe",
        Verdict::Refuted { .. } | Verdict::RefutedValidated { .. } => "unsafe",
        Verdict::Unknown(_) => "unknown",
    }
}

/// Counters of one run (those a method does not use stay zero).
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// |P|: predicates of the final abstraction.
    pub predicates: usize,
    /// CEGAR iterations (abstract searches).
    pub iterations: usize,
    /// Of the refinements, those for policy spuriousness.
    pub policy_refinements: usize,
    /// Z3 `check-sat` calls.
    pub smt_calls: u64,
    /// Abstract transitions whose witness was reused instead of asking Z3.
    pub reused_edges: u64,
    /// Lazy policy theory: states Z3 proposed on which the policy picks another label, and the
    /// boxes bounded to exclude their neighbourhoods.
    pub refuted_states: u64,
    pub bound_calls: u64,
    /// Abstract states reached in the last search (CEGAR) or concrete states visited (explicit).
    pub states: usize,
    /// The depth reached (BMC) or the length of the counterexample.
    pub depth: usize,
    pub seconds: f64,
    /// Time of the re-check of a proof by abstraction.
    pub recheck_seconds: f64,
}

/// A verdict with what it took. A "safe" of CEGAR was re-checked from scratch
/// ([`cegar::recheck`]) before it is returned; an "unsafe" of every method was replayed exactly.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub verdict: Verdict,
    /// The final predicates (CEGAR), as text.
    pub predicates: Vec<String>,
    /// For CEGAR's "safe": the reachable abstract states, an inductive invariant that
    /// [`cegar::recheck`] re-checks without trusting the run.
    pub invariant: Option<cegar::AbstractInvariant>,
    pub stats: Stats,
}

/// Checks that a counterexample is one: it replays exactly, starts in the start condition and
/// ends in an unsafe state. Engines call it before returning `Unsafe`.
pub(crate) fn confirm_unsafe(d: &Discrete<'_>, trace: &Trace) -> Result<(), CegarError> {
    let sys: &System = d.sys;
    trace.replay(sys).map_err(|e| CegarError::Internal(format!("a counterexample does not replay: {e}")))?;
    if !holds(&d.start, &trace.states[0])? {
        return Err(CegarError::Internal("a counterexample does not start in the start condition".into()));
    }
    if !holds(&d.unsafe_, trace.last())? {
        return Err(CegarError::Internal("a counterexample does not end in an unsafe state".into()));
    }
    Ok(())
}

/// The exact truth value of a state predicate.
pub(crate) fn holds(p: &trestle_ir::Pred, s: &[Rational]) -> Result<bool, CegarError> {
    p.eval_exact(&trestle_ir::Env::new(s, &[], &[]))
        .map_err(|e| CegarError::Internal(format!("cannot evaluate a condition on state {s:?}: {e}")))
}

/// The label the policy picks at `state`, by the simulator's exact forward pass and argmax.
pub(crate) fn policy_label(d: &Discrete<'_>, state: &[Rational]) -> Result<usize, CegarError> {
    let mut memory = trestle_ir::sim::initial_memory::<Rational>(d.sys);
    let actions = trestle_ir::sim::controller_actions(d.sys, state, &[], &mut memory)
        .map_err(|e| CegarError::Internal(format!("cannot run the policy on {state:?}: {e}")))?;
    let a = &actions[d.action];
    num_traits::ToPrimitive::to_usize(&a.to_integer()).ok_or_else(|| CegarError::Internal(format!("label index {a}")))
}
