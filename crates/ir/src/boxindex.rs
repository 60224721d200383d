//! An index over the boxes of a union: which boxes meet a query box, whether a box or a point is
//! in the union, how far a point lies outside it, without a walk over every box.
//!
//! [`BoxIndex`] is a static bounding-volume hierarchy over f64 boxes (median splits of the boxes'
//! centres along the axis where they spread most, at most [`LEAF`] boxes per leaf, every node
//! holding the hull of its boxes). A node is entered only when its hull touches the query, and a
//! box touches the query only if every node above it does, so [`BoxIndex::touching`] returns
//! exactly the boxes a scan with [`FBox::touches`] returns (in ascending order, as the scan
//! would): the index changes how fast, never what.
//!
//! [`BoxUnion`] is a union of exact boxes ([`RBox`]) indexed by their outward-rounded f64
//! enclosures ([`OuterBox`](crate::pred::OuterBox)): a box whose enclosure misses the query's enclosure is disjoint from
//! it, so dropping it changes no exact answer. Coverage is decided by exact box subtraction over
//! the boxes that may meet the query, as [`RBox::is_covered_by`] over all of them would.

use crate::expr::{Expr, VarRef};
use crate::num::{Rational, down, up};
use crate::pred::{CmpOp, FBox, Pred, RBox};

/// Most boxes in a leaf of the hierarchy.
pub const LEAF: usize = 8;

#[derive(Clone, Debug)]
struct Node {
    hull: FBox,
    /// Leaf: `order[start..end]`; inner: children `left`, `right` (indices into `nodes`).
    kind: Kind,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Leaf { start: usize, end: usize },
    Inner { left: usize, right: usize },
}

/// A bounding-volume hierarchy over a list of f64 boxes (the keys), answering by their indices.
#[derive(Clone, Debug)]
pub struct BoxIndex {
    keys: Vec<FBox>,
    nodes: Vec<Node>,
    /// Key indices, grouped by leaf.
    order: Vec<usize>,
}

/// A coordinate of a box's centre used only to sort boxes into nodes (any finite value works;
/// infinite ends are replaced by the other end).
fn centre(b: &FBox, i: usize) -> f64 {
    let (l, h) = (b.lo[i], b.hi[i]);
    match (l.is_finite(), h.is_finite()) {
        (true, true) => l / 2.0 + h / 2.0,
        (true, false) => l,
        (false, true) => h,
        (false, false) => 0.0,
    }
}

fn hull_of(keys: &[FBox], idx: &[usize], dims: usize) -> FBox {
    let mut lo = vec![f64::INFINITY; dims];
    let mut hi = vec![f64::NEG_INFINITY; dims];
    for &k in idx {
        for i in 0..dims {
            lo[i] = lo[i].min(keys[k].lo[i]);
            hi[i] = hi[i].max(keys[k].hi[i]);
        }
    }
    FBox::new(lo, hi)
}

/// `max_i max(lo_i - x_i, x_i - hi_i)`: how far (max norm) `x` lies outside `b`, minus the depth
/// when inside; the very expression of [`crate::space::distance_outside`].
fn outside(b: &FBox, x: &[f64]) -> f64 {
    (0..x.len()).map(|i| (b.lo[i] - x[i]).max(x[i] - b.hi[i])).fold(f64::NEG_INFINITY, f64::max)
}

impl BoxIndex {
    /// The index of `keys` (all of one dimension; no end may be NaN).
    pub fn new(keys: Vec<FBox>) -> BoxIndex {
        let dims = keys.first().map_or(0, FBox::dims);
        debug_assert!(keys.iter().all(|k| k.dims() == dims && k.lo.iter().chain(&k.hi).all(|x| !x.is_nan())));
        let mut order: Vec<usize> = (0..keys.len()).collect();
        let mut nodes = Vec::new();
        if !keys.is_empty() {
            build(&keys, dims, &mut order, 0, &mut nodes);
        }
        BoxIndex { keys, nodes, order }
    }

    /// Number of boxes indexed.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no box is indexed.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The indexed boxes, in the order given (their positions are the indices answers use).
    pub fn keys(&self) -> &[FBox] {
        &self.keys
    }

