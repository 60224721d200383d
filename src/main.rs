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
//!   claimed, and no result file is left half-written (see `interrupt`)

mod args;
mod commands;
mod interrupt;
mod output;
mod picture;
mod progress;

use clap::Parser;
use clap::error::ErrorKind;
use std::process::ExitCode;

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

/// Where the last panic happened, for the internal-error report (the default hook's message and
/// backtrace are replaced by one clear line).
static PANIC_LOCATION: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Set when a panic was a resource running out (a Z3 context or a thread that could not be
/// created), in whichever thread it happened: the run ends with "out of memory", exit 3. Scoped
/// threads hand their panics on as "a scoped thread panicked", so the hook, which sees the
/// original payload, is where this is known.
static OUT_OF_MEMORY: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// The message of a panic that is a resource running out, not a bug.
fn resource_panic(payload: &(dyn std::any::Any + Send)) -> Option<String> {
    if let Some(oom) = payload.downcast_ref::<trestle_smt::OutOfMemory>() {
        return Some(oom.to_string());
    }
    let text =
        payload.downcast_ref::<String>().map(String::as_str).or_else(|| payload.downcast_ref::<&str>().copied())?;
    // A thread that could not be created (its stack could not be mapped: EAGAIN under an
    // address-space or process limit): std's spawn, or rayon's global pool, which panics with its
    // build error on first use.
    let thread = text.starts_with("failed to spawn thread")
        || (text.contains("ThreadPoolBuildError") && text.contains("IOError"));
    thread.then(|| {
        let first = text.lines().next().unwrap_or_default();
        format!("out of memory: could not start a thread: {first} (the process's memory, address-space or thread limit is too low)")
    })
}

fn main() -> ExitCode {
    // Die quietly on a closed pipe (`trestle ... | head`), like other command-line tools.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    std::panic::set_hook(Box::new(|info| {
        if let Ok(mut slot) = PANIC_LOCATION.lock() {
            *slot = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
        }
        if let Some(message) = resource_panic(info.payload())
            && let Ok(mut slot) = OUT_OF_MEMORY.lock()
        {
            slot.get_or_insert(message);
        }
    }));
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return argument_error(e),
    };
    let json = cli.command.json();
    interrupt::install(json);
    if let Some((name, timeout)) = commands::time_limit(&cli.command) {
        interrupt::backstop(timeout, json, name);
    }
    let result = std::panic::catch_unwind(|| commands::run(cli.command));
    let result = match result {
        Ok(r) => r,
        Err(panic) => {
            if let Some(message) = OUT_OF_MEMORY.lock().ok().and_then(|m| m.clone()) {
                output::report_error(json, "out-of-memory", &anyhow::anyhow!(message));
                return ExitCode::from(3);
            }
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            let at = PANIC_LOCATION.lock().ok().and_then(|l| l.clone()).map(|l| format!(" at {l}")).unwrap_or_default();
            Err(CliError::Internal(anyhow::anyhow!("internal error (a bug in trestle, please report it): {msg}{at}")))
        }
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
        output::print_error_json("input", &message);
    }
    let _ = e.print();
    ExitCode::from(2)
}
