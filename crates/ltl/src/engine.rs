//! The dispatcher: for a formula, the methods able to decide it, cheapest first, and which one
//! decided at which depth.
//!
//! Every method runs within the caller's [`Budget`]: it ends the check as `unknown` (time limit
//! reached, or cancelled) within a solver's reaction time, as do enclosures that overflow f64 and
//! unrollings too large to build (`unknown` with that reason, never an error of the tool).

use crate::bpt;
use crate::certificate::BoundedJson;
use crate::error::LtlError;
use crate::lasso::{self, LassoOutcome};
use crate::path::PathFormula;
use crate::rmilp::{self, RmilpOptions, RmilpOutcome, RmilpStats};
use crate::sample;
use crate::synthesis::{self, SynthesisOutcome};
use std::time::Instant;
use trestle_bridge::certificate::ProofJson;
use trestle_core::{Budget, Certificate, Trace, Unknown, Verdict};
use trestle_ir::explore::{Sweep, sweep};
use trestle_ir::formula::Ltl;
use trestle_ir::num::Rational;
use trestle_ir::system::System;
use trestle_ir::{RBox, sim, space};

/// Which method decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// BPT first, then simulated runs (a refutation when one violates the formula exactly),
    /// then RMILP for what they leave open.
    Auto,
    /// Bound propagation through time alone (exact when it decides, incomplete).
    Bpt,
    /// The recursive MILP alone.
    Rmilp,
    /// The lasso search alone (refutes unbounded `F p` and `p U q`).
    Lasso,
    /// Invariants alone (prove unbounded `G p`).
    Invariant,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Auto => "auto",
            Method::Bpt => "bpt",
            Method::Rmilp => "rmilp",
            Method::Lasso => "lasso",
            Method::Invariant => "invariant",
        }
    }
}

/// Where the engine says which stage it is in ("bound propagation (intervals), Init box 2 of
/// 5"), for a front end's progress display. Equal to every other (it changes no answer).
#[derive(Clone)]
pub struct StageReport(pub std::sync::Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for StageReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StageReport")
    }
}

