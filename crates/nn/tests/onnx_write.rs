//! The ONNX writer: network -> bytes -> loader gives the same layers bit for bit, tract evaluates
//! the file as the IR does (step by step, carrying hidden states), and the bytes depend on the
//! network alone.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, Network, RecurrentLayer};
use trestle_nn::{WriteError, cross_check_with_tract, encode_onnx, load_onnx, network_to_onnx, write_onnx};

/// Weights in [-1, 1]: f32 values (widened) when `f32_exact`, else arbitrary f64.
fn values(rng: &mut ChaCha8Rng, n: usize, f32_exact: bool) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let v: f64 = rng.random_range(-1.0..1.0);
            if f32_exact { f64::from(v as f32) } else { v }
        })
        .collect()
}

enum Spec {
    Dense(usize, Activation),
    Recurrent(usize),
}

fn network(input: usize, specs: &[Spec], seed: u64, f32_exact: bool) -> Network {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut width = input;
    let mut layers = Vec::new();
    for spec in specs {
        layers.push(match *spec {
            Spec::Dense(out, activation) => Layer::Dense(DenseLayer {
                weights: Matrix::new(out, width, values(&mut rng, out * width, f32_exact)),
                bias: values(&mut rng, out, f32_exact),
                activation,
            }),
            Spec::Recurrent(h) => Layer::Recurrent(RecurrentLayer {
                input_weights: Matrix::new(h, width, values(&mut rng, h * width, f32_exact)),
                // Scaled down so that the state stays bounded over the runs below.
                recurrent_weights: Matrix::new(
                    h,
                    h,
                    values(&mut rng, h * h, f32_exact).iter().map(|v| v / 4.0).collect(),
                ),
                bias: values(&mut rng, h, f32_exact),
                activation: Activation::Relu,
            }),
        });
        width = match *spec {
            Spec::Dense(out, _) | Spec::Recurrent(out) => out,
        };
    }
    Network::new("inline:random", layers).unwrap()
}

/// Writes, loads, compares layers exactly, and cross-checks with tract over runs of `steps` steps.
fn round_trip(dir: &Path, name: &str, net: &Network, steps: usize) {
    let path = dir.join(name);
    write_onnx(net, &path).unwrap();
    let loaded = load_onnx(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.layers, net.layers, "{name}: the loader reads other layers than were written");
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for _ in 0..4 {
        let run: Vec<Vec<f64>> =
            (0..steps).map(|_| (0..net.input_dim()).map(|_| rng.random_range(-2.0..2.0)).collect()).collect();
        let d = cross_check_with_tract(&path, &loaded, &run).unwrap_or_else(|e| panic!("{e}"));
        assert!(d < 1e-5, "{name}: tract differs by {d:e}");
    }
}

fn elem_type(net: &Network) -> i32 {
    let model = network_to_onnx(net).unwrap();
    let graph = model.graph.unwrap();
    assert!(graph.initializer.iter().all(|t| t.data_type == graph.initializer[0].data_type));
    graph.initializer[0].data_type
}

#[test]
fn feed_forward_networks_round_trip_in_float32_and_float64() {
    let dir = tempfile::tempdir().unwrap();
    let specs = [
        Spec::Dense(5, Activation::Relu),
        Spec::Dense(4, Activation::Identity), // two affine maps in a row stay two layers
        Spec::Dense(6, Activation::Relu),
        Spec::Dense(3, Activation::Identity),
    ];
    let f32_net = network(2, &specs, 1, true);
    assert_eq!(elem_type(&f32_net), 1);
    round_trip(dir.path(), "ff32.onnx", &f32_net, 1);
    let f64_net = network(2, &specs, 2, false);
    assert_eq!(elem_type(&f64_net), 11);
    round_trip(dir.path(), "ff64.onnx", &f64_net, 1);
}

#[test]
fn recurrent_networks_round_trip_and_tract_carries_the_same_state() {
    let dir = tempfile::tempdir().unwrap();
    let shapes: [(&str, Vec<Spec>); 3] = [
        // The issue-12 policy shape: two recurrent layers of 8, a linear head.
        ("policy.onnx", vec![Spec::Recurrent(8), Spec::Recurrent(8), Spec::Dense(2, Activation::Identity)]),
        // Dense layers before and between (an identity one right before an RNN stays its own layer).
        (
            "mixed.onnx",
            vec![
                Spec::Dense(4, Activation::Relu),
                Spec::Recurrent(5),
                Spec::Dense(3, Activation::Identity),
                Spec::Recurrent(4),
                Spec::Dense(2, Activation::Relu),
                Spec::Dense(1, Activation::Identity),
            ],
        ),
        // Ending on a recurrent layer: its state is the output too.
        ("last.onnx", vec![Spec::Dense(3, Activation::Relu), Spec::Recurrent(3)]),
    ];
    for (i, (name, specs)) in shapes.iter().enumerate() {
        let net = network(3, specs, 10 + i as u64, true);
        round_trip(dir.path(), name, &net, 15);
    }
}

