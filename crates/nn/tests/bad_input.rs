//! Malformed files: every one is an error whose message names the file and the problem.

mod common;

use common::build::{attr_f, attr_i, model, node, tensor_f32, write};
use std::path::Path;
use trestle_nn::{LoadOptions, NnetNormalization, load_network, load_nnet, load_onnx};

const GOOD_NNET: &str =
    "// tiny\n1,2,1,2,\n2,1,\n0,\n-1.0,-1.0,\n1.0,1.0,\n0.0,0.0,0.0,\n1.0,1.0,1.0,\n0.5,-0.25,\n1.5,\n";

fn message(result: Result<trestle_ir::network::Network, trestle_nn::LoadError>) -> String {
    match result {
        Ok(net) => panic!("expected an error, loaded {:?}", net.sizes()),
        Err(e) => e.to_string(),
    }
}

fn assert_names(msg: &str, path: &Path, parts: &[&str]) {
    assert!(msg.starts_with(&format!("{}: ", path.display())), "file not named first: {msg}");
    for p in parts {
        assert!(msg.contains(p), "{p:?} missing from: {msg}");
    }
}

fn nnet_error(dir: &Path, name: &str, text: &str) -> (std::path::PathBuf, String) {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let msg = message(load_nnet(&path, NnetNormalization::Header));
    (path, msg)
}

#[test]
fn the_good_nnet_loads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("good.nnet");
    std::fs::write(&path, GOOD_NNET).unwrap();
    let net = load_nnet(&path, NnetNormalization::None).unwrap();
    assert_eq!(net.eval(&[2.0, 4.0]).unwrap(), vec![1.5]);
}

#[test]
fn missing_files() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["absent.onnx", "absent.nnet"] {
        let path = dir.path().join(name);
        let msg = message(load_network(&path, &LoadOptions::default()));
        assert_eq!(msg, format!("{}: no such file", path.display()));
    }
    let msg = message(load_onnx(dir.path()));
    assert_names(&msg, dir.path(), &["cannot read the file: not a regular file"]);
}

#[test]
fn unknown_extension() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("net.h5");
    std::fs::write(&path, "x").unwrap();
    let msg = message(load_network(&path, &LoadOptions::default()));
    assert_names(&msg, &path, &["unknown network file extension \"h5\"", "expected .onnx or .nnet"]);
    let msg = message(load_network(&dir.path().join("noext"), &LoadOptions::default()));
    assert!(msg.contains("unknown network file extension \"\""), "{msg}");
}

#[test]
fn garbage_onnx() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [("garbage.onnx", &b"\xff\xff\xff\xff not protobuf at all"[..]), ("empty.onnx", b"")] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let msg = message(load_onnx(&path));
        assert_names(&msg, &path, &["not a valid ONNX model"]);
    }
}

#[test]
fn garbage_nnet() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("binary.nnet");
    std::fs::write(&path, b"\x00\x9f\x92\x96").unwrap();
    assert_names(&message(load_nnet(&path, NnetNormalization::None)), &path, &["not UTF-8 text"]);
    let (path, msg) = nnet_error(dir.path(), "words.nnet", "// only a comment\nhello world\n");
    assert_names(&msg, &path, &["line 2: numLayers,inputSize,outputSize,maxLayerSize: expected 4 values, found 1"]);
}

#[test]
fn onnx_unsupported_operator() {
    let dir = tempfile::tempdir().unwrap();
    let m = model(1, &[1, 2], &[1, 2], vec![node("squash", "Elu", &["x"], "y", vec![])], vec![]);
    let path = write(dir.path(), "elu.onnx", &m);
    let msg = message(load_onnx(&path));
    assert_names(
        &msg,
        &path,
        &["node #0 \"squash\" (Elu)", "unsupported operator Elu", "an activation Trestle's networks do not have"],
    );
}

