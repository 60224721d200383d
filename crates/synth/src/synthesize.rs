//! The driver: search, merge, prove, and when that fails, explain and attack.

use crate::attack::Attack;
use crate::image::Imager;
use crate::merge::merge;
use crate::partition::{Partition, Status};
use crate::report::{SynthProgress, SynthReport, SynthStats, SynthVerdict, Trajectory};
use crate::search::{End, Search};
use crate::{SynthConfig, SynthError, forward, gfp};
use std::time::Instant;
use trestle_bridge::certificate::{boxes_pred, proof};
use trestle_bridge::engine::check_inductive;
use trestle_bridge::{Condition, Inductiveness};
use trestle_ir::num::to_f64_nearest;
use trestle_ir::{FBox, Pred, RBox, System};
use trestle_smt::{Answer, Checker, CheckerConfig, EnvChecker, Stats};

/// Most boxes a predicate (Safe, Init) may expand to.
const MAX_PRED_BOXES: usize = 100_000;

/// Finds and proves an inductive invariant `Init => I => Safe` as a union of boxes, or a run from
/// Init that leaves Safe. The system's own candidate invariant is ignored.
pub fn synthesize(
    sys: &System,
    cfg: &SynthConfig,
    progress: &(dyn Fn(SynthProgress) + Sync),
) -> Result<SynthReport, SynthError> {
    cfg.validate()?;
    let start = Instant::now();
    let safe = sys.safe.as_ref().ok_or(SynthError::NoSafe)?;
    let d = sys.state.len();
    let safe_boxes = bounded_boxes(safe, d).map_err(SynthError::SafeShape)?;
    let safe_inner: Vec<FBox> = safe_boxes.iter().filter_map(RBox::inner_fbox).collect();
    if safe_inner.is_empty() {
        return Err(SynthError::SafeShape("no f64 box fits inside it".into()));
    }
    let safe_outer: Vec<FBox> = safe_boxes.iter().map(RBox::outer_fbox).collect();
    let init_boxes: Option<Vec<FBox>> =
        sys.init.to_box_union(d, MAX_PRED_BOXES).map(|bs| bs.iter().map(RBox::outer_fbox).collect());
    let stats_sink = Stats::new();
    let mut side = Checker::new(sys, side_config(cfg, &stats_sink))?;
    let mut report = SynthReport {
        verdict: SynthVerdict::Unknown,
        reason: String::new(),
        invariant: Vec::new(),
        cells: Vec::new(),
        proof: None,
        init_condition: None,
        safe_condition: None,
        certificate: None,
        dropped: Vec::new(),
        dropped_init: Vec::new(),
        trajectory: None,
        stats: SynthStats::default(),
    };

    // A state of Init outside Safe is a run of length 0 that leaves Safe.
    if let Answer::Invalid(w) = side.check_implication(&sys.init, safe)? {
        report.verdict = SynthVerdict::Unsafe;
        report.reason = "a state of Init lies outside Safe".into();
        let states = vec![w.state.iter().map(to_f64_nearest).collect::<Vec<f64>>()];
        let exact = crate::report::ExactRun { states: vec![w.state], actions: vec![], nondet: vec![], branches: vec![] };
        let distance = distance_outside(&safe_outer, &states[0]);
        report.trajectory = Some(Trajectory { states, distance, exact: Some(exact) });
        finish(&mut report, &stats_sink, start);
        return Ok(report);
    }

    // 1. Search.
    let imager = Imager::new(sys, &cfg.bridge, cfg.threads)?;
    let part = Partition::new(&safe_inner, cfg.grid_resolution(d), cfg.max_boxes, cfg.min_width).map_err(SynthError::Config)?;
    let initial_cells = part.cells.len();
    let vertices = trestle_bridge::witness::nondet_vertices(sys)
        .iter()
        .map(|v| v.iter().map(to_f64_nearest).collect())
        .collect();
    let mut search = Search {
        sys,
        vertices,
        part,
        imager: &imager,
        cfg,
        start,
        init: init_boxes.clone(),
        progress,
        images: 0,
        rounds: 0,
        splits: 0,
        dropped: 0,
        budget_hit: None,
        invariant: Vec::new(),
        escaping: Vec::new(),
    };
    let mut end = if cfg.forward { forward::run(&mut search)? } else { gfp::run(&mut search)? };
    if end == End::Closed && !cfg.forward && search.invariant.is_empty() {
        // Only what Init reaches inside the fixed point needs proving.
        let kept = |c: &crate::partition::Cell| c.status == Status::Kept;
        search.invariant = if search.init.is_some() {
            let closure = search.closure(kept)?;
            if !closure.escaping.is_empty() {
                return Err(SynthError::Internal("a cell of the fixed point maps outside it".into()));
            }
            closure.reached
        } else {
            search.part.with_status(Status::Kept)
        };
    }
    if end == End::Closed && !covers(&search, &search.invariant) {
        end = End::InitLost;
    }
    let st = &mut report.stats;
    st.initial_cells = initial_cells;
    st.cells = search.part.cells.len();
    st.images = search.images;
    st.rounds = search.rounds;
    st.splits = search.splits;
    st.dropped = search.dropped;
    st.budget_hit = search.budget_hit.clone();
    st.search_seconds = start.elapsed().as_secs_f64();
    let dropped_ids: Vec<usize> = if cfg.forward { search.escaping.clone() } else { search.part.with_status(Status::Dropped) };
    report.dropped = dropped_ids.iter().map(|&id| search.part.cells[id].bx.clone()).collect();
    report.dropped_init = match &init_boxes {
        Some(init) => report.dropped.iter().filter(|c| init.iter().any(|b| crate::partition::overlaps(c, b))).cloned().collect(),
        None => Vec::new(),
    };

    // 2. Merge and prove.
    if end == End::Closed {
        let cells: Vec<FBox> = search.invariant.iter().map(|&id| search.part.cells[id].bx.clone()).collect();
        let merged = merge(cells.clone());
        report.stats.invariant_cells = cells.len();
        report.stats.invariant_boxes = merged.len();
        let inv = boxes_pred(&merged);
        let t = Instant::now();
        let mut bridge = cfg.bridge.clone();
        bridge.threads = cfg.threads;
        if let Some(limit) = cfg.timeout {
            bridge.timeout = Some(limit.saturating_sub(start.elapsed()));
        }
        let run = check_inductive(sys, &inv, &cells, &bridge, &|p| progress(SynthProgress::Proof(p)))?;
        let init = condition(side.check_init(&inv)?);
        let safe_c = condition(side.check_safe(&inv)?);
        report.stats.proof_seconds = t.elapsed().as_secs_f64();
        let s = &mut report.stats;
        s.smt_queries += run.stats.smt_queries;
        s.z3_queries += run.stats.z3_queries;
        s.fast_path_decided += run.stats.fast_path_decided;
        s.bound_queries = run.stats.bound_queries;
        s.proof_splits = run.stats.splits;
        let proven = matches!(run.outcome, Inductiveness::Proven);
        if let Inductiveness::Refuted(r) = &run.outcome {
            return Err(SynthError::Internal(format!(
                "the bridge engine refuted a union of boxes whose images were computed inside it: {}",
                r.witness
            )));
        }
        if proven && init == Condition::Proven && safe_c == Condition::Proven {
            report.verdict = SynthVerdict::Safe;
            report.reason = format!("inductive invariant of {} boxes proven", merged.len());
            report.certificate = Some(proof(sys, &merged, &run.clauses));
        } else {
            report.reason = match (&run.outcome, &init, &safe_c) {
                (Inductiveness::Unknown { reason }, ..) => format!("the proof of the found invariant stopped: {reason}"),
                (_, Condition::Fails(_), _) => "the invariant found does not contain Init".into(),
                (_, _, Condition::Fails(_)) => "the invariant found is not inside Safe".into(),
                _ => "a side condition stayed undecided".into(),
            };
        }
        report.invariant = merged;
        report.cells = cells;
        report.proof = Some(run);
        report.init_condition = Some(init);
        report.safe_condition = Some(safe_c);
        if report.verdict == SynthVerdict::Safe {
            finish(&mut report, &stats_sink, start);
            return Ok(report);
        }
    } else {
        report.reason = match &end {
            End::InitLost => format!(
                "no union of boxes inside Safe closed under the step contains Init: {} cell(s) of Init had to be dropped",
                report.dropped_init.len()
            ),
            End::Escapes => format!(
                "images leave Safe from {} reachable cell(s) that cannot be refined further",
                report.dropped.len()
            ),
            End::Limit(reason) => format!("the search stopped: {reason}"),
            End::Closed => unreachable!("handled above"),
        };
        if let (End::InitLost, Some(limit)) = (&end, &search.budget_hit) {
            report.reason.push_str(&format!(" (refinement was limited: {limit})"));
        }
    }

    // 3. No invariant: look for a run that leaves Safe.
    let t = Instant::now();
    // Start states come from Init's boxes rounded inward (so they satisfy Init exactly), cut to
    // Safe's hull where Init is unbounded.
    let hull = RBox {
        lo: (0..d).map(|i| safe_boxes.iter().filter_map(|b| b.lo[i].clone()).min()).collect(),
        hi: (0..d).map(|i| safe_boxes.iter().filter_map(|b| b.hi[i].clone()).max()).collect(),
    };
    let init_for_attack: Vec<FBox> = sys
        .init
        .to_box_union(d, MAX_PRED_BOXES)
        .unwrap_or_default()
        .iter()
        .filter_map(|b| b.intersect(&hull)?.inner_fbox())
        .collect();
    let extra: Vec<Vec<f64>> = report.dropped_init.iter().take(64).map(FBox::center).collect();
    let deadline = cfg.timeout.map(|limit| start + limit);
    let attack = Attack::new(sys, safe, safe_outer.clone(), init_for_attack, cfg.attack_steps, deadline);
    progress(SynthProgress::Attack { simulations: 0 });
    report.trajectory = attack.run(imager.pool(), &extra);
    report.stats.simulations = attack.simulations.load(std::sync::atomic::Ordering::Relaxed);
    report.stats.attack_seconds = t.elapsed().as_secs_f64();
    if report.trajectory.as_ref().is_some_and(|t| t.exact.is_some()) {
        report.verdict = SynthVerdict::Unsafe;
        let steps = report.trajectory.as_ref().map_or(0, |t| t.states.len() - 1);
        report.reason = format!("a run from Init leaves Safe after {steps} step(s) (replayed exactly)");
    }
    finish(&mut report, &stats_sink, start);
    Ok(report)
}

