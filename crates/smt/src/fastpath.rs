//! The fast path: sound bounds on the successors, no solver.
//!
//! For a target that is a conjunction of linear atoms `lhs(s') op 0`, each atom is composed with a
//! branch's updates. When the updates are multi-affine ([`crate::affine`]) the composition is
//! affine in (s, a) for fixed inputs and affine in each input, so its extremes over the input box
//! lie at the box's vertices (finite sets: every element); for each vertex the extremes over
//! `{s in p, a in psi(s)}` are computed in closed form: a linear bound of each action is
//! substituted by the sign of its coefficient (or the action's interval is used; every choice is
//! sound and the tightest is kept), then the affine function of s is bounded over the box. The
//! composition is exact (rationals); the final bound is evaluated in f64 with outward rounding
//! ([`trestle_ir::round`] via [`Interval`]), so the computed range encloses the exact one. Other
//! updates fall back to [`Expr::eval_interval`]. Guards are over-approximated (a branch counts
//! unless its guard is false on the whole box), domain-exit drops are ignored: both only add
//! successors, which keeps `Valid` sound for `StaysIn` and `Leaves` alike.
//!
//! `StaysIn` is proven when every atom holds on every successor of every branch; `Leaves` when, for
//! each branch, one atom is violated by all of its successors. The fast path never says `Invalid`
//! from bounds; counterexamples come from the exact sampler ([`crate::sample`]) and are replayed.

use crate::affine::MultiAffine;
use crate::query::{BridgeQuery, Postcondition, Target};
use trestle_ir::expr::{Env, Expr, LinearExpr, VarRef};
use trestle_ir::pred::{CmpOp, Pred, RBox};
use trestle_ir::system::{ActionKind, Branch, NondetDomain, System, VarKind};
use trestle_ir::{Interval, Rational};

/// Most input vertices enumerated per branch before falling back to intervals.
const MAX_VERTICES: usize = 1024;
/// Most actions whose "linear bound or interval" choice is enumerated exhaustively.
const MAX_CHOICE_ACTIONS: usize = 4;

/// A conjunction of comparisons (`lhs op rhs`); `contradiction` when it contains `false`.
struct Conjunction<'p> {
    atoms: Vec<(&'p Expr, CmpOp, &'p Expr)>,
    contradiction: bool,
}

fn conjunction(p: &Pred) -> Option<Conjunction<'_>> {
    fn walk<'p>(p: &'p Pred, c: &mut Conjunction<'p>) -> Option<()> {
        match p {
            Pred::True => {}
            Pred::False => c.contradiction = true,
            Pred::Cmp(a, op, b) => c.atoms.push((a, *op, b)),
            Pred::And(ps) => ps.iter().try_for_each(|q| walk(q, c))?,
            Pred::Not(_) | Pred::Or(_) => return None,
        }
        Some(())
    }
    let mut c = Conjunction { atoms: Vec::new(), contradiction: false };
    walk(p, &mut c)?;
    Some(c)
}

/// Every value in `[lo, hi]` satisfies `x op 0`.
fn holds_on(op: CmpOp, (lo, hi): (f64, f64)) -> bool {
    match op {
        CmpOp::Le => hi <= 0.0,
        CmpOp::Lt => hi < 0.0,
        CmpOp::Ge => lo >= 0.0,
        CmpOp::Gt => lo > 0.0,
        CmpOp::Eq => lo == 0.0 && hi == 0.0,
    }
}

/// No value in `[lo, hi]` satisfies `x op 0`.
fn violated_on(op: CmpOp, (lo, hi): (f64, f64)) -> bool {
    match op {
        CmpOp::Le => lo > 0.0,
        CmpOp::Lt => lo >= 0.0,
        CmpOp::Ge => hi < 0.0,
        CmpOp::Gt => hi <= 0.0,
        CmpOp::Eq => lo > 0.0 || hi < 0.0,
    }
}

/// Interval boxes of one query: state `p`, actions (box, tightened by the linear bounds over `p`),
/// inputs (hull of the domain).
pub(crate) struct Boxes {
    pub state: Vec<Interval>,
    pub action: Vec<Interval>,
    pub nondet: Vec<Interval>,
}

