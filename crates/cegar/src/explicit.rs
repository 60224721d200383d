//! Explicit-state search: every concrete state reachable under the policy, breadth-first from
//! every start state, the policy evaluated exactly (the simulator's forward pass in rationals and
//! its argmax). Complete on finite systems; the tests' oracle for CEGAR and BMC.
//!
//! Start states are enumerated by Z3 (the start condition over the domains, one model at a
//! time, each blocked), so a start condition that pins most variables costs nothing however
//! large the domains' product is.

use crate::model::Discrete;
use crate::{CegarError, Outcome, Stats, confirm_unsafe, holds};
use std::collections::HashMap;
use std::collections::VecDeque;
use std::time::Instant;
use trestle_core::{Budget, Verdict};
use trestle_core::{Trace, Unknown};
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

/// A visited state and how it was first reached: (parent index, branch), none for a start state.
type Node = (Vec<Rational>, Option<(usize, usize)>);

/// Breadth-first search of the states reachable under the policy.
pub fn check_explicit(d: &Discrete<'_>, opts: &ExplicitOptions, budget: &Budget) -> Result<Outcome, CegarError> {
    let start = Instant::now();
    let deadline = budget.deadline();
    let sys = d.sys;
    let cfg = CheckerConfig::new().without_timeout().with_deadline(deadline);
    let starts = start_states(d, opts.max_states, cfg)?;
    // Visited states: (parent index, branch taken) for the path back.
    let mut index: HashMap<Vec<Rational>, usize> = HashMap::new();
    let mut nodes: Vec<Node> = Vec::new();
    let mut queue = VecDeque::new();
    let mut found = None;
    for s in starts {
        if index.contains_key(&s) {
            continue;
        }
        index.insert(s.clone(), nodes.len());
        queue.push_back(nodes.len());
        nodes.push((s, None));
    }
    let mut memory = sim::initial_memory::<Rational>(sys);
    while let Some(i) = queue.pop_front() {
        if deadline.is_some_and(|t| Instant::now() >= t) {
            let stats = Stats { states: nodes.len(), seconds: start.elapsed().as_secs_f64(), ..Stats::default() };
            return Ok(Outcome {
                verdict: Verdict::Unknown(Unknown::Timeout),
                predicates: Vec::new(),
                invariant: None,
                stats,
            });
        }
        let state = nodes[i].0.clone();
        if holds(&d.unsafe_, &state)? {
            found = Some(i);
            break;
        }
        let succ = sim::successors(sys, &state, &mut memory, &[])
            .map_err(|e| CegarError::Internal(format!("simulating from {state:?}: {e}")))?;
        for (branch, next) in succ.next {
            if index.contains_key(&next) {
                continue;
            }
            if nodes.len() >= opts.max_states {
                return Err(CegarError::TooLarge(format!(
                    "more than {} reachable states: explicit search gives up",
                    opts.max_states
                )));
            }
            index.insert(next.clone(), nodes.len());
            queue.push_back(nodes.len());
            nodes.push((next, Some((i, branch))));
        }
    }
    let mut stats = Stats { states: nodes.len(), ..Stats::default() };
    let verdict = match found {
        None => Verdict::proven(),
        Some(mut i) => {
            let mut branches = Vec::new();
            while let Some((p, b)) = nodes[i].1 {
                branches.push(b);
                i = p;
            }
            branches.reverse();
            let trace = Trace::simulate(sys, nodes[i].0.clone(), branches.into_iter().map(|b| (Vec::new(), b)))
                .map_err(|e| CegarError::Internal(format!("the explicit path does not simulate: {e}")))?;
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
    let mut index: HashMap<Vec<Rational>, usize> = HashMap::new();
    let mut nodes: Vec<Node> = Vec::new();
    let mut queue = VecDeque::new();
    for s in starts {
        if !index.contains_key(&s) {
            index.insert(s.clone(), nodes.len());
            queue.push_back(nodes.len());
            nodes.push((s, None));
        }
    }
    let mut memory = sim::initial_memory::<Rational>(sys);
    while let Some(i) = queue.pop_front() {
        if let Err(stop) = budget.check() {
            return Ok(DeadEnd::Incomplete(Unknown::from(stop).to_string()));
        }
        let state = nodes[i].0.clone();
        let succ = sim::successors(sys, &state, &mut memory, &[])
            .map_err(|e| CegarError::Internal(format!("simulating from {state:?}: {e}")))?;
        if succ.next.is_empty() {
            let label = succ
                .actions
                .get(d.action)
                .and_then(|a| a.to_integer().try_into().ok())
                .and_then(|k: usize| d.labels.get(k));
            let label = label.cloned().unwrap_or_default();
            let mut branches = Vec::new();
            let mut at = i;
            while let Some((p, b)) = nodes[at].1 {
                branches.push(b);
                at = p;
            }
            branches.reverse();
            let trace = Trace::simulate(sys, nodes[at].0.clone(), branches.into_iter().map(|b| (Vec::new(), b)))
                .map_err(|e| CegarError::Internal(format!("the run to a dead end does not simulate: {e}")))?;
            return Ok(DeadEnd::Found(trace, label));
        }
        for (branch, next) in succ.next {
            if index.contains_key(&next) {
                continue;
            }
            if nodes.len() >= max_states {
                return Ok(DeadEnd::Incomplete(format!("more than {max_states} reachable states")));
            }
            index.insert(next.clone(), nodes.len());
            queue.push_back(nodes.len());
            nodes.push((next, Some((i, branch))));
        }
    }
    Ok(DeadEnd::None)
}
