//! The operators beyond affine maps and ReLU, one small hand-built model each: loaded to the
//! expected layers, evaluated against a reference written here and against tract, and the
//! malformed variants refused with a message naming the node and the reason.

mod common;

use common::build::{
    attr_f, attr_i, attr_ints, attr_s, graph_model, model, node, node_multi, tensor_f32, tensor_f64_raw, value_info,
    write,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use tract_onnx::pb;
use trestle_ir::network::{Activation, Layer, Network};
use trestle_nn::{LoadError, cross_check_with_tract, load_onnx};

/// Loads the model and compares it with tract on 200 seeded inputs in [-3, 3].
fn load_and_check(path: &Path) -> Network {
    let net = load_onnx(path).unwrap_or_else(|e| panic!("{e}"));
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let inputs: Vec<Vec<f64>> =
        (0..200).map(|_| (0..net.input_dim()).map(|_| rng.random_range(-3.0..3.0)).collect()).collect();
    let d = cross_check_with_tract(path, &net, &inputs).unwrap_or_else(|e| panic!("{e}"));
    assert!(d < 1e-5, "{}: tract differs by {d:e}", path.display());
    net
}

fn acts(net: &Network) -> Vec<Activation> {
    net.layers.iter().map(Layer::activation).collect()
}

fn message(r: Result<Network, LoadError>) -> String {
    match r {
        Ok(net) => panic!("loaded {:?}, expected an error", net.sizes()),
        Err(e) => e.to_string(),
    }
}

fn assert_says(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "{msg:?} does not say {p:?}");
    }
}

/// `y = act(W x + b)` with W 3x2, then the node `op` with `attrs` (and extra constant inputs).
fn one_layer(op: &str, attrs: Vec<pb::AttributeProto>, extra: &[&str], inits: Vec<pb::TensorProto>) -> pb::ModelProto {
    let mut inputs = vec!["z"];
    inputs.extend_from_slice(extra);
    let nodes = vec![
        node("fc", "Gemm", &["x", "W", "b"], "z", vec![attr_i("transB", 1)]),
        node("act", op, &inputs, "y", attrs),
    ];
    let mut all =
        vec![tensor_f32("W", &[3, 2], &[1.0, -0.5, 0.25, 2.0, -1.5, 0.75]), tensor_f32("b", &[3], &[0.1, -0.2, 0.3])];
    all.extend(inits);
    model(1, &[1, 2], &[1, 3], nodes, all)
}

fn pre(x: &[f64]) -> Vec<f64> {
    let w = [[1.0, -0.5], [0.25, 2.0], [-1.5, 0.75]];
    let b = [0.1f32, -0.2, 0.3].map(f64::from);
    (0..3).map(|i| w[i][0] * x[0] + w[i][1] * x[1] + b[i]).collect()
}

fn check_against(net: &Network, f: impl Fn(f64) -> f64) {
    for x in [[0.0, 0.0], [1.0, -1.0], [-2.5, 0.75], [3.0, 2.0], [-0.1, -3.0]] {
        let got = net.eval(&x).unwrap();
        for (g, z) in got.iter().zip(pre(&x)) {
            assert!((g - f(z)).abs() <= 1e-12 * f(z).abs().max(1.0), "at {x:?}: {g} vs {}", f(z));
        }
    }
}

#[test]
fn tanh_and_sigmoid() {
    let dir = tempfile::tempdir().unwrap();
    let net = load_and_check(&write(dir.path(), "tanh.onnx", &one_layer("Tanh", vec![], &[], vec![])));
    assert_eq!(acts(&net), vec![Activation::Tanh]);
    check_against(&net, f64::tanh);
    let net = load_and_check(&write(dir.path(), "sigmoid.onnx", &one_layer("Sigmoid", vec![], &[], vec![])));
    assert_eq!(acts(&net), vec![Activation::Sigmoid]);
    check_against(&net, |z| 1.0 / (1.0 + (-z).exp()));
    // Stacked: tanh(tanh(.)) is two layers, the second an identity matrix.
    let nodes = vec![node("a", "Tanh", &["x"], "h", vec![]), node("b", "Tanh", &["h"], "y", vec![])];
    let net = load_and_check(&write(dir.path(), "tt.onnx", &model(1, &[1, 2], &[1, 2], nodes, vec![])));
    assert_eq!(acts(&net), vec![Activation::Tanh, Activation::Tanh]);
    assert_eq!(net.eval(&[0.5, -1.0]).unwrap(), vec![0.5f64.tanh().tanh(), (-1.0f64).tanh().tanh()]);
}

