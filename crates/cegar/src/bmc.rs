//! Bounded model checking over the same IR: the closed loop unrolled k steps in one incremental
//! Z3 query, the network copied once per step (the global encoding the paper compares with).
//! Depth k asks for a start state whose run reaches an unsafe state at step k; the states of the
//! path are asserted pairwise distinct (a shortest counterexample is loop-free), which also makes
//! BMC complete: when no loop-free run of k steps exists at all, every reachable state was
//! already reached within k - 1 steps, so the system is safe.
//!
//! The policy is encoded as CEGAR's is: by default lazily (the unrolling without the network;
//! each run Z3 proposes is checked step by step with the exact policy, and a step the policy
//! would not take is excluded with a box around its state where its label never wins, for every
//! step of the unrolling), or with the network in Z3 at every step (`PolicyEncoding::Z3`).

use crate::model::Discrete;
use crate::policy::{PolicyTheory, TheoryStats};
use crate::{CegarError, Outcome, PolicyEncoding, Stats, confirm_unsafe, holds, policy_label};
use std::time::Instant;
use trestle_core::{Budget, Verdict};
use trestle_core::{Trace, Unknown};
use trestle_ir::Pred;
use trestle_ir::{Rational, sim};
use trestle_smt::{CheckerConfig, PathAnswer, PathQuery};

#[derive(Clone, Debug)]
pub struct BmcOptions {
    /// The deepest unrolling tried (unknown beyond it).
    pub max_depth: usize,
    pub encoding: PolicyEncoding,
}

impl Default for BmcOptions {
    fn default() -> Self {
        BmcOptions { max_depth: 100, encoding: PolicyEncoding::Lazy }
    }
}

/// The unrolled query with the policy consulted lazily: facts "from a state in this box no step
/// goes through these branches" learned from refuted runs, asserted on every step.
struct Lazy<'d> {
    theory: PolicyTheory<'d>,
    facts: Vec<(Vec<Pred>, Vec<usize>)>,
    stats: TheoryStats,
}

impl Lazy<'_> {
    fn assert_fact(q: &mut PathQuery<'_>, copies: &[usize], fact: &(Vec<Pred>, Vec<usize>)) -> Result<(), CegarError> {
        for w in copies.windows(2) {
            q.forbid_branches(w[0], w[1], &fact.0, &fact.1)?;
        }
        Ok(())
    }

    /// Solves the query; a run is returned only when the policy takes every step of it. Facts
    /// learned are asserted in the current scope and kept in `facts` (a caller that pops the
    /// scope asserts the new ones again).
    fn solve(&mut self, d: &Discrete<'_>, q: &mut PathQuery<'_>, copies: &[usize]) -> Result<PathAnswer, CegarError> {
        loop {
            self.stats.smt_calls += 1;
            let states = match q.check() {
                PathAnswer::Sat(v) => v,
                other => return Ok(other),
            };
            let mut consistent = true;
            for w in copies.windows(2) {
                let (s, t) = (&states[w[0]], &states[w[1]]);
                let picked = policy_label(d, s)?;
                // The branches that explain the step s -> t, by label.
                let mut by_label: Vec<Vec<usize>> = vec![Vec::new(); d.labels.len()];
                for op in &d.operators {
                    if holds(&op.guard, s)? && d.apply(op, s) == *t {
                        by_label[op.label].push(op.branch);
                    }
                }
                if !by_label[picked].is_empty() {
                    continue;
                }
                consistent = false;
                self.stats.refuted_states += 1;
                for (label, branches) in by_label.into_iter().enumerate().filter(|(_, b)| !b.is_empty()) {
                    let b = self.theory.losing_box(s, label, &self.theory.domain, &mut self.stats)?;
                    let fact = (b.preds(), branches);
                    Self::assert_fact(q, copies, &fact)?;
                    self.facts.push(fact);
                }
            }
            if consistent {
                return Ok(PathAnswer::Sat(states));
            }
        }
    }
}

