//! Safety for all time of a sampled-data system (`[flow]`) by a reach chain of zonotopes, and its
//! certificate.
//!
//! # The invariant
//!
//! From each box `B` of Init the zonotopes `Z_0 ⊇ B`, `Z_{i+1} = step(Z_i)` ([`crate::flow_reach`]:
//! each contains every successor of every state of the one before) are computed until some
//! `Z_K` lies in a terminal box `T`; for `T` the same chain `W_0 ⊇ T`, `W_{j+1} = step(W_j)` until
//! `W_m ⊆ T` (`m >= 1`). Every run from Init is then in `Z_t` at step `t <= K`, and afterwards in
//! `W_j` for some `j` (`Z_K ⊆ T ⊆ W_0`, `W_m ⊆ T ⊆ W_0`): the union of all `Z_i` and `W_j` is an
//! inductive invariant containing Init. When each of them lies in Safe (decided on the zonotope,
//! [`trestle_flow::Zonotope::decide`]) and in the domains, the system is safe forever. Boxes of
//! Init whose chain fails (Safe undecided on a set, no enclosure, too many periods) are halved
//! along their widest side: the chains form a tree whose leaves cover Init.
//!
//! # Finding T
//!
//! An f64 simulation from the centre of Init's hull runs until the state stops moving (the closed
//! loop's equilibrium, e.g. TORA's near (-0.0144, 0, -0.1442, 0)), or else for 5 [`MAX_PERIODS`]
//! periods, the hull of its last [`TAIL`] states standing for a limit cycle; `T` is that core
//! widened on every side by a margin tried from [`ReachSettings::terminal_radii`] (by default
//! [`TERMINAL_RADII`], largest first) (a larger `T` shortens the chains; a
//! smaller one fixes the ReLU phases, so CROWN is exact there and the cycle contracts). The
//! simulation is a heuristic: only the chains decide.
//!
//! # The certificate ([`FORMAT_REACH`])
//!
//! It stores the flow settings, the generators per state kept by each step's reduction, `T`, the cycle `W_0..W_m`, and per chain its box of Init and
//! `Z_0..Z_K` (f64 values, written and read exactly). [`certify_reach`] re-checks it without the
//! search: every box of Init (as the system gives it) is covered by the chains' boxes (exact
//! rational comparisons, a box split at the pieces' faces until each part lies in one piece);
//! each `Z_0` and `W_0` is axis-aligned and its inner box (rounded inward) contains its chain's box
//! or `T`; every step is **recomputed** from the stored set with the same validated step and must
//! give exactly the stored successor (f64 equality of centre and generators: the recomputed set
//! is a sound enclosure of the true image, so the stored one is too; equality rather than a
//! containment test because the step is deterministic and equality is exact to check); the
//! chain's last set and `W_m` have box hulls (rounded outward) inside `T`; every set lies in Safe
//! and its successors in the domains (the step checks the latter).

use crate::error::DriverError;
use serde::{Deserialize, Serialize};
use std::time::Instant;
use trestle_bridge::certificate::{BoxJson, Certification, FlowJson};
use trestle_bridge::flow::FlowStep;
use trestle_core::Budget;
use trestle_flow::{FlowSettings, Zonotope};
use trestle_ir::plant::SampledPlant;
use trestle_ir::{FBox, Pred, System};

/// The certificate's format tag.
pub const FORMAT_REACH: &str = "trestle-flow-reach-certificate/1";
/// Half-sides of the terminal cube tried by default, largest first.
pub const TERMINAL_RADII: [f64; 10] = [0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001, 0.0005];
/// The most periods of one chain (and of the cycle).
pub const MAX_PERIODS: usize = 400;
/// The most halvings of one box of Init.
pub const MAX_SPLITS: usize = 12;
/// The most chains in all, by default.
pub const MAX_CHAINS: usize = 512;

/// The reach-chain search's tuning (`synth --reach`'s `--reach-*` flags).
#[derive(Clone, Debug, PartialEq)]
pub struct ReachSettings {
    /// Half-sides of the terminal box around the attractor, tried in this order (module doc).
    pub terminal_radii: Vec<f64>,
    /// The most chains (pieces of Init) in all.
    pub max_chains: usize,
    /// Girard's reduction keeps at most this many generators per state variable; stored in the
    /// certificate, whose steps `certify` recomputes with it.
    pub generators_per_state: usize,
}

impl Default for ReachSettings {
    fn default() -> ReachSettings {
        ReachSettings {
            terminal_radii: TERMINAL_RADII.to_vec(),
            max_chains: MAX_CHAINS,
            generators_per_state: crate::flow_reach::GENERATORS_PER_STATE,
        }
    }
}

