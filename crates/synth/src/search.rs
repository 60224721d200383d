//! State shared by the two searches (greatest fixed point and forward closure): the partition,
//! the image computations, limits and counters, and the closure of a set of cells under images.

use crate::image::Imager;
use crate::partition::{Cell, Partition, Status, overlaps};
use crate::report::SynthProgress;
use crate::{SynthConfig, SynthError};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;
use trestle_core::Budget;
use trestle_ir::{FBox, sim, space};

/// How a search ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum End {
    /// A set of cells closed under the images (in `Search::invariant`).
    Closed,
    /// Some part of Init could not be kept.
    InitLost,
    /// Images leave Safe from cells that cannot be refined further.
    Escapes,
    /// The time or box limit was reached.
    Limit(String),
}

/// Where a cell's images land, against a set of cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Covered by the set.
    Inside,
    /// Partly covered: refining the cell may help.
    Partial,
    /// Some image meets the set in no volume: every state of the cell (with that branch) leaves.
    Outside,
}

/// The centre of a box and its corners (up to four dimensions) or face centres (beyond).
fn sample_points(b: &FBox) -> Vec<Vec<f64>> {
    let d = b.dims();
    let mut out = vec![b.center()];
    if d <= 4 {
        for mask in 0..(1usize << d) {
            out.push((0..d).map(|i| if mask >> i & 1 == 1 { b.hi[i] } else { b.lo[i] }).collect());
        }
    } else {
        for i in 0..d {
            for end in [b.lo[i], b.hi[i]] {
                let mut p = b.center();
                p[i] = end;
                out.push(p);
            }
        }
    }
    out
}

/// The result of closing a set of cells under images.
pub(crate) struct Closure {
    /// Reached cells, ascending.
    pub reached: Vec<usize>,
    /// For each reached cell other than the start: a cell whose image reached it.
    pub parent: BTreeMap<usize, usize>,
    /// Reached cells with an image not covered by the allowed cells.
    pub escaping: Vec<usize>,
}

pub(crate) struct Search<'a, 's> {
    pub sys: &'s trestle_ir::System,
    /// The vertices of the environment's inputs, as f64 inside their domains (for sampling successors).
    pub vertices: Vec<Vec<f64>>,
    pub part: Partition,
    pub imager: &'a Imager<'s>,
    pub cfg: &'a SynthConfig,
    pub start: Instant,
    /// The run's deadline and cancellation.
    pub budget: Budget,
    /// Init as outward f64 boxes, when it is a union of boxes.
    pub init: Option<Vec<FBox>>,
    pub progress: &'a (dyn Fn(SynthProgress) + Sync),
    pub images: usize,
    pub rounds: usize,
    pub splits: usize,
    pub dropped: usize,
    /// A limit that stopped refinement somewhere (the search may still succeed).
    pub budget_hit: Option<String>,
    /// The cells of the invariant found (when the search ends `Closed`).
    pub invariant: Vec<usize>,
    /// Cells images escape from (forward search) at the end.
    pub escaping: Vec<usize>,
    /// Images count as inside the kept cells within the imager's tolerance (a second search, for
    /// invariants with no margin).
    pub tolerant: bool,
    /// Cells of the initial grid.
    pub initial_cells: usize,
}

impl<'a, 's> Search<'a, 's> {
    pub fn new(
        sys: &'s trestle_ir::System,
        cfg: &'a SynthConfig,
        imager: &'a Imager<'s>,
        part: Partition,
        init: Option<Vec<FBox>>,
        start: Instant,
        budget: &Budget,
        progress: &'a (dyn Fn(SynthProgress) + Sync),
    ) -> Search<'a, 's> {
        let vertices = trestle_ir::nondet::Choices::new(sys, 256)
            .fixed()
            .iter()
            .map(|v| trestle_bridge::witness::f64_inputs(sys, v))
            .collect();
        let initial_cells = part.cells.len();
        Search {
            sys,
            vertices,
            part,
            imager,
            cfg,
            start,
            budget: budget.clone(),
            init,
            progress,
            images: 0,
            rounds: 0,
            splits: 0,
            dropped: 0,
            budget_hit: None,
            invariant: Vec::new(),
            escaping: Vec::new(),
            tolerant: false,
            initial_cells,
        }
    }

    /// Why the search must stop now (time limit, cancelled), if it must.
    pub fn over_time(&self) -> Option<String> {
        self.budget.check().err().map(|stop| stop.to_string())
    }

    /// Splits a leaf when the box budget and the minimum width allow it.
    pub fn split(&mut self, id: usize) -> Option<(usize, usize)> {
        if self.part.leaves() >= self.cfg.max_boxes {
            self.budget_hit = Some(format!("box limit of {} reached", self.cfg.max_boxes));
            return None;
        }
        let halves = self.part.split(id)?;
        self.splits += 1;
        Some(halves)
    }

    pub fn report(&self) {
        let kept = self.part.cells.iter().filter(|c| c.status == Status::Kept).count();
        (self.progress)(SynthProgress::Search {
            round: self.rounds,
            cells: self.part.leaves(),
            kept,
            images: self.images,
        });
    }

    /// Where the images of cell `id` land against the leaves `allowed` accepts; also the leaves
    /// the images touch.
    pub fn classify(&self, id: usize, allowed: impl Fn(&Cell) -> bool + Copy) -> (Fate, Vec<usize>) {
        let image = self.part.cells[id].image.clone().expect("image computed before classification");
        let mut fate = Fate::Inside;
        let mut touched = Vec::new();
        for b in image.iter() {
            let near = self.part.touching(b, allowed);
            let boxes = || near.iter().map(|&t| &self.part.cells[t].bx);
            // A check that gives up (the time limit, or too many pieces) counts as not covered:
            // the search's fates only steer it, and the union it ends with is proven on its own.
            if !b.is_covered_by_unless(boxes(), || self.budget.is_over()).unwrap_or(false) {
                fate = if boxes().any(|c| overlaps(c, b)) && fate != Fate::Outside {
                    Fate::Partial
                } else {
                    Fate::Outside
                };
            }
            touched.extend(near);
        }
        (fate, touched)
    }

