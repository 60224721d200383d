//! A closed-loop system: state, controllers (networks), environment step, Init / Safe / candidate
//! invariant, and the temporal properties to check.

use crate::expr::{Expr, VarRef};
use crate::formula::{Ctl, Ltl};
use crate::network::Network;
use crate::num::{Rational, display_rational};
use crate::pred::Pred;

/// The type of a state variable. Values are rationals whatever the kind; `Int` and `Bool` restrict
/// which rationals are states ([`crate::sim::fits_kind`]), and MILP encodes them as integer
/// variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// Any rational in the domain.
    Real,
    /// An integer in the domain (a selector of [`Policy::Select`], a counter, a mode).
    Int,
    /// 0 (false) or 1 (true); the domain is always `[0, 1]`. Predicates may use it as a condition.
    Bool,
}

impl VarKind {
    /// The type's keyword in system files and messages (`real`, `int`, `bool`).
    pub fn name(self) -> &'static str {
        match self {
            VarKind::Real => "real",
            VarKind::Int => "int",
            VarKind::Bool => "bool",
        }
    }
}

/// `lo <= v <= hi`; `None` is unbounded on that side.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Domain {
    /// Exact lower bound; `None` when unbounded below.
    pub lo: Option<Rational>,
    /// Exact upper bound; `None` when unbounded above.
    pub hi: Option<Rational>,
}

impl Domain {
    /// Exact membership: `lo <= v <= hi`, a missing end admitting everything on its side.
    pub fn contains(&self, v: &Rational) -> bool {
        self.lo.as_ref().is_none_or(|l| v >= l) && self.hi.as_ref().is_none_or(|h| v <= h)
    }

    /// `[lo, hi]` with `-inf` / `inf` for missing ends, for messages and reports.
    pub fn describe(&self) -> String {
        let side = |b: &Option<Rational>, inf: &str| b.as_ref().map_or(inf.to_string(), display_rational);
        format!("[{}, {}]", side(&self.lo, "-inf"), side(&self.hi, "inf"))
    }
}

/// A state variable: its name, kind and the domain successors are checked against (see
/// [`DomainExit`]).
#[derive(Clone, Debug, PartialEq)]
pub struct StateVar {
    /// The name system files, formulas and reports use; unique among every name of the system
    /// ([`System::validate`]).
    pub name: String,
    /// Real, integer or boolean.
    pub kind: VarKind,
    /// The values a state may take (always `[0, 1]` for a bool).
    pub domain: Domain,
}

/// A value the environment picks afresh at every step.
#[derive(Clone, Debug, PartialEq)]
pub enum NondetDomain {
    /// Any rational in `[lo, hi]`, ends included, `lo <= hi` (exact).
    Interval(Rational, Rational),
    /// One of finitely many exact values; non-empty.
    Set(Vec<Rational>),
}

/// A non-deterministic input (a disturbance, a choice of the environment): free in its domain at
/// every step, independently of earlier steps.
#[derive(Clone, Debug, PartialEq)]
pub struct NondetVar {
    /// The name expressions read it by; unique in the system.
    pub name: String,
    /// The values the environment may pick.
    pub domain: NondetDomain,
}

/// What a controller's action holds: a network output itself or the index of the largest one.
#[derive(Clone, Debug, PartialEq)]
pub enum ActionKind {
    /// A real network output.
    Real,
    /// The index of the largest output (argmax), with a label per index.
    Index {
        /// One name per network output, in output order: the action's value `i` means
        /// `labels[i]`, which system files may write for `i` and traces print (`"0"`, `"1"`, ...
        /// when the file names none).
        labels: Vec<String>,
    },
}

/// A value a controller sets at every step, read by the step's updates and guards (never by an
/// observation: controllers read the state and the non-deterministic inputs only).
#[derive(Clone, Debug, PartialEq)]
pub struct ActionVar {
    /// The name updates and guards read it by; unique in the system.
    pub name: String,
    /// A real output or an argmax index with its labels.
    pub kind: ActionKind,
    /// The controller that sets it.
    pub controller: usize,
}

