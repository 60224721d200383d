//! Execution semantics of one step — the single definition that simulation, counterexample replay
//! and every engine's encoding must agree with.
//!
//! Order within a step: the environment fixes the non-deterministic inputs; every controller reads
//! its observation (state and those inputs), runs its network (the one its selector picks) and sets
//! its actions (argmax ties go to the lowest index); the environment then takes one enabled branch
//! (guard true, label matching) and computes the successor; the successor is checked against the
//! variable kinds and domains (see [`DomainExit`]). The state a step starts from is checked too
//! ([`check_state`]): a value of an `int` variable that is not an integer is no state at all, so
//! no run, witness or trace can start there.
//!
//! The logic is generic over [`Scalar`], instantiated with f64 (fast simulation) and exact
//! rationals (replay), so the two cannot drift apart.

use crate::arith::LayerArith;
use crate::expr::{Env, EvalError, Expr, VarRef};
use crate::network::{Network, NetworkError};
use crate::num::{Rational, display_rational, is_integer, rational_from_f64, rational_from_i64};
use crate::pred::Pred;
use crate::system::{ActionKind, ControllerOutput, DomainExit, NondetDomain, Policy, StateVar, System, VarKind};
use num_traits::{Signed, ToPrimitive, Zero};
use std::fmt::Debug;

/// A number domain the step can be executed in: exact rationals (verdicts, replays), f64
/// (simulation) or dual numbers (gradients). Expressions, predicates and networks are evaluated
/// by the IR's one generic evaluator over the domain's [`LayerArith`].
pub trait Scalar: LayerArith + PartialOrd + Debug {
    /// The exact rational the value stands for: what kind, domain, selector and label checks
    /// compare.
    fn to_rational(&self) -> Rational;
    /// The value of an expression (by [`Expr::eval`]).
    fn eval(e: &Expr, env: &Env<'_, Self>) -> Result<Self, EvalError> {
        e.eval(env)
    }
    /// The truth of a predicate; point domains always decide it (by [`Pred::eval`]).
    fn holds(p: &Pred, env: &Env<'_, Self>) -> Result<bool, EvalError> {
        p.eval(env).map(crate::pred::decided)
    }
    /// A network's forward pass, updating `hidden` for recurrent layers (by [`Network::run`]).
    fn forward(net: &Network, input: &[Self], hidden: &mut [Vec<Self>]) -> Result<Vec<Self>, NetworkError> {
        net.run(input, hidden)
    }
    /// Zero hidden state for `net`: one vector per recurrent layer.
    fn zero_hidden(net: &Network) -> Vec<Vec<Self>> {
        net.hidden_dims().into_iter().map(|n| vec![Self::constant(&Rational::zero()); n]).collect()
    }
    /// An exact constant in this domain.
    fn from_rational(q: &Rational) -> Self {
        Self::constant(q)
    }
    /// The value of an argmax action that picked output `i`.
    fn from_index(i: usize) -> Self {
        Self::constant(&rational_from_i64(i as i64))
    }
}

impl Scalar for f64 {
    fn to_rational(&self) -> Rational {
        crate::num::try_rational_from_f64(*self).unwrap_or_else(|| rational_from_i64(i64::MAX))
    }
}

impl Scalar for Rational {
    fn to_rational(&self) -> Rational {
        self.clone()
    }
}

