//! The MILP encodings of a normal-form formula at a state, shared by both engines.
//!
//! A [`Job`] is one model under construction: state slots (the initial state, and one per
//! successor the formula looks at, each a [`Bounded`] vector with sound enclosures), and a queue of
//! obligations `(node, slot, literal)`: "where the 0/1 literal holds, the node holds at the slot".
//! Every atom is relaxed by one shared slack `t` in `[0, MAX_SLACK]`: `lit => violation <= t`; the
//! job minimises `t`, so an optimum `t = 0` is a candidate counterexample and a dual bound above
//! the threshold is the margin by which none exists.
//!
//! * `And` queues its children under the same literal.
//! * `Or`: monolithic, one binary per disjunct summing to the literal; compositional, one job per
//!   disjunct (a union of jobs).
//! * `EX`: monolithic, one successor chosen by one binary per choice of the environment (inputs x
//!   branch), its label and guard implied by that binary; compositional, one job per choice, its
//!   label and guard asserted.
//! * `AX`: one successor per choice, each under `lit and label and guard` (the guard reified with
//!   closed comparisons, a superset of where the branch is enabled), in both engines.
//!
//! Slots whose enclosure holds few states, all of integer variables (FrozenLake), are tabulated:
//! one 0/1 expression per state picks the slot's state, actions come from the exact forward
//! pass, successors from `ir::sim`, and atoms exclude the states where they are false (exact, no
//! slack; a non-integer atom's smallest violation caps the margin). A monolithic `EX` from such a
//! slot is a flow over (state, choice) pairs, so its successor's picks are sums of flow variables
//! and need no binaries of their own.
//!
//! Pruning (compositional, and every literal that is constant): interval enclosures decide atoms,
//! labels (argmax indices ruled out by the bounds) and guards; a job whose constant-true literal
//! meets a false atom is dropped without a solve. A subtree rooted at a fully known state (every
//! enclosure a point) whose jobs were all dropped is remembered, so the same state is not expanded
//! again under the same node.
//!
//! Look-ahead and subtree models (compositional, obligations without an `AX` below): before a
//! choice that looks at least [`Encoder::lookahead`] steps ahead, the rest of the obligation is
//! encoded once as the monolithic engine encodes it (each `EX` one successor over every choice,
//! its enclosure the hull of theirs); when the bounds alone rule that out, the whole subtree is
//! dropped (exact, like the pruning above). A choice at most [`Encoder::subtree_milp`] steps deep
//! is first offered to the solver as that one model: its evidence covers every job below it, and
//! only a candidate that does not replay, or no answer, sends the expansion on job by job. On
//! VerticalCAS the networks along one path have almost every ReLU phase fixed (31-41 active,
//! 58-69 inactive, 0-2 with a binary per step at hdot0 = -40.5); what makes a path's job costly
//! is the count of paths (`3^k`), which these two cut.

use crate::error::CtlError;
use crate::exact::{Choice, product};
use crate::normal::{Node, NodeId, Normal};
use good_lp::{Expression, Variable};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use trestle_ir::Rational;
use trestle_ir::num::to_f64_nearest;
use trestle_ir::pred::Pred;
use trestle_ir::system::{ActionKind, System, VarKind};
use trestle_ir::{Interval, RBox};
use trestle_milp::model::{MilpModel, constant};
use trestle_milp::{
    Bounded, Hidden, Lit, StepOptions, VarMap, assert_cmp_relaxed, assert_pred_if, encode_controllers, encode_expr_if,
    forbid, initial_hidden, label_lit, reify_pred, select, state_variables, successor_as_state,
};

/// Largest relaxation of the atoms a job looks at: an infeasible job has a margin of at least this.
pub const MAX_SLACK: f64 = 1.0;

/// Most matrix entries one job's model may hold (about 400 MB once prepared for HiGHS; a check
/// holds a few at once: the raced engines, the compositional engine's threads).
pub const MAX_JOB_ENTRIES: usize = 4_000_000;

/// Most choices (alternatives of `Or` and `EX`) one compositional job nests: the expansion
/// recurses once per choice, on threads with `engine::ENGINE_STACK` of stack.
pub const MAX_NESTING: usize = 8192;

/// The default of [`Encoder::lookahead`]: a look-ahead costs about one network copy per step it
/// looks at (per selector value), a subtree it drops at least `choices^depth` of them.
pub const LOOKAHEAD_DEPTH: usize = 3;

/// The default of [`Encoder::subtree_milp`]: on VerticalCAS a model of a subtree five steps deep
/// is solved in about the time of a few dozen path jobs and stands for up to `4^5` of them
/// (hdot0 = -39, k = 9, compositional, on a loaded machine: 46.5 s plain, 22.8 s with the
/// look-ahead alone, 5.7 / 8.7 / 6.2 s with subtree models of depth 4 / 5 / 6).
pub const SUBTREE_DEPTH: usize = 5;

/// The most matrix entries one look-ahead encodes before it gives up (deciding nothing). Without
/// a cap, a deep formula's look-ahead encoded the monolithic model of its whole rest until the
/// job size limit ([`MAX_JOB_ENTRIES`]): `AX^100000` on VerticalCAS, compositional, spent over
/// 120 s in such encodings (each swallowed as "decides nothing") where the per-path size check
/// ends the expansion in 3.6 s. The largest VerticalCAS look-ahead of its table (k = 10,
/// compositional, 8 steps ahead) holds 14 656 entries.
pub const LOOKAHEAD_ENTRIES: usize = 50_000;

/// How `Or` and `EX` are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One model: binaries choose disjuncts and successors.
    Monolithic,
    /// A set of models: one per disjunct and per successor of an `EX`.
    Compositional,
}

/// What the controllers set at a slot under some inputs.
struct Controlled {
    vars: VarMap,
    onehots: Vec<Option<Vec<Expression>>>,
    hidden: Hidden,
    /// The slot's states and their actions, when the step is tabulated.
    table: Option<Table>,
}

/// A tabulated slot: its states with their exact actions, the 0/1 expression picking each, and
/// the inputs they were computed under.
struct Table {
    rows: Vec<(Vec<Rational>, Vec<Rational>)>,
    picks: Vec<Expression>,
    nondet: Vec<Rational>,
}

#[derive(Clone)]
struct Slot {
    state: Vec<Bounded>,
    hidden: Hidden,
    depth: usize,
    /// Controllers encoded here, by input values (one entry when no observation reads an input).
    controlled: Vec<(Vec<Rational>, Arc<Controlled>)>,
    /// When the slot is tabulated: its possible states, each with a 0/1 expression, exactly one
    /// of which is 1 (from the predecessor's table, or fresh binaries linked to the state).
    picks: Option<Arc<Spread>>,
}