/// A network of the system under the name the file gave it.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedNetwork {
    /// The name controllers and messages use: the key in the file's `[networks]`, or for a
    /// controller's `model` the model file's name (made unique).
    pub name: String,
    /// The network itself, weights exactly as loaded.
    pub network: Network,
}

/// Which network a controller runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Policy {
    /// Always this network (an index into [`System::networks`]).
    Network(usize),
    /// `networks[v]` where `v` is the value of an integer state variable (VerticalCAS picks
    /// the network of the previous advisory).
    Select {
        /// The selector: a state variable of kind int with domain `[0, networks.len() - 1]`
        /// ([`System::validate`]).
        by: usize,
        /// The networks by selector value, indices into [`System::networks`]; none recurrent.
        networks: Vec<usize>,
    },
}

/// How a controller's network outputs become actions.
#[derive(Clone, Debug, PartialEq)]
pub enum ControllerOutput {
    /// Output i is action `actions[i]`.
    Actions(Vec<usize>),
    /// The argmax index of the outputs is the action (ties: the lowest index when simulating;
    /// solvers may return any maximal index, which they say).
    Argmax(usize),
}

/// A neural controller: at every step it evaluates its observation, runs the network its [`Policy`]
/// picks and sets its actions (see [`crate::sim`] for the order within a step).
#[derive(Clone, Debug, PartialEq)]
pub struct Controller {
    /// The name messages and reports use.
    pub name: String,
    /// Which network it runs.
    pub policy: Policy,
    /// The network's inputs as expressions of the state (and non-deterministic inputs): the
    /// observation, including any normalisation.
    pub inputs: Vec<Expr>,
    /// How the outputs set actions.
    pub output: ControllerOutput,
}

/// One successor function of the environment. `guard` (over state, actions and non-deterministic
/// inputs) says when it exists; `label` restricts it to the steps where an argmax action takes a
/// given value (guarded commands of discrete policies).
#[derive(Clone, Debug, PartialEq)]
pub struct Branch {
    /// The name messages, traces and counterexamples use.
    pub name: String,
    /// When the branch is enabled; `None` is always. May read state, actions and non-deterministic
    /// inputs.
    pub guard: Option<Pred>,
    /// `(action, value)`: enabled only when the argmax action `System::actions[action]` equals
    /// `value`, an index into that action's labels (a command of a discrete policy). Checked by
    /// [`System::validate`].
    pub label: Option<(usize, usize)>,
    /// One expression per state variable, in state order.
    pub updates: Vec<Expr>,
}

/// The environment step: the successors of a state are those of its enabled branches, so more than
/// one enabled branch is non-determinism, and none is a deadlock
/// ([`crate::sim::SimError::Deadlock`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The branches, in declaration order (the order traces name them by); at least one.
    pub branches: Vec<Branch>,
}

/// What a successor outside a variable's domain means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DomainExit {
    /// The run is reported as an error (the model is wrong).
    Error,
    /// That successor does not exist (the branch is disabled there).
    Drop,
    /// Nothing is checked: domains are only hints for bounds.
    Ignore,
}

/// The formula of a property, in one of the logics the engines check.
#[derive(Clone, Debug, PartialEq)]
pub enum PropertyFormula {
    /// A CTL formula over the system's runs (branching time: its non-deterministic inputs and
    /// branches).
    Ctl(Ctl),
    /// An LTL formula, holding when every run satisfies it.
    Ltl(Ltl),
    /// `G safe`-style invariance of a predicate (safety).
    Invariant(Pred),
}

/// A named property of the system file (`[[property]]`), checked by the command its logic calls
/// for.
#[derive(Clone, Debug, PartialEq)]
pub struct Property {
    /// Its name in the file, for reports.
    pub name: String,
    /// What it states.
    pub formula: PropertyFormula,
    /// The formula as written, for reports.
    pub text: String,
    /// The value of the horizon parameter `k` the formula was read with, when it has one.
    pub horizon: Option<u32>,
}

