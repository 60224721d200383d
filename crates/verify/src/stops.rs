//! One rule for runs that stop, in every safety answer (issue 34.5; README, "Runs that stop").
//!
//! A property of "every run" speaks of the runs that go on forever, so the safety engines prove,
//! besides an invariant closed under every step, that no run stops in it
//! (`trestle_bridge::stops`: every state of the invariant has an enabled branch, and every enabled
//! successor is a state). When that fails, the answer is never "safe":
//! - a stop that a run from Init reaches (the states reachable from Init expanded exactly, as
//!   `ltl` does, `trestle_ltl::sweep`) is the system's error: an input error, exit 2, naming the
//!   state, the branch and why, as `ctl` and `ltl` report it;
//! - a stop in the invariant that no run from Init was shown to reach leaves the answer unknown
//!   (reason kind `runs-may-stop`, the stop in the reason): the candidate is closed under every
//!   step, so it is not "not inductive", but it is no proof either (a smaller invariant may be).
//!
//! [`proven_stop_free`] lends the same exact check to the temporal engines: where `ctl` cannot
//! rule stops out by the system's text or a sweep, the file's invariant proven to hold at Init,
//! closed and stop-free shows that no run from Init stops.

use crate::error::DriverError;
use trestle_bridge::StopCheck;
use trestle_core::{Budget, RunResult, Unknown};
use trestle_ir::System;
use trestle_ir::explore::{Sweep, sweep};

/// Most boxes of Init the sweep starts from.
const MAX_INIT_BOXES: usize = 1024;
/// Most states the sweep expands.
const MAX_SWEEP_STATES: usize = 1 << 16;

/// Judges a safety answer whose stop check was not `Free` (`stops`): a stop reached from Init is
/// the system's error; otherwise `result` (unknown, `runs-may-stop`) keeps its reason, with what
/// the search from Init found added.
pub(crate) fn judge(
    sys: &System,
    stops: Option<&StopCheck>,
    budget: &Budget,
    result: &mut RunResult,
) -> Result<(), DriverError> {
    if let Some(found) = search_from_init(sys, stops, budget)?
        && let Some(reason) = &result.reason
    {
        let reason = format!("{reason}; {found}");
        result.reason = Some(reason);
    }
    Ok(())
}

/// When the stop check was not `Free`: the error of a stop a run from Init reaches, or what the
/// search from Init found (`None` when there was nothing to look for).
pub(crate) fn search_from_init(
    sys: &System,
    stops: Option<&StopCheck>,
    budget: &Budget,
) -> Result<Option<String>, DriverError> {
    if stops.is_none_or(|s| *s == StopCheck::Free) {
        return Ok(None);
    }
    let inits = sys.init.to_box_union(sys.state.len(), MAX_INIT_BOXES).unwrap_or_default();
    Ok(Some(match sweep(sys, &inits, None, MAX_SWEEP_STATES, || budget.check()) {
        Sweep::Stop(e) => return Err(DriverError::input(format!("a run from Init stops: {e}"))),
        Sweep::NoStop => {
            "the states reachable from Init, expanded exactly, have no stop: a smaller invariant may prove safety"
                .into()
        }
        Sweep::Unswept(why) => format!("the states reachable from Init were not expanded to look for it ({why})"),
        Sweep::Stopped(s) => format!("the search from Init for it stopped ({})", Unknown::from(s)),
    }))
}

/// Most Init states [`stop_at_init`] steps from.
const MAX_INIT_STATES: usize = 256;

/// A stop at a state of Init (one step from each of finitely many Init states, exactly), checked
/// before a safety engine runs when the system's text does not rule stops out
/// (`trestle_ir::stops::stop_free`): such a stop is the system's error whatever the engines would
/// conclude, and an engine may never conclude where a step is undefined (a lookup out of range
/// leaves its successor unconstrained, so no proof and no replayable counterexample exist).
pub(crate) fn stop_at_init(sys: &System, budget: &Budget) -> Result<(), DriverError> {
    if trestle_ir::stops::stop_free(sys).is_ok() {
        return Ok(());
    }
    let inits = sys.init.to_box_union(sys.state.len(), MAX_INIT_BOXES).unwrap_or_default();
    match sweep(sys, &inits, Some(1), MAX_INIT_STATES, || budget.check()) {
        Sweep::Stop(e) => Err(DriverError::input(format!("a run from Init stops: {e}"))),
        _ => Ok(()),
    }
}

/// Whether no run from Init stops, proven exactly: the file's invariant holds at Init, is closed
/// under every step, and no run stops in it (the bridge engine's proof with its stop check, as
/// `check` runs it; a missing `safe` is taken as `true`, which the question does not need).
/// `Some(how)` when proven; `None` when the system has no invariant or the proof did not succeed
/// within `budget` (the caller then judges stops its own way).
pub(crate) fn proven_stop_free(sys: &System, budget: &Budget) -> Option<String> {
    sys.invariant.as_ref()?;
    let mut sys = sys.clone();
    sys.safe.get_or_insert(trestle_ir::Pred::True);
    let report = match trestle_bridge::check(&sys, &trestle_bridge::Config::default(), budget, &|_| {}) {
        Ok(r) => r,
        // An invariant the engine cannot read or decide proves nothing here; the error is the
        // question's, not the formula's.
        Err(_) => return None,
    };
    let proven = report.init == trestle_bridge::Condition::Proven
        && matches!(report.inductive.outcome, trestle_bridge::Inductiveness::Proven)
        && report.inductive.stops == Some(StopCheck::Free);
    proven.then(|| {
        "the file's invariant holds at Init, is closed under every step and has a legal step at each of its \
         states (the bridge engine, exact)"
            .to_string()
    })
}