/// A model under construction (see the module's documentation).
#[derive(Clone)]
pub struct Job {
    model: MilpModel,
    slack: Variable,
    slots: Vec<Slot>,
    queue: Vec<(NodeId, usize, Lit)>,
    /// The alternatives taken at each `Or` and `EX` (compositional), to rebuild the same job.
    pub decisions: Vec<usize>,
    /// Atoms stated exactly on tabulated slots: the smallest violation among the states they
    /// exclude, an upper bound of the margin.
    cap: f64,
    /// Per depth: the kinks of the networks encoded there (`MilpModel::kinks`).
    kinks: Vec<[usize; 3]>,
}

/// A finished job, ready for HiGHS (everything a worker thread needs).
pub struct Ready {
    pub model: MilpModel,
    pub slack: Variable,
    /// The initial state's quantities.
    pub start: Vec<Bounded>,
    /// Every slot's depth and state quantities (hints for the exact replay).
    pub slots: Vec<(usize, Vec<Bounded>)>,
    pub decisions: Vec<usize>,
    /// The most margin the job's evidence may claim (see [`Job`]).
    pub cap: f64,
    /// Per depth of the slots: the networks' kinks encoded there, `[fixed active, fixed
    /// inactive, needing a binary]` (what the bounds fixed, step by step).
    pub kinks: Vec<[usize; 3]>,
    /// A whole subtree of the compositional expansion in one model ([`Encoder::subtree_milp`]):
    /// its evidence covers every job below it; a candidate that does not replay, or no answer,
    /// asks for the subtree to be expanded ([`Flow::Expand`]).
    pub subtree: bool,
}

/// Whether to go on generating jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
    /// Answer to a [`Ready::subtree`] job: it decided nothing, expand the subtree job by job.
    Expand,
}

/// Counters of a compositional expansion.
#[derive(Default)]
pub struct Expansion<'s> {
    /// Jobs handed to the sink.
    pub emitted: usize,
    /// Jobs (or subtrees of jobs) dropped because the bounds contradict them.
    pub pruned: usize,
    /// Subtrees skipped because the same known state was found dead before.
    pub reused: usize,
    /// Matrix entries of the jobs kept on the current path while their alternatives expand.
    held: usize,
    /// Matrix entries the look-aheads encoded (each at most about [`LOOKAHEAD_ENTRIES`]).
    pub looked_ahead: usize,
    dead: HashSet<(NodeId, Vec<u64>)>,
    /// Checked between steps: `true` stops the expansion.
    pub stop: Option<Box<dyn Fn() -> bool + 's>>,
    pub stopped: bool,
}

impl<'s> Expansion<'s> {
    /// An expansion stopped when `stop` says so.
    pub fn stopped_by(stop: impl Fn() -> bool + 's) -> Expansion<'s> {
        Expansion { stop: Some(Box::new(stop)), ..Expansion::default() }
    }
}

pub struct Encoder<'a> {
    pub sys: &'a System,
    pub normal: &'a Normal,
    pub choices: &'a [Choice],
    pub step: StepOptions,
    pub mode: Mode,
    /// Strict atoms between reals as `v <= -strict_gap` (0: their closures). A positive gap is a
    /// subset, only for searching counterexamples past a boundary, never for evidence.
    pub strict_gap: f64,
    /// Controllers whose observation reads only integer state variables with at most this many
    /// value combinations in a slot's enclosure are tabulated exactly (0: never).
    pub tabulate: usize,
    /// Compositional look-ahead: before a choice whose obligation looks at least this many steps
    /// ahead, the rest of it is encoded once over every choice (the monolithic encoding, whose
    /// successors' enclosures are hulls of every choice's) and the whole subtree is dropped when
    /// the outward-rounded enclosures alone rule it out (0: never).
    pub lookahead: usize,
    /// Set when a look-ahead gave up at [`LOOKAHEAD_ENTRIES`]: how many steps it had encoded by
    /// then (`usize::MAX`: none gave up). Obligations looking further ahead than that are not
    /// looked ahead again by this encoder, in any thread (each would pay the same capped
    /// encoding and give up again).
    lookahead_reach: AtomicUsize,
    /// Per node: how many steps it looks ahead, and whether an `AX` is reachable from it (a
    /// look-ahead through `AX` would encode every choice at every level).
    shape: Vec<(usize, bool)>,
    /// Per node: how many steps ahead its obligations keep a constant-true literal in the
    /// monolithic encoding (through `And` and `EX`). An `Or` of several disjuncts gives each a
    /// binary, and under a binary the bounds alone rule nothing out: a look-ahead needs this
    /// many steps, not just the node's depth (`EF^k` alternates `Or` and `EX`, and its
    /// look-aheads, all in vain, made ARCH-COMP VCAS every-acceleration -19.5 take 71 s instead
    /// of 53 s).
    firm: Vec<usize>,
    /// Compositional: a choice whose obligations look at most this many steps ahead (none
    /// through an `AX`) is first offered to the sink as one model of its whole subtree (the
    /// monolithic encoding of what is left), and expanded job by job only when that decides
    /// nothing (0: never).
    pub subtree_milp: usize,
    observes: bool,
}

type R<T> = Result<T, CtlError>;

impl<'a> Encoder<'a> {
    pub fn new(sys: &'a System, normal: &'a Normal, choices: &'a [Choice], step: StepOptions, mode: Mode) -> Self {
        let strict_gap = match step.strictness {
            trestle_milp::Strictness::Margin(g) | trestle_milp::Strictness::Gap(g) => g,
            trestle_milp::Strictness::Closure => 0.0,
        };
        let observes = trestle_ir::sim::observes_nondet(sys);
        // Children come before parents in the normal form.
        let mut shape: Vec<(usize, bool)> = Vec::with_capacity(normal.nodes.len());
        for node in &normal.nodes {
            let below = |xs: &[NodeId]| xs.iter().fold((0, false), |(d, u), &x| (d.max(shape[x].0), u || shape[x].1));
            let here = match node {
                Node::True | Node::False | Node::Atom(_) => (0, false),
                Node::And(xs) | Node::Or(xs) => below(xs),
                Node::Ex(a) => (shape[*a].0 + 1, shape[*a].1),
                Node::Ax(a) => (shape[*a].0 + 1, true),
            };
            shape.push(here);
        }
        let mut firm: Vec<usize> = Vec::with_capacity(normal.nodes.len());
        for node in &normal.nodes {
            let here = match node {
                Node::True | Node::False | Node::Atom(_) | Node::Ax(_) => 0,
                Node::And(xs) => xs.iter().map(|&x| firm[x]).max().unwrap_or(0),
                Node::Or(xs) if xs.len() == 1 => firm[xs[0]],
                Node::Or(_) => 0,
                Node::Ex(a) => firm[*a] + 1,
            };
            firm.push(here);
        }
        // A state of integers only may be tabulated (FrozenLake), where the jobs of one path are
        // decided exactly by their tables and a hull over every choice would only replace that
        // exact answer by a MILP's: the look-ahead and subtree models are for real states.
        let real = sys.state.iter().any(|v| v.kind == VarKind::Real);
        let (lookahead, subtree_milp) = if real { (LOOKAHEAD_DEPTH, SUBTREE_DEPTH) } else { (0, 0) };
        Encoder {
            sys,
            normal,
            choices,
            step,
            mode,
            strict_gap,
            tabulate: 0,
            lookahead,
            lookahead_reach: AtomicUsize::new(usize::MAX),
            shape,
            firm,
            subtree_milp,
            observes,
        }
    }

