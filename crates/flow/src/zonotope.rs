//! Zonotopes (affine forms) carried through control periods: the set representation that does
//! not wrap when the closed loop rotates.
//!
//! A [`Zonotope`] is the set `{c + sum_j e_j g_j : e ∈ [-1, 1]^m}` with `c` and the generators
//! `g_j` f64 vectors, read as the exact dyadic rationals they are. Re-boxing a rotating set
//! every period inflates it (the wrapping effect: a square turned by 45° and boxed grows by
//! √2); a zonotope's image under an affine map is again a zonotope, so an oscillator's set turns
//! without growing, and only the enclosure's remainder, the controller's relaxation gap and
//! rounding add (fresh, small) generators.
//!
//! # One period ([`Zonotope::flow_step`])
//!
//! The caller gives the held actions as an [`AffineForm`] over the same `e` (e.g. CROWN's lines
//! of the controller composed with `x = c + G e`, the gap between the lines as its radius) and a
//! box containing every true action. The flow's [`crate::LinearEnclosure`] computed on the
//! zonotope's box hull and that action box, `x' ∈ A x0 + B u + C w + o + rem`, holds for every
//! true `(x0, u, w)`; substituting `x0 = c + G e`, `u = u_c + U e + r_u t` (`t ∈ [-1, 1]^k`),
//! `w = w_mid + diag(w_rad) s` gives the successor as an affine function of `e` (the old
//! generators, kept: this is what keeps the correlation), `t` and `s` (fresh generators, one per
//! action and input) plus the remainder `rem` (a fresh axis-aligned generator per state).
//!
//! # Rounding
//!
//! Every coefficient (the new centre, each generator's entries) is computed as an outward-rounded
//! interval ([`trestle_ir::Interval`]: products and sums of intervals rounded outward), so the
//! exact real coefficient lies in it. The f64 kept is the interval's midpoint `m`; the true
//! coefficient differs from `m` by at most the radius `r = max(hi - m, m - lo)` (rounded up),
//! and since the coefficient multiplies some `e_j ∈ [-1, 1]`, the neglected term lies in
//! `[-r, r]`. The radii of a row (all its coefficients and the remainder's) are summed upward
//! into one fresh axis-aligned generator of that row. So every point of the true image is a
//! point of the stored zonotope, exactly.
//!
//! # Order reduction ([`Zonotope::reduce`])
//!
//! Girard's method: when there are more than the allowed generators, those with the smallest
//! `‖g‖₁ - ‖g‖∞` (the ones a box loses least on) are replaced by the box of their sum (per row
//! `sum |g_ji|`, rounded up): the box contains every combination of them, so the result contains
//! the original.
//!
//! # Deciding a predicate ([`Zonotope::decide`])
//!
//! A linear atom `a·x + b ⋈ 0` is decided by the exact range of `a·x` over the zonotope,
//! `a·c ± sum_j |a·g_j|`, enclosed outward (the coefficients of `a` as the tightest f64
//! intervals of the rationals); any other atom by interval evaluation on the box hull.

use trestle_ir::expr::VarRef;
use trestle_ir::pred::{kleene_and, kleene_or};
use trestle_ir::round::{add_up, sub_down, sub_up};
use trestle_ir::{CmpOp, Env, Interval, Pred, Rational};

use crate::{Flow, FlowEnclosure, FlowError, FlowSettings};

/// `{center + sum_j e_j generators[j] : e ∈ [-1, 1]^m}`, exactly (module doc).
#[derive(Clone, Debug, PartialEq)]
pub struct Zonotope {
    pub center: Vec<f64>,
    /// Each of length `center.len()`.
    pub generators: Vec<Vec<f64>>,
}

/// Values `center_i + coeffs_i · e + [-radius_i, radius_i]` over the `e` of a zonotope: every
/// value it stands for, for each `e`, lies in that interval.
#[derive(Clone, Debug, PartialEq)]
pub struct AffineForm {
    pub center: Vec<f64>,
    /// One row per value, one column per generator of the zonotope.
    pub coeffs: Vec<Vec<f64>>,
    /// Non-negative.
    pub radius: Vec<f64>,
}

