//! A sound MILP relaxation of tanh and sigmoid neurons, which have no exact encoding.
//!
//! For `y = f(p)` with sound pre-activation bounds `l <= p <= u` (the bounds every encoding of
//! this crate computes, [`crate::bounds`]), the neuron becomes rows every true `(p, f(p))`
//! satisfies, so the model's projection contains every real run and its infeasibility (or its
//! bound) stays evidence as for ReLU networks; a solution is only a candidate, since its `y` may
//! sit anywhere between the lines:
//! * `y` in the rigorous image `f([l, u])` (its variable's bounds);
//! * on all of `[l, u]`, CROWN's two lines and the upper and lower lines of the slopes `f'(z)` at
//!   spread points `z` and of the chord (no binary): the lines come from
//!   [`trestle_bounds::sound_lines`], each intercept the rigorous extremum of `f(p) - s p` over
//!   the interval, so every line holds in real arithmetic;
//! * refined ([`SmoothEncoding::Relax`] with more than one piece for the neuron): `[l, u]` cut into
//!   sub-intervals (0, where the curvature changes sign, always a cut), one binary `b_k` per
//!   piece, `sum b_k = 1`, `sum l_k b_k <= p <= sum u_k b_k`, and each piece's own lines switched
//!   on by its binary with a big-M constant `M >= sup (y - s p - t)` over `[l, u] x f([l, u])`
//!   (outward-rounded interval arithmetic; the row's right-hand side `t + M` rounded up). The
//!   piece holding the true `p` satisfies its lines, the others are slack by `M`: sound for any
//!   cut, tighter as the pieces shrink.
//!
//! The rows are plain data ([`SmoothRows`]) before they become model constraints, so that a test
//! checks exactly the numbers HiGHS is given against rigorous enclosures of `f`. Every relaxed
//! neuron is recorded in the model ([`crate::MilpModel::relaxed_neurons`]) so that a caller can
//! see which neurons a solution used the relaxation's slack on (its `y` far from `f(p)`) and
//! refine those ([`Refinement`]).

use crate::error::MilpError;
use crate::model::MilpModel;
use good_lp::{Expression, Variable};
use std::collections::BTreeMap;
use std::sync::Arc;
use trestle_bounds::{slope_estimate, sound_lines};
use trestle_ir::Interval;
use trestle_ir::network::Activation;
use trestle_ir::round::add_up;

/// How tanh and sigmoid neurons are encoded.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum SmoothEncoding {
    /// Refused ([`MilpError::Unsupported`]): the encoding stays exact, as the inductiveness check
    /// and bounded CTL need.
    #[default]
    Refuse,
    /// Relaxed soundly (module docs): a solution is a candidate only.
    Relax(Refinement),
}

/// Pieces per relaxed neuron: `pieces` for every neuron (1: lines only, no binary), more for the
/// neurons named in `refined` by their index in the model ([`RelaxedNeuron::index`]; the order in
/// which an encoding relaxes them, the same for every build of the same unrolling).
#[derive(Clone, Debug, PartialEq)]
pub struct Refinement {
    pub pieces: usize,
    pub refined: Arc<BTreeMap<usize, usize>>,
}

impl Default for Refinement {
    fn default() -> Refinement {
        Refinement { pieces: 1, refined: Arc::new(BTreeMap::new()) }
    }
}

impl Refinement {
    /// The pieces of neuron `index`.
    pub fn pieces_of(&self, index: usize) -> usize {
        self.refined.get(&index).copied().unwrap_or(self.pieces).clamp(1, MAX_PIECES_PER_NEURON)
    }
}

/// Most sub-intervals of one neuron (each costs a binary and a dozen rows).
pub const MAX_PIECES_PER_NEURON: usize = 64;

/// A relaxed neuron of a model: its pre-activation (an expression of the model), its output
/// variable, its bounds and how many pieces it was cut into.
#[derive(Clone, Debug)]
pub struct RelaxedNeuron {
    pub index: usize,
    pub activation: Activation,
    pub pre: Expression,
    pub out: Variable,
    pub lo: f64,
    pub hi: f64,
    pub pieces: usize,
}

/// `p p_coef + y y_coef + sum_k coef_k b_k <= rhs` over the neuron's pre-activation `p`, output
/// `y` and piece binaries `b_k`.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub p: f64,
    pub y: f64,
    pub b: Vec<(usize, f64)>,
    pub rhs: f64,
}

/// The relaxation of one neuron as data: `y`'s bounds, the pieces (one: no binary) and the rows.
#[derive(Clone, Debug, PartialEq)]
pub struct SmoothRows {
    pub image: Interval,
    pub pieces: Vec<(f64, f64)>,
    pub rows: Vec<Row>,
}

/// Points whose tangent slopes the lines over the whole interval take (fractions of it).
const WHOLE_POINTS: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];
/// The same for each piece.
const PIECE_POINTS: [f64; 3] = [0.0, 0.5, 1.0];

