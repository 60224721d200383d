//! `check_ctl`: decides a bounded-CTL property with one of three engines and reports what the
//! verdict rests on.
//!
//! Every engine looks for an initial state satisfying the negation of the property
//! ([`Normal::negation`]). A MILP solution is only a candidate: its initial state (and nearby exact
//! points) is evaluated by the exact engine, and only a state that satisfies the negation exactly,
//! with its witness runs replayed, makes the verdict `false`. `true` from the MILP engines is
//! floating-point evidence (HiGHS found every job infeasible, or its dual bound on the atoms'
//! relaxation above the threshold; the smallest such bound is the margin), except when the
//! interval bounds alone ruled out every job, which is exact. `true` from the explicit engine is
//! exact: every initial state evaluated in rational arithmetic.

use crate::encode::{Encoder, Expansion, Flow, Job, MAX_SLACK, Mode, Ready};
use crate::error::CtlError;
use crate::exact::{Choice, Exact, choices};
use crate::normal::{Node, Normal};
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use trestle_core::{Budget, Stop, Unknown, Verdict};
use trestle_ir::explore::Sweep;
use trestle_ir::expr::{Env, VarRef};
use trestle_ir::formula::Ctl;
use trestle_ir::num::rational_from_f64;
use trestle_ir::sim::initial_memory;
use trestle_ir::system::System;
use trestle_ir::{RBox, Rational};
use trestle_milp::{BoundOptions, HighsValue, MAX_PIECES, Sense, SolveOptions, SolveStatus, StepOptions, Strictness};

/// Which engine decides the property.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// The explicit engine when the states the formula looks at are few and finite
    /// ([`crate::auto`]), otherwise the compositional and monolithic engines raced on two
    /// threads: the first decisive answer wins and cancels the other.
    Auto,
    /// A set of small MILPs, generated lazily depth first, solved in parallel.
    Compositional,
    /// One MILP per box of Init.
    Monolithic,
    /// Explicit-state evaluation in exact arithmetic (finitely many initial states).
    Explicit,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Auto => "auto",
            Method::Compositional => "compositional",
            Method::Monolithic => "monolithic",
            Method::Explicit => "explicit",
        }
    }
}

/// Progress reports: called from the engine's thread now and then.
pub type Progress = Arc<dyn Fn(&CtlStats) + Send + Sync>;

#[derive(Clone)]
pub struct CtlOptions {
    pub method: Method,
    /// Worker threads for the compositional engine's solves.
    pub threads: usize,
    /// Sub-boxes of each network input box bounded for the big-M constants (`None`: 16 for the
    /// monolithic engine, whose boxes are hulls of every choice, 1 for the compositional one,
    /// whose boxes follow one path); at most [`MAX_PIECES`].
    pub pieces: Option<usize>,
    /// A MILP optimum of the atoms' relaxation at most this is a candidate counterexample.
    pub tolerance: f64,
    /// HiGHS's feasibility tolerance (added to `tolerance` for evidence).
    pub feasibility_tolerance: f64,
    /// When a candidate does not replay, the job is rebuilt with argmax choices and strict atoms
    /// holding by this gap (a subset of the behaviours; never evidence).
    pub tie_gap: f64,
    /// Controllers reading only integer state variables with at most this many value combinations
    /// in a region are encoded as an exact table instead of big-M networks (0: never).
    pub tabulate: usize,
    /// Largest number of initial states the explicit engine enumerates (and of states the sweep
    /// of a system whose runs may stop expands).
    pub max_states: usize,
    /// Largest number of witness runs reported.
    pub max_traces: usize,
    pub progress: Option<Progress>,
    /// How the caller proved that no run from Init stops (an invariant holding at Init, closed
    /// under every step and stop-free, `trestle_bridge::stops`), when it did: a "true" of the
    /// MILP engines then needs no sweep of the states runs reach (`None`: it does, where the
    /// system's text lets a run stop).
    pub stop_free: Option<String>,
    /// Compositional: before a choice whose obligation looks at least this many steps ahead (none
    /// through an `AX`), the rest is encoded once over every choice and the whole subtree dropped
    /// when the outward-rounded enclosures rule it out (exact; 0: never; never for states of
    /// integers only, which may be tabulated). See
    /// [`crate::encode::Encoder::lookahead`].
    pub lookahead: usize,
    /// Compositional: a choice whose obligations look at most this many steps ahead (none through
    /// an `AX`) is first solved as one model of its whole subtree, expanded job by job only when
    /// that decides nothing (0: never, the default). See [`crate::encode::Encoder::subtree_milp`].
    /// Off by default because a subtree's infeasible MILP is floating-point evidence where the
    /// job-by-job expansion may drop every path by the rounded bounds, an exact proof: ARCH-COMP
    /// VCAS middle -19.5 went from proven to evidence with it. [`crate::encode::SUBTREE_DEPTH`]
    /// is the depth measured best where evidence is enough.
    pub subtree_depth: usize,
}

