//! Hand-built ONNX models covering each supported operator and attribute, checked three ways:
//! the layer structure (what merged, what did not), exact weights, and tract's own inference.

mod common;

use common::build::{
    attr_f, attr_i, attr_t, model, node, tensor_f32, tensor_f32_raw, tensor_f64_raw, tensor_i64, write,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use trestle_ir::network::{Activation, DenseLayer, Layer, Network};
use trestle_nn::{cross_check_with_tract, load_onnx};

fn dense(net: &Network, i: usize) -> &DenseLayer {
    match &net.layers[i] {
        Layer::Dense(d) => d,
        Layer::Recurrent(_) => panic!("recurrent"),
    }
}

/// Loads the model, compares it with tract on 100 seeded inputs in [-2, 2], returns the network.
fn load_and_check(path: &Path) -> Network {
    let net = load_onnx(path).unwrap_or_else(|e| panic!("{e}"));
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let inputs: Vec<Vec<f64>> =
        (0..100).map(|_| (0..net.input_dim()).map(|_| rng.random_range(-2.0..2.0)).collect()).collect();
    let d = cross_check_with_tract(path, &net, &inputs).unwrap_or_else(|e| panic!("{e}"));
    assert!(d < 1e-5, "{}: tract differs by {d:e}", path.display());
    net
}

fn acts(net: &Network) -> Vec<Activation> {
    net.layers.iter().map(Layer::activation).collect()
}

#[test]
fn gemm_attributes_are_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let b = [0.1f32, 0.2, 0.3, 0.4, 0.5, 0.6]; // transB = 1: B is [n = 3, k = 2]
    let attrs = vec![attr_f("alpha", 0.5), attr_f("beta", 2.0), attr_i("transB", 1)];
    let nodes = vec![node("g", "Gemm", &["x", "B", "C"], "y", attrs)];
    let inits = vec![tensor_f32("B", &[3, 2], &b), tensor_f32("C", &[3], &[1.0, -1.0, 0.25])];
    let net = load_and_check(&write(dir.path(), "gemm.onnx", &model(1, &[1, 2], &[1, 3], nodes, inits)));
    // alpha = 0.5 folds exactly; beta * C = [2, -2, 0.5].
    assert_eq!(net.layers.len(), 1);
    let want: Vec<f64> = b.iter().map(|&v| 0.5 * f64::from(v)).collect();
    assert_eq!(dense(&net, 0).weights.data, want);
    assert_eq!(dense(&net, 0).bias, vec![2.0, -2.0, 0.5]);

    // transA = 1 on a [k, 1] value; alpha = 0.3f32 times f32 weights is exact in f64: folded.
    let attrs = vec![attr_f("alpha", 0.3), attr_i("transA", 1)];
    let nodes = vec![node("g", "Gemm", &["x", "B"], "y", attrs), node("r", "Relu", &["y"], "z", vec![])];
    let mut m = model(1, &[2, 1], &[1, 3], nodes, vec![tensor_f32("B", &[2, 3], &b)]);
    m.graph.as_mut().unwrap().output[0].name = "z".into();
    let net = load_and_check(&write(dir.path(), "gemm_ta.onnx", &m));
    assert_eq!(net.sizes(), vec![2, 3]);
    assert_eq!(acts(&net), vec![Activation::Relu]);
    let want: Vec<f64> = [0, 3, 1, 4, 2, 5].iter().map(|&i| f64::from(0.3f32) * f64::from(b[i])).collect();
    assert_eq!(dense(&net, 0).weights.data, want);

    // float64 weights times alpha = 0.3f32 round: alpha stays a separate diagonal layer.
    let b64 = b.map(|v| f64::from(v) + 1e-9);
    let attrs = vec![attr_f("alpha", 0.3), attr_i("transB", 1)];
    let nodes = vec![node("g", "Gemm", &["x", "B"], "y", attrs)];
    let net = load_and_check(&write(
        dir.path(),
        "gemm64.onnx",
        &model(11, &[1, 2], &[1, 3], nodes, vec![tensor_f64_raw("B", &[3, 2], &b64)]),
    ));
    assert_eq!(net.sizes(), vec![2, 3, 3]);
    assert_eq!(dense(&net, 0).weights.data, b64.to_vec());
    assert_eq!(dense(&net, 1).weights.data[0], f64::from(0.3f32));
}

