//! One-step images of cells: psi by the bridge engine's [`PostEngine`] (the controller's bounds
//! on the cell), then the successor box of each branch by [`SuccessorBounds::relaxed_images`]
//! (closed form with outward rounding for multi-affine updates, interval evaluation otherwise,
//! met with the closed form of the step's linear relaxation on the cell where an update is curved:
//! sin, exp, powers, products of variables). These are the postcondition and the ranges the bridge
//! engine and the checker's fast path compute later for the same box (on the original step and,
//! for elementary functions, on its relaxation), so a cell found to map into the kept union is
//! mostly proven to by the fast path; images only propose either way.
//!
//! A tolerant search shrinks each image box by a hair ([`IMAGE_TOLERANCE`] of Safe's extent per
//! dimension) before comparing it with the kept cells. Images are outward-rounded and psi is
//! widened (see `trestle_bridge::post`), so an invariant with no margin (`x' = -x` on `[-1, 1]`:
//! the image of the outermost cell is exactly the opposite one) would otherwise always seem to
//! escape by a rounding error, and the search would eat the whole candidate from its boundary.
//! Images only propose: the bridge engine proves such cells exactly (its exact leaf) or refutes
//! the union, by a successor within the tolerance of it.
//!
//! A branch whose guard is a union of boxes over the state is imaged on the parts of the cell
//! inside the guard: where a guard touches the invariant's boundary (`x <= 0.5` enabling
//! `x' = x + 0.5` into `[0, 1]`), the image of the cell on the other side is then the one point
//! the guard allows, not the branch's image over the whole cell.
//!
//! On a sampled-data system (`[flow]`, [`Imager::with_flow`]) a cell's image is the validated
//! enclosure of the plant's flow over the period from the cell under psi's action box held
//! ([`FlowStep::enclose`]), tightened by the linear enclosure composed with psi's linear bounds:
//! the successor box the checker's fast path computes on the bridge engine's *linear leaf
//! system* for the same cell ([`FlowStep::linear_leaf`]), which keeps the closed loop's
//! contraction that the action box alone loses. The two are intersected (both contain every
//! successor). A cell whose flow cannot be enclosed gets an image that meets every cell and
//! escapes Safe, so it is refined (or dropped at the minimum width).

use crate::SynthError;
use crate::partition::Partition;
use rayon::prelude::*;
use std::sync::Arc;
use trestle_bridge::flow::FlowStep;
use trestle_bridge::post::PostEngine;
use trestle_core::Budget;
use trestle_ir::{FBox, OuterBox, System, VarRef, space};
use trestle_smt::SuccessorBounds;

/// How much of Safe's extent (per dimension) an image box may overshoot the kept cells and still
/// count as inside them.
pub(crate) const IMAGE_TOLERANCE: f64 = 1e-9;

pub(crate) struct Imager<'s> {
    sys: &'s System,
    post: PostEngine<'s>,
    succ: SuccessorBounds<'s>,
    pool: rayon::ThreadPool,
    /// Per dimension: how much every image box is shrunk.
    tolerance: Vec<f64>,
    /// Per branch: its guard as outward f64 boxes, when it is a union of boxes over the state.
    /// Per branch, the boxes where its guard may hold (rounded outward: images over them cover
    /// every state where the branch fires).
    guards: Vec<Option<Vec<OuterBox>>>,
    /// A sampled-data system's flow, and the image of a cell where it cannot be enclosed.
    flow: Option<(&'s FlowStep, FBox)>,
    /// The run's deadline: past it, flow images are not computed (an enclosure takes
    /// milliseconds, a layer of them minutes), and the search stops at its next time check.
    deadline: Option<std::time::Instant>,
}

/// Guards expanding to more boxes are not used to restrict images.
const MAX_GUARD_BOXES: usize = 64;

