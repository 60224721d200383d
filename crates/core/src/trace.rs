//! Traces: what every refutation is, and the one exact replay that confirms it.
//!
//! A trace is a run of the closed loop: states `s_0 .. s_n`, and for each step the environment's
//! non-deterministic choices, the controllers' actions and the branch taken; recurrent
//! controllers' hidden states ride along, and a lasso names the state its last one loops back to.
//! Engines find traces in floating point or through solvers; [`Trace::replay`] re-runs them in exact
//! rational arithmetic through `trestle_ir::sim` (the IR's one definition of a step) and only a
//! trace that replays is ever reported. [`Trace::simulate`] builds a trace from a start state and
//! the choices alone, so a solver's proposal never has to be trusted for the values it implies.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Names to values, in declaration order.
pub type Named = IndexMap<String, Value>;
use trestle_ir::num::{Rational, display_rational, to_f64_nearest};
use trestle_ir::sim::{self, Memory, SimError};
use trestle_ir::system::{ActionKind, System};

/// One step of a trace: what the environment chose and what the controllers did.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceStep {
    /// The non-deterministic inputs, in `System::nondet` order.
    pub nondet: Vec<Rational>,
    /// The controllers' actions, in `System::actions` order (argmax actions as their index).
    pub actions: Vec<Rational>,
    /// The branch of the environment step taken (index into `System::step.branches`).
    pub branch: usize,
}

/// A run of the closed loop, in exact rationals.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// `s_0 .. s_n`: one more than `steps`.
    pub states: Vec<Vec<Rational>>,
    /// The controllers' hidden states before each step and after the last (`n + 1` entries,
    /// `[controller][recurrent layer][neuron]`); every run starts from zero hidden states.
    pub hidden: Vec<Memory<Rational>>,
    pub steps: Vec<TraceStep>,
    /// For a lasso: `s_n` (with its hidden state) equals `s_k` for this `k < n`, so the run can
    /// repeat the steps `k..n` forever.
    pub loop_back: Option<usize>,
}

/// Why a trace does not replay.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ReplayError {
    #[error("the trace is malformed: {0}")]
    Shape(String),
    #[error("the start state is not a state of the system: {0}")]
    Start(String),
    #[error("step {step}: {error}")]
    Step { step: usize, error: SimError },
    #[error("step {step}: the controllers' action '{action}' is {found}, not {claimed}")]
    Action { step: usize, action: String, found: String, claimed: String },
    #[error("step {step}: the successor differs from the trace in '{var}': {found}, not {claimed}")]
    State { step: usize, var: String, found: String, claimed: String },
    #[error("step {step}: the hidden state differs from the trace")]
    Hidden { step: usize },
    #[error("the loop does not close: state {last} differs from state {back}")]
    Loop { last: usize, back: usize },
}

impl Trace {
    /// A trace of no steps: one state (the witness of an implication between state predicates).
    pub fn state(sys: &System, state: Vec<Rational>) -> Trace {
        Trace { states: vec![state], hidden: vec![sim::initial_memory(sys)], steps: Vec::new(), loop_back: None }
    }

    /// Runs the system exactly from `start` (zero hidden states) with the given environment
    /// choices `(nondet, branch)`, one per step. Everything else (actions, successors, hidden
    /// states) is computed, so the trace replays by construction.
    pub fn simulate(
        sys: &System,
        start: Vec<Rational>,
        choices: impl IntoIterator<Item = (Vec<Rational>, usize)>,
    ) -> Result<Trace, ReplayError> {
        check_start(sys, &start)?;
        let mut memory = sim::initial_memory::<Rational>(sys);
        let mut trace = Trace { states: vec![start], hidden: vec![memory.clone()], steps: Vec::new(), loop_back: None };
        for (i, (nondet, branch)) in choices.into_iter().enumerate() {
            let t = sim::step(sys, trace.last(), &mut memory, &nondet, branch)
                .map_err(|error| ReplayError::Step { step: i, error })?;
            trace.steps.push(TraceStep { nondet, actions: t.actions, branch });
            trace.states.push(t.next);
            trace.hidden.push(memory.clone());
        }
        Ok(trace)
    }

