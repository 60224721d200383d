//! The independent check of a loaded network: tract's own inference of the same file.
//!
//! tract-onnx 0.23 builds every ONNX `RNN` node with tanh, whatever its `activations` attribute
//! says. So the check registers its own builder for `RNN`, which accepts only
//! `activations = ["Relu"]` and hands tract's recurrence (its `Scan`, matrix products, bias
//! slicing and layouts) tract's own ReLU kernel (`LeakyRelu` with slope 0) in place of tanh.
//! Everything else about the evaluation is tract's. That ReLU kernel exists for float32 only, so
//! recurrent models are checked in float32 (the type the trainer writes).
//!
//! A graph ending in `Softmax` / `LogSoftmax` is loaded without it ([`Network::trailing_softmax`]);
//! tract evaluates it, so the check applies it (in f64) to the network's outputs before comparing.
//!
//! [`Network::trailing_softmax`]: trestle_ir::network::Network::trailing_softmax

use super::{ConstSource, bad_onnx, constants, graph_input, graph_output, read_proto, recurrent};
use crate::error::LoadError;
use std::collections::HashMap;
use std::path::Path;
use tract_onnx::model::ParsingContext;
use tract_onnx::ops::rec::{common::CommonRec, rnn::RNN};
use tract_onnx::pb::{self, GraphProto};
use tract_onnx::prelude::*;
use tract_onnx::tract_hir::internal::InferenceOp;
use tract_onnx::tract_hir::ops::expandable::expand;

/// Runs tract's own f32 (or f64) inference on `path` and compares it with the network's forward
/// pass; returns the largest absolute difference over all outputs of all `inputs`.
///
/// The inputs are consecutive steps of one run. For a recurrent model both sides start from zero
/// hidden states and carry them: `net` in its own state, tract through the file's hidden-state
/// inputs and outputs (each output fed back into its input). For a feed-forward model the steps
/// are independent evaluations.
///
/// Each input is converted to the model's declared element type (f32 rounds) and the *same*
/// converted values are given to `net`, so the difference measures the networks, not the inputs.
pub fn cross_check_with_tract(
    path: &Path,
    net: &trestle_ir::network::Network,
    inputs: &[Vec<f64>],
) -> Result<f64, LoadError> {
    let file = path.display().to_string();
    let proto = read_proto(path, &file)?;
    let graph = proto.graph.as_ref().ok_or_else(|| bad_onnx(&file, "the model has no graph"))?;
    let consts = constants(graph);
    let wiring = recurrent::state_wiring(graph, &consts, &file)?;
    let input = graph_input(graph, &consts, &wiring, &file)?;
    let output = graph_output(graph, &wiring, &file)?;
    let tract_err = |e: TractError| LoadError::Tract { file: file.clone(), reason: format!("{e:#}") };
    let dt = if input.elem_type == 11 { f64::datum_type() } else { f32::datum_type() };
    let sources = tract_sources(graph, &consts, &input.name, &input.shape, &wiring, &file)?;
    let mut model = onnx_with_relu_rnn().model_for_path(path).map_err(tract_err)?;
    for (k, (_, shape)) in sources.iter().enumerate() {
        model = model.with_input_fact(k, InferenceFact::dt_shape(dt, shape.clone())).map_err(tract_err)?;
    }
    let model = model.into_optimized().and_then(|m| m.into_runnable()).map_err(tract_err)?;
    let output_index = |name: &str| graph.output.iter().position(|o| o.name == name);
    let out_at = output_index(&output.name).ok_or_else(|| bad_onnx(&file, "the output is not a graph output"))?;
    let feedback: Vec<(usize, usize)> = (wiring.feedback.iter())
        .filter_map(|(o, i)| Some((output_index(o)?, sources.iter().position(|(name, _)| name == i)?)))
        .collect();
    let mut values: Vec<TValue> = (sources.iter())
        .map(|(_, shape)| Tensor::zero_dt(dt, shape).map(Tensor::into_tvalue))
        .collect::<TractResult<_>>()
        .map_err(tract_err)?;
    let (mut hidden, mut max_diff) = (net.initial_hidden(), 0.0f64);
    let last_op = graph.node.iter().find(|n| n.output.first() == Some(&output.name)).map(|n| n.op_type.as_str());
    let dropped = net.trailing_softmax.is_some().then_some(last_op).flatten();
    for x in inputs {
        let x: Vec<f64> =
            if dt == f32::datum_type() { x.iter().map(|&v| f64::from(v as f32)).collect() } else { x.clone() };
        let mut ours = net.forward(&x, &mut hidden)?;
        match dropped {
            Some("Softmax") => ours = softmax(&ours, false),
            Some("LogSoftmax") => ours = softmax(&ours, true),
            _ => {}
        }
        let tensor = Tensor::from_shape(&input.shape, &x).and_then(|t| t.cast_to_dt(dt).map(|t| t.into_owned()));
        values[sources.iter().position(|(n, _)| *n == input.name).unwrap_or(0)] =
            tensor.map_err(tract_err)?.into_tvalue();
        let out = model.run(values.iter().cloned().collect()).map_err(tract_err)?;
        let first =
            out.get(out_at).ok_or_else(|| LoadError::Tract { file: file.clone(), reason: "no output".into() })?;
        let theirs = first
            .cast_to::<f64>()
            .and_then(|t| Ok(t.to_plain_array_view::<f64>()?.iter().copied().collect::<Vec<f64>>()))
            .map_err(tract_err)?;
        if theirs.len() != ours.len() {
            return Err(LoadError::OutputMismatch { file, tract: theirs.len(), ours: ours.len() });
        }
        max_diff = ours.iter().zip(&theirs).fold(max_diff, |m, (a, b)| m.max((a - b).abs()));
        for &(o, i) in &feedback {
            values[i] = out[o].clone();
        }
    }
    Ok(max_diff)
}

