//! Real-model smoke test on the 2x512 maze controller (skipped when ../shared is absent, failing
//! under CI=true).

mod common;

use common::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use trestle_bounds::{InputBox, Method, bound};
use trestle_nn::{LoadOptions, load_network};

#[test]
fn maze_controller_bounds_are_sound_and_ordered() {
    let Some(path) = shared_model("models/maze/det/maze_2d_512x512.nnet") else { return };
    let net = load_network(&path, &LoadOptions::default()).unwrap();
    assert_eq!((net.input_dim(), net.output_dim()), (2, 2));
    let onnx = shared_model("models/maze/det/maze_2d_512x512.onnx")
        .map(|p| load_network(&p, &LoadOptions::default()).unwrap());
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for (lo, width) in [([0.5, 0.6], 0.01), ([0.3, 0.6], 0.1), ([0.25, 0.55], 0.7)] {
        let b = InputBox::new(lo.to_vec(), lo.iter().map(|v| v + width).collect());
        let results: Vec<_> = METHODS.iter().map(|m| bound(&net, &b, &m.parse::<Method>().unwrap()).unwrap()).collect();
        for point in sample_points(&mut rng, &b, 4) {
            let y = exact_output(&net, &point);
            for (m, r) in METHODS.iter().zip(&results) {
                assert_contains(r, &exact_vec(&point), &y, &format!("maze {m} width {width}"));
            }
        }
        for i in 0..2 {
            let w = |k: usize| results[k].hi[i] - results[k].lo[i];
            assert!(
                w(2) <= w(1) * (1.0 + 1e-9) && w(1) <= w(0) * (1.0 + 1e-9),
                "width {width}: {:?}",
                (w(0), w(1), w(2))
            );
            eprintln!(
                "box width {width}, output {i}: ibp {:.3e} crown {:.3e} alpha {:.3e} forward {:.3e}",
                w(0),
                w(1),
                w(2),
                w(3)
            );
        }
        if let Some(onnx) = &onnx {
            // The two files hold the same network; CROWN bounds of both contain the same outputs.
            let other = bound(onnx, &b, &Method::Crown).unwrap();
            for i in 0..2 {
                assert!(other.lo[i] <= results[1].hi[i] && results[1].lo[i] <= other.hi[i]);
            }
        }
    }
}