#[test]
fn the_bytes_depend_on_the_network_alone() {
    let specs = [Spec::Recurrent(4), Spec::Dense(2, Activation::Identity)];
    let a = network(2, &specs, 5, true);
    let mut b = a.clone();
    b.source = "/some/other/place.onnx".into();
    assert_eq!(encode_onnx(&a).unwrap(), encode_onnx(&b).unwrap());
    let model = network_to_onnx(&a).unwrap();
    assert_eq!((model.producer_name.as_str(), model.producer_version.as_str()), ("trestle", "onnx-writer-1"));
    let mut c = a.clone();
    if let Layer::Dense(d) = &mut c.layers[1] {
        d.bias[0] = f64::from(f32::from_bits((d.bias[0] as f32).to_bits() + 1)); // one ulp of f32
    }
    assert_ne!(encode_onnx(&a).unwrap(), encode_onnx(&c).unwrap());
}

#[test]
fn what_onnx_rnn_cannot_express_is_refused() {
    let mut net = network(2, &[Spec::Recurrent(3), Spec::Dense(1, Activation::Identity)], 6, true);
    if let Layer::Recurrent(r) = &mut net.layers[0] {
        r.activation = Activation::Identity;
    }
    let err = encode_onnx(&net).unwrap_err();
    assert!(matches!(err, WriteError::Unsupported { layer: 0, .. }), "{err}");
    assert!(err.to_string().contains("ReLU activation"), "{err}");
    // A path through a regular file cannot be written (the atomic writer creates missing
    // directories, but not through a file).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plain"), b"x").unwrap();
    let err = write_onnx(&network(2, &[Spec::Dense(1, Activation::Relu)], 1, true), &dir.path().join("plain/dir.onnx"));
    assert!(matches!(err, Err(WriteError::Io { .. })), "{err:?}");
    assert!(err.unwrap_err().to_string().contains("plain/dir.onnx"));
}

/// Every activation is written and read back to the same layers, and tract agrees, in float32
/// and in float64 (tract 0.23 has no float64 Sigmoid: that model is compared with the formula).
#[test]
fn every_activation_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let acts = [
        Activation::Tanh,
        Activation::Sigmoid,
        Activation::LeakyRelu { alpha: 0.25 },
        Activation::LeakyRelu { alpha: -1.5 },
        Activation::Clip { lo: -0.5, hi: 0.75 },
        Activation::Clip { lo: f64::NEG_INFINITY, hi: 0.5 },
        Activation::Clip { lo: -0.25, hi: f64::INFINITY },
    ];
    for (k, &act) in acts.iter().enumerate() {
        for f32_exact in [true, false] {
            let specs = [Spec::Dense(5, act), Spec::Dense(4, Activation::Relu), Spec::Dense(2, act)];
            let net = network(3, &specs, 40 + k as u64, f32_exact);
            assert_eq!(elem_type(&net), if f32_exact { 1 } else { 11 });
            let name = format!("act{k}_{f32_exact}.onnx");
            if act == Activation::Sigmoid && !f32_exact {
                let path = dir.path().join(&name);
                write_onnx(&net, &path).unwrap();
                assert_eq!(load_onnx(&path).unwrap().layers, net.layers);
            } else {
                round_trip(dir.path(), &name, &net, 1);
            }
        }
    }
    // A slope that is not a float32 makes the model float64 (written as PRelu): still exact.
    let mut net = network(2, &[Spec::Dense(3, Activation::LeakyRelu { alpha: 0.1 })], 7, true);
    assert_eq!(elem_type(&net), 11);
    round_trip(dir.path(), "prelu.onnx", &net, 1);
    if let Layer::Dense(d) = &mut net.layers[0] {
        d.activation = Activation::LeakyRelu { alpha: f64::from(0.1f32) };
    }
    assert_eq!(elem_type(&net), 1);
    round_trip(dir.path(), "leaky32.onnx", &net, 1);
}
