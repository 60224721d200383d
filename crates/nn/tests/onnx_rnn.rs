//! Hand-built recurrent ONNX models as torch.onnx.export writes them for
//! `nn.RNN(nonlinearity = "relu")` (one RNN node per layer, Squeeze of the direction axis, a stacked
//! hidden state cut by Slice and joined by Concat), checked against tract step by step; and every
//! RNN attribute or wiring the loader does not translate is an error naming the node.

mod common;

use common::build::{
    attr_i, attr_ints, attr_s, attr_strings, graph_model, node, node_multi, tensor_f32, tensor_f64_raw, tensor_i64,
    value_info, write,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use tract_onnx::pb;
use trestle_ir::network::{Layer, RecurrentLayer};
use trestle_nn::{cross_check_with_tract, load_onnx};

fn f32s(rng: &mut ChaCha8Rng, n: usize, scale: f32) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-1.0f32..1.0) * scale).collect()
}

fn recurrent(net: &trestle_ir::network::Network, i: usize) -> &RecurrentLayer {
    match &net.layers[i] {
        Layer::Recurrent(r) => r,
        Layer::Dense(_) => panic!("layer {i} is dense"),
    }
}

fn relu_rnn_attrs(hidden: i64) -> Vec<pb::AttributeProto> {
    vec![attr_i("hidden_size", hidden), attr_strings("activations", &["Relu"])]
}

/// The torch export of `nn.RNN(2, 3, num_layers = 2, nonlinearity = "relu")` followed by
/// `nn.Linear(3, 2)`, with `h` `[2, 1, 3]` in and `h_out` out (opset 13: Slice and Squeeze take
/// their ranges and axes as inputs).
fn torch_two_layer_model(rng: &mut ChaCha8Rng) -> (pb::ModelProto, Vec<Vec<f32>>) {
    let (w0, r0, b0) = (f32s(rng, 3 * 2, 1.0), f32s(rng, 3 * 3, 0.4), f32s(rng, 6, 0.5));
    let (w1, r1, b1) = (f32s(rng, 3 * 3, 1.0), f32s(rng, 3 * 3, 0.4), f32s(rng, 6, 0.5));
    let (lin, lin_b) = (f32s(rng, 3 * 2, 1.0), f32s(rng, 2, 1.0));
    let inits = vec![
        tensor_f32("W0", &[1, 3, 2], &w0),
        tensor_f32("R0", &[1, 3, 3], &r0),
        tensor_f32("B0", &[1, 6], &b0),
        tensor_f32("W1", &[1, 3, 3], &w1),
        tensor_f32("R1", &[1, 3, 3], &r1),
        tensor_f32("B1", &[1, 6], &b1),
        tensor_f32("lin_wt", &[3, 2], &lin),
        tensor_f32("lin_b", &[2], &lin_b),
        tensor_i64("zero", &[0]),
        tensor_i64("one", &[1]),
        tensor_i64("two", &[2]),
    ];
    let nodes = vec![
        node("/rnn/Slice", "Slice", &["h", "zero", "one", "zero"], "h0", vec![]),
        node_multi("/rnn/RNN", "RNN", &["x", "W0", "R0", "B0", "", "h0"], &["y0", "hn0"], relu_rnn_attrs(3)),
        node("/rnn/Squeeze", "Squeeze", &["y0", "one"], "s0", vec![]),
        node("/rnn/Slice_1", "Slice", &["h", "one", "two", "zero"], "h1", vec![]),
        node_multi("/rnn/RNN_1", "RNN", &["s0", "W1", "R1", "B1", "", "h1"], &["y1", "hn1"], relu_rnn_attrs(3)),
        node("/rnn/Squeeze_1", "Squeeze", &["y1", "one"], "s1", vec![]),
        node("/rnn/Concat", "Concat", &["hn0", "hn1"], "h_out", vec![attr_i("axis", 0)]),
        node("/linear/MatMul", "MatMul", &["s1", "lin_wt"], "m", vec![]),
        node("/linear/Add", "Add", &["lin_b", "m"], "out", vec![]),
    ];
    let inputs = vec![value_info("x", 1, &[1, 1, 2]), value_info("h", 1, &[2, 1, 3])];
    let outputs = vec![value_info("out", 1, &[1, 1, 2]), value_info("h_out", 1, &[2, 1, 3])];
    (graph_model(13, inputs, outputs, nodes, inits), vec![w0, r0, b0, w1, r1, b1])
}

