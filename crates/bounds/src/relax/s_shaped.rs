//! The rules tanh and sigmoid share: S-shaped functions, increasing, convex on `(-inf, 0]` and
//! concave on `[0, inf)`, with an even derivative that peaks at 0 (auto_LiRPA's `BoundTanh`
//! family). `tanh.rs` and `sigmoid.rs` supply the function, its derivative and their rigorous
//! enclosures ([`SShaped`]).
//!
//! # Lines (CROWN's choice; the rules of auto_LiRPA)
//! For `p` in `[l, u]`, `k` the chord slope `(f(u) - f(l)) / (u - l)`, `m` the midpoint:
//! * `u <= 0` (convex): above, the chord (pointwise the best upper line); below, the tangent at
//!   `m`.
//! * `l >= 0` (concave): below, the chord; above, the tangent at `m`.
//! * `l < 0 < u`: below, the chord when `f'(l) >= k` (then `f - chord` is convex, zero at `l`,
//!   non-decreasing there, so non-negative on `[l, 0]` and, concave and non-negative at both ends,
//!   on `[0, u]`), otherwise the tangent at the point `d <= 0` closest to 0 whose tangent passes
//!   below `(u, f(u))` (found by safeguarded Newton); above, symmetrically, the chord when `f'(u) >= k`,
//!   otherwise the tangent at the point `d >= 0` closest to 0 passing above `(l, f(l))`.
//! * a (near-)point box: the tangent at the midpoint, both ways.
//!
//! alpha-CROWN searches: below, slopes in `[f'(l), f'(u)]` when `u <= 0`; above, in
//! `[f'(u), f'(l)]` when `l >= 0`; both sides in `[min(f'(l), f'(u)), f'(0)]` across 0.
//!
//! # Why the intercepts are sound
//! Only the slope `s` above comes from f64 estimates. The intercept of the upper line bounds
//! `sup g`, `g(z) = f(z) - s z`, over `[l, u]`, split at the inflection point:
//! * on the convex piece `[l, min(u, 0)]`, `g` is convex: its supremum is at an end, and `g` at
//!   each end is enclosed rigorously (`f` by `trestle-real`, `s z` by directed rounding);
//! * on the concave piece `[max(l, 0), u] = [a, b]`, `g` is concave, so for any `h` in it,
//!   `g(z) <= g(h) + g'(h) (z - h)` on all of it; with `h` the (f64) point where `f'(h) = s`
//!   clamped to `[a, b]`, the bound `g(h) + (f'(h) - s) [a - h, b - h]` is evaluated in interval
//!   arithmetic with `f(h)` and `f'(h)` enclosed rigorously. When `h` is the exact tangent point
//!   the second term is 0 and the bound is the maximum itself; an inexact `h` only adds a
//!   second-order term, never unsoundness.
//!
//! The lower line's intercept is the mirror image (infimum at the ends of the concave piece,
//! tangent bound `g(z) >= g(h) + g'(h)(z - h)` on the convex piece with `h <= 0` where
//! `f'(h) = s`). Both are outward-rounded interval evaluations, so the line is valid on `[l, u]`
//! in real arithmetic.

use super::{Relaxation, Side, best_of, lines};
use trestle_ir::Interval;
use trestle_ir::network::Activation;

/// An S-shaped activation (module docs): the f64 versions steer the choice of slopes, the
/// rigorous enclosures make the intercepts sound.
pub(super) trait SShaped {
    const ACTIVATION: Activation;
    /// `f'(0)`, the largest slope.
    const PEAK_SLOPE: f64;
    /// `f(z)` in f64 (not rigorous: choices only).
    fn value(z: f64) -> f64;
    /// `f'(z)` in f64 (not rigorous: choices only), accurate in the tails.
    fn slope(z: f64) -> f64;
    /// `f''(z)` in f64 (not rigorous: Newton's steps only).
    fn curvature(z: f64) -> f64;
    /// An interval containing `f(z)`.
    fn enclose(z: f64) -> Interval;
    /// An interval containing `f'(z)`.
    fn enclose_slope(z: f64) -> Interval;
    /// The `z >= 0` with `f'(z) = s` (f64 estimate) for `0 < s < PEAK_SLOPE`; `-z` is the other
    /// one (the derivative is even).
    fn tangent_point(s: f64) -> f64;
}

/// The `z >= 0` where `f'(z) = s`: 0 for slopes at or above the peak, `+inf` for slopes at or
/// below 0 (the derivative never reaches them).
fn tangent_point<F: SShaped>(s: f64) -> f64 {
    if s >= F::PEAK_SLOPE {
        0.0
    } else if s <= 0.0 || s.is_nan() {
        f64::INFINITY
    } else {
        F::tangent_point(s)
    }
}

