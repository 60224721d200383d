//! Transfer rules of a stage's affine block `p = W z + b` (and its exact copies).
//!
//! All three rules run in round-to-nearest and then add a rigorous bound of their rounding error,
//! see [`crate::fp`]. Errors that land on coefficients of a linear bound are not left there: they
//! are moved to the constant term using a bound on the magnitude of the variable they multiply.

use crate::fp::{DotBound, axpy, dot, dot_abs, dot_abs_radius};
use crate::fp::{add_down, add_up};
use crate::graph::Stage;
use trestle_ir::network::Matrix;
use trestle_ir::round::{UNDERFLOW_FLOOR, mul_up, sub_up};

/// Interval bounds of a stage's block outputs, with the magnitudes the backward rule needs.
#[derive(Clone, Debug)]
pub(crate) struct BlockIntervals {
    pub lo: Vec<f64>,
    pub hi: Vec<f64>,
    /// `magnitude[r] >= sum_j |W_rj| max|z_j| + |b_r|` over the box (so also `>= max |p_r|`).
    pub magnitude: Vec<f64>,
    /// `>= sum_{j < cols} max|z_j| + 1`, for the underflow part of error bounds.
    pub input_magnitude_sum: f64,
}

/// Interval rule in midpoint-radius form: with `z` in `[c - r, c + r]` (`c` the rounded midpoint, `r`
/// rounded up so the ball covers the box), `p` lies in `fl(W c + b) +- (|W| r + err)` where
/// `err >= |fl(W c + b) - (W c + b)|` is the dot-product error bound of length `cols + 1`, and the
/// radius `|W| r` is bounded above from its floating-point value. The same pass yields
/// `sum |W| (|c| + r) + |b|`, the magnitude bound used by the backward rule.
pub(crate) fn interval(stage: &Stage<'_>, in_lo: &[f64], in_hi: &[f64]) -> BlockIntervals {
    let cols = stage.cols();
    let mut mid = Vec::with_capacity(cols);
    let mut mid_abs = Vec::with_capacity(cols);
    let mut radius = Vec::with_capacity(cols);
    let mut input_magnitude_sum = 1.0;
    for (&lo, &hi) in in_lo[..cols].iter().zip(&in_hi[..cols]) {
        let c = (0.5 * lo + 0.5 * hi).clamp(lo, hi);
        let r = sub_up(hi, c).max(sub_up(c, lo));
        mid.push(c);
        mid_abs.push(c.abs());
        radius.push(r);
        input_magnitude_sum = add_up(input_magnitude_sum, add_up(c.abs(), r));
    }
    let rows = stage.rows();
    let mut out = BlockIntervals {
        lo: Vec::with_capacity(rows),
        hi: Vec::with_capacity(rows),
        magnitude: Vec::with_capacity(rows),
        input_magnitude_sum,
    };
    let (products, with_bias) = (DotBound::new(cols), DotBound::new(cols + 1));
    for (r, &b) in stage.bias.iter().enumerate() {
        let (s, abs_mid, rad) = dot_abs_radius(stage.weights.row(r), &mid, &mid_abs, &radius);
        let centre = s + b;
        let (abs_mid, rad) = (products.nonneg_upper(abs_mid), products.nonneg_upper(rad));
        let err = with_bias.error(add_up(abs_mid, b.abs()));
        let half_width = add_up(rad, err);
        out.lo.push(add_down(centre, -half_width));
        out.hi.push(add_up(centre, half_width));
        out.magnitude.push(add_up(add_up(abs_mid, rad), b.abs()));
    }
    out
}

/// Backward rule for upper bounds: each row `i` of `d` (over the stage's `[p; copies]`) satisfies
/// `f_i <= d_i . [p; copies] + c_i`. Returns `lambda` over the stage input `z` with
/// `f_i <= lambda_i . z + c_i'`, where `c_i'` adds `fl(d_i . b)` and the error bound
///
/// `gamma(n) (sum_r |d_ir| magnitude_r + sum_{shared copies} |d_ik| max|z_src|) + n floor input_magnitude_sum`,
///
/// `n = rows + copies + 1`: each `lambda_ij` is a dot product of length at most `n` whose exact value
/// differs from the computed one by at most `gamma(n) sum |terms| + n floor`, and multiplying by
/// `|z_j| <= max|z_j|` and summing over `j` gives the first part (the `|b|` in `magnitude` covers
/// `fl(d_i . b)`). A copy into a column nothing else reads is exact and needs no term.
pub(crate) fn backward_upper(
    stage: &Stage<'_>,
    block: &BlockIntervals,
    input_magnitude: &[f64],
    d: &Matrix,
    constant: &mut [f64],
) -> Matrix {
    let (rows, cols, n_z) = (stage.rows(), stage.cols(), stage.input_dim);
    let n = rows + stage.copies.len() + 1;
    let dot_bound = DotBound::new(n);
    let floor_term = mul_up(mul_up(n as f64, UNDERFLOW_FLOOR), block.input_magnitude_sum);
    let mut lambda = Matrix::new(d.rows, n_z, vec![0.0; d.rows * n_z]);
    for (i, c) in constant.iter_mut().enumerate() {
        let d_row = d.row(i);
        let out = &mut lambda.data[i * n_z..(i + 1) * n_z];
        let (bias_sum, mut abs_sum) = match &stage.columns {
            Some(columns) => {
                for (j, o) in out[..cols].iter_mut().enumerate() {
                    *o = dot(&d_row[..rows], columns.row(j));
                }
                (dot(&d_row[..rows], &stage.bias), dot_abs(&d_row[..rows], &block.magnitude))
            }
            None => {
                let (mut bias_sum, mut abs_sum) = (0.0, 0.0);
                for (r, &dr) in d_row[..rows].iter().enumerate() {
                    if dr == 0.0 {
                        continue;
                    }
                    axpy(dr, stage.weights.row(r), &mut out[..cols]);
                    bias_sum += dr * stage.bias[r];
                    abs_sum += dr.abs() * block.magnitude[r];
                }
                (bias_sum, abs_sum)
            }
        };
        for (k, &src) in stage.copies.iter().enumerate() {
            let dv = d_row[rows + k];
            out[src] += dv;
            if stage.shared_copy[k] {
                abs_sum += dv.abs() * input_magnitude[src];
            }
        }
        let err = add_up(dot_bound.error(abs_sum), floor_term);
        *c = add_up(add_up(*c, bias_sum), err);
    }
    lambda
}

