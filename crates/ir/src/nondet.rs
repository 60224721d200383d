//! The environment's non-deterministic choices, enumerated in one place for every engine.
//!
//! Two uses with different needs:
//! * A bound that claims something for *every* choice may look at the vertices of the input box
//!   only where the quantity is multilinear in the inputs (affine in each one separately): a
//!   multilinear function on a box attains its extremes at vertices. [`vertices`] gives them
//!   exactly, or `None` past a limit; [`degree_in`] tells whether an expression qualifies. A
//!   quadratic in an input (`c*(c*a)`) can peak inside the interval, so it never qualifies.
//! * A search for a counterexample needs only *some* choice, but the right one. [`Choices`] offers
//!   the vertices (a deterministic spread of them when there are too many) and, for every input
//!   in which the step is not multilinear, interior points: a fixed sample (quarter points and
//!   midpoint) and, at a given state and action, the exact critical points — the vertex of every
//!   update that is quadratic in the input, and the root of every guard, `if` condition or kink
//!   (`relu`, `abs`, `min`, `max`) whose argument is affine in it.

use crate::expr::{Env, Expr, VarRef};
use crate::interval::Interval;
use crate::num::{Rational, clamp_f64_inside, rational_from_i64, to_f64_nearest};
use crate::pred::Pred;
use crate::system::{NondetDomain, NondetVar, System};
use num_traits::Zero;

/// An upper bound on the polynomial degree of `e` in input `k`, or why `e` is not a polynomial in
/// it with piecewise-linear coefficients (the input under `min`, `max`, `relu`, `abs`, an `if`
/// condition or a `lookup` index).
pub fn degree_in(e: &Expr, k: usize) -> Result<u32, String> {
    let reads = |x: &Expr| x.mentions(|v| v == VarRef::Nondet(k));
    Ok(match e {
        Expr::Const(_) => 0,
        Expr::Var(v) => u32::from(*v == VarRef::Nondet(k)),
        Expr::Neg(a) | Expr::Div(a, _) => degree_in(a, k)?,
        Expr::Add(a, b) | Expr::Sub(a, b) => degree_in(a, k)?.max(degree_in(b, k)?),
        Expr::Mul(a, b) => degree_in(a, k)? + degree_in(b, k)?,
        Expr::Pow(a, n) => degree_in(a, k)?.saturating_mul(*n),
        Expr::Apply(f, a) if reads(a) => return Err(format!("it appears under {f}")),
        Expr::Apply(..) => 0,
        Expr::Min(a, b) | Expr::Max(a, b) if reads(a) || reads(b) => return Err("it appears under min/max".into()),
        Expr::Relu(a) | Expr::Abs(a) if reads(a) => return Err("it appears under relu/abs".into()),
        Expr::Min(..) | Expr::Max(..) | Expr::Relu(_) | Expr::Abs(_) => 0,
        Expr::Ite(cond, a, b) => {
            if cond.mentions(|v| v == VarRef::Nondet(k)) {
                return Err("it appears in an if condition".into());
            }
            degree_in(a, k)?.max(degree_in(b, k)?)
        }
        Expr::Lookup(i, items) => {
            if reads(i) {
                return Err("it appears in a lookup index".into());
            }
            items.iter().map(|x| degree_in(x, k)).try_fold(0, |m, d| d.map(|d| m.max(d)))?
        }
    })
}

/// The extreme values of one input: both ends of an interval (one when they are equal), every
/// member of a set (ascending, without repeats).
pub fn extreme_values(v: &NondetVar) -> Vec<Rational> {
    match &v.domain {
        NondetDomain::Interval(l, h) if l == h => vec![l.clone()],
        NondetDomain::Interval(l, h) => vec![l.clone(), h.clone()],
        NondetDomain::Set(s) => {
            let mut s = s.clone();
            s.sort();
            s.dedup();
            s
        }
    }
}

/// The smallest interval holding every value of the input, rounded outward.
pub fn hull(v: &NondetVar) -> Interval {
    let values = extreme_values(v);
    values.iter().map(Interval::of_rational).fold(Interval::of_rational(&values[0]), |a, b| a.hull(&b))
}

