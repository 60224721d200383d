//! The big-M encodings of leaky ReLU and clip layers against the exact forward pass: with the
//! input fixed to a random point, the minimum and the maximum of every output are its exact value
//! (the encoding is the function's graph); over a box, the optimum is attained by the solver's own
//! input and bounds every grid sample; binaries: one per leaky ReLU, one per finite clip bound a
//! neuron's box crosses; tanh and sigmoid are refused, naming the layer.

use good_lp::Expression;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_bounds::InputBox;
use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, Network};
use trestle_ir::num::{rational_from_f64, to_f64_nearest};
use trestle_milp::{MilpError, MilpModel, Sense, SolveOptions, SolveStatus, encode_network};

fn dense(rows: Vec<Vec<f64>>, bias: Vec<f64>, activation: Activation) -> Layer {
    Layer::Dense(DenseLayer { weights: Matrix::from_rows(&rows), bias, activation })
}

fn random_activation(rng: &mut ChaCha8Rng) -> Activation {
    match rng.random_range(0..7) {
        0 => Activation::LeakyRelu { alpha: 0.1 },
        1 => Activation::LeakyRelu { alpha: -0.5 },
        2 => Activation::LeakyRelu { alpha: 3.0 },
        3 => Activation::Clip { lo: -0.4, hi: 0.3 },
        4 => Activation::Clip { lo: f64::NEG_INFINITY, hi: 0.2 },
        5 => Activation::Clip { lo: -0.1, hi: f64::INFINITY },
        _ => Activation::Relu,
    }
}

fn network(rng: &mut ChaCha8Rng, sizes: &[usize]) -> Network {
    let mut layers = Vec::new();
    for (k, w) in sizes.windows(2).enumerate() {
        let rows = (0..w[1]).map(|_| (0..w[0]).map(|_| rng.random_range(-1.0..1.0)).collect()).collect();
        let bias = (0..w[1]).map(|_| rng.random_range(-0.5..0.5)).collect();
        let act = if k + 2 == sizes.len() { Activation::Identity } else { random_activation(rng) };
        layers.push(dense(rows, bias, act));
    }
    Network::new("inline:piecewise", layers).unwrap()
}

fn exact_forward(net: &Network, x: &[f64]) -> Vec<f64> {
    let input: Vec<_> = x.iter().map(|&v| rational_from_f64(v)).collect();
    net.forward_exact(&input, &mut []).unwrap().iter().map(to_f64_nearest).collect()
}

fn inputs(model: &mut MilpModel, lo: [f64; 2], hi: [f64; 2]) -> (Vec<good_lp::Variable>, Vec<Expression>) {
    let vars: Vec<_> = (0..2).map(|i| model.continuous(lo[i], hi[i], &format!("x{i}")).unwrap()).collect();
    let exprs = vars.iter().map(|&v| Expression::from(v)).collect();
    (vars, exprs)
}

