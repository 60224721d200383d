//! Linear bounds: the one type for "an affine function of the inputs bounds this quantity from
//! below / above", whoever computed it (CROWN and friends in the bounds crate) and whoever relies
//! on it (the postconditions the environment checks take, certificates).

use crate::network::Matrix;
use crate::round::{add_down, add_up, mul_down, mul_up};

/// `x -> a x + c`, `a` with one row per output and one column per input. Every f64 stands for
/// its exact rational value.
#[derive(Clone, Debug, PartialEq)]
pub struct AffineMap {
    /// The coefficients: one row per output, one column per input.
    pub a: Matrix,
    /// The constant terms, one per output.
    pub c: Vec<f64>,
}

impl AffineMap {
    /// Largest value of row `i` over the box, rounded up.
    pub fn max_over(&self, i: usize, lo: &[f64], hi: &[f64]) -> f64 {
        upper_over_box(self.a.row(i), self.c[i], lo, hi)
    }

    /// Smallest value of row `i` over the box, rounded down.
    pub fn min_over(&self, i: usize, lo: &[f64], hi: &[f64]) -> f64 {
        lower_over_box(self.a.row(i), self.c[i], lo, hi)
    }
}

/// `lower.a x + lower.c <= f(x) <= upper.a x + upper.c` for every `x` in the box they were computed
/// on, as exact statements about the f64 values stored (no tolerance).
#[derive(Clone, Debug, PartialEq)]
pub struct LinearBounds {
    /// Lower bound of every output: `lower.a x + lower.c <= f(x)`.
    pub lower: AffineMap,
    /// Upper bound of every output: `f(x) <= upper.a x + upper.c`.
    pub upper: AffineMap,
}

/// `max_{lo <= x <= hi} coeffs . x + constant`, rounded up.
pub fn upper_over_box(coeffs: &[f64], constant: f64, lo: &[f64], hi: &[f64]) -> f64 {
    coeffs.iter().zip(lo.iter().zip(hi)).fold(constant, |acc, (&a, (&l, &h))| {
        let term = if a >= 0.0 { mul_up(a, h) } else { mul_up(a, l) };
        add_up(acc, term)
    })
}

/// `min_{lo <= x <= hi} coeffs . x + constant`, rounded down.
pub fn lower_over_box(coeffs: &[f64], constant: f64, lo: &[f64], hi: &[f64]) -> f64 {
    coeffs.iter().zip(lo.iter().zip(hi)).fold(constant, |acc, (&a, (&l, &h))| {
        let term = if a >= 0.0 { mul_down(a, l) } else { mul_down(a, h) };
        add_down(acc, term)
    })
}
