//! Forward-mode linear relaxation (auto_LiRPA `method='forward'`): every value carries a lower and
//! an upper linear function of the graph input, propagated layer by layer; pre-activation bounds
//! are those functions concretised over the box and intersected with IBP. Kept for comparison with
//! the compositional tool this project follows; CROWN is usually tighter.

use crate::dense::{self, LinearFns};
use crate::error::BoundsError;
use crate::fp::sum_up;
use crate::graph::Graph;
use crate::ibp::{self, Bounds, Level};
use crate::linear::{lower_over_box, upper_over_box};
use crate::relax;
use trestle_ir::network::Matrix;

/// Interval bounds of every stage and the linear functions of the graph output.
pub(crate) fn run(graph: &Graph<'_>, input: Level) -> Result<(Bounds, LinearFns), BoundsError> {
    let (x_lo, x_hi, x_magnitude) = (input.lo.clone(), input.hi.clone(), input.magnitude.clone());
    let n_in = x_lo.len();
    let x_magnitude_sum = sum_up(x_magnitude.iter().copied());
    // Functions of the value vector entering the current stage, and of the block just bounded.
    let mut fns = LinearFns::identity(&x_magnitude);
    let mut block_fns: Option<(Matrix, Matrix)> = None;
    let bounds = ibp::propagate(graph, input, true, |t, bounds, block| {
        if let Some(pre) = block_fns.take() {
            fns = stage_output(graph, bounds, t - 1, pre, &fns, &x_magnitude);
        }
        let stage = &graph.stages[t];
        let (lower, upper) = dense::forward(&stage.weights, &stage.bias, &fns, x_magnitude_sum);
        for r in 0..stage.rows() {
            let (lo_row, up_row) = (lower.row(r), upper.row(r));
            block.lo[r] = block.lo[r].max(lower_over_box(&lo_row[..n_in], lo_row[n_in], &x_lo, &x_hi));
            block.hi[r] = block.hi[r].min(upper_over_box(&up_row[..n_in], up_row[n_in], &x_lo, &x_hi));
        }
        block_fns = Some((lower, upper));
        Ok(())
    })?;
    if let Some(pre) = block_fns {
        fns = stage_output(graph, &bounds, graph.stages.len() - 1, pre, &fns, &x_magnitude);
    }
    Ok((bounds, fns))
}

/// Functions of stage `t`'s output: its relaxed block functions followed by its copies.
fn stage_output(
    graph: &Graph<'_>,
    bounds: &Bounds,
    t: usize,
    (mut lower, mut upper): (Matrix, Matrix),
    stage_input: &LinearFns,
    x_magnitude: &[f64],
) -> LinearFns {
    relax::forward(bounds.stages[t].relax(), x_magnitude, &mut lower, &mut upper);
    for &src in &graph.stages[t].copies {
        lower.data.extend_from_slice(stage_input.lower.row(src));
        upper.data.extend_from_slice(stage_input.upper.row(src));
        lower.rows += 1;
        upper.rows += 1;
    }
    LinearFns::with_magnitudes(lower, upper, x_magnitude)
}
