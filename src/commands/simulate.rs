//! `trestle simulate`: concrete runs of the closed loop, in exact arithmetic by default
//! (`trestle_verify::simulate`); this module reads the flags' text and prints the runs.

use crate::args::SimulateArgs;
use crate::output::{driver_error, print_json};
use crate::{CliResult, Outcome};
use trestle_verify::options::Spelling;
use trestle_verify::simulate::{SimulateOptions, simulate};

pub fn run(a: &SimulateArgs) -> CliResult {
    let limits = a.limits.limits();
    let budget = limits.budget(Spelling::Cli).map_err(driver_error)?;
    limits.threads(Spelling::Cli).map_err(driver_error)?;
    let (sys, plant) = super::load_sampled(&a.system)?;
    let opts = SimulateOptions {
        steps: a.steps,
        runs: a.runs,
        seed: a.seed,
        float: a.float,
        plant,
        budget,
        ..Default::default()
    }
    .with_text(a.from.as_deref(), a.nondet.as_deref(), a.branch.as_deref())
    .map_err(driver_error)?;
    let runs = simulate(&sys, &opts).map_err(driver_error)?;
    trestle_verify::process::answered();
    let limit = trestle_verify::simulate::limit(&opts, &runs);
    if trestle_verify::simulate::is_enclosed(&sys, &opts) && !a.system.json {
        println!("{}", trestle_verify::simulate::ENCLOSED_NOTE);
    }
    if a.system.json {
        print_json(&trestle_verify::simulate::to_json(&sys, &opts, &runs));
    } else {
        for (i, r) in runs.iter().enumerate() {
            if a.runs > 1 {
                println!("run {i}:");
            }
            print!("{}", trestle_verify::render::run_table(r, &sys));
            if let Some(reason) = &r.stopped {
                println!("stopped after {} steps: {reason}", r.steps.len());
            }
        }
        if let Some(stop) = limit {
            let done = trestle_verify::simulate::done(&opts, &runs);
            println!("unknown: {stop}: {done} done");
        }
    }
    Ok(if limit.is_some() { Outcome::Unknown } else { Outcome::Done })
}
