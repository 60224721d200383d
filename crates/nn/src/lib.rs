//! Loads neural networks from ONNX and NNet files into Trestle's IR
//! ([`trestle_ir::network::Network`]): a chain of `Dense` layers, each an affine map followed by
//! ReLU or the identity, and Elman `Recurrent` layers (ONNX `RNN` with ReLU). Writes networks as
//! ONNX ([`write_onnx`], see [`onnx_write`] for the layout) that this loader reads back exactly.
//!
//! # Why it is shaped this way
//!
//! A verifier must reason about the network the file *means*, so loading is a translation with no
//! silent approximation: weights keep their exact values (f32 initializers widen to f64 exactly;
//! NNet decimals are parsed with a correctly rounded f64 parser, never through f32 or a decimal
//! round trip), matrices are never multiplied together, and anything the loader does not
//! understand (an operator, an attribute, a value) is an error naming the file and the node or
//! line, never skipped. One file per format (`onnx.rs`, its RNN part `onnx/recurrent.rs`,
//! `nnet.rs`), the tract cross-check (`onnx/tract_check.rs`), the writer (`onnx_write.rs`), one
//! error type per direction (`error.rs`: `LoadError`, `WriteError`), and one small shared builder
//! (`affine.rs`) that turns a sequence of affine maps, ReLUs and Elman layers into layers, merging two consecutive affine maps only when the merged entries are exactly the
//! composition (each product and sum is checked to be exact in f64). When a merge would round, the
//! maps stay separate `Identity` layers: one more layer costs the engines little, a rounded weight
//! would make them prove something about a different network.
//!
//! After assembly every network is checked by [`Network::validate`] (shapes chain, all weights
//! finite). [`load_onnx`] does not run inference (it is on the hot path of every run);
//! [`cross_check_with_tract`] compares our f64 forward pass with tract's own inference (step by
//! step, carrying hidden states, for recurrent models) and is what the tests use.
//!
//! # ONNX
//!
//! tract decodes the protobuf ([`tract_onnx::pb::ModelProto`]); the graph is translated here. It
//! must have one input (shape `[1, n]`, `[n]`, or any shape with at most one dimension other than
//! 1; a symbolic leading batch dimension counts as 1; float or double) and one output, and its
//! nodes must form a single chain from input to output. Constants are initializers (float32 or
//! float64, in `raw_data` little-endian or in `float_data`/`double_data`; int64/int32 for Reshape
//! shapes) or `Constant` nodes. NaN or infinite constants are errors naming the initializer.
//!
//! | operator | translation |
//! | --- | --- |
//! | `Gemm` (`alpha`, `beta`, `transA`, `transB`) | `W = B'^T` then `alpha` (a diagonal map, folded only if exact), bias `beta * C` |
//! | `MatMul` with a constant right operand `[k, n]` or `[k]` (or a constant left operand and a column value) | full matrix, no bias |
//! | `Add` / `Sub` with a constant, either order (broadcast) | bias (`c - x` is the diagonal `-1` plus bias `c`) |
//! | `Mul` by a constant, either order (scalar or elementwise) | diagonal map |
//! | `Div` by a constant | diagonal map of `1/c` |
//! | `Relu` | the activation of the pending affine map (an identity-matrix layer if there is none) |
//! | `RNN` (`activations = ["Relu"]`, forward, layout 0, no clip) | an Elman layer: `W`, `R`, bias `Wb + Rb` (exact in f64 or an error) |
//! | `Flatten`, `Reshape`, `Squeeze`, `Unsqueeze`, `Identity` | no-ops, allowed only while the value stays a feature vector |
//! | `Constant` | a constant operand for the above |
//! | `Slice`, `Concat` | only to split and join the hidden states of `RNN` nodes (below) |
//!
//! Anything else, including unknown attributes (e.g. opset < 7 `broadcast`), is an error.
//!
//! A recurrent model is one step of the controller: `X` is `[1, 1, n]` (one step, one sequence),
//! and each RNN node's hidden state comes in as a graph input (`initial_h`) and leaves as a graph
//! output (`Y_h`), the caller feeding it back; a stacked state (torch's `num_layers > 1`: one input
//! sliced per layer, the layers' `Y_h` concatenated into one output) is accepted too. These state
//! values are the IR layer's carried state, not part of the network's interface; an RNN node whose
//! state is not carried so is an error, since its state would reset at every call (see
//! `onnx/recurrent.rs`). Pending affine maps before an RNN stay layers of their own.
//! Consecutive affine ops merge into one layer when exact: `MatMul` then `Add` is one layer with
//! the MatMul's weights and the Add's bias. A product of two f32 values always fits in an f64, so
//! `Gemm` with f32 weights then `Mul` by an f32 0.3 also folds exactly; a second such factor (or
//! f64 weights) would round, and then the scaling stays a separate diagonal layer.
//!
//! Rounding (the only places a value is not taken verbatim from the file): `1/c` for `Div` and
//! `beta * C` for `Gemm` are correctly rounded f64 values; both are exact when `c` is a power of
//! two, respectively when `beta = 1` (or the product is representable).
//!
//! # NNet
//!
//! Kyle Julian's text format as in sisl/NNet (see [`nnet`] for the layout). Hidden layers are
//! ReLU, the last is linear. With [`NnetNormalization::None`] the result is the raw network in
//! the file. With [`NnetNormalization::Header`] it is what the standard NNet evaluator computes,
//! as explicit layers:
//!
//! 1. clip each input to `[min, max]`, exactly, as
//!    `clamp(x, lo, hi) = hi - relu(hi - (lo + relu(x - lo)))`: two ReLU layers of `n` neurons
//!    (always kept, even where they never bind on the intended domain). The constants are the
//!    header's values, so the layers denote the exact clamp, and the f64 evaluation has no
//!    cancellation: huge inputs give `hi` or `lo` (up to an ulp), not `lo + x - x` (see
//!    `nnet::clamp`);
//! 2. normalise, `(x - mean) / range`: a diagonal layer with weights `1/range` and bias
//!    `-mean/range`, each correctly rounded to f64 (exact when `range` is a power of two; e.g.
//!    VCAS's ranges 16000, 200 and 40 are not, so those weights carry a relative error of at most
//!    2^-53). It is merged into the clip recombination when that is exact, and skipped when all
//!    input means are 0 and ranges 1;
//! 3. the raw network;
//! 4. de-normalise the outputs, `y * range_out + mean_out`: a diagonal layer whose constants are
//!    the file's values, exact; merged into the last layer when exact, skipped when it is the
//!    identity (mean 0, range 1).

