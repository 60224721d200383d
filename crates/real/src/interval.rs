//! f64 enclosures of the image of an interval: `f([lo, hi]) ⊆ result`.
//!
//! Monotone functions are enclosed by the point enclosures of their ends; sin and cos by their
//! ends and the extrema between them (found by the exact quadrant reduction of `quadrant`), tan by
//! its ends when no pole lies between them; powers by their monotone pieces; the derivatives of
//! tanh and sigmoid (even, decreasing in |x|) by the end nearest to and farthest from 0.
//!
//! An invalid interval (a NaN end, or `lo > hi`) stands for an unknown set: total functions return
//! their whole range, partial ones an invalid-interval error. Ends may be infinite.

use crate::enclosure::{Enclosure, ErrorKind, RealError};
use crate::point;
use crate::quadrant::span_f64;

fn valid(lo: f64, hi: f64) -> bool {
    !lo.is_nan() && !hi.is_nan() && lo <= hi
}

/// `[f(lo).lo, f(hi).hi]` for an increasing total `f`, or `range` for an invalid interval.
fn increasing(lo: f64, hi: f64, f: fn(f64) -> Enclosure, range: Enclosure) -> Enclosure {
    if !valid(lo, hi) {
        return range;
    }
    if lo == hi {
        return f(lo);
    }
    Enclosure { lo: f(lo).lo, hi: f(hi).hi }
}

/// The same for an increasing partial `f` (its point function checks the domain at `lo`, the
/// smallest argument, which is where every domain here is bounded).
fn increasing_partial(
    name: &'static str,
    lo: f64,
    hi: f64,
    f: fn(f64) -> Result<Enclosure, RealError>,
) -> Result<Enclosure, RealError> {
    if !valid(lo, hi) {
        return Err(RealError::new(name, lo, hi, ErrorKind::InvalidInterval));
    }
    let at_lo = f(lo).map_err(|e| RealError::new(name, lo, hi, e.kind))?;
    if lo == hi {
        return Ok(at_lo);
    }
    Ok(Enclosure { lo: at_lo.lo, hi: f(hi)?.hi })
}

pub fn exp(lo: f64, hi: f64) -> Enclosure {
    increasing(lo, hi, point::exp, Enclosure { lo: 0.0, hi: f64::INFINITY })
}

pub fn expm1(lo: f64, hi: f64) -> Enclosure {
    increasing(lo, hi, point::expm1, Enclosure { lo: -1.0, hi: f64::INFINITY })
}

pub fn tanh(lo: f64, hi: f64) -> Enclosure {
    increasing(lo, hi, point::tanh, Enclosure { lo: -1.0, hi: 1.0 })
}

pub fn sigmoid(lo: f64, hi: f64) -> Enclosure {
    increasing(lo, hi, point::sigmoid, Enclosure { lo: 0.0, hi: 1.0 })
}

pub fn atan(lo: f64, hi: f64) -> Enclosure {
    increasing(lo, hi, point::atan, point::atan(f64::NAN))
}

/// ln over `[lo, hi]`; an error when `lo <= 0` (the interval reaches outside the domain).
pub fn log(lo: f64, hi: f64) -> Result<Enclosure, RealError> {
    increasing_partial("log", lo, hi, point::log)
}

/// ln(1 + x) over `[lo, hi]`; an error when `lo <= -1`.
pub fn log1p(lo: f64, hi: f64) -> Result<Enclosure, RealError> {
    increasing_partial("log1p", lo, hi, point::log1p)
}

/// √x over `[lo, hi]`; an error when `lo < 0`.
pub fn sqrt(lo: f64, hi: f64) -> Result<Enclosure, RealError> {
    increasing_partial("sqrt", lo, hi, point::sqrt)
}

/// Which extrema of a periodic function lie in `[lo, hi]` (finite, valid): `(has_max, has_min)`
/// for extrema at the quadrant boundaries `k pi/2` with `k ≡ max_residue` / `k ≡ min_residue`
/// (mod 4). Undecided reductions count as containing both.
fn extrema(lo: f64, hi: f64, max_residue: u32, min_residue: u32) -> (bool, bool) {
    // A width of at least 7 > 2 pi (even after rounding the difference) spans a whole period.
    if hi - lo >= 7.0 {
        return (true, true);
    }
    match span_f64(lo, hi).and_then(|s| s.crossed_residues().map(|r| r.collect::<Vec<_>>())) {
        Some(residues) => (residues.contains(&max_residue), residues.contains(&min_residue)),
        None => (true, true),
    }
}

