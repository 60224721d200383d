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
use trestle_config::Overrides;
use trestle_ir::System;
use trestle_ir::parse::SimpleScope;
use trestle_ir::plant::SampledPlant;
use trestle_ir::system::{Property, PropertyFormula};

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

/// The command's name and `--timeout`, for the process's [`crate::interrupt::backstop`].
pub fn time_limit(command: &Command) -> Option<(&'static str, Option<f64>)> {
    Some(match command {
        Command::Check(a) => ("check", a.limits.timeout),
        Command::Synth(a) => ("synth", a.limits.timeout),
        Command::Verify(a) => ("verify", a.limits.timeout),
        Command::Ctl(a) => ("ctl", a.limits.timeout),
        Command::Ltl(a) => ("ltl", a.limits.timeout),
        Command::Cegar(a) => ("cegar", a.limits.timeout),
        Command::Simulate(a) => ("simulate", a.limits.timeout),
        _ => return None,
    })
}

/// The names a `--formula` may use: the system's constants and state variables, and `k` when
/// `--k` gives it.
pub fn formula_scope(sys: &System, k: Option<u32>) -> Result<SimpleScope, CliError> {
    // Its one error is about `k`, which the command line gives as `--k`.
    trestle_verify::temporal::formula_scope(sys, k).map_err(|e| CliError::input(format!("--{e}")))
}

/// The system with its property `name` (re-read with `property.N.k=K` when `k` is given) and
/// the property's index.
pub fn load_property(args: &SystemArgs, name: &str, k: Option<u32>) -> Result<(System, usize), CliError> {
    let sys = load(args)?;
    let Some(index) = sys.properties.iter().position(|p| p.name == name) else {
        let known: Vec<&str> = sys.properties.iter().map(|p| p.name.as_str()).collect();
        return Err(CliError::input(format!(
            "no property '{name}' in {} (properties: {})",
            args.system.display(),
            if known.is_empty() { "none".into() } else { known.join(", ") }
        )));
    };
    match k {
        None => Ok((sys, index)),
        Some(_) if sys.properties[index].horizon.is_none() => Err(CliError::input(format!(
            "--k: property '{name}' has no horizon parameter (give it `k = ..` in the file and use k in its formula)"
        ))),
        Some(k) => {
            let mut args = args.clone();
            args.set.push(format!("property.{index}.k={k}"));
            Ok((load(&args)?, index))
        }
    }
}

/// The temporal formula a command checks, with the system and the formula's name and text: the
/// `--formula` text read by `parse`, or the property `name` when `pick` finds a formula of the
/// command's logic (`what` names it in the error: "a CTL formula (`ctl = ..`)").
#[allow(clippy::too_many_arguments)]
pub fn temporal_formula<F: Clone>(
    system: &SystemArgs,
    property: Option<&str>,
    formula: Option<&str>,
    k: Option<u32>,
    parse: impl Fn(&str, &SimpleScope) -> Result<F, trestle_ir::parse::ParseError>,
    pick: impl Fn(&PropertyFormula) -> Option<&F>,
    what: &str,
) -> Result<(System, F, String, String), CliError> {
    if let Some(text) = formula {
        let sys = load(system)?;
        let scope = formula_scope(&sys, k)?;
        let phi = parse(text, &scope).map_err(|e| CliError::input(format!("--formula: {e}")))?;
        return Ok((sys, phi, "formula".into(), text.to_string()));
    }
    let name = property.expect("clap requires --property or --formula");
    let (sys, index) = load_property(system, name, k)?;
    let p = &sys.properties[index];
    let phi = pick(&p.formula).ok_or_else(|| CliError::input(format!("property '{name}' is not {what}")))?;
    Ok((sys.clone(), phi.clone(), name.to_string(), property_text(p)))
}

/// A property's formula as written, with the horizon it was read with.
pub fn property_text(p: &Property) -> String {
    match p.horizon {
        Some(k) => format!("{} (k = {k})", p.text),
        None => p.text.clone(),
    }
}

/// Loads the system file with its `--set` overrides; its warnings (`ir::lint`) go to stderr, or
/// end the command with `--deny-warnings`. A continuous-time system (`[flow]`) is refused (exit
/// 2): only `simulate`, `check`, `synth`, `certify` and `ltl` read those ([`load_sampled`]).
pub fn load(args: &SystemArgs) -> Result<System, CliError> {
    let overrides = Overrides::parse(&args.set).map_err(|e| CliError::Input(anyhow::anyhow!(e)))?;
    let sys = trestle_config::load_system(&args.system, &overrides).map_err(|e| CliError::Input(e.into()))?;
    report_warnings(args, &trestle_ir::lint::warnings(&sys))?;
    crate::interrupt::set_system(&sys.name);
    Ok(sys)
}

/// Like [`load`], and a continuous-time system is read too: the system (whose step is then the
/// identity) and its plant. Its warnings are those of the system with the rates in place of
/// the step.
pub fn load_sampled(args: &SystemArgs) -> Result<(System, Option<SampledPlant>), CliError> {
    let overrides = Overrides::parse(&args.set).map_err(|e| CliError::Input(anyhow::anyhow!(e)))?;
    let (sys, plant) =
        trestle_config::load_sampled_system(&args.system, &overrides).map_err(|e| CliError::Input(e.into()))?;
    let mut linted = sys.clone();
    if let Some(p) = &plant {
        for b in &mut linted.step.branches {
            b.updates = p.rates.clone();
        }
    }
    report_warnings(args, &trestle_ir::lint::warnings(&linted))?;
    crate::interrupt::set_system(&sys.name);
    Ok((sys, plant))
}

fn report_warnings(args: &SystemArgs, warnings: &[String]) -> Result<(), CliError> {
    if args.deny_warnings && !warnings.is_empty() {
        return Err(CliError::input(format!(
            "{} has warnings and --deny-warnings is given: {}",
            args.system.display(),
            warnings.join("; ")
        )));
    }
    if !args.quiet {
        for w in warnings {
            eprintln!("warning: {w}");
        }
    }
    Ok(())
}
