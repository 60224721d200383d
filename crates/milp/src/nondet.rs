//! Non-deterministic inputs: one MILP per vertex of their domain box, and when that is exact.
//!
//! Once the inputs are fixed to values, a product such as `c * a` is a constant times a variable, so
//! the step is piecewise linear. Finite sets are enumerated (exact). An interval input `c` is replaced
//! by its two ends, which is exact when, for every fixed state and action, the violation of each face
//! of the target box is an affine function of `c` on its interval (its maximum is then at an end); with
//! several inputs, multilinear (affine in each one separately) suffices: a multilinear function on a
//! box attains its maximum at a vertex. That holds when
//! * no controller observes `c` (the network outputs do not depend on it),
//! * no branch guard reads `c` (the set of enabled branches does not depend on it),
//! * every update has degree at most 1 in `c`, counted through sums and products, with `c` never
//!   under `min`, `max`, `relu`, `abs`, an `ite` condition or a `lookup` index,
//! * the target is a single box (a face violation is affine in the successor), and
//! * with [`DomainExit::Drop`], no update reading `c` belongs to a variable with a bounded domain or
//!   an integer kind (that would restrict `c` to a sub-interval).
//!
//! Anything else is refused with [`MilpError::NotMultilinear`].

use crate::error::MilpError;
use trestle_ir::expr::{Expr, VarRef};
use trestle_ir::nondet;
use trestle_ir::system::{DomainExit, NondetDomain, System, VarKind};
use trestle_ir::{Pred, Rational};

/// Degree of `e` in input `c` (an upper bound on its polynomial degree), or why it is not a polynomial
/// in `c` with piecewise-linear coefficients.
pub fn degree_in(e: &Expr, c: usize) -> Result<u32, String> {
    let mentions = |x: &Expr| x.mentions(|v| v == VarRef::Nondet(c));
    let pred_mentions = |p: &Pred| p.mentions(|v| v == VarRef::Nondet(c));
    Ok(match e {
        Expr::Const(_) => 0,
        Expr::Var(v) => u32::from(*v == VarRef::Nondet(c)),
        Expr::Neg(a) | Expr::Div(a, _) => degree_in(a, c)?,
        Expr::Add(a, b) | Expr::Sub(a, b) => degree_in(a, c)?.max(degree_in(b, c)?),
        Expr::Mul(a, b) => degree_in(a, c)? + degree_in(b, c)?,
        Expr::Pow(a, n) => degree_in(a, c)?.saturating_mul(*n),
        Expr::Apply(f, a) => {
            if mentions(a) {
                return Err(format!("it appears under {f}"));
            }
            0
        }
        Expr::Min(a, b) | Expr::Max(a, b) => {
            if mentions(a) || mentions(b) {
                return Err("it appears under min/max".into());
            }
            0
        }
        Expr::Relu(a) | Expr::Abs(a) => {
            if mentions(a) {
                return Err("it appears under relu/abs".into());
            }
            0
        }
        Expr::Ite(cond, a, b) => {
            if pred_mentions(cond) {
                return Err("it appears in an ite condition".into());
            }
            degree_in(a, c)?.max(degree_in(b, c)?)
        }
        Expr::Lookup(i, items) => {
            if mentions(i) {
                return Err("it appears in a lookup index".into());
            }
            items.iter().map(|x| degree_in(x, c)).try_fold(0, |m, d| d.map(|d| m.max(d)))?
        }
    })
}

/// Checks that splitting the interval inputs at their ends is exact (see the module documentation).
pub fn check_multilinear(sys: &System, single_box_target: bool) -> Result<(), MilpError> {
    for (c, v) in sys.nondet.iter().enumerate() {
        let NondetDomain::Interval(lo, hi) = &v.domain else { continue };
        if lo == hi {
            continue;
        }
        let refuse = |detail: String| Err(MilpError::NotMultilinear { input: v.name.clone(), detail });
        let reads = |v: VarRef| v == VarRef::Nondet(c);
        if let Some(ctrl) = sys.controllers.iter().find(|ctrl| ctrl.inputs.iter().any(|e| e.mentions(reads))) {
            return refuse(format!("controller '{}' observes it (the network is not multilinear in it)", ctrl.name));
        }
        if !single_box_target {
            return refuse("the invariant is a union of several boxes (its complement is not convex)".into());
        }
        for b in &sys.step.branches {
            if b.guard.as_ref().is_some_and(|g| g.mentions(reads)) {
                return refuse(format!("the guard of branch '{}' reads it", b.name));
            }
            for (u, sv) in b.updates.iter().zip(&sys.state) {
                let what = format!("update of {} in branch '{}'", sv.name, b.name);
                match degree_in(u, c) {
                    Err(e) => return refuse(format!("{what}: {e}")),
                    Ok(d) if d > 1 => return refuse(format!("{what} has degree {d} in it")),
                    Ok(_) => {}
                }
                let restricted = sv.domain.lo.is_some() || sv.domain.hi.is_some() || sv.kind != VarKind::Real;
                if sys.domain_exit == DomainExit::Drop && restricted && u.mentions(reads) {
                    return refuse(format!(
                        "{what} reads it and successors outside the domain of {} are dropped",
                        sv.name
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The input values to check: the ends of every interval, every value of every set (all
/// combinations; the IR's one enumerator, [`nondet::vertices`]). One empty vertex when the system
/// has no non-deterministic input.
pub fn vertices(sys: &System, limit: usize) -> Result<Vec<Vec<Rational>>, MilpError> {
    let count = sys.nondet.iter().fold(1usize, |n, v| n.saturating_mul(nondet::extreme_values(v).len()));
    // The IR's masks name the first 64 inputs; past them, the count exceeds any limit anyway
    // unless an input is a single value, which must not be left at 0.
    let all = (sys.nondet.len() <= 64).then(|| nondet::vertices(sys, nondet::all_inputs(sys), limit)).flatten();
    all.ok_or(MilpError::TooManyMilps { count, limit })
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::parse::{SimpleScope, Symbol, parse_expr};

    fn degree(text: &str) -> Result<u32, String> {
        let mut scope = SimpleScope::with_state(&["x"]);
        scope.add("a", Symbol::Var(VarRef::Action(0)));
        scope.add("c", Symbol::Var(VarRef::Nondet(0)));
        scope.add("d", Symbol::Var(VarRef::Nondet(1)));
        degree_in(&parse_expr(text, &scope).unwrap(), 0)
    }

    #[test]
    fn degrees_count_products_and_refuse_nonlinear_positions() {
        assert_eq!(degree("x + 0.1*c*a"), Ok(1));
        assert_eq!(degree("c*d*a + x"), Ok(1));
        assert_eq!(degree("relu(x) * c + lookup(0, [c, a])"), Ok(1));
        assert_eq!(degree("(c + 1) * (c - 1)"), Ok(2));
        assert_eq!(degree("x + d*a"), Ok(0));
        assert!(degree("max(c, a)").is_err());
        assert!(degree("abs(c*a)").is_err());
        assert!(degree("if c <= 0.7 then a else x").is_err());
        assert!(degree("lookup(c, [a, x])").is_err());
    }
}
