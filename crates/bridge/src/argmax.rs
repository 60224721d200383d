//! Which outputs of a network can win an argmax over a box of inputs, under the one rule the whole
//! tool uses (`trestle_ir::sim::argmax`): the largest output, the lowest index among ties.
//!
//! Output `i` is chosen at an input only if it is strictly above every lower output and at least
//! every higher one. So `i` is ruled out on a box as soon as sound bounds show `q_i <= q_j` for
//! some `j < i` (a tie goes to `j`) or `q_i < q_j` for some `j > i`. Four tests, each sound under
//! rounding, each tried only on the pairs the previous ones leave open:
//! 1. the output intervals (`hi_i <= lo_j`, resp. `hi_i < lo_j`, compared exactly);
//! 2. an upper bound of the difference `q_i - q_j` itself (the bounding method on the network
//!    followed by the differences, met with the method run backward from the coefficients
//!    `e_i - e_j`: [`trestle_bounds::tightest_difference_bounds`], which keeps correlations the
//!    intervals lose; the MILP encodings' big-M constants come from the same difference network);
//! 3. exact ties: when rows `i` and `j` of the last layer have the same weights on every neuron that
//!    is not exactly 0 on the box, `q_i - q_j` is `b_i - b_j` before the activation, and the f64
//!    biases are compared exactly. Outward-rounded bounds never show `q_i - q_j <= 0` for outputs
//!    that are equal (a rounding margin stays above 0), so without this test a tie would count as
//!    possible for both indices instead of for the rule's winner only;
//! 4. exact maxima on affine pieces: when every ReLU has a fixed sign on the box (CROWN's
//!    outward-rounded pre-activation bounds), the network is one affine map there, and the maximum
//!    of `q_i - q_j` over the input box is computed in exact rational arithmetic from the f64
//!    weights. This decides ties at a point of the box (scores that meet on its boundary), which
//!    no outward-rounded bound can.

use crate::error::BridgeError;
use num_traits::{Signed, Zero};
use trestle_bounds::{InputBox, Method, OutputBounds};
use trestle_ir::Rational;
use trestle_ir::network::{Activation, DenseLayer, Layer, Network, Piece};
use trestle_ir::num::rational_from_f64;

/// Whether `i` loses to `j` wherever `q_i <= a` and `b <= q_j` (`a`, `b` sound bounds; with
/// `a` an upper bound of `q_i - q_j` and `b = 0` too): ties go to the lower index.
fn loses<T: PartialOrd>(i: usize, j: usize, a: T, b: T) -> bool {
    if j < i { a <= b } else { a < b }
}

fn bounds_error(net: &Network, e: impl std::fmt::Display) -> BridgeError {
    BridgeError::Bounds(format!("network {}: {e}", net.source))
}

/// `possible[i]`: output `i` may be the argmax somewhere on `input` (lowest index on ties).
/// `bounds` are sound output bounds of `net` on `input`; `method` bounds the pairwise differences.
pub fn possible_winners(
    net: &Network,
    input: &InputBox,
    bounds: &OutputBounds,
    method: &Method,
) -> Result<Vec<bool>, BridgeError> {
    winners_among(net, input, bounds, method, |_| true)
}

/// Whether output `i` may be the argmax somewhere on `input`: [`possible_winners`] for one output
/// (only the pairs `(i, j)` are bounded).
pub fn may_win(
    net: &Network,
    input: &InputBox,
    bounds: &OutputBounds,
    method: &Method,
    i: usize,
) -> Result<bool, BridgeError> {
    Ok(winners_among(net, input, bounds, method, |k| k == i)?[i])
}