/// Linear bounds `lower_j(x) <= z_j <= upper_j(x)` of a vector over the graph input, as rows over
/// `[x; 1]`, with `magnitude[j] >= max over both rows of sum_k |coef_jk| max|x_k| + |const_j|`.
#[derive(Clone, Debug)]
pub(crate) struct LinearFns {
    pub lower: Matrix,
    pub upper: Matrix,
    pub magnitude: Vec<f64>,
}

impl LinearFns {
    pub fn identity(x_magnitude: &[f64]) -> LinearFns {
        let n = x_magnitude.len();
        let mut m = Matrix::new(n, n + 1, vec![0.0; n * (n + 1)]);
        for k in 0..n {
            m.data[k * (n + 1) + k] = 1.0;
        }
        LinearFns { lower: m.clone(), upper: m, magnitude: x_magnitude.to_vec() }
    }

    /// Recomputes `magnitude` from the rows.
    pub fn with_magnitudes(lower: Matrix, upper: Matrix, x_magnitude: &[f64]) -> LinearFns {
        let n_in = x_magnitude.len();
        let row_magnitude = |row: &[f64]| {
            row[..n_in].iter().zip(x_magnitude).fold(row[n_in].abs(), |acc, (a, m)| add_up(acc, mul_up(a.abs(), *m)))
        };
        let magnitude = (0..lower.rows).map(|j| row_magnitude(lower.row(j)).max(row_magnitude(upper.row(j)))).collect();
        LinearFns { lower, upper, magnitude }
    }
}

/// Forward rule: linear bounds of `p = W z[..cols] + b` from those of `z`. The upper row of `p_r` is
/// `sum_j W_rj (upper_j if W_rj >= 0 else lower_j) + b_r`, the lower row symmetrically. Every entry is
/// a dot product of length `cols + 1`, off by at most `gamma sum_j |W_rj| |row_jk| + n floor`; weighted
/// by `max|x_k|` (and 1 for the constant) and summed, that is at most
/// `gamma(n) (sum_j |W_rj| magnitude_j + |b_r|) + n floor (sum_k max|x_k| + 1)`, moved to the constant.
pub(crate) fn forward(weights: &Matrix, bias: &[f64], z: &LinearFns, x_magnitude_sum: f64) -> (Matrix, Matrix) {
    let width = z.lower.cols;
    let (rows, n) = (weights.rows, weights.cols + 1);
    let mut lower = Matrix::new(rows, width, vec![0.0; rows * width]);
    let mut upper = Matrix::new(rows, width, vec![0.0; rows * width]);
    let floor_term = mul_up(mul_up(n as f64, UNDERFLOW_FLOOR), add_up(x_magnitude_sum, 1.0));
    let dot_bound = DotBound::new(n);
    for (r, &b) in bias.iter().enumerate() {
        let lo = &mut lower.data[r * width..(r + 1) * width];
        let up = &mut upper.data[r * width..(r + 1) * width];
        lo[width - 1] = b;
        up[width - 1] = b;
        let mut abs_sum = b.abs();
        for (j, &w) in weights.row(r).iter().enumerate() {
            if w == 0.0 {
                continue;
            }
            let (for_upper, for_lower) =
                if w > 0.0 { (z.upper.row(j), z.lower.row(j)) } else { (z.lower.row(j), z.upper.row(j)) };
            // Rows are as short as the input dimension (plus one): a plain loop beats a kernel call.
            for ((u, l), (fu, fl)) in up.iter_mut().zip(lo.iter_mut()).zip(for_upper.iter().zip(for_lower)) {
                *u += w * fu;
                *l += w * fl;
            }
            abs_sum += w.abs() * z.magnitude[j];
        }
        let err = add_up(dot_bound.error(abs_sum), floor_term);
        up[width - 1] = add_up(up[width - 1], err);
        lo[width - 1] = add_down(lo[width - 1], -err);
    }
    (lower, upper)
}
