//! Reading a system file with `KEY=VALUE` overrides, as every front end does, with its lint
//! warnings (`trestle_ir::lint`): a continuous-time system's are those of the system with the
//! rates in place of the step.

use crate::error::DriverError;
use std::path::Path;
use trestle_config::Overrides;
use trestle_ir::System;
use trestle_ir::plant::SampledPlant;

/// A discrete-time system (a `[flow]` file is an input error) and its warnings.
pub fn system(path: &Path, set: &[String]) -> Result<(System, Vec<String>), DriverError> {
    let overrides = Overrides::parse(set).map_err(DriverError::input)?;
    let sys = trestle_config::load_system(path, &overrides).map_err(DriverError::input)?;
    let warnings = trestle_ir::lint::warnings(&sys);
    Ok((sys, warnings))
}

/// Any system: the system (whose step is the identity for a continuous-time one), its plant when
/// it has one, and its warnings.
pub fn sampled(path: &Path, set: &[String]) -> Result<(System, Option<SampledPlant>, Vec<String>), DriverError> {
    let overrides = Overrides::parse(set).map_err(DriverError::input)?;
    let (sys, plant) = trestle_config::load_sampled_system(path, &overrides).map_err(DriverError::input)?;
    let mut linted = sys.clone();
    if let Some(p) = &plant {
        for b in &mut linted.step.branches {
            b.updates = p.rates.clone();
        }
    }
    let warnings = trestle_ir::lint::warnings(&linted);
    Ok((sys, plant, warnings))
}

/// Refuses a system with warnings when `deny` (`--deny-warnings`): an input error naming them.
pub fn deny_warnings(path: &Path, warnings: &[String], deny: bool) -> Result<(), DriverError> {
    if deny && !warnings.is_empty() {
        let all = warnings.join("; ");
        return Err(DriverError::input(format!("{} has warnings and --deny-warnings is given: {all}", path.display())));
    }
    Ok(())
}
