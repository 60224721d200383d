//! Recurrent controllers as memoryless ones: the hidden states become state variables, every
//! recurrent network a feed-forward one that reads the previous hidden state as inputs and
//! returns the next one as outputs, and the step copies those outputs into the new state
//! variables. The lifted system has exactly the runs of the original (states extended by the
//! hidden states), so the engines written for memoryless systems (the bridge engine, invariant
//! synthesis) apply to memoryful ones unchanged.
//!
//! Exactness: every weight of a lifted network is a weight of the original, its negation, or the
//! +-1 of a value passed through, and no two weights are ever summed into one. A value carried
//! through a ReLU layer passes as one unit when it is a ReLU output (`relu(v) = v` for `v >= 0`)
//! and as the pair `relu(v) - relu(-v) = v` otherwise (the previous hidden states, which the
//! lifted state space does not constrain), so the lifted network computes the original one's
//! outputs and hidden states exactly on every input (in f64 the terms of a sum come in another
//! order, so results may differ in the last bit, as any two f64 evaluations of one network may;
//! verdicts never rest on f64 evaluation).
//!
//! A hidden unit whose previous value no unit reads (its column of the recurrent weights is zero)
//! is computed but not kept as a state variable.
//!
//! Other activations: a non-negative carried value passes one unit through any layer whose
//! activation is the identity on `[0, +inf)` (leaky ReLU, a clip with `lo <= 0` and no upper
//! bound); a value carried through a layer with any other activation (tanh, sigmoid, a bounded
//! clip, or a leaky ReLU on a value of either sign) has no exact pass-through, and lifting such a
//! network is refused ([`lift_network`] says which layer), never approximated.

use crate::expr::{Expr, VarRef};
use crate::network::{Activation, DenseLayer, Layer, Matrix, Network};
use crate::num::Rational;
use crate::pred::{CmpOp, Pred};
use crate::system::{
    ActionKind, ActionVar, Controller, ControllerOutput, Domain, NamedNetwork, Policy, StateVar, System, SystemError,
    VarKind,
};
use num_traits::Zero;

/// One hidden unit kept as a state variable of the lifted system.
#[derive(Clone, Debug, PartialEq)]
pub struct HiddenVar {
    /// Index of the state variable in the lifted system.
    pub state: usize,
    /// Which controller, which of its network's recurrent layers and which unit.
    pub controller: usize,
    /// The recurrent layer, counted among the network's recurrent layers only (0: the first one).
    pub layer: usize,
    /// The unit (neuron) within that layer.
    pub unit: usize,
}

/// A system with its recurrent controllers lifted.
#[derive(Clone, Debug)]
pub struct Lifted {
    /// The memoryless system: the original state variables first (same indices), then one per
    /// kept hidden unit; Init adds "every hidden unit is 0"; Safe and the candidate invariant are
    /// the original ones; no properties.
    pub system: System,
    /// The kept hidden units, in the order of their state variables (after the original ones).
    pub hidden: Vec<HiddenVar>,
}

/// The units of each recurrent layer whose previous value some unit reads.
pub fn read_hidden_units(net: &Network) -> Vec<Vec<usize>> {
    net.layers
        .iter()
        .filter_map(|l| match l {
            Layer::Recurrent(r) => {
                let u = &r.recurrent_weights;
                Some((0..u.cols).filter(|&i| (0..u.rows).any(|o| u.get(o, i) != 0.0)).collect())
            }
            Layer::Dense(_) => None,
        })
        .collect()
}

/// What a lifted network returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Head {
    /// The original outputs, then the next values of the kept hidden units.
    Both,
    /// The original outputs only (for an argmax controller, whose outputs are all compared).
    Outputs,
    /// The next values of the kept hidden units only.
    Hidden,
}

/// A value carried alongside a layer's own units: `sum coef * unit` of the current stream.
#[derive(Clone, Debug)]
struct Carried {
    terms: Vec<(usize, f64)>,
    /// Known to be non-negative (a ReLU output): it passes a ReLU layer as one unit.
    nonneg: bool,
    /// `Prev(k, j)`: the previous value of kept unit `j` of recurrent layer `k` (an input);
    /// `Next(k, j)`: its new value.
    role: Role,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Prev(usize, usize),
    Next(usize, usize),
}

