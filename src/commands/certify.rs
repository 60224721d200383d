//! `trestle certify CERT SYSTEM`: re-check a certificate independently of the run that wrote it.
//!
//! Exit codes: 0 the certificate is valid (a proof: the system is safe; a refutation: its witness
//! replays exactly); 1 the certificate is rejected (some check failed or could not be confirmed:
//! it proves nothing, which says nothing about the system either way); 2 the file is not a
//! well-formed certificate of this system (unreadable, bad JSON, non-finite numbers, another
//! system's name or variables, wrong shapes, a box written twice); 4 internal error.

use crate::args::CertifyArgs;
use crate::output::print_json;
use crate::{CliError, CliResult, Outcome};
use anyhow::anyhow;
use serde_json::json;
use trestle_bridge::certificate::{certify, parse};

pub fn run(a: &CertifyArgs) -> CliResult {
    let text = std::fs::read_to_string(&a.certificate)
        .map_err(|e| CliError::input(format!("cannot read {}: {e}", a.certificate.display())))?;
    let cert = parse(&text).map_err(|e| CliError::Input(anyhow!("{}: {e}", a.certificate.display())))?;
    let sys = super::load(&a.system)?;
    let result = certify(&cert, &sys).map_err(|e| match super::bridge_error(e) {
        CliError::Input(e) => CliError::Input(anyhow!("{}: {e}", a.certificate.display())),
        internal => internal,
    })?;
    if a.system.json {
        print_json(&json!({
            "certificate": a.certificate.display().to_string(),
            "kind": result.kind,
            "valid": result.valid,
            "checks": result.checks.iter().map(|(name, ok, detail)| json!({"check": name, "ok": ok, "detail": detail})).collect::<Vec<_>>(),
        }));
    } else {
        for (name, ok, detail) in &result.checks {
            println!("{} {name}: {detail}", if *ok { "ok  " } else { "FAIL" });
        }
        println!(
            "{}",
            match (result.valid, result.kind) {
                (true, "proof") => "certificate VALID: the system is safe",
                (true, _) => "refutation VALID: the counterexample replays exactly",
                (false, _) => "certificate REJECTED: it proves nothing (the system itself may be safe or not)",
            }
        );
    }
    Ok(if result.valid { Outcome::Done } else { Outcome::Refuted })
}
