//! Counterexample candidates aimed at the invariant's faces, for the search on an open box
//! ([`crate::witness::Searcher::search`]).
//!
//! A counterexample under a disturbance is one state and one input vertex together: in the
//! disturbed 6-D arena (`xi' = xi + dt*ai + di`, `di` in `[-0.02, 0.02]`) the successor leaves
//! only near a corner of the candidate, and only with `di` at the end that pushes outward. The
//! generic candidates (centre, corners, random points, each under every input vertex) hit that
//! by luck, and not at all in more dimensions than the corners are enumerated for. Here every
//! face the successor may cross is aimed at directly: for the face `x_i <= hi` of an invariant
//! box (`>= lo` likewise, signs flipped), and a branch whose update of `x_i` is affine in
//! (state, action, input),
//! * each input takes the extreme value that pushes `x_i'` furthest out (by the sign of its
//!   coefficient: a vertex of the input box);
//! * each action is replaced by the postcondition's linear bound in the state that is pessimistic
//!   for the crossing (the lower row when the action pushes outward): the state of the box that
//!   maximises that bound, a vertex by the signs of its coefficients, is where the crossing is
//!   most certain; the optimistic rows give a second vertex (where it is most possible).
//!
//! The states are taken inside the invariant's box exactly (the search's box is an outward f64
//! enclosure whose upper ends may lie outside the exact candidate: the corner `0.8` as an f64 is
//! above `0.8`, and no state there is a counterexample). A candidate is only proposed: the search
//! replays it exactly ([`crate::witness::Searcher::replay`]) and keeps it only when a successor
//! leaves the invariant there.

use std::collections::HashSet;
use trestle_ir::boxindex::BoxUnion;
use trestle_ir::nondet;
use trestle_ir::num::{Rational, rational_from_i64, to_f64_nearest};
use trestle_ir::{FBox, Pred, System, VarRef, space};
use trestle_smt::Postcondition;

/// Exact legal ranges, one per state variable.
type Ranges = Vec<(Rational, Rational)>;

/// Most invariant boxes aimed at from one search box (those overlapping it most).
const MAX_BOXES: usize = 4;

/// Invariants of more boxes are not aimed at (their exact boxes are not kept).
const MAX_INVARIANT_BOXES: usize = 100_000;

/// One update's affine form, in f64: only its signs and sizes steer the aim.
struct Form {
    state: Vec<f64>,
    action: Vec<f64>,
    nondet: Vec<f64>,
}

impl Form {
    fn of(sys: &System, e: &trestle_ir::Expr) -> Option<Form> {
        let lin = e.as_linear()?;
        let mut f = Form {
            state: vec![0.0; sys.state.len()],
            action: vec![0.0; sys.actions.len()],
            nondet: vec![0.0; sys.nondet.len()],
        };
        for (v, q) in &lin.coeffs {
            let q = to_f64_nearest(q);
            match *v {
                VarRef::State(j) => f.state[j] = q,
                VarRef::Action(a) => f.action[a] = q,
                VarRef::Nondet(k) => f.nondet[k] = q,
            }
        }
        Some(f)
    }
}

/// A candidate: an exact legal state inside an invariant box and the inputs aimed with it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Aimed {
    pub state: Vec<Rational>,
    pub nondet: Vec<Rational>,
}

/// The aim of one engine run (one system, one invariant).
pub(crate) struct Aim {
    /// The invariant's exact boxes, indexed; `None` when it is no union of boxes we keep.
    union: Option<BoxUnion>,
    /// Per branch, per state variable: its update's affine form, when it has one.
    forms: Vec<Vec<Option<Form>>>,
    /// Per input: its extreme values, ascending.
    extremes: Vec<Vec<Rational>>,
}

impl Aim {
    pub fn new(sys: &System, inv: &Pred) -> Aim {
        let union = inv.to_box_union(sys.state.len(), MAX_INVARIANT_BOXES).filter(|b| !b.is_empty()).map(BoxUnion::new);
        let forms = sys.step.branches.iter().map(|b| b.updates.iter().map(|u| Form::of(sys, u)).collect()).collect();
        let extremes = sys
            .nondet
            .iter()
            .map(|v| {
                let mut e = nondet::extreme_values(v);
                e.sort();
                e
            })
            .collect();
        Aim { union, forms, extremes }
    }

    /// The legal ranges of `ranges` (from [`space::legal_box`] of `p`) inside each invariant box
    /// that meets `p`, the boxes overlapping `p` most first, at most [`MAX_BOXES`]. Empty when the
    /// invariant is no union of boxes (or no state of `p` is in it).
    pub fn inside(&self, sys: &System, p: &FBox, ranges: &[(Rational, Rational)]) -> Vec<Vec<(Rational, Rational)>> {
        self.inside_boxes(sys, p, ranges).into_iter().map(|(_, r)| r).collect()
    }

