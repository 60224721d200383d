//! ONNX: tract decodes the protobuf; we translate the graph ourselves.
//!
//! The graph must be one chain from its single input to its single output, every node on it
//! taking the previous node's output plus constants (initializers or `Constant` nodes). The value
//! flowing along the chain must stay a *feature vector*: a shape with at most one dimension
//! different from 1 (`[n]`, `[1, n]`, `[n, 1]`, ...), whose row-major order is the feature order.
//! See the crate docs for the operator table and what is exact.

use crate::affine::{Affine, ChainBuilder, Linear};
use crate::error::LoadError;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use tract_onnx::pb::{
    self, AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto, attribute_proto::AttributeType,
};
use tract_onnx::prelude::*;
use trestle_ir::network::{Activation, Matrix, Network};

mod fold;
mod ops;
mod recurrent;
mod tract_check;

use recurrent::StateWiring;
pub use tract_check::cross_check_with_tract;

/// Operators allowed in a graph (`Slice` and `Concat` only to split and join hidden states,
/// `Softmax` and `LogSoftmax` only as the last node).
const SUPPORTED: [&str; 26] = [
    "Gemm",
    "MatMul",
    "Conv",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "BatchNormalization",
    "Relu",
    "LeakyRelu",
    "PRelu",
    "Clip",
    "Tanh",
    "Sigmoid",
    "Softmax",
    "LogSoftmax",
    "RNN",
    "Flatten",
    "Reshape",
    "Squeeze",
    "Unsqueeze",
    "Transpose",
    "Identity",
    "Constant",
    "Slice",
    "Concat",
];

/// What would be needed for an operator the loader does not translate (the second half of its
/// error message).
fn unsupported_hint(op: &str) -> &'static str {
    match op {
        "Elu" | "Selu" | "Celu" | "Gelu" | "Softplus" | "Softsign" | "HardSigmoid" | "HardSwish" | "Mish" | "Erf"
        | "Exp" | "Log" | "ThresholdedRelu" | "Shrink" => {
            "an activation Trestle's networks do not have (they have identity, ReLU, leaky ReLU, clip, tanh and \
             sigmoid)"
        }
        "MaxPool" | "AveragePool" | "GlobalAveragePool" | "GlobalMaxPool" | "LpPool" => {
            "pooling: only a chain of dense layers (and convolutions that are dense layers) is supported"
        }
        "LSTM" | "GRU" => "a recurrent cell other than the Elman RNN with ReLU",
        "Split" | "Gather" | "Slice" | "Concat" | "Where" | "If" | "Loop" | "Scan" => {
            "a graph that is not a single chain of layers"
        }
        "Max" | "Min" | "Abs" | "Neg" | "Sqrt" | "Pow" | "ReduceSum" | "ReduceMean" => {
            "an operation on the network value that is not an affine map or a supported activation"
        }
        _ => "an operator outside the supported list",
    }
}

/// Loads an ONNX file (see the crate docs for what is supported). Runs no inference.
pub fn load_onnx(path: &Path) -> Result<Network, LoadError> {
    let file = path.display().to_string();
    let proto = read_proto(path, &file)?;
    convert_onnx(&proto, &file)
}

fn read_proto(path: &Path, file: &str) -> Result<ModelProto, LoadError> {
    crate::check_readable(path)?;
    tract_onnx::onnx()
        .proto_model_for_path(path)
        .map_err(|e| LoadError::BadOnnx { file: file.to_string(), reason: format!("{e:#}") })
}

/// Translates a decoded ONNX model; `source` names it in messages and becomes the network's source.
pub fn convert_onnx(model: &ModelProto, source: &str) -> Result<Network, LoadError> {
    let graph = model.graph.as_ref().ok_or_else(|| bad_onnx(source, "the model has no graph"))?;
    let opset = default_opset(model).ok_or_else(|| {
        bad_onnx(source, "the model imports no version of the default operator set (domain \"\" or \"ai.onnx\")")
    })?;
    check_operators(graph, source)?;
    let mut consts = constants_without_folding(graph);
    let folded = fold::fold_constants(graph, &mut consts);
    let wiring = recurrent::state_wiring(graph, &consts, source)?;
    let input = graph_input(graph, &consts, &wiring, source)?;
    let output = graph_output(graph, &wiring, source)?;
    let off_chain: HashSet<usize> = wiring.plumbing.union(&folded).copied().collect();
    let mut order = chain_order(graph, &input.name, &output.name, &off_chain, source)?;
    let softmax = order.last().copied().filter(|&i| ops::is_trailing_softmax(&graph.node[i]));
    if softmax.is_some() {
        order.pop();
    }
    let mut conv = Converter {
        file: source,
        graph,
        wiring: &wiring,
        consts,
        opset,
        cur: input.name.clone(),
        chain: ChainBuilder::new(input.shape.iter().product()),
        shape: input.shape,
        notes: Vec::new(),
        trailing_softmax: None,
    };
    for i in order {
        conv.node(i, &graph.node[i])?;
    }
    if let Some(i) = softmax {
        conv.trailing_softmax(i, &graph.node[i])?;
    }
    let width = conv.chain.width();
    if let Some(declared) = output.count.filter(|&c| c != width) {
        let problem =
            format!("output {:?} is declared with {declared} values, the graph computes {width}", output.name);
        return Err(LoadError::Interface { file: source.to_string(), problem });
    }
    let layers = conv.chain.finish().map_err(|problem| LoadError::Interface { file: source.to_string(), problem })?;
    let mut net = Network::new(source, layers)?;
    net.notes = conv.notes;
    net.trailing_softmax = conv.trailing_softmax;
    Ok(net)
}