    /// A job at the states of `init` (kinds and domains), owing the root. `None` when the box holds
    /// no state.
    pub fn start(&self, init: &RBox) -> R<Option<Job>> {
        let mut model = MilpModel::new();
        let slack = model.continuous(0.0, MAX_SLACK, "slack")?;
        let Some((_, state)) = state_variables(&mut model, self.sys, init, true)? else { return Ok(None) };
        let slot = Slot { state, hidden: initial_hidden(self.sys), depth: 0, controlled: Vec::new(), picks: None };
        Ok(Some(Job {
            model,
            slack,
            slots: vec![slot],
            queue: vec![(self.normal.root, 0, Lit::True)],
            decisions: Vec::new(),
            cap: MAX_SLACK,
            kinks: Vec::new(),
        }))
    }

    /// Monolithic: encodes every obligation into the one model (the budget of the step options
    /// checked between obligations).
    pub fn encode_all(&self, mut job: Job) -> R<Ready> {
        assert_eq!(self.mode, Mode::Monolithic);
        while let Some(item) = job.queue.pop() {
            self.step.bounds.budget.check()?;
            self.obligation(&mut job, item, None)?;
        }
        Ok(self.ready(job))
    }

    /// Compositional: expands the obligations depth first, one job per choice at every `Or` and
    /// `EX`, and hands each finished job that the bounds do not rule out to `sink`. With `script`,
    /// only the alternatives it lists are taken (to rebuild one job). A job nesting more than
    /// [`MAX_NESTING`] choices ends the expansion (`CtlError::Limit`).
    pub fn expand(
        &self,
        mut job: Job,
        script: Option<&[usize]>,
        ctx: &mut Expansion<'_>,
        sink: &mut dyn FnMut(Ready) -> R<Flow>,
    ) -> R<Flow> {
        assert_eq!(self.mode, Mode::Compositional);
        if job.decisions.len() > MAX_NESTING {
            return Err(CtlError::Limit(format!(
                "a compositional job nests more than {MAX_NESTING} choices (disjunctions and EX steps); the \
                 monolithic engine has no such limit"
            )));
        }
        let mut watches: Vec<((NodeId, Vec<u64>), usize)> = Vec::new();
        let flow = loop {
            if job.model.infeasible_reason().is_some() {
                ctx.pruned += 1;
                break Flow::Continue;
            }
            if ctx.stop.as_ref().is_some_and(|s| s()) {
                ctx.stopped = true;
                break Flow::Stop;
            }
            let Some(item) = job.queue.pop() else {
                ctx.emitted += 1;
                break sink(self.ready(job))?;
            };
            // A lone obligation on a known state: its jobs are the rest of this call.
            if job.queue.is_empty()
                && matches!(item.2, Lit::True)
                && script.is_none()
                && let Some(key) = point_key(&job.slots[item.1]).map(|k| (item.0, k))
            {
                if ctx.dead.contains(&key) {
                    ctx.reused += 1;
                    break Flow::Continue;
                }
                watches.push((key, ctx.emitted));
            }
            let Some(count) = self.branching(&item) else {
                self.obligation(&mut job, item, Some(&mut Vec::new()))?;
                continue;
            };
            let mut whole_decided_nothing = false;
            if script.is_none()
                && let Some(whole) = self.subtree_job(&job, &item)?
            {
                if whole.model.infeasible_reason().is_some() {
                    ctx.pruned += 1;
                    break Flow::Continue;
                }
                ctx.emitted += 1;
                match sink(whole)? {
                    Flow::Expand => whole_decided_nothing = true,
                    decided => break decided,
                }
            }
            // The alternatives one at a time, each a copy of this job with one choice made:
            // this job is kept while they are expanded, and counted against what an expansion
            // may hold. Checked before any look-ahead, which would encode more first.
            let held = job.model.num_entries();
            if ctx.held + held > MAX_JOB_ENTRIES {
                return Err(CtlError::Limit(format!(
                    "the compositional expansion holds {} matrix entries in the jobs of one path (at most \
                     {MAX_JOB_ENTRIES})",
                    ctx.held + held
                )));
            }
            // A subtree model that was built and decided nothing was not ruled out by the bounds
            // either: the look-ahead would encode the same model again.
            if script.is_none() && !whole_decided_nothing && self.ruled_out_ahead(&job, &item, ctx)? {
                ctx.pruned += 1;
                break Flow::Continue;
            }
            ctx.held += held;
            let at = job.decisions.len();
            let mut flow = Flow::Continue;
            let mut produced = 0;
            for k in 0..count {
                let Some(mut alt) = self.alternative(&job, &item, k)? else { continue };
                let i = produced;
                produced += 1;
                if script.is_some_and(|s| s.get(at) != Some(&i)) {
                    continue;
                }
                alt.decisions.push(i);
                if self.expand(alt, script, ctx, sink)? == Flow::Stop {
                    flow = Flow::Stop;
                    break;
                }
            }
            ctx.held -= held;
            if produced == 0 {
                // An `EX` without a successor here: its literal cannot hold.
                forbid(&mut job.model, &item.2, "no successor");
                continue;
            }
            break flow;
        };
        if flow == Flow::Continue {
            for (key, emitted) in watches {
                if ctx.emitted == emitted {
                    ctx.dead.insert(key);
                }
            }
        }
        Ok(flow)
    }

