//! Writes a [`Network`] as ONNX that [`crate::load_onnx`] reads back to the same layers, bit for
//! bit, and that other runtimes (tract, onnxruntime) evaluate as the same function.
//!
//! # Layout
//!
//! Weights are stored as float32 when every weight and bias of the network is exactly an f32 (a
//! network trained in f32), otherwise every tensor is float64; the graph's input and outputs have
//! the same element type. Tensors are little-endian `raw_data`. Names are fixed by the layer
//! index `k`, so the bytes depend on the network alone (no timestamps, no paths; producer
//! `trestle` version [`PRODUCER_VERSION`], ONNX opset 13, IR version 7).
//!
//! A dense layer `k` is `MatMul` by `layer{k}.weight` `[in, out]` (the transpose of the IR's
//! matrix, as torch writes `Linear` on a 3-D value), `Add` of `layer{k}.bias` `[out]`, then its
//! activation: nothing for the identity, `Relu` (node `layer{k}.relu`), `Tanh`, `Sigmoid`, a
//! leaky ReLU as `LeakyRelu` with its `alpha` attribute in a float32 model and as `PRelu` with the
//! scalar slope tensor `layer{k}.slope` in a float64 one (ONNX attributes are float32, and tract
//! evaluates `LeakyRelu` in float32 only), a clip as `Clip` with the scalar tensors
//! `layer{k}.min` / `layer{k}.max` (an infinite bound: the input left empty). Activation
//! parameters count as weights for the choice of float32. (Not `Gemm`: tract 0.23 cannot evaluate
//! a float64 `Gemm` with a bias, and one form for both kinds of network is simpler.) A
//! feed-forward network reads `x` of shape `[1, n]` and writes `y` of shape `[1, m]`. The loader
//! reads back the same layers for a network whose activations are in canonical form
//! ([`trestle_ir::Activation::canonical`]; the loader puts them in it).
//!
//! A recurrent network is one *step* of the controller. It reads `x` of shape `[1, 1, n]` (ONNX
//! RNN's `[seq_length, batch, input]` with one step and one sequence) and, for its `j`-th
//! recurrent layer, the previous hidden state `h{j}` of shape `[1, 1, hidden]`; it writes `y` of
//! shape `[1, 1, m]` and the new hidden state `h{j}_out`. A caller starts with zero states and
//! feeds `h{j}_out` back as `h{j}` at the next step; that is the IR's recurrent semantics, and the
//! layout `torch.onnx.export` produces for an `nn.RNN(nonlinearity="relu")` whose hidden state is
//! an explicit input and output (one RNN node per layer). A recurrent layer `k` is written as
//! `RNN` with `hidden_size` and `activations = ["Relu"]` (direction forward, layout 0, no clip),
//! `W = layer{k}.W` `[1, hidden, in]`, `R = layer{k}.R` `[1, hidden, hidden]`, `B = layer{k}.B`
//! `[1, 2 hidden]` holding the IR's bias then zeros (ONNX adds the two halves), no
//! `sequence_lens`, `initial_h = h{j}`; outputs `Y` `[1, 1, 1, hidden]` and `Y_h = h{j}_out`;
//! then `Squeeze` of axis 1 (the direction) back to `[1, 1, hidden]`.
//!
//! A recurrent layer needs the ReLU activation (ONNX RNN has no identity activation in its
//! required set); the writer refuses other recurrent layers.
//!
//! Files are written through [`atomic_output`], like every file the tool writes.

use crate::error::WriteError;
use prost::Message;
use std::path::Path;
use tract_onnx::pb::{self, attribute_proto::AttributeType, tensor_shape_proto::dimension};
use trestle_ir::network::{Activation, DenseLayer, Layer, Network, RecurrentLayer};

/// Names the layout above; changed whenever the bytes written for a network change.
pub const PRODUCER_VERSION: &str = "onnx-writer-1";
const PRODUCER_NAME: &str = "trestle";
const OPSET: i64 = 13;
const IR_VERSION: i64 = 7;
const FLOAT: i32 = pb::tensor_proto::DataType::Float as i32;
const DOUBLE: i32 = pb::tensor_proto::DataType::Double as i32;
const INT64: i32 = pb::tensor_proto::DataType::Int64 as i32;

