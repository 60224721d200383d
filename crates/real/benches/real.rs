//! ns per call of each interval function: f64 (`interval::*`) and `BigInterval` at 256 bits, on
//! narrow intervals (the width of a CROWN pre-activation bound) spread over each function's range.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use trestle_real::{BigInterval, interval};

/// 64 narrow intervals `[x, x + 1e-3]` spread over `[from, to]`.
fn boxes(from: f64, to: f64) -> Vec<(f64, f64)> {
    (0..64).map(|i| from + (to - from) * i as f64 / 63.0).map(|x| (x, x + 1e-3)).collect()
}

type F64Fn = fn(f64, f64) -> f64;

fn f64_functions(c: &mut Criterion) {
    let cases: Vec<(&str, F64Fn, (f64, f64))> = vec![
        ("exp", |a, b| interval::exp(a, b).hi, (-20.0, 20.0)),
        ("log", |a, b| interval::log(a, b).map_or(0.0, |e| e.hi), (0.01, 100.0)),
        ("sqrt", |a, b| interval::sqrt(a, b).map_or(0.0, |e| e.hi), (0.0, 100.0)),
        ("sin", |a, b| interval::sin(a, b).hi, (-10.0, 10.0)),
        ("cos", |a, b| interval::cos(a, b).hi, (-10.0, 10.0)),
        ("tan", |a, b| interval::tan(a, b).map_or(0.0, |e| e.hi), (-1.5, 1.5)),
        ("tanh", |a, b| interval::tanh(a, b).hi, (-5.0, 5.0)),
        ("sigmoid", |a, b| interval::sigmoid(a, b).hi, (-10.0, 10.0)),
        ("atan", |a, b| interval::atan(a, b).hi, (-10.0, 10.0)),
        ("powi3", |a, b| interval::powi(a, b, 3).map_or(0.0, |e| e.hi), (-10.0, 10.0)),
        ("tanh_derivative", |a, b| interval::tanh_derivative(a, b).hi, (-5.0, 5.0)),
        ("sigmoid_derivative", |a, b| interval::sigmoid_derivative(a, b).hi, (-10.0, 10.0)),
    ];
    for (name, f, (from, to)) in cases {
        let xs = boxes(from, to);
        c.bench_function(&format!("f64/{name}"), |b| {
            b.iter(|| {
                let mut s = 0.0;
                for &(lo, hi) in &xs {
                    s += f(black_box(lo), black_box(hi));
                }
                s
            })
        });
    }
}

type BigFn = fn(&BigInterval) -> f64;

fn big_functions(c: &mut Criterion) {
    let cases: Vec<(&str, BigFn, (f64, f64))> = vec![
        ("exp", |x| x.exp().hi_f64(), (-20.0, 20.0)),
        ("log", |x| x.log().map_or(0.0, |e| e.hi_f64()), (0.01, 100.0)),
        ("sqrt", |x| x.sqrt().map_or(0.0, |e| e.hi_f64()), (0.0, 100.0)),
        ("sin", |x| x.sin().hi_f64(), (-10.0, 10.0)),
        ("cos", |x| x.cos().hi_f64(), (-10.0, 10.0)),
        ("tan", |x| x.tan().map_or(0.0, |e| e.hi_f64()), (-1.5, 1.5)),
        ("tanh", |x| x.tanh().hi_f64(), (-5.0, 5.0)),
        ("sigmoid", |x| x.sigmoid().hi_f64(), (-10.0, 10.0)),
        ("atan", |x| x.atan().hi_f64(), (-10.0, 10.0)),
        ("powi3", |x| x.powi(3).map_or(0.0, |e| e.hi_f64()), (-10.0, 10.0)),
        ("mul", |x| x.mul(x).hi_f64(), (-10.0, 10.0)),
    ];
    for (name, f, (from, to)) in cases {
        let xs: Vec<BigInterval> =
            boxes(from, to).into_iter().map(|(lo, hi)| BigInterval::from_f64_ends(lo, hi, 256).unwrap()).collect();
        c.bench_function(&format!("big256/{name}"), |b| {
            b.iter(|| {
                let mut s = 0.0;
                for x in &xs {
                    s += f(black_box(x));
                }
                s
            })
        });
    }
}

criterion_group!(benches, f64_functions, big_functions);
criterion_main!(benches);
