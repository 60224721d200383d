//! Closed f64 intervals with outward rounding; infinite ends allowed for unbounded domains.
//!
//! The elementary functions (`tanh`, `sigmoid`, `exp`, `log`, `sqrt`, `sin`, `cos`, `tan`, `powi`)
//! delegate to `trestle_real::interval`, whose ends are guaranteed (CORE-MATH values widened to
//! cover any faithful rounding, exact argument reduction); the std f64 functions are not used for
//! bounds. Partial functions return a [`RealError`] when the interval reaches outside their domain.

use crate::activation::Activation;
use crate::num::{Rational, enclose};
use crate::round::{add_down, add_up, mul_down, mul_up};

pub use trestle_real::RealError;
use trestle_real::{Enclosure, interval as real};

/// A closed interval `[lo, hi]` of reals with f64 ends, standing for every real between them: every
/// operation returns an interval containing every value of the operation at points of its arguments
/// (ends rounded outward where the exact result is not an f64).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Lower end; `-inf` when unbounded below. `lo <= hi`, never NaN.
    pub lo: f64,
    /// Upper end; `+inf` when unbounded above. `hi >= lo`, never NaN.
    pub hi: f64,
}

impl Interval {
    /// The whole real line `[-inf, +inf]`: the enclosure that says nothing (what
    /// [`crate::Expr::eval_interval`] returns where evaluation fails).
    pub const ENTIRE: Interval = Interval { lo: f64::NEG_INFINITY, hi: f64::INFINITY };

    /// An interval from its ends; `lo <= hi` and neither is NaN (checked in debug and by callers).
    pub fn new(lo: f64, hi: f64) -> Interval {
        debug_assert!(lo <= hi, "inverted interval [{lo}, {hi}]");
        Interval { lo, hi }
    }

    /// The degenerate interval `[x, x]` (exactly the f64 `x`).
    pub fn point(x: f64) -> Interval {
        Interval { lo: x, hi: x }
    }

    /// The tightest f64 interval containing the rational.
    pub fn of_rational(q: &Rational) -> Interval {
        let (lo, hi) = enclose(q);
        Interval { lo, hi }
    }

    /// `hi - lo`, rounded to nearest (a measure for heuristics, not a bound).
    pub fn width(&self) -> f64 {
        self.hi - self.lo
    }

    /// A point inside the interval near its middle (never outside, for finite ends).
    pub fn mid(&self) -> f64 {
        // Overflow-safe midpoint; always inside [lo, hi] for finite ends.
        let m = self.lo * 0.5 + self.hi * 0.5;
        m.clamp(self.lo, self.hi)
    }

    /// Whether `x` lies in the closed interval.
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    /// Whether `self` lies inside `other`.
    pub fn is_subset_of(&self, other: &Interval) -> bool {
        other.lo <= self.lo && self.hi <= other.hi
    }

    /// Whether both ends are numbers and `lo <= hi` (a NaN end or inverted ends are a bug
    /// upstream).
    pub fn is_valid(&self) -> bool {
        !self.lo.is_nan() && !self.hi.is_nan() && self.lo <= self.hi
    }

    /// The smallest interval containing both (their union, filled in).
    pub fn hull(&self, other: &Interval) -> Interval {
        Interval { lo: self.lo.min(other.lo), hi: self.hi.max(other.hi) }
    }

    /// The intersection, or `None` when they are disjoint.
    pub fn intersect(&self, other: &Interval) -> Option<Interval> {
        let lo = self.lo.max(other.lo);
        let hi = self.hi.min(other.hi);
        (lo <= hi).then_some(Interval { lo, hi })
    }

    /// `self + o`, ends rounded outward.
    pub fn add(&self, o: &Interval) -> Interval {
        Interval { lo: add_down(self.lo, o.lo), hi: add_up(self.hi, o.hi) }
    }

    /// `-self` (exact).
    pub fn neg(&self) -> Interval {
        Interval { lo: -self.hi, hi: -self.lo }
    }

    /// `self - o`, ends rounded outward.
    pub fn sub(&self, o: &Interval) -> Interval {
        self.add(&o.neg())
    }

    /// `self * o`: the hull of the four end products, rounded outward; `0 * inf` is 0 (the ends of
    /// an unbounded interval are not values).
    pub fn mul(&self, o: &Interval) -> Interval {
        let c = [(self.lo, o.lo), (self.lo, o.hi), (self.hi, o.lo), (self.hi, o.hi)];
        let lo = c.iter().map(|&(a, b)| mul_down(a, b)).fold(f64::INFINITY, f64::min);
        let hi = c.iter().map(|&(a, b)| mul_up(a, b)).fold(f64::NEG_INFINITY, f64::max);
        Interval { lo, hi }
    }

