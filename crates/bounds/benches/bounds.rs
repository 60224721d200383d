//! Bounds on the 2x512 maze controller: one box of width 0.01 per method, and 1,000 boxes batched;
//! and, as the speed reference, the textbook dense CROWN below. Skips (prints a note) when
//! ../shared is absent.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;
use trestle_bounds::{InputBox, Method, bound, bound_batch};
use trestle_ir::network::{Activation, Layer, Network};
use trestle_nn::{LoadOptions, load_network};

/// A dense layer as plain rows: weights, bias, whether a ReLU follows.
struct Dense {
    w: Vec<Vec<f64>>,
    b: Vec<f64>,
    relu: bool,
}

fn dense_layers(net: &Network) -> Vec<Dense> {
    net.layers
        .iter()
        .map(|l| match l {
            Layer::Dense(d) => Dense {
                w: (0..d.weights.rows).map(|r| d.weights.row(r).to_vec()).collect(),
                b: d.bias.clone(),
                relu: d.activation == Activation::Relu,
            },
            Layer::Recurrent(_) => panic!("the reference handles dense layers only"),
        })
        .collect()
}

/// The textbook CROWN we measure against: every layer's pre-activations bounded by a full
/// back-substitution through dense matrices (no special case for stable neurons, no reuse of
/// sparsity, plain f64 without outward rounding: a timing reference, not a sound bound).
/// Relaxation as ours: lower slope 1 where `u > -l` else 0, upper chord.
fn textbook_crown(layers: &[Dense], lo: &[f64], hi: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let mut pre: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
    for k in 0..layers.len() {
        let side = |upper: bool| -> Vec<f64> {
            let mut lambda = layers[k].w.clone();
            let mut konst = layers[k].b.clone();
            for j in (0..k).rev() {
                let (l, u) = &pre[j];
                let below = &layers[j];
                let mut next = vec![vec![0.0; below.w[0].len()]; lambda.len()];
                for (r, row) in lambda.iter().enumerate() {
                    for (i, &c) in row.iter().enumerate() {
                        let (slope, intercept) = if !below.relu {
                            (1.0, 0.0)
                        } else if (c >= 0.0) != upper {
                            (if u[i] > -l[i] { 1.0 } else { 0.0 }, 0.0)
                        } else if l[i] >= 0.0 {
                            (1.0, 0.0)
                        } else if u[i] <= 0.0 {
                            (0.0, 0.0)
                        } else {
                            let s = u[i] / (u[i] - l[i]);
                            (s, -s * l[i])
                        };
                        let a = c * slope;
                        konst[r] += c * intercept + a * below.b[i];
                        for (n, &w) in next[r].iter_mut().zip(&below.w[i]) {
                            *n += a * w;
                        }
                    }
                }
                lambda = next;
            }
            lambda
                .iter()
                .zip(&konst)
                .map(|(row, &c0)| {
                    row.iter().enumerate().fold(c0, |acc, (i, &a)| {
                        let (x, y) = (a * lo[i], a * hi[i]);
                        acc + if upper { x.max(y) } else { x.min(y) }
                    })
                })
                .collect()
        };
        pre.push((side(false), side(true)));
    }
    pre.pop().expect("a layer")
}

fn maze(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/models/maze/det/maze_2d_512x512.onnx");
    if !path.exists() {
        eprintln!("skipping: {} not found", path.display());
        return;
    }
    let net = load_network(&path, &LoadOptions::default()).expect("maze controller loads");
    let one = InputBox::new(vec![0.5, 0.6], vec![0.51, 0.61]);
    let mut group = c.benchmark_group("maze_512x512_one_box");
    for name in ["ibp", "crown", "alpha-crown", "forward"] {
        let method: Method = name.parse().unwrap();
        group.bench_function(name, |b| b.iter(|| bound(black_box(&net), black_box(&one), &method).unwrap()));
    }
    let layers = dense_layers(&net);
    let (ref_lo, ref_hi) = textbook_crown(&layers, &one.lo, &one.hi);
    let ours = bound(&net, &one, &Method::Crown).unwrap();
    // Same relaxation: the reference agrees with ours up to our outward rounding.
    for i in 0..ref_lo.len() {
        assert!((ours.lo[i] - ref_lo[i]).abs() < 1e-9 && (ours.hi[i] - ref_hi[i]).abs() < 1e-9, "output {i}");
    }
    group.bench_function("textbook dense crown (reference)", |b| {
        b.iter(|| textbook_crown(black_box(&layers), black_box(&one.lo), black_box(&one.hi)))
    });
    group.finish();
    // 1,000 boxes of width 0.01 tiling [0.25, 0.95] x [0.55, 0.95] (the maze's safe set).
    let boxes: Vec<InputBox> = (0..1000)
        .map(|k| {
            let (x, y) = (0.25 + 0.7 * (k % 40) as f64 / 40.0, 0.55 + 0.4 * (k / 40) as f64 / 25.0);
            InputBox::new(vec![x, y], vec![x + 0.01, y + 0.01])
        })
        .collect();
    let mut group = c.benchmark_group("maze_512x512_batch_1000");
    group.sample_size(10);
    for name in ["crown", "alpha-crown"] {
        let method: Method = name.parse().unwrap();
        group.bench_function(name, |b| b.iter(|| bound_batch(black_box(&net), black_box(&boxes), &method)));
    }
    group.finish();
}

criterion_group!(benches, maze);
criterion_main!(benches);
