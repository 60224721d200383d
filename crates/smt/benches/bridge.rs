//! Median time of one bridge query on maze boxes: Z3 alone and the fast path alone.
//!
//! The boxes tile the invariant `[0.25,0.95]x[0.55,0.95]` (width 0.05); psi is a box around the
//! centring controller's outputs (`a0 = 0.5 - x`, `a1 = 0.75 - y`) or the matching linear bounds.
//! Besides criterion's own report, a plain median over all boxes is printed per configuration.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::{Duration, Instant};
use trestle_ir::linear::AffineMap;
use trestle_ir::network::Matrix;
use trestle_ir::{FBox, Pred};
use trestle_smt::{BridgeQuery, CheckerConfig, EnvChecker, FastPath, LinearPost, Postcondition, Target, Z3Backend};

#[path = "../tests/common/mod.rs"]
mod common;

/// The tiles and, per tile, a box psi and a linear psi around `a = (0.5 - x, 0.75 - y)`.
fn queries() -> Vec<(FBox, Postcondition, Postcondition)> {
    let mut out = Vec::new();
    for i in 0..14 {
        for j in 0..8 {
            let (x0, y0) = (0.25 + 0.05 * i as f64, 0.55 + 0.05 * j as f64);
            let p = FBox::new(vec![x0, y0], vec![x0 + 0.05, y0 + 0.05]);
            let (e, m) = (0.02, Matrix::from_rows(&[vec![-1.0, 0.0], vec![0.0, -1.0]]));
            let hull = FBox::new(vec![0.5 - x0 - 0.05 - e, 0.75 - y0 - 0.05 - e], vec![0.5 - x0 + e, 0.75 - y0 + e]);
            let lin = Postcondition::Linear(LinearPost {
                lower: AffineMap { a: m.clone(), c: vec![0.5 - e, 0.75 - e] },
                upper: AffineMap { a: m, c: vec![0.5 + e, 0.75 + e] },
                bounds: hull.clone(),
            });
            out.push((p, Postcondition::Box(hull), lin));
        }
    }
    out
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn run(
    checker: &mut dyn EnvChecker,
    qs: &[(FBox, Postcondition, Postcondition)],
    linear: bool,
    inv: &Pred,
) -> Vec<Duration> {
    qs.iter()
        .map(|(p, b, l)| {
            let post = if linear { l } else { b };
            let start = Instant::now();
            black_box(checker.check_bridge(&BridgeQuery::new(p, post, Target::StaysIn(inv))).unwrap());
            start.elapsed()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let qs = queries();
    let inv = common::pred(common::INV);
    for nondet in [false, true] {
        let sys = common::maze(nondet, common::centring_net());
        let tag = if nondet { "nondet" } else { "det" };
        let mut z3 = Z3Backend::new(&sys, CheckerConfig::default()).unwrap();
        let mut fast = FastPath::new(&sys, CheckerConfig::default()).unwrap();
        for linear in [false, true] {
            let psi = if linear { "linear" } else { "box" };
            let z = median(run(&mut z3, &qs, linear, &inv));
            let f = median(run(&mut fast, &qs, linear, &inv));
            println!("median bridge query, {tag} maze, {psi} psi, {} boxes: z3 {z:?}, fast path {f:?}", qs.len());
            let mut group = c.benchmark_group(format!("bridge/{tag}/{psi}"));
            group.sample_size(10).measurement_time(Duration::from_secs(3));
            group.bench_function("z3", |b| b.iter(|| run(&mut z3, &qs[..16], linear, &inv)));
            group.bench_function("fast", |b| b.iter(|| run(&mut fast, &qs[..16], linear, &inv)));
            group.finish();
        }
        let s = fast.system().name.clone();
        black_box(s);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
