//! End-to-end: the 16 peer maze instances (paper Table 1) with the default configuration and the
//! paper's configuration, plus the project's own examples. Needs ../shared/models for the peer
//! instances (skipped without it). Run: `cargo bench --bench maze_suite`.

use criterion::{Criterion, criterion_group, criterion_main};
use std::path::{Path, PathBuf};
use trestle_bridge::{Config, check};
use trestle_config::{Overrides, load_system};
use trestle_ir::System;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn peer(kind: &str, h: usize) -> System {
    let model = repo().join(format!("../shared/models/maze/{kind}/maze_2d_{h}x{h}.onnx"));
    let set = Overrides::parse(&[format!("controller.model={}", model.display())]).unwrap();
    load_system(&repo().join(format!("configs/systems/peer-maze-{kind}.toml")), &set).unwrap()
}

fn suite(c: &mut Criterion) {
    let example = load_system(&repo().join("examples/maze-nondet.toml"), &Overrides::default()).unwrap();
    c.bench_function("example maze-nondet (default config)", |b| {
        b.iter(|| check(&example, &Config::default(), &|_| {}).unwrap())
    });
    if !Path::new(&repo().join("../shared/models")).is_dir() {
        eprintln!("../shared/models absent: peer suite skipped");
        return;
    }
    let systems: Vec<System> =
        ["det", "nondet"].iter().flat_map(|k| [32, 40, 48, 56, 64, 128, 256, 512].map(|h| peer(k, h))).collect();
    let mut group = c.benchmark_group("peer maze suite (16 instances)");
    group.sample_size(10);
    for (name, cfg) in [("default", Config::default()), ("paper", Config::paper())] {
        group.bench_function(name, |b| {
            b.iter(|| {
                for s in &systems {
                    check(s, &cfg, &|_| {}).unwrap();
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, suite);
criterion_main!(benches);
