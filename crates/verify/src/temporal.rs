//! `ctl` and `ltl`: temporal formulas by the bounded-CTL and LTL engines, and the chain that
//! follows the LTL engine on a memoryless system (an open `G p` is the invariant question `p`).

use crate::error::DriverError;
use crate::progress::Progress;
use serde_json::json;
use trestle_core::{Budget, RunResult, Status, Verdict};
use trestle_ctl::{CtlError, CtlOptions, CtlResult, check_ctl};
use trestle_ir::System;
use trestle_ir::formula::{Ctl, Ltl};
use trestle_ltl::{LtlError, LtlOptions, LtlResult, check_ltl};

impl From<CtlError> for DriverError {
    fn from(e: CtlError) -> DriverError {
        if e.is_input() { DriverError::Input(e.to_string()) } else { DriverError::Internal(e.to_string()) }
    }
}

impl From<LtlError> for DriverError {
    fn from(e: LtlError) -> DriverError {
        if e.is_input() { DriverError::Input(e.to_string()) } else { DriverError::Internal(e.to_string()) }
    }
}

/// The property a temporal run checks: its name (`formula` for a `--formula`) and its text.
#[derive(Clone, Debug)]
pub struct Named {
    pub name: String,
    pub text: String,
}

/// A bounded-CTL run: the engine's result and the result every front end prints.
#[derive(Debug)]
pub struct CtlRun {
    pub ctl: CtlResult,
    pub result: RunResult,
}

/// Decides a bounded-CTL formula.
pub fn ctl(
    sys: &System,
    phi: &Ctl,
    property: &Named,
    opts: &CtlOptions,
    budget: &Budget,
    progress: &dyn Progress,
) -> Result<CtlRun, DriverError> {
    progress.stage("ctl");
    let mut r = check_ctl(sys, phi, opts, budget)?;
    // A "true" left unknown because the system's text lets runs stop and the states they reach
    // could not be swept: the exact stop check on the file's invariant (as `check` proves it)
    // may show that no run from Init stops, and the formula is decided again without the sweep.
    let mut stop_free = None;
    if matches!(r.verdict, Verdict::Unknown(trestle_core::Unknown::RunsMayStop(_)))
        && opts.stop_free.is_none()
        && let Some(how) = crate::stops::proven_stop_free(sys, &budget.share(0.5))
    {
        progress.stage("ctl (no run stops)");
        let again = CtlOptions { stop_free: Some(how.clone()), ..opts.clone() };
        r = check_ctl(sys, phi, &again, budget)?;
        stop_free = Some(how);
    }
    let mut out = RunResult::of_verdict("ctl", sys, r.method, word(&r.verdict), &r.verdict);
    out.property = Some(property.name.clone());
    out.details.insert("formula".into(), json!(property.text));
    out.evidence = match &r.verdict {
        Verdict::Proven { .. } if r.method == "explicit" => {
            Some("every initial state evaluated in exact rational arithmetic".into())
        }
        Verdict::Proven { .. } => {
            Some("outward-rounded bounds rule out every counterexample job without a solver (exact)".into())
        }
        Verdict::Evidence { .. } => Some(
            "HiGHS found every MILP of the negated property infeasible, or its dual bound on the relaxation of the \
             atoms above the threshold (floating-point evidence with this margin, not an exact proof)"
                .into(),
        ),
        _ => None,
    };
    if let (Some(how), Some(e)) = (stop_free.or_else(|| opts.stop_free.clone()), out.evidence.as_mut()) {
        e.push_str(&format!("; no run from Init stops: {how}"));
    }
    let s = &r.stats;
    out.stat("milps_built", s.milps_built)
        .stat("milps_solved", s.milps_solved)
        .stat("milps_pruned", s.milps_pruned)
        .stat("binaries", s.binaries)
        .stat("states_expanded", s.states_expanded)
        .stat("candidates", s.candidates)
        .stat("seconds", s.seconds);
    Ok(CtlRun { ctl: r, result: out })
}

/// `true`, `false` or `unknown`: a temporal formula's truth.
pub fn word(v: &Verdict) -> &'static str {
    match v.holds() {
        Some(true) => "true",
        Some(false) => "false",
        None => "unknown",
    }
}

/// An LTL run: the engine's result and the result every front end prints (the invariant chain's
/// when it decided what the engine left open).
#[derive(Debug)]
pub struct LtlRun {
    pub ltl: LtlResult,
    pub result: RunResult,
    /// The certificate of the result's proof, when there is one (the engine's, or the invariant
    /// chain's).
    pub certificate: Option<serde_json::Value>,
}