/// The version of the default operator set the model imports (the highest, if it names both
/// `""` and `"ai.onnx"`).
fn default_opset(model: &ModelProto) -> Option<i64> {
    model.opset_import.iter().filter(|o| matches!(o.domain.as_str(), "" | "ai.onnx")).map(|o| o.version).max()
}

fn bad_onnx(file: &str, reason: &str) -> LoadError {
    LoadError::BadOnnx { file: file.to_string(), reason: reason.to_string() }
}

fn node_label(index: usize, node: &NodeProto) -> String {
    if node.name.is_empty() { format!("#{index} (unnamed)") } else { format!("#{index} {:?}", node.name) }
}

fn is_constant_node(node: &NodeProto) -> bool {
    node.op_type == "Constant" && matches!(node.domain.as_str(), "" | "ai.onnx")
}

/// Every node, on the chain or not, must be an operator we translate.
fn check_operators(graph: &GraphProto, file: &str) -> Result<(), LoadError> {
    for (i, n) in graph.node.iter().enumerate() {
        let std_domain = matches!(n.domain.as_str(), "" | "ai.onnx");
        if !std_domain || !SUPPORTED.contains(&n.op_type.as_str()) {
            let domain = if std_domain { String::new() } else { format!(" of domain {:?}", n.domain) };
            let hint = if std_domain { unsupported_hint(&n.op_type) } else { "an operator of another domain" };
            return Err(LoadError::UnsupportedOp {
                file: file.into(),
                node: node_label(i, n),
                op: n.op_type.clone(),
                domain,
                hint: hint.into(),
            });
        }
    }
    Ok(())
}

/// Where a constant comes from; decoded only when a node uses it.
enum ConstSource<'a> {
    Initializer(&'a TensorProto),
    Node(usize, &'a NodeProto),
    /// The output of a node that only moves the values of constants ([`fold`]).
    Folded(usize, &'a NodeProto),
}

/// Every constant: initializers, `Constant` nodes, and nodes of constants ([`fold`]).
fn constants(graph: &GraphProto) -> HashMap<String, ConstSource<'_>> {
    let mut map = constants_without_folding(graph);
    fold::fold_constants(graph, &mut map);
    map
}

fn constants_without_folding(graph: &GraphProto) -> HashMap<String, ConstSource<'_>> {
    let mut map: HashMap<String, ConstSource> =
        graph.initializer.iter().map(|t| (t.name.clone(), ConstSource::Initializer(t))).collect();
    for (i, n) in graph.node.iter().enumerate().filter(|(_, n)| is_constant_node(n)) {
        for out in &n.output {
            map.insert(out.clone(), ConstSource::Node(i, n));
        }
    }
    map
}

/// The graph's one real input (not an initializer), with its shape.
struct GraphInput {
    name: String,
    shape: Vec<usize>,
    elem_type: i32,
}

/// The graph input that is neither a constant nor a hidden state.
fn graph_input(
    graph: &GraphProto,
    consts: &HashMap<String, ConstSource>,
    wiring: &StateWiring,
    file: &str,
) -> Result<GraphInput, LoadError> {
    let iface = |problem: String| LoadError::Interface { file: file.to_string(), problem };
    let inputs: Vec<&pb::ValueInfoProto> =
        graph.input.iter().filter(|v| !consts.contains_key(&v.name) && !wiring.is_state_input(&v.name)).collect();
    let [input] = inputs[..] else {
        let names: Vec<&str> = inputs.iter().map(|v| v.name.as_str()).collect();
        return Err(iface(format!("expected exactly one graph input, found {}: {names:?}", inputs.len())));
    };
    let Some(pb::type_proto::Value::TensorType(t)) = input.r#type.as_ref().and_then(|t| t.value.as_ref()) else {
        return Err(iface(format!("input {:?} has no tensor type", input.name)));
    };
    if !matches!(t.elem_type, 1 | 11) {
        return Err(iface(format!(
            "input {:?} has element type {}, expected float or double",
            input.name,
            type_name(t.elem_type)
        )));
    }
    let dims = t
        .shape
        .as_ref()
        .map(|s| s.dim.as_slice())
        .ok_or_else(|| iface(format!("input {:?} has no shape", input.name)))?;
    let mut shape = Vec::with_capacity(dims.len());
    for (k, d) in dims.iter().enumerate() {
        shape.push(match d.value {
            Some(pb::tensor_shape_proto::dimension::Value::DimValue(v)) if v >= 0 => v as usize,
            // A symbolic leading (batch) dimension of a rank >= 2 input is taken as 1.
            Some(pb::tensor_shape_proto::dimension::Value::DimParam(_)) | None if k == 0 && dims.len() >= 2 => 1,
            _ => return Err(iface(format!("input {:?}: dimension {k} is not a known size", input.name))),
        });
    }
    if !is_vector(&shape) || shape.iter().product::<usize>() == 0 {
        return Err(iface(format!(
            "input {:?} has shape {shape:?}, expected a feature vector such as [1, n] or [n]",
            input.name
        )));
    }
    Ok(GraphInput { name: input.name.clone(), shape, elem_type: t.elem_type })
}

struct GraphOutput {
    name: String,
    /// The declared number of values, when every dimension is known.
    count: Option<usize>,
}

/// The graph output that is not a hidden state.
fn graph_output(graph: &GraphProto, wiring: &StateWiring, file: &str) -> Result<GraphOutput, LoadError> {
    let outputs: Vec<&pb::ValueInfoProto> = graph.output.iter().filter(|v| !wiring.is_state_output(&v.name)).collect();
    let [output] = outputs[..] else {
        let problem = format!("expected exactly one graph output, found {}", outputs.len());
        return Err(LoadError::Interface { file: file.to_string(), problem });
    };
    let dims = match output.r#type.as_ref().and_then(|t| t.value.as_ref()) {
        Some(pb::type_proto::Value::TensorType(t)) => t.shape.as_ref().map(|s| s.dim.clone()),
        None => None,
    };
    let count = dims.and_then(|dims| {
        dims.iter().try_fold(1usize, |acc, d| match d.value {
            Some(pb::tensor_shape_proto::dimension::Value::DimValue(v)) => acc.checked_mul(usize::try_from(v).ok()?),
            _ => None,
        })
    });
    Ok(GraphOutput { name: output.name.clone(), count })
}

