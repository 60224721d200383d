//! The arithmetic every evaluator of the IR is written over.
//!
//! Expressions, predicates and networks are evaluated once, generically ([`crate::Expr::eval`],
//! [`crate::Pred::eval`], [`crate::Network::run`]), over an [`Arith`]:
//!
//! - [`Rational`]: exact; what every verdict and replay rests on;
//! - `f64`: round to nearest; simulation and search heuristics only, never a verdict;
//! - [`Interval`]: outward-rounded enclosures over a box; comparisons may be undecided, and then
//!   both branches of an `if` are joined;
//! - [`crate::enclosed::Enclosed`]: exact rationals while the values stay rational, MPFR
//!   enclosures at a fixed precision past an elementary function (validated replay);
//! - dual numbers (the synthesis crate's gradient attack) implement it too.
//!
//! What differs between them is only here: how a constant enters, how each operation rounds, how
//! a comparison is decided, which entries a `lookup` index may select, and how a layer's
//! activation is applied ([`Arith::activate`]: exactly, in f64, or enclosed; the exact domain has
//! no value for tanh and sigmoid and says so).

use crate::exact_affine;
pub use crate::exact_affine::Scaled;
use crate::expr::{EvalError, Function};
use crate::interval::Interval;
use crate::network::{Activation, Matrix};
use crate::num::{Rational, display_rational, is_integer, to_f64_nearest};
use crate::pred::CmpOp;
use num_traits::{Signed, ToPrimitive, Zero};
use std::ops::RangeInclusive;

/// The operations of the IR's piecewise-linear expressions in one number domain.
pub trait Arith: Clone {
    /// An exact constant of the model, as this domain represents it (nearest f64, exact, or an
    /// outward-rounded enclosure).
    fn constant(q: &Rational) -> Self;
    /// A float of the model (a weight): exactly the dyadic rational it is, as this domain
    /// represents that.
    fn of_f64(x: f64) -> Self {
        Self::constant(&crate::num::rational_from_f64(x))
    }
    /// `-self` (exact in every domain: negation never rounds).
    fn neg(&self) -> Self;
    /// `self + o`, rounded as the domain rounds (outward for enclosures).
    fn add(&self, o: &Self) -> Self;
    /// `self - o`, rounded as the domain rounds.
    fn sub(&self, o: &Self) -> Self;
    /// `self * o`, rounded as the domain rounds.
    fn mul(&self, o: &Self) -> Self;
    /// Division by a non-zero exact constant.
    fn div_const(&self, k: &Rational) -> Self;
    /// `min(self, o)`; for enclosures, an enclosure of the minimum of any two values they hold.
    fn min(&self, o: &Self) -> Self;
    /// `max(self, o)`; for enclosures, an enclosure of the maximum.
    fn max(&self, o: &Self) -> Self;
    /// `max(self, 0)`.
    fn relu(&self) -> Self;
    /// `|self|`.
    fn abs(&self) -> Self;
    /// `self op o`: `Some` when it has one truth value over everything `self` and `o` stand
    /// for (always, for point domains), `None` when undecided (intervals).
    fn compare(&self, op: CmpOp, o: &Self) -> Option<bool>;
    /// A value covering both (an `if` whose condition is undecided). Point domains never need
    /// it: their conditions are always decided.
    fn join(&self, o: &Self) -> Self;
    /// The entries of a table of `len` entries this index may select.
    fn lookup(&self, len: usize) -> Result<RangeInclusive<usize>, EvalError>;
    /// A layer's activation applied to this value, or `None` when this domain cannot represent
    /// the result (exact rationals for tanh and sigmoid, whose values are irrational).
    fn activate(&self, act: &Activation) -> Option<Self>;
    /// An elementary function: [`EvalError::Irrational`] where the domain holds only exact values,
    /// [`EvalError::OutsideDomain`] where the argument reaches outside the function's domain.
    /// Arithmetics without elementary functions keep the default, which says so.
    fn apply(&self, f: Function) -> Result<Self, EvalError> {
        Err(EvalError::Unsupported { function: f, arithmetic: std::any::type_name::<Self>() })
    }
    /// `self^n` (`x^0 = 1`). The default multiplies by squaring, sound in any arithmetic whose
    /// products are; interval domains override it with the tight even-power rule.
    fn pow(&self, n: u32) -> Self {
        let mut result = Self::constant(&Rational::from_integer(1.into()));
        let mut base = self.clone();
        let mut k = n;
        while k > 0 {
            if k & 1 == 1 {
                result = result.mul(&base);
            }
            k >>= 1;
            if k > 0 {
                base = base.mul(&base);
            }
        }
        result
    }
}