/// The ONNX model of `net` (see the module docs for the layout).
pub fn network_to_onnx(net: &Network) -> Result<pb::ModelProto, WriteError> {
    net.validate()?;
    let elem_type = if all_weights_are_f32(net) { FLOAT } else { DOUBLE };
    let recurrent = net.is_recurrent();
    let lead: &[i64] = if recurrent { &[1, 1] } else { &[1] };
    let mut g = GraphWriter { elem_type, cur: "x".into(), graph: pb::GraphProto::default() };
    g.graph.name = "trestle".into();
    g.graph.input.push(value_info("x", elem_type, &dims(lead, net.input_dim())));
    let mut recurrent_index = 0;
    for (k, layer) in net.layers.iter().enumerate() {
        match layer {
            Layer::Dense(d) => g.dense(k, d),
            Layer::Recurrent(r) => {
                if r.activation != Activation::Relu {
                    let problem = "a recurrent layer must have the ReLU activation to be written as ONNX RNN".into();
                    return Err(WriteError::Unsupported { network: net.source.clone(), layer: k, problem });
                }
                g.rnn(k, recurrent_index, r);
                recurrent_index += 1;
            }
        }
    }
    let last = g.graph.node.last_mut().expect("a valid network has a layer, and every layer writes a node");
    last.output[0] = "y".into();
    let y = value_info("y", elem_type, &dims(lead, net.output_dim()));
    g.graph.output.insert(0, y);
    Ok(pb::ModelProto {
        ir_version: IR_VERSION,
        opset_import: vec![pb::OperatorSetIdProto { domain: String::new(), version: OPSET }],
        producer_name: PRODUCER_NAME.into(),
        producer_version: PRODUCER_VERSION.into(),
        graph: Some(g.graph),
        ..Default::default()
    })
}

/// The encoded bytes of [`network_to_onnx`].
pub fn encode_onnx(net: &Network) -> Result<Vec<u8>, WriteError> {
    Ok(network_to_onnx(net)?.encode_to_vec())
}

/// Writes `net` with [`write_onnx`] and checks the file: it must read back ([`crate::load_onnx`])
/// as the very layers written, and tract's inference on `probes` (successive steps of one
/// sequence for a recurrent network) must agree within `max_gap`. Generators call this for every
/// model they ship. The error says which check failed.
pub fn write_onnx_checked(net: &Network, path: &Path, probes: &[Vec<f64>], max_gap: f64) -> Result<(), String> {
    write_onnx(net, path).map_err(|e| e.to_string())?;
    let back = crate::load_onnx(path).map_err(|e| e.to_string())?;
    if back.layers != net.layers {
        return Err("the ONNX file does not read back bit for bit".into());
    }
    let gap = crate::cross_check_with_tract(path, net, probes).map_err(|e| e.to_string())?;
    if gap > max_gap {
        return Err(format!("tract's inference differs by {gap}"));
    }
    Ok(())
}

/// Writes [`encode_onnx`] to `path` with [`atomic_output::write`] (a reader never sees half a
/// model, and a crash leaves the old file or the new one).
pub fn write_onnx(net: &Network, path: &Path) -> Result<(), WriteError> {
    let bytes = encode_onnx(net)?;
    atomic_output::write(path, &bytes)
        .map_err(|e| WriteError::Io { file: path.display().to_string(), reason: e.to_string() })
}

fn all_weights_are_f32(net: &Network) -> bool {
    let exact = |v: &f64| f64::from(*v as f32) == *v;
    let params_exact = |a: Activation| match a {
        Activation::LeakyRelu { alpha } => exact(&alpha),
        Activation::Clip { lo, hi } => (!lo.is_finite() || exact(&lo)) && (!hi.is_finite() || exact(&hi)),
        _ => true,
    };
    net.layers.iter().all(|l| params_exact(l.activation()))
        && net.layers.iter().all(|l| match l {
            Layer::Dense(d) => d.weights.data.iter().all(exact) && d.bias.iter().all(exact),
            Layer::Recurrent(r) => {
                r.input_weights.data.iter().all(exact)
                    && r.recurrent_weights.data.iter().all(exact)
                    && r.bias.iter().all(exact)
            }
        })
}

fn dims(lead: &[i64], width: usize) -> Vec<i64> {
    let mut d = lead.to_vec();
    d.push(width as i64);
    d
}

/// Appends nodes, initializers and state inputs/outputs; `cur` is the value the next layer reads.
struct GraphWriter {
    elem_type: i32,
    cur: String,
    graph: pb::GraphProto,
}

impl GraphWriter {
    fn node(
        &mut self,
        name: String,
        op: &str,
        inputs: Vec<String>,
        outputs: Vec<String>,
        attrs: Vec<pb::AttributeProto>,
    ) {
        self.cur.clone_from(&outputs[0]);
        self.graph.node.push(pb::NodeProto {
            name,
            op_type: op.into(),
            input: inputs,
            output: outputs,
            attribute: attrs,
            ..Default::default()
        });
    }

    fn tensor(&mut self, name: &str, dims: &[usize], values: impl Iterator<Item = f64>) -> String {
        let raw_data = if self.elem_type == FLOAT {
            values.flat_map(|v| (v as f32).to_le_bytes()).collect()
        } else {
            values.flat_map(f64::to_le_bytes).collect()
        };
        self.graph.initializer.push(pb::TensorProto {
            name: name.into(),
            dims: dims.iter().map(|&d| d as i64).collect(),
            data_type: self.elem_type,
            raw_data,
            ..Default::default()
        });
        name.into()
    }

