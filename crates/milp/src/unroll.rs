//! `k` steps of the closed loop chained in one MILP: the base of bounded model checking.
//!
//! Step `t` reads the state the previous step left (made a state again: kinds, and domains unless
//! the system ignores them, [`successor_as_state`]), its own non-deterministic inputs, and the
//! hidden states the recurrent controllers carried from step `t - 1` as model quantities (zero
//! before the first step, as in [`trestle_ir::sim::initial_memory`]). Every step encodes fresh
//! copies of the networks, with big-M constants from the bounds crate over the enclosures the
//! previous steps produced (interval boxes propagated step by step), and any enabled branch.
//!
//! The model's projection on the runs contains every run of the system from the start region
//! (over-approximated only where [`crate::step`] says), so its maximum of a quantity bounds every
//! simulated value from above. Under the crate's contract that bound is floating-point evidence
//! (HiGHS's dual bound, from a model inside its numeric range: `out_of_range` unset), never a
//! proof; a solution is a candidate run, replayed exactly by [`Unrolled::replay`] before it counts.
//! A run that must replay is best searched with [`crate::Strictness::Margin`], whose argmax choices
//! no solver tolerance can tip.

use crate::bounds::BoundOptions;
use crate::error::MilpError;
use crate::expr::Bounded;
use crate::model::{MilpModel, Sense, SolveOptions, is_constant};
use crate::state::{NondetChoice, initial_hidden, state_variables, successor_as_state};
use crate::step::{BranchChoice, EncodedStep, StepOptions, encode_step};
use good_lp::Variable;
use trestle_core::{Budget, ReplayError, Trace};
use trestle_ir::num::{is_integer, rational_from_f64, to_f64_nearest};
use trestle_ir::round::{add_up, sub_down};
use trestle_ir::system::{DomainExit, NondetDomain, System, VarKind};
use trestle_ir::{Interval, RBox, Rational};

/// How [`unroll`] encodes its steps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UnrollOptions {
    pub step: StepOptions,
    /// The non-deterministic inputs of step `t` (`nondet[t]`); steps past the end of this list
    /// take any values of the domains ([`NondetChoice::Free`]).
    pub nondet: Vec<NondetChoice>,
    /// After each step, bound every value the next step reads (the successor state and the
    /// hidden states) by the LP relaxation of the model so far ([`tighten`]), so the next
    /// step's big-M constants and fixed ReLUs come from bounds that know how every earlier step
    /// is linked, not from boxes propagated one step at a time (two LPs per value and step,
    /// each started from the previous one's basis).
    pub tighten: bool,
    /// The run's budget: checked before every step, between the tightening's LPs (which HiGHS
    /// also stops by it) and by the network bounds of every step ([`MilpError::Stopped`]). It
    /// replaces `step.bounds.budget`.
    pub budget: Budget,
}

/// `k` chained steps: the model and what each step added.
#[derive(Clone, Debug)]
pub struct Unrolled {
    pub model: MilpModel,
    /// The variables of the start state.
    pub start: Vec<Variable>,
    /// The state before each step and after the last (`k + 1` states).
    pub states: Vec<Vec<Bounded>>,
    pub steps: Vec<EncodedStep>,
    /// Some argmax may choose an index tied with a lower one (a maximum there may not replay).
    pub ties_possible: bool,
}

/// A run read from a solution: the start state and every state as the solver has them, the inputs
/// moved into their domains (clamped to an interval, the nearest element of a set), the branches.
#[derive(Clone, Debug, PartialEq)]
pub struct RunPoint {
    pub start: Vec<f64>,
    pub nondet: Vec<Vec<Rational>>,
    pub branches: Vec<usize>,
    pub states: Vec<Vec<f64>>,
}

