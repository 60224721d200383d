//! Explicit-state search: every concrete state reachable under the policy, breadth-first from
//! every start state (`trestle_ir::explore::Search`), the policy evaluated exactly (the simulator's forward pass in rationals and
//! its argmax). Complete on finite systems; the tests' oracle for CEGAR and BMC.
//!
//! Start states are enumerated by Z3 (the start condition over the domains, one model at a
//! time, each blocked), so a start condition that pins most variables costs nothing however
//! large the domains' product is.

use crate::model::Discrete;
use crate::{CegarError, Outcome, Stats, confirm_unsafe, holds};
use std::time::Instant;
use trestle_core::{Budget, Verdict};
use trestle_core::{Trace, Unknown};
use trestle_ir::explore::Search;
use trestle_ir::expr::{Expr, VarRef};
use trestle_ir::pred::{CmpOp, Pred};
use trestle_ir::{Rational, sim};
use trestle_smt::{CheckerConfig, PathAnswer, PathQuery};

#[derive(Clone, Debug)]
pub struct ExplicitOptions {
    /// The most states visited before giving up with an error.
    pub max_states: usize,
}

impl Default for ExplicitOptions {
    fn default() -> Self {
        ExplicitOptions { max_states: 2_000_000 }
    }
}

/// Every state satisfying the start condition (inside the domains).
pub fn start_states(d: &Discrete<'_>, max: usize, cfg: CheckerConfig) -> Result<Vec<Vec<Rational>>, CegarError> {
    let mut q = PathQuery::new(d.sys, cfg);
    let s = q.add_state();
    q.assert_pred(s, &d.start, true)?;
    let n = d.sys.state.len();
    let mut out = Vec::new();
    loop {
        match q.check() {
            PathAnswer::Unsat => return Ok(out),
            PathAnswer::Unknown(u) => return Err(CegarError::Internal(format!("enumerating the start states: {u}"))),
            PathAnswer::Sat(v) => {
                let state = v[0].clone();
                let equal: Vec<Pred> = (0..n)
                    .map(|i| Pred::Cmp(Expr::Var(VarRef::State(i)), CmpOp::Eq, Expr::Const(state[i].clone())))
                    .collect();
                q.block(s, &equal, &vec![true; n])?;
                out.push(state);
                if out.len() > max {
                    return Err(CegarError::TooLarge(format!("more than {max} start states")));
                }
            }
        }
    }
}

/// The run from a start state to state `i` of the search, replayed exactly (`what` names it in
/// errors).
fn run_to(sys: &trestle_ir::System, search: &Search<Vec<Rational>>, i: usize, what: &str) -> Result<Trace, CegarError> {
    let (start, branches) = search.run_to(i);
    Trace::simulate(sys, start.clone(), branches.into_iter().map(|b| (Vec::new(), b)))
        .map_err(|e| CegarError::Internal(format!("{what} does not simulate: {e}")))
}

/// Breadth-first search of the states reachable under the policy.
pub fn check_explicit(d: &Discrete<'_>, opts: &ExplicitOptions, budget: &Budget) -> Result<Outcome, CegarError> {
    let start = Instant::now();
    let sys = d.sys;
    let cfg = CheckerConfig::new().without_timeout().with_budget(budget);
    let mut search = Search::new(start_states(d, opts.max_states, cfg)?, opts.max_states);
    let mut found = None;
    let mut memory = sim::initial_memory::<Rational>(sys);
    while let Some(i) = search.next() {
        if let Err(stop) = budget.check() {
            let stats = Stats { states: search.len(), seconds: start.elapsed().as_secs_f64(), ..Stats::default() };
            return Ok(Outcome {
                verdict: Verdict::Unknown(stop.into()),
                predicates: Vec::new(),
                invariant: None,
                stats,
            });
        }
        let state = search.get(i).key.clone();
        if holds(&d.unsafe_, &state)? {
            found = Some(i);
            break;
        }
        let succ = sim::successors(sys, &state, &mut memory, &[])
            .map_err(|e| CegarError::Internal(format!("simulating from {state:?}: {e}")))?;
        for (branch, next) in succ.next {
            search
                .reach(next, i, branch)
                .map_err(|too_many| CegarError::TooLarge(format!("{too_many}: explicit search gives up")))?;
        }
    }
    let mut stats = Stats { states: search.len(), ..Stats::default() };
    let verdict = match found {
        None => Verdict::proven(),
        Some(i) => {
            let trace = run_to(sys, &search, i, "the explicit path")?;
            confirm_unsafe(d, &trace)?;
            stats.depth = trace.len();
            Verdict::refuted(trace)
        }
    };
    stats.seconds = start.elapsed().as_secs_f64();
    Ok(Outcome { verdict, predicates: Vec::new(), invariant: None, stats })
}

/// What [`dead_end`] found.
#[derive(Clone, Debug)]
pub enum DeadEnd {
    /// No state reachable under the policy is a dead end (all of them were visited).
    None,
    /// A run from a start state to a state where the policy's label enables no command (none
    /// with a successor inside the domains), replayed exactly, and that label.
    Found(Trace, String),
    /// The search stopped before visiting every reachable state: why.
    Incomplete(String),
}

/// Looks for a run that ends: a state reachable under the policy from which no command of the
/// chosen label has a successor. CEGAR's planning rule lets such runs end (their last state is
/// judged, the run is not), so its "safe" answers name one ([`crate::model`]); breadth-first over
/// the concrete states, at most `max_states` of them, exactly.
pub fn dead_end(d: &Discrete<'_>, max_states: usize, budget: &Budget) -> Result<DeadEnd, CegarError> {
    let sys = d.sys;
    let cfg = CheckerConfig::new().without_timeout().with_deadline(budget.deadline());
    let starts = match start_states(d, max_states, cfg) {
        Ok(s) => s,
        Err(CegarError::TooLarge(why)) => return Ok(DeadEnd::Incomplete(why)),
        Err(e) => return Err(e),
    };
    let mut search = Search::new(starts, max_states);
    let mut memory = sim::initial_memory::<Rational>(sys);
    while let Some(i) = search.next() {
        if let Err(stop) = budget.check() {
            return Ok(DeadEnd::Incomplete(Unknown::from(stop).to_string()));
        }
        let state = search.get(i).key.clone();
        let succ = sim::successors(sys, &state, &mut memory, &[])
            .map_err(|e| CegarError::Internal(format!("simulating from {state:?}: {e}")))?;
        if succ.next.is_empty() {
            let label = succ
                .actions
                .get(d.action)
                .and_then(|a| a.to_integer().try_into().ok())
                .and_then(|k: usize| d.labels.get(k));
            let label = label.cloned().unwrap_or_default();
            return Ok(DeadEnd::Found(run_to(sys, &search, i, "the run to a dead end")?, label));
        }
        for (branch, next) in succ.next {
            if let Err(too_many) = search.reach(next, i, branch) {
                return Ok(DeadEnd::Incomplete(too_many.to_string()));
            }
        }
    }
    Ok(DeadEnd::None)
}
