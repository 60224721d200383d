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
use trestle_core::Trace;
use trestle_ir::expr::{Expr, VarRef};
use trestle_ir::lift::{Lifted, lift_hidden_state};
use trestle_ir::network::{Activation, Layer};
use trestle_ir::num::{Rational, rational_from_f64, to_f64_nearest};
use trestle_ir::pred::CmpOp;
use trestle_ir::system::Policy;
use trestle_ir::{Env, FBox, Pred, RBox, System};
use trestle_synth::{SynthConfig, SynthReport, SynthVerdict, synthesize};

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
    timeout: Option<Duration>,
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
    let Some(hidden_bounds) = hidden_bounds(sys, &lifted, init, steps) else {
        return unknown("synthesis not tried: no simulated run from Init to bound the hidden states with".into());
    };
    let mut safe = vec![p.clone()];
    for (i, v) in sys.state.iter().enumerate() {
        safe.extend(bounds(i, v.domain.lo.clone(), v.domain.hi.clone()));
    }
    for (h, (lo, hi)) in lifted.hidden.iter().zip(hidden_bounds) {
        safe.extend(bounds(h.state, Some(lo), Some(hi)));
    }
    lifted.system.safe = Some(Pred::and(safe));
    let cfg = SynthConfig { timeout, ..SynthConfig::default() };
    let report = match synthesize(&lifted.system, &cfg, &|_| {}) {
        Ok(r) => r,
        // A Safe that is not a bounded union of boxes (p does not bound every variable).
        Err(e) => return unknown(format!("synthesis not tried: {e}")),
    };
    match report.verdict {
        SynthVerdict::Safe => Ok(SynthesisOutcome::Holds(Box::new(Proof { lifted, report }))),
        SynthVerdict::Unsafe => {
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
        SynthVerdict::Unknown => unknown(format!("synthesis: {}", report.reason)),
    }
}

/// Most time the bridge engine gets to re-prove a box invariant for its certificate.
const CERTIFY_BOXES_LIMIT: Duration = Duration::from_secs(10);

/// The bridge engine's proof certificate of `G p` from box invariants found by bound propagation
/// (`bpt::invariant`, one per Init box): their union over the lifted state (the kept hidden
/// units) as the candidate and `p` as Safe, proven on the lifted system. `None` when the bridge
/// engine does not prove it within its time (the verdict stands on BPT's own exact enclosures
/// either way; this only adds a certificate `trestle certify` can re-check).
pub fn certify_boxes(sys: &System, p: &Pred, boxes: &[bpt::FullBox], timeout: Option<Duration>) -> Option<ProofJson> {
    let mut lifted = lift_hidden_state(sys).ok()?;
    let union: Vec<FBox> = boxes.iter().map(|b| crate::certificate::lifted_box(&lifted, b)).collect();
    lifted.system.invariant = Some(boxes_pred(&union));
    lifted.system.safe = Some(p.clone());
    let limit = timeout.map_or(CERTIFY_BOXES_LIMIT, |t| t.min(CERTIFY_BOXES_LIMIT));
    let cfg = trestle_bridge::Config { timeout: Some(limit), ..trestle_bridge::Config::default() };
    let report = trestle_bridge::check(&lifted.system, &cfg, &|_| {}).ok()?;
    match trestle_bridge::certificate::from_report(&lifted.system, &report, &cfg) {
        CertificateJson::Proof(proof) if report.verdict == trestle_bridge::Verdict::Safe => Some(proof),
        _ => None,
    }
}

/// `lo <= x_i <= hi` for the sides given.
fn bounds(i: usize, lo: Option<Rational>, hi: Option<Rational>) -> Vec<Pred> {
    let x = || Expr::var(VarRef::State(i));
    let side = |op, c: Option<Rational>| c.map(|c| Pred::Cmp(x(), op, Expr::constant(c)));
    side(CmpOp::Ge, lo).into_iter().chain(side(CmpOp::Le, hi)).collect()
}

/// Bounds of each kept hidden unit (module docs): the hull over simulated runs of the lifted
/// system from each Init box, widened by its width (at least 2^-6) on both sides, the lower end
/// of a ReLU unit by a quarter of that. `None` when no run was simulated.
fn hidden_bounds(sys: &System, lifted: &Lifted, init: &[RBox], steps: usize) -> Option<Vec<(Rational, Rational)>> {
    let n = sys.state.len();
    let mut hull: Vec<(f64, f64)> = vec![(f64::INFINITY, f64::NEG_INFINITY); lifted.hidden.len()];
    let mut any = false;
    for (b, start) in init.iter().enumerate() {
        // The lifted start box: the hidden units start at 0.
        let mut start = start.clone();
        start.lo.resize(lifted.system.state.len(), Some(Rational::from_integer(0.into())));
        start.hi.resize(lifted.system.state.len(), Some(Rational::from_integer(0.into())));
        for run in sample::run_states(&lifted.system, &start, steps, RUNS, 0x5eed ^ b as u64) {
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
