//! The validated one-step enclosure: interval Taylor series with a Picard–Lindelöf a-priori
//! enclosure, carried through sub-steps as a first-order Taylor model in the initial values.
//!
//! # The set carried between sub-steps
//!
//! The augmented state `y = (x, u, w)` (state, held actions, held non-deterministic inputs) at
//! the start is `y0 ∈ Y0`, a box. Every later set is kept as
//! `y = c + M (y0 - ĉ0) + r` with `c` a point, `M` an interval matrix (some real matrix of `M`),
//! `r` an interval vector, `ĉ0` the centre of `Y0`: a first-order Taylor model in the initial
//! values with an interval remainder (the "mean-value form" of Lohner's method without its QR
//! factorisation of the remainder). The initial box is never re-wrapped: its image stays
//! parametrised by `y0`, so rotations do not inflate it, and only `r` (rounding and truncation
//! errors, which start at 0) and the width of `M` are subject to wrapping.
//!
//! # One sub-step of size h (h an interval enclosing the exact rational step)
//!
//! 1. `X` = the box of the set. A-priori enclosure: a box `B` with `X + [0, h] f(B) ⊆ int B`
//!    (first `X + [0, h] f(X)` inflated, then iterated with inflation; Picard–Lindelöf: every
//!    solution from `X` exists on `[0, h]` and stays in `B`). On failure the step is halved.
//! 2. The flow is `φ(y) = T(y) + h^(p+1) y[p+1](ξ)` with `T(y) = sum_{k<=p} h^k y[k](y)` the
//!    Taylor polynomial and `ξ ∈ B` (Lagrange remainder): `R = h^(p+1) y[p+1](B)`.
//! 3. Mean value theorem on `T` over the convex box `X`: `T(y) ∈ T(c) + J (y - c)` with
//!    `J = sum h^k Dy[k](X)` (the coefficients' Jacobians by interval forward-mode AD).
//! 4. With `y - c = M d + r`: `φ(y) ∈ T(c) + R + (J M) d + J r`, so the new centre is the
//!    midpoint `c'` of `Q = T(c) + R`, `M' = J M`, `r' = (Q - c') + J r`.
//!
//! All arithmetic is outward-rounded f64 intervals ([`trestle_ir::Interval`]); elementary
//! functions come from `trestle_real`. The period is an exact rational; sub-steps are exact
//! rationals summing to it, each enclosed as an interval.
//!
//! # Order and sub-steps
//!
//! By default the order is `ceil(-ln(tol) / 2) + 1` clamped to 4..=30 (Jorba and Zou's optimal
//! order for a local error `tol`), and the sub-steps adapt: a step whose remainder `R` is wider
//! than `tol * max(1, |X_i|)` in some state coordinate, or without an a-priori enclosure, is
//! halved; after a success the step doubles again (never beyond the period) when the doubled
//! step's remainder, about `2^(p+1)` times larger, would still pass. Smaller steps also reduce
//! the mean-value form's second-order overestimation (the Jacobian's spread over the box), so
//! the adaptive run is repeated with at least twice as many sub-steps while some state
//! coordinate's width shrinks by 1% or more (at most [`FlowSettings::refinements`] times). With a given number
//! of sub-steps `n`, steps are `period / n`, halved only when the a-priori enclosure fails.
//!
//! # The linear enclosure
//!
//! At the end, with `A = mid(M)` (f64), `x(T) ∈ A y0 + o + rem` for every `y0 ∈ Y0`, where
//! `o = mid(c - A ĉ0)` and `rem = (c - A ĉ0 - o) + (M - A)(Y0 - ĉ0) + r`: the successor as an
//! affine function of the initial state and the held inputs plus an interval remainder
//! ([`LinearEnclosure`]).

use num_traits::{Signed, Zero};
use trestle_ir::Interval;
use trestle_ir::Rational;
use trestle_ir::round::{add_up, sub_down};

use crate::FlowError;
use crate::coef::Jet;
use crate::tape::Tape;

/// How the enclosure is computed; `Default` is fully automatic.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSettings {
    /// Taylor order; `None`: from `tolerance` (see the module doc).
    pub order: Option<usize>,
    /// Number of equal sub-steps; `None`: adaptive.
    pub substeps: Option<usize>,
    /// Largest accepted truncation remainder per adaptive sub-step, relative to `max(1, |x|)`.
    pub tolerance: f64,
    /// The computation fails beyond this many sub-steps.
    pub max_substeps: usize,
    /// Adaptive sub-steps only: how many times the run may be repeated with at least twice as
    /// many sub-steps (kept while some state coordinate's width shrinks by 1% or more).
    pub refinements: usize,
}