/// Why a step could not be taken. Some are the model's errors met by a run ([`SimError::Deadlock`],
/// [`SimError::DomainExit`], an evaluation error); the others are inputs that are not what the
/// system declares (a wrong length, a value outside a domain, a disabled branch asked for).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// An expression or predicate had no value (see [`EvalError`]).
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// A controller's network failed (see [`NetworkError`]).
    #[error(transparent)]
    Network(#[from] NetworkError),
    /// A selecting controller's selector holds a value with no network.
    #[error("selector '{var}' has value {value}, which picks no network")]
    Selector {
        /// The selector variable's name.
        var: String,
        /// Its value.
        value: String,
    },
    /// The branch asked for is not enabled at this state.
    #[error("branch '{name}' is not enabled here")]
    BranchDisabled {
        /// The branch's name.
        name: String,
    },
    /// No branch is enabled (after dropping successors outside the domains under
    /// [`DomainExit::Drop`]).
    #[error("no branch of the step is enabled: the run deadlocks")]
    Deadlock,
    /// A successor is not of its variable's kind or outside its domain (under
    /// [`DomainExit::Error`]).
    #[error("successor leaves the domain: {var} = {value} (domain {domain})")]
    DomainExit {
        /// The first variable at fault.
        var: String,
        /// Its value in the successor.
        value: String,
        /// Its kind and domain (`int [0, 3]`).
        domain: String,
    },
    /// A given non-deterministic input lies outside its domain.
    #[error("non-deterministic input '{var}' = {value} is outside its domain")]
    NondetOutOfDomain {
        /// The input's name.
        var: String,
        /// The value given.
        value: String,
    },
    /// A state vector of the wrong length.
    #[error("state has {found} values, the system has {expected} state variables")]
    StateDim {
        /// Its length.
        found: usize,
        /// The number of state variables.
        expected: usize,
    },
    /// A vector of non-deterministic inputs of the wrong length.
    #[error("{found} non-deterministic input values for {expected} inputs")]
    NondetDim {
        /// Its length.
        found: usize,
        /// The number of non-deterministic inputs.
        expected: usize,
    },
    /// The state a step starts from is not a state ([`check_state`]).
    #[error("{var} = {value} is not a state: {var} is {domain}")]
    NotAState {
        /// The first variable at fault.
        var: String,
        /// Its value.
        value: String,
        /// Its kind and domain (`int [0, 3]`).
        domain: String,
    },
}

impl SimError {
    /// The exact (rational) evaluation met a value with no rational form (an elementary function
    /// of the step, a tanh or sigmoid layer): not a stop of the run, only a limit of exact
    /// arithmetic (the run goes on in a validated enclosure, [`crate::sim`]'s callers decide).
    pub fn is_irrational(&self) -> bool {
        matches!(
            self,
            SimError::Eval(EvalError::Irrational { .. }) | SimError::Network(NetworkError::NoExactValue { .. })
        )
    }
}

/// Hidden states of the recurrent controllers: `[controller][recurrent layer][neuron]`.
pub type Memory<T> = Vec<Vec<Vec<T>>>;

/// The hidden states every controller starts a run with: zero for a recurrent network, empty
/// otherwise (and for a selecting controller, whose networks are never recurrent).
pub fn initial_memory<T: Scalar>(sys: &System) -> Memory<T> {
    sys.controllers
        .iter()
        .map(|c| match &c.policy {
            Policy::Network(n) => T::zero_hidden(&sys.networks[*n].network),
            Policy::Select { .. } => Vec::new(),
        })
        .collect()
}

/// One transition, with everything needed to replay it.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition<T> {
    /// The state the step starts from.
    pub state: Vec<T>,
    /// The non-deterministic inputs of the step.
    pub nondet: Vec<T>,
    /// The actions the controllers set, in `System::actions` order.
    pub actions: Vec<T>,
    /// The branch taken (an index into `System::step.branches`).
    pub branch: usize,
    /// The successor state.
    pub next: Vec<T>,
}

/// Index of the largest value, lowest index on ties.
pub fn argmax<T: PartialOrd>(xs: &[T]) -> usize {
    let mut best = 0;
    for (i, x) in xs.iter().enumerate().skip(1) {
        if *x > xs[best] {
            best = i;
        }
    }
    best
}

