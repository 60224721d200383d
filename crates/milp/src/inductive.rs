//! The monolithic inductiveness check `Inv /\ Next => Inv'` as a set of MILPs: the paper's
//! baseline `--method milp`.
//!
//! The invariant must be a bounded union of closed boxes ([`Pred::to_box_union`]). The check is split
//! into one MILP per
//! * box of the invariant (the premise: the state ranges over that box, intersected with the
//!   declared domains),
//! * value of each network selector (integer state variable) inside that box,
//! * vertex of the non-deterministic inputs' domain ([`crate::nondet`]: exact when multilinear),
//! * branch of the step (its guard and label as constraints),
//! * and, when the invariant is a single box, each bounded face of it: maximise `x'_j - hi_j` or
//!   `lo_j - x'_j`. With several boxes, one MILP maximises `t <= min_k max_f violation_{k,f}` (one
//!   binary per face of every box choosing the violated face): `t < 0` means the successor is inside
//!   some box by `-t`, so a successor on a face two boxes share has `t = 0` and is never proved
//!   (merge such boxes).
//!
//! A successor that is integer-valued in the model (integer variables and coefficients: modes,
//! selectors, argmax indices, `min`/`max`/`ite`/`lookup` of such) is outside `x <= hi` exactly when
//! `x >= floor(hi) + 1`; its face is maximised as `x' - (floor(hi) + 1)`, so a mode that keeps its
//! value on the boundary (`m' = m`, `m = hi`) has violation `-1`. A real successor exactly on
//! a face has violation 0 and gives `Unknown`: floating-point evidence needs a margin.
//!
//! Each MILP's maximum is the worst violation of `Inv'`; evidence needs every maximum (HiGHS's dual
//! bound, from a model inside its numeric range) below `-threshold`. Objectives whose interval bound
//! already is are decided without HiGHS. HiGHS stops early at a solution whose violation exceeds `threshold` (`objective_target`),
//! and that solution is replayed at once; a maximum that is not below `-threshold` yields HiGHS's
//! optimal solution, which is replayed too ([`crate::replay`]). When that fails and an argmax of
//! the model admits ties, the model is rebuilt with strict choices (by [`MilpOptions::tie_gap`])
//! and its first positive violation replayed: a counterexample search, never evidence. The objectives of one model are
//! solved likeliest-violated first, judged by f64 simulation of a grid of states: this orders the
//! MILPs and never decides anything.

use crate::answer::{MilpAnswer, MilpCheck, MilpOptions, MilpRecord, MilpStats, MilpUnknown};
use crate::argmax::Strictness;
use crate::error::MilpError;
use crate::expr::Bounded;
use crate::model::{MilpModel, Sense, SolveOptions, SolveOutcome, SolveStatus, constant};
use crate::nondet::{check_multilinear, vertices};
use crate::replay::replay_candidate;
use crate::state::{NondetChoice, initial_hidden, state_variables, successor_as_state};
use crate::step::{BranchChoice, StepOptions, encode_step};
use good_lp::{Expression, Variable};
use num_traits::ToPrimitive;
use std::time::{Duration, Instant};
use trestle_core::Witness;
use trestle_ir::expr::VarRef;
use trestle_ir::num::{display_rational, down, to_f64_nearest, up};
use trestle_ir::system::{DomainExit, Policy, System, VarKind};
use trestle_ir::{Interval, Pred, RBox, Rational};

/// Where one model lives: a region of the state (a box of the invariant, selectors fixed), the
/// values of the non-deterministic inputs, a branch.
struct At {
    region: RBox,
    point: Vec<Rational>,
    branch: usize,
}

/// One MILP's model, before an objective is chosen.
struct Job {
    model: MilpModel,
    state_vars: Vec<Variable>,
    next: Vec<Bounded>,
    /// An argmax of the model may choose an index tied with a lower one (see
    /// [`crate::argmax::EncodedArgmax::ties_possible`]).
    ties_possible: bool,
}

/// A violation to maximise, with its interval bound.
struct Objective {
    label: String,
    expr: Expression,
    bound: f64,
    /// Extra constraints and variables (the union target); `None` for a face.
    model: Option<MilpModel>,
    /// The face: state variable, upper side, the face's value.
    face: Option<(usize, bool, f64)>,
}