#[test]
fn leaky_relu_and_prelu() {
    let dir = tempfile::tempdir().unwrap();
    let net = load_and_check(&write(
        dir.path(),
        "leaky.onnx",
        &one_layer("LeakyRelu", vec![attr_f("alpha", 0.2)], &[], vec![]),
    ));
    let alpha = f64::from(0.2f32); // the attribute's float32, widened exactly
    assert_eq!(acts(&net), vec![Activation::LeakyRelu { alpha }]);
    check_against(&net, |z| if z >= 0.0 { z } else { alpha * z });
    // The default slope, 0.01 as float32.
    let net = load_and_check(&write(dir.path(), "leaky_default.onnx", &one_layer("LeakyRelu", vec![], &[], vec![])));
    assert_eq!(acts(&net), vec![Activation::LeakyRelu { alpha: f64::from(0.01f32) }]);
    // PRelu with one slope (scalar, or repeated per channel), and a slope of 0: a ReLU.
    for (name, dims, slope) in
        [("p1", vec![], vec![-0.5f32]), ("p3", vec![3], vec![0.25f32; 3]), ("p0", vec![1], vec![0.0])]
    {
        let m = one_layer("PRelu", vec![], &["slope"], vec![tensor_f32("slope", &dims, &slope)]);
        let net = load_and_check(&write(dir.path(), &format!("{name}.onnx"), &m));
        let want =
            if slope[0] == 0.0 { Activation::Relu } else { Activation::LeakyRelu { alpha: f64::from(slope[0]) } };
        assert_eq!(acts(&net), vec![want], "{name}");
    }
    let m = one_layer("PRelu", vec![], &["slope"], vec![tensor_f32("slope", &[3], &[0.1, 0.2, 0.3])]);
    let msg = message(load_onnx(&write(dir.path(), "pchan.onnx", &m)));
    assert_says(&msg, &["node #1 \"act\" (PRelu)", "one slope per layer"]);
    let m = one_layer("LeakyRelu", vec![attr_f("alpha", f32::NAN)], &[], vec![]);
    let msg = message(load_onnx(&write(dir.path(), "leaky_nan.onnx", &m)));
    assert_says(&msg, &["(LeakyRelu)", "alpha is NaN"]);
}

/// A model at opset `opset` with `nodes` reading `x` [1, 3] and writing `y` [1, 3].
fn at_opset(opset: i64, nodes: Vec<pb::NodeProto>, inits: Vec<pb::TensorProto>) -> pb::ModelProto {
    let mut m = graph_model(opset, vec![value_info("x", 1, &[1, 3])], vec![value_info("y", 1, &[1, 3])], nodes, vec![]);
    m.graph.as_mut().unwrap().initializer = inits;
    m
}

