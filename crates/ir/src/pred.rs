//! Predicates: boolean combinations of comparisons, and the box shapes engines work with.

use crate::expr::{Env, EvalError, Expr, LinearExpr, VarRef};
use crate::interval::Interval;
use crate::num::{Rational, cmp_f64_rational, down, up};

/// A comparison operator. Over exact values every comparison is decided; over intervals it may not
/// be ([`crate::Arith::compare`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `<=`
    Le,
    /// `<`
    Lt,
    /// `>=`
    Ge,
    /// `>`
    Gt,
    /// `==`: equality of the two sides' values.
    Eq,
}

impl CmpOp {
    /// The operator as written in system files and formulas (`<=`, `<`, `>=`, `>`, `==`).
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Le => "<=",
            CmpOp::Lt => "<",
            CmpOp::Ge => ">=",
            CmpOp::Gt => ">",
            CmpOp::Eq => "==",
        }
    }

    /// Whether `a op b`.
    pub fn holds<T: PartialOrd>(self, a: &T, b: &T) -> bool {
        match self {
            CmpOp::Le => a <= b,
            CmpOp::Lt => a < b,
            CmpOp::Ge => a >= b,
            CmpOp::Gt => a > b,
            CmpOp::Eq => a == b,
        }
    }

    /// Whether the operator is `<` or `>` (a closed box or a MILP constraint cannot state it
    /// exactly).
    pub fn is_strict(self) -> bool {
        matches!(self, CmpOp::Lt | CmpOp::Gt)
    }
}

/// Kleene's three-valued conjunction: `Some(false)` at the first false item (the rest are not
/// looked at: pass a lazy iterator), `Some(true)` when every item is true, `None` otherwise.
/// [`Pred::eval`] writes the same walk with its errors propagated.
pub fn kleene_and(items: impl IntoIterator<Item = Option<bool>>) -> Option<bool> {
    let mut all = Some(true);
    for t in items {
        match t {
            Some(false) => return Some(false),
            Some(true) => {}
            None => all = None,
        }
    }
    all
}

/// Kleene's three-valued disjunction: `Some(true)` at the first true item, `Some(false)` when
/// every item is false, `None` otherwise.
pub fn kleene_or(items: impl IntoIterator<Item = Option<bool>>) -> Option<bool> {
    kleene_and(items.into_iter().map(|t| t.map(|b| !b))).map(|b| !b)
}

/// The truth of a comparison in a point domain (exact or f64), which always has one.
pub fn decided(t: Option<bool>) -> bool {
    t.expect("comparisons of points are always decided")
}

/// A predicate over the variables: guards, `if` conditions, Init, Safe, the candidate invariant and
/// the atoms of temporal formulas. Comparisons may relate any two expressions (not only linear
/// ones); engines that need linear atoms check [`Pred::is_linear`].
#[derive(Clone, Debug, PartialEq)]
pub enum Pred {
    /// Holds everywhere.
    True,
    /// Holds nowhere.
    False,
    /// `lhs op rhs`.
    Cmp(Expr, CmpOp, Expr),
    /// Negation.
    Not(Box<Pred>),
    /// Conjunction; the empty one is true.
    And(Vec<Pred>),
    /// Disjunction; the empty one is false.
    Or(Vec<Pred>),
}

/// `lhs op 0` with an exact affine left side: the normal form of a linear atom.
#[derive(Clone, Debug, PartialEq)]
pub struct LinearAtom {
    /// The exact affine left side (`lhs_expr - rhs_expr` of the comparison).
    pub lhs: LinearExpr,
    /// The comparison with 0.
    pub op: CmpOp,
}

impl Pred {
    /// The conjunction of `items`, or the single item itself.
    pub fn and(items: Vec<Pred>) -> Pred {
        if items.len() == 1 { items.into_iter().next().unwrap() } else { Pred::And(items) }
    }

    /// The disjunction of `items`, or the single item itself.
    pub fn or(items: Vec<Pred>) -> Pred {
        if items.len() == 1 { items.into_iter().next().unwrap() } else { Pred::Or(items) }
    }

    /// Calls `f` on every variable occurrence of every comparison.
    pub fn visit_vars(&self, f: &mut dyn FnMut(VarRef)) {
        match self {
            Pred::True | Pred::False => {}
            Pred::Cmp(a, _, b) => {
                a.visit_vars(f);
                b.visit_vars(f);
            }
            Pred::Not(p) => p.visit_vars(f),
            Pred::And(ps) | Pred::Or(ps) => ps.iter().for_each(|p| p.visit_vars(f)),
        }
    }

