//! `cegar`: safety of a discrete neural policy by policy predicate abstraction with CEGAR, or by
//! the bounded-model-checking and explicit-state baselines over the same IR.

use crate::error::DriverError;
use serde_json::json;
use trestle_cegar::bmc::{BmcOptions, check_bmc};
use trestle_cegar::explicit::{ExplicitOptions, check_explicit};
use trestle_cegar::{CegarOptions, Discrete, Outcome, PolicyEncoding, Refine, check_cegar};
use trestle_core::{Budget, RunResult, Status};
use trestle_ir::System;

/// Which engine decides.
#[derive(Clone, Debug)]
pub enum CegarMethod {
    /// Policy predicate abstraction refined by CEGAR (proves and refutes).
    Cegar(CegarOptions),
    /// Bounded model checking (complete once no loop-free path of the current length exists).
    Bmc(BmcOptions),
    /// Breadth-first search of the states reachable under the policy (the oracle).
    Explicit(ExplicitOptions),
}

impl CegarMethod {
    pub fn name(&self) -> &'static str {
        match self {
            CegarMethod::Cegar(_) => "cegar",
            CegarMethod::Bmc(_) => "bmc",
            CegarMethod::Explicit(_) => "explicit",
        }
    }
}

/// A run: the engine's outcome and its result.
#[derive(Debug)]
pub struct CegarRun {
    pub outcome: Outcome,
    pub result: RunResult,
}

/// Decides safety of the discrete policy of `sys`.
pub fn cegar(sys: &System, method: &CegarMethod, budget: &Budget) -> Result<CegarRun, DriverError> {
    let d = Discrete::new(sys)?;
    let outcome = match method {
        CegarMethod::Cegar(o) => check_cegar(&d, o, budget)?,
        CegarMethod::Bmc(o) => check_bmc(&d, o, budget)?,
        CegarMethod::Explicit(o) => check_explicit(&d, o, budget)?,
    };
    let o = &outcome;
    let mut out = RunResult::of_verdict("cegar", sys, method.name(), trestle_cegar::word(&o.verdict), &o.verdict);
    if let CegarMethod::Cegar(c) = method {
        let refine = match c.refine {
            Refine::WitnessSplit => "ws",
            Refine::ConcretisationExclusion => "ce",
        };
        let encoding = match c.encoding {
            PolicyEncoding::Lazy => "lazy",
            PolicyEncoding::Z3 => "z3",
        };
        out.config.insert("refine".into(), json!(refine));
        out.config.insert("heuristic".into(), json!(c.heuristic));
        out.config.insert("incremental".into(), json!(c.incremental));
        out.config.insert("encoding".into(), json!(encoding));
    }
    if out.status == Status::Proven {
        out.evidence = Some(
            match method {
                CegarMethod::Cegar(_) => {
                    "no abstract state that meets the unsafety condition is reachable in the policy predicate \
                     abstraction over the final predicates (abstract transitions decided by Z3 with the network's \
                     exact weights); the reachable abstract states, an inductive invariant, were re-checked from \
                     scratch"
                }
                CegarMethod::Bmc(_) => {
                    "no loop-free run of the final depth exists, and none shorter reaches an unsafe state (Z3, exact \
                     weights)"
                }
                CegarMethod::Explicit(_) => "every state reachable under the policy was visited (exact arithmetic)",
            }
            .into(),
        );
        if let Some(inv) = &o.invariant {
            out.details.insert("predicates".into(), json!(o.predicates));
            out.details.insert("invariant_states".into(), json!(inv.states.len()));
            out.details.insert("rechecked".into(), json!(true));
        }
    }
    if out.status == Status::Proven {
        ended_runs(&d, sys, budget, &mut out)?;
    }
    let s = &o.stats;
    out.stat("predicates", s.predicates)
        .stat("iterations", s.iterations)
        .stat("policy_refinements", s.policy_refinements)
        .stat("smt_calls", s.smt_calls)
        .stat("reused_edges", s.reused_edges)
        .stat("refuted_states", s.refuted_states)
        .stat("bound_calls", s.bound_calls)
        .stat("states", s.states)
        .stat("depth", s.depth)
        .stat("seconds", s.seconds)
        .stat("recheck_seconds", s.recheck_seconds);
    Ok(CegarRun { outcome, result: out })
}

/// Most states searched for a run that ends (see [`ended_runs`]).
const MAX_DEAD_END_STATES: usize = 100_000;

/// CEGAR's planning rule, the one exception to "a run that stops is the system's error" (README,
/// "Runs that stop"): under a discrete policy a run ends where the chosen label enables no
/// command, and "safe" judges the states such runs reach. The answer says so, with one such run
/// (`details.ended_run`), or says that the search for one was cut short.
fn ended_runs(d: &Discrete<'_>, sys: &System, budget: &Budget, out: &mut RunResult) -> Result<(), DriverError> {
    use trestle_cegar::explicit::{DeadEnd, dead_end};
    let note = match dead_end(d, MAX_DEAD_END_STATES, budget)? {
        DeadEnd::None => return Ok(()),
        DeadEnd::Found(trace, label) => {
            let note = format!(
                "safe; some runs end where the chosen label enables no command (one reaches a state where label \
                 '{label}' enables none after {} steps: details.ended_run)",
                trace.len()
            );
            out.details.insert("ended_run".into(), serde_json::to_value(trace.to_json(sys)).expect("traces serialise"));
            out.details.insert("ended_label".into(), json!(label));
            note
        }
        DeadEnd::Incomplete(why) => {
            format!("runs may end where the chosen label enables no command (the search for one stopped: {why})")
        }
    };
    out.evidence = Some(match out.evidence.take() {
        Some(e) => format!("{note}. {e}"),
        None => note,
    });
    Ok(())
}