fn invalid_inv(detail: impl Into<String>, opts: &MilpOptions) -> MilpError {
    MilpError::NotBoxUnion { max_boxes: opts.max_boxes, detail: detail.into() }
}

/// Checks `Inv /\ Next => Inv'` with every controller network encoded exactly; see the module and
/// crate documentation for what `Evidence` means.
pub fn check_inductive_milp(sys: &System, inv: &Pred, opts: &MilpOptions) -> Result<MilpCheck, MilpError> {
    sys.validate()?;
    let n = sys.state.len();
    if inv.mentions(|v| !matches!(v, VarRef::State(i) if i < n)) {
        return Err(invalid_inv("it may only mention the system's state variables", opts));
    }
    if let Some(net) = sys.networks.iter().find(|n| n.network.is_recurrent()) {
        return Err(MilpError::Unsupported(format!(
            "network '{}' is recurrent; inductiveness over the state alone needs feed-forward controllers",
            net.name
        )));
    }
    let boxes = inv.to_box_union(n, opts.max_boxes).ok_or_else(|| {
        invalid_inv(
            "it is not a union of closed boxes over the state (strict or non-box atoms, or too many boxes)",
            opts,
        )
    })?;
    for (k, b) in boxes.iter().enumerate() {
        if let Some(i) = (0..n).find(|&i| b.lo[i].is_none() || b.hi[i].is_none()) {
            return Err(invalid_inv(format!("box {k} is unbounded in {}", sys.state[i].name), opts));
        }
    }
    if boxes.is_empty() {
        let stats = MilpStats::default();
        return Ok(MilpCheck { answer: MilpAnswer::Evidence { margin: f64::INFINITY }, stats });
    }
    check_multilinear(sys, boxes.len() == 1)?;
    let points = vertices(sys, opts.max_milps)?;
    let mut regions = Vec::new();
    for (k, b) in boxes.iter().enumerate() {
        for (r, label) in split_selectors(sys, b, opts.max_milps)? {
            regions.push((k, r, label));
        }
    }
    let objectives_per_job = if boxes.len() == 1 { 2 * n } else { 1 };
    let count = regions.len() * points.len() * sys.step.branches.len() * objectives_per_job;
    if count > opts.max_milps {
        return Err(MilpError::TooManyMilps { count, limit: opts.max_milps });
    }
    let mut run = Run {
        sys,
        inv,
        opts,
        threshold: opts.threshold(),
        deadline: trestle_core::deadline_after(opts.total_time_limit),
        stats: MilpStats::default(),
        margin: f64::INFINITY,
        unknown: None,
    };
    for (k, region, sel_label) in &regions {
        for point in &points {
            for branch in 0..sys.step.branches.len() {
                let label =
                    format!("box {k}{sel_label}{} branch '{}'", vertex_label(point), sys.step.branches[branch].name);
                let at = At { region: region.clone(), point: point.clone(), branch };
                match run.job(&boxes, &at, &label)? {
                    Flow::Continue => {}
                    Flow::Found(w) => return Ok(run.finish(MilpAnswer::Invalid(w))),
                    Flow::OutOfTime => return Ok(run.finish(MilpAnswer::Unknown(MilpUnknown::Timeout))),
                }
            }
        }
    }
    let answer = match run.unknown.take() {
        Some(r) => MilpAnswer::Unknown(r),
        None => MilpAnswer::Evidence { margin: run.margin },
    };
    Ok(run.finish(answer))
}

fn vertex_label(point: &[Rational]) -> String {
    if point.is_empty() {
        String::new()
    } else {
        format!(" inputs [{}]", point.iter().map(display_rational).collect::<Vec<_>>().join(", "))
    }
}

enum Flow {
    Continue,
    Found(Witness),
    OutOfTime,
}

/// The state of one check: what has been proved (the smallest margin so far), the first reason for
/// `Unknown`, the statistics.
struct Run<'a> {
    sys: &'a System,
    inv: &'a Pred,
    opts: &'a MilpOptions,
    threshold: f64,
    deadline: Option<Instant>,
    stats: MilpStats,
    margin: f64,
    unknown: Option<MilpUnknown>,
}

