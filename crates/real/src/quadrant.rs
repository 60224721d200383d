//! Exact argument reduction for the interval versions of sin, cos and tan: which quadrant
//! `[k pi/2, (k+1) pi/2)` an end lies in, decided rigorously however large the end is.
//!
//! The quadrant of x is `k = floor(x * 2/pi)`. For |x| < 2^40 an f64 product with the two f64
//! neighbours of 2/pi, rounded outward, brackets `x * 2/pi` within a few ulps, so both floors
//! agree unless x is within ~1e-4 ulps of a multiple of pi/2; then, and for larger |x|, MPFR
//! computes the bracket with pi rounded both ways at a precision covering the exponent of x plus
//! guard bits, doubling it until both floors agree (a Ziv loop; Muller's tables put every f64
//! farther than 2^-62 from a multiple of pi/2, so the first precision decides for every f64).

use rug::float::{Constant, Round};
use rug::{Float, Integer};

use crate::directed::{mul_down, mul_up};

/// The f64 neighbours of 2/pi: `TWO_OVER_PI_LO < 2/pi < TWO_OVER_PI_HI` (checked against MPFR in
/// the tests).
pub(crate) const TWO_OVER_PI_LO: f64 = f64::from_bits(0x3FE4_5F30_6DC9_C882);
pub(crate) const TWO_OVER_PI_HI: f64 = f64::from_bits(0x3FE4_5F30_6DC9_C883);

/// Beyond this magnitude the f64 bracket is wider than one quadrant.
const F64_PATH_LIMIT: f64 = 1_099_511_627_776.0; // 2^40

/// Largest working precision of the MPFR path, in bits beyond the argument's own size.
const MAX_EXTRA_PRECISION: u32 = 1 << 16;

/// The quadrants of the two ends of an interval: `lo`'s index modulo 4 and how many quadrant
/// boundaries lie in `(lo, hi]` (saturating).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub first_mod4: u32,
    pub crossed: u64,
}

impl Span {
    /// The residues modulo 4 of the boundaries crossed, `k pi/2` for `k` in `(q_lo, q_hi]`;
    /// `None` when four or more are crossed (a whole period: every residue).
    pub(crate) fn crossed_residues(&self) -> Option<impl Iterator<Item = u32> + use<>> {
        let first = self.first_mod4;
        (self.crossed < 4).then(|| (1..=self.crossed as u32).map(move |j| (first + j) % 4))
    }
}

/// The quadrant index of a finite f64, when the f64 bracket decides it.
fn quadrant_f64_fast(x: f64) -> Option<i64> {
    if x.abs() >= F64_PATH_LIMIT {
        return None;
    }
    let (t_lo, t_hi) = if x >= 0.0 {
        (mul_down(x, TWO_OVER_PI_LO), mul_up(x, TWO_OVER_PI_HI))
    } else {
        (mul_down(x, TWO_OVER_PI_HI), mul_up(x, TWO_OVER_PI_LO))
    };
    let (k_lo, k_hi) = (t_lo.floor(), t_hi.floor());
    (k_lo == k_hi).then_some(k_lo as i64)
}

/// The quadrant index of a finite MPFR number, or `None` if even the largest precision leaves it
/// undecided.
pub(crate) fn quadrant_mpfr(x: &Float) -> Option<Integer> {
    if x.is_zero() {
        return Some(Integer::new());
    }
    let magnitude = x.get_exp()?.max(0) as u32;
    let base = x.prec() + magnitude + 64;
    let mut prec = base;
    while prec <= base + MAX_EXTRA_PRECISION {
        let pi_lo = Float::with_val_round(prec, Constant::Pi, Round::Down).0;
        let pi_hi = Float::with_val_round(prec, Constant::Pi, Round::Up).0;
        let c_lo = Float::with_val_round(prec, 2 / &pi_hi, Round::Down).0;
        let c_hi = Float::with_val_round(prec, 2 / &pi_lo, Round::Up).0;
        let (lo_factor, hi_factor) = if x.is_sign_positive() { (&c_lo, &c_hi) } else { (&c_hi, &c_lo) };
        let t_lo = Float::with_val_round(prec, x * lo_factor, Round::Down).0;
        let t_hi = Float::with_val_round(prec, x * hi_factor, Round::Up).0;
        let k_lo = t_lo.floor().to_integer()?;
        let k_hi = t_hi.floor().to_integer()?;
        if k_lo == k_hi {
            return Some(k_lo);
        }
        prec *= 2;
    }
    None
}