fn run(rng: &mut ChaCha8Rng, steps: usize, width: usize) -> Vec<Vec<f64>> {
    (0..steps).map(|_| (0..width).map(|_| rng.random_range(-2.0..2.0)).collect()).collect()
}

#[test]
fn a_torch_style_two_layer_relu_rnn_loads_and_agrees_with_tract_step_by_step() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (model, tensors) = torch_two_layer_model(&mut rng);
    let path = write(dir.path(), "torch_rnn.onnx", &model);
    let net = load_onnx(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(net.sizes(), vec![2, 3, 3, 2]);
    assert_eq!(net.hidden_dims(), vec![3, 3]);
    let widen = |v: &[f32]| v.iter().map(|&x| f64::from(x)).collect::<Vec<f64>>();
    for (layer, t) in [(0, &tensors[0..3]), (1, &tensors[3..6])] {
        let r = recurrent(&net, layer);
        assert_eq!(r.input_weights.data, widen(&t[0]));
        assert_eq!(r.recurrent_weights.data, widen(&t[1]));
        let bias: Vec<f64> = (0..3).map(|i| f64::from(t[2][i]) + f64::from(t[2][3 + i])).collect();
        assert_eq!(r.bias, bias, "b = Wb + Rb, exactly");
    }
    for _ in 0..5 {
        let d = cross_check_with_tract(&path, &net, &run(&mut rng, 12, 2)).unwrap_or_else(|e| panic!("{e}"));
        assert!(d < 1e-5, "tract differs by {d:e}");
    }
}

#[test]
fn the_hidden_state_is_carried_not_reset() {
    // The same inputs in another order give another last output: the state matters, and tract
    // (fed back its own Y_h) and the IR agree on every step of both runs.
    let dir = tempfile::tempdir().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let (model, _) = torch_two_layer_model(&mut rng);
    let path = write(dir.path(), "carry.onnx", &model);
    let net = load_onnx(&path).unwrap();
    let steps = run(&mut rng, 6, 2);
    let mut reversed = steps.clone();
    reversed.reverse();
    let last = |seq: &[Vec<f64>]| {
        let mut h = net.initial_hidden();
        seq.iter().map(|x| net.forward(x, &mut h).unwrap()).next_back().unwrap()
    };
    assert_ne!(last(&steps), last(&reversed));
    assert!(cross_check_with_tract(&path, &net, &steps).unwrap() < 1e-5);
    assert!(cross_check_with_tract(&path, &net, &reversed).unwrap() < 1e-5);
}

/// One RNN layer `[1, 1, 2] -> 4` with its own state input `h` and output `h_out`; `edit` changes
/// the node, the initializers or the interface before it is written.
fn single_rnn_model(edit: impl FnOnce(&mut pb::GraphProto)) -> pb::ModelProto {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let inits = vec![
        tensor_f32("W", &[1, 4, 2], &f32s(&mut rng, 8, 1.0)),
        tensor_f32("R", &[1, 4, 4], &f32s(&mut rng, 16, 0.3)),
        tensor_f32("B", &[1, 8], &f32s(&mut rng, 8, 0.5)),
        tensor_i64("axis1", &[1]),
    ];
    let nodes = vec![
        node_multi("rnn", "RNN", &["x", "W", "R", "B", "", "h"], &["y4", "h_out"], relu_rnn_attrs(4)),
        node("sq", "Squeeze", &["y4", "axis1"], "y", vec![]),
    ];
    let inputs = vec![value_info("x", 1, &[1, 1, 2]), value_info("h", 1, &[1, 1, 4])];
    let outputs = vec![value_info("y", 1, &[1, 1, 4]), value_info("h_out", 1, &[1, 1, 4])];
    let mut model = graph_model(13, inputs, outputs, nodes, inits);
    edit(model.graph.as_mut().unwrap());
    model
}

fn rnn_node(g: &mut pb::GraphProto) -> &mut pb::NodeProto {
    g.node.iter_mut().find(|n| n.op_type == "RNN").unwrap()
}

