//! Validated replay: a counterexample through values that have no exact rational form.
//!
//! `sin`, `exp`, `tanh` of a rational are irrational, so a run through them cannot be replayed in
//! exact rationals ([`Trace::replay`]). A validated run is instead: a start state given exactly
//! (rationals, every variable of its kind and inside its domain), the environment's choices given
//! exactly (inputs and branches), and every value after that enclosed in high-precision interval
//! arithmetic ([`Enclosed`]: exact while the values stay rational, MPFR enclosures at
//! [`PRECISIONS`] bits past an elementary function). A claim "the last state violates P" is
//! established only when every decision on the way is decided by the enclosures (guards and
//! labels, argmax winners, network selectors, domains and kinds of every successor) and P is false
//! on the whole enclosure of the last state, i.e. the enclosure lies strictly on the wrong side of
//! P's boundary. A decision that straddles is retried with more precision; past the last
//! precision the claim is [`NotValidated::Undecided`], never a counterexample.
//!
//! A system whose expressions and networks are all rational-valued (no elementary function, no
//! activation without rational values) keeps the exact path: [`Trace::simulate`], then the claim
//! decided exactly ([`Validation::Exact`]).
//!
//! The step here follows `trestle_ir::sim::step` decision by decision (check the state, check the
//! inputs, run the controllers, take the enabled branch, check every enabled branch's successor
//! against the domains as the system's `on_domain_exit` says); the tests compare both on rational
//! systems so they cannot drift apart.

use crate::trace::{ReplayError, Trace, check_start};
use trestle_ir::Arith;
use trestle_ir::enclosed::{Enclosed, activation_is_rational, integrality};
use trestle_ir::expr::{Env, VarRef};
use trestle_ir::num::{Rational, display_rational};
use trestle_ir::pred::{CmpOp, Pred};
use trestle_ir::sim::{self, SimError};
use trestle_ir::system::{ControllerOutput, DomainExit, Policy, StateVar, System, VarKind};

/// The precisions (bits) a validated replay tries, in order.
pub const PRECISIONS: [u32; 3] = [256, 1024, 4096];

/// A predicate's truth over enclosures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Truth {
    /// True at every point of the enclosures.
    Holds,
    /// False at every point of the enclosures.
    Violated,
    /// The enclosures straddle its boundary, or it could not be evaluated on them (the reason).
    Undecided(String),
}

/// The truth of a state predicate over a state's enclosures (three-valued). A predicate reading
/// actions or non-deterministic inputs is the caller's error.
pub fn truth<const BITS: u32>(pred: &Pred, state: &[Enclosed<BITS>]) -> Result<Truth, NotValidated> {
    if pred.vars().iter().any(|v| !matches!(v, VarRef::State(i) if *i < state.len())) {
        return Err(NotValidated::NotStatePredicate);
    }
    Ok(match pred.eval(&Env::new(state, &[], &[])) {
        Ok(Some(true)) => Truth::Holds,
        Ok(Some(false)) => Truth::Violated,
        Ok(None) => Truth::Undecided("the enclosure straddles the predicate's boundary".into()),
        Err(e) => Truth::Undecided(format!("the predicate cannot be evaluated on the enclosure: {e}")),
    })
}

/// A value's enclosure with exact rational ends (`lo == hi` when it is known exactly).
#[derive(Clone, Debug, PartialEq)]
pub struct Bounds {
    pub lo: Rational,
    pub hi: Rational,
}

impl std::fmt::Display for Bounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.lo == self.hi {
            f.write_str(&display_rational(&self.lo))
        } else {
            let near = |q: &Rational| trestle_ir::num::to_f64_nearest(q);
            write!(f, "[{:e}, {:e}]", near(&self.lo), near(&self.hi))
        }
    }
}

/// A validated run: the exact start and choices, and the enclosures of everything computed.
#[derive(Clone, Debug, PartialEq)]
pub struct EnclosedRun {
    /// `s_0 .. s_n`; `s_0` exact.
    pub states: Vec<Vec<Bounds>>,
    /// The controllers' actions at each step.
    pub actions: Vec<Vec<Bounds>>,
    /// The environment's choices at each step: the inputs (exact) and the branch.
    pub choices: Vec<(Vec<Rational>, usize)>,
}

