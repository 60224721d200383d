//! Exact replay of counterexamples. Every `Invalid` answer's witness passes these checks, in
//! rational arithmetic, against the IR's own semantics ([`trestle_ir::sim`]) before it is
//! reported; they are public so callers (and tests) can re-check witnesses independently.

use crate::answer::Witness;
use crate::query::{BridgeQuery, Target};
use num_traits::Zero;
use trestle_ir::expr::Env;
use trestle_ir::network::Layer;
use trestle_ir::num::{display_rational, is_integer, rational_from_f64, rational_from_i64};
use trestle_ir::sim;
use trestle_ir::system::{ActionKind, ControllerOutput, DomainExit, Policy, System};
use trestle_ir::{FBox, Pred, Rational};

/// Why a witness was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ReplayError(pub String);

fn fail<T>(msg: impl Into<String>) -> Result<T, ReplayError> {
    Err(ReplayError(msg.into()))
}

fn holds(p: &Pred, state: &[Rational], what: &str) -> Result<bool, ReplayError> {
    p.eval_exact(&Env::new(state, &[], &[])).map_err(|e| ReplayError(format!("{what}: {e}")))
}

/// The witness state is a state of the system: its dimensions, kinds (ints integral, bools 0/1)
/// and domains, by the IR's one definition ([`sim::check_state`]).
fn check_state(sys: &System, state: &[Rational]) -> Result<(), ReplayError> {
    sim::check_state(sys, state).map_err(|e| ReplayError(e.to_string()))
}

fn check_in_box(b: &FBox, xs: &[Rational], what: &str) -> Result<(), ReplayError> {
    for (i, x) in xs.iter().enumerate() {
        if *x < rational_from_f64(b.lo[i]) || *x > rational_from_f64(b.hi[i]) {
            return fail(format!("{what} {i} = {} is outside [{}, {}]", display_rational(x), b.lo[i], b.hi[i]));
        }
    }
    Ok(())
}

fn check_action_kinds(sys: &System, actions: &[Rational]) -> Result<(), ReplayError> {
    if actions.len() != sys.actions.len() {
        return fail(format!("{} action values for {} actions", actions.len(), sys.actions.len()));
    }
    for (a, x) in sys.actions.iter().zip(actions) {
        if let ActionKind::Index { labels } = &a.kind
            && (!is_integer(x) || *x < Rational::zero() || *x >= rational_from_i64(labels.len() as i64))
        {
            return fail(format!("argmax action {} = {} is not an index", a.name, display_rational(x)));
        }
    }
    Ok(())
}

/// The transition part: inputs in their domains, the branch enabled, `next` its exact update, and
/// (with `DomainExit::Drop`) `next` inside the domains.
fn check_transition(sys: &System, w: &Witness) -> Result<(), ReplayError> {
    if w.nondet.len() != sys.nondet.len() {
        return fail(format!("{} input values for {} inputs", w.nondet.len(), sys.nondet.len()));
    }
    sim::check_nondet(sys, &w.nondet).map_err(|e| ReplayError(e.to_string()))?;
    if w.branch >= sys.step.branches.len() {
        return fail(format!("branch {} does not exist", w.branch));
    }
    let enabled =
        sim::enabled_branches(sys, &w.state, &w.actions, &w.nondet).map_err(|e| ReplayError(e.to_string()))?;
    if !enabled.contains(&w.branch) {
        return fail(format!("branch '{}' is not enabled", sys.step.branches[w.branch].name));
    }
    let next =
        sim::successor(sys, w.branch, &w.state, &w.actions, &w.nondet).map_err(|e| ReplayError(e.to_string()))?;
    if next != w.next {
        return fail("next differs from the branch's exact update");
    }
    if sys.domain_exit == DomainExit::Drop
        && let Some(e) = sim::domain_violation(sys, &next)
    {
        return fail(format!("the successor is dropped ({e})"));
    }
    Ok(())
}

