//! Values for validated replay: exact rationals while they stay rational, MPFR enclosures at a
//! fixed precision once an elementary function (or a network activation without rational values)
//! has made them irrational.
//!
//! [`Enclosed<BITS>`] is an [`Arith`] / [`LayerArith`], so the IR's one evaluator of expressions,
//! predicates and networks runs over it unchanged. Operations on two exact values are exact (a
//! guard `x <= 0.1` at `x = 1/10` is decided, which no enclosure of 1/10 could do); anything
//! touching an enclosure is computed in `trestle_real::BigInterval` at `BITS` bits, every end
//! rounded outward, so the true value always lies inside. A point enclosure is the exact value and
//! turns back into [`Enclosed::Exact`].
//!
//! Decisions are three-valued: a comparison is `Some` only when the enclosures lie strictly on one
//! side (or both are the same exact value), a lookup index must be exactly an integer, and min,
//! max, relu, abs and undecided `if`s take hulls (sound, a little loose; at hundreds of bits the
//! looseness is far below any margin a replay decides). The precision is a type parameter so a
//! constant (`Arith::constant`) needs no context: replays retry at `Enclosed<256>`,
//! `Enclosed<1024>`, ...

use crate::arith::{Arith, LayerArith, domain_reason};
use crate::expr::{EvalError, Function};
use crate::network::{Activation, Matrix};
use crate::num::{Rational, display_rational, is_integer, rational_from_f64};
use crate::pred::CmpOp;
use num_traits::{Signed, ToPrimitive, Zero};
use std::cmp::Ordering;
use std::ops::RangeInclusive;
use trestle_real::BigInterval;

/// An exact rational, or an enclosure with MPFR ends at `BITS` bits.
#[derive(Clone, Debug, PartialEq)]
pub enum Enclosed<const BITS: u32> {
    /// The exact value (while the computation stays rational).
    Exact(Rational),
    /// An enclosure `[lo, hi]` of the true value (past an elementary function, or computed from
    /// such a value) with MPFR ends at `BITS` bits, rounded outward.
    Interval(BigInterval),
}

impl<const BITS: u32> Enclosed<BITS> {
    /// An enclosure, made exact when it is a single finite point.
    pub fn of_interval(b: BigInterval) -> Enclosed<BITS> {
        if b.lo() == b.hi()
            && let (Some(lo), Some(_)) = b.to_rationals()
        {
            return Enclosed::Exact(lo);
        }
        Enclosed::Interval(b)
    }

    /// The exact value, when known.
    pub fn exact(&self) -> Option<&Rational> {
        match self {
            Enclosed::Exact(q) => Some(q),
            Enclosed::Interval(_) => None,
        }
    }

    /// The value as an enclosure at `BITS` bits (exact values enclosed to one ulp, or exactly).
    pub fn to_big(&self) -> BigInterval {
        match self {
            Enclosed::Exact(q) => BigInterval::from_rational(q, BITS),
            Enclosed::Interval(b) => b.clone(),
        }
    }

    /// Where the value lies relative to `q`: `Some` only when decided (strictly below or above,
    /// or exactly `q`).
    pub fn compare_rational(&self, q: &Rational) -> Option<Ordering> {
        match self {
            Enclosed::Exact(x) => Some(x.cmp(q)),
            Enclosed::Interval(b) => b.compare(q),
        }
    }

    /// The exact ends of the enclosure (equal for an exact value); `None` for an unbounded end.
    pub fn ends(&self) -> (Option<Rational>, Option<Rational>) {
        match self {
            Enclosed::Exact(q) => (Some(q.clone()), Some(q.clone())),
            Enclosed::Interval(b) => b.to_rationals(),
        }
    }

    /// Exact when both are, else the operation on enclosures.
    fn combine(
        &self,
        o: &Self,
        exact: impl FnOnce(&Rational, &Rational) -> Rational,
        big: impl FnOnce(&BigInterval, &BigInterval) -> BigInterval,
    ) -> Self {
        match (self, o) {
            (Enclosed::Exact(a), Enclosed::Exact(b)) => Enclosed::Exact(exact(a, b)),
            _ => Enclosed::of_interval(big(&self.to_big(), &o.to_big())),
        }
    }

    /// The smaller (`min`) or larger of two values: decided when the enclosures are ordered,
    /// else their hull.
    fn extremum(&self, o: &Self, min: bool) -> Self {
        match self.compare(CmpOp::Le, o) {
            Some(true) => (if min { self } else { o }).clone(),
            Some(false) => (if min { o } else { self }).clone(),
            None => self.join(o),
        }
    }
}