/// [`possible_winners`] for the outputs `asked` selects (the others stay `true`, untested).
fn winners_among(
    net: &Network,
    input: &InputBox,
    bounds: &OutputBounds,
    method: &Method,
    asked: impl Fn(usize) -> bool,
) -> Result<Vec<bool>, BridgeError> {
    let n = bounds.lo.len();
    let mut possible = vec![true; n];
    let mut open = Vec::new();
    for (i, may_win) in possible.iter_mut().enumerate().filter(|(i, _)| asked(*i)) {
        for j in (0..n).filter(|&j| j != i) {
            if loses(i, j, bounds.hi[i], bounds.lo[j]) {
                *may_win = false;
            } else if bounds.lo[i] <= bounds.hi[j] {
                // Otherwise q_i > q_j everywhere and j never rules i out.
                open.push((i, j));
            }
        }
    }
    open.retain(|&(i, _)| possible[i]);
    if !open.is_empty() && *method != Method::Ibp {
        let (_, diff_hi) =
            trestle_bounds::tightest_difference_bounds(net, input, method, &open).map_err(|e| bounds_error(net, e))?;
        for (&(i, j), &hi) in open.iter().zip(&diff_hi) {
            if loses(i, j, hi, 0.0) {
                possible[i] = false;
            }
        }
        open.retain(|&(i, _)| possible[i]);
    }
    if !open.is_empty() {
        rule_out_exact_ties(net, input, method, &open, &mut possible)?;
        open.retain(|&(i, _)| possible[i]);
    }
    if !open.is_empty()
        && let Some(piece) = affine_piece(net, input)?
    {
        for &(i, j) in &open {
            if possible[i] && loses(i, j, difference_max(&piece, input, i, j), Rational::zero()) {
                possible[i] = false;
            }
        }
    }
    Ok(possible)
}

/// The affine piece of `net` on `input`: each layer with, per neuron, the linear piece its
/// activation follows on the whole box ([`Activation::piece_on`]: identity layers, ReLUs with
/// `lo >= 0` pass their pre-activation on, ReLUs with `hi <= 0` are 0, a leaky ReLU's negative
/// side is `alpha z`, a saturated clip its bound). `None` when some neuron may change piece on
/// the box (or is smooth), or a layer is recurrent.
fn affine_piece<'n>(net: &'n Network, input: &InputBox) -> Result<Option<AffinePiece<'n>>, BridgeError> {
    if net.layers.iter().any(|l| !matches!(l, Layer::Dense(_))) {
        return Ok(None);
    }
    let pre = trestle_bounds::preactivation_bounds(net, input).map_err(|e| bounds_error(net, e))?;
    if pre.len() != net.layers.len() {
        return Ok(None);
    }
    let mut piece = Vec::with_capacity(pre.len());
    for (layer, (lo, hi)) in net.layers.iter().zip(&pre) {
        let Layer::Dense(d) = layer else { return Ok(None) };
        if lo.len() != d.bias.len() {
            return Ok(None);
        }
        let mut pieces = Vec::with_capacity(lo.len());
        for (&l, &h) in lo.iter().zip(hi) {
            match d.activation.piece_on(l, h) {
                Some(p) => pieces.push(p),
                None => return Ok(None),
            }
        }
        piece.push((d, pieces));
    }
    Ok(Some(piece))
}

/// The dense layers of a network, each with the linear piece every neuron follows.
type AffinePiece<'n> = Vec<(&'n DenseLayer, Vec<Piece>)>;

/// The exact maximum of `q_i - q_j` over the input box, on the affine piece `active` (see
/// [`affine_piece`]): the coefficients `e_i - e_j` carried back through the layers in rationals.
fn difference_max(piece: &AffinePiece<'_>, input: &InputBox, i: usize, j: usize) -> Rational {
    let outputs = piece.last().map_or(0, |(d, _)| d.bias.len());
    let mut c = vec![Rational::zero(); outputs];
    c[i] = Rational::from_integer(1.into());
    c[j] = Rational::from_integer((-1).into());
    let mut constant = Rational::zero();
    for (d, pieces) in piece.iter().rev() {
        let mut back = vec![Rational::zero(); d.weights.cols];
        for (k, ck) in c.iter().enumerate().filter(|(_, ck)| !ck.is_zero()) {
            // y_k = slope (W_k x + b_k) + offset, every factor exact.
            let Piece { slope, offset } = pieces[k];
            constant += ck * rational_from_f64(offset);
            if slope == 0.0 {
                continue;
            }
            let ck = ck * rational_from_f64(slope);
            constant += &ck * rational_from_f64(d.bias[k]);
            for (col, &w) in d.weights.row(k).iter().enumerate().filter(|(_, w)| **w != 0.0) {
                back[col] += &ck * rational_from_f64(w);
            }
        }
        c = back;
    }
    c.iter().enumerate().fold(constant, |acc, (col, cj)| {
        let end = if cj.is_negative() { input.lo[col] } else { input.hi[col] };
        acc + cj * rational_from_f64(end)
    })
}

