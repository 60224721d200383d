//! Transfer rules of the activation at the end of a stage (ReLU, or identity), neuron by neuron.
//!
//! Relaxation of `y = relu(p)` for `p` in `[l, u]`:
//! * `l >= 0`: `y = p` exactly; `u <= 0`: `y = 0` exactly (no epsilon: the intermediate bounds are
//!   rigorous, so the sign is known). Identity neurons are always exact.
//! * `l < 0 < u`: upper `y <= s p + t` with `s = u / (u - l)` rounded up (the denominator rounded down)
//!   and `t = s (-l)` rounded up. The line is above the chord through `(l, 0)` and `(u, u)` at both
//!   ends (`s (u - l) >= u`, and at `l` it is `t + s l >= 0`), so by convexity of ReLU above it on
//!   `[l, u]`. Lower `y >= alpha p` for any `alpha` in `[0, 1]`, exact for every float alpha; CROWN
//!   uses the adaptive choice of auto_LiRPA, `alpha = 1` if `u > -l` else `0`.

use crate::fp::add_up;
use crate::fp::{DotBound, UNIT_ROUNDOFF, mul_up_nonneg, product_error};
use trestle_ir::network::{Activation, Matrix};
use trestle_ir::round::{UNDERFLOW_FLOOR, div_up, mul_up, sub_down};

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Relaxation {
    /// `y = p`: identity activation or a ReLU that is active on the whole box.
    Pass,
    /// `y = 0`: a ReLU inactive on the whole box.
    Zero,
    /// `alpha p <= y <= slope p + intercept`, `|p| <= magnitude`.
    Unstable { slope: f64, intercept: f64, adaptive_alpha: f64, magnitude: f64 },
}

impl Relaxation {
    /// The relaxation of `act(p)` for `p` in `[lo, hi]` (finite, `lo <= hi`).
    pub fn new(activation: Activation, lo: f64, hi: f64) -> Relaxation {
        match activation {
            Activation::Identity => Relaxation::Pass,
            Activation::Relu if lo >= 0.0 => Relaxation::Pass,
            Activation::Relu if hi <= 0.0 => Relaxation::Zero,
            Activation::Relu => {
                let slope = div_up(hi, sub_down(hi, lo)).min(1.0);
                let intercept = mul_up(slope, -lo);
                let adaptive_alpha = if hi > -lo { 1.0 } else { 0.0 };
                Relaxation::Unstable { slope, intercept, adaptive_alpha, magnitude: hi.max(-lo) }
            }
        }
    }
}

/// The relaxations of a stage's block neurons and the sum of the unstable ones' magnitudes (rounded
/// up), which the product-error bound of [`backward_upper`] needs.
#[derive(Clone, Debug)]
pub(crate) struct StageRelaxation {
    pub neurons: Vec<Relaxation>,
    pub unstable_magnitude_sum: f64,
}

impl StageRelaxation {
    pub fn new(activation: Activation, pre_lo: &[f64], pre_hi: &[f64]) -> StageRelaxation {
        let neurons: Vec<Relaxation> =
            pre_lo.iter().zip(pre_hi).map(|(&lo, &hi)| Relaxation::new(activation, lo, hi)).collect();
        let unstable_magnitude_sum = neurons
            .iter()
            .filter_map(|r| match r {
                Relaxation::Unstable { magnitude, .. } => Some(*magnitude),
                _ => None,
            })
            .fold(0.0, add_up);
        StageRelaxation { neurons, unstable_magnitude_sum }
    }

    pub fn unstable_count(&self) -> usize {
        self.neurons.iter().filter(|r| matches!(r, Relaxation::Unstable { .. })).count()
    }
}

/// Interval rule: `act` applied to `[lo, hi]` elementwise (exact).
pub(crate) fn interval(activation: Activation, lo: f64, hi: f64) -> (f64, f64) {
    match activation {
        Activation::Identity => (lo, hi),
        Activation::Relu => (lo.max(0.0), hi.max(0.0)),
    }
}

/// Backward rule for upper bounds. Each row `i` of `lambda` (over the stage output `[act(p); copies]`)
/// satisfies `f_i <= lambda_i . y + c_i`; on return its first `neurons.len()` entries are over `p`
/// instead and `constant` has absorbed the relaxation intercepts and rounding errors, so the same
/// inequality holds with `y` replaced by `[p; copies]`.
///
/// For `lambda_ir >= 0` the upper relaxation is used, otherwise the lower one with slope
/// `alphas[i][r]` (or the adaptive slope when `alphas` is `None`). The new coefficient
/// `d = fl(lambda_ir s)` differs from the exact product by at most `U |d| + UNDERFLOW_FLOOR`, which
/// multiplied by `|p_r| <= magnitude_r` is added to the constant; slopes 0 and 1 are exact and skipped.
pub(crate) fn backward_upper(
    relax: &StageRelaxation,
    alphas: Option<&Matrix>,
    lambda: &mut Matrix,
    constant: &mut [f64],
) {
    let width = lambda.cols;
    for (i, c) in constant.iter_mut().enumerate() {
        let row = &mut lambda.data[i * width..i * width + relax.neurons.len()];
        let alpha_row = alphas.map(|a| a.row(i));
        let mut intercepts = 0.0;
        let mut inexact_abs = 0.0;
        let mut inexact = 0;
        for (r, (l, relaxation)) in row.iter_mut().zip(&relax.neurons).enumerate() {
            match *relaxation {
                Relaxation::Pass => {}
                Relaxation::Zero => *l = 0.0,
                Relaxation::Unstable { slope, intercept, adaptive_alpha, magnitude } => {
                    let (s, t) =
                        if *l >= 0.0 { (slope, intercept) } else { (alpha_row.map_or(adaptive_alpha, |a| a[r]), 0.0) };
                    if t != 0.0 {
                        intercepts = add_up(intercepts, mul_up_nonneg(*l, t));
                    }
                    let d = *l * s;
                    if s != 0.0 && s != 1.0 {
                        inexact_abs += d.abs() * magnitude;
                        inexact += 1;
                    }
                    *l = d;
                }
            }
        }
        let err = product_error(inexact_abs, inexact, relax.unstable_magnitude_sum);
        *c = add_up(*c, add_up(intercepts, err));
    }
}

/// Forward rule: from linear bounds `lo_p(x) <= p <= up_p(x)` (rows over `[x; 1]`) of the block
/// neurons, linear bounds of `act(p)`, in place. An unstable neuron's upper bound becomes
/// `slope up_p(x) + intercept` (slope >= 0), its coefficients rounded to nearest with the error
/// `sum_k (U |fl| + floor) |x_k|` added to its constant; its lower bound is `alpha lo_p(x)` with the
/// adaptive alpha in {0, 1}, exact.
pub(crate) fn forward(relax: &StageRelaxation, x_magnitude: &[f64], lower: &mut Matrix, upper: &mut Matrix) {
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
