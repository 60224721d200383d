//! Transfer rules of the activation at the end of a stage, neuron by neuron, one file per
//! operator (as auto_LiRPA's `BoundRelu`, `BoundTanh`, ...): `relu.rs`, `leaky.rs`, `clip.rs`,
//! `tanh.rs`, `sigmoid.rs` (the last two share the S-shaped rules of `s_shaped.rs`). Each has its
//! interval rule and the linear relaxation its backward (and forward) rule applies
//! (`envelope.rs` hands the same sound lines, of any slopes, to encodings that relax an
//! activation: the MILP engines' tanh and sigmoid neurons); this file
//! dispatches on the activation and holds what all of them share: the relaxation types, the
//! backward and forward rules for general lines, and the rounding bookkeeping.
//!
//! # A relaxation is a pair of lines, each made sound by its intercept
//! For `y = act(p)`, `p` in `[l, u]` (rigorous pre-activation bounds), a relaxation is
//! `s_l p + t_l <= y <= s_u p + t_u` on all of `[l, u]` in real arithmetic. The slopes are any
//! f64 values (chosen by the operator's rule, in f64, for tightness only); soundness rests on the
//! intercepts alone: for slope `s`, `t_u` is an upper bound of `sup_{[l, u]} (act(p) - s p)` and
//! `t_l` a lower bound of `inf_{[l, u]} (act(p) - s p)`, computed with the rigorous enclosures
//! of the IR ([`Interval`], backed by `trestle-real`) and directed rounding. Each operator file
//! says why its intercepts bound that supremum / infimum. ReLU keeps its own exact, vectorised
//! form (`relu.rs`), which is the same rule with the intercepts known in closed form.
//!
//! Neurons whose activation follows one linear piece on the whole box
//! ([`Activation::piece_on`]) are relaxed exactly by that piece (`y = slope p + offset` holds in
//! reals: the piece's numbers are the model's), identity and the identity piece as [`Pass`].
//!
//! # alpha-CROWN
//! Every line of a neuron is determined by its slope (the intercept is then the sound
//! extremum above), so the optimisable parameters are slopes, one per side, in the ranges
//! [`Lines::lower_range`] / [`Lines::upper_range`] the operator gives (ReLU's lower slope in
//! `[0, 1]` is the special case). The search runs in plain f64 with the extremum's location for
//! the gradient (envelope theorem: `d/ds (s p* + t(s)) = p* - z_touch`); the rigorous pass then
//! recomputes each chosen line's intercept soundly, so any slope the search returns is sound.
//!
//! [`Pass`]: Relaxation::Pass

mod clip;
mod envelope;
mod leaky;
mod lines;
mod relu;
mod s_shaped;
mod sigmoid;
mod tanh;

use crate::fp::{DotBound, UNIT_ROUNDOFF, add_up, product_error};
use trestle_ir::Interval;
use trestle_ir::network::{Activation, Matrix, Piece};
use trestle_ir::round::{UNDERFLOW_FLOOR, add_down, mul_down, mul_up};

pub use envelope::{SoundLine, slope_estimate, sound_lines};
use relu::{backward_upper_relu, forward_relu};

/// `y = slope p + intercept` (a bound of one side).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Line {
    pub slope: f64,
    pub intercept: f64,
}

/// Which side of the activation a line bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Upper,
    Lower,
}

/// The relaxation of a neuron of a non-ReLU activation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Lines {
    pub upper: Line,
    pub lower: Line,
    /// Slopes alpha-CROWN may choose for each side (`lo == hi`: fixed).
    pub upper_range: (f64, f64),
    pub lower_range: (f64, f64),
    /// The pre-activation bounds the lines are valid on (for lines of other slopes).
    pub lo: f64,
    pub hi: f64,
    /// `max(|lo|, |hi|) >= |p|`, for the products' rounding errors.
    pub magnitude: f64,
}

impl Lines {
    /// Whether alpha-CROWN has a slope to choose.
    pub fn optimisable(&self) -> bool {
        self.upper_range.0 < self.upper_range.1 || self.lower_range.0 < self.lower_range.1
    }

