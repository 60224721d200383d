//! ReLU, `y = max(p, 0)`: interval rule, relaxation, and its vectorised backward and forward
//! rules (the hot path of the maze controllers, kept in closed form).
//!
//! Relaxation of `y = relu(p)` for `p` in `[l, u]`:
//! * `l >= 0`: `y = p` exactly; `u <= 0`: `y = 0` exactly (no epsilon: the intermediate bounds are
//!   rigorous, so the sign is known).
//! * `l < 0 < u`: upper `y <= s p + t` with `s = u / (u - l)` rounded up (the denominator rounded down)
//!   and `t = s (-l)` rounded up. The line is above the chord through `(l, 0)` and `(u, u)` at both
//!   ends (`s (u - l) >= u`, and at `l` it is `t + s l >= 0`), so by convexity of ReLU above it on
//!   `[l, u]`. Lower `y >= alpha p` for any `alpha` in `[0, 1]`, exact for every float alpha; CROWN
//!   uses the adaptive choice of auto_LiRPA, `alpha = 1` if `u > -l` else `0`.

use super::{Relaxation, StageRelaxation};
use crate::fp::{DotBound, LANES, UNIT_ROUNDOFF, add_up, product_error};
use trestle_ir::Interval;
use trestle_ir::network::Matrix;
use trestle_ir::round::{UNDERFLOW_FLOOR, div_up, mul_up, sub_down};

/// The relaxation of `relu(p)` for `p` in `[lo, hi]` (module docs).
pub(super) fn relaxation(lo: f64, hi: f64) -> Relaxation {
    if lo >= 0.0 {
        return Relaxation::Pass;
    }
    if hi <= 0.0 {
        return Relaxation::Zero;
    }
    let slope = div_up(hi, sub_down(hi, lo)).min(1.0);
    let intercept = mul_up(slope, -lo);
    let adaptive_alpha = if hi > -lo { 1.0 } else { 0.0 };
    Relaxation::Unstable { slope, intercept, adaptive_alpha, magnitude: hi.max(-lo) }
}

/// Interval rule: exact (`max` with 0 at both ends).
pub(super) fn interval(lo: f64, hi: f64) -> Interval {
    Interval::new(lo, hi).relu()
}

/// A ReLU stage's relaxations as parallel arrays, the form the backward rule's branch-free
/// (vectorised) loop reads.
#[derive(Clone, Debug)]
pub(crate) struct ReluArrays {
    /// Per neuron, the line used for a non-negative coefficient: slope (1 pass, 0 zero), intercept,
    /// and the magnitude its product error scales with (0 where the slope is 0 or 1: exact).
    upper_slope: Vec<f64>,
    upper_intercept: Vec<f64>,
    upper_error_magnitude: Vec<f64>,
    /// The adaptive lower slope used for a negative coefficient (1 pass, 0 zero, 0 or 1 unstable:
    /// always exact).
    lower_slope: Vec<f64>,
}

impl ReluArrays {
    pub fn new(neurons: &[Relaxation]) -> ReluArrays {
        let n = neurons.len();
        let (mut upper_slope, mut upper_intercept) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let (mut upper_error_magnitude, mut lower_slope) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for relaxation in neurons {
            let (s, t, e, a) = match *relaxation {
                Relaxation::Pass => (1.0, 0.0, 0.0, 1.0),
                Relaxation::Zero => (0.0, 0.0, 0.0, 0.0),
                Relaxation::Unstable { slope, intercept, adaptive_alpha, magnitude } => {
                    debug_assert!(adaptive_alpha == 0.0 || adaptive_alpha == 1.0);
                    (slope, intercept, if slope == 0.0 || slope == 1.0 { 0.0 } else { magnitude }, adaptive_alpha)
                }
                Relaxation::Lines(_) => unreachable!("a ReLU neuron has no general lines"),
            };
            upper_slope.push(s);
            upper_intercept.push(t);
            upper_error_magnitude.push(e);
            lower_slope.push(a);
        }
        ReluArrays { upper_slope, upper_intercept, upper_error_magnitude, lower_slope }
    }
}

