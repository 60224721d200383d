//! f64 enclosures of the elementary functions at one argument: `f(x).lo <= f(x) <= f(x).hi`.
//!
//! Each value comes from CORE-MATH (`core_math`), whose binary64 functions are correctly rounded to
//! nearest: `y = RN(f(x))`. The enclosure is `[pred(y), succ(y)]`, which holds as soon as `y` is
//! *faithful* (one of the two floats around `f(x)`), so a misrounding in a hard case (the kind of
//! bug CORE-MATH's releases still fix now and then) cannot make it unsound. Each end is within one
//! ulp of the correctly rounded downward/upward value, and ends are pulled into what is known
//! exactly of the function (its range; `f(x) > f(0)` for increasing `f` and `x > 0`). Values that
//! are exact are returned as points: `f(0)` of every function, `log(1)`, exact square roots and
//! exact products in small powers. (For every other finite argument the value is irrational,
//! by Lindemann-Weierstrass, so it is never an f64.)
//!
//! A NaN argument stands for an unknown real: total functions return their whole range, partial
//! ones an invalid-interval error. Infinite arguments give the function's limit where it has one.

use crate::directed::{add_down, add_up, div_down, div_up, mul_down, mul_up, sqrt_bounds, sub_down, sub_up};
use crate::enclosure::{Enclosure, ErrorKind, RealError};

/// `[pred(y), succ(y)]`: everything a faithful rounding `y` of a real can have come from.
#[inline]
fn faithful(y: f64) -> Enclosure {
    Enclosure { lo: y.next_down(), hi: y.next_up() }
}

/// For an increasing `f` with `f(0) = f0` exactly: the faithful enclosure of `y = RN(f(x))`, with
/// `f0` as a bound on the side where it is known to hold (`f(x) > f0` for `x > 0`, and the reverse).
#[inline]
fn increasing_through(x: f64, y: f64, f0: f64) -> Enclosure {
    let e = faithful(y);
    if x > 0.0 { Enclosure { lo: e.lo.max(f0), hi: e.hi } } else { Enclosure { lo: e.lo, hi: e.hi.min(f0) } }
}

/// e^x.
pub fn exp(x: f64) -> Enclosure {
    if x.is_nan() {
        return Enclosure { lo: 0.0, hi: f64::INFINITY };
    }
    if x == 0.0 {
        return Enclosure::point(1.0);
    }
    if x == f64::NEG_INFINITY {
        return Enclosure::point(0.0);
    }
    increasing_through(x, core_math::exp(x), 1.0).clamp(0.0, f64::INFINITY)
}

/// e^x - 1, accurate near 0.
pub fn expm1(x: f64) -> Enclosure {
    if x.is_nan() {
        return Enclosure { lo: -1.0, hi: f64::INFINITY };
    }
    if x == 0.0 {
        return Enclosure::point(x);
    }
    if x == f64::NEG_INFINITY {
        return Enclosure::point(-1.0);
    }
    increasing_through(x, core_math::expm1(x), 0.0).clamp(-1.0, f64::INFINITY)
}

/// ln x, for x > 0 (`log(+0)` is -inf as a limit but 0 is outside the domain: an error, as is
/// every negative argument; the plant issue reports it as a domain exit).
pub fn log(x: f64) -> Result<Enclosure, RealError> {
    if x.is_nan() {
        return Err(RealError::new("log", x, x, ErrorKind::InvalidInterval));
    }
    if x <= 0.0 {
        return Err(RealError::new("log", x, x, ErrorKind::OutsideDomain));
    }
    if x == 1.0 {
        return Ok(Enclosure::point(0.0));
    }
    if x == f64::INFINITY {
        return Ok(Enclosure::point(f64::INFINITY));
    }
    let e = faithful(core_math::log(x));
    // ln x > 0 exactly when x > 1.
    Ok(if x > 1.0 { Enclosure { lo: e.lo.max(0.0), hi: e.hi } } else { Enclosure { lo: e.lo, hi: e.hi.min(0.0) } })
}

