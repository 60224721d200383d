//! `trestle cegar`: safety of a discrete neural policy (guarded commands over bounded integers,
//! an argmax network over the labels) by policy predicate abstraction with CEGAR, or by the
//! bounded-model-checking and explicit-state baselines over the same IR.

use crate::args::SystemArgs;
use crate::output::{driver_error, finish};
use crate::{CliError, CliResult};
use trestle_cegar::bmc::BmcOptions;
use trestle_cegar::explicit::ExplicitOptions;
use trestle_cegar::{CegarOptions, PolicyEncoding, Refine};
use trestle_core::Budget;
use trestle_verify::cegar::CegarMethod;

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
    /// Wall-clock limit, in seconds (verdict unknown when reached).
    #[arg(long)]
    pub timeout: Option<f64>,
}

pub fn run(a: &CegarArgs) -> CliResult {
    let budget = Budget::new(a.timeout.map(|t| super::seconds(t, "--timeout")).transpose()?);
    if a.depth == 0 || a.depth > 100_000 {
        return Err(CliError::input("--depth must be between 1 and 100000"));
    }
    let encoding = match a.encoding {
        EncodingArg::Lazy => PolicyEncoding::Lazy,
        EncodingArg::Z3 => PolicyEncoding::Z3,
    };
    let method = match a.method {
        MethodArg::Cegar => CegarMethod::Cegar(CegarOptions {
            refine: match a.refine {
                RefineArg::Ws => Refine::WitnessSplit,
                RefineArg::Ce => Refine::ConcretisationExclusion,
            },
            heuristic: !a.no_heuristic,
            incremental: !a.no_incremental,
            encoding,
        }),
        MethodArg::Bmc => CegarMethod::Bmc(BmcOptions { max_depth: a.depth, encoding }),
        MethodArg::Explicit => CegarMethod::Explicit(ExplicitOptions::default()),
    };
    let sys = super::load(&a.system)?;
    let run = trestle_verify::cegar::cegar(&sys, &method, &budget).map_err(driver_error)?;
    finish(a.system.json, &run.result)
}
