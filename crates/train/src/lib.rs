//! A small, deterministic trainer for the networks Trestle builds its own benchmarks from:
//! maze controllers (dense ReLU, tanh or sigmoid MLPs, regression), recurrent policies (Elman ReLU layers trained
//! by backpropagation through time) and argmax policies over discrete labels (classification).
//! The result is a [`trestle_ir::network::Network`]; `trestle-nn` writes it as ONNX.
//!
//! # Why a trainer of our own
//!
//! The benchmark generators promise that one seed gives byte-identical network files, on any
//! machine and with any number of threads, so that shipped suites can be regenerated and checked
//! by hash. General-purpose frameworks do not promise that: candle (and the BLAS libraries behind
//! it) choose kernels by CPU features at run time, use FMA where the CPU has it and split
//! reductions across threads, so the last bits of a gradient, and after a few thousand Adam steps
//! every weight, depend on the machine. The `matrixmultiply` crate alone has the same problem (it
//! picks an FMA, AVX or SSE2 kernel at run time, and FMA rounds once where the others round
//! twice). Frameworks also add minutes of build time for what is, here, a few hundred lines of
//! arithmetic. So this crate is small and explicit about the order of
//! every floating-point operation:
//!
//! - f32 throughout (the precision of the files written); the network keeps the f32 values,
//!   widened exactly to f64, so the IR, the ONNX file and the trainer agree bit for bit;
//! - one matrix product ([`gemm`]), register-tiled and packed for speed (a 2x1024 controller
//!   trains 20 epochs over 4096 samples in about 15 s of one core; `tests/speed.rs`), in which every output entry accumulates its
//!   products in a fixed order with one rounding per operation and no FMA; the AVX2 build of the
//!   kernel and the baseline build perform the same operations, so their results are identical;
//! - every other reduction (bias gradients, losses, gradient norms) is a loop in a fixed order;
//!   `exp` and `ln` (softmax, cross-entropy) are computed from IEEE arithmetic in [`detmath`], not
//!   by the platform's libm; Adam's bias corrections by repeated multiplication;
//! - randomness (initialisation, sample order) comes from ChaCha8 seeded by the caller, through
//!   conversions written in [`rng`];
//! - single-threaded: callers that train many networks run them in parallel, one per thread.
//!
//! # What it trains
//!
//! An [`Architecture`] is a stack of dense layers (ReLU, tanh, sigmoid or identity; tanh and
//! sigmoid computed through [`detmath`]'s `exp`, not libm) and Elman layers
//! (`h_t = relu(W x_t + R h_{t-1} + b)`, `h_{-1} = 0`). A [`Dataset`] holds sequences of `steps`
//! inputs with a target at every step (`steps = 1` for feed-forward data): vectors (mean squared
//! error) or class labels (softmax cross-entropy on the outputs, which stay the logits: the
//! network's argmax is its prediction). [`train()`] runs shuffled mini-batches with Adam or SGD,
//! optional gradient clipping, learning-rate decay, early stopping and a target loss, and returns
//! the model with a [`TrainReport`] (loss per epoch, final metrics).
//!
//! ```
//! use trestle_train::{Architecture, Dataset, Optimizer, TrainConfig, train};
//! let xs: Vec<Vec<f64>> = (0..64).map(|i| vec![i as f64 / 64.0]).collect();
//! let ys: Vec<Vec<f64>> = xs.iter().map(|x| vec![2.0 * x[0] - 0.5]).collect();
//! let data = Dataset::regression(&xs, &ys).unwrap();
//! let config = TrainConfig { seed: 1, epochs: 200, batch_size: 16, optimizer: Optimizer::adam(1e-2), ..TrainConfig::default() };
//! let trained = train(&Architecture::mlp(1, &[8], 1), &data, None, &config).unwrap();
//! assert!(trained.report.train.loss < 1e-3, "{}", trained.report);
//! let net = trained.model.to_network("inline:line");
//! assert_eq!(net.sizes(), vec![1, 8, 1]);
//! ```

pub mod data;
pub mod detmath;
pub mod gemm;
pub mod model;
pub mod optim;
pub mod rng;
pub mod train;

mod loss;
mod pass;

pub use data::{Dataset, Targets};
pub use model::{Architecture, Init, LayerSpec, Model};
pub use optim::Optimizer;
pub use train::{EarlyStopping, EpochLoss, Metrics, StopReason, TrainConfig, TrainReport, Trained, evaluate, train};

/// Why a training run could not start or finish.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrainError {
    #[error("architecture: {0}")]
    Architecture(String),
    #[error("training data: {0}")]
    Data(String),
    #[error("training configuration: {0}")]
    Config(String),
    /// The loss or a parameter became infinite or NaN (lower the learning rate or clip gradients).
    #[error("training diverged in epoch {epoch}: the loss or a weight is no longer finite")]
    Diverged { epoch: usize },
}
