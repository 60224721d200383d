//! tanh: interval rule and relaxation. The relaxation is the S-shaped one (`s_shaped.rs`, which
//! says why its lines are sound); this file gives tanh's values, slopes and their rigorous
//! enclosures (`trestle-real`: CORE-MATH values widened to cover faithful rounding, and
//! `tanh' = 4E/(1+E)^2`, `E = e^(-2|z|)`, accurate where tanh is close to ±1).

use super::Relaxation;
use super::s_shaped::{self, SShaped};
use trestle_ir::Interval;
use trestle_ir::network::Activation;

pub(super) struct Tanh;

impl SShaped for Tanh {
    const ACTIVATION: Activation = Activation::Tanh;
    const PEAK_SLOPE: f64 = 1.0;

    fn value(z: f64) -> f64 {
        z.tanh()
    }

    fn slope(z: f64) -> f64 {
        let e = (-2.0 * z.abs()).exp();
        4.0 * e / ((1.0 + e) * (1.0 + e))
    }

    /// `tanh'' = -2 tanh tanh'`.
    fn curvature(z: f64) -> f64 {
        -2.0 * z.tanh() * Self::slope(z)
    }

    fn enclose(z: f64) -> Interval {
        Interval::point(z).tanh()
    }

    fn enclose_slope(z: f64) -> Interval {
        let e = trestle_real::point::tanh_derivative(z);
        Interval::new(e.lo, e.hi)
    }

    /// `tanh t = x = sqrt(1 - s)`, so `t = atanh x = ln(1 + x) - ln(s) / 2` (using
    /// `1 - x^2 = s`), without the cancellation of `1 - x` for small `s`.
    fn tangent_point(s: f64) -> f64 {
        let x = (1.0 - s).sqrt();
        (1.0 + x).ln() - 0.5 * s.ln()
    }
}

pub(super) fn relaxation(lo: f64, hi: f64) -> Relaxation {
    s_shaped::relaxation::<Tanh>(lo, hi)
}

/// Interval rule: tanh is increasing, so the rigorous enclosures of both ends
/// ([`Interval::tanh`]).
pub(super) fn interval(lo: f64, hi: f64) -> Interval {
    Interval::new(lo, hi).tanh()
}