impl Run<'_> {
    fn finish(self, answer: MilpAnswer) -> MilpCheck {
        MilpCheck { answer, stats: self.stats }
    }

    /// HiGHS settings for the next solve; `None` when the check is out of time.
    fn solve_options(&self) -> Option<SolveOptions> {
        let remaining = self.deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if remaining.is_some_and(|r| r.is_zero()) {
            return None;
        }
        Some(SolveOptions {
            time_limit: match (self.opts.time_limit, remaining) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            feasibility_tolerance: self.opts.feasibility_tolerance,
            mip_abs_gap: self.opts.tolerance / 10.0,
            threads: self.opts.threads,
            // Stop at the first clear violation: it is replayed at once.
            objective_target: Some(self.threshold),
            highs_options: self.opts.highs_options.clone(),
            cancel: None,
        })
    }

    /// Builds the model of one (region, inputs, branch) and solves each of its objectives, the
    /// likeliest to be violated first.
    fn job(&mut self, boxes: &[RBox], at: &At, label: &str) -> Result<Flow, MilpError> {
        let build_start = Instant::now();
        let Some(job) = build_job(self.sys, at, self.opts, Strictness::Closure)? else { return Ok(Flow::Continue) };
        let mut objectives = objectives_of(self.sys, boxes, &job)?;
        self.stats.build_time += build_start.elapsed();
        // Order only: sampled f64 successors say which faces are likeliest to be crossed.
        let successors = sampled_successors(self.sys, at);
        let sampled = |o: &Objective| match o.face {
            Some((j, upper, v)) => successors
                .iter()
                .map(|next| if upper { next[j] - v } else { v - next[j] })
                .fold(f64::NEG_INFINITY, f64::max),
            None => f64::NEG_INFINITY,
        };
        objectives.sort_by(|a, b| sampled(b).total_cmp(&sampled(a)).then(b.bound.total_cmp(&a.bound)));
        for obj in &objectives {
            match self.objective(&job, obj, boxes, at, &format!("{label} {}", obj.label))? {
                Flow::Continue => {}
                flow => return Ok(flow),
            }
        }
        Ok(Flow::Continue)
    }

    /// Replays a solver point; counts it.
    fn replay(&mut self, at: &At, state: &[f64]) -> Result<Witness, String> {
        self.stats.replays += 1;
        let w = replay_candidate(self.sys, self.inv, &at.region, state, &at.point, at.branch)?;
        self.stats.replayed += 1;
        Ok(w)
    }

    /// Maximises one violation: evidence (bound below `-threshold`), a replayed counterexample, or
    /// a reason for `Unknown`.
    fn objective(
        &mut self,
        job: &Job,
        obj: &Objective,
        boxes: &[RBox],
        at: &At,
        label: &str,
    ) -> Result<Flow, MilpError> {
        let model = obj.model.as_ref().unwrap_or(&job.model);
        let record = MilpRecord {
            label: label.to_string(),
            variables: model.num_variables(),
            binaries: model.num_binaries(),
            constraints: model.num_constraints(),
            status: "bounds".into(),
            bound: Some(obj.bound),
            primal: None,
            time: Duration::ZERO,
            moved_coefficients: 0,
        };
        if obj.bound < -self.threshold {
            self.margin = self.margin.min(-obj.bound);
            self.stats.record(record, false);
            return Ok(Flow::Continue);
        }
        let Some(solve_opts) = self.solve_options() else { return Ok(Flow::OutOfTime) };
        let state_at = |values: &[f64]| job.state_vars.iter().map(|&v| model.value(v, values)).collect::<Vec<f64>>();
        let mut out = model.solve(Sense::Maximise, &obj.expr, &solve_opts)?;
        let mut replay_error = None;
        if out.status == SolveStatus::Target {
            if let Some(values) = &out.values {
                match self.replay(at, &state_at(values)) {
                    Ok(w) => {
                        self.stats.record(record_of(record, &out), true);
                        return Ok(Flow::Found(w));
                    }
                    Err(e) => replay_error = Some(e),
                }
            }
            // That point did not replay: optimise fully.
            let first = out.time;
            out = model.solve(Sense::Maximise, &obj.expr, &SolveOptions { objective_target: None, ..solve_opts })?;
            out.time += first;
        }
        self.stats.record(record_of(record, &out), true);
        // Infeasibility and bounds count only from a model inside HiGHS's numeric range.
        if out.out_of_range.is_none() {
            if out.status == SolveStatus::Infeasible {
                return Ok(Flow::Continue);
            }
            if let Some(b) = out.bound.filter(|b| *b < -self.threshold) {
                self.margin = self.margin.min(-b);
                return Ok(Flow::Continue);
            }
        }
        // No evidence for this MILP: replay its solution, if any.
        if let Some(values) = &out.values {
            match self.replay(at, &state_at(values)) {
                Ok(w) => return Ok(Flow::Found(w)),
                Err(e) => replay_error = Some(e),
            }
        }
        // A maximum on an argmax tie does not replay under the lowest-index rule: look for a
        // violation whose choice wins by `tie_gap`.
        if job.ties_possible
            && !matches!(out.status, SolveStatus::Limit(_))
            && let Some(w) = self.search_past_ties(boxes, at, &obj.label)?
        {
            return Ok(Flow::Found(w));
        }
        let reason = match (&out.status, out.bound, replay_error) {
            (SolveStatus::Limit(_), _, _) => MilpUnknown::Timeout,
            (_, _, Some(e)) if out.primal.is_some_and(|p| p > 0.0) => MilpUnknown::ReplayFailed(e),
            _ if out.out_of_range.is_some() => MilpUnknown::OutOfRange(out.out_of_range.clone().unwrap_or_default()),
            (SolveStatus::Other(s), _, _) => MilpUnknown::Solver(format!("status {s}")),
            (_, Some(bound), _) => MilpUnknown::NoMargin { bound, threshold: self.threshold },
            (_, None, _) => MilpUnknown::Solver("no bound".into()),
        };
        self.unknown.get_or_insert(reason);
        Ok(Flow::Continue)
    }

    /// Re-solves one objective with every argmax choice required to beat the lower indices by
    /// [`MilpOptions::tie_gap`] (a subset of the real behaviours: only for counterexamples) and
    /// replays the first positive violation.
    fn search_past_ties(&mut self, boxes: &[RBox], at: &At, objective: &str) -> Result<Option<Witness>, MilpError> {
        let Some(job) = build_job(self.sys, at, self.opts, Strictness::Gap(self.opts.tie_gap))? else {
            return Ok(None);
        };
        let objectives = objectives_of(self.sys, boxes, &job)?;
        let (Some(obj), Some(solve_opts)) = (objectives.iter().find(|o| o.label == objective), self.solve_options())
        else {
            return Ok(None);
        };
        let model = obj.model.as_ref().unwrap_or(&job.model);
        self.stats.tie_searches += 1;
        let out =
            model.solve(Sense::Maximise, &obj.expr, &SolveOptions { objective_target: Some(0.0), ..solve_opts })?;
        let record = MilpRecord {
            label: format!("{objective} (choices beating lower indices by {:e})", self.opts.tie_gap),
            variables: model.num_variables(),
            binaries: model.num_binaries(),
            constraints: model.num_constraints(),
            status: String::new(),
            bound: None,
            primal: None,
            time: Duration::ZERO,
            moved_coefficients: 0,
        };
        self.stats.record(record_of(record, &out), true);
        let (Some(values), true) = (&out.values, out.primal.is_some_and(|p| p > 0.0)) else { return Ok(None) };
        let state: Vec<f64> = job.state_vars.iter().map(|&v| model.value(v, values)).collect();
        Ok(self.replay(at, &state).ok())
    }
}

