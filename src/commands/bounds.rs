//! `trestle bounds MODEL --lo .. --hi .. --method ..`: sound output bounds over an input box.

use super::eval::{load_model, parse_values};
use crate::args::{BoundsArgs, value_name};
use crate::output::{driver_error, print_json};
use crate::{CliError, CliResult, Outcome};
use anyhow::anyhow;
use serde_json::json;
use trestle_bounds::{InputBox, Method};
use trestle_ir::Matrix;
use trestle_verify::options;
use trestle_verify::render::decimal as fmt_f64;

pub fn run(a: &BoundsArgs) -> CliResult {
    let net = load_model(&a.model, a.nnet_normalization)?;
    let method: Method = options::bound_method("--method", &value_name(&a.method)).map_err(driver_error)?;
    let input = InputBox::new(parse_values(&a.lo)?, parse_values(&a.hi)?);
    let b = trestle_bounds::bound(&net, &input, &method)
        .map_err(|e| CliError::Input(anyhow!("{}: {e}", a.model.display())))?;
    // IBP has no linear relaxation: its box is the (constant) linear bound.
    let n_in = net.input_dim();
    let constant = |c: &Vec<f64>| (Matrix::new(c.len(), n_in, vec![0.0; c.len() * n_in]), c.clone());
    let (lower, upper) = match &b.linear {
        Some(l) => ((l.lower.a.clone(), l.lower.c.clone()), (l.upper.a.clone(), l.upper.c.clone())),
        None => (constant(&b.lo), constant(&b.hi)),
    };
    let rows = |m: &Matrix| (0..m.rows).map(|r| m.row(r).to_vec()).collect::<Vec<_>>();
    if a.json {
        print_json(&json!({
            "method": value_name(&a.method),
            "lo": b.lo,
            "hi": b.hi,
            "linear": {
                "lower": { "A": rows(&lower.0), "c": lower.1 },
                "upper": { "A": rows(&upper.0), "c": upper.1 },
            },
        }));
    } else {
        println!("output box ({}), sound under rounding:", value_name(&a.method));
        for i in 0..b.lo.len() {
            println!("  y{i} in [{}, {}]", fmt_f64(b.lo[i]), fmt_f64(b.hi[i]));
        }
        println!("linear bounds over the box:");
        let term = |m: &Matrix, c: &[f64], i: usize| {
            let mut t: Vec<String> =
                (0..n_in).filter(|&j| m.get(i, j) != 0.0).map(|j| format!("{}*x{j}", fmt_f64(m.get(i, j)))).collect();
            t.push(fmt_f64(c[i]));
            t.join(" + ")
        };
        for i in 0..b.lo.len() {
            println!("  {} <= y{i} <= {}", term(&lower.0, &lower.1, i), term(&upper.0, &upper.1, i));
        }
    }
    Ok(Outcome::Done)
}
