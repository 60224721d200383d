//! `check --method milp`: the exact big-M MILP baseline (HiGHS) on the candidate's inductiveness.
//!
//! One MILP per box, non-deterministic vertex, branch and face, maximising the violation of
//! Inv'. A refutation is replayed exactly. "No violation" is floating-point evidence (HiGHS's
//! bounds below a margin; see `trestle_milp`), so it is confirmed by the exact bridge engine in
//! the time left: proven gives `safe` (with the bridge's clauses, a certificate), an exact
//! counterexample gives `not-inductive`, undecided gives `safe-by-milp-evidence` (status
//! evidence, exit code 3, never 0). The baseline lives here, above the engines, so that the
//! bridge engine links no MILP solver.

use crate::error::DriverError;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use trestle_bridge::engine::{self, Inductiveness, Refutation, RunStats};
use trestle_bridge::{Config, Report, SideConditions, side_conditions};
use trestle_core::{Budget, Unknown, Verdict};
use trestle_ir::System;
use trestle_milp::{MilpAnswer, MilpError, MilpOptions, MilpUnknown};

/// What the MILP baseline found, and how its floating-point evidence was confirmed.
#[derive(Clone, Debug, PartialEq)]
pub struct MilpSummary {
    /// `evidence` (no violation, in floating point), `counterexample` (replayed exactly) or
    /// `unknown`.
    pub answer: &'static str,
    /// With `evidence`: the smallest margin by which HiGHS's bound on a violation stayed below 0.
    pub margin: Option<f64>,
    /// Evidence needs every bound below `-threshold` (tolerance + feasibility tolerance).
    pub threshold: f64,
    /// MILPs solved by HiGHS, objectives decided by interval bounds alone, coefficients below
    /// `trestle_milp::numerics::MIN_COEFFICIENT` moved into interval slacks.
    pub milps: usize,
    pub decided_by_bounds: usize,
    pub moved_coefficients: usize,
    pub seconds: f64,
    /// With `evidence`: how the exact confirmation by the bridge engine ended (`proven`,
    /// `refuted`, or `undecided` with why).
    pub confirmation: Option<(&'static str, Option<String>)>,
}

impl MilpSummary {
    pub fn to_json(&self) -> Value {
        json!({
            "answer": self.answer,
            "margin": self.margin.filter(|x| x.is_finite()),
            "threshold": self.threshold,
            "exact": false,
            "milps": self.milps,
            "decided_by_bounds": self.decided_by_bounds,
            "moved_coefficients": self.moved_coefficients,
            "seconds": self.seconds,
            "confirmation": self.confirmation.as_ref().map(|(result, why)| match why {
                Some(why) => json!({ "result": result, "reason": why }),
                None => json!({ "result": result, "by": "the bridge engine (exact)" }),
            }),
        })
    }
}

/// The baseline: `Init => Inv` and `Inv => Safe` by Z3, inductiveness by MILP, evidence confirmed
/// exactly. Per-MILP limit `cfg.smt_timeout`; the whole run at most `budget` (one hour when
/// unlimited).
pub fn check_milp(sys: &System, cfg: &Config, budget: &Budget) -> Result<(Report, MilpSummary), DriverError> {
    let start = Instant::now();
    sys.check_piecewise_linear("the MILP baseline (check --method milp)").map_err(DriverError::Input)?;
    let budget = budget.sub(Some(Duration::from_secs(3600)));
    let side = side_conditions(sys, cfg, &budget)?;
    let mut opts = MilpOptions::default().with_time_limit(cfg.smt_timeout);
    opts.total_time_limit = budget.remaining();
    let run = trestle_milp::check_inductive_milp(sys, &side.inv, &opts).map_err(|e| match e {
        // A dimension mismatch after validation is ours; the rest says what of the system the
        // baseline cannot encode or solve (HiGHS refuses values past its limits, bounds overflow).
        MilpError::Dimension { .. } => DriverError::internal(format!("MILP baseline: {e}")),
        _ => DriverError::input(format!("unsupported by the MILP baseline: {e}")),
    })?;
    let mut summary = MilpSummary {
        answer: match run.answer {
            MilpAnswer::Evidence { .. } => "evidence",
            MilpAnswer::Invalid(_) => "counterexample",
            MilpAnswer::Unknown(_) => "unknown",
        },
        margin: None,
        threshold: opts.threshold(),
        milps: run.stats.milps,
        decided_by_bounds: run.stats.decided_by_bounds,
        moved_coefficients: run.stats.moved_coefficients,
        seconds: start.elapsed().as_secs_f64(),
        confirmation: None,
    };
    let stats = RunStats { seconds: start.elapsed().as_secs_f64(), ..Default::default() };
    let mut report = match run.answer {
        MilpAnswer::Invalid(witness) => {
            side.baseline_report(sys, Inductiveness::Refuted(Refutation { witness, region: None }), stats, None)
        }
        MilpAnswer::Unknown(r) => side.baseline_report(sys, Inductiveness::Unknown(unknown(r)), stats, None),
        MilpAnswer::Evidence { margin } => {
            summary.margin = Some(margin);
            confirm(sys, cfg, side, &mut summary, &budget)?
        }
    };
    report.inductive.stats.seconds = start.elapsed().as_secs_f64();
    Ok((report, summary))
}

/// Confirms MILP evidence exactly with the bridge engine within `budget`.
fn confirm(
    sys: &System,
    cfg: &Config,
    side: SideConditions,
    summary: &mut MilpSummary,
    budget: &Budget,
) -> Result<Report, DriverError> {
    let margin = summary.margin.unwrap_or(f64::NAN);
    let what = format!("{} MILPs, HiGHS's bounds below -{margin:.3e} (floating-point evidence)", summary.milps);
    let mut run = engine::check_inductive(sys, &side.inv, &side.cover, cfg, budget, &|_| {})?;
    let evidence = match &run.outcome {
        Inductiveness::Proven => {
            summary.confirmation = Some(("proven", None));
            format!("{what}, confirmed exactly by the bridge engine ({} clauses)", run.clauses.len())
        }
        Inductiveness::Refuted(_) | Inductiveness::RefutedValidated(_) => {
            summary.confirmation = Some(("refuted", None));
            format!("{what} was wrong: the bridge engine found an exact counterexample")
        }
        // Closed under every step, but a run may stop in the invariant: no evidence of safety
        // either (safety speaks of the runs that go on).
        Inductiveness::Unknown(why) if run.stops.is_some() => {
            summary.confirmation = Some(("runs-may-stop", Some(why.to_string())));
            what
        }
        Inductiveness::Unknown(why) => {
            summary.confirmation = Some(("undecided", Some(why.to_string())));
            run.outcome = Inductiveness::Unknown(Unknown::Incomplete(format!(
                "{what}; the exact confirmation stayed undecided: {why}"
            )));
            what
        }
    };
    let undecided = summary.confirmation.as_ref().is_some_and(|(r, _)| *r == "undecided");
    let mut report = side.report(sys, run, Some(evidence));
    if undecided && report.init == trestle_bridge::Condition::Proven && report.safe == trestle_bridge::Condition::Proven
    {
        report.verdict = Verdict::Evidence { margin };
    }
    Ok(report)
}

/// Why the MILP baseline stayed undecided, as a core reason.
fn unknown(u: MilpUnknown) -> Unknown {
    match u {
        MilpUnknown::Timeout => Unknown::Timeout,
        MilpUnknown::ReplayFailed(why) => Unknown::ReplayFailed(why),
        MilpUnknown::Solver(why) => Unknown::Solver(why),
        other @ (MilpUnknown::NoMargin { .. } | MilpUnknown::OutOfRange(_)) => {
            Unknown::Incomplete(format!("MILP: {other}"))
        }
    }
}
