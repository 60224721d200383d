//! Unrolling the recurrent network of Figure 1 (configs/systems/rnn-figure1.toml) for 1 to 10
//! steps: building the MILP (bounds per step and the encoding), and building plus maximising the
//! last output `z_k`.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;
use trestle_config::{Overrides, load_system};
use trestle_ir::RBox;
use trestle_ir::num::rational_from_i64;
use trestle_milp::{Sense, SolveOptions, UnrollOptions, unroll};
use trestle_testkit::repo;

fn figure1(c: &mut Criterion) {
    let sys = load_system(&repo().join("configs/systems/rnn-figure1.toml"), &Overrides::default()).unwrap();
    let zero = Some(rational_from_i64(0));
    let start = RBox { lo: vec![zero.clone()], hi: vec![zero] };
    let opts = UnrollOptions::default();
    let mut group = c.benchmark_group("figure1-unroll");
    group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for k in 1..=10 {
        group.bench_with_input(BenchmarkId::new("build", k), &k, |b, &k| {
            b.iter(|| black_box(unroll(&sys, &start, k, &opts).unwrap().unwrap()))
        });
        group.bench_with_input(BenchmarkId::new("build+max", k), &k, |b, &k| {
            b.iter(|| {
                let u = unroll(&sys, &start, k, &opts).unwrap().unwrap();
                let z = u.states[k][0].expr.clone();
                black_box(u.model.solve(Sense::Maximise, &z, &SolveOptions::default()).unwrap())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, figure1);
criterion_main!(benches);