/// [`super::backward_upper`] for a ReLU stage. For `lambda_ir >= 0` the upper relaxation is used,
/// otherwise the lower one with slope `alphas[i][r]` (or the adaptive slope when `alphas` is
/// `None`). The new coefficient `d = fl(lambda_ir s)` differs from the exact product by at most
/// `U |d| + UNDERFLOW_FLOOR`, which multiplied by `|p_r| <= magnitude_r` is added to the constant;
/// slopes 0 and 1 are exact and carry no error. The intercepts `lambda_ir t_r` (both factors
/// non-negative) are summed in round-to-nearest and bounded above by the a-priori bound of a
/// non-negative dot product of the stage's length.
pub(super) fn backward_upper_relu(
    relax: &StageRelaxation,
    arrays: &ReluArrays,
    alphas: Option<&Matrix>,
    lambda: &mut Matrix,
    constant: &mut [f64],
) {
    let width = lambda.cols;
    let n = relax.neurons.len();
    // Products with a slope outside {0, 1}: at most the unstable neurons (the bound only grows
    // with the count, so the larger count is safe).
    let unstable = relax.inexact;
    for (i, c) in constant.iter_mut().enumerate() {
        let row = &mut lambda.data[i * width..i * width + n];
        let (intercepts, inexact_abs) = match alphas {
            None => adaptive_row(row, arrays),
            Some(a) => alpha_row(row, relax, &a.row(i)[..n]),
        };
        // With no unstable neuron every intercept is 0 exactly (keeps rows that cancel at 0).
        let intercepts = if unstable == 0 { 0.0 } else { relax.sum_bound.nonneg_upper(intercepts) };
        let err = product_error(inexact_abs, unstable, relax.inexact_magnitude_sum);
        *c = add_up(*c, add_up(intercepts, err));
    }
}

/// One row of [`backward_upper_relu`] with the adaptive lower slopes: returns the round-to-nearest sums
/// of the intercepts and of `|d_r| magnitude_r` over the inexact products.
#[inline]
fn adaptive_row(row: &mut [f64], relax: &ReluArrays) -> (f64, f64) {
    #[cfg(target_arch = "x86_64")]
    if crate::fp::avx2() {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { adaptive_row_avx2(row, relax) };
    }
    adaptive_row_tail(row, relax, 0, [[0.0; LANES]; 2])
}

/// [`adaptive_row`] with 4-lane AVX2 registers as the lanes of the portable version (same
/// operations in the same order, the selections by blends).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn adaptive_row_avx2(row: &mut [f64], relax: &ReluArrays) -> (f64, f64) {
    use std::arch::x86_64::*;
    let n = row.len();
    let (slope, intercept) = (&relax.upper_slope[..n], &relax.upper_intercept[..n]);
    let (error_magnitude, lower) = (&relax.upper_error_magnitude[..n], &relax.lower_slope[..n]);
    let body = n / LANES * LANES;
    let (zero, sign) = (_mm256_setzero_pd(), _mm256_set1_pd(-0.0));
    let (mut intercepts, mut inexact_abs) = (_mm256_setzero_pd(), _mm256_setzero_pd());
    for start in (0..body).step_by(LANES) {
        // SAFETY: start + LANES <= body <= the length of every slice.
        unsafe {
            let l = _mm256_loadu_pd(row.as_ptr().add(start));
            // All ones where l >= 0 (the upper line), as `l[k] >= 0.0` in the portable loop.
            let up = _mm256_cmp_pd::<_CMP_GE_OQ>(l, zero);
            let s = _mm256_blendv_pd(
                _mm256_loadu_pd(lower.as_ptr().add(start)),
                _mm256_loadu_pd(slope.as_ptr().add(start)),
                up,
            );
            let t = _mm256_and_pd(_mm256_loadu_pd(intercept.as_ptr().add(start)), up);
            let e = _mm256_and_pd(_mm256_loadu_pd(error_magnitude.as_ptr().add(start)), up);
            let d = _mm256_mul_pd(l, s);
            intercepts = _mm256_add_pd(intercepts, _mm256_mul_pd(l, t));
            inexact_abs = _mm256_add_pd(inexact_abs, _mm256_mul_pd(_mm256_andnot_pd(sign, d), e));
            _mm256_storeu_pd(row.as_mut_ptr().add(start), d);
        }
    }
    let lanes = |v: __m256d| {
        let mut out = [0.0; LANES];
        // SAFETY: `out` holds exactly four f64.
        unsafe { _mm256_storeu_pd(out.as_mut_ptr(), v) };
        out
    };
    adaptive_row_tail(row, relax, body, [lanes(intercepts), lanes(inexact_abs)])
}

