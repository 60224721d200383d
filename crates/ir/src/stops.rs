//! Whether the system's text rules out runs that stop ([`stop_free`]).

use crate::expr::{Env, Expr, VarRef};
use crate::interval::Interval;
use crate::num::{self, cmp_f64_rational};
use crate::system::{ActionKind, ControllerOutput, DomainExit, Policy, System, VarKind};

/// Why a run of the system might stop, or `Ok` when none can. A run stops at a deadlock (no
/// branch enabled), at a successor outside the declared domains (an error, or dropped under
/// `on_domain_exit = "drop"`), at a value of the wrong kind, or at a table lookup out of range.
/// Engines that reason about the runs that go on (one-step queries, unrollings, enclosures,
/// MILPs) need this to speak of every run. Enough, checked on the system's text:
/// - some branch is enabled everywhere: one without guard and label, or unguarded branches
///   labelled with every index an argmax action takes, or guards that cover every state
///   ([`guards_cover`]: complementary guards such as `comply` / `not comply`);
/// - every update of an `int` or `bool` variable is integral by its form (integers, integral
///   variables and argmax indices under `+ - * min max abs relu ite lookup`);
/// - unless domains are ignored, every update of a bounded variable lies in its domain by interval
///   arithmetic over the domains' box, argmax indices, feed-forward networks' outputs on that box
///   and the inputs' hulls (guards ignored);
/// - every lookup is indexed by an argmax action with no more indices than the table has entries;
/// - every partial function (`log`, `sqrt`, `tan`) of an update, guard or observation is defined
///   on the enclosure of its argument over the domains' box (an evaluation outside its domain is
///   the system's error, where a run stops).
pub fn stop_free(sys: &System) -> Result<(), String> {
    stop_free_within(sys, None)
}

/// [`stop_free`] for the runs whose states stay in `region` (one interval per state variable,
/// an enclosure of every state a run reaches, met with the domains): enabledness and domains are
/// then checked over the region instead of the whole declared space.
pub fn stop_free_within(sys: &System, region: Option<&[Interval]>) -> Result<(), String> {
    let indices = argmax_indices(sys);
    let branches = &sys.step.branches;
    let integral = |e: &Expr| is_integral(sys, &indices, e);
    let state: Vec<Interval> = sys
        .state
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let lo = v.domain.lo.as_ref().map_or(f64::NEG_INFINITY, num::down);
            let hi = v.domain.hi.as_ref().map_or(f64::INFINITY, num::up);
            let domain = Interval::new(lo, hi);
            region.and_then(|r| r.get(i)).and_then(|r| r.intersect(&domain)).unwrap_or(domain)
        })
        .collect();
    let inputs: Vec<Interval> = sys.nondet.iter().map(crate::nondet::hull).collect();
    let mut actions: Vec<Interval> = indices
        .iter()
        .map(|n| n.map_or(Interval::ENTIRE, |n| Interval::new(0.0, n.saturating_sub(1) as f64)))
        .collect();
    // Real outputs of feed-forward networks by interval arithmetic over the domains' box.
    let observed = Env::new(&state[..], &[], &inputs[..]);
    for c in &sys.controllers {
        let (Policy::Network(n), ControllerOutput::Actions(ids)) = (&c.policy, &c.output) else { continue };
        let net = &sys.networks[*n].network;
        if net.is_recurrent() {
            continue;
        }
        let input: Vec<Interval> = c.inputs.iter().map(|e| e.eval_interval(&observed)).collect();
        if let Ok(out) = net.run(&input, &mut Vec::new()) {
            for (&a, o) in ids.iter().zip(out) {
                actions[a] = o;
            }
        }
    }
    let env = Env::new(&state[..], &actions[..], &inputs[..]);
    let unguarded = |label: Option<(usize, usize)>| branches.iter().any(|b| b.guard.is_none() && b.label == label);
    let enabled = unguarded(None)
        || indices.iter().enumerate().any(|(a, n)| n.is_some_and(|n| (0..n).all(|v| unguarded(Some((a, v))))))
        || guards_cover(sys, &indices, &env);
    if !enabled {
        return Err("no branch is enabled in every state (guards or labels may leave a run without a successor)".into());
    }
    partial_functions_defined(sys, &observed, &env)?;
    for b in branches {
        for (v, u) in sys.state.iter().zip(&b.updates) {
            if v.kind != VarKind::Real && !integral(u) {
                return Err(format!(
                    "branch '{}' may give '{}' a value that is not an integer (where a run stops)",
                    b.name, v.name
                ));
            }
            if sys.domain_exit == DomainExit::Ignore {
                continue;
            }
            let iv = u.eval_interval(&env);
            let below =
                v.domain.lo.as_ref().is_some_and(|l| !(iv.lo.is_finite() && cmp_f64_rational(iv.lo, l).is_ge()));
            let above =
                v.domain.hi.as_ref().is_some_and(|h| !(iv.hi.is_finite() && cmp_f64_rational(iv.hi, h).is_le()));
            let bool_out = v.kind == VarKind::Bool && !(iv.lo >= 0.0 && iv.hi <= 1.0);
            if below || above || bool_out {
                return Err(format!(
                    "branch '{}' may take '{}' outside its domain (where a run stops)",
                    b.name, v.name
                ));
            }
        }
    }
    let mut bad_lookup = false;
    let mut check = |e: &Expr| {
        if let Expr::Lookup(index, items) = e {
            let in_range = match **index {
                Expr::Var(VarRef::Action(a)) => indices[a].is_some_and(|n| n <= items.len()),
                _ => false,
            };
            bad_lookup |= !in_range;
        }
    };
    for b in branches {
        b.updates.iter().for_each(|u| u.visit_exprs(&mut check));
        if let Some(g) = &b.guard {
            g.visit_exprs(&mut check);
        }
    }
    sys.controllers.iter().flat_map(|c| &c.inputs).for_each(|e| e.visit_exprs(&mut check));
    if bad_lookup {
        return Err("a lookup's index may fall outside its table".into());
    }
    Ok(())
}

