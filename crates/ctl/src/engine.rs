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
use crate::exact::{Choice, Exact, Key, choices, product};
use crate::normal::{Node, Normal};
use rayon::prelude::*;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use trestle_core::Trace;
use trestle_ir::expr::{Env, VarRef};
use trestle_ir::formula::Ctl;
use trestle_ir::num::rational_from_f64;
use trestle_ir::sim::initial_memory;
use trestle_ir::system::{System, VarKind};
use trestle_ir::{RBox, Rational};
use trestle_milp::{BoundOptions, HighsValue, Sense, SolveOptions, SolveStatus, StepOptions, Strictness};

/// Which engine decides the property.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
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
    /// Wall-clock limit of the whole check.
    pub timeout: Option<Duration>,
    /// Sub-boxes of each network input box bounded for the big-M constants (`None`: 16 for the
    /// monolithic engine, whose boxes are hulls of every choice, 1 for the compositional one,
    /// whose boxes follow one path).
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
    /// Largest number of initial states the explicit engine enumerates.
    pub max_states: usize,
    /// Largest number of witness runs reported.
    pub max_traces: usize,
    pub progress: Option<Progress>,
}

impl Default for CtlOptions {
    fn default() -> CtlOptions {
        CtlOptions {
            method: Method::Compositional,
            threads: rayon::current_num_threads(),
            timeout: None,
            pieces: None,
            tolerance: 1e-6,
            feasibility_tolerance: 1e-6,
            tie_gap: 1e-5,
            tabulate: 1024,
            max_states: 1_000_000,
            max_traces: 16,
            progress: None,
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
    /// States whose successors the exact engine computed.
    pub states_expanded: usize,
    /// Candidates evaluated exactly.
    pub candidates: usize,
    pub seconds: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CtlVerdict {
    /// The property holds. `exact`: by exact arithmetic or outward-rounded bounds alone;
    /// otherwise by MILP infeasibility, floating-point evidence with `margin` (the smallest dual
    /// bound on the atoms' relaxation; `MAX_SLACK` when every solved job was infeasible).
    True {
        exact: bool,
        margin: Option<f64>,
    },
    /// It fails: an initial state satisfying the negation, with its witness runs (each replayed).
    False {
        state: Vec<Rational>,
        traces: Vec<Trace>,
    },
    Unknown {
        reason: String,
    },
}

impl CtlVerdict {
    /// `Some(true)` / `Some(false)` for a decided property, `None` for unknown.
    pub fn holds(&self) -> Option<bool> {
        match self {
            CtlVerdict::True { .. } => Some(true),
            CtlVerdict::False { .. } => Some(false),
            CtlVerdict::Unknown { .. } => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct CtlResult {
    pub verdict: CtlVerdict,
    pub stats: CtlStats,
}

/// What one MILP said.
enum Solved {
    Evidence(f64),
    Candidate { start: Vec<f64>, hints: Vec<Vec<Vec<f64>>> },
    Unknown(String),
}

/// Decides `phi` on `sys` (every initial state must satisfy it).
pub fn check_ctl(sys: &System, phi: &Ctl, opts: &CtlOptions) -> Result<CtlResult, CtlError> {
    let start = Instant::now();
    sys.validate().map_err(|e| CtlError::Unsupported(e.to_string()))?;
    // Exact evaluation (the explicit engine, every candidate's gate) and the MILP encodings need
    // exact values: piecewise-linear activations only.
    sys.check_activations(
        "bounded CTL",
        "identity, ReLU, leaky ReLU and clip layers: tanh and sigmoid have no exact value to check a run with",
        trestle_ir::Activation::is_piecewise_linear,
    )
    .map_err(CtlError::Unsupported)?;
    if !phi.is_bounded() {
        return Err(CtlError::Unsupported(
            "every temporal operator of bounded CTL needs a bound (EF^k, AG^k, ...)".into(),
        ));
    }
    let normal = Normal::negation(phi)?;
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
    let mut run = Run { sys, normal: &normal, choices: &choices, opts, start, stats: CtlStats::default() };
    let verdict = match opts.method {
        Method::Explicit => run.explicit(&boxes)?,
        Method::Monolithic => run.monolithic(&boxes)?,
        Method::Compositional => run.compositional(&boxes)?,
    };
    // Bounded CTL needs a successor at every state (`exact`), but the MILP engines leave out the
    // states without one: where the system's text lets a run stop, their "true" stands only once
    // the states reachable within the formula's depth are swept exactly (a stop is then the
    // system's error, as the explicit engine reports it).
    let verdict = match (verdict, trestle_ir::stops::stop_free(sys)) {
        (v @ CtlVerdict::True { .. }, Err(stop)) if opts.method != Method::Explicit => {
            match run.sweep(&boxes, normal.depth(normal.root))? {
                None => v,
                Some(why) => CtlVerdict::Unknown {
                    reason: format!(
                        "the system's runs may stop ({stop}), and the states reachable within the formula's depth \
                         were not swept to rule it out ({why})"
                    ),
                },
            }
        }
        (v, _) => v,
    };
    // A limit reached is what an undecided check reports, whichever engine part noticed it.
    let verdict = match verdict {
        CtlVerdict::Unknown { reason } if run.timed_out() && !reason.starts_with("time-out") => {
            CtlVerdict::Unknown { reason: format!("time-out ({reason})") }
        }
        v => v,
    };
    run.stats.seconds = start.elapsed().as_secs_f64();
    Ok(CtlResult { verdict, stats: run.stats })
}

struct Run<'a> {
    sys: &'a System,
    normal: &'a Normal,
    choices: &'a [Choice],
    opts: &'a CtlOptions,
    start: Instant,
    stats: CtlStats,
}

/// What one compositional subtree found.
#[derive(Default)]
struct Subtree {
    verdict: Option<CtlVerdict>,
    tally: Tally,
    stats: CtlStats,
}

impl CtlStats {
    fn add(&mut self, o: &CtlStats) {
        self.milps_built += o.milps_built;
        self.milps_solved += o.milps_solved;
        self.milps_pruned += o.milps_pruned;
        self.binaries = self.binaries.max(o.binaries);
        self.states_expanded += o.states_expanded;
        self.candidates += o.candidates;
    }
}

/// The evidence so far: the smallest margin, and whether any MILP was needed.
#[derive(Default)]
struct Tally {
    margin: Option<f64>,
    unknown: Option<String>,
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

    fn verdict(self) -> CtlVerdict {
        match (self.unknown, self.margin) {
            (Some(reason), _) => CtlVerdict::Unknown { reason },
            (None, None) => CtlVerdict::True { exact: true, margin: None },
            (None, Some(m)) => CtlVerdict::True { exact: false, margin: Some(m) },
        }
    }
}

impl<'a> Run<'a> {
    fn remaining(&self) -> Option<Duration> {
        self.opts.timeout.map(|t| t.saturating_sub(self.start.elapsed()))
    }

    fn timed_out(&self) -> bool {
        self.remaining().is_some_and(|r| r.is_zero())
    }

    fn report(&mut self) {
        self.stats.seconds = self.start.elapsed().as_secs_f64();
        if let Some(p) = &self.opts.progress {
            p(&self.stats);
        }
    }

    fn exact(&self) -> Exact<'a> {
        Exact::new(self.sys, self.normal, self.choices)
    }

    /// The initial states of a box, when there are finitely many (at most `max_states` in all).
    fn states_of(&self, b: &RBox, count: &mut usize) -> Result<Vec<Vec<Rational>>, CtlError> {
        let mut ranges = Vec::new();
        for (i, v) in self.sys.state.iter().enumerate() {
            let (lo, hi) = (b.lo[i].clone().expect("bounded"), b.hi[i].clone().expect("bounded"));
            let Some((lo, hi)) = trestle_ir::space::legal_range(self.sys, i, &lo, &hi) else { return Ok(Vec::new()) };
            if lo == hi {
                ranges.push(vec![lo]);
            } else if v.kind == VarKind::Real {
                return Err(CtlError::Unsupported(format!(
                    "the explicit engine needs finitely many initial states; '{}' ranges over an interval",
                    v.name
                )));
            } else {
                let n = (&hi - &lo).to_integer();
                let n: usize = n.try_into().unwrap_or(usize::MAX);
                if n >= self.opts.max_states {
                    return Err(CtlError::Unsupported(format!("more than {} initial states", self.opts.max_states)));
                }
                ranges.push((0..=n).map(|k| &lo + Rational::from_integer(k.into())).collect());
            }
        }
        let Some(states) = product(&ranges, self.opts.max_states.saturating_sub(*count)) else {
            return Err(CtlError::Unsupported(format!("more than {} initial states", self.opts.max_states)));
        };
        *count += states.len();
        let init = &self.sys.init;
        Ok(states.into_iter().filter(|s| init.eval_exact(&Env::new(s, &[], &[])).unwrap_or(false)).collect())
    }

    /// Expands every state reachable from Init in fewer than `depth` steps exactly: an error at a
    /// state that has no successor (or whose successor is no state), `Some(why)` when they are
    /// not finitely many or more than `max_states`, or the time runs out.
    fn sweep(&mut self, boxes: &[RBox], depth: usize) -> Result<Option<String>, CtlError> {
        let mut count = 0;
        let mut frontier: Vec<Key> = Vec::new();
        for b in boxes {
            match self.states_of(b, &mut count) {
                Ok(states) => frontier.extend(states.into_iter().map(|s| (s, initial_memory::<Rational>(self.sys)))),
                Err(CtlError::Unsupported(why)) => return Ok(Some(why)),
                Err(e) => return Err(e),
            }
        }
        let mut exact = self.exact();
        let mut seen: HashSet<Key> = frontier.iter().cloned().collect();
        for _ in 0..depth {
            let mut next = Vec::new();
            for (state, memory) in &frontier {
                if self.timed_out() {
                    return Ok(Some("time-out".into()));
                }
                for m in exact.moves(state, memory)?.iter() {
                    let key = (m.next.clone(), m.memory.clone());
                    if !seen.contains(&key) {
                        if seen.len() >= self.opts.max_states {
                            return Ok(Some(format!("more than {} reachable states", self.opts.max_states)));
                        }
                        seen.insert(key.clone());
                        next.push(key);
                    }
                }
            }
            frontier = next;
        }
        Ok(None)
    }

    fn explicit(&mut self, boxes: &[RBox]) -> Result<CtlVerdict, CtlError> {
        let mut count = 0;
        let mut states = Vec::new();
        for b in boxes {
            for s in self.states_of(b, &mut count)? {
                if !states.contains(&s) {
                    states.push(s);
                }
            }
        }
        let mut exact = self.exact();
        let memory = initial_memory::<Rational>(self.sys);
        for s in states {
            if self.timed_out() {
                self.stats.states_expanded = exact.expanded;
                return Ok(CtlVerdict::Unknown { reason: "time-out".into() });
            }
            if exact.holds(self.normal.root, &s, &memory, 0)? {
                let traces = exact.witness(self.normal.root, &s, self.opts.max_traces)?;
                self.stats.states_expanded = exact.expanded;
                return Ok(CtlVerdict::False { state: s, traces });
            }
        }
        self.stats.states_expanded = exact.expanded;
        Ok(CtlVerdict::True { exact: true, margin: None })
    }

    fn encoder(&self, mode: Mode, strictness: Strictness) -> Encoder<'a> {
        let pieces = self.opts.pieces.unwrap_or(if mode == Mode::Monolithic { 16 } else { 1 });
        let step = StepOptions { bounds: BoundOptions { pieces, ..BoundOptions::default() }, strictness };
        let mut enc = Encoder::new(self.sys, self.normal, self.choices, step, mode);
        enc.tabulate = self.opts.tabulate;
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
            time_limit: self.remaining(),
            feasibility_tolerance: self.opts.feasibility_tolerance,
            threads: Some(1),
            // Any point with the atoms within the tolerance is a candidate: stop there.
            objective_target: Some(self.opts.tolerance),
            ..SolveOptions::default()
        };
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
            return Ok((Solved::Unknown(format!("a MILP is outside HiGHS's numeric range: {why}")), false));
        }
        let from_bound = matches!(out.status, SolveStatus::Optimal | SolveStatus::Target);
        let solved = match out.status {
            SolveStatus::Infeasible => Solved::Evidence(MAX_SLACK),
            SolveStatus::Optimal | SolveStatus::Target => match out.bound {
                Some(b) if b >= self.opts.threshold() => Solved::Evidence(b.min(MAX_SLACK)),
                b => Solved::Unknown(format!(
                    "a MILP's bound on the relaxation is {}, not above the threshold {:.1e}, and no solution replayed",
                    b.map_or("missing".into(), |b| format!("{b:.3e}")),
                    self.opts.threshold()
                )),
            },
            SolveStatus::Limit(why) => Solved::Unknown(format!("a MILP stopped at a limit: {why}")),
            SolveStatus::Other(why) => Solved::Unknown(format!("HiGHS: {why}")),
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
    ) -> Result<Option<CtlVerdict>, CtlError> {
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
                let traces = exact.witness(self.normal.root, &p, self.opts.max_traces)?;
                return Ok(Some(CtlVerdict::False { state: p, traces }));
            }
        }
        Ok(None)
    }