/// A closed-loop system, the input of every engine: state, non-deterministic inputs, controllers
/// with their networks and actions, the environment step, and the regions and properties to check.
/// Indices in expressions and controllers point into these vectors; [`System::validate`] checks
/// that they do, so engines may rely on it.
#[derive(Clone, Debug, PartialEq)]
pub struct System {
    /// The system's name (the file's `system.name`, else the file's stem), for reports.
    pub name: String,
    /// Free text from the file, shown by `trestle info`; empty when there is none.
    pub description: String,
    /// The state variables, in the order every state vector, domain check and trace uses; at least
    /// one.
    pub state: Vec<StateVar>,
    /// The non-deterministic inputs, in the order of every vector of their values.
    pub nondet: Vec<NondetVar>,
    /// The actions of every controller, in the order of the action vectors
    /// ([`crate::sim::controller_actions`]).
    pub actions: Vec<ActionVar>,
    /// Named exact constants, in file order. Expressions have them inlined already; they are kept
    /// for reports and so that formulas given on the command line (`--formula`) can use the same
    /// names.
    pub constants: Vec<(String, Rational)>,
    /// The networks controllers refer to by index.
    pub networks: Vec<NamedNetwork>,
    /// The controllers, run in this order at every step (each sets its own actions).
    pub controllers: Vec<Controller>,
    /// The environment's transition.
    pub step: Step,
    /// The initial states; reads state variables only.
    pub init: Pred,
    /// The safe states, which the safety engines prove every reachable state is in; `None` when the
    /// file has none. Reads state variables only.
    pub safe: Option<Pred>,
    /// A candidate inductive invariant the bridge engine checks (`Init ⊆ Inv`, `Inv ⊆ Safe`, `Inv`
    /// closed under the step); `None` when the file gives none. Reads state variables only.
    pub invariant: Option<Pred>,
    /// The properties of the file's `[[property]]` tables, in file order.
    pub properties: Vec<Property>,
    /// What a successor outside a variable's domain means.
    pub domain_exit: DomainExit,
}

/// A structural defect of a [`System`] ([`System::validate`]): where it is and what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{location}: {message}")]
pub struct SystemError {
    /// The key, name or part of the system at fault (`state.x`, `step branch 'left'`, `init`).
    pub location: String,
    /// What is wrong, one sentence.
    pub message: String,
}

fn err(location: impl Into<String>, message: impl Into<String>) -> SystemError {
    SystemError { location: location.into(), message: message.into() }
}

impl System {
    /// The state variables' names, in state order.
    pub fn state_names(&self) -> Vec<String> {
        self.state.iter().map(|v| v.name.clone()).collect()
    }

    /// The actions' names, in action order.
    pub fn action_names(&self) -> Vec<String> {
        self.actions.iter().map(|v| v.name.clone()).collect()
    }

    /// The non-deterministic inputs' names, in input order.
    pub fn nondet_names(&self) -> Vec<String> {
        self.nondet.iter().map(|v| v.name.clone()).collect()
    }

    /// The name of a variable (of any kind). Panics on an index past the end, which a validated
    /// system never holds.
    pub fn var_name(&self, v: VarRef) -> &str {
        match v {
            VarRef::State(i) => &self.state[i].name,
            VarRef::Action(i) => &self.actions[i].name,
            VarRef::Nondet(i) => &self.nondet[i].name,
        }
    }

    /// The index of the state variable named `name`, if there is one.
    pub fn state_index(&self, name: &str) -> Option<usize> {
        self.state.iter().position(|v| v.name == name)
    }

    /// The networks a controller may run.
    pub fn controller_networks(&self, c: &Controller) -> Vec<usize> {
        match &c.policy {
            Policy::Network(n) => vec![*n],
            Policy::Select { networks, .. } => networks.clone(),
        }
    }

    /// The refusal of an engine that encodes the system piecewise-linearly and evaluates runs
    /// exactly (the MILP engines, CEGAR, bounded CTL, the LTL engine), before it starts: `Err`
    /// names the engine, the first non-linear part (a tanh or sigmoid layer, an elementary
    /// function of the step or of an observation) and the engines that take it, in one message
    /// shared by every such engine. Checked once at the entry, so nothing non-linear reaches an
    /// encoding or an exact evaluation that would fail half-way.
    pub fn check_piecewise_linear(&self, engine: &str) -> Result<(), String> {
        refuse_nonlinear(engine, self.nonlinear_network().or_else(|| self.nonlinear_step()))
    }

