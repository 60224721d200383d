//! The big-M encodings of leaky ReLU and clip layers against the exact forward pass: with the
//! input fixed to a random point, the minimum and the maximum of every output are its exact value
//! (the encoding is the function's graph); over a box, the optimum is attained by the solver's own
//! input and bounds every grid sample; binaries: one per leaky ReLU, one per finite clip bound a
//! neuron's box crosses; tanh and sigmoid are refused by default, naming the layer, and relaxed
//! soundly on request (rows checked in exact rationals against MPFR enclosures; tighter with more
//! pieces; a relaxed network's optima bound every sample).

use good_lp::Expression;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_bounds::InputBox;
use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, Network};
use trestle_ir::num::{rational_from_f64, to_f64_nearest};
use trestle_milp::{MilpError, MilpModel, Sense, SolveOptions, SolveStatus, encode_network, relax_neuron};

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

/// The rows of the tanh / sigmoid relaxation hold at every true `(p, f(p))`: for random
/// intervals of every scale, each cut into 1 to 16 pieces, and points of the interval (its ends,
/// 0, the cuts and random ones), `f(p)` enclosed at 200 bits by MPFR, every row checked in exact
/// rationals with the binaries of the piece holding `p` (the row's f64 numbers read exactly; the
/// enclosure's both ends, since a row is linear in `y`), and `y`'s bounds containing the enclosure.
#[test]
fn smooth_relaxation_rows_hold_at_every_true_point() {
    use trestle_ir::num::Rational;
    use trestle_real::BigInterval;
    let q = |v: f64| rational_from_f64(v);
    let mut rng = ChaCha8Rng::seed_from_u64(35);
    let mut checked = 0;
    for trial in 0..240 {
        let act = if trial % 2 == 0 { Activation::Tanh } else { Activation::Sigmoid };
        let centre =
            [0.0, rng.random_range(-1.0..1.0), rng.random_range(-6.0..6.0), rng.random_range(-30.0..30.0)][trial % 4];
        let radius = [1e-7, 1e-3, 0.3, 2.0, 8.0][rng.random_range(0..5)] * rng.random_range(0.5..1.0);
        let (lo, hi) = (centre - radius, centre + radius);
        let pieces = [1, 2, 3, 5, 16][trial % 5];
        let relaxed = relax_neuron(act, lo, hi, pieces);
        let mut points = vec![lo, hi, 0.0];
        points.extend(relaxed.pieces.iter().flat_map(|&(a, b)| [a, b, 0.5 * a + 0.5 * b]));
        points.extend((0..16).map(|_| rng.random_range(lo..=hi)));
        points.retain(|p| lo <= *p && *p <= hi);
        for p in points {
            let big = BigInterval::from_f64(p, 200).unwrap();
            let f = if act == Activation::Tanh { big.tanh() } else { big.sigmoid() };
            let (Some(y_lo), Some(y_hi)) = f.to_rationals() else { panic!("{act}({p}) has finite ends") };
            assert!(
                q(relaxed.image.lo) <= y_lo && y_hi <= q(relaxed.image.hi),
                "{act}({p}): image {:?}",
                relaxed.image
            );
            let k = relaxed.pieces.iter().position(|&(a, b)| a <= p && p <= b).expect("the pieces cover the interval");
            for row in &relaxed.rows {
                let b: Rational = row.b.iter().filter(|(j, _)| *j == k).map(|(_, c)| q(*c)).sum();
                for y in [&y_lo, &y_hi] {
                    let lhs = q(row.p) * q(p) + q(row.y) * y + &b;
                    assert!(lhs <= q(row.rhs), "{act} on [{lo}, {hi}] / {pieces}, p = {p}, piece {k}: {row:?}");
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 50_000, "{checked} row checks");
}

/// The range of `y` the rows leave at `p` (in f64, the piece holding `p` chosen): the relaxation's
/// looseness there.
fn allowed_width(relaxed: &trestle_milp::smooth::SmoothRows, p: f64) -> f64 {
    let k = relaxed.pieces.iter().position(|&(a, b)| a <= p && p <= b).unwrap();
    let (mut lo, mut hi) = (relaxed.image.lo, relaxed.image.hi);
    for row in &relaxed.rows {
        let b: f64 = row.b.iter().filter(|(j, _)| *j == k).map(|(_, c)| c).sum();
        let rest = row.rhs - row.p * p - b;
        if row.y > 0.0 {
            hi = hi.min(rest / row.y);
        } else if row.y < 0.0 {
            lo = lo.max(rest / row.y);
        }
    }
    hi - lo
}

/// More pieces, tighter: on [-3, 3] tanh's relaxation leaves `y` a band whose widest point shrinks
/// as the pieces do (measured: 0.645 with the lines alone, 0.183 with 4 pieces, 0.0131 with 16),
/// within the chord-to-curve gap h^2 max|tanh''| / 8 of a piece of width h (tanh'' stays below
/// 4 / (3 sqrt 3) = 0.770: 0.0135 for h = 0.375); so is one piece of a sigmoid on one side of 0
/// (sigmoid'' stays below 1 / (6 sqrt 3) = 0.0962: 0.0121 on [0.5, 1.5], measured 0.0111).
#[test]
fn smooth_relaxation_tightens_with_pieces() {
    let widest = |pieces: usize| {
        let relaxed = relax_neuron(Activation::Tanh, -3.0, 3.0, pieces);
        (0..=600).map(|i| allowed_width(&relaxed, -3.0 + f64::from(i) * 0.01)).fold(0.0, f64::max)
    };
    let (one, four, sixteen) = (widest(1), widest(4), widest(16));
    let chord_gap = 0.375f64.powi(2) * 0.770 / 8.0;
    assert!(one > 0.5 && four < one && sixteen < four && sixteen <= chord_gap, "{one} {four} {sixteen}");
    let arc = relax_neuron(Activation::Sigmoid, 0.5, 1.5, 1);
    let w = (0..=100).map(|i| allowed_width(&arc, 0.5 + f64::from(i) * 0.01)).fold(0.0, f64::max);
    assert!(w <= 0.0962 / 8.0, "{w}");
    assert_eq!(relax_neuron(Activation::Tanh, -3.0, 3.0, 16).pieces.len(), 16, "0 is a cut of 16 equal pieces");
    assert_eq!(relax_neuron(Activation::Tanh, -3.0, 2.0, 2).pieces.len(), 3, "0 is added as a cut");
}

/// A tanh / sigmoid network relaxed in the MILP: every output's maximum and minimum bound every
/// sampled forward pass (the relaxation contains the graph), get closer to the samples' extremes
/// with more pieces, and the model records each relaxed neuron with its pieces.
#[test]
fn relaxed_networks_bound_every_sample_and_tighten() {
    use trestle_milp::{BoundOptions, Refinement, SmoothEncoding, encode_network_with};
    let mut rng = ChaCha8Rng::seed_from_u64(36);
    for (trial, act) in [Activation::Tanh, Activation::Sigmoid, Activation::Tanh].into_iter().enumerate() {
        let mut layers = Vec::new();
        for (k, w) in [2usize, 6, 5, 1].windows(2).enumerate() {
            let rows = (0..w[1]).map(|_| (0..w[0]).map(|_| rng.random_range(-2.0..2.0)).collect()).collect();
            let bias = (0..w[1]).map(|_| rng.random_range(-0.5..0.5)).collect();
            layers.push(dense(rows, bias, if k == 2 { Activation::Identity } else { act }));
        }
        let net = Network::new("inline:smooth", layers).unwrap();
        let samples: Vec<f64> = (0..=40)
            .flat_map(|i| (0..=40).map(move |j| [-1.0 + 0.05 * f64::from(i), -1.0 + 0.05 * f64::from(j)]))
            .map(|x| net.eval(&x).unwrap()[0])
            .collect();
        let (s_lo, s_hi) = samples.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &y| (a.min(y), b.max(y)));
        let mut gaps = Vec::new();
        for pieces in [1, 8] {
            let opts = BoundOptions {
                smooth: SmoothEncoding::Relax(Refinement { pieces, ..Refinement::default() }),
                ..BoundOptions::default()
            };
            let mut model = MilpModel::new();
            let (_, exprs) = inputs(&mut model, [-1.0; 2], [1.0; 2]);
            let enc = encode_network_with(&mut model, &net, &exprs, &InputBox::new(vec![-1.0; 2], vec![1.0; 2]), &opts)
                .unwrap();
            assert_eq!((enc.relaxed, model.relaxed_neurons().len()), (11, 11), "trial {trial}");
            assert!(model.relaxed_neurons().iter().all(|n| n.pieces == 1 || pieces > 1), "trial {trial}");
            let max = model.solve(Sense::Maximise, &enc.outputs[0], &SolveOptions::default()).unwrap();
            let min = model.solve(Sense::Minimise, &enc.outputs[0], &SolveOptions::default()).unwrap();
            assert!(max.status == SolveStatus::Optimal && min.status == SolveStatus::Optimal, "trial {trial}");
            let (hi, lo) = (max.bound.unwrap(), min.bound.unwrap());
            assert!(
                hi >= s_hi - 1e-9 && lo <= s_lo + 1e-9,
                "trial {trial} / {pieces}: [{lo}, {hi}] vs [{s_lo}, {s_hi}]"
            );
            gaps.push((hi - s_hi) + (s_lo - lo));
        }
        // Measured: 0.0019 -> 0.0018 (trial 1), 0.202 -> 0.082 (trial 2: looseness adds up over
        // two relaxed layers).
        assert!(gaps[1] <= gaps[0] && gaps[1] < 0.1, "trial {trial}: gaps {gaps:?}");
    }
}
