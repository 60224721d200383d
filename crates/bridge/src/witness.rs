//! Concrete counterexamples to inductiveness: a state in the invariant, the controller's real
//! action there, an environment choice, and a successor outside the invariant, all replayed in
//! exact rational arithmetic through the IR's one definition of a step before they are reported.
//!
//! Candidates come from cheap floating-point search (sampling the box, then a few ascent steps on
//! the distance by which the successor leaves the invariant); floating point only proposes, the
//! exact replay decides.

use trestle_ir::num::{Rational, rational_from_f64, to_f64_nearest};
use trestle_ir::sim;
use trestle_ir::system::{NondetDomain, System};
use trestle_ir::{Env, FBox, Pred};
use trestle_smt::Witness;

/// Every combination of the extreme values of the non-deterministic inputs (interval ends, set
/// members), exactly; capped so a system with many inputs stays cheap (then a sample of them).
pub fn nondet_vertices(sys: &System) -> Vec<Vec<Rational>> {
    let mut out: Vec<Vec<Rational>> = vec![Vec::new()];
    for v in &sys.nondet {
        let values: Vec<Rational> = match &v.domain {
            NondetDomain::Interval(l, h) if l == h => vec![l.clone()],
            NondetDomain::Interval(l, h) => vec![l.clone(), h.clone()],
            NondetDomain::Set(s) => s.clone(),
        };
        let mut next = Vec::new();
        for prefix in &out {
            for x in &values {
                let mut p = prefix.clone();
                p.push(x.clone());
                next.push(p);
            }
        }
        next.truncate(256);
        out = next;
    }
    out
}

/// Replays `state` exactly: returns a witness if it lies in `inv` and some choice of the given
/// non-deterministic vertices and enabled branches leads outside `inv`.
pub fn replay_exact(sys: &System, inv: &Pred, state: &[Rational], vertices: &[Vec<Rational>]) -> Option<Witness> {
    let env = Env::new(state, &[], &[]);
    if !inv.eval_exact(&env).unwrap_or(false) {
        return None;
    }
    for nondet in vertices {
        let mut memory = sim::initial_memory::<Rational>(sys);
        let Ok(actions) = sim::controller_actions(sys, state, nondet, &mut memory) else { continue };
        let Ok(branches) = sim::enabled_branches(sys, state, &actions, nondet) else { continue };
        for b in branches {
            let Ok(next) = sim::successor(sys, b, state, &actions, nondet) else { continue };
            if sys.domain_exit == trestle_ir::system::DomainExit::Drop && sim::domain_violation(sys, &next).is_some() {
                continue;
            }
            if !inv.eval_exact(&Env::new(&next, &[], &[])).unwrap_or(true) {
                return Some(Witness { state: state.to_vec(), actions, nondet: nondet.clone(), branch: b, next });
            }
        }
    }
    None
}

/// How far (in the max norm) `x` lies outside the union of boxes: > 0 outside, <= 0 inside.
fn distance_outside(x: &[f64], cover: &[FBox]) -> f64 {
    cover
        .iter()
        .map(|b| (0..x.len()).map(|i| (b.lo[i] - x[i]).max(x[i] - b.hi[i])).fold(f64::NEG_INFINITY, f64::max))
        .fold(f64::INFINITY, f64::min)
}

/// Largest distance outside the invariant over the environment's choices at `state` (f64).
/// The networks run once per state when no observation reads a non-deterministic input.
fn violation(sys: &System, cover: &[FBox], state: &[f64], vertices: &[Vec<f64>]) -> f64 {
    let observes_nondet = sys
        .controllers
        .iter()
        .any(|c| c.inputs.iter().any(|e| e.mentions(|v| matches!(v, trestle_ir::VarRef::Nondet(_)))));
    let mut shared: Option<Vec<f64>> = None;
    let mut worst = f64::NEG_INFINITY;
    for nondet in vertices {
        let actions = match &shared {
            Some(a) if !observes_nondet => a.clone(),
            _ => {
                let mut memory = sim::initial_memory::<f64>(sys);
                let Ok(a) = sim::controller_actions(sys, state, nondet, &mut memory) else { continue };
                shared = Some(a.clone());
                a
            }
        };
        let Ok(branches) = sim::enabled_branches(sys, state, &actions, nondet) else { continue };
        for b in branches {
            if let Ok(next) = sim::successor(sys, b, state, &actions, nondet) {
                worst = worst.max(distance_outside(&next, cover));
            }
        }
    }
    worst
}