impl PartialEq for StageReport {
    fn eq(&self, _: &StageReport) -> bool {
        true
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct LtlOptions {
    pub method: Method,
    /// For unbounded formulas: the horizon of the bounded checks that prove `F` / `U` and refute
    /// `G`, and the longest lasso searched (the invariant search iterates up to 16 times this).
    pub depth: usize,
    pub rmilp: RmilpOptions,
    /// The domain of `Method::Bpt` (`Method::Auto` tries intervals, then CROWN).
    pub bpt: bpt::Domain,
    /// Told each stage as it starts (`None`: nobody listens).
    pub progress: Option<StageReport>,
}

impl LtlOptions {
    fn stage(&self, what: &str) {
        if let Some(StageReport(f)) = &self.progress {
            f(what);
        }
    }
}

impl Default for LtlOptions {
    fn default() -> LtlOptions {
        LtlOptions {
            method: Method::Auto,
            depth: 10,
            rmilp: RmilpOptions::default(),
            bpt: bpt::Domain::Interval,
            progress: None,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct LtlStats {
    /// Init boxes the formula was checked from.
    pub init_boxes: usize,
    /// Each step's enclosure by BPT (the first Init box), for reports.
    pub bpt_enclosures: Vec<Vec<(f64, f64)>>,
    pub rmilp: RmilpStats,
    /// Boxes of an invariant found by synthesis (0 when none), and the dimensions of the state
    /// it is over (the system's variables and the kept hidden units).
    pub invariant_boxes: usize,
    pub invariant_dims: usize,
    pub seconds: f64,
}

/// What a check found: the verdict in trestle-core's terms (`Proven` by bound propagation, an
/// invariant or synthesis, with the certificate `trestle certify` re-checks when the method
/// writes one; `Evidence` from the MILP with its margin; `Refuted` by a path from Init replayed
/// exactly, a lasso for unbounded `F` and `U`; `RefutedValidated` by a validated run through
/// tanh or sigmoid; `Unknown` with its reason).
#[derive(Clone, Debug, PartialEq)]
pub struct LtlResult {
    pub verdict: Verdict,
    /// The method that decided (`bpt`, `bpt-crown`, `simulation`, `rmilp`, `lasso`, `invariant`,
    /// `synthesis`), or the last one tried.
    pub method: &'static str,
    /// Steps of the unrolled path (the formula's depth).
    pub depth: usize,
    pub stats: LtlStats,
}

/// A certificate of a formula's truth, before it becomes the verdict's JSON document.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum LtlCertificate {
    /// `G p` proven by an invariant: the bridge engine's proof over the system with its hidden
    /// states lifted (the box of bound propagation, the maximal invariant's `I_k` with the boxes
    /// of the steps before it, or the union of boxes of synthesis), `ltl` naming the formula.
    Always(ProofJson),
    /// A bounded formula proven by bound propagation through time: its enclosures
    /// ([`crate::certificate`]). For an unbounded `F p` or `p U q` proven by a bounded instance,
    /// the certificate is that instance's (`F<=d p` implies `F p`).
    Bounded(BoundedJson),
}

impl LtlCertificate {
    /// The certificate as the JSON document a verdict carries (and `trestle certify` reads).
    pub fn into_certificate(self) -> Certificate {
        Certificate(serde_json::to_value(self).expect("certificates are plain data"))
    }
}

/// Most boxes Init may be cut into.
const MAX_INIT_BOXES: usize = 1024;

/// Checks an LTL formula on every path from Init within `budget`: bounded formulas by BPT and
/// RMILP; the unbounded shapes `F p`, `G p` and `p U q` (p, q state predicates) by what Table 1
/// of the notes allows: `F` / `U` proven by a bounded instance (`F<=d`, `U<=d`) and refuted by a
/// lasso (or, for `U`, a finite path reaching `not p and not q` first); `G` proven by an
/// invariant and refuted by a finite path (`G<=d` failing).
pub fn check_ltl(sys: &System, phi: &Ltl, opts: &LtlOptions, budget: &Budget) -> Result<LtlResult, LtlError> {
    // RMILP and lassos encode the step as a MILP: tanh and sigmoid layers by a sound relaxation
    // (a candidate path refutes only once validated; a lasso through irrational values cannot be
    // shown to close, so the lasso search only ever says that none exists), elementary functions
    // of the step not at all. Bound propagation, invariants and synthesis bound both rigorously;
    // refutations through them are validated runs.
    if matches!(opts.method, Method::Rmilp | Method::Lasso)
        && let Some(what) = sys.nonlinear_step()
    {
        return Err(LtlError::Unsupported(format!(
            "ltl --method {} encodes the step piecewise-linearly (tanh and sigmoid layers by a sound relaxation), \
             and {what}, which it cannot encode; use the engines that bound it rigorously and validate \
             counterexamples by high-precision enclosures: `check` (the bridge engine), `synth`, `verify` and \
             `certify`; `ltl --method bpt`, `invariant` and `auto` take it",
            opts.method.name()
        )));
    }
    let start = Instant::now();
    let depth = phi.depth().map_or(opts.depth, |d| d as usize);
    let outcome = if !phi.is_bounded() {
        check_unbounded(sys, phi, opts, budget)
    } else if matches!(opts.method, Method::Lasso | Method::Invariant) {
        return Err(LtlError::Unsupported(format!(
            "--method {} decides unbounded F, G and U; this formula is bounded (use bpt or rmilp)",
            opts.method.name()
        )));
    } else {
        check_bounded(sys, phi, opts, budget)
    };
    // A limit a method did not answer itself (a budget that ran out between its stages).
    let result = match outcome {
        Ok(r) => r,
        Err(e) => match e.unknown() {
            Some(u) => LtlResult {
                verdict: Verdict::Unknown(u),
                method: opts.method.name(),
                depth,
                stats: LtlStats::default(),
            },
            None => return Err(e),
        },
    };
    let mut result = without_stops(sys, phi, result, budget)?;
    result.stats.seconds = start.elapsed().as_secs_f64();
    Ok(result)
}

/// Most states [`sweep`] expands.
const MAX_SWEEP_STATES: usize = 1 << 16;

/// Runs never end in these semantics (`path`): a run that stops is an error of the system. The
/// methods speak of the runs that go on (enclosures, unrollings, one-step queries), so a "true" on
/// a system whose text lets a run stop stands once the states runs reach are expanded exactly
/// without a stop (those before the verdict's depth; all of them for `G p`). A stop is the system's error; states that cannot be expanded leave
/// the verdict unknown.
fn without_stops(sys: &System, phi: &Ltl, r: LtlResult, budget: &Budget) -> Result<LtlResult, LtlError> {
    if r.verdict.holds() != Some(true) {
        return Ok(r);
    }
    let Err(stop) = trestle_ir::stops::stop_free(sys) else { return Ok(r) };
    let inits = sys.init.to_box_union(sys.state.len(), MAX_INIT_BOXES).unwrap_or_default();
    let depth = match phi {
        Ltl::G(None, _) => None,
        _ => Some(r.depth),
    };
    // Stop-free on what the runs reach, though not on the whole declared space.
    if let Some(region) = reachable_region(sys, &inits, depth, 16 * r.depth.max(1), budget)
        && trestle_ir::stops::stop_free_within(sys, Some(&region)).is_ok()
    {
        return Ok(r);
    }
    let why = match sweep(sys, &inits, depth, MAX_SWEEP_STATES, || budget.check()) {
        Sweep::NoStop => return Ok(r),
        Sweep::Stop(e) => return Err(LtlError::Semantics(format!("a run from Init stops: {e}"))),
        Sweep::Stopped(s) => s.into(),
        Sweep::Unswept(why) => {
            Unknown::RunsMayStop(format!("{stop}, and the states runs reach were not expanded to rule it out ({why})"))
        }
    };
    Ok(LtlResult { verdict: Verdict::Unknown(why), ..r })
}

/// An enclosure of every state a run from Init takes a step from: the hull of bound
/// propagation's boxes of steps `0 .. depth - 1`, or (`depth` `None`: every step) of an inductive
/// box around each Init box (`bpt::invariant`, at most `rounds` rounds). `None` when there is
/// none (selectors, no inductive box, the budget over).
fn reachable_region(
    sys: &System,
    inits: &[RBox],
    depth: Option<usize>,
    rounds: usize,
    budget: &Budget,
) -> Option<Vec<trestle_ir::interval::Interval>> {
    let mut hull: Option<Vec<trestle_ir::interval::Interval>> = None;
    let mut add = |b: &[trestle_ir::interval::Interval]| {
        hull = Some(match hull.take() {
            None => b.to_vec(),
            Some(h) => h.iter().zip(b).map(|(x, y)| x.hull(y)).collect(),
        });
    };
    for init in inits {
        match depth {
            Some(0) => {}
            Some(d) => {
                let boxes = bpt::propagate_full(sys, init, d - 1, bpt::Domain::Interval, budget).ok()?;
                boxes.iter().for_each(|b| add(&b.state));
            }
            None => add(&bpt::invariant(sys, init, rounds, budget).ok()??.state),
        }
    }
    hull.filter(|h| h.iter().all(|iv| iv.lo.is_finite() && iv.hi.is_finite()))
}

/// Whether a reason ends the whole check: nothing more can be tried.
fn ends_check(u: &Unknown) -> bool {
    matches!(u, Unknown::Timeout | Unknown::Interrupted | Unknown::OutOfMemory)
}

fn check_bounded(sys: &System, phi: &Ltl, opts: &LtlOptions, budget: &Budget) -> Result<LtlResult, LtlError> {
    let holds = PathFormula::of(phi, false)?;
    let negated = PathFormula::of(phi, true)?;
    let depth = negated.depth().max(holds.depth());
    let inits = sys.init.to_box_union(sys.state.len(), MAX_INIT_BOXES).ok_or_else(|| {
        LtlError::Unsupported("Init must be a union of boxes (a conjunction/disjunction of variable bounds)".into())
    })?;
    let refuter = Refuter::of(sys, phi, &negated, depth);
    let mut stats = LtlStats { init_boxes: inits.len(), ..LtlStats::default() };
    let finish = |verdict: Verdict, method: &'static str, stats: LtlStats| -> Result<LtlResult, LtlError> {
        Ok(LtlResult { verdict, method, depth, stats })
    };
    // A stage stopped by a limit: the check's answer is unknown, with that reason.
    let stopped = |e: LtlError, method: &'static str, stats: LtlStats| match e.unknown() {
        Some(u) => finish(Verdict::Unknown(u), method, stats),
        None => Err(e),
    };
    // 1. Bound propagation on every Init box: what it decides is exact. `Auto` tries intervals
    // here and CROWN after the (cheaper) simulated runs.
    let first = match opts.method {
        Method::Auto => Some(bpt::Domain::Interval),
        Method::Bpt => Some(opts.bpt),
        _ => None,
    };
    let first_name = first.map_or("bpt", bpt::Domain::method_name);
    let mut open = Vec::new();
    // The enclosures of the Init boxes BPT proved, for the certificate.
    let mut chains = Vec::new();
    let proven = |chains: Vec<Vec<bpt::FullBox>>, method: &'static str, stats: LtlStats| {
        let certificate =
            crate::certificate::bounded(sys, phi, &chains).ok().map(|c| LtlCertificate::Bounded(c).into_certificate());
        finish(Verdict::Proven { certificate }, method, stats)
    };
    for (i, b) in inits.iter().enumerate() {
        let Some(domain) = first else {
            open.push(b.clone());
            continue;
        };
        let domain_name = if domain == bpt::Domain::Crown { "CROWN" } else { "intervals" };
        opts.stage(&format!("bound propagation ({domain_name}), Init box {} of {}", i + 1, inits.len()));
        let decided = bpt_decides(sys, b, &holds, &refuter, domain, (i == 0).then_some(&mut stats), budget);
        match decided {
            Ok(BptOutcome::Holds(chain)) => chains.push(chain),
            Ok(BptOutcome::Violated(verdict)) => return finish(*verdict, domain.method_name(), stats),
            Ok(BptOutcome::ViolatedIrrational) => return finish(violated_irrational(), domain.method_name(), stats),
            Ok(BptOutcome::Open) => open.push(b.clone()),
            Err(e) => return stopped(e, first_name, stats),
        }
    }
    if open.is_empty() {
        return proven(chains, first_name, stats);
    }
    if opts.method == Method::Bpt {
        let reason = "bound propagation through time leaves an atom undecided on the enclosures".to_string();
        return finish(Verdict::Unknown(Unknown::Incomplete(reason)), first_name, stats);
    }
    if opts.method == Method::Auto {
        // 2. Random runs, replayed exactly (validated through irrational values).
        opts.stage("random runs from the open Init boxes");
        for (i, b) in open.iter().enumerate() {
            match refuter.search(sys, b, sample::RUNS, i as u64, budget) {
                Ok(Some(verdict)) => return finish(verdict, "simulation", stats),
                Ok(None) => {}
                Err(e) => return stopped(e, "simulation", stats),
            }
        }
        // 2'. CROWN's enclosures on what intervals left open.
        let mut still_open = Vec::new();
        let n = open.len();
        for (i, b) in open.into_iter().enumerate() {
            opts.stage(&format!("bound propagation (CROWN), open Init box {} of {n}", i + 1));
            match bpt_decides(sys, &b, &holds, &refuter, bpt::Domain::Crown, None, budget) {
                Ok(BptOutcome::Holds(chain)) => chains.push(chain),
                Ok(BptOutcome::Violated(verdict)) => return finish(*verdict, "bpt-crown", stats),
                Ok(BptOutcome::ViolatedIrrational) => return finish(violated_irrational(), "bpt-crown", stats),
                Ok(BptOutcome::Open) => still_open.push(b),
                Err(e) => return stopped(e, "bpt-crown", stats),
            }
        }
        if still_open.is_empty() {
            return proven(chains, "bpt-crown", stats);
        }
        open = still_open;
    }
    // 3. RMILP on what is left: tanh and sigmoid layers relaxed (a path refutes only once
    // validated against the formula's state obligations); not for a step with elementary
    // functions, which it cannot encode (`--method rmilp` is refused at the entry).
    if let Some(what) = sys.nonlinear_step() {
        let reason = format!(
            "bound propagation and simulated runs left the formula open, and RMILP cannot take the system: {what}"
        );
        return finish(Verdict::Unknown(Unknown::Unsupported(reason)), first_name, stats);
    }
    let mut margin = f64::INFINITY;
    let mut unknown = None;
    for (i, b) in open.iter().enumerate() {
        opts.stage(&format!("recursive MILP, open Init box {} of {}", i + 1, open.len()));
        let obligations = refuter.obligations();
        match rmilp::check(sys, b, &negated, obligations, &opts.rmilp, budget, &mut stats.rmilp)? {
            RmilpOutcome::Holds { margin: m } => margin = margin.min(m),
            RmilpOutcome::Violated(verdict) => return finish(verdict, "rmilp", stats),
            RmilpOutcome::Unknown(u) => {
                let end = ends_check(&u);
                unknown.get_or_insert(u);
                if end {
                    break;
                }
            }
        }
    }
    match unknown {
        Some(u) => finish(Verdict::Unknown(u), "rmilp", stats),
        None => finish(Verdict::Evidence { margin }, "rmilp", stats),
    }
}

enum BptOutcome {
    /// With the enclosures of steps `0..=depth`.
    Holds(Vec<bpt::FullBox>),
    /// A run from the box violating the formula: replayed exactly, or validated.
    Violated(Box<Verdict>),
    /// Every run from the box violates the formula on the enclosures, but those runs pass through
    /// values with no rational form and none was validated (the formula's violation needs a
    /// whole path, or the enclosures of the runs tried did not decide it): nothing is refuted.
    ViolatedIrrational,
    Open,
}

/// What [`BptOutcome::ViolatedIrrational`] answers.
fn violated_irrational() -> Verdict {
    Verdict::Unknown(Unknown::IrrationalModel(
        "bound propagation shows every run from a box of Init violating the formula, but the runs pass \
         through values with no rational form, and no run was validated: the LTL engine validates runs \
         through them only where one state's violation refutes the formula (atoms, X and G<=k of state \
         predicates, and conjunctions of these), and the enclosures must decide it"
            .into(),
    ))
}

/// How runs refute the formula: replayed exactly on a rational-valued system; through irrational
/// values, validated where one state's violation refutes it ([`crate::path::state_obligations`]).
struct Refuter<'a> {
    negated: &'a PathFormula,
    depth: usize,
    /// `None`: the system is rational-valued (exact replay).
    validated: Option<Option<Vec<(usize, trestle_ir::Pred)>>>,
}