    /// Calls `f` on every expression of every comparison and on their sub-expressions.
    pub fn visit_exprs(&self, f: &mut dyn FnMut(&Expr)) {
        match self {
            Pred::True | Pred::False => {}
            Pred::Cmp(a, _, b) => {
                a.visit_exprs(f);
                b.visit_exprs(f);
            }
            Pred::Not(p) => p.visit_exprs(f),
            Pred::And(ps) | Pred::Or(ps) => ps.iter().for_each(|p| p.visit_exprs(f)),
        }
    }

    /// The distinct variables read, sorted.
    pub fn vars(&self) -> Vec<VarRef> {
        let mut out = Vec::new();
        self.visit_vars(&mut |v| {
            if !out.contains(&v) {
                out.push(v)
            }
        });
        out.sort();
        out
    }

    /// Whether some variable read satisfies `pred` (e.g. "reads something other than the state").
    pub fn mentions(&self, pred: impl Fn(VarRef) -> bool) -> bool {
        let mut found = false;
        self.visit_vars(&mut |v| found |= pred(v));
        found
    }

    /// Replaces variables by expressions in every comparison (`None` keeps the variable).
    pub fn substitute(&self, f: &dyn Fn(VarRef) -> Option<Expr>) -> Pred {
        match self {
            Pred::True | Pred::False => self.clone(),
            Pred::Cmp(a, op, b) => Pred::Cmp(a.substitute(f), *op, b.substitute(f)),
            Pred::Not(p) => Pred::Not(Box::new(p.substitute(f))),
            Pred::And(ps) => Pred::And(ps.iter().map(|p| p.substitute(f)).collect()),
            Pred::Or(ps) => Pred::Or(ps.iter().map(|p| p.substitute(f)).collect()),
        }
    }

    /// The first elementary function a comparison applies (see [`Expr::first_function`]).
    pub fn first_function(&self) -> Option<crate::expr::Function> {
        let mut found = None;
        self.visit_exprs(&mut |e| {
            if let (None, Expr::Apply(g, _)) = (found, e) {
                found = Some(*g);
            }
        });
        found
    }

    /// Whether every comparison is between affine expressions (an exact SMT or MILP encoding exists
    /// without case splits on products or functions).
    pub fn is_linear(&self) -> bool {
        match self {
            Pred::True | Pred::False => true,
            Pred::Cmp(a, _, b) => a.as_linear().is_some() && b.as_linear().is_some(),
            Pred::Not(p) => p.is_linear(),
            Pred::And(ps) | Pred::Or(ps) => ps.iter().all(Pred::is_linear),
        }
    }

    /// The truth value at `env`, in any [`Arith`](crate::Arith): `Some(b)` when the predicate is
    /// `b` for everything `env` stands for (always, for point domains), `None` when undecided
    /// (over a box). The one evaluator of predicates; a conjunction stops at its first false
    /// conjunct, a disjunction at its first true one.
    pub fn eval<A: crate::arith::Arith>(&self, env: &Env<'_, A>) -> Result<Option<bool>, EvalError> {
        Ok(match self {
            Pred::True => Some(true),
            Pred::False => Some(false),
            Pred::Cmp(a, op, b) => a.eval(env)?.compare(*op, &b.eval(env)?),
            Pred::Not(p) => p.eval(env)?.map(|b| !b),
            Pred::And(ps) => {
                let mut all = Some(true);
                for p in ps {
                    match p.eval(env)? {
                        Some(false) => return Ok(Some(false)),
                        Some(true) => {}
                        None => all = None,
                    }
                }
                all
            }
            Pred::Or(ps) => {
                let mut any = Some(false);
                for p in ps {
                    match p.eval(env)? {
                        Some(true) => return Ok(Some(true)),
                        Some(false) => {}
                        None => any = None,
                    }
                }
                any
            }
        })
    }

    /// The exact truth value: what verdicts and replays rest on.
    pub fn eval_exact(&self, env: &Env<'_, Rational>) -> Result<bool, EvalError> {
        self.eval(env).map(decided)
    }

    /// Round-to-nearest evaluation, for simulation and sampling (never for verdicts).
    pub fn eval_f64(&self, env: &Env<'_, f64>) -> Result<bool, EvalError> {
        self.eval(env).map(decided)
    }

