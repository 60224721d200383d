//! The matrix product behind training, at the shapes of a 2x1024 controller's big layer.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use trestle_train::gemm::{MatRef, gemm_acc};

fn gemm(c: &mut Criterion) {
    let (batch, width) = (64, 1024);
    let x: Vec<f32> = (0..batch * width).map(|i| (i % 97) as f32 / 97.0 - 0.5).collect();
    let w: Vec<f32> = (0..width * width).map(|i| (i % 89) as f32 / 89.0 - 0.5).collect();
    let mut group = c.benchmark_group("gemm_64x1024x1024");
    group.bench_function("forward x.w^T", |b| {
        b.iter(|| {
            let mut out = vec![0.0f32; batch * width];
            gemm_acc(MatRef::new(&x, batch, width), MatRef::new(&w, width, width).t(), &mut out);
            black_box(out)
        })
    });
    group.bench_function("weight gradient d^T.x", |b| {
        b.iter(|| {
            let mut out = vec![0.0f32; width * width];
            gemm_acc(MatRef::new(&x, batch, width).t(), MatRef::new(&x, batch, width), &mut out);
            black_box(out)
        })
    });
    group.finish();
}

criterion_group!(benches, gemm);
criterion_main!(benches);
