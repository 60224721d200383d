//! Soundness on random networks: every sampled point's exact output lies in the returned box and
//! between the returned linear bounds, for every method.

mod common;

use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_bounds::{
    InputBox, Method, bound, bound_affine_of, bound_recurrent_step, bound_unrolled, preactivation_bounds, step_inputs,
};
use trestle_ir::network::Matrix;
use trestle_ir::num::{Rational, rational_from_f64};

const NETWORKS: u64 = 48;
const RANDOM_POINTS: usize = 150;

#[test]
fn sampled_outputs_lie_in_the_box_and_between_the_linear_bounds() {
    let mut points_checked = 0;
    for seed in 0..NETWORKS {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let sizes = random_sizes(&mut rng);
        let net = network(&mut rng, &sizes);
        for box_index in 0..2 {
            let b = random_box(&mut rng, sizes[0]);
            let results: Vec<_> = METHODS.iter().map(|m| bound(&net, &b, &m.parse().unwrap()).unwrap()).collect();
            for point in sample_points(&mut rng, &b, RANDOM_POINTS) {
                let x = exact_vec(&point);
                let y = exact_output(&net, &point);
                for (method, result) in METHODS.iter().zip(&results) {
                    assert_contains(result, &x, &y, &format!("seed {seed} box {box_index} {sizes:?} {method}"));
                }
                points_checked += 1;
            }
        }
    }
    assert!(points_checked > 10_000, "{points_checked}");
}

/// The exact pre-activations of every layer at `x` (`W y + b` before the activation).
fn exact_preactivations(net: &trestle_ir::Network, x: &[f64]) -> Vec<Vec<Rational>> {
    let mut y = exact_vec(x);
    let mut out = Vec::new();
    for layer in &net.layers {
        let trestle_ir::Layer::Dense(d) = layer else { panic!("feed-forward networks only") };
        let z: Vec<Rational> = (0..d.weights.rows).map(|r| exact_affine(d.weights.row(r), d.bias[r], &y)).collect();
        y = match d.activation {
            trestle_ir::Activation::Relu => z.iter().map(|v| v.clone().max(Rational::from_integer(0.into()))).collect(),
            trestle_ir::Activation::Identity => z.clone(),
            other => panic!("the random networks here have no {other} layers"),
        };
        out.push(z);
    }
    out
}