    /// Calls `f` on every leaf whose hull passes `enter`, and on every key of it.
    fn visit(&self, enter: &mut dyn FnMut(&FBox) -> bool, f: &mut dyn FnMut(usize)) {
        if self.nodes.is_empty() {
            return;
        }
        let mut stack = vec![0];
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n];
            if !enter(&node.hull) {
                continue;
            }
            match node.kind {
                Kind::Leaf { start, end } => self.order[start..end].iter().for_each(|&k| f(k)),
                Kind::Inner { left, right } => {
                    stack.push(right);
                    stack.push(left);
                }
            }
        }
    }

    /// The indices of the keys that touch `q` (share a point with it: [`FBox::touches`]),
    /// ascending.
    pub fn touching(&self, q: &FBox) -> Vec<usize> {
        let mut out = Vec::new();
        self.visit(&mut |h| h.touches(q), &mut |k| {
            if self.keys[k].touches(q) {
                out.push(k)
            }
        });
        out.sort_unstable();
        out
    }

    /// Whether some key touches `q`.
    pub fn touches_any(&self, q: &FBox) -> bool {
        // The first hit ends the walk: every node left is refused.
        let found = std::cell::Cell::new(false);
        self.visit(&mut |h| !found.get() && h.touches(q), &mut |k| {
            if self.keys[k].touches(q) {
                found.set(true)
            }
        });
        found.get()
    }

    /// How far (in the max norm) `x` lies outside the union of the keys: > 0 outside, <= 0 inside
    /// (minus the depth); infinity when there are no keys. Equal to
    /// [`crate::space::distance_outside`] over the keys (a node's hull bounds the distance of every
    /// key inside it from below, so only nodes that may hold a smaller one are entered). A ranking
    /// for searches, in floating point; never a verdict.
    pub fn distance_outside(&self, x: &[f64]) -> f64 {
        let mut best = f64::INFINITY;
        if self.nodes.is_empty() {
            return best;
        }
        // Best-first would save a little more; depth-first with the nearer child first is enough.
        let mut stack = vec![0];
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n];
            if outside(&node.hull, x) >= best {
                continue;
            }
            match node.kind {
                Kind::Leaf { start, end } => {
                    for &k in &self.order[start..end] {
                        best = best.min(outside(&self.keys[k], x));
                    }
                }
                Kind::Inner { left, right } => {
                    let (dl, dr) = (outside(&self.nodes[left].hull, x), outside(&self.nodes[right].hull, x));
                    if dl <= dr {
                        stack.push(right);
                        stack.push(left);
                    } else {
                        stack.push(left);
                        stack.push(right);
                    }
                }
            }
        }
        best
    }
}

/// Builds the node of `order[..]` (key indices; `offset` is where they sit in the whole order),
/// returning its index in `nodes`.
fn build(keys: &[FBox], dims: usize, order: &mut [usize], offset: usize, nodes: &mut Vec<Node>) -> usize {
    let hull = hull_of(keys, order, dims);
    let me = nodes.len();
    if order.len() <= LEAF {
        nodes.push(Node { hull, kind: Kind::Leaf { start: offset, end: offset + order.len() } });
        return me;
    }
    nodes.push(Node { hull, kind: Kind::Leaf { start: 0, end: 0 } });
    // The axis along which the centres spread most.
    let spread = |i: usize| {
        let (lo, hi) = order
            .iter()
            .map(|&k| centre(&keys[k], i))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), c| (l.min(c), h.max(c)));
        hi - lo
    };
    let axis = (0..dims).max_by(|&a, &b| spread(a).total_cmp(&spread(b)).then(b.cmp(&a))).unwrap_or(0);
    order.sort_unstable_by(|&a, &b| centre(&keys[a], axis).total_cmp(&centre(&keys[b], axis)).then(a.cmp(&b)));
    let mid = order.len() / 2;
    let (l, r) = order.split_at_mut(mid);
    let left = build(keys, dims, l, offset, nodes);
    let right = build(keys, dims, r, offset + mid, nodes);
    nodes[me].kind = Kind::Inner { left, right };
    me
}

/// A union of exact boxes with its index: the boxes' outward f64 enclosures in a [`BoxIndex`].
#[derive(Clone, Debug)]
pub struct BoxUnion {
    exact: Vec<RBox>,
    index: BoxIndex,
}

