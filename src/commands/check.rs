//! `trestle check`: the compositional inductive-invariant check (and its baselines).

use crate::args::CheckArgs;
use crate::output::{driver_error, finish};
use crate::{CliError, CliResult};
use std::path::Path;
use trestle_verify::CheckOptions;
use trestle_verify::options::{CheckRequest, Spelling};
use trestle_verify::picture::View;

/// The engine configuration from the flags (defaults: the best measured configuration).
pub fn options(a: &CheckArgs) -> Result<CheckOptions, CliError> {
    let request = CheckRequest {
        method: a.method.clone(),
        paper: a.paper,
        post: a.post.clone(),
        linear_bridge: a.linear_bridge,
        no_linear_bridge: a.no_linear_bridge,
        split: a.split.clone(),
        queue: a.queue.clone(),
        max_splits: a.max_splits,
        smt_timeout: a.proof.smt_timeout,
        min_width: a.min_width,
        no_fast_path: a.no_fast_path,
        no_search: a.no_search,
        exact_after: a.exact_after,
        no_exact_leaf: a.no_exact_leaf,
        dump_smt: a.dump_smt.clone(),
        synthesize_on_failure: a.synthesize_on_failure,
        flow_order: a.flow.flow_order,
        flow_substeps: a.flow.flow_substeps,
        flow_tolerance: a.flow.flow_tolerance,
    };
    request.options(&a.limits.limits(), Spelling::Cli).map_err(driver_error)
}

/// `--timeout` bounds the whole run: loading, the check, and the synthesis after a failure get
/// what the earlier stages left.
pub fn run(a: &CheckArgs) -> CliResult {
    let budget = a.limits.limits().budget(Spelling::Cli).map_err(driver_error)?;
    let opts = options(a)?;
    a.proof.check_outputs()?;
    let (sys, plant) = super::load_sampled(&a.system)?;
    let picture = a.proof.plot.target(&sys, false).map_err(driver_error)?;
    let progress = crate::progress::Bar::new(a.system.silent());
    let run = trestle_verify::check_sampled(&sys, plant.as_ref(), &opts, &budget, &progress).map_err(driver_error)?;
    drop(progress);
    let draw = |path: &Path, view: &View| trestle_verify::picture::draw_check(&sys, &run, view, path);
    let result = a.proof.write(run.result.clone(), || run.certificate_file(&sys), picture, draw)?;
    finish(a.system.json, &result)
}