/// The piecewise-linear activations in a point domain whose comparisons are always decided:
/// the two-piece definitions (see [`Activation`]), infinite clip bounds leaving that side open.
/// `None` for the smooth ones.
pub fn activate_piecewise<A: Arith>(z: &A, act: &Activation) -> Option<A> {
    let zero = || A::constant(&Rational::zero());
    Some(match *act {
        Activation::Identity => z.clone(),
        Activation::Relu => z.relu(),
        Activation::LeakyRelu { alpha } => {
            if z.compare(CmpOp::Ge, &zero()).unwrap_or(true) {
                z.clone()
            } else {
                z.mul(&A::of_f64(alpha))
            }
        }
        Activation::Clip { lo, hi } => {
            let mut y = z.clone();
            if lo.is_finite() {
                y = y.max(&A::of_f64(lo));
            }
            if hi.is_finite() {
                y = y.min(&A::of_f64(hi));
            }
            y
        }
        Activation::Tanh | Activation::Sigmoid => return None,
    })
}

/// The arithmetic of a network's layers: values between layers may take another form than a
/// vector of numbers (the exact pass keeps one common denominator per layer).
pub trait LayerArith: Arith {
    /// The values between layers (a vector of numbers, or a form a kernel computes faster with).
    type Values;
    /// Values from a vector of numbers (a network's input, a hidden state).
    fn load(xs: &[Self]) -> Self::Values;
    /// Values back as a vector of numbers, exact (no rounding).
    fn unload(v: &Self::Values) -> Vec<Self>;
    /// `act(W x + b + R h)`, the recurrent term when `rec = Some((R, h))`; `None` when the
    /// domain cannot represent the activation's values ([`Arith::activate`]).
    fn affine(
        w: &Matrix,
        x: &Self::Values,
        b: &[f64],
        act: Activation,
        rec: Option<(&Matrix, &Self::Values)>,
    ) -> Option<Self::Values>;
}

/// `act(W x + b + R h)` term by term in any arithmetic: the reference form, for domains with no
/// faster kernel (dual numbers, intervals).
pub fn affine_terms<A: Arith>(
    w: &Matrix,
    x: &[A],
    b: &[f64],
    act: Activation,
    rec: Option<(&Matrix, &[A])>,
) -> Option<Vec<A>> {
    let weight = A::of_f64;
    (0..w.rows)
        .map(|i| {
            let mut acc = w.row(i).iter().zip(x).fold(weight(b[i]), |acc, (&wij, xj)| acc.add(&xj.mul(&weight(wij))));
            if let Some((r, h)) = rec {
                acc = r.row(i).iter().zip(h).fold(acc, |acc, (&rij, hj)| acc.add(&hj.mul(&weight(rij))));
            }
            acc.activate(&act)
        })
        .collect()
}

