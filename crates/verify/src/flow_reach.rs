//! Zonotope propagation of a sampled-data system (`[flow]`) through control periods: the
//! relational set propagation behind `ltl --method bpt` on flows ([`crate::flow_ltl`]) and the
//! reach-chain invariants of [`crate::flow_forever`].
//!
//! One period from a zonotope `Z = {c + G e}` ([`trestle_flow::Zonotope`]):
//! 1. The controllers' inputs must be affine in the state (exact rationals); the network's input
//!    is then an affine form in `e` ([`trestle_flow::AffineForm`]), its box the input box.
//! 2. CROWN over that box (`trestle_bounds`, outward-rounded) gives lines
//!    `L z + l <= f(z) <= U z + u` valid on it; the action is taken as the middle line
//!    `((L + U) z + l + u) / 2` composed with the input's form, plus a radius: the largest half-gap
//!    `((U - L) z + u - l) / 2` over the input's form (every true action is within it of the
//!    middle line). The held actions' box is the interval pass met with CROWN's box (both sound).
//!    An argmax controller's winner must be decided on the box (its action is then a point).
//! 3. [`trestle_flow::Zonotope::flow_step`]: the flow's linear enclosure on the zonotope's box
//!    hull and the actions' box, with the forms substituted (new generators for the action
//!    radius, the inputs and the remainder), then Girard's reduction to
//!    a given number of generators per state variable ([`GENERATORS_PER_STATE`] by default).
//!
//! Every step is a sound over-approximation of the true successors of every state of `Z` (the
//! rounding argument is in `trestle_flow::zonotope`); a step that cannot be taken (an input that
//! is not affine, an undecided argmax, a failed enclosure) is an error, never a smaller set.

use trestle_bounds::Method;
use trestle_flow::{AffineForm, Zonotope};
use trestle_ir::expr::VarRef;
use trestle_ir::interval::Interval;
use trestle_ir::round::mul_up;
use trestle_ir::system::{ControllerOutput, DomainExit, Policy};
use trestle_ir::{Env, FBox, System};

use trestle_bridge::flow::FlowStep;

/// Girard's reduction keeps at most this many generators per state variable by default.
pub const GENERATORS_PER_STATE: usize = 12;

/// Why a zonotope step could not be taken.
pub type StepError = String;

fn nondet_hull(sys: &System) -> Vec<Interval> {
    sys.nondet.iter().map(trestle_ir::nondet::hull).collect()
}

/// The rows and offsets of affine controller inputs (`None` when an input is not affine in the
/// state alone).
fn affine_inputs(inputs: &[trestle_ir::Expr], n: usize) -> Option<(Vec<Vec<Interval>>, Vec<Interval>)> {
    let mut rows = Vec::new();
    let mut offsets = Vec::new();
    for e in inputs {
        let l = e.as_linear()?;
        let mut row = vec![Interval::point(0.0); n];
        for (v, q) in &l.coeffs {
            match v {
                VarRef::State(i) if *i < n => row[*i] = Interval::of_rational(q),
                _ => return None,
            }
        }
        rows.push(row);
        offsets.push(Interval::of_rational(&l.constant));
    }
    Some((rows, offsets))
}

