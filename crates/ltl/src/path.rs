//! A bounded LTL formula as a propositional formula over one path: atoms are single comparisons
//! of the state at a time step.
//!
//! The expansions are the notes' corrected ones (indices from 0):
//! `F<=k p = OR_{i=0..k} X^i p`, `G<=k p = AND_{i=0..k} X^i p`,
//! `p U<=k q = OR_{i=0..k} (AND_{j<i} X^j p and X^i q)`,
//! `p R<=k q = (AND_{i=0..k} X^i q) or OR_{i=0..k} (X^i p and AND_{j<=i} X^j q)`.
//! Negation is pushed to the comparisons (`not (a <= b)` is `a > b`), so the negated formula, the
//! one a counterexample path must satisfy, is a positive and/or tree: its disjunctions are the
//! only choices an encoding has to make. Runs of the closed loop never end (a deadlock is an
//! error of the system, not a verdict), so `not X p = X not p`.

use crate::error::LtlError;
use trestle_ir::formula::Ltl;
use trestle_ir::{Env, Interval, Pred, Rational};

/// A positive and/or formula over comparisons of the state at time steps.
#[derive(Clone, Debug, PartialEq)]
pub enum PathFormula {
    True,
    False,
    /// A single comparison (`Pred::Cmp`) of the state at step `t`.
    Atom {
        pred: Pred,
        t: usize,
    },
    And(Vec<PathFormula>),
    Or(Vec<PathFormula>),
}

impl PathFormula {
    /// The formula (or its negation) over one path from step 0. Unbounded operators are refused.
    pub fn of(phi: &Ltl, negate: bool) -> Result<PathFormula, LtlError> {
        let n = size(phi);
        if n > MAX_ATOMS as u128 {
            return Err(LtlError::Unsupported(format!(
                "the formula unfolds into about {n} atoms over one path; at most {MAX_ATOMS} are encoded"
            )));
        }
        Ok(unfold(phi, 0, negate)?.simplified())
    }

    /// The last step an atom reads (0 for a formula of the initial state alone).
    pub fn depth(&self) -> usize {
        match self {
            PathFormula::True | PathFormula::False => 0,
            PathFormula::Atom { t, .. } => *t,
            PathFormula::And(xs) | PathFormula::Or(xs) => xs.iter().map(PathFormula::depth).max().unwrap_or(0),
        }
    }

    /// Exact truth value on the states `s_0 .. s_n` of a path (`n >= depth`).
    pub fn holds_exact(&self, states: &[Vec<Rational>]) -> Result<bool, LtlError> {
        Ok(match self {
            PathFormula::True => true,
            PathFormula::False => false,
            PathFormula::Atom { pred, t } => {
                let s = states.get(*t).ok_or_else(|| LtlError::Semantics(format!("the path has no step {t}")))?;
                pred.eval_exact(&Env::new(s, &[], &[])).map_err(|e| LtlError::Semantics(e.to_string()))?
            }
            PathFormula::And(xs) => {
                for x in xs {
                    if !x.holds_exact(states)? {
                        return Ok(false);
                    }
                }
                true
            }
            PathFormula::Or(xs) => {
                for x in xs {
                    if x.holds_exact(states)? {
                        return Ok(true);
                    }
                }
                false
            }
        })
    }

    /// Three-valued truth on boxes enclosing every state each step can reach (`boxes[t]`, one
    /// interval per state variable): `Some(b)` when it is `b` on every path those boxes contain.
    pub fn holds_on_boxes(&self, boxes: &[Vec<Interval>]) -> Option<bool> {
        match self {
            PathFormula::True => Some(true),
            PathFormula::False => Some(false),
            PathFormula::Atom { pred, t } => pred.eval_interval(&Env::new(boxes.get(*t)?, &[], &[])),
            PathFormula::And(xs) => trestle_ir::pred::kleene_and(xs.iter().map(|x| x.holds_on_boxes(boxes))),
            PathFormula::Or(xs) => trestle_ir::pred::kleene_or(xs.iter().map(|x| x.holds_on_boxes(boxes))),
        }
    }

    /// Constants folded, nested and/or flattened.
    fn simplified(self) -> PathFormula {
        match self {
            PathFormula::And(xs) => {
                let mut out = Vec::new();
                for x in xs.into_iter().map(PathFormula::simplified) {
                    match x {
                        PathFormula::True => {}
                        PathFormula::False => return PathFormula::False,
                        PathFormula::And(ys) => out.extend(ys),
                        other => out.push(other),
                    }
                }
                match out.len() {
                    0 => PathFormula::True,
                    1 => out.pop().expect("one item"),
                    _ => PathFormula::And(out),
                }
            }
            PathFormula::Or(xs) => {
                let mut out = Vec::new();
                for x in xs.into_iter().map(PathFormula::simplified) {
                    match x {
                        PathFormula::False => {}
                        PathFormula::True => return PathFormula::True,
                        PathFormula::Or(ys) => out.extend(ys),
                        other => out.push(other),
                    }
                }
                match out.len() {
                    0 => PathFormula::False,
                    1 => out.pop().expect("one item"),
                    _ => PathFormula::Or(out),
                }
            }
            other => other,
        }
    }
}