/// Every combination of the extreme values of the inputs in `mask` (bit k: input k; the others
/// are 0), exactly; `None` when there would be more than `limit`.
pub fn vertices(sys: &System, mask: u64, limit: usize) -> Option<Vec<Vec<Rational>>> {
    let mut out = vec![vec![Rational::zero(); sys.nondet.len()]];
    for (k, v) in sys.nondet.iter().enumerate() {
        if k >= 64 || mask & (1u64 << k) == 0 {
            continue;
        }
        let values = extreme_values(v);
        if out.len().saturating_mul(values.len()) > limit {
            return None;
        }
        out = out
            .iter()
            .flat_map(|p| {
                values.iter().map(move |x| {
                    let mut p = p.clone();
                    p[k] = x.clone();
                    p
                })
            })
            .collect();
    }
    Some(out)
}

/// The f64 values of exact inputs for an f64 step, each interval input inside its interval (see
/// [`crate::num::clamp_f64_inside`]: the step refuses an input outside its domain). A member of a
/// set with no f64 form, or an interval that holds no f64, stays at its nearest f64, which the
/// step refuses.
pub fn f64_inputs(sys: &System, exact: &[Rational]) -> Vec<f64> {
    exact
        .iter()
        .zip(&sys.nondet)
        .map(|(q, v)| {
            let x = to_f64_nearest(q);
            match &v.domain {
                NondetDomain::Interval(lo, hi) => clamp_f64_inside(x, lo, hi).unwrap_or(x),
                NondetDomain::Set(_) => x,
            }
        })
        .collect()
}

/// The mask of every input (the first 64).
pub fn all_inputs(sys: &System) -> u64 {
    if sys.nondet.len() >= 64 { u64::MAX } else { (1u64 << sys.nondet.len()) - 1 }
}

/// Whether the step is multilinear in interval input `k`: no observation, guard, `if` condition
/// or kink reads it, and every update has degree at most 1 in it. Then, for fixed state and
/// actions, every successor coordinate is affine in it and its extremes lie at the ends.
pub fn is_multilinear_in(sys: &System, k: usize) -> bool {
    let reads = |v: VarRef| v == VarRef::Nondet(k);
    let observed = sys.controllers.iter().any(|c| c.inputs.iter().any(|e| e.mentions(reads)));
    let guarded = sys.step.branches.iter().any(|b| b.guard.as_ref().is_some_and(|g| g.mentions(reads)));
    let updates_ok = sys.step.branches.iter().flat_map(|b| &b.updates).all(|u| degree_in(u, k).is_ok_and(|d| d <= 1));
    !observed && !guarded && updates_ok
}

/// The choices a search tries.
#[derive(Clone, Debug)]
pub struct Choices {
    /// Vertices (or a spread of them), then fixed interior points of the curved inputs.
    fixed: Vec<Vec<Rational>>,
    /// Interval inputs in which the step is not multilinear.
    curved: Vec<usize>,
    limit: usize,
}

impl Choices {
    /// At most `limit` fixed choices (and at most `limit` critical ones per state).
    pub fn new(sys: &System, limit: usize) -> Choices {
        let limit = limit.max(1);
        let per_input: Vec<Vec<Rational>> = sys.nondet.iter().map(extreme_values).collect();
        let mut fixed = spread(&per_input, limit);
        let curved: Vec<usize> = (0..sys.nondet.len())
            .filter(|&k| {
                matches!(&sys.nondet[k].domain, NondetDomain::Interval(l, h) if l < h) && !is_multilinear_in(sys, k)
            })
            .collect();
        let bases = fixed.clone();
        'fill: for &k in &curved {
            let NondetDomain::Interval(lo, hi) = &sys.nondet[k].domain else { continue };
            for base in &bases {
                for quarter in [2, 1, 3] {
                    if fixed.len() >= 2 * limit {
                        break 'fill;
                    }
                    let mut c = base.clone();
                    c[k] = lo + (hi - lo) * rational_from_i64(quarter) / rational_from_i64(4);
                    fixed.push(c);
                }
            }
        }
        Choices { fixed, curved, limit }
    }

    /// The choices to try at every state.
    pub fn fixed(&self) -> &[Vec<Rational>] {
        &self.fixed
    }

    /// Whether some input needs interior points (then [`Choices::critical`] may add some).
    pub fn has_curved(&self) -> bool {
        !self.curved.is_empty()
    }

    /// Exact interior points of the curved inputs where, at this state and these actions, some
    /// update of some branch has the vertex of its parabola, or some guard, `if` condition or kink
    /// switches (each found from the vertices as bases, one input varied at a time).
    pub fn critical(&self, sys: &System, state: &[Rational], actions: &[Rational]) -> Vec<Vec<Rational>> {
        let mut out: Vec<Vec<Rational>> = Vec::new();
        for &k in &self.curved {
            let NondetDomain::Interval(lo, hi) = &sys.nondet[k].domain else { continue };
            for base in self.fixed.iter().take(self.limit) {
                let at = |c: &Rational| {
                    let mut n = base.clone();
                    n[k] = c.clone();
                    n
                };
                let mut found = Vec::new();
                for b in &sys.step.branches {
                    for u in &b.updates {
                        found.extend(parabola_vertex(u, k, lo, hi, &|c| {
                            u.eval_exact(&Env::new(state, actions, &at(c))).ok()
                        }));
                    }
                    let mut switches = Vec::new();
                    if let Some(g) = &b.guard {
                        pred_switches(g, &mut switches);
                    }
                    b.updates.iter().for_each(|u| expr_switches(u, &mut switches));
                    for s in switches.iter().filter(|s| degree_in(s, k) == Ok(1)) {
                        found.extend(affine_root(lo, hi, &|c| s.eval_exact(&Env::new(state, actions, &at(c))).ok()));
                    }
                }
                for c in found {
                    let choice = at(&c);
                    if !out.contains(&choice) && !self.fixed.contains(&choice) {
                        out.push(choice);
                    }
                    if out.len() >= self.limit {
                        return out;
                    }
                }
            }
        }
        out
    }
}

