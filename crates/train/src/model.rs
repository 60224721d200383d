//! What is trained: a stack of dense and Elman (ReLU) layers, with all parameters in one flat f32
//! buffer (so the optimiser is one loop), and its conversion to the IR's network.

use crate::TrainError;
use crate::rng::TrainRng;
use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, Network, RecurrentLayer};

/// One layer of an [`Architecture`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LayerSpec {
    /// `y = act(W x + b)`.
    Dense { width: usize, activation: Activation },
    /// Elman: `h_t = relu(W x_t + R h_{t-1} + b)`, `h_{-1} = 0`; its output is `h_t`.
    Recurrent { width: usize },
}

impl LayerSpec {
    pub fn width(&self) -> usize {
        match *self {
            LayerSpec::Dense { width, .. } | LayerSpec::Recurrent { width } => width,
        }
    }

    fn activation(&self) -> Activation {
        match *self {
            LayerSpec::Dense { activation, .. } => activation,
            LayerSpec::Recurrent { .. } => Activation::Relu,
        }
    }
}

/// The shape of a network: input size and layers.
#[derive(Clone, Debug, PartialEq)]
pub struct Architecture {
    pub input: usize,
    pub layers: Vec<LayerSpec>,
}

impl Architecture {
    /// ReLU hidden layers of the given widths, then a linear output layer: `mlp(2, &[64, 64], 2)`
    /// is the "2x64" controller `2 -> 64 -> 64 -> 2`.
    pub fn mlp(input: usize, hidden: &[usize], output: usize) -> Architecture {
        let mut layers: Vec<LayerSpec> =
            hidden.iter().map(|&width| LayerSpec::Dense { width, activation: Activation::Relu }).collect();
        layers.push(LayerSpec::Dense { width: output, activation: Activation::Identity });
        Architecture { input, layers }
    }

    /// Hidden layers of the given widths with the activation `hidden_activation` (ReLU, tanh or
    /// sigmoid), then a linear output layer.
    pub fn mlp_with(input: usize, hidden: &[usize], hidden_activation: Activation, output: usize) -> Architecture {
        let mut layers: Vec<LayerSpec> =
            hidden.iter().map(|&width| LayerSpec::Dense { width, activation: hidden_activation }).collect();
        layers.push(LayerSpec::Dense { width: output, activation: Activation::Identity });
        Architecture { input, layers }
    }

    /// Recurrent ReLU layers of the given widths, then a linear output layer.
    pub fn rnn(input: usize, recurrent: &[usize], output: usize) -> Architecture {
        let mut layers: Vec<LayerSpec> = recurrent.iter().map(|&width| LayerSpec::Recurrent { width }).collect();
        layers.push(LayerSpec::Dense { width: output, activation: Activation::Identity });
        Architecture { input, layers }
    }

    pub fn output(&self) -> usize {
        self.layers.last().map_or(self.input, LayerSpec::width)
    }

    pub fn is_recurrent(&self) -> bool {
        self.layers.iter().any(|l| matches!(l, LayerSpec::Recurrent { .. }))
    }

    pub(crate) fn check(&self) -> Result<(), TrainError> {
        if self.layers.is_empty() {
            return Err(TrainError::Architecture("no layers".into()));
        }
        if self.input == 0 || self.layers.iter().any(|l| l.width() == 0) {
            return Err(TrainError::Architecture(format!("a layer of width 0 in {:?}", self.sizes())));
        }
        // The passes (`pass.rs`) compute ReLU, tanh, sigmoid and identity layers only.
        if let Some(a) =
            self.layers.iter().map(LayerSpec::activation).find(|a| {
                !matches!(a, Activation::Relu | Activation::Tanh | Activation::Sigmoid | Activation::Identity)
            })
        {
            return Err(TrainError::Architecture(format!(
                "the trainer has no {a} layers (ReLU, tanh, sigmoid and identity only)"
            )));
        }
        Ok(())
    }

