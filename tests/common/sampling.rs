//! Self-checks of the planted truths against the IR's exact step: a named counterexample of a
//! refutable candidate replays out of the invariant; sampled states of an inductive candidate
//! (box corners, edges and interior points, every non-deterministic sample, every branch) stay in.

use super::exact::{holds, parse_witness_pred, show, state_in_domains};
use super::truths::Case;
use trestle_ir::expr::Env;
use trestle_ir::num::{parse_rational, rational_from_f64};
use trestle_ir::sim::{self, SimError};
use trestle_ir::system::{NondetDomain, VarKind};
use trestle_ir::{Pred, Rational, System};

fn values(sys: &System, names: &[(String, String)], which: &[String]) -> Result<Vec<Rational>, String> {
    which
        .iter()
        .map(|n| {
            let (_, v) = names.iter().find(|(k, _)| k == n).ok_or_else(|| format!("the example does not give {n}"))?;
            parse_rational(v).ok_or_else(|| format!("'{v}' is not an exact number"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{} {e}", sys.name))
}

/// Samples of one coordinate of a box: its ends and `parts - 1` interior points (integers for
/// int and bool variables).
fn coordinate_samples(kind: VarKind, lo: &Rational, hi: &Rational, parts: i64) -> Vec<Rational> {
    let mut out: Vec<Rational> = (0..=parts).map(|k| lo + (hi - lo) * Rational::new(k.into(), parts.into())).collect();
    if kind != VarKind::Real {
        // The integers nearest to those points, and the integers at both ends.
        out = out.iter().map(|x| x.ceil()).chain([hi.floor()]).filter(|x| x >= lo && x <= hi).collect();
        out.sort();
    }
    out.dedup();
    out
}

/// Grid points of a box (`parts` intervals per dimension), of the right kinds.
pub fn box_samples(sys: &System, lo: &[Rational], hi: &[Rational], parts: i64) -> Vec<Vec<Rational>> {
    let mut points: Vec<Vec<Rational>> = vec![vec![]];
    for (i, v) in sys.state.iter().enumerate() {
        let xs = coordinate_samples(v.kind, &lo[i], &hi[i], parts);
        points = points.iter().flat_map(|p| xs.iter().map(move |x| [p.clone(), vec![x.clone()]].concat())).collect();
    }
    points
}

/// Samples of the non-deterministic inputs: interval ends and quarter points, every set value.
pub fn input_samples(sys: &System) -> Vec<Vec<Rational>> {
    let mut all: Vec<Vec<Rational>> = vec![vec![]];
    for v in &sys.nondet {
        let choices: Vec<Rational> = match &v.domain {
            NondetDomain::Interval(lo, hi) => {
                (0..=4).map(|k| lo + (hi - lo) * Rational::new(k.into(), 4.into())).collect()
            }
            NondetDomain::Set(s) => s.clone(),
        };
        all = all.iter().flat_map(|p| choices.iter().map(move |c| [p.clone(), vec![c.clone()]].concat())).collect();
    }
    all
}

fn state_samples(sys: &System, inv: &Pred) -> Result<Vec<Vec<Rational>>, String> {
    let boxes = inv.to_box_union(sys.state.len(), 1000).ok_or("the invariant is not a union of boxes")?;
    let mut out = Vec::new();
    for b in boxes {
        let ends = |e: &[Option<Rational>]| e.iter().cloned().collect::<Option<Vec<_>>>();
        let (Some(lo), Some(hi)) = (ends(&b.lo), ends(&b.hi)) else {
            return Err("the invariant is unbounded".into());
        };
        out.extend(box_samples(sys, &lo, &hi, 8));
    }
    Ok(out)
}

/// A branch's name, the actions and the successor.
type Successor = (String, Vec<Rational>, Vec<Rational>);

/// The exact successors of `state` under `inputs`, one per enabled branch (with its name).
fn successors(sys: &System, state: &[Rational], inputs: &[Rational]) -> Result<Vec<Successor>, String> {
    let mut out = Vec::new();
    for (b, branch) in sys.step.branches.iter().enumerate() {
        let mut memory = sim::initial_memory::<Rational>(sys);
        match sim::step(sys, state, &mut memory, inputs, b) {
            Ok(t) => out.push((branch.name.clone(), t.actions, t.next)),
            Err(SimError::BranchDisabled { .. }) => {}
            Err(e) => return Err(format!("state {} inputs {}: {e}", show(state), show(inputs))),
        }
    }
    if out.is_empty() {
        return Err(format!("state {} inputs {} has no successor", show(state), show(inputs)));
    }
    Ok(out)
}

/// Whether the case's truth agrees with the exact step on its example or its samples.
pub fn agrees(case: &Case, sys: &System) -> Result<(), String> {
    let inv = sys.invariant.as_ref().ok_or("no candidate invariant")?;
    if !case.inductive {
        let state = values(sys, &case.example, &sys.state_names())?;
        let inputs = values(sys, &case.example_nondet, &sys.nondet_names())?;
        state_in_domains(sys, &state)?;
        if !holds(inv, &state)? {
            return Err(format!("the example {} is outside the invariant", show(&state)));
        }
        let pred = case.witness.as_ref().map(|w| parse_witness_pred(sys, w)).transpose()?;
        for (branch, actions, next) in successors(sys, &state, &inputs)? {
            let named = pred
                .as_ref()
                .map_or(Ok(true), |p| p.eval_exact(&Env::new(&state, &actions, &inputs)).map_err(|e| e.to_string()))?;
            if !holds(inv, &next)? && named {
                return Ok(());
            }
            let _ = branch;
        }
        return Err(format!("the example {} (inputs {}) does not leave the invariant", show(&state), show(&inputs)));
    }
    for state in state_samples(sys, inv)? {
        if !holds(inv, &state)? {
            continue; // an integer grid point of a box may fall in another box's gap
        }
        for inputs in input_samples(sys) {
            for (branch, _, next) in successors(sys, &state, &inputs)? {
                if !holds(inv, &next)? {
                    return Err(format!(
                        "state {} inputs {} branch {branch} leaves the invariant to {}: the truth says inductive",
                        show(&state),
                        show(&inputs),
                        show(&next)
                    ));
                }
            }
        }
    }
    Ok(())
}

fn in_boxes(boxes: &[(Vec<Rational>, Vec<Rational>)], s: &[Rational]) -> bool {
    boxes.iter().any(|(lo, hi)| s.iter().zip(lo.iter().zip(hi)).all(|(x, (l, h))| l <= x && x <= h))
}

fn exact_boxes(boxes: &[(Vec<f64>, Vec<f64>)]) -> Vec<(Vec<Rational>, Vec<Rational>)> {
    let exact = |v: &[f64]| v.iter().map(|&x| rational_from_f64(x)).collect::<Vec<_>>();
    boxes.iter().map(|(lo, hi)| (exact(lo), exact(hi))).collect()
}

/// States of the system among the grid points of a box (kinds and domains respected).
fn states_of(sys: &System, lo: &[Rational], hi: &[Rational], parts: i64) -> Vec<Vec<Rational>> {
    box_samples(sys, lo, hi, parts).into_iter().filter(|s| state_in_domains(sys, s).is_ok()).collect()
}

/// The claim of a falsifying region: every state of the box inside the invariant leaves it, under
/// every non-deterministic choice and branch. Checked on grid points.
pub fn region_leaves(sys: &System, lo: &[f64], hi: &[f64]) -> Result<(), String> {
    let inv = sys.invariant.as_ref().ok_or("no candidate invariant")?;
    let (lo, hi) = exact_boxes(&[(lo.to_vec(), hi.to_vec())]).remove(0);
    for state in states_of(sys, &lo, &hi, 4) {
        if !holds(inv, &state)? {
            continue;
        }
        for inputs in input_samples(sys) {
            let Ok(next) = successors(sys, &state, &inputs) else { continue };
            for (branch, _, next) in next {
                if holds(inv, &next)? {
                    return Err(format!(
                        "the falsifying region holds {} whose successor {} (inputs {}, branch {branch}) stays in the invariant",
                        show(&state),
                        show(&next),
                        show(&inputs)
                    ));
                }
            }
        }
    }
    Ok(())
}

/// A synthesised invariant (a union of f64 boxes) on grid points: Init's points are in it, its
/// points are in Safe, and the exact successors of its points (every sampled input, every branch)
/// are in it again.
pub fn union_is_invariant(sys: &System, boxes: &[(Vec<f64>, Vec<f64>)]) -> Result<(), String> {
    let union = exact_boxes(boxes);
    let safe = sys.safe.as_ref().ok_or("no safe region")?;
    let init = sys.init.to_box_union(sys.state.len(), 1000).ok_or("Init is not a union of boxes")?;
    for b in init {
        let ends = |e: &[Option<Rational>]| e.iter().cloned().collect::<Option<Vec<_>>>();
        let (Some(lo), Some(hi)) = (ends(&b.lo), ends(&b.hi)) else { continue };
        for s in states_of(sys, &lo, &hi, 4) {
            if holds(&sys.init, &s)? && !in_boxes(&union, &s) {
                return Err(format!("the initial state {} is outside the synthesised invariant", show(&s)));
            }
        }
    }
    for (lo, hi) in &union {
        for s in states_of(sys, lo, hi, 4) {
            if !holds(safe, &s)? {
                return Err(format!("the synthesised invariant holds {}, outside Safe", show(&s)));
            }
            for inputs in input_samples(sys) {
                let Ok(next) = successors(sys, &s, &inputs) else { continue };
                for (branch, _, n) in next {
                    if !in_boxes(&union, &n) {
                        return Err(format!(
                            "the synthesised invariant is not closed: {} -> {} (inputs {}, branch {branch})",
                            show(&s),
                            show(&n),
                            show(&inputs)
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}