fn guard_boxes(sys: &System, guard: Option<&trestle_ir::Pred>) -> Option<Vec<OuterBox>> {
    let g = guard?;
    if g.mentions(|v| !matches!(v, VarRef::State(_))) {
        return None;
    }
    let boxes = g.to_box_union(sys.state.len(), MAX_GUARD_BOXES)?;
    Some(boxes.iter().map(trestle_ir::RBox::outer_fbox).collect())
}

impl<'s> Imager<'s> {
    /// `extent`: the widths of Safe's hull, per dimension.
    pub fn new(
        sys: &'s System,
        cfg: &trestle_bridge::Config,
        threads: usize,
        extent: &[f64],
    ) -> Result<Imager<'s>, SynthError> {
        let post = PostEngine::new(sys, cfg.post, cfg.linear_bridge)?;
        let succ = SuccessorBounds::new(sys)?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build()
            .unwrap_or_else(|e| trestle_smt::memory::threads_unavailable(e));
        let tolerance = extent.iter().map(|e| e * IMAGE_TOLERANCE).collect();
        let guards = sys.step.branches.iter().map(|b| guard_boxes(sys, b.guard.as_ref())).collect();
        Ok(Imager { sys, post, succ, pool, tolerance, guards, flow: None, deadline: None })
    }

    /// Images by the flow of `step` (module doc); `safe_hull` is Safe's bounding box.
    pub fn with_flow(
        mut self,
        step: &'s FlowStep,
        safe_hull: &FBox,
        deadline: Option<std::time::Instant>,
    ) -> Imager<'s> {
        self.deadline = deadline;
        let w = safe_hull.widths();
        let everywhere = FBox::new(
            safe_hull.lo.iter().zip(&w).map(|(l, w)| l - w.max(1.0)).collect(),
            safe_hull.hi.iter().zip(&w).map(|(h, w)| h + w.max(1.0)).collect(),
        );
        self.flow = Some((step, everywhere));
        self
    }

    /// The sampled-data system's flow, if any.
    pub fn flow(&self) -> Option<&'s FlowStep> {
        self.flow.as_ref().map(|(s, _)| *s)
    }

    /// The image of a cell by the flow (module doc).
    fn flow_image(&self, step: &FlowStep, everywhere: &FBox, cell: &FBox) -> Result<FBox, SynthError> {
        // Past the deadline the image escapes: images only steer the search, which then stops.
        if self.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            return Ok(everywhere.clone());
        }
        let psi = self.post.compute(cell)?;
        let Ok(e) = step.enclose(cell, psi.action_box()) else { return Ok(everywhere.clone()) };
        let mut image = FBox::new(e.state.iter().map(|v| v.lo).collect(), e.state.iter().map(|v| v.hi).collect());
        let leaf = step.linear_leaf(self.sys, &e.linear);
        for (_, b) in SuccessorBounds::new(&leaf)?.images(cell, &psi)? {
            for i in 0..image.dims() {
                let (lo, hi) = (image.lo[i].max(b.lo[i]), image.hi[i].min(b.hi[i]));
                // Both contain every successor: an empty meet is a rounding artefact; keep the box.
                if lo <= hi {
                    (image.lo[i], image.hi[i]) = (lo, hi);
                }
            }
        }
        if image.lo.iter().chain(&image.hi).any(|v| !v.is_finite()) {
            return Ok(everywhere.clone());
        }
        Ok(image)
    }

    /// The f64 state after one period from `x` under the inputs `w` held, with the controllers'
    /// f64 actions (a simulation, not a bound: for the search's heuristics only); `None` when it
    /// cannot be computed.
    pub fn flow_successor(&self, step: &FlowStep, x: &[f64], w: &[f64]) -> Option<Vec<f64>> {
        let mut memory = trestle_ir::sim::initial_memory::<f64>(self.sys);
        let u = trestle_ir::sim::controller_actions(self.sys, x, w, &mut memory).ok()?;
        let period = trestle_ir::num::to_f64_nearest(&step.period);
        let next = step.flow().simulate(x, &u, w, period, 1e-10).ok()?;
        next.iter().all(|v| v.is_finite()).then_some(next)
    }

    /// The successor boxes of one cell (empty: no successor), shrunk by the tolerance when
    /// `tolerant`. The states of a cell are its points of the right kinds, so the image is that of
    /// their hull (integer ends for `int` variables); a cell with no such point has no successor.
    pub fn image(&self, cell: &FBox, tolerant: bool) -> Result<Vec<FBox>, SynthError> {
        let shrink = |b: FBox| if tolerant { self.shrink(b) } else { b };
        let Some(states) = space::kind_hull(self.sys, cell) else { return Ok(Vec::new()) };
        if let Some((step, everywhere)) = &self.flow {
            return Ok(vec![shrink(self.flow_image(step, everywhere, &states)?)]);
        }
        let psi = self.post.compute(&states)?;
        let mut out = Vec::new();
        for (branch, b) in self.succ.relaxed_images(&states, &psi)? {
            let parts = match &self.guards[branch] {
                Some(g) => g.iter().filter_map(|gb| gb.intersect(&states)).collect(),
                None => vec![states.clone()],
            };
            if parts.contains(&states) {
                out.push(shrink(b));
                continue;
            }
            // psi holds on the whole cell, so on every part of its states.
            for part in parts {
                let images = self.succ.relaxed_images(&part, &psi)?;
                out.extend(images.into_iter().filter(|(bi, _)| *bi == branch).map(|(_, b)| shrink(b)));
            }
        }
        Ok(out)
    }

    /// `b` with every side moved inward by the tolerance (a side narrower than twice the
    /// tolerance becomes its centre).
    fn shrink(&self, mut b: FBox) -> FBox {
        for (i, &t) in self.tolerance.iter().enumerate() {
            let (lo, hi) = (b.lo[i] + t, b.hi[i] - t);
            if lo <= hi {
                (b.lo[i], b.hi[i]) = (lo, hi);
            } else {
                let mid = b.interval(i).mid();
                (b.lo[i], b.hi[i]) = (mid, mid);
            }
        }
        b
    }

    /// Whether `x` lies within the tolerance of one of `boxes` (in every dimension): where a
    /// successor of a cell accepted by the search may land.
    pub fn within_tolerance(&self, boxes: &[FBox], x: &[f64]) -> bool {
        boxes.iter().any(|b| {
            x.iter().enumerate().all(|(i, &v)| {
                let t = 2.0 * self.tolerance[i];
                b.lo[i] - t <= v && v <= b.hi[i] + t
            })
        })
    }

    /// Computes the images of the given cells that lack one, in parallel; returns how many were
    /// computed. Each image is a function of its cell alone, so the thread count changes nothing.
    /// Once `budget` is over no image is started: the cells left without one are the caller's
    /// sign to stop (it checks the budget after the batch; a batch of a fine grid can take
    /// minutes).
    pub fn fill(
        &self,
        part: &mut Partition,
        ids: &[usize],
        tolerant: bool,
        budget: &Budget,
    ) -> Result<usize, SynthError> {
        let todo: Vec<usize> = ids.iter().copied().filter(|&id| part.cells[id].image.is_none()).collect();
        let cells = &part.cells;
        let image = |id: usize| (!budget.is_over()).then(|| self.image(&cells[id].bx, tolerant));
        // A closure that creeps one cell per layer asks for one or two images thousands of times:
        // waking the pool for each costs more than the images, so small batches run here.
        let results: Vec<Option<Result<Vec<FBox>, SynthError>>> = if todo.len() < 2 * self.pool.current_num_threads() {
            todo.iter().map(|&id| image(id)).collect()
        } else {
            self.pool.install(|| todo.par_iter().map(|&id| image(id)).collect())
        };
        let mut computed = 0;
        for (&id, r) in todo.iter().zip(results) {
            if let Some(r) = r {
                part.cells[id].image = Some(Arc::new(r?));
                computed += 1;
            }
        }
        Ok(computed)
    }

    pub fn pool(&self) -> &rayon::ThreadPool {
        &self.pool
    }
}