#[test]
fn gemm_then_inexact_mul_stays_two_layers() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = vec![
        node("g", "Gemm", &["x", "B", "C"], "h", vec![]),
        node("m", "Mul", &["h", "s"], "h2", vec![]),
        node("m2", "Mul", &["t", "h2"], "h3", vec![]),
        node("r", "Relu", &["h3"], "y", vec![]),
    ];
    let b = [1.5f32, -0.7, 0.2, 0.9];
    let inits = vec![
        tensor_f32("B", &[2, 2], &b),
        tensor_f32("C", &[2], &[0.1, 0.2]),
        tensor_f32("s", &[], &[0.3]),
        tensor_f32("t", &[2], &[0.7, 0.7]),
    ];
    let net = load_and_check(&write(dir.path(), "mul.onnx", &model(1, &[1, 2], &[1, 2], nodes, inits)));
    // f32 * f32 is exact in f64, so "* 0.3" folds into the Gemm; a second f32 factor would need
    // 72 bits, so "* 0.7" is its own layer, carrying the ReLU.
    assert_eq!(acts(&net), vec![Activation::Identity, Activation::Relu]);
    let want: Vec<f64> = [0, 2, 1, 3].iter().map(|&i| f64::from(b[i]) * f64::from(0.3f32)).collect();
    assert_eq!(dense(&net, 0).weights.data, want);
    assert_eq!(dense(&net, 1).weights.data, vec![f64::from(0.7f32), 0.0, 0.0, f64::from(0.7f32)]);
}

#[test]
fn matmul_add_chains_merge_with_exact_weights() {
    let dir = tempfile::tempdir().unwrap();
    let w0 = [0.25f32, -1.0, 0.1, 0.7, 0.33, -0.2]; // [2, 3]
    let w1 = [0.5f32, -0.5, 1.25]; // [3, 1]
    let nodes = vec![
        node("mm0", "MatMul", &["x", "W0"], "a", vec![]),
        node("add0", "Add", &["a", "B0"], "b", vec![]),
        node("relu", "Relu", &["b"], "c", vec![]),
        node("mm1", "MatMul", &["c", "W1"], "d", vec![]),
        node("add1", "Add", &["B1", "d"], "y", vec![]),
    ];
    let inits = vec![
        tensor_f32_raw("W0", &[2, 3], &w0),
        tensor_f32_raw("B0", &[3], &[0.1, 0.2, 0.3]),
        tensor_f32("W1", &[3, 1], &w1),
        tensor_f32("B1", &[1, 1], &[-0.1]),
    ];
    let net = load_and_check(&write(dir.path(), "mlp.onnx", &model(1, &[1, 2], &[1, 1], nodes, inits)));
    assert_eq!(net.sizes(), vec![2, 3, 1]);
    assert_eq!(acts(&net), vec![Activation::Relu, Activation::Identity]);
    // W0 is stored [in, out]; the layer holds its transpose, every value the f32 widened.
    let want: Vec<f64> = [0, 3, 1, 4, 2, 5].iter().map(|&i| f64::from(w0[i])).collect();
    assert_eq!(dense(&net, 0).weights.data, want);
    assert_eq!(dense(&net, 0).bias, [0.1f32, 0.2, 0.3].map(f64::from).to_vec());
    assert_eq!(dense(&net, 1).bias, vec![f64::from(-0.1f32)]);
}

#[test]
fn elementwise_constants_both_orders_and_f64() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = vec![
        node("shift", "Sub", &["x", "mean"], "a", vec![]),
        node("scale", "Div", &["a", "four"], "b", vec![]),
        node("flip", "Sub", &["one", "b"], "c", vec![]),
        node("w", "Mul", &["gain", "c"], "d", vec![]),
        node("third", "Div", &["d", "three"], "e", vec![]),
        node("mm", "MatMul", &["e", "W"], "y", vec![]),
    ];
    let inits = vec![
        tensor_f64_raw("mean", &[1, 2], &[0.5, -0.75]),
        tensor_f64_raw("four", &[], &[4.0]),
        tensor_f64_raw("one", &[], &[1.0]),
        tensor_f64_raw("gain", &[2], &[2.0, 0.5]),
        tensor_f64_raw("three", &[], &[3.0]),
        tensor_f64_raw("W", &[2, 2], &[1.0, 2.0, 3.0, 4.0]),
    ];
    let path = write(dir.path(), "elem.onnx", &model(11, &[1, 2], &[1, 2], nodes, inits));
    let net = load_and_check(&path);
    let reference = |x: &[f64]| {
        let e: Vec<f64> = (0..2).map(|i| [2.0, 0.5][i] * (1.0 - (x[i] - [0.5, -0.75][i]) / 4.0) / 3.0).collect();
        vec![e[0] + 3.0 * e[1], 2.0 * e[0] + 4.0 * e[1]]
    };
    for x in [[0.0, 0.0], [1.0, -2.0], [0.37, 5.5]] {
        let (got, want) = (net.eval(&x).unwrap(), reference(&x));
        assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-14), "{got:?} vs {want:?}");
    }
    // Sub, /4, 1-, *gain merge exactly into one diagonal map; /3 (the rounded 1/3) does not
    // (2.25 * 1/3 rounds), nor can W absorb it (3 * 1/3 rounds): three layers.
    assert_eq!(net.sizes(), vec![2, 2, 2, 2]);
    assert_eq!(dense(&net, 0).weights.data, vec![-0.5, 0.0, 0.0, -0.125]);
    assert_eq!(dense(&net, 0).bias, vec![2.25, 0.40625]);
    assert_eq!(dense(&net, 1).weights.data, vec![1.0 / 3.0, 0.0, 0.0, 1.0 / 3.0]);
}

