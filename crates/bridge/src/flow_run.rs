//! Validated multi-step runs of a sampled-data system (`[flow]`) from an exact start: what
//! refutes a bounded property ("`p` at every step `a..=b`") on such a system, and what `certify`
//! re-derives from the start alone.
//!
//! The start is exact (rationals inside every domain), the non-deterministic inputs exact per
//! step. At step 0 the state is exact; after that it is known as a box (outward-rounded f64
//! intervals). At every step the controllers run on the box in MPFR interval arithmetic at
//! [`NETWORK_BITS`] bits ([`Enclosed`]: exact while the values stay rational, so a ReLU network's
//! actions at the exact start are exact; outward-rounded enclosures of every activation after),
//! an argmax controller must have its winner decided on the box, and the actions' enclosures
//! (rounded outward to f64) are held over the period while the flow is enclosed from the state
//! box ([`trestle_flow::Flow::enclose`]: validated, outward-rounded f64). Each successor box must
//! lie inside every domain (a box that reaches outside decides nothing about the run's
//! existence). A property `p` is refuted at step `j` when `p` is false on the whole box of step
//! `j` (interval evaluation, outward-rounded): a straddling box decides nothing.
//!
//! The enclosures are f64 (53 bits): the widths grow with the closed loop's expansion, which is
//! what limits the horizon (see the figures in the tests and in [`EnclosedFlowRun::widths`]).

use crate::flow::FlowStep;
use crate::flow_refute::FLOW_REFUTATION_BITS;
use trestle_core::ValidatedTrace;
use trestle_core::validate::{Bounds, EnclosedRun, controller_actions, zero_memory};
use trestle_ir::enclosed::Enclosed;
use trestle_ir::interval::Interval;
use trestle_ir::num::rational_from_f64;
use trestle_ir::system::{DomainExit, Policy};
use trestle_ir::{Arith, Env, Pred, Rational, System};

/// The precision (bits) of the controllers' interval evaluation along a run.
pub const NETWORK_BITS: u32 = 256;

type Value = Enclosed<NETWORK_BITS>;

/// The enclosures of a run: `states[0]` is the exact start (as tight intervals), `states[j]` a
/// box containing the true state after `j` periods; `actions[j]` the held actions of period `j`.
#[derive(Clone, Debug, PartialEq)]
pub struct EnclosedFlowRun {
    pub states: Vec<Vec<Interval>>,
    pub actions: Vec<Vec<Interval>>,
}

impl EnclosedFlowRun {
    /// The largest width of each state box, step by step (the figure that limits the horizon).
    pub fn widths(&self) -> Vec<f64> {
        self.states.iter().map(|s| s.iter().fold(0.0f64, |m, v| m.max(v.width()))).collect()
    }
}

fn enclosed(v: &Interval) -> Value {
    let (lo, hi) = (rational_from_f64(v.lo), rational_from_f64(v.hi));
    if lo == hi { Value::Exact(lo) } else { Value::Exact(lo).join(&Value::Exact(hi)) }
}

fn outward(v: &Value) -> Result<Interval, String> {
    match v.ends() {
        (Some(lo), Some(hi)) => Ok(Interval::of_rational(&lo).hull(&Interval::of_rational(&hi))),
        _ => Err(format!("an action's enclosure {v} is unbounded")),
    }
}

/// The controllers' actions over the state box `state` (module doc): validated replay's
/// ([`trestle_core::validate::controller_actions`]), with a controller that selects its network
/// by a state refused on flows.
fn actions(
    sys: &System,
    state: &[Value],
    nondet: &[Value],
    memory: &mut trestle_ir::sim::Memory<Value>,
) -> Result<Vec<Value>, String> {
    if let Some(c) = sys.controllers.iter().find(|c| !matches!(c.policy, Policy::Network(_))) {
        return Err(format!("controller '{}' selects its network by a state: not supported on flows", c.name));
    }
    controller_actions(sys, state, nondet, memory).map_err(|e| e.to_string())
}

/// Whether every point of `image` lies in every state variable's domain (exactly compared).
fn inside_domains(sys: &System, image: &[Interval]) -> bool {
    sys.domain_exit == DomainExit::Ignore
        || sys.state.iter().zip(image).all(|(v, b)| {
            v.domain.lo.as_ref().is_none_or(|l| &rational_from_f64(b.lo) >= l)
                && v.domain.hi.as_ref().is_none_or(|h| &rational_from_f64(b.hi) <= h)
        })
}

