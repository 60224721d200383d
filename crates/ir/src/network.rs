//! Neural networks as the engines see them: a chain of dense and recurrent (Elman) layers, each
//! an affine map followed by an [`Activation`] (see [`crate::activation`]).
//!
//! Weights are the exact f64 values read from the model file (f32 widens to f64 exactly), never
//! rescaled or fused on load, so what the solvers see is what the file says. Normalisation steps
//! (NNet headers) are explicit layers, not hidden preprocessing. What a loader did beyond reading
//! weights (a batch normalisation folded with rounded coefficients, a trailing softmax left out)
//! is recorded on the network ([`Network::notes`], [`Network::trailing_softmax`]) for `trestle
//! info` and for the checks that depend on it.

use crate::arith::LayerArith;
use crate::num::Rational;
use num_traits::Zero;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::activation::{Activation, Piece};

/// A dense row-major matrix: `rows` outputs by `cols` inputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    /// Number of rows: the outputs of the map `x -> W x`.
    pub rows: usize,
    /// Number of columns: the inputs.
    pub cols: usize,
    /// The `rows * cols` entries, row by row: entry `(r, c)` is `data[r * cols + c]`.
    pub data: Vec<f64>,
}

impl Matrix {
    /// A matrix from its row-major entries. Panics unless `data.len() == rows * cols`.
    pub fn new(rows: usize, cols: usize, data: Vec<f64>) -> Matrix {
        assert_eq!(data.len(), rows * cols, "matrix data length");
        Matrix { rows, cols, data }
    }

    /// A matrix from its rows, which must have equal lengths: the first row's length is the
    /// column count. No rows give a 0 x 0 matrix.
    pub fn from_rows(rows: &[Vec<f64>]) -> Matrix {
        let cols = rows.first().map_or(0, Vec::len);
        let data = rows.iter().flat_map(|r| r.iter().copied()).collect();
        Matrix::new(rows.len(), cols, data)
    }

    /// The `n x n` identity.
    pub fn identity(n: usize) -> Matrix {
        let mut data = vec![0.0; n * n];
        for i in 0..n {
            data[i * n + i] = 1.0;
        }
        Matrix::new(n, n, data)
    }

    /// The square matrix with `d` on its diagonal and 0 elsewhere.
    pub fn diagonal(d: &[f64]) -> Matrix {
        let n = d.len();
        let mut data = vec![0.0; n * n];
        for (i, &v) in d.iter().enumerate() {
            data[i * n + i] = v;
        }
        Matrix::new(n, n, data)
    }

    /// Entry `(r, c)`; panics out of range.
    #[inline]
    pub fn get(&self, r: usize, c: usize) -> f64 {
        self.data[r * self.cols + c]
    }

    /// Row `r`: the weights of output `r`, one per input.
    #[inline]
    pub fn row(&self, r: usize) -> &[f64] {
        &self.data[r * self.cols..(r + 1) * self.cols]
    }

    /// `W^T`, `cols` rows by `rows` columns (what a backward bound pass multiplies by).
    pub fn transpose(&self) -> Matrix {
        let mut data = vec![0.0; self.data.len()];
        for r in 0..self.rows {
            for c in 0..self.cols {
                data[c * self.rows + r] = self.data[r * self.cols + c];
            }
        }
        Matrix::new(self.cols, self.rows, data)
    }
}

/// `y = act(W x + b)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DenseLayer {
    /// `W`: one row per neuron of the layer, one column per input.
    pub weights: Matrix,
    /// `b`: one entry per neuron.
    pub bias: Vec<f64>,
    /// Applied to `W x + b` neuron by neuron.
    pub activation: Activation,
}

/// Elman layer: `h_t = act(W_in x_t + W_rec h_{t-1} + b)`; its output is `h_t`, and `h_t` is carried
/// to the next step (initially zero unless the controller says otherwise).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecurrentLayer {
    /// `W_in`: one row per neuron, one column per input of the layer.
    pub input_weights: Matrix,
    /// `W_rec`: neurons by neurons, applied to the previous step's output `h_{t-1}`.
    pub recurrent_weights: Matrix,
    /// `b`: one entry per neuron.
    pub bias: Vec<f64>,
    /// Applied to the sum neuron by neuron; its result is both the output and the carried state.
    pub activation: Activation,
}

