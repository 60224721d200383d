//! The activation function at the end of a layer, applied neuron by neuron.
//!
//! Two families, which the engines treat differently:
//!
//! - **Piecewise linear** (`Identity`, `Relu`, `LeakyRelu`, `Clip`): every piece is `slope z +
//!   offset` with the slope 1, 0 or `alpha` and the offset 0, `lo` or `hi`, all f64 values of the
//!   model, so the function has an exact rational value at every rational point and exact SMT and
//!   MILP encodings ([`Activation::piece_on`] gives the piece a sound pre-activation box fixes).
//! - **Smooth** (`Tanh`, `Sigmoid`): the value at a rational point (other than tanh(0)) is
//!   irrational. The exact evaluator refuses them (a validated, interval replay is needed);
//!   interval evaluation encloses them; f64 evaluation (simulation, search) uses the standard
//!   library.
//!
//! Parameters are the exact f64 values of the model file (an f32 attribute widens exactly).
//! [`Activation::validate`] checks them; [`Activation::canonical`] maps the parameter values that
//! make one activation another (`LeakyRelu` with `alpha = 0` is `Relu`, `Clip` on `[0, +inf]` is
//! `Relu`, ...) to that other, so engines see the simplest form of the same function.

use serde::{Deserialize, Serialize};

/// One layer's activation (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Activation {
    /// `z` (no activation: a linear layer).
    Identity,
    /// `max(z, 0)`.
    Relu,
    /// `z` for `z >= 0`, `alpha z` for `z < 0`, for any finite `alpha` (ONNX allows any): for
    /// `alpha` in `[0, 1]` it is `max(z, alpha z)` (convex, non-decreasing), for `alpha > 1` it is
    /// `min(z, alpha z)` (concave, increasing), and for `alpha < 0` it is not monotone (`|z|` at
    /// `alpha = -1`). The engines use the two-piece definition, which holds for every `alpha`.
    LeakyRelu {
        /// The slope for `z < 0`; finite, any sign.
        alpha: f64,
    },
    /// `min(max(z, lo), hi)` with `lo <= hi`; `lo = -inf` or `hi = +inf` leaves that side unbounded
    /// (an ONNX `Clip` without that input), so a one-sided clip is exactly a `max` or a `min`.
    Clip {
        /// Lower bound; `-inf` for none. Not NaN, `lo < +inf`.
        lo: f64,
        /// Upper bound, `hi >= lo`; `+inf` for none. Not NaN, `hi > -inf`.
        hi: f64,
    },
    /// `tanh(z)`, in `(-1, 1)`.
    Tanh,
    /// `1 / (1 + exp(-z))`, in `(0, 1)`.
    Sigmoid,
}

/// One linear piece of a piecewise-linear activation: `y = slope * z + offset`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Piece {
    /// `slope`: 1, 0 or a `LeakyRelu`'s `alpha`; an exact f64 of the model.
    pub slope: f64,
    /// `offset`: 0 or a `Clip` bound; an exact f64 of the model.
    pub offset: f64,
}

impl Piece {
    /// `y = z`: the identity piece (ReLU's active side, a clip between its bounds).
    pub const IDENTITY: Piece = Piece { slope: 1.0, offset: 0.0 };
    /// `y = 0`: ReLU's inactive side.
    pub const ZERO: Piece = Piece { slope: 0.0, offset: 0.0 };

    /// `y = value` for every `z` (a clip saturated at a bound).
    pub fn constant(value: f64) -> Piece {
        Piece { slope: 0.0, offset: value }
    }
}

