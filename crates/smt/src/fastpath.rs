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
//!
//! Targets that are unions of boxes (a synthesised invariant: a disjunction of variable bounds)
//! are decided on the successor box of each branch ([`SuccessorBounds`], the same per-coordinate
//! ranges as above): `StaysIn` when that box is covered by the union of the target's boxes
//! (exact rational box subtraction, [`RBox::uncovered`], over the boxes it touches), `Leaves` when
//! it touches none of them rounded outward (a superset of each). The target's boxes are computed
//! once per predicate and cached (the engine asks hundreds of queries against one invariant), and
//! indexed ([`BoxUnion`]: the boxes an image touches are found without a scan of all of them).
//! The same enclosures cut a pinned union down to the boxes a query can reach before Z3 sees it
//! ([`Forms::narrow`]).

use crate::affine::MultiAffine;
use crate::query::{BridgeQuery, Postcondition, Target};
use std::sync::{Arc, Mutex};
use trestle_ir::boxindex::BoxUnion;
use trestle_ir::expr::{Env, Expr, LinearExpr, VarRef};
use trestle_ir::pred::{CmpOp, FBox, Pred, RBox};
use trestle_ir::system::{ActionKind, Branch, System, VarKind};
use trestle_ir::{Interval, Rational};

/// Most input vertices enumerated per branch before falling back to intervals.
const MAX_VERTICES: usize = 1024;
/// Most actions whose "linear bound or interval" choice is enumerated exhaustively.
const MAX_CHOICE_ACTIONS: usize = 4;
/// Most boxes of a union target (or of the two sides of an implication) the fast path handles.
const MAX_UNION: usize = 100_000;

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
        Boxes::on(sys, q.region, q.post)
    }

    pub(crate) fn on(sys: &System, region: &FBox, post: &Postcondition) -> Option<Boxes> {
        let state = region.intervals();
        let mut action = post.action_box().intervals();
        if let Postcondition::Linear(l) = post {
            for (j, a) in action.iter_mut().enumerate() {
                let lo = row_interval(&l.lower.a, &l.lower.c, j, &state).lo;
                let hi = row_interval(&l.upper.a, &l.upper.c, j, &state).hi;
                *a = a.intersect(&Interval { lo, hi })?;
            }
        }
        let nondet = sys.nondet.iter().map(trestle_ir::nondet::hull).collect();
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

/// An affine `g(s, a)` with its exact coefficients enclosed in intervals (once, not per query).
#[derive(Clone, Debug)]
struct IForm {
    constant: Interval,
    state: Vec<Interval>,
    /// Actions with a non-zero coefficient: index, coefficient, whether it is positive.
    action: Vec<(usize, Interval, bool)>,
}

impl IForm {
    fn of(g: &LinearExpr, n_state: usize, n_action: usize) -> IForm {
        IForm {
            constant: Interval::of_rational(&g.constant),
            state: (0..n_state).map(|i| Interval::of_rational(&g.coeff(VarRef::State(i)))).collect(),
            action: (0..n_action)
                .filter_map(|j| {
                    let h = g.coeff(VarRef::Action(j));
                    (!h.is_zero()).then(|| (j, Interval::of_rational(&h), h.is_positive()))
                })
                .collect(),
        }
    }
}

/// Sound `(lower, upper)` bounds of the affine `g(s, a)` over `{s in p, a in psi(s)}`; `lower >
/// upper` means the set is empty.
fn affine_range(g: &LinearExpr, post: &Postcondition, b: &Boxes) -> (f64, f64) {
    form_range(&IForm::of(g, b.state.len(), b.action.len()), post, b)
}

fn form_range(g: &IForm, post: &Postcondition, b: &Boxes) -> (f64, f64) {
    match post {
        Postcondition::Box(_) => {
            let mut acc = g.constant;
            for (c, s) in g.state.iter().zip(&b.state) {
                acc = acc.add(&c.mul(s));
            }
            for &(j, h, _) in &g.action {
                acc = acc.add(&h.mul(&b.action[j]));
            }
            (acc.lo, acc.hi)
        }
        Postcondition::Linear(l) => {
            let active = &g.action;
            let all = (1u32 << active.len().min(31)) - 1;
            let combos: Vec<u32> = if active.len() <= MAX_CHOICE_ACTIONS { (0..=all).collect() } else { vec![0, all] };
            let bound = |combo: u32, upper: bool| -> Interval {
                let mut cs = g.state.clone();
                let mut k = g.constant;
                for (bit, &(j, h, positive)) in active.iter().enumerate() {
                    if combo & (1 << bit) != 0 {
                        // h a <= h row(s) with the upper row when h > 0 (the lower row when h < 0).
                        let use_upper = positive == upper;
                        let (m, off) = if use_upper { (&l.upper.a, &l.upper.c) } else { (&l.lower.a, &l.lower.c) };
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

/// A union target's boxes: exact, indexed by their outward enclosures (to find the boxes an
/// image touches, and to prove `Leaves`).
pub(crate) type UnionBoxes = BoxUnion;

/// The last union target seen and its boxes (`None` when it is not a union of boxes).
type UnionCache = Mutex<Option<(Arc<Pred>, Arc<Option<UnionBoxes>>)>>;

/// A predicate a caller borrows for the checker's whole life, with its union boxes computed once.
pub(crate) type PinnedUnion<'s> = (&'s Pred, Arc<Option<UnionBoxes>>);

/// The boxes of `target` when it is a union of at most [`MAX_UNION`] boxes.
pub(crate) fn union_boxes_of(n: usize, target: &Pred) -> Arc<Option<UnionBoxes>> {
    Arc::new(target.to_box_union(n, MAX_UNION).map(BoxUnion::new))
}

/// The union boxes of `p` when it is one of the `pinned` predicates (by address) and a union.
pub(crate) fn pinned_union<'a>(pinned: &'a [PinnedUnion<'_>], p: &Pred) -> Option<&'a BoxUnion> {
    pinned.iter().find(|(q, _)| std::ptr::eq(*q, p)).and_then(|(_, u)| u.as_ref().as_ref())
}

/// The fast path's view of a system: the multi-affine form of every update, per branch.
pub(crate) struct Forms {
    forms: Vec<Vec<Option<MultiAffine>>>,
    /// `[branch][state variable]`: the update at every vertex of the inputs it reads, with its
    /// coefficients enclosed once (`None`: not multi-affine, or too many vertices).
    coords: Vec<Vec<Option<Vec<IForm>>>>,
    union: UnionCache,
}

impl Forms {
    pub(crate) fn of(sys: &System) -> Forms {
        let forms: Vec<Vec<Option<MultiAffine>>> =
            sys.step.branches.iter().map(|b| b.updates.iter().map(MultiAffine::of).collect()).collect();
        let (n_state, n_action) = (sys.state.len(), sys.actions.len());
        let coords = forms
            .iter()
            .map(|branch| {
                branch
                    .iter()
                    .map(|f| {
                        let f = f.as_ref()?;
                        let at = vertices(sys, f.inputs())?;
                        Some(at.iter().map(|v| IForm::of(&f.at(v), n_state, n_action)).collect())
                    })
                    .collect()
            })
            .collect();
        Forms { forms, coords, union: Mutex::new(None) }
    }

    /// A box containing every successor of branch `bi` from `{s in p, a in psi(s), inputs}`, or
    /// `None` when the bounds show that set is empty. Each coordinate is the range of the atom
    /// `x_i' <= 0` as [`Forms::atom_range`] computes it (closed form when multi-affine, intervals
    /// otherwise).
    fn image(&self, sys: &System, bi: usize, post: &Postcondition, boxes: &Boxes) -> Option<FBox> {
        let n = sys.state.len();
        let (mut lo, mut hi) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for i in 0..n {
            let (l, h) = match &self.coords[bi][i] {
                Some(at) => at
                    .iter()
                    .map(|f| form_range(f, post, boxes))
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (l, h)| (lo.min(l), hi.max(h))),
                None => {
                    let u = &sys.step.branches[bi].updates[i];
                    if lookups_defined(u, sys, boxes) {
                        let r = u.eval_interval(&boxes.env());
                        (r.lo, r.hi)
                    } else {
                        (f64::NEG_INFINITY, f64::INFINITY)
                    }
                }
            };
            if l > h {
                return None;
            }
            lo.push(l);
            hi.push(h);
        }
        Some(FBox::new(lo, hi))
    }

    /// The successor boxes of every branch that may be enabled on the query's box.
    fn images(&self, sys: &System, region: &FBox, post: &Postcondition) -> Vec<(usize, FBox)> {
        let Some(boxes) = Boxes::on(sys, region, post) else { return Vec::new() };
        sys.step
            .branches
            .iter()
            .enumerate()
            .filter(|(_, br)| maybe_enabled(sys, br, &boxes))
            .filter_map(|(bi, _)| Some((bi, self.image(sys, bi, post, &boxes)?)))
            .collect()
    }

    /// The boxes of a union target, computed once per predicate: looked up among the `pinned`
    /// predicates by address first (no walk over the predicate at all), then in the cache of the
    /// last other target (compared by value, outside the lock).
    fn union_boxes(&self, n: usize, target: &Pred, pinned: &[PinnedUnion<'_>]) -> Arc<Option<UnionBoxes>> {
        if let Some((_, boxes)) = pinned.iter().find(|(p, _)| std::ptr::eq(*p, target)) {
            return boxes.clone();
        }
        let cached = self.union.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some((cached, boxes)) = cached
            && *cached == *target
        {
            return boxes;
        }
        let boxes = union_boxes_of(n, target);
        *self.union.lock().unwrap_or_else(|e| e.into_inner()) = Some((Arc::new(target.clone()), boxes.clone()));
        boxes
    }

    /// `StaysIn` / `Leaves` for a target that is a union of boxes, on the successor boxes.
    fn prove_union(&self, sys: &System, q: &BridgeQuery<'_>, pinned: &[PinnedUnion<'_>]) -> bool {
        let union = self.union_boxes(sys.state.len(), q.target.pred(), pinned);
        let Some(union) = union.as_ref() else { return false };
        self.images(sys, q.region, q.post).iter().all(|(_, img)| match q.target {
            Target::StaysIn(_) => union.covers_fbox(img),
            Target::Leaves(_) => !union.may_meet(img),
        })
    }

    /// The query's pinned union predicates cut to the boxes that matter, for a solver: the extra
    /// predicate (`p /\ Inv`) to the boxes that may meet `p` ([`Forms::narrow_on`]), the target
    /// to the boxes that may meet a successor box of some branch ([`Forms::narrow_after`]).
    /// `None` for a predicate that is not pinned or not a union.
    pub(crate) fn narrow(
        &self,
        sys: &System,
        q: &BridgeQuery<'_>,
        pinned: &[PinnedUnion<'_>],
    ) -> (Option<Pred>, Option<Pred>) {
        let extra = q.extra.and_then(|e| self.narrow_on(q.region, e, pinned));
        (extra, self.narrow_after(sys, q.region, q.post, q.target.pred(), pinned))
    }

    /// `p` (a pinned union) cut to its boxes that may meet `region`: the same set on `region`
    /// (a box left out has an outward enclosure disjoint from `region`, so it is disjoint from
    /// it). Exact whatever else the query says.
    pub(crate) fn narrow_on(&self, region: &FBox, p: &Pred, pinned: &[PinnedUnion<'_>]) -> Option<Pred> {
        pinned_union(pinned, p).map(|u| u.pred_of(&u.near(region)))
    }

    /// `p` (a pinned union) cut to its boxes that may meet the successor box of some branch from
    /// `{s in region, a in post(s)}` (the fast path's enclosures): the same set on every
    /// successor. A cut target is a subset of the whole, so "every successor stays in it" proven
    /// with the cut is proven for the whole, enclosures or not; "no successor is in it" rests on
    /// the enclosures as the fast path's `Leaves` does (and the engine only searches such a box
    /// for a counterexample, which is replayed exactly).
    pub(crate) fn narrow_after(
        &self,
        sys: &System,
        region: &FBox,
        post: &Postcondition,
        p: &Pred,
        pinned: &[PinnedUnion<'_>],
    ) -> Option<Pred> {
        pinned_union(pinned, p).map(|u| {
            let mut ks: Vec<usize> = self.images(sys, region, post).iter().flat_map(|(_, img)| u.near(img)).collect();
            ks.sort_unstable();
            ks.dedup();
            u.pred_of(&ks)
        })
    }

    /// Whether every successor of every branch satisfies (`StaysIn`) or violates (`Leaves`) the
    /// target, proven by bounds; `false` when not proven.
    pub(crate) fn prove(&self, sys: &System, q: &BridgeQuery<'_>, pinned: &[PinnedUnion<'_>]) -> bool {
        let Some(conj) = conjunction(q.target.pred()) else { return self.prove_union(sys, q, pinned) };
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
        Expr::Neg(a) | Expr::Relu(a) | Expr::Abs(a) | Expr::Div(a, _) | Expr::Apply(_, a) | Expr::Pow(a, _) => {
            visit_lookups(a, f)
        }
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
/// intervals, every element of finite sets. `None` when there are too many. Only multi-affine
/// forms are evaluated at vertices ([`MultiAffine`] refuses an input squared); every other update
/// is bounded by interval arithmetic over the whole domains.
fn vertices(sys: &System, mask: u64) -> Option<Vec<Vec<Rational>>> {
    trestle_ir::nondet::vertices(sys, mask, MAX_VERTICES)
}

/// Whether every premise box lies in the conclusion, both unions of boxes (`Init => Inv`,
/// `Inv => Safe` for boxes), by exact box subtraction.
pub(crate) fn boxes_imply(n: usize, premise: &Pred, conclusion: &Pred) -> bool {
    let Some(ps) = premise.to_box_union(n, MAX_UNION) else { return false };
    if ps.is_empty() {
        return true;
    }
    let Some(cs) = conclusion.to_box_union(n, MAX_UNION) else { return false };
    if let [c] = cs.as_slice() {
        return ps.iter().all(|p| box_in(p, c));
    }
    let union = BoxUnion::new(cs);
    ps.iter().all(|p| union.covers(p))
}

/// Sound enclosures of the successors of one step, for engines that need images rather than
/// answers (invariant synthesis). These are the very ranges with which the fast path decides
/// targets that are unions of boxes, so a box whose images an engine found inside such a union
/// is proven to stay in it by the fast path, without Z3.
pub struct SuccessorBounds<'s> {
    sys: &'s System,
    forms: Forms,
    /// Whether some update is curved, so [`SuccessorBounds::relaxed_images`] has work.
    curved: bool,
}

impl std::fmt::Debug for SuccessorBounds<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SuccessorBounds").field("system", &self.sys.name).finish()
    }
}

impl<'s> SuccessorBounds<'s> {
    pub fn new(sys: &'s System) -> Result<SuccessorBounds<'s>, crate::CheckError> {
        crate::query::validate_system(sys)?;
        Ok(SuccessorBounds {
            sys,
            forms: Forms::of(sys),
            curved: sys.step.branches.iter().flat_map(|b| &b.updates).any(crate::linearize::relaxes),
        })
    }

    /// For every branch that may be enabled on `region` under `post`: the branch and a box holding
    /// every successor `s'` of `{s in region, a in post(s), inputs in their domains}` (ends rounded
    /// outward, infinite where nothing is known; guards over-approximated, domain drops ignored).
    /// Empty when there is no successor.
    pub fn images(&self, region: &FBox, post: &Postcondition) -> Result<Vec<(usize, FBox)>, crate::CheckError> {
        crate::query::validate_box("state box", region, self.sys.state.len())?;
        post.validate(self.sys.state.len(), self.sys.actions.len())?;
        Ok(self.forms.images(self.sys, region, post))
    }

    /// Whether some update of the step is curved and not multi-affine: where
    /// [`SuccessorBounds::relaxed_images`] can be tighter than [`SuccessorBounds::images`].
    pub fn is_curved(&self) -> bool {
        self.curved
    }

    /// [`SuccessorBounds::images`] met, coordinate by coordinate, with the images of the step's
    /// linear relaxation on `region`: every curved update (a function, a power, a product of two
    /// variables) replaced by the environment check's mean-value form `m . (s, a, w) + r` on the
    /// box ([`crate::linearize`], the relaxation of its leaf systems), then bounded in the fast
    /// path's closed form: `post`'s linear bounds substituted for the actions by the signs of
    /// their coefficients, the affine result bounded over the box, rounded outward. The
    /// relaxation keeps what intervals lose: how the successor moves with the state and with the
    /// controller's action. Both images hold every successor, so their meet does, and it is never
    /// looser than the interval images (a side whose meet is empty, which only rounding can make,
    /// keeps the interval image).
    pub fn relaxed_images(&self, region: &FBox, post: &Postcondition) -> Result<Vec<(usize, FBox)>, crate::CheckError> {
        let mut images = self.images(region, post)?;
        if !self.curved {
            return Ok(images);
        }
        let Some(boxes) = Boxes::on(self.sys, region, post) else { return Ok(images) };
        let (n, m) = (boxes.state.len(), boxes.action.len());
        let all: Vec<Interval> = boxes.state.iter().chain(&boxes.action).chain(&boxes.nondet).copied().collect();
        for (bi, image) in &mut images {
            for (i, update) in self.sys.step.branches[*bi].updates.iter().enumerate() {
                if !crate::linearize::relaxes(update) {
                    continue;
                }
                let Some((slopes, remainder)) = crate::linearize::mean_value_form(update, &all, n, m) else { continue };
                // The inputs' terms are independent of the rest: their range joins the constant.
                let constant = slopes[n + m..]
                    .iter()
                    .zip(&boxes.nondet)
                    .fold(remainder, |acc, (&c, w)| acc.add(&Interval::point(c).mul(w)));
                let form = IForm {
                    constant,
                    state: slopes[..n].iter().map(|&c| Interval::point(c)).collect(),
                    action: (0..m)
                        .filter(|&j| slopes[n + j] != 0.0)
                        .map(|j| (j, Interval::point(slopes[n + j]), slopes[n + j] > 0.0))
                        .collect(),
                };
                let (lo, hi) = form_range(&form, post, &boxes);
                let (lo, hi) = (image.lo[i].max(lo), image.hi[i].min(hi));
                if lo <= hi {
                    (image.lo[i], image.hi[i]) = (lo, hi);
                }
            }
        }
        Ok(images)
    }
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
