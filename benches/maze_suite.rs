//! End-to-end: the 16 peer maze instances (paper Table 1) with the default configuration and the
//! paper's configuration, plus the project's own examples. Needs ../shared/models for the peer
//! instances (skipped without it). Run: `cargo bench --bench maze_suite`.

use criterion::{Criterion, criterion_group, criterion_main};
use trestle_bridge::{Config, check};
use trestle_core::Budget;
use trestle_ir::System;
use trestle_testkit::{PEER_SIZES, example, peer, shared_models};

fn suite(c: &mut Criterion) {
    let example = example("maze-nondet.toml");
    c.bench_function("example maze-nondet (default config)", |b| {
        b.iter(|| check(&example, &Config::default(), &Budget::unlimited(), &|_| {}).unwrap())
    });
    if shared_models().is_none() {
        return;
    }
    let systems: Vec<System> = ["det", "nondet"].iter().flat_map(|k| PEER_SIZES.map(|h| peer(k, h))).collect();
    let mut group = c.benchmark_group("peer maze suite (16 instances)");
    group.sample_size(10);
    for (name, cfg) in [("default", Config::default()), ("paper", Config::paper())] {
        group.bench_function(name, |b| {
            b.iter(|| {
                for s in &systems {
                    check(s, &cfg, &Budget::unlimited(), &|_| {}).unwrap();
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, suite);
criterion_main!(benches);
