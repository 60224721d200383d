//! IR -> Z3 terms. Every constant becomes the Z3 numeral of its exact rational value (IR constants
//! are exact; f64 values enter as the dyadic rationals they are), built from its numerator and
//! denominator digits, never from a decimal rendering of a float.
//!
//! All arithmetic is done in the Real sort; Int-sorted variables (int and bool state variables,
//! argmax actions) are declared Int and converted with `to_real`, so their integrality is part of
//! the query.

use crate::error::CheckError;
use trestle_ir::expr::{Expr, VarRef};
use trestle_ir::num::rational_from_f64;
use trestle_ir::pred::{CmpOp, Pred};
use trestle_ir::system::{ActionKind, NondetDomain, System, VarKind};
use trestle_ir::{FBox, Rational};
use z3::Solver;
use z3::ast::{Bool, Int, Real};

/// Whether an expression is piecewise linear (every product has a constant factor).
fn expr_linear(e: &Expr) -> bool {
    e.is_piecewise_linear()
}

/// Whether every comparison of a predicate is between piecewise-linear expressions.
pub(crate) fn pred_linear(p: &Pred) -> bool {
    match p {
        Pred::True | Pred::False => true,
        Pred::Cmp(a, _, b) => expr_linear(a) && expr_linear(b),
        Pred::Not(q) => pred_linear(q),
        Pred::And(ps) | Pred::Or(ps) => ps.iter().all(pred_linear),
    }
}

/// The SMT-LIB logic of a query over `sys` (its step when `with_step`) and the extra predicates:
/// `QF_LRA` / `QF_LIRA` when everything is piecewise linear (ints present or not), `QF_NRA` for
/// nonlinear real queries, `None` (Z3's general solver) for nonlinear queries with ints.
pub(crate) fn logic(sys: &System, with_step: bool, preds: &[&Pred]) -> Option<&'static str> {
    let ints = sys.state.iter().any(|v| v.kind != VarKind::Real)
        || (with_step && sys.actions.iter().any(|a| matches!(a.kind, ActionKind::Index { .. })));
    let step_linear = !with_step
        || sys
            .step
            .branches
            .iter()
            .all(|b| b.updates.iter().all(expr_linear) && b.guard.as_ref().is_none_or(pred_linear))
            && sys.controllers.iter().all(|c| c.inputs.iter().all(expr_linear));
    let linear = step_linear && preds.iter().all(|p| pred_linear(p));
    match (linear, ints) {
        (true, false) => Some("QF_LRA"),
        (true, true) => Some("QF_LIRA"),
        (false, false) => Some("QF_NRA"),
        (false, true) => None,
    }
}

/// The exact Z3 numeral of a rational.
pub(crate) fn num(q: &Rational) -> Real {
    Real::from_big_rational(q)
}

/// The exact Z3 numeral of a finite f64.
pub(crate) fn num_f64(x: f64) -> Real {
    num(&rational_from_f64(x))
}

pub(crate) fn int_num(k: usize) -> Int {
    Int::from_u64(k as u64)
}

/// A declared variable: its Real view, and the Int constant behind it when it is Int-sorted.
pub(crate) struct VarTerm {
    pub real: Real,
    pub int: Option<Int>,
}

impl VarTerm {
    pub(crate) fn new(name: &str, integer: bool) -> VarTerm {
        if integer {
            let i = Int::new_const(name);
            VarTerm { real: Real::from_int(&i), int: Some(i) }
        } else {
            VarTerm { real: Real::new_const(name), int: None }
        }
    }
}

/// The variables of one transition query: state, actions, non-deterministic inputs.
pub(crate) struct Vars {
    pub state: Vec<VarTerm>,
    pub action: Vec<VarTerm>,
    pub nondet: Vec<VarTerm>,
}

