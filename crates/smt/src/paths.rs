//! Z3 queries over runs of a discrete system: copies `s0, s1, ..` of the state (each a state of the
//! system: kinds and, unless domains are ignored, inside the domains), state predicates asserted on
//! a copy with a chosen truth value, copies linked by a named branch (its guard and update; the
//! label is the caller's business) or by one whole closed-loop step, and the controllers' argmax
//! choice encoded exactly on a copy (the network with every weight as its exact rational, ReLU as
//! `ite`, ties to the lowest index as [`trestle_ir::sim::argmax`]). The building block of the
//! CEGAR engine's abstract-transition, path and bounded-model-checking queries.
//!
//! Every copy is asserted to lie in the domains, so with `DomainExit::Drop` a successor outside
//! them does not exist, as the simulator says. The query is incremental (`push` / `pop`) and runs
//! in the calling thread's Z3 context; a satisfying model is read back as exact rationals (the
//! queries are linear, so models are rational).

use crate::config::CheckerConfig;
use crate::encode::{Scope, VarTerm, and, argmax_choice, num, or};
use crate::error::CheckError;
use crate::inductive::NetworkPhases;
use crate::monolithic::encode_network;
use crate::solve::{Outcome, Value, check_again, new_solver, value};
use trestle_core::Unknown;
use trestle_ir::network::Layer;
use trestle_ir::pred::Pred;
use trestle_ir::system::{ControllerOutput, DomainExit, Policy, System, VarKind};
use trestle_ir::{Interval, Rational, sim};
use z3::Solver;
use z3::ast::{Bool, Int, Real};

/// What a path query said.
#[derive(Clone, Debug, PartialEq)]
pub enum PathAnswer {
    /// A model: the values of every copy, in copy order, exact.
    Sat(Vec<Vec<Rational>>),
    Unsat,
    Unknown(Unknown),
}

/// An incremental query over copies of the state of a discrete system.
pub struct PathQuery<'s> {
    sys: &'s System,
    cfg: CheckerConfig,
    solver: Solver,
    states: Vec<Vec<VarTerm>>,
    /// The argmax actions of each copy, once the controllers are encoded on it, with the push
    /// depth of that encoding (a `pop` below it forgets it).
    actions: Vec<Option<(Vec<Real>, usize)>>,
    depth: usize,
    /// Per copy, the box of its domains (outward-rounded): where the network's ReLU phases are
    /// computed.
    boxes: Vec<Vec<Interval>>,
}

