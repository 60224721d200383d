//! Unsafe runs (synthesis's refutation): a run from Init that leaves Safe, recorded by its exact
//! start state and the environment's exact choices at every step (inputs and branch). `certify`
//! re-runs it from these alone — the start in Init and inside every domain, each step legal, the
//! last state outside Safe — by [`ValidatedTrace::establish`]: exactly on a rational-valued
//! system (every enclosure is then the exact value), by MPFR enclosures strictly outside Safe
//! otherwise (a tanh controller, a `sin` in the step). Nothing else the file says is trusted.

use super::Certification;
use serde::{Deserialize, Serialize};
use trestle_core::ValidatedTrace;
use trestle_ir::num::{display_rational, parse_rational};
use trestle_ir::{Env, Pred, Rational, System};

/// The [`Certification::kind`] of an unsafe run.
pub const UNSAFE_RUN: &str = "unsafe run";

/// The run of an unsafe outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunJson {
    /// `s_0`, exact (decimals or `p/q`), in state order.
    pub start: Vec<String>,
    /// The environment's choices at each step.
    pub steps: Vec<ChoiceJson>,
}

/// The non-deterministic inputs (exact, in input order) and the branch (by name) of one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChoiceJson {
    pub nondet: Vec<String>,
    pub branch: String,
}

/// The record of the run from `start` under `choices` (branch indices of `sys`).
pub fn run_json(sys: &System, start: &[Rational], choices: &[(Vec<Rational>, usize)]) -> RunJson {
    let exact = |xs: &[Rational]| xs.iter().map(display_rational).collect();
    RunJson {
        start: exact(start),
        steps: choices
            .iter()
            .map(|(nondet, b)| ChoiceJson { nondet: exact(nondet), branch: sys.step.branches[*b].name.clone() })
            .collect(),
    }
}

/// A recorded run read against its system: the exact start, each step's exact inputs and branch
/// (index into `sys`), the Safe it must leave, and the first check line (the start in Init).
pub(crate) struct RunRead<'s> {
    pub start: Vec<Rational>,
    pub choices: Vec<(Vec<Rational>, usize)>,
    pub safe: &'s Pred,
    pub in_init: (String, bool, String),
}

/// Reads `run` against `sys` (what both re-checks of an unsafe run, discrete and flow, start
/// with); the failed certification when the record is not a run of this system.
pub(crate) fn read_run<'s>(run: &RunJson, sys: &'s System) -> Result<RunRead<'s>, Certification> {
    let failed = |name: &str, detail: String| Certification {
        valid: false,
        kind: UNSAFE_RUN,
        checks: vec![(name.to_string(), false, detail)],
    };
    let numbers = |texts: &[String], what: &str| -> Result<Vec<Rational>, String> {
        texts.iter().map(|t| parse_rational(t).ok_or_else(|| format!("{what}: '{t}' is not a number"))).collect()
    };
    let start = match numbers(&run.start, "start") {
        Ok(s) if s.len() == sys.state.len() => s,
        Ok(s) => {
            return Err(failed(
                "the run's start is a state",
                format!("{} values for {} variables", s.len(), sys.state.len()),
            ));
        }
        Err(e) => return Err(failed("the run's start is a state", e)),
    };
    let mut choices = Vec::with_capacity(run.steps.len());
    for (k, step) in run.steps.iter().enumerate() {
        let nondet = numbers(&step.nondet, &format!("step {k} inputs"))
            .map_err(|e| failed("the run's choices are the system's", e))?;
        let Some(branch) = sys.step.branches.iter().position(|b| b.name == step.branch) else {
            return Err(failed("the run's choices are the system's", format!("step {k}: no branch '{}'", step.branch)));
        };
        choices.push((nondet, branch));
    }
    let Some(safe) = &sys.safe else {
        return Err(failed("the system has a Safe to leave", "it gives none".into()));
    };
    let in_init = sys.init.eval_exact(&Env::new(&start, &[], &[]));
    let in_init = (
        "the run starts in Init".to_string(),
        in_init == Ok(true),
        match &in_init {
            Ok(true) => "yes".into(),
            Ok(false) => "the start state is outside Init".into(),
            Err(e) => e.to_string(),
        },
    );
    Ok(RunRead { start, choices, safe, in_init })
}

/// Re-runs the recorded run: valid when it starts in Init and its last state lies outside Safe.
pub fn certify_run(run: &RunJson, sys: &System) -> Certification {
    let check = |name: &str, ok: bool, detail: String| (name.to_string(), ok, detail);
    let RunRead { start, choices, safe, in_init } = match read_run(run, sys) {
        Ok(r) => r,
        Err(failed) => return failed,
    };
    let mut checks = vec![in_init];
    let leaves = ValidatedTrace::establish(sys, &start, &choices, safe);
    let how = if trestle_core::validate::is_rational_valued(sys) { "replayed exactly" } else { "validated" };
    checks.push(check(
        &format!("the run is legal at every step and its last state lies outside Safe ({how})"),
        leaves.is_ok(),
        match &leaves {
            Ok(t) => t.to_string(),
            Err(e) => e.to_string(),
        },
    ));
    Certification { valid: checks.iter().all(|c| c.1), kind: UNSAFE_RUN, checks }
}
