//! The bridge check of Algorithm 1 with Z3: is `(p /\ extra /\ psi /\ Next_ENV) => Target` valid?
//! Its negation is asserted; `unsat` is `Valid`, a model is replayed exactly into a witness.

use crate::config::CheckerConfig;
use crate::dump::Dumper;
use crate::encode::{Scope, StepTerms, Vars, assert_step, in_box, num_f64};
use crate::error::CheckError;
use crate::query::{BridgeQuery, Postcondition, Target};
use crate::replay::replay_bridge;
use crate::solve::{Outcome, check, rational_model};
use trestle_core::WitnessError;
use trestle_core::{Answer, Witness};
use trestle_ir::{Matrix, System, sim};
use z3::ast::Real;
use z3::{Model, Solver};

/// Asserts `psi`: the action box, and for linear bounds `lower s + c_l <= a <= upper s + c_u`.
pub(crate) fn assert_post(post: &Postcondition, state: &[Real], action: &[Real], solver: &Solver) {
    solver.assert(in_box(action, post.action_box()));
    if let Postcondition::Linear(l) = post {
        for (j, a) in action.iter().enumerate() {
            solver.assert(a.ge(affine_term(&l.lower.a, &l.lower.c, j, state)));
            solver.assert(a.le(affine_term(&l.upper.a, &l.upper.c, j, state)));
        }
    }
}

fn affine_term(m: &Matrix, off: &[f64], j: usize, state: &[Real]) -> Real {
    let mut terms = vec![num_f64(off[j])];
    for (i, s) in state.iter().enumerate() {
        let w = m.get(j, i);
        if w != 0.0 {
            terms.push(num_f64(w) * s);
        }
    }
    Real::add(&terms)
}

/// `encoded` is the query Z3 sees: `q` itself, or `q` with its predicates cut to the same sets on
/// the states it constrains ([`crate::Z3Backend::narrowed_by`]); a model is replayed against `q`.
pub(crate) fn check_bridge(
    sys: &System,
    q: &BridgeQuery<'_>,
    encoded: &BridgeQuery<'_>,
    cfg: &CheckerConfig,
    dumper: Option<&mut Dumper>,
) -> Result<Answer, CheckError> {
    let vars = Vars::declare(sys, true);
    let replayed = q;
    let q = encoded;
    let mut preds = vec![q.target.pred()];
    preds.extend(q.extra);
    let solver = crate::solve::new_solver(cfg, crate::encode::logic(sys, true, &preds));
    let (state, action) = (Vars::reals(&vars.state), Vars::reals(&vars.action));
    vars.assert_state_space(sys, &solver);
    solver.assert(in_box(&state, q.region));
    if let Some(extra) = q.extra {
        solver.assert(Scope { state: &state, action: &[], nondet: &[] }.pred(extra)?);
    }
    assert_post(q.post, &state, &action, &solver);
    vars.assert_nondet_domains(sys, &solver);
    let step = assert_step(sys, &vars, &solver)?;
    let target = Scope { state: &step.next, action: &[], nondet: &[] }.pred(q.target.pred())?;
    let (negated, kind) = match q.target {
        Target::StaysIn(_) => (target.not(), "every successor stays in the target"),
        Target::Leaves(_) => (target, "no successor satisfies the target"),
    };
    solver.assert(negated);
    let comment = format!(
        "trestle-smt bridge query on system '{}': {kind}\np = {:?} x {:?}\nunsat = valid",
        sys.name, q.region.lo, q.region.hi
    );
    Ok(match check(&solver, cfg, dumper, &comment)? {
        Outcome::Unsat => Answer::Valid,
        Outcome::Unknown(r) => Answer::Unknown(r),
        Outcome::Sat(model) => {
            transition_witness(sys, &solver, cfg, model, &vars, &step, |w| replay_bridge(sys, replayed, w))
        }
    })
}

/// Turns a model of a transition query into a replayed witness, or `Unknown` with the reason.
pub(crate) fn transition_witness(
    sys: &System,
    solver: &Solver,
    cfg: &CheckerConfig,
    model: Model,
    vars: &Vars,
    step: &StepTerms,
    replay: impl Fn(&Witness) -> Result<(), WitnessError>,
) -> Answer {
    use trestle_core::Unknown::ReplayFailed;
    let (values, model) = match rational_model(solver, cfg, model, &[&vars.nondet, &vars.state, &vars.action]) {
        Ok(v) => v,
        Err(r) => return Answer::Unknown(r),
    };
    let mut it = values.into_iter();
    let (nondet, state, actions) =
        (it.next().unwrap_or_default(), it.next().unwrap_or_default(), it.next().unwrap_or_default());
    let Some(branch) = model.eval(&step.branch, true).and_then(|b| b.as_u64()).map(|b| b as usize) else {
        return Answer::Unknown(ReplayFailed("the model has no branch".into()));
    };
    if branch >= sys.step.branches.len() {
        return Answer::Unknown(ReplayFailed(format!("the model picks branch {branch}, which does not exist")));
    }
    let next = match sim::successor(sys, branch, &state, &actions, &nondet) {
        Ok(n) => n,
        Err(e) => return Answer::Unknown(ReplayFailed(e.to_string())),
    };
    let w = Witness { state, actions, nondet, branch, next };
    match replay(&w) {
        Ok(()) => Answer::Invalid(w),
        Err(e) => Answer::Unknown(ReplayFailed(e.0)),
    }
}