/// Chains `k` steps from the states of `start` (bounded in every variable). `None` when the start
/// region holds no state or some step has no transition.
pub fn unroll(sys: &System, start: &RBox, k: usize, opts: &UnrollOptions) -> Result<Option<Unrolled>, MilpError> {
    sys.validate()?;
    let estimate = unroll_size(sys, k);
    if estimate > MAX_UNROLL_ENTRIES {
        return Err(MilpError::TooLarge {
            what: format!("an unrolling of {k} steps"),
            estimate,
            limit: MAX_UNROLL_ENTRIES,
        });
    }
    let step_opts = StepOptions {
        bounds: BoundOptions { budget: opts.budget.clone(), ..opts.step.bounds.clone() },
        ..opts.step.clone()
    };
    let domains = sys.domain_exit != DomainExit::Ignore;
    let mut model = MilpModel::new();
    let Some((start_vars, state0)) = state_variables(&mut model, sys, start, domains)? else { return Ok(None) };
    let mut states = vec![state0];
    let mut hidden = initial_hidden(sys);
    let mut steps = Vec::with_capacity(k);
    for t in 0..k {
        opts.budget.check()?;
        let choice = opts.nondet.get(t).unwrap_or(&NondetChoice::Free);
        let encoded = encode_step(&mut model, sys, &states[t], &hidden, choice, BranchChoice::Any, &step_opts)?;
        let Some(step) = encoded else { return Ok(None) };
        let Some(mut next) = successor_as_state(&mut model, sys, &step.next, domains)? else { return Ok(None) };
        hidden = step.hidden.clone();
        if opts.tighten && t + 1 < k {
            let values = next.iter_mut().chain(hidden.iter_mut().flatten().flatten());
            tighten(&model, values, &opts.budget)?;
        }
        states.push(next);
        steps.push(step);
    }
    let ties_possible = steps.iter().any(|s| s.ties_possible);
    Ok(Some(Unrolled { model, start: start_vars, states, steps, ties_possible }))
}

/// Intersects each value's enclosure with the bounds of its expression over the LP relaxation of
/// `model` ([`MilpModel::relaxation`]: rigorous for the model's rows, whatever HiGHS's
/// accuracy), each widened by the feasibility tolerance times `1 + |bound|`: the rows themselves
/// were built in f64, so a real run may miss them by their rounding (at most 1/16 of that
/// tolerance per row in a model the relaxation accepts), and a bound that cut it by that much
/// could fix a ReLU or an argmax on the wrong side. Values with a constant expression or a point
/// enclosure are left. `budget` stops it between (and inside) its LPs ([`MilpError::Stopped`]).
pub fn tighten<'a>(
    model: &MilpModel,
    values: impl Iterator<Item = &'a mut Bounded>,
    budget: &Budget,
) -> Result<(), MilpError> {
    budget.check()?;
    let opts = SolveOptions::default().within(budget);
    let Some(mut relaxation) = model.relaxation(&opts)? else { return Ok(()) };
    let pad = |b: f64| opts.feasibility_tolerance * (1.0 + b.abs());
    for v in values {
        if is_constant(&v.expr) || v.iv.lo >= v.iv.hi {
            continue;
        }
        let lo = relaxation.bound(Sense::Minimise, &v.expr)?.map(|l| sub_down(l, pad(l)));
        let hi = relaxation.bound(Sense::Maximise, &v.expr)?.map(|h| add_up(h, pad(h)));
        let iv = Interval { lo: lo.map_or(v.iv.lo, |l| l.max(v.iv.lo)), hi: hi.map_or(v.iv.hi, |h| h.min(v.iv.hi)) };
        // Disjoint only when the relaxation is (nearly) infeasible: then keep the enclosure.
        if iv.lo <= iv.hi {
            v.iv = iv;
        }
    }
    Ok(())
}

impl Unrolled {
    /// The run of a solution (`values` as [`crate::SolveOutcome::values`]).
    pub fn run_at(&self, sys: &System, values: &[f64]) -> RunPoint {
        let eval = |b: &Bounded| self.model.eval(&b.expr, values);
        let nondet = self
            .steps
            .iter()
            .map(|s| s.nondet.iter().zip(&sys.nondet).map(|(b, v)| in_domain(eval(b), &v.domain)).collect())
            .collect();
        let branches = self
            .steps
            .iter()
            .map(|s| {
                let taken = |e: &Option<good_lp::Expression>| {
                    e.as_ref().map_or(f64::NEG_INFINITY, |e| self.model.eval(e, values))
                };
                (0..s.branches.len())
                    .max_by(|&a, &b| taken(&s.branches[a]).total_cmp(&taken(&s.branches[b])))
                    .unwrap_or(0)
            })
            .collect();
        RunPoint {
            start: self.start.iter().map(|&v| self.model.value(v, values)).collect(),
            nondet,
            branches,
            states: self.states.iter().map(|s| s.iter().map(eval).collect()).collect(),
        }
    }

