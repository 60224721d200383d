//! `trestle synth`: find an inductive invariant (a union of boxes inside Safe containing Init)
//! and prove it with the bridge engine, or a run from Init that leaves Safe.

use crate::args::{LimitArgs, SystemArgs};
use crate::output::{driver_error, finish};
use crate::{CliError, CliResult};
use std::path::PathBuf;
use trestle_synth::SynthConfig;
use trestle_verify::options::{Spelling, SynthRequest};

#[derive(clap::Args, Debug)]
pub struct SynthArgs {
    #[command(flatten)]
    pub system: SystemArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Cells per dimension of the initial grid over Safe (default 8, fewer in high dimension;
    /// cells are refined where needed).
    #[arg(long)]
    pub resolution: Option<usize>,
    /// Most boxes the partition may hold (default 50000).
    #[arg(long)]
    pub max_boxes: Option<usize>,
    /// Smallest cell width, as a fraction of Safe's extent, that is still split (default 1/4096).
    #[arg(long)]
    pub min_width: Option<f64>,
    /// Search forward from Init (reachable boxes until closure) instead of the greatest fixed
    /// point inside Safe.
    #[arg(long, conflicts_with = "full")]
    pub forward: bool,
    /// Compute the greatest fixed point over all of Safe (the largest invariant of boxes), not
    /// only over what Init reaches.
    #[arg(long)]
    pub full: bool,
    /// Steps simulated from Init when searching for a run that leaves Safe (default 200).
    #[arg(long)]
    pub attack_steps: Option<usize>,
    /// Per-query Z3 time limit of the proof, in seconds.
    #[arg(long)]
    pub smt_timeout: Option<f64>,
    /// Write the proof certificate (re-check it with `trestle certify`), or the outcome.
    #[arg(long, value_name = "FILE")]
    pub certificate: Option<PathBuf>,
    #[command(flatten)]
    pub plot: crate::picture::PlotArgs,
    /// Sampled-data systems (`[flow]`): prove Safe forever by a reach chain of zonotopes into a
    /// terminal box that returns into itself (its certificate re-checked by `certify`).
    #[arg(long)]
    pub reach: bool,
}

/// The synthesis configuration from the flags.
pub fn config(a: &SynthArgs) -> Result<SynthConfig, CliError> {
    let request = SynthRequest {
        resolution: a.resolution,
        max_boxes: a.max_boxes,
        min_width: a.min_width,
        forward: a.forward,
        full: a.full,
        attack_steps: a.attack_steps,
        smt_timeout: a.smt_timeout,
    };
    request.config(&a.limits.limits(), Spelling::Cli).map_err(driver_error)
}

pub fn run(a: &SynthArgs) -> CliResult {
    let budget = a.limits.limits().budget(Spelling::Cli).map_err(driver_error)?;
    let cfg = config(a)?;
    crate::output::check_output("--certificate", a.certificate.as_deref())?;
    crate::output::check_output("--plot", a.plot.plot.as_deref())?;
    let (sys, plant) = super::load_sampled(&a.system)?;
    let picture = a.plot.target(&sys, false).map_err(driver_error)?;
    let progress = crate::progress::Bar::new(a.system.silent());
    let flow = trestle_verify::FlowSettings::default();
    if a.reach && plant.is_none() {
        return Err(driver_error(trestle_verify::DriverError::input("--reach needs a sampled-data system ([flow])")));
    }
    if let (true, Some(plant)) = (a.reach, plant.as_ref()) {
        let (mut result, cert) =
            trestle_verify::flow_forever::synth_reach(&sys, plant, flow, &budget).map_err(driver_error)?;
        if let (Some(path), Some(cert)) = (&a.certificate, cert) {
            trestle_verify::write_json(path, &cert).map_err(driver_error)?;
            result.artifacts.insert("certificate".into(), path.display().to_string().into());
        }
        return finish(a.system.json, &result);
    }
    let run = trestle_verify::synthesize_sampled(&sys, plant.as_ref(), &flow, &cfg, &budget, &progress)
        .map_err(driver_error)?;
    drop(progress);
    let mut result = run.result.clone();
    if let Some(path) = &a.certificate {
        trestle_verify::write_json(path, &run.certificate_file(&sys)).map_err(driver_error)?;
        result.artifacts.insert("certificate".into(), path.display().to_string().into());
    }
    if let Some((path, view)) = picture {
        trestle_verify::picture::draw_synth(&sys, &run, &view, path).map_err(driver_error)?;
        result.artifacts.insert("plot".into(), path.display().to_string().into());
    }
    finish(a.system.json, &result)
}