/// Runs every controller: returns the action vector (in `System::actions` order).
pub fn controller_actions<T: Scalar>(
    sys: &System,
    state: &[T],
    nondet: &[T],
    memory: &mut Memory<T>,
) -> Result<Vec<T>, SimError> {
    let mut actions: Vec<Option<T>> = vec![None; sys.actions.len()];
    for (ci, c) in sys.controllers.iter().enumerate() {
        let env = Env::new(state, &[], nondet);
        let input = c.inputs.iter().map(|e| T::eval(e, &env)).collect::<Result<Vec<_>, _>>()?;
        let net = match &c.policy {
            Policy::Network(n) => *n,
            Policy::Select { by, networks } => {
                let value = state[*by].to_rational();
                let pick = is_integer(&value)
                    .then(|| value.to_integer().to_usize())
                    .flatten()
                    .and_then(|k| networks.get(k).copied());
                pick.ok_or_else(|| SimError::Selector {
                    var: sys.state[*by].name.clone(),
                    value: display_rational(&value),
                })?
            }
        };
        let network = &sys.networks[net].network;
        let out = if network.is_recurrent() {
            T::forward(network, &input, &mut memory[ci])?
        } else {
            T::forward(network, &input, &mut [])?
        };
        match &c.output {
            ControllerOutput::Actions(ids) => {
                for (k, &a) in ids.iter().enumerate() {
                    actions[a] = Some(out[k].clone());
                }
            }
            ControllerOutput::Argmax(a) => actions[*a] = Some(T::from_index(argmax(&out))),
        }
    }
    Ok(actions.into_iter().map(|a| a.expect("every action is set by its controller (validated)")).collect())
}

/// The branches enabled at (state, actions, nondet), in declaration order.
pub fn enabled_branches<T: Scalar>(
    sys: &System,
    state: &[T],
    actions: &[T],
    nondet: &[T],
) -> Result<Vec<usize>, SimError> {
    let env = Env::new(state, actions, nondet);
    let mut out = Vec::new();
    for (i, b) in sys.step.branches.iter().enumerate() {
        if let Some((a, value)) = b.label
            && actions[a].to_rational() != rational_from_i64(value as i64)
        {
            continue;
        }
        if let Some(g) = &b.guard
            && !T::holds(g, &env)?
        {
            continue;
        }
        out.push(i);
    }
    Ok(out)
}

/// The successor under one branch (not checked against domains).
pub fn successor<T: Scalar>(
    sys: &System,
    branch: usize,
    state: &[T],
    actions: &[T],
    nondet: &[T],
) -> Result<Vec<T>, SimError> {
    let env = Env::new(state, actions, nondet);
    Ok(sys.step.branches[branch].updates.iter().map(|e| T::eval(e, &env)).collect::<Result<Vec<_>, _>>()?)
}

/// Whether `q` is a value of the variable's kind (ints integral, bools 0 or 1).
pub fn fits_kind(v: &StateVar, q: &Rational) -> bool {
    match v.kind {
        VarKind::Real => true,
        VarKind::Int => is_integer(q),
        VarKind::Bool => *q == rational_from_i64(0) || *q == rational_from_i64(1),
    }
}

fn describe(v: &StateVar) -> String {
    format!("{} {}", v.kind.name(), v.domain.describe())
}

/// First violation of a variable's kind or domain in a successor.
pub fn domain_violation<T: Scalar>(sys: &System, next: &[T]) -> Option<SimError> {
    for (v, x) in sys.state.iter().zip(next) {
        let q = x.to_rational();
        if !fits_kind(v, &q) || !v.domain.contains(&q) {
            return Some(SimError::DomainExit {
                var: v.name.clone(),
                value: display_rational(&q),
                domain: describe(v),
            });
        }
    }
    None
}

