//! Exact output ranges of small two-input networks, by enumerating activation patterns: on each
//! pattern's region (a polygon: the box cut by one half-plane per neuron) the network is affine, so
//! its extremes over the box are attained at vertices of those polygons, which are intersections of
//! two constraint lines satisfying every constraint. Everything in exact rational arithmetic.

mod common;

use common::*;
use num_traits::{Signed, Zero};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use trestle_bounds::{AlphaConfig, InputBox, Method, bound};
use trestle_ir::network::{Layer, Network};
use trestle_ir::num::{Rational, rational_from_f64, to_f64_nearest};

/// `a . x + c` over the two inputs.
#[derive(Clone)]
struct Affine2 {
    a: [Rational; 2],
    c: Rational,
}

impl Affine2 {
    fn at(&self, x: &[Rational; 2]) -> Rational {
        &self.a[0] * &x[0] + &self.a[1] * &x[1] + &self.c
    }
    fn scale(&self, s: &Rational) -> Affine2 {
        Affine2 { a: [&self.a[0] * s, &self.a[1] * s], c: &self.c * s }
    }
    fn add(&self, o: &Affine2) -> Affine2 {
        Affine2 { a: [&self.a[0] + &o.a[0], &self.a[1] + &o.a[1]], c: &self.c + &o.c }
    }
    fn constant(c: Rational) -> Affine2 {
        Affine2 { a: [Rational::zero(), Rational::zero()], c }
    }
}

/// Every vertex of every activation region of `net` (ReLU hidden layers, identity output) on `b`.
fn region_vertices(net: &Network, b: &InputBox) -> Vec<[Rational; 2]> {
    let q = rational_from_f64;
    let neurons: usize = net.layers[..net.layers.len() - 1].iter().map(Layer::output_dim).sum();
    let mut vertices = Vec::new();
    for pattern in 0u32..(1 << neurons) {
        // Constraints g(x) >= 0: the box, then each neuron's sign.
        let mut constraints: Vec<Affine2> = (0..2)
            .flat_map(|k| {
                let mut e = [Rational::zero(), Rational::zero()];
                e[k] = Rational::from_integer(1.into());
                let up = Affine2 { a: e.clone(), c: -q(b.lo[k]) };
                let down = Affine2 { a: [-&e[0], -&e[1]], c: q(b.hi[k]) };
                [up, down]
            })
            .collect();
        let mut values = vec![
            Affine2 { a: [Rational::from_integer(1.into()), Rational::zero()], c: Rational::zero() },
            Affine2 { a: [Rational::zero(), Rational::from_integer(1.into())], c: Rational::zero() },
        ];
        let mut bit = 0;
        for layer in &net.layers[..net.layers.len() - 1] {
            let Layer::Dense(d) = layer else { unreachable!() };
            let mut next = Vec::new();
            for r in 0..d.weights.rows {
                let pre = (0..d.weights.cols)
                    .fold(Affine2::constant(q(d.bias[r])), |acc, j| acc.add(&values[j].scale(&q(d.weights.get(r, j)))));
                let active = pattern >> bit & 1 == 1;
                bit += 1;
                constraints.push(if active { pre.clone() } else { pre.scale(&Rational::from_integer((-1).into())) });
                next.push(if active { pre } else { Affine2::constant(Rational::zero()) });
            }
            values = next;
        }
        if constraints.iter().any(|g| g.a[0].is_zero() && g.a[1].is_zero() && g.c.is_negative()) {
            continue;
        }
        for i in 0..constraints.len() {
            for j in i + 1..constraints.len() {
                let (g, h) = (&constraints[i], &constraints[j]);
                let det = &g.a[0] * &h.a[1] - &g.a[1] * &h.a[0];
                if det.is_zero() {
                    continue;
                }
                // g.a x = -g.c, h.a x = -h.c by Cramer's rule.
                let x0 = (-&g.c * &h.a[1] + &h.c * &g.a[1]) / &det;
                let x1 = (-&h.c * &g.a[0] + &g.c * &h.a[0]) / &det;
                let x = [x0, x1];
                if constraints.iter().all(|c| !c.at(&x).is_negative()) {
                    vertices.push(x);
                }
            }
        }
    }
    vertices
}