/// The radius of `x` around `m` (inside it), rounded up.
fn radius_about(x: &Interval, m: f64) -> f64 {
    sub_up(x.hi, m).max(sub_up(m, x.lo)).max(0.0)
}

/// The upper bound of `|x|`.
fn magnitude(x: &Interval) -> f64 {
    x.lo.abs().max(x.hi.abs())
}

fn point(x: f64) -> Interval {
    Interval::point(x)
}

/// `sum a_j b_j` in outward-rounded intervals.
fn dot(a: impl Iterator<Item = Interval>, b: impl Iterator<Item = Interval>) -> Interval {
    a.zip(b).fold(point(0.0), |acc, (x, y)| acc.add(&x.mul(&y)))
}

/// A row under construction: interval coefficients and an accumulated radius.
struct Row {
    center: Interval,
    coeffs: Vec<Interval>,
    radius: f64,
}

impl Row {
    /// Midpoints kept, every neglected difference moved (rounded up) into the radius.
    fn settle(self) -> (f64, Vec<f64>, f64) {
        let c = self.center.mid();
        let mut r = add_up(self.radius, radius_about(&self.center, c));
        let coeffs = self
            .coeffs
            .iter()
            .map(|k| {
                let m = k.mid();
                r = add_up(r, radius_about(k, m));
                m
            })
            .collect();
        (c, coeffs, r)
    }
}

impl AffineForm {
    /// The box of every value (outward-rounded).
    pub fn hull(&self) -> Vec<Interval> {
        (0..self.center.len())
            .map(|i| {
                let r = self.coeffs[i].iter().fold(self.radius[i], |acc, g| add_up(acc, g.abs()));
                Interval::new(sub_down(self.center[i], r), add_up(self.center[i], r))
            })
            .collect()
    }

    /// `rows · v + offset` for the values `v` of this form, as a form over the same `e`
    /// (`rows[i][k]` and `offset[i]` intervals containing the true coefficients).
    pub fn affine_map(&self, rows: &[Vec<Interval>], offset: &[Interval]) -> AffineForm {
        let m = self.coeffs.first().map_or(0, Vec::len);
        let settled: Vec<_> = rows
            .iter()
            .zip(offset)
            .map(|(row, o)| {
                let center = o.add(&dot(row.iter().copied(), self.center.iter().map(|&c| point(c))));
                let coeffs =
                    (0..m).map(|j| dot(row.iter().copied(), self.coeffs.iter().map(|r| point(r[j])))).collect();
                let radius =
                    row.iter().zip(&self.radius).fold(0.0, |acc, (a, &r)| add_up(acc, mul_up_pos(magnitude(a), r)));
                Row { center, coeffs, radius }.settle()
            })
            .collect();
        AffineForm::from_rows(settled)
    }

    fn from_rows(rows: Vec<(f64, Vec<f64>, f64)>) -> AffineForm {
        let mut f = AffineForm { center: vec![], coeffs: vec![], radius: vec![] };
        for (c, g, r) in rows {
            f.center.push(c);
            f.coeffs.push(g);
            f.radius.push(r);
        }
        f
    }

    /// The form with `extra[i] >= 0` added to each radius (rounded up).
    pub fn widened(mut self, extra: &[f64]) -> AffineForm {
        for (r, e) in self.radius.iter_mut().zip(extra) {
            *r = add_up(*r, *e);
        }
        self
    }
}

/// `a * b` rounded up for `a, b >= 0`.
fn mul_up_pos(a: f64, b: f64) -> f64 {
    trestle_ir::round::mul_up(a, b)
}

impl Zonotope {
    pub fn dim(&self) -> usize {
        self.center.len()
    }

    /// The box itself: centre its midpoints, one axis-aligned generator per side of positive
    /// width (radius rounded up).
    pub fn from_box(b: &[Interval]) -> Zonotope {
        let n = b.len();
        let center: Vec<f64> = b.iter().map(Interval::mid).collect();
        let generators = (0..n)
            .filter_map(|i| {
                let r = radius_about(&b[i], center[i]);
                (r > 0.0).then(|| (0..n).map(|k| if k == i { r } else { 0.0 }).collect())
            })
            .collect();
        Zonotope { center, generators }
    }

