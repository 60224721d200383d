//! Certificates: a proof (the bridge: boxes covering the invariant, each with its postcondition)
//! or a refutation (a witness step), as JSON, and [`certify`], which re-checks a certificate
//! without trusting the run that produced it.
//!
//! Format `trestle-bridge-certificate/1`, or `/2` for a proof with exact clauses (`exact_clauses`:
//! boxes decided with the networks inside the query, see [`exact`]; `/2` is `/1` plus that list,
//! and `certify` reads both). Numbers are JSON numbers holding exact f64 values
//! (shortest round-trip decimals). A witness's state is an f64 point; its actions and successor
//! are exact rationals, given as the nearest floats in `witness` and exactly (as decimal or
//! fraction strings) in `witness_exact`.
//!
//! What `certify` checks, independently of the run:
//! 1. the clause boxes cover the invariant (exact box subtraction on the f64 ends);
//! 2. each psi holds on its box: the networks are re-bounded there (CROWN, then alpha-CROWN, then
//!    on halves of the box, up to a depth) and the result must lie inside the stored box, and each
//!    stored linear bound is re-verified by bounding `f(x) - (A x + c)` backward from those
//!    coefficients;
//! 3. each environment condition `(box /\ Inv /\ psi /\ Next) => Inv'` holds, by Z3 alone;
//! 4. each exact clause `(box /\ Inv /\ a = f(s) /\ Next) => Inv'` holds, by Z3 with the networks
//!    encoded on the box (the query rebuilt from the box and the system);
//! 5. `Init => Inv` and `Inv => Safe`, by Z3.
//!
//! The invariant is the system file's candidate when the certificate's boxes are exactly its
//! outward f64 enclosure (the candidate's exact rational bounds are then used), otherwise the
//! certificate's own boxes (e.g. a synthesised invariant).

use crate::check::{Report, Verdict};
use crate::config::Config;
use crate::engine::{Clause, Inductiveness};
use crate::error::BridgeError;
use crate::post::{PostEngine, possible_argmax};
use serde::{Deserialize, Serialize};
use trestle_bounds::{InputBox, Method};
use trestle_ir::expr::{Expr, VarRef};
use trestle_ir::num::{display_rational, parse_rational, rational_from_f64};
use trestle_ir::pred::CmpOp;
use trestle_ir::system::ControllerOutput;
use trestle_ir::{FBox, Matrix, Pred, Rational, System};
use trestle_smt::{Answer, BridgeQuery, CheckerConfig, EnvChecker, LinearPost, Postcondition, Target, Z3Backend};

mod exact;

pub use exact::ExactClauseJson;

