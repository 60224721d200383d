//! One-step counterexamples and their exact replay.
//!
//! A [`Witness`] is what an inductiveness or bridge query refutes with: one transition (a state,
//! the controllers' actions, the environment's choice, the branch and the successor), or a single
//! state for an implication between state predicates. It is the one-step case of a [`Trace`]
//! ([`Witness::to_trace`]) and is replayed by the same semantics, `trestle_ir::sim`. The checks
//! here need nothing but the IR, so every engine (Z3, MILP, bound propagation) re-checks its
//! witnesses with them; a check that needs an engine's own data (a postcondition) builds on
//! [`check_state`], [`check_action_kinds`] and [`check_transition`].

use crate::trace::{Trace, TraceStep};
use num_traits::Zero;
use std::fmt;
use trestle_ir::Pred;
use trestle_ir::expr::Env;
use trestle_ir::network::Layer;
use trestle_ir::num::{Rational, display_rational, is_integer, rational_from_i64};
use trestle_ir::sim;
use trestle_ir::system::{ActionKind, ControllerOutput, DomainExit, Policy, System};

/// A counterexample in exact rationals.
///
/// For a bridge or inductiveness query it is one transition: `state`, the `actions` (in
/// `System::actions` order), the non-deterministic inputs (`System::nondet` order), the branch
/// taken and the successor `next` (computed exactly from the branch's updates). For an
/// implication between state predicates only `state` is meaningful; `actions`, `nondet` and
/// `next` are empty and `branch` is 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Witness {
    pub state: Vec<Rational>,
    pub actions: Vec<Rational>,
    pub nondet: Vec<Rational>,
    pub branch: usize,
    pub next: Vec<Rational>,
}

impl Witness {
    /// A witness of an implication between state predicates: a single state.
    pub fn state_only(state: Vec<Rational>) -> Witness {
        Witness { state, actions: Vec::new(), nondet: Vec::new(), branch: 0, next: Vec::new() }
    }

    /// Whether this is a single state rather than a transition.
    pub fn is_state_only(&self) -> bool {
        self.next.is_empty()
    }

    /// The same counterexample as a trace: no steps for a single state, one step for a
    /// transition. Hidden states are the zero memory every run starts from (one-step queries are
    /// only asked of controllers without memory).
    pub fn to_trace(&self, sys: &System) -> Trace {
        let memory = sim::initial_memory::<Rational>(sys);
        if self.is_state_only() {
            return Trace::state(sys, self.state.clone());
        }
        Trace {
            states: vec![self.state.clone(), self.next.clone()],
            hidden: vec![memory.clone(), memory],
            steps: vec![TraceStep { nondet: self.nondet.clone(), actions: self.actions.clone(), branch: self.branch }],
            loop_back: None,
        }
    }
}

impl fmt::Display for Witness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |xs: &[Rational]| xs.iter().map(display_rational).collect::<Vec<_>>().join(", ");
        write!(f, "state [{}]", list(&self.state))?;
        if !self.next.is_empty() {
            write!(
                f,
                ", actions [{}], nondet [{}], branch {}, next [{}]",
                list(&self.actions),
                list(&self.nondet),
                self.branch,
                list(&self.next)
            )?;
        }
        Ok(())
    }
}

/// Why a witness was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct WitnessError(pub String);

fn fail<T>(msg: impl Into<String>) -> Result<T, WitnessError> {
    Err(WitnessError(msg.into()))
}

/// Whether `p` holds at `state`, exactly; `what` names `p` in the error.
pub fn holds(p: &Pred, state: &[Rational], what: &str) -> Result<bool, WitnessError> {
    p.eval_exact(&Env::new(state, &[], &[])).map_err(|e| WitnessError(format!("{what}: {e}")))
}

/// The state is a state of the system: its dimensions, kinds (ints integral, bools 0/1) and
/// domains, by the IR's one definition ([`sim::check_state`]).
pub fn check_state(sys: &System, state: &[Rational]) -> Result<(), WitnessError> {
    sim::check_state(sys, state).map_err(|e| WitnessError(e.to_string()))
}

/// One value per action, argmax actions integral indices of their labels.
pub fn check_action_kinds(sys: &System, actions: &[Rational]) -> Result<(), WitnessError> {
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
pub fn check_transition(sys: &System, w: &Witness) -> Result<(), WitnessError> {
    if w.nondet.len() != sys.nondet.len() {
        return fail(format!("{} input values for {} inputs", w.nondet.len(), sys.nondet.len()));
    }
    sim::check_nondet(sys, &w.nondet).map_err(|e| WitnessError(e.to_string()))?;
    if w.branch >= sys.step.branches.len() {
        return fail(format!("branch {} does not exist", w.branch));
    }
    let enabled =
        sim::enabled_branches(sys, &w.state, &w.actions, &w.nondet).map_err(|e| WitnessError(e.to_string()))?;
    if !enabled.contains(&w.branch) {
        return fail(format!("branch '{}' is not enabled", sys.step.branches[w.branch].name));
    }
    let next =
        sim::successor(sys, w.branch, &w.state, &w.actions, &w.nondet).map_err(|e| WitnessError(e.to_string()))?;
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

/// Re-checks an implication witness: the state satisfies `premise` and violates `conclusion`.
pub fn replay_implication(sys: &System, premise: &Pred, conclusion: &Pred, w: &Witness) -> Result<(), WitnessError> {
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
/// network run exactly ([`trestle_ir::Network::forward_exact`]) yields the witness's actions (an
/// argmax output by the simulator's rule, the lowest index among ties), the transition is real,
/// and the successor violates `inv`.
pub fn replay_inductive(sys: &System, inv: &Pred, w: &Witness) -> Result<(), WitnessError> {
    replay_between(sys, (inv, "invariant"), (inv, "invariant"), w)
}

/// [`replay_inductive`] for a transition between two sets: the state satisfies `from`, the
/// successor violates `to`.
pub fn replay_transition(sys: &System, from: &Pred, to: &Pred, w: &Witness) -> Result<(), WitnessError> {
    replay_between(sys, (from, "start set"), (to, "target set"), w)
}

fn replay_between(
    sys: &System,
    (from, start): (&Pred, &str),
    (to, end): (&Pred, &str),
    w: &Witness,
) -> Result<(), WitnessError> {
    check_state(sys, &w.state)?;
    if !holds(from, &w.state, start)? {
        return fail(format!("the state violates the {start}"));
    }
    check_action_kinds(sys, &w.actions)?;
    check_controllers(sys, w)?;
    check_transition(sys, w)?;
    if holds(to, &w.next, &format!("{end} at the successor"))? {
        return fail(format!("the successor satisfies the {end}"));
    }
    Ok(())
}

fn check_controllers(sys: &System, w: &Witness) -> Result<(), WitnessError> {
    for c in &sys.controllers {
        let env = Env::new(&w.state[..], &[], &w.nondet[..]);
        let input = c
            .inputs
            .iter()
            .map(|e| e.eval_exact(&env))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| WitnessError(format!("controller '{}' observation: {e}", c.name)))?;
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
        let out = network.forward_exact(&input, &mut []).map_err(|e| WitnessError(e.to_string()))?;
        match &c.output {
            ControllerOutput::Actions(ids) => {
                for (k, &a) in ids.iter().enumerate() {
                    if w.actions[a] != out[k] {
                        return fail(format!("action {} differs from the network output", sys.actions[a].name));
                    }
                }
            }
            ControllerOutput::Argmax(a) => {
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