    /// Whether some sample point of the cell's states (centre, corners or face centres of their
    /// hull, [`space::kind_hull`]) has all its f64 successors (input choices, enabled branches)
    /// in leaves `allowed` accepts: evidence that refining the cell may keep part of it. Without
    /// such a point, the cell is dropped rather than refined down to the minimum width (a
    /// heuristic: soundness never rests on it).
    pub fn has_good_point(&self, id: usize, allowed: impl Fn(&Cell) -> bool + Copy) -> bool {
        let Some(b) = space::kind_hull(self.sys, &self.part.cells[id].bx) else { return true };
        let lands = |next: &[f64]| !self.part.touching(&FBox::new(next.to_vec(), next.to_vec()), allowed).is_empty();
        if let Some(step) = self.imager.flow() {
            // The discrete step of a sampled-data system is the identity: the flow is simulated.
            return sample_points(&b).iter().any(|p| {
                self.vertices.iter().all(|w| self.imager.flow_successor(step, p, w).is_some_and(|next| lands(&next)))
            });
        }
        let memory = sim::initial_memory::<f64>(self.sys);
        sample_points(&b).iter().any(|p| {
            let Ok(mut steps) = sim::StepsFrom::new(self.sys, p, &memory) else { return false };
            self.vertices.iter().all(|nondet| match steps.under(nondet) {
                Ok((s, _)) => s.exits.is_empty() && s.next.iter().all(|(_, next)| lands(next)),
                Err(_) => false,
            })
        })
    }

    /// The leaves `allowed` accepts that meet Init in some volume, ascending.
    pub fn init_cells(&self, allowed: impl Fn(&Cell) -> bool + Copy) -> Vec<usize> {
        let Some(init) = &self.init else { return Vec::new() };
        let set: BTreeSet<usize> = init
            .iter()
            .flat_map(|b| self.part.touching(b, allowed).into_iter().filter(|&id| overlaps(&self.part.cells[id].bx, b)))
            .collect();
        set.into_iter().collect()
    }

    /// Whether the leaves `allowed` accepts cover Init; `Err(reason)` when the time limit is
    /// reached on the way.
    pub fn covers_init(&self, allowed: impl Fn(&Cell) -> bool + Copy) -> Result<bool, String> {
        let Some(init) = &self.init else { return Ok(true) };
        for b in init {
            let near = self.part.touching(b, allowed);
            if !self.covered(b, near.iter().map(|&t| &self.part.cells[t].bx))? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether the union of `covers` contains `b` (exact), polling the time limit between covers:
    /// Init against the cells of a fine grid is thousands of subtractions whose pieces multiply
    /// (`synth --resolution 300 --timeout 1` on the double integrator spent 400 s here).
    pub fn covered<'c>(&self, b: &FBox, covers: impl IntoIterator<Item = &'c FBox>) -> Result<bool, String> {
        let mut stopped = None;
        let covered = b.is_covered_by_unless(covers, || {
            stopped = self.over_time();
            stopped.is_some()
        });
        covered.ok_or_else(|| stopped.unwrap_or_else(too_many_pieces))
    }

    /// The cells reachable from the Init cells through images, among the leaves `allowed`
    /// accepts (breadth first, images computed in parallel per layer); `Err(reason)` when the
    /// time limit is reached on the way (one closure can take many layers of images).
    pub fn closure(&mut self, allowed: impl Fn(&Cell) -> bool + Copy) -> Result<Result<Closure, String>, SynthError> {
        let mut frontier = self.init_cells(allowed);
        let mut reached: BTreeSet<usize> = frontier.iter().copied().collect();
        let mut parent = BTreeMap::new();
        let mut escaping = Vec::new();
        while !frontier.is_empty() {
            if let Some(reason) = self.over_time() {
                return Ok(Err(reason));
            }
            self.images += self.imager.fill(&mut self.part, &frontier, self.tolerant, &self.budget)?;
            if let Some(reason) = self.over_time() {
                return Ok(Err(reason));
            }
            let mut next = BTreeSet::new();
            for &id in &frontier {
                let image = self.part.cells[id].image.clone().expect("filled");
                let mut escapes = false;
                for b in image.iter() {
                    let near = self.part.touching(b, allowed);
                    // An image whose cover check is too large to finish counts as escaping
                    // (its cell is refined, which is never unsound), unless time is up.
                    let covers = near.iter().map(|&t| &self.part.cells[t].bx);
                    match b.is_covered_by_unless(covers, || self.budget.is_over()) {
                        Some(covered) => escapes |= !covered,
                        None => match self.over_time() {
                            Some(reason) => return Ok(Err(reason)),
                            None => escapes = true,
                        },
                    }
                    for t in near {
                        if overlaps(&self.part.cells[t].bx, b) && reached.insert(t) {
                            parent.insert(t, id);
                            next.insert(t);
                        }
                    }
                }
                if escapes {
                    escaping.push(id);
                }
            }
            frontier = next.into_iter().collect();
        }
        escaping.sort_unstable();
        Ok(Ok(Closure { reached: reached.into_iter().collect(), parent, escaping }))
    }
}

/// Why an exact cover check gave up without a time limit.
fn too_many_pieces() -> String {
    format!(
        "an exact cover check left more than {} pieces of an image (too many cells around it)",
        trestle_ir::pred::MAX_UNCOVERED_PIECES
    )
}
