//! Lasso search: refutes `F p` (and the `G not q` half of `not (p U q)`) with ONE unrolled path of
//! `n` steps on which `not p` holds at every step and whose last state equals an earlier one,
//! `s_n = s_j`, in the FULL state: the environment's variables and every recurrent hidden state
//! (the notes' correction: the paper's test intersects reachable sets and can join two different
//! paths). Repeating the choices of steps `j .. n` forever is then a run on which `p` never holds.
//!
//! The MILP is `trestle_milp::unroll` with `not p` asserted at every step (atoms relaxed by one
//! minimised slack, as in RMILP) and one binary per loop target `j` (exactly one chosen) forcing
//! `s_n = s_j` and `h_n = h_j` by big-M over the enclosures. A solution is rebuilt exactly from an
//! initial start and its choices (`Trace::simulate`) and reported only when the loop closes
//! exactly (`Trace::replay` with the loop-back checks states and hidden states) and `not p` holds
//! at every state exactly. Lengths `1 ..= max_len` are tried in turn; no lasso up to `max_len` is
//! no verdict.
//!
//! On a system with tanh or sigmoid networks the neurons are relaxed soundly (`trestle_milp::smooth`)
//! and the search can only say that no lasso of length up to `max_len` exists even in the
//! relaxation (which contains every real run; floating-point evidence, still no verdict). A lasso
//! of the relaxation is never reported: a loop through irrational values cannot be shown to close
//! (equal enclosures do not make equal states), so lassos never refute such systems.

use crate::error::LtlError;
use crate::path::{PathFormula, atoms};
use crate::rmilp::{Encoder, MAX_SLACK, RmilpOptions, RmilpStats, initial_runs, race, relaxes, solve_options};
use good_lp::{Expression, Variable};
use trestle_core::{Budget, Trace, Unknown};
use trestle_ir::{Env, Pred, RBox, System};
use trestle_milp::{Bounded, Lit, Refinement, Sense, SmoothEncoding, SolveStatus, Strictness, unroll};

/// What the search found.
#[derive(Clone, Debug, PartialEq)]
pub enum LassoOutcome {
    /// A run on which the predicate never holds, looping back (`trace.loop_back`), replayed
    /// exactly, loop included.
    Found(Trace),
    /// No lasso of length up to the limit (or none that replayed): no verdict.
    NotFound(String),
    /// The search stopped before its end (the budget, a size or numeric limit): no verdict.
    Stopped(Unknown),
}

/// Searches a lasso from the states of `start` on which `holds_nowhere` is false at every state
/// (both encodings raced as RMILP's: [`crate::rmilp::race`]; a search that ran to its end
/// decides the race, found or not).
pub fn search(
    sys: &System,
    start: &RBox,
    holds_nowhere: &Pred,
    max_len: usize,
    opts: &RmilpOptions,
    budget: &Budget,
    stats: &mut RmilpStats,
) -> Result<LassoOutcome, LtlError> {
    let decisive = |o: &LassoOutcome| !matches!(o, LassoOutcome::Stopped(_));
    let outcome =
        race(opts, budget, stats, decisive, |o, b, s| search_encoded(sys, start, holds_nowhere, max_len, o, b, s));
    match outcome {
        Err(e) => e.unknown().map(LassoOutcome::Stopped).ok_or(e),
        ok => ok,
    }
}

