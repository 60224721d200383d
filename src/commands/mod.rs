//! One module per command. Each returns an [`Outcome`](crate::Outcome) or a [`CliError`](crate::CliError).

mod arena;
mod bounds;
pub mod campaign;
pub mod cegar;
mod certify;
mod check;
pub mod ctl;
mod eval;
mod info;
pub mod ltl;
mod maze;
mod planning;
mod simulate;
mod spread;
mod suite;
pub mod synth;
pub mod verify;

use crate::args::{Command, SystemArgs};
use crate::{CliError, CliResult};
use trestle_ir::System;
use trestle_ir::plant::SampledPlant;
use trestle_verify::formula::{Asked, Logic};
use trestle_verify::options::Spelling;
use trestle_verify::temporal::Named;

pub fn run(command: Command) -> CliResult {
    match command {
        Command::Info(a) => info::run(&a),
        Command::Simulate(a) => simulate::run(&a),
        Command::Eval(a) => eval::run(&a),
        Command::Bounds(a) => bounds::run(&a),
        Command::Check(a) => check::run(&a),
        Command::Ctl(a) => ctl::run(&a),
        Command::Ltl(a) => ltl::run(&a),
        Command::Cegar(a) => cegar::run(&a),
        Command::Certify(a) => certify::run(&a),
        Command::Synth(a) => synth::run(&a),
        Command::Verify(a) => verify::run(&a),
        Command::Campaign(c) => campaign::run(c),
        Command::Suite(c) => suite::run(c),
        Command::Maze(c) => maze::run(c),
        Command::Arena(c) => arena::run(c),
        Command::Spread(c) => spread::run(c),
        Command::Planning(c) => planning::run(c),
    }
}

/// The formula a `ctl` or `ltl` command asks of `sys`, read from `args`'s file
/// (`trestle_verify::formula::asked`): a property with `--k` is read again from the file.
pub fn asked_formula<F: Logic>(
    args: &SystemArgs,
    sys: &System,
    asked: Asked<'_>,
) -> Result<(System, F, Named), CliError> {
    let reload = |horizon: String| {
        let set: Vec<String> = args.set.iter().cloned().chain([horizon]).collect();
        trestle_verify::load::sampled(&args.system, &set).map(|(sys, ..)| sys)
    };
    let file = args.system.display().to_string();
    trestle_verify::formula::asked(sys, &file, asked, reload, Spelling::Cli).map_err(crate::output::driver_error)
}

/// Loads the system file with its `--set` overrides; its warnings (`ir::lint`) go to stderr, or
/// end the command with `--deny-warnings`. A continuous-time system (`[flow]`) is refused (exit
/// 2): only `simulate`, `check`, `synth`, `certify` and `ltl` read those ([`load_sampled`]).
pub fn load(args: &SystemArgs) -> Result<System, CliError> {
    let (sys, warnings) = trestle_verify::load::system(&args.system, &args.set).map_err(crate::output::driver_error)?;
    report_warnings(args, &warnings)?;
    trestle_verify::process::set_system(&sys.name);
    Ok(sys)
}

/// Like [`load`], and a continuous-time system is read too: the system (whose step is then the
/// identity) and its plant.
pub fn load_sampled(args: &SystemArgs) -> Result<(System, Option<SampledPlant>), CliError> {
    let (sys, plant, warnings) =
        trestle_verify::load::sampled(&args.system, &args.set).map_err(crate::output::driver_error)?;
    report_warnings(args, &warnings)?;
    trestle_verify::process::set_system(&sys.name);
    Ok((sys, plant))
}

fn report_warnings(args: &SystemArgs, warnings: &[String]) -> Result<(), CliError> {
    trestle_verify::load::deny_warnings(&args.system, warnings, args.deny_warnings)
        .map_err(crate::output::driver_error)?;
    for w in warnings.iter().filter(|_| !args.quiet) {
        eprintln!("warning: {w}");
    }
    Ok(())
}
