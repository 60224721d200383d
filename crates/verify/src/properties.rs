//! `verify`: every property of a system, each by the engines its kind calls for, one result each.
//!
//! - `invariant = P` (and, in a file without `[[property]]`, the system's `safe` as the implicit
//!   property `safe`): P holds in every reachable state. The bridge engine checks the file's
//!   candidate invariant against P when there is one; when there is none, or it is not proven,
//!   synthesis looks for another invariant inside P or a run from Init that leaves P. A refuted
//!   candidate is not a refuted property: only a run from Init is.
//! - `ctl = ..`: the bounded-CTL engine.
//! - `ltl = ..`: the LTL engine (and, for `G p` on a memoryless system, the invariant chain).
//!
//! A property an engine cannot take (an unsupported feature, a shape it refuses) is a result too:
//! status `unknown` with reason kind `unsupported` and the engine's message; the other properties
//! are decided as usual. An internal error of one property is recorded the same way (reason kind
//! `error`) and makes the whole run end with exit code 4 after every result is printed.

use crate::error::DriverError;
use crate::progress::Progress;
use crate::synth::synthesize;
use crate::temporal::{self, Named};
use serde_json::json;
use std::time::Instant;
use trestle_bridge::Condition;
use trestle_core::{Budget, RunResult, Status, Unknown};
use trestle_ir::system::PropertyFormula;
use trestle_ir::{Pred, System};
use trestle_synth::SynthConfig;

/// The name of the implicit property of a file without `[[property]]`: its `safe`.
pub const IMPLICIT: &str = "safe";

/// Options of `verify`.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// Only these properties (all when empty).
    pub properties: Vec<String>,
    /// Worker threads of each engine.
    pub threads: usize,
    /// Time limit per property (each gets its own budget, inside the run's).
    pub per_property: Option<std::time::Duration>,
}

/// The results of `verify`, one per property, and whether an internal error happened.
#[derive(Debug)]
pub struct Verification {
    pub system: String,
    pub results: Vec<RunResult>,
    /// Messages of internal errors (bugs), by property: the run exits 4 when any.
    pub internal_errors: Vec<String>,
}

impl Verification {
    /// The status the run's exit code follows: refuted when any property is refuted, proven when
    /// every one is, unknown otherwise (evidence, unknown, unsupported).
    pub fn worst(results: &[RunResult]) -> Status {
        if results.iter().any(|r| r.status == Status::Refuted) {
            Status::Refuted
        } else if results.iter().all(|r| r.status == Status::Proven) {
            Status::Proven
        } else {
            Status::Unknown
        }
    }
}

/// The properties `verify` asks of `sys` (the `wanted` ones, or all), in the order it asks them.
pub fn asked(sys: &System, wanted: &[String]) -> Result<Vec<Named>, DriverError> {
    Ok(tasks(sys, wanted)?.into_iter().map(|t| Named { name: t.name, text: t.text }).collect())
}

/// The row of a property `verify` did not decide: unknown for `why`.
pub fn undecided(system: &str, property: &Named, why: &Unknown) -> RunResult {
    let mut r = RunResult::new("verify", system, "none", "unknown", Status::Unknown);
    r.set_unknown(why);
    r.property = Some(property.name.clone());
    r.details.insert("formula".into(), json!(property.text));
    r
}

/// One property to verify.
struct Task<'s> {
    name: String,
    text: String,
    formula: Formula<'s>,
}