/// [`search`] with one encoding.
fn search_encoded(
    sys: &System,
    start: &RBox,
    holds_nowhere: &Pred,
    max_len: usize,
    opts: &RmilpOptions,
    budget: &Budget,
    stats: &mut RmilpStats,
) -> Result<LassoOutcome, LtlError> {
    let threshold = opts.tolerance + opts.feasibility_tolerance;
    let mut failure = None;
    let relaxed = relaxes(sys);
    let smooth = if relaxed { SmoothEncoding::Relax(Refinement::default()) } else { SmoothEncoding::Refuse };
    for n in 1..=max_len {
        for strictness in [Strictness::Closure, Strictness::Margin(opts.gap)] {
            if relaxed && strictness != Strictness::Closure {
                break;
            }
            let gap = if strictness == Strictness::Closure { 0.0 } else { opts.gap };
            let unroll_opts = crate::rmilp::unroll_options(strictness, opts, &smooth, budget);
            let Some(mut u) = unroll(sys, start, n, &unroll_opts)? else { break };
            let slack = u.model.continuous(0.0, MAX_SLACK, "slack")?;
            let never = PathFormula::And((0..n).map(|t| atoms(holds_nowhere, t, true)).collect());
            Encoder { model: &mut u.model, states: &u.states, slack, gap }.assert(&never, &Lit::True)?;
            let loops = loop_back(&mut u, sys, n)?;
            stats.milps += 1;
            stats.binaries += u.model.num_binaries();
            stats.variables += u.model.num_variables();
            stats.relaxed_neurons += u.model.relaxed_neurons().len();
            budget.check()?;
            let solve = solve_options(opts, budget, Some(2.0 * threshold));
            let out = u.model.solve(Sense::Minimise, &Expression::from(slack), &solve)?;
            match &out.status {
                SolveStatus::Infeasible => break,
                SolveStatus::Limit(limit) => return Ok(LassoOutcome::Stopped(limit.unknown())),
                _ => {}
            }
            let Some(values) = out.values.as_ref().filter(|_| out.primal.is_some_and(|p| p <= threshold)) else {
                break;
            };
            if relaxed {
                return Ok(LassoOutcome::NotFound(format!(
                    "the relaxation of the tanh and sigmoid neurons has a lasso of length {n}, a candidate only: a \
                     loop through irrational values cannot be shown to close, so no lasso refutes this system"
                )));
            }
            let j = loops.iter().position(|&l| u.model.value(l, values) > 0.5).unwrap_or(0);
            for trace in initial_runs(sys, start, &u, values, &mut failure) {
                let lasso = trace.with_loop_back(j);
                match lasso.replay(sys) {
                    Ok(()) if never_holds(holds_nowhere, &lasso)? => return Ok(LassoOutcome::Found(lasso)),
                    Ok(()) => {
                        failure.get_or_insert_with(|| "the predicate holds somewhere on the solver's lasso".into());
                    }
                    Err(e) => {
                        failure.get_or_insert_with(|| format!("the solver's lasso does not close exactly: {e}"));
                    }
                }
            }
        }
    }
    if relaxed {
        return Ok(LassoOutcome::NotFound(format!(
            "no lasso of length <= {max_len} exists even in the relaxation of the tanh and sigmoid neurons, which \
             contains every real run (floating-point evidence); a lasso could not refute this system anyway (a loop \
             through irrational values cannot be shown to close)"
        )));
    }
    Ok(LassoOutcome::NotFound(match failure {
        Some(f) => format!("no lasso of length <= {max_len} replayed exactly ({f})"),
        None => format!("no lasso of length <= {max_len} exists in the MILP"),
    }))
}

/// Exactly one loop target `j < n`, and `j` chosen forces `s_n = s_j` and `h_n = h_j`.
fn loop_back(u: &mut trestle_milp::Unrolled, sys: &System, n: usize) -> Result<Vec<Variable>, LtlError> {
    let initial = trestle_milp::state::initial_hidden(sys);
    let hidden_at = |t: usize| -> Vec<Bounded> {
        let h = if t == 0 { &initial } else { &u.steps[t - 1].hidden };
        h.iter().flatten().flatten().cloned().collect()
    };
    let full = |t: usize| -> Vec<Bounded> { u.states[t].iter().cloned().chain(hidden_at(t)).collect() };
    let last = full(n);
    let loops: Vec<Variable> = (0..n).map(|_| u.model.binary()).collect();
    let sum: Expression = loops.iter().map(|&l| Expression::from(l)).sum();
    u.model.add(sum.eq(1.0));
    for (j, &l) in loops.iter().enumerate() {
        for (a, b) in last.iter().zip(full(j)) {
            let d = a.expr.clone() - b.expr.clone();
            let iv = a.iv.sub(&b.iv);
            if !(iv.lo.is_finite() && iv.hi.is_finite()) {
                return Err(LtlError::Unsupported(
                    "a lasso needs bounded states and hidden states (an enclosure is unbounded)".into(),
                ));
            }
            // l => d <= 0 and d >= 0: d <= hi (1 - l), d >= lo (1 - l).
            u.model.add((d.clone() + iv.hi * Expression::from(l)).leq(iv.hi));
            u.model.add((d + iv.lo * Expression::from(l)).geq(iv.lo));
        }
    }
    Ok(loops)
}

/// Whether `p` is false at every state of the lasso, exactly.
fn never_holds(p: &Pred, lasso: &Trace) -> Result<bool, LtlError> {
    for s in &lasso.states {
        if p.eval_exact(&Env::new(s, &[], &[])).map_err(|e| LtlError::Semantics(e.to_string()))? {
            return Ok(false);
        }
    }
    Ok(true)
}
