//! Exact MILP encodings of feed-forward ReLU networks, and of argmax under the simulator's
//! lowest-index rule (strict comparisons as their closure for proofs).
//!
//! ReLU `y = max(z, 0)` with sound pre-activation bounds `l <= z <= u`:
//! * `l >= 0` (stably active): `y = z`;
//! * `u <= 0` (stably inactive): `y = 0`, no variable;
//! * otherwise the big-M encoding with one binary `d`: `y >= 0, y >= z, y <= u d, y <= z - l (1 - d)`.
//!
//! The encoding is exact (its projection on inputs and outputs is the graph of the network) whenever
//! `[l, u]` really contains every pre-activation value over the input box. The bounds come from
//! `trestle_bounds` (CROWN by default), which does not expose its intermediate bounds: the
//! pre-activation bounds of layer `k` are the output bounds of the *prefix network* made of the first
//! `k` layers with the last activation replaced by the identity ([`layer_bounds`]). That costs one
//! bound computation per layer, which is negligible next to the MILP.

use crate::error::MilpError;
use crate::model::{MilpModel, constant};
use good_lp::Expression;
use trestle_bounds::{InputBox, Method, bound_batch};
use trestle_ir::Interval;
use trestle_ir::network::{Activation, DenseLayer, Layer, Network};

/// Pre-activation bounds of one layer: `lo[i] <= z_i <= hi[i]`.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerBounds {
    pub lo: Vec<f64>,
    pub hi: Vec<f64>,
}

/// What [`encode_network`] added.
#[derive(Clone, Debug)]
pub struct EncodedNetwork {
    /// The network outputs as affine expressions of model variables (one variable per output).
    pub outputs: Vec<Expression>,
    /// Sound bounds of the outputs over the input box.
    pub output_bounds: Vec<Interval>,
    /// Pre-activation bounds used for every layer.
    pub layer_bounds: Vec<LayerBounds>,
    /// ReLU neurons with `l >= 0`, with `u <= 0`, and with a binary.
    pub stable_active: usize,
    pub stable_inactive: usize,
    pub unstable: usize,
}

fn dense<'a>(layer: &'a Layer, net: &Network) -> Result<&'a DenseLayer, MilpError> {
    match layer {
        Layer::Dense(d) => Ok(d),
        Layer::Recurrent(_) => Err(MilpError::Unsupported(format!(
            "network {} is recurrent; the MILP encoding covers feed-forward networks",
            net.source
        ))),
    }
}

/// How pre-activation bounds are computed.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundOptions {
    pub method: Method,
    /// Largest number of sub-boxes the input box is split into: each neuron's bound is the worst
    /// over the sub-boxes (still sound for the whole box, and tighter when the input is
    /// low-dimensional). `1` bounds the box as a whole.
    pub pieces: usize,
}

impl Default for BoundOptions {
    fn default() -> BoundOptions {
        BoundOptions { method: Method::Crown, pieces: 256 }
    }
}

/// A grid of at most `pieces` sub-boxes covering `input` (widest dimensions split first; adjacent
/// sub-boxes share their faces, so the union is the box).
pub fn split_box(input: &InputBox, pieces: usize) -> Vec<InputBox> {
    let n = input.lo.len();
    let mut counts = vec![1usize; n];
    loop {
        let width = |i: usize, counts: &[usize]| (input.hi[i] - input.lo[i]) / counts[i] as f64;
        let widest = (0..n)
            .filter(|&i| input.hi[i] > input.lo[i])
            .max_by(|&a, &b| width(a, &counts).total_cmp(&width(b, &counts)));
        let Some(d) = widest else { break };
        if counts.iter().product::<usize>() * 2 > pieces.max(1) {
            break;
        }
        counts[d] *= 2;
    }
    let mut out = vec![InputBox::new(Vec::new(), Vec::new())];
    for (i, &k) in counts.iter().enumerate() {
        let at = |j: usize| match j {
            0 => input.lo[i],
            j if j == k => input.hi[i],
            j => input.lo[i] + (input.hi[i] - input.lo[i]) * (j as f64 / k as f64),
        };
        out = out
            .iter()
            .flat_map(|b| {
                (0..k).map(move |j| {
                    let mut b = b.clone();
                    b.lo.push(at(j));
                    b.hi.push(at(j + 1));
                    b
                })
            })
            .collect();
    }
    out
}

