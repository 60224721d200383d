//! The discrete systems the CEGAR engine (and its BMC and explicit baselines) take: the IR's
//! guarded commands over bounded integer variables, checked once here.
//!
//! * State: int (or bool) variables, each with a finite domain; no non-deterministic inputs.
//! * Policy: one controller, a feed-forward ReLU network whose argmax over the labels picks the
//!   label; ties go to the lowest index (`trestle_ir::sim::argmax`, and the same rule in Z3).
//! * Operators: the `[[command]]`s, each with a label; several may share one (state-dependent
//!   effects, outcome non-determinism). Guards are Boolean combinations of linear comparisons,
//!   updates affine (so weakest preconditions are syntactic substitutions).
//! * A successor outside a domain does not exist (`on_domain_exit = "drop"`): the operator is not
//!   applicable there. `error` is refused (a run ending in a model error is not a state of the
//!   system to reason about), as is `ignore` (the state space must be finite).
//! * Start condition = `init`, unsafety = `not safe`.
//! * A state where the policy's label enables no operator has no successor (the run stops there,
//!   which cannot make it unsafe).

use crate::atom::{Affine, Atom, atoms_of};
use crate::error::CegarError;
use trestle_ir::Rational;
use trestle_ir::expr::Expr;
use trestle_ir::network::Layer;
use trestle_ir::pred::{CmpOp, Pred};
use trestle_ir::system::{ActionKind, ControllerOutput, DomainExit, Policy, System, VarKind};

/// One operator: a branch of the IR's step with its label.
#[derive(Clone, Debug)]
pub struct Operator {
    /// Index into `System::step.branches`.
    pub branch: usize,
    pub name: String,
    /// The label's index among the argmax action's labels.
    pub label: usize,
    pub guard: Pred,
    /// Where the operator has a successor: its guard, and its update inside every domain (the
    /// successors outside are dropped). What refinement asks the path to reach.
    pub enabled: Pred,
    pub update: Vec<Affine>,
}

/// A validated discrete system.
#[derive(Clone, Debug)]
pub struct Discrete<'s> {
    pub sys: &'s System,
    pub labels: Vec<String>,
    /// The argmax action (index into `System::actions`).
    pub action: usize,
    /// The policy's network (index into `System::networks`).
    pub network: usize,
    pub operators: Vec<Operator>,
    pub start: Pred,
    pub unsafe_: Pred,
}

