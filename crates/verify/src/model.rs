//! The questions about one network file (`trestle eval`, `trestle bounds`): its outputs on one
//! input, and sound bounds of them over an input box ([`crate::render::output_bounds`]).

use crate::error::DriverError;
use serde_json::{Value, json};
use std::path::Path;
use trestle_ir::Network;
use trestle_nn::{LoadOptions, NnetNormalization};

/// Loads a model file (.onnx or .nnet).
pub fn load(path: &Path, nnet_normalization: NnetNormalization) -> Result<Network, DriverError> {
    trestle_nn::load_network(path, &LoadOptions { nnet_normalization }).map_err(DriverError::input)
}

/// Comma-separated finite numbers (an input, the ends of a box).
pub fn values(text: &str) -> Result<Vec<f64>, DriverError> {
    text.split(',')
        .map(|s| {
            let s = s.trim();
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| DriverError::input(format!("'{s}' is not a finite number")))
        })
        .collect()
}

/// A network's outputs on one input, and the trailing softmax the loader left out (its inputs
/// are the outputs: the same argmax).
pub struct Evaluation {
    pub output: Vec<f64>,
    pub softmax_left_out: Option<String>,
}

/// Evaluates the feed-forward network `net` (read from `path`) on `input`.
pub fn eval(net: &Network, path: &Path, input: &[f64]) -> Result<Evaluation, DriverError> {
    if input.len() != net.input_dim() {
        return Err(DriverError::input(format!(
            "--input has {} values but {} takes {}",
            input.len(),
            path.display(),
            net.input_dim()
        )));
    }
    if net.is_recurrent() {
        return Err(DriverError::input(format!("{} is recurrent: use `trestle simulate` on a system", path.display())));
    }
    let output = net.eval(input).map_err(DriverError::input)?;
    Ok(Evaluation { output, softmax_left_out: net.trailing_softmax.clone() })
}

impl Evaluation {
    pub fn to_json(&self) -> Value {
        let mut value = json!({ "output": self.output });
        if let Some(node) = &self.softmax_left_out {
            value["softmax_left_out"] = json!(node);
        }
        value
    }

    /// The values, comma-separated (the note on a left-out softmax is for stderr, so that stdout
    /// stays the values alone).
    pub fn text(&self) -> String {
        self.output.iter().map(|v| crate::render::decimal(*v)).collect::<Vec<_>>().join(", ")
    }
}