    /// Sizes, input first.
    pub fn sizes(&self) -> Vec<usize> {
        std::iter::once(self.input).chain(self.layers.iter().map(LayerSpec::width)).collect()
    }
}

/// Weight initialisation (biases start at zero). Both are the uniform variants, so the draws are
/// plain uniforms from the seeded stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Init {
    /// He (Kaiming) uniform: `U(-sqrt(6 / fan_in), sqrt(6 / fan_in))`, for ReLU layers.
    #[default]
    He,
    /// Xavier (Glorot) uniform: `U(-sqrt(6 / (fan_in + fan_out)), ...)`.
    Xavier,
}

/// Where one layer's tensors live in the flat parameter buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LayerShape {
    pub spec: LayerSpec,
    pub input: usize,
    pub output: usize,
    /// Offsets of W (`output x input`), R (`output x output`, recurrent only) and b.
    pub w: usize,
    pub r: usize,
    pub b: usize,
}

impl LayerShape {
    pub fn activation(&self) -> Activation {
        self.spec.activation()
    }

    pub fn is_recurrent(&self) -> bool {
        matches!(self.spec, LayerSpec::Recurrent { .. })
    }

    pub fn end(&self) -> usize {
        self.b + self.output
    }
}

/// An architecture with its parameters.
#[derive(Clone, Debug)]
pub struct Model {
    pub(crate) arch: Architecture,
    pub(crate) shapes: Vec<LayerShape>,
    pub(crate) params: Vec<f32>,
}

impl Model {
    /// Parameters drawn from `rng` layer by layer (W, then R), row-major.
    pub(crate) fn init(arch: &Architecture, init: Init, rng: &mut TrainRng) -> Result<Model, TrainError> {
        arch.check()?;
        let mut shapes = Vec::with_capacity(arch.layers.len());
        let (mut offset, mut input) = (0, arch.input);
        for &spec in &arch.layers {
            let output = spec.width();
            let w = offset;
            let r = w + output * input;
            let b = if matches!(spec, LayerSpec::Recurrent { .. }) { r + output * output } else { r };
            shapes.push(LayerShape { spec, input, output, w, r, b });
            offset = b + output;
            input = output;
        }
        let mut params = vec![0.0f32; offset];
        for s in &shapes {
            // A recurrent layer sees [x; h] through [W R]: one fan-in for both.
            let fan_in = s.input + if s.is_recurrent() { s.output } else { 0 };
            let bound = match init {
                Init::He => (6.0 / fan_in as f64).sqrt(),
                Init::Xavier => (6.0 / (fan_in + s.output) as f64).sqrt(),
            };
            for v in &mut params[s.w..s.b] {
                *v = rng.symmetric(bound) as f32;
            }
        }
        Ok(Model { arch: arch.clone(), shapes, params })
    }

    pub fn architecture(&self) -> &Architecture {
        &self.arch
    }

    /// Number of trained parameters.
    pub fn parameter_count(&self) -> usize {
        self.params.len()
    }

    /// The IR network (weights are the f32 values, widened exactly). `source` names it in messages.
    pub fn to_network(&self, source: &str) -> Network {
        let widen = |range: std::ops::Range<usize>| self.params[range].iter().map(|&v| f64::from(v)).collect();
        let layers = self
            .shapes
            .iter()
            .map(|s| {
                let weights = Matrix::new(s.output, s.input, widen(s.w..s.w + s.output * s.input));
                let bias = widen(s.b..s.end());
                if s.is_recurrent() {
                    Layer::Recurrent(RecurrentLayer {
                        input_weights: weights,
                        recurrent_weights: Matrix::new(s.output, s.output, widen(s.r..s.b)),
                        bias,
                        activation: Activation::Relu,
                    })
                } else {
                    Layer::Dense(DenseLayer { weights, bias, activation: s.activation() })
                }
            })
            .collect();
        Network::new(source, layers)
            .expect("a trained model is a valid network (finite weights are checked on every epoch)")
    }
}
