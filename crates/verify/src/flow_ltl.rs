//! `ltl --method bpt` on a sampled-data system (`[flow]`): the bounded property `G<=k p` (`p` a
//! state predicate, at every step 0..=k), the competition's own question on the ARCH-COMP plants.
//!
//! - **true**: bound propagation through time with the flow's validated enclosure as the step.
//!   Each box of Init is carried period by period two ways side by side: as a zonotope
//!   ([`crate::flow_reach`]: the controller as CROWN's middle line plus its gap, the flow's linear
//!   enclosure substituted, so an oscillating closed loop's set turns without the wrapping of
//!   re-boxing; `p` decided on each zonotope exactly for linear atoms) and re-boxed every period
//!   (the controllers' outputs over the state box in outward-rounded interval arithmetic met with
//!   CROWN's bounds, [`crate::flow_crown`]; an argmax must be decided on the box; the flow
//!   enclosed from the box under the actions' box held, [`trestle_flow::Flow::enclose`]). Each
//!   step's box is met with the zonotope's hull and `p` must hold on one of the two; the box is
//!   dropped once it is no tighter than the hull (on TORA and Docking after a period or two),
//!   and where a zonotope step fails re-boxing goes on from its last hull. Every set must lie
//!   inside the domains. A box where some step straddles `p` (or no enclosure is found) is split
//!   in two along its widest side, down to [`MAX_SPLITS`] halvings and [`MAX_BOXES`] boxes in
//!   all; after [`PROJECTION_MIN_BOXES`] boxes the search also stops when the share of Init
//!   proven so far projects more than [`MAX_BOXES`]. A box left undecided makes the answer
//!   unknown, never true.
//! - **false**: a validated run from an exact start in Init (`trestle_bridge::flow_falsify`: f64
//!   falsification, then `trestle_bridge::flow_run`: the enclosure of a step of the window strictly
//!   outside `p`). When `p` is the system's Safe, the run is the certificate (an unsafe run of
//!   format `/3` with the flow settings), which `certify` re-derives from its start alone.
//! - **unknown** otherwise.

use crate::error::DriverError;
use crate::progress::Progress;
use crate::temporal::Named;
use serde_json::{Value, json};
use std::time::Instant;
use trestle_bridge::certificate::run::run_json;
use trestle_bridge::certificate::{CertificateJson, FORMAT_FLOW, FlowJson, OutcomeJson};
use trestle_bridge::flow::FlowStep;
use trestle_bridge::flow_falsify::{FalsifySettings, falsify};
use trestle_core::{Budget, RunResult, Unknown, Verdict};
use trestle_flow::{FlowSettings, Zonotope};
use trestle_ir::formula::Ltl;
use trestle_ir::interval::Interval;
use trestle_ir::plant::SampledPlant;
use trestle_ir::system::{ControllerOutput, DomainExit, Policy};
use trestle_ir::{Env, FBox, Pred, Rational, System};

/// The most halvings of one box of Init.
pub const MAX_SPLITS: usize = 16;
/// The most boxes bound propagation examines in all.
pub const MAX_BOXES: usize = 4096;

/// Why a run on a flow system wrote no certificate (when [`FlowLtlRun::certificate`] is `None`).
pub const NO_CERTIFICATE: &str = "on a continuous-time system only a validated run leaving the system's Safe (the \
    formula G<=k safe) has one";

/// A bounded LTL run on a flow system: the result and the certificate of a refutation of Safe.
#[derive(Debug)]
pub struct FlowLtlRun {
    pub result: RunResult,
    pub certificate: Option<Value>,
}

/// The state predicate a formula without temporal operators stands for.
fn state_pred(phi: &Ltl) -> Option<Pred> {
    Some(match phi {
        Ltl::Atom(p) => p.clone(),
        Ltl::Not(a) => Pred::Not(Box::new(state_pred(a)?)),
        Ltl::And(xs) => Pred::And(xs.iter().map(state_pred).collect::<Option<_>>()?),
        Ltl::Or(xs) => Pred::Or(xs.iter().map(state_pred).collect::<Option<_>>()?),
        _ => return None,
    })
}

/// `(p, k)` of `G<=k p` (or of `p` alone, k = 0); `None` for any other formula.
pub fn bounded_always(phi: &Ltl) -> Option<(Pred, u32)> {
    match phi {
        Ltl::G(Some(k), a) => Some((state_pred(a)?, *k)),
        _ => Some((state_pred(phi)?, 0)),
    }
}