impl<const BITS: u32> std::fmt::Display for Enclosed<BITS> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Enclosed::Exact(q) => f.write_str(&display_rational(q)),
            Enclosed::Interval(b) => write!(f, "{b}"),
        }
    }
}

impl<const BITS: u32> Arith for Enclosed<BITS> {
    /// Every activation, through [`activate`] (tanh and sigmoid enclosed in high precision).
    fn activate(&self, act: &Activation) -> Option<Self> {
        Some(activate(*act, self.clone()))
    }
    fn constant(q: &Rational) -> Self {
        Enclosed::Exact(q.clone())
    }
    fn neg(&self) -> Self {
        match self {
            Enclosed::Exact(q) => Enclosed::Exact(-q),
            Enclosed::Interval(b) => Enclosed::Interval(b.neg()),
        }
    }
    fn add(&self, o: &Self) -> Self {
        self.combine(o, |a, b| a + b, BigInterval::add)
    }
    fn sub(&self, o: &Self) -> Self {
        self.combine(o, |a, b| a - b, BigInterval::sub)
    }
    fn mul(&self, o: &Self) -> Self {
        self.combine(o, |a, b| a * b, BigInterval::mul)
    }
    fn div_const(&self, k: &Rational) -> Self {
        match self {
            Enclosed::Exact(q) => Enclosed::Exact(q / k),
            // The exact reciprocal, enclosed, then an outward product (as the f64 intervals do:
            // a reciprocal that is a dyadic rational, 1/(1/3) = 3, stays exact).
            Enclosed::Interval(b) => {
                Enclosed::of_interval(b.mul(&BigInterval::from_rational(&(Rational::from_integer(1.into()) / k), BITS)))
            }
        }
    }
    fn min(&self, o: &Self) -> Self {
        self.extremum(o, true)
    }
    fn max(&self, o: &Self) -> Self {
        self.extremum(o, false)
    }
    fn relu(&self) -> Self {
        self.max(&Enclosed::Exact(Rational::zero()))
    }
    fn abs(&self) -> Self {
        match self {
            Enclosed::Exact(q) => Enclosed::Exact(Signed::abs(q)),
            Enclosed::Interval(b) => match b.compare(&Rational::zero()) {
                Some(Ordering::Less) => Enclosed::Interval(b.neg()),
                Some(_) => self.clone(),
                // Straddling 0: the hull of x and -x holds |x| (loose below, sound).
                None => Enclosed::Interval(b.hull(&b.neg())),
            },
        }
    }
    /// Decided by the sign of the difference; exact values compare exactly.
    fn compare(&self, op: CmpOp, o: &Self) -> Option<bool> {
        if let (Enclosed::Exact(a), Enclosed::Exact(b)) = (self, o) {
            return Some(op.holds(a, b));
        }
        let sign = self.sub(o).compare_rational(&Rational::zero())?;
        Some(match op {
            CmpOp::Le => sign != Ordering::Greater,
            CmpOp::Lt => sign == Ordering::Less,
            CmpOp::Ge => sign != Ordering::Less,
            CmpOp::Gt => sign == Ordering::Greater,
            CmpOp::Eq => sign == Ordering::Equal,
        })
    }
    fn join(&self, o: &Self) -> Self {
        match (self, o) {
            (Enclosed::Exact(a), Enclosed::Exact(b)) if a == b => self.clone(),
            _ => Enclosed::Interval(self.to_big().hull(&o.to_big())),
        }
    }
    /// Only an exact integer index selects an entry: an enclosure cannot show that the index is
    /// an integer, and a non-integer index is an error of the run, which a replay must not pass.
    fn lookup(&self, len: usize) -> Result<RangeInclusive<usize>, EvalError> {
        match self {
            Enclosed::Exact(q) => q.lookup(len),
            Enclosed::Interval(b) => Err(EvalError::LookupIndex { index: format!("{b} (not exactly known)"), len }),
        }
    }
    fn apply(&self, f: Function) -> Result<Self, EvalError> {
        let x = self.to_big();
        let outside =
            || EvalError::OutsideDomain { function: f, argument: format!("{self}"), reason: domain_reason(f).into() };
        let y = match f {
            Function::Sin => x.sin(),
            Function::Cos => x.cos(),
            Function::Exp => x.exp(),
            Function::Tanh => x.tanh(),
            Function::Sigmoid => x.sigmoid(),
            Function::Tan => x.tan().map_err(|_| outside())?,
            Function::Log => x.log().map_err(|_| outside())?,
            Function::Sqrt => x.sqrt().map_err(|_| outside())?,
        };
        Ok(Enclosed::of_interval(y))
    }
    fn pow(&self, n: u32) -> Self {
        match self {
            Enclosed::Exact(q) => Enclosed::Exact(num_traits::pow(q.clone(), n as usize)),
            Enclosed::Interval(b) => match i32::try_from(n).ok().and_then(|n| b.powi(n).ok()) {
                Some(p) => Enclosed::of_interval(p),
                // Non-negative powers are total on every interval: the product rule is the
                // fallback (sound, looser) that is never taken.
                None => {
                    let one = Enclosed::Exact(Rational::from_integer(1.into()));
                    (0..n).fold(one, |acc, _| acc.mul(self))
                }
            },
        }
    }
}

