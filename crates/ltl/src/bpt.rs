//! BPT, bound propagation through time: a box of (state, hidden state) pushed one step at a time
//! through the observations, the networks ([`Domain::Interval`]: interval arithmetic, every
//! operation rounded outward, `Network::run::<Interval>`; [`Domain::Crown`]: that intersected with
//! CROWN's bounds of every layer over the box of the observation and the hidden states), the argmax
//! choices that may win and every branch that may fire, re-boxed after each step. Each step's box encloses every state a run can be in then, so a
//! formula true on the boxes (atoms decided by the sign of an outward-rounded interval, for any
//! signs of the coefficients: the notes' correction of the paper's test) holds on every path.
//! Sound and incomplete: an undecided atom leaves the formula undecided.
//!
//! A curved step (sin, cos, exp, powers, products of variables) on a memoryless system gets more
//! under [`Domain::Crown`] ([`Relaxation`]): each branch's interval successor box is met with the
//! closed form of the step's linear relaxation on the box, composed with the controller's CROWN
//! bounds as linear functions of the state, which keeps the closed loop's correlation between
//! state and action that an interval step loses (so a contracting loop is seen to contract).

use crate::error::LtlError;
use trestle_bridge::post::PostEngine;
use trestle_core::Budget;
use trestle_ir::arith::Arith;
use trestle_ir::interval::Interval;
use trestle_ir::nondet;
use trestle_ir::num;
use trestle_ir::round;
use trestle_ir::system::{ControllerOutput, DomainExit, Policy, System, VarKind};
use trestle_ir::{CmpOp, Env, FBox, Pred, RBox};
use trestle_smt::SuccessorBounds;

/// How the networks of a step are bounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// Interval arithmetic (the notes' BPT; cheapest).
    Interval,
    /// Interval arithmetic intersected with CROWN's linear relaxation, concretised on the box of
    /// each network's inputs and hidden states (tighter where ReLUs are unstable).
    Crown,
}

impl Domain {
    /// The method's name in results.
    pub fn method_name(self) -> &'static str {
        match self {
            Domain::Interval => "bpt",
            Domain::Crown => "bpt-crown",
        }
    }
}

/// A box of the full state: the environment's variables and every recurrent hidden state
/// (`[controller][recurrent layer][neuron]`).
#[derive(Clone, Debug, PartialEq)]
pub struct FullBox {
    pub state: Vec<Interval>,
    pub hidden: Vec<Vec<Vec<Interval>>>,
}

impl FullBox {
    /// The states of `start` (a bounded exact box) with zero hidden states.
    pub fn initial(sys: &System, start: &RBox) -> Result<FullBox, LtlError> {
        let Some(outer) = start.enclosing_fbox() else {
            return Err(LtlError::Unsupported("Init must be bounded in every state variable for BPT".into()));
        };
        let state = outer.lo.iter().zip(&outer.hi).map(|(&l, &h)| Interval::new(l, h)).collect();
        let hidden = sys
            .controllers
            .iter()
            .map(|c| match &c.policy {
                Policy::Network(n) => Ok(sys.networks[*n]
                    .network
                    .hidden_dims()
                    .into_iter()
                    .map(|d| vec![Interval::point(0.0); d])
                    .collect()),
                Policy::Select { .. } => {
                    Err(LtlError::Unsupported("network selectors are not propagated by BPT".into()))
                }
            })
            .collect::<Result<_, LtlError>>()?;
        Ok(FullBox { state, hidden })
    }

    /// The smallest box holding both.
    pub fn hull(&self, o: &FullBox) -> FullBox {
        let hull = |a: &[Interval], b: &[Interval]| a.iter().zip(b).map(|(x, y)| x.hull(y)).collect::<Vec<_>>();
        FullBox {
            state: hull(&self.state, &o.state),
            hidden: self
                .hidden
                .iter()
                .zip(&o.hidden)
                .map(|(a, b)| a.iter().zip(b).map(|(x, y)| hull(x, y)).collect())
                .collect(),
        }
    }