/// The non-`Constant` nodes from the input to the output, in order; errors if that is not a
/// simple chain covering every such node but those `off_chain` (the hidden-state plumbing, the
/// nodes of constants). An RNN node continues the chain through its output `Y` (its `Y_h` is a
/// hidden state).
fn chain_order(
    graph: &GraphProto,
    input: &str,
    output: &str,
    off_chain: &HashSet<usize>,
    file: &str,
) -> Result<Vec<usize>, LoadError> {
    let not_chain = |problem: String| LoadError::NotAChain { file: file.to_string(), problem };
    let on_chain = |(i, n): &(usize, &NodeProto)| !is_constant_node(n) && !off_chain.contains(i);
    let mut users: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, n) in graph.node.iter().enumerate().filter(on_chain) {
        for value in n.input.iter().filter(|v| !v.is_empty()) {
            let list = users.entry(value.as_str()).or_default();
            if list.last() != Some(&i) {
                list.push(i);
            }
        }
    }
    let (mut cur, mut order, mut seen) = (input, Vec::new(), HashSet::new());
    while let Some(list) = users.get(cur) {
        let &[i] = list.as_slice() else {
            let names: Vec<String> = list.iter().map(|&i| node_label(i, &graph.node[i])).collect();
            return Err(not_chain(format!("value {cur:?} is used by several nodes: {}", names.join(", "))));
        };
        let n = &graph.node[i];
        // A BatchNormalization with training outputs reaches its own check, which says why.
        let outputs_ok =
            n.output.len() == 1 || (recurrent::is_rnn(n) && n.output.len() == 2) || n.op_type == "BatchNormalization";
        if !seen.insert(i) || !outputs_ok || n.output[0].is_empty() {
            return Err(not_chain(format!(
                "node {} ({}) must have one output (RNN: Y, then Y_h) and appear once",
                node_label(i, n),
                n.op_type
            )));
        }
        order.push(i);
        cur = &n.output[0];
    }
    if cur != output {
        return Err(not_chain(format!(
            "the chain from input {input:?} ends at value {cur:?}, not at the graph output {output:?}"
        )));
    }
    if let Some((i, n)) = graph.node.iter().enumerate().filter(on_chain).find(|(i, _)| !seen.contains(i)) {
        return Err(not_chain(format!(
            "node {} ({}) is not on the path from the input to the output",
            node_label(i, n),
            n.op_type
        )));
    }
    Ok(order)
}

/// True when at most one dimension differs from 1, so the row-major order is the feature order.
fn is_vector(shape: &[usize]) -> bool {
    shape.iter().filter(|&&d| d != 1).count() <= 1
}

fn type_name(t: i32) -> String {
    pb::tensor_proto::DataType::try_from(t).map_or_else(|_| format!("#{t}"), |d| d.as_str_name().to_string())
}

/// A decoded floating-point constant (f32 widened to f64, or f64).
#[derive(Clone, Debug)]
struct Const {
    dims: Vec<usize>,
    data: Vec<f64>,
}

fn tensor_problem(file: &str, name: &str, problem: String) -> LoadError {
    LoadError::Initializer { file: file.to_string(), name: name.to_string(), problem }
}

/// Dimensions and element count of a tensor; errors for external or segmented storage.
fn tensor_dims(t: &TensorProto, file: &str, name: &str) -> Result<(Vec<usize>, usize), LoadError> {
    if t.data_location == Some(1) || !t.external_data.is_empty() || t.segment.is_some() {
        return Err(tensor_problem(file, name, "external or segmented tensor storage is not supported".into()));
    }
    let dims: Vec<usize> = t
        .dims
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<_, _>>()
        .map_err(|_| tensor_problem(file, name, format!("negative dimension in {:?}", t.dims)))?;
    let count = dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    let count = count.ok_or_else(|| tensor_problem(file, name, format!("shape {dims:?} is too large")))?;
    Ok((dims, count))
}

/// Little-endian `raw_data` split into `width`-byte words, or `None` when it is empty.
fn raw_words<const W: usize>(t: &TensorProto, file: &str, name: &str) -> Result<Option<Vec<[u8; W]>>, LoadError> {
    if t.raw_data.is_empty() {
        return Ok(None);
    }
    if !t.raw_data.len().is_multiple_of(W) {
        let problem = format!("raw_data has {} bytes, not a multiple of {W}", t.raw_data.len());
        return Err(tensor_problem(file, name, problem));
    }
    Ok(Some(t.raw_data.chunks_exact(W).map(|c| c.try_into().unwrap_or([0; W])).collect()))
}

fn decode_floats(t: &TensorProto, file: &str, name: &str) -> Result<Const, LoadError> {
    let (dims, count) = tensor_dims(t, file, name)?;
    let data: Vec<f64> = match t.data_type {
        1 => match raw_words::<4>(t, file, name)? {
            Some(w) => w.into_iter().map(|b| f64::from(f32::from_le_bytes(b))).collect(),
            None => t.float_data.iter().map(|&v| f64::from(v)).collect(),
        },
        11 => match raw_words::<8>(t, file, name)? {
            Some(w) => w.into_iter().map(f64::from_le_bytes).collect(),
            None => t.double_data.clone(),
        },
        other => {
            let problem = format!("element type {} is not supported (float or double only)", type_name(other));
            return Err(tensor_problem(file, name, problem));
        }
    };
    if data.len() != count {
        return Err(tensor_problem(
            file,
            name,
            format!("has {} values but its shape {dims:?} needs {count}", data.len()),
        ));
    }
    if let Some((i, v)) = data.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(tensor_problem(file, name, format!("entry {i} is {v}: weights must be finite")));
    }
    Ok(Const { dims, data })
}