impl Activation {
    /// The name used in system files, messages and `trestle info`.
    pub fn name(&self) -> &'static str {
        match self {
            Activation::Identity => "identity",
            Activation::Relu => "relu",
            Activation::LeakyRelu { .. } => "leaky_relu",
            Activation::Clip { .. } => "clip",
            Activation::Tanh => "tanh",
            Activation::Sigmoid => "sigmoid",
        }
    }

    /// Exact rational value at every rational point, exact SMT and MILP encodings.
    pub fn is_piecewise_linear(&self) -> bool {
        !matches!(self, Activation::Tanh | Activation::Sigmoid)
    }

    /// Non-decreasing everywhere (all but a `LeakyRelu` with a negative slope).
    pub fn is_monotone(&self) -> bool {
        match self {
            Activation::LeakyRelu { alpha } => *alpha >= 0.0,
            _ => true,
        }
    }

    /// Whether every output is `>= 0` (a value that is an output of such a layer passes a ReLU
    /// unchanged).
    pub fn output_is_nonnegative(&self) -> bool {
        match self {
            Activation::Relu | Activation::Sigmoid => true,
            Activation::Clip { lo, .. } => *lo >= 0.0,
            _ => false,
        }
    }

    /// The parameters are usable: `alpha` finite; `lo`, `hi` not NaN, `lo <= hi`, `lo < +inf`,
    /// `hi > -inf`. The message says what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            Activation::LeakyRelu { alpha } if !alpha.is_finite() => {
                Err(format!("leaky_relu: alpha is {alpha}, it must be a finite number"))
            }
            Activation::Clip { lo, hi } if lo.is_nan() || hi.is_nan() => {
                Err(format!("clip: the bounds [{lo}, {hi}] must be numbers"))
            }
            Activation::Clip { lo, hi } if lo == f64::INFINITY || hi == f64::NEG_INFINITY => {
                Err(format!("clip: the bounds [{lo}, {hi}] clip every value to an infinite one"))
            }
            Activation::Clip { lo, hi } if lo > hi => {
                Err(format!("clip: the lower bound {lo} is above the upper bound {hi}"))
            }
            _ => Ok(()),
        }
    }

    /// The simplest activation equal to this one as a function: `LeakyRelu` with `alpha = 0` is
    /// `Relu` and with `alpha = 1` is `Identity`; `Clip` on `[0, +inf]` is `Relu` and on
    /// `[-inf, +inf]` is `Identity`. Others are returned unchanged.
    pub fn canonical(self) -> Activation {
        match self {
            Activation::LeakyRelu { alpha: 0.0 } => Activation::Relu,
            Activation::LeakyRelu { alpha: 1.0 } => Activation::Identity,
            Activation::Clip { lo, hi } if lo == 0.0 && hi == f64::INFINITY => Activation::Relu,
            Activation::Clip { lo, hi } if lo == f64::NEG_INFINITY && hi == f64::INFINITY => Activation::Identity,
            other => other,
        }
    }

    /// The value in f64 (the standard library's `tanh` and `exp` for the smooth ones): simulation
    /// and search only, never a verdict.
    pub fn apply_f64(&self, z: f64) -> f64 {
        match *self {
            Activation::Identity => z,
            Activation::Relu => z.max(0.0),
            Activation::LeakyRelu { alpha } => {
                if z >= 0.0 {
                    z
                } else {
                    alpha * z
                }
            }
            Activation::Clip { lo, hi } => z.max(lo).min(hi),
            Activation::Tanh => z.tanh(),
            Activation::Sigmoid => sigmoid_f64(z),
        }
    }

    /// The linear piece the activation follows on all of `[lo, hi]` (sound bounds of the
    /// pre-activation), or `None` when it may change piece there (or is smooth). At a kink both
    /// pieces agree, so a box touching it from one side still has one piece.
    pub fn piece_on(&self, lo: f64, hi: f64) -> Option<Piece> {
        match *self {
            Activation::Identity => Some(Piece::IDENTITY),
            Activation::Relu if lo >= 0.0 => Some(Piece::IDENTITY),
            Activation::Relu if hi <= 0.0 => Some(Piece::ZERO),
            Activation::LeakyRelu { .. } if lo >= 0.0 => Some(Piece::IDENTITY),
            Activation::LeakyRelu { alpha } if hi <= 0.0 => Some(Piece { slope: alpha, offset: 0.0 }),
            Activation::Clip { lo: c_lo, .. } if hi <= c_lo => Some(Piece::constant(c_lo)),
            Activation::Clip { hi: c_hi, .. } if lo >= c_hi => Some(Piece::constant(c_hi)),
            Activation::Clip { lo: c_lo, hi: c_hi } if lo >= c_lo && hi <= c_hi => Some(Piece::IDENTITY),
            _ => None,
        }
    }
}

impl std::fmt::Display for Activation {
    /// `relu`, `leaky_relu(alpha = 0.01)`, `clip[-1, 1]`, `clip[-inf, 6]`, ...
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Activation::LeakyRelu { alpha } => write!(f, "leaky_relu(alpha = {alpha})"),
            Activation::Clip { lo, hi } => write!(f, "clip[{lo}, {hi}]"),
            other => f.write_str(other.name()),
        }
    }
}