    /// The solution's run rebuilt exactly ([`Trace::simulate`]: every state checked to be a state,
    /// inputs against their domains, networks exact, argmax by the lowest index, hidden states
    /// carried) from its start state (integer and boolean variables rounded to the nearest
    /// integer, real ones the solver's f64 values exactly), with its inputs and branches.
    /// The start is the solver's value and may lie outside the start region by HiGHS's
    /// tolerances: a caller that reports the run checks it against Init first (or starts from
    /// [`crate::replay::candidates`], which clamps into the region).
    pub fn replay(&self, sys: &System, values: &[f64]) -> Result<Trace, ReplayError> {
        let run = self.run_at(sys, values);
        let start: Vec<Rational> = run
            .start
            .iter()
            .zip(&sys.state)
            .map(|(&x, v)| {
                let q = rational_from_f64(x);
                if v.kind == VarKind::Real || is_integer(&q) { q } else { q.round() }
            })
            .collect();
        Trace::simulate(sys, start, run.nondet.into_iter().zip(run.branches))
    }
}

/// An exact value of the domain near `x`.
fn in_domain(x: f64, domain: &NondetDomain) -> Rational {
    match domain {
        NondetDomain::Interval(lo, hi) => {
            let q = rational_from_f64(if x.is_finite() { x } else { 0.0 });
            q.clamp(lo.clone(), hi.clone())
        }
        NondetDomain::Set(values) => values
            .iter()
            .min_by(|a, b| (to_f64_nearest(a) - x).abs().total_cmp(&(to_f64_nearest(b) - x).abs()))
            .cloned()
            .expect("a validated set is non-empty"),
    }
}

/// Most matrix entries an unrolling may hold by [`unroll_size`]'s estimate. Building and solving
/// cost about 55 bytes per estimated entry (good_lp's expressions, the rows prepared for HiGHS and
/// HiGHS's copy: Simple Spread unrolled 2000 steps, 6.5 million estimated entries, peaked at
/// 346 MB), so this is a memory budget of about 1.1 GB; longer unrollings are refused before
/// anything is allocated ([`MilpError::TooLarge`]).
pub const MAX_UNROLL_ENTRIES: u128 = 20_000_000;

/// An estimate of the matrix entries of `k` chained steps: `k` times those of one step
/// ([`step_size`]). Steps cost the same at every depth: a real state variable's successor that
/// grew past a few terms is named by a fresh variable (`successor_as_state`), so expressions do
/// not grow with the depth.
pub fn unroll_size(sys: &System, k: usize) -> u128 {
    step_size(sys).saturating_mul(k as u128)
}

/// An estimate of the matrix entries of one encoded step (an upper bound on the usual shape):
/// every network a controller may run, each weight appearing in up to four rows of the big-M
/// encoding of its neuron, four rows per neuron besides (32 entries per relaxed tanh or sigmoid
/// neuron), every argmax pair of outputs (two
/// rows over the last layer's inputs); every branch's updates (eight entries per variable, a
/// guard and a selection); the state, input and action variables.
pub fn step_size(sys: &System) -> u128 {
    let network = |n: &trestle_ir::Network| -> u128 {
        let mut entries = 0u128;
        for layer in &n.layers {
            let (rows, weights) = match layer {
                trestle_ir::network::Layer::Dense(d) => (d.weights.rows, d.weights.rows * d.weights.cols),
                trestle_ir::network::Layer::Recurrent(r) => (
                    r.input_weights.rows,
                    r.input_weights.rows * r.input_weights.cols + r.recurrent_weights.rows * r.recurrent_weights.cols,
                ),
            };
            // A relaxed tanh or sigmoid neuron (`crate::smooth`): about fifteen rows of two
            // entries over its named pre-activation, more when refined.
            let per_neuron = if layer.activation().is_piecewise_linear() { 4 } else { 32 };
            entries += 4 * weights as u128 + per_neuron * rows as u128;
        }
        let outputs = n.output_dim() as u128;
        let last_inputs = n.layers.last().map_or(0, |l| l.input_dim()) as u128;
        entries + 2 * outputs * outputs * (last_inputs + 1)
    };
    let mut entries = 0u128;
    for c in &sys.controllers {
        let nets: Vec<usize> = match &c.policy {
            trestle_ir::system::Policy::Network(n) => vec![*n],
            trestle_ir::system::Policy::Select { networks, .. } => networks.clone(),
        };
        entries += nets.iter().map(|&n| network(&sys.networks[n].network)).sum::<u128>();
    }
    let vars = (sys.state.len() + sys.nondet.len() + sys.actions.len()) as u128;
    entries + 8 * vars * sys.step.branches.len().max(1) as u128 + 4 * vars
}