    /// [`System::check_piecewise_linear`] for the networks alone, for an engine that bounds
    /// elementary functions of the step rigorously but evaluates the networks exactly.
    pub fn check_piecewise_linear_networks(&self, engine: &str) -> Result<(), String> {
        refuse_nonlinear(engine, self.nonlinear_network())
    }

    /// The first tanh or sigmoid layer, in words.
    pub fn nonlinear_network(&self) -> Option<String> {
        self.networks.iter().find_map(|n| {
            n.network
                .first_activation_not(crate::network::Activation::is_piecewise_linear)
                .map(|(layer, act)| format!("network '{}' (layer {layer}) has the activation {act}", n.name))
        })
    }

    /// The first elementary function of the step or of an observation, in words.
    pub fn nonlinear_step(&self) -> Option<String> {
        let in_step = self.step.branches.iter().find_map(|b| {
            let f = b.updates.iter().find_map(|u| u.first_function());
            let f = f.or_else(|| b.guard.as_ref().and_then(|g| g.first_function()))?;
            Some(format!("the step's branch '{}' applies {f}", b.name))
        });
        in_step.or_else(|| {
            self.controllers.iter().find_map(|c| {
                let f = c.inputs.iter().find_map(|e| e.first_function())?;
                Some(format!("controller '{}' observes through {f}", c.name))
            })
        })
    }

    /// Whether no network is recurrent, so the controllers carry no hidden state between steps
    /// and the state vector alone determines the future (what explicit sweeps over states need).
    pub fn is_memoryless(&self) -> bool {
        self.networks.iter().all(|n| !n.network.is_recurrent())
    }

    /// Structural checks every engine may rely on. Parsers call it before handing a system out.
    pub fn validate(&self) -> Result<(), SystemError> {
        let mut names: Vec<(&str, &str)> = Vec::new();
        let all = self
            .state
            .iter()
            .map(|v| (v.name.as_str(), "state variable"))
            .chain(self.nondet.iter().map(|v| (v.name.as_str(), "non-deterministic input")))
            .chain(self.actions.iter().map(|v| (v.name.as_str(), "action")))
            .chain(self.constants.iter().map(|(n, _)| (n.as_str(), "constant")));
        for (n, what) in all {
            if let Some((_, prev)) = names.iter().find(|(m, _)| *m == n) {
                return Err(err(n, format!("name used twice (as {prev} and as {what})")));
            }
            names.push((n, what));
        }
        if self.state.is_empty() {
            return Err(err("state", "the system has no state variables"));
        }
        for v in &self.state {
            if let (Some(l), Some(h)) = (&v.domain.lo, &v.domain.hi)
                && l > h
            {
                return Err(err(format!("state.{}", v.name), format!("empty domain {}", v.domain.describe())));
            }
        }
        for v in &self.nondet {
            match &v.domain {
                NondetDomain::Interval(l, h) if l > h => {
                    return Err(err(format!("nondet.{}", v.name), "interval has lo > hi"));
                }
                NondetDomain::Set(s) if s.is_empty() => return Err(err(format!("nondet.{}", v.name), "empty set")),
                _ => {}
            }
        }
        for (ci, c) in self.controllers.iter().enumerate() {
            self.validate_controller(ci, c)?;
        }
        if self.step.branches.is_empty() {
            return Err(err("step", "the environment step has no branches"));
        }
        for b in &self.step.branches {
            let loc = format!("step branch '{}'", b.name);
            if b.updates.len() != self.state.len() {
                return Err(err(loc, format!("{} updates for {} state variables", b.updates.len(), self.state.len())));
            }
            if let Some((a, value)) = b.label {
                match self.actions.get(a).map(|v| &v.kind) {
                    Some(ActionKind::Index { labels }) if value < labels.len() => {}
                    _ => return Err(err(loc, "label does not name a value of an argmax action")),
                }
            }
        }
        for c in &self.controllers {
            for e in &c.inputs {
                self.check_declared(&e.vars(), &format!("controller '{}'", c.name))?;
            }
        }
        for b in &self.step.branches {
            let loc = format!("step branch '{}'", b.name);
            for e in &b.updates {
                self.check_declared(&e.vars(), &loc)?;
            }
            if let Some(g) = &b.guard {
                self.check_declared(&g.vars(), &loc)?;
            }
        }
        let state_only = |p: &Pred, what: &str| -> Result<(), SystemError> {
            self.check_declared(&p.vars(), what)?;
            if p.mentions(|v| !matches!(v, VarRef::State(_))) {
                return Err(err(what, "may only mention state variables"));
            }
            Ok(())
        };
        state_only(&self.init, "init")?;
        if let Some(s) = &self.safe {
            state_only(s, "safe")?;
        }
        if let Some(i) = &self.invariant {
            state_only(i, "invariant")?;
        }
        Ok(())
    }