/// The controllers' actions over the state box, in outward-rounded intervals; `None` when an
/// argmax is undecided or a controller cannot be bounded on intervals.
fn action_box(sys: &System, state: &[Interval], nondet: &[Interval]) -> Option<Vec<Interval>> {
    let mut actions = vec![None; sys.actions.len()];
    for c in &sys.controllers {
        let env = Env::new(state, &[], nondet);
        let input = c.inputs.iter().map(|e| e.eval(&env)).collect::<Result<Vec<Interval>, _>>().ok()?;
        let Policy::Network(n) = &c.policy else { return None };
        let network = &sys.networks[*n].network;
        if network.is_recurrent() {
            return None;
        }
        let mut out = network.run(&input, &mut []).ok()?;
        crate::flow_crown::tighten(network, &input, &mut out);
        match &c.output {
            ControllerOutput::Actions(ids) => {
                for (k, &a) in ids.iter().enumerate() {
                    actions[a] = Some(out[k]);
                }
            }
            ControllerOutput::Argmax(a) => {
                // Decided when one output's lower end is above every other's upper end (ties
                // included: the lowest index wins only when strictly above those before it).
                let w = (0..out.len()).find(|&i| {
                    out.iter().enumerate().all(|(j, o)| match j.cmp(&i) {
                        std::cmp::Ordering::Less => out[i].lo > o.hi,
                        std::cmp::Ordering::Equal => true,
                        std::cmp::Ordering::Greater => out[i].lo >= o.hi,
                    })
                })?;
                actions[*a] = Some(Interval::point(w as f64));
            }
        }
    }
    actions.into_iter().collect()
}

fn inside_domains(sys: &System, image: &[Interval]) -> bool {
    sys.domain_exit == DomainExit::Ignore
        || sys.state.iter().zip(image).all(|(v, b)| {
            let (lo, hi) = (trestle_ir::num::rational_from_f64(b.lo), trestle_ir::num::rational_from_f64(b.hi));
            v.domain.lo.as_ref().is_none_or(|l| &lo >= l) && v.domain.hi.as_ref().is_none_or(|h| &hi <= h)
        })
}

/// The box of every successor of every state of the box `x` (re-boxing: the controllers'
/// actions over `x`, the flow enclosed under them held), inside the domains.
fn box_step(sys: &System, step: &FlowStep, x: &[Interval], nondet: &[Interval]) -> Option<Vec<Interval>> {
    let u = action_box(sys, x, nondet)?;
    let e = step.flow().enclose(x, &u, nondet, &step.period, &step.settings).ok()?;
    let finite = e.state.iter().all(|v| v.lo.is_finite() && v.hi.is_finite());
    (finite && inside_domains(sys, &e.state)).then_some(e.state)
}

/// A box of Init proven: the largest side of each step's set, and the most generators of its
/// zonotopes when the zonotope lasted to the last step.
struct BoxProof {
    widths: Vec<f64>,
    zonotope_generators: Option<usize>,
}

/// Whether `p` holds at every step 0..=k of every run from the box (module doc): the zonotope and
/// the re-boxed box carried side by side, both sound, each step's box met with the zonotope's
/// hull and `p` decided on either. The box is dropped once the meet leaves it equal to the hull
/// (it adds nothing, and re-boxing a wide box costs as much as a zonotope step); where a
/// zonotope step fails (an input not affine in the state, an undecided argmax), re-boxing goes on
/// from the last zonotope's hull. `None`: undecided at some step, or no enclosure.
fn propagate(sys: &System, step: &FlowStep, p: &Pred, k: u32, region: &FBox, budget: &Budget) -> Option<BoxProof> {
    let nondet: Vec<Interval> = sys.nondet.iter().map(trestle_ir::nondet::hull).collect();
    let mut zonotope = Some(Zonotope::from_box(&region.intervals()));
    let mut boxed = Some(region.intervals());
    let (mut widths, mut generators) = (Vec::new(), 0usize);
    for j in 0..=k {
        let hull = zonotope.as_ref().map(Zonotope::hull);
        if let (Some(h), Some(x)) = (&hull, &mut boxed) {
            // Both contain every state reachable at step j, so they meet (an empty meet could
            // only come from a bug: the box is then kept as it is).
            let met: Option<Vec<Interval>> = x.iter().zip(h).map(|(a, b)| a.intersect(b)).collect();
            match met {
                Some(m) if m == *h => boxed = None,
                Some(m) => *x = m,
                None => {}
            }
        }
        let set = boxed.as_ref().or(hull.as_ref()).expect("a zonotope or a box is carried");
        widths.push(set.iter().fold(0.0f64, |m, v| m.max(v.width())));
        let on_zonotope = zonotope.as_ref().and_then(|z| z.decide(p));
        let on_box = boxed.as_ref().and_then(|x| p.eval_interval(&Env::new(x, &[], &[])));
        if on_zonotope != Some(true) && on_box != Some(true) {
            return None;
        }
        if j == k || budget.is_over() {
            break;
        }
        if let Some(z) = &zonotope {
            generators = generators.max(z.generators.len());
            match crate::flow_reach::step(sys, step, z, crate::flow_reach::GENERATORS_PER_STATE) {
                Ok(next) => zonotope = Some(next),
                Err(_) => {
                    zonotope = None;
                    boxed = boxed.or(hull);
                }
            }
        }
        if let Some(x) = &boxed {
            boxed = box_step(sys, step, x, &nondet);
        }
        if zonotope.is_none() && boxed.is_none() {
            return None;
        }
    }
    if widths.len() != k as usize + 1 {
        return None;
    }
    let zonotope_generators = zonotope.map(|z| generators.max(z.generators.len()));
    Some(BoxProof { widths, zonotope_generators })
}