fn load_message(dir: &Path, name: &str, model: &pb::ModelProto) -> String {
    let path = write(dir, name, model);
    match load_onnx(&path) {
        Ok(_) => panic!("{name}: loaded, expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_single_layer_with_its_own_state_loads() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "single.onnx", &single_rnn_model(|_| {}));
    let net = load_onnx(&path).unwrap();
    assert_eq!((net.sizes(), net.hidden_dims()), (vec![2, 4], vec![4]));
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    assert!(cross_check_with_tract(&path, &net, &run(&mut rng, 10, 2)).unwrap() < 1e-5);
}

#[test]
fn unsupported_rnn_attributes_are_errors_naming_the_node() {
    let dir = tempfile::tempdir().unwrap();
    type Edit = fn(&mut pb::NodeProto);
    let cases: [(&str, Edit, &str); 8] = [
        ("tanh", |n| n.attribute[1] = attr_strings("activations", &["Tanh"]), "only [\"Relu\"] is supported"),
        ("default", |n| n.attribute.truncate(1), "default Tanh"),
        ("reverse", |n| n.attribute.push(attr_s("direction", "reverse")), "only the forward direction"),
        ("bidi", |n| n.attribute.push(attr_s("direction", "bidirectional")), "only the forward direction"),
        ("clip", |n| n.attribute.push(common::build::attr_f("clip", 3.0)), "clipping"),
        ("layout", |n| n.attribute.push(attr_i("layout", 1)), "only layout 0"),
        ("alpha", |n| n.attribute.push(common::build::attr_f("activation_alpha", 0.1)), "no activation parameters"),
        ("unknown", |n| n.attribute.push(attr_i("frobnicate", 1)), "unknown attribute"),
    ];
    for (name, edit, expected) in cases {
        let model = single_rnn_model(|g| edit(rnn_node(g)));
        let msg = load_message(dir.path(), &format!("{name}.onnx"), &model);
        assert!(msg.contains("node #0 \"rnn\" (RNN)") && msg.contains(expected), "{name}: {msg}");
    }
    let model = single_rnn_model(|g| rnn_node(g).attribute[0] = attr_i("hidden_size", 5));
    let msg = load_message(dir.path(), "hidden.onnx", &model);
    assert!(msg.contains("W has shape [1, 4, 2], expected [1, 5, 2]"), "{msg}");
}

#[test]
fn a_hidden_state_that_is_not_carried_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    type Edit = fn(&mut pb::GraphProto);
    let cases: [(&str, Edit, &str); 6] = [
        (
            "no_initial_h",
            |g| {
                rnn_node(g).input.truncate(5);
                g.input.truncate(1);
            },
            "has no initial_h",
        ),
        (
            "constant_initial_h",
            |g| {
                g.input.truncate(1);
                g.initializer.push(tensor_f32("h", &[1, 1, 4], &[0.0; 4]));
            },
            "neither a graph input nor a Slice of one",
        ),
        (
            "no_y_h",
            |g| {
                rnn_node(g).output.truncate(1);
                g.output.truncate(1);
            },
            "has no Y_h output",
        ),
        ("y_h_not_returned", |g| g.output.truncate(1), "must be a graph output"),
        ("sequence_lens", |g| rnn_node(g).input[4] = "axis1".into(), "sequence_lens is not supported"),
        ("declared_state", |g| g.input[1] = value_info("h", 1, &[1, 1, 5]), "declared with shape"),
    ];
    for (name, edit, expected) in cases {
        let msg = load_message(dir.path(), &format!("{name}.onnx"), &single_rnn_model(edit));
        assert!(msg.contains(expected), "{name}: {msg}");
    }
}

#[test]
fn stacked_states_must_feed_each_layer_back_to_itself() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    // Concat in the wrong order: layer 0's new state would come back as layer 1's.
    let (mut model, _) = torch_two_layer_model(&mut rng);
    let g = model.graph.as_mut().unwrap();
    g.node.iter_mut().find(|n| n.op_type == "Concat").unwrap().input.reverse();
    let msg = load_message(dir.path(), "swapped.onnx", &model);
    assert!(msg.contains("fed back, it would reach another layer"), "{msg}");
    // A Slice of two layers at once.
    let (mut model, _) = torch_two_layer_model(&mut rng);
    model.graph.as_mut().unwrap().node[0].input[2] = "two".into();
    let msg = load_message(dir.path(), "wide_slice.onnx", &model);
    assert!(msg.contains("expected one layer [k, k + 1) of axis 0"), "{msg}");
    // Joined along the hidden axis.
    let (mut model, _) = torch_two_layer_model(&mut rng);
    let g = model.graph.as_mut().unwrap();
    g.node.iter_mut().find(|n| n.op_type == "Concat").unwrap().attribute[0] = attr_i("axis", 2);
    let msg = load_message(dir.path(), "axis.onnx", &model);
    assert!(msg.contains("along axis 2"), "{msg}");
}

