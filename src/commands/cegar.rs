//! `trestle cegar`: safety of a discrete neural policy (guarded commands over bounded integers,
//! an argmax network over the labels) by policy predicate abstraction with CEGAR, or by the
//! bounded-model-checking and explicit-state baselines over the same IR.

use crate::CliResult;
use crate::args::{LimitArgs, SystemArgs, choices};
use crate::output::{driver_error, finish};
use trestle_verify::options::{self, CegarRequest, Spelling};

#[derive(clap::Args, Debug)]
pub struct CegarArgs {
    #[command(flatten)]
    pub system: SystemArgs,
    #[arg(long, value_parser = choices(options::CEGAR_METHODS), default_value = "cegar")]
    pub method: String,
    /// How policy spuriousness is refined (CEGAR).
    #[arg(long, value_parser = choices(options::CEGAR_REFINEMENTS), default_value = "ws")]
    pub refine: String,
    /// Breadth-first abstract search instead of greedy best-first by the Hamming heuristic.
    #[arg(long)]
    pub no_heuristic: bool,
    /// Recompute every abstract transition in every iteration (no reuse of edges and witnesses).
    #[arg(long)]
    pub no_incremental: bool,
    /// How the queries of CEGAR and BMC treat the network.
    #[arg(long, value_parser = choices(options::CEGAR_ENCODINGS), default_value = "lazy")]
    pub encoding: String,
    /// The deepest unrolling of --method bmc.
    #[arg(long, default_value_t = 100)]
    pub depth: usize,
    /// CEGAR, BMC and the explicit search each run on one thread: `--threads` (or `--jobs`) is
    /// accepted as by every deciding command (campaigns pass it to all), checked, and above 1
    /// draws a warning that it adds no thread (each CEGAR refinement needs the previous one's
    /// answer; BMC and the explicit search are not parallelised).
    #[command(flatten)]
    pub limits: LimitArgs,
}

pub fn run(a: &CegarArgs) -> CliResult {
    let limits = a.limits.limits();
    let budget = limits.budget(Spelling::Cli).map_err(driver_error)?;
    if let Some(n) = limits.threads(Spelling::Cli).map_err(driver_error)?
        && n > 1
        && !a.system.silent()
    {
        eprintln!("warning: cegar runs on one thread: --{} {n} adds none", limits.threads_flag);
    }
    let request = CegarRequest {
        method: a.method.clone(),
        refine: a.refine.clone(),
        heuristic: !a.no_heuristic,
        incremental: !a.no_incremental,
        encoding: a.encoding.clone(),
        depth: a.depth,
    };
    let method = request.method(Spelling::Cli).map_err(driver_error)?;
    let sys = super::load(&a.system)?;
    let run = trestle_verify::cegar::cegar(&sys, &method, &budget).map_err(driver_error)?;
    finish(a.system.json, &run.result)
}