/// Encloses a sine-like function from its ends and the extrema inside.
fn periodic(lo: f64, hi: f64, f: fn(f64) -> Enclosure, max_residue: u32, min_residue: u32) -> Enclosure {
    if !valid(lo, hi) || !lo.is_finite() || !hi.is_finite() {
        return Enclosure { lo: -1.0, hi: 1.0 };
    }
    if lo == hi {
        return f(lo);
    }
    let ends = f(lo).hull(&f(hi));
    let (has_max, has_min) = extrema(lo, hi, max_residue, min_residue);
    Enclosure { lo: if has_min { -1.0 } else { ends.lo }, hi: if has_max { 1.0 } else { ends.hi } }
}

/// sin over `[lo, hi]`: maxima at `pi/2 + 2k pi` (boundary residue 1), minima at residue 3.
pub fn sin(lo: f64, hi: f64) -> Enclosure {
    periodic(lo, hi, point::sin, 1, 3)
}

/// cos over `[lo, hi]`: maxima at `2k pi` (residue 0), minima at `pi + 2k pi` (residue 2).
pub fn cos(lo: f64, hi: f64) -> Enclosure {
    periodic(lo, hi, point::cos, 0, 2)
}

/// tan over `[lo, hi]`, increasing between its poles `pi/2 + k pi` (the odd boundaries); an error
/// when a pole lies inside (or an end is infinite).
pub fn tan(lo: f64, hi: f64) -> Result<Enclosure, RealError> {
    if !valid(lo, hi) {
        return Err(RealError::new("tan", lo, hi, ErrorKind::InvalidInterval));
    }
    if !lo.is_finite() || !hi.is_finite() || hi - lo >= 4.0 {
        // Any interval longer than pi contains a pole.
        return Err(RealError::new("tan", lo, hi, ErrorKind::Pole));
    }
    if lo == hi {
        return point::tan(lo);
    }
    let span = span_f64(lo, hi).ok_or(RealError::new("tan", lo, hi, ErrorKind::Undecided))?;
    let pole = match span.crossed_residues() {
        Some(mut residues) => residues.any(|r| r % 2 == 1),
        None => true,
    };
    if pole {
        return Err(RealError::new("tan", lo, hi, ErrorKind::Pole));
    }
    Ok(Enclosure { lo: point::tan(lo)?.lo, hi: point::tan(hi)?.hi })
}

/// x^n over `[lo, hi]` by its monotone pieces; a negative n on an interval containing 0 is an
/// error.
pub fn powi(lo: f64, hi: f64, n: i32) -> Result<Enclosure, RealError> {
    if !valid(lo, hi) {
        return Err(RealError::new("powi", lo, hi, ErrorKind::InvalidInterval));
    }
    if n == 0 {
        return Ok(Enclosure::point(1.0));
    }
    if n < 0 && lo <= 0.0 && hi >= 0.0 {
        return Err(RealError::new("powi", lo, hi, ErrorKind::OutsideDomain));
    }
    let p = |x: f64| point::powi(x, n);
    if lo == hi {
        return p(lo);
    }
    let even = n % 2 == 0;
    // Increasing: odd positive powers, every positive power on x >= 0, even negative powers on x < 0.
    let increasing = (n > 0 && (!even || lo >= 0.0)) || (n < 0 && even && hi < 0.0);
    if increasing {
        return Ok(Enclosure { lo: p(lo)?.lo, hi: p(hi)?.hi });
    }
    if n > 0 && lo < 0.0 && hi > 0.0 {
        // Even power across 0: the minimum 0 at 0, the maximum at the farther end.
        return Ok(Enclosure { lo: 0.0, hi: p(lo)?.hi.max(p(hi)?.hi) });
    }
    // Decreasing: even positive powers on x <= 0, negative powers on x > 0, odd negative on x < 0.
    Ok(Enclosure { lo: p(hi)?.lo, hi: p(lo)?.hi })
}

/// An even function decreasing in |x| over `[lo, hi]`: its value at the end nearest to 0 (or at 0)
/// bounds it above, at the farthest end below.
fn even_decreasing(lo: f64, hi: f64, f: fn(f64) -> Enclosure, at_zero: f64, range: Enclosure) -> Enclosure {
    if !valid(lo, hi) {
        return range;
    }
    let (near, far) = if lo <= 0.0 && hi >= 0.0 {
        (0.0, if -lo > hi { lo } else { hi })
    } else if lo > 0.0 {
        (lo, hi)
    } else {
        (hi, lo)
    };
    let top = if near == 0.0 { at_zero } else { f(near).hi };
    Enclosure { lo: f(far).lo, hi: top }
}

/// tanh' = 1 - tanh^2 over `[lo, hi]`.
pub fn tanh_derivative(lo: f64, hi: f64) -> Enclosure {
    even_decreasing(lo, hi, point::tanh_derivative, 1.0, Enclosure { lo: 0.0, hi: 1.0 })
}

