//! Exact replay of bridge-query counterexamples. Every `Invalid` answer's witness passes these
//! checks, in rational arithmetic, against the IR's own semantics before it is reported; the
//! checks that need nothing but the IR (states, transitions, implications, inductiveness) are
//! trestle-core's, shared with every other engine.

use crate::query::{BridgeQuery, Target};
use trestle_core::{Witness, WitnessError, check_action_kinds, check_state, check_transition, holds};
use trestle_ir::FBox;
use trestle_ir::num::{Rational, display_rational, rational_from_f64};
use trestle_ir::system::System;

fn fail<T>(msg: impl Into<String>) -> Result<T, WitnessError> {
    Err(WitnessError(msg.into()))
}

fn check_in_box(b: &FBox, xs: &[Rational], what: &str) -> Result<(), WitnessError> {
    for (i, x) in xs.iter().enumerate() {
        if *x < rational_from_f64(b.lo[i]) || *x > rational_from_f64(b.hi[i]) {
            return fail(format!("{what} {i} = {} is outside [{}, {}]", display_rational(x), b.lo[i], b.hi[i]));
        }
    }
    Ok(())
}

/// Re-checks a bridge-query witness: state in `p` (and the extra predicate), actions allowed by
/// `psi` at that state, a real transition, and a successor that violates the target (`StaysIn`)
/// or satisfies it (`Leaves`).
pub fn replay_bridge(sys: &System, q: &BridgeQuery<'_>, w: &Witness) -> Result<(), WitnessError> {
    check_state(sys, &w.state)?;
    check_in_box(q.region, &w.state, "state")?;
    if let Some(extra) = q.extra
        && !holds(extra, &w.state, "extra predicate")?
    {
        return fail("the state violates the extra predicate");
    }
    check_action_kinds(sys, &w.actions)?;
    for (j, a) in w.actions.iter().enumerate() {
        let (lo, hi) = q.post.exact_bounds(j, &w.state);
        if *a < lo || *a > hi {
            return fail(format!("action {j} = {} violates the postcondition", display_rational(a)));
        }
    }
    check_transition(sys, w)?;
    let inside = holds(q.target.pred(), &w.next, "target")?;
    match (q.target, inside) {
        (Target::StaysIn(_), false) | (Target::Leaves(_), true) => Ok(()),
        (Target::StaysIn(_), true) => fail("the successor satisfies the target"),
        (Target::Leaves(_), false) => fail("the successor does not satisfy the target"),
    }
}
