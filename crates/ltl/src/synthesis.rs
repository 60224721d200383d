//! `G p` by invariant synthesis, for memoryful systems too: the recurrent controllers' hidden
//! states lifted into the state (`trestle_ir::lift`, exact), Safe set to `p` within bounds of the
//! hidden states and the declared domains, and `trestle_synth::synthesize` asked for a union of
//! boxes `I` with `Init => I => Safe` whose inductiveness the bridge engine proves (network bounds
//! rounded outward, the step checked by Z3 with the weights as exact rationals). Every run of the
//! lifted system stays in `I`, so `p` holds at every step of every run of the original one.
//!
//! Where a box hull is not inductive (a rotating closed loop, an integral without leak) a union of
//! boxes can be: this is the invariant method's second realisation after `bpt::invariant`.
//!
//! The hidden states' bounds only say where the search looks (the partition lives inside Safe):
//! any bounds give a sound proof, and bounds too tight only make the search fail. They are the
//! hull of the hidden states of simulated runs, widened on both sides by its width (a ReLU
//! unit's lower end only by a quarter of that: it is never negative).

use crate::bpt;
use crate::error::LtlError;
use crate::sample;
use std::time::Duration;
use trestle_bridge::certificate::{CertificateJson, ProofJson, boxes_pred};
use trestle_core::Budget;
use trestle_core::Trace;
use trestle_ir::expr::{Expr, VarRef};
use trestle_ir::lift::{Lifted, lift_hidden_state};
use trestle_ir::network::{Activation, Layer};
use trestle_ir::num::{Rational, rational_from_f64, to_f64_nearest};
use trestle_ir::pred::CmpOp;
use trestle_ir::system::Policy;
use trestle_ir::{Env, FBox, Pred, RBox, System};
use trestle_synth::{SynthConfig, SynthReport, synthesize};

/// Most dimensions of the lifted state synthesis is tried on (its grid of boxes grows
/// exponentially with them).
pub const MAX_DIMS: usize = 8;

/// Simulated runs whose hidden states bound the search.
const RUNS: usize = 64;

/// What the synthesis says about `G p`.
#[derive(Debug)]
pub enum SynthesisOutcome {
    /// An inductive union of boxes inside `p` (with the hidden bounds) holding Init: `G p` holds.
    Holds(Box<Proof>),
    /// A run from Init on which `p` fails, replayed exactly in the original system.
    Violated(Trace),
    /// Not decided, and why.
    Unknown(String),
}

/// The proven invariant.
#[derive(Debug)]
pub struct Proof {
    /// The lifted system the invariant is of (state: the original variables, then the kept
    /// hidden units), with the Safe it was proven inside.
    pub lifted: Lifted,
    pub report: SynthReport,
}

/// Tries to prove (or refute) `G p` from every state of Init by synthesis over the lifted
/// system; `steps` is the length of the simulated runs that bound the hidden states.
pub fn always(
    sys: &System,
    p: &Pred,
    init: &[RBox],
    steps: usize,
    budget: &Budget,
) -> Result<SynthesisOutcome, LtlError> {
    let unknown = |why: String| Ok(SynthesisOutcome::Unknown(why));
    // A hidden state that cannot be carried exactly through some layer (lift's module docs)
    // leaves this method out; the others may still decide.
    for n in sys.networks.iter().filter(|n| n.network.is_recurrent()) {
        if let Err(why) = trestle_ir::lift::lift_network(&n.network, trestle_ir::lift::Head::Both) {
            return unknown(format!("synthesis not tried: network '{}': {why}", n.name));
        }
    }
    let mut lifted =
        lift_hidden_state(sys).map_err(|e| LtlError::Internal(format!("the lifted system is invalid: {e}")))?;
    let dims = lifted.system.state.len();
    if dims > MAX_DIMS {
        return unknown(format!(
            "synthesis not tried: the state with the kept hidden units has {dims} dimensions (at most {MAX_DIMS})"
        ));
    }
    let Some(hidden_bounds) = hidden_bounds(sys, &lifted, init, steps, budget) else {
        return unknown("synthesis not tried: no simulated run from Init to bound the hidden states with".into());
    };
    let Some(within) = bounded_safe(sys, p, init, budget)? else {
        return unknown(format!("synthesis not tried: {NO_BOUNDS}"));
    };
    let mut safe = vec![within];
    for (h, (lo, hi)) in lifted.hidden.iter().zip(hidden_bounds) {
        safe.extend(bounds(h.state, Some(lo), Some(hi)));
    }
    lifted.system.safe = Some(Pred::and(safe));
    let report = match synthesize(&lifted.system, &SynthConfig::default(), budget, &|_| {}) {
        Ok(r) => r,
        // A Safe that is not a bounded union of boxes (p does not bound every variable).
        Err(e) => return unknown(format!("synthesis not tried: {e}")),
    };
    match &report.verdict {
        trestle_core::Verdict::Proven { .. } => Ok(SynthesisOutcome::Holds(Box::new(Proof { lifted, report }))),
        trestle_core::Verdict::Refuted { .. } => {
            // The run leaves the lifted Safe: a refutation only where it leaves `p` itself.
            let Some(run) = report.trajectory.as_ref().and_then(|t| t.exact.as_ref()) else {
                return unknown(format!("synthesis: {}", report.reason));
            };
            let n = sys.state.len();
            let choices = run.nondet.iter().cloned().zip(run.branches.iter().copied());
            let trace = Trace::simulate(sys, run.states[0][..n].to_vec(), choices).map_err(|e| {
                LtlError::Internal(format!("a run of the lifted system does not replay in the original: {e}"))
            })?;
            let last = trace.states.last().expect("a trace has a state");
            if p.eval_exact(&Env::new(last, &[], &[])).map_err(|e| LtlError::Unsupported(e.to_string()))? {
                return unknown(
                    "synthesis: a run leaves the bounds of the hidden states the search was given, not the predicate"
                        .into(),
                );
            }
            Ok(SynthesisOutcome::Violated(trace))
        }
        // A validated run (through irrational values) is re-established on the original system
        // by the sampler, not carried over from the lifted one.
        trestle_core::Verdict::RefutedValidated { .. }
        | trestle_core::Verdict::Evidence { .. }
        | trestle_core::Verdict::Unknown(_) => unknown(format!("synthesis: {}", report.reason)),
    }
}

