//! The number domains Taylor coefficients are computed in.
//!
//! The recurrences of [`crate::tape`] are written once over [`Coefficient`]; three domains
//! implement it:
//!
//! - [`Jet`]: an outward-rounded interval with an interval gradient (first-order forward-mode
//!   automatic differentiation). With an empty gradient it is a plain interval: the validated
//!   passes (the Taylor polynomial at the centre, the remainder over the a-priori box) use it so;
//!   with the identity gradient at the initial box it gives the Jacobian of every Taylor
//!   coefficient with respect to the initial state and the held inputs (the mean-value form).
//!   Elementary functions come only from `trestle_real` (through [`Interval`]).
//! - `f64`: round to nearest, the simulator's (never a bound).
//! - [`Big`]: an MPFR float at a fixed precision, round to nearest: the high-precision
//!   non-validated integrator the tests compare the enclosures with (never a bound either).

use rug::Float;
use trestle_ir::Rational;
use trestle_ir::expr::Function;
use trestle_ir::interval::{Interval, RealError};
use trestle_ir::num::to_f64_nearest;
use trestle_ir::round::{div_down, div_up};
use trestle_real::big::rational_to_rug;
use trestle_real::interval as real;

use crate::FlowError;

/// What the Taylor recurrences need of a number domain.
pub trait Coefficient: Clone {
    /// The exact constant `q` in the domain of `self` (same gradient length, same precision).
    fn constant_like(&self, q: &Rational) -> Self;
    fn add(&self, o: &Self) -> Self;
    fn sub(&self, o: &Self) -> Self;
    fn neg(&self) -> Self;
    fn mul(&self, o: &Self) -> Self;
    /// Product with an exact rational.
    fn scale(&self, q: &Rational) -> Self;
    /// Product with `j / k` (`k > 0`), the recurrences' small ratios (without a big rational).
    fn scale_ratio(&self, j: u32, k: u32) -> Self;
    /// Quotient; an error when the divisor may be 0.
    fn div(&self, o: &Self) -> Result<Self, FlowError>;
    /// An elementary function; an error outside its domain.
    fn apply(&self, f: Function) -> Result<Self, FlowError>;
}

fn real_error(e: RealError) -> FlowError {
    FlowError::Domain(e.to_string())
}

/// `1 / x` over an interval that does not contain 0, rounded outward.
pub fn recip(x: Interval) -> Result<Interval, FlowError> {
    if x.lo <= 0.0 && x.hi >= 0.0 || x.lo.is_nan() || x.hi.is_nan() {
        return Err(FlowError::Domain(format!("division by {x}, which contains 0")));
    }
    Ok(Interval { lo: div_down(1.0, x.hi), hi: div_up(1.0, x.lo) })
}

/// The enclosure of an elementary function and of its derivative over an interval.
fn function_and_derivative(f: Function, x: Interval, need_derivative: bool) -> Result<(Interval, Interval), FlowError> {
    let one = Interval::point(1.0);
    Ok(match f {
        Function::Sin => (x.sin(), x.cos()),
        Function::Cos => (x.cos(), x.sin().neg()),
        Function::Exp => {
            let e = x.exp();
            (e, e)
        }
        Function::Tanh => {
            let d = real::tanh_derivative(x.lo, x.hi);
            (x.tanh(), Interval { lo: d.lo, hi: d.hi })
        }
        Function::Sigmoid => {
            let d = real::sigmoid_derivative(x.lo, x.hi);
            (x.sigmoid(), Interval { lo: d.lo, hi: d.hi })
        }
        Function::Log => {
            let l = x.log().map_err(real_error)?;
            (l, if need_derivative { recip(x)? } else { one })
        }
        Function::Sqrt => {
            let r = x.sqrt().map_err(real_error)?;
            (r, if need_derivative { recip(r.add(&r))? } else { one })
        }
        Function::Tan => {
            let t = x.tan().map_err(real_error)?;
            (t, one.add(&t.powi(2).map_err(real_error)?))
        }
    })
}

/// An interval value with an interval gradient (empty for a constant or a plain interval).
#[derive(Clone, Debug, PartialEq)]
pub struct Jet {
    pub value: Interval,
    pub grad: Vec<Interval>,
}