/// Re-checks a bridge-query witness: state in `p` (and the extra predicate), actions allowed by
/// `psi` at that state, a real transition, and a successor that violates the target (`StaysIn`)
/// or satisfies it (`Leaves`).
pub fn replay_bridge(sys: &System, q: &BridgeQuery<'_>, w: &Witness) -> Result<(), ReplayError> {
    check_state(sys, &w.state)?;
    check_in_box(q.region, &w.state, "state")?;
    if let Some(extra) = q.extra
        && !holds(extra, &w.state, "extra predicate")?
    {
        return fail("the state violates the extra predicate");
    }
    check_action_kinds(sys, &w.actions)?;
    for (j, a) in w.actions.iter().enumerate() {
        let (lo, hi) = q.post.exact_bounds(j, &w.state);
        if *a < lo || *a > hi {
            return fail(format!("action {j} = {} violates the postcondition", display_rational(a)));
        }
    }
    check_transition(sys, w)?;
    let inside = holds(q.target.pred(), &w.next, "target")?;
    match (q.target, inside) {
        (Target::StaysIn(_), false) | (Target::Leaves(_), true) => Ok(()),
        (Target::StaysIn(_), true) => fail("the successor satisfies the target"),
        (Target::Leaves(_), false) => fail("the successor does not satisfy the target"),
    }
}

/// Re-checks an implication witness: the state satisfies `premise` and violates `conclusion`.
pub fn replay_implication(sys: &System, premise: &Pred, conclusion: &Pred, w: &Witness) -> Result<(), ReplayError> {
    check_state(sys, &w.state)?;
    if !holds(premise, &w.state, "premise")? {
        return fail("the state violates the premise");
    }
    if holds(conclusion, &w.state, "conclusion")? {
        return fail("the state satisfies the conclusion");
    }
    Ok(())
}

/// Re-checks a monolithic-inductiveness witness: the state satisfies `inv`, every controller's
/// network run exactly ([`trestle_ir::Network::forward_exact`]) yields the witness's actions (for an
/// argmax output: the chosen index is *a* maximal output — ties may pick any of them), the
/// transition is real, and the successor violates `inv`.
pub fn replay_inductive(sys: &System, inv: &Pred, w: &Witness) -> Result<(), ReplayError> {
    check_state(sys, &w.state)?;
    if !holds(inv, &w.state, "invariant")? {
        return fail("the state violates the invariant");
    }
    check_action_kinds(sys, &w.actions)?;
    check_controllers(sys, w)?;
    check_transition(sys, w)?;
    if holds(inv, &w.next, "invariant at the successor")? {
        return fail("the successor satisfies the invariant");
    }
    Ok(())
}

fn check_controllers(sys: &System, w: &Witness) -> Result<(), ReplayError> {
    for c in &sys.controllers {
        let env = Env::new(&w.state[..], &[], &w.nondet[..]);
        let input = c
            .inputs
            .iter()
            .map(|e| e.eval_exact(&env))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ReplayError(format!("controller '{}' observation: {e}", c.name)))?;
        let net = match &c.policy {
            Policy::Network(n) => *n,
            Policy::Select { by, networks } => {
                let v = &w.state[*by];
                let k = (is_integer(v) && *v >= Rational::zero())
                    .then(|| num_traits::ToPrimitive::to_usize(&v.to_integer()))
                    .flatten();
                match k.and_then(|k| networks.get(k)) {
                    Some(n) => *n,
                    None => return fail(format!("controller '{}': selector value picks no network", c.name)),
                }
            }
        };
        let network = &sys.networks[net].network;
        if network.layers.iter().any(|l| matches!(l, Layer::Recurrent(_))) {
            return fail("recurrent networks are not supported");
        }
        let out = network.forward_exact(&input, &mut []).map_err(|e| ReplayError(e.to_string()))?;
        match &c.output {
            ControllerOutput::Actions(ids) => {
                for (k, &a) in ids.iter().enumerate() {
                    if w.actions[a] != out[k] {
                        return fail(format!("action {} differs from the network output", sys.actions[a].name));
                    }
                }
            }
            ControllerOutput::Argmax(a) => {
                // The simulator's rule, the one every engine encodes: lowest index among ties.
                let rule = sim::argmax(&out);
                if w.actions[*a] != Rational::from_integer(rule.into()) {
                    return fail(format!(
                        "argmax action {} is {}, the network picks {rule} (largest output, lowest index among ties)",
                        sys.actions[*a].name,
                        display_rational(&w.actions[*a])
                    ));
                }
            }
        }
    }
    Ok(())
}
