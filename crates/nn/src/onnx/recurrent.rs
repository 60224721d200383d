//! ONNX `RNN` nodes (Elman layers with ReLU) and the hidden-state wiring around them.
//!
//! A recurrent model file is one step of the controller: the hidden state of every RNN node
//! comes in through a graph input (`initial_h`) and leaves through a graph output (`Y_h`), and the
//! caller feeds the output back at the next step, starting from zeros. That is exactly the IR's
//! recurrent layer, which carries `h_t` between steps itself, so these state inputs and outputs
//! are not part of the network's interface: they are recognised here, checked, and left out of
//! the chain from the feature input to the feature output. Two wirings are accepted:
//!
//! - own state per node: `initial_h` is a graph input used by that node only, `Y_h` a graph
//!   output (what `trestle-nn` writes, and what `torch.onnx.export` writes for single-layer
//!   `nn.RNN` modules given their hidden state);
//! - stacked state (what `torch.onnx.export` writes for `nn.RNN(num_layers = L)`): one graph input
//!   `[L, batch, hidden]` cut by `Slice` (axis 0, `[k, k + 1)`) into the `initial_h` of layer `k`,
//!   and the layers' `Y_h` joined by one `Concat` (axis 0) into one graph output, layer `k` at
//!   position `k`.
//!
//! An RNN node whose state is not wired so (no `initial_h`, a constant one, a `Y_h` nobody
//! returns) is an error: with one step per call its state would silently reset at every step.

use super::{ConstSource, Converter, Ctx, describe_attribute, int_constant, is_constant_node, node_label};
use crate::affine::exact_add;
use crate::error::LoadError;
use std::collections::{BTreeMap, HashMap, HashSet};
use tract_onnx::pb::{self, GraphProto, NodeProto, attribute_proto::AttributeType};
use trestle_ir::network::{Activation, Matrix, RecurrentLayer};

/// How one RNN node's hidden state comes in and goes out.
#[derive(Clone, Debug)]
pub(super) struct NodeState {
    /// The graph input holding the previous state, and this layer's index in it when stacked.
    pub input: String,
    pub input_slot: Option<usize>,
    /// The graph output receiving the new state, and this layer's index in it when stacked.
    pub output: String,
    pub output_slot: Option<usize>,
}

/// The hidden-state wiring of a whole graph (empty for a feed-forward model).
#[derive(Debug, Default)]
pub(super) struct StateWiring {
    /// By RNN node index.
    pub nodes: BTreeMap<usize, NodeState>,
    /// `Slice` and `Concat` nodes that only move hidden states.
    pub plumbing: HashSet<usize>,
    /// Each state output (in graph output order) with the state input it is fed back into.
    pub feedback: Vec<(String, String)>,
}

impl StateWiring {
    pub fn is_state_input(&self, name: &str) -> bool {
        self.feedback.iter().any(|(_, input)| input == name)
    }

    pub fn is_state_output(&self, name: &str) -> bool {
        self.feedback.iter().any(|(output, _)| output == name)
    }
}

pub(super) fn is_rnn(node: &NodeProto) -> bool {
    node.op_type == "RNN" && matches!(node.domain.as_str(), "" | "ai.onnx")
}

/// Finds and checks how the hidden state of every RNN node is carried (see the module docs).
pub(super) fn state_wiring(
    graph: &GraphProto,
    consts: &HashMap<String, ConstSource>,
    file: &str,
) -> Result<StateWiring, LoadError> {
    let mut wiring = StateWiring::default();
    if !graph.node.iter().any(is_rnn) {
        return Ok(wiring);
    }
    let g = GraphIndex::new(graph, consts);
    for (i, n) in graph.node.iter().enumerate().filter(|(_, n)| is_rnn(n)) {
        let c = Ctx { file, node: n, label: node_label(i, n) };
        let (input, input_slot) = g.state_source(&c, consts, &mut wiring.plumbing)?;
        let (output, output_slot) = g.state_sink(&c, &mut wiring.plumbing)?;
        if input_slot != output_slot {
            return Err(c.err(format!(
                "its hidden state comes from {input:?} (slot {input_slot:?}) but goes to {output:?} (slot \
                 {output_slot:?}): fed back, it would reach another layer"
            )));
        }
        wiring.nodes.insert(i, NodeState { input, input_slot, output, output_slot });
    }
    wiring.feedback = pair_states(graph, &g, &wiring, file)?;
    Ok(wiring)
}

