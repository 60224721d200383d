//! A refutation through values that have no exact rational form, as engines report it.
//!
//! [`crate::validate`] decides whether a run from an exact start under exact choices ends in a
//! state violating a predicate. A [`ValidatedTrace`] is such a run once established: the exact
//! start and choices, the predicate its last state violates, the precision that decided it, and
//! the enclosures of every later state and action. It is what [`crate::Verdict::RefutedValidated`]
//! carries, what `trestle-result/1` prints (the start exactly, the later states as intervals with
//! exact rational ends, the precision), and what `certify` re-validates from the start and choices
//! alone ([`ValidatedTrace::revalidate`]: the enclosures are recomputed, never trusted).
//!
//! Rational-valued systems keep exact traces: [`refutation`] returns an exact [`Trace`] for them and
//! a validated one only where some value is irrational.

use crate::trace::{Named, StepJson, TraceJson};
use crate::validate::{Bounds, EnclosedRun, NotValidated, Validation, enclose, validate_violation};
use crate::verdict::Verdict;
use serde_json::Value;
use trestle_ir::num::{Rational, display_rational, to_f64_nearest};
use trestle_ir::pred::Pred;
use trestle_ir::print::Names;
use trestle_ir::system::System;

/// A run whose last state violates `violated`, established by enclosures at `precision_bits`.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidatedTrace {
    /// `s_0`, exact, inside every domain.
    pub start: Vec<Rational>,
    /// Per step: the non-deterministic inputs (exact) and the branch taken.
    pub choices: Vec<(Vec<Rational>, usize)>,
    /// The state predicate the whole enclosure of the last state violates (the invariant, Safe,
    /// an atom of a formula).
    pub violated: Pred,
    /// The precision (bits) at which every decision of the run was decided.
    pub precision_bits: u32,
    /// The enclosures of the states (`s_0` exact) and actions.
    pub run: EnclosedRun,
}

impl ValidatedTrace {
    /// Establishes by enclosures (whatever the system: on a rational-valued one every enclosure
    /// is the exact value) that the run from `start` under `choices` ends outside `violated`.
    pub fn establish(
        sys: &System,
        start: &[Rational],
        choices: &[(Vec<Rational>, usize)],
        violated: &Pred,
    ) -> Result<ValidatedTrace, NotValidated> {
        let (precision_bits, run) = enclose(sys, start, choices, violated)?;
        Ok(ValidatedTrace {
            start: start.to_vec(),
            choices: choices.to_vec(),
            violated: violated.clone(),
            precision_bits,
            run,
        })
    }

    /// Number of steps.
    pub fn len(&self) -> usize {
        self.choices.len()
    }

    pub fn is_empty(&self) -> bool {
        self.choices.is_empty()
    }

    /// Re-runs the validation from the start and choices alone (the enclosures recomputed, at
    /// every precision from the lowest): the precision that established the violation again.
    pub fn revalidate(&self, sys: &System) -> Result<u32, NotValidated> {
        enclose(sys, &self.start, &self.choices, &self.violated).map(|(bits, _)| bits)
    }

    /// The trace in the result schema: the start exactly, every state and action as its
    /// enclosure (exact rational ends) and the midpoint in decimals for reading, the precision
    /// and the violated predicate.
    pub fn to_json(&self, sys: &System) -> TraceJson {
        let mid = |b: &Bounds| decimal(&((&b.lo + &b.hi) / Rational::from_integer(2.into())));
        let named = |names: Vec<String>, xs: &[Bounds]| -> Named {
            names.into_iter().zip(xs).map(|(n, x)| (n, mid(x))).collect()
        };
        let ends = |xs: &[Bounds]| xs.iter().map(|b| [display_rational(&b.lo), display_rational(&b.hi)]).collect();
        let steps = self
            .choices
            .iter()
            .enumerate()
            .map(|(i, (nondet, branch))| {
                let actions = self.run.actions.get(i).map_or(&[][..], Vec::as_slice);
                StepJson {
                    actions: named(sys.action_names(), actions),
                    actions_exact: Vec::new(),
                    actions_enclosures: ends(actions),
                    labels: Named::new(),
                    nondet: sys.nondet_names().into_iter().zip(nondet).map(|(n, x)| (n, decimal(x))).collect(),
                    nondet_exact: nondet.iter().map(display_rational).collect(),
                    branch: sys.step.branches.get(*branch).map_or_else(|| branch.to_string(), |b| b.name.clone()),
                }
            })
            .collect();
        TraceJson {
            states: self.run.states.iter().map(|s| named(sys.state_names(), s)).collect(),
            states_exact: vec![self.start.iter().map(display_rational).collect()],
            steps,
            hidden_exact: None,
            loop_back: None,
            replayed: format!(
                "validated: exact start, {} interval enclosures at {} bits, the last state's enclosure strictly outside '{}'",
                // A flow's enclosures (53 bits) are outward-rounded f64, not MPFR.
                if self.precision_bits == 53 { "outward-rounded f64" } else { "MPFR" },
                self.precision_bits,
                Names::of(sys).pred(&self.violated)
            ),
            enclosures: Some(self.run.states.iter().map(|s| ends(s)).collect()),
            precision_bits: Some(self.precision_bits),
            violates: Some(Names::of(sys).pred(&self.violated)),
        }
    }
}

impl std::fmt::Display for ValidatedTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |xs: &[Bounds]| xs.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(", ");
        let start: Vec<String> = self.start.iter().map(display_rational).collect();
        write!(f, "from ({}) in {} steps", start.join(", "), self.len())?;
        if let Some(last) = self.run.states.last() {
            write!(f, " to ({})", list(last))?;
        }
        write!(f, ", validated at {} bits", self.precision_bits)
    }
}

/// The refutation of "the run from `start` under `choices` ends in a state satisfying
/// `violated`'s negation": an exact trace on a rational-valued system, a validated one otherwise;
/// `Err` when the run does not establish the violation (not a run, the predicate holds, or
/// undecided at every precision).
pub fn refutation(
    sys: &System,
    start: &[Rational],
    choices: &[(Vec<Rational>, usize)],
    violated: &Pred,
) -> Result<Verdict, NotValidated> {
    Ok(match validate_violation(sys, start, choices, violated)? {
        Validation::Exact(trace) => Verdict::refuted(trace),
        Validation::Validated { precision_bits, run } => Verdict::RefutedValidated {
            trace: ValidatedTrace {
                start: start.to_vec(),
                choices: choices.to_vec(),
                violated: violated.clone(),
                precision_bits,
                run,
            },
        },
    })
}

fn decimal(q: &Rational) -> Value {
    serde_json::Number::from_f64(to_f64_nearest(q)).map_or_else(|| Value::String(display_rational(q)), Value::Number)
}