impl LtlRun {
    /// Why the run wrote no certificate (when [`LtlRun::certificate`] is `None`).
    pub fn why_no_certificate(&self, sys: &System) -> String {
        let method = self.ltl.method;
        match &self.ltl.verdict {
            Verdict::Evidence { .. } => {
                "a MILP's \"true\" is floating-point evidence, which no certificate re-checks".into()
            }
            Verdict::Proven { .. } if method == "invariant" => "the bridge engine did not re-prove the invariant on \
                 the system with its hidden states lifted within its time"
                .into(),
            Verdict::Proven { .. } if method.starts_with("bpt") => format!(
                "the enclosures' check covers systems whose runs cannot stop, and {}",
                trestle_ltl::certificate::stop_free(sys)
                    .err()
                    .unwrap_or_else(|| "the hidden state could not be lifted".into())
            ),
            Verdict::Proven { .. } => format!("{method} writes none"),
            _ => "only a proven formula has one".into(),
        }
    }
}

const LTL_EVIDENCE: &str = "HiGHS found no path violating the formula: the MILP of the negation over one unrolled path \
    is infeasible, or its bound on the atoms' relaxation is above the threshold (floating-point evidence with this \
    margin, not an exact proof)";

/// Decides an LTL formula; on a memoryless system a `G p` the engine leaves open is then asked as
/// the invariant question `p` (the file's candidate, then synthesis) in the time left.
pub fn ltl(
    sys: &System,
    phi: &Ltl,
    property: &Named,
    opts: &LtlOptions,
    threads: usize,
    budget: &Budget,
    progress: &dyn Progress,
) -> Result<LtlRun, DriverError> {
    progress.stage("ltl");
    let r = check_ltl(sys, phi, opts, budget)?;
    let mut out = RunResult::of_verdict("ltl", sys, r.method, word(&r.verdict), &r.verdict);
    out.property = Some(property.name.clone());
    out.details.insert("formula".into(), json!(property.text));
    out.details.insert("depth".into(), json!(r.depth));
    out.evidence = match &r.verdict {
        Verdict::Proven { .. } => Some(
            match r.method {
                "invariant" => {
                    "an inductive box of the full state (environment and hidden states) contains Init and lies \
                inside the predicate (outward-rounded enclosures)"
                }
                "synthesis" => {
                    "a union of boxes over the state and the recurrent controllers' kept hidden units contains \
                Init, lies inside the predicate and is inductive: found by synthesis over the system with its hidden \
                states lifted into the state, proven by the bridge engine"
                }
                _ => {
                    "bound propagation through time: the formula holds on the outward-rounded enclosures of every step"
                }
            }
            .into(),
        ),
        Verdict::Evidence { .. } if r.stats.rmilp.relaxed_neurons > 0 => Some(format!(
            "{LTL_EVIDENCE}; the tanh and sigmoid neurons are relaxed by sound lines (outward-rounded), so the MILP \
             contains every real path"
        )),
        Verdict::Evidence { .. } => Some(LTL_EVIDENCE.into()),
        _ => None,
    };
    if let Some(t) = r.verdict.trace()
        && let Some(j) = t.loop_back
    {
        out.details.insert("lasso".into(), json!({ "stem": j, "loop": t.len() - j }));
    }
    if !r.stats.bpt_enclosures.is_empty() {
        out.details.insert("bpt_enclosures".into(), json!(r.stats.bpt_enclosures));
    }
    out.stat("init_boxes", r.stats.init_boxes)
        .stat("milps", r.stats.rmilp.milps)
        .stat("binaries", r.stats.rmilp.binaries)
        .stat("variables", r.stats.rmilp.variables)
        .stat("tightened_wins", r.stats.rmilp.tightened_wins)
        .stat("plain_wins", r.stats.rmilp.plain_wins)
        .stat("relaxed_neurons", r.stats.rmilp.relaxed_neurons)
        .stat("refinements", r.stats.rmilp.refinements)
        .stat("invariant_boxes", r.stats.invariant_boxes)
        .stat("invariant_dims", r.stats.invariant_dims)
        .stat("seconds", r.stats.seconds);
    let mut certificate = r.verdict.certificate().map(|c| c.0.clone());
    let chain = matches!(opts.method, trestle_ltl::Method::Auto | trestle_ltl::Method::Invariant);
    if chain
        && out.status == Status::Unknown
        && sys.is_memoryless()
        && let Ltl::G(None, inner) = phi
        && let Some(p) = trestle_ltl::state_pred(inner)
        && !budget.is_over()
        && let Some(chained) = invariant_of(sys, &p, threads, budget, progress)?
    {
        let engine_said = out.reason.clone();
        let seconds = out.stats.get("seconds").cloned();
        out = chained.result;
        out.command = "ltl".into();
        out.property = Some(property.name.clone());
        out.details.insert("formula".into(), json!(property.text));
        out.details.insert("ltl_engine".into(), json!(engine_said));
        if let Some(s) = seconds {
            out.stats.insert("ltl_seconds".into(), s);
        }
        certificate = chained.certificate.map(|c| ltl_invariant_certificate(c, &property.text));
    }
    Ok(LtlRun { ltl: r, result: out, certificate })
}