impl Vars {
    /// Declares `s.NAME`, `a.NAME`, `n.NAME` with the sorts of their kinds.
    pub(crate) fn declare(sys: &System, with_transition: bool) -> Vars {
        let state = sys.state.iter().map(|v| VarTerm::new(&format!("s.{}", v.name), v.kind != VarKind::Real)).collect();
        let (action, nondet) = if with_transition {
            (
                sys.actions
                    .iter()
                    .map(|a| VarTerm::new(&format!("a.{}", a.name), matches!(a.kind, ActionKind::Index { .. })))
                    .collect(),
                sys.nondet.iter().map(|n| VarTerm::new(&format!("n.{}", n.name), false)).collect(),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        Vars { state, action, nondet }
    }

    pub(crate) fn reals(terms: &[VarTerm]) -> Vec<Real> {
        terms.iter().map(|t| t.real.clone()).collect()
    }

    /// Bool state variables take the values 0 and 1 (their Int sort gives integrality).
    pub(crate) fn assert_state_kinds(&self, sys: &System, solver: &Solver) {
        for (v, t) in sys.state.iter().zip(&self.state) {
            if v.kind == VarKind::Bool {
                solver.assert(in_range(&t.real, &Rational::from_integer(0.into()), &Rational::from_integer(1.into())));
            }
        }
    }

    /// The state a step starts from is a state of the system, as [`trestle_ir::sim::check_state`]
    /// defines it: of the variables' kinds and, unless the system ignores domains, inside them.
    /// Only transition queries assume the domains: a successor outside them (an error run, or a
    /// dropped one) must still satisfy the target, and implications between state predicates
    /// (`Inv => Safe`) are proven for every state of the right kinds, so even the state where a
    /// run stops with a domain error is covered.
    pub(crate) fn assert_state_space(&self, sys: &System, solver: &Solver) {
        self.assert_state_kinds(sys, solver);
        if sys.domain_exit == trestle_ir::system::DomainExit::Ignore {
            return;
        }
        for (v, t) in sys.state.iter().zip(&self.state) {
            if let Some(l) = &v.domain.lo {
                solver.assert(t.real.ge(num(l)));
            }
            if let Some(h) = &v.domain.hi {
                solver.assert(t.real.le(num(h)));
            }
        }
    }

    /// Each non-deterministic input lies in its domain.
    pub(crate) fn assert_nondet_domains(&self, sys: &System, solver: &Solver) {
        for (v, t) in sys.nondet.iter().zip(&self.nondet) {
            let c = match &v.domain {
                NondetDomain::Interval(l, h) => in_range(&t.real, l, h),
                NondetDomain::Set(values) => or(values.iter().map(|q| t.real.eq(num(q))).collect()),
            };
            solver.assert(&c);
        }
    }
}

/// `lo <= x <= hi`.
pub(crate) fn in_range(x: &Real, lo: &Rational, hi: &Rational) -> Bool {
    and(vec![x.ge(num(lo)), x.le(num(hi))])
}

/// `x_i` in the box `b`, with exact ends.
pub(crate) fn in_box(xs: &[Real], b: &FBox) -> Bool {
    and(xs.iter().enumerate().map(|(i, x)| and(vec![x.ge(num_f64(b.lo[i])), x.le(num_f64(b.hi[i]))])).collect())
}

pub(crate) fn and(items: Vec<Bool>) -> Bool {
    match items.len() {
        0 => Bool::from_bool(true),
        1 => items.into_iter().next().expect("one item"),
        _ => Bool::and(&items),
    }
}

pub(crate) fn or(items: Vec<Bool>) -> Bool {
    match items.len() {
        0 => Bool::from_bool(false),
        1 => items.into_iter().next().expect("one item"),
        _ => Bool::or(&items),
    }
}

/// `index` follows the argmax rule of `trestle_ir::sim::argmax` over `out`, exactly: it is one of
/// `0..out.len()`, and `index = k` only if `out_k` is strictly above every lower output and at least
/// every higher one (the largest output, the lowest index among ties). Exactly one index satisfies
/// this for any outputs, so the constraint is a function, not a relaxation.
pub(crate) fn argmax_choice(index: &Real, out: &[Real]) -> Bool {
    let mut c = Vec::with_capacity(out.len() + 2);
    for (k, ok) in out.iter().enumerate() {
        let beats =
            out.iter().enumerate().filter(|&(j, _)| j != k).map(|(j, oj)| if j < k { ok.gt(oj) } else { ok.ge(oj) });
        c.push(index.eq(num(&Rational::from_integer(k.into()))).implies(and(beats.collect())));
    }
    c.push(index.ge(num(&Rational::from_integer(0.into()))));
    c.push(index.lt(num(&Rational::from_integer(out.len().into()))));
    and(c)
}

/// The values expressions read: Real terms for state, actions, non-deterministic inputs. An empty
/// slice means that kind of variable is not available where the expression is evaluated.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'a> {
    pub state: &'a [Real],
    pub action: &'a [Real],
    pub nondet: &'a [Real],
}

impl<'a> Scope<'a> {
    fn get(&self, v: VarRef) -> Result<&'a Real, CheckError> {
        let (slice, i, kind) = match v {
            VarRef::State(i) => (self.state, i, "state variable"),
            VarRef::Action(i) => (self.action, i, "action"),
            VarRef::Nondet(i) => (self.nondet, i, "non-deterministic input"),
        };
        slice.get(i).ok_or_else(|| CheckError::UnknownVariable { what: format!("an expression ({kind} #{i})") })
    }

