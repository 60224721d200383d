//! `trestle certify CERT SYSTEM`: re-check a certificate independently of the run that wrote it
//! (a proof of the system's Safe, a refutation, or a proof of an LTL formula written by `trestle
//! ltl --certificate`: `G p`, checked on the system with its hidden states lifted, or a bounded
//! formula's enclosures, [`trestle_ltl::certificate`]).
//!
//! Exit codes: 0 the certificate is valid (a proof: the system is safe; a refutation: its witness
//! replays exactly, or through irrational values is validated by enclosures); 1 the certificate is rejected (some check failed or could not be confirmed:
//! it proves nothing, which says nothing about the system either way); 2 the file is not a
//! well-formed certificate of this system (unreadable, bad JSON, non-finite numbers, another
//! system's name or variables, wrong shapes, a box written twice); 4 internal error.

use crate::args::CertifyArgs;
use crate::output::print_json;
use crate::{CliError, CliResult, Outcome};
use anyhow::anyhow;
use serde_json::json;
use trestle_bridge::certificate::{CertificateJson, Certification, ProofJson, certify, certify_always, parse};
use trestle_ir::parse::parse_ltl;

pub fn run(a: &CertifyArgs) -> CliResult {
    let text = atomic_output::input::read_text(&a.certificate, atomic_output::input::CERTIFICATE)
        .map_err(|e| CliError::input(format!("cannot read {}: {e}", a.certificate.display())))?;
    let sys = super::load(&a.system)?;
    let bounded =
        serde_json::from_str::<serde_json::Value>(&text).is_ok_and(|v| trestle_ltl::certificate::is_bounded(&v));
    let (result, formula) = if bounded {
        // Enclosures proving a bounded LTL formula, read in the system's scope.
        let cert = trestle_ltl::certificate::parse(&text)
            .map_err(|e| CliError::Input(anyhow!("{}: {e}", a.certificate.display())))?;
        let scope = super::formula_scope(&sys, None)?;
        let phi = parse_ltl(&cert.ltl, &scope)
            .map_err(|e| CliError::Input(anyhow!("{}: ltl '{}': {e}", a.certificate.display(), cert.ltl)))?;
        (trestle_ltl::certificate::certify_bounded(&cert, &sys, &phi), Some(cert.ltl.clone()))
    } else {
        always_or_bridge(&text, &sys, a)?
    };
    let result = result.map_err(|e| match super::bridge_error(e) {
        CliError::Input(e) => CliError::Input(anyhow!("{}: {e}", a.certificate.display())),
        internal => internal,
    })?;
    if a.system.json {
        print_json(&json!({
            "certificate": a.certificate.display().to_string(),
            "kind": result.kind,
            "ltl": formula,
            "valid": result.valid,
            "checks": result.checks.iter().map(|(name, ok, detail)| json!({"check": name, "ok": ok, "detail": detail})).collect::<Vec<_>>(),
        }));
    } else {
        for (name, ok, detail) in &result.checks {
            println!("{} {name}: {detail}", if *ok { "ok  " } else { "FAIL" });
        }
        // The formula proven is the certificate's (for `F p` proven by `F<=d p`, the latter).
        println!(
            "{}",
            match (result.valid, result.kind, &formula) {
                (true, "proof", Some(f)) => format!("certificate VALID: '{f}' holds on every run"),
                (true, "proof", None) => "certificate VALID: the system is safe".into(),
                (true, ..) if result.checks.iter().any(|c| c.0.starts_with("witness validated")) => {
                    "refutation VALID: the counterexample is validated (exact start, successor enclosed strictly outside)"
                        .into()
                }
                (true, ..) => "refutation VALID: the counterexample replays exactly".into(),
                (false, ..) => "certificate REJECTED: it proves nothing (the system itself may be safe or not)".into(),
            }
        );
    }
    Ok(if result.valid { Outcome::Done } else { Outcome::Refuted })
}

/// A bridge certificate: a proof of `G p` over the lifted system (with `ltl`), or of Safe, or a
/// refutation. With the LTL formula it proves, if any.
fn always_or_bridge(
    text: &str,
    sys: &trestle_ir::System,
    a: &CertifyArgs,
) -> Result<(Result<Certification, trestle_bridge::BridgeError>, Option<String>), CliError> {
    let cert = parse(text).map_err(|e| CliError::Input(anyhow!("{}: {e}", a.certificate.display())))?;
    Ok(match &cert {
        // A proof of `G p` over the lifted system: the formula is read in the system's scope.
        CertificateJson::Proof(proof @ ProofJson { ltl: Some(text), .. }) => {
            let scope = super::formula_scope(sys, None)?;
            let bad = |why: String| CliError::Input(anyhow!("{}: ltl '{text}': {why}", a.certificate.display()));
            let phi = parse_ltl(text, &scope).map_err(|e| bad(e.to_string()))?;
            let p = phi.always_pred().ok_or_else(|| bad("not G p with p a state predicate".into()))?;
            (certify_always(proof, sys, &p), Some(text.clone()))
        }
        _ => (certify(&cert, sys), None),
    })
}