#[test]
fn layout_no_ops_and_constant_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = vec![
        node("shape", "Constant", &[], "shape", vec![attr_t("value", tensor_i64("", &[-1]))]),
        node(
            "wt",
            "Constant",
            &[],
            "W",
            vec![attr_t("value", tensor_f32("", &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))],
        ),
        node("flat", "Flatten", &["x"], "a", vec![attr_i("axis", 1)]),
        node("id", "Identity", &["a"], "b", vec![]),
        node("re", "Reshape", &["b", "shape"], "c", vec![]),
        node("mm", "MatMul", &["c", "W"], "y", vec![]),
    ];
    let net = load_and_check(&write(dir.path(), "layout.onnx", &model(1, &[1, 3], &[2], nodes, vec![])));
    assert_eq!(net.sizes(), vec![3, 2]);
    assert_eq!(net.eval(&[1.0, 0.0, -1.0]).unwrap(), vec![-4.0, -4.0]);
}

#[test]
fn rank_one_input_and_constant_left_operand() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = vec![node("mm", "MatMul", &["x", "W"], "h", vec![]), node("r", "Relu", &["h"], "y", vec![])];
    let inits = vec![tensor_f32("W", &[2, 3], &[1.0, -2.0, 3.0, 0.5, 0.5, -0.5])];
    let net = load_and_check(&write(dir.path(), "rank1.onnx", &model(1, &[2], &[3], nodes, inits)));
    assert_eq!(net.sizes(), vec![2, 3]);
    // A [3, 2] @ x [2, 1] (column input).
    let nodes = vec![node("mm", "MatMul", &["A", "x"], "y", vec![])];
    let inits = vec![tensor_f32("A", &[3, 2], &[1.0, -2.0, 3.0, 0.5, 0.5, -0.5])];
    let net = load_and_check(&write(dir.path(), "left.onnx", &model(1, &[2, 1], &[3, 1], nodes, inits)));
    assert_eq!(net.eval(&[1.0, 2.0]).unwrap(), vec![-3.0, 4.0, -0.5]);
}

#[test]
fn layout_changes_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = vec![node("re", "Reshape", &["x", "s"], "a", vec![]), node("r", "Relu", &["a"], "y", vec![])];
    let m = model(1, &[1, 4], &[2, 2], nodes, vec![tensor_i64("s", &[2, 2])]);
    let path = write(dir.path(), "reshape.onnx", &m);
    let msg = load_onnx(&path).unwrap_err().to_string();
    assert!(
        msg.contains("node #0 \"re\" (Reshape): reshaping [1, 4] to [2, 2] would change the feature layout"),
        "{msg}"
    );
    // Gemm without transA on a column value.
    let nodes = vec![node("g", "Gemm", &["x", "B"], "y", vec![])];
    let path =
        write(dir.path(), "col.onnx", &model(1, &[2, 1], &[1, 2], nodes, vec![tensor_f32("B", &[1, 2], &[1.0, 2.0])]));
    let msg = load_onnx(&path).unwrap_err().to_string();
    assert!(msg.contains("(Gemm): input A has shape [2, 1], expected [1, k]"), "{msg}");
    // Dividing by the network value.
    let nodes = vec![node("d", "Div", &["k", "x"], "y", vec![])];
    let path = write(dir.path(), "div.onnx", &model(1, &[1, 2], &[1, 2], nodes, vec![tensor_f32("k", &[], &[1.0])]));
    let msg = load_onnx(&path).unwrap_err().to_string();
    assert!(msg.contains("(Div): divides a constant by the network value"), "{msg}");
}