fn default_generators() -> usize {
    crate::flow_reach::GENERATORS_PER_STATE
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ZonotopeJson {
    pub center: Vec<f64>,
    pub generators: Vec<Vec<f64>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChainJson {
    /// The piece of Init this chain starts from.
    pub init: BoxJson,
    /// `Z_0 .. Z_K`.
    pub sets: Vec<ZonotopeJson>,
}

/// A reach-chain proof of `G safe` (module doc).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReachCertificate {
    pub format: String,
    pub system: String,
    pub flow: FlowJson,
    /// Girard's reduction's generators per state variable in every step (12 when absent).
    #[serde(default = "default_generators")]
    pub generators_per_state: usize,
    pub terminal: BoxJson,
    /// `W_0 .. W_m`.
    pub cycle: Vec<ZonotopeJson>,
    pub chains: Vec<ChainJson>,
}

fn to_json(z: &Zonotope) -> ZonotopeJson {
    ZonotopeJson { center: z.center.clone(), generators: z.generators.clone() }
}

fn from_json(z: &ZonotopeJson, n: usize) -> Result<Zonotope, String> {
    if z.center.len() != n || z.generators.iter().any(|g| g.len() != n) {
        return Err(format!("a set that is not of {n} dimensions"));
    }
    if z.center.iter().chain(z.generators.iter().flatten()).any(|v| !v.is_finite()) {
        return Err("a set with a value that is not finite".into());
    }
    Ok(Zonotope { center: z.center.clone(), generators: z.generators.clone() })
}

fn box_of(b: &BoxJson) -> FBox {
    FBox::new(b.lo.clone(), b.hi.clone())
}

/// Whether every state of the zonotope's box hull is inside the box `t`.
fn hull_inside(z: &Zonotope, t: &FBox) -> bool {
    z.hull().iter().enumerate().all(|(i, v)| t.lo[i] <= v.lo && v.hi <= t.hi[i])
}

/// For an axis-aligned zonotope (each generator one non-zero entry), a box inside it (rounded
/// inward); `None` otherwise.
fn inner_box(z: &Zonotope) -> Option<FBox> {
    let n = z.dim();
    let mut r = vec![0.0f64; n];
    for g in &z.generators {
        let nonzero: Vec<usize> = (0..n).filter(|&i| g[i] != 0.0).collect();
        match nonzero.as_slice() {
            [] => {}
            [i] => r[*i] = trestle_ir::round::add_down(r[*i], g[*i].abs()),
            _ => return None,
        }
    }
    let lo = (0..n).map(|i| trestle_ir::round::sub_up(z.center[i], r[i])).collect();
    let hi = (0..n).map(|i| trestle_ir::round::add_down(z.center[i], r[i])).collect();
    Some(FBox::new(lo, hi))
}

fn box_inside(inner: &FBox, outer: &FBox) -> bool {
    (0..inner.dims()).all(|i| outer.lo[i] <= inner.lo[i] && inner.hi[i] <= outer.hi[i])
}

/// A chain from `z0` into `t` with every set in Safe: the sets, or why not.
fn chain(
    sys: &System,
    step: &FlowStep,
    safe: &Pred,
    z0: Zonotope,
    t: &FBox,
    generators: usize,
    budget: &Budget,
) -> Result<Vec<Zonotope>, String> {
    let mut sets = vec![z0];
    loop {
        let z = sets.last().expect("a chain has a set");
        if z.decide(safe) != Some(true) {
            return Err(format!(
                "Safe is not decided on the set of period {} (hull side {:.3e})",
                sets.len() - 1,
                z.width()
            ));
        }
        if !crate::flow_reach::inside_domains(sys, &z.hull()) {
            return Err(format!("the set of period {} may leave a domain", sets.len() - 1));
        }
        if sets.len() > 1 && hull_inside(z, t) {
            return Ok(sets);
        }
        if sets.len() > MAX_PERIODS || budget.is_over() {
            return Err(format!("not inside T after {} periods (hull side {:.3e})", sets.len() - 1, z.width()));
        }
        let next =
            crate::flow_reach::step(sys, step, z, generators).map_err(|e| format!("period {}: {e}", sets.len() - 1))?;
        sets.push(next);
    }
}

/// The f64 run from `x0`: the box hull of where it stays, a point when it stops moving (an
/// equilibrium), otherwise of its last [`TAIL`] states of 5 [`MAX_PERIODS`] (a limit cycle);
/// `None` when the run fails or blows up.
fn attractor(sys: &System, step: &FlowStep, x0: &[f64]) -> Option<FBox> {
    // Inside each input's interval (its nearest f64 may lie outside, where a domain check stops the run).
    let w = trestle_ir::nondet::f64_inputs(sys, &trestle_bridge::flow_falsify::held_inputs(sys));
    let period = trestle_ir::num::to_f64_nearest(&step.period);
    let mut memory = trestle_ir::sim::initial_memory::<f64>(sys);
    let mut x = x0.to_vec();
    let mut tail: Option<FBox> = None;
    let periods = 5 * MAX_PERIODS;
    for j in 0..periods {
        let u = trestle_ir::sim::controller_actions(sys, &x, &w, &mut memory).ok()?;
        let next = step.flow().simulate(&x, &u, &w, period, 1e-12).ok()?;
        let moved = next.iter().zip(&x).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        x = next;
        if !moved.is_finite() {
            return None;
        }
        if moved < 1e-9 {
            return Some(FBox::new(x.clone(), x));
        }
        if j + TAIL >= periods {
            tail = Some(match tail {
                None => FBox::new(x.clone(), x.clone()),
                Some(t) => FBox::new(
                    t.lo.iter().zip(&x).map(|(a, b)| a.min(*b)).collect(),
                    t.hi.iter().zip(&x).map(|(a, b)| a.max(*b)).collect(),
                ),
            });
        }
    }
    tail
}

/// The periods of the f64 run whose hull is the terminal set's core when it does not settle.
pub const TAIL: usize = 200;

/// A proof found: the certificate and figures.
#[derive(Debug)]
pub struct ForeverProof {
    pub certificate: ReachCertificate,
    pub sets: usize,
    pub terminal_radius: f64,
    pub longest_chain: usize,
}

/// Searches a reach-chain invariant inside Safe (module doc); `Err` with why none was found.
pub fn prove_forever(
    sys: &System,
    plant: &SampledPlant,
    settings: FlowSettings,
    reach: &ReachSettings,
    budget: &Budget,
) -> Result<Result<ForeverProof, String>, DriverError> {
    let safe = sys.safe.clone().ok_or_else(|| DriverError::input("a proof for all time needs the system's `safe`"))?;
    let step = FlowStep::new(sys, plant, settings)?;
    let n = sys.state.len();
    let init = init_boxes(sys)?;
    let hull = init.iter().skip(1).fold(init[0].clone(), |h, b| {
        FBox::new((0..n).map(|i| h.lo[i].min(b.lo[i])).collect(), (0..n).map(|i| h.hi[i].max(b.hi[i])).collect())
    });
    let Some(core) = attractor(sys, &step, &hull.center()) else {
        return Ok(Err("the f64 run from Init's centre fails or blows up".into()));
    };
    // The terminal cube: the largest that returns into itself.
    let mut found = None;
    let mut last_why = String::new();
    for &r in &reach.terminal_radii {
        let t = FBox::new(core.lo.iter().map(|c| c - r).collect(), core.hi.iter().map(|c| c + r).collect());
        let generators = reach.generators_per_state;
        match chain(sys, &step, &safe, Zonotope::from_box(&t.intervals()), &t, generators, budget) {
            Ok(cycle) => {
                found = Some((t, cycle, r));
                break;
            }
            Err(why) => last_why = format!("T of half-side {r}: {why}"),
        }
    }
    let Some((t, cycle, radius)) = found else {
        return Ok(Err(format!(
            "no box around the f64 run's attractor [{:?}, {:?}] returns into itself ({last_why})",
            core.lo, core.hi
        )));
    };
    let mut chains = Vec::new();
    let mut queue: Vec<(FBox, usize)> = init.into_iter().map(|b| (b, 0)).collect();
    let mut sets = cycle.len();
    let mut longest = 0;
    while let Some((b, depth)) = queue.pop() {
        if chains.len() + queue.len() >= reach.max_chains {
            return Ok(Err(format!("more than {} pieces of Init would be needed", reach.max_chains)));
        }
        match chain(sys, &step, &safe, Zonotope::from_box(&b.intervals()), &t, reach.generators_per_state, budget) {
            Ok(zs) => {
                sets += zs.len();
                longest = longest.max(zs.len());
                chains.push(ChainJson {
                    init: BoxJson { lo: b.lo.clone(), hi: b.hi.clone() },
                    sets: zs.iter().map(to_json).collect(),
                });
            }
            Err(why) if depth >= MAX_SPLITS || budget.is_over() => {
                return Ok(Err(format!("a piece of Init halved {depth} times: {why}")));
            }
            Err(_) => {
                let i = (0..n).max_by(|&a, &c| b.widths()[a].total_cmp(&b.widths()[c])).expect("a box has a side");
                let (l, h) = b.bisect(i);
                queue.push((l, depth + 1));
                queue.push((h, depth + 1));
            }
        }
    }
    let certificate = ReachCertificate {
        format: FORMAT_REACH.into(),
        system: sys.name.clone(),
        flow: FlowJson::of(&step),
        generators_per_state: reach.generators_per_state,
        terminal: BoxJson { lo: t.lo.clone(), hi: t.hi.clone() },
        cycle: cycle.iter().map(to_json).collect(),
        chains,
    };
    Ok(Ok(ForeverProof { certificate, sets, terminal_radius: radius, longest_chain: longest }))
}

/// Init as bounded boxes (f64, outward).
fn init_boxes(sys: &System) -> Result<Vec<FBox>, DriverError> {
    let n = sys.state.len();
    let rboxes = sys
        .init
        .to_box_union(n, 64)
        .ok_or_else(|| DriverError::input("Init must be a union of at most 64 boxes for reach chains on flows"))?;
    rboxes
        .iter()
        .map(|b| {
            b.enclosing_fbox()
                .map(|o| o.into_fbox())
                .ok_or_else(|| DriverError::input("Init must be bounded in every state variable on flows"))
        })
        .collect()
}

/// Whether `b` is covered by the union of `pieces` (exact f64 comparisons): split at a face of a
/// piece inside `b` until each part lies in one piece.
fn covered(b: &FBox, pieces: &[FBox], depth: usize) -> bool {
    if pieces.iter().any(|p| box_inside(b, p)) {
        return true;
    }
    if depth > 64 {
        return false;
    }
    for p in pieces {
        if (0..b.dims()).any(|i| p.hi[i] < b.lo[i] || p.lo[i] > b.hi[i]) {
            continue;
        }
        for i in 0..b.dims() {
            for cut in [p.lo[i], p.hi[i]] {
                if b.lo[i] < cut && cut < b.hi[i] {
                    let (mut l, mut h) = (b.clone(), b.clone());
                    l.hi[i] = cut;
                    h.lo[i] = cut;
                    return covered(&l, pieces, depth + 1) && covered(&h, pieces, depth + 1);
                }
            }
        }
    }
    false
}

/// Whether `text` is a reach certificate (by its format tag).
pub fn is_reach(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text)
        .is_ok_and(|v| v.get("format").and_then(|f| f.as_str()) == Some(FORMAT_REACH))
}

