//! Exact MILP encodings of piecewise-linear networks, feed-forward and recurrent (one step, the
//! previous hidden states given as model expressions).
//!
//! ReLU `y = max(z, 0)` with sound pre-activation bounds `l <= z <= u`:
//! * `l >= 0` (stably active): `y = z`;
//! * `u <= 0` (stably inactive): `y = 0`, no variable;
//! * otherwise the big-M encoding with one binary `d`: `y >= 0, y >= z, y <= u d, y <= z - l (1 - d)`.
//!
//! The other piecewise-linear activations are ReLUs in disguise, for every parameter value:
//! * leaky ReLU `y = alpha z + (1 - alpha) relu(z)` (one binary; `y = z` or `y = alpha z` when
//!   the bounds fix the sign);
//! * clip `y = lo + relu(z - lo) - relu(z - hi)` (a binary per finite bound the box crosses; an
//!   infinite bound drops its term, `y = max(z, lo)` or `min(z, hi)`; a constant or `y = z` when
//!   the bounds fix the piece), each ReLU's bounds `[l - lo, u - lo]`, `[l - hi, u - hi]` rounded
//!   outward.
//!
//! Tanh and sigmoid have no exact MILP encoding: [`encode_network_step`] refuses them up front
//! ([`MilpError::Unsupported`]) unless the options ask for their sound relaxation
//! ([`BoundOptions::smooth`], [`crate::smooth`]: lines, optionally pieces with binaries), which
//! keeps the model's projection a superset of the network's graph but no longer equal to it (the
//! model records every relaxed neuron). The coefficient products `alpha w` and `alpha - 1` are f64
//! products, like every coefficient HiGHS works with: MILP answers are floating-point evidence and
//! every solution is replayed exactly (see the crate docs).
//!
//! The encoding is exact (its projection on inputs and outputs is the graph of the network) whenever
//! `[l, u]` really contains every pre-activation value the model's inputs can produce. The bounds
//! come from the bounds crate's layer bounds ([`crate::bounds`]); an Elman layer's pre-activation
//! `W_in x + W_rec h + b` includes its recurrent term, and its output is the new hidden state.

use crate::bounds::{BoundOptions, layer_bounds_step};
use crate::error::MilpError;
use crate::expr::Bounded;
use crate::model::{MilpModel, constant};
use crate::smooth::{SmoothEncoding, encode_relaxed};
use good_lp::Expression;
use trestle_bounds::{InputBox, LayerBounds};
use trestle_ir::Interval;
use trestle_ir::network::{Activation, Layer, Network};
use trestle_ir::round::{sub_down, sub_up};

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
    /// Kinks (one per ReLU and leaky ReLU, one per finite bound of a clip) the bounds fix on the
    /// identity side, on the other side, and that need a binary.
    pub stable_active: usize,
    pub stable_inactive: usize,
    pub unstable: usize,
    /// Tanh and sigmoid neurons encoded by their sound relaxation ([`crate::smooth`]).
    pub relaxed: usize,
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
    check_encodable(net, &bound_opts.smooth)?;
    let input_box = box_of(inputs);
    let hidden_boxes: Vec<InputBox> = hidden.iter().map(|h| box_of(h)).collect();
    let bounds = layer_bounds_step(net, &input_box, &hidden_boxes, bound_opts)?;
    let exprs: Vec<Expression> = inputs.iter().map(|b| b.expr.clone()).collect();
    let hidden_exprs: Vec<Vec<Expression>> =
        hidden.iter().map(|h| h.iter().map(|b| b.expr.clone()).collect()).collect();
    encode_layers(model, net, &exprs, &hidden_exprs, bounds, bound_opts.fix_stable, &bound_opts.smooth)
}

/// The box of the enclosures of some bounded quantities.
pub fn box_of(values: &[Bounded]) -> InputBox {
    InputBox::new(values.iter().map(|b| b.iv.lo).collect(), values.iter().map(|b| b.iv.hi).collect())
}

