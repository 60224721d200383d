//! Cheap falsification: evaluate a few concrete transitions exactly (corners and centre of `p`,
//! the ends and middle of each action's exact range under `psi`, the ends and middle of each input
//! domain) and return the first one that refutes the query, after [`crate::replay`] has re-checked
//! it. A miss proves nothing; the query then goes to Z3.

use crate::query::{BridgeQuery, Target};
use crate::replay::replay_bridge;
use num_traits::One;
use trestle_core::Witness;
use trestle_core::replay_implication;
use trestle_ir::boxindex::BoxUnion;
use trestle_ir::expr::Env;
use trestle_ir::num::{rational_from_f64, rational_from_i64};
use trestle_ir::pred::RBox;
use trestle_ir::sim;
use trestle_ir::system::{ActionKind, DomainExit, NondetDomain, System, VarKind};
use trestle_ir::{Pred, Rational};

/// Most values combined per group (states, actions, inputs).
const MAX_COMBOS: usize = 27;

fn two() -> Rational {
    rational_from_i64(2)
}

/// `lo`, `hi` and the middle, in that order (a step leaves first from the ends of a state's box and
/// of an action's range, and the budget may end before the middles), with integers for
/// integer-valued variables (ceil/floor), deduplicated.
fn picks(lo: &Rational, hi: &Rational, integer: bool) -> Vec<Rational> {
    let (lo, hi) = if integer { (lo.ceil(), hi.floor()) } else { (lo.clone(), hi.clone()) };
    if lo > hi {
        return Vec::new();
    }
    let mid = (&lo + &hi) / two();
    let mid = if integer { mid.floor() } else { mid };
    let mut out = vec![lo, hi, mid];
    out.dedup(); // lo == hi (then mid too)
    if out.len() == 3 && (out[2] == out[0] || out[2] == out[1]) {
        out.pop();
    }
    out
}

/// All combinations of one value per position, or (when there would be more than `MAX_COMBOS`) the
/// uniform ones (every position its k-th value).
fn combos(choices: &[Vec<Rational>]) -> Vec<Vec<Rational>> {
    if choices.iter().any(Vec::is_empty) {
        return Vec::new();
    }
    let total = choices.iter().try_fold(1usize, |acc, c| acc.checked_mul(c.len()));
    if total.is_some_and(|t| t <= MAX_COMBOS) {
        let mut out = vec![Vec::new()];
        for c in choices {
            out = out.iter().flat_map(|p| c.iter().map(move |x| [p.clone(), vec![x.clone()]].concat())).collect();
        }
        return out;
    }
    let width = choices.iter().map(Vec::len).max().unwrap_or(0);
    (0..width).map(|k| choices.iter().map(|c| c[k.min(c.len() - 1)].clone()).collect()).collect()
}

fn is_integer_state(sys: &System, i: usize) -> bool {
    sys.state[i].kind != VarKind::Real
}

/// Candidate states of a box with exact ends (per coordinate its ends before its middle).
fn box_states(sys: &System, lo: &[Rational], hi: &[Rational]) -> Vec<Vec<Rational>> {
    let choices: Vec<Vec<Rational>> = (0..lo.len()).map(|i| picks(&lo[i], &hi[i], is_integer_state(sys, i))).collect();
    combos(&choices)
}

/// Most boxes of the extra predicate the sampler intersects the region with (beyond, it samples
/// the region itself and skips states outside the predicate).
const MAX_EXTRA_BOXES: usize = 16;