/// Most argmax value combinations and sign vectors [`guards_cover`] enumerates.
const MAX_CASES: usize = 1 << 16;

/// Whether some branch is enabled at every point of `env` (state, actions and inputs as
/// intervals), decided exactly on the guards' structure: for every combination of the argmax
/// indices the labels and guards read (within their enclosures), each comparison of a guard is
/// reduced to the sign of its difference `lhs - rhs` (affine differences scaled so that equal
/// ones up to a positive factor, and opposite ones, share their sign), and every vector of signs
/// the differences can take on `env` (outward-rounded intervals) must make some branch's guard
/// true. Sound: at every point each difference has one sign, a vector enumerated here. It
/// decides complementary guards (`g` and `not g`), guards meeting on a boundary (`x <= 0`,
/// `x >= 0`) and guards false on the region; it gives up (`false`) past 2^16 cases.
pub fn guards_cover(sys: &System, indices: &[Option<usize>], env: &Env<'_, Interval>) -> bool {
    let branches = &sys.step.branches;
    // The argmax actions the labels and guards read.
    let mut read: Vec<usize> = branches.iter().filter_map(|b| b.label.map(|(a, _)| a)).collect();
    for b in branches {
        if let Some(g) = &b.guard {
            g.visit_vars(&mut |v| {
                if let VarRef::Action(a) = v
                    && indices[a].is_some()
                {
                    read.push(a);
                }
            });
        }
    }
    read.sort_unstable();
    read.dedup();
    let mut combos: Vec<Vec<(usize, usize)>> = vec![Vec::new()];
    for &a in &read {
        let n = indices[a].expect("argmax actions only");
        let iv = env.action[a];
        let values: Vec<usize> = (0..n).filter(|&v| iv.lo <= v as f64 && v as f64 <= iv.hi).collect();
        combos = combos
            .into_iter()
            .flat_map(|c| {
                values.iter().map(move |&v| {
                    let mut c = c.clone();
                    c.push((a, v));
                    c
                })
            })
            .collect();
        if combos.len() > MAX_CASES {
            return false;
        }
    }
    combos.iter().all(|combo| {
        let value = |a: usize| combo.iter().find(|(b, _)| *b == a).map(|&(_, v)| v);
        let mut guards = Vec::new();
        for b in branches {
            if b.label.is_some_and(|(a, v)| value(a) != Some(v)) {
                continue;
            }
            let Some(g) = &b.guard else { return true };
            let fixed = |v: VarRef| match v {
                VarRef::Action(a) => value(a).map(|k| Expr::Const(num::Rational::from_integer(k.into()))),
                _ => None,
            };
            guards.push(g.substitute(&fixed).nnf(false));
        }
        signs_cover(&guards, env)
    })
}