    /// Three-valued evaluation over a box: `Some(b)` when the predicate is `b` at every point.
    pub fn eval_interval(&self, env: &Env<'_, Interval>) -> Option<bool> {
        // Only an empty lookup table fails on intervals: then nothing is decided.
        self.eval(env).ok().flatten()
    }

    /// Negation pushed to the atoms (`not (a <= b)` becomes `a > b`), no `Not` left.
    pub fn nnf(&self, negate: bool) -> Pred {
        match (self, negate) {
            (Pred::True, false) | (Pred::False, true) => Pred::True,
            (Pred::True, true) | (Pred::False, false) => Pred::False,
            (Pred::Cmp(a, op, b), false) => Pred::Cmp(a.clone(), *op, b.clone()),
            (Pred::Cmp(a, op, b), true) => match op {
                CmpOp::Le => Pred::Cmp(a.clone(), CmpOp::Gt, b.clone()),
                CmpOp::Lt => Pred::Cmp(a.clone(), CmpOp::Ge, b.clone()),
                CmpOp::Ge => Pred::Cmp(a.clone(), CmpOp::Lt, b.clone()),
                CmpOp::Gt => Pred::Cmp(a.clone(), CmpOp::Le, b.clone()),
                CmpOp::Eq => Pred::Or(vec![
                    Pred::Cmp(a.clone(), CmpOp::Lt, b.clone()),
                    Pred::Cmp(a.clone(), CmpOp::Gt, b.clone()),
                ]),
            },
            (Pred::Not(p), n) => p.nnf(!n),
            (Pred::And(ps), false) | (Pred::Or(ps), true) => Pred::And(ps.iter().map(|p| p.nnf(negate)).collect()),
            (Pred::Or(ps), false) | (Pred::And(ps), true) => Pred::Or(ps.iter().map(|p| p.nnf(negate)).collect()),
        }
    }

    /// A comparison as `lhs op 0` with exact affine `lhs`, when both sides are affine.
    pub fn linear_atom(a: &Expr, op: CmpOp, b: &Expr) -> Option<LinearAtom> {
        Some(LinearAtom { lhs: a.as_linear()?.add(&b.as_linear()?, -1), op })
    }

    /// The predicate as a finite union of closed boxes over the state variables, when it is one:
    /// conjunctions of single-variable bounds, disjunctions of those (DNF up to `max_boxes`).
    /// Strict bounds are refused (a closed box would be a different set).
    pub fn to_box_union(&self, dims: usize, max_boxes: usize) -> Option<Vec<RBox>> {
        match self {
            Pred::True => Some(vec![RBox::unbounded(dims)]),
            Pred::False => Some(vec![]),
            Pred::Cmp(a, op, b) => {
                let atom = Pred::linear_atom(a, *op, b)?;
                let mut bx = RBox::unbounded(dims);
                bx.restrict(&atom)?;
                Some(vec![bx])
            }
            Pred::Not(p) => p.nnf(true).to_box_union(dims, max_boxes),
            Pred::Or(ps) => {
                let mut out = Vec::new();
                for p in ps {
                    out.extend(p.to_box_union(dims, max_boxes)?);
                    if out.len() > max_boxes {
                        return None;
                    }
                }
                Some(out)
            }
            Pred::And(ps) => {
                let mut acc = vec![RBox::unbounded(dims)];
                for p in ps {
                    let parts = p.to_box_union(dims, max_boxes)?;
                    let mut next = Vec::new();
                    for a in &acc {
                        for b in &parts {
                            if let Some(c) = a.intersect(b) {
                                next.push(c);
                            }
                        }
                    }
                    if next.len() > max_boxes {
                        return None;
                    }
                    acc = next;
                }
                Some(acc)
            }
        }
    }
}

/// A closed box over the state variables with exact rational ends (`None` = unbounded).
#[derive(Clone, Debug, PartialEq)]
pub struct RBox {
    /// Lower ends, one per state variable; `None` when unbounded below.
    pub lo: Vec<Option<Rational>>,
    /// Upper ends, one per state variable; `None` when unbounded above.
    pub hi: Vec<Option<Rational>>,
}

impl RBox {
    /// The whole space of `dims` variables.
    pub fn unbounded(dims: usize) -> RBox {
        RBox { lo: vec![None; dims], hi: vec![None; dims] }
    }

    /// Number of variables.
    pub fn dims(&self) -> usize {
        self.lo.len()
    }

