//! One-step images of cells: psi by the bridge engine's [`PostEngine`] (the controller's bounds
//! on the cell), then the successor box of each branch by [`SuccessorBounds`] (closed form with
//! outward rounding for multi-affine updates, interval evaluation otherwise). These are exactly
//! the postcondition and the ranges the bridge engine and the checker's fast path compute later
//! for the same box, so a cell found to map into the kept union is proven to by the fast path.

use crate::SynthError;
use crate::partition::Partition;
use rayon::prelude::*;
use std::sync::Arc;
use trestle_bridge::post::PostEngine;
use trestle_ir::{FBox, System, space};
use trestle_smt::SuccessorBounds;

pub(crate) struct Imager<'s> {
    sys: &'s System,
    post: PostEngine<'s>,
    succ: SuccessorBounds<'s>,
    pool: rayon::ThreadPool,
}

impl<'s> Imager<'s> {
    pub fn new(sys: &'s System, cfg: &trestle_bridge::Config, threads: usize) -> Result<Imager<'s>, SynthError> {
        let post = PostEngine::new(sys, cfg.post, cfg.linear_bridge)?;
        let succ = SuccessorBounds::new(sys)?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build()
            .map_err(|e| SynthError::Internal(format!("cannot start worker threads: {e}")))?;
        Ok(Imager { sys, post, succ, pool })
    }

    /// The successor boxes of one cell (empty: no successor). The states of a cell are its points
    /// of the right kinds, so the image is that of their hull (integer ends for `int`
    /// variables); a cell with no such point has no successor.
    pub fn image(&self, cell: &FBox) -> Result<Vec<FBox>, SynthError> {
        let Some(states) = space::kind_hull(self.sys, cell) else { return Ok(Vec::new()) };
        let psi = self.post.compute(&states)?;
        Ok(self.succ.images(&states, &psi)?.into_iter().map(|(_, b)| b).collect())
    }

    /// Computes the images of the given cells that lack one, in parallel; returns how many were
    /// computed. Each image is a function of its cell alone, so the thread count changes nothing.
    pub fn fill(&self, part: &mut Partition, ids: &[usize]) -> Result<usize, SynthError> {
        let todo: Vec<usize> = ids.iter().copied().filter(|&id| part.cells[id].image.is_none()).collect();
        let cells = &part.cells;
        let results: Vec<Result<Vec<FBox>, SynthError>> =
            self.pool.install(|| todo.par_iter().map(|&id| self.image(&cells[id].bx)).collect());
        for (&id, r) in todo.iter().zip(results) {
            part.cells[id].image = Some(Arc::new(r?));
        }
        Ok(todo.len())
    }

    pub fn pool(&self) -> &rayon::ThreadPool {
        &self.pool
    }
}
