//! Linear atoms over the integer state: the predicates of the abstraction.
//!
//! An atom is `a . v <= b` with integer coefficients whose gcd is 1 and whose first non-zero
//! coefficient is positive. Every comparison of linear expressions over integer variables is a
//! conjunction of at most two atoms or their negations (`e < c` is `e <= c - 1`, `e == c` is
//! `e <= c and e >= c`), and `not (a . v <= b)` is `-a . v <= -b - 1`, which canonicalises back
//! to the same atom: so `p` and `not p` are one predicate, and equal half-spaces are one atom.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};
use trestle_ir::expr::{Expr, LinearExpr, VarRef};
use trestle_ir::pred::{CmpOp, Pred};
use trestle_ir::{Rational, System};

/// `coeffs . state <= bound`, canonical.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Atom {
    pub coeffs: Vec<BigInt>,
    pub bound: BigInt,
}

/// An affine expression of the state with exact rational coefficients.
#[derive(Clone, Debug, PartialEq)]
pub struct Affine {
    pub coeffs: Vec<Rational>,
    pub constant: Rational,
}

impl Affine {
    /// The affine form of an expression over `n` state variables; `None` when it is not affine or
    /// reads anything but the state.
    pub fn of(e: &Expr, n: usize) -> Option<Affine> {
        let l: LinearExpr = e.as_linear()?;
        let mut coeffs = vec![Rational::zero(); n];
        for (v, c) in &l.coeffs {
            match v {
                VarRef::State(i) if *i < n => coeffs[*i] = c.clone(),
                _ => return None,
            }
        }
        Some(Affine { coeffs, constant: l.constant })
    }

    pub fn eval(&self, state: &[Rational]) -> Rational {
        self.coeffs.iter().zip(state).fold(self.constant.clone(), |acc, (c, x)| acc + c * x)
    }
}

/// The lcm of the denominators of `xs`.
fn common_denominator<'a>(xs: impl Iterator<Item = &'a Rational>) -> BigInt {
    xs.fold(BigInt::one(), |acc, q| acc.lcm(q.denom()))
}

impl Atom {
    /// `d <= 0` for an affine `d` over integer variables, canonical; the bool says whether the
    /// atom is the negation of `d <= 0` (its polarity). `None` when `d` is constant (the
    /// comparison is true or false everywhere, no predicate).
    pub fn le_zero(d: &Affine) -> Option<(Atom, bool)> {
        if d.coeffs.iter().all(Zero::is_zero) {
            return None;
        }
        let den = common_denominator(d.coeffs.iter().chain(std::iter::once(&d.constant)));
        let scale = Rational::from_integer(den);
        let coeffs: Vec<BigInt> = d.coeffs.iter().map(|c| (c * &scale).to_integer()).collect();
        let bound = -(&d.constant * &scale).to_integer();
        Some(Atom::normalise(coeffs, bound))
    }

    /// Divides by the gcd (the bound rounded down: the variables are integers) and fixes the sign.
    fn normalise(mut coeffs: Vec<BigInt>, mut bound: BigInt) -> (Atom, bool) {
        let g = coeffs.iter().fold(BigInt::zero(), |acc, c| acc.gcd(c));
        if !g.is_one() {
            coeffs.iter_mut().for_each(|c| *c = &*c / &g);
            bound = bound.div_floor(&g);
        }
        let first_negative = coeffs.iter().find(|c| !c.is_zero()).is_some_and(|c| c.is_negative());
        if first_negative {
            // a.v <= b  <=>  not (-a.v <= -b - 1)
            let coeffs = coeffs.into_iter().map(|c| -c).collect();
            (Atom { coeffs, bound: -bound - 1 }, true)
        } else {
            (Atom { coeffs, bound }, false)
        }
    }

    /// The truth value on an integer state.
    pub fn holds(&self, state: &[Rational]) -> bool {
        let lhs = self
            .coeffs
            .iter()
            .zip(state)
            .fold(Rational::zero(), |acc, (c, x)| acc + Rational::from_integer(c.clone()) * x);
        lhs <= Rational::from_integer(self.bound.clone())
    }

