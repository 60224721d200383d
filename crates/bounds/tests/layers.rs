//! The per-layer pre-activation bounds every method exposes (`layer_bounds`,
//! `layer_bounds_unrolled`): they contain every sampled point's exact pre-activations, at every
//! step of a recurrent network too, and CROWN's are never looser than IBP's.

mod common;

use common::*;
use num_traits::Zero;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_bounds::{InputBox, LayerBounds, Method, layer_bounds, layer_bounds_unrolled, preactivation_bounds};
use trestle_ir::network::{Activation, Layer, Network};
use trestle_ir::num::{Rational, rational_from_f64, to_f64_nearest};

/// The exact pre-activations of every layer of one step from `input` (`W y + b`, plus `W_rec h` in
/// a recurrent layer), advancing the hidden states `hidden`.
fn exact_step(net: &Network, input: &[Rational], hidden: &mut [Vec<Rational>]) -> Vec<Vec<Rational>> {
    let mut y = input.to_vec();
    let mut out = Vec::new();
    let mut h_index = 0;
    for layer in &net.layers {
        let z: Vec<Rational> = match layer {
            Layer::Dense(d) => (0..d.weights.rows).map(|r| exact_affine(d.weights.row(r), d.bias[r], &y)).collect(),
            Layer::Recurrent(rec) => (0..rec.input_weights.rows)
                .map(|r| {
                    exact_affine(rec.input_weights.row(r), rec.bias[r], &y)
                        + exact_affine(rec.recurrent_weights.row(r), 0.0, &hidden[h_index])
                })
                .collect(),
        };
        y = match layer.activation() {
            Activation::Relu => z.iter().map(|v| v.clone().max(Rational::zero())).collect(),
            Activation::Identity => z.clone(),
            other => panic!("the random networks here have no {other} layers"),
        };
        if let Layer::Recurrent(_) = layer {
            hidden[h_index] = y.clone();
            h_index += 1;
        }
        out.push(z);
    }
    out
}

fn assert_inside(bounds: &LayerBounds, z: &[Rational], context: &str) {
    for (k, v) in z.iter().enumerate() {
        let (lo, hi) = (rational_from_f64(bounds.lo[k]), rational_from_f64(bounds.hi[k]));
        assert!(lo <= *v && *v <= hi, "{context} neuron {k}: {} outside [{lo}, {hi}]", to_f64_nearest(v));
    }
}

#[test]
fn every_method_bounds_every_sampled_preactivation() {
    let mut checked = 0;
    for seed in 0..40 {
        let mut rng = ChaCha8Rng::seed_from_u64(4000 + seed);
        let sizes = random_sizes(&mut rng);
        let net = network(&mut rng, &sizes);
        let b = random_box(&mut rng, sizes[0]);
        let all: Vec<Vec<LayerBounds>> =
            METHODS.iter().map(|m| layer_bounds(&net, &b, &m.parse().unwrap()).unwrap()).collect();
        for point in sample_points(&mut rng, &b, 40) {
            let z = exact_step(&net, &exact_vec(&point), &mut []);
            for (method, layers) in METHODS.iter().zip(&all) {
                assert_eq!(layers.len(), net.layers.len());
                for (l, zl) in z.iter().enumerate() {
                    assert_inside(&layers[l], zl, &format!("seed {seed} {method} layer {l}"));
                    checked += zl.len();
                }
            }
        }
    }
    assert!(checked > 20_000, "{checked}");
}