/// A deterministic pseudo-random stream seeded by the box (so results never depend on threads).
struct Stream(u64);

impl Stream {
    fn for_box(p: &FBox) -> Stream {
        let mut h: u64 = 0x9E37_79B9_7F4A_7C15;
        for x in p.lo.iter().chain(&p.hi) {
            h = (h ^ x.to_bits()).wrapping_mul(0x100_0000_01B3).rotate_left(17);
        }
        Stream(h | 1)
    }

    fn unit(&mut self) -> f64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Searches `p` for a concrete counterexample: the hint (e.g. a solver's abstract witness), the
/// centre, the corners and a few random points, then ascent steps from the most violating one.
/// Candidates whose float successor leaves the invariant are replayed exactly.
pub fn search(
    sys: &System,
    inv: &Pred,
    cover: &[FBox],
    p: &FBox,
    hint: Option<&[Rational]>,
    vertices: &[Vec<Rational>],
) -> Option<Witness> {
    let d = p.dims();
    let fverts: Vec<Vec<f64>> = vertices.iter().map(|v| v.iter().map(to_f64_nearest).collect()).collect();
    let clamp = |x: Vec<f64>| -> Vec<f64> { x.iter().enumerate().map(|(i, v)| v.clamp(p.lo[i], p.hi[i])).collect() };
    let mut candidates: Vec<Vec<f64>> = Vec::new();
    if let Some(h) = hint {
        candidates.push(clamp(h.iter().map(to_f64_nearest).collect()));
    }
    candidates.push(p.center());
    if d <= 6 {
        for mask in 0..(1usize << d) {
            candidates.push((0..d).map(|i| if mask >> i & 1 == 1 { p.hi[i] } else { p.lo[i] }).collect());
        }
    }
    let mut rng = Stream::for_box(p);
    for _ in 0..4 {
        candidates.push((0..d).map(|i| p.lo[i] + (p.hi[i] - p.lo[i]) * rng.unit()).collect());
    }
    let try_exact =
        |x: &[f64]| replay_exact(sys, inv, &x.iter().map(|&v| rational_from_f64(v)).collect::<Vec<_>>(), vertices);
    let mut best: Option<(f64, Vec<f64>)> = None;
    for c in candidates {
        let v = violation(sys, cover, &c, &fverts);
        if v > 0.0
            && let Some(w) = try_exact(&c)
        {
            return Some(w);
        }
        if best.as_ref().is_none_or(|(bv, _)| v > *bv) {
            best = Some((v, c));
        }
    }
    // Coordinate ascent on the violation from the best sample, unless it is far inside.
    let (mut value, mut x) = best?;
    if value < -2.0 * p.max_width() {
        return None;
    }
    let mut step: Vec<f64> = p.widths().iter().map(|w| w * 0.25).collect();
    for _ in 0..4 {
        let mut improved = false;
        for i in 0..d {
            for dir in [1.0, -1.0] {
                let mut y = x.clone();
                y[i] = (y[i] + dir * step[i]).clamp(p.lo[i], p.hi[i]);
                let v = violation(sys, cover, &y, &fverts);
                if v > value {
                    value = v;
                    x = y;
                    improved = true;
                }
            }
        }
        if value > 0.0
            && let Some(w) = try_exact(&x)
        {
            return Some(w);
        }
        if !improved {
            step.iter_mut().for_each(|s| *s *= 0.5);
        }
    }
    None
}

/// A state of `p` inside `inv` exactly (centre, then corners), for reporting a falsifying box.
pub fn state_in(inv: &Pred, p: &FBox) -> Vec<Vec<Rational>> {
    let d = p.dims();
    let mut pts = vec![p.center()];
    if d <= 6 {
        for mask in 0..(1usize << d) {
            pts.push((0..d).map(|i| if mask >> i & 1 == 1 { p.hi[i] } else { p.lo[i] }).collect());
        }
    }
    pts.into_iter()
        .map(|x| x.iter().map(|&v| rational_from_f64(v)).collect::<Vec<Rational>>())
        .filter(|s| inv.eval_exact(&Env::new(s, &[], &[])).unwrap_or(false))
        .collect()
}

/// A witness's exact values as the nearest floats, for printing and JSON.
pub fn approx(xs: &[Rational]) -> Vec<f64> {
    xs.iter().map(to_f64_nearest).collect()
}