    /// The line of `side` (the relaxation's own, or the sound line of slope `slope` clamped to
    /// the side's range when given).
    pub fn line(&self, activation: Activation, side: Side, slope: Option<f64>) -> Line {
        let (own, range) = match side {
            Side::Upper => (self.upper, self.upper_range),
            Side::Lower => (self.lower, self.lower_range),
        };
        match slope.map(|s| s.clamp(range.0, range.1)) {
            Some(s) if s != own.slope => sound_line(activation, s, self.lo, self.hi, side),
            _ => own,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Relaxation {
    /// `y = p`: identity activation, or an activation on its identity piece on the whole box.
    Pass,
    /// `y = 0`: a ReLU inactive on the whole box.
    Zero,
    /// A ReLU across 0: `alpha p <= y <= slope p + intercept`, `|p| <= magnitude`.
    Unstable { slope: f64, intercept: f64, adaptive_alpha: f64, magnitude: f64 },
    /// Any other activation: two sound lines (see the module docs).
    Lines(Lines),
}

impl Relaxation {
    /// The relaxation of `act(p)` for `p` in `[lo, hi]` (finite, `lo <= hi`): CROWN's choice of
    /// lines, by the operator's rule.
    pub fn new(activation: Activation, lo: f64, hi: f64) -> Relaxation {
        match activation {
            Activation::Identity => Relaxation::Pass,
            Activation::Relu => relu::relaxation(lo, hi),
            Activation::LeakyRelu { alpha } => leaky::relaxation(alpha, lo, hi),
            Activation::Clip { lo: c_lo, hi: c_hi } => clip::relaxation(c_lo, c_hi, lo, hi),
            Activation::Tanh => tanh::relaxation(lo, hi),
            Activation::Sigmoid => sigmoid::relaxation(lo, hi),
        }
    }

    /// alpha-CROWN's starting slopes `(lower, upper)`: CROWN's (0 where there is nothing to
    /// choose).
    pub fn initial_slopes(&self) -> (f64, f64) {
        match *self {
            Relaxation::Unstable { adaptive_alpha, .. } => (adaptive_alpha, 0.0),
            Relaxation::Lines(l) => (l.lower.slope, l.upper.slope),
            _ => (0.0, 0.0),
        }
    }

    /// The slope ranges alpha-CROWN searches `(lower, upper)`, or `None` when fixed.
    pub fn ranges(&self) -> Option<((f64, f64), (f64, f64))> {
        match *self {
            Relaxation::Unstable { .. } => Some(((0.0, 1.0), (0.0, 0.0))),
            Relaxation::Lines(l) if l.optimisable() => Some((l.lower_range, l.upper_range)),
            _ => None,
        }
    }

    /// Slope and intercept applied to a coefficient `lambda` of an upper bound, in plain f64 for
    /// alpha-CROWN's search, with the search's slopes (`lower`, `upper`); and the location of
    /// the line's contact with the function (for the gradient).
    pub fn search_line(&self, activation: Activation, lambda: f64, lower: f64, upper: f64) -> (f64, f64, f64) {
        match *self {
            Relaxation::Pass => (1.0, 0.0, 0.0),
            Relaxation::Zero => (0.0, 0.0, 0.0),
            Relaxation::Unstable { slope, intercept, .. } if lambda >= 0.0 => (slope, intercept, 0.0),
            Relaxation::Unstable { .. } => (lower, 0.0, 0.0),
            Relaxation::Lines(lines) => {
                let (side, range, own) = if lambda >= 0.0 {
                    (Side::Upper, lines.upper_range, lines.upper)
                } else {
                    (Side::Lower, lines.lower_range, lines.lower)
                };
                if range.0 == range.1 {
                    return (own.slope, own.intercept, 0.0);
                }
                let s = if lambda >= 0.0 { upper } else { lower }.clamp(range.0, range.1);
                let (t, touch) = search_intercept(activation, s, lines.lo, lines.hi, side);
                (s, t, touch)
            }
        }
    }
}

/// The operator's piece on the box as a relaxation: exact (see the module docs).
fn exact(piece: Piece, lo: f64, hi: f64) -> Relaxation {
    if piece == Piece::IDENTITY {
        return Relaxation::Pass;
    }
    if piece == Piece::ZERO {
        return Relaxation::Zero;
    }
    let line = Line { slope: piece.slope, intercept: piece.offset };
    Relaxation::Lines(Lines {
        upper: line,
        lower: line,
        upper_range: (line.slope, line.slope),
        lower_range: (line.slope, line.slope),
        lo,
        hi,
        magnitude: lo.abs().max(hi.abs()),
    })
}

/// Lines of the given slopes with sound intercepts, and alpha-CROWN's slope ranges.
fn lines(
    activation: Activation,
    lo: f64,
    hi: f64,
    (upper, lower): (f64, f64),
    upper_range: (f64, f64),
    lower_range: (f64, f64),
) -> Relaxation {
    // A non-finite estimate (never expected) falls back to a flat line, sound like any other.
    let finite = |s: f64| if s.is_finite() { s } else { 0.0 };
    let (upper, lower) = (finite(upper), finite(lower));
    Relaxation::Lines(Lines {
        upper: sound_line(activation, upper, lo, hi, Side::Upper),
        lower: sound_line(activation, lower, lo, hi, Side::Lower),
        upper_range,
        lower_range,
        lo,
        hi,
        magnitude: lo.abs().max(hi.abs()),
    })
}

/// The line of slope `slope` bounding `act` on `[lo, hi]` from `side`, its intercept sound
/// (module docs; each operator's `sound_intercept` says why).
pub(crate) fn sound_line(activation: Activation, slope: f64, lo: f64, hi: f64, side: Side) -> Line {
    let intercept = match activation {
        Activation::Identity | Activation::Relu | Activation::LeakyRelu { .. } | Activation::Clip { .. } => {
            piecewise_sound_intercept(activation, &kinks(activation), slope, lo, hi, side)
        }
        Activation::Tanh => s_shaped::sound_intercept::<tanh::Tanh>(slope, lo, hi, side),
        Activation::Sigmoid => s_shaped::sound_intercept::<sigmoid::Sigmoid>(slope, lo, hi, side),
    };
    Line { slope, intercept }
}

/// `sup` (upper side) or `inf` (lower side) of `act(z) - slope z` over `[lo, hi]` in plain f64,
/// and where it is attained: alpha-CROWN's search only.
pub(crate) fn search_intercept(activation: Activation, slope: f64, lo: f64, hi: f64, side: Side) -> (f64, f64) {
    match activation {
        Activation::Tanh => s_shaped::search_intercept::<tanh::Tanh>(slope, lo, hi, side),
        Activation::Sigmoid => s_shaped::search_intercept::<sigmoid::Sigmoid>(slope, lo, hi, side),
        _ => {
            let candidates = piecewise_candidates(&kinks(activation), lo, hi);
            best_of(candidates.iter().map(|&z| (activation.apply_f64(z) - slope * z, z)), side)
        }
    }
}

/// The points where a piecewise-linear activation changes slope.
fn kinks(activation: Activation) -> Vec<f64> {
    match activation {
        Activation::Relu | Activation::LeakyRelu { .. } => vec![0.0],
        Activation::Clip { lo, hi } => [lo, hi].into_iter().filter(|k| k.is_finite()).collect(),
        _ => Vec::new(),
    }
}

/// `lo`, `hi` and the kinks strictly between them.
fn piecewise_candidates(kinks: &[f64], lo: f64, hi: f64) -> Vec<f64> {
    let mut points = vec![lo, hi];
    points.extend(kinks.iter().copied().filter(|&k| lo < k && k < hi));
    points
}

/// The largest (upper) or smallest (lower) value, with its location.
fn best_of(values: impl Iterator<Item = (f64, f64)>, side: Side) -> (f64, f64) {
    let mut best = (if side == Side::Upper { f64::NEG_INFINITY } else { f64::INFINITY }, 0.0);
    for (v, z) in values {
        let better = match side {
            Side::Upper => v > best.0,
            Side::Lower => v < best.0,
        };
        if better {
            best = (v, z);
        }
    }
    best
}

/// Sound intercept of a piecewise-linear activation: `g(z) = act(z) - slope z` is linear between
/// consecutive kinks, so on `[lo, hi]` its supremum and infimum are attained at `lo`, `hi` or a
/// kink inside. Each `g` there is enclosed by interval arithmetic (the activation's exact interval
/// rule at a point, the product rounded outward), and the extreme end taken.
fn piecewise_sound_intercept(activation: Activation, kinks: &[f64], slope: f64, lo: f64, hi: f64, side: Side) -> f64 {
    let s = Interval::point(slope);
    let values = piecewise_candidates(kinks, lo, hi).into_iter().map(|z| {
        let at = Interval::point(z);
        at.activate(&activation).sub(&s.mul(&at))
    });
    match side {
        Side::Upper => values.map(|g| g.hi).fold(f64::NEG_INFINITY, f64::max),
        Side::Lower => values.map(|g| g.lo).fold(f64::INFINITY, f64::min),
    }
}

/// Candidate slopes of a piecewise-linear activation's unstable neuron: its pieces' slopes and
/// the secants between `lo`, the kinks inside and `hi`. For each side the rule keeps the one
/// whose sound line encloses the least area over `[lo, hi]` (the line's value at the midpoint):
/// for a convex function (ReLU, leaky ReLU with `alpha <= 1`) that is the chord above and, below,
/// CROWN's adaptive choice (slope 1 when `u > -l`); alpha-CROWN searches between the smallest
/// and largest candidate.
fn piecewise_relaxation(activation: Activation, piece_slopes: &[f64], lo: f64, hi: f64) -> Relaxation {
    let mut points = piecewise_candidates(&kinks(activation), lo, hi);
    points.sort_by(f64::total_cmp);
    let secant = |a: f64, b: f64| (activation.apply_f64(b) - activation.apply_f64(a)) / (b - a);
    let mut slopes: Vec<f64> = piece_slopes.to_vec();
    slopes.push(secant(lo, hi));
    slopes.extend(points.windows(2).filter(|w| w[0] < w[1]).map(|w| secant(w[0], w[1])));
    for p in &points[1..points.len() - 1] {
        slopes.push(secant(lo, *p));
        slopes.push(secant(*p, hi));
    }
    slopes.retain(|s| s.is_finite());
    let mid = 0.5 * lo + 0.5 * hi;
    let at_mid = |s: f64, side| s * mid + search_intercept(activation, s, lo, hi, side).0;
    let pick = |side| {
        let mut best = slopes[0];
        for &s in &slopes[1..] {
            let (v, b) = (at_mid(s, side), at_mid(best, side));
            if (side == Side::Upper && v < b) || (side == Side::Lower && v > b) {
                best = s;
            }
        }
        best
    };
    let range = (
        slopes.iter().copied().fold(f64::INFINITY, f64::min),
        slopes.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    lines(activation, lo, hi, (pick(Side::Upper), pick(Side::Lower)), range, range)
}

/// Interval rule: `act` applied to `[lo, hi]` by the operator's file (the IR's one definition,
/// [`Interval::activate`]: exact for ReLU, identity and clip, rounded outward for leaky ReLU,
/// `trestle-real`'s rigorous enclosures for tanh and sigmoid).
pub(crate) fn interval(activation: Activation, lo: f64, hi: f64) -> (f64, f64) {
    let image = match activation {
        Activation::Identity => Interval::new(lo, hi),
        Activation::Relu => relu::interval(lo, hi),
        Activation::LeakyRelu { alpha } => leaky::interval(alpha, lo, hi),
        Activation::Clip { lo: c_lo, hi: c_hi } => clip::interval(c_lo, c_hi, lo, hi),
        Activation::Tanh => tanh::interval(lo, hi),
        Activation::Sigmoid => sigmoid::interval(lo, hi),
    };
    (image.lo, image.hi)
}

/// The relaxations of a stage's block neurons, and what the backward rules need about them.
#[derive(Clone, Debug)]
pub(crate) struct StageRelaxation {
    pub activation: Activation,
    pub neurons: Vec<Relaxation>,
    /// ReLU stages: the arrays of the vectorised rule (`relu.rs`).
    pub(super) relu: Option<relu::ReluArrays>,
    /// Other stages: the arrays of the rule with CROWN's own lines (`lines.rs`).
    lines: Option<lines::LinesArrays>,
    /// Neurons whose lines are not exact multipliers (ReLU: unstable; others: every `Lines`), and
    /// the sum of their magnitudes rounded up: the product-error bound needs both.
    inexact: usize,
    pub inexact_magnitude_sum: f64,
    /// Neurons alpha-CROWN has a slope to choose for.
    optimisable: usize,
    /// Error bounds of sums over this stage's neurons (dot products of at most that length).
    pub(super) sum_bound: DotBound,
}

impl StageRelaxation {
    pub fn new(activation: Activation, pre_lo: &[f64], pre_hi: &[f64]) -> StageRelaxation {
        let neurons: Vec<Relaxation> =
            pre_lo.iter().zip(pre_hi).map(|(&lo, &hi)| Relaxation::new(activation, lo, hi)).collect();
        let magnitude = |r: &Relaxation| match r {
            Relaxation::Unstable { magnitude, .. } => Some(*magnitude),
            Relaxation::Lines(l) => Some(l.magnitude),
            _ => None,
        };
        let inexact = neurons.iter().filter(|r| magnitude(r).is_some()).count();
        let inexact_magnitude_sum = neurons.iter().filter_map(magnitude).fold(0.0, add_up);
        let optimisable = neurons
            .iter()
            .filter(|r| match r {
                Relaxation::Unstable { .. } => true,
                Relaxation::Lines(l) => l.optimisable(),
                _ => false,
            })
            .count();
        let relu = (activation == Activation::Relu).then(|| relu::ReluArrays::new(&neurons));
        let lines = (activation != Activation::Relu).then(|| lines::LinesArrays::new(&neurons));
        StageRelaxation {
            activation,
            sum_bound: DotBound::new(neurons.len()),
            neurons,
            relu,
            lines,
            inexact,
            inexact_magnitude_sum,
            optimisable,
        }
    }

    /// Neurons alpha-CROWN optimises a slope of.
    pub fn optimisable_count(&self) -> usize {
        self.optimisable
    }
}

/// Backward rule for upper bounds. Each row `i` of `lambda` (over the stage output
/// `[act(p); copies]`) satisfies `f_i <= lambda_i . y + c_i`; on return its first
/// `neurons.len()` entries are over `p` instead and `constant` has absorbed the relaxation
/// intercepts and rounding errors, so the same inequality holds with `y` replaced by
/// `[p; copies]`.
///
/// `alphas` (alpha-CROWN) holds per row the chosen slopes: lower ones in the first
/// `neurons.len()` columns, upper ones in the next. For `lambda_ir >= 0` the upper line is used,
/// otherwise the lower one. The new coefficient `d = fl(lambda_ir s)` differs from the exact
/// product by at most `U |d| + UNDERFLOW_FLOOR`, which multiplied by `|p_r| <= magnitude_r` is
/// added to the constant. The intercept terms `lambda_ir t_r` (any signs) form a dot product of
/// the stage's length, summed in round-to-nearest and bounded by Higham's a-priori bound.
pub(crate) fn backward_upper(
    relax: &StageRelaxation,
    alphas: Option<&Matrix>,
    lambda: &mut Matrix,
    constant: &mut [f64],
) {
    if let Some(arrays) = &relax.relu {
        return backward_upper_relu(relax, arrays, alphas, lambda, constant);
    }
    let width = lambda.cols;
    let n = relax.neurons.len();
    for (i, c) in constant.iter_mut().enumerate() {
        let row = &mut lambda.data[i * width..i * width + n];
        if alphas.is_none()
            && let Some(arrays) = &relax.lines
        {
            let (intercepts, intercepts_abs, inexact_abs) = arrays.row(row);
            *c = add_up(*c, row_error(relax, intercepts, intercepts_abs, inexact_abs));
            continue;
        }
        let (mut intercepts, mut intercepts_abs, mut inexact_abs) = (0.0, 0.0, 0.0);
        for (r, (l, relaxation)) in row.iter_mut().zip(&relax.neurons).enumerate() {
            match *relaxation {
                Relaxation::Pass => {}
                Relaxation::Zero => *l = 0.0,
                Relaxation::Unstable { .. } => unreachable!("ReLU neurons only in ReLU stages"),
                Relaxation::Lines(lines) => {
                    let side = if *l >= 0.0 { Side::Upper } else { Side::Lower };
                    let chosen = alphas.map(|a| a.get(i, if side == Side::Upper { n + r } else { r }));
                    let line = lines.line(relax.activation, side, chosen);
                    let d = *l * line.slope;
                    let t = *l * line.intercept;
                    intercepts += t;
                    intercepts_abs += t.abs();
                    if line.slope != 0.0 && line.slope != 1.0 {
                        inexact_abs += d.abs() * lines.magnitude;
                    }
                    *l = d;
                }
            }
        }
        *c = add_up(*c, row_error(relax, intercepts, intercepts_abs, inexact_abs));
    }
}

/// What a row of [`backward_upper`] adds to its constant: the intercepts' round-to-nearest sum
/// with the bound of its error, and the bound of the products' errors.
fn row_error(relax: &StageRelaxation, intercepts: f64, intercepts_abs: f64, inexact_abs: f64) -> f64 {
    let sum_error = if relax.inexact == 0 { 0.0 } else { relax.sum_bound.error(intercepts_abs) };
    let err = product_error(inexact_abs, relax.inexact, relax.inexact_magnitude_sum);
    add_up(intercepts, add_up(sum_error, err))
}

/// Forward rule: from linear bounds `lo_p(x) <= p <= up_p(x)` (rows over `[x; 1]`) of the block
/// neurons, linear bounds of `act(p)`, in place. A line `s p + t` of the upper side becomes
/// `s up_p(x) + t` when `s >= 0` and `s lo_p(x) + t` otherwise (the lower side the other way
/// round). Coefficients are rounded to nearest, each off by at most `U |fl| + floor`, which times
/// `|x_k|` summed goes to the constant; the constant itself is computed by directed operations.
pub(crate) fn forward(relax: &StageRelaxation, x_magnitude: &[f64], lower: &mut Matrix, upper: &mut Matrix) {
    if relax.relu.is_some() {
        return forward_relu(relax, x_magnitude, lower, upper);
    }
    let n_in = x_magnitude.len();
    let x_magnitude_sum = x_magnitude.iter().copied().fold(0.0, add_up);
    let dot_bound = DotBound::new(n_in);
    for (r, relaxation) in relax.neurons.iter().enumerate() {
        let span = r * (n_in + 1)..(r + 1) * (n_in + 1);
        match *relaxation {
            Relaxation::Pass => {}
            Relaxation::Zero => {
                lower.data[span.clone()].fill(0.0);
                upper.data[span].fill(0.0);
            }
            Relaxation::Unstable { .. } => unreachable!("ReLU neurons only in ReLU stages"),
            Relaxation::Lines(lines) => {
                let (lo_row, up_row) = (lower.data[span.clone()].to_vec(), upper.data[span.clone()].to_vec());
                let scaled = |line: Line, src: &[f64], out: &mut [f64], side: Side| {
                    let mut abs = 0.0;
                    for ((o, &a), m) in out[..n_in].iter_mut().zip(&src[..n_in]).zip(x_magnitude) {
                        *o = line.slope * a;
                        abs += o.abs() * m;
                    }
                    let err = add_up(
                        mul_up(UNIT_ROUNDOFF, dot_bound.nonneg_upper(abs)),
                        mul_up(UNDERFLOW_FLOOR, x_magnitude_sum),
                    );
                    out[n_in] = match side {
                        Side::Upper => add_up(add_up(mul_up(line.slope, src[n_in]), line.intercept), err),
                        Side::Lower => add_down(add_down(mul_down(line.slope, src[n_in]), line.intercept), -err),
                    };
                };
                let up_src = if lines.upper.slope >= 0.0 { &up_row } else { &lo_row };
                let lo_src = if lines.lower.slope >= 0.0 { &lo_row } else { &up_row };
                scaled(lines.upper, up_src, &mut upper.data[span.clone()], Side::Upper);
                scaled(lines.lower, lo_src, &mut lower.data[span], Side::Lower);
            }
        }
    }
}
