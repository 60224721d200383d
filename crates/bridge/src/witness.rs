//! Concrete counterexamples to inductiveness: a state in the invariant, the controller's real
//! action there, an environment choice, and a successor outside the invariant, all replayed in
//! exact rational arithmetic through the IR's one definition of a step ([`sim::successors`],
//! which checks that the state is a state: ints integral, bools 0 or 1, inside the domains).
//!
//! Candidates are exact legal states of a box, inside the invariant's box it overlaps most (the
//! search's box is an outward f64 enclosure: its upper corners may lie outside the exact
//! candidate): the hint (a solver's abstract witness), the centre,
//! the corners, a few random points, the points where a guard, `if` condition or kink of the
//! step switches (exact thresholds such as `x = 2/5` for `x < 0.4`, and midpoints of narrow
//! windows), and the states aimed at each face of the invariant with the inputs that push the
//! successor across it ([`crate::aim`]), then coordinate-ascent steps from the best of them when its successors leave (or
//! nearly) in floating point. Floating point only ranks candidates and decides which are worth a
//! replay (a search policy, never a verdict): one whose successors stay inside by more than
//! [`REPLAY_MARGIN`] is skipped, one nearer the boundary is skipped only when outward-rounded
//! interval arithmetic proves that every successor stays ([`Searcher::surely_stays`]), and every
//! other candidate is replayed exactly, with the vertices of the inputs and, where the step is
//! not multilinear in an input, its interior critical points.
//!
//! A system with values that have no rational form (a tanh or sigmoid controller, a `sin` in the
//! step) cannot be replayed exactly. There a candidate's floating-point successors pick the
//! (inputs, branch) pairs that leave or nearly leave, and each is validated
//! ([`trestle_core::ValidatedTrace::establish`]: the exact state, the step enclosed at 256 bits,
//! then 1024 and 4096, the successor's enclosure strictly outside the invariant); an enclosure
//! that straddles the boundary at every precision is no counterexample.

use crate::aim::Aim;
use crate::error::BridgeError;
use crate::post::PostEngine;
use std::collections::HashSet;
use std::sync::Arc;
use trestle_bounds::Method;
use trestle_core::ValidatedTrace;
use trestle_ir::boxindex::BoxIndex;
use trestle_ir::interval::Interval;
use trestle_ir::nondet::{self, Choices};
use trestle_ir::num::{Rational, rational_from_f64, rational_from_i64, to_f64_nearest};
use trestle_ir::sim;
use trestle_ir::system::System;
use trestle_ir::{Env, Expr, FBox, Pred, space};
use trestle_smt::{Postcondition, Witness};

/// Most fixed environment choices a search tries per state.
const MAX_CHOICES: usize = 256;

/// Most (inputs, branch) pairs validated per candidate state of a non-rational system, the
/// farthest out first: each validation runs the step in 256-bit (or wider) interval arithmetic.
const MAX_VALIDATIONS: usize = 4;

/// A counterexample to inductiveness: one transition replayed exactly, or (through values with
/// no rational form) a one-step run from an exact state whose successor's enclosure lies
/// strictly outside the invariant.
#[derive(Clone, Debug, PartialEq)]
pub enum Counterexample {
    Exact(Witness),
    Validated(ValidatedTrace),
}

impl std::fmt::Display for Counterexample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Counterexample::Exact(w) => w.fmt(f),
            Counterexample::Validated(t) => t.fmt(f),
        }
    }
}

/// A candidate whose floating-point successors all stay inside the invariant by more than this
/// (relative to the box's scale) is not replayed: floating-point error of that size is out of
/// reach for the controllers and steps we evaluate, so the replay would only confirm that it stays
/// (and before it an interval pass through the networks would be spent on proving so). A falsifier's
/// policy, not a soundness matter: a candidate skipped is only a counterexample not found here.
const REPLAY_MARGIN: f64 = 1e-9;

