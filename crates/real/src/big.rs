//! `BigInterval`: an interval with MPFR ends at a chosen precision, for validated replay.
//!
//! Every operation rounds its lower end down and its upper end up (MPFR rounds each operation
//! correctly in the direction asked), so the exact result of the same operations on any reals of
//! the arguments lies inside. Ends are never NaN and `lo <= hi`; they may be infinite (an exp that
//! leaves MPFR's exponent range, a division by an interval reaching 0 is refused instead).
//!
//! Exact rationals (the IR's `num_rational::BigRational`) go in enclosed (one ulp at the precision
//! asked, or exactly when representable) and the ends come out as exact rationals, so a replay can
//! be re-checked elsewhere.

use std::cmp::Ordering;

use num_bigint::{BigInt, BigUint, Sign};
use num_rational::BigRational;
use rug::float::Round;
use rug::integer::Order;
use rug::{Float, Integer, Rational};

use crate::enclosure::{ErrorKind, RealError};

/// A closed interval with MPFR ends. See the module doc.
#[derive(Clone, Debug, PartialEq)]
pub struct BigInterval {
    pub(crate) lo: Float,
    pub(crate) hi: Float,
}

/// The exact rug integer of a num integer.
pub fn integer_to_rug(n: &BigInt) -> Integer {
    let (sign, digits) = n.to_u64_digits();
    let magnitude = Integer::from_digits(&digits, Order::Lsf);
    if sign == Sign::Minus { -magnitude } else { magnitude }
}

/// The exact num integer of a rug integer.
pub fn integer_from_rug(n: &Integer) -> BigInt {
    let magnitude = BigUint::new(n.to_digits::<u32>(Order::Lsf));
    let sign = match n.cmp0() {
        Ordering::Less => Sign::Minus,
        Ordering::Equal => Sign::NoSign,
        Ordering::Greater => Sign::Plus,
    };
    BigInt::from_biguint(sign, magnitude)
}

/// The exact rug rational of a num rational.
pub fn rational_to_rug(q: &BigRational) -> Rational {
    Rational::from((integer_to_rug(q.numer()), integer_to_rug(q.denom())))
}

/// The exact num rational of a rug rational.
pub fn rational_from_rug(q: &Rational) -> BigRational {
    BigRational::new(integer_from_rug(q.numer()), integer_from_rug(q.denom()))
}

/// The smallest precision MPFR accepts is 1 bit; this crate asks for at least 53 (an f64 then
/// converts exactly).
pub const MIN_PRECISION: u32 = 53;

impl BigInterval {
    /// The tightest interval at `prec` bits containing `q` (a point when `q` is representable).
    pub fn from_rational(q: &BigRational, prec: u32) -> BigInterval {
        let prec = prec.max(MIN_PRECISION);
        let q = rational_to_rug(q);
        let lo = Float::with_val_round(prec, &q, Round::Down).0;
        let hi = Float::with_val_round(prec, &q, Round::Up).0;
        BigInterval { lo, hi }
    }

    /// The exact value of a finite f64, or an error for NaN / infinities.
    pub fn from_f64(x: f64, prec: u32) -> Result<BigInterval, RealError> {
        BigInterval::from_f64_ends(x, x, prec)
    }

    /// `[lo, hi]` from f64 ends (exact: prec >= 53); infinite ends are allowed, NaN or `lo > hi`
    /// are an error.
    pub fn from_f64_ends(lo: f64, hi: f64, prec: u32) -> Result<BigInterval, RealError> {
        if lo.is_nan() || hi.is_nan() || lo > hi || lo == f64::INFINITY || hi == f64::NEG_INFINITY {
            return Err(RealError::new("interval", lo, hi, ErrorKind::InvalidInterval));
        }
        let prec = prec.max(MIN_PRECISION);
        Ok(BigInterval { lo: Float::with_val(prec, lo), hi: Float::with_val(prec, hi) })
    }

    /// `[lo, hi]` from exact rational ends, each rounded outward; an error when `lo > hi`.
    pub fn from_rational_ends(lo: &BigRational, hi: &BigRational, prec: u32) -> Result<BigInterval, RealError> {
        let (a, b) = (BigInterval::from_rational(lo, prec), BigInterval::from_rational(hi, prec));
        if lo > hi {
            return Err(RealError::new("interval", a.lo_f64(), b.hi_f64(), ErrorKind::InvalidInterval));
        }
        Ok(BigInterval { lo: a.lo, hi: b.hi })
    }

    /// Builds from MPFR ends already rounded outward (crate-internal: callers guarantee order).
    pub(crate) fn from_ends(lo: Float, hi: Float) -> BigInterval {
        debug_assert!(!lo.is_nan() && !hi.is_nan() && lo <= hi, "inverted interval");
        BigInterval { lo, hi }
    }

    /// The working precision: the larger of the two ends'.
    pub fn precision(&self) -> u32 {
        self.lo.prec().max(self.hi.prec())
    }

    pub fn lo(&self) -> &Float {
        &self.lo
    }