impl<'s> PathQuery<'s> {
    /// An empty query (no copies) over `sys`, with the limits of `cfg`.
    pub fn new(sys: &'s System, cfg: CheckerConfig) -> PathQuery<'s> {
        crate::memory::ensure_thread_context();
        let ints = sys.state.iter().any(|v| v.kind != VarKind::Real);
        // Observations may be piecewise linear (ite, min, max): still linear arithmetic.
        let solver = new_solver(&cfg, Some(if ints { "QF_LIRA" } else { "QF_LRA" }));
        PathQuery { sys, cfg, solver, states: Vec::new(), actions: Vec::new(), depth: 0, boxes: Vec::new() }
    }

    /// Declares the next copy `sK` of the state, a state of the system; returns its index.
    pub fn add_state(&mut self) -> usize {
        let k = self.states.len();
        let terms: Vec<VarTerm> =
            self.sys.state.iter().map(|v| VarTerm::new(&format!("s{k}.{}", v.name), v.kind != VarKind::Real)).collect();
        let zero = Rational::from_integer(0.into());
        let one = Rational::from_integer(1.into());
        for (v, t) in self.sys.state.iter().zip(&terms) {
            if v.kind == VarKind::Bool {
                self.solver.assert(crate::encode::in_range(&t.real, &zero, &one));
            }
            if self.sys.domain_exit != DomainExit::Ignore {
                if let Some(l) = &v.domain.lo {
                    self.solver.assert(t.real.ge(num(l)));
                }
                if let Some(h) = &v.domain.hi {
                    self.solver.assert(t.real.le(num(h)));
                }
            }
        }
        self.states.push(terms);
        self.actions.push(None);
        // The copy's domains (asserted above unless ignored), outward-rounded.
        let domains = self.sys.domain_exit != DomainExit::Ignore;
        let boxes = self
            .sys
            .state
            .iter()
            .map(|v| match v.kind {
                VarKind::Bool => Interval::new(0.0, 1.0),
                _ if !domains => Interval::ENTIRE,
                _ => Interval::new(
                    v.domain.lo.as_ref().map_or(f64::NEG_INFINITY, |q| Interval::of_rational(q).lo),
                    v.domain.hi.as_ref().map_or(f64::INFINITY, |q| Interval::of_rational(q).hi),
                ),
            })
            .collect();
        self.boxes.push(boxes);
        k
    }

    /// The phases of `net`'s neurons over the inputs' enclosures.
    fn phases(net: &trestle_ir::Network, input: Vec<Interval>) -> Option<NetworkPhases> {
        let mut x = input;
        let mut layers = Vec::new();
        for layer in &net.layers {
            let Layer::Dense(d) = layer else { return None };
            let mut z = Vec::with_capacity(d.weights.rows);
            for k in 0..d.weights.rows {
                let mut acc = Interval::point(d.bias[k]);
                for (w, xi) in d.weights.row(k).iter().zip(&x) {
                    if *w != 0.0 {
                        acc = acc.add(&Interval::point(*w).mul(xi));
                    }
                }
                z.push(acc);
            }
            layers.push((z.iter().map(|i| i.lo).collect(), z.iter().map(|i| i.hi).collect()));
            x = z.iter().map(|i| i.activate(&d.activation)).collect();
        }
        Some(NetworkPhases::of_bounds(net, &layers))
    }

    /// The number of copies declared.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    fn reals(&self, at: usize) -> Vec<Real> {
        self.states[at].iter().map(|t| t.real.clone()).collect()
    }

    fn pred_term(&self, at: usize, p: &Pred) -> Result<Bool, CheckError> {
        let state = self.reals(at);
        Scope { state: &state, action: &[], nondet: &[] }.pred(p)
    }

    /// Asserts that the state predicate `p` has the truth value `value` on copy `at`.
    pub fn assert_pred(&mut self, at: usize, p: &Pred, value: bool) -> Result<(), CheckError> {
        let t = self.pred_term(at, p)?;
        self.solver.assert(if value { t } else { t.not() });
        Ok(())
    }

    /// Asserts that the predicates do not take exactly the given truth values on copy `at` (blocks
    /// one truth vector when enumerating them).
    pub fn block(&mut self, at: usize, preds: &[Pred], values: &[bool]) -> Result<(), CheckError> {
        let mut same = Vec::with_capacity(preds.len());
        for (p, &v) in preds.iter().zip(values) {
            let t = self.pred_term(at, p)?;
            same.push(if v { t } else { t.not() });
        }
        self.solver.assert(and(same).not());
        Ok(())
    }

    /// Asserts that the predicates take one of the given truth vectors on copy `at`.
    pub fn assert_one_of(&mut self, at: usize, preds: &[Pred], vectors: &[Vec<bool>]) -> Result<(), CheckError> {
        let terms = preds.iter().map(|p| self.pred_term(at, p)).collect::<Result<Vec<_>, _>>()?;
        let options = vectors
            .iter()
            .map(|v| and(terms.iter().zip(v).map(|(t, &b)| if b { t.clone() } else { t.not() }).collect()))
            .collect();
        self.solver.assert(or(options));
        Ok(())
    }

    /// Asserts that copies `a` and `b` differ in some variable.
    pub fn assert_distinct(&mut self, a: usize, b: usize) {
        let diff = self.states[a].iter().zip(&self.states[b]).map(|(x, y)| x.real.eq(&y.real).not()).collect();
        self.solver.assert(or(diff));
    }