/// Whether `state` is a state of the system: one value per variable, each of its variable's kind
/// (ints integral, bools 0 or 1) and, unless the system ignores domains
/// ([`DomainExit::Ignore`]: domains are then hints, and runs may leave them), inside its domain.
/// Every step starts by checking this, so every run, witness and trace satisfies it.
pub fn check_state<T: Scalar>(sys: &System, state: &[T]) -> Result<(), SimError> {
    if state.len() != sys.state.len() {
        return Err(SimError::StateDim { found: state.len(), expected: sys.state.len() });
    }
    for (v, x) in sys.state.iter().zip(state) {
        let q = x.to_rational();
        let in_domain = sys.domain_exit == DomainExit::Ignore || v.domain.contains(&q);
        if !fits_kind(v, &q) || !in_domain {
            return Err(SimError::NotAState { var: v.name.clone(), value: display_rational(&q), domain: describe(v) });
        }
    }
    Ok(())
}

/// Whether a non-deterministic choice lies in the declared domains (exactly).
pub fn check_nondet<T: Scalar>(sys: &System, nondet: &[T]) -> Result<(), SimError> {
    if nondet.len() != sys.nondet.len() {
        return Err(SimError::NondetDim { found: nondet.len(), expected: sys.nondet.len() });
    }
    for (v, x) in sys.nondet.iter().zip(nondet) {
        let q = x.to_rational();
        let ok = match &v.domain {
            NondetDomain::Interval(l, h) => &q >= l && &q <= h,
            NondetDomain::Set(s) => s.contains(&q),
        };
        if !ok {
            return Err(SimError::NondetOutOfDomain { var: v.name.clone(), value: display_rational(&q) });
        }
    }
    Ok(())
}

/// One full step with the given non-deterministic inputs and branch. A successor outside the
/// domains is an error unless the system says such successors are dropped (then the branch counts
/// as disabled) or ignored.
pub fn step<T: Scalar>(
    sys: &System,
    state: &[T],
    memory: &mut Memory<T>,
    nondet: &[T],
    branch: usize,
) -> Result<Transition<T>, SimError> {
    step_choosing(sys, state, memory, nondet, |enabled| {
        enabled
            .contains(&branch)
            .then_some(branch)
            .ok_or_else(|| SimError::BranchDisabled { name: sys.step.branches[branch].name.clone() })
    })
}

/// Every transition from one state under fixed non-deterministic inputs: the controllers run once,
/// then each enabled branch gives a successor.
#[derive(Clone, Debug, PartialEq)]
pub struct Successors<T> {
    /// The actions the controllers set at this state.
    pub actions: Vec<T>,
    /// Enabled branches (declaration order) and their successors; with [`DomainExit::Drop`] the
    /// successors outside the domains are not here (those branches count as disabled).
    pub next: Vec<(usize, Vec<T>)>,
    /// With [`DomainExit::Error`]: enabled branches whose successor leaves the kinds or domains (a
    /// run taking one ends in that error). Empty otherwise.
    pub exits: Vec<(usize, Vec<T>, SimError)>,
}

/// All transitions from `state` (checked to be a state, [`check_state`]) under the inputs
/// `nondet` (checked against their domains). `memory` is advanced by the controllers.
pub fn successors<T: Scalar>(
    sys: &System,
    state: &[T],
    memory: &mut Memory<T>,
    nondet: &[T],
) -> Result<Successors<T>, SimError> {
    check_state(sys, state)?;
    check_nondet(sys, nondet)?;
    let actions = controller_actions(sys, state, nondet, memory)?;
    branch_successors(sys, state, actions, nondet)
}

/// Whether some controller's observation reads a non-deterministic input.
pub fn observes_nondet(sys: &System) -> bool {
    sys.controllers.iter().any(|c| c.inputs.iter().any(|e| e.mentions(|v| matches!(v, VarRef::Nondet(_)))))
}

/// [`successors`] at one state under many choices of the inputs, each from the same memory. The
/// state is checked once; the controllers run once when no observation reads an input (their
/// actions and memory are then the same under every choice).
pub struct StepsFrom<'a, T> {
    sys: &'a System,
    state: &'a [T],
    memory: &'a Memory<T>,
    observed: bool,
    shared: Option<(Vec<T>, Memory<T>)>,
}

