use crate::args::{EvalArgs, NnetNormalizationArg};
use crate::output::print_json;
use crate::{CliError, CliResult, Outcome};
use anyhow::anyhow;
use serde_json::json;
use trestle_nn::LoadOptions;
use trestle_verify::render::decimal as fmt_f64;

/// Loads a model file for the model-level commands.
pub fn load_model(
    path: &std::path::Path,
    normalization: NnetNormalizationArg,
) -> Result<trestle_ir::Network, CliError> {
    trestle_nn::load_network(path, &LoadOptions { nnet_normalization: normalization.into() })
        .map_err(|e| CliError::Input(e.into()))
}

pub fn run(a: &EvalArgs) -> CliResult {
    let net = load_model(&a.model, a.nnet_normalization)?;
    let input = parse_values(&a.input)?;
    if input.len() != net.input_dim() {
        return Err(CliError::Input(anyhow!(
            "--input has {} values but {} takes {}",
            input.len(),
            a.model.display(),
            net.input_dim()
        )));
    }
    if net.is_recurrent() {
        return Err(CliError::Input(anyhow!("{} is recurrent: use `trestle simulate` on a system", a.model.display())));
    }
    let output = net.eval(&input).map_err(|e| CliError::Input(e.into()))?;
    // A trailing softmax is left out by the loader: these are its inputs, which have the same
    // argmax; said on stderr so that stdout stays the values alone.
    if a.json {
        let mut value = json!({ "output": output });
        if let Some(node) = &net.trailing_softmax {
            value["softmax_left_out"] = json!(node);
        }
        print_json(&value);
    } else {
        if let Some(node) = &net.trailing_softmax {
            eprintln!("note: {node} is left out: the values are its inputs (same argmax)");
        }
        println!("{}", output.iter().map(|v| fmt_f64(*v)).collect::<Vec<_>>().join(", "));
    }
    Ok(Outcome::Done)
}

pub fn parse_values(text: &str) -> Result<Vec<f64>, CliError> {
    text.split(',')
        .map(|s| {
            let s = s.trim();
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| CliError::Input(anyhow!("'{s}' is not a finite number")))
        })
        .collect()
}
