//! Certificates of bounded formulas proven by bound propagation through time, and their
//! re-check.
//!
//! BPT proves a bounded formula when its atoms, evaluated on enclosures `R_0 .. R_k` of the full
//! states (state and hidden state) runs can be in at steps `0 .. k`, make the formula true on
//! every path those enclosures contain. The certificate is those enclosures, one chain per Init
//! box, over the system with its hidden states lifted into the state (`trestle_ir::lift`), and
//! the formula. [`certify_bounded`] re-checks it trusting nothing from the run that wrote it:
//! 0. no run of the system can stop before the horizon ([`stop_free`], on the system's text):
//!    the transition queries below constrain only the runs that go on;
//! 1. Init (with every hidden unit 0) lies in the union of the chains' `R_0` (Z3);
//! 2. every transition of every chain, `(R_t /\ a = f(s) /\ Next) => R_{t+1}'`, by Z3 over the
//!    exact environment step: with the actions and next hidden states bounded on `R_t` by one step
//!    of bound propagation recomputed here (outward-rounded intervals met with CROWN: the trust
//!    the bridge engine's certificates put in sound bounds), on halves of `R_t` where the whole
//!    does not do, and where boxes stay unproven with the networks encoded exactly on them and
//!    the weights as exact rationals ([`trestle_bridge::exact::decide_transition`]); so each
//!    `R_t` contains every full state a run from Init reaches at step `t` (every run reaches it,
//!    by 0). A step with elementary functions goes to Z3 over its linear relaxation on the box
//!    (the environment check's, re-derived on the box here), with no exact query after it; where
//!    BPT met its enclosures with the step's relaxation under CROWN's linear psi
//!    ([`bpt::Relaxation`]), that step is recomputed from `R_t` first (inside `R_{t+1}`: proven by
//!    the bounds alone), then its psi is re-derived on the box and each bound of `R_{t+1}` may
//!    rest on either postcondition (Z3);
//! 3. the formula, recomputed from the certificate's text in the system's scope, is true on every
//!    chain's boxes with each atom decided by an outward-rounded interval (true on a box only when
//!    true at every point of it).
//!
//! Steps 0 to 2 make `R_t` an enclosure of step `t` whatever the run that wrote them did, and
//! step 3 is BPT's own exact test on them, so a valid certificate proves the formula.

use crate::bpt::{self, FullBox};
use crate::path::PathFormula;
use serde::{Deserialize, Serialize};
use trestle_bridge::BridgeError;
use trestle_bridge::certificate::{BoxJson, Certification, boxes_pred};
use trestle_bridge::exact::{ExactDecision, decide_transition, phases_over};
use trestle_ir::formula::Ltl;
use trestle_ir::interval::Interval;
use trestle_ir::lift::{Lifted, lift_hidden_state};
pub use trestle_ir::stops::stop_free;
use trestle_ir::system::Policy;
use trestle_ir::{Env, FBox, Pred, System};
use trestle_smt::checker::elementary_function;
use trestle_smt::{
    Answer, BridgeQuery, Checker, CheckerConfig, EnvChecker, NetworkPhases, Postcondition, Target, Z3Backend,
};

/// The format of a bounded-formula certificate.
pub const FORMAT: &str = "trestle-ltl-bounded-certificate/1";

/// A bounded formula proven on enclosures of every step (module docs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoundedJson {
    pub format: String,
    pub system: String,
    /// The bounded formula proven, in the system's names.
    pub ltl: String,
    /// The lifted state: the system's state variables, then the kept hidden units.
    pub state_vars: Vec<String>,
    /// Per Init box, the enclosures of steps `0 ..= depth` over the lifted state (exact f64 ends).
    pub chains: Vec<Vec<BoxJson>>,
}

