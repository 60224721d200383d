//! Shared by the enclosure tests: systems written as text, random boxes, and the check of a
//! reference state against an enclosure.
#![allow(dead_code)] // each test binary uses its own part

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rug::Float;
use trestle_flow::{Flow, FlowEnclosure};
use trestle_ir::expr::VarRef;
use trestle_ir::num::rational_from_f64;
use trestle_ir::parse::{SimpleScope, Symbol, parse_expr};
use trestle_ir::{Interval, Rational};

/// What a reference may be off by, at most, from the exact flow: the references are MPFR
/// computations at 128 bits or more (a Taylor integrator with local error 2^-120, or a closed
/// form), checked against each other and against closed forms to 1e-28 in these tests. A state
/// counts as inside an enclosure when it is inside after widening by this margin, far below the
/// enclosures' own widths (rounding alone makes them ~1e-16 wide).
pub const MARGIN: f64 = 1e-25;

/// Precision of the MPFR references.
pub const PREC: u32 = 128;

/// A flow from text: `rhs[i]` is `d state[i] / dt`, over the named states and actions.
pub fn flow(states: &[&str], actions: &[&str], rhs: &[&str]) -> Flow {
    let mut scope = SimpleScope::with_state(states);
    for (j, a) in actions.iter().enumerate() {
        scope.add(a, Symbol::Var(VarRef::Action(j)));
    }
    let exprs: Vec<_> = rhs.iter().map(|t| parse_expr(t, &scope).unwrap()).collect();
    Flow::new(&exprs, actions.len(), 0).unwrap()
}

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// How many random boxes each soundness test checks: `default` unless TRESTLE_FLOW_BOXES says
/// otherwise (the larger runs).
pub fn boxes(default: usize) -> usize {
    std::env::var("TRESTLE_FLOW_BOXES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A random box around a random centre in `[lo, hi]` per coordinate, of width up to
/// `max_width` (a point one time in eight).
pub fn random_box(rng: &mut ChaCha8Rng, ranges: &[(f64, f64)], max_width: f64) -> Vec<Interval> {
    ranges
        .iter()
        .map(|&(lo, hi)| {
            let c = rng.random_range(lo..hi);
            let w = if rng.random_range(0..8) == 0 { 0.0 } else { rng.random_range(0.0..max_width) };
            Interval::new(c - w / 2.0, c + w / 2.0)
        })
        .collect()
}

/// Corners (all of them, up to 6 dimensions) and `extra` random points of a box.
pub fn sample_points(rng: &mut ChaCha8Rng, b: &[Interval], extra: usize) -> Vec<Vec<f64>> {
    let mut out = Vec::new();
    if b.len() <= 6 {
        for mask in 0..(1usize << b.len()) {
            out.push(b.iter().enumerate().map(|(i, v)| if mask >> i & 1 == 1 { v.hi } else { v.lo }).collect());
        }
    }
    for _ in 0..extra {
        out.push(b.iter().map(|v| if v.lo == v.hi { v.lo } else { rng.random_range(v.lo..=v.hi) }).collect());
    }
    out
}

pub fn exact(xs: &[f64]) -> Vec<Rational> {
    xs.iter().map(|&x| rational_from_f64(x)).collect()
}

/// Whether `r` lies in `[lo - MARGIN, hi + MARGIN]`.
pub fn inside(r: &Float, v: &Interval) -> bool {
    let lo = Float::with_val(1100, v.lo) - MARGIN;
    let hi = Float::with_val(1100, v.hi) + MARGIN;
    *r >= lo && *r <= hi
}

/// Asserts that the reference state `r` of the run from state `x0` with action `u` lies in the
/// enclosure's box and in its linear enclosure (evaluated exactly at 1100 bits).
pub fn assert_enclosed(what: &str, e: &FlowEnclosure, x0: &[f64], u: &[f64], r: &[Float]) {
    for (i, ri) in r.iter().enumerate() {
        assert!(inside(ri, &e.state[i]), "{what}: x{i}(T) = {ri} outside {} (x0 {x0:?}, u {u:?})", e.state[i]);
        let l = &e.linear;
        let mut affine = Float::with_val(1100, l.offset[i]);
        for (a, x) in l.state[i].iter().zip(x0).chain(l.action[i].iter().zip(u)) {
            affine += Float::with_val(1100, *a) * Float::with_val(1100, *x);
        }
        let residual = Float::with_val(1100, ri - &affine);
        assert!(
            inside(&residual, &l.remainder[i]),
            "{what}: x{i}(T) - linear part = {residual} outside the remainder {} (x0 {x0:?}, u {u:?})",
            l.remainder[i]
        );
    }
}

/// Asserts the enclosure is not much wider than the sampled image: at most `factor` times its
/// width plus `quadratic` times the square of the initial box's largest width (a first-order
/// Taylor model overestimates by a term of second order in the box) plus 1e-12 (rounding). An
/// enclosure that contains everything by being huge must fail a test too.
pub fn assert_tight(what: &str, e: &FlowEnclosure, b: &[Interval], images: &[Vec<f64>], factor: f64, quadratic: f64) {
    let largest = b.iter().map(Interval::width).fold(0.0, f64::max);
    let slack = 1e-12 + quadratic * largest * largest;
    for i in 0..e.state.len() {
        let lo = images.iter().map(|p| p[i]).fold(f64::INFINITY, f64::min);
        let hi = images.iter().map(|p| p[i]).fold(f64::NEG_INFINITY, f64::max);
        let (w, sampled) = (e.state[i].width(), hi - lo);
        assert!(w <= factor * sampled + slack, "{what}: x{i} enclosure width {w:e} vs sampled image width {sampled:e}");
    }
}