/// The third test of the module documentation, on the pairs still open.
fn rule_out_exact_ties(
    net: &Network,
    input: &InputBox,
    method: &Method,
    open: &[(usize, usize)],
    possible: &mut [bool],
) -> Result<(), BridgeError> {
    let Some(Layer::Dense(last)) = net.layers.last() else { return Ok(()) };
    let mut zero: Option<Vec<bool>> = None;
    for &(i, j) in open {
        let (wi, wj) = (last.weights.row(i), last.weights.row(j));
        if !possible[i] {
            continue;
        }
        if wi != wj && zero.is_none() {
            zero = Some(zero_neurons(net, input, method)?);
        }
        let is_zero = |k: usize| zero.as_ref().is_some_and(|z| z[k]);
        if !wi.iter().zip(wj).enumerate().all(|(k, (a, b))| a == b || is_zero(k)) {
            continue;
        }
        // A strictly increasing activation (identity, leaky ReLU with a positive slope, tanh,
        // sigmoid) keeps the order of b_i and b_j, strict or not; a non-decreasing one (ReLU,
        // clip) only the non-strict one; a leaky ReLU with a negative slope neither.
        let (bi, bj) = (last.bias[i], last.bias[j]);
        let ruled_out = match last.activation {
            Activation::Identity | Activation::Tanh | Activation::Sigmoid => loses(i, j, bi, bj),
            Activation::LeakyRelu { alpha } if alpha > 0.0 => loses(i, j, bi, bj),
            Activation::Relu | Activation::Clip { .. } => j < i && bi <= bj,
            Activation::LeakyRelu { alpha: 0.0 } => j < i && bi <= bj,
            Activation::LeakyRelu { .. } => false,
        };
        if ruled_out {
            possible[i] = false;
        }
    }
    Ok(())
}

/// Which inputs of the last layer are exactly 0 everywhere on the box, from the bounds of the
/// network without its last layer (a ReLU whose pre-activation is never positive outputs exactly 0,
/// and its bounds are then exactly [0, 0]).
fn zero_neurons(net: &Network, input: &InputBox, method: &Method) -> Result<Vec<bool>, BridgeError> {
    if net.layers.len() == 1 {
        return Ok(input.lo.iter().zip(&input.hi).map(|(&l, &h)| l == 0.0 && h == 0.0).collect());
    }
    let prefix = Network {
        source: net.source.clone(),
        layers: net.layers[..net.layers.len() - 1].to_vec(),
        notes: Vec::new(),
        trailing_softmax: None,
    };
    let b = trestle_bounds::bound(&prefix, input, method).map_err(|e| bounds_error(net, e))?;
    Ok(b.lo.iter().zip(&b.hi).map(|(&l, &h)| l == 0.0 && h == 0.0).collect())
}

/// The smallest and largest index that may win on `input` for any of the networks a controller may
/// run there (`bounds[k]` the output bounds of `nets[k]`): a sound hull of the argmax action.
pub fn winner_hull(
    nets: &[&Network],
    input: &InputBox,
    bounds: &[OutputBounds],
    method: &Method,
) -> Result<(usize, usize), BridgeError> {
    let mut first = usize::MAX;
    let mut last = 0;
    for (net, b) in nets.iter().zip(bounds) {
        let possible = possible_winners(net, input, b, method)?;
        for i in (0..possible.len()).filter(|&i| possible[i]) {
            first = first.min(i);
            last = last.max(i);
        }
    }
    if first == usize::MAX {
        // Some output wins at every input, and sound bounds never rule out the winner.
        return Err(BridgeError::Internal("every argmax index was ruled out on a box".into()));
    }
    Ok((first, last))
}
