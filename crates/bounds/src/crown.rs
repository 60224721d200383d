//! CROWN: backward linear relaxation.
//!
//! Pre-activation bounds of every unstable ReLU are themselves computed by a backward pass from that
//! layer to the input (and intersected with IBP); stable neurons keep their interval bounds, since
//! their relaxation is exact whatever the bounds are. Going backward, each row only ever holds an
//! *upper* bound: the lower bound of `g` is minus the upper bound of `-g`. Every step keeps the
//! invariant `g(x) <= lambda . z + c` exact for every input in the box, `z` the value vector the
//! pass has reached and `lambda`, `c` the f64 values held (see [`crate::relu::backward_upper`] and
//! [`crate::dense::backward_upper`] for how rounding is absorbed into `c`).

use crate::error::BoundsError;
use crate::fp::add_up;
use crate::graph::Graph;
use crate::ibp::{self, Bounds, Level};
use crate::linear::upper_over_box;
use crate::{dense, relu};
use trestle_ir::network::{Activation, Matrix};

/// Upper bounds `g_i <= result_i . x + constant_i` (over the graph input) of `g_i = lambda_i . z`,
/// `z` the value vector at `level` (0 = input, t = output of stage t - 1). `alphas[t]` optionally
/// gives per-row lower slopes for stage t (rows x block neurons); otherwise the adaptive ones.
pub(crate) fn backward_from(
    graph: &Graph<'_>,
    bounds: &Bounds,
    level: usize,
    mut lambda: Matrix,
    alphas: Option<&[Matrix]>,
) -> (Matrix, Vec<f64>) {
    let mut constant = vec![0.0; lambda.rows];
    for t in (0..level).rev() {
        let stage_bounds = &bounds.stages[t];
        relu::backward_upper(&stage_bounds.relax, alphas.map(|a| &a[t]), &mut lambda, &mut constant);
        lambda = dense::backward_upper(
            &graph.stages[t],
            &stage_bounds.block,
            &bounds.levels[t].magnitude,
            &lambda,
            &mut constant,
        );
    }
    (lambda, constant)
}

/// Which pre-activations a CROWN pass tightens by a backward pass (the others keep their interval
/// bounds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tighten {
    /// The ReLUs the intervals leave unstable: the only bounds a relaxation depends on, so enough
    /// for the output bounds.
    Unstable,
    /// Those, and every neuron of a stage without ReLU (a network's output layer): values an exact
    /// encoding keeps as variables, whose bounds are its big-M constants.
    UnstableAndAffine,
}

/// CROWN bounds of every stage's pre-activations (the neurons `tighten` names by a backward pass,
/// the rest by intervals).
pub(crate) fn intermediate_bounds(graph: &Graph<'_>, input: Level, tighten: Tighten) -> Result<Bounds, BoundsError> {
    ibp::propagate(graph, input, |t, bounds, block| {
        let stage = &graph.stages[t];
        let tightened: Vec<usize> = match stage.activation {
            Activation::Relu => (0..stage.rows()).filter(|&r| block.lo[r] < 0.0 && block.hi[r] > 0.0).collect(),
            _ if tighten == Tighten::UnstableAndAffine => {
                (0..stage.rows()).filter(|&r| block.lo[r] < block.hi[r]).collect()
            }
            _ => Vec::new(),
        };
        if tightened.is_empty() {
            return Ok(());
        }
        // Rows: +p_r for the upper bounds, then -p_r for the lower bounds, over the stage input.
        let width = stage.input_dim;
        let k = tightened.len();
        let mut lambda = Matrix::new(2 * k, width, vec![0.0; 2 * k * width]);
        for (i, &r) in tightened.iter().enumerate() {
            let w = stage.weights.row(r);
            lambda.data[i * width..i * width + w.len()].copy_from_slice(w);
            for (dst, &v) in lambda.data[(k + i) * width..].iter_mut().zip(w) {
                *dst = -v;
            }
        }
        let (coeffs, constant) = backward_from(graph, bounds, t, lambda, None);
        let input = &bounds.levels[0];
        for (i, &r) in tightened.iter().enumerate() {
            let b = stage.bias[r];
            let hi = upper_over_box(coeffs.row(i), add_up(constant[i], b), &input.lo, &input.hi);
            let neg_lo = upper_over_box(coeffs.row(k + i), add_up(constant[k + i], -b), &input.lo, &input.hi);
            block.hi[r] = block.hi[r].min(hi);
            block.lo[r] = block.lo[r].max(-neg_lo);
        }
        Ok(())
    })
}

/// Upper bounds of `out_coeffs_i . y` (`y` the graph output) as linear functions of the input, with
/// the adaptive slopes (or `alphas`).
pub(crate) fn query_upper(
    graph: &Graph<'_>,
    bounds: &Bounds,
    out_coeffs: &Matrix,
    alphas: Option<&[Matrix]>,
) -> (Matrix, Vec<f64>) {
    backward_from(graph, bounds, graph.stages.len(), out_coeffs.clone(), alphas)
}