impl Jet {
    pub fn constant(value: Interval) -> Jet {
        Jet { value, grad: Vec::new() }
    }

    /// The `index`-th of `dim` independent variables ranging over `value`.
    pub fn variable(value: Interval, index: usize, dim: usize) -> Jet {
        let mut grad = vec![Interval::point(0.0); dim];
        grad[index] = Interval::point(1.0);
        Jet { value, grad }
    }

    /// The gradient entry `j` (0 for a constant).
    pub fn partial(&self, j: usize) -> Interval {
        self.grad.get(j).copied().unwrap_or(Interval::point(0.0))
    }

    /// `a * self.grad + b * o.grad`, entry by entry, either gradient possibly empty.
    fn combine(&self, a: Interval, o: &Jet, b: Interval) -> Vec<Interval> {
        let n = self.grad.len().max(o.grad.len());
        (0..n)
            .map(|j| match (self.grad.get(j), o.grad.get(j)) {
                (Some(x), Some(y)) => a.mul(x).add(&b.mul(y)),
                (Some(x), None) => a.mul(x),
                (None, Some(y)) => b.mul(y),
                (None, None) => Interval::point(0.0),
            })
            .collect()
    }

    fn chain(&self, value: Interval, derivative: Interval) -> Jet {
        Jet { value, grad: self.grad.iter().map(|g| derivative.mul(g)).collect() }
    }
}

impl Coefficient for Jet {
    fn constant_like(&self, q: &Rational) -> Jet {
        Jet::constant(Interval::of_rational(q))
    }

    fn add(&self, o: &Jet) -> Jet {
        let one = Interval::point(1.0);
        Jet { value: self.value.add(&o.value), grad: self.combine(one, o, one) }
    }

    fn sub(&self, o: &Jet) -> Jet {
        let one = Interval::point(1.0);
        Jet { value: self.value.sub(&o.value), grad: self.combine(one, o, one.neg()) }
    }

    fn neg(&self) -> Jet {
        Jet { value: self.value.neg(), grad: self.grad.iter().map(Interval::neg).collect() }
    }

    fn mul(&self, o: &Jet) -> Jet {
        Jet { value: self.value.mul(&o.value), grad: self.combine(o.value, o, self.value) }
    }

    fn scale(&self, q: &Rational) -> Jet {
        let k = Interval::of_rational(q);
        self.chain(self.value.mul(&k), k)
    }

    fn scale_ratio(&self, j: u32, k: u32) -> Jet {
        let ratio = |x: Interval| {
            let p = x.mul(&Interval::point(f64::from(j)));
            let k = f64::from(k);
            Interval { lo: div_down(p.lo, k), hi: div_up(p.hi, k) }
        };
        Jet { value: ratio(self.value), grad: self.grad.iter().map(|g| ratio(*g)).collect() }
    }

    fn div(&self, o: &Jet) -> Result<Jet, FlowError> {
        let r = recip(o.value)?;
        let value = self.value.mul(&r);
        // (a/b)' = (a' - (a/b) b') / b
        let grad = self.combine(r, o, value.mul(&r).neg());
        Ok(Jet { value, grad })
    }

    fn apply(&self, f: Function) -> Result<Jet, FlowError> {
        let (value, derivative) = function_and_derivative(f, self.value, !self.grad.is_empty())?;
        Ok(self.chain(value, derivative))
    }
}

impl Coefficient for f64 {
    fn constant_like(&self, q: &Rational) -> f64 {
        to_f64_nearest(q)
    }
    fn add(&self, o: &f64) -> f64 {
        self + o
    }
    fn sub(&self, o: &f64) -> f64 {
        self - o
    }
    fn neg(&self) -> f64 {
        -self
    }
    fn mul(&self, o: &f64) -> f64 {
        self * o
    }
    fn scale(&self, q: &Rational) -> f64 {
        self * to_f64_nearest(q)
    }
    fn scale_ratio(&self, j: u32, k: u32) -> f64 {
        self * f64::from(j) / f64::from(k)
    }
    fn div(&self, o: &f64) -> Result<f64, FlowError> {
        if *o == 0.0 {
            return Err(FlowError::Domain("division by 0".into()));
        }
        Ok(self / o)
    }
    fn apply(&self, f: Function) -> Result<f64, FlowError> {
        f.eval_f64(*self).ok_or_else(|| FlowError::Domain(format!("{f}({self}) is undefined")))
    }
}

