//! `trestle synth`: find an inductive invariant (a union of boxes inside Safe containing Init)
//! and prove it with the bridge engine, or a run from Init that leaves Safe.

use crate::CliResult;
use crate::args::{LimitArgs, SystemArgs};
use crate::output::{driver_error, finish};
use std::path::Path;
use trestle_verify::options::{Spelling, SynthRequest};
use trestle_verify::picture::View;

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
    #[command(flatten)]
    pub proof: crate::picture::ProofArgs,
    /// Sampled-data systems (`[flow]`): prove Safe forever by a reach chain of zonotopes into a
    /// terminal box that returns into itself (its certificate re-checked by `certify`).
    #[arg(long)]
    pub reach: bool,
    #[command(flatten)]
    pub flow: crate::args::FlowArgs,
    /// --reach: half-sides of the terminal box around the f64 run's attractor, tried in this
    /// order (default 0.5,0.2,0.1,0.05,0.02,0.01,0.005,0.002,0.001,0.0005).
    #[arg(long, value_name = "R,R,..", value_delimiter = ',', requires = "reach")]
    pub reach_margins: Option<Vec<f64>>,
    /// --reach: the most chains, i.e. pieces of Init (default 512).
    #[arg(long, value_name = "N", requires = "reach")]
    pub reach_max_chains: Option<usize>,
    /// --reach: generators per state variable each period's zonotope keeps (default 12; stored
    /// in the certificate).
    #[arg(long, value_name = "N", requires = "reach")]
    pub reach_generators: Option<usize>,
}

/// The request the flags make.
fn request(a: &SynthArgs) -> SynthRequest {
    SynthRequest {
        resolution: a.resolution,
        max_boxes: a.max_boxes,
        min_width: a.min_width,
        forward: a.forward,
        full: a.full,
        attack_steps: a.attack_steps,
        smt_timeout: a.proof.smt_timeout,
        flow_order: a.flow.flow_order,
        flow_substeps: a.flow.flow_substeps,
        flow_tolerance: a.flow.flow_tolerance,
        reach_margins: a.reach_margins.clone(),
        reach_max_chains: a.reach_max_chains,
        reach_generators: a.reach_generators,
    }
}

pub fn run(a: &SynthArgs) -> CliResult {
    let budget = a.limits.limits().budget(Spelling::Cli).map_err(driver_error)?;
    let request = request(a);
    let cfg = request.config(&a.limits.limits(), Spelling::Cli).map_err(driver_error)?;
    a.proof.check_outputs()?;
    let (sys, plant) = super::load_sampled(&a.system)?;
    let picture = a.proof.plot.target(&sys, false).map_err(driver_error)?;
    let progress = crate::progress::Bar::new(a.system.silent());
    let flow = request.flow(Spelling::Cli).map_err(driver_error)?;
    if a.reach {
        let settings = request.reach(Spelling::Cli).map_err(driver_error)?;
        let reach = trestle_verify::flow_forever::synth_reach(&sys, plant.as_ref(), flow, &settings, &budget);
        let (result, cert) = reach.map_err(driver_error)?;
        let result = match cert {
            Some(cert) => a.proof.write(result, || cert, None, |_, _| Ok(()))?,
            None => result,
        };
        return finish(a.system.json, &result);
    }
    let run = trestle_verify::synthesize_sampled(&sys, plant.as_ref(), &flow, &cfg, &budget, &progress)
        .map_err(driver_error)?;
    drop(progress);
    let draw = |path: &Path, view: &View| trestle_verify::picture::draw_synth(&sys, &run, view, path);
    let result = a.proof.write(run.result.clone(), || run.certificate_file(&sys), picture, draw)?;
    finish(a.system.json, &result)
}
