//! Printing: human text on stdout, or exactly one JSON object with `--json`; errors on stderr
//! (and as a JSON object on stdout with `--json`, so scripts always get one object).

use serde_json::Value;
use std::io::Write;
use std::path::Path;

pub fn report_error(json: bool, kind: &str, e: &anyhow::Error) {
    let text = format!("{e:#}");
    if json {
        let mut printed = trestle_verify::process::OUTPUT.lock().unwrap_or_else(|p| p.into_inner());
        trestle_verify::process::print_error_json(kind, &text);
        *printed = true;
    }
    eprintln!("error: {text}");
}

/// The run's one JSON object, printed whole under the output lock (an interrupt waits for it and
/// then prints nothing more).
pub fn print_json(v: &Value) {
    trestle_verify::process::answered();
    let text = serde_json::to_string_pretty(v).expect("JSON values always serialise");
    let mut printed = trestle_verify::process::OUTPUT.lock().unwrap_or_else(|p| p.into_inner());
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
    *printed = true;
}

/// The exit code of a result's status: proven 0, refuted 1, evidence and unknown 3.
pub fn outcome(status: trestle_core::Status) -> crate::Outcome {
    match status {
        trestle_core::Status::Proven => crate::Outcome::Done,
        trestle_core::Status::Refuted => crate::Outcome::Refuted,
        trestle_core::Status::Evidence | trestle_core::Status::Unknown => crate::Outcome::Unknown,
    }
}

/// Prints a result (one JSON object with `--json`, its text otherwise) and ends the command with
/// its status's exit code.
pub fn finish(json: bool, r: &trestle_core::RunResult) -> crate::CliResult {
    trestle_verify::process::answered();
    if json {
        print_json(&serde_json::to_value(r).expect("results serialise"));
    } else {
        let mut printed = trestle_verify::process::OUTPUT.lock().unwrap_or_else(|p| p.into_inner());
        print!("{}", trestle_verify::render::text(r));
        *printed = true;
    }
    Ok(outcome(r.status))
}

/// A driver error as the CLI reports it: exit 2 for the input's faults, 4 for ours.
pub fn driver_error(e: trestle_verify::DriverError) -> crate::CliError {
    match e {
        trestle_verify::DriverError::Internal(m) => crate::CliError::Internal(anyhow::anyhow!(m)),
        trestle_verify::DriverError::Input(m) => crate::CliError::Input(anyhow::anyhow!(m)),
    }
}

/// Refuses an output path that the atomic writer would refuse (a directory, FIFO, device), before
/// the run that produces the file.
pub fn check_output(flag: &str, path: Option<&Path>) -> Result<(), crate::CliError> {
    match path.map(atomic_output::check_target) {
        Some(Err(e)) => Err(crate::CliError::input(format!("{flag} {}: {e}", path.expect("some").display()))),
        _ => Ok(()),
    }
}
