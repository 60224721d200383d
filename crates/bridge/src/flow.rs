//! The bridge engine on a sampled-data system (a system file's `[flow]`): one step is the flow of
//! the plant over the control period with the actions and inputs held
//! ([`trestle_ir::plant`]).
//!
//! On a state box `p` the controllers' postcondition psi is computed as for a discrete system
//! ([`crate::post`]); the flow is then enclosed over `p`, psi's action box and the inputs' hull by
//! the validated one-step enclosure of `trestle-flow`: `x(T) ∈ A x + B u + C w + o + r` with `r`
//! in a remainder box, the coefficients exact dyadic rationals (the f64 values themselves). That
//! is a discrete step of a *leaf system* ([`FlowStep::linear_leaf`]): the system with its
//! step replaced by those affine updates and one fresh non-deterministic input per state
//! variable ranging over its remainder. The clause of `p` is then the ordinary bridge query
//! `(p /\ Inv /\ psi /\ Next_leaf) => Inv'` on the leaf system, decided by the fast path or Z3
//! with exact rationals: every true successor of a state of `p` under an action of psi is a
//! successor of the leaf system (the true action lies in psi's action box, over which the
//! enclosure holds), so the clause holds for the flow. When the linear form fails, the box
//! enclosure is tried the same way ([`FlowStep::box_leaf`]: `x_i' = r_i`, `r_i` in the box), since
//! it can be the tighter of the two on a coordinate. A box where both fail is searched for a
//! validated counterexample (a point of it whose successor's enclosure lies outside the
//! invariant's cover, [`crate::flow_refute`]) and otherwise split; at the minimum width it stays
//! undecided and the verdict is unknown, never proven. A box where the flow cannot be enclosed
//! (no validated step) is split in the same way.
//!
//! The certificate of such a proof records the flow settings, and `certify` re-derives every
//! enclosure from them ([`crate::proof_check`]).

use crate::boxloop::{self, BoxResult, BoxWork, Item, LeafCheck};
use crate::check::{SideConditions, side_conditions};
use crate::config::{Config, Queue};
use crate::engine::{InductiveRun, Progress};
use crate::error::BridgeError;
use crate::post::PostEngine;
use crate::witness::Counterexample;
use std::time::Instant;
use trestle_core::Budget;
use trestle_flow::{Flow, FlowEnclosure, FlowError, FlowSettings, LinearEnclosure};
use trestle_ir::expr::{Expr, VarRef};
use trestle_ir::interval::Interval;
use trestle_ir::num::rational_from_f64;
use trestle_ir::plant::SampledPlant;
use trestle_ir::system::{NondetDomain, NondetVar};
use trestle_ir::{FBox, Pred, Rational, System};
use trestle_smt::{Answer, BridgeQuery, Checker, CheckerConfig, DecidedBy, Postcondition, Target};

/// The plant's flow with the settings every enclosure of a run (and of its re-check) uses.
#[derive(Clone, Debug)]
pub struct FlowStep {
    flow: Flow,
    /// The control period, exact.
    pub period: Rational,
    pub settings: FlowSettings,
    /// The hull of every non-deterministic input (held over the period).
    nondet: Vec<Interval>,
}

/// Which enclosure proved a leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeafForm {
    Linear,
    Box,
}

impl FlowStep {
    pub fn new(sys: &System, plant: &SampledPlant, settings: FlowSettings) -> Result<FlowStep, BridgeError> {
        if plant.rates.len() != sys.state.len() {
            return Err(BridgeError::Internal(format!(
                "{} rates for {} state variables",
                plant.rates.len(),
                sys.state.len()
            )));
        }
        let flow = Flow::new(&plant.rates, sys.actions.len(), sys.nondet.len())
            .map_err(|e| BridgeError::Unsupported(e.to_string()))?;
        let nondet = sys.nondet.iter().map(trestle_ir::nondet::hull).collect();
        Ok(FlowStep { flow, period: plant.period.clone(), settings, nondet })
    }

    pub fn flow(&self) -> &Flow {
        &self.flow
    }

    /// The validated enclosure of the flow from `region` under every action of `actions` and
    /// every input value, held.
    pub fn enclose(&self, region: &FBox, actions: &FBox) -> Result<FlowEnclosure, FlowError> {
        self.flow.enclose(&region.intervals(), &actions.intervals(), &self.nondet, &self.period, &self.settings)
    }