impl Default for CtlOptions {
    fn default() -> CtlOptions {
        CtlOptions {
            method: Method::Auto,
            threads: rayon::current_num_threads(),
            pieces: None,
            tolerance: 1e-6,
            feasibility_tolerance: 1e-6,
            tie_gap: 1e-5,
            tabulate: 1024,
            max_states: 1_000_000,
            max_traces: 16,
            progress: None,
            stop_free: None,
            lookahead: crate::encode::LOOKAHEAD_DEPTH,
            subtree_depth: 0,
        }
    }
}

impl CtlOptions {
    fn threshold(&self) -> f64 {
        self.tolerance + self.feasibility_tolerance
    }
}

/// Counters of one check.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CtlStats {
    /// MILPs built to the end (compositional: jobs the bounds did not rule out).
    pub milps_built: usize,
    pub milps_solved: usize,
    /// Jobs (or whole subtrees of jobs) dropped because the bounds contradict them.
    pub milps_pruned: usize,
    /// Binaries of the largest MILP.
    pub binaries: usize,
    /// Rows (constraints) of the MILP with the most binaries.
    pub rows: usize,
    /// Per depth, in the MILP with the most binaries: the networks' kinks (ReLU phases) the
    /// bounds fixed active, fixed inactive, and left to a binary.
    pub kinks: Vec<[usize; 3]>,
    /// Wall-clock seconds inside HiGHS (summed over threads).
    pub solver_seconds: f64,
    /// States whose successors the exact engine computed.
    pub states_expanded: usize,
    /// Candidates evaluated exactly.
    pub candidates: usize,
    pub seconds: f64,
}

/// What a check found, in trestle-core's terms: `Proven` (the explicit engine, or outward-rounded
/// bounds ruling out every job; no certificate), `Evidence` (HiGHS's infeasibility, with the
/// smallest dual bound on the atoms' relaxation as the margin, `MAX_SLACK` when every solved job
/// was infeasible), `Refuted` (an initial state satisfying the negation: its first witness run as
/// `trace`, the others, every branch of an `AX`, as `others`; a state alone is a run of no
/// steps), or `Unknown` with its reason.
#[derive(Clone, Debug, PartialEq)]
pub struct CtlResult {
    pub verdict: Verdict,
    /// The engine that decided (`explicit`, `compositional`, `monolithic`), or the last tried.
    pub method: &'static str,
    pub stats: CtlStats,
}

/// What one MILP said.
enum Solved {
    Evidence(f64),
    Candidate { start: Vec<f64>, hints: Vec<Vec<Vec<f64>>> },
    Unknown(Unknown),
}

/// Stack of the threads that expand and evaluate formulas (the compositional expansion recurses
/// once per choice it makes, at most [`crate::encode::MAX_NESTING`] deep).
pub(crate) const ENGINE_STACK: usize = 64 << 20;