enum Formula<'s> {
    Invariant(&'s Pred),
    Ctl(&'s trestle_ir::formula::Ctl),
    Ltl(&'s trestle_ir::formula::Ltl),
}

fn tasks<'s>(sys: &'s System, wanted: &[String]) -> Result<Vec<Task<'s>>, DriverError> {
    let mut all: Vec<Task<'s>> = sys
        .properties
        .iter()
        .map(|p| Task {
            name: p.name.clone(),
            text: crate::formula::property_text(p),
            formula: match &p.formula {
                PropertyFormula::Invariant(pred) => Formula::Invariant(pred),
                PropertyFormula::Ctl(phi) => Formula::Ctl(phi),
                PropertyFormula::Ltl(phi) => Formula::Ltl(phi),
            },
        })
        .collect();
    if all.is_empty()
        && let Some(safe) = &sys.safe
    {
        all.push(Task {
            name: IMPLICIT.into(),
            text: "G safe (the system's [safe])".into(),
            formula: Formula::Invariant(safe),
        });
    }
    if all.is_empty() {
        return Err(DriverError::input(format!(
            "system '{}' has no [[property]] and no [safe]: nothing to verify",
            sys.name
        )));
    }
    if wanted.is_empty() {
        return Ok(all);
    }
    let names: Vec<String> = all.iter().map(|t| t.name.clone()).collect();
    if let Some(w) = wanted.iter().find(|w| !names.contains(w)) {
        return Err(DriverError::input(format!("no property '{w}' (the system has: {})", names.join(", "))));
    }
    all.retain(|t| wanted.contains(&t.name));
    Ok(all)
}

/// Verifies the properties of `sys`.
pub fn verify(
    sys: &System,
    opts: &VerifyOptions,
    budget: &Budget,
    progress: &dyn Progress,
) -> Result<Verification, DriverError> {
    let tasks = tasks(sys, &opts.properties)?;
    let mut results = Vec::with_capacity(tasks.len());
    let mut internal_errors = Vec::new();
    for task in &tasks {
        progress.stage(&format!("property {}", task.name));
        let start = Instant::now();
        let own = budget.sub(opts.per_property);
        let property = Named { name: task.name.clone(), text: task.text.clone() };
        let outcome = match task.formula {
            Formula::Invariant(p) => invariant(sys, p, opts.threads, &own, progress).map(|r| r.result),
            Formula::Ctl(phi) => {
                let o = trestle_ctl::CtlOptions { threads: opts.threads, ..trestle_ctl::CtlOptions::default() };
                temporal::ctl(sys, phi, &property, &o, &own, progress).map(|r| r.result)
            }
            Formula::Ltl(phi) => {
                let o = trestle_ltl::LtlOptions::default();
                temporal::ltl(sys, phi, &property, &o, opts.threads, &own, progress).map(|r| r.result)
            }
        };
        let mut r = match outcome {
            Ok(r) => r,
            Err(e) => {
                let mut r = RunResult::new("verify", &sys.name, "none", "unknown", Status::Unknown);
                if e.is_internal() {
                    internal_errors.push(format!("{}: {e}", task.name));
                    r.reason = Some(e.to_string());
                    r.reason_kind = Some("error".into());
                } else {
                    r.set_unknown(&Unknown::Unsupported(e.to_string()));
                }
                r
            }
        };
        r.command = "verify".into();
        r.property = Some(task.name.clone());
        r.details.insert("formula".into(), json!(task.text));
        r.stat("seconds", start.elapsed().as_secs_f64());
        progress.decided(&r);
        results.push(r);
    }
    implied_by_invariants(&tasks, &mut results);
    Ok(Verification { system: sys.name.clone(), results, internal_errors })
}

/// A bounded `G<=k p` is implied by a proven `G p` or `invariant = p` of the same file (every
/// reachable state satisfies p, so the first k+1 of every run do): proven, by that property,
/// whatever its own engine could say (issue 34.8: RMILP's evidence beside the proof).
fn implied_by_invariants(tasks: &[Task<'_>], results: &mut [RunResult]) {
    use trestle_ir::formula::Ltl;
    let invariant_of = |t: &Task<'_>| -> Option<Pred> {
        match t.formula {
            Formula::Invariant(p) => Some(p.clone()),
            Formula::Ltl(Ltl::G(None, inner)) => trestle_ltl::state_pred(inner),
            _ => None,
        }
    };
    let proven: Vec<(String, Pred)> = tasks
        .iter()
        .zip(results.iter())
        .filter(|(_, r)| r.status == Status::Proven)
        .filter_map(|(t, _)| invariant_of(t).map(|p| (t.name.clone(), p)))
        .collect();
    for (task, r) in tasks.iter().zip(results.iter_mut()) {
        let Formula::Ltl(Ltl::G(Some(_), inner)) = task.formula else { continue };
        let Some(p) = trestle_ltl::state_pred(inner) else { continue };
        if r.status == Status::Proven {
            continue;
        }
        let Some((by, _)) = proven.iter().find(|(_, q)| *q == p) else { continue };
        let mut implied = RunResult::new("verify", &r.system, "implied", "true", Status::Proven);
        implied.property = r.property.clone();
        implied.details = r.details.clone();
        implied.details.insert("implied_by".into(), json!(by));
        implied.details.insert("engine_said".into(), json!(r.verdict.clone() + " (" + r.status.as_str() + ")"));
        implied.evidence = Some(format!(
            "implied by property '{by}', proven: every reachable state satisfies the predicate, so every state of \
             every bounded prefix does"
        ));
        implied.stats = r.stats.clone();
        *r = implied;
    }
}