    /// Independent subtrees for parallel workers: the jobs advanced level by level (obligations
    /// encoded up to their next choice, each replaced by its alternatives) until there are at
    /// least `want` or none branches any more. Their order is the depth-first order of their
    /// leaves, so taking the first refutation in this order is deterministic. Jobs the bounds rule
    /// out are counted in `ctx.pruned`.
    pub fn frontier(&self, job: Job, want: usize, ctx: &mut Expansion<'_>) -> R<Vec<Job>> {
        let mut items = vec![job];
        while items.len() < want {
            let mut next = Vec::with_capacity(items.len() * 2);
            let mut branched = false;
            for mut job in items {
                let alternatives = loop {
                    if job.model.infeasible_reason().is_some() {
                        ctx.pruned += 1;
                        break None;
                    }
                    let Some(item) = job.queue.pop() else { break Some(Vec::new()) };
                    // A choice the expansion offers as one subtree model stays whole here, so the
                    // models (and the first refutation) do not depend on the thread count.
                    if self.branching(&item).is_some() && self.takes_subtree(&job, &item) {
                        job.queue.push(item);
                        break Some(Vec::new());
                    }
                    let mut alternatives = Vec::new();
                    self.obligation(&mut job, item, Some(&mut alternatives))?;
                    if !alternatives.is_empty() {
                        break Some(alternatives);
                    }
                };
                match alternatives {
                    None => {}
                    // Finished: its one job is emitted as soon as it is expanded.
                    Some(alts) if alts.is_empty() => next.push(job),
                    Some(alts) => {
                        branched = true;
                        for (i, mut alt) in alts.into_iter().enumerate() {
                            alt.decisions.push(i);
                            next.push(alt);
                        }
                    }
                }
            }
            items = next;
            if !branched {
                break;
            }
        }
        Ok(items)
    }

    /// Whether the enclosures alone rule out `item` on every choice below it: its rest encoded
    /// into a copy of `job` as the monolithic engine encodes it (one successor per `EX` over every
    /// choice, its enclosure the hull of theirs; binaries at `Or`), stopped as soon as an atom or a
    /// missing successor is false under a constant-true literal (exact: outward-rounded bounds).
    /// Every job of the subtree is a restriction of that encoding, so none can be feasible. Only
    /// for literals that are constant true, obligations keeping one at least
    /// [`Encoder::lookahead`] steps deep (through `And` and `EX` only, within the reach of a
    /// look-ahead that gave up) without an `AX` below; a look-ahead
    /// that cannot be built, or grows past [`LOOKAHEAD_ENTRIES`], decides nothing.
    pub fn ruled_out_ahead(&self, job: &Job, item: &(NodeId, usize, Lit), ctx: &mut Expansion<'_>) -> R<bool> {
        let (depth, universal) = self.shape[item.0];
        if self.lookahead == 0
            || self.firm[item.0] < self.lookahead
            || depth > self.lookahead_reach.load(Ordering::Relaxed)
            || universal
            || !matches!(item.2, Lit::True)
        {
            return Ok(false);
        }
        let base = job.model.num_entries();
        let mut probe = Job { queue: vec![item.clone()], ..job.clone() };
        let ruled_out = loop {
            let Some(next) = probe.queue.pop() else { break false };
            self.step.bounds.budget.check()?;
            match self.obligation(&mut probe, next, None) {
                Ok(()) => {}
                Err(e @ CtlError::Stopped(_)) => return Err(e),
                Err(CtlError::Milp(trestle_milp::MilpError::Stopped(s))) => return Err(CtlError::Stopped(s)),
                Err(_) => break false,
            }
            if probe.model.infeasible_reason().is_some() {
                break true;
            }
            if probe.model.num_entries() - base > LOOKAHEAD_ENTRIES {
                let steps = probe.slots.iter().map(|s| s.depth).max().unwrap_or(0) - job.slots[item.1].depth;
                self.lookahead_reach.fetch_min(steps, Ordering::Relaxed);
                break false;
            }
        };
        ctx.looked_ahead += probe.model.num_entries() - base;
        Ok(ruled_out)
    }

    /// The whole subtree below the choice `item` as one model (see [`Encoder::subtree_milp`]),
    /// when it qualifies: every obligation left (`item` and the job's queue) at most
    /// `subtree_milp` steps deep, none through an `AX`. `None` also when the encoding cannot be
    /// built (the expansion then decides).
    fn subtree_job(&self, job: &Job, item: &(NodeId, usize, Lit)) -> R<Option<Ready>> {
        if !self.takes_subtree(job, item) {
            return Ok(None);
        }
        let mut whole = job.clone();
        whole.queue.push(item.clone());
        while let Some(next) = whole.queue.pop() {
            self.step.bounds.budget.check()?;
            match self.obligation(&mut whole, next, None) {
                Ok(()) => {}
                Err(e @ CtlError::Stopped(_)) => return Err(e),
                Err(CtlError::Milp(trestle_milp::MilpError::Stopped(s))) => return Err(CtlError::Stopped(s)),
                Err(_) => return Ok(None),
            }
        }
        Ok(Some(Ready { subtree: true, ..self.ready(whole) }))
    }

    /// Whether the choice `item` of `job` is offered as one subtree model: every obligation left
    /// at most [`Encoder::subtree_milp`] steps deep, none through an `AX`.
    fn takes_subtree(&self, job: &Job, item: &(NodeId, usize, Lit)) -> bool {
        let fits = |(node, _, _): &(NodeId, usize, Lit)| {
            let (depth, universal) = self.shape[*node];
            depth <= self.subtree_milp && !universal
        };
        self.subtree_milp > 0 && fits(item) && job.queue.iter().all(fits)
    }

    fn ready(&self, job: Job) -> Ready {
        Ready {
            subtree: false,
            start: job.slots[0].state.clone(),
            slots: job.slots.iter().map(|s| (s.depth, s.state.clone())).collect(),
            model: job.model,
            slack: job.slack,
            decisions: job.decisions,
            cap: job.cap,
            kinks: job.kinks,
        }
    }

    /// How many alternatives a compositional obligation offers (`Or`: its disjuncts, `EX`: the
    /// environment's choices, some of which may give none), `None` when it makes no choice.
    fn branching(&self, (node, _, lit): &(NodeId, usize, Lit)) -> Option<usize> {
        match &self.normal.nodes[*node] {
            _ if matches!(lit, Lit::False) => None,
            Node::Or(xs) => Some(xs.len()),
            Node::Ex(_) => Some(self.choices.len()),
            _ => None,
        }
    }

    /// Alternative `k` of a branching obligation: a copy of `base` with disjunct `k` owed, or with
    /// the successor under choice `k` taken (`None` when that choice is never enabled here).
    fn alternative(&self, base: &Job, (node, slot, lit): &(NodeId, usize, Lit), k: usize) -> R<Option<Job>> {
        let mut j = base.clone();
        match &self.normal.nodes[*node] {
            Node::Or(xs) => {
                j.queue.push((xs[k], *slot, lit.clone()));
                Ok(Some(j))
            }
            Node::Ex(a) => Ok(self.successor(&mut j, *slot, k, lit, true)?.map(|(next, enabled)| {
                j.queue.push((*a, next, enabled));
                j
            })),
            _ => Err(CtlError::Internal("an alternative of an obligation that makes no choice".into())),
        }
    }

