//! `trestle bounds MODEL --lo .. --hi .. --method ..`: sound output bounds over an input box.

use crate::args::BoundsArgs;
use crate::output::{driver_error, print_json};
use crate::{CliError, CliResult, Outcome};
use anyhow::anyhow;
use trestle_bounds::{InputBox, Method};
use trestle_verify::{model, options};

pub fn run(a: &BoundsArgs) -> CliResult {
    let net = model::load(&a.model, a.nnet_normalization.into()).map_err(driver_error)?;
    let method: Method = options::bound_method("--method", &a.method).map_err(driver_error)?;
    let values = |text: &str| model::values(text).map_err(driver_error);
    let input = InputBox::new(values(&a.lo)?, values(&a.hi)?);
    let b = trestle_bounds::bound(&net, &input, &method)
        .map_err(|e| CliError::Input(anyhow!("{}: {e}", a.model.display())))?;
    let (json, text) = trestle_verify::render::output_bounds(&b, net.input_dim(), &a.method);
    if a.json {
        print_json(&json);
    } else {
        print!("{text}");
    }
    Ok(Outcome::Done)
}