impl<'a> Refuter<'a> {
    fn of(sys: &System, phi: &Ltl, negated: &'a PathFormula, depth: usize) -> Refuter<'a> {
        let exact = trestle_core::validate::is_rational_valued(sys);
        Refuter { negated, depth, validated: (!exact).then(|| crate::path::state_obligations(phi)) }
    }

    /// The state obligations runs through irrational values are validated against (`None` on a
    /// rational-valued system, whose runs replay exactly, or when the formula has none).
    fn obligations(&self) -> Option<&[(usize, trestle_ir::Pred)]> {
        self.validated.as_ref().and_then(|o| o.as_deref())
    }

    /// A refuting run among `runs` random ones from `b` ([`sample`]).
    fn search(
        &self,
        sys: &System,
        b: &RBox,
        runs: usize,
        seed: u64,
        budget: &Budget,
    ) -> Result<Option<Verdict>, LtlError> {
        match &self.validated {
            None => Ok(sample::search(sys, b, self.negated, self.depth, runs, seed, budget)?.map(Verdict::refuted)),
            Some(Some(obligations)) => sample::search_validated(sys, b, obligations, self.depth, runs, seed, budget),
            Some(None) => Ok(None),
        }
    }
}

/// Bound propagation from the states of `b` (its enclosures recorded in `stats` when given).
/// Enclosures that overflow f64 decide nothing.
fn bpt_decides(
    sys: &System,
    b: &RBox,
    holds: &PathFormula,
    refuter: &Refuter,
    domain: bpt::Domain,
    stats: Option<&mut LtlStats>,
    budget: &Budget,
) -> Result<BptOutcome, LtlError> {
    let depth = refuter.depth;
    let full = match bpt::propagate_full(sys, b, depth, domain, budget) {
        Ok(full) => full,
        Err(e) if matches!(e.unknown(), Some(Unknown::Overflow(_))) => return Ok(BptOutcome::Open),
        Err(e) => return Err(e),
    };
    let boxes: Vec<Vec<trestle_ir::interval::Interval>> = full.iter().map(|b| b.state.clone()).collect();
    if let Some(stats) = stats {
        stats.bpt_enclosures = boxes.iter().map(|s| s.iter().map(|iv| (iv.lo, iv.hi)).collect()).collect();
    }
    if bpt::may_leave_domains(sys, &boxes) {
        return Ok(BptOutcome::Open);
    }
    Ok(match holds.holds_on_boxes(&boxes) {
        Some(true) => BptOutcome::Holds(full),
        // Every path from this box violates the formula: any one of them is a refutation; through
        // irrational values, one the enclosures establish.
        Some(false) if refuter.validated.is_some() => match refuter.search(sys, b, VALIDATED_RUNS, 0, budget)? {
            Some(verdict) => BptOutcome::Violated(Box::new(verdict)),
            None => BptOutcome::ViolatedIrrational,
        },
        Some(false) => {
            let trace = any_run(sys, b, depth)?;
            if !refuter.negated.holds_exact(&trace.states)? {
                return Err(LtlError::Internal(
                    "bound propagation refuted the formula on a box, but a run from it satisfies it exactly".into(),
                ));
            }
            BptOutcome::Violated(Box::new(Verdict::refuted(trace)))
        }
        None => BptOutcome::Open,
    })
}

/// Runs tried from a box on which bound propagation shows every run violating the formula, to
/// validate one (every run is a candidate; only the enclosures' precision can fail).
const VALIDATED_RUNS: usize = 8;

/// The formula as a state predicate, when it has no temporal operator ([`Ltl::state_pred`]).
pub fn state_pred(phi: &Ltl) -> Option<trestle_ir::Pred> {
    phi.state_pred()
}

/// Why the methods of an unbounded formula left it open: what each one that ran said, and the
/// first limit that ended the check (then the answer's reason).
#[derive(Default)]
struct Open {
    notes: Vec<String>,
    limit: Option<Unknown>,
}

impl Open {
    fn note(&mut self, text: String) {
        self.notes.push(text);
    }