/// sigmoid' = s(1 - s) over `[lo, hi]`.
pub fn sigmoid_derivative(lo: f64, hi: f64) -> Enclosure {
    even_decreasing(lo, hi, point::sigmoid_derivative, 0.25, Enclosure { lo: 0.0, hi: 0.25 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sin_and_cos_find_their_extrema() {
        assert_eq!(sin(1.0, 2.0).hi, 1.0);
        assert!(sin(1.0, 2.0).lo < 0.85 && sin(1.0, 2.0).lo > 0.84);
        assert_eq!(sin(4.0, 5.0).lo, -1.0);
        assert_eq!(cos(-0.5, 0.5).hi, 1.0);
        assert_eq!(cos(3.0, 3.2).lo, -1.0);
        assert_eq!(sin(-100.0, 100.0), Enclosure { lo: -1.0, hi: 1.0 });
        let s = sin(0.1, 0.2);
        assert!(s.lo > 0.09 && s.hi < 0.2);
        assert_eq!(sin(f64::NEG_INFINITY, 0.0), Enclosure { lo: -1.0, hi: 1.0 });
    }

    #[test]
    fn tan_refuses_poles() {
        assert_eq!(tan(1.5, 1.6).unwrap_err().kind, ErrorKind::Pole);
        assert_eq!(tan(-1.6, -1.5).unwrap_err().kind, ErrorKind::Pole);
        assert!(tan(-1.5, 1.5).is_ok());
        assert!(tan(1.6, 4.7).is_ok());
        assert_eq!(tan(1.6, 4.8).unwrap_err().kind, ErrorKind::Pole);
        let half_pi = std::f64::consts::FRAC_PI_2; // just below pi/2
        assert!(tan(0.0, half_pi).is_ok());
        assert_eq!(tan(0.0, half_pi.next_up()).unwrap_err().kind, ErrorKind::Pole);
    }

    #[test]
    fn powers_follow_their_monotone_pieces() {
        assert_eq!(powi(-2.0, 3.0, 2).unwrap(), Enclosure { lo: 0.0, hi: 9.0 });
        assert_eq!(powi(-3.0, -2.0, 2).unwrap(), Enclosure { lo: 4.0, hi: 9.0 });
        let c = powi(-2.0, 3.0, 3).unwrap();
        assert!(c.lo <= -8.0 && c.lo >= (-8.0f64).next_down() && c.hi >= 27.0);
        let r = powi(-4.0, -2.0, -2).unwrap();
        assert!(r.contains(1.0 / 16.0) && r.contains(0.25) && r.lo >= 0.0625f64.next_down());
        let r = powi(-4.0, -2.0, -1).unwrap();
        assert_eq!(r, Enclosure { lo: -0.5, hi: -0.25 });
        assert_eq!(powi(-1.0, 1.0, -2).unwrap_err().kind, ErrorKind::OutsideDomain);
        assert_eq!(powi(0.0, 1.0, -1).unwrap_err().kind, ErrorKind::OutsideDomain);
        assert_eq!(powi(-5.0, 5.0, 0).unwrap(), Enclosure::point(1.0));
    }

    #[test]
    fn domain_exits_are_reported_with_the_interval() {
        let e = log(-1.0, 2.0).unwrap_err();
        assert_eq!((e.kind, e.lo, e.hi), (ErrorKind::OutsideDomain, -1.0, 2.0));
        assert_eq!(log(0.0, 2.0).unwrap_err().kind, ErrorKind::OutsideDomain);
        assert!(sqrt(0.0, 2.0).is_ok());
        assert_eq!(sqrt(f64::NAN, 2.0).unwrap_err().kind, ErrorKind::InvalidInterval);
        assert_eq!(log(2.0, 1.0).unwrap_err().kind, ErrorKind::InvalidInterval);
    }

    #[test]
    fn derivatives_peak_at_zero() {
        assert_eq!(tanh_derivative(-1.0, 2.0).hi, 1.0);
        assert_eq!(sigmoid_derivative(-1.0, 2.0).hi, 0.25);
        let d = tanh_derivative(1.0, 2.0);
        let (at1, at2) = (point::tanh_derivative(1.0), point::tanh_derivative(2.0));
        assert_eq!((d.lo, d.hi), (at2.lo, at1.hi));
        let d = sigmoid_derivative(-3.0, -2.0);
        assert_eq!(d.hi, point::sigmoid_derivative(-2.0).hi);
    }

    #[test]
    fn infinite_ends_give_limits() {
        assert_eq!(tanh(f64::NEG_INFINITY, f64::INFINITY), Enclosure { lo: -1.0, hi: 1.0 });
        assert_eq!(exp(f64::NEG_INFINITY, 0.0), Enclosure { lo: 0.0, hi: 1.0 });
        assert_eq!(sigmoid(f64::NEG_INFINITY, f64::INFINITY), Enclosure { lo: 0.0, hi: 1.0 });
        assert_eq!(log(1.0, f64::INFINITY).unwrap().hi, f64::INFINITY);
    }
}