/// Sound pre-activation bounds of every layer of `net` over `input`, by bounding each prefix network
/// (first `k` layers, identity last activation) over each sub-box of [`split_box`] and taking the
/// worst bound over the sub-boxes.
pub fn layer_bounds(net: &Network, input: &InputBox, opts: &BoundOptions) -> Result<Vec<LayerBounds>, MilpError> {
    let pieces = split_box(input, opts.pieces);
    let mut out = Vec::with_capacity(net.layers.len());
    for k in 1..=net.layers.len() {
        let mut layers: Vec<Layer> = net.layers[..k].to_vec();
        let last = dense(&layers[k - 1], net)?.clone();
        layers[k - 1] = Layer::Dense(DenseLayer { activation: Activation::Identity, ..last });
        let prefix = Network::new(format!("{} (first {k} layers)", net.source), layers)
            .map_err(|e| MilpError::Bounds(e.to_string()))?;
        let width = prefix.output_dim();
        let (mut lo, mut hi) = (vec![f64::INFINITY; width], vec![f64::NEG_INFINITY; width]);
        for b in bound_batch(&prefix, &pieces, &opts.method) {
            let b = b?;
            for i in 0..width {
                lo[i] = lo[i].min(b.lo[i]);
                hi[i] = hi[i].max(b.hi[i]);
            }
        }
        if lo.iter().chain(&hi).any(|v| !v.is_finite()) {
            return Err(MilpError::Unbounded {
                what: format!("layer {k} of {}", net.source),
                lo: f64::NAN,
                hi: f64::NAN,
            });
        }
        out.push(LayerBounds { lo, hi });
    }
    Ok(out)
}

/// Encodes `net` applied to `inputs` with pre-activation bounds over `input_box` computed with the
/// default [`BoundOptions`].
///
/// The caller guarantees that every value the `inputs` can take in the model lies in `input_box`
/// (for instance: the inputs are variables with exactly those bounds, or interval enclosures of
/// expressions); the encoding is exact under that guarantee.
pub fn encode_network(
    model: &mut MilpModel,
    net: &Network,
    inputs: &[Expression],
    input_box: &InputBox,
) -> Result<EncodedNetwork, MilpError> {
    encode_network_with(model, net, inputs, input_box, &BoundOptions::default())
}

