//! The driver: search, merge, prove, and when that fails, explain and attack.

use crate::attack::Attack;
use crate::grow::grow;
use crate::image::Imager;
use crate::merge::merge;
use crate::partition::{Cell, Partition, Status, overlaps};
use crate::report::{ExactRun, SynthProgress, SynthReport, SynthStats, Trajectory};
use crate::search::{End, Search};
use crate::{SynthConfig, SynthError, forward, gfp};
use std::time::{Duration, Instant};
use trestle_bridge::certificate::{FlowJson, boxes_pred, proof, set_flow};
use trestle_bridge::engine::{InductiveRun, check_inductive};
use trestle_bridge::flow::{FlowStep, check_inductive_flow};
use trestle_bridge::{Condition, Inductiveness};
use trestle_core::{Budget, Unknown, Verdict};
use trestle_ir::num::to_f64_nearest;
use trestle_ir::space::distance_outside;
use trestle_ir::{FBox, InnerBox, OuterBox, Pred, RBox, System};
use trestle_smt::{Answer, Checker, CheckerConfig, EnvChecker, Stats, Witness};

/// Most boxes a predicate (Safe, Init) may expand to.
const MAX_PRED_BOXES: usize = 100_000;

/// Safe and Init as boxes.
struct Regions<'s> {
    safe: &'s Pred,
    /// Safe's exact boxes (bounded).
    exact: Vec<RBox>,
    /// Safe's boxes rounded inward (the partition lives inside them) and outward.
    inner: Vec<InnerBox>,
    outer: Vec<OuterBox>,
    /// Init's boxes rounded outward, when Init is a union of boxes.
    init: Option<Vec<FBox>>,
}