    /// The validated enclosure of the state after one period from an exact point with exact held
    /// actions and inputs (each enclosed in its tightest f64 interval).
    pub fn enclose_point(
        &self,
        state: &[Rational],
        actions: &[Rational],
        nondet: &[Rational],
    ) -> Result<Vec<Interval>, FlowError> {
        let iv = |xs: &[Rational]| xs.iter().map(Interval::of_rational).collect::<Vec<_>>();
        let e = self.flow.enclose(&iv(state), &iv(actions), &iv(nondet), &self.period, &self.settings)?;
        Ok(e.state)
    }

    /// The leaf system of a linear enclosure (module doc): `x_i' = sum_j A_ij x_j + sum_k B_ik
    /// u_k + sum_l C_il w_l + o_i + r_i` with `r_i` a fresh input over the remainder.
    pub fn linear_leaf(&self, sys: &System, e: &LinearEnclosure) -> System {
        let q = sys.nondet.len();
        let updates = (0..sys.state.len())
            .map(|i| {
                let terms = e.state[i]
                    .iter()
                    .enumerate()
                    .map(|(j, &a)| (a, VarRef::State(j)))
                    .chain(e.action[i].iter().enumerate().map(|(k, &b)| (b, VarRef::Action(k))))
                    .chain(e.nondet[i].iter().enumerate().map(|(l, &c)| (c, VarRef::Nondet(l))));
                let mut sum = Expr::Var(VarRef::Nondet(q + i));
                if e.offset[i] != 0.0 {
                    sum = Expr::Add(Box::new(sum), Box::new(Expr::Const(rational_from_f64(e.offset[i]))));
                }
                for (coeff, v) in terms.filter(|(c, _)| *c != 0.0) {
                    let term = Expr::Mul(Box::new(Expr::Const(rational_from_f64(coeff))), Box::new(Expr::Var(v)));
                    sum = Expr::Add(Box::new(sum), Box::new(term));
                }
                sum
            })
            .collect();
        leaf(sys, updates, &e.remainder)
    }

    /// The leaf system of a box enclosure: `x_i' = r_i` with `r_i` a fresh input over the box.
    pub fn box_leaf(&self, sys: &System, image: &[Interval]) -> System {
        let q = sys.nondet.len();
        let updates = (0..sys.state.len()).map(|i| Expr::Var(VarRef::Nondet(q + i))).collect();
        leaf(sys, updates, image)
    }
}

/// `sys` with its step replaced by `updates` over fresh inputs `ranges` (appended to the inputs).
fn leaf(sys: &System, updates: Vec<Expr>, ranges: &[Interval]) -> System {
    let mut leaf = sys.clone();
    leaf.properties.clear();
    for (i, r) in ranges.iter().enumerate() {
        let name = format!("{}'flow-remainder", sys.state[i].name);
        leaf.nondet
            .push(NondetVar { name, domain: NondetDomain::Interval(rational_from_f64(r.lo), rational_from_f64(r.hi)) });
    }
    let branch = &mut leaf.step.branches[0];
    branch.updates = updates;
    leaf.step.branches.truncate(1);
    leaf
}

/// Decides the clause of `region` on a leaf system: `Valid` when every successor stays in `inv`.
pub fn decide_leaf(
    leaf: &System,
    region: &FBox,
    post: &Postcondition,
    inv: &Pred,
    cc: CheckerConfig,
) -> Result<(Answer, DecidedBy), BridgeError> {
    let mut checker = Checker::new(leaf, cc)?;
    let q = BridgeQuery::new(region, post, Target::StaysIn(inv)).with_extra(inv);
    Ok(checker.decide_bridge(&q)?)
}

/// Checks the system's candidate invariant with the plant's flow as the step: the side
/// conditions by Z3, inductiveness by [`check_inductive_flow`].
pub fn check_flow(
    sys: &System,
    step: &FlowStep,
    cfg: &Config,
    budget: &Budget,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<crate::Report, BridgeError> {
    let side: SideConditions = side_conditions(sys, cfg, budget)?;
    let inductive = check_inductive_flow(sys, step, &side.inv, &side.cover, cfg, budget, progress)?;
    Ok(side.report_flow(sys, inductive, step))
}

struct FlowCtx<'s> {
    sys: &'s System,
    step: &'s FlowStep,
    inv: &'s Pred,
    cover: &'s [FBox],
    extent: Vec<f64>,
    post: PostEngine<'s>,
    cfg: &'s Config,
    deadline: Option<Instant>,
}

