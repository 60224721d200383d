//! The real models in `../shared/models`: both formats, tract, the test vectors, VCAS normalisation.

mod common;

use common::{argmax, max_abs_diff};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use trestle_ir::network::{Layer, Network};
use trestle_nn::{LoadOptions, NnetNormalization, cross_check_with_tract, load_network, load_nnet, load_onnx};
use trestle_testkit::shared_models as models_dir;

/// A model family: its (onnx, nnet) pairs and the input box to sample.
struct Family {
    name: &'static str,
    pairs: Vec<(PathBuf, PathBuf)>,
    lo: f64,
    hi: f64,
}

fn families(dir: &Path) -> Vec<Family> {
    let pair = |stem: PathBuf| (stem.with_extension("onnx"), stem.with_extension("nnet"));
    let maze = |kind: &str| {
        trestle_testkit::PEER_SIZES.iter().map(|h| pair(dir.join(format!("maze/{kind}/maze_2d_{h}x{h}")))).collect()
    };
    vec![
        Family { name: "maze det", pairs: maze("det"), lo: -0.5, hi: 1.5 },
        Family { name: "maze nondet", pairs: maze("nondet"), lo: -0.5, hi: 1.5 },
        Family {
            name: "vcas",
            pairs: (1..=9).map(|i| pair(dir.join(format!("vcas/vcas_{i}")))).collect(),
            lo: -1.0,
            hi: 1.0,
        },
        Family { name: "frozenlake", pairs: vec![pair(dir.join("frozenlake/agent"))], lo: 0.0, hi: 1.0 },
    ]
}

/// All corners of the box, its centre, the one-hot vectors, then 300 seeded uniform points.
fn sample_inputs(dim: usize, lo: f64, hi: f64, seed: u64) -> Vec<Vec<f64>> {
    let mut inputs: Vec<Vec<f64>> =
        (0..1usize << dim).map(|m| (0..dim).map(|i| if m >> i & 1 == 1 { hi } else { lo }).collect()).collect();
    inputs.push(vec![(lo + hi) / 2.0; dim]);
    inputs.extend((0..dim).map(|i| (0..dim).map(|j| if i == j { 1.0 } else { 0.0 }).collect()));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    inputs.extend((0..300).map(|_| (0..dim).map(|_| rng.random_range(lo..=hi)).collect()));
    inputs
}

fn weights(net: &Network) -> Vec<f64> {
    net.layers
        .iter()
        .flat_map(|l| match l {
            Layer::Dense(d) => d.weights.data.iter().chain(&d.bias).copied().collect::<Vec<_>>(),
            Layer::Recurrent(_) => panic!("unexpected recurrent layer"),
        })
        .collect()
}

#[test]
fn every_network_agrees_across_formats_and_with_tract() {
    let Some(dir) = models_dir() else { return };
    let mut report = Vec::new();
    for (fi, family) in families(&dir).into_iter().enumerate() {
        let (mut fmt_diff, mut tract_diff, mut tract_rel, mut inexact) = (0.0f64, 0.0f64, 0.0f64, 0usize);
        for (k, (onnx_path, nnet_path)) in family.pairs.iter().enumerate() {
            let onnx = load_onnx(onnx_path).unwrap_or_else(|e| panic!("{e}"));
            let nnet = load_nnet(nnet_path, NnetNormalization::None).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(onnx.sizes(), nnet.sizes(), "{}", onnx_path.display());
            // Every NNet decimal rounds (as f32) to exactly the ONNX float32 weight.
            let (w_onnx, w_nnet) = (weights(&onnx), weights(&nnet));
            assert_eq!(w_onnx.len(), w_nnet.len());
            for (a, b) in w_onnx.iter().zip(&w_nnet) {
                assert_eq!(*a, f64::from(*b as f32), "{}: weight {b} vs {a}", nnet_path.display());
            }
            inexact += w_onnx.iter().zip(&w_nnet).filter(|(a, b)| a != b).count();
            let inputs = sample_inputs(onnx.input_dim(), family.lo, family.hi, (fi * 100 + k) as u64);
            let mut scale = 1.0f64;
            for x in &inputs {
                let (a, b) = (onnx.eval(x).unwrap(), nnet.eval(x).unwrap());
                scale = a.iter().fold(scale, |s, v| s.max(v.abs()));
                fmt_diff = fmt_diff.max(max_abs_diff(&a, &b));
            }
            let d = cross_check_with_tract(onnx_path, &onnx, &inputs).unwrap_or_else(|e| panic!("{e}"));
            assert!(d <= 1e-4 * scale, "{}: tract differs by {d:e} (output scale {scale})", onnx_path.display());
            tract_diff = tract_diff.max(d);
            tract_rel = tract_rel.max(d / scale);
            assert!(fmt_diff <= 1e-6, "{}: onnx and nnet differ by {fmt_diff:e}", onnx_path.display());
        }
        report.push(format!(
            "{:12} {:2} nets: onnx vs nnet max |diff| {fmt_diff:.3e}; ours vs tract max |diff| {tract_diff:.3e} \
             (relative to output scale {tract_rel:.3e}); nnet weights not equal to the f32 value: {inexact}",
            family.name,
            family.pairs.len()
        ));
    }
    println!("{}", report.join("\n"));
}

