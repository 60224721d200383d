//! Clip (hardtanh, ReLU6), `y = min(max(p, c_lo), c_hi)` with one or both bounds finite:
//! interval rule and relaxation.
//!
//! Stability cases, each exact in reals: `u <= c_lo` gives the constant `c_lo`, `l >= c_hi` the
//! constant `c_hi`, `c_lo <= l` and `u <= c_hi` the identity. Otherwise the box crosses one kink
//! or both, and the lines are chosen among the candidate slopes of
//! [`super::piecewise_relaxation`] (0, 1, the secants between `l`, the kinks inside and `u`):
//! * across `c_lo` only (`max(p, c_lo)`, convex): the chord above, below the flat line or the
//!   identity, whichever side of the kink is longer (ReLU's triangle moved to `(c_lo, c_lo)`);
//! * across `c_hi` only (`min(p, c_hi)`, concave): the chord below, above the flat line or the
//!   identity;
//! * across both: above, the flat `c_hi` or the secant from `(l, c_lo)` to `(c_hi, c_hi)`; below,
//!   the flat `c_lo` or the secant from `(c_lo, c_lo)` to `(u, c_hi)`; whichever encloses less
//!   area.
//!
//! alpha-CROWN searches slopes between the smallest and the largest candidate.
//!
//! Why the intercepts are sound: `y - s p` is linear between consecutive kinks, so its extrema
//! over `[l, u]` are among its values at `l`, `u` and the kinks inside, each enclosed by interval
//! arithmetic with outward rounding ([`super::piecewise_sound_intercept`]).

use super::{Relaxation, exact, piecewise_relaxation};
use trestle_ir::Interval;
use trestle_ir::network::Activation;

pub(super) fn relaxation(c_lo: f64, c_hi: f64, lo: f64, hi: f64) -> Relaxation {
    let activation = Activation::Clip { lo: c_lo, hi: c_hi };
    match activation.piece_on(lo, hi) {
        Some(piece) => exact(piece, lo, hi),
        None => piecewise_relaxation(activation, &[0.0, 1.0], lo, hi),
    }
}

/// Interval rule: exact (the clip of both ends).
pub(super) fn interval(c_lo: f64, c_hi: f64, lo: f64, hi: f64) -> Interval {
    Interval::new(lo, hi).activate(&Activation::Clip { lo: c_lo, hi: c_hi })
}
