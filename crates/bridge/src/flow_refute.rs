//! Validated refutations of a sampled-data system's candidate: a state of the invariant whose
//! successor after one period lies outside it, shown without trusting a floating-point run.
//!
//! The start is exact (an f64 point, so a dyadic rational, inside every domain and inside the
//! exact invariant), the inputs exact values of their domains, the actions evaluated exactly
//! (piecewise-linear networks: rational arithmetic through [`trestle_ir::sim`]), and the successor
//! is the validated enclosure of the flow from that point ([`FlowStep::enclose_point`]: the
//! degenerate box, outward-rounded f64 intervals). The refutation holds when that enclosure is
//! disjoint from every box of the invariant's outward cover, so from the invariant itself. It is
//! reported as a one-step [`ValidatedTrace`] at 53 bits (outward-rounded f64 enclosures, not MPFR); `certify`
//! re-derives the actions and the enclosure from the exact start and inputs alone ([`recheck`]).
//! Controllers with tanh or sigmoid layers have no exact actions: no refutation is searched for
//! them (the box stays undecided).

use crate::flow::FlowStep;
use trestle_core::ValidatedTrace;
use trestle_core::validate::{Bounds, EnclosedRun};
use trestle_ir::interval::Interval;
use trestle_ir::num::rational_from_f64;
use trestle_ir::system::DomainExit;
use trestle_ir::{Env, FBox, Pred, Rational, System};
use trestle_smt::Witness;

/// The precision a flow refutation is decided at: outward-rounded f64.
pub const FLOW_REFUTATION_BITS: u32 = 53;

/// Whether the box `image` meets none of the boxes of `cover`.
fn outside(image: &[Interval], cover: &[FBox]) -> bool {
    cover.iter().all(|b| image.iter().enumerate().any(|(i, v)| v.hi < b.lo[i] || v.lo > b.hi[i]))
}

/// Whether every point of `image` lies in every state variable's domain.
fn inside_domains(sys: &System, image: &[Interval]) -> bool {
    sys.state.iter().zip(image).all(|(v, b)| {
        v.domain.lo.as_ref().is_none_or(|l| &rational_from_f64(b.lo) >= l)
            && v.domain.hi.as_ref().is_none_or(|h| &rational_from_f64(b.hi) <= h)
    })
}

/// The successor's enclosure from an exact state and inputs, with the actions evaluated exactly,
/// when the state is a legal state of `inv`: `(actions, enclosure)`.
pub fn successor(
    sys: &System,
    step: &FlowStep,
    inv: &Pred,
    state: &[Rational],
    nondet: &[Rational],
) -> Result<(Vec<Rational>, Vec<Interval>), String> {
    trestle_ir::sim::check_state(sys, state).map_err(|e| format!("not a state: {e}"))?;
    trestle_ir::sim::check_nondet(sys, nondet).map_err(|e| format!("not inputs of the system: {e}"))?;
    if inv.eval_exact(&Env::new(state, &[], &[])) != Ok(true) {
        return Err("the state is not in the invariant".into());
    }
    if let Some(why) = sys.nonlinear_network() {
        return Err(format!("no exact actions: {why}"));
    }
    let mut memory = trestle_ir::sim::initial_memory::<Rational>(sys);
    let actions = trestle_ir::sim::controller_actions(sys, state, nondet, &mut memory).map_err(|e| e.to_string())?;
    let image = step.enclose_point(state, &actions, nondet).map_err(|e| format!("no enclosure of the flow: {e}"))?;
    Ok((actions, image))
}

/// The one-step validated trace from `state` under `nondet`, when the successor's enclosure
/// misses `cover` (an outward cover of `inv`).
pub fn validate(
    sys: &System,
    step: &FlowStep,
    inv: &Pred,
    cover: &[FBox],
    state: &[Rational],
    nondet: &[Rational],
) -> Result<ValidatedTrace, String> {
    let (actions, image) = successor(sys, step, inv, state, nondet)?;
    if !outside(&image, cover) {
        return Err(format!("the successor's enclosure {image:?} meets the invariant's cover"));
    }
    if sys.domain_exit == DomainExit::Drop && !inside_domains(sys, &image) {
        // A successor outside a domain does not exist under `drop`: only one surely inside
        // every domain is a step leaving the invariant.
        return Err("the successor's enclosure is not inside every domain (on_domain_exit = drop)".into());
    }
    let exact = |xs: &[Rational]| xs.iter().map(|x| Bounds { lo: x.clone(), hi: x.clone() }).collect::<Vec<_>>();
    let ends = image.iter().map(|v| Bounds { lo: rational_from_f64(v.lo), hi: rational_from_f64(v.hi) }).collect();
    let choices = vec![(nondet.to_vec(), 0)];
    Ok(ValidatedTrace {
        start: state.to_vec(),
        choices: choices.clone(),
        violated: inv.clone(),
        precision_bits: FLOW_REFUTATION_BITS,
        run: EnclosedRun { states: vec![exact(state), ends], actions: vec![exact(&actions)], choices },
    })
}

/// Looks for a validated refutation in `p`: at the state of a failed leaf query's witness (when
/// it lies in `p`), at the centre and at the corners of `p`, each under every combination of the
/// inputs' extreme values (at most 16 combinations).
pub fn search(
    sys: &System,
    step: &FlowStep,
    inv: &Pred,
    cover: &[FBox],
    p: &FBox,
    hint: Option<&Witness>,
) -> Option<ValidatedTrace> {
    let mut points: Vec<Vec<f64>> = Vec::new();
    if let Some(w) = hint {
        let x: Vec<f64> = w.state.iter().map(trestle_ir::num::to_f64_nearest).collect();
        if p.contains(&x) {
            points.push(x);
        }
    }
    points.push(p.center());
    if p.dims() <= 6 {
        for mask in 0..(1u32 << p.dims()) {
            points.push((0..p.dims()).map(|i| if mask >> i & 1 == 1 { p.hi[i] } else { p.lo[i] }).collect());
        }
    }
    let inputs = trestle_ir::nondet::vertices(sys, trestle_ir::nondet::all_inputs(sys), 16)
        .unwrap_or_else(|| vec![sys.nondet.iter().map(|v| trestle_ir::nondet::extreme_values(v)[0].clone()).collect()]);
    for x in points {
        let state: Vec<Rational> = x.iter().map(|&v| rational_from_f64(v)).collect();
        for nondet in &inputs {
            if let Ok(t) = validate(sys, step, inv, cover, &state, nondet) {
                return Some(t);
            }
        }
    }
    None
}

/// Re-validates a one-step flow refutation from its exact start and inputs (certify): the actions
/// and the enclosure are recomputed; `(holds, what was found)`.
pub fn recheck(
    sys: &System,
    step: &FlowStep,
    inv: &Pred,
    cover: &[FBox],
    state: &[Rational],
    nondet: &[Rational],
) -> (bool, String) {
    match validate(sys, step, inv, cover, state, nondet) {
        Ok(t) => (true, t.to_string()),
        Err(why) => (false, why),
    }
}
