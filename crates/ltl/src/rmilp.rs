//! RMILP: the closed loop unrolled over the depth of the formula in one MILP (a fresh copy of
//! every network per step, linked through the state and the recurrent hidden states:
//! `trestle_milp::unroll`, whose big-M constants come from bounds propagated step by step, each
//! step's narrowed by the LP relaxation of the steps before it, and whose ReLUs of decided sign
//! are fixed; by default the encodings with and without that narrowing race on two threads,
//! [`race`]), and the NEGATED formula asserted over that one path: its
//! disjunctions by binaries, its atoms relaxed by one slack `s` in `[0, MAX_SLACK]` that the MILP
//! minimises. The notes' correction: or/not do not decompose into separate checks on
//! non-deterministic systems; the whole negation is one model.
//!
//! - The minimum of `s` above the threshold (or no solution at all) says no path violates the
//!   formula even with every atom relaxed by that much: the formula holds, as floating-point
//!   evidence with that margin (HiGHS's dual bound, solved without presolve: see
//!   [`solve_options`]).
//! - A solution with `s` at 0 is a candidate path: rebuilt exactly from its start state and
//!   choices (`Trace::simulate`), it is reported only when the negation holds on it exactly.
//!   A candidate that does not replay is searched again with strict atoms holding by a gap and
//!   argmax choices winning by a margin (solutions no tolerance can tip).
//!
//! # Tanh and sigmoid controllers
//! Their neurons have no exact encoding: the unrolling relaxes each one soundly
//! (`trestle_milp::smooth`: CROWN's lines and further tangent and chord lines, outward-rounded),
//! so the model still contains every real path and "holds" keeps its meaning (evidence with a
//! margin). A solution is only a candidate: its outputs may sit anywhere between the lines, and
//! no run through irrational values replays exactly. It becomes a violation only as a validated
//! refutation ([`check`]'s `obligations`: the formula as state predicates at steps,
//! `crate::path::state_obligations`; the candidate's exact start and choices, MPFR enclosures,
//! the state at one step strictly outside one predicate, `trestle_core::refutation`). When it does
//! not validate, the neurons the candidate used the relaxation's slack on (output farther than
//! [`LOOSE_GAP`] from the activation of its input) are cut into more pieces with binaries and the
//! model is solved again, up to [`MAX_REFINEMENTS`] times; then the answer is unknown, with why.

use crate::error::LtlError;
use crate::path::PathFormula;
use good_lp::{Expression, Variable};
use std::collections::BTreeMap;
use std::sync::Arc;
use trestle_core::{Budget, Trace, Unknown, Verdict};
use trestle_ir::Env;
use trestle_ir::num::rational_from_f64;
use trestle_ir::{Pred, RBox, System};
use trestle_milp::model::MilpModel;
use trestle_milp::replay::candidates;
use trestle_milp::smooth::MAX_PIECES_PER_NEURON;
use trestle_milp::{
    BoundOptions, Bounded, HighsValue, Lit, Refinement, Sense, SmoothEncoding, SolveOptions, SolveStatus, StepOptions,
    Strictness, UnrollOptions, VarMap, assert_cmp_relaxed, forbid, loose_neurons, unroll,
};

/// The slack's cap: a margin reported as `MAX_SLACK` means "at least".
pub const MAX_SLACK: f64 = 1.0;

/// Sub-boxes each step's network bounds are taken over in adaptive mode. The bounding is repeated
/// for every network at every step over its inputs and hidden states; 16 pieces cost about a sixth
/// of the general default's 256 (Figure 1, t = 1..10: 0.007 s in all against 0.040 s; PI servo
/// G<=20: 0.003 s against 0.019 s) and fixed the same ReLUs on every shipped benchmark.
const BOUND_PIECES: usize = 16;

/// The default [`RmilpOptions::margin_cutoff`] (2^-10).
pub const MARGIN_CUTOFF: f64 = 1.0 / 1024.0;

