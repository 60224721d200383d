//! `trestle eval MODEL --input ..`: a network's outputs on one input (`trestle_verify::model`).

use crate::args::EvalArgs;
use crate::output::{driver_error, print_json};
use crate::{CliResult, Outcome};
use trestle_verify::model;

pub fn run(a: &EvalArgs) -> CliResult {
    let net = model::load(&a.model, a.nnet_normalization.into()).map_err(driver_error)?;
    let input = model::values(&a.input).map_err(driver_error)?;
    let evaluation = model::eval(&net, &a.model, &input).map_err(driver_error)?;
    if a.json {
        print_json(&evaluation.to_json());
    } else {
        if let Some(node) = &evaluation.softmax_left_out {
            eprintln!("note: {node} is left out: the values are its inputs (same argmax)");
        }
        println!("{}", evaluation.text());
    }
    Ok(Outcome::Done)
}
