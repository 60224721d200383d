//! Falsification of a bounded property on a sampled-data system: candidate starts in Init found
//! by f64 simulation, each then validated ([`crate::flow_run::refute`]); only a validated run is a
//! counterexample.
//!
//! The candidates: the centre and corners of Init's box (up to 12 dimensions: 4096 corners are
//! still cheap; beyond, the centre and random points only), seeded random points, then a local
//! search from the best few (random moves in a shrinking neighbourhood, kept in Init's box) that
//! minimises the property's robustness over the window: `min_j rho(p, x_j)` with `rho` the signed
//! margin of `p` (positive where it holds; `and` the minimum, `or` the maximum). The search goes
//! on past the first violation to a margin the validated enclosure can decide. The inputs are
//! held at each one's first extreme value (`trestle_ir::nondet::extreme_values`) at every period.
//! The search is an f64 heuristic and decides nothing; [`falsify`] returns only validated runs.

use crate::flow::FlowStep;
use crate::flow_run::{EnclosedFlowRun, refute};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::ops::RangeInclusive;
use trestle_core::ValidatedTrace;
use trestle_ir::expr::Expr;
use trestle_ir::num::rational_from_f64;
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

/// The f64 run from `x0` over `steps` periods (states 0..=steps); `None` when it fails.
pub fn simulate(sys: &System, step: &FlowStep, x0: &[f64], steps: usize) -> Option<Vec<Vec<f64>>> {
    let w: Vec<f64> = held_inputs(sys).iter().map(trestle_ir::num::to_f64_nearest).collect();
    let period = trestle_ir::num::to_f64_nearest(&step.period);
    let mut memory = trestle_ir::sim::initial_memory::<f64>(sys);
    let mut run = vec![x0.to_vec()];
    for _ in 0..steps {
        let x = run.last().expect("the run has a start");
        let u = trestle_ir::sim::controller_actions(sys, x, &w, &mut memory).ok()?;
        let next = step.flow().simulate(x, &u, &w, period, 1e-13).ok()?;
        if next.iter().any(|v| !v.is_finite()) {
            return None;
        }
        run.push(next);
    }
    Some(run)
}

/// The smallest robustness of `p` over the window's states of the f64 run from `x0`.
pub fn window_robustness(
    sys: &System,
    step: &FlowStep,
    p: &Pred,
    window: &RangeInclusive<usize>,
    x0: &[f64],
) -> f64 {
    match simulate(sys, step, x0, *window.end()) {
        Some(run) => run[*window.start()..].iter().map(|x| robustness(p, x)).fold(f64::INFINITY, f64::min),
        None => f64::INFINITY,
    }
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
    let mut rng = ChaCha8Rng::seed_from_u64(settings.seed);
    let mut candidates: Vec<Vec<f64>> = vec![init.center()];
    if n <= 12 {
        for mask in 0..(1u32 << n) {
            candidates.push((0..n).map(|i| if mask >> i & 1 == 1 { init.hi[i] } else { init.lo[i] }).collect());
        }
    }
    let draw = |rng: &mut ChaCha8Rng| -> Vec<f64> {
        (0..n).map(|i| if init.lo[i] < init.hi[i] { rng.random_range(init.lo[i]..=init.hi[i]) } else { init.lo[i] }).collect()
    };
    for _ in 0..settings.random_starts {
        candidates.push(draw(&mut rng));
    }
    let mut scored: Vec<(f64, Vec<f64>)> = candidates.into_iter().map(|x| (score(&x), x)).collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0));
    scored.truncate(settings.refined.max(1));
    let mut refined = Vec::new();
    for (mut best, mut x) in scored {
        let mut radius = 0.25;
        for _ in 0..settings.local_moves {
            let y: Vec<f64> = (0..n)
                .map(|i| {
                    let span = init.hi[i] - init.lo[i];
                    (x[i] + radius * span * rng.random_range(-1.0..=1.0)).clamp(init.lo[i], init.hi[i])
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
    let periods = vec![held_inputs(sys); *window.end()];
    refined.into_iter().filter(|(s, _)| *s < 0.0).find_map(|(_, x)| {
        let start: Vec<Rational> = x.iter().map(|&v| rational_from_f64(v)).collect();
        if !in_init(&start) {
            return None;
        }
        refute(sys, step, p, window.clone(), &start, &periods).ok()
    })
}