#[derive(Clone, Debug, PartialEq)]
pub struct RmilpOptions {
    /// Evidence needs the slack's bound above `tolerance + feasibility_tolerance`.
    pub tolerance: f64,
    /// HiGHS's feasibility tolerances.
    pub feasibility_tolerance: f64,
    /// The gap by which strict atoms and argmax choices must hold in the second search.
    pub gap: f64,
    /// Adaptive splitting (the paper's name): CROWN bounds through time as the big-M constants
    /// and every ReLU whose sign they decide fixed, without a binary. Off: interval bounds and a
    /// binary for every ReLU, the paper's RMILP-only baseline, kept to measure the difference.
    pub adaptive: bool,
    /// With `adaptive`: whether each step's values are bounded by the LP relaxation of the steps
    /// before it ([`Tightening`]).
    pub tightening: Tightening,
    /// Stop proving at this margin: HiGHS prunes every node whose bound on the slack is above it
    /// (its `objective_bound`), so "holds" needs no optimality proof, only that no path violates
    /// the formula with the atoms relaxed by less than this; the margin reported is then at
    /// least this. `None`: the exact minimum of the slack (slower).
    pub margin_cutoff: Option<f64>,
    /// HiGHS threads per MILP (`None`: HiGHS's default); a [`Tightening::Race`] gives each of
    /// its two searches half of them (at least one).
    pub threads: Option<usize>,
}

/// Whether adaptive splitting bounds the values each step reads (the successor state and every
/// hidden state) by the LP relaxation of the unrolling so far (`trestle_milp::unroll::tighten`,
/// bounds from HiGHS's duals with outward rounding), so later steps' bounds keep the links
/// between steps that boxes propagated one step at a time lose.
///
/// Neither encoding is always faster, and nothing cheap predicts which: tightening takes Simple
/// Spread from a 0.02-wide start box to horizon 10 in 1.4 s against 9.4 s (274 binaries against
/// 380) and the PI servo with a true integral to horizon 10 in 0.022 s against 0.16 s, but from
/// Spread's whole start box at horizon 4 HiGHS has needed 94 s to 511 s for the tightened model
/// against 62-69 s for the other, with the hidden boxes narrowed by only 0.1-17% per step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tightening {
    /// Bounds propagated one step at a time only.
    Off,
    /// Every step's bounds narrowed by the LP relaxation.
    On,
    /// Both encodings at once on two threads ([`race`]): the first decisive answer is the answer
    /// and cancels the other search.
    #[default]
    Race,
}
impl Default for RmilpOptions {
    fn default() -> RmilpOptions {
        RmilpOptions {
            tolerance: 1e-6,
            feasibility_tolerance: 1e-6,
            gap: 1e-5,
            adaptive: true,
            tightening: Tightening::Race,
            margin_cutoff: Some(MARGIN_CUTOFF),
            threads: None,
        }
    }
}

/// What one unrolled model says.
#[derive(Clone, Debug, PartialEq)]
pub enum RmilpOutcome {
    /// No path from the start region violates the formula: floating-point evidence with this
    /// margin (`MAX_SLACK` meaning at least that).
    Holds { margin: f64 },
    /// A path violating the formula: replayed exactly (`Verdict::Refuted`), or, through tanh or
    /// sigmoid, a validated run (`Verdict::RefutedValidated`).
    Violated(Verdict),
    /// Not decided, and why (the budget ran out, a MILP had no margin, ...).
    Unknown(Unknown),
}

/// Counters of a check: of the MILPs behind its answer (a raced search that lost is not counted).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RmilpStats {
    pub milps: usize,
    pub binaries: usize,
    pub variables: usize,
    /// Races ([`Tightening::Race`]) decided by the tightened encoding, resp. the other.
    pub tightened_wins: usize,
    pub plain_wins: usize,
    /// Tanh and sigmoid neurons relaxed in those MILPs, and how many times a candidate that did
    /// not validate had its loose neurons refined.
    pub relaxed_neurons: usize,
    pub refinements: usize,
}

impl RmilpStats {
    fn add(&mut self, other: &RmilpStats) {
        self.milps += other.milps;
        self.binaries += other.binaries;
        self.variables += other.variables;
        self.tightened_wins += other.tightened_wins;
        self.plain_wins += other.plain_wins;
        self.relaxed_neurons += other.relaxed_neurons;
        self.refinements += other.refinements;
    }
}

