//! MILP encodings of the IR's piecewise-linear expressions and linear predicates.
//!
//! Every encoded quantity is a [`Bounded`]: an affine expression of model variables together with a
//! sound interval of its values, computed bottom-up with the IR's outward-rounded interval operations
//! (the same rules as [`Expr::eval_interval`]). The intervals give the big-M constants and decide
//! operators whose branch is fixed on the whole box (no binary then).
//!
//! * affine operations and products with a constant factor: affine expressions;
//! * `min`, `max`, `relu`, `abs`: one continuous variable and one binary;
//! * `ite(c, a, b)`: `c` reified into a binary `delta` (`delta = 1 => c`, `delta = 0 => not c`), the
//!   result equal to `a` or `b` by big-M;
//! * `lookup(i, [e0, ...])`: one binary per index the interval of `i` allows, `sum z = 1`,
//!   `i = sum k z_k`, the result equal to the selected entry by big-M.
//!
//! Predicates are put in negation normal form; conjunctions add all their constraints, disjunctions
//! one binary per disjunct (`sum b >= 1`, `b_k = 1 => disjunct k`). A strict comparison of an
//! integer-valued difference (integer variables, integer coefficients) is exact (`d < 0` as
//! `d <= -1`); any other strictness is dropped (`a < b` is encoded as `a <= b`): the encoded set is
//! then the closure of the real one, an over-approximation that [`crate::replay`] corrects for every
//! counterexample.
//!
//! `lookup` is the only partial operator (a non-integer or out-of-range index is an evaluation error,
//! i.e. no successor). Its `i = sum k z_k` is only imposed where the lookup is evaluated: under an
//! `ite` branch it is relaxed by that branch's literal, so an untaken branch constrains nothing.

use crate::error::MilpError;
use crate::model::{MilpModel, constant, is_constant};
use good_lp::{Expression, IntoAffineExpression};
use trestle_ir::expr::{Env, Expr, VarRef};
use trestle_ir::num::to_f64_nearest;
use trestle_ir::pred::{CmpOp, Pred};
use trestle_ir::{Interval, Rational};

/// An affine expression of model variables and a sound enclosure of its values.
#[derive(Clone, Debug)]
pub struct Bounded {
    pub expr: Expression,
    pub iv: Interval,
}

impl Bounded {
    pub fn new(expr: Expression, iv: Interval) -> Bounded {
        Bounded { expr, iv }
    }

    /// An exact constant: the nearest f64 in the model, its exact enclosure as the interval.
    pub fn rational(q: &Rational) -> Bounded {
        Bounded { expr: constant(to_f64_nearest(q)), iv: Interval::of_rational(q) }
    }

    pub fn float(k: f64) -> Bounded {
        Bounded { expr: constant(k), iv: Interval::point(k) }
    }

    /// The value when the expression has no variable.
    pub fn as_constant(&self) -> Option<f64> {
        is_constant(&self.expr).then(|| self.expr.constant())
    }

    fn finite(&self, what: &str) -> Result<(), MilpError> {
        if self.iv.lo.is_finite() && self.iv.hi.is_finite() {
            Ok(())
        } else {
            Err(MilpError::Unbounded { what: what.to_string(), lo: self.iv.lo, hi: self.iv.hi })
        }
    }
}

/// What the IR's variables stand for in a model.
#[derive(Clone, Debug, Default)]
pub struct VarMap {
    pub state: Vec<Bounded>,
    pub action: Vec<Bounded>,
    pub nondet: Vec<Bounded>,
}

impl VarMap {
    fn get(&self, v: VarRef) -> Result<&Bounded, MilpError> {
        let (list, i, what) = match v {
            VarRef::State(i) => (&self.state, i, "state"),
            VarRef::Action(i) => (&self.action, i, "action"),
            VarRef::Nondet(i) => (&self.nondet, i, "non-deterministic input"),
        };
        list.get(i).ok_or_else(|| MilpError::Unsupported(format!("{what} variable {i} is not in the model")))
    }

    /// Interval values of all variables, for [`Pred::eval_interval`].
    fn intervals(&self) -> [Vec<Interval>; 3] {
        let iv = |xs: &[Bounded]| xs.iter().map(|b| b.iv).collect::<Vec<_>>();
        [iv(&self.state), iv(&self.action), iv(&self.nondet)]
    }
}

