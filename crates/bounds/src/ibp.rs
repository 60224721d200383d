//! Interval bound propagation, and the stage-by-stage pass every engine builds on.
//!
//! [`propagate`] walks the stages in order; for each it computes interval bounds of the affine block
//! from the bounds of its input, lets the engine tighten them (CROWN by a backward pass, the forward
//! mode by its symbolic bounds; IBP leaves them), relaxes the activation from the result and derives
//! the bounds of the stage output. Tightened bounds are intersected with the interval ones, so no
//! engine is ever looser than IBP on an intermediate neuron.

use crate::dense::{self, BlockIntervals};
use crate::error::BoundsError;
use crate::graph::Graph;
use crate::relax::{self, StageRelaxation};

/// Largest magnitude an intermediate bound may reach. Beyond it `u - l` or a product could overflow,
/// and an overflowed difference would make the ReLU slope meaningless, so such boxes are refused.
const MAX_MAGNITUDE: f64 = 1e300;

/// Bounds of one value vector of the graph (its input, or a stage output).
#[derive(Clone, Debug)]
pub(crate) struct Level {
    pub lo: Vec<f64>,
    pub hi: Vec<f64>,
    /// `max(|lo|, |hi|)`.
    pub magnitude: Vec<f64>,
}

impl Level {
    pub fn new(lo: Vec<f64>, hi: Vec<f64>) -> Level {
        let magnitude = lo.iter().zip(&hi).map(|(l, h)| l.abs().max(h.abs())).collect();
        Level { lo, hi, magnitude }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct StageBounds {
    /// Pre-activation bounds of the block (tightened by the engine), with interval magnitudes.
    pub block: BlockIntervals,
    /// The linear relaxation of the activation (computed by the linear methods only; see
    /// [`StageBounds::relax`]).
    pub relaxation: Option<StageRelaxation>,
}

impl StageBounds {
    /// The relaxation CROWN, alpha-CROWN and the forward mode use.
    ///
    /// # Panics
    /// On bounds computed without relaxations (IBP's, [`run`]): only the linear methods read
    /// them, and they propagate with relaxations.
    pub fn relax(&self) -> &StageRelaxation {
        self.relaxation.as_ref().expect("linear methods propagate with relaxations")
    }
}

/// `levels[0]` is the input box, `levels[t + 1]` the output of stage `t`, which is bounded by
/// `stages[t]`.
#[derive(Clone, Debug)]
pub(crate) struct Bounds {
    pub levels: Vec<Level>,
    pub stages: Vec<StageBounds>,
}

/// Runs the stage-by-stage pass. `tighten(t, bounds_so_far, block)` may shrink the pre-activation
/// bounds of stage `t` (it must only ever replace them by sound bounds; the result is intersected
/// with the interval bounds anyway). With `relax`, each stage's linear relaxation is computed from
/// its final pre-activation bounds (the linear methods need it; IBP does not, and for tanh and
/// sigmoid it costs rigorous function evaluations).
pub(crate) fn propagate(
    graph: &Graph<'_>,
    input: Level,
    relax: bool,
    mut tighten: impl FnMut(usize, &Bounds, &mut BlockIntervals) -> Result<(), BoundsError>,
) -> Result<Bounds, BoundsError> {
    let mut bounds = Bounds { levels: vec![input], stages: Vec::with_capacity(graph.stages.len()) };
    for (t, stage) in graph.stages.iter().enumerate() {
        let level = &bounds.levels[t];
        let mut block = dense::interval(stage, &level.lo, &level.hi);
        check_magnitude(&block.lo, &block.hi, t)?;
        let interval = (block.lo.clone(), block.hi.clone());
        tighten(t, &bounds, &mut block)?;
        for r in 0..block.lo.len() {
            block.lo[r] = block.lo[r].max(interval.0[r]);
            block.hi[r] = block.hi[r].min(interval.1[r]);
            if block.lo[r].is_nan() || block.hi[r].is_nan() || block.lo[r] > block.hi[r] {
                return Err(BoundsError::Overflow { at: format!("stage {t}, neuron {r}") });
            }
        }
        let relaxation = relax.then(|| StageRelaxation::new(stage.activation, &block.lo, &block.hi));
        let level = &bounds.levels[t];
        let (mut lo, mut hi): (Vec<f64>, Vec<f64>) =
            block.lo.iter().zip(&block.hi).map(|(&l, &h)| relax::interval(stage.activation, l, h)).unzip();
        lo.extend(stage.copies.iter().map(|&k| level.lo[k]));
        hi.extend(stage.copies.iter().map(|&k| level.hi[k]));
        bounds.levels.push(Level::new(lo, hi));
        bounds.stages.push(StageBounds { block, relaxation });
    }
    Ok(bounds)
}

/// Refuses bounds that are NaN, infinite or too large to difference safely.
pub(crate) fn check_magnitude(lo: &[f64], hi: &[f64], stage: usize) -> Result<(), BoundsError> {
    let ok = |v: f64| v.abs() <= MAX_MAGNITUDE;
    match lo.iter().zip(hi).position(|(&l, &h)| !ok(l) || !ok(h)) {
        None => Ok(()),
        Some(r) => Err(BoundsError::Overflow { at: format!("stage {stage}, neuron {r}") }),
    }
}

/// Interval bounds of every stage.
pub(crate) fn run(graph: &Graph<'_>, input: Level) -> Result<Bounds, BoundsError> {
    propagate(graph, input, false, |_, _, _| Ok(()))
}