/// Decides the formula whose negation is `negated` on every path from the states of `start`
/// within `budget` (its end, a bound overflowing f64 or an unrolling too large to build are
/// `Unknown` with that reason). On a system with tanh or sigmoid networks the neurons are relaxed
/// (module docs) and a candidate path is reported only as a validated violation of one of
/// `obligations` (the formula as state predicates at steps; `None` when it is not one, and then
/// no path through those networks is reported).
pub fn check(
    sys: &System,
    start: &RBox,
    negated: &PathFormula,
    obligations: Option<&[(usize, Pred)]>,
    opts: &RmilpOptions,
    budget: &Budget,
    stats: &mut RmilpStats,
) -> Result<RmilpOutcome, LtlError> {
    let decisive = |o: &RmilpOutcome| matches!(o, RmilpOutcome::Holds { .. } | RmilpOutcome::Violated(_));
    let relaxed = relaxes(sys);
    let outcome = race(opts, budget, stats, decisive, |o, b, s| {
        if relaxed {
            check_relaxed(sys, start, negated, obligations, o, b, s)
        } else {
            check_encoded(sys, start, negated, o, b, s)
        }
    });
    match outcome {
        Err(e) => e.unknown().map(RmilpOutcome::Unknown).ok_or(e),
        ok => ok,
    }
}

/// Stack of a racing search's thread (the main thread's size: the encodings recurse over
/// formulas and networks).
const RACE_STACK: usize = 8 << 20;

/// Runs `search` with `opts`, or, under adaptive splitting with [`Tightening::Race`], twice at
/// once on two threads, with the tightened encoding and with the other: the first answer that
/// is `decisive` is the answer, and cancels the race's budget (a child of `budget`: HiGHS stops
/// at its next limit check or simplex iteration, the unrolling between its LPs). When neither
/// answer is decisive the tightened search's answer is returned (or the other's, if that one
/// failed). Both searches share the deadline; a decisive answer is sound whichever search gives
/// it, so the race changes how long a check takes, never what a verdict means.
pub(crate) fn race<T: Send>(
    opts: &RmilpOptions,
    budget: &Budget,
    stats: &mut RmilpStats,
    decisive: impl Fn(&T) -> bool,
    search: impl Fn(&RmilpOptions, &Budget, &mut RmilpStats) -> Result<T, LtlError> + Sync,
) -> Result<T, LtlError> {
    if !opts.adaptive || opts.tightening != Tightening::Race {
        return search(opts, budget, stats);
    }
    let race = budget.child();
    let (tx, rx) = std::sync::mpsc::channel();
    let mut results = std::thread::scope(|scope| {
        for tightening in [Tightening::On, Tightening::Off] {
            let o = RmilpOptions { tightening, threads: opts.threads.map(|t| (t / 2).max(1)), ..opts.clone() };
            let (tx, search, race) = (tx.clone(), &search, race.clone());
            let run = move || {
                let mut s = RmilpStats::default();
                let r = search(&o, &race, &mut s);
                // The receiver outlives the scope: sending cannot fail.
                let _ = tx.send((tightening, r, s));
            };
            std::thread::Builder::new()
                .name(format!("rmilp-{tightening:?}"))
                .stack_size(RACE_STACK)
                .spawn_scoped(scope, run)
                .map_err(|e| LtlError::Internal(format!("cannot start a racing search: {e}")))?;
        }
        drop(tx);
        let mut results = Vec::with_capacity(2);
        for (tightening, r, s) in rx.iter() {
            let won = r.as_ref().is_ok_and(&decisive);
            results.push((tightening, r, s));
            if won {
                race.cancel();
                break;
            }
        }
        Ok::<_, LtlError>(results)
    })?;
    let decided = results.last().is_some_and(|(_, r, _)| r.as_ref().is_ok_and(&decisive));
    if !decided {
        // Neither decided: the tightened search's answer unless it failed.
        results.sort_by_key(|(t, r, _)| (r.is_err(), *t != Tightening::On));
    }
    let (tightening, r, mut s) = if decided { results.pop() } else { results.into_iter().next() }
        .ok_or_else(|| LtlError::Internal("no racing search answered".into()))?;
    if decided {
        match tightening {
            Tightening::On => s.tightened_wins += 1,
            _ => s.plain_wins += 1,
        }
    }
    stats.add(&s);
    r
}

