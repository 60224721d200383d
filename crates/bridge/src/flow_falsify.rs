//! Falsification of a bounded property on a sampled-data system: candidate starts in Init found
//! by f64 simulation, each then validated ([`crate::flow_run::refute`]); only a validated run is a
//! counterexample.
//!
//! The candidates: the centre and corners of Init's box (when at most 12 of its sides have a
//! positive width: 4096 corners are still cheap; beyond, the centre and random points only), seeded random points, then (when none of the
//! best few validates) a local search from them (random moves in a shrinking neighbourhood, kept in Init's box) that
//! minimises the property's robustness over the window: `min_j rho(p, x_j)` with `rho` the signed
//! margin of `p` (positive where it holds; `and` the minimum, `or` the maximum). The search goes
//! on past the first violation to a margin the validated enclosure can decide. The inputs are
//! held at each one's first extreme value (`trestle_ir::nondet::extreme_values`) at every period.
//! The search is an f64 heuristic and decides nothing; [`falsify`] returns only validated runs.

use crate::flow::FlowStep;
use crate::flow_run::{EnclosedFlowRun, refute};
use std::ops::RangeInclusive;
use trestle_core::ValidatedTrace;
use trestle_ir::expr::Expr;
use trestle_ir::num::rational_from_f64;
use trestle_ir::random::RunSampler;
use trestle_ir::{CmpOp, Env, FBox, Pred, Rational, System};

/// How hard [`falsify`] searches.
#[derive(Clone, Debug, PartialEq)]
pub struct FalsifySettings {
    /// Random starts drawn in Init's box.
    pub random_starts: usize,
    /// Local-search moves from each of the best starts.
    pub local_moves: usize,
    /// How many of the best starts the local search refines.
    pub refined: usize,
    pub seed: u64,
}

impl Default for FalsifySettings {
    fn default() -> Self {
        FalsifySettings { random_starts: 64, local_moves: 200, refined: 3, seed: 1 }
    }
}

/// The signed margin of `p` at `x`: positive where it holds, negative where it is violated.
pub fn robustness(p: &Pred, x: &[f64]) -> f64 {
    let value = |e: &Expr| e.eval(&Env::new(x, &[], &[])).unwrap_or(f64::NAN);
    match p {
        Pred::True => f64::INFINITY,
        Pred::False => f64::NEG_INFINITY,
        Pred::Cmp(l, op, r) => {
            let d = value(r) - value(l);
            match op {
                CmpOp::Le | CmpOp::Lt => d,
                CmpOp::Ge | CmpOp::Gt => -d,
                CmpOp::Eq => -d.abs(),
            }
        }
        Pred::Not(a) => -robustness(a, x),
        Pred::And(xs) => xs.iter().map(|q| robustness(q, x)).fold(f64::INFINITY, f64::min),
        Pred::Or(xs) => xs.iter().map(|q| robustness(q, x)).fold(f64::NEG_INFINITY, f64::max),
    }
}

/// The inputs held at every period of a candidate run.
pub fn held_inputs(sys: &System) -> Vec<Rational> {
    sys.nondet.iter().map(|v| trestle_ir::nondet::extreme_values(v)[0].clone()).collect()
}

/// The local error of the f64 integration of candidate runs (a heuristic: the validation decides).
const SIMULATION_TOLERANCE: f64 = 1e-10;

/// The smallest robustness of `p` over the window's states of the f64 run from `x0`, up to the
/// first state that violates `p` (negative from there on).
pub fn window_robustness(sys: &System, step: &FlowStep, p: &Pred, window: &RangeInclusive<usize>, x0: &[f64]) -> f64 {
    let w = trestle_ir::nondet::f64_inputs(sys, &held_inputs(sys));
    let period = trestle_ir::num::to_f64_nearest(&step.period);
    let mut memory = trestle_ir::sim::initial_memory::<f64>(sys);
    let (mut x, mut worst) = (x0.to_vec(), f64::INFINITY);
    for j in 0..=*window.end() {
        if j >= *window.start() {
            worst = worst.min(robustness(p, &x));
            if worst < 0.0 {
                // Violated already: the validation decides the rest.
                return worst;
            }
        }
        if j == *window.end() {
            break;
        }
        let Ok(u) = trestle_ir::sim::controller_actions(sys, &x, &w, &mut memory) else { return f64::INFINITY };
        match step.flow().simulate(&x, &u, &w, period, SIMULATION_TOLERANCE) {
            Ok(next) if next.iter().all(|v| v.is_finite()) => x = next,
            _ => return f64::INFINITY,
        }
    }
    worst
}

/// A start in `init` (a box) whose run violates "`p` at every step of `window`", validated, with
/// its enclosures; `None` when the search finds none that validates. `in_init` decides exactly
/// whether a start is in Init (the box may be Init's hull).
pub fn falsify(
    sys: &System,
    step: &FlowStep,
    p: &Pred,
    window: RangeInclusive<usize>,
    init: &FBox,
    in_init: impl Fn(&[Rational]) -> bool,
    settings: &FalsifySettings,
) -> Option<(ValidatedTrace, EnclosedFlowRun)> {
    let n = init.dims();
    let score = |x: &[f64]| window_robustness(sys, step, p, &window, x);
    let mut rng = RunSampler::new(settings.seed);
    let mut candidates: Vec<Vec<f64>> = vec![init.center()];
    let free: Vec<usize> = (0..n).filter(|&i| init.lo[i] < init.hi[i]).collect();
    if free.len() <= 12 {
        for mask in 0..(1u32 << free.len()) {
            let mut x = init.lo.clone();
            for (bit, &i) in free.iter().enumerate() {
                if mask >> bit & 1 == 1 {
                    x[i] = init.hi[i];
                }
            }
            candidates.push(x);
        }
    }
    for _ in 0..settings.random_starts {
        candidates.push(rng.point(init));
    }
    let mut scored: Vec<(f64, Vec<f64>)> = candidates.into_iter().map(|x| (score(&x), x)).collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0));
    scored.truncate(settings.refined.max(1));
    let periods = vec![held_inputs(sys); *window.end()];
    let validate = |x: &[f64]| {
        let start: Vec<Rational> = x.iter().map(|&v| rational_from_f64(v)).collect();
        if !in_init(&start) {
            return None;
        }
        refute(sys, step, p, window.clone(), &start, &periods).ok()
    };
    // The best starts are validated first: the local search runs only when none of them is a
    // validated counterexample.
    if let Some(found) = scored.iter().filter(|(s, _)| *s < 0.0).find_map(|(_, x)| validate(x)) {
        return Some(found);
    }
    let mut refined = Vec::new();
    for (mut best, mut x) in scored {
        let mut radius = 0.25;
        for _ in 0..settings.local_moves {
            let y: Vec<f64> = (0..n)
                .map(|i| {
                    let span = init.hi[i] - init.lo[i];
                    (x[i] + radius * span * rng.signed_unit()).clamp(init.lo[i], init.hi[i])
                })
                .collect();
            let s = score(&y);
            if s < best {
                (best, x) = (s, y);
            } else {
                radius = (radius * 0.95).max(1e-4);
            }
        }
        refined.push((best, x));
    }
    refined.sort_by(|a, b| a.0.total_cmp(&b.0));
    refined.into_iter().filter(|(s, _)| *s < 0.0).find_map(|(_, x)| validate(&x))
}