/// Re-checks a reach certificate against the system (module doc): a failed check is a
/// rejection (`valid: false`), a malformed file an input error.
pub fn certify_reach(text: &str, sys: &System, plant: &SampledPlant) -> Result<Certification, DriverError> {
    let cert: ReachCertificate =
        serde_json::from_str(text).map_err(|e| DriverError::input(format!("reach certificate: {e}")))?;
    let n = sys.state.len();
    let mut checks: Vec<(String, bool, String)> = Vec::new();
    let bad = |what: String| DriverError::input(format!("reach certificate: {what}"));
    if cert.system != sys.name {
        return Err(bad(format!("it is for the system '{}', not '{}'", cert.system, sys.name)));
    }
    let safe = sys.safe.clone().ok_or_else(|| DriverError::input("the system has no `safe` to certify"))?;
    let step = cert.flow.step(sys, plant)?;
    let t = box_of(&cert.terminal);
    if t.lo.len() != n || t.hi.len() != n || !t.is_valid() {
        return Err(bad("the terminal box is not a valid box of the state".into()));
    }
    let clock = Instant::now();
    // Init covered by the chains' boxes.
    let pieces: Vec<FBox> = cert.chains.iter().map(|c| box_of(&c.init)).collect();
    if pieces.iter().any(|p| p.lo.len() != n || p.hi.len() != n || !p.is_valid()) {
        return Err(bad("a chain's box of Init is not a valid box".into()));
    }
    let init = init_boxes(sys)?;
    let init_ok = init.iter().all(|b| covered(b, &pieces, 0));
    checks.push(("init covered by the chains".into(), init_ok, format!("{} chains", pieces.len())));
    let check_chain = |what: &str, first: &FBox, sets: &[ZonotopeJson]| -> Result<(bool, String), DriverError> {
        let zs: Vec<Zonotope> =
            sets.iter().map(|z| from_json(z, n)).collect::<Result<_, _>>().map_err(|e| bad(format!("{what}: {e}")))?;
        if zs.len() < 2 {
            return Ok((false, format!("{what}: fewer than two sets")));
        }
        if !inner_box(&zs[0]).is_some_and(|inner| box_inside(first, &inner)) {
            return Ok((false, format!("{what}: the first set does not contain its box")));
        }
        for (i, z) in zs.iter().enumerate() {
            if z.decide(&safe) != Some(true) {
                return Ok((false, format!("{what}: set {i} is not inside Safe")));
            }
            if !crate::flow_reach::inside_domains(sys, &z.hull()) {
                return Ok((false, format!("{what}: set {i} leaves a domain")));
            }
        }
        for (i, pair) in zs.windows(2).enumerate() {
            match crate::flow_reach::step(sys, &step, &pair[0], cert.generators_per_state) {
                Ok(image) if image == pair[1] => {}
                Ok(_) => return Ok((false, format!("{what}: set {} is not the recomputed image of set {i}", i + 1))),
                Err(e) => return Ok((false, format!("{what}: the step from set {i} fails: {e}"))),
            }
        }
        if !hull_inside(zs.last().expect("two sets"), &t) {
            return Ok((false, format!("{what}: the last set is not inside T")));
        }
        Ok((true, format!("{what}: {} sets", zs.len())))
    };
    let (ok, detail) = check_chain("cycle", &t, &cert.cycle)?;
    checks.push(("T returns into itself inside Safe".into(), ok, detail));
    let mut chains_ok = true;
    let mut detail = format!("{} chains", cert.chains.len());
    for (k, c) in cert.chains.iter().enumerate() {
        let b = box_of(&c.init);
        let (ok, d) = check_chain(&format!("chain {k}"), &b, &c.sets)?;
        if !ok {
            chains_ok = false;
            detail = d;
            break;
        }
    }
    checks.push(("every chain reaches T inside Safe".into(), chains_ok, detail));
    checks.push(("re-check time".into(), true, format!("{:.2} s", clock.elapsed().as_secs_f64())));
    let valid = checks.iter().all(|c| c.1);
    Ok(Certification { valid, kind: "proof", checks })
}

