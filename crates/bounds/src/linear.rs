//! Linear bounds (the IR's one type, `trestle_ir::linear`) and the bookkeeping that keeps them exact.

use crate::fp::UNIT_ROUNDOFF;
use crate::fp::add_up;
use trestle_ir::network::Matrix;
use trestle_ir::round::mul_up;

pub use trestle_ir::linear::{AffineMap, LinearBounds, lower_over_box, upper_over_box};

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