fn decode_ints(t: &TensorProto, file: &str, name: &str) -> Result<Vec<i64>, LoadError> {
    let (dims, count) = tensor_dims(t, file, name)?;
    let data: Vec<i64> = match t.data_type {
        7 => match raw_words::<8>(t, file, name)? {
            Some(w) => w.into_iter().map(i64::from_le_bytes).collect(),
            None => t.int64_data.clone(),
        },
        6 => match raw_words::<4>(t, file, name)? {
            Some(w) => w.into_iter().map(|b| i64::from(i32::from_le_bytes(b))).collect(),
            None => t.int32_data.iter().map(|&v| i64::from(v)).collect(),
        },
        other => {
            return Err(tensor_problem(
                file,
                name,
                format!("element type {} is not an integer type", type_name(other)),
            ));
        }
    };
    if data.len() != count {
        return Err(tensor_problem(
            file,
            name,
            format!("has {} values but its shape {dims:?} needs {count}", data.len()),
        ));
    }
    Ok(data)
}

/// Numpy-style broadcast of two shapes, or `None` if incompatible.
fn broadcast_shape(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let rank = a.len().max(b.len());
    let at = |s: &[usize], k: usize| if k + s.len() < rank { 1 } else { s[k + s.len() - rank] };
    (0..rank)
        .map(|k| match (at(a, k), at(b, k)) {
            (x, y) if x == y || y == 1 => Some(x),
            (1, y) => Some(y),
            _ => None,
        })
        .collect()
}

/// The constant's values broadcast to `shape` (which it must broadcast to), row-major.
fn broadcast_values(c: &Const, shape: &[usize]) -> Vec<f64> {
    let offset = shape.len() - c.dims.len();
    let total: usize = shape.iter().product();
    (0..total)
        .map(|flat| {
            let (mut rest, mut index, mut stride) = (flat, 0, 1);
            for k in (0..shape.len()).rev() {
                let coord = rest % shape[k];
                rest /= shape[k];
                if k >= offset && c.dims[k - offset] != 1 {
                    index += coord * stride;
                }
                if k >= offset {
                    stride *= c.dims[k - offset];
                }
            }
            c.data[index]
        })
        .collect()
}

/// The integer constant `name`, an operand of the node of `c`.
fn int_constant(consts: &HashMap<String, ConstSource>, c: &Ctx, name: &str) -> Result<Vec<i64>, LoadError> {
    match consts.get(name) {
        Some(ConstSource::Initializer(t)) => decode_ints(t, c.file, name),
        Some(ConstSource::Node(i, n)) => {
            constant_node_ints(&Ctx { file: c.file, node: n, label: node_label(*i, n) }, name)
        }
        Some(ConstSource::Folded(i, n)) => Err(c.err(format!(
            "operand {name:?} is an integer computed by node {} ({}): only floating-point constants are folded",
            node_label(*i, n),
            n.op_type
        ))),
        None => Err(c.err(format!("operand {name:?} is not a constant (initializer or Constant node)"))),
    }
}

/// Node identity for messages.
struct Ctx<'a> {
    file: &'a str,
    node: &'a NodeProto,
    label: String,
}

impl Ctx<'_> {
    fn err(&self, problem: impl Into<String>) -> LoadError {
        LoadError::Node {
            file: self.file.into(),
            node: self.label.clone(),
            op: self.node.op_type.clone(),
            problem: problem.into(),
        }
    }

    fn unsupported(&self, a: &AttributeProto, value: String, why: &str) -> LoadError {
        LoadError::UnsupportedAttribute {
            file: self.file.into(),
            node: self.label.clone(),
            op: self.node.op_type.clone(),
            attribute: format!("{} = {value}", a.name),
            why: why.into(),
        }
    }

    /// Errors on any attribute not in `known`.
    fn only_attributes(&self, known: &[&str]) -> Result<(), LoadError> {
        match self.node.attribute.iter().find(|a| !known.contains(&a.name.as_str())) {
            Some(a) => Err(self.unsupported(a, describe_attribute(a), "unknown attribute for this operator")),
            None => Ok(()),
        }
    }

    fn attribute(&self, name: &str, kind: AttributeType) -> Result<Option<&AttributeProto>, LoadError> {
        match self.node.attribute.iter().find(|a| a.name == name) {
            Some(a) if a.r#type != 0 && a.r#type != kind as i32 => {
                Err(self.unsupported(a, describe_attribute(a), &format!("expected a {} attribute", kind.as_str_name())))
            }
            found => Ok(found),
        }
    }

    fn int_attr(&self, name: &str, default: i64) -> Result<i64, LoadError> {
        Ok(self.attribute(name, AttributeType::Int)?.map_or(default, |a| a.i))
    }

    fn flag_attr(&self, name: &str) -> Result<bool, LoadError> {
        match self.attribute(name, AttributeType::Int)? {
            None => Ok(false),
            Some(a) if a.i == 0 || a.i == 1 => Ok(a.i == 1),
            Some(a) => Err(self.unsupported(a, a.i.to_string(), "must be 0 or 1")),
        }
    }

    fn float_attr(&self, name: &str, default: f32) -> Result<f64, LoadError> {
        let v = self.attribute(name, AttributeType::Float)?.map_or(default, |a| a.f);
        if !v.is_finite() {
            return Err(self.err(format!("attribute {name} is {v}, must be finite")));
        }
        Ok(f64::from(v))
    }

    /// The node's inputs, checked to number between `min` and `max` (empty optional names dropped
    /// at the end).
    fn inputs(&self, min: usize, max: usize) -> Result<Vec<&str>, LoadError> {
        let mut inputs: Vec<&str> = self.node.input.iter().map(String::as_str).collect();
        while inputs.last() == Some(&"") {
            inputs.pop();
        }
        if inputs.len() < min || inputs.len() > max || inputs.contains(&"") {
            return Err(self.err(format!("expected {min} to {max} inputs, found {:?}", self.node.input)));
        }
        Ok(inputs)
    }
}

