//! Writes a deterministic synthetic ReLU controller as ONNX, for benchmarks at sizes no shipped
//! model has (see `trestle_ir::network::synthetic_dense`):
//!
//!   cargo run --release -p trestle-nn --example synthetic_controller -- 2,2048,2048,2 7 out.onnx

use std::path::Path;
use std::process::ExitCode;
use trestle_ir::network::synthetic_dense;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [sizes, seed, out] = args.as_slice() else {
        eprintln!("usage: synthetic_controller SIZES(e.g. 2,256,256,2) SEED OUT.onnx");
        return ExitCode::from(2);
    };
    let sizes: Result<Vec<usize>, _> = sizes.split(',').map(str::parse).collect();
    let (Ok(sizes), Ok(seed)) = (sizes, seed.parse::<u64>()) else {
        eprintln!("error: SIZES is a comma-separated list of positive integers, SEED an integer");
        return ExitCode::from(2);
    };
    if sizes.len() < 2 || sizes.contains(&0) {
        eprintln!("error: at least an input and an output size, none zero");
        return ExitCode::from(2);
    }
    match trestle_nn::write_onnx(&synthetic_dense(&sizes, seed), Path::new(out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
