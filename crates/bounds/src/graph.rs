//! The computation the engines bound: a chain of stages, each an affine block followed by its
//! activation, plus values carried through unchanged.
//!
//! A feed-forward [`Network`] maps to one stage per layer, borrowing its weights. Recurrent networks
//! (see [`crate::recurrent`]) also need previous hidden states, later steps' inputs and new hidden
//! states to travel alongside the layer values; those travel as *copies*, which every transfer rule
//! treats exactly (no relaxation, no rounding), so a pass-through neuron costs nothing in tightness.

use crate::error::BoundsError;
use std::borrow::Cow;
use trestle_ir::network::{Activation, Layer, Matrix, Network};

/// `output = [act(W input[..W.cols] + b); input[copies[0]], input[copies[1]], ...]`.
#[derive(Clone, Debug)]
pub(crate) struct Stage<'n> {
    pub weights: Cow<'n, Matrix>,
    pub bias: Cow<'n, [f64]>,
    pub activation: Activation,
    /// `output[weights.rows + k] = input[copies[k]]`.
    pub copies: Vec<usize>,
    pub input_dim: usize,
    /// Whether the copy's source is also read by the affine block or by another copy: going backward
    /// its coefficient is then a floating-point sum, with a rounding error to account for.
    pub shared_copy: Vec<bool>,
    /// The weights' columns as rows, for blocks that read few inputs (a network's first layer on a
    /// low-dimensional state): the backward rule then computes each coefficient as one long
    /// (vectorised) dot product instead of many axpys of that short length.
    pub columns: Option<Matrix>,
}

/// Blocks reading at most this many inputs keep their weights' columns (see [`Stage::columns`]).
const FEW_INPUTS: usize = 8;

impl<'n> Stage<'n> {
    pub fn new(
        weights: Cow<'n, Matrix>,
        bias: Cow<'n, [f64]>,
        activation: Activation,
        copies: Vec<usize>,
        input_dim: usize,
    ) -> Stage<'n> {
        debug_assert!(weights.cols <= input_dim && bias.len() == weights.rows);
        debug_assert!(copies.iter().all(|&c| c < input_dim));
        let shared_copy = copies
            .iter()
            .map(|&src| src < weights.cols || copies.iter().filter(|&&other| other == src).count() > 1)
            .collect();
        let columns = (weights.cols <= FEW_INPUTS && weights.rows > 0).then(|| transpose(&weights));
        Stage { weights, bias, activation, copies, input_dim, shared_copy, columns }
    }

    /// A stage that only rearranges values: `output[k] = input[copies[k]]`.
    pub fn reorder(copies: Vec<usize>, input_dim: usize) -> Stage<'static> {
        Stage::new(
            Cow::Owned(Matrix::new(0, 0, Vec::new())),
            Cow::Owned(Vec::new()),
            Activation::Identity,
            copies,
            input_dim,
        )
    }

    /// Neurons computed by the affine block.
    pub fn rows(&self) -> usize {
        self.weights.rows
    }

    /// Leading input values the affine block reads.
    pub fn cols(&self) -> usize {
        self.weights.cols
    }

    pub fn output_dim(&self) -> usize {
        self.weights.rows + self.copies.len()
    }
}

fn transpose(m: &Matrix) -> Matrix {
    let mut data = Vec::with_capacity(m.rows * m.cols);
    for j in 0..m.cols {
        data.extend((0..m.rows).map(|r| m.data[r * m.cols + j]));
    }
    Matrix::new(m.cols, m.rows, data)
}

#[derive(Clone, Debug)]
pub(crate) struct Graph<'n> {
    pub input_dim: usize,
    pub stages: Vec<Stage<'n>>,
    /// The stage of each network layer, in order (step by step when unrolled); the other stages
    /// only move values.
    pub layer_stages: Vec<usize>,
}

impl<'n> Graph<'n> {
    /// One stage per dense layer, weights borrowed. Shapes are checked; finiteness of the weights is
    /// checked by the engines (a non-finite weight makes the interval pass non-finite, an error).
    pub fn feed_forward(net: &'n Network) -> Result<Graph<'n>, BoundsError> {
        check_shapes(net)?;
        if net.is_recurrent() {
            return Err(BoundsError::Recurrent { network: net.source.clone() });
        }
        let stages: Vec<Stage<'n>> = net
            .layers
            .iter()
            .map(|layer| match layer {
                Layer::Dense(d) => Stage::new(
                    Cow::Borrowed(&d.weights),
                    Cow::Borrowed(d.bias.as_slice()),
                    d.activation,
                    Vec::new(),
                    d.weights.cols,
                ),
                Layer::Recurrent(_) => unreachable!("checked above"),
            })
            .collect();
        Ok(Graph { input_dim: net.input_dim(), layer_stages: (0..stages.len()).collect(), stages })
    }

    pub fn output_dim(&self) -> usize {
        self.stages.last().map_or(self.input_dim, Stage::output_dim)
    }
}

/// The shape checks of [`Network::validate`] without its scan of every weight (which would cost as
/// much as an interval pass on every call).
pub(crate) fn check_shapes(net: &Network) -> Result<(), BoundsError> {
    let shape = |layer, what, found, expected| {
        BoundsError::Network(trestle_ir::network::NetworkError::Shape {
            network: net.source.clone(),
            layer,
            what,
            found,
            expected,
        })
    };
    if net.layers.is_empty() {
        return Err(BoundsError::Network(trestle_ir::network::NetworkError::Empty { network: net.source.clone() }));
    }
    let mut width = net.layers[0].input_dim();
    for (i, layer) in net.layers.iter().enumerate() {
        if layer.input_dim() != width {
            return Err(shape(i, "input", layer.input_dim(), width));
        }
        let (matrices, bias): (Vec<(&'static str, &Matrix)>, &[f64]) = match layer {
            Layer::Dense(d) => (vec![("weights", &d.weights)], &d.bias),
            Layer::Recurrent(r) => {
                let h = r.input_weights.rows;
                if r.recurrent_weights.rows != h || r.recurrent_weights.cols != h {
                    return Err(shape(i, "recurrent weights", r.recurrent_weights.data.len(), h * h));
                }
                (vec![("input weights", &r.input_weights), ("recurrent weights", &r.recurrent_weights)], &r.bias)
            }
        };
        for (what, m) in matrices {
            if m.data.len() != m.rows * m.cols {
                return Err(shape(i, what, m.data.len(), m.rows * m.cols));
            }
        }
        if bias.len() != layer.output_dim() {
            return Err(shape(i, "bias", bias.len(), layer.output_dim()));
        }
        width = layer.output_dim();
    }
    Ok(())
}
