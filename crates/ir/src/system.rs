//! A closed-loop system: state, controllers (networks), environment step, Init / Safe / candidate
//! invariant, and the temporal properties to check.

use crate::expr::{Expr, VarRef};
use crate::formula::{Ctl, Ltl};
use crate::network::Network;
use crate::num::{Rational, display_rational};
use crate::pred::Pred;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    Real,
    Int,
    Bool,
}

impl VarKind {
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
    pub lo: Option<Rational>,
    pub hi: Option<Rational>,
}

impl Domain {
    pub fn contains(&self, v: &Rational) -> bool {
        self.lo.as_ref().is_none_or(|l| v >= l) && self.hi.as_ref().is_none_or(|h| v <= h)
    }

    pub fn describe(&self) -> String {
        let side = |b: &Option<Rational>, inf: &str| b.as_ref().map_or(inf.to_string(), display_rational);
        format!("[{}, {}]", side(&self.lo, "-inf"), side(&self.hi, "inf"))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct StateVar {
    pub name: String,
    pub kind: VarKind,
    pub domain: Domain,
}

/// A value the environment picks afresh at every step.
#[derive(Clone, Debug, PartialEq)]
pub enum NondetDomain {
    Interval(Rational, Rational),
    Set(Vec<Rational>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct NondetVar {
    pub name: String,
    pub domain: NondetDomain,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ActionKind {
    /// A real network output.
    Real,
    /// The index of the largest output (argmax), with a label per index.
    Index { labels: Vec<String> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct ActionVar {
    pub name: String,
    pub kind: ActionKind,
    /// The controller that sets it.
    pub controller: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NamedNetwork {
    pub name: String,
    pub network: Network,
}

/// Which network a controller runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Policy {
    Network(usize),
    /// `networks[v]` where `v` is the value of an integer state variable (VerticalCAS picks
    /// the network of the previous advisory).
    Select {
        by: usize,
        networks: Vec<usize>,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum ControllerOutput {
    /// Output i is action `actions[i]`.
    Actions(Vec<usize>),
    /// The argmax index of the outputs is the action (ties: the lowest index when simulating;
    /// solvers may return any maximal index, which they say).
    Argmax(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Controller {
    pub name: String,
    pub policy: Policy,
    /// The network's inputs as expressions of the state (and non-deterministic inputs): the
    /// observation, including any normalisation.
    pub inputs: Vec<Expr>,
    pub output: ControllerOutput,
}

/// One successor function of the environment. `guard` (over state, actions and non-deterministic
/// inputs) says when it exists; `label` restricts it to the steps where an argmax action takes a
/// given value (guarded commands of discrete policies).
#[derive(Clone, Debug, PartialEq)]
pub struct Branch {
    pub name: String,
    pub guard: Option<Pred>,
    pub label: Option<(usize, usize)>,
    /// One expression per state variable, in state order.
    pub updates: Vec<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Step {
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

#[derive(Clone, Debug, PartialEq)]
pub enum PropertyFormula {
    Ctl(Ctl),
    Ltl(Ltl),
    /// `G safe`-style invariance of a predicate (safety).
    Invariant(Pred),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Property {
    pub name: String,
    pub formula: PropertyFormula,
    /// The formula as written, for reports.
    pub text: String,
    /// The value of the horizon parameter `k` the formula was read with, when it has one.
    pub horizon: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct System {
    pub name: String,
    pub description: String,
    pub state: Vec<StateVar>,
    pub nondet: Vec<NondetVar>,
    pub actions: Vec<ActionVar>,
    pub constants: Vec<(String, Rational)>,
    pub networks: Vec<NamedNetwork>,
    pub controllers: Vec<Controller>,
    pub step: Step,
    pub init: Pred,
    pub safe: Option<Pred>,
    pub invariant: Option<Pred>,
    pub properties: Vec<Property>,
    pub domain_exit: DomainExit,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{location}: {message}")]
pub struct SystemError {
    pub location: String,
    pub message: String,
}

fn err(location: impl Into<String>, message: impl Into<String>) -> SystemError {
    SystemError { location: location.into(), message: message.into() }
}

impl System {
    pub fn state_names(&self) -> Vec<String> {
        self.state.iter().map(|v| v.name.clone()).collect()
    }

    pub fn action_names(&self) -> Vec<String> {
        self.actions.iter().map(|v| v.name.clone()).collect()
    }

    pub fn nondet_names(&self) -> Vec<String> {
        self.nondet.iter().map(|v| v.name.clone()).collect()
    }

    pub fn var_name(&self, v: VarRef) -> &str {
        match v {
            VarRef::State(i) => &self.state[i].name,
            VarRef::Action(i) => &self.actions[i].name,
            VarRef::Nondet(i) => &self.nondet[i].name,
        }
    }

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

    /// An engine's refusal of the activations it cannot handle, before it starts: `Err` names the
    /// first network and layer whose activation `ok` refuses, the engine, and what it handles
    /// (`handles`, in words). Every engine checks once, at its entry, so no unsupported
    /// activation reaches an encoding or an exact evaluation that would fail half-way.
    pub fn check_activations(
        &self,
        engine: &str,
        handles: &str,
        ok: impl Fn(&crate::network::Activation) -> bool,
    ) -> Result<(), String> {
        for n in &self.networks {
            if let Some((layer, act)) = n.network.first_activation_not(&ok) {
                return Err(format!(
                    "network '{}' (layer {layer}) has the activation {act}, which {engine} does not handle yet \
                     (it handles {handles})",
                    n.name
                ));
            }
        }
        Ok(())
    }

    /// Whether every controller is a single feed-forward network with real outputs and the step
    /// is one deterministic-or-nondet-input branch: the shape the bridge engine handles.
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