    /// Number of steps.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The last state.
    pub fn last(&self) -> &[Rational] {
        self.states.last().expect("a trace has at least one state")
    }

    /// The same trace as a lasso looping back to state `k`; checked by [`Trace::replay`].
    pub fn with_loop_back(mut self, k: usize) -> Trace {
        self.loop_back = Some(k);
        self
    }

    /// Re-runs the trace in exact rational arithmetic through the IR's step: the start state lies in
    /// every declared kind and domain, every non-deterministic choice in its domain, every branch is
    /// enabled, and the actions, successors, hidden states and the loop (if any) are exactly what
    /// the trace says.
    pub fn replay(&self, sys: &System) -> Result<(), ReplayError> {
        if self.states.len() != self.steps.len() + 1 {
            return Err(ReplayError::Shape(format!(
                "{} states for {} steps (expected one more state than steps)",
                self.states.len(),
                self.steps.len()
            )));
        }
        if !self.hidden.is_empty() && self.hidden.len() != self.states.len() {
            return Err(ReplayError::Shape(format!(
                "{} hidden states for {} states",
                self.hidden.len(),
                self.states.len()
            )));
        }
        let first = &self.states[0];
        check_start(sys, first)?;
        let mut memory = sim::initial_memory::<Rational>(sys);
        let mut memories = vec![memory.clone()];
        for (i, step) in self.steps.iter().enumerate() {
            let t = sim::step(sys, &self.states[i], &mut memory, &step.nondet, step.branch)
                .map_err(|error| ReplayError::Step { step: i, error })?;
            if let Some(k) = (0..t.actions.len()).find(|&k| step.actions.get(k) != Some(&t.actions[k])) {
                return Err(ReplayError::Action {
                    step: i,
                    action: sys.actions[k].name.clone(),
                    found: display_rational(&t.actions[k]),
                    claimed: step.actions.get(k).map_or("missing".into(), display_rational),
                });
            }
            if step.actions.len() != t.actions.len() {
                return Err(ReplayError::Shape(format!("step {i} has {} actions", step.actions.len())));
            }
            let claimed = &self.states[i + 1];
            if let Some(k) = (0..t.next.len()).find(|&k| claimed.get(k) != Some(&t.next[k])) {
                return Err(ReplayError::State {
                    step: i,
                    var: sys.state[k].name.clone(),
                    found: display_rational(&t.next[k]),
                    claimed: claimed.get(k).map_or("missing".into(), display_rational),
                });
            }
            if claimed.len() != t.next.len() {
                return Err(ReplayError::Shape(format!("state {} has {} values", i + 1, claimed.len())));
            }
            if !self.hidden.is_empty() && self.hidden[i + 1] != memory {
                return Err(ReplayError::Hidden { step: i });
            }
            memories.push(memory.clone());
        }
        if let Some(k) = self.loop_back {
            let n = self.states.len() - 1;
            if k >= n || self.states[k] != self.states[n] || memories[k] != memories[n] {
                return Err(ReplayError::Loop { last: n, back: k });
            }
        }
        Ok(())
    }