/// The outcome of the invariant question, with the certificate of its proof.
#[derive(Debug)]
pub struct InvariantRun {
    pub result: RunResult,
    /// The bridge proof (with `p` as Safe) when proven.
    pub certificate: Option<serde_json::Value>,
}

/// `P` in every reachable state: the candidate invariant checked against P by the bridge engine,
/// then synthesis with P as Safe when that does not prove it.
pub fn invariant(
    sys: &System,
    p: &Pred,
    threads: usize,
    budget: &Budget,
    progress: &dyn Progress,
) -> Result<InvariantRun, DriverError> {
    crate::stops::stop_at_init(sys, budget)?;
    let mut sys = sys.clone();
    sys.safe = Some(p.clone());
    let bridge = trestle_bridge::Config { threads, ..trestle_bridge::Config::default() };
    let mut tried = None;
    if sys.invariant.is_some() {
        progress.stage("the file's invariant");
        let report = trestle_bridge::check(&sys, &bridge, budget, &|_| {})?;
        if report.verdict.is_proven() {
            let mut r = RunResult::new("verify", &sys.name, "bridge", "true", Status::Proven);
            r.evidence = Some(
                "the file's invariant: Init => Inv, Inv => P and inductiveness proven by the bridge engine".into(),
            );
            r.stat("boxes", report.inductive.stats.boxes).stat("splits", report.inductive.stats.splits);
            let certificate = report.verdict.certificate().map(|c| c.0.clone());
            return Ok(InvariantRun { result: r, certificate });
        }
        // A candidate that fails Init => Inv or Inv => P, or is not inductive, refutes nothing.
        let side = match (&report.init, &report.safe) {
            (Condition::Fails(_), _) => " (it does not contain Init)",
            (_, Condition::Fails(_)) => " (it is not inside the property)",
            _ => "",
        };
        let stops = crate::stops::search_from_init(&sys, report.inductive.stops.as_ref(), budget)?;
        let why = match &report.verdict {
            trestle_core::Verdict::Unknown(u) => u.to_string(),
            _ => String::new(),
        };
        let stops = stops.map(|found| format!(" ({why}; {found})")).unwrap_or_default();
        tried = Some(format!("the file's invariant is {}{side}{stops}", report.word()));
    }
    let cfg = SynthConfig { threads, bridge, ..SynthConfig::default() };
    let run = synthesize(&sys, &cfg, budget, progress)?;
    let method = if tried.is_none() { "synth" } else { "bridge+synth" };
    let mut r = run.result;
    r.command = "verify".into();
    r.method = method.into();
    r.verdict = match r.status {
        Status::Proven | Status::Evidence => "true",
        Status::Refuted => "false",
        Status::Unknown => "unknown",
    }
    .into();
    if let Some(t) = &tried {
        if r.status == Status::Unknown {
            r.reason = Some(format!("{t}; synthesis: {}", r.reason.as_deref().unwrap_or("undecided")));
        } else {
            r.details.insert("candidate".into(), json!(t));
        }
    }
    let certificate = run.report.certificate().cloned();
    Ok(InvariantRun { result: r, certificate })
}
