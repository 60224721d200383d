//! Bounding linear combinations of the outputs (and inputs) with each method: the query behind
//! [`crate::bound`] (each output and its negation) and [`crate::bound_affine_of`].

use crate::alpha::AlphaProblem;
use crate::dense::{self, LinearFns};
use crate::error::BoundsError;
use crate::fp::{add_up, sum_up};
use crate::graph::{self, Graph};
use crate::ibp::{self, Level};
use crate::linear::{add_coefficients, upper_over_box};
use crate::{AlphaConfig, Method, crown, forward};
use std::borrow::Cow;
use trestle_ir::network::{Activation, Matrix};

/// Upper bounds `row_i . [y; x] <= coeffs_i . x + constant_i` by CROWN, or by alpha-CROWN when
/// `alpha` is given (per row the better of the two, by the rigorous concretised value).
pub(crate) fn backward_rows(
    graph: &Graph<'_>,
    bounds: &ibp::Bounds,
    out_coeffs: &Matrix,
    in_coeffs: Option<&Matrix>,
    alpha: Option<&AlphaConfig>,
) -> (Matrix, Vec<f64>) {
    let input = &bounds.levels[0];
    let finish = |(mut coeffs, mut constant): (Matrix, Vec<f64>)| {
        if let Some(extra) = in_coeffs {
            add_coefficients(&mut coeffs, &mut constant, extra, &input.magnitude);
        }
        (coeffs, constant)
    };
    let crown = finish(crown::query_upper(graph, bounds, out_coeffs, None));
    let Some(config) = alpha else { return crown };
    let problem = AlphaProblem { graph, bounds, out_coeffs, in_coeffs };
    let Some(alphas) = problem.optimise(config) else { return crown };
    let (mut coeffs, mut constant) = finish(crown::query_upper(graph, bounds, out_coeffs, Some(&alphas)));
    let n = coeffs.cols;
    for (i, c) in constant.iter_mut().enumerate() {
        let value = |m: &Matrix, c: f64| upper_over_box(m.row(i), c, &input.lo, &input.hi);
        if value(&crown.0, crown.1[i]) <= value(&coeffs, *c) {
            coeffs.data[i * n..(i + 1) * n].copy_from_slice(crown.0.row(i));
            *c = crown.1[i];
        }
    }
    (coeffs, constant)
}

/// Bounds `(lo, hi)` of `out_coeffs y + in_coeffs x + c` over the box, by `method`, intersected with
/// the interval combination. The constant `c` is added last, so a row that cancels exactly gives 0.
pub(crate) fn affine_bounds(
    graph: &Graph<'_>,
    input: Level,
    method: &Method,
    out_coeffs: &Matrix,
    in_coeffs: &Matrix,
    c: &[f64],
) -> Result<(Vec<f64>, Vec<f64>), BoundsError> {
    let k = c.len();
    let (x_lo, x_hi) = (input.lo.clone(), input.hi.clone());
    // Rows: +combination (upper bounds), then -combination (minus the lower bounds).
    let stack = |m: &Matrix| {
        let mut data = m.data.clone();
        data.extend(m.data.iter().map(|v| -v));
        Matrix::new(2 * k, m.cols, data)
    };
    let (outs, ins) = (stack(out_coeffs), stack(in_coeffs));
    let mut combined = Vec::with_capacity(k * (out_coeffs.cols + in_coeffs.cols));
    for i in 0..k {
        combined.extend_from_slice(out_coeffs.row(i));
        combined.extend_from_slice(in_coeffs.row(i));
    }
    let combined = Matrix::new(k, out_coeffs.cols + in_coeffs.cols, combined);
    let interval_of = |bounds: &ibp::Bounds| {
        let out = bounds.levels.last().expect("input level");
        let (mut lo, mut hi) = (out.lo.clone(), out.hi.clone());
        lo.extend_from_slice(&x_lo);
        hi.extend_from_slice(&x_hi);
        let stage = graph::Stage::new(
            Cow::Borrowed(&combined),
            Cow::Borrowed(c),
            Activation::Identity,
            Vec::new(),
            combined.cols,
        );
        dense::interval(&stage, &lo, &hi)
    };
    let (lo, hi, interval) = match method {
        Method::Ibp => {
            let bounds = ibp::run(graph, input)?;
            let iv = interval_of(&bounds);
            (iv.lo.clone(), iv.hi.clone(), iv)
        }
        Method::Crown | Method::AlphaCrown(_) => {
            if let Method::AlphaCrown(config) = method
                && !(config.step_size.is_finite() && config.step_size > 0.0)
            {
                return Err(BoundsError::StepSize(config.step_size));
            }
            let bounds = crown::intermediate_bounds(graph, input, crown::Tighten::Unstable)?;
            let alpha = match method {
                Method::AlphaCrown(config) => Some(config),
                _ => None,
            };
            let (coeffs, constant) = backward_rows(graph, &bounds, &outs, Some(&ins), alpha);
            let value = |i: usize, extra: f64| upper_over_box(coeffs.row(i), add_up(constant[i], extra), &x_lo, &x_hi);
            let hi = (0..k).map(|i| value(i, c[i])).collect();
            let lo = (0..k).map(|i| -value(k + i, -c[i])).collect();
            (lo, hi, interval_of(&bounds))
        }
        Method::Forward => {
            let (bounds, fns) = forward::run(graph, input)?;
            let x_magnitude = bounds.levels[0].magnitude.clone();
            let n_in = x_magnitude.len();
            // Functions of [y; x]: the output's, then the identity.
            let identity = LinearFns::identity(&x_magnitude);
            let mut lower = fns.lower.clone();
            let mut upper = fns.upper.clone();
            lower.data.truncate(graph.output_dim() * (n_in + 1));
            upper.data.truncate(graph.output_dim() * (n_in + 1));
            lower.data.extend_from_slice(&identity.lower.data);
            upper.data.extend_from_slice(&identity.upper.data);
            lower.rows = graph.output_dim() + n_in;
            upper.rows = lower.rows;
            let joint = LinearFns::with_magnitudes(lower, upper, &x_magnitude);
            let (lo_fns, up_fns) = dense::forward(&combined, c, &joint, sum_up(x_magnitude.iter().copied()));
            let lo = (0..k)
                .map(|i| crate::linear::lower_over_box(&lo_fns.row(i)[..n_in], lo_fns.row(i)[n_in], &x_lo, &x_hi))
                .collect();
            let hi =
                (0..k).map(|i| upper_over_box(&up_fns.row(i)[..n_in], up_fns.row(i)[n_in], &x_lo, &x_hi)).collect();
            (lo, hi, interval_of(&bounds))
        }
    };
    let lo: Vec<f64> = lo.iter().zip(&interval.lo).map(|(a, b)| a.max(*b)).collect();
    let hi: Vec<f64> = hi.iter().zip(&interval.hi).map(|(a, b)| a.min(*b)).collect();
    if lo.iter().chain(&hi).any(|v| !v.is_finite()) || lo.iter().zip(&hi).any(|(l, h)| l > h) {
        return Err(BoundsError::Overflow { at: "the combination".into() });
    }
    Ok((lo, hi))
}