/// Tanh and sigmoid have no exact MILP encoding: refused unless relaxed.
fn check_encodable(net: &Network, smooth: &SmoothEncoding) -> Result<(), MilpError> {
    match net.first_activation_not(Activation::is_piecewise_linear) {
        None => Ok(()),
        Some(_) if matches!(smooth, SmoothEncoding::Relax(_)) => Ok(()),
        Some((layer, act)) => Err(MilpError::Unsupported(format!(
            "network {} (layer {layer}): {} has no exact MILP encoding; the MILP engines handle identity, ReLU, \
             leaky ReLU and clip layers",
            net.source,
            act.name()
        ))),
    }
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
/// (`fix_stable`: see [`BoundOptions::fix_stable`]; `smooth`: [`BoundOptions::smooth`]).
pub fn encode_layers(
    model: &mut MilpModel,
    net: &Network,
    inputs: &[Expression],
    hidden: &[Vec<Expression>],
    bounds: Vec<LayerBounds>,
    fix_stable: bool,
    smooth: &SmoothEncoding,
) -> Result<EncodedNetwork, MilpError> {
    check_encodable(net, smooth)?;
    if bounds.len() != net.layers.len() || bounds.iter().zip(&net.layers).any(|(b, l)| b.lo.len() != l.output_dim()) {
        return Err(MilpError::Dimension {
            what: format!("layer bounds of network {}", net.source),
            found: bounds.len(),
            expected: net.layers.len(),
        });
    }
    let mut counts = [0usize; 3];
    let mut relaxed = 0;
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
            let act = layer.activation();
            next.push(match smooth {
                SmoothEncoding::Relax(refinement) if !act.is_piecewise_linear() => {
                    relaxed += 1;
                    encode_relaxed(model, z, lb.lo[i], lb.hi[i], act, refinement, &what())?
                }
                _ => activate(model, z, lb.lo[i], lb.hi[i], act, fix_stable, &mut counts, &what)?,
            });
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
    model.count_kinks(counts);
    let [stable_active, stable_inactive, unstable] = counts;
    Ok(EncodedNetwork {
        outputs: x,
        output_bounds,
        hidden: new_hidden,
        layer_bounds: bounds,
        stable_active,
        stable_inactive,
        unstable,
        relaxed,
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

/// `act(z)` for `z` in `[l, u]`: a variable equal to `z` (identity, or an activation on its
/// identity piece on the whole box), a constant (a piece of slope 0), a variable equal to
/// `alpha z` (a leaky ReLU negative on the box), or the big-M encodings of the module docs (for
/// every kink when not `fix_stable`). `counts` counts the kinks of each kind (active, inactive,
/// unstable).
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
    // The variable of a neuron's output, its bounds the image of [l, u] (rounded outward).
    let output = |model: &mut MilpModel| {
        let image = Interval::new(l, u).activate(&activation);
        model.continuous(image.lo, image.hi, &what())
    };
    Ok(match activation {
        Activation::Identity => {
            let y = model.continuous(l, u, &what())?;
            model.add(z.eq(y));
            Expression::from(y)
        }
        Activation::Relu => relu(model, z, l, u, fix_stable, counts, what)?,
        Activation::LeakyRelu { alpha } => match activation.piece_on(l, u) {
            Some(piece) if fix_stable => {
                counts[if piece.slope == 1.0 { 0 } else { 1 }] += 1;
                let y = output(model)?;
                model.add((Expression::from(y) - z * piece.slope).eq(0.0));
                Expression::from(y)
            }
            _ => {
                // y = alpha z + (1 - alpha) relu(z), for every alpha.
                let r = relu(model, z.clone(), l, u, fix_stable, counts, what)?;
                let y = output(model)?;
                model.add((Expression::from(y) - r.clone() - (z - r) * alpha).eq(0.0));
                Expression::from(y)
            }
        },
        Activation::Clip { lo, hi } => match activation.piece_on(l, u) {
            Some(piece) if fix_stable && piece.slope == 0.0 => {
                counts[1] += 1;
                constant(piece.offset)
            }
            Some(_) if fix_stable => {
                counts[0] += 1;
                let y = output(model)?;
                model.add(z.eq(y));
                Expression::from(y)
            }
            _ => {
                // y = lo + relu(z - lo) - relu(z - hi), an infinite bound's term left out
                // (max(z, lo) = lo + relu(z - lo), min(z, hi) = z - relu(z - hi)).
                let mut y_expr = if lo.is_finite() {
                    let shifted = z.clone() - lo;
                    let r = relu(model, shifted, sub_down(l, lo), sub_up(u, lo), fix_stable, counts, what)?;
                    r + lo
                } else {
                    z.clone()
                };
                if hi.is_finite() {
                    let shifted = z - hi;
                    y_expr -= relu(model, shifted, sub_down(l, hi), sub_up(u, hi), fix_stable, counts, what)?;
                }
                let y = output(model)?;
                model.add((Expression::from(y) - y_expr).eq(0.0));
                Expression::from(y)
            }
        },
        // Relaxed by the caller when the options allow it ([`crate::smooth`]).
        Activation::Tanh | Activation::Sigmoid => {
            return Err(MilpError::Unsupported(format!(
                "{}: {} has no exact MILP encoding",
                what(),
                activation.name()
            )));
        }
    })
}

/// `relu(z)` for `z` in `[l, u]` (the module docs' encoding): `z` itself when `fix_stable` and
/// `l >= 0`, the constant 0 when `fix_stable` and `u <= 0`, otherwise one binary.
#[allow(clippy::too_many_arguments)]
fn relu(
    model: &mut MilpModel,
    z: Expression,
    l: f64,
    u: f64,
    fix_stable: bool,
    counts: &mut [usize; 3],
    what: &dyn Fn() -> String,
) -> Result<Expression, MilpError> {
    Ok(if fix_stable && l >= 0.0 {
        counts[0] += 1;
        let y = model.continuous(l, u, &what())?;
        model.add(z.eq(y));
        Expression::from(y)
    } else if fix_stable && u <= 0.0 {
        counts[1] += 1;
        constant(0.0)
    } else {
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
    })
}