    /// The Real term of an expression.
    pub(crate) fn expr(&self, e: &Expr) -> Result<Real, CheckError> {
        Ok(match e {
            Expr::Const(c) => num(c),
            Expr::Var(v) => self.get(*v)?.clone(),
            Expr::Neg(a) => -self.expr(a)?,
            Expr::Add(a, b) => self.expr(a)? + self.expr(b)?,
            Expr::Sub(a, b) => self.expr(a)? - self.expr(b)?,
            Expr::Mul(a, b) => self.expr(a)? * self.expr(b)?,
            Expr::Div(a, k) => self.expr(a)? * num(&(Rational::from_integer(1.into()) / k)),
            Expr::Min(a, b) => {
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                x.le(&y).ite(&x, &y)
            }
            Expr::Max(a, b) => {
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                x.ge(&y).ite(&x, &y)
            }
            Expr::Relu(a) => {
                let x = self.expr(a)?;
                x.ge(num(&Rational::from_integer(0.into()))).ite(&x, &num(&Rational::from_integer(0.into())))
            }
            Expr::Abs(a) => {
                let x = self.expr(a)?;
                x.ge(num(&Rational::from_integer(0.into()))).ite(&x, &-x.clone())
            }
            Expr::Ite(c, a, b) => self.pred(c)?.ite(&self.expr(a)?, &self.expr(b)?),
            Expr::Lookup(i, items) => {
                // An index that is not an integer in range has no defined value (evaluation fails):
                // it is left unconstrained here (a fresh value), which over-approximates; a witness
                // relying on it fails the exact replay.
                let idx = self.expr(i)?;
                let mut acc = Real::fresh_const("lookup.undefined");
                for (k, item) in items.iter().enumerate().rev() {
                    acc = idx.eq(num(&Rational::from_integer(k.into()))).ite(&self.expr(item)?, &acc);
                }
                acc
            }
            // Polynomial: exact in Z3's non-linear real arithmetic.
            Expr::Pow(a, n) => {
                let x = self.expr(a)?;
                (0..*n).fold(num(&Rational::from_integer(1.into())), |acc, _| acc * x.clone())
            }
            Expr::Apply(f, _) => {
                return Err(CheckError::Unsupported(format!(
                    "{f}: the Z3 encoding of the environment step is exact and Z3 decides polynomial \
                     arithmetic only, so it refuses elementary functions"
                )));
            }
        })
    }

    /// The Bool term of a predicate; strict comparisons stay strict.
    pub(crate) fn pred(&self, p: &Pred) -> Result<Bool, CheckError> {
        Ok(match p {
            Pred::True => Bool::from_bool(true),
            Pred::False => Bool::from_bool(false),
            Pred::Cmp(a, op, b) => {
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                match op {
                    CmpOp::Le => x.le(&y),
                    CmpOp::Lt => x.lt(&y),
                    CmpOp::Ge => x.ge(&y),
                    CmpOp::Gt => x.gt(&y),
                    CmpOp::Eq => x.eq(&y),
                }
            }
            Pred::Not(q) => self.pred(q)?.not(),
            Pred::And(ps) => and(ps.iter().map(|q| self.pred(q)).collect::<Result<_, _>>()?),
            Pred::Or(ps) => or(ps.iter().map(|q| self.pred(q)).collect::<Result<_, _>>()?),
        })
    }
}

/// The successor variables `next.NAME` and the branch selector `step.branch` of an encoded step.
pub(crate) struct StepTerms {
    pub next: Vec<Real>,
    pub branch: Int,
}