/// The portable loop from `start` on, continuing the lane sums `acc`, then the lanes summed
/// pairwise (the AVX2 version ends here too, so both give the same bits).
#[inline(always)]
fn adaptive_row_tail(row: &mut [f64], relax: &ReluArrays, start: usize, acc: [[f64; LANES]; 2]) -> (f64, f64) {
    let [mut intercepts, mut inexact_abs] = acc;
    for k in start..row.len() {
        let lane = if k < row.len() / LANES * LANES { k % LANES } else { 0 };
        let up = row[k] >= 0.0;
        let d = row[k] * if up { relax.upper_slope[k] } else { relax.lower_slope[k] };
        intercepts[lane] += row[k] * if up { relax.upper_intercept[k] } else { 0.0 };
        inexact_abs[lane] += d.abs() * if up { relax.upper_error_magnitude[k] } else { 0.0 };
        row[k] = d;
    }
    (
        (intercepts[0] + intercepts[1]) + (intercepts[2] + intercepts[3]),
        (inexact_abs[0] + inexact_abs[1]) + (inexact_abs[2] + inexact_abs[3]),
    )
}

/// One row of [`backward_upper_relu`] with given lower slopes (alpha-CROWN), as [`adaptive_row`].
fn alpha_row(row: &mut [f64], relax: &StageRelaxation, alpha: &[f64]) -> (f64, f64) {
    let (mut intercepts, mut inexact_abs) = (0.0, 0.0);
    for (r, (l, relaxation)) in row.iter_mut().zip(&relax.neurons).enumerate() {
        match *relaxation {
            Relaxation::Pass => {}
            Relaxation::Zero => *l = 0.0,
            Relaxation::Unstable { slope, intercept, magnitude, .. } => {
                let (s, t) = if *l >= 0.0 { (slope, intercept) } else { (alpha[r].clamp(0.0, 1.0), 0.0) };
                let d = *l * s;
                intercepts += *l * t;
                if s != 0.0 && s != 1.0 {
                    inexact_abs += d.abs() * magnitude;
                }
                *l = d;
            }
            Relaxation::Lines(_) => unreachable!("a ReLU neuron has no general lines"),
        }
    }
    (intercepts, inexact_abs)
}