/// Whether the cells `ids` (ascending) are non-empty and cover Init (when Init is boxes).
fn covers(search: &Search<'_, '_>, ids: &[usize]) -> bool {
    let Some(init) = &search.init else { return !ids.is_empty() };
    let part = &search.part;
    !ids.is_empty()
        && init.iter().all(|b| {
            let near = part.touching(b, |_| true);
            b.is_covered_by(near.iter().filter(|id| ids.binary_search(id).is_ok()).map(|&t| &part.cells[t].bx))
        })
}

/// The predicate as bounded boxes.
fn bounded_boxes(p: &Pred, d: usize) -> Result<Vec<RBox>, String> {
    let boxes = p
        .to_box_union(d, MAX_PRED_BOXES)
        .ok_or("it is not a conjunction/disjunction of non-strict variable bounds")?;
    if boxes.is_empty() {
        return Err("it is empty".into());
    }
    if !boxes.iter().all(RBox::is_bounded) {
        return Err("a box is unbounded in some variable".into());
    }
    Ok(boxes)
}

fn distance_outside(boxes: &[FBox], x: &[f64]) -> f64 {
    boxes
        .iter()
        .map(|b| (0..x.len()).map(|i| (b.lo[i] - x[i]).max(x[i] - b.hi[i])).fold(f64::NEG_INFINITY, f64::max))
        .fold(f64::INFINITY, f64::min)
}

fn condition(a: Answer) -> Condition {
    match a {
        Answer::Valid => Condition::Proven,
        Answer::Invalid(w) => Condition::Fails(w),
        Answer::Unknown(r) => Condition::Unknown(r.to_string()),
    }
}

fn side_config(cfg: &SynthConfig, stats: &Stats) -> CheckerConfig {
    let mut c = CheckerConfig::default().with_timeout(cfg.bridge.smt_timeout).with_stats(stats.clone());
    c.fast_path = cfg.bridge.fast_path;
    c.dump_dir = cfg.bridge.dump_smt.clone();
    c.dump_prefix = Some("synth-side-".into());
    c
}

fn finish(report: &mut SynthReport, side: &Stats, start: Instant) {
    let s = side.snapshot();
    report.stats.smt_queries += s.queries as usize;
    report.stats.fast_path_decided += s.fast_decided as usize;
    report.stats.z3_queries += (s.queries - s.fast_decided) as usize;
    report.stats.seconds = start.elapsed().as_secs_f64();
}