    /// `min` of a value of each: `[min(lo, o.lo), min(hi, o.hi)]` (exact).
    pub fn min(&self, o: &Interval) -> Interval {
        Interval { lo: self.lo.min(o.lo), hi: self.hi.min(o.hi) }
    }

    /// `max` of a value of each: `[max(lo, o.lo), max(hi, o.hi)]` (exact).
    pub fn max(&self, o: &Interval) -> Interval {
        Interval { lo: self.lo.max(o.lo), hi: self.hi.max(o.hi) }
    }

    /// `max(x, 0)` over the interval (exact).
    pub fn relu(&self) -> Interval {
        Interval { lo: self.lo.max(0.0), hi: self.hi.max(0.0) }
    }

    /// `|x|` over the interval (exact).
    pub fn abs(&self) -> Interval {
        if self.lo >= 0.0 {
            *self
        } else if self.hi <= 0.0 {
            self.neg()
        } else {
            Interval { lo: 0.0, hi: (-self.lo).max(self.hi) }
        }
    }

    /// An enclosure of `act(z)` for every `z` in the interval. The piecewise-linear activations
    /// exactly: ReLU and clip take their bounds (exact f64 operations), leaky ReLU is the hull of
    /// the images of its two pieces (the negative part times `alpha` rounded outward, which also
    /// covers the non-monotone `alpha < 0`).
    ///
    /// Tanh and sigmoid by their rigorous interval versions ([`Interval::tanh`],
    /// [`Interval::sigmoid`]: guaranteed ends, never the standard library's `tanh` or `exp`).
    pub fn activate(&self, act: &Activation) -> Interval {
        match *act {
            Activation::Identity => *self,
            Activation::Relu => self.relu(),
            Activation::LeakyRelu { alpha } => {
                let mut out: Option<Interval> = None;
                if self.hi >= 0.0 {
                    out = Some(Interval { lo: self.lo.max(0.0), hi: self.hi });
                }
                if self.lo < 0.0 {
                    let negative = Interval { lo: self.lo, hi: self.hi.min(0.0) }.mul(&Interval::point(alpha));
                    out = Some(out.map_or(negative, |o| o.hull(&negative)));
                }
                out.unwrap_or(*self) // only for a NaN end, which callers never pass
            }
            Activation::Clip { lo, hi } => Interval { lo: self.lo.max(lo).min(hi), hi: self.hi.max(lo).min(hi) },
            Activation::Tanh => self.tanh(),
            Activation::Sigmoid => self.sigmoid(),
        }
    }
}

/// The elementary functions over an interval: every value of the function at a point of the
/// interval lies inside the result. A total function given an invalid interval (a NaN end) returns
/// its whole range.
impl Interval {
    fn of(e: Enclosure) -> Interval {
        Interval { lo: e.lo, hi: e.hi }
    }

    /// tanh x, inside `[-1, 1]`.
    pub fn tanh(&self) -> Interval {
        Interval::of(real::tanh(self.lo, self.hi))
    }

    /// The logistic sigmoid 1 / (1 + e^-x).
    pub fn sigmoid(&self) -> Interval {
        Interval::of(real::sigmoid(self.lo, self.hi))
    }

    /// e^x (an upper end may overflow to `+inf`).
    pub fn exp(&self) -> Interval {
        Interval::of(real::exp(self.lo, self.hi))
    }

    /// sin x (radians), inside `[-1, 1]`.
    pub fn sin(&self) -> Interval {
        Interval::of(real::sin(self.lo, self.hi))
    }

    /// cos x (radians), inside `[-1, 1]`.
    pub fn cos(&self) -> Interval {
        Interval::of(real::cos(self.lo, self.hi))
    }

    /// ln x; an error ([`trestle_real::ErrorKind::OutsideDomain`]) when the interval reaches 0 or
    /// below.
    pub fn log(&self) -> Result<Interval, RealError> {
        real::log(self.lo, self.hi).map(Interval::of)
    }

    /// √x; an error when the interval reaches below 0.
    pub fn sqrt(&self) -> Result<Interval, RealError> {
        real::sqrt(self.lo, self.hi).map(Interval::of)
    }

    /// tan x; an error ([`trestle_real::ErrorKind::Pole`]) when the interval contains a pole.
    pub fn tan(&self) -> Result<Interval, RealError> {
        real::tan(self.lo, self.hi).map(Interval::of)
    }

    /// x^n (x^0 = 1); an error when n < 0 and the interval contains 0.
    pub fn powi(&self, n: i32) -> Result<Interval, RealError> {
        real::powi(self.lo, self.hi, n).map(Interval::of)
    }
}

impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}, {}]", self.lo, self.hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::num::{parse_rational, rational_from_f64};

    #[test]
    fn products_enclose_exact_values() {
        let c = Interval::of_rational(&parse_rational("0.1").unwrap());
        let a = Interval::new(-3.0, 7.5);
        let p = c.mul(&a);
        let exact_hi = parse_rational("0.75").unwrap();
        assert!(rational_from_f64(p.hi) >= exact_hi);
        assert!(rational_from_f64(p.lo) <= parse_rational("-0.3").unwrap());
    }

    #[test]
    fn activation_images_enclose_sampled_values() {
        use crate::num::rational_from_f64;
        use crate::{Arith, Rational};
        let acts = [
            Activation::Identity,
            Activation::Relu,
            Activation::LeakyRelu { alpha: 0.1 },
            Activation::LeakyRelu { alpha: -0.7 },
            Activation::LeakyRelu { alpha: 2.5 },
            Activation::Clip { lo: -1.0, hi: 0.75 },
            Activation::Clip { lo: f64::NEG_INFINITY, hi: 0.75 },
            Activation::Clip { lo: -0.5, hi: f64::INFINITY },
        ];
        let ends: Vec<f64> = (-12..=12).map(|k| f64::from(k) * 0.3).collect();
        for act in acts {
            for (i, &lo) in ends.iter().enumerate() {
                for &hi in &ends[i..] {
                    let image = Interval::new(lo, hi).activate(&act);
                    let (l, h) = (rational_from_f64(image.lo), rational_from_f64(image.hi));
                    for k in 0..=20 {
                        // Exact points of [lo, hi], their image exactly.
                        let z = rational_from_f64(lo)
                            + (rational_from_f64(hi) - rational_from_f64(lo)) * Rational::new(k.into(), 20.into());
                        let y = z.activate(&act).unwrap();
                        assert!(l <= y && y <= h, "{act} on [{lo}, {hi}]: {y} outside {image}");
                    }
                    // Monotone and exact (no product): the image is the ends' images.
                    if !matches!(act, Activation::LeakyRelu { .. }) {
                        assert_eq!(image, Interval::new(act.apply_f64(lo), act.apply_f64(hi)), "{act}");
                    }
                }
            }
        }
        // The smooth ones: the rigorous enclosures.
        let x = Interval::new(-3.0, 2.0);
        assert_eq!(x.activate(&Activation::Tanh), x.tanh());
        assert_eq!(x.activate(&Activation::Sigmoid), x.sigmoid());
        assert!(x.activate(&Activation::Tanh).hi < 0.97 && x.activate(&Activation::Sigmoid).lo > 0.04);
        assert_eq!(Interval::ENTIRE.activate(&Activation::Clip { lo: -1.0, hi: 6.0 }), Interval::new(-1.0, 6.0));
        let leaky = Interval::ENTIRE.activate(&Activation::LeakyRelu { alpha: 0.5 });
        assert!(leaky.is_valid() && leaky == Interval::ENTIRE);
    }

    #[test]
    fn elementary_functions_enclose_their_values() {
        let x = Interval::new(-1.0, 2.0);
        let t = x.tanh();
        assert!(t.lo <= -0.7615941559557649 && 0.9640275800758169 <= t.hi && t.hi < 0.9640275800758171);
        assert_eq!(x.sin().hi, 1.0);
        assert_eq!(x.cos().hi, 1.0);
        // e^-1 = 0.367879441171442321595..., between these two neighbouring f64.
        let (below, above): (f64, f64) = (0.3678794411714423, 0.36787944117144233);
        assert_eq!(below.next_up(), above);
        assert!(x.exp().lo <= below && x.exp().lo >= below.next_down() && x.exp().hi >= above);
        assert_eq!(x.sigmoid().lo, trestle_real::point::sigmoid(-1.0).lo);
        assert_eq!(x.powi(2).unwrap(), Interval::new(0.0, 4.0));
        assert_eq!(x.log().unwrap_err().kind, trestle_real::ErrorKind::OutsideDomain);
        assert_eq!(x.sqrt().unwrap_err().kind, trestle_real::ErrorKind::OutsideDomain);
        assert_eq!(Interval::new(1.0, 2.0).tan().unwrap_err().kind, trestle_real::ErrorKind::Pole);
        assert_eq!(Interval::new(4.0, 9.0).sqrt().unwrap(), Interval::new(2.0, 3.0));
        assert_eq!(Interval::ENTIRE.tanh(), Interval::new(-1.0, 1.0));
        assert_eq!(x.powi(-1).unwrap_err().kind, trestle_real::ErrorKind::OutsideDomain);
    }

    #[test]
    fn unbounded_ends_do_not_produce_nan() {
        let z = Interval::point(0.0);
        assert_eq!(z.mul(&Interval::ENTIRE), Interval::point(0.0));
        let s = Interval::ENTIRE.add(&Interval::point(1.0));
        assert!(s.is_valid());
    }
}