    /// The term "branch `branch` is enabled on copy `from` (its guard; not its label) and copy
    /// `to` is its update".
    fn branch_term(&self, from: usize, branch: usize, to: usize) -> Result<Bool, CheckError> {
        let br = &self.sys.step.branches[branch];
        let state = self.reals(from);
        let scope = Scope { state: &state, action: &[], nondet: &[] };
        if br.updates.len() != state.len() {
            return Err(CheckError::Dimension {
                what: format!("updates of branch '{}'", br.name),
                found: br.updates.len(),
                expected: state.len(),
            });
        }
        let mut c = Vec::new();
        if let Some(g) = &br.guard {
            c.push(scope.pred(g)?);
        }
        for (n, u) in self.states[to].iter().zip(&br.updates) {
            c.push(n.real.eq(scope.expr(u)?));
        }
        Ok(and(c))
    }

    /// Asserts that copy `to` is the successor of copy `from` under `branch` (guard and update;
    /// the label is not asserted: see [`PathQuery::assert_policy_picks`]).
    pub fn assert_branch(&mut self, from: usize, branch: usize, to: usize) -> Result<(), CheckError> {
        let t = self.branch_term(from, branch, to)?;
        self.solver.assert(t);
        Ok(())
    }

    /// Asserts that copy `to` is the successor of copy `from` under some branch (guard and
    /// update), whatever the policy picks: the step a lazily consulted policy is added to.
    pub fn assert_any_branch(&mut self, from: usize, to: usize) -> Result<(), CheckError> {
        let options =
            (0..self.sys.step.branches.len()).map(|b| self.branch_term(from, b, to)).collect::<Result<Vec<_>, _>>()?;
        self.solver.assert(or(options));
        Ok(())
    }

    /// Asserts that no step from a copy `from` satisfying every predicate of `region` to copy
    /// `to` goes through one of `branches` (a fact learned about the policy: it never picks
    /// their label there).
    pub fn forbid_branches(
        &mut self,
        from: usize,
        to: usize,
        region: &[Pred],
        branches: &[usize],
    ) -> Result<(), CheckError> {
        let inside = region.iter().map(|p| self.pred_term(from, p)).collect::<Result<Vec<_>, _>>()?;
        let taken = branches.iter().map(|&b| self.branch_term(from, b, to)).collect::<Result<Vec<_>, _>>()?;
        self.solver.assert(and(vec![and(inside), or(taken)]).not());
        Ok(())
    }

    /// Encodes the controllers on copy `at` once; returns their actions.
    fn actions_of(&mut self, at: usize) -> Result<Vec<Real>, CheckError> {
        if let Some((a, _)) = &self.actions[at] {
            return Ok(a.clone());
        }
        let sys = self.sys;
        let state = self.reals(at);
        let scope = Scope { state: &state, action: &[], nondet: &[] };
        let mut actions: Vec<Option<Real>> = vec![None; sys.actions.len()];
        for (ci, c) in sys.controllers.iter().enumerate() {
            let ControllerOutput::Argmax(a) = c.output else {
                return Err(CheckError::Unsupported(format!("controller '{}' has real outputs, not argmax", c.name)));
            };
            let Policy::Network(n) = c.policy else {
                return Err(CheckError::Unsupported(format!("controller '{}' selects among networks", c.name)));
            };
            let input: Vec<Real> = c.inputs.iter().map(|e| scope.expr(e)).collect::<Result<_, _>>()?;
            let env = trestle_ir::Env::new(&self.boxes[at], &[], &[]);
            let enclosure: Vec<Interval> = c.inputs.iter().map(|e| e.eval_interval(&env)).collect();
            let net = &sys.networks[n].network;
            let phases = if enclosure.iter().all(|i| i.lo.is_finite() && i.hi.is_finite()) {
                Self::phases(net, enclosure)
            } else {
                None
            };
            let out = encode_network(net, &format!("s{at}.c{ci}"), input, phases.as_ref(), &self.solver)?;
            let index = Int::new_const(format!("s{at}.a.{}", sys.actions[a].name));
            let index = Real::from_int(&index);
            self.solver.assert(argmax_choice(&index, &out));
            actions[a] = Some(index);
        }
        let actions: Vec<Real> = actions
            .into_iter()
            .enumerate()
            .map(|(i, a)| {
                a.ok_or_else(|| {
                    CheckError::Unsupported(format!("action '{}' is set by no controller", sys.actions[i].name))
                })
            })
            .collect::<Result<_, _>>()?;
        self.actions[at] = Some((actions.clone(), self.depth));
        Ok(actions)
    }

