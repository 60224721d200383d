//! Whether a run may stop at a state of a box of the invariant: the safety engines' extra
//! environment condition (issue 34.5). A property of "every run" speaks of the runs that go on
//! forever, so a proof of safety must also show that every state of the invariant has a step:
//! for every state `s` in `p /\ Inv`, every action the controllers may take there (allowed by a
//! postcondition psi, or the networks' own, [`StopActions`]) and every non-deterministic input,
//! some branch is enabled and every enabled branch's successor is a state (of its variable's
//! kind and, unless domains are ignored, inside them; under `on_domain_exit = "drop"` a successor
//! outside is no successor, and the run stops only when no legal one is left), with every
//! observation, guard and update defined (lookups in range, a selector that picks a network).
//!
//! Z3 decides the negation exactly (exact rationals, Int-sorted integers): `unsat` is
//! [`StopAnswer::Free`]; a model is replayed exactly ([`stop_at`], the IR's step) into a
//! [`Stop`], or the answer is `Unknown`. The encoding may over-approximate (a lookup inside an
//! `ite` arm not taken counts as evaluated), never under: a model it finds that is no stop fails
//! the replay.

use crate::config::CheckerConfig;
use crate::dump::Dumper;
use crate::encode::{Scope, Vars, and, in_box, num, or};
use crate::error::CheckError;
use crate::inductive::NetworkPhases;
use crate::query::{Postcondition, state_only, validate_box};
use crate::solve::{Outcome, check, rational_model};
use std::fmt;
use trestle_core::Unknown;
use trestle_ir::expr::{Env, Expr};
use trestle_ir::num::display_rational;
use trestle_ir::sim::{self, initial_memory};
use trestle_ir::system::{DomainExit, Policy, VarKind};
use trestle_ir::{FBox, Pred, Rational, System};
use z3::Solver;
use z3::ast::{Bool, Int, Real};

mod integral;

/// The actions a stop query allows at a state.
#[derive(Clone, Copy, Debug)]
pub enum StopActions<'a> {
    /// Those a postcondition psi of the controllers on the box allows (an over-approximation: a
    /// stop found under it may need actions the networks never take).
    Post(&'a Postcondition),
    /// The networks' own, encoded exactly (piecewise-linear activations only), with the phases
    /// of their neurons on the box when known (`phases[c][k]`: network `k` of controller `c`, as
    /// [`crate::InductiveQuery::phases`]; the caller vouches for them: sound bounds over the box).
    Networks(&'a [Vec<Option<NetworkPhases>>]),
}

/// `p /\ Inv /\ actions => some legal step, none that stops`.
#[derive(Clone, Copy, Debug)]
pub struct StopQuery<'a> {
    pub region: &'a FBox,
    pub inv: &'a Pred,
    pub actions: StopActions<'a>,
}

/// A state where a run stops, replayed exactly: the state, the actions taken there, the inputs,
/// the branch at fault (`None`: no branch has a legal successor) and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Stop {
    pub state: Vec<Rational>,
    pub actions: Vec<Rational>,
    pub nondet: Vec<Rational>,
    pub branch: Option<usize>,
    pub why: String,
}

