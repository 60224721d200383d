//! Bounds of the differences `f_i(x) - f_j(x)` of a network's outputs (the score differences of
//! an argmax controller; the MILP encodings' big-M constants): the network is followed by a
//! difference layer and bounded as any network, so the bounding method keeps the correlations
//! that the intervals `[lo_i - hi_j, hi_i - lo_j]` lose.
//!
//! The same differences bounded backward from the coefficients `e_i - e_j`
//! ([`crate::bound_affine_of`]) agree with these but for rounding, neither tighter everywhere
//! (they round different sums; `tests/soundness.rs`). The bridge engine's argmax (which outputs
//! may win on a box, `trestle_bridge::argmax`) takes the intersection of both
//! ([`tightest_difference_bounds`]): at least as tight as either, so whatever it ruled out with one
//! of them it still rules out, and a certificate re-checked with it is never rejected for want of
//! bits the other had.

use crate::{BoundsError, InputBox, Method, bound};
use trestle_ir::network::{Activation, DenseLayer, Layer, Matrix, Network};

/// A network whose outputs are the differences of another's, one per pair.
#[derive(Clone, Debug)]
pub struct DifferenceNetwork {
    pub network: Network,
    /// Per pair, the difference when it is one constant (the two outputs' weights equal in an
    /// affine last layer): exactly `b_i - b_j`, with no rounding margin.
    pub constant: Vec<Option<f64>>,
}

/// `net` followed by the differences `f_i - f_j` of `pairs`: merged into the last layer when it
/// is affine and every difference of its weights and biases is exact in f64 (then identical
/// outputs have the difference 0 exactly), appended as a layer of its own otherwise.
pub fn difference_network(net: &Network, pairs: &[(usize, usize)]) -> Result<DifferenceNetwork, BoundsError> {
    let layers = difference_layers(net, pairs);
    let constant: Vec<Option<f64>> = match layers.last() {
        Some(Layer::Dense(d)) if layers.len() == net.layers.len() => {
            (0..pairs.len()).map(|r| d.weights.row(r).iter().all(|w| *w == 0.0).then_some(d.bias[r])).collect()
        }
        _ => vec![None; pairs.len()],
    };
    let network = Network::new(format!("{} (output differences)", net.source), layers)?;
    Ok(DifferenceNetwork { network, constant })
}

/// Sound bounds `(lo, hi)` of `f_i - f_j` over `input` for each of `pairs`, by `method` on the
/// [`difference_network`] (constant differences exactly); a feed-forward network.
pub fn difference_bounds(
    net: &Network,
    input: &InputBox,
    method: &Method,
    pairs: &[(usize, usize)],
) -> Result<(Vec<f64>, Vec<f64>), BoundsError> {
    let diff = difference_network(net, pairs)?;
    let b = bound(&diff.network, input, method)?;
    let (mut lo, mut hi) = (b.lo, b.hi);
    for (r, c) in diff.constant.iter().enumerate() {
        if let Some(c) = *c {
            (lo[r], hi[r]) = (c, c);
        }
    }
    Ok((lo, hi))
}

/// [`difference_bounds`] met with the differences bounded backward from the coefficients
/// `e_i - e_j` ([`crate::bound_affine_of`]): both sound, so the intersection is, and it is at
/// least as tight as each.
pub fn tightest_difference_bounds(
    net: &Network,
    input: &InputBox,
    method: &Method,
    pairs: &[(usize, usize)],
) -> Result<(Vec<f64>, Vec<f64>), BoundsError> {
    let (mut lo, mut hi) = difference_bounds(net, input, method, pairs)?;
    let (k, n, n_in) = (pairs.len(), net.output_dim(), net.input_dim());
    let mut out = Matrix::new(k, n, vec![0.0; k * n]);
    for (r, &(i, j)) in pairs.iter().enumerate() {
        out.data[r * n + i] = 1.0;
        out.data[r * n + j] = -1.0;
    }
    let zero_in = Matrix::new(k, n_in, vec![0.0; k * n_in]);
    let (back_lo, back_hi) = crate::bound_affine_of(net, input, method, &out, &zero_in, &vec![0.0; k])?;
    for r in 0..k {
        lo[r] = lo[r].max(back_lo[r]);
        hi[r] = hi[r].min(back_hi[r]);
    }
    Ok((lo, hi))
}

/// `a - b` when f64 subtraction is exact (TwoSum residual 0).
fn exact_sub(a: f64, b: f64) -> Option<f64> {
    let d = a - b;
    let bb = d - a;
    let err = (a - (d - bb)) + (-b - bb);
    (err == 0.0 && d.is_finite()).then_some(d)
}

fn difference_layers(net: &Network, pairs: &[(usize, usize)]) -> Vec<Layer> {
    let n = net.output_dim();
    let mut layers = net.layers.clone();
    if let Some(Layer::Dense(last)) = layers.last()
        && last.activation == Activation::Identity
    {
        let cols = last.weights.cols;
        let merged: Option<(Vec<f64>, Vec<f64>)> = pairs.iter().try_fold(
            (Vec::with_capacity(pairs.len() * cols), Vec::with_capacity(pairs.len())),
            |(mut w, mut b), &(i, j)| {
                for (x, y) in last.weights.row(i).iter().zip(last.weights.row(j)) {
                    w.push(exact_sub(*x, *y)?);
                }
                b.push(exact_sub(last.bias[i], last.bias[j])?);
                Some((w, b))
            },
        );
        if let Some((w, b)) = merged {
            let layer = DenseLayer {
                weights: trestle_ir::Matrix::new(pairs.len(), cols, w),
                bias: b,
                activation: Activation::Identity,
            };
            *layers.last_mut().expect("non-empty") = Layer::Dense(layer);
            return layers;
        }
    }
    let mut data = vec![0.0; pairs.len() * n];
    for (r, &(i, j)) in pairs.iter().enumerate() {
        data[r * n + i] = 1.0;
        data[r * n + j] = -1.0;
    }
    layers.push(Layer::Dense(DenseLayer {
        weights: trestle_ir::Matrix::new(pairs.len(), n, data),
        bias: vec![0.0; pairs.len()],
        activation: Activation::Identity,
    }));
    layers
}