/// Output `i` of `a` lies inside that of `b`, up to the rounding slack (1e-9 relative) that interval
/// arithmetic from different (tighter) intermediate bounds may add.
fn inside(a: &trestle_bounds::OutputBounds, b: &trestle_bounds::OutputBounds, i: usize) -> bool {
    let slack = 1e-9 * b.lo[i].abs().max(b.hi[i].abs()).max(1.0);
    a.lo[i] >= b.lo[i] - slack && a.hi[i] <= b.hi[i] + slack
}

#[test]
fn bounds_contain_the_exact_range_and_are_ordered() {
    let mut worst_crown_gap: f64 = 0.0;
    for seed in 0..24u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(1000 + seed);
        let sizes = [2, rng.random_range(3..=4), rng.random_range(3..=4), rng.random_range(1..=2)];
        let net = network(&mut rng, &sizes);
        let b = random_box(&mut rng, 2);
        let vertices = region_vertices(&net, &b);
        assert!(!vertices.is_empty());
        let outputs: Vec<Vec<Rational>> =
            vertices.iter().map(|x| net.forward_exact(x, &mut net.initial_hidden_exact()).unwrap()).collect();
        let results: Vec<_> = ["ibp", "crown", "alpha-crown", "forward"]
            .iter()
            .map(|m| bound(&net, &b, &m.parse::<Method>().unwrap()).unwrap())
            .collect();
        let alpha = bound(&net, &b, &Method::AlphaCrown(AlphaConfig { iterations: 50, step_size: 0.5 })).unwrap();
        for i in 0..sizes[3] {
            let exact_lo = outputs.iter().map(|y| y[i].clone()).min().unwrap();
            let exact_hi = outputs.iter().map(|y| y[i].clone()).max().unwrap();
            for (method, r) in ["ibp", "crown", "alpha-crown", "forward"].iter().zip(results.iter().chain([&alpha])) {
                assert!(
                    rational_from_f64(r.lo[i]) <= exact_lo && exact_hi <= rational_from_f64(r.hi[i]),
                    "seed {seed} {method}"
                );
                if let Some(l) = &r.linear {
                    // The concretised linear bounds contain the exact range too.
                    assert!(rational_from_f64(l.lower.min_over(i, &b.lo, &b.hi)) <= exact_lo, "seed {seed} {method}");
                    assert!(exact_hi <= rational_from_f64(l.upper.max_over(i, &b.lo, &b.hi)), "seed {seed} {method}");
                }
            }
            let [ibp, crown, alpha20, forward] = &results[..] else { unreachable!() };
            assert!(inside(crown, ibp, i), "seed {seed}: CROWN box inside IBP");
            assert!(inside(forward, ibp, i), "seed {seed}: forward box inside IBP");
            assert!(inside(alpha20, crown, i), "seed {seed}: alpha box inside CROWN");
            let width = to_f64_nearest(&(&exact_hi - &exact_lo));
            worst_crown_gap = worst_crown_gap.max((crown.hi[i] - crown.lo[i]) / width.max(1e-9));
        }
    }
    eprintln!("worst CROWN width / exact width: {worst_crown_gap}");
}

#[test]
fn vertex_enumeration_finds_the_known_range() {
    // y = relu(x1 + x2 + 0.5) - relu(x1 - x2) on [-1, 1]^2 has range [-1.5, 2.5].
    let net = Network::new(
        "inline:2-2-1",
        vec![
            Layer::Dense(trestle_ir::network::DenseLayer {
                weights: trestle_ir::network::Matrix::from_rows(&[vec![1.0, 1.0], vec![1.0, -1.0]]),
                bias: vec![0.5, 0.0],
                activation: trestle_ir::network::Activation::Relu,
            }),
            Layer::Dense(trestle_ir::network::DenseLayer {
                weights: trestle_ir::network::Matrix::from_rows(&[vec![1.0, -1.0]]),
                bias: vec![0.0],
                activation: trestle_ir::network::Activation::Identity,
            }),
        ],
    )
    .unwrap();
    let b = InputBox::new(vec![-1.0, -1.0], vec![1.0, 1.0]);
    let ys: Vec<Rational> =
        region_vertices(&net, &b).iter().map(|x| net.forward_exact(x, &mut []).unwrap()[0].clone()).collect();
    assert_eq!(ys.iter().min().unwrap(), &rational_from_f64(-1.5));
    assert_eq!(ys.iter().max().unwrap(), &rational_from_f64(2.5));
}