    /// A candidate that did not replay (a solver point on a boundary: an argmax tie, a strict
    /// atom met with equality): the same job rebuilt with argmax choices and strict atoms holding
    /// by a gap (a subset of the behaviours, never evidence), solved, and its candidate tried.
    /// `None`: still nothing.
    fn retry(
        &self,
        init: &RBox,
        job: &Ready,
        mode: Mode,
        stats: &mut CtlStats,
    ) -> Result<Option<CtlVerdict>, CtlError> {
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
        match self.solve(&r)? {
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
    ) -> Result<Option<CtlVerdict>, CtlError> {
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
                tally
                    .unknown
                    .get_or_insert("a MILP found a candidate counterexample that does not replay exactly".into());
            }
        }
        Ok(None)
    }

    fn monolithic(&mut self, boxes: &[RBox]) -> Result<CtlVerdict, CtlError> {
        let mut tally = Tally::default();
        for init in boxes {
            if self.timed_out() {
                return Ok(CtlVerdict::Unknown { reason: "time-out".into() });
            }
            let enc = self.encoder(Mode::Monolithic, Strictness::Closure);
            let Some(job) = enc.start(init)? else { continue };
            let ready = enc.encode_all(job)?;
            self.stats.milps_built += 1;
            self.stats.binaries = self.stats.binaries.max(ready.model.num_binaries());
            if ready.model.infeasible_reason().is_some() {
                self.stats.milps_pruned += 1;
                continue;
            }
            self.stats.milps_solved += 1;
            let solved = self.solve(&ready)?;
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

    fn compositional(&mut self, boxes: &[RBox]) -> Result<CtlVerdict, CtlError> {
        let threads = self.opts.threads.max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| CtlError::Unsupported(format!("thread pool: {e}")))?;
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
            if self.timed_out() {
                return Ok(CtlVerdict::Unknown { reason: "time-out".into() });
            }
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
            sub.stats.milps_built += 1;
            sub.stats.milps_solved += 1;
            sub.stats.binaries = sub.stats.binaries.max(ready.model.num_binaries());
            let solved = self.solve(&ready)?;
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