#[test]
fn clip_in_both_forms_and_one_sided() {
    let dir = tempfile::tempdir().unwrap();
    let clip = |lo: f64, hi: f64| Activation::Clip { lo, hi };
    // Opset 13: optional scalar inputs; an absent one leaves that side unbounded.
    let cases: Vec<(&str, Vec<&str>, Activation)> = vec![
        ("both", vec!["x", "lo", "hi"], clip(-1.0, 1.5)),
        ("max_only", vec!["x", "", "hi"], clip(f64::NEG_INFINITY, 1.5)),
        ("min_only", vec!["x", "lo"], clip(-1.0, f64::INFINITY)),
        ("relu6", vec!["x", "zero", "six"], clip(0.0, 6.0)),
        ("relu", vec!["x", "zero"], Activation::Relu),
        ("none", vec!["x"], Activation::Identity),
    ];
    for (name, inputs, want) in cases {
        let inits = vec![
            tensor_f32("lo", &[], &[-1.0]),
            tensor_f32("hi", &[], &[1.5]),
            tensor_f32("zero", &[], &[0.0]),
            tensor_f32("six", &[], &[6.0]),
        ];
        let nodes = vec![node("c", "Clip", &inputs, "y", vec![])];
        let net = load_and_check(&write(dir.path(), &format!("{name}.onnx"), &at_opset(13, nodes, inits)));
        let got = acts(&net);
        assert_eq!(got, vec![if want == Activation::Identity { Activation::Identity } else { want }], "{name}");
        for x in [[-3.0, -0.5, 0.0], [0.75, 2.0, 7.0]] {
            let y = net.eval(&x).unwrap();
            for (a, b) in y.iter().zip(x) {
                assert_eq!(*a, want.apply_f64(b), "{name} at {b}");
            }
        }
    }
    // Opset 6: attributes, defaults the lowest and highest float32.
    let nodes = vec![node("c", "Clip", &["x"], "y", vec![attr_f("min", -2.0), attr_f("max", 0.5)])];
    let net = load_and_check(&write(dir.path(), "clip6.onnx", &at_opset(6, nodes, vec![])));
    assert_eq!(acts(&net), vec![clip(-2.0, 0.5)]);
    let nodes = vec![node("c", "Clip", &["x"], "y", vec![attr_f("max", 0.5)])];
    let net = load_and_check(&write(dir.path(), "clip6max.onnx", &at_opset(6, nodes, vec![])));
    assert_eq!(acts(&net), vec![clip(f64::from(f32::MIN), 0.5)]);
    // Malformed: min above max, a non-scalar bound, an attribute at opset 13.
    let inits = vec![tensor_f32("lo", &[], &[2.0]), tensor_f32("hi", &[], &[1.0]), tensor_f32("v", &[2], &[0.0, 1.0])];
    let nodes = vec![node("bad", "Clip", &["x", "lo", "hi"], "y", vec![])];
    let msg = message(load_onnx(&write(dir.path(), "inverted.onnx", &at_opset(13, nodes, inits.clone()))));
    assert_says(&msg, &["node #0 \"bad\" (Clip)", "above the upper bound"]);
    let nodes = vec![node("bad", "Clip", &["x", "v"], "y", vec![])];
    let msg = message(load_onnx(&write(dir.path(), "vector.onnx", &at_opset(13, nodes, inits))));
    assert_says(&msg, &["node #0 \"bad\" (Clip)", "must be a scalar"]);
    let nodes = vec![node("bad", "Clip", &["x"], "y", vec![attr_f("min", 0.0)])];
    let msg = message(load_onnx(&write(dir.path(), "attr13.onnx", &at_opset(13, nodes, vec![]))));
    assert_says(&msg, &["node #0 \"bad\" (Clip)", "attribute min = 0"]);
}

