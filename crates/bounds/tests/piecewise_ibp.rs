//! IBP of leaky ReLU and clip layers: output and per-layer bounds contain every sampled point's
//! exact values (the activations evaluated here from their definitions, independently of the
//! IR's evaluator), also the pre-activation bounds exact encodings use (CROWN's); the interval rule
//! is exact on one neuron, and every method bounds these layers.

mod common;

use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_bounds::{InputBox, Method, bound, bound_affine_of, layer_bounds, method_for, preactivation_bounds};
use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, Network};
use trestle_ir::num::{Rational, rational_from_f64};

/// The activation by its definition, on an exact value.
fn apply(act: Activation, z: &Rational) -> Rational {
    let zero = Rational::from_integer(0.into());
    match act {
        Activation::Identity => z.clone(),
        Activation::Relu => z.clone().max(zero),
        Activation::LeakyRelu { alpha } if *z < zero => z * rational_from_f64(alpha),
        Activation::LeakyRelu { .. } => z.clone(),
        Activation::Clip { lo, hi } => {
            let mut y = z.clone();
            if lo.is_finite() && y < rational_from_f64(lo) {
                y = rational_from_f64(lo);
            }
            if hi.is_finite() && y > rational_from_f64(hi) {
                y = rational_from_f64(hi);
            }
            y
        }
        other => panic!("no {other} here"),
    }
}

fn random_activation(rng: &mut ChaCha8Rng) -> Activation {
    match rng.random_range(0..6) {
        0 => Activation::LeakyRelu { alpha: rng.random_range(-0.5..0.5) },
        1 => Activation::LeakyRelu { alpha: rng.random_range(1.0..4.0) },
        2 => {
            let lo = rng.random_range(-2.0..0.5);
            Activation::Clip { lo, hi: lo + rng.random_range(0.0..2.0) }
        }
        3 => Activation::Clip { lo: f64::NEG_INFINITY, hi: rng.random_range(-1.0..1.0) },
        4 => Activation::Clip { lo: rng.random_range(-1.0..1.0), hi: f64::INFINITY },
        _ => Activation::Relu,
    }
}

/// A random network whose hidden layers have random piecewise-linear activations.
fn piecewise_network(rng: &mut ChaCha8Rng) -> Network {
    let sizes = random_sizes(rng);
    let mut net = network(rng, &sizes);
    let last = net.layers.len() - 1;
    for (l, layer) in net.layers.iter_mut().enumerate() {
        if let Layer::Dense(d) = layer
            && (l < last || rng.random_bool(0.5))
        {
            d.activation = random_activation(rng);
        }
    }
    net.validate().unwrap();
    net
}

/// The exact pre-activations of every layer and the exact outputs at `x`.
fn exact(net: &Network, x: &[f64]) -> (Vec<Vec<Rational>>, Vec<Rational>) {
    let mut y = exact_vec(x);
    let mut pre = Vec::new();
    for layer in &net.layers {
        let Layer::Dense(d) = layer else { panic!("feed-forward only") };
        let z: Vec<Rational> = (0..d.weights.rows).map(|r| exact_affine(d.weights.row(r), d.bias[r], &y)).collect();
        y = z.iter().map(|v| apply(d.activation, v)).collect();
        pre.push(z);
    }
    (pre, y)
}

fn inside(lo: f64, hi: f64, v: &Rational) -> bool {
    rational_from_f64(lo) <= *v && *v <= rational_from_f64(hi)
}

