//! The paper's baseline: `Inv /\ Next => Inv'` with every controller network encoded exactly
//! (ReLU as `ite`), observation expressions as the network inputs. Expected to be slow beyond
//! small networks; always run it with a timeout. The same query restricted to a box `p`, with the
//! ReLUs whose sign is fixed on `p` encoded linearly ([`InductiveQuery`]), is the bridge engine's
//! exact leaf decision.
//!
//! Argmax outputs follow the simulator's rule exactly: the largest output, the lowest index among
//! ties (`out_k > out_j` for `j < k`, `out_k >= out_j` for `j > k`), so a system that is safe under
//! that rule is proven, and one that is unsafe under it is refuted with a witness that replays.
//! Select policies: the selector value `v` picks network `v`; a value that picks no network leaves
//! the actions unconstrained (over-approximation).

use crate::bridge::transition_witness;
use crate::config::CheckerConfig;
use crate::dump::Dumper;
use crate::encode::{Scope, Vars, and, argmax_choice, assert_step, in_box, int_num, num, num_f64};
use crate::error::CheckError;
use crate::inductive::{InductiveQuery, NetworkPhases, Phase};
use crate::solve::{Outcome, check};
use trestle_core::Answer;
use trestle_core::replay_transition;
use trestle_ir::network::{Activation, Layer, Network};
use trestle_ir::system::{ControllerOutput, Policy};
use trestle_ir::{Pred, Rational, System};
use z3::Solver;
use z3::ast::{Bool, Real};

/// Asserts the layers of `net` on `input`, one variable per neuron (`nn.NAME.L.K`); returns the
/// output terms. Piecewise-linear activations are encoded exactly, the weights and the
/// activations' parameters as exact rationals: ReLU `ite(z >= 0, z, 0)`, leaky ReLU
/// `ite(z >= 0, z, alpha z)`, clip `ite(z <= lo, lo, ite(z >= hi, hi, z))` (an infinite bound
/// leaves its side out). A neuron whose phase is known (sound on the whole query) is encoded as
/// the piece it follows there. Tanh and sigmoid have no exact encoding in linear real arithmetic:
/// [`CheckError::Unsupported`], naming the layer.
pub(crate) fn encode_network(
    net: &Network,
    name: &str,
    input: Vec<Real>,
    phases: Option<&NetworkPhases>,
    solver: &Solver,
) -> Result<Vec<Real>, CheckError> {
    let zero = num(&Rational::from_integer(0.into()));
    let mut x = input;
    for (l, layer) in net.layers.iter().enumerate() {
        let Layer::Dense(d) = layer else {
            return Err(CheckError::Unsupported(format!("network '{name}' is recurrent")));
        };
        let mut out = Vec::with_capacity(d.weights.rows);
        for k in 0..d.weights.rows {
            let mut terms = vec![num_f64(d.bias[k])];
            for (w, xi) in d.weights.row(k).iter().zip(&x) {
                if *w != 0.0 {
                    terms.push(num_f64(*w) * xi);
                }
            }
            let z = Real::add(&terms);
            let v = Real::new_const(format!("nn.{name}.{l}.{k}"));
            let phase = phases.and_then(|p| p.0.get(l)).and_then(|p| p.get(k)).copied();
            let value = match (d.activation, phase) {
                (Activation::Identity, _) => z,
                (Activation::Tanh | Activation::Sigmoid, _) => {
                    return Err(CheckError::Unsupported(format!(
                        "network {} (layer {l}): {} has no exact encoding in linear real arithmetic; no engine \
                         decides networks with tanh or sigmoid exactly yet",
                        net.source,
                        d.activation.name()
                    )));
                }
                (_, Some(Phase::Active)) => z,
                (Activation::Relu, Some(Phase::Inactive)) => zero.clone(),
                (Activation::LeakyRelu { alpha }, Some(Phase::Inactive)) => num_f64(alpha) * &z,
                (Activation::Clip { lo, .. }, Some(Phase::Inactive)) if lo.is_finite() => num_f64(lo),
                (Activation::Clip { hi, .. }, Some(Phase::Saturated)) if hi.is_finite() => num_f64(hi),
                (Activation::Relu, _) => z.ge(&zero).ite(&z, &zero),
                (Activation::LeakyRelu { alpha }, _) => z.ge(&zero).ite(&z, &(num_f64(alpha) * &z)),
                (Activation::Clip { lo, hi }, _) => {
                    let mut y = z.clone();
                    if hi.is_finite() {
                        let hi = num_f64(hi);
                        y = z.ge(&hi).ite(&hi, &y);
                    }
                    if lo.is_finite() {
                        let lo = num_f64(lo);
                        y = z.le(&lo).ite(&lo, &y);
                    }
                    y
                }
            };
            solver.assert(v.eq(value));
            out.push(v);
        }
        x = out;
    }
    Ok(x)
}