#[test]
fn rnn_inputs_must_be_one_step_and_constant_weights() {
    let dir = tempfile::tempdir().unwrap();
    // X of shape [1, 2]: not the [seq, batch, input] layout.
    let model = single_rnn_model(|g| g.input[0] = value_info("x", 1, &[1, 2]));
    let msg = load_message(dir.path(), "x2d.onnx", &model);
    assert!(msg.contains("expected [1, 1, input]"), "{msg}");
    // An inexact Wb + Rb (float64 weights far apart in magnitude).
    let model = single_rnn_model(|g| {
        for v in g.input.iter_mut().chain(g.output.iter_mut()) {
            let pb::type_proto::Value::TensorType(t) = v.r#type.as_mut().unwrap().value.as_mut().unwrap();
            t.elem_type = 11;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let w: Vec<f64> = (0..8).map(|_| rng.random_range(-1.0..1.0)).collect();
        let r: Vec<f64> = (0..16).map(|_| rng.random_range(-0.3..0.3)).collect();
        g.initializer[0] = tensor_f64_raw("W", &[1, 4, 2], &w);
        g.initializer[1] = tensor_f64_raw("R", &[1, 4, 4], &r);
        g.initializer[2] = tensor_f64_raw("B", &[1, 8], &[1e20, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    });
    let msg = load_message(dir.path(), "bias.onnx", &model);
    assert!(msg.contains("bias 0: Wb + Rb") && msg.contains("not exact"), "{msg}");
    // W computed by a node rather than given.
    let model = single_rnn_model(|g| {
        rnn_node(g).input[1] = "Wn".into();
        g.node.insert(0, node("neg", "Relu", &["W"], "Wn", vec![]));
    });
    let msg = load_message(dir.path(), "computed.onnx", &model);
    assert!(msg.contains("not on the path") || msg.contains("not a constant"), "{msg}");
}

#[test]
fn squeeze_and_unsqueeze_in_both_opsets() {
    // x [1, 2] -> Unsqueeze -> [1, 1, 2] -> MatMul -> Squeeze -> [1, 3]; axes as attributes
    // (opset 11) and as inputs (opset 13), negative axes included.
    let dir = tempfile::tempdir().unwrap();
    let w = [0.5f32, -1.0, 2.0, 0.25, 1.5, -0.75];
    for opset in [11, 13] {
        let (unsq, sq): (Vec<&str>, Vec<&str>) =
            if opset == 13 { (vec!["x", "ax0"], vec!["m", "axm2"]) } else { (vec!["x"], vec!["m"]) };
        let attrs = |axes: &[i64]| if opset == 13 { vec![] } else { vec![attr_ints("axes", axes)] };
        let nodes = vec![
            node("u", "Unsqueeze", &unsq, "x3", attrs(&[0])),
            node("mm", "MatMul", &["x3", "W"], "m", vec![]),
            node("s", "Squeeze", &sq, "y", attrs(&[-2])),
        ];
        let inits = vec![tensor_f32("W", &[2, 3], &w), tensor_i64("ax0", &[0]), tensor_i64("axm2", &[-2])];
        let model =
            graph_model(opset, vec![value_info("x", 1, &[1, 2])], vec![value_info("y", 1, &[1, 3])], nodes, inits);
        let path = write(dir.path(), &format!("squeeze{opset}.onnx"), &model);
        let net = load_onnx(&path).unwrap_or_else(|e| panic!("opset {opset}: {e}"));
        assert_eq!(net.sizes(), vec![2, 3]);
        let inputs = vec![vec![1.0, 2.0], vec![-0.5, 0.25]];
        assert!(cross_check_with_tract(&path, &net, &inputs).unwrap() < 1e-6);
    }
    // Squeezing a dimension that is not 1.
    let nodes = vec![node("s", "Squeeze", &["x", "ax1"], "y", vec![])];
    let model = graph_model(
        13,
        vec![value_info("x", 1, &[1, 2])],
        vec![value_info("y", 1, &[1])],
        nodes,
        vec![tensor_i64("ax1", &[1])],
    );
    let msg = load_message(dir.path(), "bad_squeeze.onnx", &model);
    assert!(msg.contains("cannot squeeze axes [1] of shape [1, 2]"), "{msg}");
}