/// `G p` (p a state predicate) that the LTL engine left open on a system whose controllers keep
/// no hidden state is the question "p is invariant": the file's candidate, then synthesis, as
/// `verify` asks it, with p bounded first (synthesis needs a bounded Safe: p within bounds of the
/// variables it leaves free, from the domains, the file's safe or an inductive box around Init).
/// Their answer when it decides `G p`; `None` otherwise (no bounded form, unknown, or a run that
/// leaves only the added bounds, which refutes nothing).
fn invariant_of(
    sys: &System,
    p: &trestle_ir::Pred,
    threads: usize,
    budget: &Budget,
    progress: &dyn Progress,
) -> Result<Option<crate::properties::InvariantRun>, DriverError> {
    let inits = sys.init.to_box_union(sys.state.len(), 1024).unwrap_or_default();
    let Some(within) = trestle_ltl::synthesis::bounded_safe(sys, p, &inits, budget)? else {
        return Ok(None);
    };
    let run = crate::properties::invariant(sys, &within, threads, budget, progress)?;
    Ok(match run.result.status {
        Status::Unknown => None,
        Status::Refuted if !leaves(p, &run.result) => None,
        _ => Some(run),
    })
}

/// Whether the last state of a result's trace violates `p`: exactly, or, for a validated run
/// (through tanh, sigmoid or an elementary function, whose exact states are only its start), its
/// last enclosure (exact rational ends, widened to f64 outward) lies strictly outside `p`.
fn leaves(p: &trestle_ir::Pred, r: &RunResult) -> bool {
    if let Some(last) = r.trace.as_ref().and_then(|t| t.enclosures.as_ref()).and_then(|e| e.last()) {
        let enclosure: Option<Vec<trestle_ir::Interval>> = last
            .iter()
            .map(|[lo, hi]| {
                let (lo, hi) = (trestle_ir::num::parse_rational(lo)?, trestle_ir::num::parse_rational(hi)?);
                Some(trestle_ir::Interval::new(trestle_ir::num::down(&lo), trestle_ir::num::up(&hi)))
            })
            .collect();
        return enclosure.is_some_and(|b| p.eval_interval(&trestle_ir::Env::new(&b[..], &[], &[])) == Some(false));
    }
    let last = r.trace.as_ref().and_then(|t| t.states_exact.last());
    last.is_some_and(|s| {
        let state: Option<Vec<trestle_ir::Rational>> = s.iter().map(|x| trestle_ir::num::parse_rational(x)).collect();
        state.is_some_and(|s| !p.eval_exact(&trestle_ir::Env::new(&s[..], &[], &[])).unwrap_or(true))
    })
}

/// A bridge proof of `p` as an invariant, marked as the proof of `G p` (`trestle certify` then
/// re-checks it with `p` as Safe).
fn ltl_invariant_certificate(mut proof: serde_json::Value, formula: &str) -> serde_json::Value {
    if let Some(o) = proof.as_object_mut() {
        o.insert("ltl".into(), json!(formula));
    }
    proof
}

/// The names a formula given with the run (not in the file) may use: the system's constants and
/// state variables, and `k` when a horizon is given.
pub fn formula_scope(sys: &System, k: Option<u32>) -> Result<trestle_ir::parse::SimpleScope, DriverError> {
    use trestle_ir::parse::{Scope, SimpleScope, Symbol};
    use trestle_ir::system::VarKind;
    let mut scope = SimpleScope::default();
    for (n, q) in &sys.constants {
        scope.add(n, Symbol::Const(q.clone()));
    }
    for (i, v) in sys.state.iter().enumerate() {
        let var = trestle_ir::VarRef::State(i);
        scope.add(&v.name, if v.kind == VarKind::Bool { Symbol::BoolVar(var) } else { Symbol::Var(var) });
    }
    if let Some(k) = k {
        if scope.lookup("k").is_some() {
            return Err(DriverError::input("k: the system already has a constant or variable named k"));
        }
        scope.add("k", Symbol::Const(trestle_ir::num::rational_from_i64(k.into())));
    }
    Ok(scope)
}
