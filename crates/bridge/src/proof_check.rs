//! Re-checking a proof certificate, trusting nothing from the run that wrote it.
//!
//! A proof is a list of clauses, each a state box with a claim about it: a bridge clause says that
//! on its box the controller's actions satisfy the postcondition psi (an action box, possibly with
//! linear bounds in the state) and every successor of `box /\ Inv /\ psi` is in the invariant; an
//! exact clause (format `/2`) says that every successor of `box /\ Inv` under the controller's own
//! actions is in the invariant. The checks, all of which must pass:
//! 1. the clause boxes (of both kinds) cover the invariant and lie inside it (exact box
//!    subtraction on the f64 ends);
//! 2. no clause is vacuous: psi is non-empty at every state of its box, decided in exact rational
//!    arithmetic ([`crate::rows::nonvacuous`]) — otherwise the environment condition would hold for
//!    want of any action;
//! 3. every component of every psi holds on its box, for every action kind: the networks are
//!    re-bounded there and each bound, offsets included, must follow from the new bounds
//!    ([`crate::post_check`]);
//! 4. each environment condition `(box /\ Inv /\ psi /\ Next) => Inv'` holds, by Z3 alone, or,
//!    for a step with elementary functions (sin, exp, ...; Z3 decides polynomials only), by the
//!    fast path's outward-rounded enclosures or by Z3 on the step's linear relaxation on the
//!    clause's box, as the engine proved it (`trestle_smt`'s `Checker`; for Z3, a
//!    union invariant is cut, on the state, to its boxes whose outward enclosures touch the box,
//!    the others being disjoint from it; in the successor, to its boxes that may meet an outward
//!    enclosure of the successors: a subset of `Inv'`, so Z3's proof with it is a proof with all
//!    of `Inv'`, whether or not that enclosure is right; [`Z3Backend::narrowed_by`]);
//! 5. each exact clause `(box /\ Inv /\ a = f(s) /\ Next) => Inv'` holds, by Z3 with the networks
//!    encoded on the box (the query rebuilt from the box and the system alone,
//!    [`crate::certificate::exact`]);
//! 6. no run stops at a state of the invariant: on every clause box, under its psi (or, for an
//!    exact clause or where psi allows a stop, the networks themselves), some branch is enabled
//!    and every enabled successor is a state ([`crate::stops`]), re-derived from the clauses, so
//!    certificates need no field for it and older ones are judged by the same rule;
//! 7. `Init => Inv` and `Inv => Safe`, by Z3.
//!
//! For a sampled-data system (format `/3`, the certificate's `flow` settings and the system's own
//! period and rates) check 4 encloses the flow again over each clause's box, psi's action box and
//! the inputs' hull, and decides the leaf system's condition by Z3 ([`crate::flow`]: the linear
//! enclosure, else the box enclosure); such a proof has no exact clauses.
//!
//! The invariant is the system file's candidate when the certificate's boxes are exactly its
//! outward f64 enclosure (the candidate's exact rational bounds are then used), otherwise the
//! certificate's own boxes (e.g. a synthesised invariant).

use crate::certificate::{
    Certification, ClauseJson, FORMAT, FORMAT_EXACT, ProofJson, boxes_pred, exact, fbox, names_match,
};
use crate::error::BridgeError;
use crate::flow::FlowStep;
use crate::post_check::PostChecker;
use crate::rows::nonvacuous;
use trestle_ir::linear::AffineMap;
use trestle_ir::{FBox, Matrix, Pred, System};
use trestle_smt::{
    Answer, BridgeQuery, Checker, CheckerConfig, EnvChecker, FastPath, LinearPost, Postcondition, Target, Z3Backend,
};

/// How deep a clause box is halved when its psi is not confirmed on the whole box at once.
const RECHECK_DEPTH: usize = 10;

/// What a clause claims on its box.
enum Claim {
    /// The controller's actions satisfy psi there, and `(box /\ Inv /\ psi /\ Next) => Inv'`.
    Bridge(Postcondition),
    /// `(box /\ Inv /\ a = f(s) /\ Next) => Inv'`, with the networks themselves.
    Exact,
}

/// One clause as it is re-checked.
struct CertClause {
    /// Where it is in the file: `clauses[i]` or `exact_clauses[i]`.
    name: String,
    region: FBox,
    claim: Claim,
}

/// One line of the report: what was checked, whether it passed, and the detail.
type CheckLine = (String, bool, String);