/// Decides `phi` on `sys` (every initial state must satisfy it) within `budget`.
pub fn check_ctl(sys: &System, phi: &Ctl, opts: &CtlOptions, budget: &Budget) -> Result<CtlResult, CtlError> {
    let start = Instant::now();
    sys.validate().map_err(|e| CtlError::Unsupported(e.to_string()))?;
    // Exact evaluation (the explicit engine, every candidate's gate) and the MILP encodings need
    // exact values: piecewise-linear activations only.
    sys.check_piecewise_linear("bounded CTL").map_err(CtlError::Unsupported)?;
    if !phi.is_bounded() {
        return Err(CtlError::Unsupported(
            "every temporal operator of bounded CTL needs a bound (EF^k, AG^k, ...)".into(),
        ));
    }
    if let Some(p) = opts.pieces
        && !(1..=MAX_PIECES).contains(&p)
    {
        return Err(CtlError::Options(format!("pieces must be between 1 and {MAX_PIECES}, not {p}")));
    }
    if opts.threads == 0 {
        return Err(CtlError::Options("the engine needs at least one thread".into()));
    }
    let unknown =
        |u: Unknown, stats: CtlStats| CtlResult { verdict: Verdict::Unknown(u), method: opts.method.name(), stats };
    let normal = match Normal::negation(phi, budget) {
        Ok(n) => n,
        Err(CtlError::Stopped(s)) => {
            let stats = CtlStats { seconds: start.elapsed().as_secs_f64(), ..CtlStats::default() };
            return Ok(unknown(s.into(), stats));
        }
        Err(e) => return Err(e),
    };
    for node in &normal.nodes {
        if let Node::Atom(p) = node
            && p.mentions(|v| !matches!(v, VarRef::State(_)))
        {
            return Err(CtlError::Unsupported(format!("atom {p:?} mentions something other than state variables")));
        }
    }
    let choices = choices(sys)?;
    let boxes =
        sys.init.to_box_union(sys.state.len(), 4096).filter(|bs| bs.iter().all(RBox::is_bounded)).ok_or_else(|| {
            CtlError::Unsupported("Init must be a bounded union of boxes (bounds on every state variable)".into())
        })?;
    let mut run = Run {
        sys,
        normal: &normal,
        choices: &choices,
        opts,
        start,
        budget: budget.clone(),
        stats: CtlStats::default(),
    };
    let decided = match opts.method {
        Method::Explicit => run.explicit(&boxes).map(|v| (v, Method::Explicit)),
        Method::Monolithic => run.monolithic(&boxes).map(|v| (v, Method::Monolithic)),
        Method::Compositional => run.compositional(&boxes).map(|v| (v, Method::Compositional)),
        Method::Auto => run.auto(&boxes),
    };
    let (verdict, method) = match decided {
        Ok(d) => d,
        Err(e) => match e.unknown() {
            Some(u) => (Verdict::Unknown(u), opts.method),
            None => return Err(e),
        },
    };
    // Bounded CTL needs a successor at every state (`exact`), but the MILP engines leave out the
    // states without one: where the system's text lets a run stop, their "true" stands only once
    // the states reachable within the formula's depth are swept exactly (a stop is then the
    // system's error, as the explicit engine reports it), or once the caller proved that no run
    // from Init stops (`opts.stop_free`).
    let verdict = match (verdict, trestle_ir::stops::stop_free(sys)) {
        (v, Err(stop)) if v.holds() == Some(true) && method != Method::Explicit && opts.stop_free.is_none() => {
            match run.sweep(&boxes, normal.depth(normal.root))? {
                Swept::Clean => v,
                Swept::Stopped(stopped) => Verdict::Unknown(stopped.into()),
                Swept::Unswept(why) => Verdict::Unknown(Unknown::RunsMayStop(format!(
                    "{stop}, and the states reachable within the formula's depth were not swept to rule it out ({why})"
                ))),
            }
        }
        (v, _) => v,
    };
    // A limit reached is what an undecided check reports, whichever engine part noticed it.
    let verdict = match (verdict, budget.check()) {
        (Verdict::Unknown(_), Err(stop)) => Verdict::Unknown(stop.into()),
        (v, _) => v,
    };
    run.stats.seconds = start.elapsed().as_secs_f64();
    Ok(CtlResult { verdict, method: method.name(), stats: run.stats })
}