/// ln(1 + x), accurate near 0, for x > -1.
pub fn log1p(x: f64) -> Result<Enclosure, RealError> {
    if x.is_nan() {
        return Err(RealError::new("log1p", x, x, ErrorKind::InvalidInterval));
    }
    if x <= -1.0 {
        return Err(RealError::new("log1p", x, x, ErrorKind::OutsideDomain));
    }
    if x == 0.0 {
        return Ok(Enclosure::point(x));
    }
    if x == f64::INFINITY {
        return Ok(Enclosure::point(f64::INFINITY));
    }
    Ok(increasing_through(x, core_math::log1p(x), 0.0))
}

/// √x for x >= 0 (IEEE sqrt, directed exactly: an exact root is a point).
pub fn sqrt(x: f64) -> Result<Enclosure, RealError> {
    if x.is_nan() {
        return Err(RealError::new("sqrt", x, x, ErrorKind::InvalidInterval));
    }
    if x < 0.0 {
        return Err(RealError::new("sqrt", x, x, ErrorKind::OutsideDomain));
    }
    let (lo, hi) = sqrt_bounds(x);
    Ok(Enclosure { lo, hi })
}

/// sin x (CORE-MATH reduces huge arguments exactly).
pub fn sin(x: f64) -> Enclosure {
    if !x.is_finite() {
        return Enclosure { lo: -1.0, hi: 1.0 };
    }
    if x == 0.0 {
        return Enclosure::point(x);
    }
    faithful(core_math::sin(x)).clamp(-1.0, 1.0)
}

/// cos x.
pub fn cos(x: f64) -> Enclosure {
    if !x.is_finite() {
        return Enclosure { lo: -1.0, hi: 1.0 };
    }
    if x == 0.0 {
        return Enclosure::point(1.0);
    }
    faithful(core_math::cos(x)).clamp(-1.0, 1.0)
}

/// tan x. No f64 is a pole (pi/2 is irrational), so every finite argument has a value; an
/// infinite one has none.
pub fn tan(x: f64) -> Result<Enclosure, RealError> {
    if x.is_nan() {
        return Err(RealError::new("tan", x, x, ErrorKind::InvalidInterval));
    }
    if x.is_infinite() {
        return Err(RealError::new("tan", x, x, ErrorKind::Pole));
    }
    if x == 0.0 {
        return Ok(Enclosure::point(x));
    }
    Ok(faithful(core_math::tan(x)))
}

/// atan x, in (-pi/2, pi/2).
pub fn atan(x: f64) -> Enclosure {
    if x.is_nan() {
        return Enclosure { lo: -HALF_PI_UP, hi: HALF_PI_UP };
    }
    if x == 0.0 {
        return Enclosure::point(x);
    }
    increasing_through(x, core_math::atan(x), 0.0).clamp(-HALF_PI_UP, HALF_PI_UP)
}

/// The smallest f64 above pi/2 (checked against MPFR in the tests).
pub(crate) const HALF_PI_UP: f64 = f64::from_bits(0x3FF9_21FB_5444_2D19);

/// tanh x, in [-1, 1] (strictly inside for finite x).
pub fn tanh(x: f64) -> Enclosure {
    if x.is_nan() {
        return Enclosure { lo: -1.0, hi: 1.0 };
    }
    if x == 0.0 || x.is_infinite() {
        return Enclosure::point(if x.is_infinite() { x.signum() } else { x });
    }
    increasing_through(x, core_math::tanh(x), 0.0).clamp(-1.0, 1.0)
}

/// The logistic sigmoid 1 / (1 + e^-x), in [0, 1]. Computed from an enclosure of e^-|x| so it
/// keeps its relative accuracy in both tails: for x >= 0 as 1/(1 + e^-x), for x < 0 as
/// e^x/(1 + e^x), each end rounded in the direction that keeps it outside.
pub fn sigmoid(x: f64) -> Enclosure {
    if x.is_nan() {
        return Enclosure { lo: 0.0, hi: 1.0 };
    }
    if x == 0.0 {
        return Enclosure::point(0.5);
    }
    if x.is_infinite() {
        return Enclosure::point(if x > 0.0 { 1.0 } else { 0.0 });
    }
    let e = exp(-x.abs());
    let s = if x > 0.0 {
        // 1/(1+e) decreases in e.
        Enclosure { lo: div_down(1.0, add_up(1.0, e.hi)), hi: div_up(1.0, add_down(1.0, e.lo)) }
    } else {
        // e/(1+e) = 1 - 1/(1+e) increases in e; numerator and denominator bounded separately.
        Enclosure { lo: div_down(e.lo, add_up(1.0, e.lo)), hi: div_up(e.hi, add_down(1.0, e.hi)) }
    };
    let half_side = if x > 0.0 { Enclosure { lo: 0.5, hi: 1.0 } } else { Enclosure { lo: 0.0, hi: 0.5 } };
    s.clamp(half_side.lo, half_side.hi)
}

