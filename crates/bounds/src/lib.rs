//! Sound output bounds of networks over input boxes.
//!
//! Given a [`Network`] and a box, [`bound`] returns a box containing every output and, for the
//! linear methods, linear bounds `A_l x + c_l <= f(x) <= A_u x + c_u` valid on the whole box, which
//! the bridge engine substitutes into environment equations. Four methods: interval bound
//! propagation ([`Method::Ibp`]), CROWN backward linear relaxation ([`Method::Crown`]), CROWN with
//! optimised relaxation slopes ([`Method::AlphaCrown`]; only the final backward pass is optimised,
//! intermediate bounds stay CROWN's) and forward-mode linear relaxation ([`Method::Forward`], what
//! the original compositional tool used). [`bound_affine_of`] bounds `C_out f(x) + C_in x + c`
//! directly (a certificate checker re-verifies stored linear bounds with it), and
//! [`bound_recurrent_step`] / [`bound_unrolled`] handle Elman networks. [`layer_bounds`] and
//! [`layer_bounds_unrolled`] expose the intermediate bounds each method computes on the way: the
//! pre-activation box of every layer (of every step), what exact encodings take their big-M
//! constants and fixed ReLU phases from.
//!
//! # Activations
//! Every method bounds every activation of the IR: identity, ReLU, leaky ReLU and clip (exact on
//! a box where one piece applies, triangles across kinks), tanh and sigmoid (IBP by the rigorous
//! enclosures of `trestle-real`; CROWN, alpha-CROWN and forward by auto_LiRPA's tangent and secant
//! lines, each intercept made sound by rigorous evaluation: `relax/s_shaped.rs`). What each method
//! handles is still one table (`support.rs`, [`supports`]) every entry point checks first, so an
//! activation without a rule is refused with [`BoundsError::Unsupported`], never bounded.
//! Bounding a network says nothing about deciding it exactly: Z3 refuses tanh and sigmoid; the
//! MILP engines that accept them relax each neuron by the sound lines [`sound_lines`] hands out
//! (CROWN's, and lines of any further slopes, their intercepts sound by the same argument).
//!
//! # Shape
//! As in auto_LiRPA, each operator has one file holding its transfer rules (interval, backward,
//! forward): `dense.rs` for the affine block of a stage, `relax/` for its activation (one file
//! per activation: `relu.rs`, `leaky.rs`, `clip.rs`, `tanh.rs`, `sigmoid.rs`). Each method
//! is one engine file walking the stages (`ibp.rs`, `crown.rs`, `alpha.rs`, `forward.rs`); the
//! optimisable slopes are state of an alpha-CROWN run, not of the network. Engines do not walk the
//! IR but a graph of stages (affine block, activation, exact pass-through copies; `graph.rs`) that
//! borrows the IR's weights; recurrent networks become such graphs by taking previous hidden states
//! (and, unrolled, every step's input) as extra inputs (`recurrent.rs`). Backward passes only ever
//! compute upper bounds (a lower bound is minus the upper bound of the negation), which halves the
//! rounding arguments. Pre-activation bounds are refined by CROWN only for neurons IBP leaves
//! unstable: a stable neuron's relaxation is exact whatever its bounds, so this changes nothing but
//! the cost.
//!
//! # Soundness
//! Bounds are exact statements about the f64 values returned; no tolerance is implied.
//! * Weights are the IR's f64 values, used as they are.
//! * The hot kernels run in round-to-nearest; their error is bounded a priori (Higham: a dot
//!   product of length n is off by at most `gamma(n) sum |a_i b_i|` plus an underflow floor per
//!   product; `fp.rs`) and added, rounded up, to the constant term of an upper bound (subtracted
//!   from a lower one). Everything else uses directed rounding (`trestle_ir::round`, or short
//!   non-negative chains inflated by a proven safety factor, `fp.rs`).
//! * A linear bound whose coefficients were computed inexactly stays exact: the coefficient error
//!   times a bound on the magnitude of its variable (from that value's rigorous bounds) is moved
//!   into the constant (`dense.rs`, `relu.rs`).
//! * ReLU relaxations are valid on rigorous pre-activation bounds: stable neurons exactly, the
//!   upper chord with its slope and intercept rounded up, lower slopes in `[0, 1]` exact. Other
//!   activations' lines take any f64 slope and a sound intercept: the extremum of
//!   `act(p) - s p` over the pre-activation bounds, enclosed by interval arithmetic at the points
//!   where it can be attained (ends, kinks) and, on a smooth convex or concave piece, by the
//!   tangent bound at the estimated touching point (`relax/mod.rs`, `relax/s_shaped.rs`).
//! * Intermediate bounds of every method are intersected with IBP; output boxes are the linear
//!   bounds concretised (rounded outward) intersected with IBP. alpha-CROWN's search runs without
//!   error terms, but its slopes are then used in the rigorous pass, and CROWN's row is kept
//!   wherever it is still better, so alpha-CROWN is never looser than CROWN.
//! * Inputs are validated (finite, `lo <= hi`, dimensions); intermediate bounds beyond `1e300` or
//!   non-finite are errors (this also catches non-finite weights), so a NaN never becomes a bound.
//! * Results do not depend on the thread count or on whether the AVX2 kernels run (same
//!   operations in the same order), so batches are deterministic.

