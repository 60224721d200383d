//! Falsification by simulation: runs from Init with random start states, inputs and branches,
//! screened in f64 against the negated formula and, when one looks like a violation, rebuilt
//! exactly from the same start and choices (`Trace::simulate`) and reported only if the negation
//! holds on the exact run. Cheap where violations are common (a bounded "reach the goal" from a
//! start region most of which is far from it); it decides nothing when it finds none.
//!
//! Through irrational values (tanh, sigmoid) no run is exact: [`search_validated`] reports a
//! run only once MPFR enclosures from its exact start and choices put one state strictly outside
//! one of the formula's state obligations ([`crate::path::state_obligations`]).

use crate::error::LtlError;
use crate::path::PathFormula;
use trestle_core::{Budget, Trace, Verdict};
use trestle_ir::num::Rational;
use trestle_ir::random::{Choices, Ends, RunSampler};
use trestle_ir::{Pred, RBox, System, space};

/// Runs tried per start box.
pub const RUNS: usize = 256;

/// A run of `depth` steps from a state of `start` on which `negated` holds exactly, if one of
/// `runs` random runs (seeded by `seed`) is one. `budget` is checked before every run.
pub fn search(
    sys: &System,
    start: &RBox,
    negated: &PathFormula,
    depth: usize,
    runs: usize,
    seed: u64,
    budget: &Budget,
) -> Result<Option<Trace>, LtlError> {
    for run in screened(sys, start, depth, runs, seed, budget) {
        let Screened { state, choices, states } = run?;
        if !negated.holds_exact(&states)? {
            continue;
        }
        let Ok(trace) = Trace::simulate(sys, state, choices) else { continue };
        if trace.len() == depth && negated.holds_exact(&trace.states)? {
            return Ok(Some(trace));
        }
    }
    Ok(None)
}

/// Most screened runs [`search_validated`] tries to validate: each validation encloses the run
/// at up to three precisions, far dearer than the f64 screen.
const MAX_VALIDATIONS: usize = 16;

/// [`search`] for systems whose runs pass through irrational values (tanh, sigmoid, elementary
/// functions of the step): a run of up to `depth` steps from a state of `start`, screened in f64,
/// whose state at some step `t` violates the predicate `p` of one of `obligations` (the formula
/// as [`crate::path::state_obligations`]), established by `trestle_core::refutation`
/// (the exact start and choices, MPFR enclosures, the enclosure of step `t` strictly outside
/// `p`; an exact trace on a rational-valued system). A run the enclosures do not decide is
/// skipped, never reported.
pub fn search_validated(
    sys: &System,
    start: &RBox,
    obligations: &[(usize, Pred)],
    depth: usize,
    runs: usize,
    seed: u64,
    budget: &Budget,
) -> Result<Option<Verdict>, LtlError> {
    let mut validations = 0;
    for run in screened(sys, start, depth, runs, seed, budget) {
        let Screened { state, choices, states } = run?;
        // The screen's candidates: obligations its f64 states violate, earliest step first.
        let mut violated: Vec<&(usize, Pred)> = obligations
            .iter()
            .filter(|(t, p)| {
                states.get(*t).is_some_and(|s| matches!(p.eval_exact(&trestle_ir::Env::new(s, &[], &[])), Ok(false)))
            })
            .collect();
        if violated.is_empty() {
            continue;
        }
        violated.sort_by_key(|(t, _)| *t);
        validations += 1;
        for (t, p) in violated {
            budget.check()?;
            if let Ok(verdict) = trestle_core::refutation(sys, &state, &choices[..*t], p) {
                return Ok(Some(verdict));
            }
        }
        if validations == MAX_VALIDATIONS {
            break;
        }
    }
    Ok(None)
}

/// The states of up to `runs` random runs of `depth` steps from `start` (as [`search`] draws
/// them), screened in f64: for where runs go, never for a verdict. Fewer once `budget` is over.
pub(crate) fn run_states(
    sys: &System,
    start: &RBox,
    depth: usize,
    runs: usize,
    seed: u64,
    budget: &Budget,
) -> Vec<Vec<Vec<Rational>>> {
    screened(sys, start, depth, runs, seed, budget).map_while(Result::ok).map(|run| run.states).collect()
}

/// A random run from Init screened in f64: its exact start, its choices and its f64 states
/// taken exactly.
struct Screened {
    state: Vec<Rational>,
    choices: Choices,
    states: Vec<Vec<Rational>>,
}

/// The screened runs among `runs` random runs of `depth` steps from a state of `start` (a
/// quarter of them from its corners first; inputs at their ends half of the time), seeded by
/// `seed`: the runs that start in Init and go the whole way. `budget` is checked before every
/// run; its stop ends the runs as an error.
fn screened<'a>(
    sys: &'a System,
    start: &RBox,
    depth: usize,
    runs: usize,
    seed: u64,
    budget: &'a Budget,
) -> impl Iterator<Item = Result<Screened, LtlError>> + 'a {
    let mut rng = RunSampler::new(seed);
    let ranges = legal_ranges(sys, start).unwrap_or_default();
    let none = ranges.len() < sys.state.len();
    (0..if none { 0 } else { runs }).filter_map(move |r| {
        if let Err(stop) = budget.check() {
            return Some(Err(stop.into()));
        }
        let state = start_state(sys, &ranges, r < runs / 4, &mut rng)?;
        let (choices, states) = rng.f64_run(sys, &state, depth, Ends::Often)?;
        Some(Ok(Screened { state, choices, states }))
    })
}

/// A random state of the box's legal values that satisfies Init (`None` if the draw does not);
/// at a random corner when `corner` (where bounded properties tend to fail).
fn start_state(
    sys: &System,
    ranges: &[(Rational, Rational)],
    corner: bool,
    rng: &mut RunSampler,
) -> Option<Vec<Rational>> {
    let state = rng.state(sys, ranges, corner);
    sys.init.eval_exact(&trestle_ir::Env::new(&state, &[], &[])).unwrap_or(false).then_some(state)
}

/// Every variable's legal values in `start` (domains and integrality), or `None` when some
/// variable is unbounded there or has no legal value.
fn legal_ranges(sys: &System, start: &RBox) -> Option<Vec<(Rational, Rational)>> {
    (0..sys.state.len())
        .map(|i| {
            let (lo, hi) = (start.lo[i].as_ref()?, start.hi[i].as_ref()?);
            space::legal_range(sys, i, lo, hi)
        })
        .collect()
}
