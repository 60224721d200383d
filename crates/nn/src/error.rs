//! The one error type of the crate.
//!
//! Every message starts with the file (or the `source` name given to [`crate::parse_nnet`]) and
//! then says where in it: the ONNX node (index, name and op type), the initializer, or the NNet
//! line (1-based). Nothing here is ever a panic: bad input is an error value.

use trestle_ir::network::NetworkError;

/// Why a network file could not be turned into a [`trestle_ir::network::Network`].
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The path does not exist.
    #[error("{file}: no such file")]
    NotFound { file: String },

    /// The file exists but could not be read (permissions, a directory, not UTF-8 text, ...).
    #[error("{file}: cannot read the file: {reason}")]
    Io { file: String, reason: String },

    /// The extension is neither `.onnx` nor `.nnet` (case-insensitive).
    #[error("{file}: unknown network file extension {extension:?}: expected .onnx or .nnet")]
    UnknownExtension { file: String, extension: String },

    /// The bytes are not an ONNX `ModelProto` or the model has no graph.
    #[error("{file}: not a valid ONNX model: {reason}")]
    BadOnnx { file: String, reason: String },

    /// An operator this loader does not translate; `hint` says what it would need.
    #[error(
        "{file}: node {node} ({op}): unsupported operator {op}{domain}: {hint} (supported: Gemm, MatMul, Conv \
         covering its whole input, Add, Sub, Mul, Div, BatchNormalization, Relu, LeakyRelu, PRelu, Clip, Tanh, \
         Sigmoid, RNN (ReLU), Flatten, Reshape, Squeeze, Unsqueeze, Transpose, Identity, Constant; Softmax and \
         LogSoftmax as the last node; Slice and Concat of hidden states)"
    )]
    UnsupportedOp { file: String, node: String, op: String, domain: String, hint: String },

    /// An attribute that is unknown to this loader, or has a value it does not handle;
    /// `attribute` reads `name = value`.
    #[error("{file}: node {node} ({op}): attribute {attribute} is not supported: {why}")]
    UnsupportedAttribute { file: String, node: String, op: String, attribute: String, why: String },

    /// Any other problem located at one ONNX node: shape mismatches, non-constant operands, ...
    #[error("{file}: node {node} ({op}): {problem}")]
    Node { file: String, node: String, op: String, problem: String },

    /// A constant tensor (initializer or `Constant` node output) that cannot be used: NaN or
    /// infinite entries, an unsupported element type, a data length that does not match its shape.
    #[error("{file}: initializer {name:?}: {problem}")]
    Initializer { file: String, name: String, problem: String },

    /// The graph is not one chain of nodes from its single input to its single output.
    #[error("{file}: the graph is not a single chain from input to output: {problem}")]
    NotAChain { file: String, problem: String },

    /// The declared graph inputs or outputs are unusable (several inputs, unknown sizes, ...).
    #[error("{file}: graph interface: {problem}")]
    Interface { file: String, problem: String },

    /// A problem at one line of an NNet file (1-based line number; one past the last line for a
    /// file that ends early).
    #[error("{file}: line {line}: {problem}")]
    Nnet { file: String, line: usize, problem: String },

    /// The assembled network failed [`trestle_ir::network::Network::validate`] or could not be
    /// evaluated (its message names the file, as the network's `source`).
    #[error(transparent)]
    Network(#[from] NetworkError),

    /// tract could not load or run the model in [`crate::cross_check_with_tract`].
    #[error("{file}: tract inference failed: {reason}")]
    Tract { file: String, reason: String },

    /// [`crate::cross_check_with_tract`]: our network and tract's disagree on the output size.
    #[error("{file}: tract returns {tract} outputs, the loaded network {ours}")]
    OutputMismatch { file: String, tract: usize, ours: usize },
}

/// Why a network could not be written as ONNX ([`crate::write_onnx`]).
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A layer ONNX (as this writer uses it) cannot express.
    #[error("{network}: layer {layer}: {problem}")]
    Unsupported { network: String, layer: usize, problem: String },

    /// The network failed [`trestle_ir::network::Network::validate`].
    #[error(transparent)]
    Network(#[from] NetworkError),

    #[error("{file}: cannot write the file: {reason}")]
    Io { file: String, reason: String },
}