mod alpha;
mod crown;
mod dense;
mod differences;
mod error;
mod forward;
mod fp;
mod graph;
mod ibp;
mod layers;
mod linear;
mod query;
mod recurrent;
mod relax;
mod support;

pub use alpha::AlphaConfig;
pub use differences::{DifferenceNetwork, difference_bounds, difference_network, tightest_difference_bounds};
pub use error::BoundsError;
pub use layers::{LayerBounds, layer_bounds, layer_bounds_batch, layer_bounds_unrolled};
pub use linear::{AffineMap, LinearBounds};
pub use recurrent::step_inputs;
pub use relax::{SoundLine, slope_estimate, sound_lines};
pub use support::{check as check_supported, method_for, methods_supporting, supports};

use graph::Graph;
use ibp::Level;
use rayon::prelude::*;
use std::str::FromStr;
use trestle_ir::network::{Matrix, Network};

/// How to bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    Ibp,
    Crown,
    AlphaCrown(AlphaConfig),
    Forward,
}

impl Method {
    /// The name `--bound-method` takes: `ibp`, `crown`, `alpha-crown` or `forward`.
    pub fn name(&self) -> &'static str {
        match self {
            Method::Ibp => "ibp",
            Method::Crown => "crown",
            Method::AlphaCrown(_) => "alpha-crown",
            Method::Forward => "forward",
        }
    }
}

impl FromStr for Method {
    type Err = BoundsError;

    /// `ibp`, `crown`, `alpha-crown` (default configuration) or `forward`.
    fn from_str(s: &str) -> Result<Method, BoundsError> {
        match s {
            "ibp" => Ok(Method::Ibp),
            "crown" => Ok(Method::Crown),
            "alpha-crown" => Ok(Method::AlphaCrown(AlphaConfig::default())),
            "forward" => Ok(Method::Forward),
            other => Err(BoundsError::UnknownMethod(other.to_string())),
        }
    }
}

/// The box `lo <= x <= hi` (componentwise; `lo == hi` is a point in that dimension): the IR's f64
/// box, under the name the bounds' signatures read best with.
pub type InputBox = trestle_ir::FBox;

/// The input box has the network's dimension, finite ends and `lo <= hi`.
fn validate(input: &InputBox, what: &str, expected: usize) -> Result<(), BoundsError> {
    if input.lo.len() != input.hi.len() {
        return Err(BoundsError::BoxLengths { what: what.to_string(), lo: input.lo.len(), hi: input.hi.len() });
    }
    if input.lo.len() != expected {
        return Err(BoundsError::Dimension { what: what.to_string(), found: input.lo.len(), expected });
    }
    for (index, (&lo, &hi)) in input.lo.iter().zip(&input.hi).enumerate() {
        if !lo.is_finite() || !hi.is_finite() {
            return Err(BoundsError::NotFinite { what: what.to_string(), index, lo, hi });
        }
        if lo > hi {
            return Err(BoundsError::Inverted { what: what.to_string(), index, lo, hi });
        }
    }
    Ok(())
}

/// Bounds of the network outputs over a box: `lo <= f(x) <= hi` for every `x` in it, and for the
/// linear methods also linear bounds over the box (`None` for IBP). The box is at least as tight as
/// the linear bounds concretised over the input box.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputBounds {
    pub lo: Vec<f64>,
    pub hi: Vec<f64>,
    pub linear: Option<LinearBounds>,
}

/// Bounds of a feed-forward network's outputs over `input`.
pub fn bound(net: &Network, input: &InputBox, method: &Method) -> Result<OutputBounds, BoundsError> {
    support::check(net, method)?;
    let graph = Graph::feed_forward(net)?;
    bound_on_graph(&graph, input, method)
}

/// [`bound`] for many boxes, in parallel; results in input order, identical to one-by-one calls.
pub fn bound_batch(net: &Network, inputs: &[InputBox], method: &Method) -> Vec<Result<OutputBounds, BoundsError>> {
    if let Err(e) = support::check(net, method) {
        return inputs.iter().map(|_| Err(e.clone())).collect();
    }
    match Graph::feed_forward(net) {
        Ok(graph) => inputs.par_iter().map(|input| bound_on_graph(&graph, input, method)).collect(),
        Err(_) => inputs.iter().map(|input| bound(net, input, method)).collect(),
    }
}

