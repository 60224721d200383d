//! Directed rounding of the basic f64 operations, without touching the FPU rounding mode.
//!
//! Each operation computes the round-to-nearest result and learns from an error-free
//! transformation (TwoSum, the FMA residual) on which side of the exact result it fell, stepping
//! one ulp outward only when needed, so exact results stay exact. Near the subnormal range, where
//! the residual may itself round, it always steps outward. This is the scheme of
//! `trestle_ir::round`, repeated here because this crate depends on nothing of the project (the IR
//! depends on it); the two are tested against exact rationals separately.

/// Below this magnitude a product's or quotient's FMA residual may underflow: step outward.
const TINY: f64 = 1e-290;

/// Below this magnitude of the dividend the residual `a - q b` (about `|a| 2^-52` at most) may
/// underflow: step outward.
const TINY_DIVIDEND: f64 = 1e-270;

#[inline]
fn two_sum_err(a: f64, b: f64, s: f64) -> f64 {
    let bb = s - a;
    (a - (s - bb)) + (b - bb)
}

/// An upward-rounded result that is not finite: a NaN (inf - inf) bounds nothing, so +inf; an
/// overflow of finite operands to -inf becomes f64::MIN, the smallest f64 above the exact value.
#[inline]
fn overflow_up(r: f64, finite_operands: bool) -> f64 {
    if r.is_nan() || r == f64::INFINITY {
        f64::INFINITY
    } else if finite_operands {
        f64::MIN
    } else {
        r
    }
}

/// The mirror of [`overflow_up`] for downward-rounded results.
#[inline]
fn overflow_down(r: f64, finite_operands: bool) -> f64 {
    -overflow_up(-r, finite_operands)
}

/// Smallest f64 >= a + b.
#[inline]
pub fn add_up(a: f64, b: f64) -> f64 {
    let s = a + b;
    if !s.is_finite() {
        return overflow_up(s, a.is_finite() && b.is_finite());
    }
    if two_sum_err(a, b, s) > 0.0 { s.next_up() } else { s }
}

/// Largest f64 <= a + b.
#[inline]
pub fn add_down(a: f64, b: f64) -> f64 {
    let s = a + b;
    if !s.is_finite() {
        return overflow_down(s, a.is_finite() && b.is_finite());
    }
    if two_sum_err(a, b, s) < 0.0 { s.next_down() } else { s }
}

#[inline]
pub fn sub_up(a: f64, b: f64) -> f64 {
    add_up(a, -b)
}

#[inline]
pub fn sub_down(a: f64, b: f64) -> f64 {
    add_down(a, -b)
}

/// Smallest f64 >= a * b (0 * inf = 0, the interval convention).
#[inline]
pub fn mul_up(a: f64, b: f64) -> f64 {
    if a == 0.0 || b == 0.0 {
        return 0.0;
    }
    let p = a * b;
    if !p.is_finite() {
        return overflow_up(p, a.is_finite() && b.is_finite());
    }
    if p.abs() < TINY {
        return p.next_up();
    }
    if a.mul_add(b, -p) > 0.0 { p.next_up() } else { p }
}

/// Largest f64 <= a * b (0 * inf = 0).
#[inline]
pub fn mul_down(a: f64, b: f64) -> f64 {
    if a == 0.0 || b == 0.0 {
        return 0.0;
    }
    let p = a * b;
    if !p.is_finite() {
        return overflow_down(p, a.is_finite() && b.is_finite());
    }
    if p.abs() < TINY {
        return p.next_down();
    }
    if a.mul_add(b, -p) < 0.0 { p.next_down() } else { p }
}

/// Smallest f64 >= a / b (b != 0).
#[inline]
pub fn div_up(a: f64, b: f64) -> f64 {
    let q = a / b;
    if a == 0.0 {
        return q;
    }
    if !q.is_finite() {
        return overflow_up(q, a.is_finite() && b != 0.0);
    }
    if q.abs() < TINY || a.abs() < TINY_DIVIDEND {
        return q.next_up();
    }
    // r = a - q*b exactly; the exact quotient exceeds q iff r / b > 0.
    let r = (-q).mul_add(b, a);
    if r != 0.0 && (r > 0.0) == (b > 0.0) { q.next_up() } else { q }
}

/// Largest f64 <= a / b (b != 0).
#[inline]
pub fn div_down(a: f64, b: f64) -> f64 {
    let q = a / b;
    if a == 0.0 {
        return q;
    }
    if !q.is_finite() {
        return overflow_down(q, a.is_finite() && b != 0.0);
    }
    if q.abs() < TINY || a.abs() < TINY_DIVIDEND {
        return q.next_down();
    }
    let r = (-q).mul_add(b, a);
    if r != 0.0 && (r > 0.0) != (b > 0.0) { q.next_down() } else { q }
}