    /// The layer's activation after its affine map (see the module docs).
    fn activation(&mut self, k: usize, activation: Activation) {
        let input = self.cur.clone();
        let (name, op, inputs, attrs) = match activation {
            Activation::Identity => return,
            Activation::Relu => ("relu", "Relu", vec![input], vec![]),
            Activation::Tanh => ("tanh", "Tanh", vec![input], vec![]),
            Activation::Sigmoid => ("sigmoid", "Sigmoid", vec![input], vec![]),
            Activation::LeakyRelu { alpha } if self.elem_type == FLOAT => {
                ("leaky_relu", "LeakyRelu", vec![input], vec![attr_float("alpha", alpha as f32)])
            }
            Activation::LeakyRelu { alpha } => {
                let slope = self.tensor(&format!("layer{k}.slope"), &[], std::iter::once(alpha));
                ("prelu", "PRelu", vec![input, slope], vec![])
            }
            Activation::Clip { lo, hi } => {
                let mut bound = |name: &str, v: f64| {
                    if v.is_finite() {
                        self.tensor(&format!("layer{k}.{name}"), &[], std::iter::once(v))
                    } else {
                        String::new()
                    }
                };
                let (min, max) = (bound("min", lo), bound("max", hi));
                let mut inputs = vec![input, min, max];
                while inputs.last().is_some_and(String::is_empty) {
                    inputs.pop();
                }
                ("clip", "Clip", inputs, vec![])
            }
        };
        self.node(format!("layer{k}.{name}"), op, inputs, vec![format!("layer{k}.{name}")], attrs);
    }

    /// `MatMul(x, W^T)` then `Add(b)`.
    fn dense(&mut self, k: usize, d: &DenseLayer) {
        let wt = d.weights.transpose();
        let w = self.tensor(&format!("layer{k}.weight"), &[wt.rows, wt.cols], wt.data.iter().copied());
        let b = self.tensor(&format!("layer{k}.bias"), &[d.bias.len()], d.bias.iter().copied());
        let x = self.cur.clone();
        self.node(format!("layer{k}.matmul"), "MatMul", vec![x, w], vec![format!("layer{k}.matmul")], vec![]);
        let y = self.cur.clone();
        self.node(format!("layer{k}.add"), "Add", vec![y, b], vec![format!("layer{k}.add")], vec![]);
        self.activation(k, d.activation);
    }

    /// The `j`-th recurrent layer (layer `k`) as one ONNX RNN step with explicit state `h{j}`.
    fn rnn(&mut self, k: usize, j: usize, r: &RecurrentLayer) {
        let (hidden, input) = (r.input_weights.rows, r.input_weights.cols);
        let w = self.tensor(&format!("layer{k}.W"), &[1, hidden, input], r.input_weights.data.iter().copied());
        let rr = self.tensor(&format!("layer{k}.R"), &[1, hidden, hidden], r.recurrent_weights.data.iter().copied());
        let bias = r.bias.iter().copied().chain(std::iter::repeat_n(0.0, hidden));
        let b = self.tensor(&format!("layer{k}.B"), &[1, 2 * hidden], bias);
        let (h_in, h_out) = (format!("h{j}"), format!("h{j}_out"));
        let state_dims = [1, 1, hidden as i64];
        self.graph.input.push(value_info(&h_in, self.elem_type, &state_dims));
        self.graph.output.push(value_info(&h_out, self.elem_type, &state_dims));
        let inputs = vec![self.cur.clone(), w, rr, b, String::new(), h_in];
        let attrs = vec![attr_int("hidden_size", hidden as i64), attr_strings("activations", &["Relu"])];
        self.node(format!("layer{k}.rnn"), "RNN", inputs, vec![format!("layer{k}.rnn"), h_out], attrs);
        let axes = format!("layer{k}.squeeze_axes");
        self.graph.initializer.push(pb::TensorProto {
            name: axes.clone(),
            dims: vec![1],
            data_type: INT64,
            raw_data: 1i64.to_le_bytes().to_vec(),
            ..Default::default()
        });
        let y = self.cur.clone();
        self.node(format!("layer{k}.squeeze"), "Squeeze", vec![y, axes], vec![format!("layer{k}.squeeze")], vec![]);
    }
}

fn attr_float(name: &str, f: f32) -> pb::AttributeProto {
    pb::AttributeProto { name: name.into(), r#type: AttributeType::Float as i32, f, ..Default::default() }
}

fn attr_int(name: &str, i: i64) -> pb::AttributeProto {
    pb::AttributeProto { name: name.into(), r#type: AttributeType::Int as i32, i, ..Default::default() }
}

fn attr_strings(name: &str, values: &[&str]) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: AttributeType::Strings as i32,
        strings: values.iter().map(|s| s.as_bytes().to_vec()).collect(),
        ..Default::default()
    }
}

fn value_info(name: &str, elem_type: i32, dims: &[i64]) -> pb::ValueInfoProto {
    let dim = dims
        .iter()
        .map(|&d| pb::tensor_shape_proto::Dimension {
            value: Some(dimension::Value::DimValue(d)),
            ..Default::default()
        })
        .collect();
    let tensor = pb::type_proto::Tensor { elem_type, shape: Some(pb::TensorShapeProto { dim }) };
    let ty = pb::TypeProto { value: Some(pb::type_proto::Value::TensorType(tensor)), ..Default::default() };
    pb::ValueInfoProto { name: name.into(), r#type: Some(ty), ..Default::default() }
}