fn bound_on_graph(graph: &Graph<'_>, input: &InputBox, method: &Method) -> Result<OutputBounds, BoundsError> {
    validate(input, "input box", graph.input_dim)?;
    graph_bounds(graph, Level::new(input.lo.clone(), input.hi.clone()), method)
}

/// Bounds of `out_coeffs f(x) + in_coeffs x + c` over the box (rows of the coefficient matrices are
/// the k combinations; `out_coeffs` is k x outputs, `in_coeffs` k x inputs). CROWN and alpha-CROWN
/// propagate the combination backward from those coefficients (alpha-CROWN optimising slopes for
/// it), the forward mode combines its linear functions symbolically, IBP combines intervals; all are
/// intersected with the interval combination.
///
/// Checking a stored CROWN bound `f_i(x) <= a . x + c` this way (`out_coeffs` = `e_i`, `in_coeffs` =
/// `-a`, `c` = `-c`) gives exactly 0 as upper bound when the bound is the one [`bound`] returned:
/// the backward pass repeats the same floating-point operations and the final sums cancel exactly.
pub fn bound_affine_of(
    net: &Network,
    input: &InputBox,
    method: &Method,
    out_coeffs: &Matrix,
    in_coeffs: &Matrix,
    c: &[f64],
) -> Result<(Vec<f64>, Vec<f64>), BoundsError> {
    support::check(net, method)?;
    let graph = Graph::feed_forward(net)?;
    validate(input, "input box", graph.input_dim)?;
    let k = c.len();
    check_coefficients("out_coeffs", out_coeffs, k, graph.output_dim())?;
    check_coefficients("in_coeffs", in_coeffs, k, graph.input_dim)?;
    if let Some((index, &v)) = c.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(BoundsError::NotFinite { what: "c".into(), index, lo: v, hi: v });
    }
    let level = Level::new(input.lo.clone(), input.hi.clone());
    query::affine_bounds(&graph, level, method, out_coeffs, in_coeffs, c)
}

/// Sound bounds of every layer's pre-activations over `input` as CROWN computes them (IBP for a
/// network with activations CROWN does not handle, [`method_for`]), as `(lo, hi)` pairs:
/// [`layer_bounds`]. A ReLU with `lo >= 0` is the identity on the whole box, one with `hi <= 0`
/// is zero (generally: [`trestle_ir::Activation::piece_on`]); an exact encoding of the network may
/// use that (the smaller exact queries of the bridge engine's exact leaf).
pub fn preactivation_bounds(net: &Network, input: &InputBox) -> Result<HiddenBoxes, BoundsError> {
    let method = method_for(net, &Method::Crown);
    Ok(layer_bounds(net, input, &method)?.into_iter().map(|l| (l.lo, l.hi)).collect())
}

fn check_coefficients(what: &'static str, m: &Matrix, rows: usize, cols: usize) -> Result<(), BoundsError> {
    if m.rows != rows || m.cols != cols || m.data.len() != rows * cols {
        return Err(BoundsError::CoefficientShape {
            what,
            found: m.rows,
            found_cols: m.cols,
            expected: rows,
            expected_cols: cols,
        });
    }
    if let Some((index, &v)) = m.data.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(BoundsError::NotFinite { what: what.into(), index, lo: v, hi: v });
    }
    Ok(())
}

/// Boxes `(lo, hi)` of hidden states, one per recurrent layer.
pub type HiddenBoxes = Vec<(Vec<f64>, Vec<f64>)>;

/// Bounds of one step of a recurrent network: graph input `[x; h^1; ...; h^m]` (see
/// [`step_inputs`]), one box per recurrent layer's previous hidden state. Returns the output bounds
/// (linear bounds over that input vector) and boxes of the new hidden states.
pub fn bound_recurrent_step(
    net: &Network,
    input: &InputBox,
    hidden: &[InputBox],
    method: &Method,
) -> Result<(OutputBounds, HiddenBoxes), BoundsError> {
    bound_unrolled(net, std::slice::from_ref(input), hidden, method)
}

