//! The exact forward pass (what every counterexample replay runs) on deterministic dense ReLU
//! networks 2 -> w -> w -> 2 with trained-like weights (full 53-bit mantissas, magnitudes near
//! 1/sqrt(w)), at inputs with decimal denominators as users write them. The term-by-term
//! rational sum it replaced is measured beside it on the smaller widths.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use trestle_ir::Rational;
use trestle_ir::network::{Activation, Layer, Network, synthetic_dense};
use trestle_ir::num::rational_from_f64;

fn network(width: usize) -> Network {
    synthetic_dense(&[2, width, width, 2], width as u64)
}

/// The replaced evaluation: one rational multiply-add (with its gcd) per weight.
fn term_by_term(net: &Network, input: &[Rational]) -> Vec<Rational> {
    let mut x = input.to_vec();
    for layer in &net.layers {
        let Layer::Dense(d) = layer else { unreachable!() };
        x = (0..d.weights.rows)
            .map(|i| {
                let mut acc = rational_from_f64(d.bias[i]);
                for (w, xj) in d.weights.row(i).iter().zip(&x) {
                    acc += rational_from_f64(*w) * xj;
                }
                if d.activation == Activation::Relu && acc < Rational::from_integer(0.into()) {
                    Rational::from_integer(0.into())
                } else {
                    acc
                }
            })
            .collect();
    }
    x
}

fn bench(c: &mut Criterion) {
    let input = vec![Rational::new(3.into(), 10.into()), Rational::new(13.into(), 20.into())];
    let mut g = c.benchmark_group("exact_forward");
    g.sample_size(10);
    for width in [256, 1024, 2048] {
        let net = network(width);
        g.bench_function(format!("common-denominator/2x{width}"), |b| {
            b.iter(|| net.forward_exact(black_box(&input), &mut []).unwrap())
        });
        if width <= 256 {
            assert_eq!(net.forward_exact(&input, &mut []).unwrap(), term_by_term(&net, &input));
            g.bench_function(format!("term-by-term/2x{width}"), |b| b.iter(|| term_by_term(&net, black_box(&input))));
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