/// The sign of an atom's difference, and whether the atom is stated on its negation.
struct Sign {
    /// The difference (canonical affine form when affine, else as written).
    diff: Diff,
    /// Its signs that occur on the region: negative, zero, positive.
    possible: [bool; 3],
}

#[derive(PartialEq)]
enum Diff {
    Affine(Vec<(VarRef, num::Rational)>, num::Rational),
    Other(Expr),
}

/// Whether, for every sign vector of the guards' differences possible on `env`, some guard holds.
fn signs_cover(guards: &[crate::pred::Pred], env: &Env<'_, Interval>) -> bool {
    use crate::pred::Pred;
    let mut signs: Vec<Sign> = Vec::new();
    // Each atom as (its difference's index, whether that difference was negated, its operator).
    fn walk(p: &Pred, env: &Env<'_, Interval>, signs: &mut Vec<Sign>) {
        match p {
            Pred::Cmp(a, _, b) => {
                let (diff, _) = difference(a, b);
                if !signs.iter().any(|s| s.diff == diff) {
                    let iv = Expr::Sub(Box::new(a.clone()), Box::new(b.clone())).eval_interval(env);
                    let (_, flip) = difference(a, b);
                    let (lo, hi) = if flip { (-iv.hi, -iv.lo) } else { (iv.lo, iv.hi) };
                    let unknown = lo.is_nan() || hi.is_nan();
                    let possible = [unknown || lo < 0.0, unknown || (lo <= 0.0 && hi >= 0.0), unknown || hi > 0.0];
                    signs.push(Sign { diff, possible });
                }
            }
            Pred::And(ps) | Pred::Or(ps) => ps.iter().for_each(|q| walk(q, env, signs)),
            Pred::Not(q) => walk(q, env, signs),
            Pred::True | Pred::False => {}
        }
    }
    guards.iter().for_each(|g| walk(g, env, &mut signs));
    let cases =
        signs.iter().map(|s| s.possible.iter().filter(|&&b| b).count()).try_fold(1usize, |n, k| n.checked_mul(k));
    if cases.is_none_or(|n| n > MAX_CASES) {
        return false;
    }
    fn holds(p: &Pred, signs: &[Sign], vector: &[i8]) -> bool {
        match p {
            Pred::True => true,
            Pred::False => false,
            Pred::Cmp(a, op, b) => {
                let (diff, flip) = difference(a, b);
                let k = signs.iter().position(|s| s.diff == diff).expect("every atom was walked");
                let sign = if flip { -vector[k] } else { vector[k] };
                match op {
                    crate::pred::CmpOp::Le => sign <= 0,
                    crate::pred::CmpOp::Lt => sign < 0,
                    crate::pred::CmpOp::Ge => sign >= 0,
                    crate::pred::CmpOp::Gt => sign > 0,
                    crate::pred::CmpOp::Eq => sign == 0,
                }
            }
            Pred::And(ps) => ps.iter().all(|q| holds(q, signs, vector)),
            Pred::Or(ps) => ps.iter().any(|q| holds(q, signs, vector)),
            Pred::Not(q) => !holds(q, signs, vector),
        }
    }
    // Every sign vector, odometer style.
    let choices: Vec<Vec<i8>> = signs
        .iter()
        .map(|s| [-1i8, 0, 1].into_iter().zip(s.possible).filter(|(_, p)| *p).map(|(v, _)| v).collect())
        .collect();
    if choices.iter().any(Vec::is_empty) {
        // Some difference has no possible sign: the region is empty, nothing to cover.
        return true;
    }
    let mut at = vec![0usize; choices.len()];
    loop {
        let vector: Vec<i8> = at.iter().zip(&choices).map(|(&i, c)| c[i]).collect();
        if !guards.iter().any(|g| holds(g, &signs, &vector)) {
            return false;
        }
        let mut k = 0;
        loop {
            if k == at.len() {
                return true;
            }
            at[k] += 1;
            if at[k] < choices[k].len() {
                break;
            }
            at[k] = 0;
            k += 1;
        }
    }
}

