//! `trestle ctl`: bounded CTL (a property of the file or a formula) with the compositional or
//! monolithic MILP engine or the explicit exact engine.

use crate::CliResult;
use crate::args::{LimitArgs, SystemArgs, choices};
use crate::output::{driver_error, finish};
use crate::progress::Bar;
use std::sync::Arc;
use trestle_ir::formula::Ctl;
use trestle_verify::Progress;
use trestle_verify::formula::Asked;
use trestle_verify::options::{self, CtlRequest, Spelling};

#[derive(clap::Args, Debug)]
pub struct CtlArgs {
    #[command(flatten)]
    pub system: SystemArgs,
    /// A property of the system file (a `[[property]]` with `ctl = ..`).
    #[arg(long, conflicts_with = "formula", required_unless_present = "formula")]
    pub property: Option<String>,
    /// A formula, e.g. "AX^3 (h > 100 or h < -100)"; it may use `k` when --k is given.
    #[arg(long)]
    pub formula: Option<String>,
    /// The horizon `k` of a property defined with one (or of --formula).
    #[arg(long)]
    pub k: Option<u32>,
    /// auto (default), compositional, monolithic or explicit.
    #[arg(long, value_parser = choices(options::CTL_METHODS), default_value = "auto")]
    pub method: String,
    /// `--threads` (or `--jobs`) solve the compositional method's MILPs.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Sub-boxes per network input box for the big-M bounds (tighter with more, each bounded
    /// with CROWN; default 16 monolithic, 1 compositional).
    #[arg(long)]
    pub pieces: Option<usize>,
}

pub fn run(a: &CtlArgs) -> CliResult {
    let asked = Asked { formula: a.formula.as_deref(), property: a.property.as_deref(), k: a.k };
    let (sys, phi, property) = super::asked_formula::<Ctl>(&a.system, &super::load(&a.system)?, asked)?;
    let limits = a.limits.limits();
    let request = CtlRequest { method: a.method.clone(), pieces: a.pieces };
    let mut opts = request.options(&limits, Spelling::Cli).map_err(driver_error)?;
    let budget = limits.budget(Spelling::Cli).map_err(driver_error)?;
    let bar = Arc::new(Bar::new(a.system.silent()));
    let engine_bar = bar.clone();
    opts.progress = Some(Arc::new(move |s: &trestle_ctl::CtlStats| {
        engine_bar.update(
            None,
            &format!("{} MILPs built, {} solved, {} pruned", s.milps_built, s.milps_solved, s.milps_pruned),
        );
    }));
    let run = trestle_verify::temporal::ctl(&sys, &phi, &property, &opts, &budget, &*bar).map_err(driver_error)?;
    drop(opts);
    drop(bar);
    finish(a.system.json, &run.result)
}