pub const FORMAT: &str = "trestle-bridge-certificate/1";
/// The format of a proof with exact clauses.
pub const FORMAT_EXACT: &str = "trestle-bridge-certificate/2";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoxJson {
    pub lo: Vec<f64>,
    pub hi: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AffineJson {
    #[serde(rename = "A")]
    pub a: Vec<Vec<f64>>,
    pub c: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinearJson {
    pub lower: AffineJson,
    pub upper: AffineJson,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
}

/// Either kind of certificate file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "expected a proof (format, system, state_vars, action_vars, nondet_vars, invariant, clauses) \
                 or a refutation (format, system, verdict, witness, ..) as written by `trestle check --certificate`"
)]
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
            lower: AffineJson { a: rows(&l.lower), c: l.lower_offset.clone() },
            upper: AffineJson { a: rows(&l.upper), c: l.upper_offset.clone() },
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
pub fn from_report(sys: &System, report: &Report, _cfg: &Config) -> CertificateJson {
    let run = &report.inductive;
    if report.verdict == Verdict::Safe && !(run.clauses.is_empty() && run.exact_clauses.is_empty()) {
        return CertificateJson::Proof(proof(sys, &report.cover, &run.clauses, &run.exact_clauses));
    }
    let mut out = OutcomeJson {
        format: FORMAT.into(),
        system: sys.name.clone(),
        verdict: report.verdict.as_str().into(),
        witness: None,
        witness_exact: None,
        region: None,
        reason: None,
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
        (_, _, Inductiveness::Unknown { reason }) => out.reason = Some(reason.clone()),
        (_, _, Inductiveness::Proven) if report.verdict == Verdict::Safe => {
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

fn fbox(b: &BoxJson, dims: usize, what: &str) -> Result<FBox, BridgeError> {
    let f = FBox::new(b.lo.clone(), b.hi.clone());
    if f.lo.len() != dims || f.hi.len() != dims || !f.is_valid() {
        return Err(BridgeError::Certificate(format!(
            "{what}: not a valid box of {dims} finite dimensions with lo <= hi"
        )));
    }
    Ok(f)
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

/// Re-checks a certificate against the system.
pub fn certify(cert: &CertificateJson, sys: &System) -> Result<Certification, BridgeError> {
    match cert {
        CertificateJson::Proof(p) => certify_proof(p, sys),
        CertificateJson::Outcome(o) => certify_outcome(o, sys),
    }
}

fn names_match(sys: &System, state: &[String], actions: &[String], nondet: &[String]) -> Result<(), BridgeError> {
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

fn z3(sys: &System) -> Result<Z3Backend<'_>, BridgeError> {
    Ok(Z3Backend::new(sys, CheckerConfig::default())?)
}

fn certify_proof(p: &ProofJson, sys: &System) -> Result<Certification, BridgeError> {
    if p.format != FORMAT && p.format != FORMAT_EXACT {
        return Err(BridgeError::Certificate(format!(
            "unknown format '{}' (expected {FORMAT} or {FORMAT_EXACT})",
            p.format
        )));
    }
    if p.format == FORMAT && !p.exact_clauses.is_empty() {
        return Err(BridgeError::Certificate(format!("exact clauses need format {FORMAT_EXACT}")));
    }
    names_match(sys, &p.state_vars, &p.action_vars, &p.nondet_vars)?;
    let d = sys.state.len();
    let n_act = sys.actions.len();
    let invariant: Vec<FBox> = p
        .invariant
        .iter()
        .enumerate()
        .map(|(i, b)| fbox(b, d, &format!("invariant[{i}]")))
        .collect::<Result<_, _>>()?;
    if invariant.is_empty() {
        return Err(BridgeError::Certificate("the invariant has no boxes".into()));
    }
    let mut clauses = Vec::new();
    for (i, c) in p.clauses.iter().enumerate() {
        let region = fbox(&c.region, d, &format!("clauses[{i}].box"))?;
        let bounds = fbox(&c.post, n_act, &format!("clauses[{i}].post"))?;
        let post = match &c.linear {
            None => Postcondition::Box(bounds),
            Some(l) => Postcondition::Linear(LinearPost {
                lower: matrix(&l.lower.a, n_act, d, &format!("clauses[{i}].linear.lower.A"))?,
                lower_offset: vector(&l.lower.c, n_act, &format!("clauses[{i}].linear.lower.c"))?,
                upper: matrix(&l.upper.a, n_act, d, &format!("clauses[{i}].linear.upper.A"))?,
                upper_offset: vector(&l.upper.c, n_act, &format!("clauses[{i}].linear.upper.c"))?,
                bounds,
            }),
        };
        clauses.push(Clause { region, post });
    }
    // The invariant: the system's exact candidate when the certificate is its enclosure.
    let inv = match crate::check::invariant_cover(sys) {
        Ok((exact, cover)) if cover == invariant => exact,
        _ => boxes_pred(&invariant),
    };
    let exact_regions = exact::regions(&p.exact_clauses, d)?;
    let mut checks = Vec::new();
    let regions: Vec<FBox> = clauses.iter().map(|c| c.region.clone()).chain(exact_regions.iter().cloned()).collect();
    let gaps: Vec<FBox> = invariant.iter().flat_map(|b| b.uncovered(&regions)).collect();
    checks.push((
        "clause boxes cover the invariant".to_string(),
        gaps.is_empty(),
        if gaps.is_empty() { format!("{} boxes", regions.len()) } else { format!("uncovered: {:?}", gaps[0]) },
    ));
    let engine = PostEngine::new(sys, Method::Crown, true)?;
    let mut bad_post = None;
    for (i, c) in clauses.iter().enumerate() {
        if let Err(why) = post_holds(sys, &engine, &c.region, &c.post, 10) {
            bad_post = Some(format!("clause {i}: {why}"));
            break;
        }
    }
    checks.push((
        "each psi holds on its box (re-bounded)".into(),
        bad_post.is_none(),
        bad_post.unwrap_or_else(|| format!("{} clauses", clauses.len())),
    ));
    let mut backend = z3(sys)?;
    let mut bad_env = None;
    for (i, c) in clauses.iter().enumerate() {
        let q = BridgeQuery::new(&c.region, &c.post, Target::StaysIn(&inv)).with_extra(&inv);
        match backend.check_bridge(&q)? {
            Answer::Valid => {}
            Answer::Invalid(w) => {
                bad_env = Some(format!("clause {i}: a successor leaves the invariant: {w}"));
                break;
            }
            Answer::Unknown(r) => {
                bad_env = Some(format!("clause {i}: Z3 could not decide ({r})"));
                break;
            }
        }
    }
    checks.push((
        "each environment condition holds (Z3)".into(),
        bad_env.is_none(),
        bad_env.unwrap_or_else(|| format!("{} queries", clauses.len())),
    ));
    if !exact_regions.is_empty() {
        checks.push(exact::check(sys, &engine, &inv, &exact_regions)?);
    }
    let init = backend.check_init(&inv)?;
    checks.push(("Init => Inv (Z3)".into(), init == Answer::Valid, answer_text(&init)));
    match &sys.safe {
        Some(_) => {
            let safe = backend.check_safe(&inv)?;
            checks.push(("Inv => Safe (Z3)".into(), safe == Answer::Valid, answer_text(&safe)));
        }
        None => checks.push(("Inv => Safe (Z3)".into(), false, "the system has no safe region".into())),
    }
    let valid = checks.iter().all(|c| c.1);
    Ok(Certification { valid, kind: "proof", checks })
}

fn answer_text(a: &Answer) -> String {
    match a {
        Answer::Valid => "valid".into(),
        Answer::Invalid(w) => format!("fails at {w}"),
        Answer::Unknown(r) => format!("undecided: {r}"),
    }
}

fn matrix(rows: &[Vec<f64>], r: usize, c: usize, what: &str) -> Result<Matrix, BridgeError> {
    if rows.len() != r || rows.iter().any(|row| row.len() != c) || rows.iter().flatten().any(|v| !v.is_finite()) {
        return Err(BridgeError::Certificate(format!("{what}: expected a finite {r} x {c} matrix")));
    }
    Ok(if r == 0 { Matrix::new(0, c, vec![]) } else { Matrix::from_rows(rows) })
}

fn vector(v: &[f64], n: usize, what: &str) -> Result<Vec<f64>, BridgeError> {
    if v.len() != n || v.iter().any(|x| !x.is_finite()) {
        return Err(BridgeError::Certificate(format!("{what}: expected {n} finite numbers")));
    }
    Ok(v.to_vec())
}

/// Whether `post` holds for every state of `region`: re-bounded, with halving up to `depth`.
fn post_holds(
    sys: &System,
    engine: &PostEngine<'_>,
    region: &FBox,
    post: &Postcondition,
    depth: usize,
) -> Result<(), String> {
    match post_holds_once(sys, engine, region, post) {
        Ok(()) => Ok(()),
        Err(why) if depth == 0 => Err(why),
        Err(_) => {
            let widest =
                (0..region.dims()).max_by(|&a, &b| region.widths()[a].total_cmp(&region.widths()[b])).unwrap_or(0);
            let (l, r) = region.bisect(widest);
            post_holds(sys, engine, &l, post, depth - 1)?;
            post_holds(sys, engine, &r, post, depth - 1)
        }
    }
}

fn post_holds_once(sys: &System, engine: &PostEngine<'_>, region: &FBox, post: &Postcondition) -> Result<(), String> {
    let stored = post.action_box();
    for (ci, c) in sys.controllers.iter().enumerate() {
        let input = engine.input_box(ci, region);
        let nets = engine.networks_on(c, region);
        for &n in &nets {
            let net = &sys.networks[n].network;
            let ok_box = |b: &trestle_bounds::OutputBounds| -> bool {
                match &c.output {
                    ControllerOutput::Actions(ids) => {
                        ids.iter().enumerate().all(|(k, &a)| b.lo[k] >= stored.lo[a] && b.hi[k] <= stored.hi[a])
                    }
                    ControllerOutput::Argmax(a) => {
                        let (first, last) = possible_argmax(std::slice::from_ref(b));
                        first as f64 >= stored.lo[*a] && last as f64 <= stored.hi[*a]
                    }
                }
            };
            let crown = trestle_bounds::bound(net, &input, &Method::Crown).map_err(|e| e.to_string())?;
            if !ok_box(&crown) {
                let alpha = trestle_bounds::bound(net, &input, &"alpha-crown".parse().expect("known method"))
                    .map_err(|e| e.to_string())?;
                if !ok_box(&alpha) {
                    return Err(format!("network '{}' may leave the stored action box", sys.networks[n].name));
                }
            }
            if let (Postcondition::Linear(l), ControllerOutput::Actions(ids)) = (post, &c.output) {
                linear_holds(net, &input, engine.input_vars(ci), l, ids)
                    .map_err(|e| format!("network '{}': {e}", sys.networks[n].name))?;
            }
        }
    }
    Ok(())
}

/// Re-verifies `A_l s + c_l <= a <= A_u s + c_u` for the actions `ids` of one network by bounding
/// `f_k(x) - (A x + c)` backward from exactly those coefficients.
fn linear_holds(
    net: &trestle_ir::Network,
    input: &InputBox,
    vars: Option<&[usize]>,
    l: &LinearPost,
    ids: &[usize],
) -> Result<(), String> {
    let n_in = net.input_dim();
    let n_out = net.output_dim();
    // Rows that carry no state coefficients are constant bounds, already checked against the box.
    let state_rows = |m: &Matrix, a: usize| m.row(a).iter().any(|&v| v != 0.0);
    if ids.iter().all(|&a| !state_rows(&l.lower, a) && !state_rows(&l.upper, a)) {
        return Ok(());
    }
    let vars = vars.ok_or("linear bounds over affine observations cannot be re-checked")?;
    for (k, &a) in ids.iter().enumerate() {
        for (is_upper, m, off) in [(false, &l.lower, &l.lower_offset), (true, &l.upper, &l.upper_offset)] {
            let mut out = vec![0.0; n_out];
            out[k] = 1.0;
            // In the input's coordinates: coefficient of input j is -A[a][vars[j]].
            let mut coeffs = vec![0.0; n_in];
            for (j, &s) in vars.iter().enumerate() {
                coeffs[j] = -m.get(a, s);
            }
            // A state variable the network does not read must have a zero coefficient.
            if (0..m.cols).any(|s| !vars.contains(&s) && m.get(a, s) != 0.0) {
                return Err("a linear bound uses a state variable the network does not read".into());
            }
            let out_m = Matrix::new(1, n_out, out);
            let in_m = Matrix::new(1, n_in, coeffs);
            let (lo, hi) = trestle_bounds::bound_affine_of(net, input, &Method::Crown, &out_m, &in_m, &[-off[a]])
                .map_err(|e| e.to_string())?;
            let ok = if is_upper { hi[0] <= 0.0 } else { lo[0] >= 0.0 };
            if !ok {
                return Err(format!(
                    "stored {} linear bound of action {a} not re-verified (margin {})",
                    if is_upper { "upper" } else { "lower" },
                    if is_upper { hi[0] } else { lo[0] }
                ));
            }
        }
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
fn certify_outcome(o: &OutcomeJson, sys: &System) -> Result<Certification, BridgeError> {
    if o.format != FORMAT {
        return Err(BridgeError::Certificate(format!("unknown format '{}' (expected {FORMAT})", o.format)));
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
    let (inv, _) = crate::check::invariant_cover(sys)?;
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