/// [`encode_network`] with the way pre-activation bounds are computed given.
pub fn encode_network_with(
    model: &mut MilpModel,
    net: &Network,
    inputs: &[Expression],
    input_box: &InputBox,
    bound_opts: &BoundOptions,
) -> Result<EncodedNetwork, MilpError> {
    if inputs.len() != net.input_dim() {
        return Err(MilpError::Dimension {
            what: format!("inputs of network {}", net.source),
            found: inputs.len(),
            expected: net.input_dim(),
        });
    }
    let bounds = layer_bounds(net, input_box, bound_opts)?;
    let (mut stable_active, mut stable_inactive, mut unstable) = (0, 0, 0);
    let mut x: Vec<Expression> = inputs.to_vec();
    for (k, (layer, lb)) in net.layers.iter().zip(&bounds).enumerate() {
        let d = dense(layer, net)?;
        let mut next = Vec::with_capacity(d.weights.rows);
        for i in 0..d.weights.rows {
            let mut z = constant(d.bias[i]);
            for (w, xj) in d.weights.row(i).iter().zip(&x) {
                if *w != 0.0 {
                    z.add_mul(*w, xj);
                }
            }
            let (l, u) = (lb.lo[i], lb.hi[i]);
            let what = || format!("neuron {i} of layer {k} of {}", net.source);
            let y = match d.activation {
                Activation::Identity => {
                    let y = model.continuous(l, u, &what())?;
                    model.add(z.eq(y));
                    Expression::from(y)
                }
                Activation::Relu if l >= 0.0 => {
                    stable_active += 1;
                    let y = model.continuous(l, u, &what())?;
                    model.add(z.eq(y));
                    Expression::from(y)
                }
                Activation::Relu if u <= 0.0 => {
                    stable_inactive += 1;
                    constant(0.0)
                }
                Activation::Relu => {
                    unstable += 1;
                    let y = model.continuous(0.0, u, &what())?;
                    let dvar = model.binary();
                    // y >= z
                    model.add((z.clone() - y).leq(0.0));
                    // y <= z - l (1 - d)  <=>  y - z - l d <= -l
                    model.add((Expression::from(y) - z + (-l) * dvar).leq(-l));
                    // y <= u d
                    model.add((Expression::from(y) - u * dvar).leq(0.0));
                    Expression::from(y)
                }
            };
            next.push(y);
        }
        x = next;
    }
    let last = bounds.last().expect("a validated network has layers");
    let output_bounds = (0..x.len())
        .map(|i| {
            let (l, u) = (last.lo[i], last.hi[i]);
            if net.layers.last().is_some_and(|l| l.activation() == Activation::Relu) {
                Interval::new(l.max(0.0), u.max(0.0))
            } else {
                Interval::new(l, u)
            }
        })
        .collect();
    Ok(EncodedNetwork { outputs: x, output_bounds, layer_bounds: bounds, stable_active, stable_inactive, unstable })
}

/// Sound enclosures of the pairwise differences of a network's outputs over an input box:
/// `gaps[i][j]` contains every value of `s_i - s_j` (and `gaps[i][i] = [0, 0]`). Computed by
/// bounding the network followed by a difference layer (CROWN keeps the correlation the plain
/// intervals `[lo_i - hi_j, hi_i - lo_j]` lose: identical outputs get the gap `[0, 0]`), intersected
/// with those intervals of the sound `outputs` bounds, worst case over the sub-boxes of
/// [`split_box`].
pub fn score_gaps(
    net: &Network,
    input: &InputBox,
    opts: &BoundOptions,
    outputs: &[Interval],
) -> Result<Vec<Vec<Interval>>, MilpError> {
    let n = net.output_dim();
    let pairs: Vec<(usize, usize)> =
        (0..n).flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j))).collect();
    let mut gaps = vec![vec![Interval::point(0.0); n]; n];
    if pairs.is_empty() {
        return Ok(gaps);
    }
    let layers = difference_layers(net, &pairs);
    // With the differences merged into an affine last layer, a row of zero weights is the
    // constant difference of the biases, exactly (no rounding floor).
    let constant: Vec<Option<f64>> = match layers.last() {
        Some(Layer::Dense(d)) if layers.len() == net.layers.len() => {
            (0..pairs.len()).map(|r| d.weights.row(r).iter().all(|w| *w == 0.0).then_some(d.bias[r])).collect()
        }
        _ => vec![None; pairs.len()],
    };
    let diff_net = Network::new(format!("{} (output differences)", net.source), layers)
        .map_err(|e| MilpError::Bounds(e.to_string()))?;
    let (mut lo, mut hi) = (vec![f64::INFINITY; pairs.len()], vec![f64::NEG_INFINITY; pairs.len()]);
    for b in bound_batch(&diff_net, &split_box(input, opts.pieces), &opts.method) {
        let b = b?;
        for r in 0..pairs.len() {
            lo[r] = lo[r].min(b.lo[r]);
            hi[r] = hi[r].max(b.hi[r]);
        }
    }
    if outputs.len() != n {
        return Err(MilpError::Dimension { what: "output bounds".into(), found: outputs.len(), expected: n });
    }
    for (r, &(i, j)) in pairs.iter().enumerate() {
        if let Some(b) = constant[r] {
            gaps[i][j] = Interval::point(b);
            continue;
        }
        let plain = outputs[i].sub(&outputs[j]);
        let crown = Interval::new(lo[r], hi[r]);
        gaps[i][j] = if lo[r].is_finite() && hi[r].is_finite() {
            crown
                .intersect(&plain)
                .ok_or_else(|| MilpError::Bounds(format!("empty gap between outputs {i} and {j}")))?
        } else {
            plain
        };
    }
    Ok(gaps)
}