/// A network activation applied to one value: the one place where an activation without
/// rational values (tanh, sigmoid) enters validated replay. Total: every activation has a value
/// everywhere.
pub fn activate<const BITS: u32>(act: Activation, x: Enclosed<BITS>) -> Enclosed<BITS> {
    let total = "tanh and sigmoid are defined everywhere";
    match act {
        Activation::Identity => x,
        Activation::Relu => x.relu(),
        // leaky(z) = max(z, alpha z) for alpha <= 1 and min(z, alpha z) above: the identities hold
        // for every real z, so they hold of enclosures whose sign is undecided too.
        Activation::LeakyRelu { alpha } => {
            let scaled = x.mul(&Enclosed::of_f64(alpha));
            if alpha <= 1.0 { x.max(&scaled) } else { x.min(&scaled) }
        }
        Activation::Clip { lo, hi } => {
            let mut y = x;
            if lo.is_finite() {
                y = y.max(&Enclosed::of_f64(lo));
            }
            if hi.is_finite() {
                y = y.min(&Enclosed::of_f64(hi));
            }
            y
        }
        Activation::Tanh => x.apply(Function::Tanh).expect(total),
        Activation::Sigmoid => x.apply(Function::Sigmoid).expect(total),
    }
}

/// Whether an activation maps rationals to rationals (so a network made of them replays exactly).
pub fn activation_is_rational(act: Activation) -> bool {
    act.is_piecewise_linear()
}

impl<const BITS: u32> LayerArith for Enclosed<BITS> {
    type Values = Vec<Enclosed<BITS>>;
    fn load(xs: &[Self]) -> Self::Values {
        xs.to_vec()
    }
    fn unload(v: &Self::Values) -> Vec<Self> {
        v.clone()
    }
    /// Exact layers (every input exact) run through the exact kernel without activation, then the
    /// activation through [`activate`]; otherwise term by term on enclosures.
    fn affine(
        w: &Matrix,
        x: &Self::Values,
        b: &[f64],
        act: Activation,
        rec: Option<(&Matrix, &Self::Values)>,
    ) -> Option<Self::Values> {
        let exact = |v: &Self::Values| v.iter().map(|e| e.exact().cloned()).collect::<Option<Vec<Rational>>>();
        let pre: Vec<Enclosed<BITS>> = match (exact(x), rec.map(|(r, h)| (r, exact(h)))) {
            (Some(xs), None) => exact_layer(w, &xs, b, None),
            (Some(xs), Some((r, Some(hs)))) => exact_layer(w, &xs, b, Some((r, &hs))),
            _ => crate::arith::affine_terms(w, x, b, Activation::Identity, rec.map(|(r, h)| (r, &h[..])))
                .expect("the identity has a value in every arithmetic"),
        };
        Some(pre.into_iter().map(|v| activate(act, v)).collect())
    }
}

fn exact_layer<const BITS: u32>(
    w: &Matrix,
    x: &[Rational],
    b: &[f64],
    rec: Option<(&Matrix, &[Rational])>,
) -> Vec<Enclosed<BITS>> {
    let load = <Rational as LayerArith>::load;
    let hidden = rec.map(|(r, h)| (r, load(h)));
    let out =
        <Rational as LayerArith>::affine(w, &load(x), b, Activation::Identity, hidden.as_ref().map(|(r, h)| (*r, h)))
            .expect("the identity is rational");
    <Rational as LayerArith>::unload(&out).into_iter().map(Enclosed::Exact).collect()
}

/// The exact value of an f64 weight, for callers building values by hand.
pub fn weight<const BITS: u32>(x: f64) -> Enclosed<BITS> {
    Enclosed::Exact(rational_from_f64(x))
}