    /// Intersects with a single-state-variable non-strict bound; `None` if the atom is not one.
    fn restrict(&mut self, atom: &LinearAtom) -> Option<()> {
        if atom.op.is_strict() || atom.lhs.coeffs.len() != 1 {
            return None;
        }
        let (v, k) = atom.lhs.coeffs.iter().next()?;
        let VarRef::State(i) = *v else { return None };
        // k * x + c op 0  <=>  x op' -c/k
        let bound = -&atom.lhs.constant / k;
        let flip = *k < Rational::from_integer(0.into());
        let (upper, lower) = match (atom.op, flip) {
            (CmpOp::Le, false) | (CmpOp::Ge, true) => (true, false),
            (CmpOp::Ge, false) | (CmpOp::Le, true) => (false, true),
            (CmpOp::Eq, _) => (true, true),
            _ => return None,
        };
        if upper {
            self.hi[i] = Some(match self.hi[i].take() {
                Some(h) => h.min(bound.clone()),
                None => bound.clone(),
            });
        }
        if lower {
            self.lo[i] = Some(match self.lo[i].take() {
                Some(l) => l.max(bound),
                None => bound,
            });
        }
        Some(())
    }

    /// The intersection (exact), or `None` when it is empty.
    pub fn intersect(&self, other: &RBox) -> Option<RBox> {
        let pick = |a: &Option<Rational>, b: &Option<Rational>, max: bool| match (a, b) {
            (Some(x), Some(y)) => Some(if max { x.max(y).clone() } else { x.min(y).clone() }),
            (Some(x), None) | (None, Some(x)) => Some(x.clone()),
            (None, None) => None,
        };
        let lo: Vec<_> = self.lo.iter().zip(&other.lo).map(|(a, b)| pick(a, b, true)).collect();
        let hi: Vec<_> = self.hi.iter().zip(&other.hi).map(|(a, b)| pick(a, b, false)).collect();
        for (l, h) in lo.iter().zip(&hi) {
            if let (Some(l), Some(h)) = (l, h)
                && l > h
            {
                return None;
            }
        }
        Some(RBox { lo, hi })
    }

    /// Whether every end is finite.
    pub fn is_bounded(&self) -> bool {
        self.lo.iter().chain(&self.hi).all(Option::is_some)
    }

    /// The smallest f64 box containing this one (ends rounded outward); `None` if unbounded.
    pub fn enclosing_fbox(&self) -> Option<OuterBox> {
        let lo = self.lo.iter().map(|l| l.as_ref().map(down)).collect::<Option<Vec<_>>>()?;
        let hi = self.hi.iter().map(|h| h.as_ref().map(up)).collect::<Option<Vec<_>>>()?;
        Some(OuterBox(FBox { lo, hi }))
    }

    /// Exact membership of an f64 point.
    pub fn contains_f64(&self, x: &[f64]) -> bool {
        x.iter().enumerate().all(|(i, &v)| {
            self.lo[i].as_ref().is_none_or(|l| cmp_f64_rational(v, l).is_ge())
                && self.hi[i].as_ref().is_none_or(|h| cmp_f64_rational(v, h).is_le())
        })
    }

    /// Exact membership of a rational point.
    pub fn contains_exact(&self, x: &[Rational]) -> bool {
        x.iter()
            .enumerate()
            .all(|(i, v)| self.lo[i].as_ref().is_none_or(|l| v >= l) && self.hi[i].as_ref().is_none_or(|h| v <= h))
    }

    /// Whether the two closed boxes share a point (exact).
    pub fn touches(&self, other: &RBox) -> bool {
        (0..self.dims()).all(|i| !lo_above_hi(&self.lo[i], &other.hi[i]) && !lo_above_hi(&other.lo[i], &self.hi[i]))
    }

    /// Closed boxes whose union with `c` contains `self`, with interiors disjoint from `c` and
    /// from each other: `self` minus `c`, in exact arithmetic (unbounded sides allowed).
    pub fn subtract(&self, c: &RBox) -> Vec<RBox> {
        if !self.touches(c) {
            return vec![self.clone()];
        }
        let mut r = self.clone();
        let mut pieces = Vec::new();
        for i in 0..r.dims() {
            // r.lo < c.lo, with a missing lower end below everything.
            if let Some(cl) = &c.lo[i]
                && r.lo[i].as_ref().is_none_or(|rl| rl < cl)
            {
                let mut p = r.clone();
                p.hi[i] = Some(cl.clone());
                pieces.push(p);
                r.lo[i] = Some(cl.clone());
            }
            // r.hi > c.hi, with a missing upper end above everything.
            if let Some(ch) = &c.hi[i]
                && r.hi[i].as_ref().is_none_or(|rh| rh > ch)
            {
                let mut p = r.clone();
                p.lo[i] = Some(ch.clone());
                pieces.push(p);
                r.hi[i] = Some(ch.clone());
            }
        }
        pieces
    }