fn describe_attribute(a: &AttributeProto) -> String {
    match AttributeType::try_from(a.r#type) {
        Ok(AttributeType::Int) => a.i.to_string(),
        Ok(AttributeType::Float) => a.f.to_string(),
        Ok(AttributeType::Ints) => format!("{:?}", a.ints),
        Ok(AttributeType::Floats) => format!("{:?}", a.floats),
        Ok(AttributeType::String) => format!("{:?}", String::from_utf8_lossy(&a.s)),
        Ok(t) => format!("<{}>", t.as_str_name()),
        Err(_) => format!("<type {}>", a.r#type),
    }
}

/// Walks the chain, feeding affine maps and activations to the builder.
struct Converter<'a> {
    file: &'a str,
    graph: &'a GraphProto,
    wiring: &'a StateWiring,
    consts: HashMap<String, ConstSource<'a>>,
    /// The version of the default operator set (attribute defaults and forms depend on it).
    opset: i64,
    /// Name of the value flowing along the chain, and its shape.
    cur: String,
    shape: Vec<usize>,
    chain: ChainBuilder,
    /// [`Network::notes`] of the result.
    notes: Vec<String>,
    /// [`Network::trailing_softmax`] of the result.
    trailing_softmax: Option<String>,
}

impl<'a> Converter<'a> {
    fn node(&mut self, index: usize, node: &'a NodeProto) -> Result<(), LoadError> {
        let c = Ctx { file: self.file, node, label: node_label(index, node) };
        match node.op_type.as_str() {
            "Gemm" => self.gemm(&c)?,
            "MatMul" => self.matmul(&c)?,
            "Add" | "Sub" | "Mul" | "Div" => self.elementwise(&c)?,
            "Relu" => {
                c.only_attributes(&[])?;
                self.activation(&c, Activation::Relu)?;
            }
            "Tanh" => {
                c.only_attributes(&[])?;
                self.activation(&c, Activation::Tanh)?;
            }
            "Sigmoid" => {
                c.only_attributes(&[])?;
                self.activation(&c, Activation::Sigmoid)?;
            }
            "LeakyRelu" => self.leaky_relu(&c)?,
            "PRelu" => self.prelu(&c)?,
            "Clip" => self.clip(&c)?,
            "BatchNormalization" => self.batch_norm(&c)?,
            "Conv" => self.conv(&c)?,
            "Transpose" => self.transpose(&c)?,
            "Softmax" | "LogSoftmax" => {
                return Err(c.err(
                    "is supported only as the graph's last node, where it is left out (for an argmax controller: \
                     it keeps the order of the outputs)",
                ));
            }
            "Identity" => {
                c.only_attributes(&[])?;
                c.inputs(1, 1)?;
            }
            "Flatten" => self.flatten(&c)?,
            "Reshape" => self.reshape(&c)?,
            "Squeeze" => self.squeeze(&c)?,
            "Unsqueeze" => self.unsqueeze(&c)?,
            "RNN" => self.rnn(&c, index)?,
            "Slice" | "Concat" => {
                return Err(c.err("supported only to split and join the hidden states of RNN nodes"));
            }
            _ => return Err(c.err("unsupported operator")), // excluded by check_operators
        }
        self.cur.clone_from(&node.output[0]);
        Ok(())
    }

    fn float_const(&self, c: &Ctx, name: &str) -> Result<Const, LoadError> {
        match self.consts.get(name) {
            Some(_) => fold::float_constant(&self.consts, self.file, name, 0),
            None if name == self.cur => {
                Err(c.err(format!("uses the network value {name:?} where a constant is required")))
            }
            None => Err(c.err(format!("operand {name:?} is not a constant (initializer or Constant node)"))),
        }
    }

    fn int_const(&self, c: &Ctx, name: &str) -> Result<Vec<i64>, LoadError> {
        int_constant(&self.consts, c, name)
    }