impl<'a, T: Scalar> StepsFrom<'a, T> {
    /// The transitions from `state` with the controllers starting from `memory`; fails when `state`
    /// is not a state of the system ([`check_state`]).
    pub fn new(sys: &'a System, state: &'a [T], memory: &'a Memory<T>) -> Result<StepsFrom<'a, T>, SimError> {
        check_state(sys, state)?;
        Ok(StepsFrom { sys, state, memory, observed: observes_nondet(sys), shared: None })
    }

    /// The transitions under `nondet` (checked against the domains) and the memory after them.
    pub fn under(&mut self, nondet: &[T]) -> Result<(Successors<T>, Memory<T>), SimError> {
        check_nondet(self.sys, nondet)?;
        let (actions, after) = match &self.shared {
            Some(s) if !self.observed => s.clone(),
            _ => {
                let mut after = self.memory.clone();
                let actions = controller_actions(self.sys, self.state, nondet, &mut after)?;
                self.shared = Some((actions.clone(), after.clone()));
                (actions, after)
            }
        };
        Ok((branch_successors(self.sys, self.state, actions, nondet)?, after))
    }
}

/// The transitions from `state` once the controllers have set `actions`: each enabled branch and
/// its successor, sorted by what the system does with successors outside the domains.
fn branch_successors<T: Scalar>(
    sys: &System,
    state: &[T],
    actions: Vec<T>,
    nondet: &[T],
) -> Result<Successors<T>, SimError> {
    let mut out = Successors { actions, next: Vec::new(), exits: Vec::new() };
    for b in enabled_branches(sys, state, &out.actions, nondet)? {
        let next = successor(sys, b, state, &out.actions, nondet)?;
        match (sys.domain_exit, domain_violation(sys, &next)) {
            (DomainExit::Drop, Some(_)) => {}
            (DomainExit::Error, Some(e)) => out.exits.push((b, next, e)),
            _ => out.next.push((b, next)),
        }
    }
    Ok(out)
}

/// One full step where the branch is picked by `choose` among the enabled ones (in declaration
/// order; successors dropped by `DomainExit::Drop` are not offered). A successor of any enabled
/// branch outside the domains is an error under `DomainExit::Error`.
pub fn step_choosing<T: Scalar>(
    sys: &System,
    state: &[T],
    memory: &mut Memory<T>,
    nondet: &[T],
    choose: impl FnOnce(&[usize]) -> Result<usize, SimError>,
) -> Result<Transition<T>, SimError> {
    let Successors { actions, mut next, exits } = successors(sys, state, memory, nondet)?;
    if let Some((_, _, e)) = exits.into_iter().next() {
        return Err(e);
    }
    if next.is_empty() {
        return Err(SimError::Deadlock);
    }
    let enabled: Vec<usize> = next.iter().map(|(b, _)| *b).collect();
    let branch = choose(&enabled)?;
    let k = enabled
        .iter()
        .position(|&b| b == branch)
        .ok_or(SimError::BranchDisabled { name: sys.step.branches[branch].name.clone() })?;
    let (_, next) = next.swap_remove(k);
    Ok(Transition { state: state.to_vec(), nondet: nondet.to_vec(), actions, branch, next })
}

/// Which labels an index action has, for printing.
pub fn action_label(sys: &System, action: usize, value: &Rational) -> Option<String> {
    match &sys.actions[action].kind {
        ActionKind::Index { labels } => value.to_usize().and_then(|k| labels.get(k).cloned()),
        ActionKind::Real => None,
    }
}

/// Exact rational copy of an f64 vector (for replaying a float-found witness exactly).
pub fn to_exact(xs: &[f64]) -> Vec<Rational> {
    xs.iter().map(|&x| rational_from_f64(x)).collect()
}

/// Sign helper used by engines when comparing replayed values.
pub fn is_negative(q: &Rational) -> bool {
    q.is_negative()
}
