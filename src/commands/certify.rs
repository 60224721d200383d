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
use trestle_verify::DriverError;
use trestle_verify::certify::certify_text_sampled;

pub fn run(a: &CertifyArgs) -> CliResult {
    let text = atomic_output::input::read_text(&a.certificate, atomic_output::input::CERTIFICATE)
        .map_err(|e| CliError::input(format!("cannot read {}: {e}", a.certificate.display())))?;
    let (sys, plant) = super::load_sampled(&a.system)?;
    let certified = certify_text_sampled(&text, &sys, plant.as_ref()).map_err(|e| match e {
        DriverError::Input(e) => CliError::Input(anyhow!("{}: {e}", a.certificate.display())),
        internal => crate::output::driver_error(internal),
    })?;
    if a.system.json {
        let mut doc = json!({ "certificate": a.certificate.display().to_string() });
        if let (Some(o), serde_json::Value::Object(rest)) = (doc.as_object_mut(), certified.to_json()) {
            o.extend(rest);
        }
        print_json(&doc);
    } else {
        print!("{}", certified.text());
    }
    Ok(if certified.certification.valid { Outcome::Done } else { Outcome::Refuted })
}
