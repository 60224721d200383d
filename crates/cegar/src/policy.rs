//! "Some state s of the query has `pi(s) = l`", decided exactly without putting the network into Z3.
//!
//! Z3 with the network's ReLUs as `ite` stalls on these queries already for 16x16 policies over a
//! few integer variables (a label-feasibility query of Blocksworld ran past 20 s). The network is
//! instead a lazily consulted theory (the lazy SMT scheme): Z3 solves the query's linear integer
//! part and proposes a state s of copy `x`; the policy is run on s exactly (the simulator's
//! rational forward pass and argmax). If it picks l, s is the witness. Otherwise a box around s is
//! excluded from the query, a box on which l provably never wins: the box of the copy's known
//! bounds, halved on its widest side towards s until outward-rounded CROWN bounds rule l out
//! (`trestle_bridge::argmax::may_win`, lowest index on ties) or the box is the point s
//! itself, which the exact run has ruled out. The domains are finite, so this ends; "unsat" rests
//! on Z3's answer over the integers and on sound exclusions, "sat" on an exact run.

use crate::CegarError;
use crate::atom::Atom;
use crate::model::Discrete;
use num_traits::ToPrimitive;
use std::cell::RefCell;
use trestle_bounds::{InputBox, Method, bound};
use trestle_bridge::argmax::may_win;
use trestle_ir::expr::{Expr, VarRef};
use trestle_ir::pred::{CmpOp, Pred};
use trestle_ir::{Env, Interval, Network, Rational};
use trestle_smt::{PathAnswer, PathQuery};

/// An integer box of states: `lo[i] <= v_i <= hi[i]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntBox {
    pub lo: Vec<i64>,
    pub hi: Vec<i64>,
}