/// [`check`] with one encoding.
fn check_encoded(
    sys: &System,
    start: &RBox,
    negated: &PathFormula,
    opts: &RmilpOptions,
    budget: &Budget,
    stats: &mut RmilpStats,
) -> Result<RmilpOutcome, LtlError> {
    let threshold = opts.tolerance + opts.feasibility_tolerance;
    let mut first_failure = None;
    for search in [Search::Closure, Search::Strict] {
        let Some((slack, unrolled)) = build(sys, start, negated, search, opts, &SmoothEncoding::Refuse, budget)? else {
            return Ok(RmilpOutcome::Unknown(Unknown::Incomplete(
                "the unrolling has no transition (the start region holds no state, or a step deadlocks)".into(),
            )));
        };
        stats.milps += 1;
        stats.binaries += unrolled.model.num_binaries();
        stats.variables += unrolled.model.num_variables();
        // The closure search proves (up to the cutoff); the strict one only looks for paths.
        let cutoff = match search {
            Search::Closure => opts.margin_cutoff,
            Search::Strict => Some(2.0 * threshold),
        };
        budget.check()?;
        let solve = solve_options(opts, budget, cutoff);
        let out = unrolled.model.solve(Sense::Minimise, &Expression::from(slack), &solve)?;
        if let Some(why) = &out.out_of_range {
            return Ok(RmilpOutcome::Unknown(Unknown::Solver(format!(
                "the model is out of HiGHS's numeric range: {why}"
            ))));
        }
        match (&out.status, search) {
            (SolveStatus::Infeasible, Search::Closure) => {
                let margin = opts.margin_cutoff.map_or(MAX_SLACK, |c| c.min(MAX_SLACK));
                return Ok(RmilpOutcome::Holds { margin });
            }
            (SolveStatus::Limit(limit), _) => return Ok(RmilpOutcome::Unknown(limit.unknown())),
            (SolveStatus::Other(why), _) => {
                return Ok(RmilpOutcome::Unknown(Unknown::Solver(format!("HiGHS's model status {why}"))));
            }
            _ => {}
        }
        if search == Search::Closure
            && let Some(b) = out.bound
            && b > threshold
        {
            return Ok(RmilpOutcome::Holds { margin: b.min(MAX_SLACK) });
        }
        let Some(values) = out.values.as_ref().filter(|_| out.primal.is_some_and(|p| p <= threshold)) else {
            continue;
        };
        for trace in initial_runs(sys, start, &unrolled, values, &mut first_failure) {
            if negated.holds_exact(&trace.states)? {
                return Ok(RmilpOutcome::Violated(Verdict::refuted(trace)));
            }
            first_failure.get_or_insert_with(|| "the solver's path satisfies the formula exactly".into());
        }
    }
    Ok(RmilpOutcome::Unknown(Unknown::Incomplete(format!(
        "no path violating the formula was confirmed exactly and the relaxation's bound is not above {threshold:.1e}{}",
        first_failure.map(|f| format!(" ({f})")).unwrap_or_default()
    ))))
}

/// Whether the MILPs of `sys` relax tanh or sigmoid neurons (its networks have some).
pub(crate) fn relaxes(sys: &System) -> bool {
    sys.nonlinear_network().is_some()
}

/// Refinement rounds of [`check_relaxed`] after the first model.
pub const MAX_REFINEMENTS: usize = 3;

/// A relaxed neuron whose output at a candidate is farther than this from the activation of its
/// input is one the candidate used the relaxation's slack on.
pub const LOOSE_GAP: f64 = 1e-6;