    /// [`Aim::inside`] with the index of each invariant box.
    fn inside_boxes(&self, sys: &System, p: &FBox, ranges: &[(Rational, Rational)]) -> Vec<(usize, Ranges)> {
        let Some(union) = &self.union else { return Vec::new() };
        let mut found: Vec<(f64, usize, Ranges)> = union
            .near(p)
            .into_iter()
            .filter_map(|k| {
                let b = &union.boxes()[k];
                let r: Vec<(Rational, Rational)> = ranges
                    .iter()
                    .enumerate()
                    .map(|(i, (lo, hi))| {
                        let lo = b.lo[i].as_ref().map_or(lo.clone(), |l| l.max(lo).clone());
                        let hi = b.hi[i].as_ref().map_or(hi.clone(), |h| h.min(hi).clone());
                        space::legal_range(sys, i, &lo, &hi)
                    })
                    .collect::<Option<_>>()?;
                let volume = r.iter().map(|(l, h)| to_f64_nearest(&(h - l))).product::<f64>();
                Some((volume, k, r))
            })
            .collect();
        // Largest overlap first; the sort is stable, so equals keep the boxes' order.
        found.sort_by(|a, b| b.0.total_cmp(&a.0));
        found.into_iter().take(MAX_BOXES).map(|(_, k, r)| (k, r)).collect()
    }

    /// The aimed candidates of `p` (see the module documentation), without repeats. `post` is
    /// the postcondition of the controllers on `p`.
    pub fn candidates(
        &self,
        sys: &System,
        p: &FBox,
        ranges: &[(Rational, Rational)],
        post: Option<&Postcondition>,
    ) -> Vec<Aimed> {
        let Some(union) = &self.union else { return Vec::new() };
        if self.forms.iter().all(|f| f.iter().all(Option::is_none)) {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for (k, r) in self.inside_boxes(sys, p, ranges) {
            // A successor outside the union is outside the box its state lies in: it crosses one
            // of that box's faces (bounded ends only).
            let b = &union.boxes()[k];
            let faces = (0..b.dims()).flat_map(|i| [(i, 1.0, b.hi[i].is_some()), (i, -1.0, b.lo[i].is_some())]);
            for (i, sign, bounded) in faces {
                if !bounded {
                    continue;
                }
                for branch in &self.forms {
                    let Some(form) = &branch[i] else { continue };
                    let nondet = self.push(form, sign);
                    for pessimistic in [true, false] {
                        let state = vertex(sys, &r, &direction(form, sign, post, pessimistic));
                        if seen.insert((state.clone(), nondet.clone())) {
                            out.push(Aimed { state, nondet: nondet.clone() });
                        }
                    }
                }
            }
        }
        out
    }

    /// The inputs pushing `sign * form` up: each at the end its coefficient favours (the first
    /// extreme value when it has none).
    fn push(&self, form: &Form, sign: f64) -> Vec<Rational> {
        self.extremes
            .iter()
            .zip(&form.nondet)
            .map(|(values, &c)| if sign * c > 0.0 { values[values.len() - 1].clone() } else { values[0].clone() })
            .collect()
    }
}

/// The state direction in which `sign * form` grows once every action is replaced by its linear
/// bound in the state from `post` (the bound on the pessimistic side for the crossing when
/// `pessimistic`, the other otherwise); the state's own coefficients alone under a box
/// postcondition.
fn direction(form: &Form, sign: f64, post: Option<&Postcondition>, pessimistic: bool) -> Vec<f64> {
    let mut w: Vec<f64> = form.state.iter().map(|c| sign * c).collect();
    if let Some(Postcondition::Linear(l)) = post {
        for (a, &c) in form.action.iter().enumerate() {
            let c = sign * c;
            if c == 0.0 {
                continue;
            }
            // Pushing outward (c > 0), the crossing is certain where the lower bound of the
            // action is large.
            let row = if (c > 0.0) == pessimistic { l.lower.a.row(a) } else { l.upper.a.row(a) };
            for (wj, rj) in w.iter_mut().zip(row) {
                *wj += c * rj;
            }
        }
    }
    w
}

/// The legal state of `r` at the end each coordinate of `w` favours (the centre where it is 0).
fn vertex(sys: &System, r: &[(Rational, Rational)], w: &[f64]) -> Vec<Rational> {
    let two = rational_from_i64(2);
    let x: Vec<Rational> = r
        .iter()
        .zip(w)
        .map(|((lo, hi), &c)| {
            if c > 0.0 {
                hi.clone()
            } else if c < 0.0 {
                lo.clone()
            } else {
                (lo + hi) / &two
            }
        })
        .collect();
    space::nearest(sys, r, &x)
}
