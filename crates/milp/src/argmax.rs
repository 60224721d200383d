//! Argmax under the simulator's lowest-index rule (strict comparisons as their closure for
//! proofs), and sound enclosures of the score differences its big-M constants come from.

use crate::bounds::{BoundOptions, output_bounds_step};
use crate::error::MilpError;
use crate::model::{MilpModel, constant};
use good_lp::Expression;
use trestle_bounds::InputBox;
use trestle_ir::Interval;
use trestle_ir::network::Network;

/// Sound enclosures of the pairwise differences of a network's outputs over an input box:
/// `gaps[i][j]` contains every value of `s_i - s_j` (and `gaps[i][i] = [0, 0]`). Computed by
/// bounding the network followed by a difference layer ([`trestle_bounds::difference_network`],
/// which the bridge engine's argmax bounds use too; CROWN keeps the correlation the plain
/// intervals `[lo_i - hi_j, hi_i - lo_j]` lose: identical outputs get the gap `[0, 0]`), intersected
/// with those intervals of the sound `outputs` bounds, worst case over the sub-boxes of
/// [`crate::split_box`].
pub fn score_gaps(
    net: &Network,
    input: &InputBox,
    opts: &BoundOptions,
    outputs: &[Interval],
) -> Result<Vec<Vec<Interval>>, MilpError> {
    score_gaps_step(net, input, &[], opts, outputs)
}

/// [`score_gaps`] of one step of a network that may be recurrent, its previous hidden states in
/// the boxes `hidden` (one per recurrent layer; none for a feed-forward network).
pub fn score_gaps_step(
    net: &Network,
    input: &InputBox,
    hidden: &[InputBox],
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
    let diff = trestle_bounds::difference_network(net, &pairs)?;
    let (lo, hi) = output_bounds_step(&diff.network, input, hidden, opts)?;
    if outputs.len() != n {
        return Err(MilpError::Dimension { what: "output bounds".into(), found: outputs.len(), expected: n });
    }
    for (r, &(i, j)) in pairs.iter().enumerate() {
        if let Some(b) = diff.constant[r] {
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
    /// Every comparison the bounds leave open, `s_i >= s_j` included, is encoded as
    /// `s_i >= s_j + margin`: a smaller subset, whose solutions no solver tolerance (below
    /// `margin`) can tip to another index, so that they replay under the lowest-index rule. Only
    /// for searching runs, never for a proof.
    Margin(f64),
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
                Strictness::Margin(margin) => margin,
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