/// The full box over the lifted state: the state variables, then the kept hidden units.
pub(crate) fn lifted_box(lifted: &Lifted, b: &FullBox) -> FBox {
    let ivs = b.state.iter().chain(lifted.hidden.iter().map(|h| &b.hidden[h.controller][h.layer][h.unit]));
    let (lo, hi) = ivs.map(|iv| (iv.lo, iv.hi)).unzip();
    FBox::new(lo, hi)
}

/// The certificate of `phi` (bounded) from BPT's chains of full boxes, one per Init box. `Err`
/// (why) when no certificate could be re-checked: a run may stop ([`stop_free`]) or the hidden
/// state cannot be lifted (the verdict stands on BPT either way).
pub fn bounded(sys: &System, phi: &Ltl, chains: &[Vec<FullBox>]) -> Result<BoundedJson, String> {
    stop_free(sys)?;
    let lifted = lift_hidden_state(sys).map_err(|e| format!("lifting the hidden state: {e}"))?;
    Ok(BoundedJson {
        format: FORMAT.into(),
        system: sys.name.clone(),
        ltl: trestle_ir::print::Names::of(sys).ltl(phi),
        state_vars: lifted.system.state_names(),
        chains: chains
            .iter()
            .map(|chain| {
                chain
                    .iter()
                    .map(|b| {
                        let f = lifted_box(&lifted, b);
                        BoxJson { lo: f.lo, hi: f.hi }
                    })
                    .collect()
            })
            .collect(),
    })
}

/// Reads a bounded certificate's text (`Err` when it is not one).
pub fn parse(text: &str) -> Result<BoundedJson, BridgeError> {
    serde_json::from_str(text).map_err(|e| BridgeError::Certificate(format!("not a bounded LTL certificate: {e}")))
}

/// Whether a certificate file's text declares this format (read before parsing it as one).
pub fn is_bounded(value: &serde_json::Value) -> bool {
    value.get("format").and_then(|f| f.as_str()) == Some(FORMAT)
}

