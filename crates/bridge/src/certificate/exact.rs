//! Exact clauses of a proof certificate (format `trestle-bridge-certificate/2`): boxes the run
//! decided with the networks inside the query (`crate::exact`). A clause is only its box; `certify`
//! re-checks it by building and running the same query from the box and the system alone (its own
//! ReLU phases from its own bounds, Z3 with the weights as exact rationals), trusting nothing else.

use super::{BoxJson, box_json, fbox};
use crate::error::BridgeError;
use crate::exact::{ExactDecision, decide};
use crate::post::PostEngine;
use serde::{Deserialize, Serialize};
use trestle_ir::{FBox, Pred, System};
use trestle_smt::{CheckerConfig, Z3Backend};

/// One exact clause: every successor of every state of the box in the invariant lies in it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExactClauseJson {
    #[serde(rename = "box")]
    pub region: BoxJson,
}

pub(super) fn clause_jsons(boxes: &[FBox]) -> Vec<ExactClauseJson> {
    boxes.iter().map(|b| ExactClauseJson { region: box_json(b) }).collect()
}

/// The boxes of the exact clauses, validated against the state's dimension.
pub(crate) fn regions(clauses: &[ExactClauseJson], dims: usize) -> Result<Vec<FBox>, BridgeError> {
    clauses.iter().enumerate().map(|(i, c)| fbox(&c.region, dims, &format!("exact_clauses[{i}].box"))).collect()
}

/// The check of every exact clause: `(box /\ inv /\ a = f(s) /\ Next) => inv'` by Z3, each in a
/// query of its own with Z3's default time limit. Returns the check line of the certification.
pub(crate) fn check(
    sys: &System,
    engine: &PostEngine<'_>,
    inv: &Pred,
    boxes: &[FBox],
) -> Result<(String, bool, String), BridgeError> {
    let mut z3 = Z3Backend::new(sys, CheckerConfig::default())?;
    let mut bad = None;
    for (i, b) in boxes.iter().enumerate() {
        match decide(sys, &mut z3, engine, inv, b, None)? {
            ExactDecision::Proven => {}
            ExactDecision::Refuted(w) => {
                bad = Some(format!("exact clause {i}: a successor leaves the invariant: {w}"));
                break;
            }
            ExactDecision::Undecided(r) => {
                bad = Some(format!("exact clause {i}: Z3 could not decide ({r})"));
                break;
            }
        }
    }
    Ok((
        "each exact clause holds (Z3, networks encoded on the box)".into(),
        bad.is_none(),
        bad.unwrap_or_else(|| format!("{} queries", boxes.len())),
    ))
}
