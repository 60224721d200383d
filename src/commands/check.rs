//! `trestle check`: the compositional inductive-invariant check (and its baselines).

use crate::args::{CheckArgs, CheckMethodArg};
use crate::output::{driver_error, finish};
use crate::{CliError, CliResult};
use trestle_core::Budget;
use trestle_verify::{CheckMethod, CheckOptions};

/// The engine configuration from the flags (defaults: the best measured configuration).
pub fn options(a: &CheckArgs) -> Result<CheckOptions, CliError> {
    let mut c = if a.paper { trestle_bridge::Config::paper() } else { trestle_bridge::Config::default() };
    if let Some(p) = a.post {
        c.post = p.method();
    }
    if a.no_linear_bridge {
        c.linear_bridge = false;
    } else if a.linear_bridge {
        c.linear_bridge = true;
    }
    if let Some(s) = a.split {
        c.split = s.into();
    }
    if let Some(q) = a.queue {
        c.queue = q.into();
    }
    if let Some(t) = a.threads {
        c.threads = super::threads(t)?;
    }
    if let Some(m) = a.max_splits {
        c.max_splits = m;
    }
    if let Some(t) = a.smt_timeout {
        c.smt_timeout = super::seconds(t, "--smt-timeout")?;
    }
    if let Some(w) = a.min_width {
        if !(w > 0.0 && w < 1.0) {
            return Err(CliError::input("--min-width must be in (0, 1)"));
        }
        c.min_width = w;
    }
    c.fast_path &= !a.no_fast_path;
    c.search &= !a.no_search;
    if a.exact_after.is_some() {
        c.exact_after = a.exact_after;
    }
    if a.no_exact_leaf {
        c.exact_after = None;
    }
    c.dump_smt = a.dump_smt.clone();
    let method = match a.method {
        CheckMethodArg::Bridge => CheckMethod::Bridge,
        CheckMethodArg::Monolithic => CheckMethod::Monolithic,
        CheckMethodArg::Milp => CheckMethod::Milp,
    };
    Ok(CheckOptions { method, bridge: c, synthesize_on_failure: a.synthesize_on_failure })
}

/// `--timeout` bounds the whole run: loading, the check, and the synthesis after a failure get
/// what the earlier stages left.
pub fn run(a: &CheckArgs) -> CliResult {
    let budget = Budget::new(a.timeout.map(|t| super::seconds(t, "--timeout")).transpose()?);
    let opts = options(a)?;
    crate::output::check_output("--certificate", a.certificate.as_deref())?;
    crate::output::check_output("--plot", a.plot.plot.as_deref())?;
    let sys = super::load(&a.system)?;
    let picture = a.plot.target(&sys, false).map_err(driver_error)?;
    let progress = crate::progress::Bar::new(a.system.silent());
    let run = trestle_verify::check(&sys, &opts, &budget, &progress).map_err(driver_error)?;
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