impl Default for FlowSettings {
    fn default() -> Self {
        FlowSettings { order: None, substeps: None, tolerance: 1e-12, max_substeps: 100_000, refinements: 4 }
    }
}

impl FlowSettings {
    /// The Taylor order used: given, or from the tolerance.
    pub fn effective_order(&self) -> usize {
        self.order.unwrap_or_else(|| {
            let by_tolerance = (-self.tolerance.max(1e-300).ln() / 2.0).ceil() + 1.0;
            (by_tolerance.max(4.0) as usize).min(30)
        })
    }
}

/// `x(T) - (state x0 + action u + nondet w + offset) ∈ remainder` for every `x0`, `u`, `w` of the
/// boxes, the products and sums taken exactly (each f64 coefficient is the dyadic rational it is).
#[derive(Clone, Debug, PartialEq)]
pub struct LinearEnclosure {
    /// `n x n`: coefficients of the initial state.
    pub state: Vec<Vec<f64>>,
    /// `n x m`: coefficients of the held actions.
    pub action: Vec<Vec<f64>>,
    /// `n x q`: coefficients of the held non-deterministic inputs.
    pub nondet: Vec<Vec<f64>>,
    pub offset: Vec<f64>,
    pub remainder: Vec<Interval>,
}

/// A validated enclosure of every state at the end of the period.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowEnclosure {
    /// A box containing `x(T)` for every initial state and held input of the boxes.
    pub state: Vec<Interval>,
    pub linear: LinearEnclosure,
    /// The Taylor order used.
    pub order: usize,
    /// The number of sub-steps taken.
    pub substeps: usize,
}

type IMatrix = Vec<Vec<Interval>>;

/// `y = center + matrix d + rest` for some `d` in the centred initial box (module doc).
#[derive(Clone, Debug)]
struct AffineSet {
    center: Vec<f64>,
    matrix: IMatrix,
    rest: Vec<Interval>,
}

fn point(x: f64) -> Interval {
    Interval::point(x)
}

/// Sum of interval products `sum a_j b_j`, outward-rounded.
fn dot(a: impl Iterator<Item = Interval>, b: impl Iterator<Item = Interval>) -> Interval {
    a.zip(b).fold(point(0.0), |acc, (x, y)| acc.add(&x.mul(&y)))
}

fn magnitude(x: &Interval) -> f64 {
    x.lo.abs().max(x.hi.abs())
}

/// `x` widened by `e >= 0` on both sides, rounded outward.
fn widen(x: &Interval, e: f64) -> Interval {
    Interval { lo: sub_down(x.lo, e), hi: add_up(x.hi, e) }
}

/// `sum_k coeffs[k] h^k` by Horner's rule.
fn horner(coeffs: impl DoubleEndedIterator<Item = Interval>, h: &Interval) -> Interval {
    coeffs.rev().fold(point(0.0), |acc, c| acc.mul(h).add(&c))
}

impl AffineSet {
    fn hull(&self, d: &[Interval]) -> Vec<Interval> {
        (0..self.center.len())
            .map(|i| {
                point(self.center[i]).add(&dot(self.matrix[i].iter().copied(), d.iter().copied())).add(&self.rest[i])
            })
            .collect()
    }
}

/// One validated sub-step's computation over the compiled right-hand side.
struct Stepper<'a> {
    tape: &'a Tape,
    order: usize,
    /// `Some(tol)`: reject remainders wider than `tol * max(1, |x|)` (adaptive mode).
    tolerance: Option<f64>,
}

