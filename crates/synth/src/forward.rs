//! The forward search: the cells reachable from Init through images, until closure. Where an
//! image leaves Safe, the cell it comes from is bisected (or, once that cell is at the minimum
//! width, the cell whose image reached it, and so on up the chain: the over-approximation that
//! led there is refined), and the closure is recomputed; images are kept per cell, so only new
//! halves cost bound computations.

use crate::SynthError;
use crate::partition::Cell;
use crate::search::{End, Search};
use std::collections::BTreeSet;

fn leaf(c: &Cell) -> bool {
    c.is_leaf()
}

pub(crate) fn run(s: &mut Search<'_, '_>) -> Result<End, SynthError> {
    if s.init.is_none() {
        return Err(SynthError::Unsupported(
            "the forward search starts from Init, which must be a union of boxes (variable bounds)".into(),
        ));
    }
    loop {
        if let Some(reason) = s.over_time() {
            return Ok(End::Limit(reason));
        }
        s.rounds += 1;
        let closure = match s.closure(leaf)? {
            Ok(c) => c,
            Err(reason) => return Ok(End::Limit(reason)),
        };
        s.report();
        if closure.escaping.is_empty() {
            s.invariant = closure.reached;
            return Ok(End::Closed);
        }
        let mut refined = BTreeSet::new();
        for &id in &closure.escaping {
            // The first cell up the chain that can still be bisected. When every sample point of
            // the cell leaves Safe, its halves would too: refine what led there instead.
            let mut at = if s.has_good_point(id, leaf) { Some(id) } else { closure.parent.get(&id).copied() };
            while let Some(c) = at {
                if refined.contains(&c) || (s.part.cells[c].is_leaf() && s.part.split_dim(c).is_some()) {
                    break;
                }
                at = closure.parent.get(&c).copied();
            }
            if let Some(c) = at
                && refined.insert(c)
                && s.split(c).is_none()
            {
                refined.remove(&c);
            }
        }
        if refined.is_empty() {
            s.escaping = closure.escaping;
            return Ok(match &s.budget_hit {
                Some(reason) => End::Limit(reason.clone()),
                None => End::Escapes,
            });
        }
    }
}