#[test]
fn batch_normalization_folds_and_says_when_it_rounds() {
    let dir = tempfile::tempdir().unwrap();
    let bn = |name: &str, scale: [f32; 3], var: [f32; 3], eps: f32| {
        let nodes = vec![
            node("fc", "Gemm", &["x", "W", "b"], "z", vec![attr_i("transB", 1)]),
            node(name, "BatchNormalization", &["z", "s", "B", "m", "v"], "y", vec![attr_f("epsilon", eps)]),
        ];
        let inits = vec![
            tensor_f32("W", &[3, 2], &[1.0, -0.5, 0.25, 2.0, -1.5, 0.75]),
            tensor_f32("b", &[3], &[0.1, -0.2, 0.3]),
            tensor_f32("s", &[3], &scale),
            tensor_f32("B", &[3], &[0.5, 0.0, -1.0]),
            tensor_f32("m", &[3], &[0.25, -1.0, 2.0]),
            tensor_f32("v", &[3], &var),
        ];
        model(1, &[1, 2], &[1, 3], nodes, inits)
    };
    // var + eps = 4, 1, 0.25: square roots exact, every coefficient exact: no note.
    let net = load_and_check(&write(dir.path(), "exact.onnx", &bn("bn", [2.0, 1.0, 0.5], [4.0, 1.0, 0.25], 0.0)));
    assert!(net.notes.is_empty(), "{:?}", net.notes);
    let reference = |x: &[f64]| -> Vec<f64> {
        let (s, b, m, v) = ([2.0, 1.0, 0.5], [0.5, 0.0, -1.0], [0.25, -1.0, 2.0], [4.0, 1.0, 0.25]);
        pre(x).iter().enumerate().map(|(i, z)| s[i] * (z - m[i]) / f64::sqrt(v[i]) + b[i]).collect()
    };
    for x in [[0.0, 0.0], [1.5, -2.0], [-3.0, 0.5]] {
        let got = net.eval(&x).unwrap();
        for (g, w) in got.iter().zip(reference(&x)) {
            assert!((g - w).abs() < 1e-13, "{g} vs {w}");
        }
    }
    // The usual epsilon: sqrt(var + eps) is irrational, the coefficients are rounded, and the
    // network says so (which node, how).
    let net = load_and_check(&write(dir.path(), "eps.onnx", &bn("bn_eps", [2.0, 1.0, 0.5], [4.0, 1.0, 0.25], 1e-5)));
    assert_eq!(net.notes.len(), 1);
    assert_says(&net.notes[0], &["BatchNormalization node #1 \"bn_eps\"", "computed in f64", "verified"]);
    // Training outputs and training mode are refused.
    let mut m = bn("bn", [1.0; 3], [1.0; 3], 0.0);
    m.graph.as_mut().unwrap().node[1] =
        node_multi("bn", "BatchNormalization", &["z", "s", "B", "m", "v"], &["y", "rm", "rv"], vec![]);
    let msg = message(load_onnx(&write(dir.path(), "train.onnx", &m)));
    assert_says(&msg, &["node #1 \"bn\" (BatchNormalization)", "running statistics"]);
    let mut m = bn("bn", [1.0; 3], [1.0; 3], 0.0);
    m.graph.as_mut().unwrap().node[1].attribute.push(attr_i("training_mode", 1));
    let msg = message(load_onnx(&write(dir.path(), "mode.onnx", &m)));
    assert_says(&msg, &["(BatchNormalization)", "training_mode = 1"]);
}

/// A MATLAB-style input `[1, 1, 1, 3]` through `Sub`, a Conv covering it, a 1x1 Conv, Flatten.
fn matlab_like(conv_attrs: Vec<pb::AttributeProto>, kernel: &[i64], extra_pads: bool) -> pb::ModelProto {
    let mut attrs = conv_attrs;
    if extra_pads {
        attrs.push(attr_ints("pads", &[0, 1, 0, 1]));
    }
    let taps: i64 = kernel.iter().product();
    let nodes = vec![
        node("sub", "Sub", &["x", "mean"], "a", vec![]),
        node("c1", "Conv", &["a", "W1", "B1"], "h", attrs),
        node("r", "Relu", &["h"], "hr", vec![]),
        node("c2", "Conv", &["hr", "W2", "B2"], "o", vec![attr_ints("kernel_shape", &[1, 1])]),
        node("flat", "Flatten", &["o"], "y", vec![attr_i("axis", 1)]),
    ];
    let w1: Vec<f32> = (0..2 * taps).map(|i| (i as f32 - 2.0) * 0.25).collect();
    let inits = vec![
        tensor_f32("mean", &[1, 1, 1, 3], &[0.5, -0.5, 1.0]),
        tensor_f32("W1", &[&[2, 1][..], kernel].concat(), &w1),
        tensor_f32("B1", &[2], &[0.1, -0.1]),
        tensor_f32("W2", &[2, 2, 1, 1], &[1.0, -1.0, 0.5, 2.0]),
        tensor_f32("B2", &[2], &[0.0, 0.25]),
    ];
    graph_model(8, vec![value_info("x", 1, &[1, 1, 1, 3])], vec![value_info("y", 1, &[1, 2])], nodes, inits)
}