impl Stepper<'_> {
    fn plain(values: &[Interval]) -> Vec<Jet> {
        values.iter().map(|v| Jet::constant(*v)).collect()
    }

    /// `f(b)` over a box (the first Taylor coefficient).
    fn rhs(&self, b: &[Interval]) -> Result<Vec<Interval>, String> {
        let s = self.tape.series(&Self::plain(b), 1).map_err(|e| e.to_string())?;
        Ok(s.iter().map(|c| c[1].value).collect())
    }

    /// A box `B` with `x + [0, h] f(B) ⊆ int B` in every state coordinate; returns that image
    /// (itself an enclosure of every solution on `[0, h]`).
    fn apriori(&self, x: &[Interval], h_hi: f64) -> Result<Vec<Interval>, String> {
        let n = self.tape.state_dim();
        let span = Interval::new(0.0, h_hi);
        let image = |b: &[Interval]| -> Result<Vec<Interval>, String> {
            let f = self.rhs(b)?;
            Ok(x.iter().zip(&f).map(|(xi, fi)| xi.add(&span.mul(fi))).collect())
        };
        let inflate = |b: &mut [Interval]| {
            for bi in b.iter_mut().take(n) {
                *bi = widen(bi, 0.1 * bi.width() + 1e-12 * magnitude(bi) + 1e-200);
            }
        };
        let mut b = image(x)?;
        inflate(&mut b);
        for _ in 0..12 {
            let next = image(&b)?;
            if next.iter().any(|v| !v.lo.is_finite() || !v.hi.is_finite()) {
                return Err("the a-priori enclosure is unbounded".into());
            }
            if (0..n).all(|i| next[i].lo > b[i].lo && next[i].hi < b[i].hi) {
                return Ok(next);
            }
            b = b.iter().zip(&next).map(|(a, c)| a.hull(c)).collect();
            inflate(&mut b);
        }
        Err("no a-priori enclosure (Picard iteration did not contract)".into())
    }

    /// The set after a step of `h`, and how much of the tolerance the remainder used (the
    /// largest ratio of its width to the allowed width; 0 without a tolerance).
    fn step(&self, set: &AffineSet, d: &[Interval], h: Interval) -> Result<(AffineSet, f64), String> {
        let (n, dim, p) = (self.tape.state_dim(), self.tape.augmented_dim(), self.order);
        let x = set.hull(d);
        let b = self.apriori(&x, h.hi)?;
        // Lagrange remainder over the a-priori box.
        let over_b = self.tape.series(&Self::plain(&b), p + 1).map_err(|e| e.to_string())?;
        let h_power = (0..=p).fold(point(1.0), |acc, _| acc.mul(&h));
        let remainder: Vec<Interval> = over_b.iter().map(|c| c[p + 1].value.mul(&h_power)).collect();
        let used = match self.tolerance {
            Some(tol) => (0..n).map(|i| remainder[i].width() / (tol * magnitude(&x[i]).max(1.0))).fold(0.0, f64::max),
            None => 0.0,
        };
        if used > 1.0 || used.is_nan() {
            return Err("the truncation remainder exceeds the tolerance".into());
        }
        // The Taylor polynomial at the centre, and its Jacobian over the box.
        let at_center = self.tape.series(&Self::plain(&set.center.iter().map(|&c| point(c)).collect::<Vec<_>>()), p);
        let at_center = at_center.map_err(|e| e.to_string())?;
        let jets: Vec<Jet> = x.iter().enumerate().map(|(i, v)| Jet::variable(*v, i, dim)).collect();
        let over_x = self.tape.series(&jets, p).map_err(|e| e.to_string())?;
        let jacobian: IMatrix =
            (0..dim).map(|i| (0..dim).map(|j| horner(over_x[i].iter().map(|c| c.partial(j)), &h)).collect()).collect();
        let mut next = AffineSet { center: Vec::with_capacity(dim), matrix: Vec::with_capacity(dim), rest: Vec::new() };
        for i in 0..dim {
            let q = horner(at_center[i].iter().map(|c| c.value), &h).add(&remainder[i]);
            let c = q.mid();
            let carried = dot(jacobian[i].iter().copied(), set.rest.iter().copied());
            next.rest.push(q.sub(&point(c)).add(&carried));
            next.center.push(c);
            let row = (0..dim).map(|j| dot(jacobian[i].iter().copied(), set.matrix.iter().map(|r| r[j]))).collect();
            next.matrix.push(row);
        }
        let unbounded = |v: &Interval| !v.lo.is_finite() || !v.hi.is_finite();
        if next.center.iter().any(|c| !c.is_finite())
            || next.rest.iter().chain(next.matrix.iter().flatten()).any(unbounded)
        {
            return Err("the enclosure became unbounded".into());
        }
        Ok((next, used))
    }
}

fn check_box(name: &str, b: &[Interval], len: usize) -> Result<(), FlowError> {
    if b.len() != len {
        return Err(FlowError::Dimension(format!("{} {name} intervals for {len} {name} variables", b.len())));
    }
    if let Some(v) = b.iter().find(|v| !v.is_valid() || !v.lo.is_finite() || !v.hi.is_finite()) {
        return Err(FlowError::Input(format!("the {name} box has the interval {v}: bounded, lo <= hi needed")));
    }
    Ok(())
}

