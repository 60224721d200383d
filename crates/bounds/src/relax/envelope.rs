//! Sound lines of an activation on an interval for encodings that relax it (the MILP engines'
//! tanh and sigmoid neurons): CROWN's own two lines and lines of further slopes, every one built
//! by [`sound_line`] (any f64 slope, the intercept the rigorous extremum of `act(p) - s p` over
//! the interval), so the rules and the soundness argument are this module's, not re-derived by
//! the caller. Lines of slopes `f'(z)` at points spread over the interval, on both sides, meet in
//! a polygon that approaches the convex hull of the graph as the points get denser: the upper
//! line of slope `s` is the hull's support line in that direction (up to the rounding of its
//! intercept).

use super::{Relaxation, Side, sound_line};
use trestle_ir::network::Activation;

/// `y <= slope p + intercept` (`upper`) or `y >= slope p + intercept`, valid for every `p` of
/// the interval it was built on, in real arithmetic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SoundLine {
    pub slope: f64,
    pub intercept: f64,
    pub upper: bool,
}

/// Lines bounding `act` on `[lo, hi]` (finite, `lo <= hi`) from both sides: CROWN's relaxation
/// (its two lines; both the same line when the activation is linear there) and, for each slope of
/// `slopes`, its upper and lower line. Non-finite slopes are skipped.
pub fn sound_lines(activation: Activation, lo: f64, hi: f64, slopes: &[f64]) -> Vec<SoundLine> {
    let mut out = Vec::with_capacity(2 + 2 * slopes.len());
    let own = |s: f64, t: f64, upper: bool| SoundLine { slope: s, intercept: t, upper };
    match Relaxation::new(activation, lo, hi) {
        Relaxation::Lines(l) => {
            out.push(own(l.upper.slope, l.upper.intercept, true));
            out.push(own(l.lower.slope, l.lower.intercept, false));
        }
        Relaxation::Pass => out.extend([own(1.0, 0.0, true), own(1.0, 0.0, false)]),
        Relaxation::Zero => out.extend([own(0.0, 0.0, true), own(0.0, 0.0, false)]),
        Relaxation::Unstable { .. } => {}
    }
    for &s in slopes.iter().filter(|s| s.is_finite()) {
        for (side, upper) in [(Side::Upper, true), (Side::Lower, false)] {
            let line = sound_line(activation, s, lo, hi, side);
            if line.intercept.is_finite() {
                out.push(own(line.slope, line.intercept, upper));
            }
        }
    }
    out
}

/// `act'(z)` in f64 for tanh and sigmoid (accurate in the tails; an estimate for choosing slopes,
/// never a bound), `None` for the other activations.
pub fn slope_estimate(activation: Activation, z: f64) -> Option<f64> {
    use super::s_shaped::SShaped;
    match activation {
        Activation::Tanh => Some(super::tanh::Tanh::slope(z)),
        Activation::Sigmoid => Some(super::sigmoid::Sigmoid::slope(z)),
        _ => None,
    }
}
