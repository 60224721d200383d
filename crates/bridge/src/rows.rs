//! Exact arithmetic on the rows of a postcondition over a box, for `certify`: extremes of
//! `w . s + c`, whether one row implies another, whether psi leaves any action at all. Every f64
//! is taken as the rational it is and every sum and product is exact, so these tests neither
//! accept a wrong row nor refuse a right one because of rounding (tight rows, reproduced exactly by
//! the re-bounding, compare equal).

use num_traits::Signed;
use trestle_ir::num::rational_from_f64;
use trestle_ir::system::{ActionKind, System};
use trestle_ir::{FBox, Rational};
use trestle_smt::{LinearPost, Postcondition};

/// The max (`upper`) or min of `w . s + c` over the box, exactly.
fn extreme(w: &[Rational], c: Rational, region: &FBox, upper: bool) -> Rational {
    w.iter().enumerate().fold(c, |acc, (j, wj)| {
        let end = if wj.is_negative() != upper { region.hi[j] } else { region.lo[j] };
        acc + wj * rational_from_f64(end)
    })
}

fn exact(row: &[f64]) -> Vec<Rational> {
    row.iter().map(|&v| rational_from_f64(v)).collect()
}

/// `a - b`, exactly.
fn difference(a: &[f64], b: &[f64]) -> Vec<Rational> {
    a.iter().zip(b).map(|(&x, &y)| rational_from_f64(x) - rational_from_f64(y)).collect()
}

/// Max over the box of `row . s + c`.
pub(crate) fn row_max(row: &[f64], c: f64, region: &FBox) -> Rational {
    extreme(&exact(row), rational_from_f64(c), region, true)
}

/// Min over the box of `row . s + c`.
pub(crate) fn row_min(row: &[f64], c: f64, region: &FBox) -> Rational {
    extreme(&exact(row), rational_from_f64(c), region, false)
}

/// The stored rows of action `a`: `(lower coefficients, lower offset, upper coefficients, upper offset)`.
pub(crate) fn rows_of(l: &LinearPost, a: usize) -> (&[f64], f64, &[f64], f64) {
    (l.lower.a.row(a), l.lower.c[a], l.upper.a.row(a), l.upper.c[a])
}

/// Whether the stored row follows from the fresh one over the box: a stored lower bound must lie
/// below the fresh lower bound everywhere (`max (stored - fresh) <= 0`), a stored upper bound above
/// the fresh upper bound (`max (fresh - stored) <= 0`). A fresh row that is not finite (a
/// composition that overflowed) confirms nothing.
pub(crate) fn follows(stored: &[f64], c: f64, fresh: &[f64], fresh_c: f64, region: &FBox, upper: bool) -> bool {
    if fresh.iter().chain([&fresh_c]).any(|v| !v.is_finite()) {
        return false;
    }
    let (a, b, ca, cb) = if upper { (fresh, stored, fresh_c, c) } else { (stored, fresh, c, fresh_c) };
    let gap = rational_from_f64(ca) - rational_from_f64(cb);
    extreme(&difference(a, b), gap, region, true) <= Rational::from_integer(0.into())
}

/// Whether psi leaves some action at every state of `region`. Real action `a` is non-empty at `s`
/// iff `lo <= hi`, `L(s) <= hi`, `lo <= U(s)` and `L(s) <= U(s)` (each decided over the whole box
/// by its extreme); an argmax action needs an integer in there, and one integer fitting the whole
/// box is required (stricter than needed: a doubtful clause is refused, never accepted). A psi
/// that is empty somewhere would make the environment condition hold for want of any action.
pub(crate) fn nonvacuous(sys: &System, region: &FBox, post: &Postcondition) -> Result<(), String> {
    let b = post.action_box();
    for (a, var) in sys.actions.iter().enumerate() {
        let empty = |why: String| Err(format!("psi of action {} is empty on part of the box: {why}", var.name));
        let (lo, hi) = (rational_from_f64(b.lo[a]), rational_from_f64(b.hi[a]));
        // Largest lower row and smallest upper row over the box (none: the box's own ends).
        let (l_max, u_min) = match post {
            Postcondition::Box(_) => (lo.clone(), hi.clone()),
            Postcondition::Linear(l) => {
                let (al, cl, au, cu) = rows_of(l, a);
                let gap = extreme(&difference(al, au), rational_from_f64(cl) - rational_from_f64(cu), region, true);
                if gap > Rational::from_integer(0.into()) {
                    return empty(format!("its lower row exceeds its upper row by up to {gap}"));
                }
                (row_max(al, cl, region), row_min(au, cu, region))
            }
        };
        let fits = match var.kind {
            ActionKind::Real => lo <= hi && l_max <= hi && lo <= u_min,
            ActionKind::Index { .. } => lo.clone().max(l_max.clone()).ceil() <= hi.clone().min(u_min.clone()).floor(),
        };
        if !fits {
            return empty(format!(
                "box [{}, {}], lower rows up to {l_max}, upper rows down to {u_min}",
                b.lo[a], b.hi[a]
            ));
        }
    }
    Ok(())
}
