//! `trestle cegar`: safety of a discrete neural policy (guarded commands over bounded integers,
//! an argmax network over the labels) by policy predicate abstraction with CEGAR, or by the
//! bounded-model-checking and explicit-state baselines over the same IR.

use crate::CliResult;
use crate::args::{LimitArgs, SystemArgs, value_name};
use crate::output::{driver_error, finish};
use trestle_verify::options::{CegarRequest, Spelling};

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodArg {
    /// Policy predicate abstraction refined by CEGAR (proves and refutes).
    Cegar,
    /// Bounded model checking: the network copied per step, loop-free paths (complete once no
    /// loop-free path of the current length exists).
    Bmc,
    /// Breadth-first search of the concrete states reachable under the policy (the oracle).
    Explicit,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefineArg {
    /// Witness splitting: separate the spurious state from the abstract edge's witness.
    Ws,
    /// Concretisation exclusion: separate the spurious state from every other state.
    Ce,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodingArg {
    /// Z3 decides the linear part; the network runs exactly on Z3's proposals, and boxes where a
    /// label provably loses (outward-rounded CROWN bounds) are excluded.
    Lazy,
    /// The network inside every Z3 query, ReLUs as `ite` (the paper's encoding; slow).
    Z3,
}

#[derive(clap::Args, Debug)]
pub struct CegarArgs {
    #[command(flatten)]
    pub system: SystemArgs,
    #[arg(long, value_enum, default_value_t = MethodArg::Cegar)]
    pub method: MethodArg,
    /// How policy spuriousness is refined (CEGAR).
    #[arg(long, value_enum, default_value_t = RefineArg::Ws)]
    pub refine: RefineArg,
    /// Breadth-first abstract search instead of greedy best-first by the Hamming heuristic.
    #[arg(long)]
    pub no_heuristic: bool,
    /// Recompute every abstract transition in every iteration (no reuse of edges and witnesses).
    #[arg(long)]
    pub no_incremental: bool,
    /// How the queries of CEGAR and BMC treat the network.
    #[arg(long, value_enum, default_value_t = EncodingArg::Lazy)]
    pub encoding: EncodingArg,
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
        method: value_name(&a.method),
        refine: value_name(&a.refine),
        heuristic: !a.no_heuristic,
        incremental: !a.no_incremental,
        encoding: value_name(&a.encoding),
        depth: a.depth,
    };
    let method = request.method(Spelling::Cli).map_err(driver_error)?;
    let sys = super::load(&a.system)?;
    let run = trestle_verify::cegar::cegar(&sys, &method, &budget).map_err(driver_error)?;
    finish(a.system.json, &run.result)
}
