//! `trestle certify CERT SYSTEM`: re-check a certificate independently of the run that wrote it.

use crate::args::CertifyArgs;
use crate::output::print_json;
use crate::{CliError, CliResult, Outcome};
use anyhow::{Context, anyhow};
use serde_json::json;
use trestle_bridge::certificate::{CertificateJson, certify};

pub fn run(a: &CertifyArgs) -> CliResult {
    let text =
        std::fs::read_to_string(&a.certificate).with_context(|| format!("cannot read {}", a.certificate.display()))?;
    let cert: CertificateJson = serde_json::from_str(&text)
        .map_err(|e| CliError::Input(anyhow!("{}: not a trestle certificate: {e}", a.certificate.display())))?;
    let sys = super::load(&a.system)?;
    let result = certify(&cert, &sys).map_err(|e| CliError::Input(anyhow!("{}: {e}", a.certificate.display())))?;
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
                (false, _) => "certificate REJECTED",
            }
        );
    }
    Ok(if result.valid { Outcome::Done } else { Outcome::Refuted })
}
