//! Certificates: a proof (the bridge: boxes covering the invariant, each with its postcondition)
//! or a refutation (a witness step), as JSON, and [`certify`], which re-checks a certificate
//! without trusting the run that produced it.
//!
//! Format `trestle-bridge-certificate/1`, or `/2` for a proof with exact clauses (`exact_clauses`:
//! boxes decided with the networks inside the query, see [`exact`]; `/2` is `/1` plus that list,
//! and `certify` reads both). Numbers are JSON numbers holding exact f64 values
//! (shortest round-trip decimals). A witness's state is an f64 point; its actions and successor
//! are exact rationals, given as the nearest floats in `witness` and exactly (as decimal or
//! fraction strings) in `witness_exact`. A refutation through irrational values (tanh, sin, ...)
//! has no exact successor: see [`validated`].
//!
//! A file that is not a well-formed certificate of the system (bad JSON, unknown fields, numbers
//! that are not finite, another system's name, other variables or another order of them, matrices
//! of the wrong shape, a box written twice) is an error ([`BridgeError::Certificate`]). A
//! well-formed proof is re-checked as [`crate::proof_check`] describes; it is valid only when every
//! check passes.

use crate::check::Report;
use crate::engine::{Clause, Inductiveness};
use crate::error::BridgeError;
use serde::{Deserialize, Serialize};
use trestle_ir::expr::{Expr, VarRef};
use trestle_ir::num::{display_rational, parse_rational, rational_from_f64};
use trestle_ir::plant::SampledPlant;
use trestle_ir::pred::CmpOp;
use trestle_ir::{FBox, Matrix, Pred, Rational, System};
use trestle_smt::Postcondition;

pub(crate) mod exact;
pub mod run;
pub mod validated;

pub use exact::ExactClauseJson;

pub const FORMAT: &str = "trestle-bridge-certificate/1";
/// The format of a proof with exact clauses.
pub const FORMAT_EXACT: &str = "trestle-bridge-certificate/2";
/// The format of a proof or refutation of a sampled-data system (`[flow]`): `/1` plus `flow`.
pub const FORMAT_FLOW: &str = "trestle-bridge-certificate/3";

/// The flow settings a sampled-data system's certificate was made with: `certify` re-derives
/// every enclosure with them (and refuses a period other than the system's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowJson {
    /// The control period, exactly (a decimal or fraction string).
    pub period: String,
    /// The Taylor order, when fixed (otherwise from the tolerance).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub order: Option<usize>,
    /// The number of equal sub-steps, when fixed (otherwise adaptive).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub substeps: Option<usize>,
    pub tolerance: f64,
    pub max_substeps: usize,
    pub refinements: usize,
}

impl FlowJson {
    pub fn of(step: &crate::flow::FlowStep) -> FlowJson {
        let s = &step.settings;
        FlowJson {
            period: display_rational(&step.period),
            order: s.order,
            substeps: s.substeps,
            tolerance: s.tolerance,
            max_substeps: s.max_substeps,
            refinements: s.refinements,
        }
    }

    /// The flow step of `plant` with these settings; an error when the period is not the
    /// plant's or a setting is out of range.
    pub fn step(&self, sys: &System, plant: &SampledPlant) -> Result<crate::flow::FlowStep, BridgeError> {
        let period = parse_rational(&self.period)
            .ok_or_else(|| BridgeError::Certificate(format!("flow.period: '{}' is not a number", self.period)))?;
        if period != plant.period {
            return Err(BridgeError::Certificate(format!(
                "flow.period is {}, the system's control period is {}: the certificate is for another system",
                self.period,
                display_rational(&plant.period)
            )));
        }
        if !(self.tolerance.is_finite() && self.tolerance > 0.0) || self.substeps == Some(0) || self.order == Some(0) {
            return Err(BridgeError::Certificate("flow: tolerance, order and sub-steps must be positive".into()));
        }
        let settings = trestle_flow::FlowSettings {
            order: self.order,
            substeps: self.substeps,
            tolerance: self.tolerance,
            max_substeps: self.max_substeps,
            refinements: self.refinements,
        };
        crate::flow::FlowStep::new(sys, plant, settings)
    }
}