    /// The parts of `self` outside the union of `covers` (exact); empty exactly when covered (see
    /// [`FBox::uncovered`]).
    pub fn uncovered<'a>(&self, covers: impl IntoIterator<Item = &'a RBox>) -> Vec<RBox> {
        subtract_all(self, covers, RBox::subtract, usize::MAX, || false).expect("never stopped")
    }

    /// Whether the union of `covers` contains `self` (exact).
    pub fn is_covered_by<'a>(&self, covers: impl IntoIterator<Item = &'a RBox>) -> bool {
        self.uncovered(covers).is_empty()
    }

    /// The exact box of an f64 box whose ends may be infinite (infinite ends: unbounded).
    pub fn of_fbox(b: &FBox) -> RBox {
        let end = |x: f64| x.is_finite().then(|| crate::num::rational_from_f64(x));
        RBox { lo: b.lo.iter().map(|&x| end(x)).collect(), hi: b.hi.iter().map(|&x| end(x)).collect() }
    }

    /// The largest f64 box inside this one (ends rounded inward, unbounded sides infinite), or
    /// `None` when no f64 box fits (an end rounds past the other). A set covered by inner boxes is
    /// covered by the exact boxes.
    pub fn inner_fbox(&self) -> Option<InnerBox> {
        let lo: Vec<f64> = self.lo.iter().map(|l| l.as_ref().map_or(f64::NEG_INFINITY, up)).collect();
        let hi: Vec<f64> = self.hi.iter().map(|h| h.as_ref().map_or(f64::INFINITY, down)).collect();
        lo.iter().zip(&hi).all(|(l, h)| l <= h).then_some(InnerBox(FBox { lo, hi }))
    }

    /// The smallest f64 box containing this one, unbounded sides infinite (unlike
    /// [`RBox::enclosing_fbox`], which refuses them).
    pub fn outer_fbox(&self) -> OuterBox {
        OuterBox(FBox {
            lo: self.lo.iter().map(|l| l.as_ref().map_or(f64::NEG_INFINITY, down)).collect(),
            hi: self.hi.iter().map(|h| h.as_ref().map_or(f64::INFINITY, up)).collect(),
        })
    }
}

/// `lo > hi` for a lower end (missing: minus infinity) and an upper end (missing: infinity).
fn lo_above_hi(lo: &Option<Rational>, hi: &Option<Rational>) -> bool {
    matches!((lo, hi), (Some(l), Some(h)) if l > h)
}

/// An f64 box that contains the exact box it was rounded from (ends rounded outward): what a
/// sound over-approximation needs (a cover of the invariant, enclosures of a region). Made only
/// by [`RBox::outer_fbox`] and [`RBox::enclosing_fbox`], so it cannot be confused with an
/// [`InnerBox`]; read it as an [`FBox`].
#[derive(Clone, Debug, PartialEq)]
pub struct OuterBox(FBox);

/// An f64 box inside the exact box it was rounded from (ends rounded inward): what an
/// under-approximation needs (cells that must lie in Safe, start states that must be initial).
/// Made only by [`RBox::inner_fbox`]; read it as an [`FBox`].
#[derive(Clone, Debug, PartialEq)]
pub struct InnerBox(FBox);

macro_rules! rounded_box {
    ($t:ident) => {
        impl $t {
            /// The f64 box itself, without the rounding direction it was made with.
            pub fn into_fbox(self) -> FBox {
                self.0
            }
        }
        impl std::ops::Deref for $t {
            type Target = FBox;
            fn deref(&self) -> &FBox {
                &self.0
            }
        }
        impl AsRef<FBox> for $t {
            fn as_ref(&self) -> &FBox {
                &self.0
            }
        }
    };
}
rounded_box!(OuterBox);
rounded_box!(InnerBox);

impl AsRef<FBox> for FBox {
    fn as_ref(&self) -> &FBox {
        self
    }
}

/// A closed box with f64 ends: what the splitting engines and bound computations work on. Its
/// relation to an exact set is carried by [`OuterBox`] / [`InnerBox`] where it matters.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FBox {
    /// Lower ends, one per dimension (may be `-inf` where a box is unbounded).
    pub lo: Vec<f64>,
    /// Upper ends, one per dimension, `hi[i] >= lo[i]` (may be `+inf`).
    pub hi: Vec<f64>,
}