/// `a - b` when f64 subtraction is exact (TwoSum residual 0).
fn exact_sub(a: f64, b: f64) -> Option<f64> {
    let d = a - b;
    let bb = d - a;
    let err = (a - (d - bb)) + (-b - bb);
    (err == 0.0 && d.is_finite()).then_some(d)
}

/// The layers of `net` followed by the differences `s_i - s_j` of `pairs`: merged into the last
/// layer when it is affine and every difference of its weights and biases is exact in f64 (then
/// identical outputs have the difference 0 exactly, and bounds on it are `[0, 0]`), appended as a
/// layer of its own otherwise.
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

/// The plain interval gaps `[lo_i - hi_j, hi_i - lo_j]` (outward), for scores without a network.
pub fn interval_gaps(bounds: &[Interval]) -> Vec<Vec<Interval>> {
    bounds
        .iter()
        .enumerate()
        .map(|(i, bi)| {
            bounds.iter().enumerate().map(|(j, bj)| if i == j { Interval::point(0.0) } else { bi.sub(bj) }).collect()
        })
        .collect()
}

/// What [`encode_argmax`] added.
#[derive(Clone, Debug)]
pub struct EncodedArgmax {
    /// One 0/1-valued expression per score (a binary variable, or the constant 0 or 1 when the
    /// bounds decide); exactly one is 1.
    pub onehot: Vec<Expression>,
    /// The indices that may be chosen (the others were pruned by the bounds).
    pub candidates: Vec<usize>,
    /// The chosen index, `sum_i i * onehot_i`.
    pub index: Expression,
    /// Bounds of the chosen index.
    pub index_bounds: Interval,
    /// Whether the encoding admits a tie with a lower index (the closure of a strict comparison
    /// that the bounds could not settle): a solution there may not replay under the lowest-index
    /// rule.
    pub ties_possible: bool,
}

/// How [`encode_argmax`] treats the strict comparisons of the lowest-index rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Strictness {
    /// `s_i > s_j` (for `j < i`) is encoded as its closure `s_i >= s_j`: a superset of the real
    /// choices (a tie may pick the higher index), sound for a proof.
    Closure,
    /// `s_i > s_j` is encoded as `s_i >= s_j + gap`: a subset of the real choices (choices that win
    /// by less than `gap` are lost). Only for searching counterexamples, never for a proof.
    Gap(f64),
}