    /// Encodes one obligation. Compositional `Or`/`EX` return their alternatives (each a copy of
    /// the job with one choice made) in `alternatives` instead of encoding a choice.
    fn obligation(
        &self,
        job: &mut Job,
        (node, slot, lit): (NodeId, usize, Lit),
        alternatives: Option<&mut Vec<Job>>,
    ) -> R<()> {
        if matches!(lit, Lit::False) {
            return Ok(());
        }
        match &self.normal.nodes[node] {
            Node::True => {}
            Node::False => forbid(&mut job.model, &lit, "false"),
            Node::Atom(p) => self.atom(job, p, slot, &lit)?,
            Node::And(xs) => job.queue.extend(xs.iter().rev().map(|&x| (x, slot, lit.clone()))),
            Node::Or(xs) => match alternatives {
                Some(alts) => {
                    let item = (node, slot, lit.clone());
                    for k in 0..xs.len() {
                        alts.extend(self.alternative(job, &item, k)?);
                    }
                }
                None => {
                    let lits = one_of(&mut job.model, &lit, xs.len());
                    job.queue.extend(xs.iter().zip(lits).rev().map(|(&x, l)| (x, slot, l)));
                }
            },
            Node::Ex(a) => match alternatives {
                Some(alts) => {
                    let item = (node, slot, lit.clone());
                    for c in 0..self.choices.len() {
                        alts.extend(self.alternative(job, &item, c)?);
                    }
                    if alts.is_empty() {
                        forbid(&mut job.model, &lit, "no successor");
                    }
                }
                None => self.any_successor(job, slot, *a, &lit)?,
            },
            Node::Ax(a) => {
                for c in 0..self.choices.len() {
                    if let Some((next, enabled)) = self.successor(job, slot, c, &lit, false)? {
                        job.queue.push((*a, next, enabled));
                    }
                }
            }
        }
        Ok(())
    }

    /// `lit => atom`, relaxed by the slack: `lit => violation <= t`.
    fn atom(&self, job: &mut Job, p: &Pred, slot: usize, lit: &Lit) -> R<()> {
        let Pred::Cmp(a, op, b) = p else {
            return Err(CtlError::Unsupported(format!("atom {p:?} is not a comparison")));
        };
        if let Some(picks) = job.slots[slot].picks.clone() {
            return self.table_atom(job, p, &picks, lit);
        }
        let vars = VarMap { state: job.slots[slot].state.clone(), action: Vec::new(), nondet: Vec::new() };
        // An atom false on the whole enclosure (rounded outward) forbids its literal: exact.
        assert_cmp_relaxed(&mut job.model, (a, *op, b), lit, &vars, job.slack, self.strict_gap, 0.0)?;
        Ok(())
    }

    /// An atom on a tabulated slot, exactly: `lit` excludes the states where it is false (no
    /// big-M, no slack). The smallest violation among those states caps the job's margin.
    fn table_atom(&self, job: &mut Job, p: &Pred, picks: &Spread, lit: &Lit) -> R<()> {
        let Pred::Cmp(a, _, b) = p else {
            return Err(CtlError::Unsupported(format!("atom {p:?} is not a comparison")));
        };
        // Every variable of a tabulated slot is an integer: with integer coefficients, so is a - b.
        let integral = trestle_ir::Expr::Sub(Box::new(a.clone()), Box::new(b.clone()))
            .as_linear()
            .is_some_and(|l| l.coeffs.values().chain([&l.constant]).all(trestle_ir::num::is_integer));
        let mut false_at = Expression::default();
        let (mut any_false, mut all_false) = (false, true);
        for (state, pick) in picks {
            let env = trestle_ir::Env::new(state, &[], &[]);
            let eval =
                |e: &trestle_ir::Expr| e.eval_exact(&env).map_err(|e| CtlError::Semantics(format!("atom {p:?}: {e}")));
            let holds = p.eval_exact(&env).map_err(|e| CtlError::Semantics(format!("atom {p:?}: {e}")))?;
            if holds {
                all_false = false;
                continue;
            }
            any_false = true;
            false_at.add_mul(1.0, pick.clone());
            // How far the state is from satisfying it: a whole unit when both sides are integers,
            // else the distance to the closure (0 at a strict boundary).
            if !integral {
                let d = to_f64_nearest(&(eval(a)? - eval(b)?)).abs();
                job.cap = job.cap.min(d);
            }
        }
        if !any_false {
            return Ok(());
        }
        if all_false {
            forbid(&mut job.model, lit, "an atom is false at every state of the slot");
            return Ok(());
        }
        match lit {
            Lit::True => job.model.add(false_at.leq(0.0)),
            Lit::Expr(l) => job.model.add((l.clone() + false_at).leq(1.0)),
            Lit::False => {}
        }
        Ok(())
    }

    /// The controllers at a slot under the inputs of choice `c` (encoded once per slot, or once
    /// per input values when an observation reads them).
    fn controlled(&self, job: &mut Job, slot: usize, c: usize) -> R<Arc<Controlled>> {
        let nondet = &self.choices[c].nondet;
        let found = job.slots[slot].controlled.iter().find(|(n, _)| !self.observes || n == nondet);
        if let Some((n, ctl)) = found {
            if n == nondet {
                return Ok(ctl.clone());
            }
            // The same controllers, other input values.
            if ctl.table.is_none() {
                let mut vars = ctl.vars.clone();
                vars.nondet = nondet.iter().map(Bounded::rational).collect();
                let (onehots, hidden) = (ctl.onehots.clone(), ctl.hidden.clone());
                return Ok(Arc::new(Controlled { vars, onehots, hidden, table: None }));
            }
        }
        if let Some(ctl) = self.tabulated(job, slot, nondet)? {
            let ctl = Arc::new(ctl);
            job.slots[slot].controlled.push((nondet.clone(), ctl.clone()));
            return Ok(ctl);
        }
        let s = &job.slots[slot];
        let mut vars = VarMap {
            state: s.state.clone(),
            action: vec![Bounded::float(0.0); self.sys.actions.len()],
            nondet: nondet.iter().map(Bounded::rational).collect(),
        };
        let hidden = s.hidden.clone();
        let depth = s.depth;
        let before = job.model.kinks();
        let encoded = encode_controllers(&mut job.model, self.sys, &mut vars, &hidden, &self.step)?;
        if job.kinks.len() <= depth {
            job.kinks.resize(depth + 1, [0; 3]);
        }
        for (k, (now, was)) in job.kinks[depth].iter_mut().zip(job.model.kinks().into_iter().zip(before)) {
            *k += now - was;
        }
        let Some(out) = encoded else {
            return Err(CtlError::Semantics(
                "some state of a region the formula looks at has no network to run (its selector is out of range)"
                    .into(),
            ));
        };
        let ctl = Arc::new(Controlled { vars, onehots: out.onehots, hidden: out.hidden, table: None });
        job.slots[slot].controlled.push((nondet.clone(), ctl.clone()));
        Ok(ctl)
    }