/// One layer of a [`Network`]; serialised with a `type` tag (`dense`, `recurrent`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Layer {
    /// A feed-forward layer.
    Dense(DenseLayer),
    /// An Elman layer with a hidden state carried from step to step.
    Recurrent(RecurrentLayer),
}

impl Layer {
    /// Number of inputs: the width of the previous layer (or of the network's input).
    pub fn input_dim(&self) -> usize {
        match self {
            Layer::Dense(d) => d.weights.cols,
            Layer::Recurrent(r) => r.input_weights.cols,
        }
    }

    /// Number of neurons (outputs).
    pub fn output_dim(&self) -> usize {
        match self {
            Layer::Dense(d) => d.weights.rows,
            Layer::Recurrent(r) => r.input_weights.rows,
        }
    }

    /// The layer's activation.
    pub fn activation(&self) -> Activation {
        match self {
            Layer::Dense(d) => d.activation,
            Layer::Recurrent(r) => r.activation,
        }
    }
}

/// A feed-forward or recurrent network.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Network {
    /// Where it came from (file path or `inline:NAME`), for messages.
    pub source: String,
    /// The layers, input side first; non-empty, each taking the previous one's outputs
    /// ([`Network::validate`]).
    pub layers: Vec<Layer>,
    /// What the loader did that changes or approximates the file's network, one sentence each
    /// (shown by `trestle info`): e.g. a batch normalisation folded into an affine map whose
    /// coefficients are f64 roundings of irrational numbers. The network verified is `layers`.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The file's graph ends in a softmax that the loader left out, named here (`node #7
    /// "probs"`). The outputs are then the softmax's inputs; only an argmax of them means the
    /// same as the file (softmax is strictly increasing in each output and preserves their
    /// order), so the system reader accepts such a network for argmax controllers only.
    #[serde(default)]
    pub trailing_softmax: Option<String>,
}

/// Why a network is malformed, or why a forward pass could not be computed. `network` is always the
/// network's [`Network::source`] and `layer` a 0-based layer index.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum NetworkError {
    /// The network has no layers.
    #[error("network {network}: it has no layers")]
    Empty {
        /// The network's source.
        network: String,
    },
    /// A layer's weights or bias do not fit the widths around it.
    #[error("network {network}: layer {layer}: {what} has {found} entries, expected {expected}")]
    Shape {
        /// The network's source.
        network: String,
        /// The layer at fault.
        layer: usize,
        /// Which part: `input`, `weights`, `recurrent weights`, `bias`, ...
        what: &'static str,
        /// Its number of entries (or its input width, for `input`).
        found: usize,
        /// The number the neighbouring layers call for.
        expected: usize,
    },
    /// A weight or bias is NaN or infinite (no exact rational stands for it).
    #[error("network {network}: layer {layer}: {what}[{index}] is {value}, weights must be finite")]
    NotFinite {
        /// The network's source.
        network: String,
        /// The layer at fault.
        layer: usize,
        /// Which part: `weights`, `input weights`, `recurrent weights` or `bias`.
        what: &'static str,
        /// The entry's index in that part (row-major for a matrix).
        index: usize,
        /// The value found.
        value: f64,
    },
    /// A forward pass was given an input of the wrong length.
    #[error("network {network}: input has {found} values, the network takes {expected}")]
    InputDim {
        /// The network's source.
        network: String,
        /// The input's length.
        found: usize,
        /// The network's input width.
        expected: usize,
    },
    /// An activation's parameters are unusable ([`Activation::validate`]).
    #[error("network {network}: layer {layer}: {problem}")]
    Activation {
        /// The network's source.
        network: String,
        /// The layer at fault.
        layer: usize,
        /// What is wrong with the parameters, one sentence.
        problem: String,
    },
    /// The exact (rational) forward pass met an activation whose values are irrational.
    #[error(
        "network {network}: layer {layer}: {activation} has no exact rational value: a validated (interval) \
         replay is needed"
    )]
    NoExactValue {
        /// The network's source.
        network: String,
        /// The first layer with such an activation.
        layer: usize,
        /// The activation's name ([`Activation::name`]).
        activation: &'static str,
    },
}