#[test]
fn recurrent_layer_bounds_hold_at_every_step() {
    let mut checked = 0;
    for seed in 0..24 {
        let mut rng = ChaCha8Rng::seed_from_u64(4100 + seed);
        let (n_in, width, hidden) = (rng.random_range(1..=3), rng.random_range(1..=6), rng.random_range(1..=4));
        let net = recurrent_network(&mut rng, n_in, width, hidden, 2);
        let steps = rng.random_range(1..=4);
        let inputs: Vec<InputBox> = (0..steps).map(|_| random_box(&mut rng, n_in)).collect();
        let mut h0 = random_box(&mut rng, hidden);
        h0.lo
            .iter_mut()
            .zip(h0.hi.iter_mut())
            .for_each(|(l, h)| (*l, *h) = (l.abs().min(h.abs()), l.abs().max(h.abs())));
        let joint = InputBox::new(
            inputs.iter().flat_map(|b| b.lo.clone()).chain(h0.lo.clone()).collect(),
            inputs.iter().flat_map(|b| b.hi.clone()).chain(h0.hi.clone()).collect(),
        );
        for method in METHODS {
            let method: Method = method.parse().unwrap();
            let per_step = layer_bounds_unrolled(&net, &inputs, std::slice::from_ref(&h0), &method).unwrap();
            assert_eq!(per_step.len(), steps);
            for flat in sample_points(&mut rng, &joint, 30) {
                let mut h = vec![exact_vec(&flat[steps * n_in..])];
                for (t, x) in flat[..steps * n_in].chunks(n_in).enumerate() {
                    let z = exact_step(&net, &exact_vec(x), &mut h);
                    for (l, zl) in z.iter().enumerate() {
                        assert_inside(&per_step[t][l], zl, &format!("seed {seed} {method:?} step {t} layer {l}"));
                        checked += zl.len();
                    }
                }
            }
        }
    }
    assert!(checked > 5_000, "{checked}");
}

fn slack(v: f64) -> f64 {
    1e-9 * v.abs().max(1.0)
}

/// Every neuron: CROWN's and the forward mode's bounds inside IBP's (up to a rounding slack: the
/// interval rule's error terms depend on the box's midpoints), CROWN's strictly tighter somewhere,
/// and the exact leaf's `preactivation_bounds` the CROWN layer bounds themselves.
#[test]
fn crown_layer_bounds_are_never_looser_than_ibp() {
    let mut gain = 0.0;
    for seed in 0..60 {
        let mut rng = ChaCha8Rng::seed_from_u64(4200 + seed);
        let sizes = random_sizes(&mut rng);
        let net = network(&mut rng, &sizes);
        let b = random_box(&mut rng, sizes[0]);
        let ibp = layer_bounds(&net, &b, &Method::Ibp).unwrap();
        for method in [Method::Crown, Method::Forward] {
            let tighter = layer_bounds(&net, &b, &method).unwrap();
            for (l, (t, i)) in tighter.iter().zip(&ibp).enumerate() {
                for k in 0..t.lo.len() {
                    let context = format!("seed {seed} {method:?} layer {l} neuron {k}");
                    assert!(t.lo[k] >= i.lo[k] - slack(i.lo[k]), "{context}: lo {} < IBP {}", t.lo[k], i.lo[k]);
                    assert!(t.hi[k] <= i.hi[k] + slack(i.hi[k]), "{context}: hi {} > IBP {}", t.hi[k], i.hi[k]);
                    if method == Method::Crown {
                        gain += (i.hi[k] - i.lo[k]) - (t.hi[k] - t.lo[k]);
                    }
                }
            }
        }
        let crown = layer_bounds(&net, &b, &Method::Crown).unwrap();
        let pre = preactivation_bounds(&net, &b).unwrap();
        assert!(crown.iter().zip(&pre).all(|(c, (lo, hi))| c.lo == *lo && c.hi == *hi), "seed {seed}");
    }
    assert!(gain > 1.0, "CROWN never tightened an intermediate bound ({gain})");
}

/// A recurrent network is refused by the feed-forward entry point, and boxes of the wrong size are
/// errors.
#[test]
fn shapes_are_checked() {
    let mut rng = ChaCha8Rng::seed_from_u64(4300);
    let net = recurrent_network(&mut rng, 2, 3, 2, 1);
    let b = InputBox::new(vec![0.0; 2], vec![1.0; 2]);
    assert!(layer_bounds(&net, &b, &Method::Crown).is_err());
    assert!(layer_bounds_unrolled(&net, std::slice::from_ref(&b), &[], &Method::Crown).is_err());
    let h = InputBox::new(vec![0.0; 3], vec![1.0; 3]);
    assert!(layer_bounds_unrolled(&net, std::slice::from_ref(&b), &[h], &Method::Crown).is_err());
    let h = InputBox::new(vec![0.0; 2], vec![1.0; 2]);
    let per_step = layer_bounds_unrolled(&net, &[b.clone(), b], &[h], &Method::Crown).unwrap();
    assert_eq!(per_step.iter().map(Vec::len).collect::<Vec<_>>(), vec![3, 3]);
}
