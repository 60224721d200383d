//! The monolithic inductiveness check `Inv /\ Next => Inv'` as a set of MILPs: the paper's
//! baseline `--method milp`.
//!
//! The invariant must be a bounded union of closed boxes ([`Pred::to_box_union`]). The check is split
//! into one MILP per
//! * box of the invariant (the premise: the state ranges over that box),
//! * value of each network selector (integer state variable) inside that box,
//! * vertex of the non-deterministic inputs' domain ([`crate::nondet`]: exact when multilinear),
//! * branch of the step (its guard and label as constraints),
//! * and, when the invariant is a single box, each bounded face of it: maximise `x'_j - hi_j` or
//!   `lo_j - x'_j`. With several boxes, one MILP maximises `t <= min_k max_f violation_{k,f}` (one
//!   binary per face of every box choosing the violated face).
//!
//! Each MILP's maximum is the worst violation of `Inv'`; a proof needs every maximum (HiGHS's dual
//! bound) below `-threshold`. Objectives whose interval bound already is are decided without
//! HiGHS. A maximum that is not below it yields HiGHS's solution, which is replayed exactly
//! ([`crate::replay`]).

use crate::answer::{MilpAnswer, MilpCheck, MilpOptions, MilpRecord, MilpStats};
use crate::error::MilpError;
use crate::expr::{Bounded, VarMap, assert_pred, encode_expr};
use crate::model::{MilpModel, Sense, SolveOptions, SolveStatus, constant};
use crate::network::{encode_argmax, encode_network_with};
use crate::nondet::{check_multilinear, vertices};
use crate::replay::replay_candidate;
use good_lp::{Expression, Variable};
use num_traits::ToPrimitive;
use std::time::{Duration, Instant};
use trestle_bounds::InputBox;
use trestle_ir::expr::VarRef;
use trestle_ir::num::{display_rational, down, to_f64_nearest, up};
use trestle_ir::system::{ControllerOutput, DomainExit, Policy, System, VarKind};
use trestle_ir::{Interval, Pred, RBox, Rational};
use trestle_smt::UnknownReason;

/// One MILP's model, before an objective is chosen.
struct Job {
    model: MilpModel,
    state_vars: Vec<Variable>,
    next: Vec<Bounded>,
}

/// A violation to maximise, with its interval bound.
struct Objective {
    label: String,
    expr: Expression,
    bound: f64,
    /// Extra constraints and variables (the union target); `None` for a face.
    model: Option<MilpModel>,
}

fn invalid_inv(detail: impl Into<String>, opts: &MilpOptions) -> MilpError {
    MilpError::NotBoxUnion { max_boxes: opts.max_boxes, detail: detail.into() }
}

