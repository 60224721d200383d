//! The dispatcher: for a formula, the methods able to decide it, cheapest first, and which one
//! decided at which depth.

use crate::bpt;
use crate::certificate::BoundedJson;
use crate::error::LtlError;
use crate::lasso::{self, LassoOutcome};
use crate::path::PathFormula;
use crate::rmilp::{self, RmilpOptions, RmilpOutcome, RmilpStats};
use crate::sample;
use crate::sweep::{Sweep, sweep};
use crate::synthesis::{self, SynthesisOutcome};
use std::time::{Duration, Instant};
use trestle_bridge::certificate::ProofJson;
use trestle_core::Trace;
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

#[derive(Clone, Debug, PartialEq)]
pub struct LtlOptions {
    pub method: Method,
    /// For unbounded formulas: the horizon of the bounded checks that prove `F` / `U` and refute
    /// `G`, and the longest lasso searched (the invariant search iterates up to 16 times this).
    pub depth: usize,
    /// Wall-clock limit of the whole check.
    pub timeout: Option<Duration>,
    pub rmilp: RmilpOptions,
    /// The domain of `Method::Bpt` (`Method::Auto` tries intervals, then CROWN).
    pub bpt: bpt::Domain,
}

impl Default for LtlOptions {
    fn default() -> LtlOptions {
        LtlOptions {
            method: Method::Auto,
            depth: 10,
            timeout: None,
            rmilp: RmilpOptions::default(),
            bpt: bpt::Domain::Interval,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum LtlVerdict {
    /// The formula holds on every path from Init: `exact` when bound propagation decided it
    /// (outward-rounded enclosures), otherwise floating-point evidence of the MILP with `margin`.
    True {
        exact: bool,
        margin: Option<f64>,
    },
    /// A path from Init violating the formula, replayed exactly.
    False {
        trace: Trace,
    },
    Unknown {
        reason: String,
    },
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

#[derive(Clone, Debug, PartialEq)]
pub struct LtlResult {
    pub verdict: LtlVerdict,
    /// The method that decided (`bpt`, `bpt-crown`, `simulation`, `rmilp`, `lasso`, `invariant`), or the last
    /// one tried.
    pub method: &'static str,
    /// Steps of the unrolled path (the formula's depth).
    pub depth: usize,
    pub stats: LtlStats,
    /// A certificate of an exact "true" that `trestle certify` re-checks, when the method that
    /// decided writes one.
    pub certificate: Option<LtlCertificate>,
}

/// A certificate of a formula's truth.
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

/// Most boxes Init may be cut into.
const MAX_INIT_BOXES: usize = 1024;

/// Checks an LTL formula on every path from Init: bounded formulas by BPT and RMILP; the
/// unbounded shapes `F p`, `G p` and `p U q` (p, q state predicates) by what Table 1 of the notes
/// allows: `F` / `U` proven by a bounded instance (`F<=d`, `U<=d`) and refuted by a lasso (or, for
/// `U`, a finite path reaching `not p and not q` first); `G` proven by an invariant and refuted
/// by a finite path (`G<=d` failing).
pub fn check_ltl(sys: &System, phi: &Ltl, opts: &LtlOptions) -> Result<LtlResult, LtlError> {
    // Runs are rebuilt and replayed exactly, RMILP and lassos encode the networks exactly:
    // piecewise-linear activations only.
    sys.check_activations(
        "the LTL engine",
        "identity, ReLU, leaky ReLU and clip layers: tanh and sigmoid have no exact value to replay a run with",
        trestle_ir::Activation::is_piecewise_linear,
    )
    .map_err(LtlError::Unsupported)?;
    let result = if !phi.is_bounded() {
        check_unbounded(sys, phi, opts)?
    } else if matches!(opts.method, Method::Lasso | Method::Invariant) {
        return Err(LtlError::Unsupported(format!(
            "--method {} decides unbounded F, G and U; this formula is bounded (use bpt or rmilp)",
            opts.method.name()
        )));
    } else {
        check_bounded(sys, phi, opts)?
    };
    without_stops(sys, phi, result)
}

/// Most states [`sweep`] expands.
const MAX_SWEEP_STATES: usize = 1 << 16;

/// Runs never end ([`crate::sweep`]): a "true" on a system whose text lets a run stop stands once
/// the states runs reach are expanded exactly without a stop (those before the verdict's depth;
/// all of them for `G p`). A stop is the system's error; states that cannot be expanded leave
/// the verdict unknown.
fn without_stops(sys: &System, phi: &Ltl, r: LtlResult) -> Result<LtlResult, LtlError> {
    let LtlVerdict::True { .. } = r.verdict else { return Ok(r) };
    let Err(stop) = trestle_ir::stops::stop_free(sys) else { return Ok(r) };
    let inits = sys.init.to_box_union(sys.state.len(), MAX_INIT_BOXES).unwrap_or_default();
    let depth = match phi {
        Ltl::G(None, _) => None,
        _ => Some(r.depth),
    };
    match sweep(sys, &inits, depth, MAX_SWEEP_STATES) {
        Sweep::NoStop => Ok(r),
        Sweep::Stop(e) => Err(LtlError::Semantics(format!("a run from Init stops: {e}"))),
        Sweep::Unswept(why) => Ok(LtlResult {
            verdict: LtlVerdict::Unknown {
                reason: format!(
                    "the system's runs may stop ({stop}), and the states runs reach were not expanded to rule it \
                     out ({why})"
                ),
            },
            certificate: None,
            ..r
        }),
    }
}

fn check_bounded(sys: &System, phi: &Ltl, opts: &LtlOptions) -> Result<LtlResult, LtlError> {
    let start = Instant::now();
    let holds = PathFormula::of(phi, false)?;
    let negated = PathFormula::of(phi, true)?;
    let depth = negated.depth().max(holds.depth());
    let inits = sys.init.to_box_union(sys.state.len(), MAX_INIT_BOXES).ok_or_else(|| {
        LtlError::Unsupported("Init must be a union of boxes (a conjunction/disjunction of variable bounds)".into())
    })?;
    let mut stats = LtlStats { init_boxes: inits.len(), ..LtlStats::default() };
    let finish = |verdict: LtlVerdict, method: &'static str, mut stats: LtlStats| {
        stats.seconds = start.elapsed().as_secs_f64();
        Ok(LtlResult { verdict, method, depth, stats, certificate: None })
    };
    // 1. Bound propagation on every Init box: what it decides is exact. `Auto` tries intervals
    // here and CROWN after the (cheaper) simulated runs.
    let first = match opts.method {
        Method::Auto => Some(bpt::Domain::Interval),
        Method::Bpt => Some(opts.bpt),
        _ => None,
    };
    let mut open = Vec::new();
    // The enclosures of the Init boxes BPT proved, for the certificate.
    let mut chains = Vec::new();
    let proven = |chains: Vec<Vec<bpt::FullBox>>, method: &'static str, stats: LtlStats| {
        let mut r = finish(LtlVerdict::True { exact: true, margin: None }, method, stats)?;
        r.certificate = crate::certificate::bounded(sys, phi, &chains).ok().map(LtlCertificate::Bounded);
        Ok(r)
    };
    for (i, b) in inits.iter().enumerate() {
        let Some(domain) = first else {
            open.push(b.clone());
            continue;
        };
        match bpt_decides(sys, b, depth, &holds, &negated, domain, (i == 0).then_some(&mut stats))? {
            BptOutcome::Holds(chain) => chains.push(chain),
            BptOutcome::Violated(trace) => return finish(LtlVerdict::False { trace }, domain.method_name(), stats),
            BptOutcome::Open => open.push(b.clone()),
        }
    }
    let first_name = first.map_or("bpt", bpt::Domain::method_name);
    if open.is_empty() {
        return proven(chains, first_name, stats);
    }
    if opts.method == Method::Bpt {
        let reason = "bound propagation through time leaves an atom undecided on the enclosures".to_string();
        return finish(LtlVerdict::Unknown { reason }, first_name, stats);
    }
    if opts.method == Method::Auto {
        // 2. Random runs, replayed exactly.
        for (i, b) in open.iter().enumerate() {
            if let Some(trace) = sample::search(sys, b, &negated, depth, sample::RUNS, i as u64)? {
                return finish(LtlVerdict::False { trace }, "simulation", stats);
            }
        }
        // 2'. CROWN's enclosures on what intervals left open.
        let mut still_open = Vec::new();
        for b in open {
            match bpt_decides(sys, &b, depth, &holds, &negated, bpt::Domain::Crown, None)? {
                BptOutcome::Holds(chain) => chains.push(chain),
                BptOutcome::Violated(trace) => return finish(LtlVerdict::False { trace }, "bpt-crown", stats),
                BptOutcome::Open => still_open.push(b),
            }
        }
        if still_open.is_empty() {
            return proven(chains, "bpt-crown", stats);
        }
        open = still_open;
    }
    // 3. RMILP on what is left.
    let deadline = opts.timeout.map(|t| start + t);
    let mut margin = f64::INFINITY;
    let mut unknown = None;
    for b in &open {
        let mut o = opts.rmilp.clone();
        o.timeout = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        match rmilp::check(sys, b, &negated, &o, &mut stats.rmilp)? {
            RmilpOutcome::Holds { margin: m } => margin = margin.min(m),
            RmilpOutcome::Violated(trace) => return finish(LtlVerdict::False { trace }, "rmilp", stats),
            RmilpOutcome::TimedOut(why) => {
                unknown.get_or_insert(format!("time-out ({why})"));
                break;
            }
            RmilpOutcome::Unknown(reason) => {
                unknown.get_or_insert(reason);
            }
        }
    }
    match unknown {
        Some(reason) => finish(LtlVerdict::Unknown { reason }, "rmilp", stats),
        None => finish(LtlVerdict::True { exact: false, margin: Some(margin) }, "rmilp", stats),
    }
}

enum BptOutcome {
    /// With the enclosures of steps `0..=depth`.
    Holds(Vec<bpt::FullBox>),
    Violated(Trace),
    Open,
}

/// Bound propagation from the states of `b` (its enclosures recorded in `stats` when given).
fn bpt_decides(
    sys: &System,
    b: &RBox,
    depth: usize,
    holds: &PathFormula,
    negated: &PathFormula,
    domain: bpt::Domain,
    stats: Option<&mut LtlStats>,
) -> Result<BptOutcome, LtlError> {
    let full = bpt::propagate_full(sys, b, depth, domain)?;
    let boxes: Vec<Vec<trestle_ir::interval::Interval>> = full.iter().map(|b| b.state.clone()).collect();
    if let Some(stats) = stats {
        stats.bpt_enclosures = boxes.iter().map(|s| s.iter().map(|iv| (iv.lo, iv.hi)).collect()).collect();
    }
    if bpt::may_leave_domains(sys, &boxes) {
        return Ok(BptOutcome::Open);
    }
    Ok(match holds.holds_on_boxes(&boxes) {
        Some(true) => BptOutcome::Holds(full),
        // Every path from this box violates the formula: any one of them is a refutation.
        Some(false) => {
            let trace = any_run(sys, b, depth)?;
            if !negated.holds_exact(&trace.states)? {
                return Err(LtlError::Semantics(
                    "internal disagreement: bound propagation refuted the formula on a box, but a run from it \
                     satisfies it exactly"
                        .into(),
                ));
            }
            BptOutcome::Violated(trace)
        }
        None => BptOutcome::Open,
    })
}

/// The formula as a state predicate, when it has no temporal operator ([`Ltl::state_pred`]).
pub fn state_pred(phi: &Ltl) -> Option<trestle_ir::Pred> {
    phi.state_pred()
}

fn check_unbounded(sys: &System, phi: &Ltl, opts: &LtlOptions) -> Result<LtlResult, LtlError> {
    let start = Instant::now();
    let d = opts.depth as u32;
    let unsupported = || {
        LtlError::Unsupported(
            "unbounded LTL: only F p, G p and p U q with state predicates p, q are decided (bounded operators \
             anywhere)"
                .into(),
        )
    };
    let boxed = |f: Ltl| Box::new(f);
    let deadline_opts = |o: &LtlOptions| {
        let mut o = o.clone();
        o.timeout = opts.timeout.map(|t| t.saturating_sub(start.elapsed()));
        o
    };
    let bounded = |f: &Ltl| {
        let mut o = deadline_opts(opts);
        if matches!(o.method, Method::Lasso | Method::Invariant) {
            o.method = Method::Auto;
        }
        check_bounded(sys, f, &o)
    };
    let finish = |verdict: LtlVerdict, method: &'static str, depth: usize, mut stats: LtlStats| {
        stats.seconds = start.elapsed().as_secs_f64();
        Ok(LtlResult { verdict, method, depth, stats, certificate: None })
    };
    let inits = sys.init.to_box_union(sys.state.len(), MAX_INIT_BOXES).ok_or_else(|| {
        LtlError::Unsupported("Init must be a union of boxes (a conjunction/disjunction of variable bounds)".into())
    })?;
    let mut stats = LtlStats { init_boxes: inits.len(), ..LtlStats::default() };
    let use_bounded = matches!(opts.method, Method::Auto | Method::Bpt | Method::Rmilp);
    let use_lasso = matches!(opts.method, Method::Auto | Method::Lasso);
    let use_invariant = matches!(opts.method, Method::Auto | Method::Invariant);
    // The lasso half: a run on which `q` never holds refutes `F q` and `p U q`.
    let lasso = |q: &trestle_ir::Pred, stats: &mut LtlStats| -> Result<Option<(Trace, usize)>, LtlError> {
        let mut o = opts.rmilp.clone();
        o.timeout = opts.timeout.map(|t| t.saturating_sub(start.elapsed()));
        for b in &inits {
            if let LassoOutcome::Found(t) = lasso::search(sys, b, q, opts.depth.max(1), &o, &mut stats.rmilp)? {
                let n = t.len();
                return Ok(Some((t, n)));
            }
        }
        Ok(None)
    };
    match phi {
        Ltl::F(None, q) => {
            let q = &state_pred(q).ok_or_else(unsupported)?;
            if use_bounded {
                let r = bounded(&Ltl::F(Some(d), boxed(Ltl::Atom(q.clone()))))?;
                if let LtlVerdict::True { .. } = r.verdict {
                    return Ok(LtlResult {
                        certificate: r.certificate,
                        ..finish(r.verdict, r.method, r.depth, r.stats)?
                    });
                }
            }
            if use_lasso && let Some((trace, n)) = lasso(q, &mut stats)? {
                return finish(LtlVerdict::False { trace }, "lasso", n, stats);
            }
            let reason =
                format!("F<={d} does not hold on every path and no lasso avoiding it of length <= {d} was found");
            finish(LtlVerdict::Unknown { reason }, opts.method.name(), opts.depth, stats)
        }
        Ltl::U(None, p, q) => {
            let (p, q) = (&state_pred(p).ok_or_else(unsupported)?, &state_pred(q).ok_or_else(unsupported)?);
            let (pa, qa) = (boxed(Ltl::Atom(p.clone())), boxed(Ltl::Atom(q.clone())));
            if use_bounded {
                let r = bounded(&Ltl::U(Some(d), pa.clone(), qa.clone()))?;
                if let LtlVerdict::True { .. } = r.verdict {
                    return Ok(LtlResult {
                        certificate: r.certificate,
                        ..finish(r.verdict, r.method, r.depth, r.stats)?
                    });
                }
                // A finite path with `not q` until `not p and not q` refutes `p U q`: it is the
                // violation of `not ((not q) U<=d (not p and not q))`.
                let not = |f: Box<Ltl>| Box::new(Ltl::Not(f));
                let prefix = Ltl::Not(Box::new(Ltl::U(
                    Some(d),
                    not(qa.clone()),
                    Box::new(Ltl::And(vec![Ltl::Not(pa), Ltl::Not(qa)])),
                )));
                let r = bounded(&prefix)?;
                if let LtlVerdict::False { .. } = r.verdict {
                    return finish(r.verdict, r.method, r.depth, r.stats);
                }
            }
            if use_lasso && let Some((trace, n)) = lasso(q, &mut stats)? {
                return finish(LtlVerdict::False { trace }, "lasso", n, stats);
            }
            let reason = format!("U<={d} does not hold on every path and no refuting path of length <= {d} was found");
            finish(LtlVerdict::Unknown { reason }, opts.method.name(), opts.depth, stats)
        }
        Ltl::G(None, p) => {
            let p = &state_pred(p).ok_or_else(unsupported)?;
            if use_invariant {
                let mut boxes = Vec::new();
                for b in &inits {
                    match bpt::invariant(sys, b, 16 * opts.depth.max(1))? {
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
                    let left = opts.timeout.map(|t| t.saturating_sub(start.elapsed()));
                    let certificate = synthesis::certify_boxes(sys, p, &boxes, left);
                    let mut r = finish(LtlVerdict::True { exact: true, margin: None }, "invariant", 0, stats)?;
                    r.certificate = always(sys, phi, certificate);
                    return Ok(r);
                }
                // The maximal invariant: every state from step k on lies in I_k inside p; the
                // steps before k are a bounded check from Init.
                if let Some((k, h)) = bpt::maximal_invariant(sys, p, 16 * opts.depth.max(1))? {
                    stats.bpt_enclosures = vec![h.state.iter().map(|iv| (iv.lo, iv.hi)).collect()];
                    // The certificate's candidate: the chains of boxes from Init up to step k - 1
                    // and I_k. The bridge engine proves it (Init inside, p around it, mapped into
                    // itself) or there is none; a proof makes the verdict exact even where the
                    // steps before k were decided on MILP evidence.
                    let certify = || -> Result<Option<ProofJson>, LtlError> {
                        let mut candidate = Vec::new();
                        for b in &inits {
                            candidate.extend(bpt::legal_chain(sys, b, k)?);
                        }
                        candidate.push(h.clone());
                        let left = opts.timeout.map(|t| t.saturating_sub(start.elapsed()));
                        Ok(synthesis::certify_boxes(sys, p, &candidate, left))
                    };
                    if k == 0 {
                        let certificate = certify()?;
                        let mut r = finish(LtlVerdict::True { exact: true, margin: None }, "invariant", 0, stats)?;
                        r.certificate = always(sys, phi, certificate);
                        return Ok(r);
                    }
                    let before = bounded(&Ltl::G(Some(k as u32 - 1), boxed(Ltl::Atom(p.clone()))))?;
                    match before.verdict {
                        LtlVerdict::True { exact, margin } => {
                            stats.rmilp = before.stats.rmilp;
                            let certificate = certify()?;
                            let verdict = match certificate {
                                Some(_) => LtlVerdict::True { exact: true, margin: None },
                                None => LtlVerdict::True { exact, margin },
                            };
                            let mut r = finish(verdict, "invariant", k, stats)?;
                            r.certificate = always(sys, phi, certificate);
                            return Ok(r);
                        }
                        LtlVerdict::False { .. } => {
                            return finish(before.verdict, before.method, before.depth, before.stats);
                        }
                        LtlVerdict::Unknown { .. } => {}
                    }
                }
            }
            // A union of boxes over the state and the hidden states, proven inductive by the
            // bridge engine; half of the time left, the other half for the bounded refutation.
            let mut synthesis_failure = String::new();
            // Memoryless systems get synthesis from the caller (`trestle ltl` and `verify` ask the
            // bridge engine about the file's candidate first, then synthesise).
            if use_invariant && !sys.is_memoryless() {
                let budget = opts.timeout.map(|t| t.saturating_sub(start.elapsed()) / 2);
                match synthesis::always(sys, p, &inits, 16 * opts.depth.max(1), budget)? {
                    SynthesisOutcome::Holds(proof) => {
                        stats.invariant_boxes = proof.report.invariant.len();
                        stats.invariant_dims = proof.lifted.system.state.len();
                        let mut r = finish(LtlVerdict::True { exact: true, margin: None }, "synthesis", 0, stats)?;
                        r.certificate = always(sys, phi, proof.report.certificate);
                        return Ok(r);
                    }
                    SynthesisOutcome::Violated(trace) => {
                        let n = trace.len();
                        return finish(LtlVerdict::False { trace }, "synthesis", n, stats);
                    }
                    SynthesisOutcome::Unknown(why) => synthesis_failure = format!("; {why}"),
                }
            }
            if use_bounded {
                let r = bounded(&Ltl::G(Some(d), boxed(Ltl::Atom(p.clone()))))?;
                if let LtlVerdict::False { .. } = r.verdict {
                    return finish(r.verdict, r.method, r.depth, r.stats);
                }
            }
            let reason = format!(
                "no inductive box inside the predicate was found in {d} steps and no path violates it within {d} \
                 steps{synthesis_failure}"
            );
            finish(LtlVerdict::Unknown { reason }, opts.method.name(), opts.depth, stats)
        }
        _ => Err(unsupported()),
    }
}

/// The bridge engine's proof of `G p` as the certificate of `phi`, the formula in the system's
/// names so that `trestle certify` parses it back.
fn always(sys: &System, phi: &Ltl, proof: Option<ProofJson>) -> Option<LtlCertificate> {
    proof.map(|p| LtlCertificate::Always(ProofJson { ltl: Some(trestle_ir::print::Names::of(sys).ltl(phi)), ..p }))
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