#[test]
fn convolutions_covering_their_input_are_dense_layers() {
    let dir = tempfile::tempdir().unwrap();
    let attrs = vec![attr_ints("kernel_shape", &[1, 3]), attr_i("group", 1), attr_ints("strides", &[1, 1])];
    let net = load_and_check(&write(dir.path(), "conv.onnx", &matlab_like(attrs, &[1, 3], false)));
    assert_eq!(net.sizes()[0], 3);
    assert_eq!(*net.sizes().last().unwrap(), 2);
    let reference = |x: &[f64]| {
        let a: Vec<f64> = x.iter().zip([0.5, -0.5, 1.0]).map(|(v, m)| v - m).collect();
        let w1 = |o: usize, t: usize| ((o * 3 + t) as f64 - 2.0) * 0.25;
        let h: Vec<f64> =
            (0..2).map(|o| (0..3).map(|t| w1(o, t) * a[t]).sum::<f64>() + [0.1f32, -0.1][o] as f64).collect();
        let h: Vec<f64> = h.iter().map(|v| v.max(0.0)).collect();
        vec![h[0] - h[1], 0.5 * h[0] + 2.0 * h[1] + 0.25]
    };
    for x in [[0.0, 0.0, 0.0], [1.0, 2.0, -1.0], [-2.0, 0.5, 3.0]] {
        let (got, want) = (net.eval(&x).unwrap(), reference(&x));
        assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-6), "{got:?} vs {want:?}");
    }
    // A kernel narrower than the input, padding, SAME padding: refused, saying why.
    let msg = message(load_onnx(&write(dir.path(), "narrow.onnx", &matlab_like(vec![], &[1, 2], false))));
    assert_says(&msg, &["node #1 \"c1\" (Conv)", "spans 2 on spatial axis 1, the input 3", "covering its whole input"]);
    let msg = message(load_onnx(&write(dir.path(), "pads.onnx", &matlab_like(vec![], &[1, 3], true))));
    assert_says(&msg, &["node #1 \"c1\" (Conv)", "pads [0, 1, 0, 1]", "not a dense layer"]);
    let same = vec![attr_s("auto_pad", "SAME_UPPER")];
    let msg = message(load_onnx(&write(dir.path(), "same.onnx", &matlab_like(same, &[1, 3], false))));
    assert_says(&msg, &["node #1 \"c1\" (Conv)", "auto_pad", "NOTSET or VALID"]);
    let msg =
        message(load_onnx(&write(dir.path(), "group.onnx", &matlab_like(vec![attr_i("group", 2)], &[1, 3], false))));
    assert_says(&msg, &["node #1 \"c1\" (Conv)", "group 2"]);
}

#[test]
fn transposes_of_constants_and_of_the_value() {
    let dir = tempfile::tempdir().unwrap();
    // torch-style: W stored [out, in] and transposed by a node before MatMul; the value
    // transposed from [1, 2] to [2, 1] and back.
    let nodes = vec![
        node("wt", "Transpose", &["W"], "Wt", vec![attr_ints("perm", &[1, 0])]),
        node("tx", "Transpose", &["x"], "xt", vec![]),
        node("tb", "Transpose", &["xt"], "xb", vec![attr_ints("perm", &[1, 0])]),
        node("mm", "MatMul", &["xb", "Wt"], "y", vec![]),
    ];
    let inits = vec![tensor_f32("W", &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])];
    let net = load_and_check(&write(dir.path(), "tr.onnx", &model(1, &[1, 2], &[1, 3], nodes, inits)));
    assert_eq!(net.eval(&[1.0, -1.0]).unwrap(), vec![-1.0, -1.0, -1.0]);
    assert_eq!(net.eval(&[1.0, 0.0]).unwrap(), vec![1.0, 3.0, 5.0]);
    let nodes = vec![node("tx", "Transpose", &["x"], "y", vec![attr_ints("perm", &[0, 0])])];
    let msg = message(load_onnx(&write(dir.path(), "perm.onnx", &model(1, &[1, 2], &[2, 1], nodes, vec![]))));
    assert_says(&msg, &["node #0 \"tx\" (Transpose)", "perm = [0, 0]", "not a permutation"]);
}