impl<'s> Regions<'s> {
    fn of(sys: &'s System) -> Result<Regions<'s>, SynthError> {
        let safe = sys.safe.as_ref().ok_or(SynthError::NoSafe)?;
        let d = sys.state.len();
        let exact = safe.to_box_union(d, MAX_PRED_BOXES).ok_or_else(|| {
            SynthError::SafeShape("it is not a conjunction/disjunction of non-strict variable bounds".into())
        })?;
        if exact.is_empty() {
            return Err(SynthError::SafeShape("it is empty".into()));
        }
        if !exact.iter().all(RBox::is_bounded) {
            return Err(SynthError::SafeShape("a box is unbounded in some variable".into()));
        }
        let inner: Vec<InnerBox> = exact.iter().filter_map(RBox::inner_fbox).collect();
        if inner.is_empty() {
            return Err(SynthError::SafeShape("no f64 box fits inside it".into()));
        }
        let outer = exact.iter().map(RBox::outer_fbox).collect();
        let init =
            sys.init.to_box_union(d, MAX_PRED_BOXES).map(|bs| bs.iter().map(|b| b.outer_fbox().into_fbox()).collect());
        Ok(Regions { safe, exact, inner, outer, init })
    }

    /// The widths of Safe's hull, per dimension.
    fn hull(&self) -> FBox {
        let d = self.outer[0].dims();
        FBox::new(
            (0..d).map(|i| self.outer.iter().map(|b| b.lo[i]).fold(f64::INFINITY, f64::min)).collect(),
            (0..d).map(|i| self.outer.iter().map(|b| b.hi[i]).fold(f64::NEG_INFINITY, f64::max)).collect(),
        )
    }

    fn extent(&self) -> Vec<f64> {
        let d = self.outer[0].dims();
        (0..d)
            .map(|i| {
                let lo = self.outer.iter().map(|b| b.lo[i]).fold(f64::INFINITY, f64::min);
                let hi = self.outer.iter().map(|b| b.hi[i]).fold(f64::NEG_INFINITY, f64::max);
                hi - lo
            })
            .collect()
    }

    /// Init's boxes rounded inward (their points satisfy Init exactly), cut to Safe's hull where
    /// Init is unbounded: where runs are started.
    fn init_starts(&self, sys: &System) -> Vec<InnerBox> {
        let d = sys.state.len();
        let hull = RBox {
            lo: (0..d).map(|i| self.exact.iter().filter_map(|b| b.lo[i].clone()).min()).collect(),
            hi: (0..d).map(|i| self.exact.iter().filter_map(|b| b.hi[i].clone()).max()).collect(),
        };
        let boxes = sys.init.to_box_union(d, MAX_PRED_BOXES).unwrap_or_default();
        boxes.iter().filter_map(|b| b.intersect(&hull)?.inner_fbox()).collect()
    }
}

/// Finds and proves an inductive invariant `Init => I => Safe` as a union of boxes, or a run from
/// Init that leaves Safe. The system's own candidate invariant is ignored.
pub fn synthesize(
    sys: &System,
    cfg: &SynthConfig,
    budget: &Budget,
    progress: &(dyn Fn(SynthProgress) + Sync),
) -> Result<SynthReport, SynthError> {
    synthesize_sampled(sys, None, cfg, budget, progress)
}

/// [`synthesize`] on a system that may be sampled-data (`[flow]`: `step` is its plant's flow over
/// the control period, and `sys`'s own step, the identity, is not used): images, proof and runs
/// through the flow's validated enclosures (crate doc), the certificate in format `/3` with the
/// flow's settings.
pub fn synthesize_sampled(
    sys: &System,
    step: Option<&FlowStep>,
    cfg: &SynthConfig,
    budget: &Budget,
    progress: &(dyn Fn(SynthProgress) + Sync),
) -> Result<SynthReport, SynthError> {
    cfg.validate()?;
    let start = Instant::now();
    let regions = Regions::of(sys)?;
    let side_stats = Stats::new();
    let mut side = Checker::new(sys, side_config(cfg, &side_stats))?;
    let mut report = empty_report();
    report.flow = step.map(FlowJson::of);
    // A state of Init outside Safe is a run of length 0 that leaves Safe.
    if let Answer::Invalid(w) = side.check_implication(&sys.init, regions.safe)? {
        unsafe_at_init(sys, &mut report, w, &regions)?;
        return Ok(finish(report, &side_stats, start, budget));
    }
    let mut imager = Imager::new(sys, &cfg.bridge, cfg.threads, &regions.extent())?;
    if let Some(step) = step {
        imager = imager.with_flow(step, &regions.hull(), budget.deadline());
    }
    // A short run search first: a replayed run that leaves Safe ends the question at once, and the
    // invariant search of an unsafe system can take its whole time limit before failing.
    let quick = Instant::now() + budget.remaining().map_or(QUICK_ATTACK, |left| (left / 10).min(QUICK_ATTACK));
    attack(sys, cfg, &regions, &imager, &mut report, Some(quick), true, progress)?;
    if report.verdict.holds() == Some(false) {
        return Ok(finish(report, &side_stats, start, budget));
    }
    // The closest run that stayed inside is reported only by the final run search.
    report.trajectory = None;
    if safe_is_inductive(sys, imager.flow(), cfg, &regions, &mut side, &mut report, budget, progress)? {
        return Ok(finish(report, &side_stats, start, budget));
    }
    if box_is_inductive(sys, cfg, &regions, &imager, &mut side, &mut report, budget, progress)? {
        return Ok(finish(report, &side_stats, start, budget));
    }
    let (mut search, mut end) = search_once(sys, cfg, &imager, &regions, start, budget, progress, false)?;
    // Init lost to images that escape by a rounding error, maybe (an invariant with no margin):
    // again with images accepted within the tolerance; the proof then decides those cells exactly.
    if matches!(end, End::InitLost | End::Escapes) {
        let (tolerant, tolerant_end) = search_once(sys, cfg, &imager, &regions, start, budget, progress, true)?;
        let images = search.images;
        if tolerant_end == End::Closed {
            (search, end) = (tolerant, tolerant_end);
        }
        search.images += images;
    }
    report.stats.initial_cells = search.initial_cells;
    record_search(&mut report, &search, &regions);
    if end == End::Closed {
        prove(sys, cfg, &search, &regions.inner, &mut side, &mut report, budget, &imager)?;
        if report.verdict.is_proven() {
            return Ok(finish(report, &side_stats, start, budget));
        }
    } else {
        report.reason = failure(&end, &report, search.budget_hit.as_deref());
    }
    attack(sys, cfg, &regions, &imager, &mut report, budget.deadline(), false, progress)?;
    Ok(finish(report, &side_stats, start, budget))
}

/// The most time the run search gets before the invariant search starts.
const QUICK_ATTACK: Duration = Duration::from_secs(1);

/// One search over a fresh partition of Safe.
#[allow(clippy::too_many_arguments)]
fn search_once<'a, 's>(
    sys: &'s System,
    cfg: &'a SynthConfig,
    imager: &'a Imager<'s>,
    regions: &Regions<'_>,
    start: Instant,
    budget: &Budget,
    progress: &'a (dyn Fn(SynthProgress) + Sync),
    tolerant: bool,
) -> Result<(Search<'a, 's>, End), SynthError> {
    let d = sys.state.len();
    let part = Partition::new(&regions.inner, cfg.grid_resolution(d), cfg.max_boxes, cfg.min_width)
        .map_err(SynthError::Config)?;
    let mut search = Search::new(sys, cfg, imager, part, regions.init.clone(), start, budget, progress);
    search.tolerant = tolerant;
    let end = run_search(&mut search)?;
    Ok((search, end))
}

fn empty_report() -> SynthReport {
    SynthReport {
        verdict: Verdict::Unknown(Unknown::Undecided),
        reason: String::new(),
        invariant: Vec::new(),
        cells: Vec::new(),
        proof: None,
        init_condition: None,
        safe_condition: None,
        dropped: Vec::new(),
        dropped_init: Vec::new(),
        trajectory: None,
        stats: SynthStats::default(),
        flow: None,
    }
}

fn unsafe_at_init(sys: &System, report: &mut SynthReport, w: Witness, regions: &Regions<'_>) -> Result<(), SynthError> {
    report.reason = "a state of Init lies outside Safe".into();
    let states = vec![w.state.iter().map(to_f64_nearest).collect::<Vec<f64>>()];
    let distance = distance_outside(&regions.outer, &states[0]);
    let exact = ExactRun { states: vec![w.state], actions: vec![], nondet: vec![], branches: vec![] };
    report.verdict = refutation(sys, &exact)?;
    report.trajectory = Some(Trajectory { states, distance, exact: Some(exact), validated: None });
    Ok(())
}

/// The verdict of a run from Init that leaves Safe: its trace, replayed once more exactly.
fn refutation(sys: &System, run: &ExactRun) -> Result<Verdict, SynthError> {
    let trace =
        run.to_trace(sys).map_err(|e| SynthError::Internal(format!("a run that left Safe does not replay: {e}")))?;
    Ok(Verdict::refuted(trace))
}

/// Runs the configured search; on success `search.invariant` holds the invariant's cells.
fn run_search(search: &mut Search<'_, '_>) -> Result<End, SynthError> {
    let end = if search.cfg.forward { forward::run(search)? } else { gfp::run(search)? };
    if end != End::Closed {
        return Ok(end);
    }
    if search.invariant.is_empty() {
        // The full fixed point: only what Init reaches inside it needs proving.
        let kept = |c: &Cell| c.status == Status::Kept;
        search.invariant = if search.init.is_some() {
            let closure = match search.closure(kept)? {
                Ok(c) => c,
                Err(reason) => return Ok(End::Limit(reason)),
            };
            if !closure.escaping.is_empty() {
                return Err(SynthError::Internal("a cell of the fixed point maps outside it".into()));
            }
            closure.reached
        } else {
            search.part.with_status(Status::Kept)
        };
    }
    Ok(match covers_init(search, &search.invariant) {
        Ok(true) => End::Closed,
        Ok(false) => End::InitLost,
        Err(reason) => End::Limit(reason),
    })
}

/// Whether the cells `ids` (ascending) are non-empty and cover Init (when Init is boxes);
/// `Err(reason)` when the time limit is reached on the way.
fn covers_init(search: &Search<'_, '_>, ids: &[usize]) -> Result<bool, String> {
    let part = &search.part;
    if ids.is_empty() {
        return Ok(false);
    }
    for b in search.init.iter().flatten() {
        let near = part.touching(b, |_| true);
        let cells = near.iter().filter(|id| ids.binary_search(id).is_ok()).map(|&t| &part.cells[t].bx);
        if !search.covered(b, cells)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn record_search(report: &mut SynthReport, search: &Search<'_, '_>, regions: &Regions<'_>) {
    let st = &mut report.stats;
    st.cells = search.part.cells.len();
    st.images = search.images;
    st.rounds = search.rounds;
    st.splits = search.splits;
    st.dropped = search.dropped;
    st.budget_hit = search.budget_hit.clone();
    st.search_seconds = search.start.elapsed().as_secs_f64();
    let dropped = if search.cfg.forward { search.escaping.clone() } else { search.part.with_status(Status::Dropped) };
    report.dropped = dropped.iter().map(|&id| search.part.cells[id].bx.clone()).collect();
    if let Some(init) = &regions.init {
        report.dropped_init = report.dropped.iter().filter(|c| init.iter().any(|b| overlaps(c, b))).cloned().collect();
    }
}

fn failure(end: &End, report: &SynthReport, budget: Option<&str>) -> String {
    match end {
        End::InitLost => {
            let limited = budget.map(|b| format!(" (refinement was limited: {b})")).unwrap_or_default();
            format!(
                "no union of boxes inside Safe closed under the step contains Init: {} cell(s) of Init had to be dropped{limited}",
                report.dropped_init.len()
            )
        }
        End::Escapes => {
            format!("images leave Safe from {} reachable cell(s) that cannot be refined further", report.dropped.len())
        }
        End::Limit(reason) => format!("the search stopped: {reason}"),
        End::Closed => unreachable!("a closed search is proven, not explained"),
    }
}

/// Merges the cells and grows the union along the field ([`crate::grow`]), proves it with the
/// bridge engine and the side conditions with the checker, and sets the verdict Safe with a
/// certificate when all three hold. `safe`: Safe's boxes rounded inward.
#[allow(clippy::too_many_arguments)]
fn prove(
    sys: &System,
    cfg: &SynthConfig,
    search: &Search<'_, '_>,
    safe: &[InnerBox],
    side: &mut Checker<'_>,
    report: &mut SynthReport,
    budget: &Budget,
    imager: &Imager<'_>,
) -> Result<(), SynthError> {
    let cells: Vec<FBox> = search.invariant.iter().map(|&id| search.part.cells[id].bx.clone()).collect();
    let merged = merge(cells.clone());
    let before = merged.len();
    // Not through a flow's enclosures (milliseconds each): its union is proven as found.
    let time = if imager.flow().is_some() { Duration::ZERO } else { GROW_TIME };
    let slice = budget.sub(Some(budget.remaining_capped(time).min(time)));
    let grown = grow(imager, safe, merged, &cells, &slice)?;
    let (merged, cells) = (grown.boxes, grown.cover);
    report.stats.images += grown.images;
    report.stats.invariant_cells = search.invariant.len();
    report.stats.invariant_boxes = merged.len();
    let inv = boxes_pred(&merged);
    let t = Instant::now();
    let mut bridge = cfg.bridge.clone();
    bridge.threads = cfg.threads;
    // Every cell was found to map into the union: one its postcondition cannot prove has no margin
    // (or the union is wrong by less than the images' tolerance), and is decided exactly at once.
    if bridge.exact_after.is_some() {
        bridge.exact_after = Some(0);
    }
    let run =
        inductive(sys, imager.flow(), &inv, &cells, &bridge, budget, &|p| (search.progress)(SynthProgress::Proof(p)))?;
    if let Inductiveness::RefutedValidated(t) = &run.outcome {
        // Images through the flow are enclosures, shrunk only in a tolerant search: a validated
        // step out of the union is one within that tolerance.
        report.reason = format!(
            "the union of boxes found is not inductive: a validated step from {:?} leaves it",
            t.start.iter().map(to_f64_nearest).collect::<Vec<_>>()
        );
        report.proof = Some(run);
        return Ok(());
    }
    if let Inductiveness::Refuted(r) = &run.outcome {
        let next: Vec<f64> = r.witness.next.iter().map(to_f64_nearest).collect();
        if !imager.within_tolerance(&merged, &next) {
            return Err(SynthError::Internal(format!(
                "the bridge engine refuted a union of boxes whose images were computed inside it: {}",
                r.witness
            )));
        }
        report.reason =
            format!("the union of boxes found is not inductive, by less than the images' tolerance: {}", r.witness);
        report.stats.exact_queries += run.stats.exact_queries;
        report.proof = Some(run);
        return Ok(());
    }
    record_proof(sys, side, report, merged, cells, run, t)?;
    if report.verdict.is_proven() && report.invariant.len() < before {
        report.reason = format!("{} (the {before} merged boxes grown along the field)", report.reason);
    }
    Ok(())
}

/// The bridge engine's inductiveness run on `inv` covered by `cells`: with the flow's enclosure as
/// the step on a sampled-data system.
fn inductive(
    sys: &System,
    flow: Option<&FlowStep>,
    inv: &Pred,
    cells: &[FBox],
    bridge: &trestle_bridge::Config,
    budget: &Budget,
    progress: &(dyn Fn(trestle_bridge::Progress) + Sync),
) -> Result<InductiveRun, SynthError> {
    Ok(match flow {
        Some(step) => check_inductive_flow(sys, step, inv, cells, bridge, budget, progress)?,
        None => check_inductive(sys, inv, cells, bridge, budget, progress)?,
    })
}

/// Records the bridge engine's run on the union `merged` (covered by `cells`) with the side
/// conditions Init => I and I => Safe decided now: the verdict is proven, with its certificate,
/// when all three hold.
fn record_proof(
    sys: &System,
    side: &mut Checker<'_>,
    report: &mut SynthReport,
    merged: Vec<FBox>,
    cells: Vec<FBox>,
    run: InductiveRun,
    t: Instant,
) -> Result<(), SynthError> {
    let inv = boxes_pred(&merged);
    let init = Condition::from_answer(side.check_init(&inv)?);
    let safe = Condition::from_answer(side.check_safe(&inv)?);
    let s = &mut report.stats;
    s.proof_seconds += t.elapsed().as_secs_f64();
    s.smt_queries += run.stats.smt_queries;
    s.z3_queries += run.stats.z3_queries;
    s.fast_path_decided += run.stats.fast_path_decided;
    s.bound_queries = run.stats.bound_queries;
    s.proof_splits = run.stats.splits;
    s.exact_queries += run.stats.exact_queries;
    report.reason = match (&run.outcome, &init, &safe) {
        (Inductiveness::Proven, Condition::Proven, Condition::Proven) => {
            let mut certificate = proof(sys, &merged, &run.clauses, &run.exact_clauses);
            set_flow(&mut certificate, report.flow.as_ref());
            report.verdict = Verdict::certified(serde_json::to_value(certificate).expect("certificates serialise"));
            format!("inductive invariant of {} boxes proven", merged.len())
        }
        (Inductiveness::Unknown(reason), ..) => format!("the proof of the found invariant stopped: {reason}"),
        (Inductiveness::Refuted(_) | Inductiveness::RefutedValidated(_), ..) => {
            "the invariant found is not inductive".into()
        }
        (_, Condition::Fails(_), _) => "the invariant found does not contain Init".into(),
        (_, _, Condition::Fails(_)) => "the invariant found is not inside Safe".into(),
        _ => "a side condition stayed undecided".into(),
    };
    report.invariant = merged;
    report.cells = cells;
    report.proof = Some(run);
    report.init_condition = Some(init);
    report.safe_condition = Some(safe);
    Ok(())
}

/// The most time the bridge engine gets to prove Safe itself inductive before the grid search.
const SAFE_FIRST: Duration = Duration::from_secs(2);

/// Safe itself as the candidate, before any gridding: a Safe that is inductive with no margin
/// loses its boundary in the grid's inward-rounded cells, so the search would drop cells the
/// bridge engine proves at once (its exact leaves decide boundaries). Tried when Safe's boxes
/// have f64 ends (the certificate's invariant is then Safe exactly), in a short slice of the
/// budget; a refutation or an unknown only means the search goes on.
#[allow(clippy::too_many_arguments)]
fn safe_is_inductive(
    sys: &System,
    imager_flow: Option<&FlowStep>,
    cfg: &SynthConfig,
    regions: &Regions<'_>,
    side: &mut Checker<'_>,
    report: &mut SynthReport,
    budget: &Budget,
    progress: &(dyn Fn(SynthProgress) + Sync),
) -> Result<bool, SynthError> {
    let boxes: Vec<FBox> = regions.outer.iter().map(|b| b.clone().into_fbox()).collect();
    let same = |q: &Option<trestle_ir::Rational>, x: f64| q.as_ref() == Some(&trestle_ir::num::rational_from_f64(x));
    let exact = regions
        .exact
        .iter()
        .zip(&boxes)
        .all(|(e, f)| (0..f.dims()).all(|i| same(&e.lo[i], f.lo[i]) && same(&e.hi[i], f.hi[i])));
    if !exact {
        return Ok(false);
    }
    let t = Instant::now();
    let mut bridge = cfg.bridge.clone();
    bridge.threads = cfg.threads;
    let slice = budget.sub(Some(budget.remaining_capped(SAFE_FIRST).min(SAFE_FIRST)));
    let run = inductive(sys, imager_flow, &boxes_pred(&boxes), &boxes, &bridge, &slice, &|p| {
        progress(SynthProgress::Proof(p))
    })?;
    if !matches!(run.outcome, Inductiveness::Proven) {
        return Ok(false);
    }
    record_proof(sys, side, report, boxes.clone(), boxes, run, t)?;
    report.stats.invariant_boxes = report.invariant.len();
    if report.verdict.is_proven() {
        report.reason = format!("Safe itself is inductive ({} boxes): {}", report.invariant.len(), report.reason);
    }
    Ok(report.verdict.is_proven())
}

/// The most time growing the found union along the field may take (what grew by then is kept).
const GROW_TIME: Duration = Duration::from_secs(2);

/// The most time the bridge engine gets to prove the box grown from Init before the grid search.
const BOX_FIRST: Duration = Duration::from_secs(2);

/// One box grown from Init along the field ([`crate::grow::box_from_init`]) as the candidate,
/// before any gridding (unless the configuration asks for a grid: a resolution, forward, full),
/// proven by the bridge engine over the pieces its image was computed on, in a short slice of
/// the budget; anything but a proof only means the search goes on.
#[allow(clippy::too_many_arguments)]
fn box_is_inductive(
    sys: &System,
    cfg: &SynthConfig,
    regions: &Regions<'_>,
    imager: &Imager<'_>,
    side: &mut Checker<'_>,
    report: &mut SynthReport,
    budget: &Budget,
    progress: &(dyn Fn(SynthProgress) + Sync),
) -> Result<bool, SynthError> {
    let Some(init) = &regions.init else { return Ok(false) };
    // An explicit grid (a resolution, forward or full) asks for the grid search; a flow's images
    // are validated enclosures (milliseconds each, 256 per round) and are left to the grid.
    if cfg.resolution.is_some() || cfg.forward || cfg.full || imager.flow().is_some() {
        return Ok(false);
    }
    let t = Instant::now();
    let slice = budget.sub(Some(budget.remaining_capped(BOX_FIRST).min(BOX_FIRST)));
    let (found, images) = crate::grow::box_from_init(imager, init, &regions.inner, &slice)?;
    report.stats.images += images;
    let Some((b, pieces)) = found else { return Ok(false) };
    let mut bridge = cfg.bridge.clone();
    bridge.threads = cfg.threads;
    let boxes = vec![b];
    // The box as the engine's one starting box: it splits only where the bounds need it, so the
    // certificate has a few clauses rather than one per piece; the pieces (whose images were
    // found inside) are the cover when that is not enough in time.
    let mut run = inductive(sys, imager.flow(), &boxes_pred(&boxes), &boxes, &bridge, &slice, &|p| {
        progress(SynthProgress::Proof(p))
    })?;
    let mut pieces = pieces;
    if !matches!(run.outcome, Inductiveness::Proven) && !slice.is_over() {
        run = inductive(sys, imager.flow(), &boxes_pred(&boxes), &pieces, &bridge, &slice, &|p| {
            progress(SynthProgress::Proof(p))
        })?;
    } else {
        pieces = boxes.clone();
    }
    if !matches!(run.outcome, Inductiveness::Proven) {
        return Ok(false);
    }
    report.stats.invariant_cells = pieces.len();
    record_proof(sys, side, report, boxes, pieces, run, t)?;
    report.stats.invariant_boxes = report.invariant.len();
    if report.verdict.is_proven() {
        report.reason = format!("one box grown from Init along the field is inductive: {}", report.reason);
    }
    Ok(report.verdict.is_proven())
}

/// No invariant: looks for a run from Init that leaves Safe (verdict Unsafe when one replays);
/// `first`: the quick search before the invariant search.
#[allow(clippy::too_many_arguments)]
fn attack(
    sys: &System,
    cfg: &SynthConfig,
    regions: &Regions<'_>,
    imager: &Imager<'_>,
    report: &mut SynthReport,
    deadline: Option<Instant>,
    first: bool,
    progress: &(dyn Fn(SynthProgress) + Sync),
) -> Result<(), SynthError> {
    let t = Instant::now();
    if let Some(step) = imager.flow() {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(());
        }
        progress(SynthProgress::Attack { simulations: 0 });
        // The final search (after no invariant was proven) draws more random starts, another seed.
        let (seed, starts) = if first { (1, 64) } else { (2, 256) };
        let init = regions.init_starts(sys);
        let (trajectory, simulations) = crate::flow_attack::search(
            sys,
            step,
            regions.safe,
            &regions.outer,
            &init,
            cfg.attack_steps,
            seed,
            starts,
            deadline,
        );
        report.trajectory = trajectory;
        report.stats.simulations += simulations;
    } else {
        attack_discrete(sys, cfg, regions, imager, report, deadline, progress);
    }
    report.stats.attack_seconds += t.elapsed().as_secs_f64();
    if let Some(run) = report.trajectory.as_ref().and_then(|t| t.exact.as_ref()) {
        report.verdict = refutation(sys, run)?;
        report.reason = format!("a run from Init leaves Safe after {} step(s) (replayed exactly)", run.actions.len());
    } else if let Some(run) = report.trajectory.as_ref().and_then(|t| t.validated.as_ref()) {
        report.verdict = Verdict::RefutedValidated { trace: run.clone() };
        report.reason = format!(
            "a run from Init leaves Safe after {} step(s) (validated at {} bits)",
            run.len(),
            run.precision_bits
        );
    }
    Ok(())
}

/// The run search of a discrete system ([`crate::attack`]).
fn attack_discrete(
    sys: &System,
    cfg: &SynthConfig,
    regions: &Regions<'_>,
    imager: &Imager<'_>,
    report: &mut SynthReport,
    deadline: Option<Instant>,
    progress: &(dyn Fn(SynthProgress) + Sync),
) {
    let extra: Vec<Vec<f64>> = report.dropped_init.iter().take(64).map(FBox::center).collect();
    let attack =
        Attack::new(sys, regions.safe, regions.outer.clone(), regions.init_starts(sys), cfg.attack_steps, deadline);
    progress(SynthProgress::Attack { simulations: 0 });
    report.trajectory = attack.run(imager.pool(), &extra);
    report.stats.simulations += attack.simulations.load(std::sync::atomic::Ordering::Relaxed);
}

fn side_config(cfg: &SynthConfig, stats: &Stats) -> CheckerConfig {
    let mut c = CheckerConfig::default().with_timeout(cfg.bridge.smt_timeout).with_stats(stats.clone());
    c.fast_path = cfg.bridge.fast_path;
    c.dump_dir = cfg.bridge.dump_smt.clone();
    c.dump_prefix = Some("synth-side-".into());
    c
}

/// Adds the side checks to the counts and stamps the total time; an undecided run is unknown for
/// its limit (time, cancellation) or, within its limits, for `report.reason`.
fn finish(mut report: SynthReport, side: &Stats, start: Instant, budget: &Budget) -> SynthReport {
    if let Verdict::Unknown(_) = report.verdict {
        report.verdict = Verdict::Unknown(match budget.check() {
            Err(stop) => stop.into(),
            Ok(()) => Unknown::Incomplete(report.reason.clone()),
        });
    }
    let s = side.snapshot();
    report.stats.smt_queries += s.queries as usize;
    report.stats.fast_path_decided += s.fast_decided as usize;
    report.stats.z3_queries += (s.queries - s.fast_decided) as usize;
    report.stats.seconds = start.elapsed().as_secs_f64();
    report
}
