//! Exact MILP encodings of ReLU networks, feed-forward and recurrent (one step, the previous hidden
//! states given as model expressions).
//!
//! ReLU `y = max(z, 0)` with sound pre-activation bounds `l <= z <= u`:
//! * `l >= 0` (stably active): `y = z`;
//! * `u <= 0` (stably inactive): `y = 0`, no variable;
//! * otherwise the big-M encoding with one binary `d`: `y >= 0, y >= z, y <= u d, y <= z - l (1 - d)`.
//!
//! The encoding is exact (its projection on inputs and outputs is the graph of the network) whenever
//! `[l, u]` really contains every pre-activation value the model's inputs can produce. The bounds
//! come from the bounds crate's layer bounds ([`crate::bounds`]); an Elman layer's pre-activation
//! `W_in x + W_rec h + b` includes its recurrent term, and its output is the new hidden state.

use crate::bounds::{BoundOptions, layer_bounds_step};
use crate::error::MilpError;
use crate::expr::Bounded;
use crate::model::{MilpModel, constant};
use good_lp::Expression;
use trestle_bounds::{InputBox, LayerBounds};
use trestle_ir::Interval;
use trestle_ir::network::{Activation, Layer, Network};

/// What [`encode_network`] added.
#[derive(Clone, Debug)]
pub struct EncodedNetwork {
    /// The network outputs as affine expressions of model variables (one variable per output).
    pub outputs: Vec<Expression>,
    /// Sound bounds of the outputs over the input box.
    pub output_bounds: Vec<Interval>,
    /// The new hidden state of each recurrent layer (empty for a feed-forward network).
    pub hidden: Vec<Vec<Bounded>>,
    /// Pre-activation bounds used for every layer.
    pub layer_bounds: Vec<LayerBounds>,
    /// ReLU neurons with `l >= 0`, with `u <= 0`, and with a binary.
    pub stable_active: usize,
    pub stable_inactive: usize,
    pub unstable: usize,
}

/// Encodes `net` applied to `inputs` with pre-activation bounds over `input_box` computed with the
/// default [`BoundOptions`].
///
/// The caller guarantees that every value the `inputs` can take in the model lies in `input_box`
/// (for instance: the inputs are variables with exactly those bounds, or interval enclosures of
/// expressions); the encoding is exact under that guarantee.
pub fn encode_network(
    model: &mut MilpModel,
    net: &Network,
    inputs: &[Expression],
    input_box: &InputBox,
) -> Result<EncodedNetwork, MilpError> {
    encode_network_with(model, net, inputs, input_box, &BoundOptions::default())
}

/// [`encode_network`] with the way pre-activation bounds are computed given.
pub fn encode_network_with(
    model: &mut MilpModel,
    net: &Network,
    inputs: &[Expression],
    input_box: &InputBox,
    bound_opts: &BoundOptions,
) -> Result<EncodedNetwork, MilpError> {
    if inputs.len() != input_box.lo.len() || input_box.lo.len() != input_box.hi.len() {
        return Err(MilpError::Dimension {
            what: format!("input box of network {}", net.source),
            found: input_box.lo.len(),
            expected: inputs.len(),
        });
    }
    let bounded: Vec<Bounded> = inputs
        .iter()
        .zip(input_box.lo.iter().zip(&input_box.hi))
        .map(|(e, (&lo, &hi))| Bounded::new(e.clone(), Interval::new(lo, hi)))
        .collect();
    encode_network_step(model, net, &bounded, &[], bound_opts)
}

/// One fresh copy of `net` on `inputs` (each with a sound enclosure of its values) and, for a
/// recurrent network, the previous hidden states `hidden` (one vector per recurrent layer, none for
/// a feed-forward network): pre-activation bounds over the box of those enclosures
/// ([`layer_bounds_step`]), then [`encode_layers`].
pub fn encode_network_step(
    model: &mut MilpModel,
    net: &Network,
    inputs: &[Bounded],
    hidden: &[Vec<Bounded>],
    bound_opts: &BoundOptions,
) -> Result<EncodedNetwork, MilpError> {
    check_inputs(net, inputs.len(), hidden)?;
    let input_box = box_of(inputs);
    let hidden_boxes: Vec<InputBox> = hidden.iter().map(|h| box_of(h)).collect();
    let bounds = layer_bounds_step(net, &input_box, &hidden_boxes, bound_opts)?;
    let exprs: Vec<Expression> = inputs.iter().map(|b| b.expr.clone()).collect();
    let hidden_exprs: Vec<Vec<Expression>> =
        hidden.iter().map(|h| h.iter().map(|b| b.expr.clone()).collect()).collect();
    encode_layers(model, net, &exprs, &hidden_exprs, bounds, bound_opts.fix_stable)
}

/// The box of the enclosures of some bounded quantities.
pub fn box_of(values: &[Bounded]) -> InputBox {
    InputBox::new(values.iter().map(|b| b.iv.lo).collect(), values.iter().map(|b| b.iv.hi).collect())
}

fn check_inputs(net: &Network, inputs: usize, hidden: &[Vec<Bounded>]) -> Result<(), MilpError> {
    if inputs != net.input_dim() {
        return Err(MilpError::Dimension {
            what: format!("inputs of network {}", net.source),
            found: inputs,
            expected: net.input_dim(),
        });
    }
    let dims = net.hidden_dims();
    if hidden.len() != dims.len() || hidden.iter().zip(&dims).any(|(h, &d)| h.len() != d) {
        return Err(MilpError::Dimension {
            what: format!("hidden states of network {} (one per recurrent layer)", net.source),
            found: hidden.iter().map(Vec::len).sum(),
            expected: dims.iter().sum(),
        });
    }
    Ok(())
}