#[test]
fn at_a_point_every_output_is_exactly_the_forward_pass() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x1eaf);
    let mut checked = 0;
    for trial in 0..8 {
        let net = network(&mut rng, &[2, 6, 5, 2]);
        for _ in 0..6 {
            let x = [rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)];
            let exact = exact_forward(&net, &x);
            // The box around the point is the whole square (binaries stay free), the point is
            // fixed by the variables' bounds.
            let mut model = MilpModel::new();
            let (_, exprs) = inputs(&mut model, x, x);
            let enc = encode_network(&mut model, &net, &exprs, &InputBox::new(vec![-1.0; 2], vec![1.0; 2])).unwrap();
            for (k, &y) in exact.iter().enumerate() {
                for sense in [Sense::Maximise, Sense::Minimise] {
                    let out = model.solve(sense, &enc.outputs[k], &SolveOptions::default()).unwrap();
                    assert_eq!(out.status, SolveStatus::Optimal, "trial {trial}");
                    let got = out.primal.unwrap();
                    assert!((got - y).abs() <= 1e-6, "trial {trial} at {x:?} output {k} {sense:?}: {got} vs {y}");
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 8 * 6 * 2 * 2);
}

#[test]
fn optima_over_a_box_are_attained_and_bound_the_grid() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xc11f);
    let n = 61;
    let grid: Vec<[f64; 2]> = (0..n)
        .flat_map(|i| {
            (0..n).map(move |j| [-1.0 + 2.0 * i as f64 / (n - 1) as f64, -1.0 + 2.0 * j as f64 / (n - 1) as f64])
        })
        .collect();
    for trial in 0..4 {
        let net = network(&mut rng, &[2, 6, 5, 2]);
        let sampled: Vec<Vec<f64>> = grid.iter().map(|x| net.eval(x).unwrap()).collect();
        let mut model = MilpModel::new();
        let (vars, exprs) = inputs(&mut model, [-1.0; 2], [1.0; 2]);
        let enc = encode_network(&mut model, &net, &exprs, &InputBox::new(vec![-1.0; 2], vec![1.0; 2])).unwrap();
        for k in 0..2 {
            for sense in [Sense::Maximise, Sense::Minimise] {
                let out = model.solve(sense, &enc.outputs[k], &SolveOptions::default()).unwrap();
                let (primal, bound) = (out.primal.unwrap(), out.bound.unwrap());
                let values = out.values.as_ref().unwrap();
                let x: Vec<f64> = vars.iter().map(|&v| model.value(v, values)).collect();
                let exact = exact_forward(&net, &x)[k];
                assert!((exact - primal).abs() <= 1e-6, "trial {trial} output {k}: exact {exact} vs milp {primal}");
                for (s, y) in grid.iter().zip(&sampled) {
                    match sense {
                        Sense::Maximise => assert!(y[k] <= bound + 1e-9, "{s:?}: {} > max {bound}", y[k]),
                        Sense::Minimise => assert!(y[k] >= bound - 1e-9, "{s:?}: {} < min {bound}", y[k]),
                    }
                }
            }
        }
    }
}

#[test]
fn binaries_per_kink_the_box_crosses() {
    let x_box = InputBox::new(vec![-1.0], vec![1.0]);
    let count = |act: Activation| {
        let net = Network::new("inline:one", vec![dense(vec![vec![1.0]], vec![0.0], act)]).unwrap();
        let mut model = MilpModel::new();
        let x = model.continuous(-1.0, 1.0, "x").unwrap();
        encode_network(&mut model, &net, &[Expression::from(x)], &x_box).unwrap();
        model.num_binaries()
    };
    assert_eq!(count(Activation::LeakyRelu { alpha: 0.5 }), 1);
    assert_eq!(count(Activation::Clip { lo: -0.5, hi: 0.5 }), 2);
    assert_eq!(count(Activation::Clip { lo: f64::NEG_INFINITY, hi: 0.5 }), 1);
    assert_eq!(count(Activation::Clip { lo: -2.0, hi: 0.5 }), 1); // the lower bound is never reached
    assert_eq!(count(Activation::Clip { lo: 2.0, hi: 3.0 }), 0); // always 2: a constant
    let pos = InputBox::new(vec![0.5], vec![1.0]);
    let net = Network::new("inline:one", vec![dense(vec![vec![1.0]], vec![0.0], Activation::LeakyRelu { alpha: 0.5 })]);
    let mut model = MilpModel::new();
    let x = model.continuous(0.5, 1.0, "x").unwrap();
    encode_network(&mut model, &net.unwrap(), &[Expression::from(x)], &pos).unwrap();
    assert_eq!(model.num_binaries(), 0, "a leaky ReLU positive on the box is the identity");
}

#[test]
fn tanh_and_sigmoid_are_refused_naming_the_layer() {
    for act in [Activation::Tanh, Activation::Sigmoid] {
        let net = Network::new(
            "inline:smooth",
            vec![dense(vec![vec![1.0]], vec![0.0], Activation::Relu), dense(vec![vec![2.0]], vec![0.0], act)],
        )
        .unwrap();
        let mut model = MilpModel::new();
        let x = model.continuous(-1.0, 1.0, "x").unwrap();
        let err = encode_network(&mut model, &net, &[Expression::from(x)], &InputBox::new(vec![-1.0], vec![1.0]))
            .unwrap_err();
        assert!(matches!(err, MilpError::Unsupported(_)), "{err}");
        let msg = err.to_string();
        assert!(msg.contains("layer 1") && msg.contains(act.name()) && msg.contains("leaky ReLU"), "{msg}");
    }
}