impl Network {
    /// A network from its layers, with no notes and no trailing softmax; checked by
    /// [`Network::validate`].
    pub fn new(source: impl Into<String>, layers: Vec<Layer>) -> Result<Network, NetworkError> {
        let net = Network { source: source.into(), layers, notes: Vec::new(), trailing_softmax: None };
        net.validate()?;
        Ok(net)
    }

    /// Number of inputs of the first layer. Panics on a network without layers, which
    /// [`Network::validate`] refuses.
    pub fn input_dim(&self) -> usize {
        self.layers[0].input_dim()
    }

    /// Number of outputs of the last layer (0 for no layers).
    pub fn output_dim(&self) -> usize {
        self.layers.last().map_or(0, Layer::output_dim)
    }

    /// Whether some layer is recurrent, so the network carries hidden state between calls.
    pub fn is_recurrent(&self) -> bool {
        self.layers.iter().any(|l| matches!(l, Layer::Recurrent(_)))
    }

    /// Sizes of the hidden states carried between steps, one per recurrent layer (in order).
    pub fn hidden_dims(&self) -> Vec<usize> {
        self.layers
            .iter()
            .filter_map(|l| match l {
                Layer::Recurrent(r) => Some(r.input_weights.rows),
                Layer::Dense(_) => None,
            })
            .collect()
    }

    /// Layer sizes, input first: `[2, 32, 32, 2]`.
    pub fn sizes(&self) -> Vec<usize> {
        let mut s = vec![self.input_dim()];
        s.extend(self.layers.iter().map(Layer::output_dim));
        s
    }

    /// Number of ReLU neurons (only `Relu`; see [`Network::neuron_counts`] for every kind).
    pub fn relu_count(&self) -> usize {
        self.layers.iter().filter(|l| l.activation() == Activation::Relu).map(Layer::output_dim).sum()
    }