/// Who produces and who uses each value.
struct GraphIndex<'g> {
    graph: &'g GraphProto,
    producer: HashMap<&'g str, usize>,
    users: HashMap<&'g str, Vec<usize>>,
    graph_inputs: HashSet<&'g str>,
    graph_outputs: HashSet<&'g str>,
}

impl<'g> GraphIndex<'g> {
    fn new(graph: &'g GraphProto, consts: &HashMap<String, ConstSource>) -> GraphIndex<'g> {
        let (mut producer, mut users) = (HashMap::new(), HashMap::<&str, Vec<usize>>::new());
        for (i, n) in graph.node.iter().enumerate().filter(|(_, n)| !is_constant_node(n)) {
            for out in n.output.iter().filter(|o| !o.is_empty()) {
                producer.insert(out.as_str(), i);
            }
            for v in n.input.iter().filter(|v| !v.is_empty()) {
                let list = users.entry(v.as_str()).or_default();
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
        }
        let graph_inputs =
            graph.input.iter().map(|v| v.name.as_str()).filter(|name| !consts.contains_key(*name)).collect();
        let graph_outputs = graph.output.iter().map(|v| v.name.as_str()).collect();
        GraphIndex { graph, producer, users, graph_inputs, graph_outputs }
    }

    fn users(&self, value: &str) -> &[usize] {
        self.users.get(value).map_or(&[], Vec::as_slice)
    }

    fn std_node(&self, i: usize, op: &str) -> Option<&'g NodeProto> {
        let n = &self.graph.node[i];
        (n.op_type == op && matches!(n.domain.as_str(), "" | "ai.onnx")).then_some(n)
    }

    /// The graph input carrying the node's `initial_h`, and the slot when it is a `Slice` of one.
    fn state_source(
        &self,
        c: &Ctx,
        consts: &HashMap<String, ConstSource>,
        plumbing: &mut HashSet<usize>,
    ) -> Result<(String, Option<usize>), LoadError> {
        let h = c.node.input.get(5).filter(|h| !h.is_empty()).ok_or_else(|| {
            c.err("has no initial_h: the hidden state must come in through a graph input (one step per call)")
        })?;
        if self.graph_inputs.contains(h.as_str()) {
            return Ok((h.clone(), None));
        }
        let slice = self.producer.get(h.as_str()).and_then(|&s| Some((s, self.std_node(s, "Slice")?)));
        let of_graph_input = |n: &NodeProto| n.input.first().is_some_and(|d| self.graph_inputs.contains(d.as_str()));
        let Some((s, slice_node)) = slice.filter(|(_, n)| of_graph_input(n)) else {
            return Err(c.err(format!(
                "initial_h {h:?} is neither a graph input nor a Slice of one: the hidden state would not be \
                 carried from step to step"
            )));
        };
        let sc = Ctx { file: c.file, node: slice_node, label: node_label(s, slice_node) };
        let slot = slice_slot(&sc, consts)?;
        plumbing.insert(s);
        Ok((slice_node.input[0].clone(), Some(slot)))
    }

    /// The graph output receiving the node's `Y_h`, and the slot when it goes through a `Concat`.
    fn state_sink(&self, c: &Ctx, plumbing: &mut HashSet<usize>) -> Result<(String, Option<usize>), LoadError> {
        let y_h = c.node.output.get(1).filter(|y| !y.is_empty()).ok_or_else(|| {
            c.err("has no Y_h output: the new hidden state must leave through a graph output (one step per call)")
        })?;
        let users = self.users(y_h);
        if users.is_empty() && self.graph_outputs.contains(y_h.as_str()) {
            return Ok((y_h.clone(), None));
        }
        let bad = || {
            c.err(format!(
                "Y_h {y_h:?} must be a graph output, or an input of one Concat (axis 0) that is a graph output"
            ))
        };
        let &[k] = users else { return Err(bad()) };
        let concat = self.std_node(k, "Concat").ok_or_else(bad)?;
        let out = concat.output.first().filter(|o| self.graph_outputs.contains(o.as_str()) && self.users(o).is_empty());
        let out = out.ok_or_else(bad)?;
        let cc = Ctx { file: c.file, node: concat, label: node_label(k, concat) };
        cc.only_attributes(&["axis"])?;
        let axis = cc.int_attr("axis", i64::MIN)?;
        if axis != 0 && axis != -3 {
            return Err(cc.err(format!("joins hidden states along axis {axis}, expected 0 (the layer axis)")));
        }
        let positions: Vec<usize> = (0..concat.input.len()).filter(|&p| concat.input[p] == *y_h).collect();
        let &[slot] = positions.as_slice() else { return Err(bad()) };
        plumbing.insert(k);
        Ok((out.clone(), Some(slot)))
    }
}

/// `k` for a `Slice` taking `[k, k + 1)` of axis 0 (inputs as in opset 10+, or attributes).
fn slice_slot(c: &Ctx, consts: &HashMap<String, ConstSource>) -> Result<usize, LoadError> {
    // Opset 10 and later take the ranges as inputs, earlier opsets as attributes (no steps).
    let ints = |i: usize, attr: Option<&str>| -> Result<Option<Vec<i64>>, LoadError> {
        match (c.node.input.get(i).filter(|s| !s.is_empty()), attr) {
            (Some(name), _) => Ok(Some(int_constant(consts, c, name)?)),
            (None, Some(attr)) => Ok(c.attribute(attr, AttributeType::Ints)?.map(|a| a.ints.clone())),
            (None, None) => Ok(None),
        }
    };
    c.only_attributes(&["starts", "ends", "axes"])?;
    let (starts, ends) = (ints(1, Some("starts"))?, ints(2, Some("ends"))?);
    let (axes, steps) = (ints(3, Some("axes"))?, ints(4, None)?);
    match (starts.as_deref(), ends.as_deref(), axes.as_deref(), steps.as_deref()) {
        (Some(&[k]), Some(&[e]), None | Some(&[0]), None | Some(&[1])) if k >= 0 && e == k + 1 => Ok(k as usize),
        _ => Err(c.err(format!(
            "cuts a hidden-state input with starts {starts:?}, ends {ends:?}, axes {axes:?}, steps {steps:?}; \
             expected one layer [k, k + 1) of axis 0"
        ))),
    }
}

/// Checks each state input feeds back from exactly one state output, layer `k` to layer `k`, and
/// nothing else reads it; returns the (output, input) pairs in graph output order.
fn pair_states(
    graph: &GraphProto,
    g: &GraphIndex,
    wiring: &StateWiring,
    file: &str,
) -> Result<Vec<(String, String)>, LoadError> {
    let iface = |problem: String| LoadError::Interface { file: file.to_string(), problem };
    let mut by_input: BTreeMap<&str, Vec<(usize, &NodeState)>> = BTreeMap::new();
    for (&i, s) in &wiring.nodes {
        by_input.entry(s.input.as_str()).or_default().push((i, s));
    }
    let mut pairs: HashMap<&str, &str> = HashMap::new();
    for (input, nodes) in &by_input {
        let output = nodes[0].1.output.as_str();
        if nodes.iter().any(|(_, s)| s.output != output) {
            return Err(iface(format!("the hidden states read from {input:?} are written to different outputs")));
        }
        let mut slots: Vec<Option<usize>> = nodes.iter().map(|(_, s)| s.input_slot).collect();
        slots.sort_unstable();
        let expected: Vec<Option<usize>> =
            if slots == [None] { vec![None] } else { (0..nodes.len()).map(Some).collect() };
        if slots != expected {
            return Err(iface(format!(
                "hidden-state input {input:?} must hold each layer once, found slots {slots:?}"
            )));
        }
        let readers_ok = g.users(input).iter().all(|u| wiring.nodes.contains_key(u) || wiring.plumbing.contains(u));
        if !readers_ok {
            return Err(iface(format!("hidden-state input {input:?} is also read by another node")));
        }
        let joined = nodes[0].1.output_slot.and_then(|_| g.producer.get(output)).map(|&k| graph.node[k].input.len());
        if joined.is_some_and(|count| count != nodes.len()) {
            return Err(iface(format!(
                "hidden-state output {output:?} joins a different number of layers than {input:?} holds"
            )));
        }
        if pairs.insert(output, input).is_some() {
            return Err(iface(format!("hidden-state output {output:?} would feed two inputs")));
        }
    }
    Ok(graph
        .output
        .iter()
        .filter_map(|o| pairs.get(o.name.as_str()).map(|&i| (o.name.clone(), i.to_string())))
        .collect())
}

/// The attributes of an RNN node this loader accepts: `activations = ["Relu"]`, direction
/// forward, layout 0, `hidden_size` (checked against W later); `clip` and activation parameters
/// are refused, anything else is unknown.
fn check_rnn_attributes(c: &Ctx) -> Result<Option<i64>, LoadError> {
    for a in &c.node.attribute {
        let refuse = |why: &str| Err(c.unsupported(a, describe_attribute(a), why));
        match a.name.as_str() {
            "clip" => return refuse("clipping the pre-activation is not supported"),
            "activation_alpha" | "activation_beta" => return refuse("ReLU takes no activation parameters"),
            _ => {}
        }
    }
    c.only_attributes(&["activations", "hidden_size", "direction", "layout"])?;
    match c.attribute("activations", AttributeType::Strings)? {
        None => {
            return Err(c.err("has no activations attribute, so ONNX's default Tanh applies: only Relu is supported"));
        }
        Some(a) if !(a.strings.len() == 1 && a.strings[0].eq_ignore_ascii_case(b"relu")) => {
            return Err(c.unsupported(
                a,
                describe_attribute(a),
                "only [\"Relu\"] is supported (Elman layers with ReLU)",
            ));
        }
        Some(_) => {}
    }
    if let Some(a) = c.attribute("direction", AttributeType::String)?.filter(|a| a.s != b"forward") {
        return Err(c.unsupported(a, describe_attribute(a), "only the forward direction is supported"));
    }
    if let Some(a) = c.attribute("layout", AttributeType::Int)?.filter(|a| a.i != 0) {
        return Err(c.unsupported(a, describe_attribute(a), "only layout 0 ([seq, batch, input]) is supported"));
    }
    Ok(c.attribute("hidden_size", AttributeType::Int)?.map(|a| a.i))
}

/// Declared dimensions of a graph input or output, `None` for symbolic ones.
pub(super) fn declared_dims(values: &[pb::ValueInfoProto], name: &str) -> Option<Vec<Option<usize>>> {
    let v = values.iter().find(|v| v.name == name)?;
    let Some(pb::type_proto::Value::TensorType(t)) = v.r#type.as_ref()?.value.as_ref() else { return None };
    let dims = t.shape.as_ref()?.dim.iter().map(|d| match d.value {
        Some(pb::tensor_shape_proto::dimension::Value::DimValue(v)) => usize::try_from(v).ok(),
        _ => None,
    });
    Some(dims.collect())
}

impl Converter<'_> {
    /// One RNN node on the chain: an Elman layer with `b = Wb + Rb`.
    pub(super) fn rnn(&mut self, c: &Ctx, index: usize) -> Result<(), LoadError> {
        let hidden_size = check_rnn_attributes(c)?;
        let inputs = &c.node.input;
        if inputs.len() > 6 || inputs.len() < 3 {
            return Err(c.err(format!("expected 3 to 6 inputs, found {}", inputs.len())));
        }
        if inputs[0] != self.cur {
            return Err(c.err(format!("input X must be the network value {:?}", self.cur)));
        }
        if inputs.get(4).is_some_and(|s| !s.is_empty()) {
            return Err(c.err("sequence_lens is not supported (one step per call)"));
        }
        let &[1, 1, n] = self.shape.as_slice() else {
            return Err(
                c.err(format!("input X has shape {:?}, expected [1, 1, input] (one step, batch 1)", self.shape))
            );
        };
        let w = self.float_const(c, &inputs[1])?;
        let &[1, h, wn] = w.dims.as_slice() else {
            return Err(c.err(format!("W has shape {:?}, expected [1, hidden, {n}]", w.dims)));
        };
        if wn != n || hidden_size.is_some_and(|s| s != h as i64) {
            return Err(c.err(format!(
                "W has shape {:?}, expected [1, {}, {n}]",
                w.dims,
                hidden_size.unwrap_or(h as i64)
            )));
        }
        let r = self.float_const(c, &inputs[2])?;
        if r.dims != [1, h, h] {
            return Err(c.err(format!("R has shape {:?}, expected [1, {h}, {h}]", r.dims)));
        }
        let bias = match inputs.get(3).filter(|s| !s.is_empty()) {
            None => vec![0.0; h],
            Some(name) => self.rnn_bias(c, name, h)?,
        };
        self.check_state_shapes(c, index, h)?;
        let layer = RecurrentLayer {
            input_weights: Matrix::new(h, n, w.data),
            recurrent_weights: Matrix::new(h, h, r.data),
            bias,
            activation: Activation::Relu,
        };
        self.chain.recurrent(layer).map_err(|p| c.err(p))?;
        self.shape = vec![1, 1, 1, h];
        Ok(())
    }

