//! `trestle check`: the compositional inductive-invariant check (and its baselines).

use crate::args::{CheckArgs, value_name};
use crate::output::{driver_error, finish};
use crate::{CliError, CliResult};
use trestle_verify::CheckOptions;
use trestle_verify::options::{CheckRequest, Spelling};

/// The engine configuration from the flags (defaults: the best measured configuration).
pub fn options(a: &CheckArgs) -> Result<CheckOptions, CliError> {
    let request = CheckRequest {
        method: value_name(&a.method),
        paper: a.paper,
        post: a.post.as_ref().map(value_name),
        linear_bridge: a.linear_bridge,
        no_linear_bridge: a.no_linear_bridge,
        split: a.split.as_ref().map(value_name),
        queue: a.queue.as_ref().map(value_name),
        max_splits: a.max_splits,
        smt_timeout: a.smt_timeout,
        min_width: a.min_width,
        no_fast_path: a.no_fast_path,
        no_search: a.no_search,
        exact_after: a.exact_after,
        no_exact_leaf: a.no_exact_leaf,
        dump_smt: a.dump_smt.clone(),
        synthesize_on_failure: a.synthesize_on_failure,
        flow_order: a.flow_order,
        flow_substeps: a.flow_substeps,
        flow_tolerance: a.flow_tolerance,
    };
    request.options(&a.limits.limits(), Spelling::Cli).map_err(driver_error)
}

/// `--timeout` bounds the whole run: loading, the check, and the synthesis after a failure get
/// what the earlier stages left.
pub fn run(a: &CheckArgs) -> CliResult {
    let budget = a.limits.limits().budget(Spelling::Cli).map_err(driver_error)?;
    let opts = options(a)?;
    crate::output::check_output("--certificate", a.certificate.as_deref())?;
    crate::output::check_output("--plot", a.plot.plot.as_deref())?;
    let (sys, plant) = super::load_sampled(&a.system)?;
    let picture = a.plot.target(&sys, false).map_err(driver_error)?;
    let progress = crate::progress::Bar::new(a.system.silent());
    let run = trestle_verify::check_sampled(&sys, plant.as_ref(), &opts, &budget, &progress).map_err(driver_error)?;
    drop(progress);
    let mut result = run.result.clone();
    if let Some(path) = &a.certificate {
        trestle_verify::write_json(path, &run.certificate_file(&sys)).map_err(driver_error)?;
        result.artifacts.insert("certificate".into(), path.display().to_string().into());
    }
    if let Some((path, view)) = picture {
        trestle_verify::picture::draw_check(&sys, &run, &view, path).map_err(driver_error)?;
        result.artifacts.insert("plot".into(), path.display().to_string().into());
    }
    finish(a.system.json, &result)
}