    /// The weakest precondition through a simultaneous update (`v_i := update_i`): the atom with
    /// every variable replaced by its update. `None` when that is constant.
    pub fn wp(&self, update: &[Affine]) -> Option<Atom> {
        let n = self.coeffs.len();
        let mut d = Affine { coeffs: vec![Rational::zero(); n], constant: -Rational::from_integer(self.bound.clone()) };
        for (c, u) in self.coeffs.iter().zip(update) {
            if c.is_zero() {
                continue;
            }
            let c = Rational::from_integer(c.clone());
            for (acc, uc) in d.coeffs.iter_mut().zip(&u.coeffs) {
                *acc += &c * uc;
            }
            d.constant += &c * &u.constant;
        }
        Atom::le_zero(&d).map(|(a, _)| a)
    }

    /// The atom as an IR predicate (for Z3 and reports).
    pub fn to_pred(&self) -> Pred {
        let mut lhs: Option<Expr> = None;
        for (i, c) in self.coeffs.iter().enumerate() {
            if c.is_zero() {
                continue;
            }
            let v = Expr::Var(VarRef::State(i));
            let term = if c.is_one() {
                v
            } else {
                Expr::Mul(Box::new(Expr::Const(Rational::from_integer(c.clone()))), Box::new(v))
            };
            lhs = Some(match lhs {
                None => term,
                Some(l) => Expr::Add(Box::new(l), Box::new(term)),
            });
        }
        let lhs = lhs.expect("an atom has a non-zero coefficient");
        Pred::Cmp(lhs, CmpOp::Le, Expr::Const(Rational::from_integer(self.bound.clone())))
    }

    /// `2*x - y <= 3`, with the system's variable names.
    pub fn text(&self, sys: &System) -> String {
        let mut s = String::new();
        for (i, c) in self.coeffs.iter().enumerate() {
            if c.is_zero() {
                continue;
            }
            let name = &sys.state[i].name;
            let mag = c.abs();
            let sign = if c.is_negative() { "-" } else { "+" };
            if s.is_empty() {
                if c.is_negative() {
                    s.push('-');
                }
            } else {
                s.push_str(&format!(" {sign} "));
            }
            if mag.is_one() {
                s.push_str(name);
            } else {
                s.push_str(&format!("{mag}*{name}"));
            }
        }
        format!("{s} <= {}", self.bound)
    }
}

/// A conjunction of linear comparisons (under `and` and `not`) as literals: atoms with the truth
/// value the predicate requires of them. `None` when the predicate has a disjunction (or a
/// negated conjunction), which is no conjunction of literals.
pub fn literals(p: &Pred, n: usize) -> Option<Vec<(Atom, bool)>> {
    fn go(p: &Pred, n: usize, positive: bool, out: &mut Vec<(Atom, bool)>) -> Option<()> {
        match p {
            Pred::True if positive => Some(()),
            Pred::False if !positive => Some(()),
            Pred::Not(q) => go(q, n, !positive, out),
            Pred::And(ps) if positive => ps.iter().try_for_each(|q| go(q, n, true, out)),
            Pred::Or(ps) if !positive => ps.iter().try_for_each(|q| go(q, n, false, out)),
            Pred::Cmp(a, op, b) => {
                let (la, lb) = (Affine::of(a, n)?, Affine::of(b, n)?);
                let d = Affine {
                    coeffs: la.coeffs.iter().zip(&lb.coeffs).map(|(x, y)| x - y).collect(),
                    constant: &la.constant - &lb.constant,
                };
                let neg = Affine { coeffs: d.coeffs.iter().map(|c| -c).collect(), constant: -d.constant.clone() };
                // (side <= 0, required truth) for the comparison to hold.
                let sides: Vec<(&Affine, bool)> = match (op, positive) {
                    (CmpOp::Le, true) | (CmpOp::Gt, false) => vec![(&d, true)],
                    (CmpOp::Gt, true) | (CmpOp::Le, false) => vec![(&d, false)],
                    (CmpOp::Ge, true) | (CmpOp::Lt, false) => vec![(&neg, true)],
                    (CmpOp::Lt, true) | (CmpOp::Ge, false) => vec![(&neg, false)],
                    (CmpOp::Eq, true) => vec![(&d, true), (&neg, true)],
                    (CmpOp::Eq, false) => return None,
                };
                for (side, truth) in sides {
                    match Atom::le_zero(side) {
                        Some((atom, flipped)) => out.push((atom, truth != flipped)),
                        // A constant comparison: no literal when it holds, unsatisfiable otherwise.
                        None => {
                            if (side.constant <= Rational::zero()) != truth {
                                return None;
                            }
                        }
                    }
                }
                Some(())
            }
            _ => None,
        }
    }
    let mut out = Vec::new();
    go(p, n, true, &mut out)?;
    Some(out)
}