/// Re-checks a bounded certificate of `phi` (the certificate's `ltl`, parsed by the caller in the
/// system's scope) against the system (module docs). `Err` when it is not a well-formed
/// certificate of this system and formula; otherwise what the checks found.
pub fn certify_bounded(cert: &BoundedJson, sys: &System, phi: &Ltl) -> Result<Certification, BridgeError> {
    if cert.format != FORMAT {
        return malformed(format!("unknown format '{}' (expected {FORMAT})", cert.format));
    }
    if cert.system != sys.name {
        return malformed(format!(
            "the certificate is for system '{}', the system file describes '{}'",
            cert.system, sys.name
        ));
    }
    if !phi.is_bounded() {
        return malformed(format!("'{}' is not a bounded formula", cert.ltl));
    }
    if sys.controllers.iter().any(|c| matches!(c.policy, Policy::Select { .. })) {
        return malformed(
            "bound propagation through time does not propagate network selectors: no certificate of it exists".into(),
        );
    }
    let lifted =
        lift_hidden_state(sys).map_err(|e| BridgeError::Certificate(format!("lifting the hidden state: {e}")))?;
    let lsys = &lifted.system;
    if cert.state_vars != lsys.state_names() {
        return malformed(format!(
            "the certificate's state variables {:?} are not the lifted system's {:?}",
            cert.state_vars,
            lsys.state_names()
        ));
    }
    let holds = PathFormula::of(phi, false).map_err(|e| BridgeError::Certificate(e.to_string()))?;
    let negated = PathFormula::of(phi, true).map_err(|e| BridgeError::Certificate(e.to_string()))?;
    let depth = holds.depth().max(negated.depth());
    if cert.chains.is_empty() {
        return malformed("the certificate has no chains".into());
    }
    let dims = lsys.state.len();
    let chains: Vec<Vec<FBox>> = cert
        .chains
        .iter()
        .enumerate()
        .map(|(c, chain)| {
            if chain.len() != depth + 1 {
                return malformed(format!("chain {c} has {} boxes; the formula needs steps 0..={depth}", chain.len()));
            }
            chain
                .iter()
                .enumerate()
                .map(|(t, b)| {
                    let f = FBox::new(b.lo.clone(), b.hi.clone());
                    if f.lo.len() != dims || f.hi.len() != dims || !f.is_valid() {
                        return malformed(format!(
                            "chains[{c}][{t}]: not a valid box of {dims} finite dimensions with lo <= hi"
                        ));
                    }
                    Ok(f)
                })
                .collect()
        })
        .collect::<Result<_, _>>()?;

    // 0. No run stops before the horizon (the transitions constrain only runs that go on).
    let stops = stop_free(sys).err();
    let mut checks = vec![(
        "no run stops before the horizon".to_string(),
        stops.is_none(),
        stops.unwrap_or_else(|| {
            "a branch always enabled, updates inside their domains and kinds, lookups in range".into()
        }),
    )];
    let config = CheckerConfig::default().with_timeout(QUERY_LIMIT);
    let mut t = Transitions {
        z3: Z3Backend::new(lsys, config.clone())?,
        checker: Checker::new(lsys, config)?,
        relaxation: if lifted.hidden.is_empty() { bpt::Relaxation::of(sys) } else { None },
        exact: elementary_function(lsys).is_none(),
    };
    // 1. Init, hidden units 0, inside the first boxes.
    let starts: Vec<FBox> = chains.iter().map(|c| c[0].clone()).collect();
    let init = t.z3.check_init(&boxes_pred(&starts))?;
    checks.push(("Init => R_0 (Z3)".to_string(), init == Answer::Valid, answer_text(&init)));
    // 2. Every transition.
    let mut failed = None;
    'chains: for (c, chain) in chains.iter().enumerate() {
        for step in 0..depth {
            let target = boxes_pred(std::slice::from_ref(&chain[step + 1]));
            if let Err(why) = transition(sys, &lifted, &mut t, &chain[step], (&chain[step + 1], &target), SPLIT_DEPTH)?
            {
                failed = Some(format!("chain {c}, step {step} -> {}: {why}", step + 1));
                break 'chains;
            }
        }
    }
    checks.push((
        "R_t /\\ Next => R_{t+1}' (bounds or Z3)".to_string(),
        failed.is_none(),
        failed.unwrap_or_else(|| format!("{} transitions", chains.len() * depth)),
    ));
    // 3. The formula on the state part of the boxes.
    let n = sys.state.len();
    let states: Vec<Vec<Vec<Interval>>> =
        chains.iter().map(|chain| chain.iter().map(|b| (0..n).map(|i| b.interval(i)).collect()).collect()).collect();
    let undecided = states.iter().position(|boxes| holds.holds_on_boxes(boxes) != Some(true));
    checks.push((
        format!("'{}' holds on the enclosures (outward-rounded atoms)", cert.ltl),
        undecided.is_none(),
        match undecided {
            None => format!("{} chains", chains.len()),
            Some(c) => format!("chain {c} leaves the formula false or undecided"),
        },
    ));
    let valid = checks.iter().all(|c| c.1);
    Ok(Certification { valid, kind: "proof", checks })
}

/// How many times a transition's box is halved when the bounds of one step do not prove it whole.
const SPLIT_DEPTH: usize = 4;

/// The limit of each of the checker's Z3 queries.
const QUERY_LIMIT: std::time::Duration = std::time::Duration::from_secs(20);

/// What re-checks the transitions of the lifted system.
struct Transitions<'s> {
    /// Exact queries: Init, and a transition with the networks encoded exactly.
    z3: Z3Backend<'s>,
    /// The bridge queries: the fast path, then Z3; a step with elementary functions through its
    /// linear relaxation on the box (the environment check's).
    checker: Checker<'s>,
    /// On a memoryless system with a curved step: the relaxation BPT met its enclosures with
    /// ([`bpt::Relaxation`]), whose psi (CROWN's bounds linear in the state) is re-derived here.
    relaxation: Option<bpt::Relaxation<'s>>,
    /// Whether Z3 takes the step exactly (no elementary function).
    exact: bool,
}

