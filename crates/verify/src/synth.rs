//! `synth`: an inductive invariant found and proven, or a run from Init that leaves Safe.

use crate::error::DriverError;
use crate::json::{boxes_json, condition_json};
use crate::progress::Progress;
use serde_json::{Value, json};
use trestle_bridge::Inductiveness;
use trestle_bridge::certificate::run::run_json;
use trestle_bridge::certificate::{CertificateJson, FORMAT, FORMAT_FLOW, OutcomeJson, witness_jsons};
use trestle_core::{Budget, RunResult, Status};
use trestle_ir::System;
use trestle_ir::num::display_rational;
use trestle_ir::plant::SampledPlant;
use trestle_synth::{SynthConfig, SynthProgress, SynthReport, Trajectory};

/// A synthesis run: the engine's report and the result every front end prints.
#[derive(Debug, Clone)]
pub struct SynthRun {
    pub report: SynthReport,
    pub result: RunResult,
}

impl SynthRun {
    /// The certificate file: the proof when safe; otherwise the outcome (with the whole run from
    /// Init out of Safe when unsafe, and its last step).
    pub fn certificate_file(&self, sys: &System) -> Value {
        let r = &self.report;
        if let Some(proof) = r.certificate() {
            return proof.clone();
        }
        let mut out = OutcomeJson {
            format: if r.flow.is_some() { FORMAT_FLOW } else { FORMAT }.into(),
            system: sys.name.clone(),
            verdict: r.word().into(),
            witness: None,
            witness_exact: None,
            region: None,
            reason: Some(r.reason.clone()),
            validated: None,
            run: None,
            flow: r.flow.clone(),
        };
        // The whole run from Init out of Safe, which `certify` re-runs from its start and choices.
        let trajectory = r.trajectory.as_ref();
        if let Some(e) = trajectory.and_then(|t| t.exact.as_ref()) {
            let choices: Vec<_> = e.nondet.iter().cloned().zip(e.branches.iter().copied()).collect();
            out.run = Some(run_json(sys, &e.states[0], &choices));
            if let Some(step) = e.last_step() {
                let (approx, exact) = witness_jsons(sys, &step);
                (out.witness, out.witness_exact) = (Some(approx), Some(exact));
            }
        } else if let Some(t) = trajectory.and_then(|t| t.validated.as_ref()) {
            out.run = Some(run_json(sys, &t.start, &t.choices));
        }
        serde_json::to_value(CertificateJson::Outcome(out)).expect("certificates serialise")
    }
}

/// Runs synthesis.
pub fn synthesize(
    sys: &System,
    cfg: &SynthConfig,
    budget: &Budget,
    progress: &dyn Progress,
) -> Result<SynthRun, DriverError> {
    synthesize_sampled(sys, None, &crate::FlowSettings::default(), cfg, budget, progress)
}

/// [`synthesize`] of a system that may be sampled-data (`[flow]`, its plant given): images, proof
/// and runs through the flow's validated enclosure with `flow`'s settings
/// (`trestle_synth::synthesize_sampled`), the certificates in format `/3`.
pub fn synthesize_sampled(
    sys: &System,
    plant: Option<&SampledPlant>,
    flow: &crate::FlowSettings,
    cfg: &SynthConfig,
    budget: &Budget,
    progress: &dyn Progress,
) -> Result<SynthRun, DriverError> {
    let step = match plant {
        Some(plant) => Some(trestle_bridge::flow::FlowStep::new(sys, plant, flow.clone())?),
        // The discrete step's stops reachable from Init; a sampled system's step is the flow.
        None => {
            crate::stops::stop_at_init(sys, budget)?;
            None
        }
    };
    progress.stage("synthesis");
    let report = trestle_synth::synthesize_sampled(sys, step.as_ref(), cfg, budget, &|p| match p {
        SynthProgress::Search { round, cells, kept, images } => {
            progress.update(None, &format!("search: round {round}, {cells} cells ({kept} kept), {images} images"))
        }
        SynthProgress::Proof(p) => progress.update(Some(p.proven), &format!("proof: {} queued", p.queued)),
        SynthProgress::Attack { .. } => progress.update(None, "looking for a run from Init that leaves Safe"),
    })?;
    let mut result = result(sys, &report, cfg);
    if let Some(f) = &report.flow {
        result.method = "synth+flow".into();
        result.details.insert("flow".into(), serde_json::to_value(f).expect("flow settings serialise"));
    }
    if step.is_none() {
        crate::stops::judge(sys, report.proof.as_ref().and_then(|p| p.stops.as_ref()), budget, &mut result)?;
    }
    Ok(SynthRun { report, result })
}