/// Halves `b` along its widest side (relative to `scale`, the widths of Init's box).
fn halves(b: &FBox, scale: &[f64]) -> (FBox, FBox) {
    let rel = |i: usize| if scale[i] > 0.0 { (b.hi[i] - b.lo[i]) / scale[i] } else { 0.0 };
    let i = (0..b.dims()).max_by(|&a, &c| rel(a).total_cmp(&rel(c))).expect("a box has a side");
    let mid = b.lo[i] + (b.hi[i] - b.lo[i]) / 2.0;
    let (mut lo, mut hi) = (b.clone(), b.clone());
    lo.hi[i] = mid;
    hi.lo[i] = mid;
    (lo, hi)
}

enum Propagated {
    /// `zonotopes` of the `boxes` were proven by zonotope propagation, with at most `generators`.
    Holds {
        boxes: usize,
        widths: Vec<f64>,
        zonotopes: usize,
        generators: usize,
    },
    Open(String),
}

/// Bound propagation gives up early when, after this many boxes, the share of Init's volume
/// proven so far projects more than [`MAX_BOXES`] boxes in all (boxes examined / share proven:
/// ARCH-COMP Docking projects about 8000 from its first 60 boxes, TORA at most 184 on its way
/// to the 163 it takes).
pub const PROJECTION_MIN_BOXES: usize = 32;

fn bpt(sys: &System, step: &FlowStep, p: &Pred, k: u32, init: &[FBox], budget: &Budget) -> Propagated {
    let mut queue: Vec<(FBox, usize, Vec<f64>)> =
        init.iter().map(|b| (b.clone(), 0, (0..b.dims()).map(|i| b.hi[i] - b.lo[i]).collect())).collect();
    let (mut boxes, mut widths) = (0usize, vec![0.0f64; k as usize + 1]);
    let (mut zonotopes, mut generators) = (0usize, 0usize);
    // The share of Init proven: each box of Init counts 1/len, a piece halved d times 2^-d of it.
    let mut covered = 0.0f64;
    let share = 1.0 / init.len().max(1) as f64;
    while let Some((b, depth, scale)) = queue.pop() {
        if budget.is_over() {
            return Propagated::Open("the time limit was reached during bound propagation".into());
        }
        if boxes >= PROJECTION_MIN_BOXES && boxes as f64 > MAX_BOXES as f64 * covered {
            return Propagated::Open(format!(
                "{boxes} boxes proved {:.2}% of Init's volume: at that rate more than {MAX_BOXES} boxes would be \
                 needed",
                100.0 * covered
            ));
        }
        boxes += 1;
        if boxes > MAX_BOXES {
            return Propagated::Open(format!("more than {MAX_BOXES} boxes of Init would be needed"));
        }
        match propagate(sys, step, p, k, &b, budget) {
            Some(proof) => {
                widths.iter_mut().zip(proof.widths).for_each(|(m, x)| *m = m.max(x));
                covered += share * 0.5f64.powi(depth as i32);
                if let Some(g) = proof.zonotope_generators {
                    zonotopes += 1;
                    generators = generators.max(g);
                }
            }
            None if budget.is_over() => {
                return Propagated::Open("the time limit was reached during bound propagation".into());
            }
            None if depth < MAX_SPLITS && scale.iter().any(|&s| s > 0.0) => {
                let (l, h) = halves(&b, &scale);
                queue.push((l, depth + 1, scale.clone()));
                queue.push((h, depth + 1, scale));
            }
            None => {
                return Propagated::Open(format!(
                    "a box of Init halved {depth} times still straddles the predicate or has no enclosure: {b:?}"
                ));
            }
        }
    }
    Propagated::Holds { boxes, widths, zonotopes, generators }
}