#[test]
fn load_network_picks_the_format_by_extension() {
    let Some(dir) = models_dir() else { return };
    let opts = LoadOptions::default();
    assert_eq!(opts.nnet_normalization, NnetNormalization::Header);
    let onnx = load_network(&dir.join("frozenlake/agent.onnx"), &opts).unwrap();
    let nnet = load_network(&dir.join("frozenlake/agent.nnet"), &opts).unwrap();
    assert_eq!(onnx.sizes(), vec![9, 32, 32, 4]);
    // Header mode: the clip layers come first (normalisation and output mapping are identities).
    assert_eq!(nnet.sizes(), vec![9, 9, 9, 9, 32, 32, 4]);
    assert_eq!(nnet.source, dir.join("frozenlake/agent.nnet").display().to_string());
}

#[test]
fn maze_512_nnet_with_long_lines_parses() {
    let Some(dir) = models_dir() else { return };
    for kind in ["det", "nondet"] {
        let path = dir.join(format!("maze/{kind}/maze_2d_512x512.nnet"));
        let longest = std::fs::read_to_string(&path).unwrap().lines().map(str::len).max().unwrap();
        assert!(longest > 10_240, "{longest}");
        let net = load_nnet(&path, NnetNormalization::None).unwrap();
        assert_eq!(net.sizes(), vec![2, 512, 512, 2]);
        // The maze files are written as exact f32 values: the two formats give identical layers.
        assert_eq!(net.layers, load_onnx(&path.with_extension("onnx")).unwrap().layers);
    }
}

#[derive(Deserialize)]
struct Vector {
    input: Vec<f64>,
    output: Vec<f64>,
    argmax: usize,
}

#[derive(Deserialize)]
struct VcasVectors {
    networks: std::collections::BTreeMap<String, Vec<Vector>>,
}

#[derive(Deserialize)]
struct FrozenVectors {
    vectors: Vec<Vector>,
}

fn check_vectors(stem: &Path, vectors: &[Vector]) -> f64 {
    let onnx = load_onnx(&stem.with_extension("onnx")).unwrap();
    let nnet = load_nnet(&stem.with_extension("nnet"), NnetNormalization::None).unwrap();
    let mut worst = 0.0f64;
    for (i, v) in vectors.iter().enumerate() {
        for net in [&onnx, &nnet] {
            let out = net.eval(&v.input).unwrap();
            let d = max_abs_diff(&out, &v.output);
            assert!(d <= 1e-6, "{} vector {i}: differs by {d:e}", net.source);
            assert_eq!(argmax(&out), v.argmax, "{} vector {i}", net.source);
            worst = worst.max(d);
        }
    }
    worst
}

#[test]
fn test_vectors_are_reproduced() {
    let Some(dir) = models_dir() else { return };
    let text = std::fs::read_to_string(dir.join("vcas/testvectors.json")).unwrap();
    let vcas: VcasVectors = serde_json::from_str(&text).unwrap();
    assert_eq!(vcas.networks.len(), 9);
    let mut worst = 0.0f64;
    for (name, vectors) in &vcas.networks {
        assert_eq!(vectors.len(), 16);
        worst = worst.max(check_vectors(&dir.join("vcas").join(name), vectors));
    }
    let text = std::fs::read_to_string(dir.join("frozenlake/testvectors.json")).unwrap();
    let frozen: FrozenVectors = serde_json::from_str(&text).unwrap();
    assert_eq!(frozen.vectors.len(), 16);
    let frozen_worst = check_vectors(&dir.join("frozenlake/agent"), &frozen.vectors);
    println!("test vectors: vcas max |diff| {worst:.3e}, frozenlake max |diff| {frozen_worst:.3e}");
}

#[test]
fn vcas_header_normalisation_vs_venmas() {
    let Some(dir) = models_dir() else { return };
    let path = dir.join("vcas/vcas_1.nnet");
    let header = load_nnet(&path, NnetNormalization::Header).unwrap();
    let raw = load_nnet(&path, NnetNormalization::None).unwrap();
    let (h, hdot0, tau) = (-131.0, -19.5, 25.0);
    // Standard NNet semantics (hdot0 range 200): COC.
    assert_eq!(argmax(&header.eval(&[h, hdot0, tau]).unwrap()), 0);
    // VenMAS: its own normalisation (hdot0 range 5000), raw outputs: CL1500.
    assert_eq!(argmax(&raw.eval(&[h / 16000.0, hdot0 / 5000.0, (tau - 20.0) / 40.0]).unwrap()), 4);
    // Header mode equals the sisl evaluator written out by hand.
    let (mins, maxes) = ([-8000.0, -100.0, 0.0], [8000.0, 100.0, 40.0]);
    let (means, ranges) = ([0.0, 0.0, 20.0, -0.7194709316423972], [16000.0, 200.0, 40.0, 26.24923585890485]);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..500 {
        let x = [rng.random_range(-9000.0..9000.0), rng.random_range(-150.0..150.0), rng.random_range(-5.0..45.0)];
        let xn: Vec<f64> = (0..3).map(|i| (f64::clamp(x[i], mins[i], maxes[i]) - means[i]) / ranges[i]).collect();
        let want: Vec<f64> = raw.eval(&xn).unwrap().iter().map(|y| y * ranges[3] + means[3]).collect();
        let got = header.eval(&x).unwrap();
        assert!(max_abs_diff(&got, &want) <= 1e-9, "{x:?}: {got:?} vs {want:?}");
    }
}
