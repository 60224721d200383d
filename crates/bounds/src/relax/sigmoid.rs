//! The logistic sigmoid `1 / (1 + e^-z)`: interval rule and relaxation. The relaxation is the
//! S-shaped one (`s_shaped.rs`, which says why its lines are sound; the sigmoid is increasing,
//! convex below 0 and concave above, with the even derivative `s (1 - s)`); this file gives its
//! values, slopes and their rigorous enclosures (`trestle-real`: computed from an enclosure of
//! `e^-|z|`, each end rounded outward; `sigmoid' = E/(1+E)^2`, `E = e^(-|z|)`).

use super::Relaxation;
use super::s_shaped::{self, SShaped};
use trestle_ir::Interval;
use trestle_ir::network::Activation;

pub(super) struct Sigmoid;

impl SShaped for Sigmoid {
    const ACTIVATION: Activation = Activation::Sigmoid;
    const PEAK_SLOPE: f64 = 0.25;

    fn value(z: f64) -> f64 {
        Activation::Sigmoid.apply_f64(z)
    }

    fn slope(z: f64) -> f64 {
        let e = (-z.abs()).exp();
        e / ((1.0 + e) * (1.0 + e))
    }

    /// `sigma'' = sigma' (1 - 2 sigma)`.
    fn curvature(z: f64) -> f64 {
        Self::slope(z) * (1.0 - 2.0 * Self::value(z))
    }

    fn enclose(z: f64) -> Interval {
        Interval::point(z).sigmoid()
    }

    fn enclose_slope(z: f64) -> Interval {
        let e = trestle_real::point::sigmoid_derivative(z);
        Interval::new(e.lo, e.hi)
    }

    /// `sigma(t) (1 - sigma(t)) = s` with `sigma(t) = (1 + r) / 2`, `r = sqrt(1 - 4s)`, and
    /// `1 - sigma(t) = 2s / (1 + r)`, so `t = ln(sigma / (1 - sigma)) = 2 ln(1 + r) - ln(4s)`.
    fn tangent_point(s: f64) -> f64 {
        let r = (1.0 - 4.0 * s).sqrt();
        2.0 * (1.0 + r).ln() - (4.0 * s).ln()
    }
}

pub(super) fn relaxation(lo: f64, hi: f64) -> Relaxation {
    s_shaped::relaxation::<Sigmoid>(lo, hi)
}

/// Interval rule: the sigmoid is increasing, so the rigorous enclosures of both ends
/// ([`Interval::sigmoid`]).
pub(super) fn interval(lo: f64, hi: f64) -> Interval {
    Interval::new(lo, hi).sigmoid()
}