impl BoxUnion {
    /// Indexes the boxes by their outward f64 enclosures ([`RBox::outer_fbox`]); unbounded sides
    /// stay infinite.
    pub fn new(exact: Vec<RBox>) -> BoxUnion {
        let index = BoxIndex::new(exact.iter().map(|b| b.outer_fbox().into_fbox()).collect());
        BoxUnion { exact, index }
    }

    /// The exact boxes, in the order given.
    pub fn boxes(&self) -> &[RBox] {
        &self.exact
    }

    /// The outward enclosure of box `k` (contains the exact box).
    pub fn outer(&self, k: usize) -> &FBox {
        &self.index.keys[k]
    }

    /// Number of boxes.
    pub fn len(&self) -> usize {
        self.exact.len()
    }

    /// Whether the union has no box (the empty set).
    pub fn is_empty(&self) -> bool {
        self.exact.is_empty()
    }

    /// The index over the boxes' outward enclosures (key `k` encloses box `k`).
    pub fn index(&self) -> &BoxIndex {
        &self.index
    }

    /// The boxes that may meet the set `q` encloses, ascending: every box sharing a point with it
    /// is among them (its enclosure touches `q`); those left out are disjoint from it.
    pub fn near(&self, q: &FBox) -> Vec<usize> {
        self.index.touching(q)
    }

    /// Whether some box's enclosure touches `q` (when not, no point of `q` is in the union).
    pub fn may_meet(&self, q: &FBox) -> bool {
        self.index.touches_any(q)
    }

    /// Whether the union contains `b` (exact box subtraction over the boxes that may meet it,
    /// which decides as subtraction over all of them would).
    pub fn covers(&self, b: &RBox) -> bool {
        let q = b.outer_fbox();
        b.is_covered_by(self.near(&q).into_iter().map(|k| &self.exact[k]))
    }

    /// Whether the union contains the f64 box `b` (taken exactly).
    pub fn covers_fbox(&self, b: &FBox) -> bool {
        RBox::of_fbox(b).is_covered_by(self.near(b).into_iter().map(|k| &self.exact[k]))
    }

    /// Whether the exact point `x` is in the union.
    pub fn contains_exact(&self, x: &[Rational]) -> bool {
        let q = FBox::new(x.iter().map(down).collect(), x.iter().map(up).collect());
        self.near(&q).into_iter().any(|k| self.exact[k].contains_exact(x))
    }

    /// The union of the boxes `ks` as a predicate over the state variables (`false` when empty):
    /// `lo_i <= x_i <= hi_i` for every bounded end.
    pub fn pred_of(&self, ks: &[usize]) -> Pred {
        if ks.is_empty() {
            return Pred::False;
        }
        Pred::or(ks.iter().map(|&k| box_pred(&self.exact[k])).collect())
    }
}