impl Arith for Rational {
    fn constant(q: &Rational) -> Rational {
        q.clone()
    }
    fn neg(&self) -> Rational {
        -self
    }
    fn add(&self, o: &Rational) -> Rational {
        self + o
    }
    fn sub(&self, o: &Rational) -> Rational {
        self - o
    }
    fn mul(&self, o: &Rational) -> Rational {
        self * o
    }
    fn div_const(&self, k: &Rational) -> Rational {
        self / k
    }
    fn min(&self, o: &Rational) -> Rational {
        Ord::min(self, o).clone()
    }
    fn max(&self, o: &Rational) -> Rational {
        Ord::max(self, o).clone()
    }
    fn relu(&self) -> Rational {
        Ord::max(self.clone(), Rational::zero())
    }
    fn abs(&self) -> Rational {
        Signed::abs(self)
    }
    fn compare(&self, op: CmpOp, o: &Rational) -> Option<bool> {
        Some(op.holds(self, o))
    }
    fn join(&self, _: &Rational) -> Rational {
        self.clone()
    }
    fn lookup(&self, len: usize) -> Result<RangeInclusive<usize>, EvalError> {
        let bad = || EvalError::LookupIndex { index: display_rational(self), len };
        if !is_integer(self) || self.is_negative() {
            return Err(bad());
        }
        let k = self.to_integer().to_usize().ok_or_else(bad)?;
        if k >= len { Err(bad()) } else { Ok(k..=k) }
    }
    /// Exact for the piecewise-linear activations; `None` for tanh and sigmoid.
    fn activate(&self, act: &Activation) -> Option<Rational> {
        activate_piecewise(self, act)
    }
    fn apply(&self, f: Function) -> Result<Rational, EvalError> {
        Err(EvalError::Irrational { function: f })
    }
    fn pow(&self, n: u32) -> Rational {
        num_traits::pow(self.clone(), n as usize)
    }
}

impl LayerArith for Rational {
    /// One common denominator per layer (the `exact_affine` kernel): integer multiply-adds,
    /// fractions reduced once at the output.
    type Values = Scaled;
    fn load(xs: &[Rational]) -> Scaled {
        Scaled::of(xs)
    }
    fn unload(v: &Scaled) -> Vec<Rational> {
        v.to_rationals()
    }
    /// ReLU inside the common-denominator kernel; the other piecewise-linear activations on the
    /// layer's rationals (their slopes and bounds change the denominators); `None` for tanh and
    /// sigmoid.
    fn affine(w: &Matrix, x: &Scaled, b: &[f64], act: Activation, rec: Option<(&Matrix, &Scaled)>) -> Option<Scaled> {
        match act {
            Activation::Identity | Activation::Relu => Some(exact_affine::affine(w, x, b, act, rec)),
            _ if act.is_piecewise_linear() => {
                let z = exact_affine::affine(w, x, b, Activation::Identity, rec).to_rationals();
                let y: Option<Vec<Rational>> = z.iter().map(|v| v.activate(&act)).collect();
                Some(Scaled::of(&y?))
            }
            _ => None,
        }
    }
}

impl Arith for f64 {
    fn constant(q: &Rational) -> f64 {
        to_f64_nearest(q)
    }
    fn of_f64(x: f64) -> f64 {
        x
    }
    fn neg(&self) -> f64 {
        -self
    }
    fn add(&self, o: &f64) -> f64 {
        self + o
    }
    fn sub(&self, o: &f64) -> f64 {
        self - o
    }
    fn mul(&self, o: &f64) -> f64 {
        self * o
    }
    fn div_const(&self, k: &Rational) -> f64 {
        self / to_f64_nearest(k)
    }
    fn min(&self, o: &f64) -> f64 {
        f64::min(*self, *o)
    }
    fn max(&self, o: &f64) -> f64 {
        f64::max(*self, *o)
    }
    fn relu(&self) -> f64 {
        f64::max(*self, 0.0)
    }
    fn abs(&self) -> f64 {
        f64::abs(*self)
    }
    fn compare(&self, op: CmpOp, o: &f64) -> Option<bool> {
        Some(op.holds(self, o))
    }
    fn join(&self, _: &f64) -> f64 {
        *self
    }
    fn lookup(&self, len: usize) -> Result<RangeInclusive<usize>, EvalError> {
        let r = self.round();
        if r != *self || r < 0.0 || r as usize >= len {
            return Err(EvalError::LookupIndex { index: self.to_string(), len });
        }
        Ok(r as usize..=r as usize)
    }
    /// Round to nearest; tanh and sigmoid by the standard library (simulation only).
    fn activate(&self, act: &Activation) -> Option<f64> {
        Some(act.apply_f64(*self))
    }
    fn apply(&self, f: Function) -> Result<f64, EvalError> {
        f.eval_f64(*self).ok_or_else(|| EvalError::OutsideDomain {
            function: f,
            argument: self.to_string(),
            reason: domain_reason(f).into(),
        })
    }
    fn pow(&self, n: u32) -> f64 {
        self.powi(n as i32)
    }
}

