//! The backward rule of a stage of general lines (tanh, sigmoid, leaky ReLU, clip) with CROWN's
//! own lines, over arrays: the profile of CROWN on the ARCH-COMP tanh controllers put about half
//! of the time in [`super::backward_upper`]'s per-neuron loop (a 96-byte enum read and a branch
//! per coefficient), against a few percent for the relaxations themselves. The arrays hold the
//! same numbers as the enum, read as ReLU's rule reads its own (`relu.rs`): the line by the sign
//! of the coefficient, selected without a branch, and the sums in four lanes so that they do not
//! wait on one another.
//!
//! The rounding argument is [`super::backward_upper`]'s, unchanged: the products are the same
//! round-to-nearest products, the error bound of the intercepts' sum (`DotBound::error`, the
//! a-priori bound of a dot product of the stage's length) holds for any order of summation, and
//! the product errors are bounded from the same round-to-nearest sum of `|d_r| magnitude_r`.

use super::Relaxation;
use crate::fp::LANES;

/// Per neuron, each side's line (`Pass`: slope 1, `Zero`: slope 0, intercepts 0), and the
/// magnitude its product error scales with (0 where the slope is 0 or 1: the product is exact).
#[derive(Clone, Debug)]
pub(crate) struct LinesArrays {
    upper_slope: Vec<f64>,
    upper_intercept: Vec<f64>,
    upper_error_magnitude: Vec<f64>,
    lower_slope: Vec<f64>,
    lower_intercept: Vec<f64>,
    lower_error_magnitude: Vec<f64>,
}

impl LinesArrays {
    pub fn new(neurons: &[Relaxation]) -> LinesArrays {
        let n = neurons.len();
        let mut a = LinesArrays {
            upper_slope: Vec::with_capacity(n),
            upper_intercept: Vec::with_capacity(n),
            upper_error_magnitude: Vec::with_capacity(n),
            lower_slope: Vec::with_capacity(n),
            lower_intercept: Vec::with_capacity(n),
            lower_error_magnitude: Vec::with_capacity(n),
        };
        let error_magnitude = |slope: f64, magnitude: f64| if slope == 0.0 || slope == 1.0 { 0.0 } else { magnitude };
        for relaxation in neurons {
            let ((us, ut, ue), (ls, lt, le)) = match *relaxation {
                Relaxation::Pass => ((1.0, 0.0, 0.0), (1.0, 0.0, 0.0)),
                Relaxation::Zero => ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
                Relaxation::Unstable { .. } => unreachable!("ReLU neurons only in ReLU stages"),
                Relaxation::Lines(l) => (
                    (l.upper.slope, l.upper.intercept, error_magnitude(l.upper.slope, l.magnitude)),
                    (l.lower.slope, l.lower.intercept, error_magnitude(l.lower.slope, l.magnitude)),
                ),
            };
            a.upper_slope.push(us);
            a.upper_intercept.push(ut);
            a.upper_error_magnitude.push(ue);
            a.lower_slope.push(ls);
            a.lower_intercept.push(lt);
            a.lower_error_magnitude.push(le);
        }
        a
    }

    /// One row of the backward rule: each coefficient `l_r` replaced by `fl(l_r s_r)` (the upper
    /// line's slope for `l_r >= 0`, the lower one's otherwise; a `Zero` neuron's coefficient
    /// becomes 0, not `l_r * 0`, as in the enum rule); returns the round-to-nearest sums of the
    /// products `l_r t_r`, of their absolute values, and of `|d_r| magnitude_r` over the inexact
    /// products.
    pub fn row(&self, row: &mut [f64]) -> (f64, f64, f64) {
        let n = row.len();
        let body = n / LANES * LANES;
        let (mut intercepts, mut intercepts_abs, mut inexact_abs) = ([0.0; LANES], [0.0; LANES], [0.0; LANES]);
        let mut step = |k: usize, lane: usize| {
            let l = row[k];
            let up = l >= 0.0;
            let (s, t, e) = if up {
                (self.upper_slope[k], self.upper_intercept[k], self.upper_error_magnitude[k])
            } else {
                (self.lower_slope[k], self.lower_intercept[k], self.lower_error_magnitude[k])
            };
            let d = if s == 0.0 { 0.0 } else { l * s };
            let p = l * t;
            intercepts[lane] += p;
            intercepts_abs[lane] += p.abs();
            inexact_abs[lane] += d.abs() * e;
            row[k] = d;
        };
        for start in (0..body).step_by(LANES) {
            for lane in 0..LANES {
                step(start + lane, lane);
            }
        }
        for k in body..n {
            step(k, 0);
        }
        let total = |v: [f64; LANES]| (v[0] + v[1]) + (v[2] + v[3]);
        (total(intercepts), total(intercepts_abs), total(inexact_abs))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Relaxation, Side};
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use trestle_ir::network::Activation;

    /// The arrays give every coefficient the enum's line (the same products, bit for bit) and
    /// the same sums up to their order of summation.
    #[test]
    fn rows_match_the_per_neuron_rule() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let activations = [
            Activation::Tanh,
            Activation::Sigmoid,
            Activation::LeakyRelu { alpha: 0.1 },
            Activation::Clip { lo: -1.0, hi: 1.0 },
        ];
        for trial in 0..200 {
            let act = activations[trial % activations.len()];
            let n = rng.random_range(1..40);
            let neurons: Vec<Relaxation> = (0..n)
                .map(|_| {
                    let c: f64 = rng.random_range(-6.0..6.0);
                    let r = [0.0, 1e-6, 0.5, 3.0][rng.random_range(0..4)];
                    Relaxation::new(act, c - r, c + r)
                })
                .collect();
            let arrays = LinesArrays::new(&neurons);
            let mut row: Vec<f64> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
            let before = row.clone();
            let (intercepts, intercepts_abs, inexact_abs) = arrays.row(&mut row);
            let (mut want, mut want_abs, mut want_inexact) = (0.0, 0.0, 0.0);
            for (r, (l, relaxation)) in before.iter().zip(&neurons).enumerate() {
                let (s, t, m) = match *relaxation {
                    Relaxation::Pass => (1.0, 0.0, 0.0),
                    Relaxation::Zero => (0.0, 0.0, 0.0),
                    Relaxation::Lines(lines) => {
                        let line = lines.line(act, if *l >= 0.0 { Side::Upper } else { Side::Lower }, None);
                        let m = if line.slope == 0.0 || line.slope == 1.0 { 0.0 } else { lines.magnitude };
                        (line.slope, line.intercept, m)
                    }
                    Relaxation::Unstable { .. } => unreachable!(),
                };
                let d = if s == 0.0 { 0.0 } else { l * s };
                assert_eq!(row[r].to_bits(), d.to_bits(), "{act} trial {trial} neuron {r}");
                want += l * t;
                want_abs += (l * t).abs();
                want_inexact += d.abs() * m;
            }
            let close = |a: f64, b: f64, scale: f64| (a - b).abs() <= 1e-13 * (1.0 + scale);
            assert!(close(intercepts, want, want_abs), "{act} trial {trial}: {intercepts} {want}");
            assert!(close(intercepts_abs, want_abs, want_abs) && close(inexact_abs, want_inexact, want_inexact));
        }
    }
}
