//! Sound bounds for big-M constants, from `trestle_bounds`: every layer's pre-activations
//! ([`layer_bounds`], [`layer_bounds_step`]) and a network's outputs ([`output_bounds_step`]) over
//! an input box, the worst case over a grid of sub-boxes ([`split_box`]).
//!
//! Splitting is what makes the constants tight on low-dimensional inputs: a neuron's bound over the
//! whole box is the worst of its bounds over the sub-boxes, each of which the bounds crate computes
//! in one pass (all layers at once). A recurrent network is bounded one step at a time, its
//! previous hidden states being further inputs with their own boxes.

use crate::error::MilpError;
use crate::smooth::SmoothEncoding;
use trestle_bounds::{
    InputBox, LayerBounds, Method, bound_batch, bound_recurrent_step, layer_bounds_batch, method_for,
};
use trestle_core::Budget;
use trestle_ir::network::Network;

/// How pre-activation bounds are computed.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundOptions {
    pub method: Method,
    /// Largest number of sub-boxes the input box is split into: each neuron's bound is the worst
    /// over the sub-boxes (still sound for the whole box, and tighter when the input is
    /// low-dimensional). `1` bounds the box as a whole.
    pub pieces: usize,
    /// Encode a ReLU whose sign the bounds decide as the identity or zero (no binary). Off only to
    /// measure what that buys (the memoryful-agents paper's RMILP-only baseline): every ReLU then
    /// gets its binary.
    pub fix_stable: bool,
    /// The run's budget, checked between batches of sub-boxes ([`MilpError::Stopped`]) and by
    /// the encodings that use these options.
    pub budget: Budget,
    /// Tanh and sigmoid neurons: refused (the default: the encoding stays exact) or relaxed
    /// soundly ([`crate::smooth`]).
    pub smooth: SmoothEncoding,
}

impl Default for BoundOptions {
    fn default() -> BoundOptions {
        BoundOptions {
            method: Method::Crown,
            pieces: 256,
            fix_stable: true,
            budget: Budget::unlimited(),
            smooth: SmoothEncoding::Refuse,
        }
    }
}

/// Most sub-boxes an input box is split into ([`BoundOptions::pieces`]): `split_box` holds them
/// all at once (a few MB at this size; a billion took 25 GB), and each costs one pass of the bounds
/// over the network at every network copy an encoding makes (bounded in batches between checks
/// of the budget). Larger requests are refused by the engines, and cut to this here.
pub const MAX_PIECES: usize = 1 << 16;

/// Sub-boxes bounded between two checks of the budget.
const BATCH: usize = 64;

