//! Linear relaxations of a step with elementary functions (sin, exp, sqrt, ...), so that Z3 can
//! decide the bridge query of a box where the fast path's interval enclosures are too loose.
//!
//! Z3's exact encoding takes polynomial arithmetic only. On the query's box `B` of state, actions
//! (psi's box) and inputs (their hulls), every update `g` that applies a function is replaced by
//! its **mean-value form** around the box's centre `c`:
//!
//! ```text
//! g(z) = g(c) + sum_j G_j(xi) (z_j - c_j)          for some xi on the segment [c, z] (in B)
//!      in sum_j m_j z_j + r,   r in g(c) - sum_j m_j c_j + sum_j (D_j - m_j) (B_j - c_j)
//! ```
//!
//! where `D_j` encloses the partial derivative `dg/dz_j` over all of `B` (forward-mode
//! differentiation in outward-rounded interval arithmetic, [`Slope`], through the IR's one
//! evaluator of expressions) and `m_j` is its midpoint, an f64 and so an exact rational. The leaf
//! system has `x_i' = sum_j m_j z_j + r_i` with `r_i` a fresh input over that remainder interval:
//! every successor of the real step is a successor of the leaf (with `r_i` the true remainder),
//! so "every successor of the leaf stays in Inv", which Z3 decides exactly, is a proof for the
//! real step. The actions stay variables of the leaf, so psi's linear bounds still bind them.
//! A leaf's counterexample is not one of the system: it leaves the box open (the engine splits
//! it), never a verdict.
//!
//! Non-smooth operations (`min`, `max`, `relu`, `abs`) take the hull of their sides' derivatives
//! where the box does not decide them (Clarke's generalised gradient, for which the mean-value
//! inclusion holds: they are Lipschitz). A condition or lookup the box does not decide may make
//! `g` jump; then there is no relaxation and the box stays with the fast path's enclosures.
//!
//! The same mean-value forms tighten the successor boxes that synthesis's images and LTL's bound
//! propagation use ([`SuccessorBounds::relaxed_images`](crate::SuccessorBounds::relaxed_images)):
//! there every curved update is relaxed (powers and products of variables too, which Z3 would
//! otherwise take exactly), composed with psi's linear bounds of the actions in closed form.

use crate::query::BridgeQuery;
use std::ops::RangeInclusive;
use trestle_ir::arith::Arith;
use trestle_ir::expr::{EvalError, Function, VarRef};
use trestle_ir::network::Activation;
use trestle_ir::num::rational_from_f64;
use trestle_ir::system::{NondetDomain, NondetVar, VarKind};
use trestle_ir::{CmpOp, Env, Expr, Interval, Rational, System};

/// A value over a box with its partial derivatives, all enclosed in intervals. `d` is `None`
/// where the value may jump inside the box (then no derivative bounds it); an empty `d` is zero.
#[derive(Clone, Debug)]
pub(crate) struct Slope {
    v: Interval,
    d: Option<Vec<Interval>>,
}

impl Slope {
    fn variable(v: Interval, index: usize, count: usize) -> Slope {
        let mut d = vec![Interval::point(0.0); count];
        d[index] = Interval::point(1.0);
        Slope { v, d: Some(d) }
    }

    /// `self.d * k + o.d * l`, entry by entry; `None` when either side jumps.
    fn combine(&self, k: &Interval, o: &Slope, l: &Interval) -> Option<Vec<Interval>> {
        let (a, b) = (self.d.as_ref()?, o.d.as_ref()?);
        let zero = Interval::point(0.0);
        Some(
            (0..a.len().max(b.len()))
                .map(|j| {
                    let x = a.get(j).unwrap_or(&zero).mul(k);
                    x.add(&b.get(j).unwrap_or(&zero).mul(l))
                })
                .collect(),
        )
    }

    /// The derivative scaled by `k` (the chain rule through a function of one argument).
    fn scaled(&self, v: Interval, k: &Interval) -> Slope {
        Slope { v, d: self.d.as_ref().map(|d| d.iter().map(|x| x.mul(k)).collect()) }
    }

    /// Where the box does not decide which side a non-smooth operation takes: the hull of both
    /// sides' derivatives.
    fn either(v: Interval, a: &Slope, b: &Slope) -> Slope {
        let d = a.combine(&Interval::point(1.0), b, &Interval::point(0.0)).and_then(|da| {
            let db = b.combine(&Interval::point(1.0), a, &Interval::point(0.0))?;
            Some(da.iter().zip(&db).map(|(x, y)| x.hull(y)).collect())
        });
        Slope { v, d }
    }
}