/// Forward rule: from linear bounds `lo_p(x) <= p <= up_p(x)` (rows over `[x; 1]`) of the block
/// neurons, linear bounds of `act(p)`, in place. An unstable neuron's upper bound becomes
/// `slope up_p(x) + intercept` (slope >= 0), its coefficients rounded to nearest with the error
/// `sum_k (U |fl| + floor) |x_k|` added to its constant; its lower bound is `alpha lo_p(x)` with the
/// adaptive alpha in {0, 1}, exact.
pub(super) fn forward_relu(relax: &StageRelaxation, x_magnitude: &[f64], lower: &mut Matrix, upper: &mut Matrix) {
    let n_in = x_magnitude.len();
    let x_magnitude_sum = x_magnitude.iter().copied().fold(0.0, add_up);
    let dot_bound = DotBound::new(n_in);
    for (r, relaxation) in relax.neurons.iter().enumerate() {
        let lo = &mut lower.data[r * (n_in + 1)..(r + 1) * (n_in + 1)];
        let up = &mut upper.data[r * (n_in + 1)..(r + 1) * (n_in + 1)];
        match *relaxation {
            Relaxation::Pass => {}
            Relaxation::Zero => {
                lo.fill(0.0);
                up.fill(0.0);
            }
            Relaxation::Lines(_) => unreachable!("a ReLU neuron has no general lines"),
            Relaxation::Unstable { slope, intercept, adaptive_alpha, .. } => {
                if adaptive_alpha == 0.0 {
                    lo.fill(0.0);
                }
                let mut abs = 0.0;
                for (u, m) in up[..n_in].iter_mut().zip(x_magnitude) {
                    *u *= slope;
                    abs += u.abs() * m;
                }
                let err = add_up(
                    mul_up(UNIT_ROUNDOFF, dot_bound.nonneg_upper(abs)),
                    mul_up(UNDERFLOW_FLOOR, x_magnitude_sum),
                );
                up[n_in] = add_up(add_up(mul_up(slope, up[n_in]), intercept), err);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::network::Activation;
    use trestle_ir::num::rational_from_f64 as q;

    #[test]
    fn upper_line_is_above_relu_at_both_ends() {
        for &(l, u) in &[(-1.0, 1.0), (-0.1, 3.0), (-1e-9, 1e9), (-3.0, 0.1), (-1.0 / 3.0, 2.0 / 7.0)] {
            let Relaxation::Unstable { slope, intercept, .. } = Relaxation::new(Activation::Relu, l, u) else {
                panic!("[{l}, {u}] is unstable");
            };
            // The line at u is >= u and at l is >= 0, exactly.
            assert!(q(slope) * q(u) + q(intercept) >= q(u), "[{l}, {u}]");
            assert!(q(slope) * q(l) + q(intercept) >= q(0.0), "[{l}, {u}]");
            assert!(slope <= 1.0 && slope > 0.0);
        }
    }

    #[test]
    fn vectorised_backward_row_matches_the_portable_one_bit_for_bit() {
        let lo: Vec<f64> = (0..23).map(|i| ((i as f64) * 0.77).sin() - 0.3).collect();
        let hi: Vec<f64> = lo.iter().enumerate().map(|(i, l)| l + ((i as f64) * 1.3).cos().abs() * 0.9).collect();
        let relax = StageRelaxation::new(Activation::Relu, &lo, &hi);
        let arrays = relax.relu.as_ref().unwrap();
        let row: Vec<f64> = (0..23).map(|i| ((i as f64) * 2.1).cos() * 10f64.powi(i % 5 - 2)).collect();
        for n in [0, 3, 4, 9, 23] {
            let (mut a, mut b) = (row[..n].to_vec(), row[..n].to_vec());
            let dispatched = adaptive_row(&mut a, arrays);
            let portable = adaptive_row_tail(&mut b, arrays, 0, [[0.0; LANES]; 2]);
            assert_eq!(dispatched, portable);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn stable_neurons_are_exact_and_adaptive_slope_follows_the_larger_side() {
        assert_eq!(Relaxation::new(Activation::Relu, 0.0, 2.0), Relaxation::Pass);
        assert_eq!(Relaxation::new(Activation::Relu, -2.0, 0.0), Relaxation::Zero);
        assert_eq!(Relaxation::new(Activation::Identity, -2.0, 1.0), Relaxation::Pass);
        let alpha = |l, u| match Relaxation::new(Activation::Relu, l, u) {
            Relaxation::Unstable { adaptive_alpha, .. } => adaptive_alpha,
            _ => panic!(),
        };
        assert_eq!(alpha(-1.0, 2.0), 1.0);
        assert_eq!(alpha(-2.0, 1.0), 0.0);
        assert_eq!(alpha(-1.0, 1.0), 0.0);
    }
}