/// Most atom occurrences a formula may unfold into (`G<=k F<=k` has `(k + 1)^2`).
pub const MAX_ATOMS: usize = 200_000;

/// The formula as a conjunction of state predicates each at one step (`(t, p)`: `p` holds at
/// step `t`), when it is one: atoms and their boolean combinations, `X^k` of such conjunctions,
/// `G<=k` of them and conjunctions of those. A run whose state at step `t` violates `p` refutes
/// such a formula by one state's violation, which is what a validated run
/// (`trestle_core::ValidatedTrace`: the last state's enclosure strictly outside one predicate)
/// can establish through irrational values. `None` for other shapes (`F`, `U`, `R`, a
/// disjunction or negation over time), whose violations need a whole path.
pub fn state_obligations(phi: &Ltl) -> Option<Vec<(usize, Pred)>> {
    if let Some(p) = phi.state_pred() {
        return Some(vec![(0, p)]);
    }
    let shifted = |k: usize, f: &Ltl| -> Option<Vec<(usize, Pred)>> {
        Some(state_obligations(f)?.into_iter().map(|(t, p)| (t + k, p)).collect())
    };
    match phi {
        Ltl::X(k, f) => shifted(*k as usize, f),
        Ltl::G(Some(k), f) => (0..=*k as usize).map(|j| shifted(j, f)).collect::<Option<Vec<_>>>().map(|v| v.concat()),
        Ltl::And(fs) => fs.iter().map(state_obligations).collect::<Option<Vec<_>>>().map(|v| v.concat()),
        _ => None,
    }
}

/// How many atom occurrences the unfolding has (saturating; unbounded operators count once).
fn size(phi: &Ltl) -> u128 {
    let k1 = |k: &Option<u32>| k.map_or(1, |k| k as u128 + 1);
    match phi {
        Ltl::Atom(_) => 1,
        Ltl::Not(a) | Ltl::X(_, a) => size(a),
        Ltl::And(xs) | Ltl::Or(xs) => xs.iter().map(size).fold(0u128, u128::saturating_add),
        Ltl::F(k, a) | Ltl::G(k, a) => k1(k).saturating_mul(size(a)),
        // Each of the k + 1 disjuncts holds up to k + 1 copies of p and one of q (U), or of q (R).
        Ltl::U(k, p, q) | Ltl::R(k, p, q) => {
            k1(k).saturating_mul(k1(k).saturating_mul(size(p).saturating_add(size(q))).saturating_add(size(q)))
        }
    }
}

/// A state predicate (negated when `negate`) at step `t`, its comparisons as atoms.
pub(crate) fn atoms(p: &Pred, t: usize, negate: bool) -> PathFormula {
    fn walk(p: &Pred, t: usize) -> PathFormula {
        match p {
            Pred::True => PathFormula::True,
            Pred::False => PathFormula::False,
            Pred::Cmp(..) => PathFormula::Atom { pred: p.clone(), t },
            Pred::And(ps) => PathFormula::And(ps.iter().map(|p| walk(p, t)).collect()),
            Pred::Or(ps) => PathFormula::Or(ps.iter().map(|p| walk(p, t)).collect()),
            Pred::Not(_) => unreachable!("a predicate in negation normal form has no negation"),
        }
    }
    walk(&p.nnf(negate), t)
}

/// `and` of the items, or `or` when negated (De Morgan), each item built already negated.
fn conj(negate: bool, items: Vec<PathFormula>) -> PathFormula {
    if negate { PathFormula::Or(items) } else { PathFormula::And(items) }
}

fn disj(negate: bool, items: Vec<PathFormula>) -> PathFormula {
    if negate { PathFormula::And(items) } else { PathFormula::Or(items) }
}

fn bound(k: &Option<u32>, op: &str) -> Result<usize, LtlError> {
    k.map(|k| k as usize).ok_or_else(|| {
        LtlError::Unsupported(format!(
            "unbounded {op}: bounded methods need {op}<=k (the lasso and invariant methods are not built yet)"
        ))
    })
}