/// CROWN's relaxation of `f` on `[lo, hi]` (module docs).
pub(super) fn relaxation<F: SShaped>(lo: f64, hi: f64) -> Relaxation {
    let mid = 0.5 * lo + 0.5 * hi;
    let width = hi - lo;
    if width.is_nan() || width <= 1e-9 * (1.0 + lo.abs().max(hi.abs())) {
        let s = F::slope(mid);
        return lines(F::ACTIVATION, lo, hi, (s, s), (s, s), (s, s));
    }
    let chord = (F::value(hi) - F::value(lo)) / width;
    let (at_lo, at_hi) = (F::slope(lo), F::slope(hi));
    let (upper, lower, upper_range, lower_range) = if hi <= 0.0 {
        (chord, F::slope(mid), (chord, chord), (at_lo, at_hi))
    } else if lo >= 0.0 {
        (F::slope(mid), chord, (at_hi, at_lo), (chord, chord))
    } else {
        let lower = if at_lo >= chord { chord } else { F::slope(tangent_through::<F>(hi, lo, 0.0, Side::Lower)) };
        let upper = if at_hi >= chord { chord } else { F::slope(tangent_through::<F>(lo, 0.0, hi, Side::Upper)) };
        let range = (at_lo.min(at_hi), F::PEAK_SLOPE);
        (upper, lower, range, range)
    };
    lines(F::ACTIVATION, lo, hi, (upper, lower), upper_range, lower_range)
}

/// The tangent point in `[a, b]` closest to the inflection point whose tangent still passes
/// below (`Side::Lower`, `[a, b] = [l, 0]`) or above (`Side::Upper`, `[a, b] = [0, u]`) the point
/// `(p, f(p))`: the root of `gap(d) = f(d) + f'(d) (p - d) - f(p)`, which is increasing on
/// `[a, b]` (`gap' = f''(d) (p - d) > 0` on both pieces), valid on the side of the root nearer
/// the far end. Safeguarded Newton: each step is Newton's from the last point when it lands
/// strictly inside the bracket of a valid and an invalid point, else the bracket's midpoint; it
/// converges in a handful of steps where the 40-step bisection it replaces took 40 (each step
/// costs an `exp` and a `tanh`). The root is approached from either side, so the answer is the
/// converged point when valid in f64, else that point moved toward the valid end by a few of
/// its last steps, else the valid end of the bracket. f64 only, as before: soundness rests on
/// the intercept, made sound afterwards ([`sound_intercept`]) whatever point is returned; the
/// point only decides how tight the line is (the tests check the lines still touch, and that the
/// Newton point is as close to the root as the bisection's).
fn tangent_through<F: SShaped>(p: f64, a: f64, b: f64, side: Side) -> f64 {
    let gap = |d: f64| F::value(d) + F::slope(d) * (p - d) - F::value(p);
    let valid_gap = |g: f64| match side {
        Side::Lower => g <= 0.0,
        Side::Upper => g >= 0.0,
    };
    let (mut valid, mut invalid) = match side {
        Side::Lower => (a, b),
        Side::Upper => (b, a),
    };
    let mut d = 0.5 * valid + 0.5 * invalid;
    let mut last_step = (invalid - valid).abs();
    for _ in 0..NEWTON_STEPS {
        let g = gap(d);
        if valid_gap(g) {
            valid = d;
        } else {
            invalid = d;
        }
        let newton = d - g / (F::curvature(d) * (p - d));
        let inside = newton.is_finite() && newton > valid.min(invalid) && newton < valid.max(invalid);
        let next = if inside { newton } else { 0.5 * valid + 0.5 * invalid };
        last_step = (next - d).abs();
        let done = last_step <= 4.0 * f64::EPSILON * d.abs().max(f64::MIN_POSITIVE) || next == d;
        d = next;
        if done || valid == invalid {
            break;
        }
    }
    // The converged point, or nudged toward the valid end until its tangent is valid.
    let toward_valid = if valid < invalid { -1.0 } else { 1.0 };
    let mut nudge = last_step.max(4.0 * f64::EPSILON * d.abs());
    for _ in 0..4 {
        let inside = (d - valid) * (d - invalid) <= 0.0;
        if inside && valid_gap(gap(d)) {
            return d;
        }
        d += toward_valid * nudge;
        nudge *= 4.0;
    }
    bisect(&gap, &valid_gap, valid, invalid)
}

/// The valid end of the bracket `[valid, invalid]` after 40 halvings: [`tangent_through`]'s
/// fallback when Newton's point and its nudges all fail in f64.
fn bisect(gap: &impl Fn(f64) -> f64, valid_gap: &impl Fn(f64) -> bool, mut valid: f64, mut invalid: f64) -> f64 {
    for _ in 0..40 {
        let m = 0.5 * valid + 0.5 * invalid;
        if valid_gap(gap(m)) {
            valid = m;
        } else {
            invalid = m;
        }
    }
    valid
}