impl FlowCtx<'_> {
    fn checker_config(&self) -> CheckerConfig {
        let mut c = CheckerConfig::default().with_timeout(self.cfg.smt_timeout).with_deadline(self.deadline);
        c.fast_path = self.cfg.fast_path;
        c
    }

    fn process(&self, p: &FBox) -> Result<BoxWork, BridgeError> {
        let mut w = BoxWork::new();
        let t = Instant::now();
        let post = self.post.compute(p)?;
        w.bounds_time = t.elapsed();
        let t = Instant::now();
        let enclosure = self.step.enclose(p, post.action_box());
        w.flow_time = t.elapsed();
        let mut hint = None;
        if let Ok(e) = &enclosure {
            let forms = [
                (LeafForm::Linear, self.step.linear_leaf(self.sys, &e.linear)),
                (LeafForm::Box, { self.step.box_leaf(self.sys, &e.state) }),
            ];
            for (form, leaf) in &forms {
                let t = Instant::now();
                let (answer, by) = decide_leaf(leaf, p, &post, self.inv, self.checker_config())?;
                w.smt_time += t.elapsed();
                w.smt_queries += 1;
                match by {
                    DecidedBy::FastPath => w.fast_decided += 1,
                    DecidedBy::Z3 => w.z3_queries += 1,
                }
                match answer {
                    Answer::Valid => {
                        w.flow_box_leaf = *form == LeafForm::Box;
                        w.result = BoxResult::Proven(post);
                        return Ok(w);
                    }
                    Answer::Invalid(wit) if hint.is_none() => hint = Some(wit),
                    _ => {}
                }
            }
        }
        if self.cfg.search && self.deadline.is_none_or(|d| Instant::now() < d) {
            let t = Instant::now();
            w.searched = true;
            let found = crate::flow_refute::search(self.sys, self.step, self.inv, self.cover, p, hint.as_ref());
            w.search_time = t.elapsed();
            if let Some(trace) = found {
                w.result = BoxResult::Counterexample(Counterexample::Validated(trace));
                return Ok(w);
            }
        }
        let small =
            p.widths().iter().zip(&self.extent).all(|(w, e)| *w <= self.cfg.min_width * e.max(f64::MIN_POSITIVE));
        w.result = if small { BoxResult::Undecided } else { BoxResult::Split(self.split(p), 0.0) };
        Ok(w)
    }

    /// Halves the widest dimension relative to the invariant's extent.
    fn split(&self, p: &FBox) -> Vec<FBox> {
        let rel = |i: usize| (p.hi[i] - p.lo[i]) / self.extent[i].max(f64::MIN_POSITIVE);
        let splittable = (0..p.dims()).filter(|&i| p.interval(i).mid() > p.lo[i] && p.interval(i).mid() < p.hi[i]);
        match splittable.max_by(|&a, &b| rel(a).total_cmp(&rel(b)).then(b.cmp(&a))) {
            Some(d) => {
                let (l, r) = p.bisect(d);
                vec![l, r]
            }
            None => vec![],
        }
    }
}

impl LeafCheck for FlowCtx<'_> {
    /// Each leaf system is a system of its own: its checkers are made per box.
    type Worker = ();
    const UNDECIDED_WHY: &'static str =
        " (the flow's enclosure is too loose there, or the invariant is not inductive by a margin below it)";

    fn worker(&self, _: usize) -> Result<(), BridgeError> {
        Ok(())
    }

    fn decide(&self, _: &mut (), item: &Item) -> Result<BoxWork, BridgeError> {
        self.process(&item.region)
    }
}

/// Algorithm 1 with the flow as the environment step (module doc): the invariant `inv`,
/// covered by `cover`, is closed under one period of the closed loop.
pub fn check_inductive_flow(
    sys: &System,
    step: &FlowStep,
    inv: &Pred,
    cover: &[FBox],
    cfg: &Config,
    budget: &Budget,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<InductiveRun, BridgeError> {
    let start = Instant::now();
    let ctx = FlowCtx {
        sys,
        step,
        inv,
        cover,
        extent: boxloop::hull(cover, sys.state.len()).widths(),
        post: PostEngine::new(sys, cfg.post, cfg.linear_bridge)?,
        cfg,
        deadline: budget.deadline(),
    };
    // First in, first out whatever `cfg.queue` says: the priority measure is the discrete step's,
    // and depth first was never measured on flows.
    boxloop::run(&ctx, sys, inv, cover, Queue::Fifo, cfg, budget, progress, start)
}