pub(crate) struct Run<'a> {
    pub(crate) sys: &'a System,
    pub(crate) normal: &'a Normal,
    pub(crate) choices: &'a [Choice],
    pub(crate) opts: &'a CtlOptions,
    pub(crate) start: Instant,
    pub(crate) budget: Budget,
    pub(crate) stats: CtlStats,
}

/// What the exact sweep of a system whose runs may stop found.
pub(crate) enum Swept {
    /// Every reachable state within the depth has successors, all of them states.
    Clean,
    /// The states could not be swept (not finitely many, too many): why.
    Unswept(String),
    /// The budget ended first.
    Stopped(Stop),
}

/// What one compositional subtree found.
#[derive(Default)]
struct Subtree {
    verdict: Option<Verdict>,
    tally: Tally,
    stats: CtlStats,
}

impl CtlStats {
    /// Counts one MILP built: its size, kept when it is the largest so far.
    fn record(&mut self, ready: &Ready) {
        self.milps_built += 1;
        let (binaries, rows) = (ready.model.num_binaries(), ready.model.num_constraints());
        if self.milps_built == 1 || binaries > self.binaries || (binaries == self.binaries && rows > self.rows) {
            self.binaries = binaries;
            self.rows = rows;
            self.kinks = ready.kinks.clone();
        }
    }

    fn add(&mut self, o: &CtlStats) {
        self.milps_built += o.milps_built;
        self.milps_solved += o.milps_solved;
        self.milps_pruned += o.milps_pruned;
        if o.binaries > self.binaries || (o.binaries == self.binaries && o.rows > self.rows) {
            self.binaries = o.binaries;
            self.rows = o.rows;
            self.kinks = o.kinks.clone();
        }
        self.solver_seconds += o.solver_seconds;
        self.states_expanded += o.states_expanded;
        self.candidates += o.candidates;
    }
}

/// The evidence so far: the smallest margin, and whether any MILP was needed.
#[derive(Default)]
struct Tally {
    margin: Option<f64>,
    unknown: Option<Unknown>,
}

impl Tally {
    fn add(&mut self, margin: f64) {
        self.margin = Some(self.margin.map_or(margin, |m| m.min(margin)));
    }

    fn merge(&mut self, o: Tally) {
        if let Some(m) = o.margin {
            self.add(m);
        }
        if self.unknown.is_none() {
            self.unknown = o.unknown;
        }
    }

    fn verdict(self) -> Verdict {
        match (self.unknown, self.margin) {
            (Some(reason), _) => Verdict::Unknown(reason),
            (None, None) => Verdict::proven(),
            (None, Some(margin)) => Verdict::Evidence { margin },
        }
    }
}

/// The refutation by an initial state and its witness runs: the first run is the trace, the
/// others (every branch of an `AX`) ride along. A state refuted by its atoms alone has one run of
/// no steps.
fn refuted(mut traces: Vec<crate::Trace>) -> Result<Verdict, CtlError> {
    if traces.is_empty() {
        return Err(CtlError::Internal("a refutation without a witness run".into()));
    }
    let trace = traces.remove(0);
    Ok(Verdict::Refuted { trace, others: traces })
}

impl<'a> Run<'a> {
    fn timed_out(&self) -> bool {
        self.budget.is_over()
    }