    /// The trace in the result schema: decimals for reading, exact rationals for re-checking.
    pub fn to_json(&self, sys: &System) -> TraceJson {
        let exact = |xs: &[Rational]| xs.iter().map(display_rational).collect::<Vec<_>>();
        let named = |names: Vec<String>, xs: &[Rational]| -> Named {
            names.into_iter().zip(xs).map(|(n, x)| (n, decimal(x))).collect()
        };
        let steps = self
            .steps
            .iter()
            .map(|s| StepJson {
                actions: named(sys.action_names(), &s.actions),
                actions_exact: exact(&s.actions),
                actions_enclosures: Vec::new(),
                labels: labels(sys, &s.actions),
                nondet: named(sys.nondet_names(), &s.nondet),
                nondet_exact: exact(&s.nondet),
                branch: sys.step.branches.get(s.branch).map_or_else(|| s.branch.to_string(), |b| b.name.clone()),
            })
            .collect();
        let has_hidden = self.hidden.iter().any(|m| m.iter().any(|c| !c.is_empty()));
        TraceJson {
            states: self.states.iter().map(|s| named(sys.state_names(), s)).collect(),
            states_exact: self.states.iter().map(|s| exact(s)).collect(),
            steps,
            hidden_exact: has_hidden.then(|| {
                self.hidden.iter().map(|m| m.iter().map(|c| c.iter().map(|l| exact(l)).collect()).collect()).collect()
            }),
            loop_back: self.loop_back,
            replayed: "exact rational arithmetic".into(),
            enclosures: None,
            precision_bits: None,
            violates: None,
        }
    }
}

/// The start state must be a state of the system: the right length, every variable of its kind
/// (integers, 0/1 for booleans) and inside its declared domain.
pub(crate) fn check_start(sys: &System, state: &[Rational]) -> Result<(), ReplayError> {
    if state.len() != sys.state.len() {
        return Err(ReplayError::Start(format!("{} values for {} state variables", state.len(), sys.state.len())));
    }
    match sim::domain_violation(sys, state) {
        Some(SimError::DomainExit { var, value, domain }) => {
            Err(ReplayError::Start(format!("{var} = {value} is outside {domain}")))
        }
        Some(e) => Err(ReplayError::Start(e.to_string())),
        None => Ok(()),
    }
}

fn decimal(q: &Rational) -> Value {
    serde_json::Number::from_f64(to_f64_nearest(q)).map_or_else(|| Value::String(display_rational(q)), Value::Number)
}

fn labels(sys: &System, actions: &[Rational]) -> Named {
    sys.actions
        .iter()
        .enumerate()
        .filter(|(_, a)| matches!(a.kind, ActionKind::Index { .. }))
        .filter_map(|(k, a)| Some((a.name.clone(), Value::String(sim::action_label(sys, k, actions.get(k)?)?))))
        .collect()
}

/// One step of a [`TraceJson`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepJson {
    pub actions: Named,
    /// Exact actions (empty in a validated trace, whose actions are enclosures).
    #[serde(default)]
    pub actions_exact: Vec<String>,
    /// A validated trace's actions: `[lo, hi]` with exact rational ends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions_enclosures: Vec<[String; 2]>,
    /// The label of each argmax action's value.
    #[serde(default, skip_serializing_if = "Named::is_empty")]
    pub labels: Named,
    #[serde(default, skip_serializing_if = "Named::is_empty")]
    pub nondet: Named,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nondet_exact: Vec<String>,
    pub branch: String,
}

/// A trace as every command prints it with `--json` and the results store keeps it: named values
/// in decimals (the nearest f64, for reading) and the exact rationals (`"3/10"`), which are what
/// was replayed. A validated trace (through irrational values, [`crate::ValidatedTrace`]) has the
/// start alone in `states_exact`, every state's enclosure in `enclosures`, the precision in
/// `precision_bits` and the predicate its last state violates in `violates`; its decimal `states`
/// are the enclosures' midpoints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceJson {
    pub states: Vec<Named>,
    pub states_exact: Vec<Vec<String>>,
    pub steps: Vec<StepJson>,
    /// `[state][controller][recurrent layer][neuron]`, exact; present for recurrent controllers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden_exact: Option<Vec<Vec<Vec<Vec<String>>>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_back: Option<usize>,
    pub replayed: String,
    /// `[state][variable] = [lo, hi]`, exact rational ends: a validated trace's enclosures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enclosures: Option<Vec<Vec<[String; 2]>>>,
    /// The precision (bits) that decided a validated trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_bits: Option<u32>,
    /// The predicate a validated trace's last state violates (its whole enclosure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub violates: Option<String>,
}