    /// Neurons per activation name (`relu`, `tanh`, ...), identity neurons left out: the neurons
    /// that may need a case split (piecewise linear) or a relaxation (smooth).
    pub fn neuron_counts(&self) -> BTreeMap<&'static str, usize> {
        let mut counts = BTreeMap::new();
        for l in self.layers.iter().filter(|l| l.activation() != Activation::Identity) {
            *counts.entry(l.activation().name()).or_insert(0) += l.output_dim();
        }
        counts
    }

    /// The distinct activations of the layers, in order of first use.
    pub fn activations(&self) -> Vec<Activation> {
        let mut out: Vec<Activation> = Vec::new();
        for a in self.layers.iter().map(Layer::activation) {
            if !out.contains(&a) {
                out.push(a);
            }
        }
        out
    }

    /// The first layer whose activation `ok` refuses: `(layer index, activation)`. For an engine's
    /// check of what it can encode before it starts.
    pub fn first_activation_not(&self, ok: impl Fn(&Activation) -> bool) -> Option<(usize, Activation)> {
        self.layers.iter().map(Layer::activation).enumerate().find(|(_, a)| !ok(a))
    }

    /// Every activation piecewise linear (exact rational values, exact encodings).
    pub fn is_piecewise_linear(&self) -> bool {
        self.first_activation_not(Activation::is_piecewise_linear).is_none()
    }

    /// Checks shapes chain, every weight is finite and every activation's parameters are valid.
    pub fn validate(&self) -> Result<(), NetworkError> {
        let source = || self.source.clone();
        if self.layers.is_empty() {
            return Err(NetworkError::Empty { network: source() });
        }
        let mut width = self.layers[0].input_dim();
        for (i, layer) in self.layers.iter().enumerate() {
            let shape =
                |what, found, expected| NetworkError::Shape { network: source(), layer: i, what, found, expected };
            if layer.input_dim() != width {
                return Err(shape("input", layer.input_dim(), width));
            }
            let (mats, bias): (Vec<(&'static str, &Matrix)>, &Vec<f64>) = match layer {
                Layer::Dense(d) => (vec![("weights", &d.weights)], &d.bias),
                Layer::Recurrent(r) => {
                    let h = r.input_weights.rows;
                    if r.recurrent_weights.rows != h || r.recurrent_weights.cols != h {
                        return Err(shape("recurrent weights", r.recurrent_weights.data.len(), h * h));
                    }
                    (vec![("input weights", &r.input_weights), ("recurrent weights", &r.recurrent_weights)], &r.bias)
                }
            };
            if bias.len() != layer.output_dim() {
                return Err(shape("bias", bias.len(), layer.output_dim()));
            }
            for (what, m) in mats {
                if m.data.len() != m.rows * m.cols {
                    return Err(shape(what, m.data.len(), m.rows * m.cols));
                }
                if let Some((index, &value)) = m.data.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                    return Err(NetworkError::NotFinite { network: source(), layer: i, what, index, value });
                }
            }
            if let Some((index, &value)) = bias.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(NetworkError::NotFinite { network: source(), layer: i, what: "bias", index, value });
            }
            layer.activation().validate().map_err(|problem| NetworkError::Activation {
                network: source(),
                layer: i,
                problem,
            })?;
            width = layer.output_dim();
        }
        Ok(())
    }

    /// Zero hidden state.
    pub fn initial_hidden(&self) -> Vec<Vec<f64>> {
        self.hidden_dims().into_iter().map(|n| vec![0.0; n]).collect()
    }

    /// The forward pass in any [`LayerArith`]: the one definition of what a network computes.
    /// `hidden` is read and updated for recurrent layers (one entry per recurrent layer). Fails
    /// with [`NetworkError::NoExactValue`] where the domain cannot represent an activation's value
    /// (tanh and sigmoid in exact rationals).
    pub fn run<A: LayerArith>(&self, input: &[A], hidden: &mut [Vec<A>]) -> Result<Vec<A>, NetworkError> {
        if input.len() != self.input_dim() {
            return Err(NetworkError::InputDim {
                network: self.source.clone(),
                found: input.len(),
                expected: self.input_dim(),
            });
        }
        let mut x = A::load(input);
        let mut h_index = 0;
        for (l, layer) in self.layers.iter().enumerate() {
            let no_value = || NetworkError::NoExactValue {
                network: self.source.clone(),
                layer: l,
                activation: layer.activation().name(),
            };
            x = match layer {
                Layer::Dense(d) => A::affine(&d.weights, &x, &d.bias, d.activation, None).ok_or_else(no_value)?,
                Layer::Recurrent(r) => {
                    let h = A::load(&hidden[h_index]);
                    let z = A::affine(&r.input_weights, &x, &r.bias, r.activation, Some((&r.recurrent_weights, &h)))
                        .ok_or_else(no_value)?;
                    hidden[h_index] = A::unload(&z);
                    h_index += 1;
                    z
                }
            };
        }
        Ok(A::unload(&x))
    }

    /// Floating-point forward pass (f64, round to nearest): for simulation and sampling only;
    /// verdicts never rest on it. `hidden` is read and updated for recurrent layers.
    pub fn forward(&self, input: &[f64], hidden: &mut [Vec<f64>]) -> Result<Vec<f64>, NetworkError> {
        self.run(input, hidden)
    }

    /// Forward pass of a feed-forward network from a zero hidden state.
    pub fn eval(&self, input: &[f64]) -> Result<Vec<f64>, NetworkError> {
        self.forward(input, &mut self.initial_hidden())
    }

    /// Exact forward pass in rational arithmetic: the reference every counterexample is replayed
    /// with. Layers run over one common denominator (`exact_affine`); hidden states are kept as
    /// reduced rationals between steps. A network with tanh or sigmoid has no exact value
    /// ([`NetworkError::NoExactValue`]).
    pub fn forward_exact(
        &self,
        input: &[Rational],
        hidden: &mut [Vec<Rational>],
    ) -> Result<Vec<Rational>, NetworkError> {
        self.run(input, hidden)
    }

    /// Zero hidden state in exact rationals, for [`Network::forward_exact`]: one vector per
    /// recurrent layer.
    pub fn initial_hidden_exact(&self) -> Vec<Vec<Rational>> {
        self.hidden_dims().into_iter().map(|n| vec![Rational::zero(); n]).collect()
    }
}