/// Encodes `net` on `inputs` and previous hidden states `hidden` with the given pre-activation
/// bounds, one per layer, which must contain every pre-activation value the model admits
/// (`fix_stable`: see [`BoundOptions::fix_stable`]).
pub fn encode_layers(
    model: &mut MilpModel,
    net: &Network,
    inputs: &[Expression],
    hidden: &[Vec<Expression>],
    bounds: Vec<LayerBounds>,
    fix_stable: bool,
) -> Result<EncodedNetwork, MilpError> {
    if bounds.len() != net.layers.len() || bounds.iter().zip(&net.layers).any(|(b, l)| b.lo.len() != l.output_dim()) {
        return Err(MilpError::Dimension {
            what: format!("layer bounds of network {}", net.source),
            found: bounds.len(),
            expected: net.layers.len(),
        });
    }
    let mut counts = [0usize; 3];
    let mut x: Vec<Expression> = inputs.to_vec();
    let mut new_hidden = Vec::with_capacity(hidden.len());
    let mut recurrent = hidden.iter();
    for (k, (layer, lb)) in net.layers.iter().zip(&bounds).enumerate() {
        let mut next = Vec::with_capacity(layer.output_dim());
        let previous = match layer {
            Layer::Recurrent(_) => Some(recurrent.next().ok_or_else(|| MilpError::Dimension {
                what: format!("hidden states of network {}", net.source),
                found: hidden.len(),
                expected: net.hidden_dims().len(),
            })?),
            Layer::Dense(_) => None,
        };
        for i in 0..layer.output_dim() {
            let z = preactivation(layer, i, &x, previous.map(Vec::as_slice));
            let what = || format!("neuron {i} of layer {k} of {}", net.source);
            next.push(activate(model, z, lb.lo[i], lb.hi[i], layer.activation(), fix_stable, &mut counts, &what)?);
        }
        if previous.is_some() {
            let out = lb.activated(layer.activation());
            new_hidden.push(
                next.iter()
                    .enumerate()
                    .map(|(i, e)| Bounded::new(e.clone(), Interval::new(out.lo[i], out.hi[i])))
                    .collect(),
            );
        }
        x = next;
    }
    let last = bounds.last().expect("a validated network has layers");
    let activation = net.layers.last().expect("a validated network has layers").activation();
    let out = last.activated(activation);
    let output_bounds = (0..x.len()).map(|i| Interval::new(out.lo[i], out.hi[i])).collect();
    let [stable_active, stable_inactive, unstable] = counts;
    Ok(EncodedNetwork {
        outputs: x,
        output_bounds,
        hidden: new_hidden,
        layer_bounds: bounds,
        stable_active,
        stable_inactive,
        unstable,
    })
}

/// `W_i . x + b_i` (plus `W_rec_i . h` for a recurrent layer), zero weights left out.
fn preactivation(layer: &Layer, i: usize, x: &[Expression], previous: Option<&[Expression]>) -> Expression {
    let (weights, bias, recurrent) = match layer {
        Layer::Dense(d) => (d.weights.row(i), d.bias[i], None),
        Layer::Recurrent(r) => (r.input_weights.row(i), r.bias[i], Some(r.recurrent_weights.row(i))),
    };
    let mut z = constant(bias);
    for (w, xj) in weights.iter().zip(x) {
        if *w != 0.0 {
            z.add_mul(*w, xj);
        }
    }
    if let (Some(w_rec), Some(h)) = (recurrent, previous) {
        for (w, hj) in w_rec.iter().zip(h) {
            if *w != 0.0 {
                z.add_mul(*w, hj);
            }
        }
    }
    z
}

/// `act(z)` for `z` in `[l, u]`: a variable equal to `z` (identity, or a ReLU active on the whole
/// box), the constant 0 (a ReLU inactive on it), or the big-M encoding with one binary (for every
/// ReLU when not `fix_stable`). `counts` counts the ReLUs of each kind (active, inactive, unstable).
#[allow(clippy::too_many_arguments)]
fn activate(
    model: &mut MilpModel,
    z: Expression,
    l: f64,
    u: f64,
    activation: Activation,
    fix_stable: bool,
    counts: &mut [usize; 3],
    what: &dyn Fn() -> String,
) -> Result<Expression, MilpError> {
    Ok(match activation {
        Activation::Identity => {
            let y = model.continuous(l, u, &what())?;
            model.add(z.eq(y));
            Expression::from(y)
        }
        Activation::Relu if fix_stable && l >= 0.0 => {
            counts[0] += 1;
            let y = model.continuous(l, u, &what())?;
            model.add(z.eq(y));
            Expression::from(y)
        }
        Activation::Relu if fix_stable && u <= 0.0 => {
            counts[1] += 1;
            constant(0.0)
        }
        Activation::Relu => {
            counts[2] += 1;
            // Exact for any bounds with l <= z <= u, decided or not (only weaker when decided).
            let (l, u) = (l.min(0.0), u.max(0.0));
            let y = model.continuous(0.0, u, &what())?;
            let dvar = model.binary();
            // y >= z
            model.add((z.clone() - y).leq(0.0));
            // y <= z - l (1 - d)  <=>  y - z - l d <= -l
            model.add((Expression::from(y) - z + (-l) * dvar).leq(-l));
            // y <= u d
            model.add((Expression::from(y) - u * dvar).leq(0.0));
            Expression::from(y)
        }
    })
}