#[test]
fn legacy_broadcast_of_opset_6() {
    let dir = tempfile::tempdir().unwrap();
    // ACC's form: Sub of a [1, 1, 1, 3] constant with broadcast = 1, then Gemm on the 4-D value.
    let nodes = vec![
        node("sub", "Sub", &["x", "mean"], "a", vec![attr_i("broadcast", 1)]),
        node("fc", "Gemm", &["a", "W", "b"], "y", vec![attr_i("transB", 1), attr_i("broadcast", 1)]),
    ];
    let inits = vec![
        tensor_f32("mean", &[1, 1, 1, 3], &[1.0, 2.0, 3.0]),
        tensor_f32("W", &[2, 3], &[1.0, 0.0, -1.0, 0.5, 0.5, 0.5]),
        tensor_f32("b", &[2], &[0.0, 1.0]),
    ];
    let m = graph_model(6, vec![value_info("x", 1, &[1, 1, 1, 3])], vec![value_info("y", 1, &[1, 2])], nodes, inits);
    let net = load_onnx(&write(dir.path(), "acc.onnx", &m)).unwrap();
    assert_eq!(net.eval(&[1.0, 2.0, 3.0]).unwrap(), vec![0.0, 1.0]);
    assert_eq!(net.eval(&[2.0, 2.0, 2.0]).unwrap(), vec![2.0, 1.0]);
    // An axis-aligned operand: a [3] constant at axis 3 of the 4-D value.
    let nodes = vec![node("add", "Add", &["x", "c"], "y", vec![attr_i("broadcast", 1), attr_i("axis", 3)])];
    let inits = vec![tensor_f32("c", &[3], &[1.0, 2.0, 3.0])];
    let m =
        graph_model(6, vec![value_info("x", 1, &[1, 1, 1, 3])], vec![value_info("y", 1, &[1, 1, 1, 3])], nodes, inits);
    let net = load_onnx(&write(dir.path(), "axis.onnx", &m)).unwrap();
    assert_eq!(net.eval(&[0.0, 0.0, 0.0]).unwrap(), vec![1.0, 2.0, 3.0]);
    // Without broadcast = 1 the shapes must be equal; from opset 7 the attribute is unknown.
    let nodes = vec![node("add", "Add", &["x", "c"], "y", vec![])];
    let inits = vec![tensor_f32("c", &[3], &[1.0, 2.0, 3.0])];
    let m =
        graph_model(6, vec![value_info("x", 1, &[1, 1, 1, 3])], vec![value_info("y", 1, &[1, 1, 1, 3])], nodes, inits);
    let msg = message(load_onnx(&write(dir.path(), "nobc.onnx", &m)));
    assert_says(&msg, &["node #0 \"add\" (Add)", "unless broadcast = 1"]);
    let nodes = vec![node("add", "Add", &["x", "c"], "y", vec![attr_i("broadcast", 1)])];
    let inits = vec![tensor_f32("c", &[3], &[1.0, 2.0, 3.0])];
    let msg = message(load_onnx(&write(dir.path(), "bc7.onnx", &model(1, &[1, 3], &[1, 3], nodes, inits))));
    assert_says(&msg, &["node #0 \"add\" (Add)", "attribute broadcast = 1"]);
}