/// How a claimed violation was confirmed.
#[derive(Clone, Debug, PartialEq)]
pub enum Validation {
    /// The system is rational-valued: the exact replay ran and the claim holds exactly.
    Exact(Trace),
    /// Every decision was decided by enclosures at this precision.
    Validated { precision_bits: u32, run: EnclosedRun },
}

/// Why a claimed violation is not confirmed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NotValidated {
    /// The run is not a run of the system (a start outside its domains, an input outside its
    /// domain, a branch decidedly disabled, a successor decidedly outside a domain...).
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The predicate holds at the last state: the run is no counterexample.
    #[error("the predicate holds at the last state{}: not a counterexample", at_bits(*.precision_bits))]
    Holds { precision_bits: Option<u32> },
    /// Some decision straddles even at the largest precision tried.
    #[error("undecided at {precision_bits} bits{}: {what}", step.map_or(String::new(), |s| format!(" (step {s})")))]
    Undecided { precision_bits: u32, step: Option<usize>, what: String },
    /// The claim's predicate reads something other than the state.
    #[error("the violated predicate must read state variables only")]
    NotStatePredicate,
}

fn at_bits(b: Option<u32>) -> String {
    b.map_or(" (exactly)".into(), |b| format!(" (decided at {b} bits)"))
}

/// Whether every value of a run of `sys` from a rational state is rational: no elementary
/// function in any update, guard or observation, and every network activation rational-valued.
pub fn is_rational_valued(sys: &System) -> bool {
    let branches = sys.step.branches.iter().all(|b| {
        b.updates.iter().all(|u| u.is_rational_valued())
            && b.guard.as_ref().is_none_or(|g| g.first_function().is_none())
    });
    let observations = sys.controllers.iter().all(|c| c.inputs.iter().all(|e| e.is_rational_valued()));
    let networks = sys.networks.iter().all(|n| n.network.layers.iter().all(|l| activation_is_rational(l.activation())));
    branches && observations && networks
}

/// The claim is about the state, the run starts from a state, every branch exists.
fn check_claim(
    sys: &System,
    start: &[Rational],
    choices: &[(Vec<Rational>, usize)],
    violated: &Pred,
) -> Result<(), NotValidated> {
    if violated.vars().iter().any(|v| !matches!(v, VarRef::State(_))) {
        return Err(NotValidated::NotStatePredicate);
    }
    check_start(sys, start)?;
    if let Some((i, (_, b))) = choices.iter().enumerate().find(|(_, (_, b))| *b >= sys.step.branches.len()) {
        let n = sys.step.branches.len();
        return Err(ReplayError::Shape(format!("step {i} takes branch #{b}; the system has {n}")).into());
    }
    Ok(())
}

/// Confirms that the run from `start` under `choices` (one `(inputs, branch)` per step) ends in a
/// state violating `violated`: exactly on a rational-valued system, else by enclosures at
/// increasing precision. See the module doc.
pub fn validate_violation(
    sys: &System,
    start: &[Rational],
    choices: &[(Vec<Rational>, usize)],
    violated: &Pred,
) -> Result<Validation, NotValidated> {
    check_claim(sys, start, choices, violated)?;
    if is_rational_valued(sys) && violated.first_function().is_none() {
        let trace = Trace::simulate(sys, start.to_vec(), choices.iter().cloned())?;
        let last = Env::new(trace.last(), &[], &[]);
        return match violated.eval_exact(&last) {
            Ok(false) => Ok(Validation::Exact(trace)),
            Ok(true) => Err(NotValidated::Holds { precision_bits: None }),
            Err(error) => Err(ReplayError::Step { step: trace.len(), error: error.into() }.into()),
        };
    }
    validate_by_enclosures(sys, start, choices, violated)
}