/// The constraint tying a controller's actions to one network's outputs.
fn outputs_to_actions(output: &ControllerOutput, out: &[Real], action: &[Real]) -> Bool {
    match output {
        ControllerOutput::Actions(ids) => and(ids.iter().zip(out).map(|(&a, o)| action[a].eq(o)).collect()),
        ControllerOutput::Argmax(a) => argmax_choice(&action[*a], out),
    }
}

/// Asserts `a = f(s, n)`: every controller's network(s) on its observation, the outputs tied to
/// the actions (a selector value that picks no network leaves them unconstrained). `phases_of(c, k)`
/// gives the phases of network `k` of controller `c`, when known on the whole query.
pub(crate) fn assert_controllers<'p>(
    sys: &System,
    vars: &Vars,
    phases_of: &dyn Fn(usize, usize) -> Option<&'p NetworkPhases>,
    solver: &Solver,
) -> Result<(), CheckError> {
    let (state, action, nondet) = (Vars::reals(&vars.state), Vars::reals(&vars.action), Vars::reals(&vars.nondet));
    let obs_scope = Scope { state: &state, action: &[], nondet: &nondet };
    for (ci, c) in sys.controllers.iter().enumerate() {
        let input: Vec<Real> = c.inputs.iter().map(|e| obs_scope.expr(e)).collect::<Result<_, _>>()?;
        match &c.policy {
            Policy::Network(n) => {
                let phases = phases_of(ci, 0);
                let out = encode_network(&sys.networks[*n].network, &format!("c{ci}"), input, phases, solver)?;
                solver.assert(outputs_to_actions(&c.output, &out, &action));
            }
            Policy::Select { by, networks } => {
                let selector = vars.state[*by].int.as_ref().ok_or_else(|| {
                    CheckError::Unsupported(format!("controller '{}': the selector is not an int variable", c.name))
                })?;
                for (k, n) in networks.iter().enumerate() {
                    let name = format!("c{ci}.n{k}");
                    let phases = phases_of(ci, k);
                    let out = encode_network(&sys.networks[*n].network, &name, input.clone(), phases, solver)?;
                    solver.assert(selector.eq(int_num(k)).implies(outputs_to_actions(&c.output, &out, &action)));
                }
            }
        }
    }
    Ok(())
}

/// `(premise, conclusion)` are `q.inv` on the state and on the successor as Z3 sees them: `q.inv`
/// itself, or cut to the same sets on the states the query constrains
/// ([`crate::Z3Backend::narrowed_by`]), or `q.target` on the successor when given; a model is
/// replayed against `q.inv` (and `q.target`).
pub(crate) fn check_inductive(
    sys: &System,
    q: &InductiveQuery<'_>,
    (premise, conclusion): (&Pred, &Pred),
    cfg: &CheckerConfig,
    dumper: Option<&mut Dumper>,
) -> Result<Answer, CheckError> {
    let inv = q.inv;
    let vars = Vars::declare(sys, true);
    let solver = crate::solve::new_solver(cfg, crate::encode::logic(sys, true, &[premise, conclusion]));
    let state = Vars::reals(&vars.state);
    vars.assert_state_space(sys, &solver);
    solver.assert(Scope { state: &state, action: &[], nondet: &[] }.pred(premise)?);
    if let Some(region) = q.region {
        solver.assert(in_box(&state, region));
    }
    vars.assert_nondet_domains(sys, &solver);
    assert_controllers(sys, &vars, &|c, k| q.phases_of(c, k), &solver)?;
    let step = assert_step(sys, &vars, &solver)?;
    solver.assert(Scope { state: &step.next, action: &[], nondet: &[] }.pred(conclusion)?.not());
    let sizes: Vec<String> = sys.networks.iter().map(|n| format!("{}: {:?}", n.name, n.network.sizes())).collect();
    let on = q.region.map(|r| format!(" on p = {:?} x {:?}", r.lo, r.hi)).unwrap_or_default();
    let comment = format!(
        "trestle-smt monolithic inductiveness query on system '{}'{on}: Inv /\\ Next => Inv'\nnetworks {}\nunsat = valid",
        sys.name,
        sizes.join(", ")
    );
    Ok(match check(&solver, cfg, dumper, &comment)? {
        Outcome::Unsat => Answer::Valid,
        Outcome::Unknown(r) => Answer::Unknown(r),
        Outcome::Sat(model) => transition_witness(sys, &solver, cfg, model, &vars, &step, |w| {
            replay_transition(sys, inv, q.target.unwrap_or(inv), w)
        }),
    })
}