    /// The box hull (outward-rounded): `c_i ± sum_j |g_ji|`.
    pub fn hull(&self) -> Vec<Interval> {
        (0..self.dim())
            .map(|i| {
                let r = self.generators.iter().fold(0.0, |acc, g| add_up(acc, g[i].abs()));
                Interval::new(sub_down(self.center[i], r), add_up(self.center[i], r))
            })
            .collect()
    }

    /// The exact range of `a·x + b` over the zonotope, enclosed outward.
    pub fn range(&self, a: &[Interval], b: Interval) -> Interval {
        let c = b.add(&dot(a.iter().copied(), self.center.iter().map(|&x| point(x))));
        let r = self
            .generators
            .iter()
            .fold(0.0, |acc, g| add_up(acc, magnitude(&dot(a.iter().copied(), g.iter().map(|&x| point(x))))));
        Interval::new(sub_down(c.lo, r), add_up(c.hi, r))
    }

    /// `rows · x + offset` over the zonotope as an affine form in its generators.
    pub fn affine_map(&self, rows: &[Vec<Interval>], offset: &[Interval]) -> AffineForm {
        self.as_form().affine_map(rows, offset)
    }

    /// The identity form: `x = c + G e`, radius 0.
    pub fn as_form(&self) -> AffineForm {
        let coeffs = (0..self.dim()).map(|i| self.generators.iter().map(|g| g[i]).collect()).collect();
        AffineForm { center: self.center.clone(), coeffs, radius: vec![0.0; self.dim()] }
    }

    /// Largest side of the box hull.
    pub fn width(&self) -> f64 {
        self.hull().iter().fold(0.0f64, |m, v| m.max(v.width()))
    }

    /// Girard's order reduction to at most `max` generators (`max >= dim`; module doc).
    pub fn reduce(&mut self, max: usize) {
        let n = self.dim();
        let max = max.max(n);
        self.generators.retain(|g| g.iter().any(|&x| x != 0.0));
        if self.generators.len() <= max {
            return;
        }
        let score = |g: &Vec<f64>| {
            let l1: f64 = g.iter().map(|x| x.abs()).sum();
            let linf = g.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            l1 - linf
        };
        self.generators.sort_by(|a, b| score(a).total_cmp(&score(b)));
        // Keep `max - n` generators; the others become (at most) n axis-aligned ones.
        let boxed: Vec<Vec<f64>> = self.generators.drain(..self.generators.len() - (max - n)).collect();
        for i in 0..n {
            let r = boxed.iter().fold(0.0, |acc, g| add_up(acc, g[i].abs()));
            if r > 0.0 {
                self.generators.push((0..n).map(|k| if k == i { r } else { 0.0 }).collect());
            }
        }
    }

    /// Three-valued: `Some(b)` when `pred` (over the state only) is `b` at every point (module doc).
    pub fn decide(&self, pred: &Pred) -> Option<bool> {
        match pred {
            Pred::True => Some(true),
            Pred::False => Some(false),
            Pred::Not(p) => self.decide(p).map(|b| !b),
            Pred::And(ps) => kleene_and(ps.iter().map(|p| self.decide(p))),
            Pred::Or(ps) => kleene_or(ps.iter().map(|p| self.decide(p))),
            Pred::Cmp(a, op, b) => match Pred::linear_atom(a, *op, b) {
                Some(atom) if atom.lhs.coeffs.keys().all(|v| matches!(v, VarRef::State(i) if *i < self.dim())) => {
                    let mut coeffs = vec![point(0.0); self.dim()];
                    for (v, q) in &atom.lhs.coeffs {
                        if let VarRef::State(i) = v {
                            coeffs[*i] = Interval::of_rational(q);
                        }
                    }
                    let r = self.range(&coeffs, Interval::of_rational(&atom.lhs.constant));
                    sign_decides(&r, *op)
                }
                _ => pred.eval_interval(&Env::new(&self.hull(), &[], &[])),
            },
        }
    }