    /// `Wb + Rb`, which must be exact in f64 (it is for two f32 of similar magnitude).
    fn rnn_bias(&self, c: &Ctx, name: &str, h: usize) -> Result<Vec<f64>, LoadError> {
        let b = self.float_const(c, name)?;
        if b.dims != [1, 2 * h] {
            return Err(c.err(format!("B has shape {:?}, expected [1, {}]", b.dims, 2 * h)));
        }
        (0..h)
            .map(|i| {
                exact_add(b.data[i], b.data[h + i]).ok_or_else(|| {
                    c.err(format!("bias {i}: Wb + Rb = {} + {} is not exact in f64", b.data[i], b.data[h + i]))
                })
            })
            .collect()
    }

    /// Declared shapes of the state input and output, where known: `[1, batch, h]` or, stacked,
    /// `[layers, batch, h]` (the batch may be symbolic).
    fn check_state_shapes(&self, c: &Ctx, index: usize, h: usize) -> Result<(), LoadError> {
        let state = self.wiring.nodes.get(&index).ok_or_else(|| c.err("its hidden-state wiring was not analysed"))?;
        // Stacked: as many layers as RNN nodes share the value; own state: one.
        let layers = |slot: Option<usize>, name: &str| match slot {
            None => 1,
            Some(_) => self.wiring.nodes.values().filter(|s| s.input == name || s.output == name).count(),
        };
        let checks = [
            (&self.graph.input, &state.input, state.input_slot),
            (&self.graph.output, &state.output, state.output_slot),
        ];
        for (values, name, slot) in checks {
            let Some(dims) = declared_dims(values, name) else { continue };
            let ok = dims.len() == 3
                && dims[0].is_none_or(|d| d == layers(slot, name))
                && dims[1].is_none_or(|d| d == 1)
                && dims[2].is_none_or(|d| d == h);
            if !ok {
                return Err(
                    c.err(format!("hidden state {name:?} is declared with shape {dims:?}, expected [layers, 1, {h}]"))
                );
            }
        }
        Ok(())
    }
}