/// [`check`] with one encoding on a system whose tanh and sigmoid neurons are relaxed (module
/// docs): the closure model only (strict atoms as their closures: a superset, evidence when
/// infeasible), each candidate validated, loose neurons refined between rounds.
fn check_relaxed(
    sys: &System,
    start: &RBox,
    negated: &PathFormula,
    obligations: Option<&[(usize, Pred)]>,
    opts: &RmilpOptions,
    budget: &Budget,
    stats: &mut RmilpStats,
) -> Result<RmilpOutcome, LtlError> {
    let threshold = opts.tolerance + opts.feasibility_tolerance;
    let mut refinement = Refinement::default();
    let mut why = String::new();
    for round in 0..=MAX_REFINEMENTS {
        let smooth = SmoothEncoding::Relax(refinement.clone());
        let Some((slack, unrolled)) = build(sys, start, negated, Search::Closure, opts, &smooth, budget)? else {
            return Ok(RmilpOutcome::Unknown(Unknown::Incomplete(
                "the unrolling has no transition (the start region holds no state, or a step deadlocks)".into(),
            )));
        };
        stats.milps += 1;
        stats.binaries += unrolled.model.num_binaries();
        stats.variables += unrolled.model.num_variables();
        stats.relaxed_neurons += unrolled.model.relaxed_neurons().len();
        budget.check()?;
        let solve = solve_options(opts, budget, opts.margin_cutoff);
        let out = unrolled.model.solve(Sense::Minimise, &Expression::from(slack), &solve)?;
        if let Some(why) = &out.out_of_range {
            return Ok(RmilpOutcome::Unknown(Unknown::Solver(format!(
                "the model is out of HiGHS's numeric range: {why}"
            ))));
        }
        match &out.status {
            SolveStatus::Infeasible => {
                return Ok(RmilpOutcome::Holds { margin: opts.margin_cutoff.map_or(MAX_SLACK, |c| c.min(MAX_SLACK)) });
            }
            SolveStatus::Limit(limit) => return Ok(RmilpOutcome::Unknown(limit.unknown())),
            SolveStatus::Other(why) => {
                return Ok(RmilpOutcome::Unknown(Unknown::Solver(format!("HiGHS's model status {why}"))));
            }
            _ => {}
        }
        if let Some(b) = out.bound
            && b > threshold
        {
            return Ok(RmilpOutcome::Holds { margin: b.min(MAX_SLACK) });
        }
        let Some(values) = out.values.as_ref().filter(|_| out.primal.is_some_and(|p| p <= threshold)) else {
            why = format!("the relaxation's bound on the atoms' violation is not above {threshold:.1e}");
            break;
        };
        match validate(sys, start, &unrolled, values, obligations, budget)? {
            Ok(verdict) => return Ok(RmilpOutcome::Violated(verdict)),
            Err(reason) => why = format!("the relaxation's path of round {} did not validate: {reason}", round + 1),
        }
        // The closure's path may sit on the boundary of a strict atom, where the real run does
        // not cross it: a path whose atoms hold by the gap, with the same relaxation.
        if obligations.is_some()
            && let Some((slack, strict)) = build(sys, start, negated, Search::Strict, opts, &smooth, budget)?
        {
            stats.milps += 1;
            let out = strict.model.solve(
                Sense::Minimise,
                &Expression::from(slack),
                &solve_options(opts, budget, Some(2.0 * threshold)),
            )?;
            if let Some(values) = out.values.as_ref().filter(|_| out.primal.is_some_and(|p| p <= threshold))
                && let Ok(verdict) = validate(sys, start, &strict, values, obligations, budget)?
            {
                return Ok(RmilpOutcome::Violated(verdict));
            }
        }
        let loose = loose_neurons(&unrolled.model, values, LOOSE_GAP);
        if loose.is_empty() {
            why.push_str(&format!(
                "; its tanh and sigmoid outputs are within {LOOSE_GAP:.0e} of the activations, so no refinement of                  the relaxation removes it"
            ));
            break;
        }
        if round == MAX_REFINEMENTS {
            why.push_str(&format!("; {} neurons still loose after {MAX_REFINEMENTS} refinements", loose.len()));
            break;
        }
        stats.refinements += 1;
        let mut refined: BTreeMap<usize, usize> = (*refinement.refined).clone();
        for i in loose {
            let pieces = refined.get(&i).copied().unwrap_or(1);
            refined.insert(i, (4 * pieces).min(MAX_PIECES_PER_NEURON));
        }
        refinement = Refinement { pieces: 1, refined: Arc::new(refined) };
    }
    Ok(RmilpOutcome::Unknown(Unknown::Incomplete(format!(
        "tanh and sigmoid neurons relaxed soundly: no path violating the formula was validated and the relaxation          does not rule one out ({why})"
    ))))
}

/// Most start points and obligations [`validate`] tries per candidate (each validation encloses
/// the run at up to three MPFR precisions).
const MAX_VALIDATED_STARTS: usize = 3;
const MAX_VALIDATED_OBLIGATIONS: usize = 4;