fn record_of(mut record: MilpRecord, out: &SolveOutcome) -> MilpRecord {
    record.status = match &out.status {
        SolveStatus::Optimal => "Optimal".into(),
        SolveStatus::Infeasible => "Infeasible".into(),
        SolveStatus::Target => "ObjectiveTarget".into(),
        SolveStatus::Limit(l) => l.highs_status().into(),
        SolveStatus::Other(s) => s.clone(),
    };
    (record.bound, record.primal, record.time) = (out.bound, out.primal, out.time);
    record.moved_coefficients = out.moved_coefficients;
    record
}

/// Splits a box by the values of the network selectors (integer state variables) inside it. Values
/// that pick no network have no successor (the simulator stops with an error) and are left out.
fn split_selectors(sys: &System, b: &RBox, limit: usize) -> Result<Vec<(RBox, String)>, MilpError> {
    let mut selectors: Vec<(usize, usize)> = Vec::new();
    for c in &sys.controllers {
        if let Policy::Select { by, networks } = &c.policy
            && !selectors.iter().any(|(s, _)| s == by)
        {
            selectors.push((*by, networks.len()));
        }
    }
    let mut out = vec![(b.clone(), String::new())];
    for (by, count) in selectors {
        let lo = b.lo[by].as_ref().map_or(0, |l| l.ceil().to_integer().to_i64().unwrap_or(i64::MAX).max(0));
        let hi = b.hi[by]
            .as_ref()
            .map_or(count as i64 - 1, |h| h.floor().to_integer().to_i64().unwrap_or(i64::MIN).min(count as i64 - 1));
        let values: Vec<i64> = (lo..=hi).collect();
        if out.len() * values.len() > limit {
            return Err(MilpError::TooManyMilps { count: out.len() * values.len(), limit });
        }
        out = out
            .iter()
            .flat_map(|(r, label)| {
                values.iter().map(move |&v| {
                    let mut r = r.clone();
                    let q = Rational::from_integer(v.into());
                    r.lo[by] = Some(q.clone());
                    r.hi[by] = Some(q);
                    (r, format!("{label} {}={v}", sys.state[by].name))
                })
            })
            .collect();
    }
    Ok(out)
}