    /// Encodes the controllers on copy `at` (once; later picks reuse the encoding while it is not
    /// popped). Call it before a `push` to share one network copy between several picks.
    pub fn encode_policy(&mut self, at: usize) -> Result<(), CheckError> {
        self.actions_of(at).map(|_| ())
    }

    /// Asserts that the controllers, run on copy `at`, pick value `value` of argmax action `action`.
    pub fn assert_policy_picks(&mut self, at: usize, action: usize, value: usize) -> Result<(), CheckError> {
        let a = self.actions_of(at)?;
        self.solver.assert(a[action].eq(num(&Rational::from_integer(value.into()))));
        Ok(())
    }

    /// Asserts one closed-loop step from copy `from` to copy `to`: the controllers run on `from`
    /// and some branch whose label they picked (or that has none) is enabled and gives `to`.
    pub fn assert_step(&mut self, from: usize, to: usize) -> Result<(), CheckError> {
        let actions = self.actions_of(from)?;
        let mut options = Vec::new();
        for (b, br) in self.sys.step.branches.iter().enumerate() {
            let mut c = vec![self.branch_term(from, b, to)?];
            if let Some((a, v)) = br.label {
                c.push(actions[a].eq(num(&Rational::from_integer(v.into()))));
            }
            options.push(and(c));
        }
        self.solver.assert(or(options));
        Ok(())
    }

    pub fn push(&mut self) {
        self.solver.push();
        self.depth += 1;
    }

    /// Drops everything asserted since the matching `push` (copies declared since stay declared:
    /// their domain constraints were popped too, so declare copies before pushing).
    pub fn pop(&mut self) {
        self.solver.pop(1);
        self.depth -= 1;
        for a in &mut self.actions {
            if a.as_ref().is_some_and(|(_, d)| *d > self.depth) {
                *a = None;
            }
        }
    }