/// Most time the bridge engine gets to re-prove a box invariant for its certificate.
const CERTIFY_BOXES_LIMIT: Duration = Duration::from_secs(10);

/// The bridge engine's proof certificate of `G p` from box invariants found by bound propagation
/// (`bpt::invariant`, one per Init box): their union over the lifted state (the kept hidden
/// units) as the candidate and `p` as Safe, proven on the lifted system. `None` when the bridge
/// engine does not prove it within its time (the verdict stands on BPT's own exact enclosures
/// either way; this only adds a certificate `trestle certify` can re-check).
pub fn certify_boxes(sys: &System, p: &Pred, boxes: &[bpt::FullBox], budget: &Budget) -> Option<ProofJson> {
    let mut lifted = lift_hidden_state(sys).ok()?;
    let union: Vec<FBox> = boxes.iter().map(|b| crate::certificate::lifted_box(&lifted, b)).collect();
    lifted.system.invariant = Some(boxes_pred(&union));
    lifted.system.safe = Some(p.clone());
    let limited = budget.sub(Some(CERTIFY_BOXES_LIMIT));
    let report = trestle_bridge::check(&lifted.system, &trestle_bridge::Config::default(), &limited, &|_| {}).ok()?;
    match trestle_bridge::certificate::from_report(&lifted.system, &report) {
        CertificateJson::Proof(proof) if report.verdict.is_proven() => Some(proof),
        _ => None,
    }
}

/// Why [`bounded_safe`] found no bounds.
pub const NO_BOUNDS: &str = "some state variable is bounded neither by the predicate, nor by its domain, nor by the \
    system's safe, nor by an inductive box around Init";

/// Most rounds of interval iteration [`bounded_safe`] spends looking for an inductive box.
const ENCLOSURE_ROUNDS: usize = 256;