/// `scale E / (1 + E)^2` for `E = e^(-k|x|)` in (0, 1], rounded outward. It increases in `E` on
/// (0, 1], so the lower end comes from the lower end of `E` with every step rounded down (the
/// denominator up) and the upper end the other way. Written with `E <= 1` rather than with cosh or
/// `1 - tanh^2`, it keeps its relative accuracy everywhere: no cancellation near tanh = ±1, no
/// overflow of cosh for large |x|.
fn bell(x: f64, k: f64, scale: f64) -> Enclosure {
    let a = x.abs();
    // -k|x|, rounded both ways (it overflows to -inf for huge |x|; exp of the upper end stays > 0).
    let (t_lo, t_hi) = (mul_down(-k, a), mul_up(-k, a));
    let at_lo = exp(t_lo);
    // -k|x| is exact unless it overflows or underflows: then one exp serves both ends.
    let e_lo = at_lo.lo;
    let e_hi = if t_lo == t_hi { at_lo.hi } else { exp(t_hi).hi }.min(1.0);
    if e_hi < SMALL_E {
        // 1 + E rounded up would cost a whole ulp of [1, 2) (and its square two): use
        // 1 - 2E <= (1 + E)^-2 <= 1 - 2E + 3E^2 (an alternating series for E < 1), whose
        // roundings fall in [1/2, 1) where the ulp is half as large, and whose bounds are
        // increasing in E here.
        let lo = mul_down(mul_down(scale, e_lo), sub_down(1.0, mul_up(2.0, e_lo)));
        let factor_hi = add_up(sub_up(1.0, mul_down(2.0, e_hi)), mul_up(3.0, mul_up(e_hi, e_hi)));
        return Enclosure { lo, hi: mul_up(mul_up(scale, e_hi), factor_hi) };
    }
    let lo = div_down(mul_down(scale, e_lo), {
        let d = add_up(1.0, e_lo);
        mul_up(d, d)
    });
    let hi = div_up(mul_up(scale, e_hi), {
        let d = add_down(1.0, e_hi);
        mul_down(d, d)
    });
    Enclosure { lo, hi }
}

/// Below this `E = e^(-k|x|)` the series form of `bell` is used (about |x| > 9.7 for tanh',
/// |x| > 19.4 for sigmoid').
const SMALL_E: f64 = 1.0 / 268_435_456.0; // 2^-28

/// tanh'(x) = 1 - tanh(x)^2 = 4 E / (1 + E)^2 with E = e^(-2|x|), in (0, 1].
pub fn tanh_derivative(x: f64) -> Enclosure {
    if x.is_nan() {
        return Enclosure { lo: 0.0, hi: 1.0 };
    }
    if x == 0.0 {
        return Enclosure::point(1.0);
    }
    if x.is_infinite() {
        return Enclosure::point(0.0);
    }
    bell(x, 2.0, 4.0).clamp(0.0, 1.0)
}

/// sigmoid'(x) = s(1 - s) = E / (1 + E)^2 with E = e^(-|x|), in (0, 1/4].
pub fn sigmoid_derivative(x: f64) -> Enclosure {
    if x.is_nan() {
        return Enclosure { lo: 0.0, hi: 0.25 };
    }
    if x == 0.0 {
        return Enclosure::point(0.25);
    }
    if x.is_infinite() {
        return Enclosure::point(0.0);
    }
    bell(x, 1.0, 1.0).clamp(0.0, 0.25)
}

