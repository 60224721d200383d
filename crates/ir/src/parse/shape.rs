//! The shape of parsed trees: chains built balanced, and the limits that keep every consumer's
//! recursion (evaluators, encoders, printers, `Drop`) shallow.
//!
//! Sums, products and `min`/`max` of many operands are built as balanced trees (depth log2 n), so a
//! flat sum of thousands of terms is as easy to evaluate as a short one. Exact arithmetic is
//! associative and commutative, so the values do not depend on the shape; interval and f64
//! evaluation round differently per shape but soundly in any shape.

use crate::expr::Expr;
use crate::formula::{Ctl, Ltl};
use crate::num::Rational;
use crate::pred::Pred;
use num_traits::One;

/// Deepest nesting the parser accepts: parentheses, unary operators (`-`, `not`, temporal
/// operators), `if`/`then`/`else`, function calls and right-nested `->`, `U`, `R`.
pub const MAX_NESTING: usize = 200;

/// Deepest tree a parse may produce, counting every node (after `let` definitions are inlined and
/// chains are balanced). Every recursive consumer of expressions is safe to this depth.
pub const MAX_TREE_DEPTH: usize = 400;

/// Most nodes a parse may produce after `let` definitions are inlined (definitions that use each
/// other several times grow exponentially).
pub const MAX_TREE_NODES: usize = 1_000_000;

/// `Σ ±terms` as a balanced tree; `terms[i].0` is true for a subtracted term. Constant pairs fold.
pub(super) fn sum(mut terms: Vec<(bool, Expr)>) -> Expr {
    match terms.len() {
        0 => Expr::Const(Rational::default()),
        1 => {
            let (minus, e) = terms.pop().expect("one term");
            if minus { negate(e) } else { e }
        }
        n => {
            let right = terms.split_off(n.div_ceil(2));
            let left = sum(terms);
            let minus = right[0].0;
            // `l - (r1 - r2 + ..)` when the right half starts with a subtraction.
            let right = sum(right.into_iter().map(|(m, e)| (m != minus, e)).collect());
            match (left.as_const(), right.as_const()) {
                (Some(x), Some(y)) => Expr::Const(if minus { x - y } else { x + y }),
                _ if minus => Expr::Sub(Box::new(left), Box::new(right)),
                _ => Expr::Add(Box::new(left), Box::new(right)),
            }
        }
    }
}

fn negate(e: Expr) -> Expr {
    match e {
        Expr::Const(c) => Expr::Const(-c),
        e => Expr::Neg(Box::new(e)),
    }
}

/// `(f1 * f2 * ..) / divisor` with the product balanced; constant pairs fold.
pub(super) fn product(mut factors: Vec<Expr>, divisor: Rational) -> Expr {
    let p = balanced(&mut factors, &|a, b| match (a.as_const(), b.as_const()) {
        (Some(x), Some(y)) => Expr::Const(x * y),
        _ => Expr::Mul(Box::new(a), Box::new(b)),
    });
    if divisor.is_one() {
        return p;
    }
    match p {
        Expr::Const(c) => Expr::Const(c / divisor),
        p => Expr::Div(Box::new(p), divisor),
    }
}

/// `min(args..)` or `max(args..)` as a balanced tree; constant pairs fold.
pub(super) fn extremum(mut args: Vec<Expr>, is_min: bool) -> Expr {
    balanced(&mut args, &|a, b| match (a.as_const(), b.as_const()) {
        (Some(x), Some(y)) => Expr::Const(if is_min { x.min(y).clone() } else { x.max(y).clone() }),
        _ if is_min => Expr::Min(Box::new(a), Box::new(b)),
        _ => Expr::Max(Box::new(a), Box::new(b)),
    })
}

/// Combines a non-empty list pairwise, left half first, into a tree of depth log2 n.
fn balanced(items: &mut Vec<Expr>, join: &dyn Fn(Expr, Expr) -> Expr) -> Expr {
    if items.len() == 1 {
        return items.pop().expect("one item");
    }
    let mut right = items.split_off(items.len().div_ceil(2));
    let left = balanced(items, join);
    join(left, balanced(&mut right, join))
}

/// Depth and node count of a tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Size {
    pub depth: usize,
    pub nodes: usize,
}

impl Size {
    fn node(children: impl IntoIterator<Item = Size>) -> Size {
        let mut s = Size::default();
        for c in children {
            s.depth = s.depth.max(c.depth);
            s.nodes = s.nodes.saturating_add(c.nodes);
        }
        Size { depth: s.depth + 1, nodes: s.nodes.saturating_add(1) }
    }
}

