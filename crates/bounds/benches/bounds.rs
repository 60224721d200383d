//! Bounds on the 2x512 maze controller: one box of width 0.01 per method, and 1,000 boxes batched.
//! Skips (prints a note) when ../shared is absent.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;
use trestle_bounds::{InputBox, Method, bound, bound_batch};
use trestle_nn::{LoadOptions, load_network};

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
