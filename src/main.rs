//! `trestle`: the command-line front end. Thin glue: parse arguments, load the system, call an
//! engine crate, print the result (text or one JSON object), exit with a documented code.
//!
//! Exit codes:
//! - 0: proven / done (the property holds, the command succeeded)
//! - 1: refuted (a replayed counterexample is printed)
//! - 2: input error (bad arguments, malformed system file, missing or unsupported model)
//! - 3: unknown (a limit was reached before a verdict; nothing is claimed)
//! - 4: internal error (a bug: never turned into a verdict)

mod args;
mod commands;
mod output;

use clap::Parser;
use std::process::ExitCode;

/// How a command ended; mapped to the exit codes above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Done,
    Refuted,
    Unknown,
}

/// An error that ends the command, with the exit code it maps to.
#[derive(Debug)]
pub enum CliError {
    Input(anyhow::Error),
    Internal(anyhow::Error),
}

impl<E: Into<anyhow::Error>> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError::Input(e.into())
    }
}

pub type CliResult = Result<Outcome, CliError>;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    let json = cli.command.json();
    let result = std::panic::catch_unwind(|| commands::run(cli.command));
    let result = match result {
        Ok(r) => r,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(CliError::Internal(anyhow::anyhow!("internal error (a bug in trestle, please report it): {msg}")))
        }
    };
    match result {
        Ok(Outcome::Done) => ExitCode::from(0),
        Ok(Outcome::Refuted) => ExitCode::from(1),
        Ok(Outcome::Unknown) => ExitCode::from(3),
        Err(CliError::Input(e)) => {
            output::report_error(json, "input", &e);
            ExitCode::from(2)
        }
        Err(CliError::Internal(e)) => {
            output::report_error(json, "internal", &e);
            ExitCode::from(4)
        }
    }
}