    /// For a binary node: the other operand's name, and whether the network value is the second.
    fn operands<'n>(&self, c: &Ctx, inputs: &[&'n str]) -> Result<(&'n str, bool), LoadError> {
        match (inputs[0] == self.cur, inputs[1] == self.cur) {
            (true, true) => Err(c.err("uses the network value as both operands, which is not affine")),
            (true, false) => Ok((inputs[1], false)),
            (false, true) => Ok((inputs[0], true)),
            (false, false) => Err(c.err(format!("does not use the network value {:?}", self.cur))),
        }
    }

    fn push(&mut self, c: &Ctx, map: Affine) -> Result<(), LoadError> {
        self.chain.affine(map).map_err(|p| c.err(p))
    }

    fn gemm(&mut self, c: &Ctx) -> Result<(), LoadError> {
        // Before opset 7, `broadcast = 1` lets C broadcast (which it always may from 7).
        let legacy = self.opset < 7;
        c.only_attributes(if legacy {
            &["alpha", "beta", "transA", "transB", "broadcast"]
        } else {
            &["alpha", "beta", "transA", "transB"]
        })?;
        let c_broadcasts = !legacy || c.flag_attr("broadcast")?;
        let (alpha, beta) = (c.float_attr("alpha", 1.0)?, c.float_attr("beta", 1.0)?);
        let (trans_a, trans_b) = (c.flag_attr("transA")?, c.flag_attr("transB")?);
        let inputs = c.inputs(2, 3)?;
        if inputs[0] != self.cur {
            return Err(c.err(format!("input A must be the network value {:?}", self.cur)));
        }
        // A is [1, k] (or [k, 1] transposed); a feature vector [1, .., 1, k] is read as [1, k]
        // (MATLAB's exports feed their 4-D input straight to Gemm).
        let lead_ones = |s: &[usize]| s.len() > 2 && s[..s.len() - 1].iter().all(|&d| d == 1);
        let k = match (self.shape.as_slice(), trans_a) {
            (&[1, k], false) | (&[k, 1], true) => k,
            (s, false) if lead_ones(s) => s[s.len() - 1],
            (s, _) => {
                return Err(c.err(format!(
                    "input A has shape {s:?}, expected {}",
                    if trans_a { "[k, 1] (transA = 1)" } else { "[1, k]" }
                )));
            }
        };
        let b = self.float_const(c, inputs[1])?;
        let &[b0, b1] = b.dims.as_slice() else {
            return Err(c.err(format!("input B {:?} has shape {:?}, expected a matrix", inputs[1], b.dims)));
        };
        let (kb, n) = if trans_b { (b1, b0) } else { (b0, b1) };
        if kb != k {
            return Err(c.err(format!(
                "input B {:?} has shape {:?}: its inner dimension {kb} does not match A's {k}",
                inputs[1], b.dims
            )));
        }
        let w = if trans_b { Matrix::new(n, k, b.data) } else { Matrix::new(k, n, b.data).transpose() };
        let mut bias = vec![0.0; n];
        if let Some(&name) = inputs.get(2) {
            bias = self.gemm_bias(c, name, n, beta, c_broadcasts)?;
        }
        self.push(c, Affine::new(Linear::Full(w), vec![0.0; n]))?;
        let scale = if alpha == 1.0 { Linear::Identity(n) } else { Linear::Diagonal(vec![alpha; n]) };
        self.push(c, Affine::new(scale, bias))?;
        self.shape = vec![1, n];
        Ok(())
    }

    /// `beta * C` broadcast to `[1, n]` (when `broadcasts`; else C must be `[1, n]`); rounded to
    /// nearest when the product is not exact.
    fn gemm_bias(&self, c: &Ctx, name: &str, n: usize, beta: f64, broadcasts: bool) -> Result<Vec<f64>, LoadError> {
        let cst = self.float_const(c, name)?;
        if !broadcasts && cst.dims != [1, n] {
            return Err(c.err(format!(
                "input C {name:?} has shape {:?}: without broadcast = 1 (opset < 7) it must be [1, {n}]",
                cst.dims
            )));
        }
        if broadcast_shape(&[1, n], &cst.dims).as_deref() != Some(&[1, n]) {
            return Err(
                c.err(format!("input C {name:?} has shape {:?}, which does not broadcast to [1, {n}]", cst.dims))
            );
        }
        Ok(broadcast_values(&cst, &[1, n]).into_iter().map(|v| beta * v).collect())
    }

    fn matmul(&mut self, c: &Ctx) -> Result<(), LoadError> {
        c.only_attributes(&[])?;
        let inputs = c.inputs(2, 2)?;
        let (name, swapped) = self.operands(c, &inputs)?;
        let m = self.float_const(c, name)?;
        let shape_err = |what: &str| {
            c.err(format!("{what} (network value shape {:?}, constant {name:?} shape {:?})", self.shape, m.dims))
        };
        let (w, shape) = if !swapped {
            // x [.., 1, k] @ B [k, n] (or B [k]) -> W = B^T.
            let (k, n, keep) = match m.dims.as_slice() {
                [k, n] => (*k, *n, true),
                [k] => (*k, 1, false),
                _ => return Err(shape_err("the constant must be a vector or a matrix")),
            };
            let Some((&last, lead)) = self.shape.split_last() else {
                return Err(shape_err("the network value is a scalar"));
            };
            if last != k || lead.iter().product::<usize>() != 1 {
                return Err(shape_err("shapes do not match for x @ B"));
            }
            let mut shape = lead.to_vec();
            if keep {
                shape.push(n);
            }
            (Matrix::new(k, n, m.data).transpose(), shape)
        } else {
            // A [m, k] @ x [k] or x [k, 1] -> W = A.
            let &[rows, k] = m.dims.as_slice() else { return Err(shape_err("the constant must be a matrix")) };
            let shape = match self.shape.as_slice() {
                [x] if *x == k => vec![rows],
                [x, 1] if *x == k => vec![rows, 1],
                _ => return Err(shape_err("shapes do not match for A @ x")),
            };
            (Matrix::new(rows, k, m.data), shape)
        };
        let n = w.rows;
        self.push(c, Affine::new(Linear::Full(w), vec![0.0; n]))?;
        self.shape = shape;
        Ok(())
    }

    fn elementwise(&mut self, c: &Ctx) -> Result<(), LoadError> {
        let legacy = self.opset < 7;
        c.only_attributes(if legacy { &["broadcast", "axis"] } else { &[] })?;
        let inputs = c.inputs(2, 2)?;
        let (name, swapped) = self.operands(c, &inputs)?;
        let mut k = self.float_const(c, name)?;
        if legacy {
            k.dims = self.legacy_operand_dims(c, &k.dims, swapped)?;
        }
        let n = self.chain.width();
        let shape =
            broadcast_shape(&self.shape, &k.dims).filter(|s| s.iter().product::<usize>() == n).ok_or_else(|| {
                c.err(format!(
                    "constant {name:?} of shape {:?} does not broadcast to the network value's shape {:?}",
                    k.dims, self.shape
                ))
            })?;
        let v = broadcast_values(&k, &shape);
        let map = match (c.node.op_type.as_str(), swapped) {
            ("Add", _) => Affine::new(Linear::Identity(n), v),
            ("Sub", false) => Affine::new(Linear::Identity(n), v.iter().map(|x| -x).collect()),
            ("Sub", true) => Affine::new(Linear::Diagonal(vec![-1.0; n]), v),
            ("Mul", _) => Affine::new(Linear::Diagonal(v), vec![0.0; n]),
            ("Div", false) => {
                if let Some(i) = v.iter().position(|&x| x == 0.0) {
                    return Err(c.err(format!("divides by zero (entry {i} of constant {name:?})")));
                }
                // 1/v is correctly rounded; exact when v is a power of two.
                Affine::new(Linear::Diagonal(v.iter().map(|x| 1.0 / x).collect()), vec![0.0; n])
            }
            _ => return Err(c.err("divides a constant by the network value, which is not affine")),
        };
        self.push(c, map)?;
        self.shape = shape;
        Ok(())
    }

    /// Before opset 7, `Add`/`Sub`/`Mul`/`Div` broadcast only with `broadcast = 1`, and then only
    /// the second operand, aligned at `axis` (default: its trailing dimensions); without it both
    /// shapes must be equal. Returns the constant's dimensions padded with 1s to the value's rank,
    /// which the numpy-style broadcast then reads the same way.
    fn legacy_operand_dims(&self, c: &Ctx, dims: &[usize], swapped: bool) -> Result<Vec<usize>, LoadError> {
        let broadcast = c.flag_attr("broadcast")?;
        let axis = c.attribute("axis", AttributeType::Int)?;
        if !broadcast {
            if let Some(a) = axis {
                return Err(c.unsupported(a, a.i.to_string(), "axis is meaningful only with broadcast = 1"));
            }
            if dims != self.shape.as_slice() {
                return Err(c.err(format!(
                    "the constant has shape {dims:?} and the network value {:?}: before opset 7 the shapes must be \
                     equal unless broadcast = 1",
                    self.shape
                )));
            }
            return Ok(dims.to_vec());
        }
        if swapped && dims != self.shape.as_slice() {
            return Err(c.err("broadcast = 1 broadcasts the second operand, which is the network value here"));
        }
        let rank = self.shape.len();
        let start = match axis {
            None => rank.checked_sub(dims.len()),
            Some(a) => usize::try_from(if a.i < 0 { a.i + rank as i64 } else { a.i }).ok(),
        };
        match start.filter(|&s| s + dims.len() <= rank) {
            Some(s) => {
                let mut padded = vec![1; s];
                padded.extend_from_slice(dims);
                padded.resize(rank, 1);
                Ok(padded)
            }
            None => Err(c.err(format!(
                "the constant of shape {dims:?} does not fit the network value's shape {:?} at axis {:?}",
                self.shape,
                axis.map(|a| a.i)
            ))),
        }
    }

    fn flatten(&mut self, c: &Ctx) -> Result<(), LoadError> {
        c.only_attributes(&["axis"])?;
        c.inputs(1, 1)?;
        let rank = self.shape.len() as i64;
        let axis = c.int_attr("axis", 1)?;
        let axis = if axis < 0 { axis + rank } else { axis };
        if !(0..=rank).contains(&axis) {
            return Err(c.err(format!("axis {axis} is out of range for shape {:?}", self.shape)));
        }
        let (lead, rest) = self.shape.split_at(axis as usize);
        self.shape = vec![lead.iter().product(), rest.iter().product()];
        Ok(())
    }

    fn reshape(&mut self, c: &Ctx) -> Result<(), LoadError> {
        c.only_attributes(&["allowzero"])?;
        let allow_zero = c.flag_attr("allowzero")?;
        let inputs = c.inputs(2, 2)?;
        if inputs[0] != self.cur {
            return Err(c.err(format!("the data input must be the network value {:?}", self.cur)));
        }
        let target = self.int_const(c, inputs[1])?;
        let shape = reshape_target(&self.shape, &target, allow_zero).ok_or_else(|| {
            c.err(format!("cannot reshape {:?} to {target:?} (allowzero = {})", self.shape, u8::from(allow_zero)))
        })?;
        if !is_vector(&shape) {
            return Err(c.err(format!("reshaping {:?} to {shape:?} would change the feature layout", self.shape)));
        }
        self.shape = shape;
        Ok(())
    }
}