/// The rows of `y = act(p)`, `p` in `[lo, hi]` (finite, `lo <= hi`; tanh or sigmoid), cut into
/// `pieces` sub-intervals (plus one at 0 when 0 is inside and not already a cut).
pub fn relax_neuron(activation: Activation, lo: f64, hi: f64, pieces: usize) -> SmoothRows {
    let image = Interval::new(lo, hi).activate(&activation);
    let mut rows = Vec::new();
    let push_lines = |rows: &mut Vec<Row>, a: f64, b: f64, points: &[f64], piece: Option<(usize, f64, f64)>| {
        let mut slopes: Vec<f64> = points
            .iter()
            .filter_map(|&f| slope_estimate(activation, if f == 1.0 { b } else { a + (b - a) * f }))
            .collect();
        if b > a {
            slopes.push((activation.apply_f64(b) - activation.apply_f64(a)) / (b - a));
        }
        for line in sound_lines(activation, a, b, &slopes) {
            // Upper: y - s p <= t; lower: s p - y <= -t (the same numbers, negated exactly).
            let (p, y, t) =
                if line.upper { (-line.slope, 1.0, line.intercept) } else { (line.slope, -1.0, -line.intercept) };
            match piece {
                None => rows.push(Row { p, y, b: Vec::new(), rhs: t }),
                Some((k, lo, hi)) => {
                    // M >= sup (p_coef p + y_coef y - t) over the whole box, so the row holds
                    // there whatever b_k when it reads `... + M b_k <= t + M`.
                    let excess = Interval::point(p)
                        .mul(&Interval::new(lo, hi))
                        .add(&Interval::point(y).mul(&image))
                        .sub(&Interval::point(t))
                        .hi
                        .max(0.0);
                    if excess.is_finite() {
                        rows.push(Row { p, y, b: vec![(k, excess)], rhs: add_up(t, excess) });
                    }
                }
            }
        }
    };
    push_lines(&mut rows, lo, hi, &WHOLE_POINTS, None);
    let cuts = cuts(lo, hi, pieces);
    if cuts.len() > 1 {
        // One piece chosen, and p inside it.
        let all = |c: f64| cuts.iter().enumerate().map(|(k, _)| (k, c)).collect::<Vec<_>>();
        rows.push(Row { p: 0.0, y: 0.0, b: all(1.0), rhs: 1.0 });
        rows.push(Row { p: 0.0, y: 0.0, b: all(-1.0), rhs: -1.0 });
        rows.push(Row { p: 1.0, y: 0.0, b: cuts.iter().enumerate().map(|(k, c)| (k, -c.1)).collect(), rhs: 0.0 });
        rows.push(Row { p: -1.0, y: 0.0, b: cuts.iter().enumerate().map(|(k, c)| (k, c.0)).collect(), rhs: 0.0 });
        for (k, &(a, b)) in cuts.iter().enumerate() {
            push_lines(&mut rows, a, b, &PIECE_POINTS, Some((k, lo, hi)));
        }
    }
    SmoothRows { image, pieces: cuts, rows }
}

/// `[lo, hi]` cut into `pieces` equal parts and at 0 (adjacent parts share their ends, so they
/// cover it); one part when it is (nearly) a point.
fn cuts(lo: f64, hi: f64, pieces: usize) -> Vec<(f64, f64)> {
    let width = hi - lo;
    if pieces <= 1 || width.is_nan() || width <= 1e-9 * (1.0 + lo.abs().max(hi.abs())) {
        return vec![(lo, hi)];
    }
    let mut points: Vec<f64> = (0..=pieces)
        .map(|k| match k {
            0 => lo,
            k if k == pieces => hi,
            k => lo + width * (k as f64 / pieces as f64),
        })
        .collect();
    if lo < 0.0 && 0.0 < hi {
        points.push(0.0);
    }
    points.sort_by(f64::total_cmp);
    points.dedup();
    points.windows(2).map(|w| (w[0], w[1])).collect()
}

/// Encodes `y = act(z)` for `z` in `[l, u]` by [`relax_neuron`] with the pieces `refinement`
/// gives this neuron, records it in the model and returns `y`.
pub(crate) fn encode_relaxed(
    model: &mut MilpModel,
    z: Expression,
    l: f64,
    u: f64,
    activation: Activation,
    refinement: &Refinement,
    what: &str,
) -> Result<Expression, MilpError> {
    let index = model.relaxed_neurons().len();
    let pieces = refinement.pieces_of(index);
    let relaxed = relax_neuron(activation, l, u, pieces);
    // The pre-activation named once (its bounds are the sound [l, u]: nothing is cut), so that
    // the dozen rows below hold two or three entries each instead of the layer's fan-in.
    let p = model.continuous(l, u, what)?;
    model.add((z - Expression::from(p)).eq(0.0));
    let z = Expression::from(p);
    let y = model.continuous(relaxed.image.lo, relaxed.image.hi, what)?;
    let binaries: Vec<Variable> =
        if relaxed.pieces.len() > 1 { relaxed.pieces.iter().map(|_| model.binary()).collect() } else { Vec::new() };
    for row in &relaxed.rows {
        let mut e = Expression::default();
        if row.p != 0.0 {
            e.add_mul(row.p, z.clone());
        }
        if row.y != 0.0 {
            e.add_mul(row.y, y);
        }
        for &(k, c) in &row.b {
            if c != 0.0 {
                e.add_mul(c, binaries[k]);
            }
        }
        model.add(e.leq(row.rhs));
    }
    model.record_relaxed(RelaxedNeuron {
        index,
        activation,
        pre: z,
        out: y,
        lo: l,
        hi: u,
        pieces: relaxed.pieces.len(),
    });
    Ok(Expression::from(y))
}

/// The relaxed neurons whose output at a solution is farther than `gap` from `act` of its
/// pre-activation (f64; for choosing what to refine, never a bound), by index.
pub fn loose_neurons(model: &MilpModel, values: &[f64], gap: f64) -> Vec<usize> {
    model
        .relaxed_neurons()
        .iter()
        .filter(|n| {
            let p = model.eval(&n.pre, values).clamp(n.lo, n.hi);
            (model.value(n.out, values) - n.activation.apply_f64(p)).abs() > gap
        })
        .map(|n| n.index)
        .collect()
}