/// [`validate_violation`] by enclosures whatever the system (on a rational-valued one, every
/// enclosure is the exact value: what the tests compare with the exact replay).
pub fn validate_by_enclosures(
    sys: &System,
    start: &[Rational],
    choices: &[(Vec<Rational>, usize)],
    violated: &Pred,
) -> Result<Validation, NotValidated> {
    enclose(sys, start, choices, violated).map(|(precision_bits, run)| Validation::Validated { precision_bits, run })
}

/// The enclosures of the run from `start` under `choices` (every decision on the way decided by
/// them, at the lowest of [`PRECISIONS`] that decides it all): a validated run with no claim about
/// its last state, for simulating a system whose values are irrational. The precision and run.
pub fn enclose_run(
    sys: &System,
    start: &[Rational],
    choices: &[(Vec<Rational>, usize)],
) -> Result<(u32, EnclosedRun), NotValidated> {
    // `false` is violated by every state: the claim adds no decision to the run's own.
    enclose(sys, start, choices, &Pred::False)
}

/// [`validate_by_enclosures`]'s precision and run.
pub(crate) fn enclose(
    sys: &System,
    start: &[Rational],
    choices: &[(Vec<Rational>, usize)],
    violated: &Pred,
) -> Result<(u32, EnclosedRun), NotValidated> {
    check_claim(sys, start, choices, violated)?;
    type AttemptAt = fn(&System, &[Rational], &[(Vec<Rational>, usize)], &Pred) -> Attempt;
    let attempts: [(u32, AttemptAt); PRECISIONS.len()] = [
        (PRECISIONS[0], attempt::<{ PRECISIONS[0] }>),
        (PRECISIONS[1], attempt::<{ PRECISIONS[1] }>),
        (PRECISIONS[2], attempt::<{ PRECISIONS[2] }>),
    ];
    let mut undecided = NotValidated::Undecided { precision_bits: 0, step: None, what: "not tried".into() };
    for (bits, attempt_at) in attempts {
        match attempt_at(sys, start, choices, violated) {
            Attempt::Established(run) => return Ok((bits, run)),
            Attempt::Refuted(e) => return Err(e),
            Attempt::Undecided { step, what } => {
                undecided = NotValidated::Undecided { precision_bits: bits, step, what }
            }
        }
    }
    Err(undecided)
}

/// The outcome of one validated run at one precision.
enum Attempt {
    Established(EnclosedRun),
    /// Decided against the claim: more precision changes nothing.
    Refuted(NotValidated),
    Undecided {
        step: Option<usize>,
        what: String,
    },
}

/// A failure inside one step: decided (the run is not a run of the system) or not decided.
#[derive(Debug)]
pub enum StepFailure {
    Definite(SimError),
    Undecided(String),
}

impl std::fmt::Display for StepFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepFailure::Definite(e) => write!(f, "{e}"),
            StepFailure::Undecided(what) => write!(f, "undecided: {what}"),
        }
    }
}

/// The result of a part of a step ([`controller_actions`]).
pub type StepResult<T> = Result<T, StepFailure>;

fn attempt<const BITS: u32>(
    sys: &System,
    start: &[Rational],
    choices: &[(Vec<Rational>, usize)],
    violated: &Pred,
) -> Attempt {
    let mut state: Vec<Enclosed<BITS>> = start.iter().cloned().map(Enclosed::Exact).collect();
    let mut memory = zero_memory::<BITS>(sys);
    let mut run = EnclosedRun { states: vec![bounds(&state)], actions: Vec::new(), choices: choices.to_vec() };
    for (i, (nondet, branch)) in choices.iter().enumerate() {
        match step(sys, &state, &mut memory, nondet, *branch) {
            Ok((actions, next)) => {
                run.actions.push(bounds(&actions));
                run.states.push(bounds(&next));
                state = next;
            }
            Err(StepFailure::Definite(error)) => {
                return Attempt::Refuted(NotValidated::Replay(ReplayError::Step { step: i, error }));
            }
            Err(StepFailure::Undecided(what)) => return Attempt::Undecided { step: Some(i), what },
        }
    }
    if run.states.iter().chain(&run.actions).flatten().any(|b| b.lo > b.hi) {
        return Attempt::Undecided { step: None, what: "an enclosure has an unbounded end".into() };
    }
    match truth(violated, &state) {
        Ok(Truth::Violated) => Attempt::Established(run),
        Ok(Truth::Holds) => Attempt::Refuted(NotValidated::Holds { precision_bits: Some(BITS) }),
        Ok(Truth::Undecided(what)) => Attempt::Undecided { step: None, what: format!("at the last state, {what}") },
        Err(e) => Attempt::Refuted(e),
    }
}