/// x^n for an integer n (x^0 = 1 for every x, 0 included; a negative n at x = 0 is an error).
/// n = 1, 2, -1 use directed multiplication/division (exact where the result is an f64); other
/// powers CORE-MATH's correctly rounded `pow`.
pub fn powi(x: f64, n: i32) -> Result<Enclosure, RealError> {
    if x.is_nan() {
        return Err(RealError::new("powi", x, x, ErrorKind::InvalidInterval));
    }
    if n == 0 {
        return Ok(Enclosure::point(1.0));
    }
    if x == 0.0 && n < 0 {
        return Err(RealError::new("powi", x, x, ErrorKind::OutsideDomain));
    }
    match n {
        1 => return Ok(Enclosure::point(x)),
        2 => return Ok(Enclosure { lo: mul_down(x, x), hi: mul_up(x, x) }),
        -1 => return Ok(Enclosure { lo: div_down(1.0, x), hi: div_up(1.0, x) }),
        _ => {}
    }
    let y = core_math::pow(x, f64::from(n));
    if x == 0.0 || x.is_infinite() {
        // 0^n = ±0, inf^n = ±inf or ±0: pow's special cases are exact.
        return Ok(Enclosure::point(y));
    }
    let e = faithful(y);
    let negative = x < 0.0 && n % 2 != 0;
    Ok(if negative { Enclosure { lo: e.lo, hi: e.hi.min(0.0) } } else { Enclosure { lo: e.lo.max(0.0), hi: e.hi } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values_are_points() {
        assert_eq!(exp(0.0), Enclosure::point(1.0));
        assert_eq!(tanh(-0.0).lo.to_bits(), (-0.0f64).to_bits());
        assert_eq!(sigmoid(0.0), Enclosure::point(0.5));
        assert_eq!(cos(0.0), Enclosure::point(1.0));
        assert_eq!(log(1.0).unwrap(), Enclosure::point(0.0));
        assert_eq!(sqrt(4.0).unwrap(), Enclosure::point(2.0));
        assert_eq!(powi(3.0, 2).unwrap(), Enclosure::point(9.0));
        assert_eq!(tanh_derivative(0.0), Enclosure::point(1.0));
        assert_eq!(sigmoid_derivative(0.0), Enclosure::point(0.25));
    }

    #[test]
    fn domains_are_enforced() {
        assert_eq!(log(0.0).unwrap_err().kind, ErrorKind::OutsideDomain);
        assert_eq!(log(-1.0).unwrap_err().kind, ErrorKind::OutsideDomain);
        assert_eq!(log1p(-1.0).unwrap_err().kind, ErrorKind::OutsideDomain);
        assert_eq!(sqrt(-1e-300).unwrap_err().kind, ErrorKind::OutsideDomain);
        assert!(sqrt(-0.0).is_ok());
        assert_eq!(powi(0.0, -2).unwrap_err().kind, ErrorKind::OutsideDomain);
        assert_eq!(tan(f64::INFINITY).unwrap_err().kind, ErrorKind::Pole);
        assert_eq!(log(f64::NAN).unwrap_err().kind, ErrorKind::InvalidInterval);
        let message = log(-1.0).unwrap_err().to_string();
        assert!(message.contains("log") && message.contains("x > 0"), "{message}");
    }

    #[test]
    fn overflow_keeps_a_finite_lower_end() {
        let e = exp(710.0);
        assert_eq!(e, Enclosure { lo: f64::MAX, hi: f64::INFINITY });
        let e = exp(-746.0);
        assert_eq!(e.lo, 0.0);
        assert!(e.hi > 0.0);
    }

    #[test]
    fn nan_arguments_give_the_whole_range() {
        assert_eq!(tanh(f64::NAN), Enclosure { lo: -1.0, hi: 1.0 });
        assert_eq!(sigmoid(f64::NAN), Enclosure { lo: 0.0, hi: 1.0 });
        assert_eq!(sin(f64::NAN), Enclosure { lo: -1.0, hi: 1.0 });
        assert_eq!(exp(f64::NAN), Enclosure { lo: 0.0, hi: f64::INFINITY });
    }
}