/// Softmax (or log-softmax) of all values, shifted by their maximum (f64; for the comparison).
fn softmax(v: &[f64], log: bool) -> Vec<f64> {
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = v.iter().map(|x| (x - max).exp()).sum();
    v.iter().map(|x| if log { x - max - sum.ln() } else { (x - max).exp() / sum }).collect()
}

/// tract's model inputs (the graph inputs that are not constants, in order) with the shapes to
/// run them at: the feature input's, and each hidden state's declared shape (a symbolic first
/// dimension is the number of layers it holds, a symbolic batch is 1).
fn tract_sources(
    graph: &GraphProto,
    consts: &HashMap<String, ConstSource>,
    feature: &str,
    feature_shape: &[usize],
    wiring: &recurrent::StateWiring,
    file: &str,
) -> Result<Vec<(String, Vec<usize>)>, LoadError> {
    let mut sources = Vec::new();
    for v in graph.input.iter().filter(|v| !consts.contains_key(&v.name)) {
        if v.name == feature {
            sources.push((v.name.clone(), feature_shape.to_vec()));
            continue;
        }
        let layers = wiring.nodes.values().filter(|s| s.input == v.name).count();
        let shape = recurrent::declared_dims(&graph.input, &v.name)
            .filter(|d| d.len() == 3 && d[2].is_some())
            .map(|d| vec![d[0].unwrap_or(layers), d[1].unwrap_or(1), d[2].unwrap_or(0)])
            .ok_or_else(|| bad_onnx(file, &format!("hidden state {:?} has no declared hidden size", v.name)))?;
        sources.push((v.name.clone(), shape));
    }
    Ok(sources)
}

/// tract's ONNX loader with the ReLU-honouring `RNN` builder (see the module docs).
fn onnx_with_relu_rnn() -> tract_onnx::Onnx {
    let mut onnx = tract_onnx::onnx();
    onnx.op_register.insert("RNN", relu_rnn);
    onnx
}

fn relu_rnn(_ctx: &ParsingContext, node: &pb::NodeProto) -> TractResult<(Box<dyn InferenceOp>, Vec<String>)> {
    let relu_only = node
        .attribute
        .iter()
        .any(|a| a.name == "activations" && a.strings.len() == 1 && a.strings[0].eq_ignore_ascii_case(b"relu"));
    if !relu_only {
        return Err(TractError::msg("only RNN nodes with activations = [\"Relu\"] are evaluated by this check"));
    }
    let relu = || -> Box<dyn TypedOp> { Box::new(tract_onnx::tract_core::ops::nn::leaky_relu(0.0)) };
    let common = CommonRec::from_node_and_options(node, 3, 0, Box::new(RNN { fore: relu(), back: relu() }))?;
    Ok((expand(common), vec![]))
}
