//! Directed rounding without touching the FPU rounding mode.
//!
//! Each operation computes the round-to-nearest result and then uses an error-free transformation
//! (TwoSum, FMA residual) to learn on which side of the exact result it fell, stepping one ulp
//! outward only when needed. Results that are exact (most products with 0.5, sums of equal
//! exponents) stay exact, so stable computations are not blurred by a blanket epsilon.
//!
//! Near the subnormal range the residual may itself round, so there we always step outward.

const TINY: f64 = 1e-290;

#[inline]
fn two_sum_err(a: f64, b: f64, s: f64) -> f64 {
    let bb = s - a;
    (a - (s - bb)) + (b - bb)
}

/// Smallest f64 >= a + b.
#[inline]
pub fn add_up(a: f64, b: f64) -> f64 {
    let s = a + b;
    if !s.is_finite() {
        return if s.is_nan() { f64::INFINITY } else { s };
    }
    // TwoSum is exact everywhere, subnormals included (a sum that lands there is itself exact).
    if two_sum_err(a, b, s) > 0.0 { s.next_up() } else { s }
}

/// Largest f64 <= a + b.
#[inline]
pub fn add_down(a: f64, b: f64) -> f64 {
    let s = a + b;
    if !s.is_finite() {
        return if s.is_nan() { f64::NEG_INFINITY } else { s };
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

/// Smallest f64 >= a * b (with 0 * inf = 0, the interval-arithmetic convention).
#[inline]
pub fn mul_up(a: f64, b: f64) -> f64 {
    if a == 0.0 || b == 0.0 {
        return 0.0;
    }
    let p = a * b;
    if !p.is_finite() {
        return p;
    }
    if p.abs() < TINY {
        return p.next_up();
    }
    if a.mul_add(b, -p) > 0.0 { p.next_up() } else { p }
}

/// Largest f64 <= a * b (with 0 * inf = 0).
#[inline]
pub fn mul_down(a: f64, b: f64) -> f64 {
    if a == 0.0 || b == 0.0 {
        return 0.0;
    }
    let p = a * b;
    if !p.is_finite() {
        return p;
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
    if !q.is_finite() || a == 0.0 {
        return q;
    }
    if q.abs() < TINY {
        return q.next_up();
    }
    // r = a - q*b exactly; the true quotient exceeds q iff r / b > 0.
    let r = (-q).mul_add(b, a);
    if (r > 0.0) == (b > 0.0) && r != 0.0 { q.next_up() } else { q }
}

/// Largest f64 <= a / b (b != 0).
#[inline]
pub fn div_down(a: f64, b: f64) -> f64 {
    let q = a / b;
    if !q.is_finite() || a == 0.0 {
        return q;
    }
    if q.abs() < TINY {
        return q.next_down();
    }
    let r = (-q).mul_add(b, a);
    if (r > 0.0) != (b > 0.0) && r != 0.0 { q.next_down() } else { q }
}

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
}
