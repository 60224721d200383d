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
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_core::{Budget, Trace, Verdict};
use trestle_ir::num::{Rational, rational_from_f64, to_f64_nearest};
use trestle_ir::sim::{self, SimError};
use trestle_ir::system::NondetDomain;
use trestle_ir::system::VarKind;
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
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let Some(ranges) = legal_ranges(sys, start) else { return Ok(None) };
    for r in 0..runs {
        budget.check()?;
        let Some(state) = start_state(sys, &ranges, r < runs / 4, &mut rng) else { continue };
        let Some((choices, states)) = screen(sys, &state, depth, &mut rng) else { continue };
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
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let Some(ranges) = legal_ranges(sys, start) else { return Ok(None) };
    let mut validations = 0;
    for r in 0..runs {
        budget.check()?;
        let Some(state) = start_state(sys, &ranges, r < runs / 4, &mut rng) else { continue };
        let Some((choices, states)) = screen(sys, &state, depth, &mut rng) else { continue };
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
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let Some(ranges) = legal_ranges(sys, start) else { return Vec::new() };
    (0..runs)
        .take_while(|_| !budget.is_over())
        .filter_map(|r| {
            let state = start_state(sys, &ranges, r < runs / 4, &mut rng)?;
            screen(sys, &state, depth, &mut rng).map(|(_, states)| states)
        })
        .collect()
}

/// A random state of the box's legal values that satisfies Init (`None` if the draw does not);
/// at a random corner when `corner` (where bounded properties tend to fail).
fn start_state(
    sys: &System,
    ranges: &[(Rational, Rational)],
    corner: bool,
    rng: &mut ChaCha8Rng,
) -> Option<Vec<Rational>> {
    let corner = corner.then(|| rng.random::<u64>());
    let state: Vec<Rational> = ranges
        .iter()
        .enumerate()
        .map(|(i, (lo, hi))| match corner {
            Some(bits) => {
                if bits >> (i % 64) & 1 == 0 {
                    lo.clone()
                } else {
                    hi.clone()
                }
            }
            None => draw(sys.state[i].kind, lo, hi, rng),
        })
        .collect();
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

/// A value in `[lo, hi]` ([`space::draw`]; the lower integer when the span exceeds an i64).
fn draw(kind: VarKind, lo: &Rational, hi: &Rational, rng: &mut ChaCha8Rng) -> Rational {
    space::draw(kind, lo, hi, rng).unwrap_or_else(|| lo.ceil())
}

type Choices = Vec<(Vec<Rational>, usize)>;

/// A random run of `depth` steps in f64 from `state`: its choices (inputs exact, as drawn) and its
/// states as the exact values of the f64 ones. `None` when the run stops (a domain exit, a
/// deadlock) before `depth` steps.
fn screen(
    sys: &System,
    state: &[Rational],
    depth: usize,
    rng: &mut ChaCha8Rng,
) -> Option<(Choices, Vec<Vec<Rational>>)> {
    let mut x: Vec<f64> = state.iter().map(to_f64_nearest).collect();
    let mut memory = sim::initial_memory::<f64>(sys);
    let mut choices = Vec::with_capacity(depth);
    let mut states = vec![state.to_vec()];
    for _ in 0..depth {
        let nondet: Vec<Rational> = sys
            .nondet
            .iter()
            .map(|v| match &v.domain {
                // Extremes half of the time: bounded disturbances do their worst at the ends.
                NondetDomain::Interval(lo, hi) => match rng.random_range(0..4) {
                    0 => lo.clone(),
                    1 => hi.clone(),
                    _ => draw(VarKind::Real, lo, hi, rng),
                },
                NondetDomain::Set(s) => s[rng.random_range(0..s.len())].clone(),
            })
            .collect();
        let n64: Vec<f64> = nondet.iter().map(to_f64_nearest).collect();
        let pick = |enabled: &[usize]| -> Result<usize, SimError> { Ok(enabled[rng.random_range(0..enabled.len())]) };
        let t = sim::step_choosing(sys, &x, &mut memory, &n64, pick).ok()?;
        if t.next.iter().any(|v| !v.is_finite()) {
            return None;
        }
        choices.push((nondet, t.branch));
        states.push(t.next.iter().map(|&v| rational_from_f64(v)).collect());
        x = t.next;
    }
    Some((choices, states))
}
