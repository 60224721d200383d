//! The intermediate bounds every engine computes on its way to the output, exposed per layer: the
//! pre-activation box of each layer (its affine block, before the activation), for encodings that
//! need big-M constants or want to fix ReLU phases.
//!
//! What each method gives:
//! * IBP: interval bounds, layer after layer.
//! * CROWN: the intervals, tightened by a backward pass to the input for every ReLU the intervals
//!   leave unstable and for every neuron of a layer without ReLU (an output layer). Stable ReLUs
//!   keep their interval bounds: they are exact whatever their bounds, and an encoding needs no
//!   binary for them.
//! * alpha-CROWN: CROWN's (only the final backward pass of [`crate::bound`] optimises slopes).
//! * forward mode: its linear functions concretised over the box, for every neuron.
//!
//! Every bound is intersected with the interval bound, so no method is looser than IBP on any
//! neuron, and every bound is rounded outward like the engines' own ([`crate`] documentation).
//! Recurrent networks are bounded unrolled ([`layer_bounds_unrolled`]): the previous hidden states
//! are inputs of the first step, and each step's layers have their own bounds.

use crate::crown::{self, Tighten};
use crate::error::BoundsError;
use crate::graph::Graph;
use crate::ibp::{self, Level};
use crate::{InputBox, Method, forward, recurrent};
use rayon::prelude::*;
use trestle_ir::Interval;
use trestle_ir::network::{Activation, Network};

/// Bounds of one layer's pre-activations: `lo[i] <= z_i <= hi[i]` for every input of the box.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerBounds {
    pub lo: Vec<f64>,
    pub hi: Vec<f64>,
}

impl LayerBounds {
    /// Bounds of the layer's output under `activation`: the image of each neuron's interval
    /// ([`Interval::activate`]: exact for ReLU and clip, rounded outward for leaky ReLU, the
    /// rigorous enclosures for tanh and sigmoid).
    pub fn activated(&self, activation: Activation) -> LayerBounds {
        let images: Vec<Interval> =
            self.lo.iter().zip(&self.hi).map(|(&l, &h)| Interval::new(l, h).activate(&activation)).collect();
        LayerBounds { lo: images.iter().map(|i| i.lo).collect(), hi: images.iter().map(|i| i.hi).collect() }
    }

    /// Widens these bounds to contain `other` (same width).
    pub fn hull(&mut self, other: &LayerBounds) {
        for (a, b) in self.lo.iter_mut().zip(&other.lo) {
            *a = a.min(*b);
        }
        for (a, b) in self.hi.iter_mut().zip(&other.hi) {
            *a = a.max(*b);
        }
    }
}

/// Pre-activation bounds of every layer of a feed-forward network over `input` (one entry per
/// layer, in order).
pub fn layer_bounds(net: &Network, input: &InputBox, method: &Method) -> Result<Vec<LayerBounds>, BoundsError> {
    crate::check_supported(net, method)?;
    let graph = Graph::feed_forward(net)?;
    on_graph(&graph, input, method)
}

/// [`layer_bounds`] for many boxes, in parallel; results in input order, identical to one-by-one
/// calls.
pub fn layer_bounds_batch(
    net: &Network,
    inputs: &[InputBox],
    method: &Method,
) -> Vec<Result<Vec<LayerBounds>, BoundsError>> {
    if let Err(e) = crate::check_supported(net, method) {
        return inputs.iter().map(|_| Err(e.clone())).collect();
    }
    match Graph::feed_forward(net) {
        Ok(graph) => inputs.par_iter().map(|input| on_graph(&graph, input, method)).collect(),
        Err(_) => inputs.iter().map(|input| layer_bounds(net, input, method)).collect(),
    }
}

fn on_graph(graph: &Graph<'_>, input: &InputBox, method: &Method) -> Result<Vec<LayerBounds>, BoundsError> {
    crate::validate(input, "input box", graph.input_dim)?;
    per_layer(graph, Level::new(input.lo.clone(), input.hi.clone()), method)
}

/// Pre-activation bounds of every layer at every step of a recurrent (or feed-forward) network run
/// for `inputs_per_step.len()` steps from hidden states in `hidden0` (one box per recurrent layer):
/// `result[t][l]` bounds layer `l` at step `t`. A recurrent layer's pre-activation includes its
/// recurrent term; its output (the new hidden state) is [`LayerBounds::activated`].
pub fn layer_bounds_unrolled(
    net: &Network,
    inputs_per_step: &[InputBox],
    hidden0: &[InputBox],
    method: &Method,
) -> Result<Vec<Vec<LayerBounds>>, BoundsError> {
    crate::check_supported(net, method)?;
    let (graph, input) = recurrent::unrolled_input(net, inputs_per_step, hidden0)?;
    let layers = per_layer(&graph, input, method)?;
    Ok(layers.chunks(net.layers.len()).map(<[LayerBounds]>::to_vec).collect())
}

/// The bounds of the graph's layer stages, by `method`.
fn per_layer(graph: &Graph<'_>, input: Level, method: &Method) -> Result<Vec<LayerBounds>, BoundsError> {
    let bounds = match method {
        Method::Ibp => ibp::run(graph, input)?,
        Method::Crown | Method::AlphaCrown(_) => crown::intermediate_bounds(graph, input, Tighten::UnstableAndAffine)?,
        Method::Forward => forward::run(graph, input)?.0,
    };
    Ok(graph
        .layer_stages
        .iter()
        .map(|&s| {
            let block = &bounds.stages[s].block;
            LayerBounds { lo: block.lo.clone(), hi: block.hi.clone() }
        })
        .collect())
}