/// The first transition under `choices` whose successor leaves `inv`, and the actions the
/// controllers set (`None` when no step succeeded, e.g. a lookup outside its table, or when
/// `state` is not a state).
fn first_leaving<'a>(
    sys: &System,
    inv: &Pred,
    state: &[Rational],
    choices: impl IntoIterator<Item = &'a Vec<Rational>>,
) -> (Option<Vec<Rational>>, Option<Witness>) {
    let memory = sim::initial_memory::<Rational>(sys);
    let Ok(mut steps) = sim::StepsFrom::new(sys, state, &memory) else { return (None, None) };
    let mut actions = None;
    for nondet in choices {
        let Ok((s, _)) = steps.under(nondet) else { continue };
        // A successor the invariant cannot be evaluated on is no counterexample.
        let outside = |n: &[Rational]| !inv.eval_exact(&Env::new(n, &[], &[])).unwrap_or(true);
        let out = s
            .next
            .iter()
            .map(|(b, n)| (*b, n))
            .chain(s.exits.iter().map(|(b, n, _)| (*b, n)))
            .find(|(_, n)| outside(n));
        if let Some((branch, next)) = out {
            let witness = Witness {
                state: state.to_vec(),
                actions: s.actions.clone(),
                nondet: nondet.clone(),
                branch,
                next: next.clone(),
            };
            return (Some(s.actions), Some(witness));
        }
        actions.get_or_insert(s.actions);
    }
    (actions, None)
}

/// Replays `state` exactly: a witness if it is a state of the system ([`sim::check_state`]) in
/// `inv` and some of the given choices and enabled branches leads outside `inv`.
pub fn replay_exact(sys: &System, inv: &Pred, state: &[Rational], choices: &[Vec<Rational>]) -> Option<Witness> {
    replay_transition_exact(sys, inv, inv, state, choices)
}

/// [`replay_exact`] for a transition between two sets: `state` in `from`, a successor outside `to`.
pub fn replay_transition_exact(
    sys: &System,
    from: &Pred,
    to: &Pred,
    state: &[Rational],
    choices: &[Vec<Rational>],
) -> Option<Witness> {
    if sim::check_state(sys, state).is_err() || !from.eval_exact(&Env::new(state, &[], &[])).unwrap_or(false) {
        return None;
    }
    first_leaving(sys, to, state, choices).1
}

/// The counterexample search of one engine run (one system, one invariant).
pub struct Searcher<'s> {
    sys: &'s System,
    inv: &'s Pred,
    /// The invariant's cover, indexed (the engine's own index, shared): how far a point lies
    /// outside it without a scan of every box.
    cover: Arc<BoxIndex>,
    choices: Choices,
    fchoices: Vec<Vec<f64>>,
    switches: Vec<Expr>,
    /// Interval bounds of the controllers at a point, for [`Searcher::surely_stays`].
    ibp: PostEngine<'s>,
    nondet_hull: Vec<Interval>,
    /// Whether every value of a step is rational (exact replay), else validated replay.
    rational: bool,
    /// Candidates aimed at the invariant's faces, and the legal ranges inside its boxes.
    aim: Aim,
}