impl Boxes {
    /// `None` when `psi` is empty on all of `p` (then there is no successor at all).
    pub(crate) fn of(sys: &System, q: &BridgeQuery<'_>) -> Option<Boxes> {
        let state = q.region.intervals();
        let mut action = q.post.action_box().intervals();
        if let Postcondition::Linear(l) = q.post {
            for (j, a) in action.iter_mut().enumerate() {
                let lo = row_interval(&l.lower, &l.lower_offset, j, &state).lo;
                let hi = row_interval(&l.upper, &l.upper_offset, j, &state).hi;
                *a = a.intersect(&Interval { lo, hi })?;
            }
        }
        let nondet = sys
            .nondet
            .iter()
            .map(|v| match &v.domain {
                NondetDomain::Interval(l, h) => Interval::of_rational(l).hull(&Interval::of_rational(h)),
                NondetDomain::Set(s) => {
                    s.iter().map(Interval::of_rational).reduce(|a, b| a.hull(&b)).unwrap_or(Interval::ENTIRE)
                }
            })
            .collect();
        Some(Boxes { state, action, nondet })
    }

    fn env(&self) -> Env<'_, Interval> {
        Env::new(&self.state, &self.action, &self.nondet)
    }
}

/// Enclosure of `row_j(m) . s + off_j` over the state box.
fn row_interval(m: &trestle_ir::Matrix, off: &[f64], j: usize, state: &[Interval]) -> Interval {
    let mut acc = Interval::point(off[j]);
    for (i, s) in state.iter().enumerate() {
        acc = acc.add(&Interval::point(m.get(j, i)).mul(s));
    }
    acc
}

/// Sound `(lower, upper)` bounds of the affine `g(s, a)` over `{s in p, a in psi(s)}`; `lower >
/// upper` means the set is empty.
fn affine_range(g: &LinearExpr, post: &Postcondition, b: &Boxes) -> (f64, f64) {
    let coef = |v| Interval::of_rational(&g.coeff(v));
    match post {
        Postcondition::Box(_) => {
            let mut acc = Interval::of_rational(&g.constant);
            for (i, s) in b.state.iter().enumerate() {
                acc = acc.add(&coef(VarRef::State(i)).mul(s));
            }
            for (j, a) in b.action.iter().enumerate() {
                acc = acc.add(&coef(VarRef::Action(j)).mul(a));
            }
            (acc.lo, acc.hi)
        }
        Postcondition::Linear(l) => {
            let active: Vec<usize> = (0..b.action.len()).filter(|&j| !g.coeff(VarRef::Action(j)).is_zero()).collect();
            let all = (1u32 << active.len().min(31)) - 1;
            let combos: Vec<u32> = if active.len() <= MAX_CHOICE_ACTIONS { (0..=all).collect() } else { vec![0, all] };
            let bound = |combo: u32, upper: bool| -> Interval {
                let mut cs: Vec<Interval> = (0..b.state.len()).map(|i| coef(VarRef::State(i))).collect();
                let mut k = Interval::of_rational(&g.constant);
                for (bit, &j) in active.iter().enumerate() {
                    let hq = g.coeff(VarRef::Action(j));
                    let h = Interval::of_rational(&hq);
                    if combo & (1 << bit) != 0 {
                        // h a <= h row(s) with the upper row when h > 0 (the lower row when h < 0).
                        let use_upper = hq.is_positive() == upper;
                        let (m, off) =
                            if use_upper { (&l.upper, &l.upper_offset) } else { (&l.lower, &l.lower_offset) };
                        for (i, c) in cs.iter_mut().enumerate() {
                            *c = c.add(&h.mul(&Interval::point(m.get(j, i))));
                        }
                        k = k.add(&h.mul(&Interval::point(off[j])));
                    } else {
                        k = k.add(&h.mul(&b.action[j]));
                    }
                }
                cs.iter().zip(&b.state).fold(k, |acc, (c, s)| acc.add(&c.mul(s)))
            };
            let hi = combos.iter().map(|&c| bound(c, true).hi).fold(f64::INFINITY, f64::min);
            let lo = combos.iter().map(|&c| bound(c, false).lo).fold(f64::NEG_INFINITY, f64::max);
            (lo, hi)
        }
    }
}

use num_traits::{Signed, Zero};

/// The fast path's view of a system: the multi-affine form of every update, per branch.
pub(crate) struct Forms {
    forms: Vec<Vec<Option<MultiAffine>>>,
}

impl Forms {
    pub(crate) fn of(sys: &System) -> Forms {
        Forms { forms: sys.step.branches.iter().map(|b| b.updates.iter().map(MultiAffine::of).collect()).collect() }
    }