/// `synth --reach` on a sampled-data system: "safe" with the reach certificate, or "unknown"
/// with why no reach chain was found (never "unsafe": look for runs with `ltl --method bpt`). A
/// system without `[flow]` is an input error.
pub fn synth_reach(
    sys: &System,
    plant: Option<&SampledPlant>,
    settings: FlowSettings,
    reach: &ReachSettings,
    budget: &Budget,
) -> Result<(trestle_core::RunResult, Option<serde_json::Value>), DriverError> {
    use trestle_core::{RunResult, Unknown, Verdict};
    let plant = plant.ok_or_else(|| DriverError::input("--reach needs a sampled-data system ([flow])"))?;
    let clock = Instant::now();
    let found = prove_forever(sys, plant, settings, reach, budget)?;
    let seconds = clock.elapsed().as_secs_f64();
    let verdict = match &found {
        Ok(_) => Verdict::proven(),
        // The chains stop at the time limit: their last error is not the reason then.
        Err(_) if budget.is_over() => Verdict::Unknown(Unknown::Timeout),
        Err(why) => Verdict::Unknown(Unknown::Incomplete(why.clone())),
    };
    let word = if verdict.holds() == Some(true) { "safe" } else { "unknown" };
    let mut result = RunResult::of_verdict("synth", sys, "reach-flow", word, &verdict);
    let mut certificate = None;
    if let Ok(proof) = found {
        let generators = proof
            .certificate
            .chains
            .iter()
            .flat_map(|c| &c.sets)
            .chain(&proof.certificate.cycle)
            .map(|z| z.generators.len())
            .max();
        result.details.insert("chains".into(), serde_json::json!(proof.certificate.chains.len()));
        result.details.insert("sets".into(), serde_json::json!(proof.sets));
        result.details.insert("cycle_periods".into(), serde_json::json!(proof.certificate.cycle.len() - 1));
        result.details.insert("longest_chain_periods".into(), serde_json::json!(proof.longest_chain.saturating_sub(1)));
        result.details.insert("terminal_half_side".into(), serde_json::json!(proof.terminal_radius));
        result.details.insert("max_generators".into(), serde_json::json!(generators));
        result.evidence = Some(
            "a reach chain of zonotopes from every piece of Init into a terminal box that returns into itself, every \
             set inside Safe: their union is an inductive invariant"
                .into(),
        );
        certificate = Some(serde_json::to_value(&proof.certificate).expect("certificates serialise"));
    }
    result.stat("seconds", seconds);
    Ok((result, certificate))
}