    /// The whole step as an exact table, when the slot holds few states: every state variable an
    /// integer, at most `tabulate` states in the enclosure, no recurrent controller. Each state's
    /// actions come from the exact forward pass (argmax by the lowest index, so no ties) and each
    /// branch's successor from `ir::sim`; one binary per state picks the slot's value, and actions,
    /// enabledness and successors are linear in those binaries. States without a transition (a
    /// selector out of range) are left out, as the MILP layer leaves them out.
    fn tabulated(&self, job: &mut Job, slot: usize, nondet: &[Rational]) -> R<Option<Controlled>> {
        let s = &job.slots[slot];
        if self.tabulate == 0 || s.hidden.iter().any(|h| !h.is_empty()) {
            return Ok(None);
        }
        let existing = s.picks.clone();
        let picks = match existing {
            Some(p) => p,
            None => {
                let Some(p) = self.pick_states(job, slot)? else { return Ok(None) };
                job.slots[slot].picks = Some(p.clone());
                p
            }
        };
        let s = &job.slots[slot];
        let mut rows = Vec::with_capacity(picks.len());
        let mut chosen = Vec::with_capacity(picks.len());
        for (state, pick) in picks.iter() {
            let mut memory = trestle_ir::sim::initial_memory::<Rational>(self.sys);
            match trestle_ir::sim::controller_actions(self.sys, state, nondet, &mut memory) {
                Ok(actions) => {
                    rows.push((state.clone(), actions));
                    chosen.push(pick.clone());
                }
                // No transition from this state: left out, as the MILP layer leaves it out.
                Err(_) => job.model.add(pick.clone().leq(0.0)),
            }
        }
        if rows.is_empty() {
            return Err(CtlError::Semantics("no state of a region the formula looks at has a network to run".into()));
        }
        let picks = chosen;
        let mut action = Vec::with_capacity(self.sys.actions.len());
        let mut onehots = vec![None; self.sys.actions.len()];
        for (a, var) in self.sys.actions.iter().enumerate() {
            let values: Vec<Rational> = rows.iter().map(|(_, acts)| acts[a].clone()).collect();
            action.push(linear_in(&picks, &values));
            if let ActionKind::Index { labels } = &var.kind {
                let mut onehot = vec![Expression::default(); labels.len()];
                for (x, pick) in values.iter().zip(&picks) {
                    if let Some(o) = x.to_integer().try_into().ok().and_then(|k: usize| onehot.get_mut(k)) {
                        o.add_mul(1.0, pick.clone());
                    }
                }
                onehots[a] = Some(onehot);
            }
        }
        let vars = VarMap { state: s.state.clone(), action, nondet: nondet.iter().map(Bounded::rational).collect() };
        let table = Some(Table { rows, picks, nondet: nondet.to_vec() });
        Ok(Some(Controlled { vars, onehots, hidden: s.hidden.clone(), table }))
    }

    /// The states of a slot's enclosure (every state variable an integer, at most `tabulate`
    /// states), each picked by one binary, the picked one equal to the slot's state. `None` when
    /// the slot is not tabulable.
    fn pick_states(&self, job: &mut Job, slot: usize) -> R<Option<Arc<Spread>>> {
        let s = &job.slots[slot];
        let mut axes = Vec::with_capacity(self.sys.state.len());
        for (i, v) in self.sys.state.iter().enumerate() {
            let iv = s.state[i].iv;
            let (lo, hi) = (iv.lo.ceil(), iv.hi.floor());
            if v.kind == VarKind::Real || !(lo.is_finite() && hi.is_finite()) || hi - lo >= self.tabulate as f64 {
                return Ok(None);
            }
            axes.push((lo as i64..=hi as i64).map(|x| Rational::from_integer(x.into())).collect::<Vec<_>>());
        }
        let Some(states) = product(&axes, self.tabulate).filter(|s| !s.is_empty()) else { return Ok(None) };
        let state = s.state.clone();
        let model = &mut job.model;
        let picks: Vec<Expression> = one_of(model, &Lit::True, states.len())
            .into_iter()
            .map(|l| match l {
                Lit::Expr(e) => e,
                _ => constant(1.0),
            })
            .collect();
        if states.len() > 1 {
            for (i, x) in state.iter().enumerate() {
                let mut value = Expression::default();
                for (st, pick) in states.iter().zip(&picks) {
                    value.add_mul(to_f64_nearest(&st[i]), pick.clone());
                }
                model.add((value - x.expr.clone()).eq(0.0));
            }
        }
        Ok(Some(Arc::new(states.into_iter().zip(picks).collect())))
    }

    /// Where branch `b` is enabled in a tabulated slot, and its successor there (exact, by
    /// `ir::sim`): per row the successor state, `None` where the branch is disabled. `None` when it
    /// is enabled in none of the slot's states.
    fn table_successors(&self, t: &Table, b: usize) -> Option<Vec<Option<Vec<Rational>>>> {
        let next: Vec<Option<Vec<Rational>>> = t
            .rows
            .iter()
            .map(|(state, actions)| {
                let enabled = trestle_ir::sim::enabled_branches(self.sys, state, actions, &t.nondet)
                    .is_ok_and(|e| e.contains(&b));
                enabled.then(|| trestle_ir::sim::successor(self.sys, b, state, actions, &t.nondet).ok()).flatten()
            })
            .collect();
        next.iter().any(Option::is_some).then_some(next)
    }

    /// A tabulated branch as the literal of where it is enabled and the successor's spread: the
    /// successor states, each with the 0/1 expression of the rows leading there (where the branch
    /// is disabled its successor is never used: any enabled row's successor stands in).
    fn table_branch(&self, t: &Table, b: usize) -> Option<(Lit, Spread)> {
        let next = self.table_successors(t, b)?;
        let fill = next.iter().flatten().next()?.clone();
        let mut on = Expression::default();
        let mut spread: Spread = Vec::new();
        for (n, pick) in next.iter().zip(&t.picks) {
            if n.is_some() {
                on.add_mul(1.0, pick.clone());
            }
            add_to_spread(&mut spread, n.as_ref().unwrap_or(&fill), pick.clone());
        }
        let enabled = if next.iter().all(Option::is_some) { Lit::True } else { Lit::Expr(on) };
        Some((enabled, spread))
    }