impl Converter<'_> {
    /// The `axes` of Squeeze / Unsqueeze: an input from opset 13, an attribute before.
    fn axes(&self, c: &Ctx) -> Result<Option<Vec<i64>>, LoadError> {
        c.only_attributes(&["axes"])?;
        let inputs = c.inputs(1, 2)?;
        if inputs[0] != self.cur {
            return Err(c.err(format!("the data input must be the network value {:?}", self.cur)));
        }
        match (inputs.get(1), c.attribute("axes", AttributeType::Ints)?) {
            (Some(name), None) => Ok(Some(self.int_const(c, name)?)),
            (None, Some(a)) => Ok(Some(a.ints.clone())),
            (None, None) => Ok(None),
            (Some(_), Some(_)) => Err(c.err("axes are given both as an attribute and as an input")),
        }
    }

    /// Removes dimensions of size 1 (the given axes, or all of them).
    fn squeeze(&mut self, c: &Ctx) -> Result<(), LoadError> {
        let axes = self.axes(c)?;
        let rank = self.shape.len();
        let Some(axes) = axes else {
            self.shape.retain(|&d| d != 1);
            return Ok(());
        };
        let axes = normalise_axes(&axes, rank)
            .filter(|a| a.iter().all(|&k| self.shape[k] == 1))
            .ok_or_else(|| c.err(format!("cannot squeeze axes {axes:?} of shape {:?}", self.shape)))?;
        self.shape = self.shape.iter().enumerate().filter(|(k, _)| !axes.contains(k)).map(|(_, &d)| d).collect();
        Ok(())
    }

    /// Inserts dimensions of size 1 at the given axes (of the result).
    fn unsqueeze(&mut self, c: &Ctx) -> Result<(), LoadError> {
        let axes = self.axes(c)?.ok_or_else(|| c.err("has no axes"))?;
        let rank = self.shape.len() + axes.len();
        let axes = normalise_axes(&axes, rank)
            .ok_or_else(|| c.err(format!("cannot unsqueeze shape {:?} at axes {axes:?}", self.shape)))?;
        let mut rest = self.shape.iter();
        self.shape = (0..rank).map(|k| if axes.contains(&k) { 1 } else { *rest.next().unwrap_or(&1) }).collect();
        Ok(())
    }
}