impl<'s> Searcher<'s> {
    pub fn new(sys: &'s System, inv: &'s Pred, cover: Arc<BoxIndex>) -> Result<Searcher<'s>, BridgeError> {
        let choices = Choices::new(sys, MAX_CHOICES);
        let fchoices = choices.fixed().iter().map(|v| f64_inputs(sys, v)).collect();
        let nondet_hull = sys.nondet.iter().map(nondet::hull).collect();
        Ok(Searcher {
            sys,
            inv,
            cover,
            choices,
            fchoices,
            switches: space::state_switches(sys),
            ibp: PostEngine::new(sys, Method::Ibp, false)?,
            nondet_hull,
            rational: trestle_core::validate::is_rational_valued(sys),
            aim: Aim::new(sys, inv),
        })
    }

    /// Replays a legal state exactly under the fixed choices, `extra` ones (a solver's), and the
    /// critical points of the inputs at this state.
    pub fn replay(&self, state: &[Rational], extra: &[Vec<Rational>]) -> Option<Counterexample> {
        if sim::check_state(self.sys, state).is_err()
            || !self.inv.eval_exact(&Env::new(state, &[], &[])).unwrap_or(false)
        {
            return None;
        }
        if !self.rational {
            return self.validate(state, extra).map(Counterexample::Validated);
        }
        let (actions, found) = first_leaving(self.sys, self.inv, state, extra.iter().chain(self.choices.fixed()));
        if found.is_some() || !self.choices.has_curved() {
            return found.map(Counterexample::Exact);
        }
        first_leaving(self.sys, self.inv, state, &self.choices.critical(self.sys, state, &actions?))
            .1
            .map(Counterexample::Exact)
    }

    /// A validated counterexample at `state` (exact, a state in the invariant): the (inputs,
    /// branch) pairs whose floating-point successor leaves or nearly leaves, farthest first,
    /// validated one by one (see the module documentation).
    fn validate(&self, state: &[Rational], extra: &[Vec<Rational>]) -> Option<ValidatedTrace> {
        let point = approx(state);
        let memory = sim::initial_memory::<f64>(self.sys);
        let mut steps = sim::StepsFrom::new(self.sys, &point, &memory).ok()?;
        let scale = point.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        let mut leaving: Vec<(f64, &Vec<Rational>, usize)> = Vec::new();
        for nondet in extra.iter().chain(self.choices.fixed()) {
            let Ok((s, _)) = steps.under(&f64_inputs(self.sys, nondet)) else { continue };
            let nexts = s.next.iter().map(|(b, n)| (*b, n)).chain(s.exits.iter().map(|(b, n, _)| (*b, n)));
            for (branch, next) in nexts {
                let d = self.cover.distance_outside(next);
                if d >= -REPLAY_MARGIN * scale {
                    leaving.push((d, nondet, branch));
                }
            }
        }
        leaving.sort_by(|a, b| b.0.total_cmp(&a.0));
        leaving.into_iter().take(MAX_VALIDATIONS).find_map(|(_, nondet, branch)| {
            ValidatedTrace::establish(self.sys, state, &[(nondet.clone(), branch)], self.inv).ok()
        })
    }

    /// Largest distance outside the invariant over the fixed choices at `state` (f64, for ranking
    /// only). The controllers do not read the inputs (the bridge engine refuses such systems), so
    /// they run once.
    fn violation(&self, state: &[f64], extra: &[Vec<f64>]) -> f64 {
        let memory = sim::initial_memory::<f64>(self.sys);
        let Ok(mut steps) = sim::StepsFrom::new(self.sys, state, &memory) else { return f64::NEG_INFINITY };
        let mut worst = f64::NEG_INFINITY;
        for nondet in extra.iter().chain(&self.fchoices) {
            let Ok((s, _)) = steps.under(nondet) else { continue };
            for next in s.next.iter().map(|(_, n)| n).chain(s.exits.iter().map(|(_, n, _)| n)) {
                worst = worst.max(self.cover.distance_outside(next));
            }
        }
        worst
    }

    /// Whether outward-rounded interval arithmetic proves that every successor of `state`, under
    /// every input in the domains' hulls, lies in the invariant (controllers bounded by IBP on the
    /// point). Only then may a candidate skip the exact replay.
    fn surely_stays(&self, state: &[Rational]) -> bool {
        let point: Vec<Interval> = state.iter().map(Interval::of_rational).collect();
        let Ok(post) = self.ibp.compute(&FBox::from_intervals(&point)) else { return false };
        let actions = post.action_box().intervals();
        let env = Env::new(&point, &actions, &self.nondet_hull);
        self.sys.step.branches.iter().all(|b| {
            if let Some((a, value)) = b.label
                && !actions[a].contains(value as f64)
            {
                return true;
            }
            if b.guard.as_ref().is_some_and(|g| g.eval_interval(&env) == Some(false)) {
                return true;
            }
            let next: Vec<Interval> = b.updates.iter().map(|u| u.eval_interval(&env)).collect();
            next.iter().all(Interval::is_valid) && self.inv.eval_interval(&Env::new(&next, &[], &[])) == Some(true)
        })
    }

    /// Exact legal candidate states of `p`: the hint, the centre, the corners (up to 6 dimensions),
    /// four seeded random points, and the switch points of every coordinate through the centre
    /// and the hint.
    fn candidates(&self, p: &FBox, ranges: &[(Rational, Rational)], hint: Option<&[Rational]>) -> Vec<Vec<Rational>> {
        let d = p.dims();
        let near = |x: &[Rational]| space::nearest(self.sys, ranges, x);
        let mut out: Vec<Vec<Rational>> = Vec::new();
        if let Some(h) = hint.filter(|h| h.len() == d) {
            out.push(near(h));
        }
        out.extend(self.centre_and_corners(ranges));
        let mut rng = space::Stream::for_box(p);
        for _ in 0..4 {
            let x: Vec<Rational> =
                (0..d).map(|i| rational_from_f64(p.lo[i] + (p.hi[i] - p.lo[i]) * rng.unit())).collect();
            out.push(near(&x));
        }
        let bases: Vec<Vec<Rational>> = out.iter().take(if hint.is_some() { 2 } else { 1 }).cloned().collect();
        for base in &bases {
            for (i, (lo, hi)) in ranges.iter().enumerate() {
                for t in space::switch_points(self.sys, &self.switches, base, i, (lo, hi)) {
                    let mut x = base.clone();
                    x[i] = t;
                    out.push(near(&x));
                }
            }
        }
        out
    }

    /// Searches `p` for a concrete counterexample (see the module documentation). `post` is the
    /// controllers' postcondition on `p` (it aims candidates at the invariant's faces,
    /// [`crate::aim`]); `hint` is a solver's abstract witness: its state is a candidate and its
    /// inputs an extra choice.
    pub fn search(&self, p: &FBox, post: Option<&Postcondition>, hint: Option<&Witness>) -> Option<Counterexample> {
        let legal = space::legal_box(self.sys, p)?;
        let ranges = self.aim.inside(self.sys, p, &legal).into_iter().next().unwrap_or(legal.clone());
        let extra: Vec<Vec<Rational>> =
            hint.map(|h| h.nondet.clone()).filter(|n| sim::check_nondet(self.sys, n).is_ok()).into_iter().collect();
        // The extra choices with a candidate's own aimed inputs, exact and as f64.
        let with = |aimed: Option<&Vec<Rational>>| {
            let mut e = extra.clone();
            e.extend(aimed.cloned());
            let f: Vec<Vec<f64>> = e.iter().map(|n| f64_inputs(self.sys, n)).collect();
            (e, f)
        };
        let mut tried: HashSet<Vec<Rational>> = HashSet::new();
        let scale = p.lo.iter().chain(&p.hi).fold(1.0f64, |m, v| m.max(v.abs()));
        let inside_by_far = -REPLAY_MARGIN * scale;
        let mut decide = |x: &[Rational], v: f64, aimed: Option<&Vec<Rational>>| -> Option<Counterexample> {
            let key: Vec<Rational> = x.iter().chain(aimed.into_iter().flatten()).cloned().collect();
            if v < inside_by_far || !tried.insert(key) || (v <= 0.0 && self.surely_stays(x)) {
                return None;
            }
            self.replay(x, &with(aimed).0)
        };
        let generic = self.candidates(p, &ranges, hint.map(|h| h.state.as_slice())).into_iter().map(|x| (x, None));
        let aimed = self.aim.candidates(self.sys, p, &legal, post).into_iter().map(|a| (a.state, Some(a.nondet)));
        let mut ranked: Vec<(f64, Vec<Rational>, Option<Vec<Rational>>)> = generic
            .chain(aimed)
            .map(|(x, aimed)| (self.violation(&approx(&x), &with(aimed.as_ref()).1), x, aimed))
            .collect();
        // Farthest out first; the sort is stable, so ties keep the candidates' order.
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (v, x, aimed) in &ranked {
            if let Some(w) = decide(x, *v, aimed.as_ref()) {
                return Some(w);
            }
        }
        // Coordinate ascent on the violation from the best candidate, only when its successors
        // already leave (or nearly) in floating point, the candidate itself being no counterexample
        // (outside the invariant, or not a legal state). Measured over the shipped and generated
        // suites (maze-ci, peer-maze, maze-scale, arena-scale): every counterexample the ascent
        // found started from there, while on safe instances the ascent from candidates inside was
        // most of the search's cost (16 network evaluations per search against ~10 for the
        // candidates) and found nothing.
        let (mut value, best, aimed) = ranked.into_iter().next()?;
        if value < inside_by_far {
            return None;
        }
        let fchoices = with(aimed.as_ref()).1;
        let mut x = approx(&best);
        let mut step: Vec<f64> = p.widths().iter().map(|w| w * 0.25).collect();
        for _ in 0..4 {
            let mut improved = false;
            for i in 0..p.dims() {
                for dir in [1.0, -1.0] {
                    let mut y = x.clone();
                    y[i] = (y[i] + dir * step[i]).clamp(p.lo[i], p.hi[i]);
                    let exact =
                        space::nearest(self.sys, &ranges, &y.iter().map(|&v| rational_from_f64(v)).collect::<Vec<_>>());
                    let y = approx(&exact);
                    let v = self.violation(&y, &fchoices);
                    if let Some(w) = decide(&exact, v, aimed.as_ref()) {
                        return Some(w);
                    }
                    if v > value {
                        value = v;
                        x = y;
                        improved = true;
                    }
                }
            }
            if !improved {
                step.iter_mut().for_each(|s| *s *= 0.5);
            }
        }
        None
    }

    /// A counterexample at some legal state of `p` (centre, then corners), for a box every state
    /// of which leaves: `None` when `p` holds no legal state in the invariant.
    pub fn at_some_state(&self, p: &FBox) -> Option<Counterexample> {
        let legal = space::legal_box(self.sys, p)?;
        let ranges = self.aim.inside(self.sys, p, &legal).into_iter().next().unwrap_or(legal);
        self.centre_and_corners(&ranges).iter().find_map(|s| self.replay(s, &[]))
    }

    /// The legal state nearest the centre of `ranges` (from [`space::legal_box`]) and, up to 6
    /// dimensions, its corners.
    fn centre_and_corners(&self, ranges: &[(Rational, Rational)]) -> Vec<Vec<Rational>> {
        let d = ranges.len();
        let two = rational_from_i64(2);
        let centre: Vec<Rational> = ranges.iter().map(|(l, h)| (l + h) / &two).collect();
        let mut out = vec![space::nearest(self.sys, ranges, &centre)];
        if d <= 6 {
            let corner =
                |mask: usize| (0..d).map(move |i| if mask >> i & 1 == 1 { &ranges[i].1 } else { &ranges[i].0 });
            out.extend((0..(1usize << d)).map(|mask| corner(mask).cloned().collect()));
        }
        out
    }
}

/// The f64 values of exact inputs for the f64 step, each inside its interval domain (one
/// function for every f64 run: `trestle_ir::nondet::f64_inputs`). Before inputs were moved
/// inward, every f64 ranking of a system disturbed in `[-0.02, 0.02]` failed at every vertex and
/// ranked every candidate at minus infinity: the search replayed none of them.
pub use trestle_ir::nondet::f64_inputs;

/// A witness's exact values as the nearest floats, for printing and JSON.
pub fn approx(xs: &[Rational]) -> Vec<f64> {
    xs.iter().map(to_f64_nearest).collect()
}