/// The feed-forward network with inputs `[original inputs; previous kept hidden units (layer by
/// layer)]` and the outputs `head` says, computing exactly what `net` computes (module docs), or
/// why a value cannot be carried through one of its layers exactly.
pub fn lift_network(net: &Network, head: Head) -> Result<Network, String> {
    let kept = read_hidden_units(net);
    let n_in = net.input_dim();
    let mut carried = Vec::new();
    let mut width = n_in;
    for (k, units) in kept.iter().enumerate() {
        for j in 0..units.len() {
            carried.push(Carried { terms: vec![(width, 1.0)], nonneg: false, role: Role::Prev(k, j) });
            width += 1;
        }
    }
    // The stream of the current layer: its own units first (`main` of them), then carried rows.
    let mut main = n_in;
    let mut layers = Vec::new();
    let mut k = 0;
    for (l, layer) in net.layers.iter().enumerate() {
        let (w, b, act, rec) = match layer {
            Layer::Dense(d) => (&d.weights, &d.bias, d.activation, None),
            Layer::Recurrent(r) => (&r.input_weights, &r.bias, r.activation, Some(&r.recurrent_weights)),
        };
        let width_in = width;
        let mut rows: Vec<Vec<f64>> = Vec::new();
        let mut bias = b.clone();
        for o in 0..w.rows {
            let mut row = vec![0.0; width];
            row[..main].copy_from_slice(w.row(o));
            if let Some(u) = rec {
                for c in &carried {
                    if let Role::Prev(kk, j) = c.role
                        && kk == k
                    {
                        let weight = u.get(o, kept[k][j]);
                        for &(unit, coef) in &c.terms {
                            // `coef` is +-1: the product is exact, and every unit appears once.
                            row[unit] = weight * coef;
                        }
                    }
                }
            }
            rows.push(row);
        }
        let mut next_carried = Vec::new();
        for c in carried.iter().filter(|c| !matches!(c.role, Role::Prev(kk, _) if rec.is_some() && kk == k)) {
            let mut unit_row = |sign: f64| {
                let mut row = vec![0.0; width];
                for &(unit, coef) in &c.terms {
                    row[unit] = sign * coef;
                }
                rows.push(row);
                bias.push(0.0);
                rows.len() - 1
            };
            let identity_on_nonneg = act.piece_on(0.0, f64::INFINITY) == Some(crate::network::Piece::IDENTITY);
            let (terms, nonneg) = match act {
                Activation::Identity => (vec![(unit_row(1.0), 1.0)], c.nonneg),
                _ if c.nonneg && identity_on_nonneg => (vec![(unit_row(1.0), 1.0)], true),
                Activation::Relu => {
                    let pos = unit_row(1.0);
                    let neg = unit_row(-1.0);
                    (vec![(pos, 1.0), (neg, -1.0)], false)
                }
                _ => {
                    return Err(format!(
                        "layer {l} of {} has the activation {act}, through which a hidden state (of either sign, \
                         or clipped) cannot be carried exactly: only identity and ReLU layers carry any value",
                        net.source
                    ));
                }
            };
            next_carried.push(Carried { terms, nonneg, role: c.role });
        }
        if rec.is_some() {
            for (j, &unit) in kept[k].iter().enumerate() {
                next_carried.push(Carried {
                    terms: vec![(unit, 1.0)],
                    nonneg: act.output_is_nonnegative(),
                    role: Role::Next(k, j),
                });
            }
            k += 1;
        }
        main = w.rows;
        width = rows.len();
        carried = next_carried;
        layers.push((rows, bias, act, width_in));
    }
    // The outputs as combinations of the last stream's units.
    let mut outputs: Vec<Vec<(usize, f64)>> = Vec::new();
    if head != Head::Hidden {
        outputs.extend((0..main).map(|o| vec![(o, 1.0)]));
    }
    if head != Head::Outputs {
        outputs.extend(carried.iter().filter(|c| matches!(c.role, Role::Next(..))).map(|c| c.terms.clone()));
    }
    let single = |o: &Vec<(usize, f64)>| o.len() == 1 && o[0].1 == 1.0;
    if outputs.iter().all(single) {
        // A selection of the last layer's rows (a row may be taken twice).
        let (rows, bias, act, width_in) = layers.pop().expect("a network has layers");
        let pick: Vec<usize> = outputs.iter().map(|o| o[0].0).collect();
        let picked = (pick.iter().map(|&r| rows[r].clone()).collect(), pick.iter().map(|&r| bias[r]).collect());
        layers.push((picked.0, picked.1, act, width_in));
    } else {
        let rows = outputs
            .iter()
            .map(|o| {
                let mut row = vec![0.0; width];
                for &(unit, coef) in o {
                    row[unit] = coef;
                }
                row
            })
            .collect();
        layers.push((rows, vec![0.0; outputs.len()], Activation::Identity, width));
    }
    let layers = layers
        .into_iter()
        .map(|(rows, bias, activation, cols)| {
            let weights = Matrix::new(rows.len(), cols, rows.concat());
            Layer::Dense(DenseLayer { weights, bias, activation })
        })
        .collect();
    Ok(Network {
        source: format!("{} (hidden state lifted)", net.source),
        layers,
        notes: net.notes.clone(),
        trailing_softmax: net.trailing_softmax.clone(),
    })
}