fn trajectory_json(sys: &System, t: &Trajectory) -> Value {
    let named = |s: &[f64]| -> Value {
        Value::Object(sys.state_names().into_iter().zip(s).map(|(n, v)| (n, json!(v))).collect())
    };
    let mut o = json!({
        "steps": t.states.len().saturating_sub(1),
        "leaves_safe": t.exact.is_some(),
        "distance_outside_safe": t.distance,
        "states": t.states.iter().map(|s| named(s)).collect::<Vec<_>>(),
    });
    if let Some(e) = &t.exact {
        let exact = |rows: &[Vec<trestle_ir::Rational>]| {
            json!(rows.iter().map(|r| r.iter().map(display_rational).collect::<Vec<_>>()).collect::<Vec<_>>())
        };
        o["states_exact"] = exact(&e.states);
        o["actions_exact"] = exact(&e.actions);
        o["nondet_exact"] = exact(&e.nondet);
        o["branches"] = json!(e.branches.iter().map(|&b| sys.step.branches[b].name.clone()).collect::<Vec<_>>());
        o["replayed"] = json!("exact rational arithmetic");
    }
    o
}

fn config_json(cfg: &SynthConfig, sys: &System) -> trestle_core::Named {
    let v = json!({
        "search": if cfg.forward { "forward" } else if cfg.full { "greatest-fixed-point (full)" } else { "greatest-fixed-point" },
        "resolution": cfg.grid_resolution(sys.state.len()),
        "max_boxes": cfg.max_boxes,
        "min_width": cfg.min_width,
        "threads": cfg.threads,
        "attack_steps": cfg.attack_steps,
        "post": trestle_bridge::config::method_name(&cfg.bridge.post),
        "linear_bridge": cfg.bridge.linear_bridge,
    });
    serde_json::from_value(v).expect("an object")
}

/// The `trestle-result/1` result of a synthesis report.
fn result(sys: &System, r: &SynthReport, cfg: &SynthConfig) -> RunResult {
    let mut out = RunResult::of_verdict("synth", sys, "synth", r.word(), &r.verdict);
    out.config = config_json(cfg, sys);
    if out.status == Status::Proven {
        out.evidence = Some(format!("{}: Init => I and I => Safe by Z3, I inductive by the bridge engine", r.reason));
    }
    let inductive = match r.proof.as_ref().map(|p| &p.outcome) {
        None => json!({ "result": "not checked" }),
        Some(Inductiveness::Proven) => {
            json!({ "result": "proven", "clauses": r.proof.as_ref().map_or(0, |p| p.clauses.len()) })
        }
        Some(Inductiveness::Refuted(_)) => json!({ "result": "refuted" }),
        Some(Inductiveness::RefutedValidated(t)) => json!({ "result": "refuted", "validated_bits": t.precision_bits }),
        Some(Inductiveness::Unknown(reason)) => json!({ "result": "unknown", "reason": reason.to_string() }),
    };
    let details = [
        ("summary", json!(r.reason)),
        ("invariant_boxes", json!(r.invariant.len())),
        ("invariant", boxes_json(&r.invariant)),
        (
            "conditions",
            json!({
                "inductive": inductive,
                "init_implies_inv": condition_json(sys, r.init_condition.as_ref()),
                "inv_implies_safe": condition_json(sys, r.safe_condition.as_ref()),
            }),
        ),
        ("dropped_init", boxes_json(&r.dropped_init)),
    ];
    for (k, v) in details {
        out.details.insert(k.into(), v);
    }
    if let Some(t) = &r.trajectory {
        out.details.insert("trajectory".into(), trajectory_json(sys, t));
    }
    let s = &r.stats;
    out.stat("initial_cells", s.initial_cells)
        .stat("cells", s.cells)
        .stat("images", s.images)
        .stat("rounds", s.rounds)
        .stat("splits", s.splits)
        .stat("dropped", s.dropped)
        .stat("invariant_cells", s.invariant_cells)
        .stat("invariant_boxes", s.invariant_boxes)
        .stat("budget_hit", json!(s.budget_hit))
        .stat("smt_queries", s.smt_queries)
        .stat("z3_queries", s.z3_queries)
        .stat("fast_path_decided", s.fast_path_decided)
        .stat("bound_queries", s.bound_queries)
        .stat("proof_splits", s.proof_splits)
        .stat("exact_queries", s.exact_queries)
        .stat("simulations", s.simulations)
        .stat("seconds", s.seconds)
        .stat("search_seconds", s.search_seconds)
        .stat("proof_seconds", s.proof_seconds)
        .stat("attack_seconds", s.attack_seconds);
    out
}