/// `(region /\ a = f(s) /\ Next) => target'` on the lifted system: with the actions and next
/// hidden states replaced by their enclosures on the region (one step of bound propagation on the
/// original system from the region, recomputed here: the bridge's trust in sound bounds, with the
/// environment step exact, or for elementary functions over its linear relaxation on the box),
/// and, where BPT met its enclosures with the step's relaxation, each bound of the target by
/// either postcondition (BPT's enclosure is the meet of the two boxes, side by side); on the
/// region and, failing that, on the two halves of its widest side, at most `depth` times; where
/// that leaves a box unproven, with the networks encoded exactly on it (a step Z3 takes exactly
/// only). `Ok(Err(why))` when it stays unproven.
fn transition(
    sys: &System,
    lifted: &Lifted,
    t: &mut Transitions<'_>,
    region: &FBox,
    (next, target): (&FBox, &Pred),
    depth: usize,
) -> Result<Result<(), String>, BridgeError> {
    let lsys = &lifted.system;
    if let Some(r) = &t.relaxation
        && relaxed_step_inside(sys, r, region, next)
    {
        return Ok(Ok(()));
    }
    let post = action_enclosure(sys, lifted, region);
    if let Some(post) = &post
        && t.checker.check_bridge(&BridgeQuery::new(region, post, Target::StaysIn(target)))? == Answer::Valid
    {
        return Ok(Ok(()));
    }
    if let (Some(post), Some(psi)) = (&post, t.relaxation.as_ref().and_then(|r| r.psi(region)))
        && bounds_proven(&mut t.checker, region, &[post, &psi], target)?
    {
        return Ok(Ok(()));
    }
    let widths = region.widths();
    let widest = (0..widths.len()).max_by(|&a, &b| widths[a].total_cmp(&widths[b])).unwrap_or(0);
    // Halves help the enclosures; without any, only the exact query is left.
    if depth == 0 || post.is_none() || widths.get(widest).is_none_or(|&w| w <= 0.0) {
        if !t.exact {
            return Ok(Err("the step's linear relaxation leaves it undecided on the smallest halves".into()));
        }
        return Ok(match decide_transition(lsys, &mut t.z3, phases(lsys, region), region, target)? {
            ExactDecision::Proven => Ok(()),
            ExactDecision::Refuted(w) => Err(format!("a successor leaves the next enclosure: {w}")),
            ExactDecision::Undecided(r) => Err(format!("Z3 could not decide ({r})")),
        });
    }
    let (low, high) = region.bisect(widest);
    for half in [low, high] {
        if let Err(why) = transition(sys, lifted, t, &half, (next, target), depth - 1)? {
            return Ok(Err(why));
        }
    }
    Ok(Ok(()))
}

/// Whether BPT's relaxed step ([`bpt::step_relaxed`] under CROWN), recomputed from `region` of a
/// memoryless system, lies inside `next`: the very computation that wrote `next`, so a chain BPT
/// wrote passes without a solver. It is sound as the bounds are (outward-rounded intervals, CROWN,
/// the mean-value relaxation enclosed by `trestle-real`), the trust the bridge's certificates put
/// in the fast path.
fn relaxed_step_inside(sys: &System, relaxation: &bpt::Relaxation<'_>, region: &FBox, next: &FBox) -> bool {
    let from = FullBox { state: region.intervals(), hidden: vec![Vec::new(); sys.controllers.len()] };
    bpt::step_relaxed(sys, &from, bpt::Domain::Crown, Some(relaxation))
        .is_ok_and(|b| b.state.iter().enumerate().all(|(i, iv)| iv.is_subset_of(&next.interval(i))))
}

