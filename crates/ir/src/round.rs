//! Directed rounding without touching the FPU rounding mode.
//!
//! Each operation computes the round-to-nearest result and then uses an error-free transformation
//! (TwoSum, FMA residual) to learn on which side of the exact result it fell, stepping one ulp
//! outward only when needed. Results that are exact (most products with 0.5, sums of equal
//! exponents) stay exact, so stable computations are not blurred by a blanket epsilon.
//!
//! The operations are `trestle_real::directed`'s, the one implementation of the project (the
//! rigorous elementary functions are built on it). An earlier copy here returned -inf as an upper
//! bound of a finite product that overflowed (`mul_up(-1e300, 1e300)`) and quotients of tiny
//! dividends that did not bracket the exact one (`div_up(-3e-310, 1e-300)`): the tests below pin
//! both.

pub use trestle_real::directed::{add_down, add_up, div_down, div_up, mul_down, mul_up, sub_down, sub_up};

/// Upper bound of the rounding error of a floating-point dot product of length n evaluated in any
/// order: |fl(sum) - sum| <= gamma(n) * sum |a_i b_i|, gamma(n) = n u / (1 - n u), u = 2^-53
/// (Higham, Accuracy and Stability of Numerical Algorithms, 3.1). Returned rounded up.
#[inline]
pub fn gamma(n: usize) -> f64 {
    let nu = (n as f64 + 1.0) * f64::EPSILON * 0.5;
    // One extra n for the absolute-sum accumulation and a 2x safety factor on the denominator.
    (nu / (1.0 - 2.0 * nu)).next_up() * 2.0
}

/// Absolute error floor added to every error-bounded dot product to cover underflow of products
/// (each product can lose at most this much when it lands in the subnormal range).
pub const UNDERFLOW_FLOOR: f64 = 1e-300;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::num::rational_from_f64 as q;

    #[test]
    fn directed_ops_bracket_the_exact_result() {
        let samples = [0.1, 0.2, 0.3, 1.0 / 3.0, -0.7, 1e10, 3.0, -2.5e-8, 0.5, 7.0];
        for &a in &samples {
            for &b in &samples {
                let s = q(a) + q(b);
                assert!(q(add_down(a, b)) <= s && s <= q(add_up(a, b)));
                let p = q(a) * q(b);
                assert!(q(mul_down(a, b)) <= p && p <= q(mul_up(a, b)));
                let d = q(a) / q(b);
                assert!(q(div_down(a, b)) <= d && d <= q(div_up(a, b)), "{a}/{b}");
            }
        }
    }

    #[test]
    fn exact_results_are_not_widened() {
        assert_eq!(add_up(0.5, 0.25), 0.75);
        assert_eq!(add_down(0.5, 0.25), 0.75);
        assert_eq!(mul_up(0.5, 3.0), 1.5);
        assert_eq!(div_down(3.0, 2.0), 1.5);
        assert_eq!(mul_up(0.0, f64::INFINITY), 0.0);
    }

    /// Overflow of finite operands bounds the exact (finite) value by the largest finite f64 on
    /// the far side, never by the infinity of the wrong sign.
    #[test]
    fn overflow_keeps_bounds_on_the_right_side() {
        assert_eq!(mul_up(-1e300, 1e300), f64::MIN);
        assert_eq!(add_up(f64::MIN, f64::MIN), f64::MIN);
        assert_eq!(mul_down(1e300, 1e300), f64::MAX);
        assert_eq!(mul_up(1e300, 1e300), f64::INFINITY);
        assert_eq!(mul_down(-1e300, 1e300), f64::NEG_INFINITY);
    }

    /// A tiny dividend's residual underflows: the quotient is bracketed by stepping outward.
    #[test]
    fn tiny_dividends_are_bracketed() {
        for (a, b) in [(-3e-310, 1e-300), (3e-310, 1e-300), (5e-324, 3.0), (-1e-305, 7.0)] {
            let d = q(a) / q(b);
            assert!(q(div_down(a, b)) <= d && d <= q(div_up(a, b)), "{a}/{b}");
            assert!(div_down(a, b) < div_up(a, b), "{a}/{b}: the two ends must differ when inexact");
        }
    }
}
