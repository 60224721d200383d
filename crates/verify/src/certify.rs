//! `certify`: a certificate re-checked against a system, without trusting the run that wrote it:
//! a bridge proof of the system's Safe or a refutation (`trestle_bridge::certificate`), a proof
//! of `G p` over the system with its hidden states lifted (a bridge proof carrying `ltl`), or the
//! enclosures proving a bounded LTL formula ([`trestle_ltl::certificate`]), or a reach-chain
//! invariant of a sampled-data system ([`crate::flow_forever`]).

use crate::error::DriverError;
use crate::temporal::formula_scope;
use trestle_bridge::certificate::{
    CertificateJson, Certification, ProofJson, certify, certify_always, certify_sampled, parse,
};
use trestle_ir::System;
use trestle_ir::parse::parse_ltl;
use trestle_ir::plant::SampledPlant;

/// A certificate's re-check, and the LTL formula it proves, if any (for `F p` proven by
/// `F<=d p`, the latter).
#[derive(Debug)]
pub struct Certified {
    pub certification: Certification,
    pub ltl: Option<String>,
}

/// Re-checks the certificate `text` (JSON) against `sys`. Input errors are about the file (not
/// JSON, another system's, wrong shapes); a check that fails is a rejection, not an error.
pub fn certify_text(text: &str, sys: &System) -> Result<Certified, DriverError> {
    certify_text_sampled(text, sys, None)
}

/// [`certify_text`] for a system that may be sampled-data (`[flow]`, its plant given): only the
/// certificates `check` writes for such a system (format `/3`) are read for it.
pub fn certify_text_sampled(text: &str, sys: &System, plant: Option<&SampledPlant>) -> Result<Certified, DriverError> {
    if let Some(plant) = plant
        && crate::flow_forever::is_reach(text)
    {
        let certification = crate::flow_forever::certify_reach(text, sys, plant)?;
        return Ok(Certified { certification, ltl: None });
    }
    if plant.is_some() {
        let cert = parse(text).map_err(DriverError::input)?;
        return Ok(Certified { certification: certify_sampled(&cert, sys, plant)?, ltl: None });
    }
    let bounded =
        serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| trestle_ltl::certificate::is_bounded(&v));
    if bounded {
        // Enclosures proving a bounded LTL formula, read in the system's scope.
        let cert = trestle_ltl::certificate::parse(text).map_err(DriverError::input)?;
        let scope = formula_scope(sys, None)?;
        let phi = parse_ltl(&cert.ltl, &scope).map_err(|e| DriverError::input(format!("ltl '{}': {e}", cert.ltl)))?;
        let certification = trestle_ltl::certificate::certify_bounded(&cert, sys, &phi)?;
        return Ok(Certified { certification, ltl: Some(cert.ltl.clone()) });
    }
    let cert = parse(text).map_err(DriverError::input)?;
    Ok(match &cert {
        // A proof of `G p` over the lifted system: the formula is read in the system's scope.
        CertificateJson::Proof(proof @ ProofJson { ltl: Some(text), .. }) => {
            let scope = formula_scope(sys, None)?;
            let bad = |why: String| DriverError::input(format!("ltl '{text}': {why}"));
            let phi = parse_ltl(text, &scope).map_err(|e| bad(e.to_string()))?;
            let p = phi.always_pred().ok_or_else(|| bad("not G p with p a state predicate".into()))?;
            Certified { certification: certify_always(proof, sys, &p)?, ltl: Some(text.clone()) }
        }
        _ => Certified { certification: certify(&cert, sys)?, ltl: None },
    })
}

impl Certified {
    /// The re-check as JSON (the CLI's `certify --json`, less the certificate's path).
    pub fn to_json(&self) -> serde_json::Value {
        let c = &self.certification;
        serde_json::json!({
            "kind": c.kind,
            "ltl": self.ltl,
            "valid": c.valid,
            "checks": c.checks.iter().map(|(name, ok, detail)| serde_json::json!({"check": name, "ok": ok, "detail": detail})).collect::<Vec<_>>(),
        })
    }
}
