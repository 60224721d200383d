//! Refutations through values with no rational form (a tanh controller, a `sin` in the step): the
//! outcome record holds the exact state and inputs and the branch (`witness_exact`, its `action`
//! and `next` empty), the enclosures the run found (`validated`), and the nearest floats of their
//! midpoints (`witness`). `certify` never reads the enclosures: it re-validates the transition
//! from the exact state, inputs and branch ([`trestle_core::ValidatedTrace::establish`]).

use super::{WitnessExactJson, WitnessJson};
use serde::{Deserialize, Serialize};
use trestle_core::ValidatedTrace;
use trestle_core::validate::Bounds;
use trestle_ir::num::{display_rational, to_f64_nearest};
use trestle_ir::{Pred, Rational, System};

/// What a validated refutation's run found: the precision and the enclosures (exact rational
/// ends `[lo, hi]`) of the actions and the successor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidatedJson {
    pub precision_bits: u32,
    pub action: Vec<[String; 2]>,
    pub next: Vec<[String; 2]>,
}

/// The witness fields of the outcome record of a validated one-step refutation.
pub fn witness_jsons(sys: &System, t: &ValidatedTrace) -> (WitnessJson, WitnessExactJson, ValidatedJson) {
    let mid = |b: &Bounds| to_f64_nearest(&((&b.lo + &b.hi) / Rational::from_integer(2.into())));
    let ends = |xs: &[Bounds]| xs.iter().map(|b| [display_rational(&b.lo), display_rational(&b.hi)]).collect();
    let (nondet, branch) = t.choices.first().cloned().unwrap_or_default();
    let actions = t.run.actions.first().map_or(&[][..], Vec::as_slice);
    let next = t.run.states.get(1).map_or(&[][..], Vec::as_slice);
    let exact = |xs: &[Rational]| xs.iter().map(display_rational).collect::<Vec<_>>();
    (
        WitnessJson {
            state: t.start.iter().map(to_f64_nearest).collect(),
            action: actions.iter().map(mid).collect(),
            nondet: nondet.iter().map(to_f64_nearest).collect(),
            next: next.iter().map(mid).collect(),
        },
        WitnessExactJson {
            state: exact(&t.start),
            action: Vec::new(),
            nondet: exact(&nondet),
            next: Vec::new(),
            branch: sys.step.branches.get(branch).map(|b| b.name.clone()).unwrap_or_default(),
        },
        ValidatedJson { precision_bits: t.precision_bits, action: ends(actions), next: ends(next) },
    )
}

/// Re-validates a one-step refutation from the exact state, inputs and the named branch (every
/// branch when the name is empty): the check's outcome and what it found.
pub fn recheck(sys: &System, inv: &Pred, state: &[Rational], nondet: &[Rational], branch: &str) -> (bool, String) {
    let inside = inv.eval_exact(&trestle_ir::Env::new(state, &[], &[]));
    if inside != Ok(true) {
        return (false, "the state is not in the invariant".into());
    }
    let branches: Vec<usize> =
        (0..sys.step.branches.len()).filter(|&b| branch.is_empty() || sys.step.branches[b].name == branch).collect();
    if branches.is_empty() {
        return (false, format!("the system has no branch '{branch}'"));
    }
    let mut why = String::new();
    for b in branches {
        match ValidatedTrace::establish(sys, state, &[(nondet.to_vec(), b)], inv) {
            Ok(t) => return (true, t.to_string()),
            Err(e) => why = e.to_string(),
        }
    }
    (false, why)
}