/// The formula at step `t`, negated when `negate`.
fn unfold(phi: &Ltl, t: usize, negate: bool) -> Result<PathFormula, LtlError> {
    Ok(match phi {
        Ltl::Atom(p) => atoms(p, t, negate),
        Ltl::Not(a) => unfold(a, t, !negate)?,
        Ltl::And(xs) => conj(negate, xs.iter().map(|x| unfold(x, t, negate)).collect::<Result<_, _>>()?),
        Ltl::Or(xs) => disj(negate, xs.iter().map(|x| unfold(x, t, negate)).collect::<Result<_, _>>()?),
        Ltl::X(k, a) => unfold(a, t + *k as usize, negate)?,
        Ltl::F(k, a) => {
            let k = bound(k, "F")?;
            disj(negate, (0..=k).map(|i| unfold(a, t + i, negate)).collect::<Result<_, _>>()?)
        }
        Ltl::G(k, a) => {
            let k = bound(k, "G")?;
            conj(negate, (0..=k).map(|i| unfold(a, t + i, negate)).collect::<Result<_, _>>()?)
        }
        Ltl::U(k, p, q) => {
            let k = bound(k, "U")?;
            let mut items = Vec::with_capacity(k + 1);
            for i in 0..=k {
                let mut parts = (0..i).map(|j| unfold(p, t + j, negate)).collect::<Result<Vec<_>, _>>()?;
                parts.push(unfold(q, t + i, negate)?);
                items.push(conj(negate, parts));
            }
            disj(negate, items)
        }
        Ltl::R(k, p, q) => {
            let k = bound(k, "R")?;
            let always_q = conj(negate, (0..=k).map(|i| unfold(q, t + i, negate)).collect::<Result<_, _>>()?);
            let mut released = Vec::with_capacity(k + 1);
            for i in 0..=k {
                let mut parts = vec![unfold(p, t + i, negate)?];
                parts.extend((0..=i).map(|j| unfold(q, t + j, negate)).collect::<Result<Vec<_>, _>>()?);
                released.push(conj(negate, parts));
            }
            disj(negate, vec![always_q, disj(negate, released)])
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::num::rational_from_i64;
    use trestle_ir::parse::{SimpleScope, parse_ltl};

    fn phi(text: &str) -> Ltl {
        parse_ltl(text, &SimpleScope::with_state(&["x"])).unwrap()
    }

    /// A formula and its meaning on a path of values, read directly from the bounded semantics.
    type Case = (&'static str, fn(&[i64]) -> bool);

    /// Every formula and its negation over every path of values in {0, 1, 2}^5, against a direct
    /// reading of the bounded semantics (the notes' corrected expansions).
    #[test]
    fn expansions_and_negations_agree_with_the_semantics() {
        let cases: &[Case] = &[
            ("X^2 (x <= 1)", |p| p[2] <= 1),
            ("F<=2 (x == 2)", |p| p[..=2].contains(&2)),
            ("G<=3 (x >= 1)", |p| p[..=3].iter().all(|&v| v >= 1)),
            ("(x == 0) U<=2 (x == 2)", |p| (0..=2).any(|i| p[i] == 2 && p[..i].iter().all(|&v| v == 0))),
            ("(x == 2) R<=2 (x >= 1)", |p| {
                (0..=2).all(|i| p[i] >= 1) || (0..=2).any(|i| p[i] == 2 && p[..=i].iter().all(|&v| v >= 1))
            }),
            ("G<=1 F<=1 (x == 1)", |p| (0..=1).all(|i| p[i] == 1 || p[i + 1] == 1)),
            ("not (F<=2 (x == 2) and X (x == 0))", |p| !(p[..=2].contains(&2) && p[1] == 0)),
            ("not not X (x < 1)", |p| p[1] < 1),
        ];
        for (text, truth) in cases {
            let f = phi(text);
            let (pos, neg) = (PathFormula::of(&f, false).unwrap(), PathFormula::of(&f, true).unwrap());
            for code in 0..3i64.pow(5) {
                let path: Vec<i64> = (0..5).map(|i| code / 3i64.pow(i) % 3).collect();
                let states: Vec<Vec<Rational>> = path.iter().map(|&v| vec![rational_from_i64(v)]).collect();
                let expected = truth(&path);
                assert_eq!(pos.holds_exact(&states).unwrap(), expected, "{text} on {path:?}");
                assert_eq!(neg.holds_exact(&states).unwrap(), !expected, "not ({text}) on {path:?}");
            }
        }
    }

    #[test]
    fn depth_and_refusals() {
        assert_eq!(PathFormula::of(&phi("X^3 (x <= 2)"), true).unwrap().depth(), 3);
        assert_eq!(PathFormula::of(&phi("G<=2 F<=3 (x <= 2)"), false).unwrap().depth(), 5);
        assert!(matches!(PathFormula::of(&phi("G (x <= 2)"), false), Err(LtlError::Unsupported(_))));
        assert!(matches!(PathFormula::of(&phi("(x <= 1) U (x <= 2)"), true), Err(LtlError::Unsupported(_))));
        let huge = PathFormula::of(&phi("G<=1000000 F<=1000000 (x <= 2)"), false);
        assert!(matches!(huge, Err(LtlError::Unsupported(ref m)) if m.contains("atoms")), "{huge:?}");
    }
}