pub(crate) fn certify_proof(
    p: &ProofJson,
    sys: &System,
    step: Option<&FlowStep>,
) -> Result<Certification, BridgeError> {
    if p.format == FORMAT && !p.exact_clauses.is_empty() {
        return Err(BridgeError::Certificate(format!("exact clauses need format {FORMAT_EXACT}")));
    }
    if step.is_some() && !p.exact_clauses.is_empty() {
        return Err(BridgeError::Certificate("a sampled-data system's proof has no exact clauses".into()));
    }
    names_match(sys, &p.state_vars, &p.action_vars, &p.nondet_vars)?;
    let d = sys.state.len();
    let invariant: Vec<FBox> = p
        .invariant
        .iter()
        .enumerate()
        .map(|(i, b)| fbox(b, d, &format!("invariant[{i}]")))
        .collect::<Result<_, _>>()?;
    if invariant.is_empty() {
        return Err(BridgeError::Certificate("the invariant has no boxes".into()));
    }
    let mut clauses: Vec<CertClause> =
        p.clauses.iter().enumerate().map(|(i, c)| read_clause(sys, i, c)).collect::<Result<_, _>>()?;
    let exact_regions = exact::regions(&p.exact_clauses, d)?;
    clauses.extend(exact_regions.iter().enumerate().map(|(i, b)| CertClause {
        name: format!("exact_clauses[{i}]"),
        region: b.clone(),
        claim: Claim::Exact,
    }));
    refuse_repeated_boxes(&clauses)?;
    // The invariant: the system's exact candidate when the certificate is its enclosure.
    let inv = match crate::check::invariant_cover(sys) {
        Ok((exact, cover)) if cover == invariant => exact,
        _ => boxes_pred(&invariant),
    };
    let mut checks = vec![coverage(&invariant, &clauses)];
    let checker = PostChecker::new(sys)?;
    checks.extend(postconditions(sys, &checker, &clauses));
    let mut pinned = FastPath::new(sys, CheckerConfig::default())?;
    pinned.pin(&inv)?;
    let mut backend = Z3Backend::new(sys, CheckerConfig::default())?.narrowed_by(&pinned);
    checks.push(match (step, trestle_smt::checker::elementary_function(sys)) {
        (Some(step), _) => environment(
            &clauses,
            format!(
                "each environment condition holds (the flow re-enclosed: period {}, {}; Z3)",
                trestle_ir::num::display_rational(&step.period),
                describe_settings(&step.settings)
            ),
            "clauses",
            |region, post| flow_leaf_holds(sys, step, &inv, region, post),
        )?,
        // Z3 takes polynomial arithmetic only: the clauses are re-decided as the engine decided
        // them, by the rigorous outward-rounded enclosures of the step, then by Z3 on the step's
        // linear relaxation on the clause's box.
        (None, Some(f)) => {
            let mut relaxed =
                Checker::from_parts(Some(pinned.fork(CheckerConfig::default())), backend.fork(CheckerConfig::default()));
            environment(
                &clauses,
                format!(
                    "each environment condition holds (rigorous enclosures and linear relaxations; the step applies {f}, which Z3 takes only relaxed)"
                ),
                "queries",
                |region, post| discrete_holds(&mut relaxed, &inv, region, post),
            )?
        }
        (None, None) => {
            environment(&clauses, "each environment condition holds (Z3)".into(), "queries", |region, post| {
                discrete_holds(&mut backend, &inv, region, post)
            })?
        }
    });
    if !exact_regions.is_empty() {
        checks.push(exact::check(sys, checker.engine(), &inv, &exact_regions)?);
    }
    checks.push(stops(sys, &inv, &clauses)?);
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

fn read_clause(sys: &System, i: usize, c: &ClauseJson) -> Result<CertClause, BridgeError> {
    let (d, n_act) = (sys.state.len(), sys.actions.len());
    let region = fbox(&c.region, d, &format!("clauses[{i}].box"))?;
    let bounds = fbox(&c.post, n_act, &format!("clauses[{i}].post"))?;
    let post = match &c.linear {
        None => Postcondition::Box(bounds),
        Some(l) => Postcondition::Linear(LinearPost {
            lower: AffineMap {
                a: matrix(&l.lower.a, n_act, d, &format!("clauses[{i}].linear.lower.A"))?,
                c: vector(&l.lower.c, n_act, &format!("clauses[{i}].linear.lower.c"))?,
            },
            upper: AffineMap {
                a: matrix(&l.upper.a, n_act, d, &format!("clauses[{i}].linear.upper.A"))?,
                c: vector(&l.upper.c, n_act, &format!("clauses[{i}].linear.upper.c"))?,
            },
            bounds,
        }),
    };
    Ok(CertClause { name: format!("clauses[{i}]"), region, claim: Claim::Bridge(post) })
}

fn matrix(rows: &[Vec<f64>], r: usize, c: usize, what: &str) -> Result<Matrix, BridgeError> {
    if rows.len() != r || rows.iter().any(|row| row.len() != c) || rows.iter().flatten().any(|v| !v.is_finite()) {
        return Err(BridgeError::Certificate(format!(
            "{what}: expected a finite {r} x {c} matrix (one row per action, one column per state variable)"
        )));
    }
    Ok(if r == 0 { Matrix::new(0, c, vec![]) } else { Matrix::from_rows(rows) })
}

fn vector(v: &[f64], n: usize, what: &str) -> Result<Vec<f64>, BridgeError> {
    if v.len() != n || v.iter().any(|x| !x.is_finite()) {
        return Err(BridgeError::Certificate(format!("{what}: expected {n} finite numbers (one per action)")));
    }
    Ok(v.to_vec())
}

/// The tool writes each box once; a repeated box is not a certificate it wrote.
fn refuse_repeated_boxes(clauses: &[CertClause]) -> Result<(), BridgeError> {
    let key = |b: &FBox| -> Vec<u64> { b.lo.iter().chain(&b.hi).map(|v| v.to_bits()).collect() };
    let mut keys: Vec<(Vec<u64>, usize)> = clauses.iter().enumerate().map(|(i, c)| (key(&c.region), i)).collect();
    keys.sort();
    for w in keys.windows(2) {
        if w[0].0 == w[1].0 {
            let (first, second) = (w[0].1.min(w[1].1), w[0].1.max(w[1].1));
            return Err(BridgeError::Certificate(format!(
                "{} repeats the box of {}",
                clauses[second].name, clauses[first].name
            )));
        }
    }
    Ok(())
}

/// Check 1: the clause boxes and the invariant's boxes are the same union.
fn coverage(invariant: &[FBox], clauses: &[CertClause]) -> CheckLine {
    let regions: Vec<FBox> = clauses.iter().map(|c| c.region.clone()).collect();
    let name = "clause boxes cover the invariant and lie inside it".to_string();
    if let Some(gap) = invariant.iter().flat_map(|b| b.uncovered(&regions)).next() {
        return (name, false, format!("uncovered: {gap:?}"));
    }
    for c in clauses {
        if let Some(outside) = c.region.uncovered(invariant).first() {
            return (name, false, format!("{}: its box reaches outside the invariant: {outside:?}", c.name));
        }
    }
    (name, true, format!("{} boxes", regions.len()))
}

/// The bridge clauses, with their indices among the clauses.
fn bridge_clauses(clauses: &[CertClause]) -> impl Iterator<Item = (usize, &FBox, &Postcondition)> {
    clauses.iter().enumerate().filter_map(|(i, c)| match &c.claim {
        Claim::Bridge(post) => Some((i, &c.region, post)),
        Claim::Exact => None,
    })
}

/// Checks 2 and 3: every psi is non-empty on its box and holds there.
fn postconditions(sys: &System, checker: &PostChecker<'_>, clauses: &[CertClause]) -> [CheckLine; 2] {
    let mut vacuous = None;
    let mut wrong = None;
    for (i, region, post) in bridge_clauses(clauses) {
        if vacuous.is_none()
            && let Err(why) = nonvacuous(sys, region, post)
        {
            vacuous = Some(format!("clause {i}: {why}"));
        }
        if wrong.is_none()
            && let Err(why) = checker.holds(region, post, RECHECK_DEPTH)
        {
            wrong = Some(format!("clause {i}: {why}"));
        }
    }
    let n = format!("{} clauses", bridge_clauses(clauses).count());
    [
        (
            "no psi is empty anywhere on its box (no vacuous clause)".into(),
            vacuous.is_none(),
            vacuous.unwrap_or(n.clone()),
        ),
        ("each psi holds on its box: every bound re-bounded".into(), wrong.is_none(), wrong.unwrap_or(n)),
    ]
}

/// Check 4: each bridge clause's environment condition, decided by `holds` (`None` when it
/// holds, else why not); the line is `name`, its detail the first failure or the count of
/// clauses in `unit`.
fn environment(
    clauses: &[CertClause],
    name: String,
    unit: &str,
    mut holds: impl FnMut(&FBox, &Postcondition) -> Result<Option<String>, BridgeError>,
) -> Result<CheckLine, BridgeError> {
    let mut bad = None;
    for (i, region, post) in bridge_clauses(clauses) {
        if let Some(why) = holds(region, post)? {
            bad = Some(format!("clause {i}: {why}"));
            break;
        }
    }
    let ok = bad.is_none();
    Ok((name, ok, bad.unwrap_or_else(|| format!("{} {unit}", bridge_clauses(clauses).count()))))
}

/// A discrete step's clause, by Z3 alone (by the fast path's outward-rounded enclosures for a
/// step with elementary functions).
fn discrete_holds(
    backend: &mut dyn EnvChecker,
    inv: &Pred,
    region: &FBox,
    post: &Postcondition,
) -> Result<Option<String>, BridgeError> {
    let q = BridgeQuery::new(region, post, Target::StaysIn(inv)).with_extra(inv);
    Ok(match backend.check_bridge(&q)? {
        Answer::Valid => None,
        Answer::Invalid(w) => Some(format!("a successor leaves the invariant: {w}")),
        Answer::Unknown(r) => Some(format!("undecided ({r})")),
    })
}

/// Check 6: no run stops at a state of the invariant, re-derived from the clauses themselves
/// (each box with its psi, which check 3 confirmed, or with the networks for an exact clause) by
/// the engine's own procedure ([`crate::stops`]): certificates written before the check existed
/// are judged by it too.
fn stops(sys: &System, inv: &Pred, clauses: &[CertClause]) -> Result<CheckLine, BridgeError> {
    let pieces: Vec<(FBox, Option<Postcondition>)> = clauses
        .iter()
        .map(|c| match &c.claim {
            Claim::Bridge(post) => (c.region.clone(), Some(post.clone())),
            Claim::Exact => (c.region.clone(), None),
        })
        .collect();
    let check = crate::stops::check_stop_free(
        sys,
        inv,
        &pieces,
        &crate::Config::default(),
        &trestle_core::Budget::unlimited(),
    )?;
    let name = "no run stops at a state of the invariant: some branch enabled, every successor a state (Z3)";
    Ok(match check.unknown(sys) {
        None => (name.into(), true, format!("{} boxes", pieces.len())),
        Some(why) => (name.into(), false, why.to_string()),
    })
}

/// A sampled-data system's clause: the flow is enclosed again with the certificate's settings
/// over the box, psi's action box and the inputs' hull, and the leaf system's condition (linear
/// enclosure, else box enclosure) is decided by Z3 alone ([`crate::flow`]).
fn flow_leaf_holds(
    sys: &System,
    step: &FlowStep,
    inv: &Pred,
    region: &FBox,
    post: &Postcondition,
) -> Result<Option<String>, BridgeError> {
    let e = match step.enclose(region, post.action_box()) {
        Ok(e) => e,
        Err(why) => return Ok(Some(format!("no enclosure of the flow: {why}"))),
    };
    let mut last = String::new();
    for leaf in [step.linear_leaf(sys, &e.linear), step.box_leaf(sys, &e.state)] {
        let mut z3 = Z3Backend::new(&leaf, CheckerConfig::default())?;
        let q = BridgeQuery::new(region, post, Target::StaysIn(inv)).with_extra(inv);
        match z3.check_bridge(&q)? {
            Answer::Valid => return Ok(None),
            a => last = answer_text(&a),
        }
    }
    Ok(Some(format!("the enclosed successors are not shown inside the invariant ({last})")))
}

fn describe_settings(s: &trestle_flow::FlowSettings) -> String {
    let order =
        s.order.map_or_else(|| format!("order {} (from the tolerance)", s.effective_order()), |o| format!("order {o}"));
    let steps = s
        .substeps
        .map_or_else(|| format!("adaptive sub-steps, tolerance {:e}", s.tolerance), |n| format!("{n} sub-steps"));
    format!("{order}, {steps}")
}

fn answer_text(a: &Answer) -> String {
    match a {
        Answer::Valid => "valid".into(),
        Answer::Invalid(w) => format!("fails at {w}"),
        Answer::Unknown(r) => format!("undecided: {r}"),
    }
}