/// A dense ReLU network with the given layer sizes (`[2, 2048, 2048, 2]`: inputs, hidden widths,
/// outputs; no ReLU after the last layer) and trained-like weights drawn from a 64-bit linear
/// congruential generator: uniform in `±1/sqrt(fan-in)` with full 53-bit mantissas, biases in
/// `±0.1`. The same network on every machine, for benchmarks at sizes no shipped model has.
pub fn synthetic_dense(sizes: &[usize], seed: u64) -> Network {
    let mut state = seed;
    let mut unit = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let layers = sizes
        .windows(2)
        .enumerate()
        .map(|(k, io)| {
            let (cols, rows) = (io[0], io[1]);
            let scale = 1.0 / (cols as f64).sqrt();
            Layer::Dense(DenseLayer {
                weights: Matrix::new(rows, cols, (0..rows * cols).map(|_| unit() * scale).collect()),
                bias: (0..rows).map(|_| unit() * 0.1).collect(),
                activation: if k + 2 < sizes.len() { Activation::Relu } else { Activation::Identity },
            })
        })
        .collect();
    let name = sizes.iter().map(usize::to_string).collect::<Vec<_>>().join("x");
    Network::new(format!("inline:synthetic-{name}-seed{seed}"), layers).expect("consistent sizes")
}