/// `lo_i <= x_i and x_i <= hi_i` over the bounded ends of `b` (`true` when none is).
pub fn box_pred(b: &RBox) -> Pred {
    let mut atoms = Vec::new();
    for i in 0..b.dims() {
        let x = || Expr::Var(VarRef::State(i));
        if let Some(l) = &b.lo[i] {
            atoms.push(Pred::Cmp(x(), CmpOp::Ge, Expr::Const(l.clone())));
        }
        if let Some(h) = &b.hi[i] {
            atoms.push(Pred::Cmp(x(), CmpOp::Le, Expr::Const(h.clone())));
        }
    }
    if atoms.is_empty() {
        return Pred::True;
    }
    Pred::and(atoms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Env;
    use proptest::prelude::*;

    /// Boxes on a coarse grid (many shared faces and touching corners), some unbounded sides.
    fn rbox(dims: usize) -> impl Strategy<Value = RBox> {
        proptest::collection::vec((0i32..20, 0i32..8, any::<u8>()), dims).prop_map(|v| {
            let q = |n: i32| Some(Rational::new(n.into(), 4.into()));
            RBox {
                lo: v.iter().map(|&(l, _, u)| if u % 17 == 0 { None } else { q(l) }).collect(),
                hi: v.iter().map(|&(l, w, u)| if u % 19 == 1 { None } else { q(l + w) }).collect(),
            }
        })
    }

    fn fbox(dims: usize) -> impl Strategy<Value = FBox> {
        proptest::collection::vec((-1.0f64..6.0, 0.0f64..3.0), dims)
            .prop_map(|v| FBox::new(v.iter().map(|p| p.0).collect(), v.iter().map(|p| p.0 + p.1).collect()))
    }

    fn union(dims: usize) -> impl Strategy<Value = Vec<RBox>> {
        proptest::collection::vec(rbox(dims), 0..60)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn touching_is_the_scan(dims in 1usize..4, bs in union(3), q in fbox(3)) {
            let bs: Vec<RBox> = bs.into_iter().map(|b| RBox { lo: b.lo[..dims].to_vec(), hi: b.hi[..dims].to_vec() }).collect();
            let q = FBox::new(q.lo[..dims].to_vec(), q.hi[..dims].to_vec());
            let u = BoxUnion::new(bs.clone());
            let scan: Vec<usize> = (0..bs.len()).filter(|&k| bs[k].outer_fbox().touches(&q)).collect();
            prop_assert_eq!(u.near(&q), scan.clone());
            prop_assert_eq!(u.may_meet(&q), !scan.is_empty());
            // Exact: every box meeting q exactly is among them.
            let rq = RBox::of_fbox(&q);
            for (k, b) in bs.iter().enumerate() {
                if b.touches(&rq) {
                    prop_assert!(scan.contains(&k));
                }
            }
        }

        #[test]
        fn coverage_and_membership_are_exact(bs in union(2), q in rbox(2), p in proptest::collection::vec(-4i32..40, 2)) {
            let u = BoxUnion::new(bs.clone());
            prop_assert_eq!(u.covers(&q), q.is_covered_by(&bs));
            let x: Vec<Rational> = p.iter().map(|&n| Rational::new(n.into(), 8.into())).collect();
            prop_assert_eq!(u.contains_exact(&x), bs.iter().any(|b| b.contains_exact(&x)));
            // The predicate of all the boxes is the union.
            let all: Vec<usize> = (0..bs.len()).collect();
            prop_assert_eq!(u.pred_of(&all).eval_exact(&Env::new(&x, &[], &[])).unwrap(), u.contains_exact(&x));
        }

        #[test]
        fn covers_fbox_is_exact(bs in union(2), q in fbox(2)) {
            let u = BoxUnion::new(bs.clone());
            prop_assert_eq!(u.covers_fbox(&q), RBox::of_fbox(&q).is_covered_by(&bs));
        }

        #[test]
        fn distance_is_the_scan(bs in proptest::collection::vec(fbox(3), 0..80), x in proptest::collection::vec(-3.0f64..9.0, 3)) {
            let idx = BoxIndex::new(bs.clone());
            let scan = crate::space::distance_outside(&bs, &x);
            prop_assert_eq!(idx.distance_outside(&x).to_bits(), scan.to_bits());
        }
    }

    #[test]
    fn a_tiled_box_is_covered_and_its_outside_is_not() {
        // 40 x 25 tiles of [0.25, 0.95] x [0.55, 0.95] with exact decimal cuts.
        let q = |s: &str| crate::num::parse_rational(s).unwrap();
        let cut = |lo: &str, hi: &str, n: i64, k: i64| q(lo) + (q(hi) - q(lo)) * Rational::new(k.into(), n.into());
        let mut bs = Vec::new();
        for j in 0..25 {
            for i in 0..40 {
                bs.push(RBox {
                    lo: vec![Some(cut("0.25", "0.95", 40, i)), Some(cut("0.55", "0.95", 25, j))],
                    hi: vec![Some(cut("0.25", "0.95", 40, i + 1)), Some(cut("0.55", "0.95", 25, j + 1))],
                });
            }
        }
        let u = BoxUnion::new(bs);
        let whole = RBox { lo: vec![Some(q("0.25")), Some(q("0.55"))], hi: vec![Some(q("0.95")), Some(q("0.95"))] };
        assert!(u.covers(&whole));
        let mut wider = whole.clone();
        wider.hi[0] = Some(q("0.9500001"));
        assert!(!u.covers(&wider));
        assert!(u.contains_exact(&[q("0.95"), q("0.55")]));
        assert!(!u.contains_exact(&[q("0.95"), q("0.549999")]));
        assert_eq!(
            u.index().distance_outside(&[0.5, 0.75]),
            crate::space::distance_outside(u.index().keys(), &[0.5, 0.75])
        );
        assert!(u.index().distance_outside(&[1.0, 0.75]) > 0.0);
    }
}