/// Most Newton steps of [`tangent_through`] (the bisection fallback halves the bracket each time
/// Newton's step leaves it, so this many always reach f64 resolution).
const NEWTON_STEPS: usize = 64;

/// `sup` / `inf` of `f(z) - s z` over `[lo, hi]` in f64, and where: the extremum is at an end,
/// at the inflection point or at a tangent point (module docs), so the best of those is it.
pub(super) fn search_intercept<F: SShaped>(s: f64, lo: f64, hi: f64, side: Side) -> (f64, f64) {
    let t = tangent_point::<F>(s);
    let candidates = [lo, hi, 0.0_f64.clamp(lo, hi), t.clamp(lo, hi), (-t).clamp(lo, hi)];
    best_of(candidates.into_iter().map(|z| (F::value(z) - s * z, z)), side)
}

/// A sound intercept for the line of slope `s` on `[lo, hi]` (module docs).
pub(super) fn sound_intercept<F: SShaped>(s: f64, lo: f64, hi: f64, side: Side) -> f64 {
    let slope = Interval::point(s);
    let g = |z: f64| F::enclose(z).sub(&slope.mul(&Interval::point(z)));
    // The tangent bound of g on [a, b] at h: g(h) + (f'(h) - s) [a - h, b - h].
    let tangent_bound = |a: f64, b: f64, h: f64| {
        let h = h.clamp(a, b);
        let offsets = Interval::new(a, b).sub(&Interval::point(h));
        g(h).add(&F::enclose_slope(h).sub(&slope).mul(&offsets))
    };
    let t = tangent_point::<F>(s);
    let mut bounds: Vec<Interval> = Vec::with_capacity(3);
    if lo < 0.0 {
        let (a, b) = (lo, hi.min(0.0));
        match side {
            Side::Upper => bounds.extend([g(a), g(b)]),
            Side::Lower => bounds.push(tangent_bound(a, b, -t)),
        }
    }
    if hi > 0.0 {
        let (a, b) = (lo.max(0.0), hi);
        match side {
            Side::Upper => bounds.push(tangent_bound(a, b, t)),
            Side::Lower => bounds.extend([g(a), g(b)]),
        }
    }
    if bounds.is_empty() {
        bounds.push(g(lo)); // lo == hi == 0
    }
    match side {
        Side::Upper => bounds.iter().map(|b| b.hi).fold(f64::NEG_INFINITY, f64::max),
        Side::Lower => bounds.iter().map(|b| b.lo).fold(f64::INFINITY, f64::min),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Lines, Relaxation, sound_line};
    use super::*;
    use crate::relax::sigmoid::Sigmoid;
    use crate::relax::tanh::Tanh;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use trestle_real::BigInterval;

    /// `f(z) - (s z + t)` at 200 bits.
    fn gap(act: Activation, s: f64, t: f64, z: f64) -> BigInterval {
        let big = |v: f64| BigInterval::from_f64(v, 200).unwrap();
        let f = if act == Activation::Tanh { big(z).tanh() } else { big(z).sigmoid() };
        f.sub(&big(s).mul(&big(z)).add(&big(t)))
    }

    /// Points of `[lo, hi]`: both ends, 0, the tangent points of `s`, and a grid.
    fn points<F: SShaped>(lo: f64, hi: f64, s: f64) -> Vec<f64> {
        let t = tangent_point::<F>(s);
        let mut z = vec![lo, hi, 0.0, t, -t, t.next_up(), t.next_down(), -t.next_up(), -t.next_down()];
        z.extend((0..=200).map(|k| lo + (hi - lo) * f64::from(k) / 200.0));
        z.into_iter().filter(|z| lo <= *z && *z <= hi).collect()
    }

    fn random_box(rng: &mut ChaCha8Rng) -> (f64, f64) {
        let centre = match rng.random_range(0..4) {
            0 => rng.random_range(-1.0..1.0),
            1 => rng.random_range(-8.0..8.0),
            2 => rng.random_range(-40.0..40.0),
            _ => 0.0,
        };
        let radius = [0.0, 1e-9, 1e-4, 0.1, 1.0, 5.0, 50.0][rng.random_range(0..7)] * rng.random_range(0.5..1.0);
        (centre - radius, centre + radius)
    }

    /// Every line (CROWN's and those of random slopes, also outside the search ranges) is on its
    /// side of the function at every point checked, at 200 bits; CROWN's lines touch the
    /// function (or are within a rounding-level distance of it) somewhere on the box.
    fn check<F: SShaped>(seed: u64) {
        let act = F::ACTIVATION;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let zero = trestle_ir::num::Rational::from_integer(0.into());
        for trial in 0..300 {
            let (lo, hi) = random_box(&mut rng);
            let Relaxation::Lines(lines) = Relaxation::new(act, lo, hi) else { panic!("{act} has lines") };
            let Lines { upper, lower, .. } = lines;
            let mut cases = vec![(upper, Side::Upper, true), (lower, Side::Lower, true)];
            for _ in 0..3 {
                let s = rng.random_range(-0.1..1.2) * F::PEAK_SLOPE;
                cases.push((sound_line(act, s, lo, hi, Side::Upper), Side::Upper, false));
                cases.push((sound_line(act, s, lo, hi, Side::Lower), Side::Lower, false));
            }
            for (line, side, crown) in cases {
                let mut closest = f64::INFINITY;
                for z in points::<F>(lo, hi, line.slope) {
                    let g = gap(act, line.slope, line.intercept, z);
                    match side {
                        Side::Upper => {
                            assert_eq!(g.le(&zero), Some(true), "{act} [{lo}, {hi}] trial {trial} {line:?} at {z}")
                        }
                        Side::Lower => {
                            assert_eq!(g.ge(&zero), Some(true), "{act} [{lo}, {hi}] trial {trial} {line:?} at {z}")
                        }
                    }
                    closest = closest.min(g.mid_f64().abs());
                }
                if crown {
                    let scale = 1e-12 * (1.0 + lo.abs().max(hi.abs()));
                    assert!(closest <= scale, "{act} [{lo}, {hi}] {side:?}: CROWN's line stays {closest} away");
                }
            }
        }
    }

    #[test]
    fn tanh_lines_are_sound_and_touch() {
        check::<Tanh>(1);
    }

    #[test]
    fn sigmoid_lines_are_sound_and_touch() {
        check::<Sigmoid>(2);
    }

    /// Newton's tangent point through `(p, f(p))` is valid in f64 and its tangent passes as close
    /// to `(p, f(p))` as 40 halvings of the whole bracket get (the rule it replaced), on random
    /// boxes across 0 of
    /// every scale; the line built on it stays sound at 200 bits (checked with the others by
    /// `check` above).
    fn newton_matches_bisection<F: SShaped>(seed: u64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for trial in 0..2000 {
            let scale = [1e-3, 0.1, 1.0, 4.0, 20.0][trial % 5];
            let (lo, hi) = (-rng.random_range(0.0..1.0) * scale, rng.random_range(0.0..1.0) * scale);
            if lo == 0.0 || hi == 0.0 {
                continue;
            }
            // Where the rule asks for a tangent point: the chord is not a valid line on that side.
            let chord = (F::value(hi) - F::value(lo)) / (hi - lo);
            let sides =
                [(hi, lo, 0.0, Side::Lower, F::slope(lo) < chord), (lo, 0.0, hi, Side::Upper, F::slope(hi) < chord)];
            for (p, a, b, side, _) in sides.into_iter().filter(|s| s.4) {
                let gap = |d: f64| F::value(d) + F::slope(d) * (p - d) - F::value(p);
                let ok = |g: f64| if side == Side::Lower { g <= 0.0 } else { g >= 0.0 };
                let (valid, invalid) = if side == Side::Lower { (a, b) } else { (b, a) };
                let newton = tangent_through::<F>(p, a, b, side);
                let halved = bisect(&gap, &ok, valid, invalid);
                assert!(a <= newton && newton <= b, "{} trial {trial}: {newton} outside [{a}, {b}]", F::ACTIVATION);
                assert!(ok(gap(newton)), "{} trial {trial} {side:?}: {newton} is not valid", F::ACTIVATION);
                // As tight: the two tangents pass (p, f(p)) at the same distance, up to f64 noise
                // (on small boxes the gap is flat near its root and the two points may differ).
                let (g_newton, g_halved) = (gap(newton).abs(), gap(halved).abs());
                assert!(g_newton <= g_halved + 1e-13, "{} trial {trial}: {newton} vs {halved}", F::ACTIVATION);
            }
        }
    }

    #[test]
    fn newton_tangents_match_bisection() {
        newton_matches_bisection::<Tanh>(3);
        newton_matches_bisection::<Sigmoid>(4);
    }

    #[test]
    fn tangent_points_invert_the_derivative() {
        for s in [1e-12, 1e-6, 0.01, 0.3, 0.9, 0.999] {
            let t = Tanh::tangent_point(s);
            assert!((Tanh::slope(t) - s).abs() <= 1e-12 * s, "tanh {s}: {t}");
            let q = s / 4.0;
            let t = Sigmoid::tangent_point(q);
            assert!((Sigmoid::slope(t) - q).abs() <= 1e-12 * q, "sigmoid {q}: {t}");
        }
    }
}
