//! How a proof's cost grows with the controller's width and depth and with the state's dimension:
//! the n-dimensional maze (`trestle_testkit::maze_nd`) with deterministic synthetic controllers
//! (`trestle_ir::network::synthetic_centering`: an exact pull towards the centre plus a small
//! random ReLU network of the given shape), and a 2x2048 controller whose random part is large
//! enough to refute the candidate. Plus the peer det 2x512 instance when ../shared is present.
//! Run: `cargo bench --bench scale`. Before timing, each case prints one row of the README's scale
//! table (verdict, boxes, splits, bound queries, and the time of one run by part).

use criterion::{Criterion, criterion_group, criterion_main};
use trestle_bridge::{Config, check};
use trestle_core::Budget;
use trestle_ir::System;
use trestle_ir::network::synthetic_centering;
use trestle_testkit::{load, maze_nd, peer, repo, shared_models};

fn system(dims: usize, width: usize, depth: usize, eps: f64) -> System {
    maze_nd(&synthetic_centering(dims, width, depth, eps, 7).expect("a valid shape"))
}

/// One run, printed as a Markdown table row.
fn row(name: &str, sys: &System, cfg: &Config) -> &'static str {
    let report = check(sys, cfg, &Budget::unlimited(), &|_| {}).expect("the check runs");
    let s = &report.inductive.stats;
    eprintln!(
        "| {name} | {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} |",
        report.word(),
        s.boxes,
        s.splits,
        s.bound_queries,
        s.seconds,
        s.bounds_seconds,
        s.search_seconds,
        s.smt_seconds
    );
    report.word()
}

fn scale(c: &mut Criterion) {
    let cfg = Config { threads: 1, ..Config::default() };
    let mut group = c.benchmark_group("scale");
    group.sample_size(10);
    if shared_models().is_some() {
        let det512 = peer("det", 512);
        row("peer det 2x512", &det512, &cfg);
        group.bench_function("peer det 2x512", |b| {
            b.iter(|| check(&det512, &cfg, &Budget::unlimited(), &|_| {}).unwrap())
        });
    }
    // The peer maze's candidate sits close to the centering controller's pull (its lower y edge
    // 0.55 against the centre 0.6), so a random part of weight 0.4 pushes some states out: a
    // refutation found after a split.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let model = dir.path().join("c2048.onnx");
    trestle_nn::write_onnx(&synthetic_centering(2, 2048, 2, 0.4, 7).expect("a valid shape"), &model).unwrap();
    let refuted =
        load(&repo().join("configs/systems/peer-maze-det.toml"), &[format!("controller.model={}", model.display())]);
    assert_eq!(row("peer det maze, 2x2048 centering, eps 0.4", &refuted, &cfg), "not-inductive");
    group.bench_function("2-D 2x2048 refutation", |b| {
        b.iter(|| check(&refuted, &cfg, &Budget::unlimited(), &|_| {}).unwrap())
    });
    let cases = [
        ("width", 2, 256, 2),
        ("width", 2, 1024, 2),
        ("depth", 2, 256, 4),
        ("depth", 2, 128, 6),
        ("dimension", 3, 64, 2),
        ("dimension", 4, 64, 2),
    ];
    for (axis, dims, width, depth) in cases {
        let sys = system(dims, width, depth, 0.05);
        row(&format!("{dims}-D {depth}x{width}"), &sys, &cfg);
        group.bench_function(format!("{axis}: {dims}-D {depth}x{width} proof"), |b| {
            b.iter(|| check(&sys, &cfg, &Budget::unlimited(), &|_| {}).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, scale);
criterion_main!(benches);