/// The vertex of `f` on `(lo, hi)` when `e` (whose values `f` gives) is quadratic in input `k`:
/// the parabola through the values at `lo`, the midpoint and `hi` is `f` itself.
fn parabola_vertex(
    e: &Expr,
    k: usize,
    lo: &Rational,
    hi: &Rational,
    f: &dyn Fn(&Rational) -> Option<Rational>,
) -> Option<Rational> {
    if degree_in(e, k) != Ok(2) {
        return None;
    }
    let two = rational_from_i64(2);
    let mid = (lo + hi) / &two;
    let (f0, f1, f2) = (f(lo)?, f(&mid)?, f(hi)?);
    let curvature = &f0 - &f1 * &two + &f2;
    if curvature.is_zero() {
        return None;
    }
    // f(mid + t h) = f1 + t (f2 - f0) / 2 + t^2 curvature / 2, with h = (hi - lo) / 2.
    let t = -(&f2 - &f0) / (&curvature * &two);
    let c = &mid + t * (hi - lo) / &two;
    (&c > lo && &c < hi).then_some(c)
}

/// The root in `(lo, hi)` of an affine function given by its values.
fn affine_root(lo: &Rational, hi: &Rational, f: &dyn Fn(&Rational) -> Option<Rational>) -> Option<Rational> {
    let (g0, g1) = (f(lo)?, f(hi)?);
    if g0 == g1 {
        return None;
    }
    let c = lo + (hi - lo) * &g0 / (&g0 - &g1);
    (&c > lo && &c < hi).then_some(c)
}

/// The expressions whose sign switches the step: `lhs - rhs` of every comparison.
pub(crate) fn pred_switches(p: &Pred, out: &mut Vec<Expr>) {
    match p {
        Pred::True | Pred::False => {}
        Pred::Cmp(a, _, b) => {
            out.push(Expr::Sub(Box::new(a.clone()), Box::new(b.clone())));
            expr_switches(a, out);
            expr_switches(b, out);
        }
        Pred::Not(q) => pred_switches(q, out),
        Pred::And(ps) | Pred::Or(ps) => ps.iter().for_each(|q| pred_switches(q, out)),
    }
}

/// Kinks and conditions inside an expression: arguments of `relu`/`abs`, differences of
/// `min`/`max` arguments, comparisons of `if` conditions.
pub(crate) fn expr_switches(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Const(_) | Expr::Var(_) => {}
        Expr::Neg(a) | Expr::Div(a, _) | Expr::Apply(_, a) | Expr::Pow(a, _) => expr_switches(a, out),
        Expr::Relu(a) | Expr::Abs(a) => {
            out.push((**a).clone());
            expr_switches(a, out);
        }
        Expr::Min(a, b) | Expr::Max(a, b) => {
            out.push(Expr::Sub(a.clone(), b.clone()));
            expr_switches(a, out);
            expr_switches(b, out);
        }
        Expr::Add(a, b) | Expr::Sub(a, b) | Expr::Mul(a, b) => {
            expr_switches(a, out);
            expr_switches(b, out);
        }
        Expr::Ite(c, a, b) => {
            pred_switches(c, out);
            expr_switches(a, out);
            expr_switches(b, out);
        }
        Expr::Lookup(i, items) => {
            expr_switches(i, out);
            items.iter().for_each(|x| expr_switches(x, out));
        }
    }
}