/// `p` within bounds on every state variable, for a search whose Safe must be a bounded union of
/// boxes (synthesis): the variables `p` leaves unbounded are bounded by their declared domains,
/// else by the system's `safe`, else by an inductive box around each Init box (`bpt::invariant`,
/// which every run stays in). Any invariant inside the result lies inside `p`, so proving `G` of
/// it proves `G p`; but a run leaving it need not leave `p` (a refutation must be checked
/// against `p` itself). `None` when `p` is not a union of boxes or nothing bounds some variable.
pub fn bounded_safe(sys: &System, p: &Pred, init: &[RBox], budget: &Budget) -> Result<Option<Pred>, LtlError> {
    let n = sys.state.len();
    let bounds_var = |q: &Pred, i: usize| {
        q.to_box_union(n, MAX_BOXES).is_some_and(|bs| bs.iter().all(|b| b.lo[i].is_some() && b.hi[i].is_some()))
    };
    if p.to_box_union(n, MAX_BOXES).is_none() {
        return Ok(None);
    }
    let mut parts = vec![p.clone()];
    let mut open = Vec::new();
    for (i, v) in sys.state.iter().enumerate() {
        if bounds_var(p, i) {
            continue;
        }
        match (&v.domain.lo, &v.domain.hi) {
            (Some(lo), Some(hi)) => parts.extend(bounds(i, Some(lo.clone()), Some(hi.clone()))),
            _ => open.push(i),
        }
    }
    if open.is_empty() {
        return Ok(Some(Pred::and(parts)));
    }
    if let Some(safe) = &sys.safe
        && open.iter().all(|&i| bounds_var(safe, i))
    {
        parts.push(safe.clone());
        return Ok(Some(Pred::and(parts)));
    }
    let mut boxes = Vec::new();
    for b in init {
        let h = match bpt::invariant(sys, b, ENCLOSURE_ROUNDS, budget) {
            Ok(Some(h)) => h,
            Ok(None) | Err(LtlError::Unsupported(_) | LtlError::Semantics(_) | LtlError::Overflow(_)) => {
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        let lo = open.iter().map(|&i| Some(rational_from_f64(h.state[i].lo))).collect::<Vec<_>>();
        let hi = open.iter().map(|&i| Some(rational_from_f64(h.state[i].hi))).collect::<Vec<_>>();
        boxes.push(Pred::and(
            open.iter().zip(lo.into_iter().zip(hi)).flat_map(|(&i, (lo, hi))| bounds(i, lo, hi)).collect(),
        ));
    }
    parts.push(Pred::or(boxes));
    Ok(Some(Pred::and(parts)))
}

/// Most boxes a predicate is cut into to read its bounds.
const MAX_BOXES: usize = 1024;

/// `lo <= x_i <= hi` for the sides given.
fn bounds(i: usize, lo: Option<Rational>, hi: Option<Rational>) -> Vec<Pred> {
    let x = || Expr::var(VarRef::State(i));
    let side = |op, c: Option<Rational>| c.map(|c| Pred::Cmp(x(), op, Expr::constant(c)));
    side(CmpOp::Ge, lo).into_iter().chain(side(CmpOp::Le, hi)).collect()
}

/// Bounds of each kept hidden unit (module docs): the hull over simulated runs of the lifted
/// system from each Init box, widened by its width (at least 2^-6) on both sides, the lower end
/// of a ReLU unit by a quarter of that. `None` when no run was simulated.
fn hidden_bounds(
    sys: &System,
    lifted: &Lifted,
    init: &[RBox],
    steps: usize,
    budget: &Budget,
) -> Option<Vec<(Rational, Rational)>> {
    let n = sys.state.len();
    let mut hull: Vec<(f64, f64)> = vec![(f64::INFINITY, f64::NEG_INFINITY); lifted.hidden.len()];
    let mut any = false;
    for (b, start) in init.iter().enumerate() {
        // The lifted start box: the hidden units start at 0.
        let mut start = start.clone();
        start.lo.resize(lifted.system.state.len(), Some(Rational::from_integer(0.into())));
        start.hi.resize(lifted.system.state.len(), Some(Rational::from_integer(0.into())));
        for run in sample::run_states(&lifted.system, &start, steps, RUNS, 0x5eed ^ b as u64, budget) {
            any = true;
            for state in &run {
                for (k, v) in state[n..].iter().enumerate() {
                    let v = to_f64_nearest(v);
                    hull[k] = (hull[k].0.min(v), hull[k].1.max(v));
                }
            }
        }
    }
    if !any {
        return None;
    }
    Some(
        lifted
            .hidden
            .iter()
            .zip(hull)
            .map(|(h, (lo, hi))| {
                let pad = (hi - lo).max(1.0 / 64.0);
                // A ReLU unit is never negative, but its bounds' lower end may be a rounding
                // below 0: a Safe ending exactly at 0 would have every image leave it.
                let relu = recurrent_activation(sys, h.controller, h.layer) == Some(Activation::Relu);
                let lo = if relu { -pad / 4.0 } else { lo - pad };
                (rational_from_f64(lo), rational_from_f64(hi + pad))
            })
            .collect(),
    )
}

/// The activation of recurrent layer `layer` of the controller's network.
fn recurrent_activation(sys: &System, controller: usize, layer: usize) -> Option<Activation> {
    let Policy::Network(n) = sys.controllers[controller].policy else { return None };
    sys.networks[n]
        .network
        .layers
        .iter()
        .filter_map(|l| match l {
            Layer::Recurrent(r) => Some(r.activation),
            Layer::Dense(_) => None,
        })
        .nth(layer)
}