/// A validated enclosure of the flow of `tape` over `period` from `x0` with actions `u` and
/// non-deterministic inputs `w` held (see the module doc).
pub fn enclose(
    tape: &Tape,
    x0: &[Interval],
    u: &[Interval],
    w: &[Interval],
    period: &Rational,
    settings: &FlowSettings,
) -> Result<FlowEnclosure, FlowError> {
    check_box("state", x0, tape.state_dim())?;
    check_box("action", u, tape.action_dim())?;
    check_box("nondet", w, tape.nondet_dim())?;
    if !period.is_positive() {
        return Err(FlowError::Input(format!("the period must be positive, not {period}")));
    }
    if settings.substeps == Some(0) || settings.tolerance.is_nan() || settings.tolerance <= 0.0 {
        return Err(FlowError::Input("sub-steps and tolerance must be positive".into()));
    }
    let y0: Vec<Interval> = x0.iter().chain(u).chain(w).copied().collect();
    let dim = y0.len();
    let center0: Vec<f64> = y0.iter().map(Interval::mid).collect();
    let d: Vec<Interval> = y0.iter().zip(&center0).map(|(y, c)| y.sub(&point(*c))).collect();
    let identity: IMatrix =
        (0..dim).map(|i| (0..dim).map(|j| point(if i == j { 1.0 } else { 0.0 })).collect()).collect();
    let set = AffineSet { center: center0.clone(), matrix: identity, rest: vec![point(0.0); dim] };

    let order = settings.effective_order();
    let stepper = Stepper { tape, order, tolerance: settings.substeps.is_none().then_some(settings.tolerance) };
    let run = |largest: &Rational| integrate(&stepper, &set, &d, period, largest, settings);
    let (set, steps) = match settings.substeps {
        Some(n) => run(&(period / Rational::from_integer(n.into())))?,
        None => {
            let widths = |s: &AffineSet| s.hull(&d)[..tape.state_dim()].iter().map(Interval::width).collect::<Vec<_>>();
            let mut best = run(period)?;
            for _ in 0..settings.refinements {
                let largest = period / Rational::from_integer((2 * best.1).into());
                let Ok(next) = run(&largest) else { break };
                let (old, new) = (widths(&best.0), widths(&next.0));
                if !old.iter().zip(&new).any(|(o, n)| *n <= 0.99 * o) {
                    break;
                }
                best = next;
            }
            best
        }
    };
    Ok(finish(tape, &set, &center0, &d, order, steps))
}

/// The set at the end of the period and the number of sub-steps, with steps at most `largest`.
fn integrate(
    stepper: &Stepper<'_>,
    initial: &AffineSet,
    d: &[Interval],
    period: &Rational,
    largest: &Rational,
    settings: &FlowSettings,
) -> Result<(AffineSet, usize), FlowError> {
    let two = Rational::from_integer(2.into());
    let smallest = period / Rational::from_integer(num_traits::pow(2u64, 40).into());
    let (mut set, mut h, mut remaining, mut steps) = (initial.clone(), largest.clone(), period.clone(), 0usize);
    while !remaining.is_zero() {
        let h_try = if h < remaining { h.clone() } else { remaining.clone() };
        match stepper.step(&set, d, Interval::of_rational(&h_try)) {
            Ok((next, used)) => {
                set = next;
                remaining -= &h_try;
                steps += 1;
                if steps > settings.max_substeps {
                    return Err(FlowError::TooManySteps(settings.max_substeps));
                }
                // The remainder grows like h^(p+1): double only when the doubled step would
                // still pass (otherwise every other attempt would be rejected).
                if used * 2f64.powi(stepper.order as i32 + 1) < 1.0 {
                    let doubled = &h_try * &two;
                    h = if &doubled < largest { doubled } else { largest.clone() };
                }
            }
            Err(reason) => {
                h = h_try / &two;
                if h < smallest {
                    let elapsed = trestle_ir::num::to_f64_nearest(&(period - &remaining));
                    let step = trestle_ir::num::to_f64_nearest(&h);
                    return Err(FlowError::StepFailed { time: elapsed, step, reason });
                }
            }
        }
    }
    Ok((set, steps))
}