    pub fn hi(&self) -> &Float {
        &self.hi
    }

    /// The lower end rounded down to f64 (for messages and f64 engines).
    pub fn lo_f64(&self) -> f64 {
        self.lo.to_f64_round(Round::Down)
    }

    /// The upper end rounded up to f64.
    pub fn hi_f64(&self) -> f64 {
        self.hi.to_f64_round(Round::Up)
    }

    /// An upper bound of the width, as f64 (infinite for an unbounded interval).
    pub fn width_f64(&self) -> f64 {
        Float::with_val_round(self.precision(), &self.hi - &self.lo, Round::Up).0.to_f64_round(Round::Up)
    }

    /// The midpoint, rounded to nearest f64 (for messages; not a bound).
    pub fn mid_f64(&self) -> f64 {
        if !self.lo.is_finite() || !self.hi.is_finite() {
            return if self.lo.is_finite() { self.hi_f64() } else { self.lo_f64() };
        }
        let sum = Float::with_val(self.precision() + 1, &self.lo + &self.hi);
        (sum / 2u32).to_f64()
    }

    /// The exact rational ends, `None` for an infinite end.
    pub fn to_rationals(&self) -> (Option<BigRational>, Option<BigRational>) {
        let exact = |f: &Float| f.to_rational().map(|q| rational_from_rug(&q));
        (exact(&self.lo), exact(&self.hi))
    }

    /// Whether the exact rational lies inside.
    pub fn contains_rational(&self, q: &BigRational) -> bool {
        let q = rational_to_rug(q);
        self.lo <= q && self.hi >= q
    }

    /// Where the enclosed value lies relative to `q`: `Less` when the whole interval is strictly
    /// below, `Greater` when strictly above, `Equal` when the interval is the single point `q`;
    /// `None` when it straddles or touches `q` (more precision may decide).
    pub fn compare(&self, q: &BigRational) -> Option<Ordering> {
        let q = rational_to_rug(q);
        if self.hi < q {
            Some(Ordering::Less)
        } else if self.lo > q {
            Some(Ordering::Greater)
        } else if self.lo == q && self.hi == q {
            Some(Ordering::Equal)
        } else {
            None
        }
    }

    /// Whether the enclosed value is `< q`: `Some` only when the interval decides it.
    pub fn lt(&self, q: &BigRational) -> Option<bool> {
        self.compare(q).map(|o| o == Ordering::Less)
    }

    /// Whether the enclosed value is `<= q`.
    pub fn le(&self, q: &BigRational) -> Option<bool> {
        self.compare(q).map(|o| o != Ordering::Greater)
    }

    /// Whether the enclosed value is `> q`.
    pub fn gt(&self, q: &BigRational) -> Option<bool> {
        self.compare(q).map(|o| o == Ordering::Greater)
    }

    /// Whether the enclosed value is `>= q`.
    pub fn ge(&self, q: &BigRational) -> Option<bool> {
        self.compare(q).map(|o| o != Ordering::Less)
    }

    /// The smallest interval containing both.
    pub fn hull(&self, other: &BigInterval) -> BigInterval {
        let lo = if self.lo <= other.lo { self.lo.clone() } else { other.lo.clone() };
        let hi = if self.hi >= other.hi { self.hi.clone() } else { other.hi.clone() };
        BigInterval { lo, hi }
    }

    pub fn neg(&self) -> BigInterval {
        BigInterval { lo: Float::with_val(self.hi.prec(), -&self.hi), hi: Float::with_val(self.lo.prec(), -&self.lo) }
    }

    pub fn add(&self, o: &BigInterval) -> BigInterval {
        let p = self.precision().max(o.precision());
        BigInterval {
            lo: Float::with_val_round(p, &self.lo + &o.lo, Round::Down).0,
            hi: Float::with_val_round(p, &self.hi + &o.hi, Round::Up).0,
        }
    }

    pub fn sub(&self, o: &BigInterval) -> BigInterval {
        let p = self.precision().max(o.precision());
        BigInterval {
            lo: Float::with_val_round(p, &self.lo - &o.hi, Round::Down).0,
            hi: Float::with_val_round(p, &self.hi - &o.lo, Round::Up).0,
        }
    }

    pub fn mul(&self, o: &BigInterval) -> BigInterval {
        let p = self.precision().max(o.precision());
        let ends = [(&self.lo, &o.lo), (&self.lo, &o.hi), (&self.hi, &o.lo), (&self.hi, &o.hi)];
        // 0 * inf is 0 here (the interval convention): a zero end contributes the product 0.
        let product = |a: &Float, b: &Float, round: Round| {
            if a.is_zero() || b.is_zero() { Float::new(p) } else { Float::with_val_round(p, a * b, round).0 }
        };
        let mut lo = product(ends[0].0, ends[0].1, Round::Down);
        let mut hi = product(ends[0].0, ends[0].1, Round::Up);
        for &(a, b) in &ends[1..] {
            let l = product(a, b, Round::Down);
            if l < lo {
                lo = l;
            }
            let h = product(a, b, Round::Up);
            if h > hi {
                hi = h;
            }
        }
        BigInterval { lo, hi }
    }

