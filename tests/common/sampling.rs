//! Self-checks of the planted truths against the IR's exact step: a named counterexample of a
//! refutable candidate replays out of the invariant; sampled states of an inductive candidate
//! (box corners, edges and interior points, every non-deterministic sample, every branch) stay in.

use super::exact::{holds, parse_witness_pred, show, state_in_domains};
use super::truths::Case;
use trestle_ir::expr::Env;
use trestle_ir::num::{parse_rational, rational_from_i64};
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

/// Samples of one coordinate of a box: its ends and seven interior points (integers for int and
/// bool variables).
fn coordinate_samples(kind: VarKind, lo: &Rational, hi: &Rational) -> Vec<Rational> {
    let mut out: Vec<Rational> = (0..=8).map(|k| lo + (hi - lo) * Rational::new(k.into(), 8.into())).collect();
    if kind != VarKind::Real {
        let (first, last) = (lo.ceil(), hi.floor());
        out = Vec::new();
        let mut x = first;
        while x <= last && out.len() < 9 {
            out.push(x.clone());
            x += rational_from_i64(1);
        }
    }
    out.dedup();
    out
}

fn input_samples(sys: &System) -> Vec<Vec<Rational>> {
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
        let mut points: Vec<Vec<Rational>> = vec![vec![]];
        for (i, v) in sys.state.iter().enumerate() {
            let (Some(lo), Some(hi)) = (&b.lo[i], &b.hi[i]) else {
                return Err(format!("the invariant is unbounded in {}", v.name));
            };
            let xs = coordinate_samples(v.kind, lo, hi);
            points =
                points.iter().flat_map(|p| xs.iter().map(move |x| [p.clone(), vec![x.clone()]].concat())).collect();
        }
        out.extend(points);
    }
    Ok(out)
}

/// The exact successors of `state` under `inputs`, one per enabled branch (with its name).
fn successors(
    sys: &System,
    state: &[Rational],
    inputs: &[Rational],
) -> Result<Vec<(String, Vec<Rational>, Vec<Rational>)>, String> {
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