/// A 0/1 condition: constant or a 0/1-valued affine expression (a binary or `1 - binary`).
#[derive(Clone, Debug)]
pub enum Lit {
    True,
    False,
    Expr(Expression),
}

impl Lit {
    /// A 0/1-valued expression as a literal (constants folded).
    pub fn of(e: &Expression) -> Lit {
        if is_constant(e) { if e.constant() >= 0.5 { Lit::True } else { Lit::False } } else { Lit::Expr(e.clone()) }
    }

    pub fn not(&self) -> Lit {
        match self {
            Lit::True => Lit::False,
            Lit::False => Lit::True,
            Lit::Expr(e) => Lit::Expr(constant(1.0) - e.clone()),
        }
    }

    /// `a /\ b`, a fresh binary when neither is constant.
    pub fn and(model: &mut MilpModel, a: &Lit, b: &Lit) -> Lit {
        match (a, b) {
            (Lit::False, _) | (_, Lit::False) => Lit::False,
            (Lit::True, x) | (x, Lit::True) => x.clone(),
            (Lit::Expr(x), Lit::Expr(y)) => {
                let l = model.binary();
                model.add((Expression::from(l) - x.clone()).leq(0.0));
                model.add((Expression::from(l) - y.clone()).leq(0.0));
                model.add((Expression::from(l) - x.clone() - y.clone()).geq(-1.0));
                Lit::Expr(Expression::from(l))
            }
        }
    }
}

/// `lit => e <= 0`, with `e <= hi` everywhere.
fn le_zero_if(model: &mut MilpModel, lit: &Lit, e: Expression, hi: f64, what: &str) -> Result<(), MilpError> {
    match lit {
        Lit::False => Ok(()),
        Lit::True => {
            model.add(e.leq(0.0));
            Ok(())
        }
        Lit::Expr(_) if hi <= 0.0 => Ok(()),
        Lit::Expr(l) => {
            if !hi.is_finite() {
                return Err(MilpError::Unbounded { what: what.to_string(), lo: f64::NEG_INFINITY, hi });
            }
            // e <= hi (1 - l)
            model.add((e + hi * l.clone()).leq(hi));
            Ok(())
        }
    }
}

/// `lit => e >= 0`, with `e >= lo` everywhere.
fn ge_zero_if(model: &mut MilpModel, lit: &Lit, e: Expression, lo: f64, what: &str) -> Result<(), MilpError> {
    le_zero_if(model, lit, -e, -lo, what)
}

/// `lit => false` (a constant-true literal marks the model infeasible).
pub fn forbid(model: &mut MilpModel, lit: &Lit, reason: &str) {
    match lit {
        Lit::False => {}
        Lit::True => model.mark_infeasible(reason),
        Lit::Expr(l) => model.add(l.clone().leq(0.0)),
    }
}

/// Encodes a piecewise-linear expression; partial operators are constrained unconditionally.
pub fn encode_expr(model: &mut MilpModel, e: &Expr, vars: &VarMap) -> Result<Bounded, MilpError> {
    Encoder { model, vars }.expr(e, &Lit::True)
}

/// Encodes a piecewise-linear expression evaluated only where `lit` holds: its partial operators
/// (`lookup`) are constrained under `lit` alone, so an expression of a branch not taken constrains
/// nothing.
pub fn encode_expr_if(model: &mut MilpModel, e: &Expr, lit: &Lit, vars: &VarMap) -> Result<Bounded, MilpError> {
    Encoder { model, vars }.expr(e, lit)
}

/// One of several values, chosen by 0/1 literals of which exactly one holds (the caller's
/// constraint): a variable equal, by big-M, to the value whose literal holds. A single choice is
/// that value itself.
pub fn select(model: &mut MilpModel, choices: &[(Lit, Bounded)], what: &str) -> Result<Bounded, MilpError> {
    if let [(_, only)] = choices {
        return Ok(only.clone());
    }
    let Some(iv) = choices.iter().map(|(_, b)| b.iv).reduce(|a, b| a.hull(&b)) else {
        return Err(MilpError::Dimension { what: format!("choices of {what}"), found: 0, expected: 1 });
    };
    if !(iv.lo.is_finite() && iv.hi.is_finite()) {
        return Err(MilpError::Unbounded { what: format!("{what} entries"), lo: iv.lo, hi: iv.hi });
    }
    let integral = choices.iter().all(|(_, b)| model.is_integral(&b.expr));
    let y = Expression::from(result_var(model, iv, integral, what)?);
    for (lit, item) in choices {
        let d = y.clone() - item.expr.clone();
        le_zero_if(model, lit, d.clone(), iv.hi - item.iv.lo, what)?;
        ge_zero_if(model, lit, d, iv.lo - item.iv.hi, what)?;
    }
    Ok(Bounded::new(y, iv))
}