#[test]
fn ibp_contains_every_sampled_value_of_leaky_and_clip_networks() {
    let mut checked = 0;
    for seed in 0..60 {
        let mut rng = ChaCha8Rng::seed_from_u64(9100 + seed);
        let net = piecewise_network(&mut rng);
        let b = random_box(&mut rng, net.input_dim());
        let out = bound(&net, &b, &Method::Ibp).unwrap();
        let layers = layer_bounds(&net, &b, &Method::Ibp).unwrap();
        let pre = preactivation_bounds(&net, &b).unwrap();
        for point in sample_points(&mut rng, &b, 60) {
            let (z, y) = exact(&net, &point);
            for (k, v) in y.iter().enumerate() {
                assert!(inside(out.lo[k], out.hi[k], v), "seed {seed} output {k}");
            }
            for (l, zl) in z.iter().enumerate() {
                for (k, v) in zl.iter().enumerate() {
                    assert!(inside(layers[l].lo[k], layers[l].hi[k], v), "seed {seed} layer {l} neuron {k}");
                    assert!(inside(pre[l].0[k], pre[l].1[k], v), "seed {seed} layer {l} neuron {k} (pre)");
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 3000, "{checked}");
}

fn single(activation: Activation) -> Network {
    let layer = Layer::Dense(DenseLayer { weights: Matrix::identity(1), bias: vec![0.0], activation });
    Network::new("inline:one", vec![layer]).unwrap()
}

/// The output bounds are the activation's exact image of the pre-activation bounds (the slopes
/// here are powers of two, so even the products are exact).
#[test]
fn the_interval_rule_is_exact_on_one_neuron() {
    let b = InputBox::new(vec![-2.0], vec![3.0]);
    type Image = fn(f64, f64) -> (f64, f64);
    let cases: [(Activation, Image); 8] = [
        (Activation::LeakyRelu { alpha: 0.5 }, |l, u| (0.5 * l, u)),
        (Activation::LeakyRelu { alpha: -0.25 }, |l, u| (0.0, u.max(-0.25 * l))),
        (Activation::LeakyRelu { alpha: -2.0 }, |l, u| (0.0, u.max(-2.0 * l))),
        (Activation::LeakyRelu { alpha: 2.0 }, |l, u| (2.0 * l, u)),
        (Activation::Clip { lo: -1.0, hi: 1.5 }, |_, _| (-1.0, 1.5)),
        (Activation::Clip { lo: f64::NEG_INFINITY, hi: 0.25 }, |l, _| (l, 0.25)),
        (Activation::Clip { lo: -0.5, hi: f64::INFINITY }, |_, u| (-0.5, u)),
        (Activation::Clip { lo: 4.0, hi: 5.0 }, |_, _| (4.0, 4.0)),
    ];
    for (act, image) in cases {
        let net = single(act);
        let pre = &layer_bounds(&net, &b, &Method::Ibp).unwrap()[0];
        assert!(pre.lo[0] <= -2.0 && pre.lo[0] > -2.0001 && pre.hi[0] >= 3.0 && pre.hi[0] < 3.0001);
        let out = bound(&net, &b, &Method::Ibp).unwrap();
        assert_eq!((out.lo[0], out.hi[0]), image(pre.lo[0], pre.hi[0]), "{act}");
    }
}

/// Every method bounds leaky ReLU, clip, tanh and sigmoid layers (the support table refuses
/// nothing any more), and the pre-activation bounds exact encodings use are CROWN's: tighter
/// than IBP's on some neuron, and containing every sampled exact pre-activation (the test above).
#[test]
fn every_method_bounds_every_activation_and_preactivations_are_crowns() {
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    let mut net = network(&mut rng, &[2, 4, 3, 1]);
    let b = InputBox::new(vec![-1.0; 2], vec![1.0; 2]);
    for act in [
        Activation::Clip { lo: -1.0, hi: 1.0 },
        Activation::LeakyRelu { alpha: 0.1 },
        Activation::Tanh,
        Activation::Sigmoid,
    ] {
        if let Layer::Dense(d) = &mut net.layers[1] {
            d.activation = act;
        }
        for method in ["ibp", "crown", "alpha-crown", "forward"] {
            let m: Method = method.parse().unwrap();
            let out = bound(&net, &b, &m).unwrap_or_else(|e| panic!("{act} {method}: {e}"));
            assert!(out.lo[0] <= out.hi[0]);
            assert_eq!(layer_bounds(&net, &b, &m).unwrap().len(), 3);
            let id = Matrix::identity(1);
            let zero_in = Matrix::new(1, 2, vec![0.0; 2]);
            let (lo, hi) = bound_affine_of(&net, &b, &m, &id, &zero_in, &[0.0]).unwrap();
            assert!(lo[0] <= out.hi[0] && hi[0] >= out.lo[0], "{act} {method}");
        }
        assert_eq!(method_for(&net, &Method::Crown), Method::Crown);
        let ibp = layer_bounds(&net, &b, &Method::Ibp).unwrap();
        let pre = preactivation_bounds(&net, &b).unwrap();
        let width = |lo: &[f64], hi: &[f64]| hi.iter().zip(lo).map(|(h, l)| h - l).sum::<f64>();
        let (ibp_width, pre_width): (f64, f64) =
            (ibp.iter().map(|l| width(&l.lo, &l.hi)).sum(), pre.iter().map(|(lo, hi)| width(lo, hi)).sum());
        assert!(pre_width <= ibp_width, "{act}: {pre_width} vs {ibp_width}");
    }
}