/// A controller for the n-dimensional maze `x_i' = x_i + 0.1 a_i` (`dims` inputs and outputs,
/// `depth` hidden layers of `width` neurons) that pulls every coordinate towards 0.6,
/// `a_i = 0.5 (0.6 - x_i)` written exactly with ReLUs (`relu(0.6 - x) - relu(x - 0.6)` carried
/// through the layers), plus `eps` times the output of a [`synthetic_dense`] network filling the
/// other neurons. For small `eps` the box `[0.25, 0.95]^n` is inductive with a margin and proving
/// it needs splits that grow with the dimension; for large `eps` it is not.
pub fn synthetic_centering(dims: usize, width: usize, depth: usize, eps: f64, seed: u64) -> Result<Network, String> {
    const CENTRE: f64 = 0.6;
    if width < 2 * dims || depth == 0 {
        return Err(format!("WIDTH must be at least 2*DIMS = {} and DEPTH at least 1", 2 * dims));
    }
    // The random part: its hidden layers fill the neurons beside the 2*dims exact ones.
    let free = width - 2 * dims;
    let mut sizes = vec![dims];
    sizes.extend(std::iter::repeat_n(free.max(1), depth));
    sizes.push(dims);
    let random = synthetic_dense(&sizes, seed);
    let dense = |l: &Layer| match l {
        Layer::Dense(d) => d.clone(),
        Layer::Recurrent(_) => unreachable!("synthetic networks are dense"),
    };
    let mut layers = Vec::new();
    for k in 0..=depth {
        let r = dense(&random.layers[k]);
        let (rows, cols) = if k == depth { (dims, width) } else { (width, if k == 0 { dims } else { width }) };
        let mut w = vec![0.0; rows * cols];
        let mut b = vec![0.0; rows];
        let free_in = if k == 0 { 0 } else { 2 * dims }; // where the random part's inputs start
        if k < depth {
            // The exact part: relu(c - x_i), relu(x_i - c) in the first layer, carried unchanged
            // (weight 1 on a non-negative value) through the others.
            for i in 0..dims {
                if k == 0 {
                    w[i * cols + i] = -1.0;
                    b[i] = CENTRE;
                    w[(dims + i) * cols + i] = 1.0;
                    b[dims + i] = -CENTRE;
                } else {
                    w[i * cols + i] = 1.0;
                    w[(dims + i) * cols + dims + i] = 1.0;
                }
            }
            for j in 0..free {
                let row = 2 * dims + j;
                b[row] = r.bias[j];
                for c in 0..r.weights.cols {
                    w[row * cols + free_in + c] = r.weights.get(j, c);
                }
            }
        } else {
            for i in 0..dims {
                w[i * cols + i] = 0.5;
                w[i * cols + dims + i] = -0.5;
                b[i] = eps * r.bias[i];
                for c in 0..r.weights.cols {
                    w[i * cols + 2 * dims + c] = eps * r.weights.get(i, c);
                }
            }
        }
        let activation = if k < depth { Activation::Relu } else { Activation::Identity };
        layers.push(Layer::Dense(DenseLayer { weights: Matrix::new(rows, cols, w), bias: b, activation }));
    }
    Network::new(format!("inline:centering-{dims}d-{width}x{depth}-eps{eps}-seed{seed}"), layers)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::num::rational_from_i64;

    fn figure1() -> Network {
        // The RNN of Figure 1 of the LTL paper: y = relu(W1 x), z_t = relu(W2 y + z_{t-1}).
        Network::new(
            "inline:figure1",
            vec![
                Layer::Dense(DenseLayer {
                    weights: Matrix::from_rows(&[vec![-1.0, 1.0], vec![1.0, 1.0]]),
                    bias: vec![0.0, 0.0],
                    activation: Activation::Relu,
                }),
                Layer::Recurrent(RecurrentLayer {
                    input_weights: Matrix::from_rows(&[vec![1.0, -1.0]]),
                    recurrent_weights: Matrix::from_rows(&[vec![1.0]]),
                    bias: vec![0.0],
                    activation: Activation::Relu,
                }),
            ],
        )
        .unwrap()
    }

    #[test]
    fn figure1_rnn_output_stays_zero() {
        let net = figure1();
        let mut h = net.initial_hidden();
        for x in [[0.3, 0.9], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]] {
            assert_eq!(net.forward(&x, &mut h).unwrap(), vec![0.0]);
        }
        let mut he = net.initial_hidden_exact();
        let out = net.forward_exact(&[rational_from_i64(0), rational_from_i64(1)], &mut he).unwrap();
        assert_eq!(out, vec![rational_from_i64(0)]);
    }

    fn one_layer(activation: Activation) -> Network {
        Network::new(
            "inline:act",
            vec![Layer::Dense(DenseLayer {
                weights: Matrix::from_rows(&[vec![1.0, -0.5], vec![0.25, 3.0], vec![-2.0, 0.1]]),
                bias: vec![0.1, -0.75, 0.5],
                activation,
            })],
        )
        .unwrap()
    }

    #[test]
    fn piecewise_linear_activations_run_exactly_and_match_f64() {
        use crate::num::{rational_from_f64, to_f64_nearest};
        let acts = [
            Activation::LeakyRelu { alpha: 0.01 },
            Activation::LeakyRelu { alpha: -1.5 },
            Activation::Clip { lo: -0.5, hi: 0.75 },
            Activation::Clip { lo: f64::NEG_INFINITY, hi: 0.3 },
            Activation::Clip { lo: -0.2, hi: f64::INFINITY },
        ];
        for act in acts {
            let net = one_layer(act);
            for x in [[0.0, 0.0], [1.0, -1.0], [-0.3, 0.7], [2.5, 0.125], [-4.0, -4.0]] {
                let xq: Vec<Rational> = x.iter().map(|&v| rational_from_f64(v)).collect();
                let exact = net.forward_exact(&xq, &mut []).unwrap();
                // The reference: the pre-activation in rationals, the activation's definition.
                let d = match &net.layers[0] {
                    Layer::Dense(d) => d,
                    Layer::Recurrent(_) => unreachable!(),
                };
                for (i, y) in exact.iter().enumerate() {
                    let z = d
                        .weights
                        .row(i)
                        .iter()
                        .zip(&xq)
                        .fold(rational_from_f64(d.bias[i]), |acc, (&w, xj)| acc + rational_from_f64(w) * xj);
                    let want = match act {
                        Activation::LeakyRelu { alpha } if z < Rational::zero() => z * rational_from_f64(alpha),
                        Activation::Clip { lo, hi } => {
                            let z = if lo.is_finite() { z.max(rational_from_f64(lo)) } else { z };
                            if hi.is_finite() { z.min(rational_from_f64(hi)) } else { z }
                        }
                        _ => z,
                    };
                    assert_eq!(*y, want, "{act} at {x:?}, output {i}");
                }
                let f = net.eval(&x).unwrap();
                for (a, b) in f.iter().zip(&exact) {
                    assert!((a - to_f64_nearest(b)).abs() <= 1e-12, "{act} at {x:?}: {a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn smooth_activations_have_no_exact_value_but_run_in_f64_and_intervals() {
        for act in [Activation::Tanh, Activation::Sigmoid] {
            let net = one_layer(act);
            let err = net.forward_exact(&[Rational::zero(), Rational::zero()], &mut []).unwrap_err();
            assert!(matches!(err, NetworkError::NoExactValue { layer: 0, .. }), "{err}");
            assert!(err.to_string().contains(act.name()) && err.to_string().contains("validated"), "{err}");
            let y = net.eval(&[0.5, -0.25]).unwrap();
            let iv = net.run(&[crate::Interval::point(0.5), crate::Interval::point(-0.25)], &mut []).unwrap();
            for (v, i) in y.iter().zip(&iv) {
                assert!(i.contains(*v), "{act}: {v} outside {i}");
            }
        }
        assert_eq!(one_layer(Activation::Sigmoid).eval(&[0.0, 0.0]).unwrap()[0], 1.0 / (1.0 + (-0.1f64).exp()));
    }

    #[test]
    fn bad_activation_parameters_are_rejected_naming_the_layer() {
        let mut net = one_layer(Activation::Relu);
        if let Layer::Dense(d) = &mut net.layers[0] {
            d.activation = Activation::Clip { lo: 1.0, hi: -1.0 };
        }
        let msg = net.validate().unwrap_err().to_string();
        assert!(msg.contains("layer 0") && msg.contains("clip"), "{msg}");
    }

    #[test]
    fn counts_per_activation() {
        let net = synthetic_dense(&[2, 5, 3, 1], 7);
        assert_eq!(net.relu_count(), 8);
        assert_eq!(net.neuron_counts().into_iter().collect::<Vec<_>>(), vec![("relu", 8)]);
        let mut tanh = net.clone();
        if let Layer::Dense(d) = &mut tanh.layers[1] {
            d.activation = Activation::Tanh;
        }
        assert_eq!(tanh.relu_count(), 5);
        assert_eq!(tanh.neuron_counts().into_iter().collect::<Vec<_>>(), vec![("relu", 5), ("tanh", 3)]);
        assert!(!tanh.is_piecewise_linear() && net.is_piecewise_linear());
        assert_eq!(tanh.first_activation_not(Activation::is_piecewise_linear), Some((1, Activation::Tanh)));
    }

    #[test]
    fn invalid_networks_are_rejected_with_the_layer_named() {
        let bad = Network::new(
            "f.onnx",
            vec![Layer::Dense(DenseLayer {
                weights: Matrix::new(1, 2, vec![1.0, f64::NAN]),
                bias: vec![0.0],
                activation: Activation::Relu,
            })],
        );
        let msg = bad.unwrap_err().to_string();
        assert!(msg.contains("layer 0") && msg.contains("NaN"), "{msg}");
        let shape = Network::new(
            "g.nnet",
            vec![
                Layer::Dense(DenseLayer {
                    weights: Matrix::new(3, 2, vec![0.0; 6]),
                    bias: vec![0.0; 3],
                    activation: Activation::Relu,
                }),
                Layer::Dense(DenseLayer {
                    weights: Matrix::new(1, 2, vec![0.0; 2]),
                    bias: vec![0.0],
                    activation: Activation::Identity,
                }),
            ],
        );
        assert!(shape.unwrap_err().to_string().contains("layer 1"));
    }
}