impl<'s> Discrete<'s> {
    pub fn new(sys: &'s System) -> Result<Discrete<'s>, CegarError> {
        let bad = |m: String| Err(CegarError::Unsupported(m));
        if !sys.nondet.is_empty() {
            return bad("the system has non-deterministic inputs; discrete policies take their non-determinism from several commands with one label".into());
        }
        for v in &sys.state {
            if v.kind == VarKind::Real {
                return bad(format!(
                    "state variable '{}' is real; discrete systems have int (or bool) variables",
                    v.name
                ));
            }
            let finite = v.domain.lo.is_some() && v.domain.hi.is_some();
            if !finite && v.kind == VarKind::Int {
                return bad(format!("int variable '{}' needs a bounded domain [lo, hi]", v.name));
            }
        }
        match sys.domain_exit {
            DomainExit::Drop => {}
            DomainExit::Error => {
                return bad("set `on_domain_exit = \"drop\"` in [system]: an update leaving a domain must mean that successor does not exist".into());
            }
            DomainExit::Ignore => {
                return bad("`on_domain_exit = \"ignore\"` leaves the state space unbounded; use \"drop\"".into());
            }
        }
        let [c] = sys.controllers.as_slice() else {
            return bad(format!("discrete systems have exactly one controller (found {})", sys.controllers.len()));
        };
        let (ControllerOutput::Argmax(action), Policy::Network(net)) = (&c.output, &c.policy) else {
            return bad(format!("controller '{}' must pick a label by the argmax of one network", c.name));
        };
        if sys.networks[*net].network.layers.iter().any(|l| !matches!(l, Layer::Dense(_))) {
            return bad(format!(
                "network '{}' is recurrent; discrete policies are feed-forward",
                sys.networks[*net].name
            ));
        }
        // The policy is encoded in Z3 and runs are evaluated exactly: piecewise-linear activations.
        sys.check_piecewise_linear("the discrete-policy engines (CEGAR, BMC, explicit)")
            .map_err(CegarError::NotPiecewiseLinear)?;
        let ActionKind::Index { labels } = &sys.actions[*action].kind else {
            return bad("the policy's action is not an argmax label".into());
        };
        let n = sys.state.len();
        let linear = |what: &str, p: &Pred| {
            atoms_of(p, n).map(|_| ()).map_err(|e| {
                CegarError::Unsupported(format!("{what}: {} (guards, start and unsafety must be linear)", e.0))
            })
        };
        let mut operators = Vec::new();
        for (b, br) in sys.step.branches.iter().enumerate() {
            let Some((a, label)) = br.label else {
                return bad(format!("branch '{}' has no label: write the step as [[command]]s", br.name));
            };
            if a != *action {
                return bad(format!("command '{}' is labelled by another action", br.name));
            }
            let guard = br.guard.clone().unwrap_or(Pred::True);
            linear(&format!("the guard of command '{}'", br.name), &guard)?;
            let update = br
                .updates
                .iter()
                .zip(&sys.state)
                .map(|(u, v)| {
                    Affine::of(u, n).ok_or_else(|| {
                        CegarError::Unsupported(format!(
                            "command '{}': the update of '{}' is not affine",
                            br.name, v.name
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let mut enabled = vec![guard.clone()];
            for (u, v) in br.updates.iter().zip(&sys.state) {
                for (op, bound) in [(CmpOp::Ge, &v.domain.lo), (CmpOp::Le, &v.domain.hi)] {
                    if let Some(c) = bound {
                        enabled.push(Pred::Cmp(u.clone(), op, Expr::Const(c.clone())));
                    }
                }
            }
            let enabled = Pred::And(enabled);
            operators.push(Operator { branch: b, name: br.name.clone(), label, guard, enabled, update });
        }
        let Some(safe) = &sys.safe else {
            return Err(CegarError::NoSafe);
        };
        linear("init", &sys.init)?;
        linear("safe", safe)?;
        Ok(Discrete {
            sys,
            labels: labels.clone(),
            action: *action,
            network: *net,
            operators,
            start: sys.init.clone(),
            unsafe_: Pred::Not(Box::new(safe.clone())),
        })
    }

    /// An operator whose update may give an int variable a non-integral value (`x := x/2`): such
    /// a successor is not a state and is dropped, but whether it is depends on divisibility, which
    /// no linear predicate expresses, so CEGAR's abstraction cannot tell where the operator is
    /// enabled. Named for the refusal; `None` when every update has integer coefficients (then
    /// integral states have integral successors).
    pub fn non_integral_update(&self) -> Option<String> {
        let integer = |r: &Rational| r.is_integer();
        self.operators.iter().find_map(|op| {
            op.update.iter().zip(&self.sys.state).find_map(|(u, v)| {
                let integral = u.coeffs.iter().all(integer) && integer(&u.constant);
                (!integral).then(|| format!("command '{}': the update of '{}'", op.name, v.name))
            })
        })
    }

    /// The successor of `state` under operator `op` when its guard holds (domains not checked).
    pub fn apply(&self, op: &Operator, state: &[Rational]) -> Vec<Rational> {
        op.update.iter().map(|u| u.eval(state)).collect()
    }

    /// The atoms of a predicate (validated linear at construction).
    pub fn atoms(&self, p: &Pred) -> Vec<Atom> {
        atoms_of(p, self.sys.state.len()).expect("predicates of a validated system are linear")
    }
}