/// Whether every conjunct of `target` (a box's bounds) holds on every successor of `region`
/// under one of `posts` at least: each bound is a query of its own, so each may rest on the
/// postcondition that proves it.
fn bounds_proven(
    checker: &mut Checker<'_>,
    region: &FBox,
    posts: &[&Postcondition],
    target: &Pred,
) -> Result<bool, BridgeError> {
    let bounds = match target {
        Pred::And(ps) => ps.iter().collect(),
        p => vec![p],
    };
    for bound in bounds {
        let mut proven = false;
        for post in posts {
            if checker.check_bridge(&BridgeQuery::new(region, post, Target::StaysIn(bound)))? == Answer::Valid {
                proven = true;
                break;
            }
        }
        if !proven {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Enclosures of the lifted system's actions on `region` (a box of the lifted state): the
/// original controllers run by bound propagation (intervals met with CROWN) from the region's
/// state and hidden states, their actions and new hidden states placed where the lifted system
/// reads them. Hidden units the lifted state does not keep are read by no unit; they start at 0.
/// `None` when the networks cannot be bounded there.
fn action_enclosure(sys: &System, lifted: &Lifted, region: &FBox) -> Option<Postcondition> {
    let lsys = &lifted.system;
    let n = sys.state.len();
    let state: Vec<Interval> = (0..n).map(|i| region.interval(i)).collect();
    let mut memory: Vec<Vec<Vec<Interval>>> = sys
        .controllers
        .iter()
        .map(|c| match c.policy {
            Policy::Network(k) => {
                sys.networks[k].network.hidden_dims().into_iter().map(|d| vec![Interval::point(0.0); d]).collect()
            }
            Policy::Select { .. } => Vec::new(),
        })
        .collect();
    for h in &lifted.hidden {
        memory[h.controller][h.layer][h.unit] = region.interval(h.state);
    }
    let inputs: Vec<Interval> = sys.nondet.iter().map(trestle_ir::nondet::hull).collect();
    let actions = bpt::actions(sys, &state, &inputs, &mut memory, bpt::Domain::Crown).ok()?;
    // The original actions keep their indices; each kept hidden unit's next value is the action
    // its state variable is updated to.
    let mut post = vec![Interval::ENTIRE; lsys.actions.len()];
    post[..actions.len()].copy_from_slice(&actions);
    for h in &lifted.hidden {
        for b in &lsys.step.branches {
            let Some(trestle_ir::Expr::Var(trestle_ir::VarRef::Action(a))) = b.updates.get(h.state) else {
                return None;
            };
            post[*a] = memory[h.controller][h.layer][h.unit];
        }
    }
    let post = FBox::from_intervals(&post);
    post.is_valid().then_some(Postcondition::Box(post))
}

/// The ReLU phases of every controller's network on every state of `region`, from CROWN's
/// outward-rounded pre-activation bounds over the controller's inputs (observations of the state
/// and the inputs' hulls, by interval arithmetic); a network that cannot be bounded keeps every
/// ReLU an `ite`. Only a smaller query: the phases hold on the whole region, so the query means
/// the same.
fn phases(sys: &System, region: &FBox) -> Vec<Vec<Option<NetworkPhases>>> {
    let state = region.intervals();
    let inputs: Vec<Interval> = sys.nondet.iter().map(trestle_ir::nondet::hull).collect();
    let env = Env::new(&state[..], &[], &inputs[..]);
    phases_over(sys, |c| {
        let input: Vec<Interval> = sys.controllers[c].inputs.iter().map(|e| e.eval_interval(&env)).collect();
        FBox::from_intervals(&input)
    })
}

fn malformed<T>(why: String) -> Result<T, BridgeError> {
    Err(BridgeError::Certificate(why))
}

fn answer_text(a: &Answer) -> String {
    match a {
        Answer::Valid => "valid".into(),
        Answer::Invalid(w) => format!("counterexample: {w}"),
        Answer::Unknown(r) => format!("unknown: {r}"),
    }
}