    fn report(&mut self) {
        self.stats.seconds = self.start.elapsed().as_secs_f64();
        if let Some(p) = &self.opts.progress {
            p(&self.stats);
        }
    }

    pub(crate) fn exact(&self) -> Exact<'a> {
        let mut exact = Exact::new(self.sys, self.normal, self.choices);
        exact.budget = self.budget.clone();
        exact
    }

    /// Expands every state reachable from Init in fewer than `depth` steps exactly
    /// ([`trestle_ir::explore::sweep`]): an error at a state where a run stops, `Unswept(why)`
    /// when they are not finitely many or more than `max_states`, `Stopped` when the budget ends.
    fn sweep(&mut self, boxes: &[RBox], depth: usize) -> Result<Swept, CtlError> {
        let budget = self.budget.clone();
        match trestle_ir::explore::sweep(self.sys, boxes, Some(depth), self.opts.max_states, || budget.check()) {
            Sweep::NoStop => Ok(Swept::Clean),
            Sweep::Unswept(why) => Ok(Swept::Unswept(why)),
            Sweep::Stopped(stop) => Ok(Swept::Stopped(stop)),
            Sweep::Stop(why) => Err(CtlError::Semantics(format!(
                "{why}; bounded CTL needs every state to have a successor that is a state"
            ))),
        }
    }

    /// The explicit engine: every initial state evaluated exactly (at most `max_expanded` states
    /// expanded, `CtlError::Limit` past that).
    pub(crate) fn explicit_within(&mut self, boxes: &[RBox], max_expanded: usize) -> Result<Verdict, CtlError> {
        let states = trestle_ir::explore::initial_states(self.sys, boxes, self.opts.max_states).map_err(|why| {
            CtlError::Unsupported(format!("the explicit engine needs finitely many initial states: {why}"))
        })?;
        let mut exact = self.exact();
        exact.max_expanded = max_expanded;
        let memory = initial_memory::<Rational>(self.sys);
        let verdict = (|| {
            for s in states {
                self.budget.check()?;
                if exact.holds(self.normal.root, &s, &memory, 0)? {
                    return refuted(exact.witness(self.normal.root, &s, self.opts.max_traces)?);
                }
            }
            Ok(Verdict::proven())
        })();
        self.stats.states_expanded += exact.expanded;
        verdict
    }

    fn explicit(&mut self, boxes: &[RBox]) -> Result<Verdict, CtlError> {
        self.explicit_within(boxes, usize::MAX)
    }

    fn encoder(&self, mode: Mode, strictness: Strictness) -> Encoder<'a> {
        let pieces = self.opts.pieces.unwrap_or(if mode == Mode::Monolithic { 16 } else { 1 });
        let bounds = BoundOptions { pieces, budget: self.budget.clone(), ..BoundOptions::default() };
        let step = StepOptions { bounds, strictness };
        let mut enc = Encoder::new(self.sys, self.normal, self.choices, step, mode);
        enc.tabulate = self.opts.tabulate;
        // Zero where the encoder turned them off (states of integers only).
        if enc.lookahead > 0 {
            enc.lookahead = self.opts.lookahead;
        }
        if enc.subtree_milp > 0 {
            enc.subtree_milp = self.opts.subtree_depth;
        }
        enc
    }

    /// One job solved: a candidate, evidence, or nothing. Evidence from a dual bound must be
    /// confirmed by a second solve without HiGHS's presolve (which reduces with tolerances and has
    /// been seen to cut feasible models; an infeasibility is confirmed that way by the MILP layer).
    fn solve(&self, job: &Ready) -> Result<Solved, CtlError> {
        let solved = match self.solve_with(job, false)? {
            (Solved::Evidence(m), true) => match self.solve_with(job, true)?.0 {
                Solved::Evidence(m2) => Solved::Evidence(m.min(m2)),
                other => other,
            },
            (other, _) => other,
        };
        // Atoms stated exactly on tabulated slots bound the margin the job can claim.
        Ok(match solved {
            Solved::Evidence(m) => Solved::Evidence(m.min(job.cap)),
            other => other,
        })
    }

    /// The job solved once (`no_presolve`: with HiGHS's presolve off); `true` when the answer is
    /// evidence from a dual bound.
    fn solve_with(&self, job: &Ready, no_presolve: bool) -> Result<(Solved, bool), CtlError> {
        let mut solve = SolveOptions {
            feasibility_tolerance: self.opts.feasibility_tolerance,
            threads: Some(1),
            // Any point with the atoms within the tolerance is a candidate: stop there.
            objective_target: Some(self.opts.tolerance),
            ..SolveOptions::default()
        }
        .within(&self.budget);
        if no_presolve {
            solve.highs_options.push(("presolve".into(), HighsValue::Text("off".into())));
        }
        let out = job.model.solve(Sense::Minimise, &good_lp::Expression::from(job.slack), &solve)?;
        if let Some(values) = &out.values
            && out.primal.is_some_and(|p| p <= self.opts.tolerance)
        {
            let value = |b: &trestle_milp::Bounded| job.model.eval(&b.expr, values);
            let start = job.start.iter().map(value).collect();
            let depth = job.slots.iter().map(|(d, _)| *d).max().unwrap_or(0);
            let mut hints = vec![Vec::new(); depth + 1];
            for (d, s) in &job.slots {
                hints[*d].push(s.iter().map(value).collect());
            }
            return Ok((Solved::Candidate { start, hints }, false));
        }
        if let Some(why) = out.out_of_range {
            let why = Unknown::Solver(format!("a MILP is outside HiGHS's numeric range: {why}"));
            return Ok((Solved::Unknown(why), false));
        }
        let from_bound = matches!(out.status, SolveStatus::Optimal | SolveStatus::Target);
        let solved = match out.status {
            SolveStatus::Infeasible => Solved::Evidence(MAX_SLACK),
            SolveStatus::Optimal | SolveStatus::Target => match out.bound {
                Some(b) if b >= self.opts.threshold() => Solved::Evidence(b.min(MAX_SLACK)),
                b => Solved::Unknown(Unknown::Incomplete(format!(
                    "a MILP's bound on the relaxation is {}, not above the threshold {:.1e}, and no solution replayed",
                    b.map_or("missing".into(), |b| format!("{b:.3e}")),
                    self.opts.threshold()
                ))),
            },
            SolveStatus::Limit(limit) => Solved::Unknown(limit.unknown()),
            SolveStatus::Other(why) => Solved::Unknown(Unknown::Solver(format!("HiGHS's model status {why}"))),
        };
        Ok((solved, from_bound))
    }

    /// The exact gate: an initial state near the solver's that satisfies the negation exactly.
    fn confirm(
        &self,
        init: &RBox,
        start: &[f64],
        hints: Vec<Vec<Vec<f64>>>,
        stats: &mut CtlStats,
    ) -> Result<Option<Verdict>, CtlError> {
        let mut exact = self.exact();
        exact.hints = hints;
        let memory = initial_memory::<Rational>(self.sys);
        let mut points = trestle_milp::replay::candidates(self.sys, init, start);
        // The raw solver values too (their exact f64), before anything is moved.
        points.push(start.iter().map(|&x| rational_from_f64(if x.is_finite() { x } else { 0.0 })).collect());
        for p in points {
            stats.candidates += 1;
            if trestle_ir::sim::check_state(self.sys, &p).is_err()
                || !init.contains_exact(&p)
                || !self.sys.init.eval_exact(&Env::new(&p, &[], &[])).unwrap_or(false)
            {
                continue;
            }
            let holds = exact.holds(self.normal.root, &p, &memory, 0)?;
            stats.states_expanded += exact.expanded;
            exact.expanded = 0;
            if holds {
                return refuted(exact.witness(self.normal.root, &p, self.opts.max_traces)?).map(Some);
            }
        }
        Ok(None)
    }

    /// A candidate that did not replay (a solver point on a boundary: an argmax tie, a strict
    /// atom met with equality): the same job rebuilt with argmax choices and strict atoms holding
    /// by a gap (a subset of the behaviours, never evidence), solved, and its candidate tried.
    /// `None`: still nothing.
    fn retry(&self, init: &RBox, job: &Ready, mode: Mode, stats: &mut CtlStats) -> Result<Option<Verdict>, CtlError> {
        let enc = self.encoder(mode, Strictness::Margin(self.opts.tie_gap));
        let Some(j) = enc.start(init)? else { return Ok(None) };
        let rebuilt = match mode {
            Mode::Monolithic => Some(enc.encode_all(j)?),
            Mode::Compositional => {
                let mut found = None;
                let mut ctx = Expansion::default();
                enc.expand(j, Some(&job.decisions), &mut ctx, &mut |r| {
                    found = Some(r);
                    Ok(Flow::Stop)
                })?;
                found
            }
        };
        let Some(r) = rebuilt else { return Ok(None) };
        stats.milps_solved += 1;
        let solving = Instant::now();
        let solved = self.solve(&r)?;
        stats.solver_seconds += solving.elapsed().as_secs_f64();
        match solved {
            Solved::Candidate { start, hints } => self.confirm(init, &start, hints, stats),
            _ => Ok(None),
        }
    }

    /// What one solved job means for the verdict; `Some` ends the check.
    fn settle(
        &self,
        init: &RBox,
        job: &Ready,
        solved: Solved,
        mode: Mode,
        tally: &mut Tally,
        stats: &mut CtlStats,
    ) -> Result<Option<Verdict>, CtlError> {
        match solved {
            Solved::Evidence(m) => tally.add(m),
            Solved::Unknown(why) => {
                tally.unknown.get_or_insert(why);
            }
            Solved::Candidate { start, hints } => {
                if let Some(v) = self.confirm(init, &start, hints, stats)? {
                    return Ok(Some(v));
                }
                if let Some(v) = self.retry(init, job, mode, stats)? {
                    return Ok(Some(v));
                }
                tally.unknown.get_or_insert(Unknown::Incomplete(
                    "a MILP found a candidate counterexample that does not replay exactly".into(),
                ));
            }
        }
        Ok(None)
    }

    pub(crate) fn monolithic(&mut self, boxes: &[RBox]) -> Result<Verdict, CtlError> {
        let mut tally = Tally::default();
        for init in boxes {
            self.budget.check()?;
            let enc = self.encoder(Mode::Monolithic, Strictness::Closure);
            let Some(job) = enc.start(init)? else { continue };
            let ready = enc.encode_all(job)?;
            self.stats.record(&ready);
            if ready.model.infeasible_reason().is_some() {
                self.stats.milps_pruned += 1;
                continue;
            }
            self.stats.milps_solved += 1;
            let solving = Instant::now();
            let solved = self.solve(&ready)?;
            self.stats.solver_seconds += solving.elapsed().as_secs_f64();
            let mut stats = std::mem::take(&mut self.stats);
            let settled = self.settle(init, &ready, solved, Mode::Monolithic, &mut tally, &mut stats);
            self.stats = stats;
            if let Some(v) = settled? {
                return Ok(v);
            }
            self.report();
        }
        Ok(tally.verdict())
    }

    /// A stop test for an expansion: the time limit, or (`before`) a refutation found in an
    /// earlier subtree.
    fn stopper<'s>(&'s self, before: Option<(usize, &'s AtomicUsize)>) -> Box<dyn Fn() -> bool + 's> {
        Box::new(move || self.timed_out() || before.is_some_and(|(i, found)| found.load(Ordering::Relaxed) < i))
    }

    pub(crate) fn compositional(&mut self, boxes: &[RBox]) -> Result<Verdict, CtlError> {
        let threads = self.opts.threads.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .stack_size(ENGINE_STACK)
            .build()
            .map_err(|e| CtlError::Internal(format!("thread pool: {e}")))?;
        let mut tally = Tally::default();
        for init in boxes {
            let enc = self.encoder(Mode::Compositional, Strictness::Closure);
            let Some(job) = enc.start(init)? else { continue };
            let (items, pruned) = {
                let mut ctx = Expansion::stopped_by(self.stopper(None));
                let items = enc.frontier(job, 8 * threads, &mut ctx)?;
                (items, ctx.pruned)
            };
            self.stats.milps_pruned += pruned;
            // Subtrees in parallel, each expanded and solved in its own thread; the first
            // refutation in subtree order is the verdict (later subtrees stop, earlier ones finish).
            let found = AtomicUsize::new(usize::MAX);
            let progress = Mutex::new((Instant::now(), self.stats.clone()));
            let run = &*self;
            let outcomes: Vec<Result<Subtree, CtlError>> = pool.install(|| {
                items
                    .into_par_iter()
                    .enumerate()
                    .map(|(i, job)| run.subtree(&enc, init, i, job, &found, &progress))
                    .collect()
            });
            for outcome in outcomes {
                let sub = outcome?;
                self.stats.add(&sub.stats);
                if let Some(v) = sub.verdict {
                    return Ok(v);
                }
                tally.merge(sub.tally);
            }
            self.budget.check()?;
        }
        Ok(tally.verdict())
    }

    /// One subtree of the compositional expansion: its jobs built depth first and solved here.
    fn subtree(
        &self,
        enc: &Encoder<'_>,
        init: &RBox,
        i: usize,
        job: Job,
        found: &AtomicUsize,
        progress: &Mutex<(Instant, CtlStats)>,
    ) -> Result<Subtree, CtlError> {
        let mut sub = Subtree::default();
        let mut ctx = Expansion::stopped_by(self.stopper(Some((i, found))));
        enc.expand(job, None, &mut ctx, &mut |ready| {
            sub.stats.record(&ready);
            sub.stats.milps_solved += 1;
            let solving = Instant::now();
            let solved = self.solve(&ready)?;
            sub.stats.solver_seconds += solving.elapsed().as_secs_f64();
            if ready.subtree {
                // A whole subtree in one model: its evidence covers every job below; anything
                // else (a candidate that does not replay, no answer) is left to the expansion.
                match solved {
                    Solved::Evidence(m) => sub.tally.add(m),
                    Solved::Candidate { start, hints } => match self.confirm(init, &start, hints, &mut sub.stats)? {
                        Some(v) => {
                            sub.verdict = Some(v);
                            found.fetch_min(i, Ordering::Relaxed);
                            return Ok(Flow::Stop);
                        }
                        None => return Ok(Flow::Expand),
                    },
                    Solved::Unknown(_) => return Ok(Flow::Expand),
                }
                return Ok(Flow::Continue);
            }
            let settled = self.settle(init, &ready, solved, Mode::Compositional, &mut sub.tally, &mut sub.stats)?;
            if let Some(p) = &self.opts.progress
                && let Ok(mut shown) = progress.lock()
            {
                shown.1.milps_built += 1;
                shown.1.milps_solved += 1;
                if shown.0.elapsed() >= Duration::from_secs(2) {
                    shown.0 = Instant::now();
                    shown.1.seconds = self.start.elapsed().as_secs_f64();
                    p(&shown.1);
                }
            }
            match settled {
                Some(v) => {
                    sub.verdict = Some(v);
                    found.fetch_min(i, Ordering::Relaxed);
                    Ok(Flow::Stop)
                }
                None => Ok(Flow::Continue),
            }
        })?;
        sub.stats.milps_pruned += ctx.pruned + ctx.reused;
        Ok(sub)
    }
}