/// The held actions over `z` as an affine form in its generators and the actions' box (module
/// doc, step 2).
pub fn action_form(sys: &System, z: &Zonotope) -> Result<(AffineForm, Vec<Interval>), StepError> {
    let n = z.dim();
    let m = z.generators.len();
    let k = sys.actions.len();
    let mut form = AffineForm { center: vec![0.0; k], coeffs: vec![vec![0.0; m]; k], radius: vec![0.0; k] };
    let mut boxes = vec![None; k];
    let hull = z.hull();
    for c in &sys.controllers {
        let Policy::Network(id) = &c.policy else {
            return Err(format!("controller '{}' selects its network by a state", c.name));
        };
        let network = &sys.networks[*id].network;
        if network.is_recurrent() {
            return Err(format!("controller '{}' is recurrent", c.name));
        }
        let (rows, offsets) = affine_inputs(&c.inputs, n)
            .ok_or_else(|| format!("controller '{}' has an input that is not affine in the state", c.name))?;
        let input = z.affine_map(&rows, &offsets);
        let input_box = input.hull();
        // The interval pass over the box the state's hull gives, met with CROWN's box.
        let env = Env::new(&hull, &[], &[]);
        let by_state: Vec<Interval> =
            c.inputs.iter().map(|e| e.eval(&env)).collect::<Result<_, _>>().map_err(|e| e.to_string())?;
        let input_box: Vec<Interval> =
            input_box.iter().zip(&by_state).map(|(a, b)| a.intersect(b).unwrap_or(*a)).collect();
        let mut out = network.run(&input_box, &mut []).map_err(|e| e.to_string())?;
        let crown = trestle_bounds::bound(network, &FBox::from_intervals(&input_box), &Method::Crown).ok();
        if let Some(cb) = &crown {
            for (o, (&lo, &hi)) in out.iter_mut().zip(cb.lo.iter().zip(&cb.hi)) {
                if lo <= hi
                    && let Some(met) = o.intersect(&Interval::new(lo, hi))
                {
                    *o = met;
                }
            }
        }
        match &c.output {
            ControllerOutput::Actions(ids) => {
                let lines = crown.as_ref().and_then(|cb| cb.linear.as_ref());
                for (o, &a) in ids.iter().enumerate() {
                    boxes[a] = Some(out[o]);
                    let (center, coeffs, radius) = match lines {
                        Some(lb) => {
                            let (lo, up) = (&lb.lower, &lb.upper);
                            let half = Interval::point(0.5);
                            let mid_row: Vec<Interval> = (0..lo.a.cols)
                                .map(|j| {
                                    Interval::point(lo.a.row(o)[j]).add(&Interval::point(up.a.row(o)[j])).mul(&half)
                                })
                                .collect();
                            let mid_c = Interval::point(lo.c[o]).add(&Interval::point(up.c[o])).mul(&half);
                            let gap_row: Vec<Interval> = (0..lo.a.cols)
                                .map(|j| Interval::point(up.a.row(o)[j]).sub(&Interval::point(lo.a.row(o)[j])))
                                .collect();
                            let gap_c = Interval::point(up.c[o]).sub(&Interval::point(lo.c[o]));
                            let middle = input.affine_map(&[mid_row], &[mid_c]);
                            let gap = input.affine_map(&[gap_row], &[gap_c]).hull()[0];
                            let half_gap = mul_up(gap.hi.max(0.0), 0.5);
                            let r = trestle_ir::round::add_up(middle.radius[0], half_gap);
                            (middle.center[0], middle.coeffs[0].clone(), r)
                        }
                        // Without lines, the box: its midpoint and radius.
                        None => {
                            let c = out[o].mid();
                            let r =
                                trestle_ir::round::sub_up(out[o].hi, c).max(trestle_ir::round::sub_up(c, out[o].lo));
                            (c, vec![0.0; m], r)
                        }
                    };
                    form.center[a] = center;
                    form.coeffs[a] = coeffs;
                    form.radius[a] = radius;
                }
            }
            ControllerOutput::Argmax(a) => {
                let w = (0..out.len())
                    .find(|&i| {
                        out.iter().enumerate().all(|(j, o)| match j.cmp(&i) {
                            std::cmp::Ordering::Less => out[i].lo > o.hi,
                            std::cmp::Ordering::Equal => true,
                            std::cmp::Ordering::Greater => out[i].lo >= o.hi,
                        })
                    })
                    .ok_or_else(|| format!("controller '{}': the argmax is undecided", c.name))?;
                boxes[*a] = Some(Interval::point(w as f64));
                form.center[*a] = w as f64;
            }
        }
    }
    let boxes: Vec<Interval> = boxes.into_iter().collect::<Option<_>>().ok_or("an action no controller sets")?;
    // The form's own hull also contains every true action: meet the two.
    let boxes = boxes.iter().zip(form.hull()).map(|(b, h)| b.intersect(&h).unwrap_or(*b)).collect();
    Ok((form, boxes))
}

/// Whether every point of the box lies in every state variable's domain (exactly compared).
pub fn inside_domains(sys: &System, image: &[Interval]) -> bool {
    sys.domain_exit == DomainExit::Ignore
        || sys.state.iter().zip(image).all(|(v, b)| {
            let (lo, hi) = (trestle_ir::num::rational_from_f64(b.lo), trestle_ir::num::rational_from_f64(b.hi));
            v.domain.lo.as_ref().is_none_or(|l| &lo >= l) && v.domain.hi.as_ref().is_none_or(|h| &hi <= h)
        })
}

/// One period from `z` (module doc): a zonotope containing every successor of every state of
/// `z`, reduced to `generators_per_state` generators per state variable, and inside the domains.
pub fn step(sys: &System, flow: &FlowStep, z: &Zonotope, generators_per_state: usize) -> Result<Zonotope, StepError> {
    let (form, action_box) = action_form(sys, z)?;
    let (mut next, enclosure) = z
        .flow_step(flow.flow(), &form, &action_box, &nondet_hull(sys), &flow.period, &flow.settings)
        .map_err(|e| e.to_string())?;
    next.reduce(generators_per_state.saturating_mul(z.dim()));
    let hull: Vec<Interval> =
        next.hull().iter().zip(&enclosure.state).map(|(a, b)| a.intersect(b).unwrap_or(*a)).collect();
    if !inside_domains(sys, &hull) {
        return Err("a successor may leave a state variable's domain".into());
    }
    Ok(next)
}