/// `[largest f64 <= sqrt(x), smallest f64 >= sqrt(x)]` for `x >= 0` (IEEE sqrt is correctly
/// rounded to nearest; the FMA residual `y*y - x` says on which side the exact root lies).
#[inline]
pub fn sqrt_bounds(x: f64) -> (f64, f64) {
    let y = x.sqrt();
    if !y.is_finite() || y == 0.0 {
        return (y, y);
    }
    if x < TINY {
        // The residual may underflow: take the root of x 2^200 (exact) and scale it by 2^-100
        // (exact: the root of a positive f64 is above 1e-162, far from the subnormal range).
        const UP: f64 = 1.6069380442589903e60; // 2^200
        const DOWN: f64 = 7.888609052210118e-31; // 2^-100
        let (lo, hi) = sqrt_bounds(x * UP);
        return (lo * DOWN, hi * DOWN);
    }
    let r = y.mul_add(y, -x);
    if r > 0.0 {
        (y.next_down(), y)
    } else if r < 0.0 {
        (y, y.next_up())
    } else {
        (y, y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rug::{Float, Rational};

    fn q(x: f64) -> Rational {
        Rational::from_f64(x).unwrap()
    }

    #[test]
    fn directed_ops_bracket_the_exact_result() {
        let samples = [0.1, 0.2, 0.3, 1.0 / 3.0, -0.7, 1e10, 3.0, -2.5e-8, 0.5, 7.0, 1e-300, -3e-310, 1e300];
        for &a in &samples {
            for &b in &samples {
                let s = q(a) + q(b);
                assert!(q(add_down(a, b)) <= s && s <= q(add_up(a, b)), "{a}+{b}");
                let p = q(a) * q(b);
                let (lo, hi) = (mul_down(a, b), mul_up(a, b));
                assert!((!lo.is_finite() || q(lo) <= p) && (!hi.is_finite() || p <= q(hi)), "{a}*{b}");
                let d = q(a) / q(b);
                let (lo, hi) = (div_down(a, b), div_up(a, b));
                assert!((!lo.is_finite() || q(lo) <= d) && (!hi.is_finite() || d <= q(hi)), "{a}/{b}");
            }
        }
    }

    #[test]
    fn overflowing_lower_bounds_stay_finite() {
        assert_eq!(mul_down(1e300, 1e300), f64::MAX);
        assert_eq!(mul_up(1e300, 1e300), f64::INFINITY);
        assert_eq!(div_down(1e300, 1e-300), f64::MAX);
        assert_eq!(div_up(-1e300, 1e-300), f64::MIN);
        assert_eq!(mul_up(-1e300, 1e300), f64::MIN);
        assert_eq!(add_up(f64::MIN, f64::MIN), f64::MIN);
        assert_eq!(add_down(f64::MAX, f64::MAX), f64::MAX);
        assert_eq!(mul_down(f64::INFINITY, 2.0), f64::INFINITY);
        assert_eq!(mul_up(f64::NEG_INFINITY, 2.0), f64::NEG_INFINITY);
    }

    #[test]
    fn exact_results_are_not_widened() {
        assert_eq!(add_up(0.5, 0.25), 0.75);
        assert_eq!(add_down(0.5, 0.25), 0.75);
        assert_eq!(mul_up(0.5, 3.0), 1.5);
        assert_eq!(div_down(3.0, 2.0), 1.5);
        assert_eq!(sqrt_bounds(2.25), (1.5, 1.5));
    }

    #[test]
    fn square_roots_are_bracketed() {
        assert_eq!(2f64.powi(200), 1.6069380442589903e60);
        assert_eq!(2f64.powi(-100), 7.888609052210118e-31);
        assert_eq!(sqrt_bounds(2f64.powi(-1074)), (2f64.powi(-537), 2f64.powi(-537)));
        for x in [2.0, 3.0, 0.1, 1e-300, 5e-324, 1e300, f64::MAX, 7.5e-310] {
            let (lo, hi) = sqrt_bounds(x);
            let exact = Float::with_val(400, x).sqrt();
            assert!(Float::with_val(400, lo) <= exact && exact <= Float::with_val(400, hi), "sqrt {x}");
            assert!(hi <= lo.next_up(), "sqrt {x} wider than one ulp: [{lo}, {hi}]");
        }
    }
}
