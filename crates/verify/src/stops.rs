//! One rule for runs that stop, in every safety answer: a property of "every run" speaks of the
//! runs that go on forever, so a proof of safety must also rule out a reachable stop (a deadlock,
//! a successor outside a domain or of the wrong kind, a lookup out of range). The engines prove
//! that the invariant is closed under every step that exists; whether a step always exists is
//! checked here, on the invariant's enclosure (`trestle_ir::stops::stop_free_within`: some branch
//! enabled, updates integral and inside the domains, lookups in range, by interval arithmetic).
//! When it cannot be established the answer is unknown with reason kind `runs-may-stop`, never
//! "safe" (issue 34.5). CEGAR's discrete policies keep their documented exception (a label that
//! enables no command ends the run).

use trestle_core::{RunResult, Status, Unknown};
use trestle_ir::System;
use trestle_ir::interval::Interval;

/// Turns a proven safety result into unknown when a run inside `region` (an enclosure of every
/// reachable state: the invariant's hull) may stop.
pub(crate) fn require_stop_free(sys: &System, region: Option<Vec<Interval>>, result: &mut RunResult) {
    if result.status != Status::Proven {
        return;
    }
    if let Err(why) = trestle_ir::stops::stop_free_within(sys, region.as_deref()) {
        result.verdict = "unknown".into();
        result.set_unknown(&Unknown::RunsMayStop(format!(
            "the invariant is proven closed under every step that exists, but a run inside it may stop ({why}), \
             and safety speaks of the runs that go on"
        )));
    }
}

/// The hull of boxes given by their ends (`None` when there are none or an end is not finite).
pub(crate) fn hull<'a>(boxes: impl IntoIterator<Item = (&'a [f64], &'a [f64])>) -> Option<Vec<Interval>> {
    let mut out: Option<Vec<Interval>> = None;
    for (lo, hi) in boxes {
        let b: Vec<Interval> = lo.iter().zip(hi).map(|(&l, &h)| Interval::new(l, h)).collect();
        out = Some(match out {
            None => b,
            Some(h) => h.iter().zip(&b).map(|(x, y)| x.hull(y)).collect(),
        });
    }
    out.filter(|h| h.iter().all(|iv| iv.lo.is_finite() && iv.hi.is_finite()))
}

/// Most boxes of a candidate invariant whose hull is taken (a union with more is checked over the
/// declared domains instead).
const MAX_HULL_BOXES: usize = 4096;

/// The hull of the system's candidate invariant, rounded outward.
pub(crate) fn candidate_region(sys: &System) -> Option<Vec<Interval>> {
    let boxes = sys.invariant.as_ref()?.to_box_union(sys.state.len(), MAX_HULL_BOXES)?;
    let outer: Vec<_> = boxes.iter().map(|b| b.outer_fbox()).collect();
    hull(outer.iter().map(|b| (&b.lo[..], &b.hi[..])))
}