    /// The hull with `next`, each side that `next` crossed pushed out by `factor` of the hull's
    /// width (rounded outward); sides `next` did not cross stay (a ReLU output's lower end stays 0).
    pub fn widened_toward(&self, next: &FullBox, factor: f64) -> FullBox {
        let widen = |h: &Interval, n: &Interval| {
            let hull = h.hull(n);
            let pad = round::mul_up(hull.hi - hull.lo, factor);
            let lo = if n.lo < h.lo { round::sub_down(hull.lo, pad) } else { hull.lo };
            let hi = if n.hi > h.hi { round::add_up(hull.hi, pad) } else { hull.hi };
            Interval::new(lo, hi)
        };
        let widen_all = |a: &[Interval], b: &[Interval]| a.iter().zip(b).map(|(h, n)| widen(h, n)).collect::<Vec<_>>();
        FullBox {
            state: widen_all(&self.state, &next.state),
            hidden: self
                .hidden
                .iter()
                .zip(&next.hidden)
                .map(|(a, b)| a.iter().zip(b).map(|(h, n)| widen_all(h, n)).collect())
                .collect(),
        }
    }

    /// The box cut to the values states can take (inside the declared domains, integral for
    /// `int` and `bool` variables), unless the system ignores domains. Sound for a candidate
    /// invariant: reachable states are states, and a successor outside the domains would show in
    /// `step(H)` (which is not cut) and fail the inclusion.
    pub fn legal(mut self, sys: &System) -> FullBox {
        if sys.domain_exit == DomainExit::Ignore {
            return self;
        }
        for (iv, v) in self.state.iter_mut().zip(&sys.state) {
            let mut lo = v.domain.lo.as_ref().map_or(iv.lo, |l| iv.lo.max(num::down(l)));
            let mut hi = v.domain.hi.as_ref().map_or(iv.hi, |h| iv.hi.min(num::up(h)));
            if v.kind != VarKind::Real {
                (lo, hi) = (lo.ceil(), hi.floor());
            }
            if lo <= hi {
                *iv = Interval::new(lo, hi);
            }
        }
        self
    }

    /// Whether this box lies inside `o` (every coordinate's interval inside `o`'s).
    pub fn is_inside(&self, o: &FullBox) -> bool {
        let inside = |a: &[Interval], b: &[Interval]| a.iter().zip(b).all(|(x, y)| x.is_subset_of(y));
        inside(&self.state, &o.state)
            && self.hidden.iter().zip(&o.hidden).all(|(a, b)| a.iter().zip(b).all(|(x, y)| inside(x, y)))
    }
}

/// One step of every run from the box: an enclosure of every successor (state and hidden state)
/// under every input and every branch that may fire.
pub fn step(sys: &System, from: &FullBox, domain: Domain) -> Result<FullBox, LtlError> {
    step_relaxed(sys, from, domain, None)
}

/// The step's linear relaxation, for [`Domain::Crown`] on a memoryless system whose step is
/// curved (sin, cos, exp, powers, products of variables): the controllers' CROWN bounds as linear
/// functions of the state on the box (the bridge engine's psi), composed with the environment
/// check's mean-value relaxation of every curved update and bounded over the box
/// ([`SuccessorBounds::relaxed_images`]). It keeps what one interval step loses: the correlation
/// between the state and the action the controller takes there, and how each function bends.
pub struct Relaxation<'s> {
    post: PostEngine<'s>,
    succ: SuccessorBounds<'s>,
}