/// `1 / (1 + exp(-z))` without overflow for large `|z|`.
fn sigmoid_f64(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_validated() {
        assert!(Activation::LeakyRelu { alpha: f64::NAN }.validate().is_err());
        assert!(Activation::LeakyRelu { alpha: f64::INFINITY }.validate().is_err());
        assert!(Activation::LeakyRelu { alpha: -3.0 }.validate().is_ok());
        assert!(Activation::Clip { lo: 1.0, hi: 0.0 }.validate().is_err());
        assert!(Activation::Clip { lo: f64::NAN, hi: 0.0 }.validate().is_err());
        assert!(Activation::Clip { lo: f64::INFINITY, hi: f64::INFINITY }.validate().is_err());
        assert!(Activation::Clip { lo: f64::NEG_INFINITY, hi: f64::NEG_INFINITY }.validate().is_err());
        assert!(Activation::Clip { lo: f64::NEG_INFINITY, hi: 6.0 }.validate().is_ok());
        assert!(Activation::Clip { lo: 2.0, hi: 2.0 }.validate().is_ok());
    }

    #[test]
    fn canonical_forms_are_the_same_function() {
        let cases = [
            (Activation::LeakyRelu { alpha: 0.0 }, Activation::Relu),
            (Activation::LeakyRelu { alpha: -0.0 }, Activation::Relu),
            (Activation::LeakyRelu { alpha: 1.0 }, Activation::Identity),
            (Activation::Clip { lo: 0.0, hi: f64::INFINITY }, Activation::Relu),
            (Activation::Clip { lo: f64::NEG_INFINITY, hi: f64::INFINITY }, Activation::Identity),
        ];
        for (a, b) in cases {
            assert_eq!(a.canonical(), b);
            for z in [-1e300, -3.5, -0.0, 0.0, 1e-310, 2.25, 1e300] {
                assert_eq!(a.apply_f64(z), b.apply_f64(z), "{a} vs {b} at {z}");
            }
        }
        let kept = Activation::Clip { lo: -1.0, hi: 1.0 };
        assert_eq!(kept.canonical(), kept);
    }

    #[test]
    fn pieces_agree_with_the_function_on_their_box() {
        let acts = [
            Activation::Identity,
            Activation::Relu,
            Activation::LeakyRelu { alpha: 0.125 },
            Activation::LeakyRelu { alpha: -2.0 },
            Activation::LeakyRelu { alpha: 3.0 },
            Activation::Clip { lo: -1.0, hi: 0.5 },
            Activation::Clip { lo: f64::NEG_INFINITY, hi: 0.5 },
            Activation::Clip { lo: -1.0, hi: f64::INFINITY },
        ];
        let points: Vec<f64> = (-40..=40).map(|k| f64::from(k) / 16.0).collect();
        let mut decided = 0;
        for act in acts {
            for (i, &lo) in points.iter().enumerate() {
                for &hi in &points[i..] {
                    let Some(p) = act.piece_on(lo, hi) else { continue };
                    decided += 1;
                    for &z in points.iter().filter(|&&z| lo <= z && z <= hi) {
                        assert_eq!(p.slope * z + p.offset, act.apply_f64(z), "{act} on [{lo}, {hi}] at {z}");
                    }
                }
            }
            // A box across a kink has no single piece.
            if act != Activation::Identity {
                assert!(act.piece_on(-3.0, 3.0).is_none(), "{act}");
            }
        }
        assert!(decided > 1000);
        assert_eq!(Activation::Tanh.piece_on(0.0, 0.0), None);
    }

    #[test]
    fn smooth_activations_in_f64() {
        assert_eq!(Activation::Sigmoid.apply_f64(0.0), 0.5);
        assert_eq!(Activation::Sigmoid.apply_f64(-1000.0), 0.0);
        assert_eq!(Activation::Sigmoid.apply_f64(1000.0), 1.0);
        assert!((Activation::Sigmoid.apply_f64(-2.0) - 0.11920292202211755).abs() < 1e-16);
        assert_eq!(Activation::Tanh.apply_f64(0.0), 0.0);
        assert!(!Activation::Tanh.is_piecewise_linear() && Activation::Clip { lo: 0.0, hi: 1.0 }.is_piecewise_linear());
        assert!(!Activation::LeakyRelu { alpha: -0.5 }.is_monotone());
    }

    #[test]
    fn names_and_display() {
        assert_eq!(Activation::LeakyRelu { alpha: 0.25 }.to_string(), "leaky_relu(alpha = 0.25)");
        assert_eq!(Activation::Clip { lo: f64::NEG_INFINITY, hi: 6.0 }.to_string(), "clip[-inf, 6]");
        assert_eq!(Activation::Sigmoid.name(), "sigmoid");
    }
}