/// The system with every recurrent controller made memoryless (module docs). Controllers with
/// real outputs run one lifted network returning outputs and hidden states; an argmax controller
/// keeps its outputs (all of them are compared) and gains a second controller, `NAME.hidden`,
/// running the lifted network's hidden head on the same inputs.
pub fn lift_hidden_state(sys: &System) -> Result<Lifted, SystemError> {
    let mut out = sys.clone();
    out.properties.clear();
    let mut hidden = Vec::new();
    let mut init = vec![sys.init.clone()];
    let taken = |out: &System, name: &str| {
        out.state.iter().any(|v| v.name == name)
            || out.actions.iter().any(|v| v.name == name)
            || out.nondet.iter().any(|v| v.name == name)
            || out.constants.iter().any(|(n, _)| n == name)
    };
    let fresh = |out: &System, base: String| {
        let mut name = base;
        while taken(out, &name) {
            name.push('_');
        }
        name
    };
    let mut new_controllers = Vec::new();
    for (ci, c) in sys.controllers.iter().enumerate() {
        let Policy::Network(n) = c.policy else { continue };
        let net = &sys.networks[n].network;
        if !net.is_recurrent() {
            continue;
        }
        // New state variables and the actions that set them.
        let mut next_actions = Vec::new();
        let mut inputs = c.inputs.clone();
        for (layer, units) in read_hidden_units(net).iter().enumerate() {
            for &unit in units {
                let name = fresh(&out, format!("{}_h{}_{}", c.name, layer, unit));
                let state = out.state.len();
                out.state.push(StateVar { name: name.clone(), kind: VarKind::Real, domain: Domain::default() });
                hidden.push(HiddenVar { state, controller: ci, layer, unit });
                let v = Expr::var(VarRef::State(state));
                let zero = || Expr::constant(Rational::zero());
                init.push(Pred::Cmp(v.clone(), CmpOp::Le, zero()));
                init.push(Pred::Cmp(v.clone(), CmpOp::Ge, zero()));
                inputs.push(v);
                let action_name = fresh(&out, format!("{name}_next"));
                next_actions.push(out.actions.len());
                out.actions.push(ActionVar { name: action_name, kind: ActionKind::Real, controller: ci });
            }
        }
        for b in &mut out.step.branches {
            b.updates.extend(next_actions.iter().map(|&a| Expr::var(VarRef::Action(a))));
        }
        let mut add_net = |name: String, network: Network| {
            out.networks.push(NamedNetwork { name, network });
            out.networks.len() - 1
        };
        let name = &sys.networks[n].name;
        let lift = |head| {
            lift_network(net, head).map_err(|message| SystemError { location: format!("network '{name}'"), message })
        };
        match &c.output {
            ControllerOutput::Actions(ids) => {
                let lifted = add_net(format!("{name}.lifted.{ci}"), lift(Head::Both)?);
                let mut ids = ids.clone();
                ids.extend(&next_actions);
                out.controllers[ci] = Controller {
                    policy: Policy::Network(lifted),
                    inputs,
                    output: ControllerOutput::Actions(ids),
                    ..c.clone()
                };
            }
            ControllerOutput::Argmax(a) => {
                let outputs = add_net(format!("{name}.lifted.{ci}"), lift(Head::Outputs)?);
                out.controllers[ci] = Controller {
                    policy: Policy::Network(outputs),
                    inputs: inputs.clone(),
                    output: ControllerOutput::Argmax(*a),
                    ..c.clone()
                };
                if next_actions.is_empty() {
                    continue;
                }
                let hidden_net = add_net(format!("{name}.lifted.{ci}.hidden"), lift(Head::Hidden)?);
                let hidden_ci = sys.controllers.len() + new_controllers.len();
                for &a in &next_actions {
                    out.actions[a].controller = hidden_ci;
                }
                new_controllers.push(Controller {
                    name: format!("{}.hidden", c.name),
                    policy: Policy::Network(hidden_net),
                    inputs,
                    output: ControllerOutput::Actions(next_actions),
                });
            }
        }
    }
    out.controllers.extend(new_controllers);
    // The recurrent networks, which no controller runs any more, in lifted form (so the lifted
    // system holds no recurrent network), keeping every index.
    for (named, original) in out.networks.iter_mut().zip(&sys.networks) {
        if original.network.is_recurrent() {
            named.network = lift_network(&original.network, Head::Both)
                .map_err(|message| SystemError { location: format!("network '{}'", named.name), message })?;
        }
    }
    out.init = Pred::and(init);
    out.validate()?;
    Ok(Lifted { system: out, hidden })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::RecurrentLayer;
    use crate::num::rational_from_f64;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// A random activation: mostly ReLU and identity, sometimes a leaky ReLU or a clip (exact,
    /// and only sometimes liftable).
    fn random_activation(rng: &mut StdRng) -> Activation {
        match rng.random_range(0..10) {
            0 => Activation::LeakyRelu { alpha: 0.25 },
            1 => Activation::Clip { lo: -0.5, hi: f64::INFINITY },
            2 => Activation::Clip { lo: -1.0, hi: 1.5 },
            3 | 4 => Activation::Identity,
            _ => Activation::Relu,
        }
    }

    /// A random chain of dense and recurrent layers, with some recurrent columns zero (units not
    /// kept), several activations, weights on a grid of 1/8 (exact sums) or full f64 mantissas.
    fn random_network(rng: &mut StdRng) -> Network {
        let mut width = rng.random_range(1..4);
        let n_layers = rng.random_range(1..5);
        let mut layers = Vec::new();
        let w = |rng: &mut StdRng| {
            if rng.random_bool(0.5) { rng.random_range(-16i32..=16) as f64 / 8.0 } else { rng.random_range(-2.0..2.0) }
        };
        for l in 0..n_layers {
            let out = rng.random_range(1..5);
            let activation = if l + 1 < n_layers { random_activation(rng) } else { Activation::Identity };
            let weights = Matrix::new(out, width, (0..out * width).map(|_| w(rng)).collect());
            let bias = (0..out).map(|_| w(rng)).collect();
            if rng.random_bool(0.6) {
                let dead: Vec<bool> = (0..out).map(|_| rng.random_bool(0.3)).collect();
                let rec = (0..out * out).map(|i| if dead[i % out] { 0.0 } else { w(rng) }).collect();
                let activation = random_activation(rng);
                layers.push(Layer::Recurrent(RecurrentLayer {
                    input_weights: weights,
                    recurrent_weights: Matrix::new(out, out, rec),
                    bias,
                    activation,
                }));
            } else {
                layers.push(Layer::Dense(DenseLayer { weights, bias, activation }));
            }
            width = out;
        }
        Network::new("random", layers).unwrap()
    }

    /// The kept units' values of a hidden state, in the lifted network's input order.
    fn kept_values(kept: &[Vec<usize>], memory: &[Vec<Rational>]) -> Vec<Rational> {
        kept.iter().zip(memory).flat_map(|(us, h)| us.iter().map(|&u| h[u].clone())).collect()
    }

    /// The lifted network, fed the kept units of the previous hidden state, returns exactly the
    /// original outputs and next hidden state over runs of random inputs (exact arithmetic); a
    /// network whose state would cross a layer it cannot cross exactly is refused, naming it.
    #[test]
    fn lifted_networks_compute_the_original_exactly() {
        let mut rng = StdRng::seed_from_u64(0x11f7);
        let (mut lifted_other, mut refused) = (0, 0);
        for case in 0..400 {
            let net = random_network(&mut rng);
            let kept = read_hidden_units(&net);
            let both = match lift_network(&net, Head::Both) {
                Ok(both) => both,
                Err(why) => {
                    assert!(why.contains("cannot be carried exactly"), "{why}");
                    let plain = |a: &Activation| matches!(a, Activation::Identity | Activation::Relu);
                    assert!(net.first_activation_not(plain).is_some(), "case {case}: {why}");
                    refused += 1;
                    continue;
                }
            };
            let outputs = lift_network(&net, Head::Outputs).unwrap();
            let hidden_head = lift_network(&net, Head::Hidden).unwrap();
            if net.activations().iter().any(|a| !matches!(a, Activation::Identity | Activation::Relu)) {
                lifted_other += 1;
            }
            assert!(!both.is_recurrent());
            let mut memory = net.initial_hidden_exact();
            for _step in 0..4 {
                let x: Vec<f64> = (0..net.input_dim()).map(|_| rng.random_range(-3.0..3.0)).collect();
                let xq: Vec<Rational> = x.iter().map(|&v| rational_from_f64(v)).collect();
                let prev = kept_values(&kept, &memory);
                let y = net.forward_exact(&xq, &mut memory).unwrap();
                let next = kept_values(&kept, &memory);
                let input = [xq.clone(), prev.clone()].concat();
                let lifted = both.forward_exact(&input, &mut []).unwrap();
                assert_eq!(lifted, [y.clone(), next.clone()].concat(), "case {case}");
                assert_eq!(outputs.forward_exact(&input, &mut []).unwrap(), y, "case {case}");
                assert_eq!(hidden_head.forward_exact(&input, &mut []).unwrap(), next, "case {case}");
            }
        }
        assert!(lifted_other > 10 && refused > 10, "{lifted_other} lifted with other activations, {refused} refused");
    }
}