impl Arith for Slope {
    fn constant(q: &Rational) -> Slope {
        Slope { v: Interval::of_rational(q), d: Some(Vec::new()) }
    }
    fn neg(&self) -> Slope {
        self.scaled(self.v.neg(), &Interval::point(-1.0))
    }
    fn add(&self, o: &Slope) -> Slope {
        let one = Interval::point(1.0);
        Slope { v: self.v.add(&o.v), d: self.combine(&one, o, &one) }
    }
    fn sub(&self, o: &Slope) -> Slope {
        Slope { v: self.v.sub(&o.v), d: self.combine(&Interval::point(1.0), o, &Interval::point(-1.0)) }
    }
    fn mul(&self, o: &Slope) -> Slope {
        Slope { v: self.v.mul(&o.v), d: self.combine(&o.v, o, &self.v) }
    }
    fn div_const(&self, k: &Rational) -> Slope {
        let inverse = Interval::of_rational(&(Rational::from_integer(1.into()) / k));
        self.scaled(self.v.mul(&inverse), &inverse)
    }
    fn min(&self, o: &Slope) -> Slope {
        match self.v.compare(CmpOp::Le, &o.v) {
            Some(true) => self.clone(),
            Some(false) => o.clone(),
            None => Slope::either(self.v.min(&o.v), self, o),
        }
    }
    fn max(&self, o: &Slope) -> Slope {
        match self.v.compare(CmpOp::Ge, &o.v) {
            Some(true) => self.clone(),
            Some(false) => o.clone(),
            None => Slope::either(self.v.max(&o.v), self, o),
        }
    }
    fn relu(&self) -> Slope {
        self.max(&Slope::constant(&Rational::from_integer(0.into())))
    }
    fn abs(&self) -> Slope {
        self.max(&self.neg())
    }
    fn compare(&self, op: CmpOp, o: &Slope) -> Option<bool> {
        self.v.compare(op, &o.v)
    }
    /// An undecided condition or lookup: the value may jump, so no derivative bounds it.
    fn join(&self, o: &Slope) -> Slope {
        Slope { v: self.v.hull(&o.v), d: None }
    }
    fn lookup(&self, len: usize) -> Result<RangeInclusive<usize>, EvalError> {
        self.v.lookup(len)
    }
    fn activate(&self, _: &Activation) -> Option<Slope> {
        None
    }
    /// The function's enclosure, and its derivative's over the argument's enclosure.
    fn apply(&self, f: Function) -> Result<Slope, EvalError> {
        let value = self.v.apply(f)?;
        let one = Interval::point(1.0);
        let outside = |reason: &str| EvalError::OutsideDomain {
            function: f,
            argument: self.v.to_string(),
            reason: reason.to_string(),
        };
        let square = |x: &Interval| x.powi(2).map_err(|e| outside(&e.to_string()));
        let derivative = match f {
            Function::Sin => self.v.cos(),
            Function::Cos => self.v.sin().neg(),
            Function::Tan => one.add(&square(&value)?),
            Function::Exp => value,
            Function::Log => self.v.powi(-1).map_err(|e| outside(&e.to_string()))?,
            // 1 / (2 sqrt x): unbounded where the box reaches 0.
            Function::Sqrt => value
                .powi(-1)
                .map_err(|_| outside("the derivative of sqrt is unbounded at 0"))?
                .mul(&Interval::point(0.5)),
            Function::Tanh => one.sub(&square(&value)?),
            Function::Sigmoid => value.sub(&square(&value)?),
        };
        Ok(self.scaled(value, &derivative))
    }
    fn pow(&self, n: u32) -> Slope {
        let square = |x: &Interval, k: i32| x.powi(k).unwrap_or(Interval { lo: f64::NEG_INFINITY, hi: f64::INFINITY });
        match n {
            0 => Slope::constant(&Rational::from_integer(1.into())),
            _ => self.scaled(square(&self.v, n as i32), &square(&self.v, n as i32 - 1).mul(&Interval::point(n as f64))),
        }
    }
}

