//! Multi-affine forms: `sum_m (prod_{k in m} n_k) * L_m(s, a)` with `m` ranging over sets of
//! non-deterministic inputs and each `L_m` exactly affine in state and actions. An update of this
//! form is affine in (s, a) once the inputs are fixed and affine in each input separately, so its
//! extremes over an interval input lie at the interval's ends (the fast path enumerates them).

use num_traits::{One, Zero};
use std::collections::BTreeMap;
use trestle_ir::Rational;
use trestle_ir::expr::{Expr, LinearExpr, VarRef};

/// Monomial masks index non-deterministic inputs 0..64.
#[derive(Clone, Debug, PartialEq, Default)]
pub(crate) struct MultiAffine {
    terms: BTreeMap<u64, LinearExpr>,
}

impl MultiAffine {
    fn single(mask: u64, l: LinearExpr) -> MultiAffine {
        let mut terms = BTreeMap::new();
        terms.insert(mask, l);
        MultiAffine { terms }.tidy()
    }

    fn tidy(mut self) -> MultiAffine {
        self.terms.retain(|_, l| !(l.is_constant() && l.constant.is_zero()));
        self
    }

    fn add(mut self, other: &MultiAffine, sign: i32) -> MultiAffine {
        for (m, l) in &other.terms {
            let e = self.terms.remove(m).unwrap_or_default();
            self.terms.insert(*m, e.add(l, sign));
        }
        self.tidy()
    }

    fn scale(self, k: &Rational) -> MultiAffine {
        MultiAffine { terms: self.terms.into_iter().map(|(m, l)| (m, l.scale(k))).collect() }.tidy()
    }

    fn mul(&self, other: &MultiAffine) -> Option<MultiAffine> {
        let mut out = MultiAffine::default();
        for (m1, l1) in &self.terms {
            for (m2, l2) in &other.terms {
                if m1 & m2 != 0 {
                    return None; // a square of an input: not multi-affine
                }
                let l = if l1.is_constant() {
                    l2.clone().scale(&l1.constant)
                } else if l2.is_constant() {
                    l1.clone().scale(&l2.constant)
                } else {
                    return None; // a product of state/action terms
                };
                out = out.add(&MultiAffine::single(m1 | m2, l), 1);
            }
        }
        Some(out)
    }

    /// The form of an expression, when it has one (no min/max/relu/abs/ite/lookup, no products
    /// of state or action terms, no input squared).
    pub(crate) fn of(e: &Expr) -> Option<MultiAffine> {
        Some(match e {
            Expr::Const(c) => MultiAffine::single(0, LinearExpr::constant(c.clone())),
            Expr::Var(VarRef::Nondet(k)) if *k < 64 => {
                MultiAffine::single(1u64 << k, LinearExpr::constant(Rational::one()))
            }
            Expr::Var(VarRef::Nondet(_)) => return None,
            Expr::Var(v) => MultiAffine::single(0, LinearExpr::var(*v)),
            Expr::Neg(a) => MultiAffine::of(a)?.scale(&-Rational::one()),
            Expr::Add(a, b) => MultiAffine::of(a)?.add(&MultiAffine::of(b)?, 1),
            Expr::Sub(a, b) => MultiAffine::of(a)?.add(&MultiAffine::of(b)?, -1),
            Expr::Mul(a, b) => MultiAffine::of(a)?.mul(&MultiAffine::of(b)?)?,
            Expr::Div(a, k) => MultiAffine::of(a)?.scale(&(Rational::one() / k)),
            _ => return None,
        })
    }

    /// The inputs the form depends on.
    pub(crate) fn inputs(&self) -> u64 {
        self.terms.keys().fold(0, |acc, m| acc | m)
    }

    /// The affine form in (s, a) at fixed input values (`inputs[k]` for input k; entries of inputs
    /// the form does not use are ignored).
    pub(crate) fn at(&self, inputs: &[Rational]) -> LinearExpr {
        let mut acc = LinearExpr::default();
        for (m, l) in &self.terms {
            let mut k = Rational::one();
            for (i, v) in inputs.iter().enumerate().take(64) {
                if m & (1u64 << i) != 0 {
                    k *= v;
                }
            }
            acc = acc.add(&l.clone().scale(&k), 1);
        }
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::num::parse_rational as q;
    use trestle_ir::parse::{SimpleScope, Symbol, parse_expr};

    fn scope() -> SimpleScope {
        let mut s = SimpleScope::with_state(&["x", "y"]);
        s.add("a0", Symbol::Var(VarRef::Action(0)));
        s.add("c", Symbol::Var(VarRef::Nondet(0)));
        s.add("d", Symbol::Var(VarRef::Nondet(1)));
        s
    }

    #[test]
    fn maze_update_is_multi_affine() {
        let e = parse_expr("x + 0.1*c*a0", &scope()).unwrap();
        let f = MultiAffine::of(&e).unwrap();
        assert_eq!(f.inputs(), 1);
        let l = f.at(&[q("0.5").unwrap()]);
        assert_eq!(l.coeff(VarRef::Action(0)), q("0.05").unwrap());
        assert_eq!(l.coeff(VarRef::State(0)), q("1").unwrap());
    }

    #[test]
    fn non_multi_affine_forms_are_refused() {
        for text in ["x*a0", "c*c*a0", "max(x, a0)", "relu(x)", "if x <= 0 then x else a0"] {
            assert!(MultiAffine::of(&parse_expr(text, &scope()).unwrap()).is_none(), "{text}");
        }
        let f = MultiAffine::of(&parse_expr("c*d*a0 - 2*(c - d)*x", &scope()).unwrap()).unwrap();
        assert_eq!(f.inputs(), 3);
        let l = f.at(&[q("2").unwrap(), q("3").unwrap()]);
        assert_eq!(l.coeff(VarRef::Action(0)), q("6").unwrap());
        assert_eq!(l.coeff(VarRef::State(0)), q("2").unwrap());
    }
}