/// The validated run from the exact `start` under the exact inputs `nondet[j]` of each period
/// (module doc). `stop(j, box)` is asked after each state box; the run ends early when it says so.
pub fn enclose_run(
    sys: &System,
    step: &FlowStep,
    start: &[Rational],
    nondet: &[Vec<Rational>],
    mut stop: impl FnMut(usize, &[Interval]) -> bool,
) -> Result<EnclosedFlowRun, String> {
    trestle_ir::sim::check_state(sys, start).map_err(|e| format!("the start is not a state: {e}"))?;
    let mut memory = zero_memory::<NETWORK_BITS>(sys);
    let mut run =
        EnclosedFlowRun { states: vec![start.iter().map(Interval::of_rational).collect()], actions: Vec::new() };
    let mut state: Vec<Value> = start.iter().map(|q| Value::Exact(q.clone())).collect();
    for (j, w) in nondet.iter().enumerate() {
        if stop(j, &run.states[j]) {
            break;
        }
        trestle_ir::sim::check_nondet(sys, w).map_err(|e| format!("step {j}: not inputs of the system: {e}"))?;
        let w_values: Vec<Value> = w.iter().map(|q| Value::Exact(q.clone())).collect();
        let u = actions(sys, &state, &w_values, &mut memory).map_err(|e| format!("step {j}: {e}"))?;
        let u_box = u.iter().map(outward).collect::<Result<Vec<_>, _>>().map_err(|e| format!("step {j}: {e}"))?;
        let w_box: Vec<Interval> = w.iter().map(Interval::of_rational).collect();
        let e = step
            .flow()
            .enclose(&run.states[j], &u_box, &w_box, &step.period, &step.settings)
            .map_err(|e| format!("step {j}: no enclosure of the flow: {e}"))?;
        if e.state.iter().any(|v| !v.lo.is_finite() || !v.hi.is_finite()) {
            return Err(format!("step {j}: the flow's enclosure is unbounded"));
        }
        if !inside_domains(sys, &e.state) {
            return Err(format!("step {}: the enclosure {:?} is not inside every domain", j + 1, e.state));
        }
        state = e.state.iter().map(enclosed).collect();
        run.actions.push(u_box);
        run.states.push(e.state);
    }
    Ok(run)
}

/// Whether `p` is false on the whole box (decided by outward-rounded interval evaluation).
pub fn violated_on(p: &Pred, state: &[Interval]) -> bool {
    p.eval_interval(&Env::new(state, &[], &[])) == Some(false)
}

/// The validated refutation of "`p` at every step of `window`" from `start` under `nondet` (one
/// entry per period, at least `window.end()` of them): the run up to the first step of the window
/// whose box lies strictly outside `p`, as a [`ValidatedTrace`] at 53 bits; `Err` with the reason
/// when no step of the window is decided violated.
pub fn refute(
    sys: &System,
    step: &FlowStep,
    p: &Pred,
    window: std::ops::RangeInclusive<usize>,
    start: &[Rational],
    nondet: &[Vec<Rational>],
) -> Result<(ValidatedTrace, EnclosedFlowRun), String> {
    let last = *window.end();
    if nondet.len() < last {
        return Err(format!("{} periods of inputs for a window ending at step {last}", nondet.len()));
    }
    let mut hit = None;
    let run = enclose_run(sys, step, start, &nondet[..last], |j, b| {
        if window.contains(&j) && violated_on(p, b) {
            hit = Some(j);
        }
        hit.is_some()
    })?;
    let j = match hit {
        Some(j) => j,
        None if window.contains(&(run.states.len() - 1)) && violated_on(p, &run.states[run.states.len() - 1]) => {
            run.states.len() - 1
        }
        None => {
            let widths = run.widths();
            return Err(format!(
                "no state of steps {}..={} lies strictly outside the predicate (enclosure widths up to {:e})",
                window.start(),
                last,
                widths.iter().cloned().fold(0.0, f64::max)
            ));
        }
    };
    let bounds = |xs: &[Interval]| -> Vec<Bounds> {
        xs.iter().map(|v| Bounds { lo: rational_from_f64(v.lo), hi: rational_from_f64(v.hi) }).collect()
    };
    let mut states: Vec<Vec<Bounds>> = run.states[..=j].iter().map(|s| bounds(s)).collect();
    states[0] = start.iter().map(|q| Bounds { lo: q.clone(), hi: q.clone() }).collect();
    let choices: Vec<(Vec<Rational>, usize)> = nondet[..j].iter().map(|w| (w.clone(), 0)).collect();
    let trace = ValidatedTrace {
        start: start.to_vec(),
        choices: choices.clone(),
        violated: p.clone(),
        precision_bits: FLOW_REFUTATION_BITS,
        run: EnclosedRun { states, actions: run.actions[..j].iter().map(|a| bounds(a)).collect(), choices },
    };
    Ok((trace, run))
}

/// Re-checks an unsafe run of a sampled-data system from its exact start and inputs alone
/// (`certify`, kind [`crate::certificate::run::UNSAFE_RUN`]): the start in Init and inside every
/// domain, the validated run of the recorded number of periods, and its last state's box strictly
/// outside Safe. The branch names must be the system's (a `[flow]` system has one).
pub fn certify_run(
    run: &crate::certificate::run::RunJson,
    sys: &System,
    step: &FlowStep,
) -> crate::certificate::Certification {
    use crate::certificate::run::{RunRead, UNSAFE_RUN, read_run};
    let check = |name: &str, ok: bool, detail: String| (name.to_string(), ok, detail);
    // A `[flow]` system has one branch: the inputs are all its choices say.
    let RunRead { start, choices, safe, in_init } = match read_run(run, sys) {
        Ok(r) => r,
        Err(failed) => return failed,
    };
    let inputs: Vec<Vec<Rational>> = choices.into_iter().map(|(w, _)| w).collect();
    let mut checks = vec![in_init];
    let k = inputs.len();
    let leaves = enclose_run(sys, step, &start, &inputs, |_, _| false).and_then(|r| {
        let last = &r.states[k];
        if violated_on(safe, last) {
            Ok(format!("{k} periods; the last state's box {last:?} lies strictly outside Safe (f64 enclosures)"))
        } else {
            Err(format!("the last state's box {last:?} is not strictly outside Safe"))
        }
    });
    checks.push(check(
        "the run is legal at every period and its last state lies outside Safe (validated flow enclosures)",
        leaves.is_ok(),
        leaves.unwrap_or_else(|e| e),
    ));
    crate::certificate::Certification { valid: checks.iter().all(|c| c.1), kind: UNSAFE_RUN, checks }
}