    /// Runs `check-sat`; a model is read back as exact rationals, integral where the kinds say so.
    pub fn check(&mut self) -> PathAnswer {
        match check_again(&self.solver, &self.cfg) {
            Outcome::Unsat => PathAnswer::Unsat,
            Outcome::Unknown(u) => PathAnswer::Unknown(u),
            Outcome::Sat(model) => {
                let mut out = Vec::with_capacity(self.states.len());
                for (k, copy) in self.states.iter().enumerate() {
                    let mut values = Vec::with_capacity(copy.len());
                    for (v, t) in self.sys.state.iter().zip(copy) {
                        match value(&model, t) {
                            Ok(Value::Exact(q)) if sim::fits_kind(v, &q) => values.push(q),
                            Ok(other) => {
                                return PathAnswer::Unknown(Unknown::Solver(format!(
                                    "copy {k}: the model's value {other:?} of '{}' is not a value of its kind",
                                    v.name
                                )));
                            }
                            Err(e) => return PathAnswer::Unknown(Unknown::Solver(e)),
                        }
                    }
                    out.push(values);
                }
                PathAnswer::Sat(out)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::expr::{Expr, VarRef};
    use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, Network};
    use trestle_ir::pred::CmpOp;
    use trestle_ir::system::{ActionKind, ActionVar, Branch, Controller, Domain, NamedNetwork, StateVar, Step};

    fn q(k: i64) -> Rational {
        Rational::from_integer(k.into())
    }

    /// x in [0, 4]; outputs [x, 2] with labels [up, stay]: up when x >= 2 (tie at 2 to index 0).
    /// up: x' = x + 1; stay: x' = x.
    fn counter() -> System {
        let x = Expr::Var(VarRef::State(0));
        let net = Network::new(
            "inline:n",
            vec![Layer::Dense(DenseLayer {
                weights: Matrix::from_rows(&[vec![1.0], vec![0.0]]),
                bias: vec![0.0, 2.0],
                activation: Activation::Identity,
            })],
        )
        .unwrap();
        System {
            name: "counter".into(),
            description: String::new(),
            state: vec![StateVar {
                name: "x".into(),
                kind: VarKind::Int,
                domain: Domain { lo: Some(q(0)), hi: Some(q(4)) },
            }],
            nondet: vec![],
            actions: vec![ActionVar {
                name: "a".into(),
                kind: ActionKind::Index { labels: vec!["up".into(), "stay".into()] },
                controller: 0,
            }],
            constants: vec![],
            networks: vec![NamedNetwork { name: "n".into(), network: net }],
            controllers: vec![Controller {
                name: "c".into(),
                policy: Policy::Network(0),
                inputs: vec![x.clone()],
                output: ControllerOutput::Argmax(0),
            }],
            step: Step {
                branches: vec![
                    Branch {
                        name: "up".into(),
                        guard: None,
                        label: Some((0, 0)),
                        updates: vec![Expr::Add(Box::new(x.clone()), Box::new(Expr::Const(q(1))))],
                    },
                    Branch { name: "stay".into(), guard: None, label: Some((0, 1)), updates: vec![x.clone()] },
                ],
            },
            init: Pred::Cmp(x.clone(), CmpOp::Eq, Expr::Const(q(2))),
            safe: None,
            invariant: None,
            properties: vec![],
            domain_exit: DomainExit::Drop,
        }
    }

    fn le(k: i64) -> Pred {
        Pred::Cmp(Expr::Var(VarRef::State(0)), CmpOp::Le, Expr::Const(q(k)))
    }

    #[test]
    fn the_policy_is_exact_at_ties_and_domains_drop_successors() {
        let sys = counter();
        let mut pq = PathQuery::new(&sys, CheckerConfig::new());
        let (s0, s1) = (pq.add_state(), pq.add_state());
        pq.assert_policy_picks(s0, 0, 0).unwrap();
        pq.assert_branch(s0, 0, s1).unwrap();
        // up is picked exactly for x >= 2 (x = 2 a tie won by index 0); x = 4 has no successor.
        pq.push();
        pq.assert_pred(s0, &le(1), true).unwrap();
        assert_eq!(pq.check(), PathAnswer::Unsat);
        pq.pop();
        pq.push();
        pq.assert_pred(s0, &le(2), true).unwrap();
        assert_eq!(pq.check(), PathAnswer::Sat(vec![vec![q(2)], vec![q(3)]]));
        pq.pop();
        pq.assert_pred(s0, &le(3), false).unwrap();
        assert_eq!(pq.check(), PathAnswer::Unsat);
    }

    #[test]
    fn closed_loop_steps_and_blocking_enumerate_runs() {
        let sys = counter();
        let mut pq = PathQuery::new(&sys, CheckerConfig::new());
        let s: Vec<usize> = (0..3).map(|_| pq.add_state()).collect();
        pq.assert_pred(s[0], &sys.init, true).unwrap();
        pq.assert_step(s[0], s[1]).unwrap();
        pq.assert_step(s[1], s[2]).unwrap();
        assert_eq!(pq.check(), PathAnswer::Sat(vec![vec![q(2)], vec![q(3)], vec![q(4)]]));
        pq.block(s[2], &[le(3)], &[false]).unwrap();
        assert_eq!(pq.check(), PathAnswer::Unsat);
    }
}
