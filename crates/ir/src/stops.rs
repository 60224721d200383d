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
///   labelled with every index an argmax action takes;
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
    // The number of indices of each argmax action (`None` for real actions).
    let indices: Vec<Option<usize>> = sys
        .actions
        .iter()
        .map(|a| match &a.kind {
            ActionKind::Index { labels } => Some(labels.len()),
            ActionKind::Real => None,
        })
        .collect();
    let branches = &sys.step.branches;
    let unguarded = |label: Option<(usize, usize)>| branches.iter().any(|b| b.guard.is_none() && b.label == label);
    let enabled = unguarded(None)
        || indices.iter().enumerate().any(|(a, n)| n.is_some_and(|n| (0..n).all(|v| unguarded(Some((a, v))))));
    if !enabled {
        return Err("no branch is enabled in every state (guards or labels may leave a run without a successor)".into());
    }
    let integral = |e: &Expr| is_integral(sys, &indices, e);
    let state: Vec<Interval> = sys
        .state
        .iter()
        .map(|v| {
            let lo = v.domain.lo.as_ref().map_or(f64::NEG_INFINITY, num::down);
            let hi = v.domain.hi.as_ref().map_or(f64::INFINITY, num::up);
            Interval::new(lo, hi)
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