/// `lit => a op b`, relaxed by `slack`: each quantity that must be `<= 0` for the comparison is
/// stated as `quantity <= slack` under `lit` (big-M from its enclosure). Between integers a
/// violation is a whole unit, more than a slack can relax: `a < b` is `a - b + 1 <= 0`, stated
/// exactly without slack. Between reals a strict comparison is its closure, or holds by
/// `strict_gap` when that is positive. A quantity whose enclosure (rounded outward) lies above
/// `forbid_above` everywhere forbids `lit` (exact for `forbid_above >= 0`: no point satisfies the
/// comparison even relaxed by that much).
#[allow(clippy::too_many_arguments)]
pub fn assert_cmp_relaxed(
    model: &mut MilpModel,
    (a, op, b): (&Expr, CmpOp, &Expr),
    lit: &Lit,
    vars: &VarMap,
    slack: good_lp::Variable,
    strict_gap: f64,
    forbid_above: f64,
) -> Result<(), MilpError> {
    let x = encode_expr_if(model, a, lit, vars)?;
    let y = encode_expr_if(model, b, lit, vars)?;
    let d = Bounded::new(x.expr.clone() - y.expr.clone(), x.iv.sub(&y.iv));
    let integral = model.is_integral(&d.expr);
    let neg = |v: &Bounded| Bounded::new(constant(0.0) - v.expr.clone(), v.iv.neg());
    let step = if integral { 1.0 } else { strict_gap };
    let shift = |v: Bounded| if step > 0.0 { Bounded::new(v.expr + step, v.iv.add(&Interval::point(step))) } else { v };
    let items = match op {
        CmpOp::Le => vec![d],
        CmpOp::Lt => vec![shift(d)],
        CmpOp::Ge => vec![neg(&d)],
        CmpOp::Gt => vec![shift(neg(&d))],
        CmpOp::Eq => vec![neg(&d), d],
    };
    for v in items {
        if v.iv.hi <= 0.0 {
            continue;
        }
        if v.iv.lo > forbid_above {
            forbid(model, lit, "an atom is false on the enclosure");
            return Ok(());
        }
        let e = if integral { v.expr } else { v.expr - slack };
        match lit {
            Lit::True => model.add(e.leq(0.0)),
            // e <= hi (1 - l), with e <= v.hi everywhere.
            Lit::Expr(l) => model.add((e + v.iv.hi * l.clone()).leq(v.iv.hi)),
            Lit::False => {}
        }
    }
    Ok(())
}

/// Adds constraints forcing the (closure of the) predicate to hold.
pub fn assert_pred(model: &mut MilpModel, p: &Pred, vars: &VarMap) -> Result<(), MilpError> {
    Encoder { model, vars }.implied(&p.nnf(false), &Lit::True, &Lit::True)
}

/// Adds constraints forcing `lit => p` (closure of `p`); `lit` is a 0/1 literal of the model.
pub fn assert_pred_if(model: &mut MilpModel, p: &Pred, lit: &Lit, vars: &VarMap) -> Result<(), MilpError> {
    Encoder { model, vars }.implied(&p.nnf(false), lit, &Lit::True)
}

/// A binary `delta` with `delta = 1 => p` and `delta = 0 => not p` (both closed, so on the boundary
/// either value is allowed).
pub fn reify_pred(model: &mut MilpModel, p: &Pred, vars: &VarMap) -> Result<Lit, MilpError> {
    Encoder { model, vars }.reify(p, &Lit::True)
}