/// Encodes the simulator's argmax (`trestle_ir::sim::argmax`: the lowest index among the maximal
/// scores): one-hot binaries `o`, `sum o = 1`, and for the chosen `i`: `s_i >= s_j` for `j > i`,
/// `s_i > s_j` for `j < i` (as `strictness` says), each relaxed by big-M from `gaps` (sound
/// enclosures of `s_i - s_j`, e.g. [`score_gaps`] or [`interval_gaps`]) when `o_i = 0`.
///
/// Index `i` is pruned when the gaps show it can never be chosen: `s_i - s_j <= 0` everywhere for
/// some `j < i`, or `< 0` for some `j > i`. It is fixed when they show it always is.
pub fn encode_argmax(
    model: &mut MilpModel,
    scores: &[Expression],
    gaps: &[Vec<Interval>],
    strictness: Strictness,
) -> Result<EncodedArgmax, MilpError> {
    let n = scores.len();
    if gaps.len() != n || gaps.iter().any(|g| g.len() != n) || n == 0 {
        return Err(MilpError::Dimension { what: "argmax score gaps".into(), found: gaps.len(), expected: n.max(1) });
    }
    for (i, row) in gaps.iter().enumerate() {
        if let Some(g) = row.iter().find(|g| !g.lo.is_finite() || !g.hi.is_finite()) {
            return Err(MilpError::Unbounded { what: format!("argmax score {i} minus another"), lo: g.lo, hi: g.hi });
        }
    }
    // Can i beat j as the rule requires (strictly for j < i)? Must it?
    let can = |i: usize, j: usize| if j < i { gaps[i][j].hi > 0.0 } else { gaps[i][j].hi >= 0.0 };
    let must = |i: usize, j: usize| if j < i { gaps[i][j].lo > 0.0 } else { gaps[i][j].lo >= 0.0 };
    let candidates: Vec<usize> = (0..n).filter(|&i| (0..n).all(|j| j == i || can(i, j))).collect();
    let Some(&first) = candidates.first() else {
        return Err(MilpError::Bounds("argmax: the score bounds exclude every index".into()));
    };
    let mut onehot = vec![constant(0.0); n];
    if let Some(&fixed) = candidates.iter().find(|&&i| (0..n).all(|j| j == i || must(i, j))) {
        onehot[fixed] = constant(1.0);
        let k = fixed as f64;
        let index_bounds = Interval::point(k);
        return Ok(EncodedArgmax {
            onehot,
            candidates: vec![fixed],
            index: constant(k),
            index_bounds,
            ties_possible: false,
        });
    }
    let mut sum = Expression::default();
    let mut index = Expression::default();
    let mut ties_possible = false;
    for &i in &candidates {
        let o = model.binary();
        sum.add_mul(1.0, o);
        index.add_mul(i as f64, o);
        for j in (0..n).filter(|&j| j != i && !must(i, j)) {
            let low = gaps[i][j].lo;
            // o_i = 1 => s_i - s_j >= need;  o_i = 0 => s_i - s_j >= low (always true).
            let need = match strictness {
                Strictness::Gap(gap) if j < i => gap,
                _ => 0.0,
            };
            if j < i && need == 0.0 {
                ties_possible = true;
            }
            // s_i - s_j - (need - low) o_i >= low
            let lhs = scores[i].clone() - scores[j].clone() - (need - low) * o;
            model.add(lhs.geq(low));
        }
        onehot[i] = Expression::from(o);
    }
    model.add(sum.eq(1.0));
    let last = *candidates.last().expect("non-empty");
    Ok(EncodedArgmax {
        onehot,
        candidates,
        index,
        index_bounds: Interval::new(first as f64, last as f64),
        ties_possible,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_boxes_tile_the_box() {
        let b = InputBox::new(vec![0.0, -1.0, 2.0], vec![1.0, 3.0, 2.0]);
        for pieces in [1, 2, 5, 16, 256] {
            let parts = split_box(&b, pieces);
            assert!(!parts.is_empty() && parts.len() <= pieces.max(1), "{pieces}: {}", parts.len());
            // Total volume over the two wide dimensions is the box's; every part is inside it.
            let area: f64 = parts.iter().map(|p| (p.hi[0] - p.lo[0]) * (p.hi[1] - p.lo[1])).sum();
            assert!((area - 4.0).abs() < 1e-12, "{pieces}: area {area}");
            for p in &parts {
                assert!((0..3).all(|i| b.lo[i] <= p.lo[i] && p.lo[i] <= p.hi[i] && p.hi[i] <= b.hi[i]));
                assert_eq!((p.lo[2], p.hi[2]), (2.0, 2.0), "a point dimension is never split");
            }
        }
        // The widest dimension is split first.
        let two = split_box(&b, 2);
        assert_eq!(two[0].hi[1], 1.0);
    }
}
