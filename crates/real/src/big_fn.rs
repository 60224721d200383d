//! The elementary functions on [`BigInterval`]: MPFR's correctly rounded functions, the lower end
//! rounded down and the upper end rounded up, over the monotone pieces and (for sin, cos, tan) the
//! exact quadrant reduction of `quadrant`.

use std::cmp::Ordering;

use rug::Float;
use rug::float::Round;
use rug::ops::PowAssignRound;

use crate::big::BigInterval;
use crate::enclosure::{ErrorKind, RealError};
use crate::quadrant::span_mpfr;

/// `f(x)` rounded in `round`, at precision `prec` (`f` works in place, MPFR style).
fn apply(x: &Float, prec: u32, round: Round, f: fn(&mut Float, Round) -> Ordering) -> Float {
    let mut y = Float::with_val(prec.max(x.prec()), x);
    f(&mut y, round);
    if y.prec() != prec {
        y = Float::with_val_round(prec, &y, round).0;
    }
    y
}

impl BigInterval {
    fn error(&self, function: &'static str, kind: ErrorKind) -> RealError {
        RealError::new(function, self.lo_f64(), self.hi_f64(), kind)
    }

    /// `[f(lo) rounded down, f(hi) rounded up]` for an increasing `f`.
    fn increasing(&self, f: fn(&mut Float, Round) -> Ordering) -> BigInterval {
        let p = self.precision();
        BigInterval::from_ends(apply(&self.lo, p, Round::Down, f), apply(&self.hi, p, Round::Up, f))
    }

    pub fn exp(&self) -> BigInterval {
        self.increasing(Float::exp_round)
    }

    pub fn expm1(&self) -> BigInterval {
        self.increasing(Float::exp_m1_round)
    }

    pub fn tanh(&self) -> BigInterval {
        self.increasing(Float::tanh_round)
    }

    pub fn atan(&self) -> BigInterval {
        self.increasing(Float::atan_round)
    }

    /// ln, for an interval inside `(0, inf]` (an error when it reaches 0 or below).
    pub fn log(&self) -> Result<BigInterval, RealError> {
        if self.lo.cmp0() != Some(Ordering::Greater) {
            return Err(self.error("log", ErrorKind::OutsideDomain));
        }
        Ok(self.increasing(Float::ln_round))
    }

    /// ln(1 + x), for an interval inside `(-1, inf]`.
    pub fn log1p(&self) -> Result<BigInterval, RealError> {
        if self.lo <= -1 {
            return Err(self.error("log1p", ErrorKind::OutsideDomain));
        }
        Ok(self.increasing(Float::ln_1p_round))
    }

    /// √x, for an interval inside `[0, inf]`.
    pub fn sqrt(&self) -> Result<BigInterval, RealError> {
        if self.lo.cmp0() == Some(Ordering::Less) {
            return Err(self.error("sqrt", ErrorKind::OutsideDomain));
        }
        Ok(self.increasing(Float::sqrt_round))
    }

    /// The logistic sigmoid 1 / (1 + e^-x): each end through e^-x, 1 + e^-x and the reciprocal,
    /// every step rounded in the direction that keeps the end outside (1/(1 + e^-x) increases in
    /// x).
    pub fn sigmoid(&self) -> BigInterval {
        let p = self.precision();
        let end = |x: &Float, round: Round| {
            // The end is rounded `round`; e^-x and 1 + e^-x the opposite way (the reciprocal flips).
            let inner = if round == Round::Down { Round::Up } else { Round::Down };
            let mut e = Float::with_val(p.max(x.prec()), -x);
            e.exp_round(inner);
            let den = Float::with_val_round(p, &e + 1u32, inner).0;
            let mut s = Float::with_val_round(p, 1 / &den, round).0;
            if s > 1 {
                s = Float::with_val(p, 1);
            }
            if s.cmp0() == Some(Ordering::Less) {
                s = Float::new(p);
            }
            s
        };
        BigInterval::from_ends(end(&self.lo, Round::Down), end(&self.hi, Round::Up))
    }