pub mod error;
pub mod nnet;
pub mod onnx;
pub mod onnx_write;

mod affine;

pub use error::{LoadError, WriteError};
pub use nnet::{NnetHeader, parse_nnet, parse_nnet_header};
pub use onnx::{convert_onnx, cross_check_with_tract, load_onnx};
pub use onnx_write::{encode_onnx, network_to_onnx, write_onnx, write_onnx_checked};

use std::path::Path;
use trestle_ir::network::Network;

/// How to treat the normalisation constants in an NNet header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NnetNormalization {
    /// The raw network only; the header's min/max/mean/range are read and checked, not applied.
    None,
    /// The standard NNet evaluator semantics (clip, normalise, raw network, de-normalise), as
    /// explicit layers (see the crate docs).
    #[default]
    Header,
}

/// Options for [`load_network`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    pub nnet_normalization: NnetNormalization,
}

/// Loads a network, choosing the format by extension (`.onnx` or `.nnet`, case-insensitive).
pub fn load_network(path: &Path, opts: &LoadOptions) -> Result<Network, LoadError> {
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    match extension.as_str() {
        "onnx" => load_onnx(path),
        "nnet" => load_nnet(path, opts.nnet_normalization),
        _ => Err(LoadError::UnknownExtension { file: path.display().to_string(), extension }),
    }
}

/// Loads an NNet file (see [`parse_nnet`]).
pub fn load_nnet(path: &Path, normalization: NnetNormalization) -> Result<Network, LoadError> {
    let file = path.display().to_string();
    check_readable(path)?;
    let bytes = std::fs::read(path).map_err(|e| LoadError::Io { file: file.clone(), reason: e.to_string() })?;
    let text = String::from_utf8(bytes).map_err(|e| LoadError::Io {
        file: file.clone(),
        reason: format!("not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to()),
    })?;
    parse_nnet(&text, &file, normalization)
}

/// Distinguishes a missing file from one that cannot be read, before a format reader sees it.
pub(crate) fn check_readable(path: &Path) -> Result<(), LoadError> {
    let file = || path.display().to_string();
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(LoadError::NotFound { file: file() }),
        Err(e) => Err(LoadError::Io { file: file(), reason: e.to_string() }),
        Ok(m) if !m.is_file() => Err(LoadError::Io { file: file(), reason: "not a regular file".into() }),
        Ok(_) => Ok(()),
    }
}