/// Asserts `Next_ENV(s, a, n, next)`: the selected branch is enabled (label and guard) and `next`
/// is its update. With `DomainExit::Drop`, `next` lies in every variable's domain and kind (such
/// successors do not exist otherwise); with `Error` / `Ignore` nothing is assumed about `next`.
pub(crate) fn assert_step(sys: &System, vars: &Vars, solver: &Solver) -> Result<StepTerms, CheckError> {
    let (state, action, nondet) = (Vars::reals(&vars.state), Vars::reals(&vars.action), Vars::reals(&vars.nondet));
    let scope = Scope { state: &state, action: &action, nondet: &nondet };
    let next: Vec<Real> = sys.state.iter().map(|v| Real::new_const(format!("next.{}", v.name))).collect();
    let branch = Int::new_const("step.branch");
    let nb = sys.step.branches.len();
    solver.assert(and(vec![branch.ge(int_num(0)), branch.lt(int_num(nb))]));
    for (b, br) in sys.step.branches.iter().enumerate() {
        let mut conds = Vec::new();
        if let Some((a, value)) = br.label {
            let t =
                action.get(a).ok_or_else(|| CheckError::UnknownVariable { what: format!("branch '{}'", br.name) })?;
            conds.push(t.eq(num(&Rational::from_integer(value.into()))));
        }
        if let Some(g) = &br.guard {
            conds.push(scope.pred(g)?);
        }
        if br.updates.len() != next.len() {
            return Err(CheckError::Dimension {
                what: format!("updates of branch '{}'", br.name),
                found: br.updates.len(),
                expected: next.len(),
            });
        }
        for (n, u) in next.iter().zip(&br.updates) {
            conds.push(n.eq(scope.expr(u)?));
        }
        solver.assert(branch.eq(int_num(b)).implies(and(conds)));
    }
    if sys.domain_exit == trestle_ir::system::DomainExit::Drop {
        for (v, n) in sys.state.iter().zip(&next) {
            let mut c = Vec::new();
            if let Some(l) = &v.domain.lo {
                c.push(n.ge(num(l)));
            }
            if let Some(h) = &v.domain.hi {
                c.push(n.le(num(h)));
            }
            match v.kind {
                VarKind::Real => {}
                VarKind::Int => c.push(n.is_int()),
                VarKind::Bool => {
                    c.push(n.is_int());
                    c.push(in_range(n, &Rational::from_integer(0.into()), &Rational::from_integer(1.into())));
                }
            }
            solver.assert(and(c));
        }
    }
    Ok(StepTerms { next, branch })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::{Value, value};
    use trestle_ir::num::parse_rational;
    use z3::SatResult;

    fn q(s: &str) -> Rational {
        parse_rational(s).unwrap()
    }

    #[test]
    fn numerals_are_exact_rationals() {
        let solver = Solver::new();
        // -1/3 is not dyadic: 3 * (-1/3) == -1 exactly.
        solver.assert((num(&q("-1/3")) * num(&q("3"))).eq(num(&q("-1"))).not());
        // The smallest subnormal is 2^-1074 exactly.
        let tiny = num_f64(f64::from_bits(1));
        let two_1074 = num(&Rational::from_integer(num_bigint::BigInt::from(1) << 1074));
        solver.assert((tiny * two_1074).eq(num(&q("1"))).not());
        // 0.1 as a decimal constant is not the float 0.1.
        solver.assert(num(&q("0.1")).eq(num_f64(0.1)));
        assert_eq!(solver.check(), SatResult::Unsat);
        for text in ["-1/3", "12345678901234567890123/7", "0.1"] {
            let s = Solver::new();
            let x = VarTerm::new("x", false);
            s.assert(x.real.eq(num(&q(text))));
            assert_eq!(s.check(), SatResult::Sat);
            assert_eq!(value(&s.get_model().unwrap(), &x), Ok(Value::Exact(q(text))), "{text}");
        }
        let s = Solver::new();
        let i = VarTerm::new("i", true);
        s.assert(i.real.eq(num(&q("-12345678901234567890"))));
        assert_eq!(s.check(), SatResult::Sat);
        assert_eq!(value(&s.get_model().unwrap(), &i), Ok(Value::Exact(q("-12345678901234567890"))));
    }

    #[test]
    fn irrational_values_are_flagged() {
        let s = Solver::new();
        let x = VarTerm::new("x", false);
        s.assert((x.real.clone() * x.real.clone()).eq(num(&q("2"))));
        s.assert(x.real.gt(num(&q("0"))));
        assert_eq!(s.check(), SatResult::Sat);
        match value(&s.get_model().unwrap(), &x) {
            Ok(Value::Irrational { approx, .. }) => {
                assert!(approx > q("1.41421356") && approx < q("1.41421357"), "{approx}")
            }
            other => panic!("expected an irrational value, got {other:?}"),
        }
    }
}