    /// Whether every successor of every branch satisfies (`StaysIn`) or violates (`Leaves`) the
    /// target, proven by bounds; `false` when not proven.
    pub(crate) fn prove(&self, sys: &System, q: &BridgeQuery<'_>) -> bool {
        let Some(conj) = conjunction(q.target.pred()) else { return false };
        match q.target {
            Target::StaysIn(_) if conj.atoms.is_empty() && !conj.contradiction => return true,
            Target::Leaves(_) if conj.contradiction => return true,
            _ => {}
        }
        let Some(boxes) = Boxes::of(sys, q) else { return true }; // no action anywhere: no successor
        for (bi, br) in sys.step.branches.iter().enumerate() {
            if !maybe_enabled(sys, br, &boxes) {
                continue;
            }
            let mut ranges = conj.atoms.iter().map(|&(a, op, b)| (op, self.atom_range(sys, bi, a, b, q, &boxes)));
            let ok = match q.target {
                Target::StaysIn(_) => !conj.contradiction && ranges.all(|(op, r)| holds_on(op, r)),
                Target::Leaves(_) => ranges.any(|(op, r)| violated_on(op, r)),
            };
            if !ok {
                return false;
            }
        }
        true
    }

    /// Bounds of `a - b` at the successors of branch `bi` (`a`, `b` read the next state).
    fn atom_range(
        &self,
        sys: &System,
        bi: usize,
        a: &Expr,
        b: &Expr,
        q: &BridgeQuery<'_>,
        boxes: &Boxes,
    ) -> (f64, f64) {
        if let Some(r) = self.affine_atom_range(sys, bi, a, b, q, boxes) {
            return r;
        }
        let updates = &sys.step.branches[bi].updates;
        let sub = |v: VarRef| match v {
            VarRef::State(i) => updates.get(i).cloned(),
            _ => None,
        };
        let d = Expr::Sub(Box::new(a.substitute(&sub)), Box::new(b.substitute(&sub)));
        if !lookups_defined(&d, sys, boxes) {
            // Z3 leaves an undefined lookup unconstrained; so does the fast path.
            return (f64::NEG_INFINITY, f64::INFINITY);
        }
        let r = d.eval_interval(&boxes.env());
        (r.lo, r.hi)
    }

    fn affine_atom_range(
        &self,
        sys: &System,
        bi: usize,
        a: &Expr,
        b: &Expr,
        q: &BridgeQuery<'_>,
        boxes: &Boxes,
    ) -> Option<(f64, f64)> {
        let atom = Pred::linear_atom(a, CmpOp::Le, b)?;
        let mut used = Vec::new();
        let mut inputs = 0u64;
        for (v, w) in &atom.lhs.coeffs {
            let VarRef::State(i) = *v else { return None };
            let f = self.forms[bi].get(i)?.as_ref()?;
            inputs |= f.inputs();
            used.push((f, w));
        }
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for vertex in vertices(sys, inputs)? {
            let mut g = LinearExpr::constant(atom.lhs.constant.clone());
            for (f, w) in &used {
                g = g.add(&f.at(&vertex).scale(w), 1);
            }
            let (l, h) = affine_range(&g, q.post, boxes);
            lo = lo.min(l);
            hi = hi.max(h);
        }
        Some((lo, hi))
    }
}

/// A branch may be enabled somewhere on the boxes: its label value is in the action's range and
/// its guard is not false everywhere.
fn maybe_enabled(sys: &System, br: &Branch, boxes: &Boxes) -> bool {
    if let Some((a, value)) = br.label
        && boxes.action.get(a).is_some_and(|iv| !iv.contains(value as f64))
    {
        return false;
    }
    let Some(g) = &br.guard else { return true };
    let mut defined = true;
    visit_lookups_pred(g, &mut |i, len| defined &= lookup_defined(i, len, sys, boxes));
    !defined || g.eval_interval(&boxes.env()) != Some(false)
}

/// Whether every `lookup` in `e` has an integer index inside its table on the boxes. Where one
/// may not, evaluation fails; [`Expr::eval_interval`] then ignores that case while the Z3 encoding
/// leaves the value unconstrained, and the fast path must not be more optimistic than Z3.
fn lookups_defined(e: &Expr, sys: &System, boxes: &Boxes) -> bool {
    let mut defined = true;
    visit_lookups(e, &mut |i, len| defined &= lookup_defined(i, len, sys, boxes));
    defined
}