    /// Encloses sin or cos from the ends and the extrema between them (see `interval::sin`).
    fn periodic(&self, f: fn(&mut Float, Round) -> Ordering, max_residue: u32, min_residue: u32) -> BigInterval {
        let p = self.precision();
        let whole = || BigInterval::from_ends(Float::with_val(p, -1), Float::with_val(p, 1));
        if !self.lo.is_finite() || !self.hi.is_finite() {
            return whole();
        }
        let (has_max, has_min) = match span_mpfr(&self.lo, &self.hi) {
            Some(span) => match span.crossed_residues() {
                Some(residues) => {
                    let residues: Vec<u32> = residues.collect();
                    (residues.contains(&max_residue), residues.contains(&min_residue))
                }
                None => (true, true),
            },
            None => (true, true),
        };
        let at = |x: &Float| BigInterval::from_ends(apply(x, p, Round::Down, f), apply(x, p, Round::Up, f));
        let ends = at(&self.lo).hull(&at(&self.hi));
        let lo = if has_min { Float::with_val(p, -1) } else { ends.lo.clone() };
        let hi = if has_max { Float::with_val(p, 1) } else { ends.hi.clone() };
        let clamp = |v: Float| v.clamp(&Float::with_val(p, -1), &Float::with_val(p, 1));
        BigInterval::from_ends(clamp(lo), clamp(hi))
    }

    pub fn sin(&self) -> BigInterval {
        self.periodic(Float::sin_round, 1, 3)
    }

    pub fn cos(&self) -> BigInterval {
        self.periodic(Float::cos_round, 0, 2)
    }

    /// tan, for an interval between two consecutive poles (an error when a pole lies inside).
    pub fn tan(&self) -> Result<BigInterval, RealError> {
        if !self.lo.is_finite() || !self.hi.is_finite() {
            return Err(self.error("tan", ErrorKind::Pole));
        }
        let span = span_mpfr(&self.lo, &self.hi).ok_or_else(|| self.error("tan", ErrorKind::Undecided))?;
        let pole = match span.crossed_residues() {
            Some(mut residues) => residues.any(|r| r % 2 == 1),
            None => true,
        };
        if pole {
            return Err(self.error("tan", ErrorKind::Pole));
        }
        Ok(self.increasing(Float::tan_round))
    }