impl Stop {
    /// The stop with the system's names: `x = 3, a = 1/2: branch 'step' ... (why)`.
    pub fn describe(&self, sys: &System) -> String {
        let mut parts: Vec<String> =
            sys.state.iter().zip(&self.state).map(|(v, x)| format!("{} = {}", v.name, display_rational(x))).collect();
        parts.extend(
            sys.actions.iter().zip(&self.actions).map(|(a, x)| format!("{} = {}", a.name, display_rational(x))),
        );
        parts.extend(sys.nondet.iter().zip(&self.nondet).map(|(n, x)| format!("{} = {}", n.name, display_rational(x))));
        match self.branch {
            Some(b) => format!("at {}: branch '{}': {}", parts.join(", "), sys.step.branches[b].name, self.why),
            None => format!("at {}: {}", parts.join(", "), self.why),
        }
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |xs: &[Rational]| xs.iter().map(display_rational).collect::<Vec<_>>().join(", ");
        write!(f, "state ({}), actions ({}), inputs ({})", show(&self.state), show(&self.actions), show(&self.nondet))?;
        match self.branch {
            Some(b) => write!(f, ", branch {b}: {}", self.why),
            None => write!(f, ": {}", self.why),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum StopAnswer {
    /// No run stops at a state of the query.
    Free,
    /// One does, replayed exactly (under the query's actions).
    Stops(Stop),
    Unknown(Unknown),
}

/// Why a run stops at `state` when the controllers take `actions` and the inputs are `nondet`
/// (all exact), by the IR's own step: `None` when it does not. The state and the inputs must be
/// legal (checked by the caller); observations and selectors are evaluated as the step does.
pub fn stop_at(
    sys: &System,
    state: &[Rational],
    actions: &[Rational],
    nondet: &[Rational],
) -> Option<(Option<usize>, String)> {
    let observed = Env::new(state, &[], nondet);
    for c in &sys.controllers {
        for e in &c.inputs {
            if let Err(err) = e.eval(&observed) {
                return Some((None, format!("controller '{}' cannot read its observation ({err})", c.name)));
            }
        }
        if let Policy::Select { by, networks } = &c.policy {
            let v = &state[*by];
            let picks = v.is_integer()
                && *v >= Rational::from_integer(0.into())
                && *v < Rational::from_integer(networks.len().into());
            if !picks {
                return Some((
                    None,
                    format!(
                        "'{}' = {} selects no network of controller '{}'",
                        sys.state[*by].name,
                        display_rational(v),
                        c.name
                    ),
                ));
            }
        }
    }
    let enabled = match sim::enabled_branches(sys, state, actions, nondet) {
        Ok(e) => e,
        Err(err) => return Some((None, format!("a guard cannot be evaluated ({err})"))),
    };
    let mut legal = false;
    for &b in &enabled {
        let next = match sim::successor(sys, b, state, actions, nondet) {
            Ok(n) => n,
            Err(err) => return Some((Some(b), format!("its update cannot be evaluated ({err})"))),
        };
        let bad = match sys.domain_exit {
            DomainExit::Ignore => sys.state.iter().zip(&next).find(|(v, q)| !sim::fits_kind(v, q)).map(|(v, q)| {
                format!("'{}' would be {}, not a value of a {} variable", v.name, display_rational(q), v.kind.name())
            }),
            _ => sim::domain_violation(sys, &next).map(|e| e.to_string()),
        };
        match (bad, sys.domain_exit) {
            (None, _) => legal = true,
            (Some(_), DomainExit::Drop) => {}
            (Some(why), _) => return Some((Some(b), why)),
        }
    }
    if legal {
        return None;
    }
    Some((
        None,
        if enabled.is_empty() {
            "no branch is enabled (a deadlock)".into()
        } else {
            "every enabled branch's successor leaves the domains and is dropped (a deadlock)".into()
        },
    ))
}

impl StopQuery<'_> {
    pub fn validate(&self, sys: &System) -> Result<(), CheckError> {
        validate_box("state box p", self.region, sys.state.len())?;
        state_only(self.inv, "invariant", sys.state.len())?;
        if let StopActions::Post(p) = self.actions {
            p.validate(sys.state.len(), sys.actions.len())?;
        }
        Ok(())
    }
}

/// `x` is not one of `0 .. n` (a fresh integer states non-integrality, as in [`illegal`]).
fn not_an_index(x: &Real, n: usize) -> Bool {
    let k = Real::from_int(&Int::fresh_const("stop.floor"));
    or(vec![
        and(vec![x.gt(&k), x.lt(&k + num(&Rational::from_integer(1.into())))]),
        x.lt(num(&Rational::from_integer(0.into()))),
        x.ge(num(&Rational::from_integer(n.into()))),
    ])
}

/// A `lookup` index in `e` that is not an integer inside its table (one term per lookup, `out`).
fn lookups_undefined(scope: &Scope<'_>, e: &Expr, out: &mut Vec<Bool>) -> Result<(), CheckError> {
    let mut found = Vec::new();
    e.visit_exprs(&mut |x| {
        if let Expr::Lookup(i, items) = x {
            found.push(((**i).clone(), items.len()));
        }
    });
    for (i, n) in found {
        let idx = scope.expr(&i)?;
        out.push(not_an_index(&idx, n));
    }
    Ok(())
}

fn pred_lookups_undefined(scope: &Scope<'_>, p: &Pred, out: &mut Vec<Bool>) -> Result<(), CheckError> {
    let mut exprs = Vec::new();
    p.visit_exprs(&mut |e| exprs.push(e.clone()));
    exprs.iter().try_for_each(|e| lookups_undefined(scope, e, out))
}

/// `next` is no state: outside a domain (unless domains are ignored), or not of its variable's
/// kind. Non-integrality is stated with a fresh integer `k < n < k + 1` rather than `is_int`
/// (which Z3 decides by `to_int` and floor axioms, and gave up on for values near 2^53): the
/// term only ever occurs positively in the asserted stop condition, so the fresh constant is
/// existential, as wanted. It is left out where the update is an integer by its form
/// (`integral[i]`, [`integral`]): Z3 can spend its whole time limit on such terms too.
fn illegal(sys: &System, next: &[Real], integral: &[bool]) -> Bool {
    let mut c = Vec::new();
    for ((v, n), &integral) in sys.state.iter().zip(next).zip(integral) {
        if sys.domain_exit != DomainExit::Ignore {
            if let Some(l) = &v.domain.lo {
                c.push(n.lt(num(l)));
            }
            if let Some(h) = &v.domain.hi {
                c.push(n.gt(num(h)));
            }
        }
        if v.kind != VarKind::Real && !integral {
            let k = Real::from_int(&Int::fresh_const("stop.floor"));
            c.push(and(vec![n.gt(&k), n.lt(&k + num(&Rational::from_integer(1.into())))]));
        }
        if v.kind == VarKind::Bool {
            c.push(n.lt(num(&Rational::from_integer(0.into()))));
            c.push(n.gt(num(&Rational::from_integer(1.into()))));
        }
    }
    or(c)
}

/// The Bool term "the step from (state, action, nondet) may stop" (see the module doc).
fn stop_term(sys: &System, vars: &Vars, actions: &StopActions<'_>) -> Result<Bool, CheckError> {
    let integral = integral::integral_updates(sys, actions);
    let (state, action, nondet) = (Vars::reals(&vars.state), Vars::reals(&vars.action), Vars::reals(&vars.nondet));
    let scope = Scope { state: &state, action: &action, nondet: &nondet };
    let observed = Scope { state: &state, action: &[], nondet: &nondet };
    let mut stops = Vec::new();
    let mut undefined = Vec::new();
    for c in &sys.controllers {
        for e in &c.inputs {
            lookups_undefined(&observed, e, &mut undefined)?;
        }
        if let Policy::Select { by, networks } = &c.policy {
            let v = &state[*by];
            undefined.push(not_an_index(v, networks.len()));
        }
    }
    stops.push(or(undefined));
    // Per branch: it gives no successor (the run stops when every branch does).
    let mut dead = Vec::new();
    for (br, integral) in sys.step.branches.iter().zip(&integral) {
        let label = match br.label {
            Some((a, value)) => action[a].eq(num(&Rational::from_integer(value.into()))),
            None => Bool::from_bool(true),
        };
        let mut guard_undefined = Vec::new();
        let guard = match &br.guard {
            Some(g) => {
                pred_lookups_undefined(&scope, g, &mut guard_undefined)?;
                scope.pred(g)?
            }
            None => Bool::from_bool(true),
        };
        stops.push(and(vec![label.clone(), or(guard_undefined)]));
        let enabled = and(vec![label, guard]);
        let mut update_undefined = Vec::new();
        let mut next = Vec::new();
        for u in &br.updates {
            lookups_undefined(&scope, u, &mut update_undefined)?;
            next.push(scope.expr(u)?);
        }
        stops.push(and(vec![enabled.clone(), or(update_undefined)]));
        let bad = illegal(sys, &next, integral);
        if sys.domain_exit == DomainExit::Drop {
            // No successor from this branch: disabled, or its successor dropped.
            dead.push(or(vec![enabled.not(), bad]));
        } else {
            stops.push(and(vec![enabled.clone(), bad]));
            dead.push(enabled.not());
        }
    }
    stops.push(and(dead));
    Ok(or(stops))
}

/// Decides a stop query with Z3 (see the module doc).
pub(crate) fn check_stops(
    sys: &System,
    q: &StopQuery<'_>,
    cfg: &CheckerConfig,
    dumper: Option<&mut Dumper>,
) -> Result<StopAnswer, CheckError> {
    let vars = Vars::declare(sys, true);
    // Integrality tests need the mixed logic.
    let logic = match crate::encode::logic(sys, true, &[q.inv]) {
        Some("QF_LRA") | Some("QF_LIRA") => Some("QF_LIRA"),
        _ => None,
    };
    let solver: Solver = crate::solve::new_solver(cfg, logic);
    let (state, action) = (Vars::reals(&vars.state), Vars::reals(&vars.action));
    vars.assert_state_space(sys, &solver);
    solver.assert(in_box(&state, q.region));
    solver.assert(Scope { state: &state, action: &[], nondet: &[] }.pred(q.inv)?);
    vars.assert_nondet_domains(sys, &solver);
    match q.actions {
        StopActions::Post(post) => crate::bridge::assert_post(post, &state, &action, &solver),
        StopActions::Networks(phases) => {
            let phases_of = |c: usize, k: usize| phases.get(c).and_then(|p| p.get(k)).and_then(Option::as_ref);
            crate::monolithic::assert_controllers(sys, &vars, &phases_of, &solver)?
        }
    }
    solver.assert(stop_term(sys, &vars, &q.actions)?);
    let comment = format!(
        "trestle-smt stop query on system '{}': no run stops in p /\\ Inv\np = {:?} x {:?}\nunsat = valid",
        sys.name, q.region.lo, q.region.hi
    );
    Ok(match check(&solver, cfg, dumper, &comment)? {
        Outcome::Unsat => StopAnswer::Free,
        Outcome::Unknown(r) => StopAnswer::Unknown(r),
        Outcome::Sat(model) => {
            let values = match rational_model(&solver, cfg, model, &[&vars.nondet, &vars.state, &vars.action]) {
                Ok((v, _)) => v,
                Err(r) => return Ok(StopAnswer::Unknown(r)),
            };
            let mut it = values.into_iter();
            let (nondet, state, actions) =
                (it.next().unwrap_or_default(), it.next().unwrap_or_default(), it.next().unwrap_or_default());
            match replay_stop(sys, q, state, actions, nondet) {
                Ok(stop) => StopAnswer::Stops(stop),
                Err(why) => StopAnswer::Unknown(Unknown::ReplayFailed(why)),
            }
        }
    })
}

/// Re-checks a model of a stop query exactly: a state of the system in `p /\ Inv`, inputs in their
/// domains, actions allowed by the query (psi's exact bounds, or the networks' exact outputs),
/// and a stop there by the IR's step.
pub fn replay_stop(
    sys: &System,
    q: &StopQuery<'_>,
    state: Vec<Rational>,
    actions: Vec<Rational>,
    nondet: Vec<Rational>,
) -> Result<Stop, String> {
    sim::check_state(sys, &state).map_err(|e| e.to_string())?;
    sim::check_nondet(sys, &nondet).map_err(|e| e.to_string())?;
    for (i, x) in state.iter().enumerate() {
        if *x < trestle_ir::num::rational_from_f64(q.region.lo[i])
            || *x > trestle_ir::num::rational_from_f64(q.region.hi[i])
        {
            return Err(format!("state {i} = {} is outside the box", display_rational(x)));
        }
    }
    if !q.inv.eval_exact(&Env::new(&state, &[], &[])).map_err(|e| e.to_string())? {
        return Err("the state is outside the invariant".into());
    }
    match q.actions {
        StopActions::Post(post) => {
            for (j, a) in actions.iter().enumerate() {
                let (lo, hi) = post.exact_bounds(j, &state);
                if *a < lo || *a > hi {
                    return Err(format!("action {j} = {} violates the postcondition", display_rational(a)));
                }
            }
        }
        StopActions::Networks(_) => {
            // The controllers' exact actions (an observation or selector that fails is a stop
            // `stop_at` reports itself, with any actions).
            if let Ok(exact) = sim::controller_actions(sys, &state, &nondet, &mut initial_memory(sys))
                && exact != actions
            {
                return Err("the actions are not the networks' exact outputs".into());
            }
        }
    }
    match stop_at(sys, &state, &actions, &nondet) {
        Some((branch, why)) => Ok(Stop { state, actions, nondet, branch, why }),
        None => Err("the step from the model's state does not stop".into()),
    }
}