    /// Division by an interval that does not contain 0 (an error otherwise).
    pub fn div(&self, o: &BigInterval) -> Result<BigInterval, RealError> {
        if o.lo.cmp0() != Some(Ordering::Greater) && o.hi.cmp0() != Some(Ordering::Less) {
            return Err(RealError::new("division", o.lo_f64(), o.hi_f64(), ErrorKind::DivisionByZero));
        }
        let p = self.precision().max(o.precision());
        let recip = BigInterval {
            lo: Float::with_val_round(p, 1 / &o.hi, Round::Down).0,
            hi: Float::with_val_round(p, 1 / &o.lo, Round::Up).0,
        };
        Ok(self.mul(&recip))
    }

    /// The same interval at another precision, rounded outward.
    pub fn with_precision(&self, prec: u32) -> BigInterval {
        let prec = prec.max(MIN_PRECISION);
        BigInterval {
            lo: Float::with_val_round(prec, &self.lo, Round::Down).0,
            hi: Float::with_val_round(prec, &self.hi, Round::Up).0,
        }
    }
}

impl std::fmt::Display for BigInterval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{:e}, {:e}]", self.lo_f64(), self.hi_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_traits::{One, Zero};

    fn q(n: i64, d: i64) -> BigRational {
        BigRational::new(BigInt::from(n), BigInt::from(d))
    }

    #[test]
    fn rationals_convert_both_ways_exactly() {
        for (n, d) in [(1, 3), (-7, 10), (0, 1), (i64::MAX, 3), (-(1 << 62), 5)] {
            let r = q(n, d);
            assert_eq!(rational_from_rug(&rational_to_rug(&r)), r);
        }
        let big = BigInt::from(3).pow(200u32) * BigInt::from(-1);
        assert_eq!(integer_from_rug(&integer_to_rug(&big)), big);
    }

    #[test]
    fn rationals_are_enclosed() {
        let third = q(1, 3);
        let x = BigInterval::from_rational(&third, 256);
        assert!(x.contains_rational(&third));
        let (lo, hi) = x.to_rationals();
        let (lo, hi) = (lo.unwrap(), hi.unwrap());
        assert!(lo < third && third < hi);
        assert!(&hi - &lo < q(1, 1) / BigRational::from_integer(BigInt::from(2).pow(250u32)));
        let exact = BigInterval::from_rational(&q(3, 8), 64);
        assert_eq!(exact.compare(&q(3, 8)), Some(Ordering::Equal));
    }

    #[test]
    fn comparisons_decide_only_strict_sides() {
        let x = BigInterval::from_rational_ends(&q(1, 3), &q(1, 2), 128).unwrap();
        assert_eq!(x.lt(&q(1, 1)), Some(true));
        assert_eq!(x.gt(&q(0, 1)), Some(true));
        assert_eq!(x.lt(&q(2, 5)), None);
        assert_eq!(x.le(&q(1, 2)), None);
        assert_eq!(x.compare(&q(-1, 1)), Some(Ordering::Greater));
        assert_eq!(x.ge(&q(1, 1)), Some(false));
    }

    #[test]
    fn arithmetic_encloses_exact_results() {
        let a = BigInterval::from_rational(&q(1, 3), 100);
        let b = BigInterval::from_rational(&q(-2, 7), 100);
        assert!(a.add(&b).contains_rational(&(q(1, 3) + q(-2, 7))));
        assert!(a.sub(&b).contains_rational(&(q(1, 3) - q(-2, 7))));
        assert!(a.mul(&b).contains_rational(&(q(1, 3) * q(-2, 7))));
        assert!(a.div(&b).unwrap().contains_rational(&(q(1, 3) / q(-2, 7))));
        let across = BigInterval::from_rational_ends(&q(-1, 1), &q(1, 1), 100).unwrap();
        assert_eq!(a.div(&across).unwrap_err().kind, ErrorKind::DivisionByZero);
        let zero = BigInterval::from_rational(&BigRational::zero(), 100);
        assert_eq!(a.div(&zero).unwrap_err().kind, ErrorKind::DivisionByZero);
        let m = across.mul(&a);
        assert!(m.contains_rational(&q(1, 3)) && m.contains_rational(&q(-1, 3)));
        let one = BigInterval::from_rational(&BigRational::one(), 100);
        assert_eq!(one.neg().compare(&q(-1, 1)), Some(Ordering::Equal));
    }

    #[test]
    fn invalid_ends_are_refused() {
        assert!(BigInterval::from_f64(f64::NAN, 64).is_err());
        assert!(BigInterval::from_f64_ends(2.0, 1.0, 64).is_err());
        assert!(BigInterval::from_rational_ends(&q(1, 2), &q(1, 3), 64).is_err());
        assert!(BigInterval::from_f64_ends(f64::NEG_INFINITY, 0.0, 64).is_ok());
    }
}