/// The pre-activation bounds an exact encoding uses to fix ReLU phases contain every sampled
/// point's exact pre-activations (and some neurons do come out stable).
#[test]
fn preactivation_bounds_contain_every_sampled_preactivation() {
    let mut checked = 0;
    let mut stable = 0;
    for seed in 0..NETWORKS {
        let mut rng = ChaCha8Rng::seed_from_u64(1000 + seed);
        let sizes = random_sizes(&mut rng);
        let net = network(&mut rng, &sizes);
        let b = random_box(&mut rng, sizes[0]);
        let layers = preactivation_bounds(&net, &b).unwrap();
        assert_eq!(layers.len(), net.layers.len());
        stable +=
            layers.iter().flat_map(|(lo, hi)| lo.iter().zip(hi)).filter(|(l, h)| **l >= 0.0 || **h <= 0.0).count();
        for point in sample_points(&mut rng, &b, 40) {
            for (l, z) in exact_preactivations(&net, &point).iter().enumerate() {
                for (k, v) in z.iter().enumerate() {
                    let (lo, hi) = (rational_from_f64(layers[l].0[k]), rational_from_f64(layers[l].1[k]));
                    assert!(lo <= *v && *v <= hi, "seed {seed} layer {l} neuron {k}: {v} outside [{lo}, {hi}]");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 10_000 && stable > 0, "{checked} values, {stable} stable neurons");
}

#[test]
fn affine_combinations_bound_every_sampled_point() {
    for seed in 100..124 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let sizes = random_sizes(&mut rng);
        let net = network(&mut rng, &sizes);
        let (n, m, k) = (sizes[0], *sizes.last().unwrap(), 3);
        let out_coeffs = Matrix::new(k, m, (0..k * m).map(|_| weight(&mut rng)).collect());
        let in_coeffs = Matrix::new(k, n, (0..k * n).map(|_| weight(&mut rng)).collect());
        let c: Vec<f64> = (0..k).map(|_| weight(&mut rng)).collect();
        let b = random_box(&mut rng, n);
        for method in METHODS {
            let (lo, hi) = bound_affine_of(&net, &b, &method.parse().unwrap(), &out_coeffs, &in_coeffs, &c).unwrap();
            for point in sample_points(&mut rng, &b, 40) {
                let x = exact_vec(&point);
                let y = exact_output(&net, &point);
                for i in 0..k {
                    let value = exact_affine(in_coeffs.row(i), c[i], &x)
                        + out_coeffs.row(i).iter().zip(&y).map(|(a, yj)| rational_from_f64(*a) * yj).sum::<Rational>();
                    assert!(
                        rational_from_f64(lo[i]) <= value && value <= rational_from_f64(hi[i]),
                        "seed {seed} {method} row {i}"
                    );
                }
            }
        }
    }
}

/// Runs the network `steps` steps exactly from the given hidden state.
fn exact_run(
    net: &trestle_ir::network::Network,
    inputs: &[Vec<f64>],
    hidden: &[Vec<f64>],
) -> (Vec<Rational>, Vec<Vec<Rational>>) {
    let mut h: Vec<Vec<Rational>> = hidden.iter().map(|v| exact_vec(v)).collect();
    let mut y = Vec::new();
    for x in inputs {
        y = net.forward_exact(&exact_vec(x), &mut h).unwrap();
    }
    (y, h)
}

#[test]
fn recurrent_steps_and_unrolled_runs_are_bounded() {
    for seed in 200..232 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (n_in, hidden) = (rng.random_range(1..=3), rng.random_range(1..=4));
        let width = rng.random_range(1..=6);
        let net = recurrent_network(&mut rng, n_in, width, hidden, 2);
        assert_eq!(step_inputs(&net), n_in + hidden);
        let steps = rng.random_range(1..=3);
        let inputs: Vec<InputBox> = (0..steps).map(|_| random_box(&mut rng, n_in)).collect();
        let h0 = {
            let mut b = random_box(&mut rng, hidden);
            b.lo.iter_mut().for_each(|v| *v = v.abs() * 0.5);
            b.hi.iter_mut().zip(&b.lo).for_each(|(h, l)| *h = h.abs().max(*l));
            b
        };
        for method in METHODS {
            let method: Method = method.parse().unwrap();
            let (out, hidden_boxes) = bound_unrolled(&net, &inputs, std::slice::from_ref(&h0), &method).unwrap();
            let (step_out, step_hidden) =
                bound_recurrent_step(&net, &inputs[0], std::slice::from_ref(&h0), &method).unwrap();
            // Points of the joint box [x_1; ...; x_T; h_0] (all corners when it has at most 8
            // dimensions, where linear bounds are tightest), split into steps.
            let joint = InputBox::new(
                inputs.iter().flat_map(|b| b.lo.clone()).chain(h0.lo.clone()).collect(),
                inputs.iter().flat_map(|b| b.hi.clone()).chain(h0.hi.clone()).collect(),
            );
            for flat in sample_points(&mut rng, &joint, 60) {
                let xs: Vec<Vec<f64>> = flat[..steps * n_in].chunks(n_in).map(<[f64]>::to_vec).collect();
                let h = flat[steps * n_in..].to_vec();
                let (y, h_new) = exact_run(&net, &xs, std::slice::from_ref(&h));
                assert_contains(&out, &exact_vec(&flat), &y, &format!("seed {seed} {method:?} unrolled {steps}"));
                for (k, v) in h_new[0].iter().enumerate() {
                    assert!(
                        rational_from_f64(hidden_boxes[0].0[k]) <= *v && *v <= rational_from_f64(hidden_boxes[0].1[k])
                    );
                }
                let (y1, h1) = exact_run(&net, &xs[..1], std::slice::from_ref(&h));
                let step_input: Vec<f64> = xs[0].iter().chain(&h).copied().collect();
                assert_contains(&step_out, &exact_vec(&step_input), &y1, &format!("seed {seed} {method:?} one step"));
                for (k, v) in h1[0].iter().enumerate() {
                    assert!(
                        rational_from_f64(step_hidden[0].0[k]) <= *v && *v <= rational_from_f64(step_hidden[0].1[k])
                    );
                }
            }
        }
    }
}

/// The score differences of an argmax controller (`difference_bounds`, through a difference
/// network) against the same differences bounded backward from the coefficients `e_i - e_j`
/// (`bound_affine_of`, how the bridge engine bounded them before the bridge and the MILP
/// encodings shared one function): both contain every sampled exact difference, and they agree
/// but for rounding (neither is tighter everywhere: they round different sums). Their
/// intersection (`tightest_difference_bounds`, the bridge's argmax) is at least as tight as each
/// and contains every sampled difference too.
#[test]
fn difference_bounds_contain_sampled_differences_and_agree_with_the_backward_combination() {
    let (mut compared, mut tighter) = (0, 0);
    for seed in 0..NETWORKS {
        let mut rng = ChaCha8Rng::seed_from_u64(3000 + seed);
        let mut sizes = random_sizes(&mut rng);
        *sizes.last_mut().unwrap() += 1;
        let net = network(&mut rng, &sizes);
        let n = net.output_dim();
        let pairs: Vec<(usize, usize)> =
            (0..n).flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j))).collect();
        let b = random_box(&mut rng, sizes[0]);
        for method in METHODS {
            let m: Method = method.parse().unwrap();
            let (lo, hi) = trestle_bounds::difference_bounds(&net, &b, &m, &pairs).unwrap();
            let k = pairs.len();
            let mut out = Matrix::new(k, n, vec![0.0; k * n]);
            for (r, &(i, j)) in pairs.iter().enumerate() {
                out.data[r * n + i] = 1.0;
                out.data[r * n + j] = -1.0;
            }
            let zero_in = Matrix::new(k, sizes[0], vec![0.0; k * sizes[0]]);
            let (old_lo, old_hi) = bound_affine_of(&net, &b, &m, &out, &zero_in, &vec![0.0; k]).unwrap();
            for r in 0..k {
                for (new, old) in [(hi[r], old_hi[r]), (lo[r], old_lo[r])] {
                    let scale = 1.0 + new.abs().max(old.abs());
                    assert!(
                        (new - old).abs() <= 1e-9 * scale,
                        "seed {seed} {method} pair {:?}: {new} against {old}",
                        pairs[r]
                    );
                    compared += 1;
                }
            }
            // The bridge's argmax meets both: at least as tight as each, on every pair.
            let (t_lo, t_hi) = trestle_bounds::tightest_difference_bounds(&net, &b, &m, &pairs).unwrap();
            for r in 0..k {
                assert!(t_hi[r] <= hi[r].min(old_hi[r]) && t_lo[r] >= lo[r].max(old_lo[r]), "seed {seed} {method}");
                tighter += usize::from(t_hi[r] < old_hi[r] || t_lo[r] > old_lo[r]);
            }
            for point in sample_points(&mut rng, &b, 20) {
                let y = exact_output(&net, &point);
                for (r, &(i, j)) in pairs.iter().enumerate() {
                    let d = &y[i] - &y[j];
                    assert!(
                        rational_from_f64(lo[r]) <= d && d <= rational_from_f64(hi[r]),
                        "seed {seed} {method} pair {:?}",
                        pairs[r]
                    );
                    assert!(rational_from_f64(t_lo[r]) <= d && d <= rational_from_f64(t_hi[r]), "seed {seed} {method}");
                }
            }
        }
    }
    assert!(compared > 1000, "{compared}");
    // The intersection is strictly tighter than the backward combination alone somewhere (else
    // meeting them would change nothing for the bridge).
    assert!(tighter > 0, "{tighter}");
}
