//! Leaky ReLU, `y = p` for `p >= 0` and `alpha p` for `p < 0` (any finite `alpha`): interval
//! rule and relaxation.
//!
//! * On a box inside one piece (`l >= 0`: identity, `u <= 0`: `alpha p`) the piece is the
//!   relaxation, exact in reals (`alpha` is the model's f64).
//! * Across 0 the lines are chosen among the candidate slopes of
//!   [`super::piecewise_relaxation`] (1, `alpha`, the chord): for `alpha <= 1` the function is
//!   convex (`max(p, alpha p)`), the chord above and, below, slope 1 when `u > -l` else `alpha`,
//!   the triangle of ReLU with the flat side tilted to `alpha`; for `alpha > 1` it is concave
//!   (`min(p, alpha p)`) and the roles swap. alpha-CROWN searches slopes between `alpha` and 1.
//!
//! Why the intercepts are sound: `y - s p` is linear on `[l, 0]` and on `[0, u]`, so its
//! extrema over `[l, u]` are among its values at `l`, 0 and `u`, each enclosed by interval
//! arithmetic with outward rounding ([`super::piecewise_sound_intercept`]).

use super::{Relaxation, exact, piecewise_relaxation};
use trestle_ir::Interval;
use trestle_ir::network::Activation;

pub(super) fn relaxation(alpha: f64, lo: f64, hi: f64) -> Relaxation {
    let activation = Activation::LeakyRelu { alpha };
    match activation.piece_on(lo, hi) {
        Some(piece) => exact(piece, lo, hi),
        None => piecewise_relaxation(activation, &[1.0, alpha], lo, hi),
    }
}

/// Interval rule: the hull of the two pieces' images, the negative one times `alpha` rounded
/// outward (also right for the non-monotone `alpha < 0`).
pub(super) fn interval(alpha: f64, lo: f64, hi: f64) -> Interval {
    Interval::new(lo, hi).activate(&Activation::LeakyRelu { alpha })
}
