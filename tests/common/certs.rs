//! Certificates: re-checking the ones the tool writes with `trestle certify`, and tampering with
//! one number so that the certificate certainly claims something false.

use super::{Run, run, strings};
use serde_json::{Value, json};
use std::path::Path;
use trestle_ir::num::{rational_from_f64, to_f64_nearest};
use trestle_ir::system::NondetDomain;
use trestle_ir::{Rational, System, sim};

/// `trestle certify CERT SYSTEM --json`.
pub fn certify(bin: &str, cert: &Path, system: &Path, dir: &Path) -> Run {
    let args = strings(&["certify", &cert.to_string_lossy(), &system.to_string_lossy(), "--json"]);
    run(bin, &args, dir)
}

/// Whether certify accepted: exit 0 and `"valid": true`.
pub fn accepted(r: &Run) -> bool {
    r.code == Some(0) && r.json().is_ok_and(|j| j["valid"] == true)
}

/// A proof certificate (clauses over an invariant) as opposed to an outcome record.
pub fn is_proof(cert: &Value) -> bool {
    cert["clauses"].is_array()
}

/// Some value of every non-deterministic input (for observations that read one).
fn some_inputs(sys: &System) -> Vec<Rational> {
    sys.nondet
        .iter()
        .map(|v| match &v.domain {
            NondetDomain::Interval(lo, _) => lo.clone(),
            NondetDomain::Set(values) => values[0].clone(),
        })
        .collect()
}

/// Versions of a proof certificate with one number changed so that they claim something false,
/// each with a description:
/// - the first action's box in clause 0 shrunk to an end that excludes the network's exact action
///   at the clause box's lower corner;
/// - the first action's linear lower bound in clause 0 raised 1 above the exact action there;
/// - the first invariant box stretched 1000 beyond Safe in the first variable.
pub fn tampered_proofs(sys: &System, cert: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let clause = &cert["clauses"][0];
    let corner: Vec<f64> =
        clause["box"]["lo"].as_array().map_or(vec![], |a| a.iter().filter_map(Value::as_f64).collect());
    let exact_corner: Vec<Rational> = corner.iter().map(|&x| rational_from_f64(x)).collect();
    let mut memory = sim::initial_memory::<Rational>(sys);
    // A certificate whose boxes were all decided exactly has no ordinary clause to tamper with.
    let action = (corner.len() == sys.state.len())
        .then(|| sim::controller_actions(sys, &exact_corner, &some_inputs(sys), &mut memory).ok().map(|a| a[0].clone()))
        .flatten();
    if let (Some(v), Some(lo), Some(hi)) = (&action, clause["post"]["lo"][0].as_f64(), clause["post"]["hi"][0].as_f64())
    {
        let mut c = cert.clone();
        if rational_from_f64(lo) < *v {
            c["clauses"][0]["post"]["hi"][0] = json!(lo);
            out.push((format!("clause 0 post hi[0] = {lo} below the exact action at {corner:?}"), c));
        } else if *v < rational_from_f64(hi) {
            c["clauses"][0]["post"]["lo"][0] = json!(hi);
            out.push((format!("clause 0 post lo[0] = {hi} above the exact action at {corner:?}"), c));
        }
    }
    if let (Some(v), Some(row)) = (&action, clause["linear"]["lower"]["A"][0].as_array()) {
        let s: f64 = row.iter().zip(&corner).map(|(a, x)| a.as_f64().unwrap_or(0.0) * x).sum();
        let raised = to_f64_nearest(v) - s + 1.0;
        let mut c = cert.clone();
        c["clauses"][0]["linear"]["lower"]["c"][0] = json!(raised);
        out.push((format!("clause 0 linear lower c[0] = {raised}: 1 above the exact action at {corner:?}"), c));
    }
    if let Some(hi) = cert["invariant"][0]["hi"][0].as_f64() {
        let mut c = cert.clone();
        c["invariant"][0]["hi"][0] = json!(hi + 1000.0);
        out.push((format!("invariant[0].hi[0] = {} (beyond Safe)", hi + 1000.0), c));
    }
    out
}

/// A refutation with its state moved far outside the invariant (one number).
pub fn tampered_refutation(cert: &Value) -> Option<(String, Value)> {
    cert["witness_exact"]["state"].as_array()?;
    let mut c = cert.clone();
    c["witness_exact"]["state"][0] = json!("1000000");
    c["witness"]["state"][0] = json!(1_000_000.0);
    Some(("witness state[0] = 1000000 (outside the invariant)".into(), c))
}