pub fn check_bmc(d: &Discrete<'_>, opts: &BmcOptions, budget: &Budget) -> Result<Outcome, CegarError> {
    let start = Instant::now();
    let cfg = CheckerConfig::new().without_timeout().with_budget(budget);
    let mut stats = Stats::default();
    let mut q = PathQuery::new(d.sys, cfg);
    let s0 = q.add_state();
    q.assert_pred(s0, &d.start, true)?;
    let mut copies = vec![s0];
    let mut lazy = match opts.encoding {
        PolicyEncoding::Lazy => {
            Some(Lazy { theory: PolicyTheory::new(d)?, facts: Vec::new(), stats: TheoryStats::default() })
        }
        PolicyEncoding::Z3 => None,
    };
    let verdict = 'depths: {
        for k in 0..=opts.max_depth {
            if k > 0 {
                let next = q.add_state();
                match &lazy {
                    None => q.assert_step(copies[k - 1], next)?,
                    Some(l) => {
                        q.assert_any_branch(copies[k - 1], next)?;
                        for fact in &l.facts {
                            Lazy::assert_fact(&mut q, &[copies[k - 1], next], fact)?;
                        }
                    }
                }
                for &c in &copies {
                    q.assert_distinct(c, next);
                }
                copies.push(next);
                // Is there a loop-free run of k steps at all?
                let answer = match &mut lazy {
                    None => {
                        stats.smt_calls += 1;
                        q.check()
                    }
                    Some(l) => l.solve(d, &mut q, &copies)?,
                };
                match answer {
                    PathAnswer::Unsat => break 'depths Verdict::proven(),
                    PathAnswer::Unknown(u) => break 'depths Verdict::Unknown(u),
                    PathAnswer::Sat(_) => {}
                }
            }
            stats.depth = k;
            q.push();
            q.assert_pred(copies[k], &d.unsafe_, true)?;
            let mark = lazy.as_ref().map_or(0, |l| l.facts.len());
            let answer = match &mut lazy {
                None => {
                    stats.smt_calls += 1;
                    q.check()
                }
                Some(l) => l.solve(d, &mut q, &copies)?,
            };
            q.pop();
            if let Some(l) = &lazy {
                for fact in &l.facts[mark..] {
                    Lazy::assert_fact(&mut q, &copies, fact)?;
                }
            }
            match answer {
                PathAnswer::Unsat => {}
                PathAnswer::Unknown(u) => break 'depths Verdict::Unknown(u),
                PathAnswer::Sat(states) => break 'depths Verdict::refuted(rebuild(d, &states)?),
            }
        }
        Verdict::Unknown(Unknown::Solver(format!("no counterexample up to depth {}", opts.max_depth)))
    };
    if let Some(t) = verdict.trace() {
        confirm_unsafe(d, t)?;
    }
    if let Some(l) = &lazy {
        stats.smt_calls += l.stats.smt_calls;
        stats.refuted_states = l.stats.refuted_states;
        stats.bound_calls = l.stats.bound_calls;
    }
    let verdict = match verdict {
        Verdict::Unknown(_) if let Err(stop) = budget.check() => Verdict::Unknown(stop.into()),
        v => v,
    };
    stats.seconds = start.elapsed().as_secs_f64();
    Ok(Outcome { verdict, predicates: Vec::new(), invariant: None, stats })
}

/// The run through Z3's states, the branch of each step found by the exact simulator.
fn rebuild(d: &Discrete<'_>, states: &[Vec<Rational>]) -> Result<Trace, CegarError> {
    let mut memory = sim::initial_memory::<Rational>(d.sys);
    let mut branches = Vec::new();
    for w in states.windows(2) {
        let succ = sim::successors(d.sys, &w[0], &mut memory, &[])
            .map_err(|e| CegarError::Internal(format!("simulating a BMC path: {e}")))?;
        let b = succ
            .next
            .iter()
            .find(|(_, next)| *next == w[1])
            .map(|(b, _)| *b)
            .ok_or_else(|| CegarError::Internal("a BMC step is not a step of the simulator".into()))?;
        branches.push(b);
    }
    Trace::simulate(d.sys, states[0].clone(), branches.into_iter().map(|b| (Vec::new(), b)))
        .map_err(|e| CegarError::Internal(format!("the BMC path does not simulate: {e}")))
}