/// Checks `Inv /\ Next => Inv'` with every controller network encoded exactly; see the module and
/// crate documentation for what `Valid` means.
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
    let mut stats = MilpStats::default();
    if boxes.is_empty() {
        return Ok(MilpCheck { answer: MilpAnswer::Valid { margin: f64::INFINITY }, stats });
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
    let start = Instant::now();
    let deadline = opts.total_time_limit.map(|t| start + t);
    let threshold = opts.threshold();
    let mut margin = f64::INFINITY;
    let mut unknown: Option<UnknownReason> = None;
    for (k, region, sel_label) in &regions {
        for point in &points {
            for branch in 0..sys.step.branches.len() {
                let build_start = Instant::now();
                let job = build_job(sys, region, point, branch, opts)?;
                let objectives = match &job {
                    Some(job) if boxes.len() == 1 => face_objectives(sys, &boxes[0], &job.next),
                    Some(job) => vec![union_objective(&job.model, &boxes, &job.next)?],
                    None => Vec::new(),
                };
                stats.build_time += build_start.elapsed();
                let Some(job) = job else { continue };
                let vertex = if point.is_empty() {
                    String::new()
                } else {
                    format!(" inputs [{}]", point.iter().map(display_rational).collect::<Vec<_>>().join(", "))
                };
                let prefix = format!("box {k}{sel_label}{vertex} branch '{}'", sys.step.branches[branch].name);
                for obj in objectives {
                    let label = format!("{prefix} {}", obj.label);
                    let model = obj.model.as_ref().unwrap_or(&job.model);
                    let mut record = MilpRecord {
                        label,
                        variables: model.num_variables(),
                        binaries: model.num_binaries(),
                        constraints: model.num_constraints(),
                        status: "bounds".into(),
                        bound: Some(obj.bound),
                        primal: None,
                        time: Duration::ZERO,
                    };
                    if obj.bound < -threshold {
                        margin = margin.min(-obj.bound);
                        stats.record(record, false);
                        continue;
                    }
                    let remaining = deadline.map(|d| d.saturating_duration_since(Instant::now()));
                    if remaining.is_some_and(|r| r.is_zero()) {
                        let answer = MilpAnswer::Unknown(UnknownReason::Timeout);
                        return Ok(MilpCheck { answer, stats });
                    }
                    let time_limit = match (opts.time_limit, remaining) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    let solve_opts = SolveOptions {
                        time_limit,
                        feasibility_tolerance: opts.feasibility_tolerance,
                        mip_abs_gap: opts.tolerance / 10.0,
                        threads: opts.threads,
                    };
                    let out = model.solve(Sense::Maximise, &obj.expr, &solve_opts)?;
                    record.status = match &out.status {
                        SolveStatus::Optimal => "Optimal".into(),
                        SolveStatus::Infeasible => "Infeasible".into(),
                        SolveStatus::Limit(s) | SolveStatus::Other(s) => s.clone(),
                    };
                    record.bound = out.bound;
                    record.primal = out.primal;
                    record.time = out.time;
                    stats.record(record, true);
                    if out.status == SolveStatus::Infeasible {
                        continue;
                    }
                    if let Some(b) = out.bound.filter(|b| *b < -threshold) {
                        margin = margin.min(-b);
                        continue;
                    }
                    // No proof for this MILP: replay its solution, if any.
                    let mut reason = match (&out.status, out.bound) {
                        (SolveStatus::Limit(_), _) => UnknownReason::Timeout,
                        (SolveStatus::Other(s), _) => UnknownReason::Solver(format!("HiGHS status {s}")),
                        (_, Some(b)) => UnknownReason::Solver(format!(
                            "maximal violation of the invariant is {b:.3e}, not below -{threshold:.1e}"
                        )),
                        (_, None) => UnknownReason::Solver("HiGHS gave no bound".into()),
                    };
                    if let Some(values) = &out.values {
                        let state: Vec<f64> = job.state_vars.iter().map(|&v| model.value(v, values)).collect();
                        stats.replays += 1;
                        match replay_candidate(sys, inv, region, &state, point, branch) {
                            Ok(w) => {
                                stats.replayed += 1;
                                return Ok(MilpCheck { answer: MilpAnswer::Invalid(w), stats });
                            }
                            Err(e) if out.primal.is_some_and(|p| p > 0.0) => {
                                reason = UnknownReason::ReplayFailed(format!("solver witness did not replay: {e}"));
                            }
                            Err(_) => {}
                        }
                    }
                    unknown.get_or_insert(reason);
                }
            }
        }
    }
    let answer = match unknown {
        Some(r) => MilpAnswer::Unknown(r),
        None => MilpAnswer::Valid { margin },
    };
    Ok(MilpCheck { answer, stats })
}

