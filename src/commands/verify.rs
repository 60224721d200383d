//! `trestle verify`: every property of a system (or the named ones), each with the engines its
//! kind calls for (see `trestle_verify::properties`), one `trestle-result/1` result each.
//!
//! Exit code: 4 when a property met an internal error (every result is still printed), else 1
//! when any property is refuted, 3 when any other is not proven (evidence, unknown, unsupported),
//! 0 when all are proven.

use crate::args::{LimitArgs, SystemArgs};
use crate::output::{driver_error, print_json};
use crate::{CliResult, Outcome};
use serde_json::json;
use trestle_core::Unknown;
use trestle_verify::options::{Spelling, VerifyRequest};
use trestle_verify::properties::{Verification, undecided, verify};

#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub system: SystemArgs,
    /// Verify only this property (repeatable). Default: every `[[property]]` of the file.
    #[arg(long = "property", value_name = "NAME")]
    pub properties: Vec<String>,
    /// `--timeout` bounds the whole run (properties not decided by then are unknown);
    /// `--threads` are each engine's.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Wall-clock limit per property, in seconds.
    #[arg(long)]
    pub property_timeout: Option<f64>,
}

pub fn run(a: &VerifyArgs) -> CliResult {
    let limits = a.limits.limits();
    let budget = limits.budget(Spelling::Cli).map_err(driver_error)?;
    let request = VerifyRequest { properties: a.properties.clone(), property_timeout: a.property_timeout };
    let opts = request.options(&limits, Spelling::Cli).map_err(driver_error)?;
    let sys = super::load(&a.system)?;
    let asked = trestle_verify::properties::asked(&sys, &opts.properties).map_err(driver_error)?;
    trestle_verify::process::set_rows(asked.iter().map(|p| undecided(&sys.name, p, &Unknown::Timeout)).collect());
    let progress = crate::progress::Bar::new(a.system.silent());
    let v = verify(&sys, &opts, &budget, &progress).map_err(driver_error)?;
    drop(progress);
    if a.system.json {
        print_json(&json!({ "system": v.system, "results": v.results }));
    } else {
        print!("{}", trestle_verify::render::verification(&v.system, &v.results));
    }
    if !v.internal_errors.is_empty() {
        for e in &v.internal_errors {
            eprintln!("error: {e}");
        }
        return Ok(Outcome::Internal);
    }
    Ok(crate::output::outcome(Verification::worst(&v.results)))
}