    /// The zonotope after one period of the flow (module doc): the held actions are `actions`
    /// (a form over this zonotope's generators) and lie in `action_box`; the non-deterministic
    /// inputs range over `nondet`. Returns the successor (not reduced) and the enclosure used.
    pub fn flow_step(
        &self,
        flow: &Flow,
        actions: &AffineForm,
        action_box: &[Interval],
        nondet: &[Interval],
        period: &Rational,
        settings: &FlowSettings,
    ) -> Result<(Zonotope, FlowEnclosure), FlowError> {
        let (n, m) = (self.dim(), self.generators.len());
        if actions.center.len() != action_box.len() || actions.coeffs.iter().any(|r| r.len() != m) {
            return Err(FlowError::Dimension("the action form does not fit the zonotope".into()));
        }
        let enclosure = flow.enclose(&self.hull(), action_box, nondet, period, settings)?;
        let lin = &enclosure.linear;
        let (k, q) = (action_box.len(), nondet.len());
        let w_mid: Vec<f64> = nondet.iter().map(Interval::mid).collect();
        let w_rad: Vec<f64> = nondet.iter().zip(&w_mid).map(|(w, &c)| radius_about(w, c)).collect();
        let a = |i: usize, j: usize| point(lin.state[i][j]);
        let b = |i: usize, l: usize| point(lin.action[i][l]);
        let c = |i: usize, l: usize| point(lin.nondet[i][l]);
        // Each row: the old generators, then one per action radius and per input, then the row's own.
        let rows: Vec<_> = (0..n)
            .map(|i| {
                let mut center = point(lin.offset[i]).add(&lin.remainder[i]);
                center = center.add(&dot((0..n).map(|j| a(i, j)), self.center.iter().map(|&x| point(x))));
                center = center.add(&dot((0..k).map(|l| b(i, l)), actions.center.iter().map(|&x| point(x))));
                center = center.add(&dot((0..q).map(|l| c(i, l)), w_mid.iter().map(|&x| point(x))));
                let mut coeffs: Vec<Interval> = (0..m)
                    .map(|j| {
                        dot((0..n).map(|t| a(i, t)), self.generators[j].iter().map(|&x| point(x)))
                            .add(&dot((0..k).map(|l| b(i, l)), actions.coeffs.iter().map(|r| point(r[j]))))
                    })
                    .collect();
                coeffs.extend((0..k).map(|l| b(i, l).mul(&point(actions.radius[l]))));
                coeffs.extend((0..q).map(|l| c(i, l).mul(&point(w_rad[l]))));
                Row { center, coeffs, radius: 0.0 }.settle()
            })
            .collect();
        let mut next = Zonotope { center: rows.iter().map(|r| r.0).collect(), generators: vec![] };
        for j in 0..m + k + q {
            next.generators.push(rows.iter().map(|r| r.1[j]).collect());
        }
        for (i, r) in rows.iter().enumerate() {
            if r.2 > 0.0 {
                next.generators.push((0..n).map(|t| if t == i { r.2 } else { 0.0 }).collect());
            }
        }
        if next.center.iter().chain(next.generators.iter().flatten()).any(|v| !v.is_finite()) {
            return Err(FlowError::Input("the zonotope became unbounded".into()));
        }
        next.generators.retain(|g| g.iter().any(|&x| x != 0.0));
        Ok((next, enclosure))
    }
}

/// Decides `r ⋈ 0` for every value of the interval `r`.
fn sign_decides(r: &Interval, op: CmpOp) -> Option<bool> {
    let (t, f) = match op {
        CmpOp::Le => (r.hi <= 0.0, r.lo > 0.0),
        CmpOp::Lt => (r.hi < 0.0, r.lo >= 0.0),
        CmpOp::Ge => (r.lo >= 0.0, r.hi < 0.0),
        CmpOp::Gt => (r.lo > 0.0, r.hi <= 0.0),
        CmpOp::Eq => (r.lo == 0.0 && r.hi == 0.0, r.lo > 0.0 || r.hi < 0.0),
    };
    if t {
        Some(true)
    } else if f {
        Some(false)
    } else {
        None
    }
}
