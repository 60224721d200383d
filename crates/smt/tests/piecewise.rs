//! The exact Z3 encodings of leaky ReLU and clip layers against the exact forward pass: at random
//! points (a box of width 0), Z3 proves each output `<=` and `>=` its exact value and refutes
//! it moved by one part in 2^40, with and without the phases sound bounds give; tanh and sigmoid
//! are refused, naming the layer.

mod common;

use common::{dense, maze, q};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_ir::expr::{Expr, VarRef};
use trestle_ir::network::{Activation, Layer, Network};
use trestle_ir::num::rational_from_f64;
use trestle_ir::pred::CmpOp;
use trestle_ir::{FBox, Interval, Pred, Rational, System};
use trestle_smt::{Answer, CheckError, CheckerConfig, InductiveQuery, InductivenessChecker, NetworkPhases, Z3Backend};

fn random_activation(rng: &mut ChaCha8Rng) -> Activation {
    match rng.random_range(0..6) {
        0 => Activation::LeakyRelu { alpha: 0.125 },
        1 => Activation::LeakyRelu { alpha: -0.75 },
        2 => Activation::LeakyRelu { alpha: 2.5 },
        3 => Activation::Clip { lo: -0.5, hi: 0.25 },
        4 => Activation::Clip { lo: f64::NEG_INFINITY, hi: 0.1 },
        _ => Activation::Clip { lo: -0.2, hi: f64::INFINITY },
    }
}

/// 2 -> 4 -> 3 -> 2 with random piecewise-linear hidden activations.
fn network(rng: &mut ChaCha8Rng) -> Network {
    let mut layers = Vec::new();
    for (k, (rows, cols)) in [(4, 2), (3, 4), (2, 3)].into_iter().enumerate() {
        let w: Vec<Vec<f64>> = (0..rows).map(|_| (0..cols).map(|_| rng.random_range(-1.5..1.5)).collect()).collect();
        let b = (0..rows).map(|_| rng.random_range(-0.5..0.5)).collect();
        let act = if k == 2 { Activation::Identity } else { random_activation(rng) };
        layers.push(dense(&w, b, act));
    }
    Network::new("inline:piecewise", layers).unwrap()
}

/// `x' = a0`, `y' = a1`: the successor is the network's output.
fn system(net: Network) -> System {
    let mut sys = maze(false, net);
    sys.step.branches[0].updates = vec![Expr::var(VarRef::Action(0)), Expr::var(VarRef::Action(1))];
    sys
}

/// Outward-rounded interval bounds of every layer's pre-activations at the point `x`.
fn preactivation_bounds(net: &Network, x: &[f64]) -> Vec<(Vec<f64>, Vec<f64>)> {
    let mut v: Vec<Interval> = x.iter().map(|&x| Interval::point(x)).collect();
    let mut out = Vec::new();
    for layer in &net.layers {
        let Layer::Dense(d) = layer else { panic!("dense only") };
        let z: Vec<Interval> = (0..d.weights.rows)
            .map(|r| {
                d.weights
                    .row(r)
                    .iter()
                    .zip(&v)
                    .fold(Interval::point(d.bias[r]), |acc, (&w, xi)| acc.add(&Interval::point(w).mul(xi)))
            })
            .collect();
        out.push((z.iter().map(|i| i.lo).collect(), z.iter().map(|i| i.hi).collect()));
        v = z.iter().map(|i| i.activate(&d.activation)).collect();
    }
    out
}

fn var_cmp(i: usize, op: CmpOp, c: Rational) -> Pred {
    Pred::Cmp(Expr::var(VarRef::State(i)), op, Expr::constant(c))
}

#[test]
fn z3_encodes_leaky_relu_and_clip_as_the_exact_forward_pass() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x2e3);
    let everywhere = Pred::and(vec![var_cmp(0, CmpOp::Ge, q("-10")), var_cmp(0, CmpOp::Le, q("10"))]);
    let mut checked = 0;
    for trial in 0..6 {
        let net = network(&mut rng);
        let sys = system(net.clone());
        let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
        for _ in 0..4 {
            let x = [rng.random_range(-2.0..2.0), rng.random_range(-2.0..2.0)];
            let exact = net.forward_exact(&x.map(rational_from_f64), &mut []).unwrap();
            let p = FBox::new(x.to_vec(), x.to_vec());
            // The phases sound bounds at the point give (almost every neuron decided).
            let phases = NetworkPhases::of_bounds(&net, &preactivation_bounds(&net, &x));
            for with_phases in [false, true] {
                for (i, y) in exact.iter().enumerate() {
                    let eps = Rational::new(1.into(), (1u64 << 40).into());
                    for (op, c, valid) in [
                        (CmpOp::Le, y.clone(), true),
                        (CmpOp::Ge, y.clone(), true),
                        (CmpOp::Le, y - &eps, false),
                        (CmpOp::Ge, y + &eps, false),
                    ] {
                        let target = var_cmp(i, op, c);
                        let mut query = InductiveQuery::on_box(&everywhere, &p).with_target(&target);
                        if with_phases {
                            query = query.with_phases(vec![vec![Some(phases.clone())]]);
                        }
                        let answer = z3.check_inductive_on(&query).unwrap();
                        match (&answer, valid) {
                            (Answer::Valid, true) => {}
                            (Answer::Invalid(w), false) => {
                                assert_eq!(
                                    w.actions, exact,
                                    "trial {trial}: the witness's actions are the exact outputs"
                                );
                            }
                            _ => panic!("trial {trial} at {x:?} output {i} {op:?} (phases {with_phases}): {answer:?}"),
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    assert_eq!(checked, 6 * 4 * 2 * 2 * 4);
}

#[test]
fn tanh_and_sigmoid_are_refused_naming_the_layer() {
    for act in [Activation::Tanh, Activation::Sigmoid] {
        let net = Network::new(
            "inline:smooth",
            vec![
                dense(&[vec![1.0, 0.0], vec![0.0, 1.0]], vec![0.0, 0.0], act),
                dense(&[vec![1.0, 0.0], vec![0.0, 1.0]], vec![0.0, 0.0], Activation::Identity),
            ],
        )
        .unwrap();
        let sys = system(net);
        let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
        let everywhere = var_cmp(0, CmpOp::Le, q("10"));
        let p = FBox::new(vec![0.0, 0.0], vec![0.1, 0.1]);
        match z3.check_inductive_on(&InductiveQuery::on_box(&everywhere, &p)) {
            Err(CheckError::Unsupported(why)) => {
                assert!(why.contains(act.name()) && why.contains("layer 0"), "{why}");
            }
            other => panic!("{act}: {other:?}"),
        }
    }
}