#[test]
fn onnx_unsupported_attribute_and_nan_weights() {
    let dir = tempfile::tempdir().unwrap();
    let w = tensor_f32("W", &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let attrs = vec![attr_i("transB", 1), attr_i("broadcast", 1)];
    let m = model(1, &[1, 2], &[1, 2], vec![node("fc", "Gemm", &["x", "W"], "y", attrs)], vec![w.clone()]);
    let path = write(dir.path(), "attr.onnx", &m);
    assert_names(&message(load_onnx(&path)), &path, &["node #0 \"fc\" (Gemm)", "attribute broadcast = 1"]);
    let m = model(1, &[1, 2], &[1, 2], vec![node("fc", "Gemm", &["x", "W"], "y", vec![attr_i("transA", 2)])], vec![w]);
    let path = write(dir.path(), "trans.onnx", &m);
    assert_names(&message(load_onnx(&path)), &path, &["(Gemm)", "attribute transA = 2", "must be 0 or 1"]);
    let w = tensor_f32("W_nan", &[2, 2], &[1.0, f32::NAN, 3.0, 4.0]);
    let m = model(1, &[1, 2], &[1, 2], vec![node("fc", "MatMul", &["x", "W_nan"], "y", vec![])], vec![w]);
    let path = write(dir.path(), "nan.onnx", &m);
    assert_names(&message(load_onnx(&path)), &path, &["initializer \"W_nan\"", "entry 1 is NaN"]);
    let m = model(1, &[1, 2], &[1, 2], vec![node("s", "Mul", &["x", "k"], "y", vec![])], vec![]);
    let mut m2 = m.clone();
    if let Some(g) = m2.graph.as_mut() {
        g.node.insert(0, node("k", "Constant", &[], "k", vec![attr_f("value_float", f32::INFINITY)]));
    }
    let path = write(dir.path(), "inf.onnx", &m2);
    assert_names(&message(load_onnx(&path)), &path, &["initializer \"k\"", "non-finite"]);
}

#[test]
fn onnx_shape_mismatch_and_non_chain() {
    let dir = tempfile::tempdir().unwrap();
    let w = tensor_f32("W", &[3, 2], &[1.0; 6]);
    let m = model(1, &[1, 2], &[1, 2], vec![node("mm", "MatMul", &["x", "W"], "y", vec![])], vec![w]);
    let path = write(dir.path(), "shape.onnx", &m);
    assert_names(&message(load_onnx(&path)), &path, &["node #0 \"mm\" (MatMul)", "shapes do not match"]);
    // y = relu(x) + x: a residual connection.
    let nodes = vec![node("r", "Relu", &["x"], "h", vec![]), node("add", "Add", &["h", "x"], "y", vec![])];
    let path = write(dir.path(), "residual.onnx", &model(1, &[1, 2], &[1, 2], nodes, vec![]));
    assert_names(&message(load_onnx(&path)), &path, &["not a single chain", "value \"x\" is used by several nodes"]);
    // A node hanging off the side.
    let nodes = vec![node("r", "Relu", &["x"], "y", vec![]), node("lost", "Relu", &["z"], "w", vec![])];
    let path = write(dir.path(), "dangling.onnx", &model(1, &[1, 2], &[1, 2], nodes, vec![]));
    assert_names(&message(load_onnx(&path)), &path, &["node #1 \"lost\" (Relu) is not on the path"]);
    // Declared output size disagrees with the graph.
    let path = write(
        dir.path(),
        "out.onnx",
        &model(1, &[1, 2], &[1, 3], vec![node("r", "Relu", &["x"], "y", vec![])], vec![]),
    );
    assert_names(&message(load_onnx(&path)), &path, &["declared with 3 values, the graph computes 2"]);
}

#[test]
fn nnet_nan_weight() {
    let dir = tempfile::tempdir().unwrap();
    let (path, msg) = nnet_error(dir.path(), "nan.nnet", &GOOD_NNET.replace("0.5,-0.25,", "0.5,NaN,"));
    assert_names(
        &msg,
        &path,
        &["line 9: layer 1 weight row 1 of 1 (2 values): value 2 is NaN, numbers must be finite"],
    );
    let (path, msg) = nnet_error(dir.path(), "inf.nnet", &GOOD_NNET.replace("1.5,", "inf,"));
    assert_names(&msg, &path, &["line 10: layer 1 bias 1 of 1: value 1 is inf"]);
}

#[test]
fn nnet_shape_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let (path, msg) = nnet_error(dir.path(), "row.nnet", &GOOD_NNET.replace("0.5,-0.25,", "0.5,-0.25,7.0,"));
    assert_names(&msg, &path, &["line 9: layer 1 weight row 1 of 1 (2 values): expected 2 values, found 3"]);
    let (path, msg) = nnet_error(dir.path(), "sizes.nnet", &GOOD_NNET.replace("2,1,\n0,", "3,1,\n0,"));
    assert_names(&msg, &path, &["line 3: layer sizes start at 3", "inputSize 2"]);
    let (path, msg) = nnet_error(dir.path(), "means.nnet", &GOOD_NNET.replace("0.0,0.0,0.0,", "0.0,0.0,"));
    assert_names(&msg, &path, &["line 7: means (inputs, then output): expected 3 values, found 2"]);
}

#[test]
fn nnet_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let (path, msg) = nnet_error(dir.path(), "short.nnet", GOOD_NNET.trim_end_matches("1.5,\n"));
    assert_names(&msg, &path, &["line 10: the file ends early: expected layer 1 bias 1 of 1"]);
    let (path, msg) = nnet_error(dir.path(), "header.nnet", "// c\n1,2,1,2,\n2,1,\n");
    assert_names(&msg, &path, &["line 4: the file ends early: expected the flag line"]);
    let (path, msg) = nnet_error(dir.path(), "extra.nnet", &format!("{GOOD_NNET}2.0,\n"));
    assert_names(&msg, &path, &["line 11: unexpected data after the last layer's biases"]);
}