fn lookup_defined(index: &Expr, len: usize, sys: &System, boxes: &Boxes) -> bool {
    let integral = match index {
        Expr::Const(c) => trestle_ir::num::is_integer(c),
        Expr::Var(VarRef::State(k)) => sys.state.get(*k).is_some_and(|v| v.kind != VarKind::Real),
        Expr::Var(VarRef::Action(k)) => sys.actions.get(*k).is_some_and(|a| matches!(a.kind, ActionKind::Index { .. })),
        _ => false,
    };
    let iv = index.eval_interval(&boxes.env());
    integral && iv.lo >= 0.0 && iv.hi <= (len as f64) - 1.0
}

/// Calls `f(index, table length)` on every lookup inside an expression (conditions included).
fn visit_lookups(e: &Expr, f: &mut dyn FnMut(&Expr, usize)) {
    match e {
        Expr::Const(_) | Expr::Var(_) => {}
        Expr::Neg(a) | Expr::Relu(a) | Expr::Abs(a) | Expr::Div(a, _) => visit_lookups(a, f),
        Expr::Add(a, b) | Expr::Sub(a, b) | Expr::Mul(a, b) | Expr::Min(a, b) | Expr::Max(a, b) => {
            visit_lookups(a, f);
            visit_lookups(b, f);
        }
        Expr::Ite(c, a, b) => {
            visit_lookups_pred(c, f);
            visit_lookups(a, f);
            visit_lookups(b, f);
        }
        Expr::Lookup(i, items) => {
            f(i, items.len());
            visit_lookups(i, f);
            items.iter().for_each(|x| visit_lookups(x, f));
        }
    }
}

fn visit_lookups_pred(p: &Pred, f: &mut dyn FnMut(&Expr, usize)) {
    match p {
        Pred::True | Pred::False => {}
        Pred::Cmp(a, _, b) => {
            visit_lookups(a, f);
            visit_lookups(b, f);
        }
        Pred::Not(q) => visit_lookups_pred(q, f),
        Pred::And(ps) | Pred::Or(ps) => ps.iter().for_each(|q| visit_lookups_pred(q, f)),
    }
}

/// The vertices of the input domain restricted to the inputs in `mask` (others set to 0): ends of
/// intervals, every element of finite sets. `None` when there are too many.
fn vertices(sys: &System, mask: u64) -> Option<Vec<Vec<Rational>>> {
    let mut out = vec![vec![Rational::zero(); sys.nondet.len()]];
    for (k, v) in sys.nondet.iter().enumerate() {
        if k >= 64 || mask & (1u64 << k) == 0 {
            continue;
        }
        let values: Vec<&Rational> = match &v.domain {
            NondetDomain::Interval(l, h) if l == h => vec![l],
            NondetDomain::Interval(l, h) => vec![l, h],
            NondetDomain::Set(s) => s.iter().collect(),
        };
        if out.len() * values.len() > MAX_VERTICES {
            return None;
        }
        out = out
            .iter()
            .flat_map(|p| {
                values.iter().map(move |x| {
                    let mut p = p.clone();
                    p[k] = (*x).clone();
                    p
                })
            })
            .collect();
    }
    Some(out)
}

/// Whether every premise box lies in the single conclusion box (`Init => Inv` for boxes).
pub(crate) fn boxes_imply(n: usize, premise: &Pred, conclusion: &Pred) -> bool {
    let (Some(ps), Some(cs)) = (premise.to_box_union(n, 64), conclusion.to_box_union(n, 1)) else { return false };
    if ps.is_empty() {
        return true;
    }
    let [c] = cs.as_slice() else { return false };
    ps.iter().all(|p| box_in(p, c))
}

fn box_in(p: &RBox, c: &RBox) -> bool {
    (0..p.dims()).all(|i| {
        let lo_ok = match (&c.lo[i], &p.lo[i]) {
            (None, _) => true,
            (Some(cl), Some(pl)) => pl >= cl,
            (Some(_), None) => false,
        };
        let hi_ok = match (&c.hi[i], &p.hi[i]) {
            (None, _) => true,
            (Some(ch), Some(ph)) => ph <= ch,
            (Some(_), None) => false,
        };
        lo_ok && hi_ok
    })
}