/// A candidate of a relaxed model as a validated refutation: from its start (the solver's point
/// and nearby ones in the start box, those satisfying Init) under its inputs and branches, the
/// state at step `t` enclosed strictly outside `p` for one obligation `(t, p)` (those the
/// candidate's own f64 states violate first). `Err` says why none was established.
fn validate(
    sys: &System,
    start: &RBox,
    unrolled: &trestle_milp::Unrolled,
    values: &[f64],
    obligations: Option<&[(usize, Pred)]>,
    budget: &Budget,
) -> Result<Result<Verdict, String>, LtlError> {
    let Some(obligations) = obligations else {
        return Ok(Err("the formula's violation needs a whole path (F, U, R or a choice over time), which no                        validated run through tanh or sigmoid establishes: only one state strictly outside one                        predicate is"
            .into()));
    };
    let run = unrolled.run_at(sys, values);
    let choices: Vec<(Vec<trestle_ir::Rational>, usize)> =
        run.nondet.iter().cloned().zip(run.branches.iter().copied()).collect();
    let violated_f64 = |t: usize, p: &Pred| {
        let state: Vec<_> =
            run.states[t].iter().map(|&x| rational_from_f64(if x.is_finite() { x } else { 0.0 })).collect();
        matches!(p.eval_exact(&Env::new(&state, &[], &[])), Ok(false))
    };
    let mut order: Vec<&(usize, Pred)> = obligations.iter().filter(|(t, _)| *t < run.states.len()).collect();
    order.sort_by_key(|(t, p)| (!violated_f64(*t, p), *t));
    let mut why = None;
    let starts = candidates(sys, start, &run.start)
        .into_iter()
        .filter(|s| sys.init.eval_exact(&Env::new(s, &[], &[])).unwrap_or(false))
        .take(MAX_VALIDATED_STARTS);
    for point in starts {
        for (t, p) in order.iter().take(MAX_VALIDATED_OBLIGATIONS) {
            budget.check()?;
            match trestle_core::refutation(sys, &point, &choices[..*t], p) {
                Ok(verdict) => return Ok(Ok(verdict)),
                Err(e) => {
                    why.get_or_insert_with(|| format!("step {t}: {e}"));
                }
            }
        }
    }
    Ok(Err(why.unwrap_or_else(|| "its start state is not initial".into())))
}

/// The solver's path rebuilt exactly from exact start states: the solver's start and nearby
/// points clamped into the start box (a solver's start may lie outside it by its tolerance, and a
/// run from outside Init refutes nothing), those that satisfy Init, each run with the solver's
/// inputs and branches through `Trace::simulate`. Why a start was dropped goes to `failure`.
pub(crate) fn initial_runs(
    sys: &System,
    start: &RBox,
    unrolled: &trestle_milp::Unrolled,
    values: &[f64],
    failure: &mut Option<String>,
) -> Vec<Trace> {
    let run = unrolled.run_at(sys, values);
    let choices: Vec<(Vec<trestle_ir::Rational>, usize)> =
        run.nondet.iter().cloned().zip(run.branches.iter().copied()).collect();
    let mut runs = Vec::new();
    for point in candidates(sys, start, &run.start) {
        if !sys.init.eval_exact(&Env::new(&point, &[], &[])).unwrap_or(false) {
            failure.get_or_insert_with(|| "the solver's start state is not initial".into());
            continue;
        }
        match Trace::simulate(sys, point, choices.iter().cloned()) {
            Ok(trace) => runs.push(trace),
            Err(e) => {
                failure.get_or_insert_with(|| format!("the solver's path does not replay: {e}"));
            }
        }
    }
    runs
}

/// HiGHS's options for a solve within `budget`, pruning nodes whose bound on the objective is
/// above `cutoff`, without presolve.
///
/// These searches end infeasible whenever the formula holds (or no lasso of that length exists),
/// and an infeasibility found with HiGHS's presolve counts only once a second solve without it
/// agrees (`MilpModel::solve`): solving without presolve at once skips the first solve (Simple
/// Spread G<=3: 13.2 s -> 7.9 s; PI servo G<=20: 0.035 s -> 0.020 s; the PI lasso: 0.166 s ->
/// 0.039 s).
pub(crate) fn solve_options(opts: &RmilpOptions, budget: &Budget, cutoff: Option<f64>) -> SolveOptions {
    let mut highs_options = vec![("presolve".to_string(), HighsValue::Text("off".into()))];
    highs_options.extend(cutoff.map(|c| ("objective_bound".to_string(), HighsValue::Float(c))));
    SolveOptions {
        feasibility_tolerance: opts.feasibility_tolerance,
        highs_options,
        threads: opts.threads.map(|t| i32::try_from(t).unwrap_or(i32::MAX)),
        ..SolveOptions::default()
    }
    .within(budget)
}