/// Successors (f64 simulation) of up to 256 grid states of `region` under this branch and these
/// inputs; used to order the objectives, never for a verdict.
fn sampled_successors(sys: &System, at: &At) -> Vec<Vec<f64>> {
    let (region, branch) = (&at.region, at.branch);
    let n = sys.state.len();
    let per_dim = ((256f64).powf(1.0 / n as f64).floor() as usize).clamp(1, 16);
    let axes: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            let (Some(l), Some(h)) = (&region.lo[i], &region.hi[i]) else { return vec![0.0] };
            let (l, h) = (to_f64_nearest(l), to_f64_nearest(h));
            let mut xs: Vec<f64> = if per_dim == 1 {
                vec![(l + h) / 2.0]
            } else {
                (0..per_dim).map(|k| l + (h - l) * k as f64 / (per_dim - 1) as f64).collect()
            };
            if sys.state[i].kind != VarKind::Real {
                xs.iter_mut().for_each(|x| *x = x.round().clamp(l.ceil(), h.floor()));
                xs.dedup();
            }
            xs
        })
        .collect();
    let nondet: Vec<f64> = at.point.iter().map(to_f64_nearest).collect();
    let mut states: Vec<Vec<f64>> = vec![Vec::new()];
    for axis in &axes {
        states = states.iter().flat_map(|s| axis.iter().map(move |x| [s.clone(), vec![*x]].concat())).collect();
    }
    states
        .iter()
        .filter_map(|s| {
            let mut memory = trestle_ir::sim::initial_memory::<f64>(sys);
            let actions = trestle_ir::sim::controller_actions(sys, s, &nondet, &mut memory).ok()?;
            if !trestle_ir::sim::enabled_branches(sys, s, &actions, &nondet).ok()?.contains(&branch) {
                return None;
            }
            trestle_ir::sim::successor(sys, branch, s, &actions, &nondet).ok()
        })
        .collect()
}

/// The model of one (region, input vertex, branch): state, controllers, guard, label, successor
/// ([`encode_step`]). `None` when the branch is impossible there (its label's index is never an
/// argmax) or the region holds no state of the declared kinds and domains.
fn build_job(sys: &System, at: &At, opts: &MilpOptions, strictness: Strictness) -> Result<Option<Job>, MilpError> {
    let mut model = MilpModel::new();
    let Some((state_vars, state)) = state_variables(&mut model, sys, &at.region, true)? else { return Ok(None) };
    let step_opts = StepOptions { bounds: opts.bounds.clone(), strictness };
    let nondet = NondetChoice::Fixed(at.point.clone());
    let branch = BranchChoice::Fixed(at.branch);
    let hidden = initial_hidden(sys);
    let Some(step) = encode_step(&mut model, sys, &state, &hidden, &nondet, branch, &step_opts)? else {
        return Ok(None);
    };
    if sys.domain_exit == DomainExit::Drop && successor_as_state(&mut model, sys, &step.next, true)?.is_none() {
        return Ok(None);
    }
    Ok(Some(Job { model, state_vars, next: step.next, ties_possible: step.ties_possible }))
}

/// A face of a target box as a violation to maximise.
struct Face {
    /// State variable and side.
    var: usize,
    upper: bool,
    /// The violation (`> 0`, or `>= 0` when integral, exactly when the successor is outside).
    expr: Expression,
    iv: Interval,
    /// The face's value in the violation, and as text.
    value: f64,
    text: String,
}