    /// x^n for an integer n by its monotone pieces (x^0 = 1; a negative n on an interval
    /// containing 0 is an error).
    pub fn powi(&self, n: i32) -> Result<BigInterval, RealError> {
        let p = self.precision();
        if n == 0 {
            return Ok(BigInterval::from_ends(Float::with_val(p, 1), Float::with_val(p, 1)));
        }
        let (lo_sign, hi_sign) = (self.lo.cmp0(), self.hi.cmp0());
        let (lo_neg, hi_pos) = (lo_sign == Some(Ordering::Less), hi_sign == Some(Ordering::Greater));
        if n < 0 && lo_sign != Some(Ordering::Greater) && hi_sign != Some(Ordering::Less) {
            return Err(self.error("powi", ErrorKind::OutsideDomain));
        }
        let pow = |x: &Float, round: Round| {
            let mut y = Float::with_val(p.max(x.prec()), x);
            y.pow_assign_round(n, round);
            Float::with_val_round(p, &y, round).0
        };
        let even = n % 2 == 0;
        let nonneg = !lo_neg;
        let nonpos = !hi_pos;
        let increasing = (n > 0 && (!even || nonneg)) || (n < 0 && even && nonpos);
        if increasing {
            return Ok(BigInterval::from_ends(pow(&self.lo, Round::Down), pow(&self.hi, Round::Up)));
        }
        if n > 0 && lo_neg && hi_pos {
            let top = pow(&self.lo, Round::Up).max(&pow(&self.hi, Round::Up)).clone();
            return Ok(BigInterval::from_ends(Float::new(p), top));
        }
        Ok(BigInterval::from_ends(pow(&self.hi, Round::Down), pow(&self.lo, Round::Up)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;
    use num_rational::BigRational;

    fn q(n: i64, d: i64) -> BigRational {
        BigRational::new(BigInt::from(n), BigInt::from(d))
    }

    fn big(lo: f64, hi: f64) -> BigInterval {
        BigInterval::from_f64_ends(lo, hi, 256).unwrap()
    }

    #[test]
    fn known_values_are_enclosed_tightly() {
        let e = big(1.0, 1.0).exp();
        // e = 2.71828182845904523536028747135266249775724709369995...
        let digits = q(271828182845904523, 100000000000000000);
        assert_eq!(e.gt(&digits), Some(true));
        assert_eq!(e.lt(&(digits + q(1, 100000000000000000))), Some(true));
        assert!(e.width_f64() < 1e-70);
        // e^0 = 1, 1 + 1 = 2 and 1/2 are exact: the point 1/2.
        assert_eq!(big(0.0, 0.0).sigmoid().compare(&q(1, 2)), Some(Ordering::Equal));
    }

    #[test]
    fn periodic_functions_see_extrema_and_poles() {
        assert_eq!(big(1.0, 2.0).sin().compare(&q(1, 1)), None);
        assert_eq!(big(1.0, 2.0).sin().hi_f64(), 1.0);
        assert_eq!(big(3.0, 3.5).cos().lo_f64(), -1.0);
        assert_eq!(big(1.5, 1.6).tan().unwrap_err().kind, ErrorKind::Pole);
        assert!(big(-1.5, 1.5).tan().is_ok());
        let huge = big(1e22, 1e22).sin();
        assert_eq!(huge.lt(&q(-85220084976718, 100000000000000)), Some(true));
        assert_eq!(huge.gt(&q(-85220084976719, 100000000000000)), Some(true));
    }

    #[test]
    fn domains_are_enforced() {
        assert_eq!(big(0.0, 1.0).log().unwrap_err().kind, ErrorKind::OutsideDomain);
        assert_eq!(big(-1.0, 1.0).log1p().unwrap_err().kind, ErrorKind::OutsideDomain);
        assert_eq!(big(-1e-300, 1.0).sqrt().unwrap_err().kind, ErrorKind::OutsideDomain);
        assert!(big(0.0, 1.0).sqrt().is_ok());
        assert_eq!(big(-1.0, 1.0).powi(-1).unwrap_err().kind, ErrorKind::OutsideDomain);
        assert_eq!(big(0.0, 1.0).powi(-2).unwrap_err().kind, ErrorKind::OutsideDomain);
    }

    #[test]
    fn powers_follow_their_monotone_pieces() {
        let p = big(-2.0, 3.0).powi(2).unwrap();
        assert_eq!((p.lo_f64(), p.hi_f64()), (0.0, 9.0));
        let p = big(-3.0, -2.0).powi(3).unwrap();
        assert_eq!((p.lo_f64(), p.hi_f64()), (-27.0, -8.0));
        let p = big(-4.0, -2.0).powi(-2).unwrap();
        assert_eq!((p.lo_f64(), p.hi_f64()), (0.0625, 0.25));
        let p = big(2.0, 4.0).powi(-1).unwrap();
        assert_eq!((p.lo_f64(), p.hi_f64()), (0.25, 0.5));
    }

    #[test]
    fn sigmoid_tails_keep_relative_accuracy() {
        let s = big(-700.0, -700.0).sigmoid();
        let relative_width = Float::with_val(64, &s.hi - &s.lo) / &s.lo;
        assert!(s.lo_f64() > 0.0 && relative_width < 1e-70, "{relative_width}");
        let s = big(40.0, 40.0).sigmoid();
        assert_eq!(s.lt(&q(1, 1)), Some(true));
    }
}