/// Zero hidden states of the recurrent controllers (`sim::initial_memory` over enclosures).
/// The hidden states every controller starts a run with, as enclosures: zero for a recurrent
/// network, empty otherwise.
pub fn zero_memory<const BITS: u32>(sys: &System) -> sim::Memory<Enclosed<BITS>> {
    let zero = || Enclosed::Exact(Rational::from_integer(0.into()));
    sys.controllers
        .iter()
        .map(|c| match &c.policy {
            Policy::Network(n) => sys.networks[*n].network.hidden_dims().into_iter().map(|k| vec![zero(); k]).collect(),
            Policy::Select { .. } => Vec::new(),
        })
        .collect()
}

/// Exact ends of each value; an unbounded end is written as the inverted pair `(1, 0)`, which
/// [`attempt`] refuses to report.
fn bounds<const BITS: u32>(xs: &[Enclosed<BITS>]) -> Vec<Bounds> {
    xs.iter()
        .map(|x| match x.ends() {
            (Some(lo), Some(hi)) => Bounds { lo, hi },
            _ => Bounds { lo: Rational::from_integer(1.into()), hi: Rational::from_integer(0.into()) },
        })
        .collect()
}

/// One step over enclosures, decision by decision as `sim::step`.
fn step<const BITS: u32>(
    sys: &System,
    state: &[Enclosed<BITS>],
    memory: &mut sim::Memory<Enclosed<BITS>>,
    nondet: &[Rational],
    branch: usize,
) -> StepResult<(Vec<Enclosed<BITS>>, Vec<Enclosed<BITS>>)> {
    check_state(sys, state)?;
    sim::check_nondet(sys, nondet).map_err(StepFailure::Definite)?;
    if branch >= sys.step.branches.len() {
        return Err(StepFailure::Definite(SimError::BranchDisabled { name: format!("#{branch}") }));
    }
    let nondet: Vec<Enclosed<BITS>> = nondet.iter().cloned().map(Enclosed::Exact).collect();
    let actions = controller_actions(sys, state, &nondet, memory)?;
    let env = Env::new(state, &actions[..], &nondet[..]);
    let mut chosen = None;
    for (i, b) in sys.step.branches.iter().enumerate() {
        // As in `sim::enabled_branches`: the label first (argmax actions are exact indices), the
        // guard only when the label matches. A guard that cannot be evaluated would end the exact
        // step in an error, so the step is undecided.
        if let Some((a, value)) = b.label {
            match actions[a].compare_rational(&Rational::from_integer(value.into())) {
                Some(std::cmp::Ordering::Equal) => {}
                Some(_) if i == branch => {
                    return Err(StepFailure::Definite(SimError::BranchDisabled { name: b.name.clone() }));
                }
                Some(_) => continue,
                None => return Err(StepFailure::Undecided(format!("the label of branch '{}'", b.name))),
            }
        }
        let enabled = match &b.guard {
            None => Some(true),
            Some(g) => {
                g.eval(&env).map_err(|e| StepFailure::Undecided(format!("the guard of branch '{}': {e}", b.name)))?
            }
        };
        if enabled == Some(false) {
            if i == branch {
                return Err(StepFailure::Definite(SimError::BranchDisabled { name: b.name.clone() }));
            }
            continue;
        }
        // Every enabled branch's successor is computed by the exact step, so an evaluation that
        // fails leaves the step undecided whichever branch is taken.
        let next = b
            .updates
            .iter()
            .map(|u| u.eval(&env))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| StepFailure::Undecided(format!("branch '{}': {e}", b.name)))?;
        let exit = if sys.domain_exit == DomainExit::Ignore { Exit::Inside(next) } else { domain_status(sys, next) };
        match (i == branch, enabled, exit, sys.domain_exit) {
            (true, None, _, _) => {
                return Err(StepFailure::Undecided(format!("whether branch '{}' is enabled", b.name)));
            }
            (true, _, Exit::Inside(next), _) => chosen = Some(next),
            (true, _, Exit::Outside(_), DomainExit::Drop) => {
                return Err(StepFailure::Definite(SimError::BranchDisabled { name: b.name.clone() }));
            }
            (true, _, Exit::Outside(e), _) => return Err(StepFailure::Definite(e)),
            (true, _, Exit::Undecided(what), _) | (false, _, Exit::Undecided(what), DomainExit::Error) => {
                return Err(StepFailure::Undecided(what));
            }
            // Another branch: under `error`, one that is surely enabled with a successor surely
            // outside ends the run in an error; one that may be enabled with such a successor
            // leaves the step undecided. Under `drop` such a branch is only disabled.
            (false, Some(true), Exit::Outside(e), DomainExit::Error) => return Err(StepFailure::Definite(e)),
            (false, None, Exit::Outside(_), DomainExit::Error) => {
                return Err(StepFailure::Undecided(format!(
                    "whether branch '{}', whose successor leaves the domains, is enabled",
                    b.name
                )));
            }
            (false, ..) => {}
        }
    }
    // Every path for the chosen branch returned or set its successor.
    let next = chosen.ok_or_else(|| {
        StepFailure::Definite(SimError::BranchDisabled { name: sys.step.branches[branch].name.clone() })
    })?;
    Ok((actions, next))
}

