//! `trestle ltl`: a bounded LTL property of the file (or a formula) on every path from Init, by
//! bound propagation through time (exact when it decides) and the recursive MILP (floating-point
//! evidence when no path violates it, a replayed path when one does).

use crate::args::{LimitArgs, SystemArgs, choices};
use crate::output::{driver_error, finish};
use crate::progress::Bar;
use crate::{CliError, CliResult};
use serde_json::Value;
use std::sync::Arc;
use trestle_core::Budget;
use trestle_ir::System;
use trestle_ir::formula::Ltl;
use trestle_ir::plant::SampledPlant;
use trestle_ltl::StageReport;
use trestle_verify::Progress;
use trestle_verify::flow_ltl::ltl_flow;
use trestle_verify::formula::Asked;
use trestle_verify::options::{self, LtlRequest, Spelling};

#[derive(clap::Args, Debug)]
pub struct LtlArgs {
    #[command(flatten)]
    pub system: SystemArgs,
    /// A property of the system file (a `[[property]]` with `ltl = ..`).
    #[arg(long, conflicts_with = "formula", required_unless_present = "formula")]
    pub property: Option<String>,
    /// A formula, e.g. "X^3 (z <= 2)" or "G<=10 F<=3 (x >= 0)"; it may use `k` when --k is given.
    #[arg(long)]
    pub formula: Option<String>,
    /// The horizon `k` of a property defined with one (or of --formula).
    #[arg(long)]
    pub k: Option<u32>,
    #[arg(long, value_parser = choices(options::LTL_METHODS), default_value = "auto")]
    pub method: String,
    /// The domain of --method bpt (auto tries interval, then crown).
    #[arg(long, value_parser = choices(options::LTL_DOMAINS), default_value = "interval")]
    pub bpt: String,
    /// For unbounded F, G and U: the horizon of the bounded checks and the longest lasso (the
    /// invariant search iterates up to 16 times this).
    #[arg(long, default_value_t = 10)]
    pub depth: usize,
    /// `--threads` (or `--jobs`): HiGHS's threads per MILP (the tightening race gives each of
    /// its two searches half), and those of the invariant chain's bridge engine and synthesis.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// The MILPs without adaptive splitting: interval bounds as big-M constants and a binary for
    /// every ReLU (the paper's RMILP-only baseline, for measuring what the splitting buys).
    #[arg(long)]
    pub no_adaptive: bool,
    /// With adaptive splitting: whether each step's values are bounded by the LP relaxation of
    /// the steps before it (neither encoding is always faster; `race` runs both).
    #[arg(long, value_parser = choices(options::LTL_TIGHTENINGS), default_value = "race")]
    pub tighten: String,
    /// Write the certificate of an exact proof: a bounded formula proven by bound propagation
    /// (its enclosures), or a `G p` proven by an invariant (re-check it with `trestle certify
    /// CERT SYSTEM`); other verdicts write none (a note on stderr says so).
    #[arg(long)]
    pub certificate: Option<std::path::PathBuf>,
    /// `--plot FILE` draws bound propagation's enclosure of every step with runs simulated from
    /// Init: one variable against the step (`--plot-vars x`) or two in the state plane.
    #[command(flatten)]
    pub plot: crate::picture::PlotArgs,
}

pub fn run(a: &LtlArgs) -> CliResult {
    let limits = a.limits.limits();
    let budget = limits.budget(Spelling::Cli).map_err(driver_error)?;
    crate::output::check_output("--certificate", a.certificate.as_deref())?;
    crate::output::check_output("--plot", a.plot.plot.as_deref())?;
    let (sys, plant) = super::load_sampled(&a.system)?;
    let asked = Asked { formula: a.formula.as_deref(), property: a.property.as_deref(), k: a.k };
    if let Some(plant) = plant {
        return run_flow(a, &sys, &plant, asked, &budget);
    }
    let request = LtlRequest {
        method: a.method.clone(),
        bpt: a.bpt.clone(),
        depth: a.depth,
        adaptive: !a.no_adaptive,
        tighten: a.tighten.clone(),
    };
    let mut opts = request.options(&limits, Spelling::Cli).map_err(driver_error)?;
    let threads = limits.threads_or_cores(Spelling::Cli).map_err(driver_error)?;
    let (sys, phi, property) = super::asked_formula::<Ltl>(&a.system, &sys, asked)?;
    let picture = a.plot.target(&sys, true).map_err(driver_error)?;
    let bar = Arc::new(Bar::new(a.system.silent()));
    let engine_bar = bar.clone();
    opts.progress = Some(StageReport(Arc::new(move |stage: &str| engine_bar.update(None, stage))));
    let run =
        trestle_verify::temporal::ltl(&sys, &phi, &property, &opts, threads, &budget, &*bar).map_err(driver_error)?;
    drop(opts);
    drop(bar);
    write_certificate(a, run.certificate.as_ref(), || run.why_no_certificate(&sys))?;
    let mut result = run.result.clone();
    if let Some((path, view)) = picture {
        let title = format!("{} {}: {}", sys.name, property.name, result.verdict);
        if trestle_verify::picture::draw_ltl(&sys, &run, &title, &view, path).map_err(driver_error)? {
            result.artifacts.insert("plot".into(), path.display().to_string().into());
        } else {
            eprintln!("no picture drawn: bound propagation ran no enclosures (method {})", run.ltl.method);
        }
    }
    finish(a.system.json, &result)
}

/// `ltl` on a continuous-time system: `G<=k p` by bound propagation on the flow, refuted by a
/// validated run (`trestle_verify::flow_ltl`).
fn run_flow(a: &LtlArgs, sys: &System, plant: &SampledPlant, asked: Asked<'_>, budget: &Budget) -> CliResult {
    if !matches!(a.method.as_str(), "bpt" | "auto") {
        return Err(CliError::input(format!(
            "--method {}: a continuous-time system ([flow]) is decided by --method bpt alone",
            a.method
        )));
    }
    if a.k.is_some() || a.plot.plot.is_some() {
        return Err(CliError::input("--k and --plot are not available on a continuous-time system ([flow])"));
    }
    let (sys, phi, property) = super::asked_formula::<Ltl>(&a.system, sys, asked)?;
    let (bar, settings) = (Bar::new(a.system.silent()), trestle_verify::FlowSettings::default());
    let run = ltl_flow(&sys, plant, &phi, &property, settings, budget, &bar).map_err(driver_error)?;
    drop(bar);
    write_certificate(a, run.certificate.as_ref(), || trestle_verify::flow_ltl::NO_CERTIFICATE.into())?;
    finish(a.system.json, &run.result)
}

/// Writes the certificate of an exact proof where `--certificate` asks for one; without one, says
/// why on stderr.
fn write_certificate(a: &LtlArgs, cert: Option<&Value>, why: impl FnOnce() -> String) -> Result<(), CliError> {
    match (&a.certificate, cert) {
        (Some(path), Some(cert)) => return trestle_verify::write_json(path, cert).map_err(driver_error),
        (Some(_), None) => eprintln!("no certificate written: {}", why()),
        (None, _) => {}
    }
    Ok(())
}