/// An MPFR float at a fixed precision, round to nearest (see the module doc: not a bound).
#[derive(Clone, Debug, PartialEq)]
pub struct Big(pub Float);

impl Big {
    pub fn new(prec: u32, q: &Rational) -> Big {
        Big(Float::with_val(prec, rational_to_rug(q)))
    }

    fn prec(&self) -> u32 {
        self.0.prec()
    }
}

impl Coefficient for Big {
    fn constant_like(&self, q: &Rational) -> Big {
        Big::new(self.prec(), q)
    }
    fn add(&self, o: &Big) -> Big {
        Big(Float::with_val(self.prec(), &self.0 + &o.0))
    }
    fn sub(&self, o: &Big) -> Big {
        Big(Float::with_val(self.prec(), &self.0 - &o.0))
    }
    fn neg(&self) -> Big {
        Big(Float::with_val(self.prec(), -&self.0))
    }
    fn mul(&self, o: &Big) -> Big {
        Big(Float::with_val(self.prec(), &self.0 * &o.0))
    }
    fn scale(&self, q: &Rational) -> Big {
        Big(Float::with_val(self.prec(), &self.0 * rational_to_rug(q)))
    }
    fn scale_ratio(&self, j: u32, k: u32) -> Big {
        Big(Float::with_val(self.prec(), &self.0 * j) / k)
    }
    fn div(&self, o: &Big) -> Result<Big, FlowError> {
        if o.0.is_zero() {
            return Err(FlowError::Domain("division by 0".into()));
        }
        Ok(Big(Float::with_val(self.prec(), &self.0 / &o.0)))
    }
    fn apply(&self, f: Function) -> Result<Big, FlowError> {
        let p = self.prec();
        let x = &self.0;
        let outside = |what: &str| Err(FlowError::Domain(format!("{f}({}) is undefined: {what}", x.to_f64())));
        Ok(Big(match f {
            Function::Sin => Float::with_val(p, x.sin_ref()),
            Function::Cos => Float::with_val(p, x.cos_ref()),
            Function::Tan => Float::with_val(p, x.tan_ref()),
            Function::Exp => Float::with_val(p, x.exp_ref()),
            Function::Tanh => Float::with_val(p, x.tanh_ref()),
            Function::Sigmoid => {
                let e = Float::with_val(p, (-x.clone()).exp_ref());
                Float::with_val(p, 1 / (e + 1u32))
            }
            Function::Log if x.is_sign_positive() && !x.is_zero() => Float::with_val(p, x.ln_ref()),
            Function::Log => return outside("log needs x > 0"),
            Function::Sqrt if !x.is_sign_negative() || x.is_zero() => Float::with_val(p, x.sqrt_ref()),
            Function::Sqrt => return outside("sqrt needs x >= 0"),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jets_differentiate_products_and_functions() {
        // d/dx sin(x * x) at x in [1, 1] is 2 cos(1).
        let x = Jet::variable(Interval::point(1.0), 0, 1);
        let y = x.mul(&x).apply(Function::Sin).unwrap();
        let d = y.partial(0);
        let exact = 2.0 * 1f64.cos();
        assert!(d.lo <= exact && exact <= d.hi && d.width() < 1e-14, "{d}");
        let q = x.div(&x.add(&x.constant_like(&Rational::from_integer(1.into())))).unwrap();
        // d/dx x/(x+1) = 1/(x+1)^2 = 0.25 at 1.
        assert!(q.partial(0).contains(0.25) && q.partial(0).width() < 1e-15);
        assert!(recip(Interval::new(-1.0, 1.0)).is_err());
        assert!(Jet::constant(Interval::new(-1.0, 1.0)).apply(Function::Log).is_err());
    }
}