enum Exit<T> {
    Inside(T),
    Outside(SimError),
    Undecided(String),
}

fn describe(v: &StateVar) -> String {
    format!("{} {}", v.kind.name(), v.domain.describe())
}

/// Whether a value is of its variable's kind and (unless `kinds_only`) inside its domain.
fn fits<const BITS: u32>(v: &StateVar, x: &Enclosed<BITS>, kinds_only: bool) -> Option<bool> {
    let kind = match v.kind {
        VarKind::Real => Some(true),
        VarKind::Int => integrality(x),
        VarKind::Bool => match x.exact() {
            Some(q) => Some(*q == Rational::from_integer(0.into()) || *q == Rational::from_integer(1.into())),
            None => integrality(x).and_then(|i| if i { None } else { Some(false) }),
        },
    };
    if kinds_only || kind == Some(false) {
        return kind;
    }
    let lo = v.domain.lo.as_ref().map_or(Some(true), |l| x.compare(CmpOp::Ge, &Enclosed::Exact(l.clone())));
    let hi = v.domain.hi.as_ref().map_or(Some(true), |h| x.compare(CmpOp::Le, &Enclosed::Exact(h.clone())));
    match (kind, lo, hi) {
        (_, Some(false), _) | (_, _, Some(false)) => Some(false),
        (Some(true), Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

fn domain_status<const BITS: u32>(sys: &System, next: Vec<Enclosed<BITS>>) -> Exit<Vec<Enclosed<BITS>>> {
    for (v, x) in sys.state.iter().zip(&next) {
        match fits(v, x, false) {
            Some(true) => {}
            Some(false) => {
                return Exit::Outside(SimError::DomainExit {
                    var: v.name.clone(),
                    value: x.to_string(),
                    domain: describe(v),
                });
            }
            None => return Exit::Undecided(format!("whether {} = {x} lies in {}", v.name, describe(v))),
        }
    }
    Exit::Inside(next)
}

/// `sim::check_state` over enclosures: every variable of its kind and, unless domains are
/// ignored, inside its domain.
fn check_state<const BITS: u32>(sys: &System, state: &[Enclosed<BITS>]) -> StepResult<()> {
    if state.len() != sys.state.len() {
        return Err(StepFailure::Definite(SimError::StateDim { found: state.len(), expected: sys.state.len() }));
    }
    for (v, x) in sys.state.iter().zip(state) {
        match fits(v, x, sys.domain_exit == DomainExit::Ignore) {
            Some(true) => {}
            Some(false) => {
                return Err(StepFailure::Definite(SimError::NotAState {
                    var: v.name.clone(),
                    value: x.to_string(),
                    domain: describe(v),
                }));
            }
            None => {
                return Err(StepFailure::Undecided(format!("whether {} = {x} is a state ({})", v.name, describe(v))));
            }
        }
    }
    Ok(())
}

/// `sim::controller_actions` over enclosures: the selector must be an exact integer and an argmax
/// winner decided (the lowest-index rule: an output larger than every one before it and at least
/// every one after it, on the whole enclosures). The validated replay here and the validated runs
/// of sampled-data systems (`trestle_bridge::flow_run`) both take the controllers' actions from it.
pub fn controller_actions<const BITS: u32>(
    sys: &System,
    state: &[Enclosed<BITS>],
    nondet: &[Enclosed<BITS>],
    memory: &mut sim::Memory<Enclosed<BITS>>,
) -> StepResult<Vec<Enclosed<BITS>>> {
    let mut actions: Vec<Option<Enclosed<BITS>>> = vec![None; sys.actions.len()];
    for (ci, c) in sys.controllers.iter().enumerate() {
        let env = Env::new(state, &[], nondet);
        let input = c
            .inputs
            .iter()
            .map(|e| e.eval(&env))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| StepFailure::Undecided(format!("controller '{}' observation: {e}", c.name)))?;
        let net = match &c.policy {
            Policy::Network(n) => *n,
            Policy::Select { by, networks } => {
                let value = state[*by].exact().ok_or_else(|| {
                    StepFailure::Undecided(format!(
                        "selector '{}' = {} is not known exactly",
                        sys.state[*by].name, state[*by]
                    ))
                })?;
                let pick = trestle_ir::num::is_integer(value)
                    .then(|| num_traits::ToPrimitive::to_usize(&value.to_integer()))
                    .flatten()
                    .and_then(|k| networks.get(k).copied());
                pick.ok_or_else(|| {
                    StepFailure::Definite(SimError::Selector {
                        var: sys.state[*by].name.clone(),
                        value: display_rational(value),
                    })
                })?
            }
        };
        let network = &sys.networks[net].network;
        let out =
            if network.is_recurrent() { network.run(&input, &mut memory[ci]) } else { network.run(&input, &mut []) }
                .map_err(|e| StepFailure::Definite(e.into()))?;
        match &c.output {
            ControllerOutput::Actions(ids) => {
                for (k, &a) in ids.iter().enumerate() {
                    actions[a] = Some(out[k].clone());
                }
            }
            ControllerOutput::Argmax(a) => {
                let winner = decided_argmax(&out).ok_or_else(|| {
                    StepFailure::Undecided(format!("the argmax of controller '{}' (outputs too close)", c.name))
                })?;
                actions[*a] = Some(Enclosed::Exact(Rational::from_integer(winner.into())));
            }
        }
    }
    Ok(actions.into_iter().map(|a| a.expect("every action is set by its controller (validated)")).collect())
}

/// The index the lowest-index argmax rule picks, when the enclosures decide it: larger than every
/// output before it and at least every output after it.
fn decided_argmax<const BITS: u32>(out: &[Enclosed<BITS>]) -> Option<usize> {
    (0..out.len()).find(|&i| {
        out.iter().enumerate().all(|(j, o)| match j.cmp(&i) {
            std::cmp::Ordering::Less => out[i].compare(CmpOp::Gt, o) == Some(true),
            std::cmp::Ordering::Equal => true,
            std::cmp::Ordering::Greater => out[i].compare(CmpOp::Ge, o) == Some(true),
        })
    })
}