    /// The literal of branch `b`'s label (`Lit::False`: its value is never chosen here, or its
    /// guard is false on the enclosures, so the branch is never taken and its successor does not
    /// widen the enclosure of a chosen successor).
    fn label(&self, ctl: &Controlled, b: usize) -> R<Lit> {
        let branch = &self.sys.step.branches[b];
        if let Some(g) = &branch.guard {
            let iv = |xs: &[Bounded]| xs.iter().map(|x| x.iv).collect::<Vec<_>>();
            let (s, a, n) = (iv(&ctl.vars.state), iv(&ctl.vars.action), iv(&ctl.vars.nondet));
            if g.eval_interval(&trestle_ir::Env::new(&s, &a, &n)) == Some(false) {
                return Ok(Lit::False);
            }
        }
        Ok(label_lit(self.sys, b, &ctl.onehots)?)
    }

    /// The successor of `slot` under choice `c` where `lit` holds. `assert`: the choice is taken
    /// (its label and guard are implied by `lit`); otherwise the successor counts where the choice
    /// is enabled, and the literal returned says where. `None` when it never is.
    fn successor(&self, job: &mut Job, slot: usize, c: usize, lit: &Lit, assert: bool) -> R<Option<(usize, Lit)>> {
        let ctl = self.controlled(job, slot, c)?;
        let b = self.choices[c].branch;
        let branch = &self.sys.step.branches[b];
        // Where the choice can be taken (label, and the guard unless tabulated) and, tabulated,
        // its successor.
        let (here, tabled) = match &ctl.table {
            Some(t) => match self.table_branch(t, b) {
                Some((e, next)) => (e, Some(next)),
                None => return Ok(None),
            },
            None => (self.label(&ctl, b)?, None),
        };
        if matches!(here, Lit::False) {
            return Ok(None);
        }
        let enabled = if assert {
            implies(&mut job.model, lit, &here);
            if let (Some(g), None) = (&branch.guard, &tabled) {
                assert_pred_if(&mut job.model, g, lit, &ctl.vars)?;
            }
            lit.clone()
        } else {
            let guard = match (&branch.guard, &tabled) {
                (Some(g), None) => reify_pred(&mut job.model, g, &ctl.vars)?,
                _ => Lit::True,
            };
            let here = Lit::and(&mut job.model, &here, &guard);
            Lit::and(&mut job.model, lit, &here)
        };
        if matches!(enabled, Lit::False) {
            return Ok(None);
        }
        if let Some(spread) = tabled {
            let s = self.push_spread(job, slot, spread, ctl.hidden.clone())?;
            return Ok(Some((s, enabled)));
        }
        let next: Vec<Bounded> = branch
            .updates
            .iter()
            .map(|u| encode_expr_if(&mut job.model, u, &enabled, &ctl.vars))
            .collect::<Result<_, _>>()?;
        Ok(self.push_slot(job, slot, &next, ctl.hidden.clone(), &enabled)?.map(|s| (s, enabled)))
    }

    /// A new slot holding the successor `next` (made a state: integer kinds; domains are not
    /// imposed, the exact engine checks them). `None` (and `lit` forbidden) when no integer fits.
    fn push_slot(&self, job: &mut Job, from: usize, next: &[Bounded], hidden: Hidden, lit: &Lit) -> R<Option<usize>> {
        self.room(job)?;
        let Some(state) = successor_as_state(&mut job.model, self.sys, next, false)? else {
            forbid(&mut job.model, lit, "no integer successor");
            return Ok(None);
        };
        let depth = job.slots[from].depth + 1;
        job.slots.push(Slot { state, hidden, depth, controlled: Vec::new(), picks: None });
        Ok(Some(job.slots.len() - 1))
    }

    /// A new slot whose state is one of a spread's states (exactly one expression is 1): its
    /// state is linear in the expressions, exact and integral, and the slot is tabulated with
    /// them as its picks (no new binaries).
    fn push_spread(&self, job: &mut Job, from: usize, spread: Spread, hidden: Hidden) -> R<usize> {
        self.room(job)?;
        let state = spread_state(self.sys.state.len(), &spread);
        let depth = job.slots[from].depth + 1;
        job.slots.push(Slot { state, hidden, depth, controlled: Vec::new(), picks: Some(Arc::new(spread)) });
        Ok(job.slots.len() - 1)
    }

    /// `Err(Limit)` when the job's model already holds more than [`MAX_JOB_ENTRIES`]: `AX^k`
    /// asks for one successor per choice at every level (`choices^k` slots), so a deep formula is
    /// stopped here, not by the memory running out.
    fn room(&self, job: &Job) -> R<()> {
        let entries = job.model.num_entries();
        if entries > MAX_JOB_ENTRIES {
            return Err(CtlError::Limit(format!(
                "a MILP of the formula's encoding reached {} successor states and {entries} matrix entries (at \
                 most {MAX_JOB_ENTRIES} are built)",
                job.slots.len()
            )));
        }
        Ok(())
    }

    /// Monolithic `EX`: one successor, chosen among the choices by binaries summing to `lit`.
    fn any_successor(&self, job: &mut Job, slot: usize, a: NodeId, lit: &Lit) -> R<()> {
        // Each choice that can be taken here: where (label), and its successor when tabulated.
        let mut possible = Vec::new();
        for c in 0..self.choices.len() {
            let ctl = self.controlled(job, slot, c)?;
            let b = self.choices[c].branch;
            let (here, tabled) = match &ctl.table {
                Some(t) => match self.table_branch(t, b) {
                    Some((e, next)) => (e, Some(next)),
                    None => continue,
                },
                None => (self.label(&ctl, b)?, None),
            };
            if !matches!(here, Lit::False) {
                possible.push((c, ctl, here, tabled));
            }
        }
        if possible.is_empty() {
            forbid(&mut job.model, lit, "no successor");
            return Ok(());
        }
        if possible.iter().all(|(_, ctl, _, tabled)| tabled.is_some() && ctl.table.is_some()) {
            return self.any_tabulated_successor(job, slot, a, lit, &possible);
        }
        let hidden = possible[0].1.hidden.clone();
        if self.observes && !hidden.iter().all(Vec::is_empty) && possible.len() > 1 {
            return Err(CtlError::Unsupported(
                "EX over a recurrent controller that observes non-deterministic inputs".into(),
            ));
        }
        let lits = one_of(&mut job.model, lit, possible.len());
        let mut values: Vec<Vec<(Lit, Bounded)>> = vec![Vec::new(); self.sys.state.len()];
        for ((c, ctl, here, tabled), beta) in possible.into_iter().zip(&lits) {
            let branch = &self.sys.step.branches[self.choices[c].branch];
            implies(&mut job.model, beta, &here);
            let next: Vec<Bounded> = match tabled {
                Some(spread) => spread_state(self.sys.state.len(), &spread),
                None => {
                    if let Some(g) = &branch.guard {
                        assert_pred_if(&mut job.model, g, beta, &ctl.vars)?;
                    }
                    let update = |u| encode_expr_if(&mut job.model, u, beta, &ctl.vars);
                    branch.updates.iter().map(update).collect::<Result<_, _>>()?
                }
            };
            for (j, v) in next.into_iter().enumerate() {
                values[j].push((beta.clone(), v));
            }
        }
        let mut next = Vec::with_capacity(values.len());
        for (j, choices) in values.iter().enumerate() {
            next.push(select(&mut job.model, choices, &format!("{}'", self.sys.state[j].name))?);
        }
        if let Some(s) = self.push_slot(job, slot, &next, hidden, lit)? {
            job.queue.push((a, s, lit.clone()));
        }
        Ok(())
    }