/// The size of an expression (recursive: only called on trees the parser has bounded).
pub(super) fn expr_size(e: &Expr) -> Size {
    match e {
        Expr::Const(_) | Expr::Var(_) => Size { depth: 1, nodes: 1 },
        Expr::Neg(a) | Expr::Div(a, _) | Expr::Relu(a) | Expr::Abs(a) | Expr::Apply(_, a) | Expr::Pow(a, _) => {
            Size::node([expr_size(a)])
        }
        Expr::Add(a, b) | Expr::Sub(a, b) | Expr::Mul(a, b) | Expr::Min(a, b) | Expr::Max(a, b) => {
            Size::node([expr_size(a), expr_size(b)])
        }
        Expr::Ite(c, a, b) => Size::node([pred_size(c), expr_size(a), expr_size(b)]),
        Expr::Lookup(i, items) => Size::node(std::iter::once(expr_size(i)).chain(items.iter().map(expr_size))),
    }
}

pub(super) fn pred_size(p: &Pred) -> Size {
    match p {
        Pred::True | Pred::False => Size { depth: 1, nodes: 1 },
        Pred::Cmp(a, _, b) => Size::node([expr_size(a), expr_size(b)]),
        Pred::Not(a) => Size::node([pred_size(a)]),
        Pred::And(xs) | Pred::Or(xs) => Size::node(xs.iter().map(pred_size)),
    }
}

pub(super) fn ctl_size(f: &Ctl) -> Size {
    match f {
        Ctl::Atom(p) => Size::node([pred_size(p)]),
        Ctl::And(xs) | Ctl::Or(xs) => Size::node(xs.iter().map(ctl_size)),
        Ctl::Not(a) | Ctl::EX(_, a) | Ctl::AX(_, a) | Ctl::EF(_, a) | Ctl::AF(_, a) | Ctl::EG(_, a) | Ctl::AG(_, a) => {
            Size::node([ctl_size(a)])
        }
        Ctl::EU(_, a, b) | Ctl::AU(_, a, b) => Size::node([ctl_size(a), ctl_size(b)]),
    }
}

pub(super) fn ltl_size(f: &Ltl) -> Size {
    match f {
        Ltl::Atom(p) => Size::node([pred_size(p)]),
        Ltl::And(xs) | Ltl::Or(xs) => Size::node(xs.iter().map(ltl_size)),
        Ltl::Not(a) | Ltl::X(_, a) | Ltl::F(_, a) | Ltl::G(_, a) => Size::node([ltl_size(a)]),
        Ltl::U(_, a, b) | Ltl::R(_, a, b) => Size::node([ltl_size(a), ltl_size(b)]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::VarRef;
    use crate::num::rational_from_i64;

    fn x(i: usize) -> Expr {
        Expr::Var(VarRef::State(i))
    }

    #[test]
    fn long_chains_are_shallow() {
        let terms: Vec<(bool, Expr)> = (0..4096).map(|i| (i % 3 == 1, x(i))).collect();
        assert_eq!(expr_size(&sum(terms)).depth, 13);
        let factors: Vec<Expr> = (0..1000).map(x).collect();
        assert_eq!(expr_size(&product(factors, rational_from_i64(1))).depth, 11);
        assert_eq!(expr_size(&extremum((0..1000).map(x).collect(), true)).depth, 11);
    }

    #[test]
    fn signs_and_constants_fold_exactly() {
        let c = |v: i64| Expr::Const(rational_from_i64(v));
        // 1 - 2 - 3 + 4 = 0.
        assert_eq!(sum(vec![(false, c(1)), (true, c(2)), (true, c(3)), (false, c(4))]), c(0));
        // x - y - z: the right half (-y... ) is grouped as x - y - z, never x - (y - z).
        let e = sum(vec![(false, x(0)), (true, x(1)), (true, x(2))]);
        assert_eq!(e, Expr::Sub(Box::new(Expr::Sub(Box::new(x(0)), Box::new(x(1)))), Box::new(x(2))));
        let e = sum(vec![(false, x(0)), (false, x(1)), (true, x(2)), (false, x(3))]);
        // x0 + x1 - (x2 - x3)
        let want = Expr::Sub(
            Box::new(Expr::Add(Box::new(x(0)), Box::new(x(1)))),
            Box::new(Expr::Sub(Box::new(x(2)), Box::new(x(3)))),
        );
        assert_eq!(e, want);
        assert_eq!(product(vec![c(6), c(4)], rational_from_i64(8)), Expr::Const(rational_from_i64(3)));
    }
}