/// For `next > hi` the violation is `next - hi` (the face rounded inward, so the float violation is
/// never below the exact one); for an integer-valued `next` (integer variables, integer
/// coefficients) it is `next - (floor(hi) + 1)`, which is `>= 0` exactly when `next > hi`. The lower
/// side is symmetric.
fn face(var: usize, x: &Bounded, bound: &Rational, upper: bool, integral: bool) -> Face {
    let one = Rational::from_integer(1.into());
    let (value, text) = match (upper, integral) {
        (true, false) => (down(bound), display_rational(bound)),
        (false, false) => (up(bound), display_rational(bound)),
        (true, true) => {
            let q = bound.floor() + one;
            (to_f64_nearest(&q), display_rational(&q))
        }
        (false, true) => {
            let q = bound.ceil() - one;
            (to_f64_nearest(&q), display_rational(&q))
        }
    };
    let (expr, iv) = if upper {
        (x.expr.clone() - value, x.iv.sub(&Interval::point(value)))
    } else {
        (constant(value) - x.expr.clone(), Interval::point(value).sub(&x.iv))
    };
    Face { var, upper, expr, iv, value, text }
}

/// The faces of a box (bounded sides only) for these successors.
fn faces(model: &MilpModel, b: &RBox, next: &[Bounded]) -> Vec<Face> {
    let mut out = Vec::new();
    for (j, x) in next.iter().enumerate() {
        let integral = model.is_integral(&x.expr);
        if let Some(h) = &b.hi[j] {
            out.push(face(j, x, h, true, integral));
        }
        if let Some(l) = &b.lo[j] {
            out.push(face(j, x, l, false, integral));
        }
    }
    out
}

/// The objectives of a job: one per face of a single target box, or the union's violation.
fn objectives_of(sys: &System, boxes: &[RBox], job: &Job) -> Result<Vec<Objective>, MilpError> {
    Ok(match boxes {
        [target] => face_objectives(sys, &job.model, target, &job.next),
        _ => vec![union_objective(&job.model, boxes, &job.next)?],
    })
}

/// One objective per bounded face of the target box.
fn face_objectives(sys: &System, model: &MilpModel, target: &RBox, next: &[Bounded]) -> Vec<Objective> {
    faces(model, target, next)
        .into_iter()
        .map(|f| {
            let (name, text) = (&sys.state[f.var].name, &f.text);
            let label = if f.upper { format!("max {name}' - {text}") } else { format!("max {text} - {name}'") };
            Objective { label, expr: f.expr, bound: f.iv.hi, model: None, face: Some((f.var, f.upper, f.value)) }
        })
        .collect()
}

/// The violation of a union of boxes: `t <= max_f v_{k,f}` for every box `k` (binaries choose the
/// face), maximise `t`.
fn union_objective(base: &MilpModel, boxes: &[RBox], next: &[Bounded]) -> Result<Objective, MilpError> {
    let mut model = base.clone();
    let all: Vec<Vec<(Expression, Interval)>> =
        boxes.iter().map(|b| faces(base, b, next).into_iter().map(|f| (f.expr, f.iv)).collect()).collect();
    let per_box = |f: fn(&Interval) -> f64| {
        all.iter().map(move |faces| faces.iter().map(|(_, iv)| f(iv)).fold(f64::NEG_INFINITY, f64::max))
    };
    let t_hi = per_box(|iv| iv.hi).fold(f64::INFINITY, f64::min);
    let t_lo = per_box(|iv| iv.lo).fold(f64::INFINITY, f64::min);
    if !(t_lo.is_finite() && t_hi.is_finite()) {
        return Err(MilpError::Unbounded { what: "violation of the invariant".into(), lo: t_lo, hi: t_hi });
    }
    let t = model.continuous(t_lo, t_hi, "violation")?;
    for faces in &all {
        let mut sum = Expression::default();
        for (v, iv) in faces {
            let b = model.binary();
            sum.add_mul(1.0, b);
            // t <= v + (t_hi - v_lo) (1 - b)
            let m = (t_hi - iv.lo).max(0.0);
            model.add((Expression::from(t) - v.clone() + m * b).leq(m));
        }
        model.add(sum.eq(1.0));
    }
    Ok(Objective {
        label: "max violation of the union".into(),
        expr: Expression::from(t),
        bound: t_hi,
        model: Some(model),
        face: None,
    })
}
