//! The search for a run from Init that leaves Safe on a sampled-data system (`[flow]`).
//!
//! The discrete attack ([`crate::attack`]) simulates the system's step, which for a sampled-data
//! system is the identity: here the runs are those of the flow. Candidate starts in each box of
//! Init are found by f64 simulation of the closed loop with the inputs held at an extreme value
//! ([`trestle_bridge::flow_falsify::falsify`]: centre, corners, seeded random points, a local
//! search minimising Safe's robustness along the run), and a candidate is kept only when its run
//! is **validated** ([`trestle_bridge::flow_run`]: the exact start in Init, the controllers in
//! interval arithmetic, the flow enclosed period by period, the last box strictly outside Safe).
//! `certify` re-derives such a run from its start and inputs alone.

use crate::report::Trajectory;
use trestle_bridge::flow::FlowStep;
use trestle_bridge::flow_falsify::{FalsifySettings, falsify};
use trestle_ir::space::distance_outside;
use trestle_ir::{Env, InnerBox, OuterBox, Pred, Rational, System};

/// Most periods a run is followed: validated enclosures widen with every period, so a run that
/// leaves Safe only after many of them could not be validated anyway.
pub(crate) const MAX_PERIODS: usize = 100;

/// A validated run from one of `init_boxes` (boxes of states of Init) that leaves `safe` within
/// `steps` periods (at most [`MAX_PERIODS`]); `seed` varies the random starts, `starts` is how
/// many are drawn per box; no simulation starts after `deadline`. Returns the trajectory (the run's box centres) and how many candidate
/// starts were scored.
#[allow(clippy::too_many_arguments)]
pub(crate) fn search(
    sys: &System,
    step: &FlowStep,
    safe: &Pred,
    safe_boxes: &[OuterBox],
    init_boxes: &[InnerBox],
    steps: usize,
    seed: u64,
    starts: usize,
    deadline: Option<std::time::Instant>,
) -> (Option<Trajectory>, usize) {
    let in_init = |x: &[Rational]| sys.init.eval_exact(&Env::new(x, &[], &[])) == Ok(true);
    let settings = FalsifySettings { random_starts: starts, seed, deadline, ..FalsifySettings::default() };
    let window = 0..=steps.clamp(1, MAX_PERIODS);
    let mut simulations = 0;
    for b in init_boxes {
        let b = b.clone().into_fbox();
        simulations += settings.random_starts + settings.refined * settings.local_moves;
        if let Some((trace, run)) = falsify(sys, step, safe, window.clone(), &b, in_init, &settings) {
            let states: Vec<Vec<f64>> = run.states.iter().map(|s| s.iter().map(|v| v.mid()).collect()).collect();
            let distance = states.last().map_or(0.0, |x| distance_outside(safe_boxes, x));
            return (Some(Trajectory { states, distance, exact: None, validated: Some(trace) }), simulations);
        }
    }
    (None, simulations)
}
