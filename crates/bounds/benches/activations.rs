//! CROWN (and IBP) bound time per box on the ARCH-COMP tanh and sigmoid controllers against a
//! ReLU network of the same shape (the same weights with every tanh / sigmoid layer made ReLU),
//! so the cost of the S-shaped relaxations (rigorous enclosures, tangent-point bisection) is
//! measured against ReLU's closed forms on identical arithmetic. One box of width 0.02 per input
//! around 0.1. Skips (prints a note) when ../shared is absent.
//!
//! Measured (2026-11-27, shared 2-core machine under load, criterion medians; smooth / ReLU):
//!
//! | network | IBP | CROWN |
//! | --- | --- | --- |
//! | CartPole (tanh) | 16.0 / 11.3 µs | 245 / 26.9 µs |
//! | Docking (tanh) | 82.1 / 66.8 µs | 2.66 ms / 337 µs |
//! | NAV point (tanh) | 8.2 / 8.1 µs | 23.3 / 21.4 µs |
//! | Attitude 3x64 (sigmoid) | 31.5 / 17.3 µs | 988 / 88.5 µs |
//! | QUAD 3x64 (sigmoid) | 30.8 / 18.8 µs | 1.14 ms / 50.9 µs |
//!
//! CROWN on the smooth networks costs 8-22x ReLU's: every tanh / sigmoid neuron of non-zero width
//! is tightened by a backward pass (ReLU only the unstable ones), and each relaxation takes
//! rigorous enclosures and, across 0, a tangent point.
//!
//! Where the time went (`perf record` on Docking's CROWN, 2026-11-28): 54% in the backward rule
//! over general lines (`relax::backward_upper`: a 96-byte enum read and a branch per
//! coefficient), 8% in the dense rule's dot products, and about 6% in the relaxations' own
//! `tanh` / `exp` / `log` (the 40-step bisection included). The rule now reads arrays
//! (`relax/lines.rs`) and the tangent points come from safeguarded Newton (`relax/s_shaped.rs`).
//! CROWN, one box, before / after (same machine, same load, criterion medians): CartPole
//! 236 / 153 µs, Docking 2.68 / 1.73 ms, NAV point 19.2 / 15.8 µs, Attitude 603 / 536 µs, QUAD
//! 665 / 644 µs; ReLU CROWN then 18.3, 213, 13.3, 65.4 and 38.0 µs (8.4x, 8.1x, 1.2x, 8.2x and
//! 17x). What is left is the backward passes themselves: one per smooth neuron.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;
use trestle_bounds::{InputBox, Method, bound};
use trestle_ir::network::{Activation, Layer, Network};
use trestle_nn::{LoadOptions, load_network};

const MODELS: [(&str, &str); 5] = [
    ("cartpole_tanh", "CartPole/model.onnx"),
    ("docking_tanh", "Docking/model.onnx"),
    ("nav_point_tanh", "NAV/networks/nn-nav-point.onnx"),
    ("attitude_sigmoid", "Attitude-Control/attitude_control_3_64_torch.onnx"),
    ("quad_sigmoid", "QUAD/quad_controller_3_64_torch.onnx"),
];

/// The same network with tanh and sigmoid layers made ReLU.
fn as_relu(net: &Network) -> Network {
    let mut relu = net.clone();
    for layer in &mut relu.layers {
        if let Layer::Dense(d) = layer
            && matches!(d.activation, Activation::Tanh | Activation::Sigmoid)
        {
            d.activation = Activation::Relu;
        }
    }
    relu
}

fn archcomp(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/models/archcomp");
    for (name, file) in MODELS {
        let path = root.join(file);
        if !path.exists() {
            eprintln!("skipping: {} not found", path.display());
            continue;
        }
        let net = load_network(&path, &LoadOptions::default()).expect("ARCH-COMP controller loads");
        let n = net.input_dim();
        let one = InputBox::new(vec![0.09; n], vec![0.11; n]);
        let relu = as_relu(&net);
        let mut group = c.benchmark_group(format!("{name}_one_box"));
        for (label, network) in [("smooth", &net), ("relu", &relu)] {
            for method in [Method::Ibp, Method::Crown] {
                group.bench_function(format!("{label} {}", method.name()), |b| {
                    b.iter(|| bound(black_box(network), black_box(&one), &method).unwrap())
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, archcomp);
criterion_main!(benches);