impl FBox {
    /// A box from its ends; both of the same length (checked in debug builds).
    pub fn new(lo: Vec<f64>, hi: Vec<f64>) -> FBox {
        debug_assert_eq!(lo.len(), hi.len());
        FBox { lo, hi }
    }

    /// Number of dimensions.
    pub fn dims(&self) -> usize {
        self.lo.len()
    }

    /// Dimension `i` as an interval.
    pub fn interval(&self, i: usize) -> Interval {
        Interval::new(self.lo[i], self.hi[i])
    }

    /// Every dimension as an interval.
    pub fn intervals(&self) -> Vec<Interval> {
        (0..self.dims()).map(|i| self.interval(i)).collect()
    }

    /// The box whose dimensions are the given intervals.
    pub fn from_intervals(iv: &[Interval]) -> FBox {
        FBox { lo: iv.iter().map(|i| i.lo).collect(), hi: iv.iter().map(|i| i.hi).collect() }
    }

    /// Whether the ends have the same length, are finite and `lo <= hi` in every dimension (a box
    /// splitting can work on).
    pub fn is_valid(&self) -> bool {
        self.lo.len() == self.hi.len()
            && self.lo.iter().zip(&self.hi).all(|(l, h)| l.is_finite() && h.is_finite() && l <= h)
    }

    /// The midpoint of every dimension (inside the box, see [`Interval::mid`]).
    pub fn center(&self) -> Vec<f64> {
        (0..self.dims()).map(|i| self.interval(i).mid()).collect()
    }

    /// `hi - lo` per dimension, rounded to nearest (for heuristics).
    pub fn widths(&self) -> Vec<f64> {
        self.lo.iter().zip(&self.hi).map(|(l, h)| h - l).collect()
    }

    /// The largest width (0 for no dimensions).
    pub fn max_width(&self) -> f64 {
        self.widths().into_iter().fold(0.0, f64::max)
    }

    /// Whether the f64 point lies in the closed box (exact comparisons).
    pub fn contains(&self, x: &[f64]) -> bool {
        x.iter().enumerate().all(|(i, &v)| self.lo[i] <= v && v <= self.hi[i])
    }

    /// Whether `other` lies inside `self` (exact comparisons).
    pub fn contains_box(&self, other: &FBox) -> bool {
        (0..self.dims()).all(|i| self.lo[i] <= other.lo[i] && other.hi[i] <= self.hi[i])
    }

    /// The intersection, or `None` when it is empty.
    pub fn intersect(&self, other: &FBox) -> Option<FBox> {
        let iv: Option<Vec<Interval>> =
            (0..self.dims()).map(|i| self.interval(i).intersect(&other.interval(i))).collect();
        iv.map(|iv| FBox::from_intervals(&iv))
    }

    /// Splits dimension `d` at its midpoint; both halves share the midpoint, so they cover the box.
    pub fn bisect(&self, d: usize) -> (FBox, FBox) {
        let m = self.interval(d).mid();
        let mut a = self.clone();
        let mut b = self.clone();
        a.hi[d] = m;
        b.lo[d] = m;
        (a, b)
    }

    /// Whether the two closed boxes share a point.
    pub fn touches(&self, other: &FBox) -> bool {
        (0..self.dims()).all(|i| self.lo[i] <= other.hi[i] && other.lo[i] <= self.hi[i])
    }

    /// Product of the widths (rounded to nearest: a measure for heuristics, not for proofs).
    pub fn volume(&self) -> f64 {
        self.widths().iter().product()
    }

    /// Closed boxes whose union with `c` contains `self`, with interiors disjoint from `c` and
    /// from each other: `self` minus `c`. Exact: the pieces' ends are ends of the two boxes (no
    /// arithmetic), comparisons are exact, infinite ends allowed.
    pub fn subtract(&self, c: &FBox) -> Vec<FBox> {
        if !self.touches(c) {
            return vec![self.clone()];
        }
        let mut r = self.clone();
        let mut pieces = Vec::new();
        for i in 0..r.dims() {
            if r.lo[i] < c.lo[i] {
                let mut p = r.clone();
                p.hi[i] = c.lo[i];
                pieces.push(p);
                r.lo[i] = c.lo[i];
            }
            if r.hi[i] > c.hi[i] {
                let mut p = r.clone();
                p.lo[i] = c.hi[i];
                pieces.push(p);
                r.hi[i] = c.hi[i];
            }
        }
        pieces
    }