    /// Every variable index an expression reads must be declared (an IR built by hand could
    /// point past the end).
    fn check_declared(&self, vars: &[VarRef], what: &str) -> Result<(), SystemError> {
        for v in vars {
            let ok = match *v {
                VarRef::State(i) => i < self.state.len(),
                VarRef::Action(i) => i < self.actions.len(),
                VarRef::Nondet(i) => i < self.nondet.len(),
            };
            if !ok {
                return Err(err(what, format!("reads an undeclared variable {v:?}")));
            }
        }
        Ok(())
    }

    fn validate_controller(&self, ci: usize, c: &Controller) -> Result<(), SystemError> {
        let loc = format!("controller '{}'", c.name);
        let nets = self.controller_networks(c);
        if let Some(&n) = nets.iter().find(|&&n| n >= self.networks.len()) {
            return Err(err(&loc, format!("names network {n}, which does not exist")));
        }
        if let Policy::Select { by, networks } = &c.policy {
            let v = &self.state[*by];
            let expected_hi = Rational::from_integer((networks.len() as i64 - 1).into());
            if v.kind != VarKind::Int
                || v.domain.lo != Some(Rational::from_integer(0.into()))
                || v.domain.hi != Some(expected_hi)
            {
                return Err(err(
                    &loc,
                    format!(
                        "selector '{}' must be an int state variable with domain [0, {}]",
                        v.name,
                        networks.len() - 1
                    ),
                ));
            }
            if networks.iter().any(|&n| self.networks[n].network.is_recurrent()) {
                return Err(err(
                    &loc,
                    "a network selector cannot switch between recurrent networks (whose hidden state would be ambiguous)",
                ));
            }
        }
        for &n in &nets {
            let net = &self.networks[n];
            if net.network.input_dim() != c.inputs.len() {
                return Err(err(
                    &loc,
                    format!(
                        "network '{}' takes {} inputs but {} are given",
                        net.name,
                        net.network.input_dim(),
                        c.inputs.len()
                    ),
                ));
            }
            let outputs = match &c.output {
                ControllerOutput::Actions(a) => a.len(),
                ControllerOutput::Argmax(a) => match &self.actions[*a].kind {
                    ActionKind::Index { labels } => labels.len(),
                    ActionKind::Real => return Err(err(&loc, "argmax output must be an index action")),
                },
            };
            if net.network.output_dim() != outputs {
                return Err(err(
                    &loc,
                    format!(
                        "network '{}' has {} outputs but {} are declared",
                        net.name,
                        net.network.output_dim(),
                        outputs
                    ),
                ));
            }
        }
        for a in self.actions.iter().filter(|a| a.controller == ci) {
            if c.inputs.iter().any(|e| e.mentions(|v| matches!(v, VarRef::Action(_)))) {
                return Err(err(&loc, format!("inputs may not read actions (action '{}')", a.name)));
            }
        }
        Ok(())
    }
}

/// The one message of an engine refusing a non-linear part of a system (`found`, in words).
fn refuse_nonlinear(engine: &str, found: Option<String>) -> Result<(), String> {
    match found {
        None => Ok(()),
        Some(what) => Err(format!(
            "{engine} encodes the system piecewise-linearly and replays runs in exact rationals, and {what}, \
             which has neither; use the engines that bound it rigorously and validate counterexamples by \
             high-precision enclosures: `check` (the bridge engine), `synth`, `verify` and `certify`"
        )),
    }
}