/// The parts of the region inside the extra predicate, exact, when that predicate is a small union
/// of boxes: the region's f64 ends are rounded outward, so its corners usually lie just outside a
/// candidate invariant it was cut from, and the corners of the parts are the states where a step
/// leaves first.
fn regions_in_extra(
    sys: &System,
    q: &BridgeQuery<'_>,
    extra_union: Option<&BoxUnion>,
) -> Vec<(Vec<Rational>, Vec<Rational>)> {
    let lo: Vec<Rational> = q.region.lo.iter().map(|&x| rational_from_f64(x)).collect();
    let hi: Vec<Rational> = q.region.hi.iter().map(|&x| rational_from_f64(x)).collect();
    let part = |b: &RBox| {
        let lo: Vec<Rational> = lo.iter().zip(&b.lo).map(|(l, m)| m.as_ref().map_or(l, |m| m.max(l)).clone()).collect();
        let hi: Vec<Rational> = hi.iter().zip(&b.hi).map(|(h, m)| m.as_ref().map_or(h, |m| m.min(h)).clone()).collect();
        lo.iter().zip(&hi).all(|(l, h)| l <= h).then_some((lo, hi))
    };
    match extra_union {
        // The boxes a pinned predicate was cut into once (the same as `to_box_union` gives); only
        // those whose enclosure meets the region can have a non-empty part.
        Some(u) if u.len() <= MAX_EXTRA_BOXES => {
            u.near(q.region).into_iter().filter_map(|k| part(&u.boxes()[k])).collect()
        }
        Some(_) => vec![(lo, hi)],
        None => match q.extra.and_then(|e| e.to_box_union(sys.state.len(), MAX_EXTRA_BOXES)) {
            Some(boxes) => boxes.iter().filter_map(part).collect(),
            None => vec![(lo, hi)],
        },
    }
}

/// Looks for a transition refuting the bridge query, spending at most `budget` successor
/// evaluations.
/// `extra_union`: the boxes of `q.extra` when the caller has them (a pinned predicate).
pub(crate) fn sample_bridge(
    sys: &System,
    q: &BridgeQuery<'_>,
    extra_union: Option<&BoxUnion>,
    budget: usize,
) -> Option<Witness> {
    let inputs: Vec<Vec<Rational>> = sys
        .nondet
        .iter()
        .map(|v| match &v.domain {
            NondetDomain::Interval(l, h) => picks(l, h, false),
            NondetDomain::Set(s) => s.iter().take(3).cloned().collect(),
        })
        .collect();
    let inputs = combos(&inputs);
    let mut spent = 0;
    let states = regions_in_extra(sys, q, extra_union).into_iter().flat_map(|(lo, hi)| box_states(sys, &lo, &hi));
    for state in states {
        if let Some(extra) = q.extra
            && !extra.eval_exact(&Env::new(&state, &[], &[])).unwrap_or(false)
        {
            continue;
        }
        let action_choices: Vec<Vec<Rational>> = (0..sys.actions.len())
            .map(|j| {
                let (l, h) = q.post.exact_bounds(j, &state);
                picks(&l, &h, matches!(sys.actions[j].kind, ActionKind::Index { .. }))
            })
            .collect();
        for actions in combos(&action_choices) {
            for nondet in &inputs {
                let Ok(enabled) = sim::enabled_branches(sys, &state, &actions, nondet) else { continue };
                for branch in enabled {
                    if spent >= budget {
                        return None;
                    }
                    spent += 1;
                    let Ok(next) = sim::successor(sys, branch, &state, &actions, nondet) else { continue };
                    if sys.domain_exit == DomainExit::Drop && sim::domain_violation(sys, &next).is_some() {
                        continue;
                    }
                    let Ok(inside) = q.target.pred().eval_exact(&Env::new(&next, &[], &[])) else { continue };
                    let refutes = match q.target {
                        Target::StaysIn(_) => !inside,
                        Target::Leaves(_) => inside,
                    };
                    if refutes {
                        let w = Witness {
                            state: state.clone(),
                            actions: actions.clone(),
                            nondet: nondet.clone(),
                            branch,
                            next,
                        };
                        if replay_bridge(sys, q, &w).is_ok() {
                            return Some(w);
                        }
                    }
                }
            }
        }
    }
    None
}

/// Looks for a state of the premise (a union of boxes) violating the conclusion.
pub(crate) fn sample_implication(sys: &System, premise: &Pred, conclusion: &Pred) -> Option<Witness> {
    let boxes: Vec<RBox> = premise.to_box_union(sys.state.len(), 16)?;
    for b in boxes.iter().filter(|b| b.is_bounded()) {
        let lo: Vec<Rational> = b.lo.iter().map(|x| x.clone().unwrap_or_else(Rational::one)).collect();
        let hi: Vec<Rational> = b.hi.iter().map(|x| x.clone().unwrap_or_else(Rational::one)).collect();
        for state in box_states(sys, &lo, &hi) {
            let w = Witness::state_only(state);
            if replay_implication(sys, premise, conclusion, &w).is_ok() {
                return Some(w);
            }
        }
    }
    None
}