    /// The parts of `self` outside the union of `covers`, as closed boxes with disjoint interiors
    /// (exact, see [`FBox::subtract`]). Empty exactly when the union covers `self`: a piece left
    /// over has an interior disjoint from every cover, and finitely many closed boxes cannot cover
    /// an open set they only touch on their boundaries.
    pub fn uncovered<'a>(&self, covers: impl IntoIterator<Item = &'a FBox>) -> Vec<FBox> {
        subtract_all(self, covers, FBox::subtract, usize::MAX, || false).expect("never stopped")
    }

    /// Whether the union of `covers` contains `self` (exact).
    pub fn is_covered_by<'a>(&self, covers: impl IntoIterator<Item = &'a FBox>) -> bool {
        self.uncovered(covers).is_empty()
    }

    /// [`FBox::is_covered_by`] that asks `stop` before each piece is cut and gives up (`None`)
    /// when it says so, or when more than [`MAX_UNCOVERED_PIECES`] pieces are left: a box against
    /// thousands of grid cells splits into pieces that multiply, up to 2d per piece and cover in
    /// d dimensions (`synth --forward` on a 6-D system spent minutes and 19 GB in one such
    /// subtraction without looking at its time limit).
    pub fn is_covered_by_unless<'a>(
        &self,
        covers: impl IntoIterator<Item = &'a FBox>,
        stop: impl FnMut() -> bool,
    ) -> Option<bool> {
        subtract_all(self, covers, FBox::subtract, MAX_UNCOVERED_PIECES, stop).map(|rest| rest.is_empty())
    }

    /// The box as an exact rational box.
    pub fn to_rbox(&self) -> RBox {
        RBox {
            lo: self.lo.iter().map(|&x| Some(crate::num::rational_from_f64(x))).collect(),
            hi: self.hi.iter().map(|&x| Some(crate::num::rational_from_f64(x))).collect(),
        }
    }
}

/// Most pieces [`FBox::is_covered_by_unless`] keeps of the box it subtracts from (about 150 MB
/// of 6-D boxes) before it gives up.
pub const MAX_UNCOVERED_PIECES: usize = 1 << 20;