    /// Monolithic `EX` from a tabulated slot under one table: a flow `y[row][choice]` (the picked
    /// row takes exactly one choice enabled there, chosen by binaries summing to `lit`), and the
    /// successor's spread from it, so the next slot needs no binaries of its own. Where `lit` is
    /// 0 the spread's weight goes to a stand-in successor.
    fn any_tabulated_successor(
        &self,
        job: &mut Job,
        slot: usize,
        a: NodeId,
        lit: &Lit,
        possible: &[(usize, Arc<Controlled>, Lit, Option<Spread>)],
    ) -> R<()> {
        let betas = one_of(&mut job.model, lit, possible.len());
        // Per state of the slot: its pick and the flow leaving it (tables under different inputs
        // may leave out different states, so rows are matched by state).
        let mut out_of: Vec<(Vec<Rational>, Expression, Expression)> = Vec::new();
        let mut spread: Spread = Vec::new();
        let mut fill = None;
        for ((c, ctl, _, _), beta) in possible.iter().zip(&betas) {
            let t = ctl.table.as_ref().expect("tabulated");
            let next =
                self.table_successors(t, self.choices[*c].branch).expect("possible choices are enabled somewhere");
            let mut column = Expression::default();
            for ((state, _), (n, pick)) in t.rows.iter().zip(next.iter().zip(&t.picks)) {
                let Some(n) = n else { continue };
                let y = Expression::from(job.model.continuous(0.0, 1.0, "flow")?);
                column.add_mul(1.0, y.clone());
                match out_of.iter_mut().find(|(s, _, _)| s == state) {
                    Some((_, _, sum)) => sum.add_mul(1.0, y.clone()),
                    None => out_of.push((state.clone(), pick.clone(), y.clone())),
                }
                add_to_spread(&mut spread, n, y);
                fill.get_or_insert_with(|| n.clone());
            }
            let b = match beta {
                Lit::Expr(e) => e.clone(),
                Lit::True => constant(1.0),
                Lit::False => constant(0.0),
            };
            job.model.add((column - b).eq(0.0));
        }
        for (_, pick, sum) in out_of {
            job.model.add((sum - pick).leq(0.0));
        }
        match lit {
            Lit::True => {}
            Lit::False => return Ok(()),
            Lit::Expr(l) => add_to_spread(&mut spread, &fill.expect("a possible choice"), constant(1.0) - l.clone()),
        }
        let s = self.push_spread(job, slot, spread, possible[0].1.hidden.clone())?;
        job.queue.push((a, s, lit.clone()));
        Ok(())
    }
}

/// `n` literals of which exactly one holds where `lit` does and none elsewhere.
fn one_of(model: &mut MilpModel, lit: &Lit, n: usize) -> Vec<Lit> {
    if n == 1 {
        return vec![lit.clone()];
    }
    let mut sum = Expression::default();
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let b = model.binary();
        sum.add_mul(1.0, b);
        out.push(Lit::Expr(Expression::from(b)));
    }
    match lit {
        Lit::True => model.add(sum.eq(1.0)),
        Lit::False => model.add(sum.eq(0.0)),
        Lit::Expr(l) => model.add((sum - l.clone()).eq(0.0)),
    }
    out
}

/// A successor's possible states, each with the 0/1 expression of reaching it.
type Spread = Vec<(Vec<Rational>, Expression)>;

/// The state a spread stands for, linear in its expressions.
fn spread_state(dims: usize, spread: &Spread) -> Vec<Bounded> {
    let picks: Vec<Expression> = spread.iter().map(|(_, e)| e.clone()).collect();
    (0..dims).map(|j| linear_in(&picks, &spread.iter().map(|(st, _)| st[j].clone()).collect::<Vec<_>>())).collect()
}

/// Adds `weight` to the entry of `state` (a new entry when it is not there yet).
fn add_to_spread(spread: &mut Spread, state: &[Rational], weight: Expression) {
    match spread.iter_mut().find(|(s, _)| s.as_slice() == state) {
        Some((_, e)) => e.add_mul(1.0, weight),
        None => spread.push((state.to_vec(), weight)),
    }
}

/// `lit => here`.
fn implies(model: &mut MilpModel, lit: &Lit, here: &Lit) {
    match (lit, here) {
        (Lit::False, _) | (_, Lit::True) => {}
        (_, Lit::False) => forbid(model, lit, "never enabled"),
        (Lit::True, Lit::Expr(h)) => model.add(h.clone().geq(1.0)),
        (Lit::Expr(l), Lit::Expr(h)) => model.add((l.clone() - h.clone()).leq(0.0)),
    }
}

/// `sum_k picks[k] * values[k]` with its exact hull (the picks are 0/1, exactly one is 1).
fn linear_in(picks: &[Expression], values: &[Rational]) -> Bounded {
    let mut e = Expression::default();
    for (p, x) in picks.iter().zip(values) {
        e.add_mul(to_f64_nearest(x), p.clone());
    }
    let iv = values.iter().map(Interval::of_rational).reduce(|a, b| a.hull(&b)).expect("a non-empty table");
    Bounded::new(e, iv)
}

/// The slot's state and hidden state when every enclosure is a point (their bits), else `None`.
fn point_key(slot: &Slot) -> Option<Vec<u64>> {
    let hidden = slot.hidden.iter().flatten().flatten();
    slot.state.iter().chain(hidden).map(|b| (b.iv.lo == b.iv.hi).then_some(b.iv.lo.to_bits())).collect()
}
