//! The greatest fixed point inside Safe: start from every cell of Safe and repeatedly drop the
//! cells whose images are not covered by the cells still kept, refining (bisecting) those whose
//! images are only partly covered, until nothing changes.
//!
//! A partly covered cell is refined only when some sample point of it has all its successors in
//! the kept set (else it is dropped at once: refining a cell whose points all leave cannot keep
//! any of it, and would refine a whole band down to the minimum width).
//!
//! Rounds are Jacobi steps: every cell is judged against the set kept at the start of the round,
//! then the drops and splits are applied together, so the result does not depend on any order.
//!
//! By default the iteration is lazy: only the cells reachable from Init through images inside the
//! kept set are judged. Cells nothing reaches stay kept, unjudged, until an image reaches them;
//! the part that matters is judged as in the full iteration, and the invariant is that reachable
//! part, closed under the images once no reachable cell escapes. The eager iteration
//! ([`SynthConfig::full`](crate::SynthConfig)) judges every cell of Safe, and judges again only
//! the cells whose images touch a cell dropped in the previous round (or new halves): it computes
//! the largest invariant the boxes can express, at a higher cost.

use crate::SynthError;
use crate::partition::{Cell, Status};
use crate::search::{End, Fate, Search};
use std::collections::BTreeSet;

fn kept(c: &Cell) -> bool {
    c.status == Status::Kept
}

pub(crate) fn run(s: &mut Search<'_, '_>) -> Result<End, SynthError> {
    if s.init.is_none() || s.cfg.full { eager(s) } else { lazy(s) }
}

/// Splits the partly covered cells (dropping those that cannot be split) and drops the others;
/// returns every cell dropped.
fn apply(
    s: &mut Search<'_, '_>,
    partial: Vec<usize>,
    mut drops: Vec<usize>,
    mut halves: impl FnMut(usize, usize, usize),
) -> Vec<usize> {
    for id in partial {
        match s.split(id) {
            Some((a, b)) => halves(id, a, b),
            None => drops.push(id),
        }
    }
    for &id in &drops {
        s.part.cells[id].status = Status::Dropped;
        s.dropped += 1;
    }
    drops
}

/// Whether dropping `drops` lost part of Init; `Err(reason)` when the time limit is reached on
/// the way.
fn lost_init(s: &Search<'_, '_>, drops: &[usize]) -> Result<bool, String> {
    let hit = drops
        .iter()
        .any(|&id| s.init.as_ref().is_some_and(|init| init.iter().any(|b| b.touches(&s.part.cells[id].bx))));
    Ok(hit && !s.covers_init(kept)?)
}

fn lazy(s: &mut Search<'_, '_>) -> Result<End, SynthError> {
    loop {
        if let Some(reason) = s.over_time() {
            return Ok(End::Limit(reason));
        }
        s.rounds += 1;
        let closure = match s.closure(kept)? {
            Ok(c) => c,
            Err(reason) => return Ok(End::Limit(reason)),
        };
        if closure.reached.is_empty() {
            return Ok(End::InitLost);
        }
        if closure.escaping.is_empty() {
            s.invariant = closure.reached;
            s.report();
            return Ok(End::Closed);
        }
        let mut drops = Vec::new();
        let mut partial = Vec::new();
        for &id in &closure.escaping {
            // A classification the limit cut short would drop its cell: stop with the limit.
            if let Some(reason) = s.over_time() {
                return Ok(End::Limit(reason));
            }
            let (fate, _) = s.classify(id, kept);
            match fate {
                Fate::Inside => {}
                Fate::Partial if s.has_good_point(id, kept) => partial.push(id),
                Fate::Partial | Fate::Outside => drops.push(id),
            }
        }
        let drops = apply(s, partial, drops, |_, _, _| {});
        s.report();
        match lost_init(s, &drops) {
            Ok(true) => return Ok(End::InitLost),
            Ok(false) => {}
            Err(reason) => return Ok(End::Limit(reason)),
        }
    }
}

fn eager(s: &mut Search<'_, '_>) -> Result<End, SynthError> {
    // deps[c]: cells whose images touched c when last judged.
    let mut deps: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); s.part.cells.len()];
    let mut dirty = s.part.with_status(Status::Kept);
    loop {
        if let Some(reason) = s.over_time() {
            return Ok(End::Limit(reason));
        }
        s.images += s.imager.fill(&mut s.part, &dirty, s.tolerant, &s.budget)?;
        if let Some(reason) = s.over_time() {
            return Ok(End::Limit(reason));
        }
        s.rounds += 1;
        let (mut drops, mut partial) = (Vec::new(), Vec::new());
        for &id in &dirty {
            if !kept(&s.part.cells[id]) {
                continue;
            }
            if let Some(reason) = s.over_time() {
                return Ok(End::Limit(reason));
            }
            let (fate, touched) = s.classify(id, kept);
            for t in touched {
                deps[t].insert(id);
            }
            match fate {
                Fate::Inside => {}
                Fate::Partial if s.has_good_point(id, kept) => partial.push(id),
                Fate::Partial | Fate::Outside => drops.push(id),
            }
        }
        if drops.is_empty() && partial.is_empty() {
            s.report();
            return Ok(End::Closed);
        }
        let mut next = BTreeSet::new();
        let drops = apply(s, partial, drops, |id, a, b| {
            deps.resize(a.max(b) + 1, BTreeSet::new());
            deps[a] = deps[id].clone();
            deps[b] = deps[id].clone();
            next.extend([a, b]);
        });
        for &id in &drops {
            next.extend(deps[id].iter().copied().filter(|&c| kept(&s.part.cells[c])));
        }
        s.report();
        // The kept set only shrinks: once it misses part of Init, no invariant inside it exists.
        match lost_init(s, &drops) {
            Ok(true) => return Ok(End::InitLost),
            Ok(false) => {}
            Err(reason) => return Ok(End::Limit(reason)),
        }
        dirty = next.into_iter().collect();
    }
}