/// Why a function has no value at an argument, in the words of its domain.
pub(crate) fn domain_reason(f: Function) -> &'static str {
    match f {
        Function::Log => "log is defined for x > 0",
        Function::Sqrt => "sqrt is defined for x >= 0",
        Function::Tan => "tan is undefined at the odd multiples of pi/2",
        _ => "the value is not a finite number",
    }
}

impl LayerArith for f64 {
    type Values = Vec<f64>;
    fn load(xs: &[f64]) -> Vec<f64> {
        xs.to_vec()
    }
    fn unload(v: &Vec<f64>) -> Vec<f64> {
        v.clone()
    }
    fn affine(
        w: &Matrix,
        x: &Vec<f64>,
        b: &[f64],
        act: Activation,
        rec: Option<(&Matrix, &Vec<f64>)>,
    ) -> Option<Vec<f64>> {
        Some(
            (0..w.rows)
                .map(|i| {
                    let mut v = dot(w.row(i), x) + b[i];
                    if let Some((r, h)) = rec {
                        v += dot(r.row(i), h);
                    }
                    act.apply_f64(v)
                })
                .collect(),
        )
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    // The same lanes compiled with AVX2 where the CPU has it (twice the width per instruction,
    // no FMA, so the same bits as the portable build).
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { dot_avx2(a, b) };
    }
    dot_lanes(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_avx2(a: &[f64], b: &[f64]) -> f64 {
    dot_lanes(a, b)
}

#[inline(always)]
fn dot_lanes(a: &[f64], b: &[f64]) -> f64 {
    // Eight independent partial sums: the compiler keeps them in vector registers, where one
    // running sum (a strict left-to-right order) would serialise every addition. This is the
    // floating-point simulation (search heuristics, plots), never a verdict: those replay exactly.
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f64 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    let mut acc = [0.0f64; 8];
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    acc.iter().sum::<f64>() + tail
}

impl Arith for Interval {
    fn constant(q: &Rational) -> Interval {
        Interval::of_rational(q)
    }
    fn of_f64(x: f64) -> Interval {
        Interval::point(x)
    }
    fn neg(&self) -> Interval {
        Interval::neg(self)
    }
    fn add(&self, o: &Interval) -> Interval {
        Interval::add(self, o)
    }
    fn sub(&self, o: &Interval) -> Interval {
        Interval::sub(self, o)
    }
    fn mul(&self, o: &Interval) -> Interval {
        Interval::mul(self, o)
    }
    fn div_const(&self, k: &Rational) -> Interval {
        // The exact reciprocal, enclosed outward, then an outward product.
        Interval::mul(self, &Interval::of_rational(&(Rational::from_integer(1.into()) / k)))
    }
    fn min(&self, o: &Interval) -> Interval {
        Interval::min(self, o)
    }
    fn max(&self, o: &Interval) -> Interval {
        Interval::max(self, o)
    }
    fn relu(&self) -> Interval {
        Interval::relu(self)
    }
    fn abs(&self) -> Interval {
        Interval::abs(self)
    }
    /// Decided by the sign of the outward-rounded difference.
    fn compare(&self, op: CmpOp, o: &Interval) -> Option<bool> {
        let d = Interval::sub(self, o);
        match op {
            CmpOp::Le if d.hi <= 0.0 => Some(true),
            CmpOp::Le if d.lo > 0.0 => Some(false),
            CmpOp::Lt if d.hi < 0.0 => Some(true),
            CmpOp::Lt if d.lo >= 0.0 => Some(false),
            CmpOp::Ge if d.lo >= 0.0 => Some(true),
            CmpOp::Ge if d.hi < 0.0 => Some(false),
            CmpOp::Gt if d.lo > 0.0 => Some(true),
            CmpOp::Gt if d.hi <= 0.0 => Some(false),
            CmpOp::Eq if d.lo == 0.0 && d.hi == 0.0 => Some(true),
            CmpOp::Eq if d.lo > 0.0 || d.hi < 0.0 => Some(false),
            _ => None,
        }
    }
    fn join(&self, o: &Interval) -> Interval {
        self.hull(o)
    }
    /// Every valid index the enclosure holds; when it holds none, evaluation fails at every
    /// point, and every entry is a sound answer (the exact evaluators report the error).
    fn lookup(&self, len: usize) -> Result<RangeInclusive<usize>, EvalError> {
        if len == 0 {
            return Err(EvalError::LookupIndex { index: format!("[{}, {}]", self.lo, self.hi), len });
        }
        let lo = self.lo.ceil().max(0.0);
        let hi = self.hi.floor().min(len as f64 - 1.0);
        Ok(if lo > hi { 0..=len - 1 } else { lo as usize..=hi as usize })
    }
    /// The image of the interval (see [`Interval::activate`]).
    fn activate(&self, act: &Activation) -> Option<Interval> {
        Some(Interval::activate(self, act))
    }
    /// The rigorous enclosures of `trestle_real` (through [`Interval`]'s functions); an argument
    /// reaching outside a partial function's domain is an error, not a clipped enclosure.
    fn apply(&self, f: Function) -> Result<Interval, EvalError> {
        if !self.is_valid() {
            return Err(EvalError::OutsideDomain {
                function: f,
                argument: self.to_string(),
                reason: "not an interval".into(),
            });
        }
        let partial = |r: Result<Interval, crate::interval::RealError>| {
            r.map_err(|_| EvalError::OutsideDomain {
                function: f,
                argument: self.to_string(),
                reason: domain_reason(f).into(),
            })
        };
        Ok(match f {
            Function::Sin => Interval::sin(self),
            Function::Cos => Interval::cos(self),
            Function::Exp => Interval::exp(self),
            Function::Tanh => Interval::tanh(self),
            Function::Sigmoid => Interval::sigmoid(self),
            Function::Tan => partial(Interval::tan(self))?,
            Function::Log => partial(Interval::log(self))?,
            Function::Sqrt => partial(Interval::sqrt(self))?,
        })
    }
    /// The monotone pieces of `x^n` (`[-1, 2]^2 = [0, 4]`, not the product's `[-2, 4]`).
    fn pow(&self, n: u32) -> Interval {
        match i32::try_from(n).ok().and_then(|n| Interval::powi(self, n).ok()) {
            Some(p) => p,
            // Non-negative powers are total; only an invalid interval gets here.
            None => Interval::ENTIRE,
        }
    }
}

/// Interval bound propagation through a network (IBP, every operation rounded outward): sound
/// enclosures of the outputs and the new hidden states over boxes of inputs and hidden states.
/// Loose (no relaxation, no correlation between neurons); the bounds crate's methods are tighter.
impl LayerArith for Interval {
    type Values = Vec<Interval>;
    fn load(xs: &[Interval]) -> Vec<Interval> {
        xs.to_vec()
    }
    fn unload(v: &Vec<Interval>) -> Vec<Interval> {
        v.clone()
    }
    fn affine(
        w: &Matrix,
        x: &Vec<Interval>,
        b: &[f64],
        act: Activation,
        rec: Option<(&Matrix, &Vec<Interval>)>,
    ) -> Option<Vec<Interval>> {
        affine_terms(w, x, b, act, rec.map(|(r, h)| (r, &h[..])))
    }
}
