//! Closed f64 intervals with outward rounding; infinite ends allowed for unbounded domains.

use crate::activation::Activation;
use crate::num::{Rational, enclose};
use crate::round::{add_down, add_up, mul_down, mul_up};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    pub const ENTIRE: Interval = Interval { lo: f64::NEG_INFINITY, hi: f64::INFINITY };

    /// An interval from its ends; `lo <= hi` and neither is NaN (checked in debug and by callers).
    pub fn new(lo: f64, hi: f64) -> Interval {
        debug_assert!(lo <= hi, "inverted interval [{lo}, {hi}]");
        Interval { lo, hi }
    }

    pub fn point(x: f64) -> Interval {
        Interval { lo: x, hi: x }
    }

    /// The tightest f64 interval containing the rational.
    pub fn of_rational(q: &Rational) -> Interval {
        let (lo, hi) = enclose(q);
        Interval { lo, hi }
    }

    pub fn width(&self) -> f64 {
        self.hi - self.lo
    }

    pub fn mid(&self) -> f64 {
        // Overflow-safe midpoint; always inside [lo, hi] for finite ends.
        let m = self.lo * 0.5 + self.hi * 0.5;
        m.clamp(self.lo, self.hi)
    }

    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    pub fn is_subset_of(&self, other: &Interval) -> bool {
        other.lo <= self.lo && self.hi <= other.hi
    }

    pub fn is_valid(&self) -> bool {
        !self.lo.is_nan() && !self.hi.is_nan() && self.lo <= self.hi
    }

    pub fn hull(&self, other: &Interval) -> Interval {
        Interval { lo: self.lo.min(other.lo), hi: self.hi.max(other.hi) }
    }

    pub fn intersect(&self, other: &Interval) -> Option<Interval> {
        let lo = self.lo.max(other.lo);
        let hi = self.hi.min(other.hi);
        (lo <= hi).then_some(Interval { lo, hi })
    }

    pub fn add(&self, o: &Interval) -> Interval {
        Interval { lo: add_down(self.lo, o.lo), hi: add_up(self.hi, o.hi) }
    }

    pub fn neg(&self) -> Interval {
        Interval { lo: -self.hi, hi: -self.lo }
    }

    pub fn sub(&self, o: &Interval) -> Interval {
        self.add(&o.neg())
    }

    pub fn mul(&self, o: &Interval) -> Interval {
        let c = [(self.lo, o.lo), (self.lo, o.hi), (self.hi, o.lo), (self.hi, o.hi)];
        let lo = c.iter().map(|&(a, b)| mul_down(a, b)).fold(f64::INFINITY, f64::min);
        let hi = c.iter().map(|&(a, b)| mul_up(a, b)).fold(f64::NEG_INFINITY, f64::max);
        Interval { lo, hi }
    }

    pub fn min(&self, o: &Interval) -> Interval {
        Interval { lo: self.lo.min(o.lo), hi: self.hi.min(o.hi) }
    }

    pub fn max(&self, o: &Interval) -> Interval {
        Interval { lo: self.lo.max(o.lo), hi: self.hi.max(o.hi) }
    }

    pub fn relu(&self) -> Interval {
        Interval { lo: self.lo.max(0.0), hi: self.hi.max(0.0) }
    }

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
    /// Tanh and sigmoid are enclosed by their ranges cut at their value at 0 by the sign of the
    /// interval (`[-1, 1]`, `[0, 1]` or `[-1, 0]` for tanh; `[0, 1]`, `[1/2, 1]` or `[0, 1/2]` for
    /// sigmoid): sound, and loose. Tight enclosures need an elementary-function library with
    /// guaranteed rounding, which the standard library's `tanh` and `exp` are not.
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
            Activation::Tanh => match (self.lo >= 0.0, self.hi <= 0.0) {
                (true, _) => Interval { lo: 0.0, hi: 1.0 },
                (_, true) => Interval { lo: -1.0, hi: 0.0 },
                _ => Interval { lo: -1.0, hi: 1.0 },
            },
            Activation::Sigmoid => match (self.lo >= 0.0, self.hi <= 0.0) {
                (true, _) => Interval { lo: 0.5, hi: 1.0 },
                (_, true) => Interval { lo: 0.0, hi: 0.5 },
                _ => Interval { lo: 0.0, hi: 1.0 },
            },
        }
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
        // The smooth ones: their ranges, by sign.
        assert_eq!(Interval::new(-3.0, 2.0).activate(&Activation::Tanh), Interval::new(-1.0, 1.0));
        assert_eq!(Interval::new(0.0, 2.0).activate(&Activation::Sigmoid), Interval::new(0.5, 1.0));
        assert_eq!(Interval::new(-2.0, -1.0).activate(&Activation::Tanh), Interval::new(-1.0, 0.0));
        assert_eq!(Interval::ENTIRE.activate(&Activation::Clip { lo: -1.0, hi: 6.0 }), Interval::new(-1.0, 6.0));
        let leaky = Interval::ENTIRE.activate(&Activation::LeakyRelu { alpha: 0.5 });
        assert!(leaky.is_valid() && leaky == Interval::ENTIRE);
    }

    #[test]
    fn unbounded_ends_do_not_produce_nan() {
        let z = Interval::point(0.0);
        assert_eq!(z.mul(&Interval::ENTIRE), Interval::point(0.0));
        let s = Interval::ENTIRE.add(&Interval::point(1.0));
        assert!(s.is_valid());
    }
}
