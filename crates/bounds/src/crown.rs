//! CROWN: backward linear relaxation.
//!
//! Pre-activation bounds of every unstable neuron (see [`Tighten::Unstable`]) are themselves computed by a backward pass from that
//! layer to the input (and intersected with IBP); stable neurons keep their interval bounds, since
//! their relaxation is exact whatever the bounds are. Going backward, each row only ever holds an
//! *upper* bound: the lower bound of `g` is minus the upper bound of `-g`. Every step keeps the
//! invariant `g(x) <= lambda . z + c` exact for every input in the box, `z` the value vector the
//! pass has reached and `lambda`, `c` the f64 values held (see [`crate::relax::backward_upper`] and
//! [`crate::dense::backward_upper`] for how rounding is absorbed into `c`).

use crate::error::BoundsError;
use crate::fp::add_up;
use crate::graph::Graph;
use crate::ibp::{self, Bounds, Level};
use crate::linear::upper_over_box;
use crate::{dense, relax};
use trestle_ir::network::{Activation, Matrix};

/// Upper bounds `g_i <= result_i . x + constant_i` (over the graph input) of `g_i = lambda_i . z`,
/// `z` the value vector at `level` (0 = input, t = output of stage t - 1). `alphas[t]` optionally
/// gives per-row slopes for stage t (rows x 2 block neurons: the lower slopes, then the upper
/// ones); otherwise CROWN's.
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
        relax::backward_upper(stage_bounds.relax(), alphas.map(|a| &a[t]), &mut lambda, &mut constant);
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
    /// The neurons the intervals leave unstable (a ReLU, leaky ReLU or clip across a kink, every
    /// tanh and sigmoid neuron of non-zero width): the only bounds a relaxation depends on, so
    /// enough for the output bounds.
    Unstable,
    /// Those, and every neuron of an identity stage (a network's output layer): values an exact
    /// encoding keeps as variables, whose bounds are its big-M constants.
    UnstableAndAffine,
}

/// Bytes of one block of rows a tightening pass carries backward (see [`intermediate_bounds`]).
const TIGHTEN_BLOCK_BYTES: usize = 64 * 1024;

/// CROWN bounds of every stage's pre-activations (the neurons `tighten` names by a backward pass,
/// the rest by intervals).
pub(crate) fn intermediate_bounds(graph: &Graph<'_>, input: Level, tighten: Tighten) -> Result<Bounds, BoundsError> {
    intermediate_bounds_in_blocks(graph, input, tighten, TIGHTEN_BLOCK_BYTES)
}

/// [`intermediate_bounds`], the neurons of a stage tightened `block_bytes` of rows at a time. Rows
/// are independent in a backward pass, so the bounds do not depend on the block size (a test
/// checks it bit for bit); small blocks stay in cache, where one matrix of every unstable neuron
/// (megabytes on a wide layer) cost a fresh, page-faulted and zeroed allocation on every box.
fn intermediate_bounds_in_blocks(
    graph: &Graph<'_>,
    input: Level,
    tighten: Tighten,
    block_bytes: usize,
) -> Result<Bounds, BoundsError> {
    ibp::propagate(graph, input, true, |t, bounds, block| {
        let stage = &graph.stages[t];
        let tightened: Vec<usize> = match stage.activation {
            Activation::Identity if tighten == Tighten::UnstableAndAffine => {
                (0..stage.rows()).filter(|&r| block.lo[r] < block.hi[r]).collect()
            }
            Activation::Identity => Vec::new(),
            act => (0..stage.rows())
                .filter(|&r| block.lo[r] < block.hi[r] && act.piece_on(block.lo[r], block.hi[r]).is_none())
                .collect(),
        };
        let width = stage.input_dim;
        let per_block = (block_bytes / (2 * width * std::mem::size_of::<f64>())).max(1);
        let input = &bounds.levels[0];
        for neurons in tightened.chunks(per_block) {
            // Rows: +p_r for the upper bounds, then -p_r for the lower bounds, over the stage input
            // (zero on the values the block does not read).
            let k = neurons.len();
            let mut data = Vec::with_capacity(2 * k * width);
            for sign in [1.0, -1.0] {
                for &r in neurons {
                    let w = stage.weights.row(r);
                    data.extend(w.iter().map(|&v| sign * v));
                    data.resize(data.len() + width - w.len(), 0.0);
                }
            }
            let (coeffs, constant) = backward_from(graph, bounds, t, Matrix::new(2 * k, width, data), None);
            for (i, &r) in neurons.iter().enumerate() {
                let b = stage.bias[r];
                let hi = upper_over_box(coeffs.row(i), add_up(constant[i], b), &input.lo, &input.hi);
                let neg_lo = upper_over_box(coeffs.row(k + i), add_up(constant[k + i], -b), &input.lo, &input.hi);
                block.hi[r] = block.hi[r].min(hi);
                block.lo[r] = block.lo[r].max(-neg_lo);
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use trestle_ir::network::synthetic_dense;

    #[test]
    fn tightening_block_size_does_not_change_any_bound() {
        for (seed, widths) in [(1, vec![2, 64, 64, 3]), (2, vec![5, 40, 30, 20, 2]), (3, vec![12, 50, 4])] {
            let net = synthetic_dense(&widths, seed);
            let graph = Graph::feed_forward(&net).unwrap();
            let input = || Level::new(vec![-1.0; widths[0]], vec![1.0; widths[0]]);
            for tighten in [Tighten::Unstable, Tighten::UnstableAndAffine] {
                let whole = intermediate_bounds_in_blocks(&graph, input(), tighten, usize::MAX).unwrap();
                // Not vacuous: the backward passes tightened some neuron beyond its interval bound.
                let intervals = ibp::run(&graph, input()).unwrap();
                assert!(whole.stages.iter().zip(&intervals.stages).any(|(c, i)| c.block.hi != i.block.hi));
                for block_bytes in [0, 1000, TIGHTEN_BLOCK_BYTES] {
                    let blocks = intermediate_bounds_in_blocks(&graph, input(), tighten, block_bytes).unwrap();
                    let tightened = whole.stages.iter().zip(&blocks.stages).filter(|(a, _)| !a.block.lo.is_empty());
                    for (a, b) in tightened {
                        assert_eq!((&a.block.lo, &a.block.hi), (&b.block.lo, &b.block.hi), "{widths:?} {block_bytes}");
                    }
                }
            }
        }
    }
}