/// How an unrolling is encoded (see [`RmilpOptions::adaptive`] and [`RmilpOptions::tightening`];
/// a search run under [`race`] sees `On` or `Off`, and `Race` outside one tightens).
/// `smooth`: how tanh and sigmoid neurons are encoded.
pub(crate) fn unroll_options(
    strictness: Strictness,
    opts: &RmilpOptions,
    smooth: &SmoothEncoding,
    budget: &Budget,
) -> UnrollOptions {
    let bounds = if opts.adaptive {
        BoundOptions { pieces: BOUND_PIECES, smooth: smooth.clone(), ..BoundOptions::default() }
    } else {
        BoundOptions {
            method: trestle_bounds::Method::Ibp,
            pieces: 1,
            fix_stable: false,
            smooth: smooth.clone(),
            ..BoundOptions::default()
        }
    };
    UnrollOptions {
        step: StepOptions { bounds, strictness },
        nondet: Vec::new(),
        tighten: opts.adaptive && opts.tightening != Tightening::Off,
        budget: budget.clone(),
    }
}

/// The first model is the closure (sound for evidence); the second keeps only paths whose strict
/// atoms and argmax choices hold by a gap (for finding one that replays).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Search {
    Closure,
    Strict,
}

type Built = (Variable, trestle_milp::Unrolled);

fn build(
    sys: &System,
    start: &RBox,
    negated: &PathFormula,
    search: Search,
    opts: &RmilpOptions,
    smooth: &SmoothEncoding,
    budget: &Budget,
) -> Result<Option<Built>, LtlError> {
    let strictness = match search {
        Search::Closure => Strictness::Closure,
        Search::Strict => Strictness::Margin(opts.gap),
    };
    let unroll_opts = unroll_options(strictness, opts, smooth, budget);
    let Some(mut unrolled) = unroll(sys, start, negated.depth(), &unroll_opts)? else { return Ok(None) };
    let slack = unrolled.model.continuous(0.0, MAX_SLACK, "slack")?;
    let gap = if search == Search::Strict { opts.gap } else { 0.0 };
    let mut enc = Encoder { model: &mut unrolled.model, states: &unrolled.states, slack, gap };
    enc.assert(negated, &Lit::True)?;
    Ok(Some((slack, unrolled)))
}

pub(crate) struct Encoder<'a> {
    pub model: &'a mut MilpModel,
    pub states: &'a [Vec<Bounded>],
    pub slack: Variable,
    pub gap: f64,
}

impl Encoder<'_> {
    /// `lit => f`.
    pub fn assert(&mut self, f: &PathFormula, lit: &Lit) -> Result<(), LtlError> {
        match f {
            PathFormula::True => Ok(()),
            PathFormula::False => {
                forbid(self.model, lit, "the negated formula is false");
                Ok(())
            }
            PathFormula::Atom { pred, t } => self.atom(pred, *t, lit),
            PathFormula::And(xs) => xs.iter().try_for_each(|x| self.assert(x, lit)),
            PathFormula::Or(xs) => {
                // One binary per disjunct; at least one is chosen when `lit` holds.
                let picks: Vec<Variable> = xs.iter().map(|_| self.model.binary()).collect();
                let sum: Expression = picks.iter().map(|&b| Expression::from(b)).sum();
                match lit {
                    Lit::False => return Ok(()),
                    Lit::True => self.model.add(sum.geq(1.0)),
                    Lit::Expr(l) => self.model.add((sum - l.clone()).geq(0.0)),
                }
                for (x, b) in xs.iter().zip(picks) {
                    self.assert(x, &Lit::Expr(Expression::from(b)))?;
                }
                Ok(())
            }
        }
    }

    /// `lit => atom at step t`, relaxed by the slack: `lit => violation <= s`.
    fn atom(&mut self, p: &Pred, t: usize, lit: &Lit) -> Result<(), LtlError> {
        let Pred::Cmp(a, op, b) = p else {
            return Err(LtlError::Unsupported(format!("atom {p:?} is not a comparison")));
        };
        let vars = VarMap { state: self.states[t].clone(), action: Vec::new(), nondet: Vec::new() };
        // Forbidden only past the slack's cap: no path satisfies such a literal even relaxed,
        // so excluding it changes neither the real paths nor the (capped) margin.
        assert_cmp_relaxed(self.model, (a, *op, b), lit, &vars, self.slack, self.gap, MAX_SLACK)?;
        Ok(())
    }
}