/// Why a predicate has no atoms.
#[derive(Clone, Debug, PartialEq)]
pub struct NotLinear(pub String);

/// Every atom of a Boolean combination of linear comparisons over `n` integer state variables,
/// deduplicated, in order of appearance.
pub fn atoms_of(p: &Pred, n: usize) -> Result<Vec<Atom>, NotLinear> {
    let mut out = Vec::new();
    collect(p, n, &mut out)?;
    let mut seen = std::collections::HashSet::new();
    out.retain(|a| seen.insert(a.clone()));
    Ok(out)
}

fn collect(p: &Pred, n: usize, out: &mut Vec<Atom>) -> Result<(), NotLinear> {
    match p {
        Pred::True | Pred::False => {}
        Pred::Not(q) => collect(q, n, out)?,
        Pred::And(ps) | Pred::Or(ps) => {
            for q in ps {
                collect(q, n, out)?;
            }
        }
        Pred::Cmp(a, op, b) => {
            let (la, lb) = match (Affine::of(a, n), Affine::of(b, n)) {
                (Some(x), Some(y)) => (x, y),
                _ => {
                    return Err(NotLinear(format!(
                        "{a:?} {op:?} {b:?} is not a comparison of affine state expressions"
                    )));
                }
            };
            // d = a - b: `a <= b` is `d <= 0` and `a > b` its negation; `a >= b` is `-d <= 0` and
            // `a < b` its negation; `a == b` is both.
            let d = Affine {
                coeffs: la.coeffs.iter().zip(&lb.coeffs).map(|(x, y)| x - y).collect(),
                constant: &la.constant - &lb.constant,
            };
            let neg = Affine { coeffs: d.coeffs.iter().map(|c| -c).collect(), constant: -d.constant.clone() };
            let sides: &[&Affine] = match op {
                CmpOp::Le | CmpOp::Gt => &[&d],
                CmpOp::Ge | CmpOp::Lt => &[&neg],
                CmpOp::Eq => &[&d, &neg],
            };
            out.extend(sides.iter().filter_map(|side| Atom::le_zero(side)).map(|(atom, _)| atom));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::num::rational_from_i64 as q;

    fn aff(c: &[i64], k: i64) -> Affine {
        Affine { coeffs: c.iter().map(|&x| q(x)).collect(), constant: q(k) }
    }

    #[test]
    fn atoms_are_canonical_and_a_negation_is_the_same_atom() {
        // 2x + 4y - 7 <= 0  =>  x + 2y <= 3 (7/2 rounded down on integers)
        let (a, neg) = Atom::le_zero(&aff(&[2, 4], -7)).unwrap();
        assert_eq!((a, neg), (Atom { coeffs: vec![1.into(), 2.into()], bound: 3.into() }, false));
        // -x - 2y + 4 <= 0 is x + 2y >= 4 = not (x + 2y <= 3)
        let (b, neg) = Atom::le_zero(&aff(&[-1, -2], 4)).unwrap();
        assert_eq!((b, neg), (Atom { coeffs: vec![1.into(), 2.into()], bound: 3.into() }, true));
        assert!(Atom::le_zero(&aff(&[0, 0], 4)).is_none());
    }

    #[test]
    fn every_state_agrees_with_the_comparison() {
        // Exhaustive over a grid: the atom (with its polarity) decides the comparison exactly.
        for (c, k) in [(vec![3, -2], 1), (vec![-4, 6], -3), (vec![0, -5], 7), (vec![1, 1], 0)] {
            let d = aff(&c, k);
            let (atom, neg) = Atom::le_zero(&d).unwrap();
            for x in -6..=6 {
                for y in -6..=6 {
                    let s = [q(x), q(y)];
                    let truth = d.eval(&s) <= q(0);
                    assert_eq!(atom.holds(&s) != neg, truth, "{c:?} {k} at ({x}, {y})");
                }
            }
        }
    }

    #[test]
    fn the_atoms_of_a_comparison_decide_it() {
        // For every operator, the comparison is a function of its atoms' truth values: two states
        // that agree on every atom agree on the comparison.
        let x = Expr::Var(VarRef::State(0));
        let y = Expr::Var(VarRef::State(1));
        let lhs = Expr::Sub(Box::new(x), Box::new(Expr::Mul(Box::new(Expr::Const(q(2))), Box::new(y))));
        for op in [CmpOp::Le, CmpOp::Lt, CmpOp::Ge, CmpOp::Gt, CmpOp::Eq] {
            let p = Pred::Cmp(lhs.clone(), op, Expr::Const(q(1)));
            let atoms = atoms_of(&p, 2).unwrap();
            let mut seen = std::collections::HashMap::new();
            for a in -4..=4 {
                for b in -4..=4 {
                    let s = [q(a), q(b)];
                    let key: Vec<bool> = atoms.iter().map(|t| t.holds(&s)).collect();
                    let truth = p.eval_exact(&trestle_ir::Env::new(&s, &[], &[])).unwrap();
                    assert_eq!(*seen.entry(key).or_insert(truth), truth, "{op:?} at ({a}, {b})");
                }
            }
        }
    }

    #[test]
    fn literals_of_a_conjunction_decide_it() {
        let x = Expr::Var(VarRef::State(0));
        let y = Expr::Var(VarRef::State(1));
        let cmp = |a: &Expr, op, k| Pred::Cmp(a.clone(), op, Expr::Const(q(k)));
        let p = Pred::And(vec![
            cmp(&x, CmpOp::Eq, 1),
            Pred::Not(Box::new(cmp(&y, CmpOp::Lt, -2))),
            Pred::Not(Box::new(Pred::Or(vec![cmp(&y, CmpOp::Gt, 3), cmp(&x, CmpOp::Ge, 4)]))),
        ]);
        let lits = literals(&p, 2).unwrap();
        for a in -5..=5 {
            for b in -5..=5 {
                let s = [q(a), q(b)];
                let truth = p.eval_exact(&trestle_ir::Env::new(&s, &[], &[])).unwrap();
                assert_eq!(lits.iter().all(|(t, v)| t.holds(&s) == *v), truth, "({a}, {b})");
            }
        }
        assert!(literals(&Pred::Or(vec![cmp(&x, CmpOp::Le, 0), cmp(&y, CmpOp::Le, 0)]), 2).is_none());
    }

    #[test]
    fn weakest_preconditions_substitute_the_update() {
        // atom x - y <= 2 through x := x + 2y - 1, y := 3: (x + 2y - 1) - 3 <= 2, i.e. x + 2y <= 6
        let a = Atom { coeffs: vec![1.into(), (-1).into()], bound: 2.into() };
        let upd = [aff(&[1, 2], -1), aff(&[0, 0], 3)];
        let w = a.wp(&upd).unwrap();
        assert_eq!(w, Atom { coeffs: vec![1.into(), 2.into()], bound: 6.into() });
        for x in -5..=5 {
            for y in -5..=5 {
                let s = [q(x), q(y)];
                let next: Vec<Rational> = upd.iter().map(|u| u.eval(&s)).collect();
                assert_eq!(w.holds(&s), a.holds(&next));
            }
        }
        // Through a constant update the atom becomes constant: no predicate.
        assert!(Atom { coeffs: vec![0.into(), 1.into()], bound: 2.into() }.wp(&upd).is_none());
    }
}
