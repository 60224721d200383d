//! Writes `examples/networks/double-integrator.onnx`, the controller of the README's walkthrough:
//! the saturated PD law `u = clamp(-x - 1.5 v, -1, 1)` as a ReLU network with two hidden neurons,
//! `u = relu(z + 1) - relu(z - 1) - 1` with `z = -x - 1.5 v` (every weight exact in f64). It stands
//! in for a controller a user trained and exported with `torch.onnx.export`; the project writes it
//! itself (a test checks that the shipped file is this program's output, byte for byte).
//!
//!   cargo run --release -p trestle-nn --example double_integrator -- examples/networks/double-integrator.onnx

use std::path::Path;
use std::process::ExitCode;
use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, Network};

/// The walkthrough's controller: inputs (x, v), one output u.
pub fn network() -> Network {
    let hidden = DenseLayer {
        weights: Matrix::new(2, 2, vec![-1.0, -1.5, -1.0, -1.5]),
        bias: vec![1.0, -1.0],
        activation: Activation::Relu,
    };
    let output =
        DenseLayer { weights: Matrix::new(1, 2, vec![1.0, -1.0]), bias: vec![-1.0], activation: Activation::Identity };
    Network::new("double-integrator saturated PD law".to_string(), vec![Layer::Dense(hidden), Layer::Dense(output)])
        .expect("the layer shapes agree")
}

#[allow(dead_code)] // a test includes this file for `network` alone
fn main() -> ExitCode {
    let Some(out) = std::env::args().nth(1) else {
        eprintln!("usage: double_integrator OUT.onnx");
        return ExitCode::from(2);
    };
    match trestle_nn::write_onnx(&network(), Path::new(&out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
