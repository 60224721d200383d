//! `trestle`: the command-line front end. Thin glue: parse arguments, load the system, call an
//! engine crate, print the result (text or one JSON object), exit with a documented code.
//!
//! Exit codes:
//! - 0: proven / done (the property holds, the command succeeded)
//! - 1: refuted (a replayed counterexample is printed); for `certify`: the certificate is rejected
//!   (a check failed or could not be confirmed; it proves nothing, about the system either way)
//! - 2: input error (bad arguments, malformed system file, missing or unsupported model; for
//!   `certify`, a file that is not a well-formed certificate of this system)
//! - 3: unknown (a limit was reached before a verdict, or only floating-point MILP evidence:
//!   `safe-by-milp-evidence`; nothing is claimed). Running out of memory is such a limit: a Z3
//!   context or a thread that cannot be created for want of memory ends the run with the message
//!   "out of memory: ..." (with `--json`, the error object of kind `out-of-memory`), exit 3
//! - 4: internal error (a bug: never turned into a verdict)
//! - 128 + signal (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP): interrupted; nothing is
//!   claimed, and no result file is left half-written (see `trestle_verify::process`)

mod args;
mod commands;
mod output;
mod picture;
mod progress;

use clap::Parser;
use clap::error::ErrorKind;
use std::process::ExitCode;
use trestle_verify::process::PanicReport;

/// How a command ended; mapped to the exit codes above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Done,
    Refuted,
    Unknown,
    /// Results were printed, but some part met an internal error (already reported on stderr):
    /// exit 4.
    Internal,
}

/// An error that ends the command, with the exit code it maps to.
#[derive(Debug)]
pub enum CliError {
    Input(anyhow::Error),
    Internal(anyhow::Error),
}

impl CliError {
    /// An input error with a message of its own (bad flags, bad values).
    pub fn input(msg: impl std::fmt::Display) -> CliError {
        CliError::Input(anyhow::anyhow!("{msg}"))
    }
}

pub type CliResult = Result<Outcome, CliError>;

fn main() -> ExitCode {
    // Die quietly on a closed pipe (`trestle ... | head`), like other command-line tools.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    trestle_verify::process::panic_hook();
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return argument_error(e),
    };
    let (json, limit) = cli.command.output_and_limit();
    trestle_verify::process::install(json);
    if let Some((name, timeout)) = limit {
        trestle_verify::process::backstop(timeout, json, name);
    }
    let result = std::panic::catch_unwind(|| commands::run(cli.command));
    let result = match result {
        Ok(r) => r,
        Err(panic) => match trestle_verify::process::panic_report(&*panic) {
            PanicReport::OutOfMemory(message) => {
                output::report_error(json, "out-of-memory", &anyhow::anyhow!(message));
                return ExitCode::from(3);
            }
            PanicReport::Internal(message) => Err(CliError::Internal(anyhow::anyhow!(message))),
        },
    };
    match result {
        Ok(Outcome::Done) => ExitCode::from(0),
        Ok(Outcome::Refuted) => ExitCode::from(1),
        Ok(Outcome::Unknown) => ExitCode::from(3),
        Ok(Outcome::Internal) => ExitCode::from(4),
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

/// A command line clap refuses: help and version go to stdout (exit 0); any other problem is an
/// input error (exit 2), printed as the one JSON error object when `--json` is among the
/// arguments (clap has not parsed them, so the raw words are searched; `--` ends the options).
fn argument_error(e: clap::Error) -> ExitCode {
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::from(0);
    }
    let json = std::env::args_os().skip(1).take_while(|a| a != "--").any(|a| a == "--json");
    if json {
        let text = e.render().to_string();
        let message = text.trim().strip_prefix("error: ").unwrap_or(text.trim()).to_string();
        trestle_verify::process::print_error_json("input", &message);
    }
    let _ = e.print();
    ExitCode::from(2)
}