impl<'s> Relaxation<'s> {
    /// `None` where the relaxation adds nothing (no curved update), or does not apply (recurrent
    /// controllers, which carry hidden state, or observations the bridge engine cannot compose).
    pub fn of(sys: &'s System) -> Option<Relaxation<'s>> {
        if !sys.is_memoryless() {
            return None;
        }
        let succ = SuccessorBounds::new(sys).ok()?;
        if !succ.is_curved() {
            return None;
        }
        let post = PostEngine::new(sys, trestle_bounds::Method::Crown, true).ok()?;
        Some(Relaxation { post, succ })
    }

    /// psi on the box `region`: the controllers' CROWN bounds, linear in the state.
    pub fn psi(&self, region: &FBox) -> Option<trestle_smt::Postcondition> {
        if !region.lo.iter().chain(&region.hi).all(|v| v.is_finite()) {
            return None;
        }
        self.post.compute(region).ok()
    }

    /// Per branch that may fire on `state`, a box of its successors. `None` when the box cannot be
    /// bounded this way (an unbounded side, a network the bounds fail on): the interval step then
    /// stands alone.
    pub fn images(&self, state: &[Interval]) -> Option<Vec<(usize, FBox)>> {
        let region = FBox::from_intervals(state);
        let psi = self.psi(&region)?;
        self.succ.relaxed_images(&region, &psi).ok()
    }
}

/// [`step`], each branch's successor box met with its image by `relaxation` where one is given:
/// both enclose every successor, so the meet does (a side whose meet is empty, which only rounding
/// can make, keeps the interval's).
pub fn step_relaxed(
    sys: &System,
    from: &FullBox,
    domain: Domain,
    relaxation: Option<&Relaxation<'_>>,
) -> Result<FullBox, LtlError> {
    let inputs: Vec<Interval> = sys.nondet.iter().map(nondet::hull).collect();
    let mut hidden = from.hidden.clone();
    let actions = actions(sys, &from.state, &inputs, &mut hidden, domain)?;
    let env = Env::new(&from.state[..], &actions[..], &inputs[..]);
    let relaxed = relaxation.and_then(|r| r.images(&from.state));
    let mut next: Option<Vec<Interval>> = None;
    for (bi, b) in sys.step.branches.iter().enumerate() {
        if let Some((a, value)) = b.label
            && !actions[a].contains(value as f64)
        {
            continue;
        }
        if b.guard.as_ref().is_some_and(|g| g.eval_interval(&env) == Some(false)) {
            continue;
        }
        let mut succ: Vec<Interval> = b.updates.iter().map(|e| e.eval_interval(&env)).collect();
        if let Some((_, image)) = relaxed.as_ref().and_then(|r| r.iter().find(|(i, _)| *i == bi)) {
            for (i, s) in succ.iter_mut().enumerate() {
                if let Some(m) = s.intersect(&image.interval(i)) {
                    *s = m;
                }
            }
        }
        next = Some(match next {
            None => succ,
            Some(n) => n.iter().zip(&succ).map(|(a, b)| a.hull(b)).collect(),
        });
    }
    let state = next.ok_or_else(|| {
        LtlError::Semantics("no branch of the step can fire from an enclosure: every run deadlocks".into())
    })?;
    Ok(FullBox { state, hidden })
}

/// Enclosures of the state at steps `0..=k` (one interval per state variable) from the states of
/// `start` (a bounded exact box), with the recurrent controllers' hidden states carried as boxes
/// from zero. `budget` is checked before every step ([`LtlError::Stopped`]).
pub fn propagate(
    sys: &System,
    start: &RBox,
    k: usize,
    domain: Domain,
    budget: &Budget,
) -> Result<Vec<Vec<Interval>>, LtlError> {
    Ok(propagate_full(sys, start, k, domain, budget)?.into_iter().map(|b| b.state).collect())
}

/// [`propagate`] with the hidden states: the full boxes of steps `0..=k`.
pub fn propagate_full(
    sys: &System,
    start: &RBox,
    k: usize,
    domain: Domain,
    budget: &Budget,
) -> Result<Vec<FullBox>, LtlError> {
    let mut boxes = vec![FullBox::initial(sys, start)?];
    let relaxation = if domain == Domain::Crown { Relaxation::of(sys) } else { None };
    for _ in 0..k {
        budget.check()?;
        let next = step_relaxed(sys, boxes.last().expect("the chain starts with Init"), domain, relaxation.as_ref())?;
        boxes.push(next);
    }
    Ok(boxes)
}

/// Whether some state of the enclosures may lie outside the declared domains of a system whose
/// runs stop with an error there (`on_domain_exit = "error"`): a run might then end in an error,
/// which the enclosures cannot tell from a run that continues, so they decide nothing.
pub fn may_leave_domains(sys: &System, boxes: &[Vec<Interval>]) -> bool {
    sys.domain_exit == DomainExit::Error
        && boxes.iter().any(|b| {
            b.iter().zip(&sys.state).any(|(iv, v)| {
                v.domain.lo.as_ref().is_some_and(|l| num::cmp_f64_rational(iv.lo, l).is_lt())
                    || v.domain.hi.as_ref().is_some_and(|h| num::cmp_f64_rational(iv.hi, h).is_gt())
            })
        })
}

/// An inductive box of the full state containing the states of `start` (the minimal-invariant
/// method realised soundly): Kleene iteration over boxes, `H <- widen(hull(H, step(H)))` from the
/// Init box, until `step(H)` lies inside `H`; at most `max_iterations` rounds. Every reachable
/// (state, hidden state) then lies in `H`: `H` contains Init and is mapped into itself.
///
/// The widening pushes every side the step crossed out by 1/64 of the width: enclosures of a
/// contracting system approach their limit without reaching it, and the padded iteration
/// overshoots it, after which the box is mapped strictly inside itself.
pub fn invariant(
    sys: &System,
    start: &RBox,
    max_iterations: usize,
    budget: &Budget,
) -> Result<Option<FullBox>, LtlError> {
    let mut h = FullBox::initial(sys, start)?;
    for _ in 0..max_iterations {
        budget.check()?;
        let next = step(sys, &h, Domain::Interval)?;
        if next.is_inside(&h) {
            return Ok(Some(h));
        }
        h = h.widened_toward(&next, 1.0 / 64.0).legal(sys);
        if h.state.iter().any(|iv| !(iv.lo.is_finite() && iv.hi.is_finite())) {
            return Ok(None);
        }
    }
    Ok(None)
}

/// The boxes `R_0 .. R_{k-1}` of the runs from `start` that [`maximal_invariant`]'s images
/// enclose: `R_0` the Init box with zero hidden states, `R_{t+1} = legal(step(R_t))`, the
/// iteration of the images from a smaller box, so `R_t` lies inside `I_t` (both steps are
/// inclusion-monotone) and every state of `R_{k-1}` steps into `I_k`. With `I_k` they form a
/// union of boxes that contains Init and is mapped into itself, a candidate invariant for a
/// certificate.
pub fn legal_chain(sys: &System, start: &RBox, k: usize, budget: &Budget) -> Result<Vec<FullBox>, LtlError> {
    let mut chain = vec![FullBox::initial(sys, start)?];
    while chain.len() < k {
        budget.check()?;
        let next = step(sys, chain.last().expect("the chain starts with Init"), Domain::Interval)?.legal(sys);
        chain.push(next);
    }
    chain.truncate(k);
    Ok(chain)
}

/// The maximal-invariant method (the notes): the images of the whole bounded state space. `I_0`
/// is the box of the declared domains with zero hidden states (every run starts in the domains
/// with them), `I_{k+1} = legal(step(I_k))` encloses every full state a run can be in at step
/// `k + 1`. Once `step(I_k)` lies inside `I_k` (uncut, so no successor leaves the domains), every
/// later image lies inside `I_k` (the interval step and the cut are inclusion-monotone), so every
/// state a run reaches at step `k` or later lies in `I_k`. Returns the first such `k` whose `I_k`
/// lies inside `p`, with `I_k`; the steps before `k` are the caller's (`G<=k-1 p` from Init).
/// `None` when some state variable has no bounded domain, the system ignores domains, or no such
/// `k` comes within `max_iterations` (or the images stop shrinking).
pub fn maximal_invariant(
    sys: &System,
    p: &Pred,
    max_iterations: usize,
    budget: &Budget,
) -> Result<Option<(usize, FullBox)>, LtlError> {
    if sys.domain_exit == DomainExit::Ignore {
        return Ok(None);
    }
    let mut space = RBox::unbounded(sys.state.len());
    for (i, v) in sys.state.iter().enumerate() {
        let (Some(lo), Some(hi)) = (&v.domain.lo, &v.domain.hi) else { return Ok(None) };
        space.lo[i] = Some(lo.clone());
        space.hi[i] = Some(hi.clone());
    }
    let mut h = FullBox::initial(sys, &space)?;
    for k in 0..max_iterations {
        budget.check()?;
        let next = step(sys, &h, Domain::Interval)?;
        if next.is_inside(&h) && p.eval_interval(&Env::new(&h.state[..], &[], &[])) == Some(true) {
            return Ok(Some((k, h)));
        }
        let cut = next.legal(sys);
        if cut == h || cut.state.iter().any(|iv| !(iv.lo.is_finite() && iv.hi.is_finite())) {
            return Ok(None);
        }
        h = cut;
    }
    Ok(None)
}

/// Enclosures of every action over the state box (argmax actions as the hull of the indices that
/// may win under the lowest-index rule); `memory` holds the hidden states' boxes before the step
/// and after it.
pub(crate) fn actions(
    sys: &System,
    state: &[Interval],
    inputs: &[Interval],
    memory: &mut [Vec<Vec<Interval>>],
    domain: Domain,
) -> Result<Vec<Interval>, LtlError> {
    let mut actions = vec![Interval::ENTIRE; sys.actions.len()];
    for (ci, c) in sys.controllers.iter().enumerate() {
        let env = Env::new(state, &[], inputs);
        let input: Vec<Interval> = c.inputs.iter().map(|e| e.eval_interval(&env)).collect();
        let Policy::Network(n) = c.policy else { unreachable!("selectors are refused before") };
        let net = &sys.networks[n].network;
        let previous = memory[ci].clone();
        let mut out = net.run(&input, &mut memory[ci]).map_err(|e| LtlError::Semantics(e.to_string()))?;
        if domain == Domain::Crown {
            crown_tighten(net, &input, &previous, &mut out, &mut memory[ci])?;
        }
        match &c.output {
            ControllerOutput::Actions(ids) => {
                for (k, &a) in ids.iter().enumerate() {
                    actions[a] = out[k];
                }
            }
            ControllerOutput::Argmax(a) => {
                // Index i may win when it may beat every lower index strictly and tie or beat
                // every higher one.
                let may_win = |i: usize| {
                    out.iter().enumerate().all(|(j, o)| {
                        j == i || out[i].compare(if j < i { CmpOp::Le } else { CmpOp::Lt }, o) != Some(true)
                    })
                };
                let winners: Vec<usize> = (0..out.len()).filter(|&i| may_win(i)).collect();
                let (lo, hi) = (winners.first().copied().unwrap_or(0), winners.last().copied().unwrap_or(0));
                actions[*a] = Interval::new(lo as f64, hi as f64);
            }
        }
    }
    Ok(actions)
}

/// Intersects the interval pass's outputs `out` and new hidden states `hidden` with CROWN's bounds
/// of every layer over the box of `input` and the previous hidden states (both enclose the same
/// values, so the intersection does too).
fn crown_tighten(
    net: &trestle_ir::network::Network,
    input: &[Interval],
    previous: &[Vec<Interval>],
    out: &mut [Interval],
    hidden: &mut [Vec<Interval>],
) -> Result<(), LtlError> {
    use trestle_ir::network::Layer;
    let previous: Vec<FBox> = previous.iter().map(|h| FBox::from_intervals(h)).collect();
    let input = FBox::from_intervals(input);
    let bounds = trestle_milp::layer_bounds_step(net, &input, &previous, &trestle_milp::BoundOptions::default())?;
    let meet = |ivs: &mut [Interval], b: &trestle_bounds::LayerBounds| {
        for (iv, (&lo, &hi)) in ivs.iter_mut().zip(b.lo.iter().zip(&b.hi)) {
            if let Some(m) = iv.intersect(&Interval::new(lo, hi)) {
                *iv = m;
            }
        }
    };
    let mut recurrent = hidden.iter_mut();
    for (layer, lb) in net.layers.iter().zip(&bounds) {
        if let Layer::Recurrent(_) = layer
            && let Some(h) = recurrent.next()
        {
            meet(h, &lb.activated(layer.activation()));
        }
    }
    if let (Some(layer), Some(lb)) = (net.layers.last(), bounds.last()) {
        meet(out, &lb.activated(layer.activation()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The notes' Figure-1 vector: z in [0, 1], [0, 2], [0, 3] at t = 1, 2, 3 by intervals.
    #[test]
    fn figure1_enclosures_grow_by_one_per_step() {
        let sys = trestle_testkit::load(&trestle_testkit::repo().join("configs/systems/rnn-figure1.toml"), &[]);
        let start = match &sys.init {
            p @ Pred::Cmp(..) | p @ Pred::And(_) => p.to_box_union(1, 4).unwrap().remove(0),
            other => panic!("{other:?}"),
        };
        let boxes = propagate(&sys, &start, 3, Domain::Interval, &Budget::unlimited()).unwrap();
        for (t, b) in boxes.iter().enumerate() {
            assert_eq!((b[0].lo, b[0].hi), (0.0, t as f64), "step {t}");
        }
        // CROWN relaxes relu(x2 - x1) by (x2 - x1 + 1) / 2 on [-1, 1] and keeps relu(x1 + x2)
        // exact (stable): W2 y <= (1 - 3 x1 - x2) / 2 <= 1/2 on the whole box, so z grows by at
        // most 1/2 a step (less on the sub-boxes the bounds are taken over), and never below 0.
        let boxes = propagate(&sys, &start, 10, Domain::Crown, &Budget::unlimited()).unwrap();
        for (t, b) in boxes.iter().enumerate() {
            assert_eq!(b[0].lo, 0.0, "step {t}");
            assert!(b[0].hi <= 0.5 * t as f64, "step {t}: {:?}", b[0]);
        }
        assert!(boxes[10][0].hi <= 2.0, "X^10 (z <= 2) holds on CROWN's enclosures: {:?}", boxes[10]);
    }
}