/// Maximum of two bounded quantities.
pub fn max_of(model: &mut MilpModel, a: &Bounded, b: &Bounded, what: &str) -> Result<Bounded, MilpError> {
    if a.iv.lo >= b.iv.hi {
        return Ok(a.clone());
    }
    if b.iv.lo >= a.iv.hi {
        return Ok(b.clone());
    }
    a.finite(what)?;
    b.finite(what)?;
    let iv = a.iv.max(&b.iv);
    let integral = model.is_integral(&a.expr) && model.is_integral(&b.expr);
    let y = result_var(model, iv, integral, what)?;
    let d = model.binary();
    let y_e = Expression::from(y);
    model.add((a.expr.clone() - y).leq(0.0));
    model.add((b.expr.clone() - y).leq(0.0));
    // d = 1: y <= b;  d = 0: y <= a.
    let ma = b.iv.hi - a.iv.lo;
    let mb = a.iv.hi - b.iv.lo;
    // y <= a + ma d
    model.add((y_e.clone() - a.expr.clone() - ma * d).leq(0.0));
    // y <= b + mb (1 - d)
    model.add((y_e - b.expr.clone() + mb * d).leq(mb));
    Ok(Bounded::new(Expression::from(y), iv))
}

/// A variable for a result in `iv`; an integer variable when the result is always one of
/// integer-valued quantities (so that comparisons and targets on it stay exact).
fn result_var(model: &mut MilpModel, iv: Interval, integral: bool, what: &str) -> Result<good_lp::Variable, MilpError> {
    let (lo, hi) = (iv.lo.ceil(), iv.hi.floor());
    if integral && lo <= hi { model.integer(lo, hi, what) } else { model.continuous(iv.lo, iv.hi, what) }
}

/// Minimum of two bounded quantities.
pub fn min_of(model: &mut MilpModel, a: &Bounded, b: &Bounded, what: &str) -> Result<Bounded, MilpError> {
    let neg = |x: &Bounded| Bounded::new(-x.expr.clone(), x.iv.neg());
    let m = max_of(model, &neg(a), &neg(b), what)?;
    Ok(neg(&m))
}

struct Encoder<'a> {
    model: &'a mut MilpModel,
    vars: &'a VarMap,
}