/// The mean-value form of `g` over the box `all` (state, then actions, then inputs; module doc):
/// the slopes `m_j` and the remainder `r` with `g(z) - sum_j m_j z_j` in `r` for every `z` in the
/// box. `None` where `g` may jump inside the box, leaves a function's domain, or the box or a
/// derivative is unbounded.
pub(crate) fn mean_value_form(g: &Expr, all: &[Interval], n: usize, m: usize) -> Option<(Vec<f64>, Interval)> {
    let finite = |x: &Interval| x.lo.is_finite() && x.hi.is_finite();
    if !all.iter().all(finite) {
        return None;
    }
    let seeds: Vec<Slope> = all.iter().enumerate().map(|(j, &x)| Slope::variable(x, j, all.len())).collect();
    let d = g.eval(&Env::new(&seeds[..n], &seeds[n..n + m], &seeds[n + m..])).ok()?.d?;
    let centre: Vec<Interval> = all.iter().map(|x| Interval::point(x.mid())).collect();
    let mut remainder = g.eval(&Env::new(&centre[..n], &centre[n..n + m], &centre[n + m..])).ok()?;
    let mut slopes = vec![0.0; all.len()];
    for (j, dj) in d.iter().enumerate() {
        slopes[j] = dj.mid();
        // g(c) - m_j c_j + (D_j - m_j)(B_j - c_j), outward.
        let m_j = Interval::point(slopes[j]);
        remainder = remainder.sub(&m_j.mul(&centre[j])).add(&dj.sub(&m_j).mul(&all[j].sub(&centre[j])));
    }
    (slopes.iter().all(|x| x.is_finite()) && finite(&remainder)).then_some((slopes, remainder))
}

/// The leaf system of `q`'s box (module doc): `sys` with every update that applies a function
/// replaced by its mean-value form over fresh remainder inputs. `None` when there is nothing to
/// relax or no relaxation exists on this box: a guard applies a function, an integer variable's
/// update does, or [`mean_value_form`] has none.
pub(crate) fn leaf(sys: &System, q: &BridgeQuery<'_>) -> Option<System> {
    let boxes = crate::fastpath::Boxes::of(sys, q)?;
    let (n, m) = (boxes.state.len(), boxes.action.len());
    let all: Vec<Interval> = boxes.state.iter().chain(&boxes.action).chain(&boxes.nondet).copied().collect();
    let var = |j: usize| match j {
        j if j < n => VarRef::State(j),
        j if j < n + m => VarRef::Action(j - n),
        j => VarRef::Nondet(j - n - m),
    };
    let mut leaf = sys.clone();
    leaf.properties.clear();
    let mut relaxed = false;
    for (b, branch) in sys.step.branches.iter().enumerate() {
        if branch.guard.as_ref().is_some_and(|g| g.first_function().is_some()) {
            return None;
        }
        for (i, update) in branch.updates.iter().enumerate() {
            if update.first_function().is_none() {
                continue;
            }
            if sys.state[i].kind != VarKind::Real {
                return None;
            }
            let (slopes, remainder) = mean_value_form(update, &all, n, m)?;
            let mut form = Expr::Var(VarRef::Nondet(leaf.nondet.len()));
            for (j, &slope) in slopes.iter().enumerate().filter(|(_, s)| **s != 0.0) {
                let term = Expr::Mul(Box::new(Expr::Const(rational_from_f64(slope))), Box::new(Expr::Var(var(j))));
                form = Expr::Add(Box::new(form), Box::new(term));
            }
            leaf.nondet.push(NondetVar {
                name: format!("{}'{}-remainder", sys.state[i].name, branch.name),
                domain: NondetDomain::Interval(rational_from_f64(remainder.lo), rational_from_f64(remainder.hi)),
            });
            leaf.step.branches[b].updates[i] = form;
            relaxed = true;
        }
    }
    relaxed.then_some(leaf)
}

/// Whether [`SuccessorBounds::relaxed_images`](crate::SuccessorBounds::relaxed_images) relaxes
/// this update: it is curved (module doc of [`curved`]) and not multi-affine (the fast path's
/// closed form is exact on a multi-affine update already).
pub(crate) fn relaxes(update: &Expr) -> bool {
    curved(update) && crate::affine::MultiAffine::of(update).is_none()
}