/// Decides `G<=k p` on the flow system (module doc).
pub fn ltl_flow(
    sys: &System,
    plant: &SampledPlant,
    phi: &Ltl,
    property: &Named,
    settings: FlowSettings,
    budget: &Budget,
    progress: &dyn Progress,
) -> Result<FlowLtlRun, DriverError> {
    let (p, k) = bounded_always(phi).ok_or_else(|| {
        DriverError::input(format!(
            "'{}': on a continuous-time system ([flow]) `ltl` decides `G<=k p` with p a state predicate only",
            property.text
        ))
    })?;
    // Runs from a point use no refinement passes: their boxes' widths are rounding, which more
    // sub-steps do not shrink (the airplane's run: the same widths, 3.4 s instead of 13.4 s).
    let run_step = FlowStep::new(sys, plant, FlowSettings { refinements: 0, ..settings.clone() })?;
    let step = FlowStep::new(sys, plant, settings)?;
    let n = sys.state.len();
    let rboxes = sys
        .init
        .to_box_union(n, 64)
        .ok_or_else(|| DriverError::input("Init must be a union of at most 64 boxes for bound propagation on flows"))?;
    let mut outer = Vec::new();
    for b in &rboxes {
        let o = b
            .enclosing_fbox()
            .ok_or_else(|| DriverError::input("Init must be bounded in every state variable on flows"))?;
        outer.push(o.into_fbox());
    }
    let clock = Instant::now();
    progress.stage("bound propagation through time on the flow");
    let proven = bpt(sys, &step, &p, k, &outer, budget);
    let bpt_seconds = clock.elapsed().as_secs_f64();
    let mut details = serde_json::Map::new();
    let mut certificate = None;
    let verdict = match proven {
        Propagated::Holds { boxes, widths, zonotopes, generators } => {
            details.insert("bpt_boxes".into(), json!(boxes));
            details.insert("bpt_zonotope_boxes".into(), json!(zonotopes));
            details.insert("bpt_zonotope_generators".into(), json!(generators));
            details.insert("bpt_widths".into(), json!(widths));
            Verdict::proven()
        }
        Propagated::Open(why) => {
            progress.stage("falsification: f64 runs from Init, then a validated run");
            let in_init = |x: &[Rational]| sys.init.eval_exact(&Env::new(x, &[], &[])) == Ok(true);
            let window = 0..=k as usize;
            let found = rboxes.iter().filter_map(|b| b.inner_fbox()).find_map(|inner| {
                let inner = inner.into_fbox();
                if (0..inner.dims()).any(|i| inner.lo[i] > inner.hi[i]) {
                    return None;
                }
                let settings = FalsifySettings { deadline: budget.deadline(), ..FalsifySettings::default() };
                falsify(sys, &run_step, &p, window.clone(), &inner, in_init, &settings)
            });
            match found {
                Some((trace, run)) => {
                    details.insert("enclosure_widths".into(), json!(run.widths()));
                    if sys.safe.as_ref() == Some(&p) {
                        let out = OutcomeJson {
                            format: FORMAT_FLOW.into(),
                            system: sys.name.clone(),
                            verdict: "unsafe".into(),
                            witness: None,
                            witness_exact: None,
                            region: None,
                            reason: Some(format!("a validated run of {} periods from Init leaves Safe", trace.len())),
                            validated: None,
                            run: Some(run_json(sys, &trace.start, &trace.choices)),
                            flow: Some(FlowJson::of(&run_step)),
                        };
                        certificate = Some(serde_json::to_value(CertificateJson::Outcome(out)).expect("serialises"));
                    }
                    Verdict::RefutedValidated { trace }
                }
                // The search stops at the time limit (FalsifySettings::deadline).
                None if budget.is_over() => Verdict::Unknown(Unknown::Timeout),
                None => Verdict::Unknown(Unknown::Incomplete(format!(
                    "{why}; no validated run from Init violates it (f64 falsification)"
                ))),
            }
        }
    };
    let mut result = RunResult::of_verdict("ltl", sys, "bpt-flow", crate::temporal::word(&verdict), &verdict);
    result.property = Some(property.name.clone());
    result.details.insert("formula".into(), json!(property.text));
    result.details.extend(details);
    if matches!(verdict, Verdict::Proven { .. }) {
        result.evidence = Some(
            "bound propagation through time on the flow: the predicate holds on the validated enclosure of every \
             step from every box of Init"
                .into(),
        );
    }
    result.stat("bpt_seconds", bpt_seconds).stat("seconds", clock.elapsed().as_secs_f64());
    Ok(FlowLtlRun { result, certificate })
}