/// Splits a box by the values of the network selectors (integer state variables) inside it. Values
/// that pick no network have no successor (the simulator stops with an error) and are left out.
fn split_selectors(sys: &System, b: &RBox, limit: usize) -> Result<Vec<(RBox, String)>, MilpError> {
    let mut selectors: Vec<(usize, usize)> = Vec::new();
    for c in &sys.controllers {
        if let Policy::Select { by, networks } = &c.policy {
            if !selectors.iter().any(|(s, _)| s == by) {
                selectors.push((*by, networks.len()));
            }
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

/// The model of one (region, input vertex, branch): state, controllers, guard, label, successor.
/// `None` when the branch is impossible there (its label's index is never an argmax).
fn build_job(
    sys: &System,
    region: &RBox,
    nondet: &[Rational],
    branch: usize,
    opts: &MilpOptions,
) -> Result<Option<Job>, MilpError> {
    let mut model = MilpModel::new();
    let mut vars = VarMap::default();
    let mut state_vars = Vec::with_capacity(sys.state.len());
    for (i, v) in sys.state.iter().enumerate() {
        let (lo, hi) = match (&region.lo[i], &region.hi[i]) {
            (Some(l), Some(h)) => (l, h),
            _ => return Err(MilpError::Unbounded { what: format!("state variable {}", v.name), lo: 0.0, hi: 0.0 }),
        };
        let var = match v.kind {
            VarKind::Real => model.continuous(down(lo), up(hi), &v.name)?,
            VarKind::Int | VarKind::Bool => {
                let (mut l, mut h) = (to_f64_nearest(&lo.ceil()), to_f64_nearest(&hi.floor()));
                if v.kind == VarKind::Bool {
                    (l, h) = (l.max(0.0), h.min(1.0));
                }
                if l > h {
                    return Ok(None);
                }
                model.integer(l, h, &v.name)?
            }
        };
        let (l, h) = model.bounds_of(var);
        state_vars.push(var);
        vars.state.push(Bounded::new(Expression::from(var), Interval::new(l, h)));
    }
    vars.nondet = nondet.iter().map(Bounded::rational).collect();
    // Actions are set by the controllers; inputs never read actions (validated).
    vars.action = vec![Bounded::float(0.0); sys.actions.len()];
    let mut onehots: Vec<Option<Vec<Expression>>> = vec![None; sys.actions.len()];
    for c in &sys.controllers {
        let net_index = match &c.policy {
            Policy::Network(k) => *k,
            Policy::Select { by, networks } => {
                let v = region.lo[*by].as_ref().and_then(|q| q.to_integer().to_usize());
                match v.and_then(|v| networks.get(v)) {
                    Some(k) => *k,
                    None => return Ok(None),
                }
            }
        };
        let net = &sys.networks[net_index].network;
        let inputs: Vec<Bounded> =
            c.inputs.iter().map(|e| encode_expr(&mut model, e, &vars)).collect::<Result<_, _>>()?;
        let input_box =
            InputBox::new(inputs.iter().map(|b| b.iv.lo).collect(), inputs.iter().map(|b| b.iv.hi).collect());
        let exprs: Vec<Expression> = inputs.into_iter().map(|b| b.expr).collect();
        let enc = encode_network_with(&mut model, net, &exprs, &input_box, &opts.bound_method)?;
        match &c.output {
            ControllerOutput::Actions(ids) => {
                for (k, &a) in ids.iter().enumerate() {
                    vars.action[a] = Bounded::new(enc.outputs[k].clone(), enc.output_bounds[k]);
                }
            }
            ControllerOutput::Argmax(a) => {
                let am = encode_argmax(&mut model, &enc.outputs, &enc.output_bounds)?;
                vars.action[*a] = Bounded::new(am.index, am.index_bounds);
                onehots[*a] = Some(am.onehot);
            }
        }
    }
    let b = &sys.step.branches[branch];
    if let Some((a, value)) = b.label {
        let Some(onehot) = &onehots[a] else {
            return Err(MilpError::Unsupported(format!("branch '{}' is labelled by a non-argmax action", b.name)));
        };
        let o = &onehot[value];
        if crate::model::is_constant(o) {
            if good_lp::IntoAffineExpression::constant(o) < 0.5 {
                return Ok(None);
            }
        } else {
            model.add(o.clone().eq(1.0));
        }
    }
    if let Some(g) = &b.guard {
        assert_pred(&mut model, g, &vars)?;
    }
    let next: Vec<Bounded> = b.updates.iter().map(|u| encode_expr(&mut model, u, &vars)).collect::<Result<_, _>>()?;
    if sys.domain_exit == DomainExit::Drop {
        for (v, x) in sys.state.iter().zip(&next) {
            if let Some(l) = &v.domain.lo {
                model.add(x.expr.clone().geq(down(l)));
            }
            if let Some(h) = &v.domain.hi {
                model.add(x.expr.clone().leq(up(h)));
            }
            if v.kind != VarKind::Real {
                let (l, h) = (x.iv.lo.ceil(), x.iv.hi.floor());
                if !(l.is_finite() && h.is_finite()) || l > h {
                    return Ok(None);
                }
                let w = model.integer(l, h, &format!("{}'", v.name))?;
                model.add(x.expr.clone().eq(w));
            }
        }
    }
    Ok(Some(Job { model, state_vars, next }))
}

/// One objective per bounded face of the target box: `x'_j - hi_j` and `lo_j - x'_j` (the face ends
/// rounded inward, so the float violation is never below the exact one).
fn face_objectives(sys: &System, target: &RBox, next: &[Bounded]) -> Vec<Objective> {
    let mut out = Vec::new();
    for (j, x) in next.iter().enumerate() {
        if let Some(h) = &target.hi[j] {
            let hf = down(h);
            out.push(Objective {
                label: format!("max {}' - {}", sys.state[j].name, display_rational(h)),
                expr: x.expr.clone() - hf,
                bound: x.iv.sub(&Interval::point(hf)).hi,
                model: None,
            });
        }
        if let Some(l) = &target.lo[j] {
            let lf = up(l);
            out.push(Objective {
                label: format!("max {} - {}'", display_rational(l), sys.state[j].name),
                expr: constant(lf) - x.expr.clone(),
                bound: Interval::point(lf).sub(&x.iv).hi,
                model: None,
            });
        }
    }
    out
}

/// The violation of a union of boxes: `t <= max_f v_{k,f}` for every box `k` (binaries choose the
/// face), maximise `t`.
fn union_objective(base: &MilpModel, boxes: &[RBox], next: &[Bounded]) -> Result<Objective, MilpError> {
    let mut model = base.clone();
    let faces_of = |b: &RBox| -> Vec<(Expression, Interval)> {
        let mut faces = Vec::new();
        for (j, x) in next.iter().enumerate() {
            if let Some(h) = &b.hi[j] {
                let hf = down(h);
                faces.push((x.expr.clone() - hf, x.iv.sub(&Interval::point(hf))));
            }
            if let Some(l) = &b.lo[j] {
                let lf = up(l);
                faces.push((constant(lf) - x.expr.clone(), Interval::point(lf).sub(&x.iv)));
            }
        }
        faces
    };
    let all: Vec<Vec<(Expression, Interval)>> = boxes.iter().map(faces_of).collect();
    let per_box = |f: fn(&Interval) -> f64| {
        all.iter().map(|faces| faces.iter().map(|(_, iv)| f(iv)).fold(f64::NEG_INFINITY, f64::max))
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
    })
}