    /// A method's `unknown`: its reason noted, and whether it ends the check.
    fn unknown(&mut self, what: &str, u: &Unknown) -> bool {
        self.notes.push(format!("{what}: {u}"));
        let end = ends_check(u);
        if end && self.limit.is_none() {
            self.limit = Some(u.clone());
        }
        end
    }

    fn reason(self, none_ran: &str) -> Unknown {
        match self.limit {
            Some(u) => u,
            None if self.notes.is_empty() => Unknown::Incomplete(none_ran.to_string()),
            None => Unknown::Incomplete(self.notes.join("; ")),
        }
    }
}

fn check_unbounded(sys: &System, phi: &Ltl, opts: &LtlOptions, budget: &Budget) -> Result<LtlResult, LtlError> {
    let d = opts.depth as u32;
    let unsupported = || {
        LtlError::Unsupported(
            "unbounded LTL: only F p, G p and p U q with state predicates p, q are decided (bounded operators \
             anywhere)"
                .into(),
        )
    };
    let boxed = |f: Ltl| Box::new(f);
    let bounded = |f: &Ltl| {
        let mut o = opts.clone();
        if matches!(o.method, Method::Lasso | Method::Invariant) {
            o.method = Method::Auto;
        }
        check_bounded(sys, f, &o, budget)
    };
    let finish =
        |verdict: Verdict, method: &'static str, depth: usize, stats: LtlStats| -> Result<LtlResult, LtlError> {
            Ok(LtlResult { verdict, method, depth, stats })
        };
    let inits = sys.init.to_box_union(sys.state.len(), MAX_INIT_BOXES).ok_or_else(|| {
        LtlError::Unsupported("Init must be a union of boxes (a conjunction/disjunction of variable bounds)".into())
    })?;
    let mut stats = LtlStats { init_boxes: inits.len(), ..LtlStats::default() };
    let use_bounded = matches!(opts.method, Method::Auto | Method::Bpt | Method::Rmilp);
    // The lasso search encodes the step as a MILP: not for a step with elementary functions
    // (`--method lasso` is refused at the entry; `auto` leaves that half open, saying why). On
    // tanh and sigmoid layers it runs on their relaxation and can only say that no lasso exists
    // (a loop through irrational values cannot be shown to close): never a refutation.
    let nonlinear = sys.nonlinear_step().filter(|_| matches!(opts.method, Method::Auto | Method::Lasso));
    let use_lasso = matches!(opts.method, Method::Auto | Method::Lasso) && nonlinear.is_none();
    let use_invariant = matches!(opts.method, Method::Auto | Method::Invariant);
    // The lasso half: a run on which `q` never holds refutes `F q` and `p U q`.
    let lasso = |q: &trestle_ir::Pred, stats: &mut LtlStats, open: &mut Open| -> Result<Option<Trace>, LtlError> {
        opts.stage(&format!("lasso search up to length {}", opts.depth.max(1)));
        for b in &inits {
            match lasso::search(sys, b, q, opts.depth.max(1), &opts.rmilp, budget, &mut stats.rmilp)? {
                LassoOutcome::Found(t) => return Ok(Some(t)),
                LassoOutcome::NotFound(why) => open.note(format!("lasso search: {why}")),
                LassoOutcome::Stopped(u) => {
                    if open.unknown("lasso search", &u) {
                        break;
                    }
                }
            }
        }
        Ok(None)
    };
    // A bounded instance's answer that leaves the unbounded formula open, in words.
    let bounded_note = |what: &str, r: &LtlResult, open: &mut Open| match &r.verdict {
        Verdict::Unknown(u) => {
            open.unknown(&format!("{what} by {}", r.method), u);
        }
        Verdict::Refuted { .. } | Verdict::RefutedValidated { .. } => {
            open.note(format!("{what} fails on some path ({}), which refutes nothing", r.method))
        }
        Verdict::Proven { .. } | Verdict::Evidence { .. } => open.note(format!("{what} holds ({})", r.method)),
    };
    let mut open = Open::default();
    if let Some(what) = &nonlinear {
        open.note(format!("no lasso search: it encodes the step as a MILP, and {what}"));
    }
    match phi {
        Ltl::F(None, q) => {
            let q = &state_pred(q).ok_or_else(unsupported)?;
            if use_bounded {
                let r = bounded(&Ltl::F(Some(d), boxed(Ltl::Atom(q.clone()))))?;
                if r.verdict.holds() == Some(true) {
                    return Ok(r);
                }
                bounded_note(&format!("F<={d}"), &r, &mut open);
            }
            if use_lasso
                && open.limit.is_none()
                && let Some(trace) = lasso(q, &mut stats, &mut open)?
            {
                let n = trace.len();
                return finish(Verdict::refuted(trace), "lasso", n, stats);
            }
            finish(Verdict::Unknown(open.reason("no method ran")), opts.method.name(), opts.depth, stats)
        }
        Ltl::U(None, p, q) => {
            let (p, q) = (&state_pred(p).ok_or_else(unsupported)?, &state_pred(q).ok_or_else(unsupported)?);
            let (pa, qa) = (boxed(Ltl::Atom(p.clone())), boxed(Ltl::Atom(q.clone())));
            if use_bounded {
                let r = bounded(&Ltl::U(Some(d), pa.clone(), qa.clone()))?;
                if r.verdict.holds() == Some(true) {
                    return Ok(r);
                }
                bounded_note(&format!("U<={d}"), &r, &mut open);
                // A finite path with `not q` until `not p and not q` refutes `p U q`: it is the
                // violation of `not ((not q) U<=d (not p and not q))`.
                if open.limit.is_none() {
                    let not = |f: Box<Ltl>| Box::new(Ltl::Not(f));
                    let prefix = Ltl::Not(Box::new(Ltl::U(
                        Some(d),
                        not(qa.clone()),
                        Box::new(Ltl::And(vec![Ltl::Not(pa), Ltl::Not(qa)])),
                    )));
                    let r = bounded(&prefix)?;
                    match &r.verdict {
                        Verdict::Refuted { .. } | Verdict::RefutedValidated { .. } => return Ok(r),
                        Verdict::Unknown(u) => {
                            open.unknown(&format!("the search for a path leaving p before q within {d} steps"), u);
                        }
                        _ => open.note(format!("no path leaves p before q within {d} steps ({})", r.method)),
                    }
                }
            }
            if use_lasso
                && open.limit.is_none()
                && let Some(trace) = lasso(q, &mut stats, &mut open)?
            {
                let n = trace.len();
                return finish(Verdict::refuted(trace), "lasso", n, stats);
            }
            finish(Verdict::Unknown(open.reason("no method ran")), opts.method.name(), opts.depth, stats)
        }
        Ltl::G(None, p) => {
            let p = &state_pred(p).ok_or_else(unsupported)?;
            if use_invariant {
                opts.stage("inductive box search");
                if let Some(r) = always_by_invariant(sys, phi, p, &inits, opts, budget, &mut stats, &mut open)? {
                    return Ok(r);
                }
                // A union of boxes over the state and the hidden states, proven inductive by the
                // bridge engine; half of the time left, the other half for the bounded refutation.
                // Memoryless systems get synthesis from the caller (`trestle ltl` and `verify` ask
                // the bridge engine about the file's candidate first, then synthesise).
                if !sys.is_memoryless() && open.limit.is_none() {
                    let share = budget.share(0.5);
                    opts.stage("invariant synthesis over the lifted state");
                    match synthesis::always(sys, p, &inits, 16 * opts.depth.max(1), &share)? {
                        SynthesisOutcome::Holds(proof) => {
                            stats.invariant_boxes = proof.report.invariant.len();
                            stats.invariant_dims = proof.lifted.system.state.len();
                            let verdict = Verdict::Proven { certificate: always(sys, phi, proof.report.proof()) };
                            return finish(verdict, "synthesis", 0, stats);
                        }
                        SynthesisOutcome::Violated(trace) => {
                            let n = trace.len();
                            return finish(Verdict::refuted(trace), "synthesis", n, stats);
                        }
                        SynthesisOutcome::Unknown(why) => open.note(why),
                    }
                }
            }
            if use_bounded && open.limit.is_none() {
                let r = bounded(&Ltl::G(Some(d), boxed(Ltl::Atom(p.clone()))))?;
                if let Verdict::Refuted { .. } | Verdict::RefutedValidated { .. } = r.verdict {
                    return Ok(r);
                }
                bounded_note(&format!("G<={d}"), &r, &mut open);
            }
            finish(Verdict::Unknown(open.reason("no method ran")), opts.method.name(), opts.depth, stats)
        }
        _ => Err(unsupported()),
    }
}