/// Records a sampled-data system's flow settings in a proof (format `/3`).
pub fn set_flow(proof: &mut ProofJson, flow: Option<&FlowJson>) {
    if let Some(f) = flow {
        proof.format = FORMAT_FLOW.into();
        proof.flow = Some(f.clone());
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoxJson {
    pub lo: Vec<f64>,
    pub hi: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AffineJson {
    #[serde(rename = "A")]
    pub a: Vec<Vec<f64>>,
    pub c: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinearJson {
    pub lower: AffineJson,
    pub upper: AffineJson,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClauseJson {
    #[serde(rename = "box")]
    pub region: BoxJson,
    pub post: BoxJson,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub linear: Option<LinearJson>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WitnessJson {
    pub state: Vec<f64>,
    pub action: Vec<f64>,
    pub nondet: Vec<f64>,
    pub next: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WitnessExactJson {
    pub state: Vec<String>,
    pub action: Vec<String>,
    pub nondet: Vec<String>,
    pub next: Vec<String>,
    pub branch: String,
}

/// A proof certificate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProofJson {
    pub format: String,
    pub system: String,
    pub state_vars: Vec<String>,
    pub action_vars: Vec<String>,
    pub nondet_vars: Vec<String>,
    pub invariant: Vec<BoxJson>,
    pub clauses: Vec<ClauseJson>,
    /// Only in format `/2`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub exact_clauses: Vec<ExactClauseJson>,
    /// Present when the proof is of `G p` for this LTL formula (`p` a state predicate, printed
    /// in the system's names) on the system with its recurrent controllers' hidden states lifted
    /// into the state (`trestle_ir::lift`), `p` standing for Safe: see [`certify_always`].
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ltl: Option<String>,
    /// Only in format `/3`: the proof is of a sampled-data system, made with these settings.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub flow: Option<FlowJson>,
}

/// A refutation, or the record of a run that proved nothing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutcomeJson {
    pub format: String,
    pub system: String,
    pub verdict: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub witness: Option<WitnessJson>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub witness_exact: Option<WitnessExactJson>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub region: Option<BoxJson>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    /// A refutation through irrational values: the enclosures its run found (see [`validated`]).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub validated: Option<validated::ValidatedJson>,
    /// An unsafe outcome's run from Init out of Safe (see [`run`]).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub run: Option<run::RunJson>,
    /// Only in format `/3`: the run was of a sampled-data system, with these flow settings.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub flow: Option<FlowJson>,
}

/// Either kind of certificate file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "expected a proof (format, system, state_vars, action_vars, nondet_vars, invariant, clauses) \
                 or a refutation (format, system, verdict, witness, ..) as written by `trestle check --certificate`"
)]
// One value per certificate file read or written: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum CertificateJson {
    Proof(ProofJson),
    Outcome(OutcomeJson),
}

fn box_json(b: &FBox) -> BoxJson {
    BoxJson { lo: b.lo.clone(), hi: b.hi.clone() }
}

fn rows(m: &Matrix) -> Vec<Vec<f64>> {
    (0..m.rows).map(|r| m.row(r).to_vec()).collect()
}

fn clause_json(c: &Clause) -> ClauseJson {
    let linear = match &c.post {
        Postcondition::Box(_) => None,
        Postcondition::Linear(l) => Some(LinearJson {
            lower: AffineJson { a: rows(&l.lower.a), c: l.lower.c.clone() },
            upper: AffineJson { a: rows(&l.upper.a), c: l.upper.c.clone() },
        }),
    };
    ClauseJson { region: box_json(&c.region), post: box_json(c.post.action_box()), linear }
}

/// A proof certificate from proven clauses (and exact clauses) over an invariant's boxes.
pub fn proof(sys: &System, invariant: &[FBox], clauses: &[Clause], exact_clauses: &[FBox]) -> ProofJson {
    ProofJson {
        format: if exact_clauses.is_empty() { FORMAT } else { FORMAT_EXACT }.into(),
        system: sys.name.clone(),
        state_vars: sys.state_names(),
        action_vars: sys.action_names(),
        nondet_vars: sys.nondet_names(),
        invariant: invariant.iter().map(box_json).collect(),
        clauses: clauses.iter().map(clause_json).collect(),
        exact_clauses: exact::clause_jsons(exact_clauses),
        ltl: None,
        flow: None,
    }
}

/// A witness in the certificate's two forms: nearest f64 values and exact rationals.
pub fn witness_jsons(sys: &System, w: &trestle_smt::Witness) -> (WitnessJson, WitnessExactJson) {
    let f = |xs: &[Rational]| crate::witness::approx(xs);
    let e = |xs: &[Rational]| xs.iter().map(display_rational).collect::<Vec<_>>();
    (
        WitnessJson { state: f(&w.state), action: f(&w.actions), nondet: f(&w.nondet), next: f(&w.next) },
        WitnessExactJson {
            state: e(&w.state),
            action: e(&w.actions),
            nondet: e(&w.nondet),
            next: e(&w.next),
            branch: sys.step.branches.get(w.branch).map(|b| b.name.clone()).unwrap_or_default(),
        },
    )
}

/// The certificate a `check` run writes: a proof when safe, otherwise the outcome with its witness.
pub fn from_report(sys: &System, report: &Report) -> CertificateJson {
    let run = &report.inductive;
    if report.verdict.is_proven() && !(run.clauses.is_empty() && run.exact_clauses.is_empty()) {
        let mut p = proof(sys, &report.cover, &run.clauses, &run.exact_clauses);
        set_flow(&mut p, report.flow.as_ref());
        return CertificateJson::Proof(p);
    }
    let mut out = OutcomeJson {
        format: if report.flow.is_some() { FORMAT_FLOW } else { FORMAT }.into(),
        system: sys.name.clone(),
        verdict: report.word().into(),
        witness: None,
        witness_exact: None,
        region: None,
        reason: None,
        validated: None,
        run: None,
        flow: report.flow.clone(),
    };
    let set_witness = |out: &mut OutcomeJson, w: &trestle_smt::Witness| {
        let (a, b) = witness_jsons(sys, w);
        out.witness = Some(a);
        out.witness_exact = Some(b);
    };
    match (&report.init, &report.safe, &report.inductive.outcome) {
        (crate::Condition::Fails(w), _, _) => {
            set_witness(&mut out, w);
            out.reason = Some("Init => Inv fails at this state".into());
        }
        (_, crate::Condition::Fails(w), _) => {
            set_witness(&mut out, w);
            out.reason = Some("Inv => Safe fails at this state".into());
        }
        (_, _, Inductiveness::Refuted(r)) => {
            set_witness(&mut out, &r.witness);
            out.region = r.region.as_ref().map(box_json);
        }
        (_, _, Inductiveness::RefutedValidated(t)) => {
            let (a, b, v) = validated::witness_jsons(sys, t);
            (out.witness, out.witness_exact, out.validated) = (Some(a), Some(b), Some(v));
        }
        (_, _, Inductiveness::Unknown(reason)) => out.reason = Some(reason.to_string()),
        (_, _, Inductiveness::Proven) if report.verdict.holds() == Some(true) => {
            out.reason = Some(format!(
                "proven by a baseline ({}): no bridge certificate to re-check",
                report.evidence.as_deref().unwrap_or("no evidence recorded")
            ))
        }
        _ => out.reason = Some("a side condition stayed undecided".into()),
    }
    CertificateJson::Outcome(out)
}

/// What [`certify`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Certification {
    /// The certificate proves safety (or, for a refutation, the witness replays).
    pub valid: bool,
    pub kind: &'static str,
    /// Each check with its result.
    pub checks: Vec<(String, bool, String)>,
}

pub(crate) fn fbox(b: &BoxJson, dims: usize, what: &str) -> Result<FBox, BridgeError> {
    let f = FBox::new(b.lo.clone(), b.hi.clone());
    if f.lo.len() != dims || f.hi.len() != dims || !f.is_valid() {
        return Err(BridgeError::Certificate(format!(
            "{what}: not a valid box of {dims} finite dimensions with lo <= hi"
        )));
    }
    Ok(f)
}

/// Reads a certificate file's text: a proof when it has clauses, otherwise an outcome record.
pub fn parse(text: &str) -> Result<CertificateJson, BridgeError> {
    let bad = |e: serde_json::Error| BridgeError::Certificate(format!("not a trestle certificate: {e}"));
    let value: serde_json::Value = serde_json::from_str(text).map_err(bad)?;
    if !value.is_object() {
        return Err(BridgeError::Certificate("not a trestle certificate: expected a JSON object".into()));
    }
    Ok(if value.get("clauses").is_some() {
        CertificateJson::Proof(serde_json::from_value(value).map_err(bad)?)
    } else {
        CertificateJson::Outcome(serde_json::from_value(value).map_err(bad)?)
    })
}

/// The union of boxes as an exact predicate over the state.
pub fn boxes_pred(boxes: &[FBox]) -> Pred {
    Pred::or(
        boxes
            .iter()
            .map(|b| {
                Pred::and(
                    (0..b.dims())
                        .flat_map(|i| {
                            let x = Expr::Var(VarRef::State(i));
                            [
                                Pred::Cmp(Expr::Const(rational_from_f64(b.lo[i])), CmpOp::Le, x.clone()),
                                Pred::Cmp(x, CmpOp::Le, Expr::Const(rational_from_f64(b.hi[i]))),
                            ]
                        })
                        .collect(),
                )
            })
            .collect(),
    )
}

/// Re-checks a certificate against the system. `Err` when the certificate is not a well-formed
/// certificate of this system; otherwise what the checks found.
pub fn certify(cert: &CertificateJson, sys: &System) -> Result<Certification, BridgeError> {
    certify_sampled(cert, sys, None)
}

/// [`certify`] for a system that may be sampled-data: with its plant (`[flow]`), the certificate
/// must be of format `/3` with the plant's period, and every enclosure is re-derived from the
/// settings it records ([`crate::proof_check`], [`crate::flow_refute::recheck`]).
pub fn certify_sampled(
    cert: &CertificateJson,
    sys: &System,
    plant: Option<&SampledPlant>,
) -> Result<Certification, BridgeError> {
    if let CertificateJson::Proof(ProofJson { ltl: Some(f), .. }) = cert {
        return Err(BridgeError::Certificate(format!(
            "the certificate proves the LTL formula '{f}', not the system's Safe (re-check it with `certify_always`)"
        )));
    }
    certify_parts(cert, sys, plant)
}

/// Re-checks a proof certificate of `G p` (one with `ltl`, whose formula the caller parsed into
/// `p`): the proof is checked on the system with its hidden states lifted (`trestle_ir::lift`,
/// recomputed here from `sys`, never read from the certificate) and `p` as Safe, so Init => Inv,
/// Inv => p and inductiveness make `p` hold at every step of every run.
pub fn certify_always(cert: &ProofJson, sys: &System, p: &Pred) -> Result<Certification, BridgeError> {
    let mut lifted = trestle_ir::lift::lift_hidden_state(sys)
        .map_err(|e| BridgeError::Certificate(format!("lifting the hidden state: {e}")))?
        .system;
    lifted.safe = Some(p.clone());
    certify_parts(&CertificateJson::Proof(cert.clone()), &lifted, None)
}

fn certify_parts(
    cert: &CertificateJson,
    sys: &System,
    plant: Option<&SampledPlant>,
) -> Result<Certification, BridgeError> {
    let (format, system, flow) = match cert {
        CertificateJson::Proof(p) => (&p.format, &p.system, &p.flow),
        CertificateJson::Outcome(o) => (&o.format, &o.system, &o.flow),
    };
    // A refutation or run record is always `/1`; a proof is `/2` when it has exact clauses; a
    // sampled-data system's certificate is `/3`, and only such a system's.
    let formats: &[&str] = match (cert, plant) {
        (_, Some(_)) => &[FORMAT_FLOW],
        (CertificateJson::Proof(_), None) => &[FORMAT, FORMAT_EXACT],
        (CertificateJson::Outcome(_), None) => &[FORMAT],
    };
    if format == FORMAT_FLOW && plant.is_none() {
        return Err(BridgeError::Certificate(
            "the certificate is of a sampled-data system, the system file has no [flow]".into(),
        ));
    }
    if !formats.contains(&format.as_str()) {
        return Err(BridgeError::Certificate(format!("unknown format '{format}' (expected {})", formats.join(" or "))));
    }
    if *system != sys.name {
        return Err(BridgeError::Certificate(format!(
            "the certificate is for system '{system}', the system file describes '{}'",
            sys.name
        )));
    }
    let step = match (plant, flow) {
        (Some(plant), Some(f)) => Some(f.step(sys, plant)?),
        (Some(_), None) => return Err(BridgeError::Certificate(format!("format {FORMAT_FLOW} needs `flow`"))),
        (None, Some(_)) => return Err(BridgeError::Certificate(format!("`flow` needs format {FORMAT_FLOW}"))),
        (None, None) => None,
    };
    match cert {
        CertificateJson::Proof(p) => crate::proof_check::certify_proof(p, sys, step.as_ref()),
        CertificateJson::Outcome(o) => certify_outcome(o, sys, step.as_ref()),
    }
}

pub(crate) fn names_match(
    sys: &System,
    state: &[String],
    actions: &[String],
    nondet: &[String],
) -> Result<(), BridgeError> {
    if state != sys.state_names() || actions != sys.action_names() || nondet != sys.nondet_names() {
        return Err(BridgeError::Certificate(format!(
            "variables differ from the system's: certificate state {state:?}, actions {actions:?}, nondet {nondet:?}; system state {:?}, actions {:?}, nondet {:?}",
            sys.state_names(),
            sys.action_names(),
            sys.nondet_names()
        )));
    }
    Ok(())
}

fn exact_values(texts: &[String], what: &str) -> Result<Vec<Rational>, BridgeError> {
    texts
        .iter()
        .map(|t| parse_rational(t).ok_or_else(|| BridgeError::Certificate(format!("{what}: '{t}' is not a number"))))
        .collect()
}

/// A refutation is re-checked by replaying its witness exactly.
fn certify_outcome(
    o: &OutcomeJson,
    sys: &System,
    step: Option<&crate::flow::FlowStep>,
) -> Result<Certification, BridgeError> {
    if let (Some(r), "unsafe") = (&o.run, o.verdict.as_str()) {
        if let Some(step) = step {
            return Ok(crate::flow_run::certify_run(r, sys, step));
        }
        return Ok(run::certify_run(r, sys));
    }
    if o.verdict != "not-inductive" {
        return Ok(Certification {
            valid: false,
            kind: "outcome",
            checks: vec![("the file records a run without a proof or refutation".into(), false, o.verdict.clone())],
        });
    }
    let (state, nondet) = match (&o.witness_exact, &o.witness) {
        (Some(e), _) => {
            (exact_values(&e.state, "witness_exact.state")?, exact_values(&e.nondet, "witness_exact.nondet")?)
        }
        (None, Some(w)) => (
            w.state.iter().map(|&x| rational_from_f64(x)).collect(),
            w.nondet.iter().map(|&x| rational_from_f64(x)).collect(),
        ),
        (None, None) => return Err(BridgeError::Certificate("a refutation needs a witness".into())),
    };
    // A witness must start from a state (kinds and domains) and take inputs in their domains:
    // anything else is no run of the system, and the certificate is malformed.
    let not_a_run = |what: &str, e: trestle_ir::sim::SimError| BridgeError::Certificate(format!("witness {what}: {e}"));
    trestle_ir::sim::check_state(sys, &state).map_err(|e| not_a_run("state", e))?;
    trestle_ir::sim::check_nondet(sys, &nondet).map_err(|e| not_a_run("inputs", e))?;
    let (inv, cover) = crate::check::invariant_cover(sys)?;
    if let Some(step) = step {
        // The flow from the exact start, with the actions evaluated exactly, re-enclosed.
        let (ok, detail) = crate::flow_refute::recheck(sys, step, &inv, &cover, &state, &nondet);
        let check = "witness validated: state in Inv, the flow's enclosure from it strictly outside".to_string();
        return Ok(Certification { valid: ok, kind: "refutation", checks: vec![(check, ok, detail)] });
    }
    if !trestle_core::validate::is_rational_valued(sys) {
        // No exact successor: re-validated from the exact state, inputs and branch.
        let branch = o.witness_exact.as_ref().map_or("", |e| e.branch.as_str());
        let (ok, detail) = validated::recheck(sys, &inv, &state, &nondet, branch);
        let check = "witness validated: state in Inv, the successor's enclosure strictly outside".to_string();
        return Ok(Certification { valid: ok, kind: "refutation", checks: vec![(check, ok, detail)] });
    }
    let replay = crate::witness::replay_exact(sys, &inv, &state, &[nondet]);
    let checks = vec![(
        "witness replays exactly: state in Inv, successor outside".to_string(),
        replay.is_some(),
        replay
            .map(|w| w.to_string())
            .unwrap_or_else(|| "the replay stays inside the invariant or the state is outside it".into()),
    )];
    Ok(Certification { valid: checks[0].1, kind: "refutation", checks })
}
