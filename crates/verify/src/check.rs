//! `check`: the candidate invariant of a system by the bridge engine (or a baseline), and, on
//! request, synthesis when the candidate is not proven.

use crate::error::DriverError;
use crate::json::{box_json, condition_json, witness_json};
use crate::milp::{MilpSummary, check_milp};
use crate::progress::Progress;
use crate::synth::{SynthRun, synthesize};
use serde_json::{Value, json};
use trestle_bridge::certificate;
use trestle_bridge::config::method_name;
use trestle_bridge::{Config, Inductiveness, Report};
use trestle_core::{Budget, RunResult, Status};
use trestle_ir::System;
use trestle_synth::SynthConfig;

/// How the candidate's inductiveness is decided.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CheckMethod {
    /// The compositional bridge engine (the default).
    #[default]
    Bridge,
    /// One Z3 query with the whole network (the paper's baseline).
    Monolithic,
    /// The big-M MILP baseline, its evidence confirmed exactly.
    Milp,
}

impl CheckMethod {
    pub fn name(self) -> &'static str {
        match self {
            CheckMethod::Bridge => "bridge",
            CheckMethod::Monolithic => "monolithic",
            CheckMethod::Milp => "milp",
        }
    }
}

/// What `check` does.
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    pub method: CheckMethod,
    pub bridge: Config,
    /// When the candidate is not proven, look for an invariant by synthesis (bridge method only).
    pub synthesize_on_failure: bool,
}

/// A check's outcome: the engine's report, the baseline's summary, the synthesis that followed a
/// failed candidate, and the result every front end prints.
#[derive(Debug)]
pub struct CheckRun {
    pub report: Report,
    pub milp: Option<MilpSummary>,
    pub synthesis: Option<SynthRun>,
    /// The check's result; after a failed candidate and `synthesize_on_failure`, the synthesis's
    /// (the candidate's result is then under `details.candidate`).
    pub result: RunResult,
}

impl CheckRun {
    /// The certificate file of the run: the proof when proven (by the candidate or by the
    /// invariant synthesis found), otherwise the record of the outcome with its witness.
    pub fn certificate_file(&self, sys: &System) -> Value {
        if let Some(s) = &self.synthesis
            && s.report.verdict.is_proven()
        {
            return s.certificate_file(sys);
        }
        serde_json::to_value(certificate::from_report(sys, &self.report)).expect("certificates serialise")
    }
}

/// Checks the system's candidate invariant.
pub fn check(
    sys: &System,
    opts: &CheckOptions,
    budget: &Budget,
    progress: &dyn Progress,
) -> Result<CheckRun, DriverError> {
    if opts.synthesize_on_failure && opts.method != CheckMethod::Bridge {
        return Err(DriverError::input("--synthesize-on-failure works with --method bridge only"));
    }
    crate::stops::stop_at_init(sys, budget)?;
    progress.stage("proof");
    let cfg = &opts.bridge;
    let (report, milp) = match opts.method {
        CheckMethod::Bridge => {
            let report = trestle_bridge::check(sys, cfg, budget, &|p| {
                progress.update(Some(p.proven), &format!("{} boxes done, {} queued", p.processed, p.queued))
            })?;
            (report, None)
        }
        CheckMethod::Monolithic => (trestle_bridge::check_monolithic(sys, cfg, budget)?, None),
        CheckMethod::Milp => {
            let (report, summary) = check_milp(sys, cfg, budget)?;
            (report, Some(summary))
        }
    };
    let mut result = report_result(sys, &report, opts);
    crate::stops::judge(sys, report.inductive.stops.as_ref(), budget, &mut result)?;
    if let Some(m) = &milp {
        result.details.insert("milp".into(), m.to_json());
    }
    let mut synthesis = None;
    if opts.synthesize_on_failure && !report.verdict.is_proven() {
        let synth = SynthConfig { threads: cfg.threads, bridge: cfg.clone(), ..SynthConfig::default() };
        let run = synthesize(sys, &synth, budget, progress)?;
        let mut r = run.result.clone();
        r.command = "check".into();
        r.method = "bridge+synth".into();
        r.details.insert("candidate".into(), serde_json::to_value(&result).expect("results serialise"));
        result = r;
        synthesis = Some(run);
    }
    Ok(CheckRun { report, milp, synthesis, result })
}

fn config_json(cfg: &Config) -> trestle_core::Named {
    let v = json!({
        "post": method_name(&cfg.post),
        "linear_bridge": cfg.linear_bridge,
        "split": cfg.split.name(),
        "queue": cfg.queue.name(),
        "threads": cfg.threads,
        "max_splits": cfg.max_splits,
        "min_width": cfg.min_width,
        "smt_timeout": cfg.smt_timeout.as_secs_f64(),
        "fast_path": cfg.fast_path,
        "search": cfg.search,
        "exact_after": cfg.exact_after,
    });
    serde_json::from_value(v).expect("an object")
}

/// The `trestle-result/1` result of a check's report.
fn report_result(sys: &System, r: &Report, opts: &CheckOptions) -> RunResult {
    let mut out = RunResult::of_verdict("check", sys, opts.method.name(), r.word(), &r.verdict);
    out.config = config_json(&opts.bridge);
    out.evidence = match out.status {
        Status::Proven => Some(r.evidence.clone().unwrap_or_else(|| {
            format!(
                "Init => Inv and Inv => Safe by Z3; Inv /\\ Next => Inv' by {} bridge clauses ({} decided exactly)",
                r.inductive.clauses.len(),
                r.inductive.exact_clauses.len()
            )
        })),
        Status::Evidence => r.evidence.clone().map(|e| format!("{e}; not an exact proof")),
        _ => None,
    };
    let inductive = match &r.inductive.outcome {
        Inductiveness::Proven => json!({ "result": "proven" }),
        Inductiveness::Refuted(_) => json!({ "result": "refuted" }),
        Inductiveness::RefutedValidated(t) => json!({ "result": "refuted", "validated_bits": t.precision_bits }),
        Inductiveness::Unknown(reason) => json!({ "result": "unknown", "reason": reason.to_string() }),
    };
    out.details.insert(
        "conditions".into(),
        json!({
            "init_implies_inv": condition_json(sys, Some(&r.init)),
            "inv_implies_safe": condition_json(sys, Some(&r.safe)),
            "inductive": inductive,
        }),
    );
    if let Inductiveness::Refuted(refutation) = &r.inductive.outcome {
        out.details.insert("counterexample".into(), witness_json(sys, &refutation.witness));
        if let Some(b) = &refutation.region {
            out.details.insert("falsifying_region".into(), box_json(b));
        }
    }
    let s = &r.inductive.stats;
    out.stat("splits", s.splits)
        .stat("smt_queries", s.smt_queries)
        .stat("bound_queries", s.bound_queries)
        .stat("z3_queries", s.z3_queries)
        .stat("fast_path_decided", s.fast_path_decided)
        .stat("boxes", s.boxes)
        .stat("clauses", r.inductive.clauses.len())
        .stat("undecided", r.inductive.undecided.len())
        .stat("max_depth", s.max_depth)
        .stat("counterexample_searches", s.searches)
        .stat("exact_queries", s.exact_queries)
        .stat("exact_clauses", r.inductive.exact_clauses.len())
        .stat("exact_seconds", s.exact_seconds)
        .stat("seconds", s.seconds)
        .stat("bounds_seconds", s.bounds_seconds)
        .stat("smt_seconds", s.smt_seconds)
        .stat("search_seconds", s.search_seconds);
    out
}