impl Encoder<'_> {
    fn interval_env_holds(&self, p: &Pred) -> Option<bool> {
        let [s, a, n] = self.vars.intervals();
        p.eval_interval(&Env::new(&s, &a, &n))
    }

    /// `ctx`: the literal under which this expression is evaluated (for partial operators).
    fn expr(&mut self, e: &Expr, ctx: &Lit) -> Result<Bounded, MilpError> {
        Ok(match e {
            Expr::Const(q) => Bounded::rational(q),
            Expr::Var(v) => self.vars.get(*v)?.clone(),
            Expr::Neg(a) => {
                let a = self.expr(a, ctx)?;
                Bounded::new(-a.expr, a.iv.neg())
            }
            Expr::Add(a, b) => {
                let (a, b) = (self.expr(a, ctx)?, self.expr(b, ctx)?);
                Bounded::new(a.expr + b.expr, a.iv.add(&b.iv))
            }
            Expr::Sub(a, b) => {
                let (a, b) = (self.expr(a, ctx)?, self.expr(b, ctx)?);
                Bounded::new(a.expr - b.expr, a.iv.sub(&b.iv))
            }
            Expr::Mul(x, y) => {
                let (a, b) = (self.expr(x, ctx)?, self.expr(y, ctx)?);
                let iv = a.iv.mul(&b.iv);
                match (a.as_constant(), b.as_constant()) {
                    (Some(k), _) => Bounded::new(b.expr * k, iv),
                    (_, Some(k)) => Bounded::new(a.expr * k, iv),
                    _ => {
                        let reads_input = |e: &Expr| e.mentions(|v| matches!(v, trestle_ir::VarRef::Nondet(_)));
                        let detail = if reads_input(x) || reads_input(y) {
                            "both factors vary, and one reads a non-deterministic input: fixing the inputs to \
                             their values (where the step is multilinear in them) leaves a constant factor"
                        } else {
                            "both factors vary with the state or the actions (a product of two variables); a MILP \
                             encodes products with a constant factor only"
                        };
                        return Err(MilpError::NotPiecewiseLinear { what: "a product".into(), detail: detail.into() });
                    }
                }
            }
            Expr::Div(a, k) => {
                let a = self.expr(a, ctx)?;
                let inv = Rational::from_integer(1.into()) / k;
                let iv = a.iv.mul(&Interval::of_rational(&inv));
                Bounded::new(a.expr * to_f64_nearest(&inv), iv)
            }
            Expr::Min(a, b) => {
                let (a, b) = (self.expr(a, ctx)?, self.expr(b, ctx)?);
                min_of(self.model, &a, &b, "min")?
            }
            Expr::Max(a, b) => {
                let (a, b) = (self.expr(a, ctx)?, self.expr(b, ctx)?);
                max_of(self.model, &a, &b, "max")?
            }
            Expr::Relu(a) => {
                let a = self.expr(a, ctx)?;
                max_of(self.model, &a, &Bounded::float(0.0), "relu")?
            }
            Expr::Abs(a) => {
                let a = self.expr(a, ctx)?;
                let neg = Bounded::new(-a.expr.clone(), a.iv.neg());
                max_of(self.model, &a, &neg, "abs")?
            }
            Expr::Ite(c, a, b) => match self.interval_env_holds(c) {
                Some(true) => self.expr(a, ctx)?,
                Some(false) => self.expr(b, ctx)?,
                None => self.ite(c, a, b, ctx)?,
            },
            Expr::Lookup(i, items) => self.lookup(i, items, ctx)?,
            Expr::Pow(a, n) => {
                let a = self.expr(a, ctx)?;
                match (n, a.as_constant()) {
                    (0, _) => Bounded::float(1.0),
                    (1, _) => a,
                    // A constant base (an input fixed at one of its values): the power is a
                    // constant, enclosed outward.
                    (n, Some(k)) => Bounded::new(constant(k.powi(*n as i32)), trestle_ir::Arith::pow(&a.iv, *n)),
                    (n, None) => {
                        return Err(MilpError::NotPiecewiseLinear {
                            what: format!("a power ^{n}"),
                            detail: "the MILP engines encode piecewise-linear steps only".into(),
                        });
                    }
                }
            }
            Expr::Apply(f, _) => {
                return Err(MilpError::NotPiecewiseLinear {
                    what: format!("{f}"),
                    detail: "the MILP engines encode piecewise-linear steps only; elementary functions are not encoded"
                        .into(),
                });
            }
        })
    }

    fn ite(&mut self, c: &Pred, a: &Expr, b: &Expr, ctx: &Lit) -> Result<Bounded, MilpError> {
        let delta = self.reify(c, ctx)?;
        let ctx_a = Lit::and(self.model, ctx, &delta);
        let ctx_b = Lit::and(self.model, ctx, &delta.not());
        let (a, b) = (self.expr(a, &ctx_a)?, self.expr(b, &ctx_b)?);
        a.finite("ite branch")?;
        b.finite("ite branch")?;
        let iv = a.iv.hull(&b.iv);
        let integral = self.model.is_integral(&a.expr) && self.model.is_integral(&b.expr);
        let y = Expression::from(result_var(self.model, iv, integral, "ite")?);
        for (branch, lit) in [(&a, delta.clone()), (&b, delta.not())] {
            // lit => y - branch <= 0 and y - branch >= 0
            let d = y.clone() - branch.expr.clone();
            le_zero_if(self.model, &lit, d.clone(), iv.hi - branch.iv.lo, "ite")?;
            ge_zero_if(self.model, &lit, d, iv.lo - branch.iv.hi, "ite")?;
        }
        Ok(Bounded::new(y, iv))
    }

    fn lookup(&mut self, i: &Expr, items: &[Expr], ctx: &Lit) -> Result<Bounded, MilpError> {
        let idx = self.expr(i, ctx)?;
        idx.finite("lookup index")?;
        let lo = idx.iv.lo.ceil().max(0.0);
        let hi = idx.iv.hi.floor().min(items.len() as f64 - 1.0);
        if lo > hi {
            forbid(self.model, ctx, "lookup index is never a valid integer");
            let all: Vec<Bounded> = items.iter().map(|e| self.expr(e, &Lit::False)).collect::<Result<_, _>>()?;
            let iv = all.iter().map(|b| b.iv).reduce(|a, b| a.hull(&b)).unwrap_or(Interval::point(0.0));
            let y = self.model.continuous(iv.lo, iv.hi, "lookup")?;
            return Ok(Bounded::new(Expression::from(y), iv));
        }
        let candidates: Vec<usize> = (lo as usize..=hi as usize).collect();
        if let Some(k) = idx.as_constant() {
            // A constant index: either exactly an entry or an evaluation error.
            if k.fract() == 0.0 && candidates.contains(&(k as usize)) {
                return self.expr(&items[k as usize], ctx);
            }
            forbid(self.model, ctx, "lookup index is not a valid integer");
            return self.expr(&items[candidates[0]], &Lit::False);
        }
        let mut selected = Vec::with_capacity(candidates.len());
        let mut sum = Expression::default();
        let mut index = Expression::default();
        for &k in &candidates {
            let z = self.model.binary();
            sum.add_mul(1.0, z);
            index.add_mul(k as f64, z);
            let sub_ctx = Lit::and(self.model, ctx, &Lit::Expr(Expression::from(z)));
            selected.push((Lit::Expr(Expression::from(z)), self.expr(&items[k], &sub_ctx)?));
        }
        self.model.add(sum.eq(1.0));
        // ctx => index expression = sum k z_k
        let (kmin, kmax) = (candidates[0] as f64, *candidates.last().expect("non-empty") as f64);
        let gap = idx.expr.clone() - index;
        le_zero_if(self.model, ctx, gap.clone(), idx.iv.hi - kmin, "lookup index")?;
        ge_zero_if(self.model, ctx, gap, idx.iv.lo - kmax, "lookup index")?;
        select(self.model, &selected, "lookup")
    }

    fn reify(&mut self, p: &Pred, ctx: &Lit) -> Result<Lit, MilpError> {
        match self.interval_env_holds(p) {
            Some(true) => return Ok(Lit::True),
            Some(false) => return Ok(Lit::False),
            None => {}
        }
        let delta = Lit::Expr(Expression::from(self.model.binary()));
        self.implied(&p.nnf(false), &delta, ctx)?;
        self.implied(&p.nnf(true), &delta.not(), ctx)?;
        Ok(delta)
    }

    /// `lit => p` for `p` in negation normal form.
    fn implied(&mut self, p: &Pred, lit: &Lit, ctx: &Lit) -> Result<(), MilpError> {
        if matches!(lit, Lit::False) {
            return Ok(());
        }
        match self.interval_env_holds(p) {
            Some(true) => return Ok(()),
            Some(false) => {
                forbid(self.model, lit, "a predicate is false on the whole box");
                return Ok(());
            }
            None => {}
        }
        match p {
            Pred::True => Ok(()),
            Pred::False => {
                forbid(self.model, lit, "false");
                Ok(())
            }
            Pred::Not(q) => self.implied(&q.nnf(true), lit, ctx),
            Pred::And(ps) => ps.iter().try_for_each(|q| self.implied(q, lit, ctx)),
            Pred::Or(ps) => {
                let live: Vec<&Pred> = ps.iter().filter(|q| self.interval_env_holds(q) != Some(false)).collect();
                match live[..] {
                    [] => {
                        forbid(self.model, lit, "no disjunct can hold");
                        Ok(())
                    }
                    [only] => self.implied(only, lit, ctx),
                    _ => {
                        let mut sum = Expression::default();
                        for q in live {
                            let b = self.model.binary();
                            sum.add_mul(1.0, b);
                            self.implied(q, &Lit::Expr(Expression::from(b)), ctx)?;
                        }
                        // sum b >= lit
                        match lit {
                            Lit::True => self.model.add(sum.geq(1.0)),
                            Lit::Expr(l) => self.model.add((sum - l.clone()).geq(0.0)),
                            Lit::False => {}
                        }
                        Ok(())
                    }
                }
            }
            Pred::Cmp(a, op, b) => {
                let (a, b) = (self.expr(a, ctx)?, self.expr(b, ctx)?);
                let d = Bounded::new(a.expr - b.expr, a.iv.sub(&b.iv));
                let what = "comparison";
                // An integer-valued difference makes a strict comparison exact: d < 0 iff d <= -1.
                let integral = op.is_strict() && self.model.is_integral(&d.expr);
                match op {
                    CmpOp::Lt if integral => le_zero_if(self.model, lit, d.expr + 1.0, d.iv.hi + 1.0, what),
                    CmpOp::Gt if integral => ge_zero_if(self.model, lit, d.expr - 1.0, d.iv.lo - 1.0, what),
                    CmpOp::Le | CmpOp::Lt => le_zero_if(self.model, lit, d.expr, d.iv.hi, what),
                    CmpOp::Ge | CmpOp::Gt => ge_zero_if(self.model, lit, d.expr, d.iv.lo, what),
                    CmpOp::Eq => {
                        le_zero_if(self.model, lit, d.expr.clone(), d.iv.hi, what)?;
                        ge_zero_if(self.model, lit, d.expr, d.iv.lo, what)
                    }
                }
            }
        }
    }
}