/// Bounds after `inputs_per_step.len()` steps from hidden states in `hidden0`: the output of the
/// last step, with linear bounds over `[x_1; ...; x_T; h_0^1; ...; h_0^m]`, and boxes of the last
/// hidden states.
pub fn bound_unrolled(
    net: &Network,
    inputs_per_step: &[InputBox],
    hidden0: &[InputBox],
    method: &Method,
) -> Result<(OutputBounds, HiddenBoxes), BoundsError> {
    support::check(net, method)?;
    let (graph, input) = recurrent::unrolled_input(net, inputs_per_step, hidden0)?;
    let hidden_dims = net.hidden_dims();
    let all = graph_bounds(&graph, input, method)?;
    let m = net.output_dim();
    let mut hidden_boxes = Vec::with_capacity(hidden_dims.len());
    let mut offset = m;
    for dim in hidden_dims {
        hidden_boxes.push((all.lo[offset..offset + dim].to_vec(), all.hi[offset..offset + dim].to_vec()));
        offset += dim;
    }
    let linear = all.linear.map(|l| LinearBounds { lower: first_rows(&l.lower, m), upper: first_rows(&l.upper, m) });
    Ok((OutputBounds { lo: all.lo[..m].to_vec(), hi: all.hi[..m].to_vec(), linear }, hidden_boxes))
}

fn first_rows(map: &AffineMap, m: usize) -> AffineMap {
    AffineMap { a: Matrix::new(m, map.a.cols, map.a.data[..m * map.a.cols].to_vec()), c: map.c[..m].to_vec() }
}

/// Bounds of every graph output.
fn graph_bounds(graph: &Graph<'_>, input: Level, method: &Method) -> Result<OutputBounds, BoundsError> {
    if let Method::AlphaCrown(config) = method
        && !(config.step_size.is_finite() && config.step_size > 0.0)
    {
        return Err(BoundsError::StepSize(config.step_size));
    }
    let n_out = graph.output_dim();
    let result = match method {
        Method::Ibp => {
            let bounds = ibp::run(graph, input)?;
            let out = bounds.levels.last().expect("input level");
            OutputBounds { lo: out.lo.clone(), hi: out.hi.clone(), linear: None }
        }
        Method::Forward => {
            let (bounds, fns) = forward::run(graph, input)?;
            let n_in = graph.input_dim;
            let split = |m: &Matrix| {
                let mut a = Vec::with_capacity(n_out * n_in);
                let mut c = Vec::with_capacity(n_out);
                for r in 0..n_out {
                    a.extend_from_slice(&m.row(r)[..n_in]);
                    c.push(m.row(r)[n_in]);
                }
                AffineMap { a: Matrix::new(n_out, n_in, a), c }
            };
            let linear = LinearBounds { lower: split(&fns.lower), upper: split(&fns.upper) };
            boxed(&bounds, linear)
        }
        Method::Crown | Method::AlphaCrown(_) => {
            let bounds = crown::intermediate_bounds(graph, input, crown::Tighten::Unstable)?;
            let mut query = Matrix::new(2 * n_out, n_out, vec![0.0; 2 * n_out * n_out]);
            for r in 0..n_out {
                query.data[r * n_out + r] = 1.0;
                query.data[(n_out + r) * n_out + r] = -1.0;
            }
            let config = match method {
                Method::AlphaCrown(config) => Some(config),
                _ => None,
            };
            let (coeffs, constant) = query::backward_rows(graph, &bounds, &query, None, config);
            let n_in = graph.input_dim;
            let upper = AffineMap {
                a: Matrix::new(n_out, n_in, coeffs.data[..n_out * n_in].to_vec()),
                c: constant[..n_out].to_vec(),
            };
            let lower = AffineMap {
                a: Matrix::new(n_out, n_in, coeffs.data[n_out * n_in..].iter().map(|v| -v).collect()),
                c: constant[n_out..].iter().map(|v| -v).collect(),
            };
            boxed(&bounds, LinearBounds { lower, upper })
        }
    };
    check_result(result)
}

/// The output box: the linear bounds concretised, intersected with the interval bounds.
fn boxed(bounds: &ibp::Bounds, linear: LinearBounds) -> OutputBounds {
    let (input, out) = (&bounds.levels[0], bounds.levels.last().expect("input level"));
    let lo = (0..out.lo.len()).map(|r| linear.lower.min_over(r, &input.lo, &input.hi).max(out.lo[r])).collect();
    let hi = (0..out.hi.len()).map(|r| linear.upper.max_over(r, &input.lo, &input.hi).min(out.hi[r])).collect();
    OutputBounds { lo, hi, linear: Some(linear) }
}

/// Every bound finite and ordered, or an error.
fn check_result(result: OutputBounds) -> Result<OutputBounds, BoundsError> {
    let bad = |v: &f64| !v.is_finite();
    let ordered = result.lo.iter().zip(&result.hi).all(|(l, h)| l <= h);
    let linear_ok = result.linear.as_ref().is_none_or(|l| {
        !(l.lower.a.data.iter().any(bad)
            || l.upper.a.data.iter().any(bad)
            || l.lower.c.iter().any(bad)
            || l.upper.c.iter().any(bad))
    });
    if result.lo.iter().any(bad) || result.hi.iter().any(bad) || !ordered || !linear_ok {
        return Err(BoundsError::Overflow { at: "the output".into() });
    }
    Ok(result)
}