/// `G p` by box invariants of bound propagation: an inductive box around each Init box inside
/// `p` (exact), or the maximal invariant `I_k` inside `p` with `G<=k-1 p` from Init. `None` (with
/// what was tried noted in `open`) when neither decides.
#[allow(clippy::too_many_arguments)]
fn always_by_invariant(
    sys: &System,
    phi: &Ltl,
    p: &trestle_ir::Pred,
    inits: &[RBox],
    opts: &LtlOptions,
    budget: &Budget,
    stats: &mut LtlStats,
    open: &mut Open,
) -> Result<Option<LtlResult>, LtlError> {
    let rounds = 16 * opts.depth.max(1);
    let result = |verdict: Verdict,
                  method: &'static str,
                  depth: usize,
                  stats: &LtlStats|
     -> Result<Option<LtlResult>, LtlError> {
        Ok(Some(LtlResult { verdict, method, depth, stats: stats.clone() }))
    };
    let mut boxes = Vec::new();
    for b in inits {
        match bpt::invariant(sys, b, rounds, budget)? {
            Some(h) if p.eval_interval(&trestle_ir::Env::new(&h.state[..], &[], &[])) == Some(true) => {
                if stats.bpt_enclosures.is_empty() {
                    stats.bpt_enclosures = vec![h.state.iter().map(|iv| (iv.lo, iv.hi)).collect()];
                }
                boxes.push(h);
            }
            _ => break,
        }
    }
    if boxes.len() == inits.len() {
        let certificate = synthesis::certify_boxes(sys, p, &boxes, budget);
        return result(Verdict::Proven { certificate: always(sys, phi, certificate) }, "invariant", 0, stats);
    }
    open.note(format!("no inductive box inside the predicate was found in {rounds} rounds of bound propagation"));
    // The maximal invariant: every state from step k on lies in I_k inside p; the steps before k
    // are a bounded check from Init.
    let Some((k, h)) = bpt::maximal_invariant(sys, p, rounds, budget)? else { return Ok(None) };
    stats.bpt_enclosures = vec![h.state.iter().map(|iv| (iv.lo, iv.hi)).collect()];
    // The certificate's candidate: the chains of boxes from Init up to step k - 1 and I_k. The
    // bridge engine proves it (Init inside, p around it, mapped into itself) or there is none; a
    // proof makes the verdict exact even where the steps before k were decided on MILP evidence.
    let certify = || -> Result<Option<ProofJson>, LtlError> {
        let mut candidate = Vec::new();
        for b in inits {
            candidate.extend(bpt::legal_chain(sys, b, k, budget)?);
        }
        candidate.push(h.clone());
        Ok(synthesis::certify_boxes(sys, p, &candidate, budget))
    };
    if k == 0 {
        let certificate = always(sys, phi, certify()?);
        return result(Verdict::Proven { certificate }, "invariant", 0, stats);
    }
    let mut o = opts.clone();
    o.method = Method::Auto;
    let before = check_bounded(sys, &Ltl::G(Some(k as u32 - 1), Box::new(Ltl::Atom(p.clone()))), &o, budget)?;
    match before.verdict {
        Verdict::Proven { .. } | Verdict::Evidence { .. } => {
            stats.rmilp = before.stats.rmilp.clone();
            // Without the bridge engine's proof, the verdict is what the steps before k rest on
            // (their certificate is of `G<=k-1 p`, not of `G p`: it is not carried over).
            let verdict = match (certify()?, &before.verdict) {
                (Some(proof), _) => Verdict::Proven { certificate: always(sys, phi, Some(proof)) },
                (None, Verdict::Proven { .. }) => Verdict::proven(),
                (None, v) => v.clone(),
            };
            result(verdict, "invariant", k, stats)
        }
        Verdict::Refuted { .. } | Verdict::RefutedValidated { .. } => Ok(Some(before)),
        Verdict::Unknown(u) => {
            open.unknown(&format!("the maximal invariant holds from step {k}; G<={} from Init", k - 1), &u);
            Ok(None)
        }
    }
}