/// `b` minus the union of `covers`, one cover at a time (the pieces of `subtract` stay disjoint);
/// `None` when `stop` says so before a piece is cut, or when more than `max_pieces` are left.
fn subtract_all<'a, B: Clone + 'a>(
    b: &B,
    covers: impl IntoIterator<Item = &'a B>,
    subtract: impl Fn(&B, &B) -> Vec<B>,
    max_pieces: usize,
    mut stop: impl FnMut() -> bool,
) -> Option<Vec<B>> {
    let mut rest = vec![b.clone()];
    for c in covers {
        if rest.is_empty() {
            break;
        }
        let mut next = Vec::with_capacity(rest.len());
        for r in &rest {
            if stop() {
                return None;
            }
            next.extend(subtract(r, c));
            if next.len() > max_pieces {
                return None;
            }
        }
        rest = next;
    }
    Some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::num::parse_rational;

    fn x(i: usize) -> Expr {
        Expr::Var(VarRef::State(i))
    }
    fn c(s: &str) -> Expr {
        Expr::Const(parse_rational(s).unwrap())
    }

    #[test]
    fn boxes_from_conjunctions_and_unions() {
        let p = Pred::And(vec![
            Pred::Cmp(c("0.25"), CmpOp::Le, x(0)),
            Pred::Cmp(x(0), CmpOp::Le, c("0.95")),
            Pred::Cmp(x(1), CmpOp::Ge, c("0.55")),
            Pred::Cmp(x(1), CmpOp::Le, c("0.95")),
        ]);
        let boxes = p.to_box_union(2, 16).unwrap();
        assert_eq!(boxes.len(), 1);
        assert_eq!(boxes[0].hi[0], Some(parse_rational("0.95").unwrap()));
        let f = boxes[0].enclosing_fbox().unwrap();
        assert!(crate::num::rational_from_f64(f.hi[0]) >= parse_rational("0.95").unwrap());
        let strict = Pred::Cmp(x(0), CmpOp::Lt, c("1"));
        assert!(strict.to_box_union(2, 16).is_none());
        let union = Pred::Or(vec![p.clone(), Pred::Cmp(x(0), CmpOp::Eq, c("2"))]);
        assert_eq!(union.to_box_union(2, 16).unwrap().len(), 2);
    }

    #[test]
    fn subtraction_is_exact_and_covers() {
        let unit = FBox::new(vec![0.0, 0.0], vec![1.0, 1.0]);
        let halves = [FBox::new(vec![0.0, 0.0], vec![0.5, 1.0]), FBox::new(vec![0.5, 0.0], vec![1.0, 1.0])];
        assert!(unit.is_covered_by(&halves));
        assert!(!unit.is_covered_by(&halves[..1]));
        // Touching on a face covers nothing of the interior.
        let right = FBox::new(vec![1.0, 0.0], vec![2.0, 1.0]);
        assert_eq!(unit.uncovered([&right]), vec![unit.clone()]);
        // A hole in the middle leaves four pieces whose union with the hole is the box.
        let hole = FBox::new(vec![0.25, 0.25], vec![0.75, 0.75]);
        let rest = unit.uncovered([&hole]);
        assert_eq!(rest.len(), 4);
        let mut all = rest.clone();
        all.push(hole.clone());
        assert!(unit.is_covered_by(&all));
        let area: f64 = rest.iter().map(FBox::volume).sum();
        assert_eq!(area, 0.75);
        // A one-ulp gap is found.
        let gap = [FBox::new(vec![0.0, 0.0], vec![0.5, 1.0]), FBox::new(vec![0.5f64.next_up(), 0.0], vec![1.0, 1.0])];
        assert!(!unit.is_covered_by(&gap));
        // Infinite ends.
        let plane = FBox::new(vec![f64::NEG_INFINITY, f64::NEG_INFINITY], vec![f64::INFINITY, f64::INFINITY]);
        assert!(unit.is_covered_by([&plane]));
        assert_eq!(plane.uncovered([&unit]).len(), 4);
    }

    #[test]
    fn exact_subtraction_closes_decimal_seams() {
        let q = |t: &str| Some(parse_rational(t).unwrap());
        let rb = |lo: [&str; 2], hi: [&str; 2]| RBox { lo: vec![q(lo[0]), q(lo[1])], hi: vec![q(hi[0]), q(hi[1])] };
        let halves = [rb(["0.25", "0.55"], ["0.55", "0.95"]), rb(["0.55", "0.55"], ["0.95", "0.95"])];
        let image = RBox::of_fbox(&FBox::new(vec![0.46, 0.56], vec![0.64, 0.74]));
        assert!(image.is_covered_by(&halves), "0.55 is one seam, not two rounded ends");
        let wide = RBox::of_fbox(&FBox::new(vec![0.2, 0.56], vec![0.64, 0.74]));
        let rest = wide.uncovered(&halves);
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].hi[0], q("0.25"));
        // Unbounded sides.
        let half_plane = RBox { lo: vec![None, None], hi: vec![q("0.55"), None] };
        assert!(image.uncovered([&half_plane]).len() == 1);
        let plane = RBox::unbounded(2);
        assert!(image.is_covered_by([&plane]));
        assert_eq!(plane.uncovered([&image]).len(), 4);
        assert!(RBox::of_fbox(&FBox::new(vec![f64::NEG_INFINITY, 0.0], vec![0.0, 1.0])).lo[0].is_none());
    }

    #[test]
    fn inner_and_outer_enclosures() {
        let third = Pred::And(vec![Pred::Cmp(c("1/3"), CmpOp::Le, x(0)), Pred::Cmp(x(0), CmpOp::Le, c("2/3"))]);
        let b = &third.to_box_union(2, 4).unwrap()[0];
        let inner = b.inner_fbox().unwrap();
        let outer = b.outer_fbox();
        assert!(crate::num::rational_from_f64(inner.lo[0]) > parse_rational("1/3").unwrap());
        assert!(crate::num::rational_from_f64(outer.lo[0]) < parse_rational("1/3").unwrap());
        assert!(outer.contains_box(&inner));
        assert_eq!((inner.lo[1], outer.hi[1]), (f64::NEG_INFINITY, f64::INFINITY));
        let point = Pred::Cmp(x(0), CmpOp::Eq, c("1/3"));
        assert!(point.to_box_union(1, 4).unwrap()[0].inner_fbox().is_none());
    }

    #[test]
    fn bisection_shares_the_midpoint() {
        let b = FBox::new(vec![0.25, 0.55], vec![0.95, 0.95]);
        let (l, r) = b.bisect(0);
        assert_eq!(l.hi[0], r.lo[0]);
        assert_eq!(l.lo[0], 0.25);
        assert_eq!(r.hi[0], 0.95);
    }
}