/// Axes in `0..rank` (negative ones count from the end), distinct; `None` if out of range or repeated.
fn normalise_axes(axes: &[i64], rank: usize) -> Option<Vec<usize>> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let k = if a < 0 { a + rank as i64 } else { a };
        let k = usize::try_from(k).ok().filter(|&k| k < rank && !out.contains(&k))?;
        out.push(k);
    }
    Some(out)
}

/// ONNX Reshape's target shape: `0` copies the input dimension (unless `allow_zero`), one `-1`
/// is inferred. `None` if invalid or if the element count would change.
fn reshape_target(input: &[usize], target: &[i64], allow_zero: bool) -> Option<Vec<usize>> {
    let count: usize = input.iter().product();
    let mut shape = Vec::with_capacity(target.len());
    let mut infer = None;
    for (k, &t) in target.iter().enumerate() {
        shape.push(match t {
            -1 if infer.is_none() => {
                infer = Some(k);
                1
            }
            0 if !allow_zero => *input.get(k)?,
            t => usize::try_from(t).ok()?,
        });
    }
    let known = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))?;
    match infer {
        Some(k) if known != 0 && count.is_multiple_of(known) => shape[k] = count / known,
        Some(_) => return None,
        None if known != count => return None,
        None => {}
    }
    Some(shape)
}

fn constant_node_floats(c: &Ctx, name: &str) -> Result<Const, LoadError> {
    let a = constant_value(c)?;
    match a.name.as_str() {
        "value" => decode_floats(a.t.as_ref().ok_or_else(|| c.err("attribute value holds no tensor"))?, c.file, name),
        "value_float" if a.f.is_finite() => Ok(Const { dims: vec![], data: vec![f64::from(a.f)] }),
        "value_floats" if a.floats.iter().all(|v| v.is_finite()) => {
            Ok(Const { dims: vec![a.floats.len()], data: a.floats.iter().map(|&v| f64::from(v)).collect() })
        }
        "value_float" | "value_floats" => {
            Err(tensor_problem(c.file, name, "has a non-finite value: weights must be finite".into()))
        }
        _ => Err(c.unsupported(a, describe_attribute(a), "not a floating-point constant")),
    }
}

fn constant_node_ints(c: &Ctx, name: &str) -> Result<Vec<i64>, LoadError> {
    let a = constant_value(c)?;
    match a.name.as_str() {
        "value" => decode_ints(a.t.as_ref().ok_or_else(|| c.err("attribute value holds no tensor"))?, c.file, name),
        "value_int" => Ok(vec![a.i]),
        "value_ints" => Ok(a.ints.clone()),
        _ => Err(c.unsupported(a, describe_attribute(a), "not an integer constant")),
    }
}

/// The single value attribute of a `Constant` node.
fn constant_value<'n>(c: &Ctx<'n>) -> Result<&'n AttributeProto, LoadError> {
    const KINDS: [&str; 5] = ["value", "value_float", "value_floats", "value_int", "value_ints"];
    c.only_attributes(&KINDS)?;
    match c.node.attribute.as_slice() {
        [a] => Ok(a),
        _ => Err(c.err("a Constant node needs exactly one value attribute")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast_shape(&[1, 3], &[3]), Some(vec![1, 3]));
        assert_eq!(broadcast_shape(&[3], &[]), Some(vec![3]));
        assert_eq!(broadcast_shape(&[3], &[1, 1]), Some(vec![1, 3]));
        assert_eq!(broadcast_shape(&[1, 3], &[2]), None);
        let c = Const { dims: vec![3, 1], data: vec![1.0, 2.0, 3.0] };
        assert_eq!(broadcast_values(&c, &[3, 2]), vec![1.0, 1.0, 2.0, 2.0, 3.0, 3.0]);
        let c = Const { dims: vec![2], data: vec![1.0, 2.0] };
        assert_eq!(broadcast_values(&c, &[1, 2]), vec![1.0, 2.0]);
        assert_eq!(broadcast_values(&Const { dims: vec![], data: vec![7.0] }, &[1, 2]), vec![7.0, 7.0]);
    }

    #[test]
    fn reshape_targets() {
        assert_eq!(reshape_target(&[1, 6], &[-1], false), Some(vec![6]));
        assert_eq!(reshape_target(&[1, 6], &[0, -1], false), Some(vec![1, 6]));
        assert_eq!(reshape_target(&[6], &[2, 3], false), Some(vec![2, 3]));
        assert_eq!(reshape_target(&[6], &[4, -1], false), None);
        assert_eq!(reshape_target(&[6], &[-1, -1], false), None);
        assert_eq!(reshape_target(&[6], &[0, 6], true), None);
        assert_eq!(reshape_target(&[6], &[1, 0], false), None);
    }
}
