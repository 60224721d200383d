//! Linear bounds and their concretisation over a box.

use crate::fp::UNIT_ROUNDOFF;
use crate::fp::{add_down, add_up};
use trestle_ir::network::Matrix;
use trestle_ir::round::{mul_down, mul_up};

/// `x -> a x + c`, `a` with one row per output and one column per input.
#[derive(Clone, Debug, PartialEq)]
pub struct AffineMap {
    pub a: Matrix,
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
    pub lower: AffineMap,
    pub upper: AffineMap,
}

/// `max_{lo <= x <= hi} coeffs . x + constant`, rounded up.
pub(crate) fn upper_over_box(coeffs: &[f64], constant: f64, lo: &[f64], hi: &[f64]) -> f64 {
    coeffs.iter().zip(lo.iter().zip(hi)).fold(constant, |acc, (&a, (&l, &h))| {
        let term = if a >= 0.0 { mul_up(a, h) } else { mul_up(a, l) };
        add_up(acc, term)
    })
}

/// `min_{lo <= x <= hi} coeffs . x + constant`, rounded down.
pub(crate) fn lower_over_box(coeffs: &[f64], constant: f64, lo: &[f64], hi: &[f64]) -> f64 {
    coeffs.iter().zip(lo.iter().zip(hi)).fold(constant, |acc, (&a, (&l, &h))| {
        let term = if a >= 0.0 { mul_down(a, l) } else { mul_down(a, h) };
        add_down(acc, term)
    })
}

/// Adds `extra` (same shape) to upper-bound rows `lambda` over `x`, keeping `f_i <= lambda_i . x + c_i`
/// exact: each sum `fl(a + b)` is off by at most `U |fl(a + b)|` (a sum that underflows is exact), which
/// times `max|x_k|` goes to the constant. Entries that cancel to 0 add no error.
pub(crate) fn add_coefficients(lambda: &mut Matrix, constant: &mut [f64], extra: &Matrix, x_magnitude: &[f64]) {
    let n = lambda.cols;
    for (i, c) in constant.iter_mut().enumerate() {
        let mut err = 0.0;
        for ((a, &b), &m) in lambda.data[i * n..(i + 1) * n].iter_mut().zip(extra.row(i)).zip(x_magnitude) {
            *a += b;
            if *a != 0.0 {
                err = add_up(err, mul_up(mul_up(UNIT_ROUNDOFF, a.abs()), m));
            }
        }
        *c = add_up(*c, err);
    }
}