/// The box and the linear enclosure of the final set.
fn finish(
    tape: &Tape,
    set: &AffineSet,
    center0: &[f64],
    d: &[Interval],
    order: usize,
    substeps: usize,
) -> FlowEnclosure {
    let (n, m) = (tape.state_dim(), tape.action_dim());
    let state = set.hull(d)[..n].to_vec();
    let mut coefficients = Vec::with_capacity(n);
    let (mut offset, mut remainder) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        let a: Vec<f64> = set.matrix[i].iter().map(Interval::mid).collect();
        let exact_offset =
            point(set.center[i]).sub(&dot(a.iter().map(|&x| point(x)), center0.iter().map(|&c| point(c))));
        let o = exact_offset.mid();
        let spread = dot(set.matrix[i].iter().zip(&a).map(|(mij, aij)| mij.sub(&point(*aij))), d.iter().copied());
        remainder.push(exact_offset.sub(&point(o)).add(&spread).add(&set.rest[i]));
        offset.push(o);
        coefficients.push(a);
    }
    let split = |range: std::ops::Range<usize>| -> Vec<Vec<f64>> {
        coefficients.iter().map(|row| row[range.clone()].to_vec()).collect()
    };
    let linear = LinearEnclosure {
        state: split(0..n),
        action: split(n..n + m),
        nondet: split(n + m..tape.augmented_dim()),
        offset,
        remainder,
    };
    FlowEnclosure { state, linear, order, substeps }
}

impl LinearEnclosure {
    /// The box the linear enclosure gives over boxes of initial states and held inputs
    /// (outward-rounded): never tighter than [`FlowEnclosure::state`] by much, and what a
    /// consumer of the linear form alone can conclude.
    pub fn image(&self, x0: &[Interval], u: &[Interval], w: &[Interval]) -> Vec<Interval> {
        (0..self.offset.len())
            .map(|i| {
                let row = self.state[i].iter().chain(&self.action[i]).chain(&self.nondet[i]).map(|&a| point(a));
                dot(row, x0.iter().chain(u).chain(w).copied()).add(&point(self.offset[i])).add(&self.remainder[i])
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_traits::One;
    use trestle_ir::Expr;
    use trestle_ir::parse::{SimpleScope, parse_expr};

    fn rotation() -> Tape {
        let scope = SimpleScope::with_state(&["x", "y"]);
        let rhs: Vec<Expr> = ["y", "-x"].iter().map(|t| parse_expr(t, &scope).unwrap()).collect();
        Tape::new(&rhs, 0, 0).unwrap()
    }

    #[test]
    fn a_rotation_keeps_its_box_size() {
        // x' = y, y' = -x over a quarter turn: the image of a small box is the rotated box, whose
        // box hull is about the same size (no wrapping: the parametrisation is kept).
        let half_pi = Rational::new(355.into(), 226.into());
        let x0 = [Interval::new(0.99, 1.01), Interval::new(-0.01, 0.01)];
        let e = enclose(&rotation(), &x0, &[], &[], &half_pi, &FlowSettings::default()).unwrap();
        let t = 355.0f64 / 226.0;
        let (c, s) = (t.cos(), t.sin());
        for (x, y) in [(0.99, -0.01), (1.01, 0.01), (0.99, 0.01), (1.01, -0.01)] {
            let (xt, yt) = (c * x + s * y, -s * x + c * y);
            assert!(e.state[0].contains(xt) && e.state[1].contains(yt), "{e:?}");
        }
        assert!(e.state[0].width() < 0.0201 && e.state[1].width() < 0.0201, "{:?}", e.state);
        assert!(e.linear.remainder.iter().all(|r| r.width() < 1e-12), "{:?}", e.linear.remainder);
    }

    #[test]
    fn bad_boxes_and_periods_are_refused() {
        let t = rotation();
        let one = Rational::one();
        let ok = [Interval::point(0.0), Interval::point(1.0)];
        assert!(matches!(
            enclose(&t, &ok[..1], &[], &[], &one, &FlowSettings::default()),
            Err(FlowError::Dimension(_))
        ));
        let unbounded = [Interval::ENTIRE, Interval::point(0.0)];
        assert!(matches!(enclose(&t, &unbounded, &[], &[], &one, &FlowSettings::default()), Err(FlowError::Input(_))));
        assert!(matches!(enclose(&t, &ok, &[], &[], &-one, &FlowSettings::default()), Err(FlowError::Input(_))));
    }
}
