//! Writes `configs/systems/networks/cartpole-relu.onnx`, the controller of
//! `configs/systems/cartpole-relu.toml`: a 4 -> 16 -> 16 -> 1 ReLU network trained by
//! `trestle-train` (deterministic: the same bits on every machine) to imitate a saturated linear
//! law on the cart-pole of that file (Euler step h = 0.05, cart acceleration `f` as the input):
//!
//!   x' = x + h v,  v' = v + h f,  th' = th + h w,  w' = w + h (9.8 sin th - f cos th).
//!
//! The law is `f = clamp(K . (x, v, th, w), -10, 10)` with the gains of the discrete LQR of the
//! linearisation at the upright rest (Q = diag(1, 1, 10, 1), R = 1), rounded to three digits. A test
//! (`tests/shipped_cartpole.rs`) checks that the shipped file is this program's output byte for
//! byte.
//!
//!   cargo run --release -p trestle-train --example cartpole_controller -- configs/systems/networks/cartpole-relu.onnx

use std::path::Path;
use std::process::ExitCode;
use trestle_ir::network::Network;
use trestle_train::{Architecture, Dataset, Optimizer, TrainConfig, train};

/// The imitated law's gains on (x, v, th, w).
pub const GAINS: [f64; 4] = [0.826, 2.055, 30.32, 9.691];
/// The law's saturation.
pub const LIMIT: f64 = 10.0;

/// The saturated linear law the network imitates.
pub fn law(s: [f64; 4]) -> f64 {
    let u: f64 = GAINS.iter().zip(s).map(|(k, x)| k * x).sum();
    u.clamp(-LIMIT, LIMIT)
}

/// Trains the controller (a second or so) and returns it with its final training loss.
pub fn network() -> (Network, f64) {
    // A grid of 9 points per axis over x, v in [-1, 1] and th, w in [-0.5, 0.5].
    let axis = |half: f64| (0..9).map(move |k| -half + 2.0 * half * f64::from(k) / 8.0);
    let mut xs = Vec::new();
    for x in axis(1.0) {
        for v in axis(1.0) {
            for th in axis(0.5) {
                for w in axis(0.5) {
                    xs.push(vec![x, v, th, w]);
                }
            }
        }
    }
    let ys: Vec<Vec<f64>> = xs.iter().map(|s| vec![law([s[0], s[1], s[2], s[3]])]).collect();
    let data = Dataset::regression(&xs, &ys).expect("a well-formed data set");
    let config = TrainConfig {
        seed: 2026,
        epochs: 60,
        batch_size: 64,
        optimizer: Optimizer::adam(3e-3),
        lr_decay: 0.96,
        ..TrainConfig::default()
    };
    let trained = train(&Architecture::mlp(4, &[16, 16], 1), &data, None, &config).expect("training converges");
    (trained.model.to_network("cart-pole controller (trestle-train, seed 2026)"), trained.report.train.loss)
}

#[allow(dead_code)] // a test includes this file for `network` alone
fn main() -> ExitCode {
    let Some(out) = std::env::args().nth(1) else {
        eprintln!("usage: cartpole_controller OUT.onnx");
        return ExitCode::from(2);
    };
    let (net, loss) = network();
    eprintln!("training loss (mean squared error): {loss:.3e}");
    match trestle_nn::write_onnx(&net, Path::new(&out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