/// A grid of at most `pieces` sub-boxes covering `input` (widest dimensions split first; adjacent
/// sub-boxes share their faces, so the union is the box).
pub fn split_box(input: &InputBox, pieces: usize) -> Vec<InputBox> {
    let pieces = pieces.min(MAX_PIECES);
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

/// Sound pre-activation bounds of every layer of a feed-forward `net` over `input`: the worst over
/// the sub-boxes of [`split_box`] of the bounds crate's layer bounds. The method is the options'
/// where it bounds every activation of `net`, IBP otherwise ([`trestle_bounds::method_for`]; every
/// activation has a CROWN relaxation today, and any sound bounds give an exact encoding).
pub fn layer_bounds(net: &Network, input: &InputBox, opts: &BoundOptions) -> Result<Vec<LayerBounds>, MilpError> {
    let method = method_for(net, &opts.method);
    let mut worst: Option<Vec<LayerBounds>> = None;
    for batch in split_box(input, opts.pieces).chunks(BATCH) {
        opts.budget.check()?;
        for piece in layer_bounds_batch(net, batch, &method) {
            worst = Some(widen(worst, piece?));
        }
    }
    finite(worst.expect("split_box returns at least one box"), net)
}

/// [`layer_bounds`] of one step of a network that may be recurrent: `hidden` holds a box of the
/// previous hidden state of each recurrent layer (none for a feed-forward network). The joint box
/// `[input; hidden]` is split.
pub fn layer_bounds_step(
    net: &Network,
    input: &InputBox,
    hidden: &[InputBox],
    opts: &BoundOptions,
) -> Result<Vec<LayerBounds>, MilpError> {
    check_hidden(net, hidden)?;
    if hidden.is_empty() {
        return layer_bounds(net, input, opts);
    }
    let method = method_for(net, &opts.method);
    let mut worst: Option<Vec<LayerBounds>> = None;
    for (i, (x, h)) in joint_pieces(input, hidden, opts.pieces).into_iter().enumerate() {
        if i % BATCH == 0 {
            opts.budget.check()?;
        }
        let steps = trestle_bounds::layer_bounds_unrolled(net, std::slice::from_ref(&x), &h, &method)?;
        let step = steps.into_iter().next().expect("one step");
        worst = Some(widen(worst, step));
    }
    finite(worst.expect("split_box returns at least one box"), net)
}

/// Sound bounds `(lo, hi)` of the outputs of one step of `net` (recurrent or not, `hidden` as in
/// [`layer_bounds_step`]) over `input`, the worst over the sub-boxes.
pub fn output_bounds_step(
    net: &Network,
    input: &InputBox,
    hidden: &[InputBox],
    opts: &BoundOptions,
) -> Result<(Vec<f64>, Vec<f64>), MilpError> {
    check_hidden(net, hidden)?;
    let method = method_for(net, &opts.method);
    let n = net.output_dim();
    let (mut lo, mut hi) = (vec![f64::INFINITY; n], vec![f64::NEG_INFINITY; n]);
    let mut widen_by = |b_lo: &[f64], b_hi: &[f64]| {
        for i in 0..n {
            lo[i] = lo[i].min(b_lo[i]);
            hi[i] = hi[i].max(b_hi[i]);
        }
    };
    if hidden.is_empty() {
        for batch in split_box(input, opts.pieces).chunks(BATCH) {
            opts.budget.check()?;
            for b in bound_batch(net, batch, &method) {
                let b = b?;
                widen_by(&b.lo, &b.hi);
            }
        }
    } else {
        for (i, (x, h)) in joint_pieces(input, hidden, opts.pieces).into_iter().enumerate() {
            if i % BATCH == 0 {
                opts.budget.check()?;
            }
            let (b, _) = bound_recurrent_step(net, &x, &h, &method)?;
            widen_by(&b.lo, &b.hi);
        }
    }
    Ok((lo, hi))
}

fn check_hidden(net: &Network, hidden: &[InputBox]) -> Result<(), MilpError> {
    let expected = net.hidden_dims().len();
    if hidden.len() != expected {
        return Err(MilpError::Dimension {
            what: format!("hidden-state boxes of network {}", net.source),
            found: hidden.len(),
            expected,
        });
    }
    Ok(())
}

/// The sub-boxes of the joint box `[input; hidden]`, each split back into its parts.
fn joint_pieces(input: &InputBox, hidden: &[InputBox], pieces: usize) -> Vec<(InputBox, Vec<InputBox>)> {
    let mut joint = input.clone();
    for h in hidden {
        joint.lo.extend_from_slice(&h.lo);
        joint.hi.extend_from_slice(&h.hi);
    }
    split_box(&joint, pieces)
        .into_iter()
        .map(|piece| {
            let part = |from: usize, len: usize| {
                InputBox::new(piece.lo[from..from + len].to_vec(), piece.hi[from..from + len].to_vec())
            };
            let mut offset = input.lo.len();
            let hs = hidden
                .iter()
                .map(|h| {
                    let b = part(offset, h.lo.len());
                    offset += h.lo.len();
                    b
                })
                .collect();
            (part(0, input.lo.len()), hs)
        })
        .collect()
}

fn widen(worst: Option<Vec<LayerBounds>>, piece: Vec<LayerBounds>) -> Vec<LayerBounds> {
    match worst {
        None => piece,
        Some(mut w) => {
            for (a, b) in w.iter_mut().zip(&piece) {
                a.hull(b);
            }
            w
        }
    }
}

fn finite(bounds: Vec<LayerBounds>, net: &Network) -> Result<Vec<LayerBounds>, MilpError> {
    if let Some(k) = bounds.iter().position(|l| l.lo.iter().chain(&l.hi).any(|v| !v.is_finite())) {
        return Err(MilpError::Unbounded {
            what: format!("layer {} of {}", k + 1, net.source),
            lo: f64::NAN,
            hi: f64::NAN,
        });
    }
    Ok(bounds)
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