/// The quadrant span of `[lo, hi]` for finite f64 ends, `lo <= hi`.
pub(crate) fn span_f64(lo: f64, hi: f64) -> Option<Span> {
    if let (Some(a), Some(b)) = (quadrant_f64_fast(lo), quadrant_f64_fast(hi)) {
        return Some(Span { first_mod4: a.rem_euclid(4) as u32, crossed: (b - a) as u64 });
    }
    span_mpfr(&Float::with_val(53, lo), &Float::with_val(53, hi))
}

/// The quadrant of a finite MPFR number: by the f64 path when both its f64 roundings (down and up)
/// lie in one quadrant (the number lies between them, and quadrants are intervals), else by MPFR.
fn quadrant_float(x: &Float) -> Option<Integer> {
    let (down, up) = (x.to_f64_round(Round::Down), x.to_f64_round(Round::Up));
    if let (Some(a), Some(b)) = (quadrant_f64_fast(down), quadrant_f64_fast(up))
        && a == b
    {
        return Some(Integer::from(a));
    }
    quadrant_mpfr(x)
}

/// The quadrant span of `[lo, hi]` for finite MPFR ends, `lo <= hi`.
pub(crate) fn span_mpfr(lo: &Float, hi: &Float) -> Option<Span> {
    let a = quadrant_float(lo)?;
    let b = quadrant_float(hi)?;
    let crossed = Integer::from(&b - &a).to_u64().unwrap_or(u64::MAX);
    Some(Span { first_mod4: a.mod_u(4), crossed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_over_pi_neighbours_bracket_it() {
        let pi = Float::with_val(300, Constant::Pi);
        let c = Float::with_val(300, 2 / &pi);
        assert!(Float::with_val(300, TWO_OVER_PI_LO) < c && c < Float::with_val(300, TWO_OVER_PI_HI));
        assert_eq!(TWO_OVER_PI_LO.next_up(), TWO_OVER_PI_HI);
    }

    #[test]
    fn fast_and_mpfr_paths_agree() {
        let half_pi = std::f64::consts::FRAC_PI_2;
        for x in [0.0, 1.0, half_pi, half_pi.next_down(), -0.5, -1.6, 3.2, 1e6, -123456.789, 7.0e11] {
            let fast = quadrant_f64_fast(x);
            let slow = quadrant_mpfr(&Float::with_val(53, x)).unwrap();
            if let Some(k) = fast {
                assert_eq!(Integer::from(k), slow, "x = {x}");
            }
        }
        // The quadrant boundary pi/2 lies between FRAC_PI_2 (just below it) and the next f64.
        let half_pi = std::f64::consts::FRAC_PI_2;
        assert_eq!(quadrant_mpfr(&Float::with_val(53, half_pi)).unwrap(), 0);
        assert_eq!(quadrant_mpfr(&Float::with_val(53, half_pi.next_up())).unwrap(), 1);
        assert_eq!(span_f64(half_pi, half_pi.next_up()), Some(Span { first_mod4: 0, crossed: 1 }));
    }

    #[test]
    fn huge_arguments_are_reduced_exactly() {
        // sin(1e22) < 0 and cos(1e22) > 0 (known values): quadrant 3 mod 4.
        let k = quadrant_mpfr(&Float::with_val(53, 1e22)).unwrap();
        assert_eq!(k.mod_u(4), 3);
        // Muller's hard case, within 2^-61 of a multiple of pi/2: decided.
        let x = 6381956970095103.0 * 2f64.powi(797);
        assert!(quadrant_mpfr(&Float::with_val(53, x)).is_some());
    }
}
