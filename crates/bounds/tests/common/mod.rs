//! Shared helpers of the integration tests: random networks and boxes, exact evaluation, and the
//! exact check of a point against returned bounds.
#![allow(dead_code)] // each test binary uses a different subset

use num_traits::Zero;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use trestle_bounds::{InputBox, OutputBounds};
use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, Network, RecurrentLayer};
use trestle_ir::num::{Rational, rational_from_f64};

pub const METHODS: [&str; 4] = ["ibp", "crown", "alpha-crown", "forward"];

/// A weight of mixed magnitude: exact zeros, small, ordinary and large values, and short dyadics.
pub fn weight(rng: &mut ChaCha8Rng) -> f64 {
    match rng.random_range(0..10) {
        0 | 1 => 0.0,
        2 => rng.random_range(-1e-3..1e-3),
        3 => rng.random_range(-20.0..20.0),
        4 => rng.random_range(-8..=8) as f64 * 0.125,
        _ => rng.random_range(-1.0..1.0),
    }
}

fn matrix(rng: &mut ChaCha8Rng, rows: usize, cols: usize) -> Matrix {
    Matrix::new(rows, cols, (0..rows * cols).map(|_| weight(rng)).collect())
}

/// A ReLU network with the given layer sizes (input first); the last layer is identity.
pub fn network(rng: &mut ChaCha8Rng, sizes: &[usize]) -> Network {
    let layers = sizes
        .windows(2)
        .enumerate()
        .map(|(i, w)| {
            Layer::Dense(DenseLayer {
                weights: matrix(rng, w[1], w[0]),
                bias: (0..w[1]).map(|_| weight(rng) * 0.5).collect(),
                activation: if i + 2 == sizes.len() { Activation::Identity } else { Activation::Relu },
            })
        })
        .collect();
    Network::new("inline:random", layers).unwrap()
}

/// Random sizes: 1-8 inputs, 1-4 layers of width 1-16, 1-4 outputs.
pub fn random_sizes(rng: &mut ChaCha8Rng) -> Vec<usize> {
    let depth = rng.random_range(1..=4);
    let mut sizes = vec![rng.random_range(1..=8)];
    sizes.extend((1..depth).map(|_| rng.random_range(1..=16)));
    sizes.push(rng.random_range(1..=4));
    sizes
}

/// An Elman network: dense ReLU, recurrent ReLU, dense identity output (`hidden` recurrent units).
pub fn recurrent_network(rng: &mut ChaCha8Rng, n_in: usize, width: usize, hidden: usize, n_out: usize) -> Network {
    let layers = vec![
        Layer::Dense(DenseLayer {
            weights: matrix(rng, width, n_in),
            bias: vec![0.1; width],
            activation: Activation::Relu,
        }),
        Layer::Recurrent(RecurrentLayer {
            input_weights: matrix(rng, hidden, width),
            recurrent_weights: Matrix::new(hidden, hidden, (0..hidden * hidden).map(|_| weight(rng) * 0.5).collect()),
            bias: (0..hidden).map(|_| weight(rng) * 0.5).collect(),
            activation: Activation::Relu,
        }),
        Layer::Dense(DenseLayer {
            weights: matrix(rng, n_out, hidden),
            bias: vec![0.0; n_out],
            activation: Activation::Identity,
        }),
    ];
    Network::new("inline:rnn", layers).unwrap()
}

/// A box around a random centre; some dimensions degenerate (`lo == hi`).
pub fn random_box(rng: &mut ChaCha8Rng, n: usize) -> InputBox {
    let mut lo = Vec::with_capacity(n);
    let mut hi = Vec::with_capacity(n);
    for _ in 0..n {
        let centre = rng.random_range(-2.0..2.0);
        let radius = match rng.random_range(0..6) {
            0 => 0.0,
            1 => rng.random_range(0.0..1e-3),
            _ => rng.random_range(0.0..1.5),
        };
        lo.push(centre - radius);
        hi.push(centre + radius);
    }
    InputBox { lo, hi }
}

/// All corners (when at most 8 dimensions) and `random` interior points, the box ends exact.
pub fn sample_points(rng: &mut ChaCha8Rng, b: &InputBox, random: usize) -> Vec<Vec<f64>> {
    let n = b.lo.len();
    let mut points = Vec::new();
    if n <= 8 {
        for mask in 0..(1usize << n) {
            points.push((0..n).map(|k| if mask >> k & 1 == 1 { b.hi[k] } else { b.lo[k] }).collect());
        }
    }
    for _ in 0..random {
        points.push(
            (0..n).map(|k| if b.lo[k] == b.hi[k] { b.lo[k] } else { rng.random_range(b.lo[k]..=b.hi[k]) }).collect(),
        );
    }
    points
}

pub fn exact_vec(x: &[f64]) -> Vec<Rational> {
    x.iter().map(|&v| rational_from_f64(v)).collect()
}

/// The network output at `x`, exactly.
pub fn exact_output(net: &Network, x: &[f64]) -> Vec<Rational> {
    net.forward_exact(&exact_vec(x), &mut net.initial_hidden_exact()).unwrap()
}

/// `a . x + c` exactly.
pub fn exact_affine(a: &[f64], c: f64, x: &[Rational]) -> Rational {
    a.iter().zip(x).fold(rational_from_f64(c), |acc, (ai, xi)| {
        if *ai == 0.0 || xi.is_zero() { acc } else { acc + rational_from_f64(*ai) * xi }
    })
}

/// Asserts that the exact output `y` at the exact input `x` lies in the box and between the linear
/// bounds.
pub fn assert_contains(bounds: &OutputBounds, x: &[Rational], y: &[Rational], context: &str) {
    for (i, yi) in y.iter().enumerate() {
        assert!(
            rational_from_f64(bounds.lo[i]) <= *yi && *yi <= rational_from_f64(bounds.hi[i]),
            "{context}: output {i} = {} outside [{}, {}]",
            trestle_ir::num::to_f64_nearest(yi),
            bounds.lo[i],
            bounds.hi[i]
        );
        if let Some(linear) = &bounds.linear {
            let lower = exact_affine(linear.lower.a.row(i), linear.lower.c[i], x);
            let upper = exact_affine(linear.upper.a.row(i), linear.upper.c[i], x);
            assert!(lower <= *yi, "{context}: output {i} below its linear lower bound");
            assert!(*yi <= upper, "{context}: output {i} above its linear upper bound");
        }
    }
}

/// Path of a shared model, or `None` (skipping) when `../shared` is absent; under `CI=true` a
/// missing model is a failure.
pub fn shared_model(relative: &str) -> Option<std::path::PathBuf> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared").join(relative);
    if path.exists() {
        return Some(path);
    }
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{} is missing under CI", path.display());
    eprintln!("skipping: {} not found", path.display());
    None
}