/// Every combination of one value per position when there are at most `limit`; otherwise `limit`
/// of them: first the diagonal ones (combination j takes value `j mod n` of every position, so
/// every value of every position appears), then pseudo-random ones from a fixed hash.
fn spread(per_input: &[Vec<Rational>], limit: usize) -> Vec<Vec<Rational>> {
    let total = per_input.iter().try_fold(1usize, |acc, v| acc.checked_mul(v.len()));
    let digit = |j: usize, k: usize, n: usize| -> usize {
        match total {
            Some(t) if t <= limit => {
                let radix: usize = per_input[..k].iter().map(Vec::len).product();
                (j / radix) % n
            }
            _ if j < per_input.iter().map(Vec::len).max().unwrap_or(0) => j % n,
            _ => {
                let h = (j as u64 ^ ((k as u64) << 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                ((h ^ (h >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 17) as usize % n
            }
        }
    };
    let count = total.map_or(limit, |t| t.min(limit));
    (0..count).map(|j| per_input.iter().enumerate().map(|(k, v)| v[digit(j, k, v.len())].clone()).collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::num::parse_rational;
    use crate::parse::{SimpleScope, Symbol, parse_expr};

    fn q(s: &str) -> Rational {
        parse_rational(s).unwrap()
    }

    fn scope() -> SimpleScope {
        let mut s = SimpleScope::with_state(&["x"]);
        s.add("a", Symbol::Var(VarRef::Action(0)));
        s.add("c", Symbol::Var(VarRef::Nondet(0)));
        s.add("d", Symbol::Var(VarRef::Nondet(1)));
        s
    }

    fn degree(text: &str) -> Result<u32, String> {
        degree_in(&parse_expr(text, &scope()).unwrap(), 0)
    }

    #[test]
    fn degrees_count_products_and_refuse_nonlinear_positions() {
        assert_eq!(degree("x + 0.1*c*a"), Ok(1));
        assert_eq!(degree("c*d*a + x"), Ok(1));
        assert_eq!(degree("c*(c*a)"), Ok(2));
        assert_eq!(degree("(c + 1) * (c - 1) * c"), Ok(3));
        assert_eq!(degree("x + d*a"), Ok(0));
        assert!(degree("max(c, a)").is_err());
        assert!(degree("abs(c*a)").is_err());
        assert!(degree("if c <= 0.7 then a else x").is_err());
        assert!(degree("lookup(c, [a, x])").is_err());
    }

    /// `c*a - c*(c*a) = a c (1 - c)` peaks at `c = 1/2` for every `a > 0`: exactly the vertex.
    #[test]
    fn the_vertex_of_a_quadratic_update_is_found_exactly() {
        let e = parse_expr("c*a - c*(c*a)", &scope()).unwrap();
        let f = |c: &Rational| e.eval_exact(&Env::new(&[q("0")], &[q("3")], &[c.clone(), q("0")])).ok();
        assert_eq!(parabola_vertex(&e, 0, &q("0"), &q("1"), &f), Some(q("1/2")));
        // On [0.6, 1] the vertex is outside: none.
        assert_eq!(parabola_vertex(&e, 0, &q("0.6"), &q("1"), &f), None);
        let g = parse_expr("3*c - 1", &scope()).unwrap();
        let f = |c: &Rational| g.eval_exact(&Env::new(&[q("0")], &[q("0")], &[c.clone(), q("0")])).ok();
        assert_eq!(affine_root(&q("0"), &q("1"), &f), Some(q("1/3")));
    }

    #[test]
    fn a_spread_of_vertices_covers_every_value_of_every_input() {
        let values: Vec<Vec<Rational>> = (0..12).map(|_| vec![q("0"), q("1")]).collect();
        let picked = spread(&values, 256);
        assert_eq!(picked.len(), 256);
        for k in 0..12 {
            assert!(picked.iter().any(|p| p[k] == q("0")) && picked.iter().any(|p| p[k] == q("1")), "input {k}");
        }
        assert_eq!(spread(&values[..3], 256).len(), 8);
    }
}
