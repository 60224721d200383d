//! Stop-freedom on the invariant: the safety answers' extra environment condition (issue 34.5).
//!
//! A property of "every run" speaks of the runs that go on forever, so "safe" needs, besides the
//! invariant being closed under every step that exists, that a step always exists: at every state
//! of the invariant, under every action the networks may take there and every input, some branch
//! is enabled and every enabled successor is a state (kinds, and domains unless ignored; see
//! [`trestle_smt::stops`]). It is decided per piece of the proof's split, exactly like the
//! environment conditions: on each clause box, first by interval arithmetic over the box
//! (`trestle_ir::stops::stop_free_within`), then by Z3 under the clause's postcondition psi, and,
//! where psi allows a stop (perhaps at actions the networks never take) or leaves none, by Z3 with
//! the networks encoded exactly on the box. The last gives a real stop: a state of the invariant,
//! the networks' exact actions there, and a branch or deadlock that the IR's step confirms.
//! A certificate needs nothing more: `certify` re-derives the same checks from its clauses.

use crate::config::Config;
use crate::error::BridgeError;
use trestle_core::{Budget, Unknown};
use trestle_ir::{FBox, Pred, System};
use trestle_smt::{
    CheckError, CheckerConfig, FastPath, Postcondition, Stop, StopActions, StopAnswer, StopQuery, Z3Backend,
};

/// What the stop check found.
#[derive(Clone, Debug, PartialEq)]
pub enum StopCheck {
    /// No run stops at a state of the invariant.
    Free,
    /// A run stops at this state of the invariant (exact, the networks' own actions).
    Stops(Stop),
    /// Undecided: why.
    Unknown(Unknown),
}

impl StopCheck {
    /// The unknown a proof of safety becomes when this is not [`StopCheck::Free`].
    pub fn unknown(&self, sys: &System) -> Option<Unknown> {
        match self {
            StopCheck::Free => None,
            StopCheck::Stops(s) => Some(Unknown::RunsMayStop(format!(
                "the invariant is closed under every step, but a run stops at a state of it ({}), and no run from \
                 Init was shown to reach it",
                s.describe(sys)
            ))),
            StopCheck::Unknown(u) => Some(Unknown::RunsMayStop(format!(
                "the invariant is closed under every step, but whether every state of it has a legal step stayed \
                 undecided ({u})"
            ))),
        }
    }
}

/// Checks stop-freedom on `inv`, piece by piece: each piece a box of a cover of the invariant with
/// the controllers' postcondition there when there is one (otherwise the networks are encoded).
pub fn check_stop_free(
    sys: &System,
    inv: &Pred,
    pieces: &[(FBox, Option<Postcondition>)],
    cfg: &Config,
    budget: &Budget,
) -> Result<StopCheck, BridgeError> {
    let mut checker = CheckerConfig::default().with_timeout(cfg.smt_timeout).with_deadline(budget.deadline());
    checker.dump_dir = cfg.dump_smt.clone();
    checker.dump_prefix = Some("stops-".into());
    let mut pinned = FastPath::new(sys, CheckerConfig::default())?;
    pinned.pin(inv)?;
    let mut z3 = Z3Backend::new(sys, checker)?.narrowed_by(&pinned);
    // Bounds for the networks' phases on a box (ReLUs of fixed sign encoded linearly). Where the
    // bridge's postcondition engine does not take the system (an observation reading an input,
    // under the monolithic method), every neuron is encoded with its `ite`: exact, only slower.
    let engine = crate::post::PostEngine::new(sys, cfg.post, cfg.linear_bridge).ok();
    let mut undecided: Option<Unknown> = None;
    for (region, post) in pieces {
        if let Err(stop) = budget.check() {
            return Ok(StopCheck::Unknown(stop.into()));
        }
        let Some(states) = trestle_ir::space::kind_hull(sys, region) else { continue };
        if trestle_ir::stops::stop_free_within(sys, Some(&states.intervals())).is_ok() {
            continue;
        }
        if let Some(post) = post {
            let q = StopQuery { region, inv, actions: StopActions::Post(post) };
            if decide(&mut z3, &q)? == StopAnswer::Free {
                continue;
            }
        }
        let phases = match &engine {
            Some(engine) => crate::exact::phases(sys, engine, region),
            None => vec![Vec::new(); sys.controllers.len()],
        };
        match decide(&mut z3, &StopQuery { region, inv, actions: StopActions::Networks(&phases) })? {
            StopAnswer::Free => {}
            StopAnswer::Stops(stop) => return Ok(StopCheck::Stops(stop)),
            StopAnswer::Unknown(u) => {
                undecided.get_or_insert(u);
            }
        }
    }
    Ok(undecided.map_or(StopCheck::Free, StopCheck::Unknown))
}

/// One query; what Z3's encoding cannot express (an elementary function, a recurrent or smooth
/// network) is an undecided piece, not an error of the run.
fn decide(z3: &mut Z3Backend<'_>, q: &StopQuery<'_>) -> Result<StopAnswer, BridgeError> {
    match z3.check_stops(q) {
        Ok(a) => Ok(a),
        Err(CheckError::Unsupported(why)) => Ok(StopAnswer::Unknown(Unknown::Unsupported(why))),
        Err(e) => Err(e.into()),
    }
}