/// Whether `e` bends: it applies a function, raises to a power, or multiplies two terms that
/// both read variables (where an interval enclosure forgets how the factors move together).
fn curved(e: &Expr) -> bool {
    let reads = |x: &Expr| !x.vars().is_empty();
    match e {
        Expr::Apply(..) | Expr::Pow(..) => true,
        Expr::Mul(a, b) => (reads(a) && reads(b)) || curved(a) || curved(b),
        Expr::Const(_) | Expr::Var(_) => false,
        Expr::Neg(a) | Expr::Relu(a) | Expr::Abs(a) | Expr::Div(a, _) => curved(a),
        Expr::Add(a, b) | Expr::Sub(a, b) | Expr::Min(a, b) | Expr::Max(a, b) => curved(a) || curved(b),
        Expr::Ite(_, a, b) => curved(a) || curved(b),
        Expr::Lookup(_, items) => items.iter().any(curved),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use trestle_ir::parse::{SimpleScope, Symbol, parse_expr};

    fn expr(text: &str) -> Expr {
        let mut scope = SimpleScope::with_state(&["x", "y"]);
        scope.add("u", Symbol::Var(VarRef::Action(0)));
        scope.add("w", Symbol::Var(VarRef::Nondet(0)));
        parse_expr(text, &scope).unwrap()
    }

    /// On random boxes, every sampled point's value (enclosed rigorously) meets the relaxation's
    /// value there: `g(z) - sum_j m_j z_j` lies in the remainder.
    #[test]
    fn the_mean_value_form_encloses_every_sampled_value() {
        let texts = [
            "sin(x) + 0.3*y*u",
            "x - 0.2*sin(x) + 0.1*w",
            "exp(0.5*x) * cos(y) - u^3",
            "tanh(x + y) + sigmoid(2*u - w)",
            "sqrt(x + 3) + log(y + 3)",
            "max(sin(x), 0.2*y) + abs(u) - relu(w - x)",
            "tan(0.3*x) * x^2 / 4",
        ];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut relaxed = 0;
        for text in texts {
            let g = expr(text);
            for _ in 0..200 {
                let all: Vec<Interval> = (0..4)
                    .map(|_| {
                        let c: f64 = rng.random_range(-1.5..1.5);
                        let r: f64 = rng.random_range(0.0..0.6);
                        Interval::new(c - r, c + r)
                    })
                    .collect();
                let Some((slopes, rem)) = mean_value_form(&g, &all, 2, 1) else { continue };
                relaxed += 1;
                for _ in 0..20 {
                    let z: Vec<Interval> =
                        all.iter().map(|b| Interval::point(b.lo + rng.random::<f64>() * b.width())).collect();
                    let mut value = g.eval(&Env::new(&z[..2], &z[2..3], &z[3..])).unwrap();
                    for (s, zj) in slopes.iter().zip(&z) {
                        value = value.sub(&Interval::point(*s).mul(zj));
                    }
                    assert!(
                        value.hi >= rem.lo && value.lo <= rem.hi,
                        "{text} on {all:?} at {z:?}: {value} outside {rem}"
                    );
                }
            }
        }
        assert!(relaxed > 1000, "only {relaxed} boxes relaxed");
    }

    /// The relaxation is tight where the function is nearly linear (what makes it worth a query),
    /// and absent where the value may jump or a derivative is unbounded.
    #[test]
    fn tight_on_small_boxes_and_absent_where_no_derivative_bounds_the_value() {
        let small =
            vec![Interval::new(0.5, 0.5001), Interval::new(-0.1, -0.0999), Interval::point(0.0), Interval::point(0.0)];
        let (slopes, rem) = mean_value_form(&expr("sin(x) * exp(y)"), &small, 2, 1).unwrap();
        assert!((slopes[0] - 0.5f64.cos() * (-0.1f64).exp()).abs() < 1e-3, "{slopes:?}");
        assert!(rem.width() < 1e-7, "{rem}");
        let wide = vec![Interval::new(-1.0, 1.0); 4];
        assert!(mean_value_form(&expr("if x <= 0 then sin(y) else 2"), &wide, 2, 1).is_none());
        assert!(mean_value_form(&expr("sqrt(x + 1)"), &wide, 2, 1).is_none(), "unbounded derivative at 0");
        assert!(mean_value_form(&expr("log(x)"), &wide, 2, 1).is_none(), "outside the domain");
        assert!(mean_value_form(&expr("if x <= 2 then sin(y) else 2"), &wide, 2, 1).is_some(), "decided condition");
    }
}