/// The bridge engine's proof of `G p` as the certificate of `phi`, the formula in the system's
/// names so that `trestle certify` parses it back.
fn always(sys: &System, phi: &Ltl, proof: Option<ProofJson>) -> Option<Certificate> {
    proof.map(|p| {
        LtlCertificate::Always(ProofJson { ltl: Some(trestle_ir::print::Names::of(sys).ltl(phi)), ..p })
            .into_certificate()
    })
}

/// One run of `k` steps from a state of `start`: the lowest legal value of every variable, the
/// first extreme value of every input, the first enabled branch; built exactly.
fn any_run(sys: &System, start: &RBox, k: usize) -> Result<Trace, LtlError> {
    let unbounded = || LtlError::Unsupported("Init holds no state to start a run from".into());
    let state = (0..sys.state.len())
        .map(|i| {
            let lo = start.lo[i].clone().or_else(|| start.hi[i].clone()).unwrap_or_default();
            let hi = start.hi[i].clone().unwrap_or_else(|| lo.clone());
            space::legal_range(sys, i, &lo, &hi).map(|(l, _)| l).ok_or_else(unbounded)
        })
        .collect::<Result<Vec<Rational>, _>>()?;
    let nondet: Vec<Rational> = sys.nondet.iter().map(|v| trestle_ir::nondet::extreme_values(v).remove(0)).collect();
    let mut choices: Vec<(Vec<Rational>, usize)> = Vec::with_capacity(k);
    let semantics = |e: String| LtlError::Semantics(format!("a run from Init stops: {e}"));
    for _ in 0..k {
        let prefix = Trace::simulate(sys, state.clone(), choices.clone()).map_err(|e| semantics(e.to_string()))?;
        let mut memory = prefix.hidden.last().cloned().unwrap_or_default();
        let actions =
            sim::controller_actions(sys, prefix.last(), &nondet, &mut memory).map_err(|e| semantics(e.to_string()))?;
        let enabled =
            sim::enabled_branches(sys, prefix.last(), &actions, &nondet).map_err(|e| semantics(e.to_string()))?;
        let branch = *enabled.first().ok_or_else(|| semantics("no branch is enabled (a deadlock)".into()))?;
        choices.push((nondet.clone(), branch));
    }
    let trace = Trace::simulate(sys, state, choices).map_err(|e| semantics(e.to_string()))?;
    trace.replay(sys).map_err(|e| LtlError::Internal(format!("a simulated run does not replay: {e}")))?;
    Ok(trace)
}
