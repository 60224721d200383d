//! Writes deterministic synthetic ReLU controllers as ONNX, for benchmarks at sizes and state
//! dimensions no shipped model has.
//!
//!   synthetic_controller random SIZES SEED OUT.onnx
//!       sizes such as 2,2048,2048,2, weights from `trestle_ir::network::synthetic_dense`
//!   synthetic_controller centering DIMS WIDTH DEPTH EPS SEED OUT.onnx
//!       a controller for the n-dimensional maze `x_i' = x_i + 0.1 a_i` that pulls every
//!       coordinate towards 0.6 (`a_i = 0.5 (0.6 - x_i)`, written exactly with ReLUs:
//!       relu(0.6 - x) - relu(x - 0.6)) plus `EPS` times the output of a random ReLU network of
//!       the same width and depth; for small EPS the box [0.25, 0.95]^n is inductive with a
//!       margin, and proving it needs splits that grow with the dimension.
//!
//!   cargo run --release -p trestle-nn --example synthetic_controller -- random 2,2048,2048,2 7 out.onnx

use std::path::Path;
use std::process::ExitCode;
use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, Network, synthetic_dense};

const CENTRE: f64 = 0.6;

fn centering(dims: usize, width: usize, depth: usize, eps: f64, seed: u64) -> Result<Network, String> {
    if width < 2 * dims || depth == 0 {
        return Err(format!("WIDTH must be at least 2*DIMS = {} and DEPTH at least 1", 2 * dims));
    }
    // The random part: its hidden layers fill the neurons beside the 2*dims exact ones.
    let free = width - 2 * dims;
    let mut sizes = vec![dims];
    sizes.extend(std::iter::repeat_n(free.max(1), depth));
    sizes.push(dims);
    let random = synthetic_dense(&sizes, seed);
    let dense = |l: &Layer| match l {
        Layer::Dense(d) => d.clone(),
        Layer::Recurrent(_) => unreachable!("synthetic networks are dense"),
    };
    let mut layers = Vec::new();
    for k in 0..=depth {
        let r = dense(&random.layers[k]);
        let (rows, cols) = if k == depth { (dims, width) } else { (width, if k == 0 { dims } else { width }) };
        let mut w = vec![0.0; rows * cols];
        let mut b = vec![0.0; rows];
        let free_in = if k == 0 { 0 } else { 2 * dims }; // where the random part's inputs start
        if k < depth {
            // The exact part: relu(c - x_i), relu(x_i - c) in the first layer, carried unchanged
            // (weight 1 on a non-negative value) through the others.
            for i in 0..dims {
                if k == 0 {
                    w[i * cols + i] = -1.0;
                    b[i] = CENTRE;
                    w[(dims + i) * cols + i] = 1.0;
                    b[dims + i] = -CENTRE;
                } else {
                    w[i * cols + i] = 1.0;
                    w[(dims + i) * cols + dims + i] = 1.0;
                }
            }
            for j in 0..free {
                let row = 2 * dims + j;
                b[row] = r.bias[j];
                for c in 0..r.weights.cols {
                    w[row * cols + free_in + c] = r.weights.get(j, c);
                }
            }
        } else {
            for i in 0..dims {
                w[i * cols + i] = 0.5;
                w[i * cols + dims + i] = -0.5;
                b[i] = eps * r.bias[i];
                for c in 0..r.weights.cols {
                    w[i * cols + 2 * dims + c] = eps * r.weights.get(i, c);
                }
            }
        }
        let activation = if k < depth { Activation::Relu } else { Activation::Identity };
        layers.push(Layer::Dense(DenseLayer { weights: Matrix::new(rows, cols, w), bias: b, activation }));
    }
    Network::new(format!("inline:centering-{dims}d-{width}x{depth}-eps{eps}-seed{seed}"), layers)
        .map_err(|e| e.to_string())
}

fn parse<T: std::str::FromStr>(s: &str, what: &str) -> Result<T, String> {
    s.parse().map_err(|_| format!("{what}: cannot read '{s}'"))
}

fn run(args: &[String]) -> Result<(), String> {
    let (net, out) = match args {
        [mode, sizes, seed, out] if mode == "random" => {
            let sizes: Vec<usize> = sizes.split(',').map(|s| parse(s, "SIZES")).collect::<Result<_, _>>()?;
            if sizes.len() < 2 || sizes.contains(&0) {
                return Err("SIZES: at least an input and an output size, none zero".into());
            }
            (synthetic_dense(&sizes, parse(seed, "SEED")?), out)
        }
        [mode, dims, width, depth, eps, seed, out] if mode == "centering" => {
            let eps: f64 = parse(eps, "EPS")?;
            if !eps.is_finite() {
                return Err("EPS must be finite".into());
            }
            let net = centering(
                parse(dims, "DIMS")?,
                parse(width, "WIDTH")?,
                parse(depth, "DEPTH")?,
                eps,
                parse(seed, "SEED")?,
            )?;
            (net, out)
        }
        _ => {
            return Err("usage: synthetic_controller random SIZES SEED OUT.onnx\n       \
                        synthetic_controller centering DIMS WIDTH DEPTH EPS SEED OUT.onnx"
                .into());
        }
    };
    trestle_nn::write_onnx(&net, Path::new(out)).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