impl IntBox {
    /// Narrows the box by the literals (`atom` holds or not) by interval propagation, a few
    /// rounds; `false` when it shows that no integer state satisfies them all.
    pub fn narrow(&mut self, lits: &[(Atom, bool)]) -> bool {
        // Each literal as `a . v <= b` over i128 (a false atom `a . v <= c` is `-a . v <= -c - 1`).
        let rows: Vec<(Vec<i128>, i128)> = lits
            .iter()
            .filter_map(|(atom, truth)| {
                let a: Option<Vec<i128>> = atom.coeffs.iter().map(|c| c.to_i128()).collect();
                let (a, b) = (a?, atom.bound.to_i128()?);
                Some(if *truth { (a, b) } else { (a.iter().map(|c| -c).collect(), -b - 1) })
            })
            .collect();
        for _ in 0..3 {
            let mut changed = false;
            for (a, b) in &rows {
                let mins: Vec<i128> = a
                    .iter()
                    .enumerate()
                    .map(|(j, &c)| if c >= 0 { c * i128::from(self.lo[j]) } else { c * i128::from(self.hi[j]) })
                    .collect();
                let total: i128 = mins.iter().sum();
                for (i, &c) in a.iter().enumerate() {
                    if c == 0 {
                        continue;
                    }
                    let rest = b - (total - mins[i]);
                    if c > 0 {
                        let hi = rest.div_euclid(c);
                        if hi < i128::from(self.hi[i]) {
                            self.hi[i] = hi.max(i128::from(i64::MIN)) as i64;
                            changed = true;
                        }
                    } else {
                        // c v <= rest with c < 0  <=>  v >= ceil(rest / c) = -floor(rest / -c)
                        let lo = -rest.div_euclid(-c);
                        if lo > i128::from(self.lo[i]) {
                            self.lo[i] = lo.min(i128::from(i64::MAX)) as i64;
                            changed = true;
                        }
                    }
                    if self.lo[i] > self.hi[i] {
                        return false;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        true
    }

    fn meets(&self, other: &IntBox) -> bool {
        (0..self.lo.len()).all(|i| self.lo[i] <= other.hi[i] && other.lo[i] <= self.hi[i])
    }

    fn is_point(&self) -> bool {
        self.lo == self.hi
    }

    /// The half that contains `s`, split on the widest side.
    fn half_towards(&self, s: &[i64]) -> IntBox {
        let (k, _) = self
            .lo
            .iter()
            .zip(&self.hi)
            .enumerate()
            .map(|(i, (l, h))| (i, h - l))
            .max_by_key(|&(i, w)| (w, std::cmp::Reverse(i)))
            .expect("a box has a side");
        let mid = self.lo[k] + (self.hi[k] - self.lo[k]).div_euclid(2);
        let mut out = self.clone();
        if s[k] <= mid {
            out.hi[k] = mid;
        } else {
            out.lo[k] = mid + 1;
        }
        out
    }

    /// The box as state predicates, all of which hold inside it.
    pub fn preds(&self) -> Vec<Pred> {
        let var = |i: usize| Expr::Var(VarRef::State(i));
        let c = |x: i64| Expr::Const(Rational::from_integer(x.into()));
        (0..self.lo.len())
            .flat_map(|i| [Pred::Cmp(var(i), CmpOp::Ge, c(self.lo[i])), Pred::Cmp(var(i), CmpOp::Le, c(self.hi[i]))])
            .collect()
    }
}

/// The policy of a discrete system, run exactly on states and bounded soundly on boxes.
pub struct PolicyTheory<'d> {
    d: &'d Discrete<'d>,
    net: &'d Network,
    inputs: &'d [Expr],
    /// The domains' box.
    pub domain: IntBox,
    method: Method,
    /// Per label, every box learned so far where it never wins: facts about the network alone,
    /// so every later query for the label starts with those that meet its hull.
    known: RefCell<Vec<Vec<IntBox>>>,
}

/// Counters of the lazy theory.
#[derive(Clone, Debug, Default)]
pub struct TheoryStats {
    /// States proposed by Z3 whose exact label was not the one asked.
    pub refuted_states: u64,
    /// Boxes bounded.
    pub bound_calls: u64,
    /// Z3 `check-sat` calls made for the theory's queries.
    pub smt_calls: u64,
}

impl<'d> PolicyTheory<'d> {
    pub fn new(d: &'d Discrete<'d>) -> Result<PolicyTheory<'d>, CegarError> {
        let bound_of = |q: &Option<Rational>, name: &str| {
            q.as_ref()
                .and_then(|q| q.to_integer().to_i64())
                .ok_or_else(|| CegarError::Unsupported(format!("the domain of '{name}' does not fit 64-bit integers")))
        };
        let mut lo = Vec::new();
        let mut hi = Vec::new();
        for v in &d.sys.state {
            match v.kind {
                trestle_ir::system::VarKind::Bool => {
                    lo.push(0);
                    hi.push(1);
                }
                _ => {
                    lo.push(bound_of(&v.domain.lo, &v.name)?);
                    hi.push(bound_of(&v.domain.hi, &v.name)?);
                }
            }
        }
        Ok(PolicyTheory {
            d,
            net: &d.sys.networks[d.network].network,
            // A validated discrete system has one controller, the policy.
            inputs: &d.sys.controllers[0].inputs,
            domain: IntBox { lo, hi },
            // CROWN where it bounds every activation, IBP otherwise (any sound bounds prune).
            method: trestle_bounds::method_for(&d.sys.networks[d.network].network, &Method::Crown),
            known: RefCell::new(vec![Vec::new(); d.labels.len()]),
        })
    }

    /// The network's input box over a box of states (outward-rounded), if bounded.
    fn input_box(&self, b: &IntBox) -> Option<InputBox> {
        // i64 domain ends are exact in f64 up to 2^53, far beyond any domain enumerated here.
        let state: Vec<Interval> = b.lo.iter().zip(&b.hi).map(|(&l, &h)| Interval::new(l as f64, h as f64)).collect();
        let env = Env::new(&state, &[], &[]);
        let input: Vec<Interval> = self.inputs.iter().map(|e| e.eval_interval(&env)).collect();
        if input.iter().any(|i| !i.lo.is_finite() || !i.hi.is_finite()) {
            return None;
        }
        Some(InputBox::new(input.iter().map(|i| i.lo).collect(), input.iter().map(|i| i.hi).collect()))
    }

    /// Whether CROWN's bounds rule the label `l` out everywhere in the box (on a query's hull: no
    /// state of the query has the label, and it need not be asked).
    pub fn rules_out(&self, b: &IntBox, l: usize, stats: &mut TheoryStats) -> bool {
        stats.bound_calls += 1;
        let Some(input) = self.input_box(b) else { return false };
        match bound(self.net, &input, &self.method) {
            Ok(out) => may_win(self.net, &input, &out, &self.method, l).is_ok_and(|w| !w),
            Err(_) => false,
        }
    }

    /// Solves `q` (the query's linear part, copy `x` constrained to lie in `hull`) together with
    /// `pi(x) = l`. Boxes it excludes are asserted in `q`'s current scope and appended to
    /// `learned`, so a caller that pops can assert them again (they hold for the label, whatever
    /// else the query says).
    pub fn solve(
        &self,
        q: &mut PathQuery<'_>,
        x: usize,
        l: usize,
        hull: &IntBox,
        learned: &mut Vec<IntBox>,
        stats: &mut TheoryStats,
    ) -> Result<PathAnswer, CegarError> {
        if learned.is_empty() {
            let known: Vec<IntBox> = self.known.borrow()[l].iter().filter(|b| b.meets(hull)).cloned().collect();
            Self::reassert(q, x, &known)?;
            learned.extend(known);
        }
        loop {
            stats.smt_calls += 1;
            let v = match q.check() {
                PathAnswer::Sat(v) => v,
                other => return Ok(other),
            };
            let s = &v[x];
            if crate::policy_label(self.d, s)? == l {
                return Ok(PathAnswer::Sat(v));
            }
            stats.refuted_states += 1;
            let b = self.losing_box(s, l, hull, stats)?;
            let preds = b.preds();
            q.block(x, &preds, &vec![true; preds.len()])?;
            self.known.borrow_mut()[l].push(b.clone());
            learned.push(b);
        }
    }

    /// A box around the state `s`, inside `hull` (widened to contain s if needed), on which the
    /// label `l` never wins; the caller knows the policy does not pick `l` at `s`.
    ///
    /// The boxes halving towards s end in the point s, which the exact run rules out; sub-boxes
    /// of a box where l loses are boxes where it loses, so the largest box of the chain that the
    /// bounds rule out is found by bisection on the chain.
    pub fn losing_box(
        &self,
        s: &[Rational],
        l: usize,
        hull: &IntBox,
        stats: &mut TheoryStats,
    ) -> Result<IntBox, CegarError> {
        let point: Vec<i64> = s
            .iter()
            .map(|q| q.to_integer().to_i64().ok_or_else(|| CegarError::Internal(format!("state value {q}"))))
            .collect::<Result<_, _>>()?;
        let mut b = hull.clone();
        for (i, p) in point.iter().enumerate() {
            b.lo[i] = b.lo[i].min(*p);
            b.hi[i] = b.hi[i].max(*p);
        }
        let mut chain = vec![b];
        while !chain.last().expect("non-empty").is_point() {
            let next = chain.last().expect("non-empty").half_towards(&point);
            chain.push(next);
        }
        let (mut lo, mut hi) = (0, chain.len() - 1);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.rules_out(&chain[mid], l, stats) { hi = mid } else { lo = mid + 1 }
        }
        Ok(chain.swap_remove(hi))
    }

    /// Asserts the exclusion of boxes learned earlier (after a `pop` removed them).
    pub fn reassert(q: &mut PathQuery<'_>, x: usize, boxes: &[IntBox]) -> Result<(), CegarError> {
        for b in boxes {
            let preds = b.preds();
            q.block(x, &preds, &vec![true; preds.len()])?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrowing_keeps_every_integer_solution_and_finds_empty_boxes() {
        let atom = |a: Vec<i64>, b: i64| Atom { coeffs: a.into_iter().map(Into::into).collect(), bound: b.into() };
        // 2x - 3y <= 1 (true), x + y <= 4 (false: x + y >= 5), over [-6, 6]^2.
        let lits = vec![(atom(vec![2, -3], 1), true), (atom(vec![1, 1], 4), false)];
        let mut b = IntBox { lo: vec![-6, -6], hi: vec![6, 6] };
        assert!(b.narrow(&lits));
        let mut count = 0;
        for x in -6..=6i64 {
            for y in -6..=6i64 {
                if 2 * x - 3 * y <= 1 && x + y >= 5 {
                    count += 1;
                    assert!(b.lo[0] <= x && x <= b.hi[0] && b.lo[1] <= y && y <= b.hi[1], "({x}, {y}) cut off: {b:?}");
                }
            }
        }
        assert!(count > 0);
        assert!(b.lo[0] > -6 || b.lo[1] > -6, "nothing narrowed: {b:?}");
        // x <= 2 and x >= 3: empty.
        let mut e = IntBox { lo: vec![-6, -6], hi: vec![6, 6] };
        assert!(!e.narrow(&[(atom(vec![1, 0], 2), true), (atom(vec![1, 0], 2), false)]));
    }
}