/// `a - b` as a canonical difference: an affine form scaled so that its first coefficient is 1
/// (`true` when that took a negative factor: the sign flips), or the expression as written.
fn difference(a: &Expr, b: &Expr) -> (Diff, bool) {
    let d = Expr::Sub(Box::new(a.clone()), Box::new(b.clone()));
    match d.as_linear() {
        Some(l) => {
            let terms: Vec<(VarRef, num::Rational)> = l
                .coeffs
                .iter()
                .filter(|(_, k)| **k != num::Rational::from_integer(0.into()))
                .map(|(v, k)| (*v, k.clone()))
                .collect();
            let Some((_, first)) = terms.first() else { return (Diff::Affine(Vec::new(), l.constant.clone()), false) };
            // Dividing by the first coefficient: by a negative one flips the sign.
            let flip = *first < num::Rational::from_integer(0.into());
            let factor = first.clone();
            let terms = terms.into_iter().map(|(v, k)| (v, k / &factor)).collect();
            (Diff::Affine(terms, &l.constant / &factor), flip)
        }
        None => (Diff::Other(d), false),
    }
}

/// Every expression that applies a partial function evaluates without error over the enclosures
/// (`observed` for the controllers' observations, `env` for guards and updates).
fn partial_functions_defined(
    sys: &System,
    observed: &Env<'_, Interval>,
    env: &Env<'_, Interval>,
) -> Result<(), String> {
    let may_stop = |where_: &str, e: crate::expr::EvalError| {
        Err(format!("{where_} may evaluate a function outside its domain (where a run stops): {e}"))
    };
    for c in &sys.controllers {
        for e in c.inputs.iter().filter(|e| has_partial(e)) {
            if let Err(err) = e.eval(observed) {
                return may_stop("an observation", err);
            }
        }
    }
    for b in &sys.step.branches {
        if let Some(g) = b.guard.as_ref().filter(|g| {
            let mut found = false;
            g.visit_exprs(&mut |e| found |= has_partial(e));
            found
        }) && let Err(err) = g.eval(env)
        {
            return may_stop(&format!("the guard of branch '{}'", b.name), err);
        }
        for u in b.updates.iter().filter(|e| has_partial(e)) {
            if let Err(err) = u.eval(env) {
                return may_stop(&format!("branch '{}'", b.name), err);
            }
        }
    }
    Ok(())
}

fn has_partial(e: &Expr) -> bool {
    let mut found = false;
    e.visit_exprs(&mut |x| found |= matches!(x, Expr::Apply(f, _) if !f.is_total()));
    found
}

/// Whether `e` is an integer at every state of integral variables, by its form: integers,
/// `int` and `bool` variables and argmax indices under `+ - * min max abs relu ite lookup` and
/// powers (so an integer-coefficient affine form of integer variables plus an integer constant,
/// `min`/`max`/clamps and `abs` of such forms, lookups with integer entries). Real actions,
/// inputs, divisions and elementary functions are not (their value may be anything).
pub fn integral_by_form(sys: &System, e: &Expr) -> bool {
    is_integral(sys, &argmax_indices(sys), e)
}

/// The number of indices of each argmax action (`None` for real actions).
fn argmax_indices(sys: &System) -> Vec<Option<usize>> {
    sys.actions
        .iter()
        .map(|a| match &a.kind {
            ActionKind::Index { labels } => Some(labels.len()),
            ActionKind::Real => None,
        })
        .collect()
}

/// Whether `e` is an integer whatever the run, by its form.
fn is_integral(sys: &System, indices: &[Option<usize>], e: &Expr) -> bool {
    let integral = |e: &Expr| is_integral(sys, indices, e);
    match e {
        Expr::Const(c) => c.is_integer(),
        Expr::Var(VarRef::State(i)) => sys.state[*i].kind != VarKind::Real,
        Expr::Var(VarRef::Action(a)) => indices[*a].is_some(),
        Expr::Var(VarRef::Nondet(_)) | Expr::Div(..) => false,
        Expr::Neg(a) | Expr::Abs(a) | Expr::Relu(a) | Expr::Pow(a, _) => integral(a),
        Expr::Apply(..) => false,
        Expr::Add(a, b) | Expr::Sub(a, b) | Expr::Mul(a, b) | Expr::Min(a, b) | Expr::Max(a, b) => {
            integral(a) && integral(b)
        }
        Expr::Ite(_, a, b) => integral(a) && integral(b),
        Expr::Lookup(_, items) => items.iter().all(integral),
    }
}