/// Whether a decided value is an integer: `Some(true)` only for an exact integer, `Some(false)`
/// when the enclosure holds no integer at all, `None` when only more precision could tell (an
/// enclosure around an integer).
pub fn integrality<const BITS: u32>(x: &Enclosed<BITS>) -> Option<bool> {
    match x {
        Enclosed::Exact(q) => Some(is_integer(q)),
        Enclosed::Interval(b) => {
            let (lo, hi) = b.to_rationals();
            let (lo, hi) = (lo?, hi?);
            let first = lo.ceil();
            (first > hi).then_some(false)
        }
    }
}

/// The nearest f64 of a value (for messages).
pub fn approx<const BITS: u32>(x: &Enclosed<BITS>) -> f64 {
    match x {
        Enclosed::Exact(q) => q.to_f64().unwrap_or(f64::NAN),
        Enclosed::Interval(b) => b.mid_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{Env, Expr, VarRef};
    use crate::num::parse_rational as q;

    type E = Enclosed<256>;

    #[test]
    fn rational_operations_stay_exact() {
        let a = E::constant(&q("0.1").unwrap());
        let b = E::constant(&q("1/3").unwrap());
        assert_eq!(a.add(&b), E::Exact(q("13/30").unwrap()));
        assert_eq!(a.mul(&b).pow(2), E::Exact(q("1/900").unwrap()));
        assert_eq!(a.compare(CmpOp::Le, &E::constant(&q("0.1").unwrap())), Some(true));
    }

    #[test]
    fn functions_enclose_and_points_become_exact() {
        let two = E::constant(&q("4").unwrap()).apply(Function::Sqrt).unwrap();
        assert_eq!(two, E::Exact(q("2").unwrap()));
        assert_eq!(E::constant(&Rational::zero()).apply(Function::Exp).unwrap(), E::Exact(q("1").unwrap()));
        let s = E::constant(&q("1").unwrap()).apply(Function::Sin).unwrap();
        // sin 1 = 0.8414709848078965066525023216302989996225630607983710656727517099...
        let lo = q("0.84147098480789650665250232163029899962256306079837").unwrap();
        let hi = q("0.84147098480789650665250232163029899962256306079838").unwrap();
        assert_eq!(s.compare_rational(&lo), Some(Ordering::Greater));
        assert_eq!(s.compare_rational(&hi), Some(Ordering::Less));
        assert!(matches!(E::constant(&q("-1").unwrap()).apply(Function::Log), Err(EvalError::OutsideDomain { .. })));
    }

    #[test]
    fn undecided_comparisons_and_inexact_lookups_are_not_decided() {
        // sin(pi-ish) against 0 where the rational is within 1e-100 of pi: 256 bits cannot tell.
        let pi_100 =
            q("3.1415926535897932384626433832795028841971693993751058209749445923078164062862089986280348253421170679")
                .unwrap();
        let s = E::constant(&pi_100).apply(Function::Sin).unwrap();
        assert_eq!(s.compare(CmpOp::Ge, &E::constant(&Rational::zero())), None);
        let fine = Enclosed::<1024>::constant(&pi_100).apply(Function::Sin).unwrap();
        assert_eq!(fine.compare(CmpOp::Gt, &Enclosed::<1024>::constant(&Rational::zero())), Some(true));
        assert!(s.lookup(3).is_err());
        // Around 0: only more precision could tell it from the integer 0.
        assert_eq!(integrality(&s), None);
        assert_eq!(integrality(&E::constant(&q("1").unwrap()).apply(Function::Sin).unwrap()), Some(false));
        assert_eq!(integrality(&E::Exact(q("3").unwrap())), Some(true));
    }

    #[test]
    fn expressions_evaluate_over_enclosures() {
        let e = Expr::Add(
            Box::new(Expr::Pow(Box::new(Expr::Var(VarRef::State(0))), 3)),
            Box::new(Expr::Apply(Function::Exp, Box::new(Expr::Var(VarRef::State(0))))),
        );
        let x = [E::constant(&q("0.5").unwrap())];
        let v = e.eval(&Env::new(&x, &[], &[])).unwrap();
        // 0.125 + e^0.5 = 1.7737212707001281468486507878141635716537761007101...
        let (lo, hi) = v.ends();
        assert!(lo.unwrap() <= q("1.7737212707001281468486507878141635716537761007101481").unwrap());
        assert!(hi.unwrap() >= q("1.7737212707001281468486507878141635716537761007101480").unwrap());
    }
}
