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
use trestle_ir::network::{synthetic_centering, synthetic_dense};

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
            let net = synthetic_centering(
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
