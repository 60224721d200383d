//! Validity of an implication between state predicates (`Init => Inv`, `Inv => Safe`) with Z3:
//! `premise /\ not conclusion` is asserted; strict atoms are encoded strictly.

use crate::config::CheckerConfig;
use crate::dump::Dumper;
use crate::encode::{Scope, Vars};
use crate::error::CheckError;
use crate::solve::{Outcome, check, rational_model};
use trestle_core::replay_implication;
use trestle_core::{Answer, Unknown, Witness};
use trestle_ir::{Pred, System};

pub(crate) fn check_implication(
    sys: &System,
    premise: &Pred,
    conclusion: &Pred,
    cfg: &CheckerConfig,
    dumper: Option<&mut Dumper>,
) -> Result<Answer, CheckError> {
    let vars = Vars::declare(sys, false);
    let solver = crate::solve::new_solver(cfg, crate::encode::logic(sys, false, &[premise, conclusion]));
    let state = Vars::reals(&vars.state);
    let scope = Scope { state: &state, action: &[], nondet: &[] };
    vars.assert_state_kinds(sys, &solver);
    solver.assert(scope.pred(premise)?);
    solver.assert(scope.pred(conclusion)?.not());
    let comment =
        format!("trestle-smt implication query on system '{}': premise => conclusion\nunsat = valid", sys.name);
    Ok(match check(&solver, cfg, dumper, &comment)? {
        Outcome::Unsat => Answer::Valid,
        Outcome::Unknown(r) => Answer::Unknown(r),
        Outcome::Sat(model) => match rational_model(&solver, cfg, model, &[&vars.state]) {
            Err(r) => Answer::Unknown(r),
            Ok((mut values, _)) => {
                let w = Witness::state_only(values.pop().unwrap_or_default());
                match replay_implication(sys, premise, conclusion, &w) {
                    Ok(()) => Answer::Invalid(w),
                    Err(e) => Answer::Unknown(Unknown::ReplayFailed(e.0)),
                }
            }
        },
    })
}