#[test]
fn a_trailing_softmax_is_left_out_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    for (op, opset, axis) in [("Softmax", 13, None), ("Softmax", 11, Some(1)), ("LogSoftmax", 13, Some(-1))] {
        let attrs = axis.map(|a| vec![attr_i("axis", a)]).unwrap_or_default();
        let nodes = vec![
            node("fc", "Gemm", &["x", "W"], "z", vec![attr_i("transB", 1)]),
            node("probs", op, &["z"], "y", attrs),
        ];
        let inits = vec![tensor_f32("W", &[3, 2], &[1.0, -0.5, 0.25, 2.0, -1.5, 0.75])];
        let mut m = model(1, &[1, 2], &[1, 3], nodes, inits);
        m.opset_import[0].version = opset;
        // The tract check applies the softmax to our outputs: it agrees.
        let net = load_and_check(&write(dir.path(), &format!("{op}{opset}.onnx"), &m));
        assert_eq!(net.sizes(), vec![2, 3]);
        assert_says(net.trailing_softmax.as_deref().unwrap(), &["node #1 \"probs\"", op]);
        assert_eq!(net.eval(&[1.0, 0.0]).unwrap(), vec![1.0, 0.25, -1.5]);
    }
    // Not last: refused, naming it.
    let nodes = vec![node("sm", "Softmax", &["x"], "z", vec![]), node("r", "Relu", &["z"], "y", vec![])];
    let msg = message(load_onnx(&write(dir.path(), "mid.onnx", &model(1, &[1, 3], &[1, 3], nodes, vec![]))));
    assert_says(&msg, &["node #0 \"sm\" (Softmax)", "only as the graph's last node"]);
    // Over a part of the outputs only (axis 0 of [1, 3] normalises each value alone).
    let nodes = vec![node("sm", "Softmax", &["x"], "y", vec![attr_i("axis", 0)])];
    let msg = message(load_onnx(&write(dir.path(), "axis0.onnx", &model(1, &[1, 3], &[1, 3], nodes, vec![]))));
    assert_says(&msg, &["node #0 \"sm\" (Softmax)", "normalises groups of 1 of the 3 outputs"]);
}

#[test]
fn unsupported_operators_say_what_would_be_needed() {
    let dir = tempfile::tempdir().unwrap();
    for (op, says) in [("Elu", "an activation"), ("MaxPool", "pooling"), ("LSTM", "Elman"), ("Exp", "activation")] {
        let nodes = vec![node("n", op, &["x"], "y", vec![])];
        let msg =
            message(load_onnx(&write(dir.path(), &format!("{op}.onnx"), &model(1, &[1, 3], &[1, 3], nodes, vec![]))));
        assert_says(&msg, &[&format!("node #0 \"n\" ({op})"), "unsupported operator", says]);
    }
}

/// Float64 models (tract 0.23 has no float64 Sigmoid, so that one is checked against the formula).
#[test]
fn float64_models_with_every_activation_agree_with_tract() {
    let dir = tempfile::tempdir().unwrap();
    for (op, attrs, extra) in [
        ("Tanh", vec![], vec![]),
        ("Sigmoid", vec![], vec![]),
        ("Clip", vec![], vec!["lo", "hi"]),
        ("PRelu", vec![], vec!["slope"]),
    ] {
        let nodes = vec![
            node("mm", "MatMul", &["x", "W"], "z", vec![]),
            node("act", op, &[&["z"][..], &extra[..]].concat(), "y", attrs),
        ];
        let inits = vec![
            tensor_f64_raw("W", &[2, 3], &[0.1, -0.7, 1.3, 2.2, 0.4, -0.9]),
            tensor_f64_raw("lo", &[], &[-0.3]),
            tensor_f64_raw("hi", &[], &[0.6]),
            tensor_f64_raw("slope", &[], &[0.1]),
        ];
        let path = write(dir.path(), &format!("{op}64.onnx"), &model(11, &[1, 2], &[1, 3], nodes, inits));
        let net = if op == "Sigmoid" { load_onnx(&path).unwrap() } else { load_and_check(&path) };
        assert_eq!(net.layers.len(), 1, "{op}");
        if op == "Sigmoid" {
            let x = [0.5f64, -1.25];
            let w: [[f64; 3]; 2] = [[0.1, -0.7, 1.3], [2.2, 0.4, -0.9]];
            let want: Vec<f64> = (0..3).map(|j| 1.0 / (1.0 + (-(x[0] * w[0][j] + x[1] * w[1][j])).exp())).collect();
            let got = net.eval(&x).unwrap();
            assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-15), "{got:?} vs {want:?}");
        }
    }
}
